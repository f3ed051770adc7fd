"""Partially collapsed Gibbs for LDA: z | phi with theta integrated out.

Given phi the documents are independent, so :func:`partial_sweep` runs on any
block of documents and blocks run in parallel exactly; phi | z is drawn by
:func:`mcmc.core.lda.kernels.common.phi_gamma_chunks`. The same sweep folds
held-out documents in with phi fixed (document completion,
:func:`mcmc.core.lda.evaluate.document_completion`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mcmc.core.lda.kernels.common import PREFETCH_AHEAD, doc_topics_add, doc_topics_drop, doc_topics_load, prefetch
from mcmc.core.lda.kernels.rng import uniform


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
    initial: bool = False,
    offset: int = 0,
) -> None:
    """z | phi with theta integrated out, for documents ``d0 .. d1 - 1``.

    ``p(z_i = k | z_-i, phi) ∝ (n_dk^-i + alpha) phi_kw = n_dk^-i phi_kw +
    alpha phi_kw``: the first term runs over the document's topics, the second
    is drawn by bisection in the cumulative row ``cphi_wk[w]`` of
    ``cphi_wk``, so a token costs O(#topics in its document +
    log K). Exact; documents are independent given phi, so disjoint blocks can
    run concurrently.

    With ``initial``, ``z`` is ignored on entry and every token is drawn given
    the tokens before it in its document only (counts start empty): the
    sequential first assignment of document completion's fold-in.

    ``offset`` is the corpus position of ``words[0]``: a token's uniform is
    keyed by its position in the whole corpus, so a shard of the corpus
    (:mod:`mcmc.core.lda.sharded`) draws what the whole corpus would.

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
        n_dt = 0 if initial else doc_topics_load(z, start, stop, ndk, dt, dpos)
        for i in range(start, stop):
            w = words[i]
            t = z[i]
            if i + PREFETCH_AHEAD < stop_all:  # a coming token's phi row and its total
                first = words[i + PREFETCH_AHEAD] * n_topics
                for c in range(0, n_topics, 8):
                    prefetch(phi_wk, first + c)
                prefetch(cphi_wk, first + n_topics - 1)
            if not initial:
                ndk[t] -= 1
                if ndk[t] == 0:
                    n_dt = doc_topics_drop(t, n_dt, dt, dpos)
            r = 0.0
            for j in range(n_dt):
                k = dt[j]
                v = ndk[k] * phi_wk[w, k]
                buf[j] = v
                r += v
            u = uniform(key, offset + i) * (r + alpha * cphi_wk[w, n_topics - 1])
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
                n_dt = doc_topics_add(t, n_dt, dt, dpos)
        for j in range(n_dt):
            ndk[dt[j]] = 0

