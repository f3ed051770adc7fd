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

  - dense (:func:`collapsed_dense_sweep`): all K terms per token, summed in
    blocks of 8 topics so the inverse-CDF walk takes about K/8 + 8 steps;
    for small K;
  - sparse (:func:`collapsed_sparse_sweep`), after SparseLDA (Yao, Mimno &
    McCallum 2009), with MALLET's packed ``count << bits | topic`` word-topic
    lists sorted by count: the conditional is split into the buckets
    ``s = sum_k alpha beta / (n_k + V beta)`` (all topics, changes slowly),
    ``r = sum_k n_dk beta / (n_k + V beta)`` (topics of the document) and
    ``q = sum_k (n_dk + alpha) n_kw / (n_k + V beta)`` (topics of the word),
    which add up to the full normaliser, so drawing a bucket by its mass and
    then a topic within it is the same draw. Cost per token follows the
    number of topics present in the word and the document, not K.

* Partially collapsed Gibbs (theta integrated out, phi drawn): given phi,
  documents are independent, so :func:`partial_sweep` runs on any block of
  documents and blocks run in parallel exactly. phi | z ~ Dirichlet is drawn
  by :func:`phi_gamma_chunks` / :func:`phi_normalize_chunks` over fixed word
  chunks (parallel, and the same bytes however chunks are shared out).
* Uncollapsed (blocked) Gibbs: theta_d | z per document, then given theta and
  phi every token is independent (:func:`uncollapsed_sweep`).
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
no buffer of N uniforms is written and read back every sweep. Gamma variates
for the Dirichlet draws (:func:`gamma_variate`, Marsaglia & Tsang 2000) read
the stream of their own key from counter ``cell << CELL_SHIFT`` on, one cell
per (word, topic) or (document, topic).

No kernel uses ``fastmath``: every probability and sum is the plain IEEE
computation, so the draws are exact inverse-CDF draws up to float rounding.

Memory
------
A token's word-topic counts (a row of ``n_wk``, or the word's packed list)
sit at a random place in a table of several megabytes, so without help each
token waits for a cache miss. The collapsed kernels ask the CPU to fetch the
counts of the token :data:`PREFETCH_AHEAD` positions on (:func:`prefetch`,
LLVM's ``llvm.prefetch``), which hides most of that latency: on 20 Newsgroups
one thread goes from 22.5 to 26.4 M tokens/s (dense, K = 20) and from 13.0 to
16.0 (sparse, K = 100). A prefetch is only a hint: results are unchanged.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import binding as _llvm
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

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


#: Tokens ahead whose word-topic counts are prefetched (4 to 16 did equally well on 20 Newsgroups).
PREFETCH_AHEAD = 8
# LLVM names the intrinsic after its pointer type: opaque pointers from LLVM 15 on
_PREFETCH = "llvm.prefetch.p0" if _llvm.llvm_version_info >= (15,) else "llvm.prefetch.p0i8"


@intrinsic
def prefetch(typingctx, arr, index):
    """Ask the CPU to bring the cache line of element ``index`` of ``arr``'s data into cache.

    ``index`` counts elements from the start of the buffer (the flat index of
    a C-contiguous array) and must lie inside it. A hint for a later read, no
    effect on results (``llvm.prefetch``: read, high temporal locality, data).
    """
    if not isinstance(arr, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte_ptr = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH)
        builder.call(fn, [byte_ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, index), codegen


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


def padded_word_topic_counts(words: np.ndarray, z: np.ndarray, n_topics: int, vocab_size: int) -> np.ndarray:
    """``n_wk`` as (V, K rounded up to a multiple of 8) int32, zero beyond K (dense kernel layout)."""
    padded = -(-n_topics // _BLOCK) * _BLOCK
    out = np.zeros((vocab_size, padded), dtype=np.int32)
    out[:, :n_topics] = word_topic_counts(words, z, n_topics, vocab_size)
    return out


@njit(cache=True, nogil=True)
def topic_counts(z: np.ndarray, n_topics: int) -> np.ndarray:
    """Tokens per topic ``n_k`` (K,) int32."""
    nk = np.zeros(n_topics, dtype=np.int32)
    for i in range(z.size):
        nk[z[i]] += 1
    return nk


# ---------------------------------------------------------------------------
# Collapsed Gibbs, dense


_BLOCK = 8  # topics per block of the dense kernel's two-level inverse-CDF walk


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

    Per token the K unnormalised probabilities ``a_k (n_wk + beta)`` with the
    cached ``a_k = (n_dk + alpha) / (n_k + V beta)`` are formed in one
    vectorisable loop, summed in blocks of 8 topics, and the inverse-CDF walk
    first steps over blocks, then inside one: about K/8 + 8 comparisons
    instead of K/2 for a flat walk. No fastmath: the sums are the plain
    left-to-right IEEE sums, so the draw is the exact inverse CDF (up to
    rounding of the probabilities themselves).

    Parameters
    ----------
    doc_ptr : int64 (D + 1,)
    words : int32 (N,)
    z : int32 (N,), updated in place
    nwk : int32 (V, K) or (V, K rounded up to a multiple of 8, zero beyond K)
        word-major topic counts, updated in place
    nk : int32 (K,) tokens per topic, updated in place
    alpha, beta : symmetric Dirichlet concentrations
    key : the sweep's random key (token ``i`` uses uniform ``(key, i)``)
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
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        for k in range(n_topics):
            ndk[k] = alpha
        for i in range(start, stop):
            ndk[z[i]] += 1.0
        for k in range(n_topics):
            a[k] = ndk[k] * inv[k]
        for i in range(start, stop):
            w = words[i]
            k = z[i]
            ndk[k] -= 1.0
            if i + PREFETCH_AHEAD < n_tokens:  # every cache line of a coming token's row
                first = words[i + PREFETCH_AHEAD] * row_len
                for c in range(0, row_len, 16):
                    prefetch(nwk, first + c)
            nwk[w, k] -= 1
            nk[k] -= 1
            inv[k] = 1.0 / (nk[k] + vbeta)
            a[k] = ndk[k] * inv[k]
            total = 0.0
            if fused:
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
                    acc = 0.0
                    for t in range(b * _BLOCK, (b + 1) * _BLOCK):
                        acc += p[t]
                    block[b] = acc
                    total += acc
            u = uniform(key, i) * total
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
            z[i] = k
            ndk[k] += 1.0
            nwk[w, k] += 1
            nk[k] += 1
            inv[k] = 1.0 / (nk[k] + vbeta)
            a[k] = ndk[k] * inv[k]


# ---------------------------------------------------------------------------
# Collapsed Gibbs, sparse (SparseLDA)


TOPIC_BITS = 20  # packed word-topic entries: count << TOPIC_BITS | topic (int64)
TOPIC_MASK = (1 << TOPIC_BITS) - 1
MAX_TOPICS = 1 << TOPIC_BITS


@njit(cache=True, nogil=True)
def word_topic_lists(nwk: np.ndarray, word_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse word-topic counts for the sparse sweep, MALLET-style packed and sorted.

    Word w owns the slots ``packed[ptr[w]:ptr[w] + min(K, freq_w)]`` (it can
    never be in more topics than it has tokens; words are placed by decreasing
    frequency, ``ptr[V]`` is the total); the first ``length[w]`` hold
    ``n_wk << TOPIC_BITS | k`` for its topics with ``n_wk > 0``, in decreasing
    order (so by decreasing count). Keeping the count inside the list means a
    token reads one or two cache lines for its word instead of a row of a V x K
    matrix, and the sorted order ends the walk over the word bucket early.

    Returns
    -------
    ptr : int64 (V + 1,), length : int32 (V,), packed : int64 (sum_w min(K, freq_w),)
    """
    vocab_size, n_topics = nwk.shape
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


@njit(cache=True, nogil=True, inline="always")
def _doc_topics_load(z: np.ndarray, start: int, stop: int, ndk: np.ndarray, dt: np.ndarray, dpos: np.ndarray) -> int:
    """Count ``z[start:stop]`` into ``ndk`` and list the document's topics in ``dt``; return their number.

    ``dt[:n]`` holds the topics with ``ndk > 0`` and ``dpos[k]`` the position of
    topic ``k`` in ``dt``, so a topic leaves or joins the list in O(1).
    """
    n_dt = 0
    for i in range(start, stop):
        k = z[i]
        if ndk[k] == 0:
            dt[n_dt] = k
            dpos[k] = n_dt
            n_dt += 1
        ndk[k] += 1
    return n_dt


@njit(cache=True, nogil=True, inline="always")
def _doc_topics_drop(t: int, n_dt: int, dt: np.ndarray, dpos: np.ndarray) -> int:
    """Remove topic ``t`` (whose count just fell to 0) from ``dt`` by swapping in the last entry."""
    n_dt -= 1
    last = dt[n_dt]
    dt[dpos[t]] = last
    dpos[last] = dpos[t]
    return n_dt


@njit(cache=True, nogil=True, inline="always")
def _doc_topics_add(t: int, n_dt: int, dt: np.ndarray, dpos: np.ndarray) -> int:
    """Append topic ``t`` (whose count just rose to 1) to ``dt``."""
    dt[n_dt] = t
    dpos[t] = n_dt
    return n_dt + 1


@njit(cache=True, nogil=True)
def collapsed_sparse_sweep(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
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
    alpha, beta : symmetric Dirichlet concentrations
    key : the sweep's random key (token ``i`` uses uniform ``(key, i)``)
    """
    n_topics = nk.size
    vbeta = wt_len.size * beta
    ab = alpha * beta
    one = np.int64(1) << TOPIC_BITS
    inv = np.empty(n_topics)
    coef = np.empty(n_topics)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
        coef[k] = alpha * inv[k]
    ndk = np.zeros(n_topics, dtype=np.int32)
    dt = np.empty(n_topics, dtype=np.int32)  # topics of the document
    dpos = np.empty(n_topics, dtype=np.int32)  # position of a topic in dt
    qbuf = np.empty(n_topics)
    n_tokens = words.size
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        n_dt = _doc_topics_load(z, start, stop, ndk, dt, dpos)
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
            if i + PREFETCH_AHEAD < n_tokens:  # the head of a coming token's list (often all of it)
                prefetch(wt, wt_ptr[words[i + PREFETCH_AHEAD]])
            w = words[i]
            t = z[i]
            # -- take token i out of topic t
            s -= ab * inv[t]
            r -= beta * ndk[t] * inv[t]
            ndk[t] -= 1
            nk[t] -= 1
            inv[t] = 1.0 / (nk[t] + vbeta)
            s += ab * inv[t]
            r += beta * ndk[t] * inv[t]
            coef[t] = (alpha + ndk[t]) * inv[t]
            if ndk[t] == 0:
                n_dt = _doc_topics_drop(t, n_dt, dt, dpos)
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
                else:
                    u = (u - r) / ab
                    t = n_topics - 1
                    for k in range(n_topics):
                        u -= inv[k]
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
            s -= ab * inv[t]
            r -= beta * ndk[t] * inv[t]
            ndk[t] += 1
            nk[t] += 1
            inv[t] = 1.0 / (nk[t] + vbeta)
            s += ab * inv[t]
            r += beta * ndk[t] * inv[t]
            coef[t] = (alpha + ndk[t]) * inv[t]
            if ndk[t] == 1:
                n_dt = _doc_topics_add(t, n_dt, dt, dpos)
        # leave the caches as an empty document would see them
        for j in range(n_dt):
            k = dt[j]
            ndk[k] = 0
            coef[k] = alpha * inv[k]


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
    n_topics = nk.size
    vocab_size = wt_len.size
    total = _doc_part(doc_ptr, z, n_topics, alpha, lg_alpha)
    vbeta = vocab_size * beta
    lg_vbeta = math.lgamma(vbeta)
    for k in range(n_topics):
        total += lg_vbeta - math.lgamma(nk[k] + vbeta)
    lg0 = lg_beta[0]
    for w in range(vocab_size):
        for j in range(wt_ptr[w], wt_ptr[w] + wt_len[w]):
            total += lg_beta[wt[j] >> TOPIC_BITS] - lg0
    return total


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
def _doc_part(doc_ptr: np.ndarray, z: np.ndarray, n_topics: int, alpha: float, lg_alpha: np.ndarray) -> float:
    """Document half of the collapsed LDA log joint."""
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
    return total


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
    return _doc_part(doc_ptr, z, nk.size, alpha, lg_alpha) + _topic_word_part(nwk, nk, beta, lg_beta)


@njit(cache=True, nogil=True)
def _topic_word_part(nwk: np.ndarray, nk: np.ndarray, beta: float, lg_beta: np.ndarray) -> float:
    """``sum_k [lgamma(V beta) - lgamma(n_k + V beta) + sum_w (lgamma(n_kw + beta) - lgamma(beta))]``.

    The topic-word factor of the collapsed joint, shared by LDA and the
    Dirichlet-multinomial mixture; sums only over nonzero ``n_kw``.
    """
    n_topics = nk.size
    vocab_size = nwk.shape[0]
    vbeta = vocab_size * beta
    lg_vbeta = math.lgamma(vbeta)
    total = 0.0
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
    n_docs = 0
    for k in range(n_topics):
        n_docs += mk[k]
    kalpha = n_topics * alpha
    total = math.lgamma(kalpha) - math.lgamma(n_docs + kalpha)
    lga = math.lgamma(alpha)
    for k in range(n_topics):
        total += math.lgamma(mk[k] + alpha) - lga
    return total + _topic_word_part(nwk, nk, beta, lg_beta)


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


CELL_SHIFT = 20  # a Dirichlet cell's uniforms are counters (cell << 20) + j, j < 2**20
WORD_CHUNK = 256  # words per chunk of the phi draw; fixed so sums never depend on threads


@njit(cache=True, nogil=True)
def gamma_variate(shape: float, key: np.uint64, counter: np.int64) -> float:
    """Gamma(shape, 1) from the uniforms ``(key, counter), (key, counter + 1), ...``.

    Marsaglia & Tsang (2000) for shape >= 1 (normals by Box-Muller); for
    shape < 1, ``Gamma(shape + 1) * U^(1 / shape)`` (their section 6). Uses a
    few uniforms on average (the acceptance rate is above 0.95).
    """
    boost = 1.0
    a = shape
    if a < 1.0:
        boost = math.exp(math.log(1.0 - uniform(key, counter)) / shape)  # U in (0, 1]
        counter += 1
        a = shape + 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        u1 = 1.0 - uniform(key, counter)
        u2 = uniform(key, counter + 1)
        counter += 2
        x = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - uniform(key, counter)
        counter += 1
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2 or math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v * boost


@njit(cache=True, nogil=True)
def phi_gamma_chunks(
    nwk: np.ndarray, beta: float, key: np.uint64, c0: int, c1: int, g: np.ndarray, sums: np.ndarray
) -> None:
    """First half of phi | z ~ Dirichlet(beta + n_k.): Gamma variates of word chunks c0 .. c1 - 1.

    ``g[w, k] ~ Gamma(beta + n_wk)`` (word-major, like ``nwk``) and
    ``sums[c, k]`` = sum of ``g[w, k]`` over the words of chunk c. Cell
    ``(w, k)`` draws from counters ``(w K + k) << CELL_SHIFT`` on, so the
    result does not depend on how chunks are split among threads.
    """
    vocab_size, n_topics = nwk.shape
    for c in range(c0, c1):
        for k in range(n_topics):
            sums[c, k] = 0.0
        for w in range(c * WORD_CHUNK, min((c + 1) * WORD_CHUNK, vocab_size)):
            for k in range(n_topics):
                v = gamma_variate(beta + nwk[w, k], key, np.int64(w * n_topics + k) << CELL_SHIFT)
                g[w, k] = v
                sums[c, k] += v


@njit(cache=True, nogil=True)
def phi_normalize_chunks(g: np.ndarray, inv_sum: np.ndarray, c0: int, c1: int, cphi: np.ndarray) -> None:
    """Second half: ``g[w, k] *= inv_sum[k]`` (now phi, word-major) and its running row sums ``cphi``."""
    vocab_size, n_topics = g.shape
    for w in range(c0 * WORD_CHUNK, min(c1 * WORD_CHUNK, vocab_size)):
        acc = 0.0
        for k in range(n_topics):
            v = g[w, k] * inv_sum[k]
            g[w, k] = v
            acc += v
            cphi[w, k] = acc


def n_word_chunks(vocab_size: int) -> int:
    """Number of WORD_CHUNK-word chunks covering the vocabulary."""
    return (vocab_size + WORD_CHUNK - 1) // WORD_CHUNK


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
    ``cphi_wk``, so a token costs O(#topics in its document +
    log K). Exact; documents are independent given phi, so disjoint blocks can
    run concurrently.

    Parameters
    ----------
    phi_wk : float (V, K), C-contiguous
        Topic-word probabilities, word-major (``phi_wk[w, k] = phi_k[w]``).
    cphi_wk : float (V, K), C-contiguous
        Running sums of ``phi_wk`` along topics (from :func:`phi_normalize_chunks`).
    """
    n_topics = phi_wk.shape[1]
    ndk = np.zeros(n_topics, dtype=np.int32)
    dt = np.empty(n_topics, dtype=np.int32)
    dpos = np.empty(n_topics, dtype=np.int32)
    buf = np.empty(n_topics)
    stop_all = doc_ptr[d1]
    for d in range(d0, d1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        n_dt = _doc_topics_load(z, start, stop, ndk, dt, dpos)
        for i in range(start, stop):
            w = words[i]
            t = z[i]
            if i + PREFETCH_AHEAD < stop_all:  # a coming token's phi row and its total
                first = words[i + PREFETCH_AHEAD] * n_topics
                for c in range(0, n_topics, 8):
                    prefetch(phi_wk, first + c)
                prefetch(cphi_wk, first + n_topics - 1)
            ndk[t] -= 1
            if ndk[t] == 0:
                n_dt = _doc_topics_drop(t, n_dt, dt, dpos)
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
                n_dt = _doc_topics_add(t, n_dt, dt, dpos)
        for j in range(n_dt):
            ndk[dt[j]] = 0


@njit(cache=True, nogil=True)
def uncollapsed_sweep(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    theta: np.ndarray,
    phi_wk: np.ndarray,
    alpha: float,
    theta_key: np.uint64,
    key: np.uint64,
    d0: int,
    d1: int,
) -> None:
    """theta | z, then every z_i | theta, phi, for documents d0 .. d1 - 1.

    ``theta_d ~ Dirichlet(alpha + n_d.)`` from the current z (written to
    ``theta`` (D, K); cell (d, k) draws from counters ``(d K + k) << CELL_SHIFT``
    of ``theta_key``), then independently ``p(z_i = k) ∝ theta_dk phi_kw``
    (token i uses uniform ``(key, i)``). Given phi the documents are
    independent, so disjoint blocks can run concurrently.
    """
    n_topics = phi_wk.shape[1]
    cum = np.empty(n_topics)
    ndk = np.zeros(n_topics, dtype=np.int64)
    stop_all = doc_ptr[d1]
    for d in range(d0, d1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        for i in range(start, stop):
            ndk[z[i]] += 1
        total = 0.0
        for k in range(n_topics):
            v = gamma_variate(alpha + ndk[k], theta_key, np.int64(d * n_topics + k) << CELL_SHIFT)
            theta[d, k] = v
            total += v
            ndk[k] = 0
        # (an empty document can underflow to all zeros; it has no token to draw)
        inv = 1.0 / total if total > 0.0 else 0.0
        for k in range(n_topics):
            theta[d, k] *= inv
        for i in range(start, stop):
            w = words[i]
            if i + PREFETCH_AHEAD < stop_all:  # a coming token's phi row
                first = words[i + PREFETCH_AHEAD] * n_topics
                for c in range(0, n_topics, 8):
                    prefetch(phi_wk, first + c)
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
def doc_word_counts(
    doc_ptr: np.ndarray, words: np.ndarray, vocab_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    lg_beta: np.ndarray,
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
    lg_beta : float
        ``lgamma(j + beta)`` for j = 0 .. the largest word frequency.
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
            # prod_{c < n} (x + c) = Gamma(x + n) / Gamma(x): table lookups
            # for the words, two lgamma calls for the topic's token count
            lp = math.log(mk[k] + alpha)
            for j in range(start, stop):
                n = nwk[dw_word[j], k]
                lp += lg_beta[n + dw_count[j]] - lg_beta[n]
            lp -= math.lgamma(nk[k] + vbeta + length) - math.lgamma(nk[k] + vbeta)
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
