"""Pieces the LDA samplers share: counts, the collapsed log joint, running estimates, phi | z.

* Counts of assignments (``n_wk``, ``n_k``, ``n_dk``) and a document's list of
  topics with O(1) insertion and removal (the sparse and partial sweeps).
* The collapsed log joint ``log p(w, z)`` (Griffiths & Steyvers 2004, eq. 2-3;
  :mod:`mcmc.core.lda.likelihood` states it), with ``lgamma`` of counts read
  from tables (a zero count adds exactly zero).
* Running sums behind the Bayes estimates of theta and phi.
* :class:`DocumentTally`: what a collapsed sweep adds up per document as it
  leaves it (the document half of the log joint, the document sums), so that
  nothing reads the tokens again after the sweep.
* phi | z ~ Dirichlet(beta + n_k.), drawn as Gamma variates over fixed word
  chunks (parallel, and the same bytes however chunks are shared out).
* :func:`token_log_likelihood`: the score of held-out tokens.

Memory: a token's word-topic counts (a row of ``n_wk``, or the word's packed
list) sit at a random place in a table of several megabytes, so without help
each token waits for a cache miss. The sweeps ask the CPU to fetch the counts
of the token :data:`PREFETCH_AHEAD` positions on (:func:`prefetch`, LLVM's
``llvm.prefetch``), which hides most of that latency: on 20 Newsgroups one
thread goes from 22.5 to 26.4 M tokens/s (dense, K = 20) and from 13.0 to 16.0
(sparse, K = 100). A prefetch is only a hint: results are unchanged.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from llvmlite import binding as _llvm
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from mcmc.core.lda.kernels.rng import CELL_SHIFT, gamma_variate

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


@njit(cache=True, nogil=True)
def doc_topic_counts(doc_ptr: np.ndarray, z: np.ndarray, n_topics: int) -> np.ndarray:
    """Document-topic counts ``n_dk`` (D, K) int32."""
    ndk = np.zeros((doc_ptr.size - 1, n_topics), dtype=np.int32)
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[d, z[i]] += 1
    return ndk


@njit(cache=True, nogil=True, inline="always")
def doc_topics_load(z: np.ndarray, start: int, stop: int, ndk: np.ndarray, dt: np.ndarray, dpos: np.ndarray) -> int:
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
def doc_topics_drop(t: int, n_dt: int, dt: np.ndarray, dpos: np.ndarray) -> int:
    """Remove topic ``t`` (whose count just fell to 0) from ``dt`` by swapping in the last entry."""
    n_dt -= 1
    last = dt[n_dt]
    dt[dpos[t]] = last
    dpos[last] = dpos[t]
    return n_dt


@njit(cache=True, nogil=True, inline="always")
def doc_topics_add(t: int, n_dt: int, dt: np.ndarray, dpos: np.ndarray) -> int:
    """Append topic ``t`` (whose count just rose to 1) to ``dt``."""
    dt[n_dt] = t
    dpos[t] = n_dt
    return n_dt + 1


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
def doc_part(doc_ptr: np.ndarray, z: np.ndarray, n_topics: int, alpha: float, lg_alpha: np.ndarray) -> float:
    """Document half of the collapsed LDA log joint.

    Computed after every sweep (the log joint trace), so it reads each
    document's tokens once: the counts, then the nonzero ones, found by a walk
    over the K topics when the document is longer than K (2.6x faster on 20
    Newsgroups at K = 20) and over its tokens again when it is shorter.
    Without a branch on zero counts: 4.1 -> 3.2 ms at K = 20, 5.1 -> 3.2 ms at
    K = 50 on 20 Newsgroups (the topic-word part 0.8 -> 0.5 ms at K = 20).
    """
    kalpha = n_topics * alpha
    lg_kalpha = math.lgamma(kalpha)
    lg0 = lg_alpha[0]
    total = 0.0
    ndk = np.zeros(n_topics, dtype=np.int64)
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        total += lg_kalpha - math.lgamma(stop - start + kalpha)
        for i in range(start, stop):
            ndk[z[i]] += 1
        # a zero count adds lg_alpha[0] - lg0 = +0.0, which leaves the sum's
        # bits as they are: no branch on it (a third faster, same bytes)
        if stop - start > n_topics:
            for k in range(n_topics):
                total += lg_alpha[ndk[k]] - lg0
                ndk[k] = 0
        else:
            for i in range(start, stop):
                k = z[i]
                total += lg_alpha[ndk[k]] - lg0
                ndk[k] = 0
    return total


@njit(cache=True, nogil=True)
def doc_part_asymmetric(doc_ptr: np.ndarray, z: np.ndarray, alpha: np.ndarray) -> float:
    """:func:`doc_part` for a per-topic ``alpha`` (K,): ``lgamma`` computed, not read from a table.

    ``sum_d [lgamma(A) - lgamma(N_d + A) + sum_k (lgamma(n_dk + alpha_k) - lgamma(alpha_k))]``
    with ``A = sum_k alpha_k``; only runs that learn alpha pay for the calls.
    """
    n_topics = alpha.size
    asum = 0.0
    lg_a = np.empty(n_topics)
    for k in range(n_topics):
        asum += alpha[k]
        lg_a[k] = math.lgamma(alpha[k])
    lg_asum = math.lgamma(asum)
    total = 0.0
    ndk = np.zeros(n_topics, dtype=np.int64)
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        total += lg_asum - math.lgamma(stop - start + asum)
        for i in range(start, stop):
            ndk[z[i]] += 1
        for i in range(start, stop):
            k = z[i]
            if ndk[k] > 0:
                total += math.lgamma(ndk[k] + alpha[k]) - lg_a[k]
                ndk[k] = 0
    return total


@njit(cache=True, nogil=True)
def document_norms(doc_ptr: np.ndarray, n_topics: int, alpha: float) -> np.ndarray:
    """``lgamma(K alpha) - lgamma(N_d + K alpha)`` per document (D,): :func:`doc_part`'s per-document term.

    The same expression :func:`doc_part` evaluates every time, computed once,
    so adding it gives the same bits (a tally need not call ``lgamma`` per
    document and sweep: 18,771 calls a sweep on 20 Newsgroups).
    """
    kalpha = n_topics * alpha
    lg_kalpha = math.lgamma(kalpha)
    out = np.empty(doc_ptr.size - 1)
    for d in range(doc_ptr.size - 1):
        out[d] = lg_kalpha - math.lgamma(doc_ptr[d + 1] - doc_ptr[d] + kalpha)
    return out


class DocumentTally(NamedTuple):
    """What a collapsed sweep adds up for each document as it leaves it: the swept state's document sums.

    A document's topic counts are final once the sweep has passed it (no
    other document's tokens change them), and the sweep holds them then, so
    the document half of the log joint and the running sums behind theta and
    the topic shares are added there rather than by reading all tokens again
    after the sweep (on 20 Newsgroups at K = 20, 3.0 and 3.0 ms a sweep out
    of about 70). Both give the same bits as :func:`doc_part` and
    :func:`accumulate_doc_sums`: the same terms in the same order, and sums
    of whole numbers. A part that is not wanted has size 0.

    doc_part : float (1,), set to the document half of the log joint
        (:func:`doc_part`, symmetric alpha), or (0,).
    doc_norm : float (D,), :func:`document_norms`, or (0,) with ``doc_part``.
    lg_alpha : float, ``lgamma(j + alpha)`` (the problem's table).
    ndk_sum : float (D, K) theta's running sums, or (0, K): not kept.
    length_group : int64 (D,) the group of each document's length.
    length_topic_sum : float (G, K) the per-length sums, added to; or (0, K):
        this sweep is not recorded.
    """

    doc_part: np.ndarray
    doc_norm: np.ndarray
    lg_alpha: np.ndarray
    ndk_sum: np.ndarray
    length_group: np.ndarray
    length_topic_sum: np.ndarray


def no_tally(n_topics: int) -> DocumentTally:
    """A tally that adds up nothing (a sweep on its own)."""
    return DocumentTally(np.empty(0), np.empty(0), np.empty(0), np.empty((0, n_topics)), np.empty(0, np.int64),
                         np.empty((0, n_topics)))


@njit(cache=True, nogil=True, inline="always")
def tally_document(d: int, start: int, stop: int, z: np.ndarray, counts: np.ndarray, topics: np.ndarray,
                   n_listed: int, total: float, doc_norm: np.ndarray, lg_alpha: np.ndarray, ndk_sum: np.ndarray,
                   length_group: np.ndarray, length_topic_sum: np.ndarray) -> float:
    """Add document d's final counts to the :class:`DocumentTally` sums; return ``total`` plus its log-joint part.

    ``counts`` (K,) integer: the document's topic counts, which this may set
    to zero; ``topics[:n_listed]`` lists (at least) its topics with a count.
    The log-joint part is :func:`doc_part`'s, term for term and in its order,
    when ``doc_norm`` is not empty (else ``total`` comes back unchanged).
    """
    if length_topic_sum.shape[0] > 0:  # whole numbers: exact in any order
        g = length_group[d]
        keep_theta = ndk_sum.shape[0] > 0
        for j in range(n_listed):
            k = topics[j]
            length_topic_sum[g, k] += counts[k]
            if keep_theta:
                ndk_sum[d, k] += counts[k]
    if doc_norm.size > 0:
        n_topics = counts.size
        lg0 = lg_alpha[0]
        total += doc_norm[d]
        if stop - start > n_topics:
            for k in range(n_topics):
                total += lg_alpha[counts[k]] - lg0
        else:
            for i in range(start, stop):
                k = z[i]
                total += lg_alpha[counts[k]] - lg0
                counts[k] = 0
    return total


@njit(cache=True, nogil=True)
def doc_topic_histogram(doc_ptr: np.ndarray, z: np.ndarray, n_topics: int) -> np.ndarray:
    """``h[k, n]`` = documents in which topic k has exactly n tokens (n >= 1): int64 (K, longest + 1).

    Column 0 stays 0 (documents without the topic add nothing to alpha's fixed point).
    """
    longest = 0
    for d in range(doc_ptr.size - 1):
        longest = max(longest, doc_ptr[d + 1] - doc_ptr[d])
    hist = np.zeros((n_topics, longest + 1), dtype=np.int64)
    ndk = np.zeros(n_topics, dtype=np.int64)
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        for i in range(start, stop):
            ndk[z[i]] += 1
        for i in range(start, stop):
            k = z[i]
            if ndk[k] > 0:
                hist[k, ndk[k]] += 1
                ndk[k] = 0
    return hist


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
    """Collapsed ``log p(w, z)`` of LDA (zero counts add exactly zero).

    ``lg_alpha[j] = lgamma(j + alpha)`` for j up to the longest document and
    ``lg_beta[j] = lgamma(j + beta)`` for j up to the most frequent word.
    """
    return doc_part(doc_ptr, z, nk.size, alpha, lg_alpha) + topic_word_part(nwk, nk, beta, lg_beta)


@njit(cache=True, nogil=True, inline="always")
def add_topic_norms(total: float, nk: np.ndarray, vbeta: float) -> float:
    """``total + sum_k [lgamma(V beta) - lgamma(n_k + V beta)]``, added term by term onto ``total``.

    Onto a running total rather than summed apart, so the dense and packed
    log joints keep the order of their additions (and their bytes).
    """
    lg_vbeta = math.lgamma(vbeta)
    for k in range(nk.size):
        total += lg_vbeta - math.lgamma(nk[k] + vbeta)
    return total


@njit(cache=True, nogil=True)
def topic_word_part(nwk: np.ndarray, nk: np.ndarray, beta: float, lg_beta: np.ndarray) -> float:
    """``sum_k [lgamma(V beta) - lgamma(n_k + V beta) + sum_w (lgamma(n_kw + beta) - lgamma(beta))]``.

    The topic-word factor of the collapsed joint, shared by LDA and the
    Dirichlet-multinomial mixture; a zero ``n_kw`` adds exactly zero.
    """
    n_topics = nk.size
    vocab_size = nwk.shape[0]
    total = add_topic_norms(0.0, nk, vocab_size * beta)
    lg0 = lg_beta[0]
    for w in range(vocab_size):
        for k in range(n_topics):
            total += lg_beta[nwk[w, k]] - lg0  # + 0.0 for a zero count, the same bits as skipping it
    return total


@njit(cache=True, nogil=True)
def accumulate_doc_sums(
    doc_ptr: np.ndarray, z: np.ndarray, ndk_sum: np.ndarray, length_group: np.ndarray, length_topic_sum: np.ndarray
) -> None:
    """Add the current state's document-topic counts to the running sums behind theta and the topic shares.

    ``ndk_sum`` (D, K) += n_dk, unless it has no rows (theta not kept);
    ``length_topic_sum`` (G, K) += the n_dk summed over the documents of each
    length (``length_group`` (D,): the group of document d's length): theta
    enters the topic shares only through them.
    """
    keep_theta = ndk_sum.shape[0] > 0
    for d in range(doc_ptr.size - 1):
        g = length_group[d]
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            if keep_theta:
                ndk_sum[d, k] += 1.0
            length_topic_sum[g, k] += 1.0


@njit(cache=True, nogil=True, inline="always")
def add_topic_inverses(nk: np.ndarray, vbeta: float, inv_sum: np.ndarray) -> np.ndarray:
    """``1 / (n_k + V beta)`` (K,), also added onto ``inv_sum``."""
    inv = np.empty(nk.size)
    for k in range(nk.size):
        inv[k] = 1.0 / (nk[k] + vbeta)
        inv_sum[k] += inv[k]
    return inv


@njit(cache=True, nogil=True)
def accumulate_phi_sums(nwk: np.ndarray, nk: np.ndarray, vbeta: float, nkw_scaled_sum: np.ndarray,
                        inv_sum: np.ndarray) -> None:
    """Add the current state to the running sums behind phi, from the word-major counts.

    ``nkw_scaled_sum`` (K, V) += n_kw / (n_k + V beta); ``inv_sum`` (K,) +=
    1 / (n_k + V beta). The average of ``(n_kw + beta) / (n_k + V beta)``
    over T states is then ``(nkw_scaled_sum + beta inv_sum) / T``.
    ``nwk`` (V, >= K): only its first K columns are read (the dense kernel's
    padded layout, in place). One sequential pass over the table, where
    adding token by token wrote at random into the K x V sums: on 20
    Newsgroups the accumulation of a kept sweep (with the document sums) fell
    from 8.3 to 3.8 ms at K = 20 and from 56 to 25 ms at K = 500.
    """
    n_topics = nk.size
    inv = add_topic_inverses(nk, vbeta, inv_sum)
    for w in range(nwk.shape[0]):
        for k in range(n_topics):
            nkw_scaled_sum[k, w] += nwk[w, k] * inv[k]


# ---------------------------------------------------------------------------
# phi | z (partial and uncollapsed)


WORD_CHUNK = 256  # words per chunk of the phi draw; fixed so sums never depend on threads


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


def draw_phi(nwk: np.ndarray, beta: float, key: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """phi | z: every topic ~ Dirichlet(beta + n_k.), in one thread.

    The same kernels as the samplers' parallel phases (and the same result).

    Returns
    -------
    phi_wk : float (V, K), word-major; cphi : float (V, K), its running sums along k.
    """
    vocab_size, n_topics = nwk.shape
    chunks = n_word_chunks(vocab_size)
    g = np.empty((vocab_size, n_topics))
    sums = np.empty((chunks, n_topics))
    cphi = np.empty((vocab_size, n_topics))
    phi_gamma_chunks(nwk, beta, key, 0, chunks, g, sums)
    phi_normalize_chunks(g, 1.0 / sums.sum(axis=0), 0, chunks, cphi)
    return g, cphi


@njit(cache=True, nogil=True)
def token_log_likelihood(words: np.ndarray, doc_ptr: np.ndarray, phi_wk: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Per chain, ``sum_i log sum_k theta[c, d_i, k] phi_wk[c, w_i, k]`` over the tokens: float (chains,).

    ``phi_wk`` (chains, V, K) word-major, ``theta`` (chains, D, K).
    """
    n_chains, _, n_topics = phi_wk.shape
    out = np.zeros(n_chains)
    for c in range(n_chains):
        for d in range(doc_ptr.size - 1):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                w = words[i]
                s = 0.0
                for k in range(n_topics):
                    s += theta[c, d, k] * phi_wk[c, w, k]
                out[c] += np.log(s)
    return out
