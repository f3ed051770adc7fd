"""Compiled Gibbs sweeps for LDA and the Dirichlet-multinomial mixture.

Every kernel here is a plain ``@njit(cache=True, nogil=True)`` function over
flat integer arrays, so :mod:`mcmc.core.lda.gibbs` can run several of them at
once from Python threads (chains side by side, or blocks of documents of one
chain for the samplers whose documents are conditionally independent).

Samplers
--------
* Collapsed Gibbs (Griffiths & Steyvers 2004), token by token,
  ``p(z_i = k | z_-i, w) ∝ (n_dk + alpha) (n_kw + beta) / (n_k + V beta)``,
  in two exact implementations of the same conditional:

  - dense (:func:`collapsed_dense_sweep`): all K terms per token, for small K;
  - sparse (:func:`collapsed_sparse_sweep`), after SparseLDA (Yao, Mimno &
    McCallum 2009): the conditional is split into the buckets
    ``s = sum_k alpha beta / (n_k + V beta)`` (all topics, changes slowly),
    ``r = sum_k n_dk beta / (n_k + V beta)`` (topics of the document) and
    ``q = sum_k (n_dk + alpha) n_kw / (n_k + V beta)`` (topics of the word),
    which add up to the full normaliser, so drawing a bucket by its mass and
    then a topic within it is the same draw. Cost per token follows the
    number of topics present in the word and the document, not K.

* Partially collapsed Gibbs (theta integrated out, phi drawn): given phi,
  documents are independent, so :func:`partial_sweep` runs on any block of
  documents and blocks run in parallel exactly.
* Uncollapsed (blocked) Gibbs: given theta and phi every token is independent
  (:func:`uncollapsed_sweep`).
* Dirichlet-multinomial mixture, one topic per document, by collapsed Gibbs
  (Nigam et al. 2000; Yin & Wang 2014, GSDMM): :func:`dmm_sweep`.

Random numbers
--------------
Kernels do not use numba's ``np.random`` (a hidden per-thread global state).
Each sweep receives a 64-bit ``key`` drawn from the chain's explicit
``numpy.random.Generator``, and the uniform used for token ``i`` is SplitMix64
(Steele, Lea & Flood 2014) evaluated at counter ``i``:
``mix64(key + (i + 1) * 0x9E3779B97F4A7C15) >> 11`` scaled to [0, 1). That is
exactly the SplitMix64 stream started at ``key`` read at position ``i``, so the
kernels need no random state, a token's uniform does not depend on which thread
handles its document (same seed, same bytes, for any number of threads), and
no buffer of N uniforms is written and read back every sweep.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 1.0 / 9007199254740992.0


@njit(cache=True, nogil=True, inline="always")
def uniform(key: np.uint64, counter: np.int64) -> float:
    """Uniform on [0, 1): SplitMix64 started at ``key``, read at ``counter``."""
    x = key + np.uint64(counter + 1) * _GOLDEN
    x = (x ^ (x >> _S30)) * _MIX1
    x = (x ^ (x >> _S27)) * _MIX2
    x = x ^ (x >> _S31)
    return np.float64(x >> _S11) * _TWO_M53


@njit(cache=True, nogil=True)
def uniforms(key: np.uint64, start: np.int64, n: np.int64) -> np.ndarray:
    """``n`` uniforms of the stream ``key`` from ``start`` on (for tests)."""
    out = np.empty(n)
    for j in range(n):
        out[j] = uniform(key, start + j)
    return out


# ---------------------------------------------------------------------------
# Counts


@njit(cache=True, nogil=True)
def word_topic_counts(words: np.ndarray, z: np.ndarray, n_topics: int, vocab_size: int) -> np.ndarray:
    """Word-major counts ``n_wk`` (V, K) int32 of the assignments ``z``."""
    nwk = np.zeros((vocab_size, n_topics), dtype=np.int32)
    for i in range(words.size):
        nwk[words[i], z[i]] += 1
    return nwk


@njit(cache=True, nogil=True)
def topic_counts(z: np.ndarray, n_topics: int) -> np.ndarray:
    """Tokens per topic ``n_k`` (K,) int32."""
    nk = np.zeros(n_topics, dtype=np.int32)
    for i in range(z.size):
        nk[z[i]] += 1
    return nk


# ---------------------------------------------------------------------------
# Collapsed Gibbs, dense


@njit(cache=True, nogil=True)
def collapsed_dense_sweep(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    nwk: np.ndarray,
    nk: np.ndarray,
    alpha: float,
    beta: float,
    key: np.uint64,
) -> None:
    """One systematic-scan collapsed Gibbs sweep over all tokens, K terms each.

    Parameters
    ----------
    doc_ptr : int64 (D + 1,)
    words : int32 (N,)
    z : int32 (N,), updated in place
    nwk : int32 (V, K) word-major topic counts, updated in place
    nk : int32 (K,) tokens per topic, updated in place
    alpha, beta : symmetric Dirichlet concentrations
    key : the sweep's random key (token ``i`` uses uniform ``(key, i)``)
    """
    n_topics = nk.size
    vbeta = nwk.shape[0] * beta
    inv = np.empty(n_topics)  # 1 / (n_k + V beta), kept current
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
    ndk = np.zeros(n_topics)  # n_dk + alpha of the current document
    cum = np.empty(n_topics)
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        for k in range(n_topics):
            ndk[k] = alpha
        for i in range(start, stop):
            ndk[z[i]] += 1.0
        for i in range(start, stop):
            w = words[i]
            k = z[i]
            ndk[k] -= 1.0
            nwk[w, k] -= 1
            nk[k] -= 1
            inv[k] = 1.0 / (nk[k] + vbeta)
            row = nwk[w]
            total = 0.0
            for t in range(n_topics):
                total += ndk[t] * (row[t] + beta) * inv[t]
                cum[t] = total
            u = uniform(key, i) * total
            k = 0
            while k < n_topics - 1 and cum[k] <= u:
                k += 1
            z[i] = k
            ndk[k] += 1.0
            nwk[w, k] += 1
            nk[k] += 1
            inv[k] = 1.0 / (nk[k] + vbeta)


# ---------------------------------------------------------------------------
# Collapsed log joint and running estimates


@njit(cache=True, nogil=True)
def lgamma_table(shift: float, n: int) -> np.ndarray:
    """``lgamma(j + shift)`` for j = 0 .. n (lookup table for integer counts)."""
    out = np.empty(n + 1)
    for j in range(n + 1):
        out[j] = math.lgamma(j + shift)
    return out


@njit(cache=True, nogil=True)
def log_joint_from_counts(
    doc_ptr: np.ndarray,
    z: np.ndarray,
    nwk: np.ndarray,
    nk: np.ndarray,
    alpha: float,
    beta: float,
    lg_alpha: np.ndarray,
    lg_beta: np.ndarray,
) -> float:
    """Collapsed ``log p(w, z)`` of LDA, summing only over nonzero counts.

    ``lg_alpha[j] = lgamma(j + alpha)`` for j up to the longest document and
    ``lg_beta[j] = lgamma(j + beta)`` for j up to the most frequent word.
    """
    n_topics = nk.size
    vocab_size = nwk.shape[0]
    kalpha = n_topics * alpha
    lg_kalpha = math.lgamma(kalpha)
    total = 0.0
    ndk = np.zeros(n_topics, dtype=np.int64)
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        total += lg_kalpha - math.lgamma(stop - start + kalpha)
        for i in range(start, stop):
            ndk[z[i]] += 1
        for i in range(start, stop):
            k = z[i]
            if ndk[k] > 0:
                total += lg_alpha[ndk[k]] - lg_alpha[0]
                ndk[k] = 0
    vbeta = vocab_size * beta
    lg_vbeta = math.lgamma(vbeta)
    for k in range(n_topics):
        total += lg_vbeta - math.lgamma(nk[k] + vbeta)
    lg0 = lg_beta[0]
    for w in range(vocab_size):
        for k in range(n_topics):
            c = nwk[w, k]
            if c > 0:
                total += lg_beta[c] - lg0
    return total


@njit(cache=True, nogil=True)
def accumulate_estimates(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    nk: np.ndarray,
    vbeta: float,
    ndk_sum: np.ndarray,
    nkw_scaled_sum: np.ndarray,
    inv_sum: np.ndarray,
) -> None:
    """Add the current state to the running sums behind theta and phi.

    ``ndk_sum`` (D, K) += n_dk; ``nkw_scaled_sum`` (K, V) += n_kw / (n_k + V
    beta); ``inv_sum`` (K,) += 1 / (n_k + V beta). Then the average of
    ``(n_kw + beta) / (n_k + V beta)`` over T states is
    ``(nkw_scaled_sum + beta inv_sum) / T``, in O(N) per state instead of O(KV).
    """
    n_topics = nk.size
    inv = np.empty(n_topics)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
        inv_sum[k] += inv[k]
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            ndk_sum[d, k] += 1.0
            nkw_scaled_sum[k, words[i]] += inv[k]


@njit(cache=True, nogil=True)
def dmm_log_joint_from_counts(
    mk: np.ndarray, nwk: np.ndarray, nk: np.ndarray, alpha: float, beta: float, lg_beta: np.ndarray
) -> float:
    """Collapsed log joint of the Dirichlet-multinomial mixture from its counts.

    ``mk`` (K,) documents per topic, ``nwk`` (V, K), ``nk`` (K,) tokens per
    topic, ``lg_beta[j] = lgamma(j + beta)``.
    """
    n_topics = nk.size
    vocab_size = nwk.shape[0]
    n_docs = 0
    for k in range(n_topics):
        n_docs += mk[k]
    kalpha = n_topics * alpha
    total = math.lgamma(kalpha) - math.lgamma(n_docs + kalpha)
    lga = math.lgamma(alpha)
    vbeta = vocab_size * beta
    lg_vbeta = math.lgamma(vbeta)
    for k in range(n_topics):
        total += math.lgamma(mk[k] + alpha) - lga
        total += lg_vbeta - math.lgamma(nk[k] + vbeta)
    lg0 = lg_beta[0]
    for w in range(vocab_size):
        for k in range(n_topics):
            c = nwk[w, k]
            if c > 0:
                total += lg_beta[c] - lg0
    return total
