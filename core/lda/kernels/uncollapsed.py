"""Uncollapsed (blocked) Gibbs for LDA: theta_d | z, then every z_i | theta, phi.

phi | z is drawn by :func:`mcmc.core.lda.kernels.common.phi_gamma_chunks`;
given theta and phi every token is independent (:func:`uncollapsed_sweep`), so
blocks of documents run in parallel exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mcmc.core.lda.kernels.common import PREFETCH_AHEAD, prefetch
from mcmc.core.lda.kernels.rng import CELL_SHIFT, gamma_variate, uniform


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

