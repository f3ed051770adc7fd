"""Fitting LDA (and the one-topic-per-document mixture) by Gibbs sampling.

:func:`fit` runs ``chains`` independent chains of one of four exact samplers
and returns an :class:`LdaFit`: the collapsed log joint after every iteration
and Bayes estimates of theta and phi averaged over the post-burn-in states.

``method``
    ``"collapsed"``
        Collapsed Gibbs over the token topics (Griffiths & Steyvers 2004),
        systematic scan, with theta and phi integrated out. ``kernel`` picks
        the implementation of the same conditional: ``"sparse"`` (SparseLDA's
        bucket decomposition, Yao, Mimno & McCallum 2009), ``"dense"`` (all K
        terms per token), or ``"auto"`` (dense up to ``DENSE_MAX_TOPICS``
        topics, sparse above, after dense sweeps while the words of the random
        start are still spread over many topics). One chain is
        inherently sequential; ``threads`` runs chains side by side. (The
        approximate "AD-LDA" parallel collapsed sampler of Newman et al. 2009
        is deliberately not offered.)
    ``"partial"``
        Partially collapsed Gibbs: phi | z ~ Dirichlet, then z | phi with theta
        integrated out, token by token within a document. Given phi the
        documents are independent, so blocks of documents of one chain run in
        parallel on ``threads`` threads and the sampler stays exact.
    ``"uncollapsed"``
        Blocked Gibbs: phi | z and theta | z (Dirichlet), then every z | theta,
        phi independently; the Dirichlet draws and the tokens are split over
        ``threads`` (theta and z per document, phi per word chunk).
    ``"dmm"``
        Dirichlet-multinomial mixture, one topic per document (Nigam et al.
        2000; Yin & Wang 2014 "GSDMM"), collapsed Gibbs over document topics
        (sequential within a chain; ``threads`` runs chains side by side).

Every sampler is exact: each sweep leaves p(z | w) (for ``uncollapsed`` and
``partial`` p(z, phi[, theta] | w)) invariant; ``tests/core/test_lda_exact.py``
checks them against enumerated posteriors and by Geweke's (2004) test.

Randomness comes from one ``numpy.random.Generator`` per chain,
``Generator(PCG64(SeedSequence(seed, spawn_key=(chain,))))`` (the project's
convention, see :mod:`mcmc.core.random`): it draws the initial state and the
64-bit keys of every sweep (one for the tokens; for ``partial`` and
``uncollapsed`` also one for phi and one for theta), from which the compiled
kernels derive every uniform and Gamma variate by counter (see
:mod:`mcmc.core.lda.kernels`). So a chain depends only on the seed and its
index, and the same seed gives the same bytes whatever ``threads`` is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.lda.kernels import (
    collapsed as kcollapsed,
    common,
    dmm as kdmm,
    partial as kpartial,
    uncollapsed as kuncollapsed,
)
from mcmc.core.lda.kernels.rng import draw_key
from mcmc.core.random import generator

METHODS = ("collapsed", "uncollapsed", "partial", "dmm")
KERNELS = ("auto", "sparse", "dense")
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


class CorpusLike(Protocol):
    doc_ptr: np.ndarray
    words: np.ndarray
    vocab: Sequence[str]


@dataclass(frozen=True)
class LdaFit:
    """Result of :func:`fit`.

    Attributes
    ----------
    log_joint : float (chains, iterations)
        Collapsed ``log p(w, z)`` after every iteration (for ``dmm`` the
        mixture's own collapsed joint, see :mod:`mcmc.core.lda.likelihood`).
    log_joint_per_token : float (chains, iterations)
        ``log_joint / N``.
    theta : float (chains, D, K)
        Posterior mean estimate ``(n_dk + alpha) / (N_d + K alpha)`` averaged
        over the post-burn-in iterations of each chain. For ``dmm``: the
        probability that document d belongs to topic k, Rao-Blackwellised (the
        full conditionals used to draw z_d, averaged over post-burn-in sweeps).
    phi : float (chains, K, V)
        ``(n_kw + beta) / (n_k + V beta)`` averaged likewise.
    z : int32 (chains, N)
        Final topic of every token (for ``dmm`` the topic of its document).
    sampling_seconds : float
        Wall-clock seconds spent in sweeps (all chains, excluding numba
        compilation, log joint and estimates).
    total_seconds : float
        Wall-clock seconds of the whole fit, excluding numba compilation.
    kernel : str
        Implementation actually used: ``"sparse"`` or ``"dense"`` for
        ``collapsed``, otherwise the method name.
    timings : dict
        Wall-clock seconds spent in ``sampling``, ``log_joint``, ``estimates``
        and ``total``, and ``sampling_cpu``: process CPU seconds of the sweeps
        (all threads), steadier than wall-clock time on a shared machine.
    z_doc : int32 (chains, D) or None
        For ``dmm``, the final topic of every document (also defined for empty
        documents, which ``z`` cannot show); ``None`` otherwise.
    """

    log_joint: np.ndarray
    log_joint_per_token: np.ndarray
    theta: np.ndarray
    phi: np.ndarray
    z: np.ndarray
    n_topics: int
    alpha: float
    beta: float
    method: str
    iterations: int
    burn_in: int
    seed: int
    chains: int
    threads: int
    kernel: str
    n_tokens: int
    sampling_seconds: float
    total_seconds: float
    timings: dict[str, float] = field(default_factory=dict)
    z_doc: np.ndarray | None = None

    @property
    def tokens_per_second(self) -> float:
        """Token updates per wall-clock second of sampling, all chains together."""
        updates = self.chains * self.iterations * self.n_tokens
        return updates / self.sampling_seconds if self.sampling_seconds > 0 else float("inf")


def _validate(corpus: CorpusLike, n_topics: int, alpha: float, beta: float, iterations: int, burn_in: int,
              chains: int, method: str, threads: int, kernel: str) -> tuple[np.ndarray, np.ndarray, int]:
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if kernel not in KERNELS:
        raise UsageError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNELS)}")
    if int(n_topics) != n_topics or n_topics < 1:
        raise UsageError(f"n_topics must be a positive integer, got {n_topics}")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not (np.isfinite(value) and value > 0):
            raise UsageError(f"{name} must be a positive finite number, got {value}")
    if iterations < 1:
        raise UsageError(f"iterations must be at least 1, got {iterations}")
    if not 0 <= burn_in < iterations:
        raise UsageError(f"burn_in must be in 0 .. iterations - 1 = {iterations - 1}, got {burn_in}")
    if chains < 1 or threads < 1:
        raise UsageError("chains and threads must be at least 1")
    doc_ptr = np.ascontiguousarray(corpus.doc_ptr, dtype=np.int64)
    words = np.ascontiguousarray(corpus.words, dtype=np.int32)
    vocab_size = len(corpus.vocab)
    if doc_ptr.ndim != 1 or doc_ptr.size < 1 or doc_ptr[0] != 0 or doc_ptr[-1] != words.size \
            or np.any(np.diff(doc_ptr) < 0):
        raise InputError(None, "corpus doc_ptr must rise from 0 to the number of tokens")
    if words.size == 0:
        raise InputError(None, "corpus has no tokens")
    if words.min() < 0 or words.max() >= vocab_size:
        raise InputError(None, f"corpus word ids must lie in 0 .. {vocab_size - 1}")
    return doc_ptr, words, vocab_size


def _doc_blocks(doc_ptr: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """Split documents into ``parts`` contiguous blocks of about equal tokens."""
    n_docs = doc_ptr.size - 1
    targets = np.linspace(0, doc_ptr[-1], parts + 1)[1:-1]
    cuts = [0, *np.searchsorted(doc_ptr, targets).tolist(), n_docs]
    cuts = sorted(set(min(max(c, 0), n_docs) for c in cuts))
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]


def _even_blocks(n: int, parts: int) -> list[tuple[int, int]]:
    """Split 0 .. n - 1 into at most ``parts`` contiguous ranges of about equal size."""
    cuts = np.linspace(0, n, min(parts, n) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]


class _Chain:
    """State of one chain: assignments, counts, running sums, its Generator."""

    def __init__(self, shared: _Shared, chain: int) -> None:
        self.s = shared
        self.rng = generator(shared.seed, (chain,))
        s = shared
        if s.method == "dmm":
            self.zd = self.rng.integers(0, s.K, size=s.D).astype(np.int32)
            self.z = np.repeat(self.zd, np.diff(s.doc_ptr)).astype(np.int32)
            self.mk = common.topic_counts(self.zd, s.K)
            self.prob_sum = np.zeros((s.D, s.K))
        else:
            self.z = self.rng.integers(0, s.K, size=s.N).astype(np.int32)
        self.nwk = common.word_topic_counts(s.words, self.z, s.K, s.V)
        self.nk = common.topic_counts(self.z, s.K)
        self.mode = s.kernel  # "dense" or "sparse" for collapsed
        if self.mode == "sparse" and s.dense_start:
            self.mode = "dense"  # until the words have concentrated (see SPARSE_SWITCH_FRACTION)
        if self.mode == "sparse":
            self._to_sparse()
        elif s.method == "collapsed":
            self.nwk = kcollapsed.padded_word_topic_counts(s.words, self.z, s.K, s.V)
        self.g = None  # phi draw buffers of partial / uncollapsed, allocated on first use
        self.ndk_sum = np.zeros((s.D, s.K))
        self.nkw_scaled_sum = np.zeros((s.K, s.V))
        self.inv_sum = np.zeros(s.K)
        self.kept = 0

    def _to_sparse(self) -> None:
        # the packed lists replace the dense counts for the sparse kernel
        self.wt_ptr, self.wt_len, self.wt = kcollapsed.word_topic_lists(self.nwk, self.s.word_freq)
        self.nwk = None

    def maybe_switch(self) -> None:
        """Dense start of ``kernel="auto"`` above DENSE_MAX_TOPICS: go sparse once words are concentrated."""
        s = self.s
        if not (s.dense_start and self.mode == "dense"):
            return
        spread = np.count_nonzero(self.nwk, axis=1) @ s.word_freq / s.N  # topics per word, token-weighted
        if spread <= SPARSE_SWITCH_FRACTION * s.K:
            self.nwk = np.ascontiguousarray(self.nwk[:, :s.K])
            self._to_sparse()
            self.mode = "sparse"

    # A sweep is a list of phases; a phase is a function returning (callable,
    # args) tasks that may run concurrently (with the tasks of the same phase
    # of other chains); phases run one after the other.
    def sweep_phases(self, record: bool) -> list[Callable[[], list[tuple[Callable[..., Any], tuple]]]]:
        s = self.s
        if s.method == "collapsed":
            key = draw_key(self.rng)
            if self.mode == "sparse":
                return [lambda: [(kcollapsed.collapsed_sparse_sweep, (s.doc_ptr, s.words, self.z, self.nk, self.wt_ptr,
                                                                   self.wt_len, self.wt, s.alpha, s.beta, key))]]
            return [lambda: [(kcollapsed.collapsed_dense_sweep, (s.doc_ptr, s.words, self.z, self.nwk, self.nk,
                                                              s.alpha, s.beta, key))]]
        if s.method == "dmm":
            key = draw_key(self.rng)
            return [lambda: [(kdmm.dmm_sweep, (s.dw_ptr, s.dw_word, s.dw_count, self.zd, self.mk, self.nwk,
                                                  self.nk, s.alpha, s.beta, key, self.prob_sum, record, s.lg_beta))]]
        phi_key, theta_key, key = draw_key(self.rng), draw_key(self.rng), draw_key(self.rng)
        if self.g is None:
            self.g = np.empty((s.V, s.K))
            self.cphi = np.empty((s.V, s.K))
            self.sums = np.empty((common.n_word_chunks(s.V), s.K))
            self.theta = np.empty((s.D, s.K)) if s.method == "uncollapsed" else None

        def gammas() -> list:
            return [(common.phi_gamma_chunks, (self.nwk, s.beta, phi_key, a, b, self.g, self.sums))
                    for a, b in s.word_blocks]

        def normalize() -> list:
            inv_sum = 1.0 / self.sums.sum(axis=0)  # fixed chunk order: same bytes for any threads
            return [(common.phi_normalize_chunks, (self.g, inv_sum, a, b, self.cphi)) for a, b in s.word_blocks]

        def sample() -> list:
            if s.method == "partial":
                return [(kpartial.partial_sweep, (s.doc_ptr, s.words, self.z, self.g, self.cphi, s.alpha, key, a, b))
                        for a, b in s.blocks]
            return [(kuncollapsed.uncollapsed_sweep, (s.doc_ptr, s.words, self.z, self.theta, self.g, s.alpha,
                                                 theta_key, key, a, b)) for a, b in s.blocks]

        def recount() -> list:
            def count() -> None:
                self.nwk = common.word_topic_counts(s.words, self.z, s.K, s.V)
                self.nk = common.topic_counts(self.z, s.K)
            return [(count, ())]

        return [gammas, normalize, sample, recount]

    def log_joint(self) -> float:
        s = self.s
        if s.method == "dmm":
            return float(kdmm.dmm_log_joint_from_counts(self.mk, self.nwk, self.nk, s.alpha, s.beta, s.lg_beta))
        if s.method == "collapsed" and self.mode == "sparse":
            return float(kcollapsed.log_joint_sparse(s.doc_ptr, self.z, self.wt_ptr, self.wt_len, self.wt, self.nk,
                                                  s.alpha, s.beta, s.lg_alpha, s.lg_beta))
        return float(common.log_joint_from_counts(s.doc_ptr, self.z, self.nwk, self.nk, s.alpha, s.beta,
                                                   s.lg_alpha, s.lg_beta))

    def accumulate(self) -> None:
        s = self.s
        if s.method == "dmm":
            kdmm.expand_doc_topics(s.doc_ptr, self.zd, self.z)
        common.accumulate_estimates(s.doc_ptr, s.words, self.z, self.nk, s.V * s.beta,
                                     self.ndk_sum, self.nkw_scaled_sum, self.inv_sum)
        self.kept += 1

    def estimates(self) -> tuple[np.ndarray, np.ndarray]:
        s = self.s
        t = max(self.kept, 1)
        lengths = np.diff(s.doc_ptr).astype(float)
        if s.method == "dmm":
            kdmm.expand_doc_topics(s.doc_ptr, self.zd, self.z)
            theta = self.prob_sum / t
        else:
            theta = (self.ndk_sum / t + s.alpha) / (lengths + s.K * s.alpha)[:, None]
        phi = (self.nkw_scaled_sum + s.beta * self.inv_sum[:, None]) / t
        return theta, phi


@dataclass
class _Shared:
    doc_ptr: np.ndarray
    words: np.ndarray
    K: int
    V: int
    alpha: float
    beta: float
    method: str
    kernel: str
    seed: int
    threads: int
    lg_alpha: np.ndarray
    lg_beta: np.ndarray
    word_freq: np.ndarray
    blocks: list[tuple[int, int]]
    word_blocks: list[tuple[int, int]]
    dw_ptr: np.ndarray | None = None
    dw_word: np.ndarray | None = None
    dw_count: np.ndarray | None = None
    dense_start: bool = False  # kernel "auto" above DENSE_MAX_TOPICS: dense sweeps first, then sparse

    @property
    def D(self) -> int:
        return self.doc_ptr.size - 1

    @property
    def N(self) -> int:
        return self.words.size


def _warm_up(method: str, kernel: str) -> None:
    """Compile (or load from numba's cache) the kernels ``method`` (and ``kernel``) use, on a toy corpus.

    Called before the clock starts, so timings exclude compilation; only the
    kernels of the requested method are touched (a cold compile of all of them
    takes ~15 s, loading them from the cache ~0.5 s).
    """
    doc_ptr = np.array([0, 2, 3], dtype=np.int64)
    words = np.array([0, 1, 1], dtype=np.int32)
    freq = np.array([1, 2], dtype=np.int64)
    z = np.array([0, 1, 0], dtype=np.int32)
    lg = common.lgamma_table(0.1, 3)
    nwk = common.word_topic_counts(words, z, 2, 2)
    nk = common.topic_counts(z, 2)
    common.accumulate_estimates(doc_ptr, words, z, nk, 0.2, np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2))
    if method == "collapsed":
        if kernel == "dense":
            padded = kcollapsed.padded_word_topic_counts(words, z, 2, 2)
            kcollapsed.collapsed_dense_sweep(doc_ptr, words, z, padded, nk, 0.1, 0.1, np.uint64(1))
            common.log_joint_from_counts(doc_ptr, z, padded, nk, 0.1, 0.1, lg, lg)
        else:
            ptr, length, topics = kcollapsed.word_topic_lists(nwk, freq)
            kcollapsed.collapsed_sparse_sweep(doc_ptr, words, z, nk, ptr, length, topics, 0.1, 0.1, np.uint64(1))
            kcollapsed.log_joint_sparse(doc_ptr, z, ptr, length, topics, nk, 0.1, 0.1, lg, lg)
    elif method in ("partial", "uncollapsed"):
        common.log_joint_from_counts(doc_ptr, z, nwk, nk, 0.1, 0.1, lg, lg)
        phi, cphi = common.draw_phi(nwk, 0.1, np.uint64(1))
        if method == "partial":
            kpartial.partial_sweep(doc_ptr, words, z, phi, cphi, 0.1, np.uint64(1), 0, 2)
        else:
            kuncollapsed.uncollapsed_sweep(doc_ptr, words, z, np.empty((2, 2)), phi, 0.1, np.uint64(1), np.uint64(1), 0, 2)
    else:
        dw_ptr, dw_word, dw_count = kdmm.doc_word_counts(doc_ptr, words, 2)
        zd = np.array([0, 1], dtype=np.int32)
        mk = common.topic_counts(zd, 2)
        kdmm.expand_doc_topics(doc_ptr, zd, z)
        kdmm.dmm_sweep(dw_ptr, dw_word, dw_count, zd, mk, common.word_topic_counts(words, z, 2, 2),
                          common.topic_counts(z, 2), 0.1, 0.1, np.uint64(1), np.zeros((2, 2)), False, lg)
        kdmm.dmm_log_joint_from_counts(mk, nwk, nk, 0.1, 0.1, lg)


def fit(
    corpus: CorpusLike,
    *,
    n_topics: int,
    alpha: float,
    beta: float,
    iterations: int,
    burn_in: int,
    chains: int = 1,
    seed: int = 0,
    method: str = "collapsed",
    threads: int = 1,
    callback: Callable[[int, int, float], None] | None = None,
    kernel: str = "auto",
) -> LdaFit:
    """Fit LDA (or the Dirichlet-multinomial mixture) by Gibbs sampling.

    Parameters
    ----------
    corpus
        Has ``doc_ptr`` int (D + 1,), ``words`` int (N,) and ``vocab`` (V names).
    n_topics, alpha, beta
        K and the symmetric Dirichlet concentrations of theta (for ``dmm``: of
        the mixture weights) and phi.
    iterations, burn_in
        Sweeps per chain; the first ``burn_in`` are left out of theta and phi.
    chains, seed
        Independent chains; chain c draws from ``SeedSequence(seed, spawn_key=(c,))``.
    method
        ``"collapsed"``, ``"partial"``, ``"uncollapsed"`` or ``"dmm"`` (module docstring).
    threads
        Worker threads: chains run side by side, and for ``partial`` and
        ``uncollapsed`` blocks of documents of one chain too. Results do not
        depend on it.
    callback
        ``callback(chain, iteration, log_joint_per_token)`` after every
        iteration of every chain (called from the calling thread).
    kernel
        ``"auto"``, ``"sparse"`` or ``"dense"``: implementation of the
        collapsed conditional (ignored by the other methods). Both are exact;
        ``"auto"`` is dense up to ``DENSE_MAX_TOPICS`` topics, sparse above
        (reported as ``"sparse"``), where it starts with dense sweeps until
        the words have concentrated on few topics (``SPARSE_SWITCH_FRACTION``).

    Returns
    -------
    LdaFit
    """
    doc_ptr, words, vocab_size = _validate(corpus, n_topics, alpha, beta, iterations, burn_in,
                                           chains, method, threads, kernel)
    n_topics, iterations, burn_in, chains, threads = map(int, (n_topics, iterations, burn_in, chains, threads))
    alpha, beta, seed = float(alpha), float(beta), int(seed)
    if method == "collapsed":
        used = kernel if kernel != "auto" else ("dense" if n_topics <= DENSE_MAX_TOPICS else "sparse")
    else:
        used = method
    dense_start = method == "collapsed" and kernel == "auto" and used == "sparse"
    _warm_up(method, used)
    if dense_start:
        _warm_up(method, "dense")
    t_start = time.perf_counter()
    lengths = np.diff(doc_ptr)
    word_freq = np.bincount(words, minlength=vocab_size)
    shared = _Shared(doc_ptr, words, n_topics, vocab_size, alpha, beta, method, used, seed, threads,
                     common.lgamma_table(alpha, int(max(lengths.max(), 1))),
                     common.lgamma_table(beta, int(word_freq.max())), word_freq,
                     _doc_blocks(doc_ptr, threads if method in ("partial", "uncollapsed") else 1),
                     _even_blocks(common.n_word_chunks(vocab_size), threads))
    shared.dense_start = dense_start
    if method == "dmm":
        shared.dw_ptr, shared.dw_word, shared.dw_count = kdmm.doc_word_counts(doc_ptr, words, vocab_size)
    states = [_Chain(shared, c) for c in range(chains)]
    log_joint = np.empty((chains, iterations))
    n_tokens = words.size
    sampling = 0.0
    sampling_cpu = 0.0
    t_log_joint = 0.0
    t_estimates = 0.0
    with ThreadPoolExecutor(max_workers=threads) as pool:
        def run(tasks: list[tuple[Callable[..., Any], tuple]]) -> None:
            if threads == 1 or len(tasks) == 1:
                for func, args in tasks:
                    func(*args)
            else:
                for fut in [pool.submit(func, *args) for func, args in tasks]:
                    fut.result()

        for it in range(iterations):
            t0 = time.perf_counter()
            c0 = time.process_time()
            phases = [st.sweep_phases(it >= burn_in) for st in states]
            for p in range(len(phases[0])):
                run([task for chain_phases in phases for task in chain_phases[p]()])
            for st in states:
                st.maybe_switch()
            t1 = time.perf_counter()
            sampling += t1 - t0
            sampling_cpu += time.process_time() - c0
            values = [0.0] * chains

            def lj(c: int, values: list[float] = values) -> None:
                values[c] = states[c].log_joint()

            run([(lj, (c,)) for c in range(chains)])
            log_joint[:, it] = values
            t2 = time.perf_counter()
            t_log_joint += t2 - t1
            if it >= burn_in:
                run([(st.accumulate, ()) for st in states])
            t_estimates += time.perf_counter() - t2
            if callback is not None:
                for c in range(chains):
                    callback(c, it, log_joint[c, it] / n_tokens)
    est = [st.estimates() for st in states]
    theta = np.stack([e[0] for e in est])
    phi = np.stack([e[1] for e in est])
    z = np.stack([st.z for st in states])
    total = time.perf_counter() - t_start
    return LdaFit(
        log_joint=log_joint, log_joint_per_token=log_joint / n_tokens, theta=theta, phi=phi, z=z,
        n_topics=n_topics, alpha=alpha, beta=beta, method=method, iterations=iterations, burn_in=burn_in,
        seed=seed, chains=chains, threads=threads, kernel=used, n_tokens=n_tokens,
        sampling_seconds=sampling, total_seconds=total,
        timings={"sampling": sampling, "sampling_cpu": sampling_cpu, "log_joint": t_log_joint,
                 "estimates": t_estimates, "total": total},
        z_doc=np.stack([st.zd for st in states]) if method == "dmm" else None,
    )
