"""Spectral density at frequency zero from an autoregressive fit, as R ``coda::spectrum0.ar``.

The variance of the mean of a stationary series ``x_1..x_T`` is about
``S(0) / T``, with ``S(0)`` the spectral density at zero. Fitting an AR(p)
model ``x_t = sum_j a_j x_{t-j} + e_t`` gives ``S(0) = sigma_e^2 / (1 - sum_j a_j)^2``
(Heidelberger & Welch 1981; Plummer et al. 2006). coda's recipe, which
:func:`spectrum0_ar` follows step by step:

1. A series whose residuals from a least-squares line through ``(t, x_t)``
   have standard deviation at most ``1.5e-8`` gets ``S(0) = 0`` and order 0.
   (``identical(all.equal(sd(residuals(lm(x ~ t))), 0), TRUE)``: R's
   ``all.equal`` compares with zero *absolutely* below its tolerance 1.5e-8,
   so the test depends on the scale of the draws -- a coda quirk kept here.)
2. Otherwise R ``ar(x, aic = TRUE)`` with its defaults: Yule-Walker
   equations on the biased sample autocovariances (divisor ``T``) of the
   demeaned series, solved for every order up to
   ``min(T - 1, floor(10 log10 T))`` by the Levinson-Durbin recursion
   (Durbin 1960); the order minimizing ``AIC = T log(sigma_p^2) + 2 p``
   (the first of equal minima); the innovation variance rescaled by
   ``T / (T - (p + 1))`` (R's "Splus compatibility fix").

All series are fitted at once: the autocovariances of every series come from
one FFT, and the recursion runs over the orders (a few dozen) with every
series in the vector. The result equals R (``stats::ar.yw``, the Fortran
routine ``eureka``) to floating-point rounding.

References
----------
Durbin, J. (1960). The fitting of time-series models. *Revue de l'Institut
International de Statistique* 28(3), 233-244.

Heidelberger, P. & Welch, P. D. (1981). A spectral method for confidence
interval generation and run length control in simulations. *Communications of
the ACM* 24(4), 233-245.

Plummer, M., Best, N., Cowles, K. & Vines, K. (2006). CODA: convergence
diagnosis and output analysis for MCMC. *R News* 6(1), 7-11.
"""

from __future__ import annotations

import numpy as np

from mcmc.diagnostics.stats._autocov import next_fast_len

__all__ = ["spectrum0_ar"]

#: R's ``all.equal`` tolerance, ``sqrt(.Machine$double.eps)`` rounded as R writes it.
_ALL_EQUAL_TOL = 1.5e-8


def _autocovariances(c: np.ndarray, max_lag: int) -> np.ndarray:
    """Biased autocovariances ``sum_t c_t c_{t+k} / T``, ``k = 0..max_lag``, of centered rows ``(m, T)``."""
    t = c.shape[-1]
    if max_lag <= 8:
        # a handful of lags: direct products, exactly R's sums up to their order
        return np.stack([np.vecdot(c[:, : t - k], c[:, k:]) for k in range(max_lag + 1)], axis=-1) / t
    f = np.fft.rfft(c, n=next_fast_len(2 * t), axis=-1)
    power = f.real**2 + f.imag**2
    return np.fft.irfft(power, axis=-1, n=next_fast_len(2 * t))[:, : max_lag + 1] / t


def spectrum0_ar(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spectral density at zero of each series by an AIC-chosen AR fit (``coda::spectrum0.ar``).

    Parameters
    ----------
    x : ndarray, shape (..., T)
        Series along the last axis, any leading shape.

    Returns
    -------
    spec : ndarray of float, shape (...)
        ``S(0)``; 0 where coda finds the series a straight line (see the module
        docstring); NaN where a draw is not finite or ``T < 2`` (R stops with
        an error there).
    order : ndarray of float, shape (...)
        The AR order chosen (NaN where ``spec`` is).
    """
    x = np.asarray(x, dtype=np.float64)
    lead, t = x.shape[:-1], x.shape[-1]
    rows = x.reshape(-1, t)
    spec = np.full(rows.shape[0], np.nan)
    order = np.full(rows.shape[0], np.nan)
    if t < 2:
        return spec.reshape(lead), order.reshape(lead)
    finite = np.isfinite(rows).all(axis=-1)
    with np.errstate(all="ignore"):
        c = rows - rows.mean(axis=-1, keepdims=True)
        z = np.arange(1.0, t + 1.0)
        z -= z.mean()
        resid = c - np.outer(c @ z / (z @ z), z)
        line = np.sqrt(np.vecdot(resid, resid) / (t - 1)) <= _ALL_EQUAL_TOL
    spec[finite & line] = 0.0
    order[finite & line] = 0.0
    fit = finite & ~line
    if fit.any():
        s, p = _ar_spec0(c[fit])
        spec[fit], order[fit] = s, p
    return spec.reshape(lead), order.reshape(lead)


def _ar_spec0(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Yule-Walker AR fits of centered rows ``(m, T)`` with AIC order choice: ``S(0)`` and order."""
    m, t = c.shape
    p_max = int(min(t - 1, np.floor(10 * np.log10(t))))
    r = _autocovariances(c, p_max)
    with np.errstate(all="ignore"):
        # Levinson-Durbin: phi holds the AR(k) coefficients, var the innovation variances
        var = np.empty((m, p_max + 1))
        sums = np.zeros((m, p_max + 1))  # sum of the AR(k) coefficients
        var[:, 0] = r[:, 0]
        phi = np.zeros((m, p_max))
        for k in range(1, p_max + 1):
            a = (r[:, k] - np.einsum("mj,mj->m", phi[:, : k - 1], r[:, k - 1 : 0 : -1])) / var[:, k - 1]
            prev = phi[:, : k - 1].copy()
            phi[:, : k - 1] = prev - a[:, None] * prev[:, ::-1]
            phi[:, k - 1] = a
            var[:, k] = var[:, k - 1] * (1.0 - a * a)
            sums[:, k] = phi[:, :k].sum(axis=-1)
        aic = t * np.log(var) + 2.0 * np.arange(p_max + 1)
        # R: order where aic - min(aic) == 0, the first of them; NaN AICs never win
        best = np.argmin(np.where(np.isnan(aic), np.inf, aic), axis=-1)
        rows = np.arange(m)
        var_pred = var[rows, best] * t / (t - (best + 1.0))
        spec = var_pred / (1.0 - sums[rows, best]) ** 2
    bad = np.isnan(aic).all(axis=-1)
    spec[bad] = np.nan
    return spec, np.where(bad, np.nan, best.astype(np.float64))
