"""The dense collapsed Gibbs sweep for LDA (Griffiths & Steyvers 2004): all K terms per token.

``p(z_i = k | z_-i, w) ∝ (n_dk + alpha) (n_kw + beta) / (n_k + V beta)``,
every term formed per token and summed in blocks of 8 topics, so the
inverse-CDF walk takes about K/8 + 8 steps (:func:`collapsed_dense_sweep`).
Its cost per token grows with K, with no branch on which topics a word or a
document holds: the faster kernel for small K (see
:data:`mcmc.core.lda.collapsed.DENSE_MAX_TOPICS`). The counts ``n_wk`` are
word-major, padded to whole blocks (:func:`padded_word_topic_counts`).

:data:`KERNEL` is the strategy the collapsed sampler calls
(:class:`mcmc.core.lda.kernels.CollapsedKernel`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from mcmc.core.lda.kernels.common import (
    PREFETCH_AHEAD,
    DocumentTally,
    accumulate_phi_sums,
    doc_part_asymmetric,
    log_joint_from_counts,
    no_tally,
    prefetch,
    tally_document,
    topic_word_part,
    word_topic_counts,
)
from mcmc.core.lda.kernels.rng import uniform

if TYPE_CHECKING:
    from mcmc.core.lda.sampler import Problem

_BLOCK = 8  # topics per block of the dense kernel's two-level inverse-CDF walk


@njit(cache=True, nogil=True, inline="always")
def _block_sum(p: np.ndarray, b: int) -> float:
    """``p[8 b] + ... + p[8 b + 7]``, left to right (the order the dense sweep sums a block in)."""
    acc = 0.0
    for t in range(b * _BLOCK, (b + 1) * _BLOCK):
        acc += p[t]
    return acc


def padded_word_topic_counts(words: np.ndarray, z: np.ndarray, n_topics: int, vocab_size: int) -> np.ndarray:
    """``n_wk`` as (V, K rounded up to a multiple of 8) int32, zero beyond K (dense kernel layout)."""
    return pad_word_topic_counts(word_topic_counts(words, z, n_topics, vocab_size), n_topics)


def pad_word_topic_counts(nwk: np.ndarray, n_topics: int) -> np.ndarray:
    """The first K columns of word-major ``nwk`` (V, >= K) in the dense layout: a new (V, K rounded up to 8)."""
    padded = -(-n_topics // _BLOCK) * _BLOCK
    out = np.zeros((nwk.shape[0], padded), dtype=np.int32)
    out[:, :n_topics] = nwk[:, :n_topics]
    return out


@njit(cache=True, nogil=True)
def collapsed_dense_sweep(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    nwk: np.ndarray,
    nk: np.ndarray,
    alpha: np.ndarray,
    beta: float,
    key: np.uint64,
) -> None:
    """:func:`collapsed_dense_sweep_tallied` adding nothing up (the sweep alone)."""
    empty = np.empty(0)
    collapsed_dense_sweep_tallied(doc_ptr, words, z, nwk, nk, alpha, beta, key, empty, empty, empty,
                                  np.empty((0, nk.size)), np.empty(0, np.int64), np.empty((0, nk.size)))


@njit(cache=True, nogil=True)
def collapsed_dense_sweep_tallied(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    nwk: np.ndarray,
    nk: np.ndarray,
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
    """One systematic-scan collapsed Gibbs sweep over all tokens, K terms each.

    Per token the K unnormalised probabilities ``a_k (n_wk + beta)`` with the
    cached ``a_k = (n_dk + alpha) / (n_k + V beta)`` are formed in one
    vectorisable loop and summed in blocks of 8 topics. The inverse-CDF walk
    takes the token's current topic first: ``u < p_old`` keeps the token
    where it is, and then nothing is written. Otherwise the walk goes over
    the other topics, first over blocks, then inside one: about K/8 + 8
    comparisons instead of K/2 for a flat walk. Any fixed order of the
    topics' intervals gives an exact draw; this one pays off because after
    the first sweeps most tokens stay (about two in three at K = 20), and
    the CPU predicts the branch that keeps them instead of waiting for the
    sums and stepping through a walk it cannot predict. One thread, after 50
    sweeps, old and new kernels interleaved sweep by sweep: a sweep 1.23x
    faster on AP and 1.08x on 20 Newsgroups at K = 20, 1.12x on 20
    Newsgroups at K = 50 (a branch-free walk was slower: it waits for the sums).
    Tokens of one word sit side by side in a document (LDA-C and bag-of-words
    counts), and for the second and later of them only the terms of at most
    three topics differ from the previous token's: those and their blocks'
    sums are recomputed, in the full pass's order, so the draws are the same
    to the bit (1.07x at K = 50 and 1.08x at K = 100 on 20 Newsgroups, 1.01x
    at K = 20).
    No fastmath: the sums are the plain left-to-right IEEE sums, so the draw
    is the exact inverse CDF (up to rounding of the probabilities themselves).

    Parameters
    ----------
    doc_ptr : int64 (D + 1,)
    words : int32 (N,)
    z : int32 (N,), updated in place
    nwk : int32 (V, K) or (V, K rounded up to a multiple of 8, zero beyond K)
        word-major topic counts, updated in place
    nk : int32 (K,) tokens per topic, updated in place
    alpha : float (K,) Dirichlet concentration of theta, per topic (all equal: symmetric)
    beta : symmetric Dirichlet concentration of phi
    key : the sweep's random key (token ``i`` uses uniform ``(key, i)``)
    doc_part, ..., length_topic_sum : a :class:`~mcmc.core.lda.kernels.common.DocumentTally`,
        filled document by document as the sweep leaves it (no effect on the draws)
    """
    n_topics = nk.size
    n_blocks = (n_topics + _BLOCK - 1) // _BLOCK
    padded = n_blocks * _BLOCK  # padding topics keep probability 0
    # With up to 4 blocks (K <= 32) and counts padded to whole blocks (see
    # padded_word_topic_counts), the fused per-block loop is ~15% faster at
    # K = 20; with many blocks the separate passes are (20NG, bench/lda_kernel.py).
    fused = n_blocks <= 4 and nwk.shape[1] >= padded
    vbeta = nwk.shape[0] * beta
    inv = np.zeros(padded)  # 1 / (n_k + V beta)
    ndk = np.zeros(padded)  # n_dk + alpha of the current document
    a = np.zeros(padded)  # (n_dk + alpha) / (n_k + V beta)
    p = np.zeros(padded)
    block = np.zeros(n_blocks)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
    n_tokens = words.size
    row_len = nwk.shape[1]
    tallying = doc_norm.size > 0 or length_topic_sum.shape[0] > 0
    counts = np.zeros(n_topics, dtype=np.int64)  # the document's counts, for the tally
    all_topics = np.arange(n_topics)
    doc_ll = 0.0
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        for k in range(n_topics):
            ndk[k] = alpha[k]
        for i in range(start, stop):
            ndk[z[i]] += 1.0
        for k in range(n_topics):
            a[k] = ndk[k] * inv[k]
        # p and block hold the conditional of the previous token while it is
        # of word prev_w in this document; prev_old, prev_new: its topics
        prev_w = -1
        prev_old = 0
        prev_new = 0
        for i in range(start, stop):
            w = words[i]
            old = z[i]
            if i + PREFETCH_AHEAD < n_tokens:  # every cache line of a coming token's row
                first = words[i + PREFETCH_AHEAD] * row_len
                for c in range(0, row_len, 16):
                    prefetch(nwk, first + c)
            # token i out of its topic: only that topic's terms change; the
            # counts are committed only if the token moves
            a_old = a[old]
            inv_old = 1.0 / (nk[old] - 1 + vbeta)
            a[old] = (ndk[old] - 1.0) * inv_old
            nwk[w, old] -= 1
            total = 0.0
            if w == prev_w:
                # the same word again (a third of all tokens): only the terms of the
                # topics the previous token left and entered and this one's changed;
                # recomputed as the full pass would, so the same values to the bit
                p[prev_old] = a[prev_old] * (nwk[w, prev_old] + beta)
                p[prev_new] = a[prev_new] * (nwk[w, prev_new] + beta)
                p[old] = a[old] * (nwk[w, old] + beta)
                b1, b2, b3 = prev_old // _BLOCK, prev_new // _BLOCK, old // _BLOCK
                block[b1] = _block_sum(p, b1)
                if b2 != b1:
                    block[b2] = _block_sum(p, b2)
                if b3 != b1 and b3 != b2:
                    block[b3] = _block_sum(p, b3)
                for b in range(n_blocks):
                    total += block[b]
            elif fused:
                # few blocks: one pass per block over 8 padded columns
                for b in range(n_blocks):
                    o = b * _BLOCK
                    acc = 0.0
                    for j in range(_BLOCK):
                        v = a[o + j] * (nwk[w, o + j] + beta)
                        p[o + j] = v
                        acc += v
                    block[b] = acc
                    total += acc
            else:
                # many blocks: one long vectorised pass, then the block sums
                row = nwk[w]
                for t in range(n_topics):
                    p[t] = a[t] * (row[t] + beta)
                for b in range(n_blocks):
                    acc = _block_sum(p, b)
                    block[b] = acc
                    total += acc
            u = uniform(key, i) * total
            p_old = p[old]
            if u < p_old:  # the token stays: restore what was taken out
                a[old] = a_old
                nwk[w, old] += 1
                prev_w, prev_old, prev_new = w, old, old
                continue
            # the other topics, old left out (probability 0 in the walk)
            u -= p_old
            block[old // _BLOCK] -= p_old
            p[old] = 0.0
            b = n_blocks - 1
            for bb in range(n_blocks):
                if u < block[bb]:
                    b = bb
                    break
                u -= block[bb]
            k = min((b + 1) * _BLOCK, n_topics) - 1  # if rounding leaves u >= the block's sum
            acc = 0.0
            for t in range(b * _BLOCK, k + 1):
                acc += p[t]
                if u < acc:
                    k = t
                    break
            ndk[old] -= 1.0
            nk[old] -= 1
            inv[old] = inv_old
            z[i] = k
            ndk[k] += 1.0
            nwk[w, k] += 1
            nk[k] += 1
            inv[k] = 1.0 / (nk[k] + vbeta)
            a[k] = ndk[k] * inv[k]
            prev_w, prev_old, prev_new = w, old, k
        if tallying:  # ndk holds alpha + the document's final counts (whole numbers, to far below 0.5)
            for k in range(n_topics):
                counts[k] = np.int64(ndk[k] - alpha[k] + 0.5)
            doc_ll = tally_document(d, start, stop, z, counts, all_topics, n_topics, doc_ll, doc_norm, lg_alpha,
                                    ndk_sum, length_group, length_topic_sum)
    if doc_part.size > 0:
        doc_part[0] = doc_ll


class DenseKernel:
    """The dense kernel as a :class:`~mcmc.core.lda.kernels.CollapsedKernel`: counts are the padded ``n_wk``.

    The padded table (V, K rounded up to 8) is what the fused per-block loop
    of :func:`collapsed_dense_sweep` reads; the shared kernels (log joint, phi
    sums) read its first K columns in place, so no other copy of ``n_wk`` is
    ever made.
    """

    name = "dense"

    def init(self, problem: Problem, z: np.ndarray) -> np.ndarray:
        return padded_word_topic_counts(problem.words, z, problem.K, problem.V)

    def from_word_topic_counts(self, problem: Problem, nwk: np.ndarray) -> np.ndarray:
        return pad_word_topic_counts(nwk, problem.K)

    def word_topic_counts(self, problem: Problem, counts: np.ndarray) -> np.ndarray:
        return counts

    def sweep(self, problem: Problem, counts: np.ndarray, z: np.ndarray, nk: np.ndarray, alpha: np.ndarray,
              beta: float, key: np.uint64, tally: DocumentTally | None = None) -> None:
        collapsed_dense_sweep_tallied(problem.doc_ptr, problem.words, z, counts, nk, alpha, beta, key,
                                      *(tally or no_tally(problem.K)))

    def log_joint(self, problem: Problem, counts: np.ndarray, z: np.ndarray, nk: np.ndarray,
                  doc_part: float | None = None) -> float:
        p = problem
        if doc_part is not None:  # log_joint_from_counts's sum, its first term given
            return float(doc_part + topic_word_part(counts, nk, p.beta, p.lg_beta))
        return float(log_joint_from_counts(p.doc_ptr, z, counts, nk, p.alpha, p.beta, p.lg_alpha, p.lg_beta))

    def log_joint_asymmetric(self, problem: Problem, counts: np.ndarray, z: np.ndarray, nk: np.ndarray,
                             alpha: np.ndarray, beta: float, lg_beta: np.ndarray) -> float:
        return float(doc_part_asymmetric(problem.doc_ptr, z, alpha) + topic_word_part(counts, nk, beta, lg_beta))

    def word_topic_values(self, problem: Problem, counts: np.ndarray) -> np.ndarray:
        nwk = counts[:, :problem.K]
        return nwk[nwk > 0]  # word-major order

    def accumulate_phi(self, problem: Problem, counts: np.ndarray, nk: np.ndarray, vbeta: float,
                       nkw_scaled_sum: np.ndarray, inv_sum: np.ndarray) -> None:
        accumulate_phi_sums(counts, nk, vbeta, nkw_scaled_sum, inv_sum)

    def topics_per_word(self, problem: Problem, counts: np.ndarray) -> float:
        return np.count_nonzero(counts, axis=1) @ problem.word_freq / problem.N  # padding columns count no topic


#: The strategy registered as ``"dense"`` (:data:`mcmc.core.lda.kernels.COLLAPSED_KERNELS`).
KERNEL = DenseKernel()
