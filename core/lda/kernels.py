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
# Collapsed Gibbs, sparse (SparseLDA)


@njit(cache=True, nogil=True)
def word_topic_lists(nwk: np.ndarray, word_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Topics with a nonzero count for every word, for the sparse sweep.

    Word w owns the slots ``topics[ptr[w]:ptr[w] + min(K, freq_w)]`` (it can
    never be in more topics than it has tokens), of which the first
    ``length[w]`` hold its topics with ``n_wk > 0`` in no particular order.

    Returns
    -------
    ptr : int64 (V + 1,), length : int32 (V,), topics : int32 (sum_w min(K, freq_w),)
    """
    vocab_size, n_topics = nwk.shape
    ptr = np.zeros(vocab_size + 1, dtype=np.int64)
    for w in range(vocab_size):
        ptr[w + 1] = ptr[w] + min(n_topics, word_freq[w])
    length = np.zeros(vocab_size, dtype=np.int32)
    topics = np.zeros(ptr[vocab_size], dtype=np.int32)
    for w in range(vocab_size):
        base = ptr[w]
        for k in range(n_topics):
            if nwk[w, k] > 0:
                topics[base + length[w]] = k
                length[w] += 1
    return ptr, length, topics


@njit(cache=True, nogil=True)
def collapsed_sparse_sweep(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    nwk: np.ndarray,
    nk: np.ndarray,
    wt_ptr: np.ndarray,
    wt_len: np.ndarray,
    wt: np.ndarray,
    alpha: float,
    beta: float,
    key: np.uint64,
) -> None:
    """One collapsed Gibbs sweep with SparseLDA's exact bucket decomposition.

    ``(n_dk + a)(n_kw + b)/(n_k + V b) = a b/(n_k + V b) + n_dk b/(n_k + V b)
    + (n_dk + a) n_kw/(n_k + V b)``: the smoothing bucket s (all topics), the
    document bucket r (topics with n_dk > 0) and the word bucket q (topics
    with n_kw > 0). s and r are kept up to date as counts change (s is
    recomputed exactly at every document, r at every document), and
    ``coef_k = (n_dk + a)/(n_k + V b)`` is cached, so a token costs
    O(#topics of its word) plus, rarely, a walk of the document's topics or of
    all K. A single uniform ``u`` times ``s + r + q`` selects the bucket and
    the topic inside it, which is an exact draw from the full conditional.

    Parameters are those of :func:`collapsed_dense_sweep` plus the word topic
    lists of :func:`word_topic_lists` (kept in step with ``nwk``).
    """
    n_topics = nk.size
    vbeta = nwk.shape[0] * beta
    ab = alpha * beta
    inv = np.empty(n_topics)
    coef = np.empty(n_topics)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
        coef[k] = alpha * inv[k]
    ndk = np.zeros(n_topics, dtype=np.int32)
    dt = np.empty(n_topics, dtype=np.int32)  # topics of the document
    dpos = np.empty(n_topics, dtype=np.int32)  # position of a topic in dt
    qbuf = np.empty(n_topics)
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        n_dt = 0
        for i in range(start, stop):
            k = z[i]
            if ndk[k] == 0:
                dt[n_dt] = k
                dpos[k] = n_dt
                n_dt += 1
            ndk[k] += 1
        s = 0.0
        for k in range(n_topics):
            s += inv[k]
        s *= ab
        r = 0.0
        for j in range(n_dt):
            k = dt[j]
            r += ndk[k] * inv[k]
            coef[k] = (alpha + ndk[k]) * inv[k]
        r *= beta
        for i in range(start, stop):
            w = words[i]
            t = z[i]
            # -- take token i out of topic t
            s -= ab * inv[t]
            r -= beta * ndk[t] * inv[t]
            ndk[t] -= 1
            nk[t] -= 1
            nwk[w, t] -= 1
            inv[t] = 1.0 / (nk[t] + vbeta)
            s += ab * inv[t]
            r += beta * ndk[t] * inv[t]
            coef[t] = (alpha + ndk[t]) * inv[t]
            if ndk[t] == 0:
                n_dt -= 1
                last = dt[n_dt]
                dt[dpos[t]] = last
                dpos[last] = dpos[t]
            base = wt_ptr[w]
            n_wt = wt_len[w]
            if nwk[w, t] == 0:
                for j in range(n_wt):
                    if wt[base + j] == t:
                        n_wt -= 1
                        wt[base + j] = wt[base + n_wt]
                        break
                wt_len[w] = n_wt
            # -- word bucket
            q = 0.0
            for j in range(n_wt):
                k = wt[base + j]
                v = coef[k] * nwk[w, k]
                qbuf[j] = v
                q += v
            u = uniform(key, i) * (s + r + q)
            if u < q:
                t = wt[base + n_wt - 1]
                for j in range(n_wt):
                    u -= qbuf[j]
                    if u < 0.0:
                        t = wt[base + j]
                        break
            else:
                u -= q
                if u < r:
                    u /= beta
                    t = dt[n_dt - 1] if n_dt > 0 else n_topics - 1
                    for j in range(n_dt):
                        k = dt[j]
                        u -= ndk[k] * inv[k]
                        if u < 0.0:
                            t = k
                            break
                else:
                    u = (u - r) / ab
                    t = n_topics - 1
                    for k in range(n_topics):
                        u -= inv[k]
                        if u < 0.0:
                            t = k
                            break
            # -- put token i into topic t
            z[i] = t
            s -= ab * inv[t]
            r -= beta * ndk[t] * inv[t]
            ndk[t] += 1
            nk[t] += 1
            nwk[w, t] += 1
            inv[t] = 1.0 / (nk[t] + vbeta)
            s += ab * inv[t]
            r += beta * ndk[t] * inv[t]
            coef[t] = (alpha + ndk[t]) * inv[t]
            if ndk[t] == 1:
                dt[n_dt] = t
                dpos[t] = n_dt
                n_dt += 1
            if nwk[w, t] == 1:
                wt[base + n_wt] = t
                wt_len[w] = n_wt + 1
        # leave the caches as an empty document would see them
        for j in range(n_dt):
            k = dt[j]
            ndk[k] = 0
            coef[k] = alpha * inv[k]


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


# ---------------------------------------------------------------------------
# Partially collapsed and uncollapsed Gibbs (given phi, documents independent)


@njit(cache=True, nogil=True)
def doc_topic_counts(doc_ptr: np.ndarray, z: np.ndarray, n_topics: int) -> np.ndarray:
    """Document-topic counts ``n_dk`` (D, K) int32."""
    ndk = np.zeros((doc_ptr.size - 1, n_topics), dtype=np.int32)
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[d, z[i]] += 1
    return ndk


@njit(cache=True, nogil=True)
def cumulative_rows(phi_wk: np.ndarray) -> np.ndarray:
    """Running sums along topics of the word-major ``phi_wk`` (V, K)."""
    vocab_size, n_topics = phi_wk.shape
    out = np.empty((vocab_size, n_topics))
    for w in range(vocab_size):
        acc = 0.0
        for k in range(n_topics):
            acc += phi_wk[w, k]
            out[w, k] = acc
    return out


@njit(cache=True, nogil=True)
def partial_sweep(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    phi_wk: np.ndarray,
    cphi_wk: np.ndarray,
    alpha: float,
    key: np.uint64,
    d0: int,
    d1: int,
) -> None:
    """z | phi with theta integrated out, for documents ``d0 .. d1 - 1``.

    ``p(z_i = k | z_-i, phi) ∝ (n_dk^-i + alpha) phi_kw = n_dk^-i phi_kw +
    alpha phi_kw``: the first term runs over the document's topics, the second
    is drawn by bisection in the cumulative row ``cphi_wk[w]`` of
    :func:`cumulative_rows`, so a token costs O(#topics in its document +
    log K). Exact; documents are independent given phi, so disjoint blocks can
    run concurrently.

    Parameters
    ----------
    phi_wk : float (V, K)
        Topic-word probabilities, word-major (``phi_wk[w, k] = phi_k[w]``).
    cphi_wk : float (V, K)
        ``cumulative_rows(phi_wk)``.
    """
    n_topics = phi_wk.shape[1]
    ndk = np.zeros(n_topics, dtype=np.int32)
    dt = np.empty(n_topics, dtype=np.int32)
    dpos = np.empty(n_topics, dtype=np.int32)
    buf = np.empty(n_topics)
    for d in range(d0, d1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        n_dt = 0
        for i in range(start, stop):
            k = z[i]
            if ndk[k] == 0:
                dt[n_dt] = k
                dpos[k] = n_dt
                n_dt += 1
            ndk[k] += 1
        for i in range(start, stop):
            w = words[i]
            t = z[i]
            ndk[t] -= 1
            if ndk[t] == 0:
                n_dt -= 1
                last = dt[n_dt]
                dt[dpos[t]] = last
                dpos[last] = dpos[t]
            r = 0.0
            for j in range(n_dt):
                k = dt[j]
                v = ndk[k] * phi_wk[w, k]
                buf[j] = v
                r += v
            u = uniform(key, i) * (r + alpha * cphi_wk[w, n_topics - 1])
            if u < r:
                t = dt[n_dt - 1]
                for j in range(n_dt):
                    u -= buf[j]
                    if u < 0.0:
                        t = dt[j]
                        break
            else:
                u = (u - r) / alpha
                lo = 0
                hi = n_topics - 1
                while lo < hi:  # first k with cphi > u
                    mid = (lo + hi) >> 1
                    if cphi_wk[w, mid] > u:
                        hi = mid
                    else:
                        lo = mid + 1
                t = lo
            z[i] = t
            ndk[t] += 1
            if ndk[t] == 1:
                dt[n_dt] = t
                dpos[t] = n_dt
                n_dt += 1
        for j in range(n_dt):
            ndk[dt[j]] = 0


@njit(cache=True, nogil=True)
def uncollapsed_sweep(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    theta: np.ndarray,
    phi_wk: np.ndarray,
    key: np.uint64,
    d0: int,
    d1: int,
) -> None:
    """Every z_i | theta, phi independently, ``∝ theta_dk phi_kw``, documents d0 .. d1 - 1.

    ``theta`` (D, K), ``phi_wk`` (V, K) word-major.
    """
    n_topics = phi_wk.shape[1]
    cum = np.empty(n_topics)
    for d in range(d0, d1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            total = 0.0
            for k in range(n_topics):
                total += theta[d, k] * phi_wk[w, k]
                cum[k] = total
            u = uniform(key, i) * total
            t = 0
            while t < n_topics - 1 and cum[t] <= u:
                t += 1
            z[i] = t


# ---------------------------------------------------------------------------
# Dirichlet-multinomial mixture (one topic per document)


@njit(cache=True, nogil=True)
def doc_word_counts(doc_ptr: np.ndarray, words: np.ndarray, vocab_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct words of every document and their counts (CSR).

    Returns ``ptr`` int64 (D + 1,), ``word`` int32, ``count`` int32.
    """
    n_docs = doc_ptr.size - 1
    seen = np.full(vocab_size, -1, dtype=np.int64)
    ptr = np.zeros(n_docs + 1, dtype=np.int64)
    word = np.empty(words.size, dtype=np.int32)
    count = np.zeros(words.size, dtype=np.int32)
    n = 0
    for d in range(n_docs):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            if seen[w] < ptr[d]:
                seen[w] = n
                word[n] = w
                n += 1
            count[seen[w]] += 1
        ptr[d + 1] = n
    return ptr, word[:n].copy(), count[:n].copy()


@njit(cache=True, nogil=True)
def dmm_sweep(
    dw_ptr: np.ndarray,
    dw_word: np.ndarray,
    dw_count: np.ndarray,
    zd: np.ndarray,
    mk: np.ndarray,
    nwk: np.ndarray,
    nk: np.ndarray,
    alpha: float,
    beta: float,
    key: np.uint64,
    prob_sum: np.ndarray,
    record: bool,
) -> None:
    """One collapsed Gibbs sweep over the document topics of the mixture.

    ``p(z_d = k | z_-d, w) ∝ (m_k + alpha) prod_w prod_{j < c_dw} (n_kw + beta + j)
    / prod_{j < N_d} (n_k + V beta + j)`` with the counts of the other
    documents (Yin & Wang 2014, eq. 4 with repeated words), computed in logs.

    Parameters
    ----------
    dw_ptr, dw_word, dw_count : :func:`doc_word_counts` of the corpus
    zd : int32 (D,) topic of every document, updated in place
    mk : int32 (K,) documents per topic; nwk : int32 (V, K); nk : int32 (K,)
    prob_sum : float (D, K)
        If ``record``, the normalised conditional of every document is added
        to it (the Rao-Blackwellised estimate of p(z_d = k | w)).
    """
    n_topics = nk.size
    vbeta = nwk.shape[0] * beta
    logp = np.empty(n_topics)
    for d in range(dw_ptr.size - 1):
        start, stop = dw_ptr[d], dw_ptr[d + 1]
        length = 0
        for j in range(start, stop):
            length += dw_count[j]
        t = zd[d]
        mk[t] -= 1
        nk[t] -= length
        for j in range(start, stop):
            nwk[dw_word[j], t] -= dw_count[j]
        top = -np.inf
        for k in range(n_topics):
            lp = math.log(mk[k] + alpha)
            for j in range(start, stop):
                base = nwk[dw_word[j], k] + beta
                for c in range(dw_count[j]):
                    lp += math.log(base + c)
            base = nk[k] + vbeta
            for c in range(length):
                lp -= math.log(base + c)
            logp[k] = lp
            if lp > top:
                top = lp
        total = 0.0
        for k in range(n_topics):
            logp[k] = math.exp(logp[k] - top)
            total += logp[k]
        u = uniform(key, d) * total
        t = n_topics - 1
        acc = 0.0
        for k in range(n_topics):
            acc += logp[k]
            if u < acc:
                t = k
                break
        if record:
            for k in range(n_topics):
                prob_sum[d, k] += logp[k] / total
        zd[d] = t
        mk[t] += 1
        nk[t] += length
        for j in range(start, stop):
            nwk[dw_word[j], t] += dw_count[j]


@njit(cache=True, nogil=True)
def expand_doc_topics(doc_ptr: np.ndarray, zd: np.ndarray, z: np.ndarray) -> None:
    """Token topics from document topics: ``z[doc_ptr[d]:doc_ptr[d+1]] = zd[d]``."""
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            z[i] = zd[d]
