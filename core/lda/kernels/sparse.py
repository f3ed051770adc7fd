"""The sparse collapsed Gibbs sweep for LDA, after SparseLDA (Yao, Mimno & McCallum 2009).

``p(z_i = k | z_-i, w) ∝ (n_dk + alpha) (n_kw + beta) / (n_k + V beta)``,
with MALLET's packed ``count << bits | topic`` word-topic lists sorted by
count (:func:`word_topic_lists`): the conditional is split into the buckets
``s = sum_k alpha beta / (n_k + V beta)`` (all topics, changes slowly),
``r = sum_k n_dk beta / (n_k + V beta)`` (topics of the document) and
``q = sum_k (n_dk + alpha) n_kw / (n_k + V beta)`` (topics of the word),
which add up to the full normaliser, so drawing a bucket by its mass and then
a topic within it is the same draw (:func:`collapsed_sparse_sweep`). Cost per
token follows the number of topics present in the word and the document, not
K: the faster kernel for large K once the words have concentrated on few
topics (see :data:`mcmc.core.lda.collapsed.SPARSE_SWITCH_FRACTION`).

:data:`KERNEL` is the strategy the collapsed sampler calls
(:class:`mcmc.core.lda.kernels.CollapsedKernel`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from mcmc.core.lda.kernels.common import (
    PREFETCH_AHEAD,
    DocumentTally,
    add_topic_inverses,
    add_topic_norms,
    doc_part,
    doc_part_asymmetric,
    doc_topics_add,
    doc_topics_drop,
    doc_topics_load,
    no_tally,
    prefetch,
    tally_document,
    word_topic_counts,
)
from mcmc.core.lda.kernels.rng import uniform

if TYPE_CHECKING:
    from mcmc.core.lda.sampler import Problem

TOPIC_BITS = 20  # packed word-topic entries: count << TOPIC_BITS | topic (int64)
TOPIC_MASK = (1 << TOPIC_BITS) - 1
MAX_TOPICS = 1 << TOPIC_BITS


@njit(cache=True, nogil=True)
def word_topic_lists(nwk: np.ndarray, word_freq: np.ndarray, n_topics: int = -1) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
    """Sparse word-topic counts for the sparse sweep, MALLET-style packed and sorted.

    Word w owns the slots ``packed[ptr[w]:ptr[w] + min(K, freq_w)]`` (it can
    never be in more topics than it has tokens; words are placed by decreasing
    frequency, ``ptr[V]`` is the total); the first ``length[w]`` hold
    ``n_wk << TOPIC_BITS | k`` for its topics with ``n_wk > 0``, in decreasing
    order (so by decreasing count). Keeping the count inside the list means a
    token reads one or two cache lines for its word instead of a row of a V x K
    matrix, and the sorted order ends the walk over the word bucket early.

    ``n_topics`` K: the first K columns of ``nwk`` (the dense kernel's padded
    counts, read in place); -1: all of them.

    Returns
    -------
    ptr : int64 (V + 1,), length : int32 (V,), packed : int64 (sum_w min(K, freq_w),)
    """
    vocab_size = nwk.shape[0]
    if n_topics < 0:
        n_topics = nwk.shape[1]
    ptr = np.zeros(vocab_size + 1, dtype=np.int64)
    # slots laid out by decreasing word frequency, not by word id: the lists
    # most tokens read sit together in a compact, cache-resident block
    off = np.int64(0)
    for w in np.argsort(-word_freq, kind="mergesort"):
        ptr[w] = off
        off += min(n_topics, word_freq[w])
    ptr[vocab_size] = off
    length = np.zeros(vocab_size, dtype=np.int32)
    packed = np.zeros(ptr[vocab_size], dtype=np.int64)
    for w in range(vocab_size):
        base = ptr[w]
        n = 0
        for k in range(n_topics):
            if nwk[w, k] > 0:
                packed[base + n] = (np.int64(nwk[w, k]) << TOPIC_BITS) | k
                n += 1
        packed[base:base + n] = np.sort(packed[base:base + n])[::-1]
        length[w] = n
    return ptr, length, packed


@njit(cache=True, nogil=True)
def unpack_word_topics(ptr: np.ndarray, length: np.ndarray, packed: np.ndarray, n_topics: int) -> np.ndarray:
    """Dense ``n_wk`` (V, K) int32 from the packed lists (for tests and estimates)."""
    vocab_size = length.size
    nwk = np.zeros((vocab_size, n_topics), dtype=np.int32)
    for w in range(vocab_size):
        for j in range(ptr[w], ptr[w] + length[w]):
            nwk[w, packed[j] & TOPIC_MASK] = packed[j] >> TOPIC_BITS
    return nwk


@njit(cache=True, nogil=True)
def accumulate_phi_sums_packed(ptr: np.ndarray, length: np.ndarray, packed: np.ndarray, nk: np.ndarray,
                               vbeta: float, nkw_scaled_sum: np.ndarray, inv_sum: np.ndarray) -> None:
    """:func:`~mcmc.core.lda.kernels.common.accumulate_phi_sums` from the packed word-topic lists.

    Adds ``n_kw / (n_k + V beta)`` for the nonzero counts only (the others add 0).
    """
    inv = add_topic_inverses(nk, vbeta, inv_sum)
    for w in range(length.size):
        for j in range(ptr[w], ptr[w] + length[w]):
            k = packed[j] & TOPIC_MASK
            nkw_scaled_sum[k, w] += (packed[j] >> TOPIC_BITS) * inv[k]


@njit(cache=True, nogil=True)
def collapsed_sparse_sweep(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    nk: np.ndarray,
    wt_ptr: np.ndarray,
    wt_len: np.ndarray,
    wt: np.ndarray,
    alpha: np.ndarray,
    beta: float,
    key: np.uint64,
) -> None:
    """:func:`collapsed_sparse_sweep_tallied` adding nothing up (the sweep alone)."""
    empty = np.empty(0)
    collapsed_sparse_sweep_tallied(doc_ptr, words, z, nk, wt_ptr, wt_len, wt, alpha, beta, key, empty, empty, empty,
                                   np.empty((0, nk.size)), np.empty(0, np.int64), np.empty((0, nk.size)))


@njit(cache=True, nogil=True)
def collapsed_sparse_sweep_tallied(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    nk: np.ndarray,
    wt_ptr: np.ndarray,
    wt_len: np.ndarray,
    wt: np.ndarray,
    alpha: np.ndarray,
    beta: float,
    key: np.uint64,
    doc_part: np.ndarray,
    doc_norm: np.ndarray,
    lg_alpha: np.ndarray,
    ndk_sum: np.ndarray,
    length_group: np.ndarray,
    length_topic_sum: np.ndarray,
) -> None:
    """One collapsed Gibbs sweep with SparseLDA's exact bucket decomposition.

    ``(n_dk + a)(n_kw + b)/(n_k + V b) = a b/(n_k + V b) + n_dk b/(n_k + V b)
    + (n_dk + a) n_kw/(n_k + V b)``: the smoothing bucket s (all topics), the
    document bucket r (topics with n_dk > 0) and the word bucket q (topics
    with n_kw > 0). s and r are updated as counts change (and recomputed
    exactly at every document), ``coef_k = (n_dk + a)/(n_k + V b)`` is cached,
    so a token costs O(#topics of its word) plus, rarely, a walk of the
    document's topics or of all K. A single uniform ``u`` times ``s + r + q``
    selects the bucket and the topic inside it: an exact draw from the full
    conditional (Yao, Mimno & McCallum 2009, section 3).

    Parameters
    ----------
    doc_ptr : int64 (D + 1,); words : int32 (N,); z : int32 (N,), in place
    nk : int32 (K,) tokens per topic, in place
    wt_ptr, wt_len, wt : the packed sorted word-topic lists of
        :func:`word_topic_lists`, updated in place (they replace ``n_wk``)
    alpha : float (K,) Dirichlet concentration of theta per topic (Mallet's
        asymmetric form: the smoothing bucket is ``s = sum_k alpha_k beta / (n_k + V b)``)
    beta : symmetric Dirichlet concentration of phi
    key : the sweep's random key (token ``i`` uses uniform ``(key, i)``)
    doc_part, ..., length_topic_sum : a :class:`~mcmc.core.lda.kernels.common.DocumentTally`,
        filled document by document as the sweep leaves it (no effect on the draws)
    """
    n_topics = nk.size
    vbeta = wt_len.size * beta
    tallying = doc_norm.size > 0 or length_topic_sum.shape[0] > 0
    doc_ll = 0.0
    ab_k = alpha * beta  # alpha_k beta per topic
    # A symmetric alpha keeps the original arithmetic (s summed as beta alpha sum_k inv_k), so
    # runs without learned hyperparameters give the same bytes as before alpha became a vector.
    symmetric = True
    for k in range(1, n_topics):
        if alpha[k] != alpha[0]:
            symmetric = False
    ab = ab_k[0]
    one = np.int64(1) << TOPIC_BITS
    inv = np.empty(n_topics)
    coef = np.empty(n_topics)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
        coef[k] = alpha[k] * inv[k]
    ndk = np.zeros(n_topics, dtype=np.int32)
    dt = np.empty(n_topics, dtype=np.int32)  # topics of the document
    dpos = np.empty(n_topics, dtype=np.int32)  # position of a topic in dt
    qbuf = np.empty(n_topics)
    n_tokens = words.size
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        n_dt = doc_topics_load(z, start, stop, ndk, dt, dpos)
        s = 0.0
        if symmetric:
            for k in range(n_topics):
                s += inv[k]
            s *= ab
        else:
            for k in range(n_topics):
                s += ab_k[k] * inv[k]
        r = 0.0
        for j in range(n_dt):
            k = dt[j]
            r += ndk[k] * inv[k]
            coef[k] = (alpha[k] + ndk[k]) * inv[k]
        r *= beta
        for i in range(start, stop):
            if i + PREFETCH_AHEAD < n_tokens:  # the head of a coming token's list (often all of it)
                prefetch(wt, wt_ptr[words[i + PREFETCH_AHEAD]])
            w = words[i]
            t = z[i]
            # -- take token i out of topic t
            s -= ab_k[t] * inv[t]
            r -= beta * ndk[t] * inv[t]
            ndk[t] -= 1
            nk[t] -= 1
            inv[t] = 1.0 / (nk[t] + vbeta)
            s += ab_k[t] * inv[t]
            r += beta * ndk[t] * inv[t]
            coef[t] = (alpha[t] + ndk[t]) * inv[t]
            if ndk[t] == 0:
                n_dt = doc_topics_drop(t, n_dt, dt, dpos)
            base = wt_ptr[w]
            n_wt = wt_len[w]
            j = 0
            while (wt[base + j] & TOPIC_MASK) != t:
                j += 1
            e = wt[base + j] - one
            while j + 1 < n_wt and wt[base + j + 1] > e:  # keep decreasing order
                wt[base + j] = wt[base + j + 1]
                j += 1
            wt[base + j] = e
            if e < one:  # count 0: it sank to the end
                n_wt -= 1
            # -- word bucket
            q = 0.0
            for j in range(n_wt):
                e = wt[base + j]
                v = coef[e & TOPIC_MASK] * (e >> TOPIC_BITS)
                qbuf[j] = v
                q += v
            u = uniform(key, i) * (s + r + q)
            j = -1
            if u < q:
                j = n_wt - 1
                for jj in range(n_wt):
                    u -= qbuf[jj]
                    if u < 0.0:
                        j = jj
                        break
                t = wt[base + j] & TOPIC_MASK
            else:
                u -= q
                if u < r:
                    u /= beta
                    t = dt[n_dt - 1] if n_dt > 0 else n_topics - 1
                    for jj in range(n_dt):
                        k = dt[jj]
                        u -= ndk[k] * inv[k]
                        if u < 0.0:
                            t = k
                            break
                elif symmetric:
                    u = (u - r) / ab
                    t = n_topics - 1
                    for k in range(n_topics):
                        u -= inv[k]
                        if u < 0.0:
                            t = k
                            break
                else:
                    u = u - r
                    t = n_topics - 1
                    for k in range(n_topics):
                        u -= ab_k[k] * inv[k]
                        if u < 0.0:
                            t = k
                            break
                for jj in range(n_wt):
                    if (wt[base + jj] & TOPIC_MASK) == t:
                        j = jj
                        break
            # -- put token i into topic t
            if j < 0:  # a topic new to the word enters at the end
                j = n_wt
                n_wt += 1
                e = one | t
            else:
                e = wt[base + j] + one
            while j > 0 and wt[base + j - 1] < e:
                wt[base + j] = wt[base + j - 1]
                j -= 1
            wt[base + j] = e
            wt_len[w] = n_wt
            z[i] = t
            s -= ab_k[t] * inv[t]
            r -= beta * ndk[t] * inv[t]
            ndk[t] += 1
            nk[t] += 1
            inv[t] = 1.0 / (nk[t] + vbeta)
            s += ab_k[t] * inv[t]
            r += beta * ndk[t] * inv[t]
            coef[t] = (alpha[t] + ndk[t]) * inv[t]
            if ndk[t] == 1:
                n_dt = doc_topics_add(t, n_dt, dt, dpos)
        if tallying:
            doc_ll = tally_document(d, start, stop, z, ndk, dt, n_dt, doc_ll, doc_norm, lg_alpha, ndk_sum,
                                    length_group, length_topic_sum)
        # leave the caches as an empty document would see them
        for j in range(n_dt):
            k = dt[j]
            ndk[k] = 0
            coef[k] = alpha[k] * inv[k]
    if doc_part.size > 0:
        doc_part[0] = doc_ll


@njit(cache=True, nogil=True)
def log_joint_sparse(
    doc_ptr: np.ndarray,
    z: np.ndarray,
    wt_ptr: np.ndarray,
    wt_len: np.ndarray,
    wt: np.ndarray,
    nk: np.ndarray,
    alpha: float,
    beta: float,
    lg_alpha: np.ndarray,
    lg_beta: np.ndarray,
) -> float:
    """:func:`log_joint_from_counts` reading ``n_wk`` from the packed lists."""
    return topic_word_part_onto(doc_part(doc_ptr, z, nk.size, alpha, lg_alpha), wt_ptr, wt_len, wt, nk, beta, lg_beta)


@njit(cache=True, nogil=True)
def topic_word_part_onto(total: float, wt_ptr: np.ndarray, wt_len: np.ndarray, wt: np.ndarray, nk: np.ndarray,
                         beta: float, lg_beta: np.ndarray) -> float:
    """``total`` plus the topic-word half of the log joint from the packed lists, term by term onto it.

    :func:`log_joint_sparse` with its document half given as ``total`` (the same additions in the same order).
    """
    vocab_size = wt_len.size
    total = add_topic_norms(total, nk, vocab_size * beta)
    lg0 = lg_beta[0]
    for w in range(vocab_size):
        for j in range(wt_ptr[w], wt_ptr[w] + wt_len[w]):
            total += lg_beta[wt[j] >> TOPIC_BITS] - lg0
    return total


@njit(cache=True, nogil=True)
def log_joint_sparse_asymmetric(
    doc_ptr: np.ndarray,
    z: np.ndarray,
    wt_ptr: np.ndarray,
    wt_len: np.ndarray,
    wt: np.ndarray,
    nk: np.ndarray,
    alpha: np.ndarray,
    beta: float,
    lg_beta: np.ndarray,
) -> float:
    """:func:`log_joint_sparse` with a per-topic ``alpha`` (K,) (learned hyperparameters)."""
    vocab_size = wt_len.size
    total = add_topic_norms(doc_part_asymmetric(doc_ptr, z, alpha), nk, vocab_size * beta)
    lg0 = lg_beta[0]
    for w in range(vocab_size):
        for j in range(wt_ptr[w], wt_ptr[w] + wt_len[w]):
            total += lg_beta[wt[j] >> TOPIC_BITS] - lg0
    return total


class WordTopicLists(NamedTuple):
    """The sparse kernel's counts: the packed sorted word-topic lists of :func:`word_topic_lists`."""

    ptr: np.ndarray  # int64 (V + 1,): word w's slots start at ptr[w]
    length: np.ndarray  # int32 (V,): topics word w is in
    packed: np.ndarray  # int64: n_wk << TOPIC_BITS | k, by decreasing count within a word


class SparseKernel:
    """The sparse kernel as a :class:`~mcmc.core.lda.kernels.CollapsedKernel`: counts are :class:`WordTopicLists`.

    The lists replace ``n_wk`` altogether (a V x K table is made only while
    they are built), which is what makes large K affordable.
    """

    name = "sparse"

    def init(self, problem: Problem, z: np.ndarray) -> WordTopicLists:
        return self.from_word_topic_counts(problem, word_topic_counts(problem.words, z, problem.K, problem.V))

    def from_word_topic_counts(self, problem: Problem, nwk: np.ndarray) -> WordTopicLists:
        # read in place from any (V, >= K) table, e.g. the dense kernel's padded counts
        return WordTopicLists(*word_topic_lists(nwk, problem.word_freq, problem.K))

    def word_topic_counts(self, problem: Problem, counts: WordTopicLists) -> np.ndarray:
        return unpack_word_topics(*counts, problem.K)

    def sweep(self, problem: Problem, counts: WordTopicLists, z: np.ndarray, nk: np.ndarray, alpha: np.ndarray,
              beta: float, key: np.uint64, tally: DocumentTally | None = None) -> None:
        collapsed_sparse_sweep_tallied(problem.doc_ptr, problem.words, z, nk, *counts, alpha, beta, key,
                                       *(tally or no_tally(problem.K)))

    def log_joint(self, problem: Problem, counts: WordTopicLists, z: np.ndarray, nk: np.ndarray,
                  doc_part: float | None = None) -> float:
        p = problem
        if doc_part is not None:
            return float(topic_word_part_onto(doc_part, *counts, nk, p.beta, p.lg_beta))
        return float(log_joint_sparse(p.doc_ptr, z, *counts, nk, p.alpha, p.beta, p.lg_alpha, p.lg_beta))

    def log_joint_asymmetric(self, problem: Problem, counts: WordTopicLists, z: np.ndarray, nk: np.ndarray,
                             alpha: np.ndarray, beta: float, lg_beta: np.ndarray) -> float:
        return float(log_joint_sparse_asymmetric(problem.doc_ptr, z, *counts, nk, alpha, beta, lg_beta))

    def word_topic_values(self, problem: Problem, counts: WordTopicLists) -> np.ndarray:
        lengths = counts.length.astype(np.int64)
        first = np.repeat(counts.ptr[:-1] - (np.cumsum(lengths) - lengths), lengths)
        return counts.packed[first + np.arange(lengths.sum())] >> TOPIC_BITS  # list order

    def accumulate_phi(self, problem: Problem, counts: WordTopicLists, nk: np.ndarray, vbeta: float,
                       nkw_scaled_sum: np.ndarray, inv_sum: np.ndarray) -> None:
        accumulate_phi_sums_packed(*counts, nk, vbeta, nkw_scaled_sum, inv_sum)

    def topics_per_word(self, problem: Problem, counts: WordTopicLists) -> float:
        return counts.length.astype(np.int64) @ problem.word_freq / problem.N


#: The strategy registered as ``"sparse"`` (:data:`mcmc.core.lda.kernels.COLLAPSED_KERNELS`).
KERNEL = SparseKernel()
