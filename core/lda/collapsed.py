"""Collapsed Gibbs sampling for LDA (Griffiths & Steyvers 2004).

Systematic scan over the token topics with theta and phi integrated out,
``p(z_i = k | z_-i, w) ∝ (n_dk + alpha) (n_kw + beta) / (n_k + V beta)``.
``kernel`` picks the implementation of that same conditional, a strategy
registered in :data:`mcmc.core.lda.kernels.COLLAPSED_KERNELS`: ``"sparse"``
(SparseLDA's bucket decomposition, Yao, Mimno & McCallum 2009;
:mod:`mcmc.core.lda.kernels.sparse`), ``"dense"`` (all K terms per token;
:mod:`mcmc.core.lda.kernels.dense`), or ``"auto"`` (dense up to
:data:`DENSE_MAX_TOPICS` topics, sparse above, after dense sweeps while the
words of the random start are still spread over many topics), resolved once
by :func:`choose_kernels`. The chain calls its kernel's methods and never
asks which kernel it holds. One chain is inherently sequential; ``threads``
runs chains side by side. (The approximate "AD-LDA" parallel collapsed
sampler of Newman et al. 2009 is deliberately not offered.)
"""

from __future__ import annotations

import numpy as np

from mcmc.core.lda import hyper
from mcmc.core.lda.kernels import CollapsedKernel, collapsed_kernel, common
from mcmc.core.lda.kernels.rng import draw_key
from mcmc.core.lda.sampler import Estimates, LdaChain, Phase, Problem, TokenChain, run_toy

NAME = "collapsed"
# kernel="auto" uses the dense kernel up to this many topics and the sparse one
# above. Measured on 20 Newsgroups (bench/lda_kernel.py, one thread, CPU time):
# dense/sparse 20.8/15.9 M tokens/s at K = 20, 17.2/14.0 at K = 32, 15.1/13.1 at
# K = 48, 12.3/11.6 at K = 64 (100 sweeps), 9.2/10.9 at K = 100 (200 sweeps).
DENSE_MAX_TOPICS = 64
# Above DENSE_MAX_TOPICS, "auto" still starts with dense sweeps: from a random
# start every word is spread over about min(K, its frequency) topics, and the
# sparse kernel's cost follows that spread (20 Newsgroups, K = 100, one thread:
# sparse 4.5, 6.9, 9.3, 10.8, 11.8 M tokens/s after 0, 3, 8, 15, 25 sweeps,
# dense 9.4 to 11 throughout; the token-weighted mean number of topics per word
# is then 80, 49, 30, 20, 16). The chain switches to the sparse kernel once
# that mean is at most SPARSE_SWITCH_FRACTION * K. Both kernels draw every
# token from the same full conditional, so which one runs a sweep does not
# change the chain's law (exactness); the test reads the counts only, so the
# switch is deterministic and the same seed gives the same bytes. (Figures from
# before the kernels prefetched; with prefetching, dense runs at about 12 M
# tokens/s throughout and sparse overtakes it after about 11 sweeps, so the
# switch at about 15 costs under 0.2 % of a 200-sweep run: 0.2 stands.)
SPARSE_SWITCH_FRACTION = 0.2


def choose_kernels(kernel: str, n_topics: int) -> tuple[CollapsedKernel, CollapsedKernel | None]:
    """The kernel a chain starts with, and the one it changes to once its words have concentrated (or ``None``).

    The one place ``kernel`` is resolved: a registered name
    (:data:`mcmc.core.lda.kernels.COLLAPSED_KERNELS`) is that kernel
    throughout; ``"auto"`` is dense up to :data:`DENSE_MAX_TOPICS` topics and
    above them dense at first, then sparse (:data:`SPARSE_SWITCH_FRACTION`).
    """
    if kernel != "auto":
        return collapsed_kernel(kernel), None
    if n_topics <= DENSE_MAX_TOPICS:
        return collapsed_kernel("dense"), None
    return collapsed_kernel("dense"), collapsed_kernel("sparse")


class CollapsedSampler:
    """Collapsed Gibbs with one of the registered kernels (``kernel="auto"``: chosen by K, see the module)."""

    name = NAME
    learns_hyperparameters = True
    shards_documents = False
    one_topic_per_document = False

    def __init__(self, n_topics: int, kernel: str = "auto") -> None:
        self.start, self.then = choose_kernels(kernel, n_topics)
        self.kernel = (self.then or self.start).name  # reported: the kernel that runs most sweeps

    def warm_up(self) -> None:
        for kernel in (self.start, self.then):
            if kernel is not None:
                run_toy(CollapsedSampler(1, kernel.name))  # each kernel alone, as a chain runs it

    def chains(self, problem: Problem, rngs: list[np.random.Generator]) -> list[LdaChain]:
        return [CollapsedChain(problem, rng, self.start, self.then) for rng in rngs]


#: The method's sampler (:data:`mcmc.core.lda.config.METHOD_MODULES`).
SAMPLER = CollapsedSampler


class CollapsedChain(TokenChain):
    """Token topics, and ``n_wk`` in the layout of the kernel that sweeps them (``counts``).

    ``then``: the kernel to change to once the words have concentrated
    (:data:`SPARSE_SWITCH_FRACTION`), or ``None``. The chain never asks which
    kernel it holds: every step that reads the counts is the kernel's.
    """

    def __init__(self, problem: Problem, rng: np.random.Generator, kernel: CollapsedKernel,
                 then: CollapsedKernel | None) -> None:
        # n_wk in the kernel's layout only: never two V x K tables at once
        super().__init__(problem, rng, rng.integers(0, problem.K, size=problem.N).astype(np.int32), word_counts=False)
        # This chain's hyperparameters: the kernels take alpha per topic; they change only with problem.learn.
        self.alpha = np.full(problem.K, problem.alpha)
        self.beta = problem.beta
        self.lg_beta = problem.lg_beta
        if problem.learn:
            # theta and phi estimates average over states with different alpha and beta
            self.alpha_sum = np.zeros(problem.K)
            self.beta_inv_sum = np.zeros(problem.K)
        self.kernel = kernel
        self.then = then
        self._switches = then is not None  # "auto" above DENSE_MAX_TOPICS: it changes kernel once
        self.counts = kernel.init(problem, self.z)
        # The sweep adds up each document's part of the log joint and of the running sums as it leaves it
        # (common.DocumentTally): the document half of the log joint for the symmetric alpha of a fixed model
        # (a learned alpha's is computed apart), the sums on recorded sweeps. What the last sweep tallied:
        self.doc_norm = common.document_norms(problem.doc_ptr, problem.K, problem.alpha) if not problem.learn \
            else np.empty(0)
        self.doc_part = np.empty(1 if not problem.learn else 0)
        self.doc_part_ready = False  # doc_part holds the current state's
        self.sums_tallied = False  # the last sweep added the document sums (accumulate adds only phi's)
        self.not_recorded = np.empty((0, problem.K))

    @property
    def SAVED(self) -> tuple[str, ...]:  # type: ignore[override]  # noqa: N802 - TokenChain's name
        """The running sums, and the learned alpha and its sums when the chain learns its hyperparameters."""
        return (*TokenChain.SAVED, *(("alpha", "alpha_sum", "beta_inv_sum") if self.p.learn else ()))

    def save(self) -> dict[str, np.ndarray]:
        out = super().save()
        out["beta"] = np.array(self.beta)
        out["switched"] = np.array(self._switches and self.then is None)  # which kernel sweeps now
        return out

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        if bool(arrays["switched"]) and self.then is not None:
            self.kernel, self.then = self.then, None
        self.beta = float(arrays["beta"])
        if self.p.learn:
            self.lg_beta = common.lgamma_table(self.beta, self.p.lg_beta.size - 1)
        super().restore(arrays)

    def recount(self) -> None:
        self.nk = common.topic_counts(self.z, self.p.K)
        self.counts = self.kernel.init(self.p, self.z)

    def after_sweep(self) -> None:
        """Change kernel (``then``) once the words are concentrated: the new layout made from the old in place."""
        p = self.p
        if self.then is None:
            return
        if self.kernel.topics_per_word(p, self.counts) <= SPARSE_SWITCH_FRACTION * p.K:
            self.counts = self.then.from_word_topic_counts(p, self.kernel.word_topic_counts(p, self.counts))
            self.kernel, self.then = self.then, None

    def sweep_phases(self, record: bool) -> list[Phase]:
        p = self.p
        key = draw_key(self.rng)
        tally = common.DocumentTally(self.doc_part, self.doc_norm, p.lg_alpha, self.ndk_sum, p.length_group,
                                     self.length_topic_sum if record else self.not_recorded)
        self.doc_part_ready = not p.learn
        self.sums_tallied = record
        return [lambda: [(self.kernel.sweep, (p, self.counts, self.z, self.nk, self.alpha, self.beta, key, tally))]]

    def log_joint(self) -> float:
        p = self.p
        if p.learn:
            return self.kernel.log_joint_asymmetric(p, self.counts, self.z, self.nk, self.alpha, self.beta,
                                                    self.lg_beta)
        doc_part = float(self.doc_part[0]) if self.doc_part_ready else None
        return self.kernel.log_joint(p, self.counts, self.z, self.nk, doc_part)

    def accumulate_doc_sums(self) -> None:
        """The document sums of the current state, unless the sweep that made it added them already."""
        p = self.p
        if not self.sums_tallied:
            common.accumulate_doc_sums(p.doc_ptr, self.z, self.ndk_sum, p.length_group, self.length_topic_sum)
        self.sums_tallied = False

    # -- learned hyperparameters (problem.learn) -------------------------------------------

    def hyperparameters(self) -> tuple[np.ndarray, float]:
        """This chain's current alpha (K,) and beta."""
        return self.alpha.copy(), self.beta

    def word_topic_values(self) -> np.ndarray:
        """The nonzero ``n_kw`` of the current state, in the kernel's order."""
        return self.kernel.word_topic_values(self.p, self.counts)

    def update_hyperparameters(self) -> None:
        """One Monte Carlo EM M-step from the current assignments (:mod:`mcmc.core.lda.hyper`)."""
        p = self.p
        self.alpha = hyper.optimize_alpha(self.alpha, common.doc_topic_histogram(p.doc_ptr, self.z, p.K),
                                          np.diff(p.doc_ptr))
        self.beta = hyper.optimize_beta(self.beta, self.word_topic_values(), self.nk, p.V)
        self.lg_beta = common.lgamma_table(self.beta, p.lg_beta.size - 1)

    def accumulate_phi(self, vbeta: float, inv_sum: np.ndarray) -> None:
        self.kernel.accumulate_phi(self.p, self.counts, self.nk, vbeta, self.nkw_scaled_sum, inv_sum)

    def accumulate(self) -> None:
        p = self.p
        self.accumulate_doc_sums()
        if not p.learn:
            self.accumulate_phi(p.V * p.beta, self.inv_sum)
            self.kept += 1
            return
        inv = np.zeros(p.K)
        self.accumulate_phi(p.V * self.beta, inv)
        self.beta_inv_sum += self.beta * inv
        self.alpha_sum += self.alpha
        self.kept += 1

    def estimates(self) -> Estimates:
        """With learned hyperparameters: phi averages ``(n_kw + beta_t) / (n_k + V beta_t)`` over the kept
        states exactly; theta and the shares use the mean alpha of the kept states."""
        p = self.p
        if not p.learn:
            return super().estimates()
        t = max(self.kept, 1)
        alpha = self.alpha_sum / t if self.kept else self.alpha
        theta = self.theta_estimate(alpha, alpha.sum())
        phi, self.nkw_scaled_sum = self.nkw_scaled_sum, None
        phi += self.beta_inv_sum[:, None]
        phi /= t
        return Estimates(theta, phi, self.shares_estimate(alpha, alpha.sum()))
