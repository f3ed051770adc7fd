"""Collapsed Gibbs sampling for LDA (Griffiths & Steyvers 2004).

Systematic scan over the token topics with theta and phi integrated out,
``p(z_i = k | z_-i, w) ∝ (n_dk + alpha) (n_kw + beta) / (n_k + V beta)``.
``kernel`` picks the implementation of that same conditional
(:mod:`mcmc.core.lda.kernels.dense`, :mod:`mcmc.core.lda.kernels.sparse`): ``"sparse"`` (SparseLDA's bucket
decomposition, Yao, Mimno & McCallum 2009), ``"dense"`` (all K terms per
token), or ``"auto"`` (dense up to :data:`DENSE_MAX_TOPICS` topics, sparse
above, after dense sweeps while the words of the random start are still spread
over many topics). One chain is inherently sequential; ``threads`` runs chains
side by side. (The approximate "AD-LDA" parallel collapsed sampler of Newman
et al. 2009 is deliberately not offered.)
"""

from __future__ import annotations

import numpy as np

from mcmc.core.lda import hyper
from mcmc.core.lda.kernels import common, dense, sparse
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


class CollapsedSampler:
    """Collapsed Gibbs with the dense or the sparse kernel (``kernel="auto"``: chosen by K, see the module)."""

    name = NAME
    learns_hyperparameters = True

    def __init__(self, n_topics: int, kernel: str = "auto") -> None:
        self.kernel = kernel if kernel != "auto" else ("dense" if n_topics <= DENSE_MAX_TOPICS else "sparse")
        # kernel "auto" above DENSE_MAX_TOPICS: dense sweeps first, then sparse
        self.dense_start = kernel == "auto" and self.kernel == "sparse"

    def warm_up(self) -> None:
        run_toy(CollapsedSampler(1, self.kernel))  # the kernel named, without a dense start
        if self.dense_start:
            run_toy(CollapsedSampler(1, "dense"))

    def chains(self, problem: Problem, rngs: list[np.random.Generator]) -> list[LdaChain]:
        return [CollapsedChain(problem, rng, self.kernel, self.dense_start) for rng in rngs]


class CollapsedChain(TokenChain):
    """Token topics with dense (padded) counts or SparseLDA's packed word-topic lists."""

    def __init__(self, problem: Problem, rng: np.random.Generator, kernel: str, dense_start: bool) -> None:
        super().__init__(problem, rng, rng.integers(0, problem.K, size=problem.N).astype(np.int32))
        # This chain's hyperparameters: the kernels take alpha per topic; they change only with problem.learn.
        self.alpha = np.full(problem.K, problem.alpha)
        self.beta = problem.beta
        self.lg_beta = problem.lg_beta
        if problem.learn:
            # theta and phi estimates average over states with different alpha and beta
            self.alpha_sum = np.zeros(problem.K)
            self.beta_inv_sum = np.zeros(problem.K)
        self.dense_start = dense_start
        # until the words have concentrated (see SPARSE_SWITCH_FRACTION)
        self.mode = "dense" if dense_start else kernel
        if self.mode == "sparse":
            self._to_sparse()
        else:
            self.nwk = None  # the padded layout replaces it: never both V x K tables at once
            self.nwk = dense.padded_word_topic_counts(problem.words, self.z, problem.K, problem.V)

    def _to_sparse(self) -> None:
        # the packed lists replace the dense counts for the sparse kernel
        self.wt_ptr, self.wt_len, self.wt = sparse.word_topic_lists(self.nwk, self.p.word_freq, self.p.K)
        self.nwk = None

    def after_sweep(self) -> None:
        """Dense start of ``kernel="auto"`` above DENSE_MAX_TOPICS: go sparse once words are concentrated."""
        p = self.p
        if not (self.dense_start and self.mode == "dense"):
            return
        spread = np.count_nonzero(self.nwk, axis=1) @ p.word_freq / p.N  # topics per word, token-weighted
        if spread <= SPARSE_SWITCH_FRACTION * p.K:
            self._to_sparse()  # from the padded counts in place (a K-column copy was another V x K table)
            self.mode = "sparse"

    def sweep_phases(self, record: bool) -> list[Phase]:
        p = self.p
        key = draw_key(self.rng)
        if self.mode == "sparse":
            return [lambda: [(sparse.collapsed_sparse_sweep, (p.doc_ptr, p.words, self.z, self.nk, self.wt_ptr,
                                                               self.wt_len, self.wt, self.alpha, self.beta, key))]]
        return [lambda: [(dense.collapsed_dense_sweep, (p.doc_ptr, p.words, self.z, self.nwk, self.nk,
                                                          self.alpha, self.beta, key))]]

    def log_joint(self) -> float:
        p = self.p
        if p.learn:
            if self.mode == "dense":
                return float(common.doc_part_asymmetric(p.doc_ptr, self.z, self.alpha)
                             + common.topic_word_part(self.nwk, self.nk, self.beta, self.lg_beta))
            return float(sparse.log_joint_sparse_asymmetric(p.doc_ptr, self.z, self.wt_ptr, self.wt_len, self.wt,
                                                             self.nk, self.alpha, self.beta, self.lg_beta))
        if self.mode == "dense":
            return super().log_joint()
        return float(sparse.log_joint_sparse(p.doc_ptr, self.z, self.wt_ptr, self.wt_len, self.wt, self.nk,
                                              p.alpha, p.beta, p.lg_alpha, p.lg_beta))

    # -- learned hyperparameters (problem.learn) -------------------------------------------

    def hyperparameters(self) -> tuple[np.ndarray, float]:
        """This chain's current alpha (K,) and beta."""
        return self.alpha.copy(), self.beta

    def word_topic_values(self) -> np.ndarray:
        """The nonzero ``n_kw`` of the current state, in any order."""
        if self.mode == "dense":
            counts = self.nwk[:, :self.p.K]
            return counts[counts > 0]
        lengths = self.wt_len.astype(np.int64)
        first = np.repeat(self.wt_ptr[:-1] - (np.cumsum(lengths) - lengths), lengths)
        return self.wt[first + np.arange(lengths.sum())] >> sparse.TOPIC_BITS

    def update_hyperparameters(self) -> None:
        """One Monte Carlo EM M-step from the current assignments (:mod:`mcmc.core.lda.hyper`)."""
        p = self.p
        self.alpha = hyper.optimize_alpha(self.alpha, common.doc_topic_histogram(p.doc_ptr, self.z, p.K),
                                          np.diff(p.doc_ptr))
        self.beta = hyper.optimize_beta(self.beta, self.word_topic_values(), self.nk, p.V)
        self.lg_beta = common.lgamma_table(self.beta, p.lg_beta.size - 1)

    def accumulate_phi(self, vbeta: float, inv_sum: np.ndarray) -> None:
        if self.mode == "dense":
            return super().accumulate_phi(vbeta, inv_sum)
        sparse.accumulate_phi_sums_packed(self.wt_ptr, self.wt_len, self.wt, self.nk, vbeta, self.nkw_scaled_sum,
                                           inv_sum)

    def accumulate(self) -> None:
        p = self.p
        if not p.learn:
            return super().accumulate()
        inv = np.zeros(p.K)
        common.accumulate_doc_sums(p.doc_ptr, self.z, self.ndk_sum, p.length_group, self.length_topic_sum)
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
