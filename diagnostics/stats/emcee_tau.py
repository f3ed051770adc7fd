"""emcee's integrated autocorrelation time, equal to ``emcee.autocorr.integrated_time``.

:func:`integrated_time` uses Sokal's automatic window, as Goodman & Weare's
emcee does (Foreman-Mackey et al. 2013). Constant parameters: tau is NaN
(emcee divides by a zero autocovariance).

References
----------
Sokal, A. (1997). Monte Carlo methods in statistical mechanics: foundations
and new algorithms. In *Functional Integration*, 131-192. Springer.

Foreman-Mackey, D., Hogg, D. W., Lang, D. & Goodman, J. (2013). emcee: the
MCMC hammer. *PASP* 125(925), 306-312.
"""

from __future__ import annotations

import numpy as np

from mcmc.diagnostics.stats import _layout
from mcmc.diagnostics.stats._blocks import map_blocks
from mcmc.diagnostics.stats._layout import as_draws


def _next_pow_two(n: int) -> int:
    i = 1
    while i < n:
        i <<= 1
    return i


def integrated_time(x: np.ndarray, c: float = 5, tol: float = 50) -> tuple[np.ndarray, np.ndarray]:
    """Integrated autocorrelation time with Sokal's automatic window, as ``emcee.autocorr.integrated_time``.

    Each chain's autocorrelation ``rho_c(t)`` (FFT, biased, chains not split)
    is averaged over chains (emcee's walkers); ``tau(M) = 1 + 2 sum_{t=1}^{M} rho(t)``
    and the window is the first ``M`` with ``M >= c tau(M)`` (Sokal 1997), the
    last lag if none. This is not the ``iat`` of :mod:`.stats` (Geyer's initial
    monotone sequence on split chains with the between-chain variance), which
    stops at the first negative pair of autocorrelations instead.

    emcee raises (or, ``quiet=True``, logs) when a chain is shorter than
    ``tol`` times tau; here that verdict is returned instead.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    c, tol : float

    Returns
    -------
    tau : ndarray, shape (n,)
        NaN for a parameter with a constant chain (emcee divides by its zero variance).
    reliable : ndarray of bool, shape (n,)
        ``tol * tau <= draw``: emcee's rule of thumb (chains longer than 50 tau) holds.
    """
    x = as_draws(x)
    draws = x.shape[1]
    parts = map_blocks(x, lambda block: _tau_block(block, c))
    tau = np.concatenate(parts) if parts else np.empty(0)
    with np.errstate(invalid="ignore"):
        return tau, tol * tau <= draws


def _tau_block(block: np.ndarray, c: float) -> np.ndarray:
    b = _layout.to_block(block)  # (n, C, T)
    n, _, t = b.shape
    if t == 0:
        return np.full(n, np.nan)
    size = 2 * _next_pow_two(t)
    with np.errstate(all="ignore"):
        f = np.fft.rfft(b - b.mean(axis=-1, keepdims=True), n=size, axis=-1)
        acf = np.fft.irfft(f.real**2 + f.imag**2, n=size, axis=-1)[..., :t]
        acf /= acf[..., :1]
        taus = 2.0 * np.cumsum(acf.mean(axis=1), axis=-1) - 1.0
        inside = np.arange(t) < c * taus
    window = np.where(inside.any(axis=-1), np.argmin(inside, axis=-1), t - 1)
    return taus[np.arange(n), window]
