"""Dirichlet-multinomial mixture, one topic per document, by collapsed Gibbs sampling.

Nigam, McCallum, Thrun & Mitchell (2000); Yin & Wang (2014), "GSDMM": every
document's topic from ``p(z_d = k | z_-d, w)`` with the mixture weights and
phi integrated out (:func:`mcmc.core.lda.kernels.dmm.dmm_sweep`), sequential
within a chain; ``threads`` runs chains side by side. theta is the
Rao-Blackwellised membership ``p(z_d = k | w)``: the full conditionals used to
draw z_d, averaged over the post-burn-in sweeps.
"""

from __future__ import annotations

import numpy as np

from mcmc.core.lda.kernels import common
from mcmc.core.lda.kernels import dmm as kernels
from mcmc.core.lda.kernels.rng import draw_key
from mcmc.core.lda.sampler import Estimates, LdaChain, OneKernelSampler, Phase, Problem, TokenChain

NAME = "dmm"


class DmmSampler(OneKernelSampler):
    """Collapsed Gibbs over document topics."""

    name = NAME
    one_topic_per_document = True

    def chains(self, problem: Problem, rngs: list[np.random.Generator]) -> list[LdaChain]:
        doc_words = kernels.doc_word_counts(problem.doc_ptr, problem.words, problem.V)
        return [DmmChain(problem, rng, doc_words) for rng in rngs]


#: The method's sampler (:data:`mcmc.core.lda.config.METHOD_MODULES`).
SAMPLER = DmmSampler


class DmmChain(TokenChain):
    """Document topics ``z_doc``; ``z`` (token topics) follows them when estimates are taken."""

    def __init__(self, problem: Problem, rng: np.random.Generator,
                 doc_words: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        self.z_doc = rng.integers(0, problem.K, size=problem.D).astype(np.int32)
        # theta is the membership probabilities below, never the token counts' sums
        super().__init__(problem, rng, np.repeat(self.z_doc, np.diff(problem.doc_ptr)).astype(np.int32),
                         theta_sums=False)
        self.doc_words = doc_words
        self.mk = common.topic_counts(self.z_doc, problem.K)
        self.prob_sum = np.zeros((problem.D, problem.K))

    SAVED = ("length_topic_sum", "nkw_scaled_sum", "inv_sum", "prob_sum")

    def save(self) -> dict[str, np.ndarray]:
        kernels.expand_doc_topics(self.p.doc_ptr, self.z_doc, self.z)  # z follows z_doc whenever it is read
        return {**super().save(), "z_doc": self.z_doc.copy()}

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        z_doc = np.asarray(arrays["z_doc"], dtype=np.int32)
        if z_doc.shape != self.z_doc.shape or (z_doc.size and (z_doc.min() < 0 or z_doc.max() >= self.p.K)):
            raise ValueError(f"z_doc has shape {z_doc.shape} or topics outside 0 .. {self.p.K - 1}")
        self.z_doc[...] = z_doc
        super().restore({**arrays, "z": np.repeat(z_doc, np.diff(self.p.doc_ptr))})

    def recount(self) -> None:
        super().recount()
        self.mk = common.topic_counts(self.z_doc, self.p.K)

    def sweep_phases(self, record: bool) -> list[Phase]:
        p = self.p
        key = draw_key(self.rng)
        return [lambda: [(kernels.dmm_sweep, (*self.doc_words, self.z_doc, self.mk, self.nwk, self.nk, p.alpha,
                                              p.beta, key, self.prob_sum, record, p.lg_beta))]]

    def log_joint(self) -> float:
        p = self.p
        return float(kernels.dmm_log_joint_from_counts(self.mk, self.nwk, self.nk, p.alpha, p.beta, p.lg_beta))

    def accumulate(self) -> None:
        kernels.expand_doc_topics(self.p.doc_ptr, self.z_doc, self.z)
        super().accumulate()

    def estimates(self) -> Estimates:
        kernels.expand_doc_topics(self.p.doc_ptr, self.z_doc, self.z)
        theta, self.prob_sum = self.prob_sum, None  # in place, as TokenChain.theta_estimate
        theta /= max(self.kept, 1)
        lengths = np.diff(self.p.doc_ptr).astype(np.float64)
        shares = np.einsum("dk,d->k", theta, lengths) / lengths.sum()
        return Estimates(theta if self.p.keep_theta else None, self.phi_estimate(), shares)
