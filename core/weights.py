"""Importance weights given as logs: normalised, Kish's effective sample size, self-normalised means.

Shared by every weighted sample: likelihood weighting of a Bayesian network
(:mod:`mcmc.core.networks.likelihood_weighting`) and importance sampling of
a density (:mod:`mcmc.core.samplers.importance`), and by the judge of
weighted draws (:func:`mcmc.diagnostics.report.check.check_weighted`). A
weight ``w = p~(x) / q(x)`` is stored as its log, ``-inf`` for a weight of
zero; the self-normalised estimate of ``E_p[f]`` is ``sum w f / sum w``
(Owen 2013, *Monte Carlo theory, methods and examples*, section 9.2;
Robert & Casella 2004, section 3.3), its error by the delta method, and
Kish's (1965) ``(sum w)^2 / sum w^2`` says how many equally weighted draws
the weights are worth.
"""

from __future__ import annotations

import numpy as np


def normalized_weights(log_weight: np.ndarray) -> np.ndarray:
    """Weights ``(...)`` scaled to sum to one over all axes (``-inf`` log weights give 0).

    Raises
    ------
    ValueError
        Every weight is zero.
    """
    log_weight = np.asarray(log_weight, dtype=float)
    top = np.max(log_weight)
    if not np.isfinite(top):
        raise ValueError("every importance weight is zero")
    w = np.exp(log_weight - top)
    return w / w.sum()


def kish_ess(log_weight: np.ndarray, axis: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` of weights given as logs.

    ``axis=None`` pools everything; ``axis=1`` on ``(chain, draw)`` gives one
    ESS per chain. Zero where every weight on the axis is zero.
    """
    log_weight = np.asarray(log_weight, dtype=float)
    top = np.max(log_weight, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    w = np.exp(log_weight - top)
    s1 = np.sum(w, axis=axis)
    s2 = np.sum(w * w, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s2 > 0, s1 * s1 / np.where(s2 > 0, s2, 1.0), 0.0)


def weighted_mean(values: np.ndarray, log_weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Self-normalised importance estimate of ``E[f]`` and its delta-method MCSE.

    Parameters
    ----------
    values
        ``(chain, draw, ...)`` values of ``f`` at the draws (indicators of a
        state, for a marginal probability).
    log_weight
        ``(chain, draw)`` log weights.

    Returns
    -------
    mean, mcse
        Shape ``values.shape[2:]``: ``mu = sum w f / sum w`` and
        ``sqrt(sum w^2 (f - mu)^2) / sum w`` (the delta method for a ratio
        estimator of independent draws; Owen 2013, ch. 9).
    """
    w = normalized_weights(log_weight)
    values = np.asarray(values, dtype=float)
    wf = w.reshape(w.shape + (1,) * (values.ndim - 2))
    mean = np.sum(wf * values, axis=(0, 1))
    mcse = np.sqrt(np.sum(wf**2 * (values - mean) ** 2, axis=(0, 1)))
    return mean, mcse


def weighted_moments(values: np.ndarray, log_weight: np.ndarray) -> dict[str, np.ndarray]:
    """Self-normalised mean and sd of ``values (chain, draw, n)`` and their delta-method MCSE, per column.

    Returns
    -------
    dict
        ``mean``, ``mcse_mean``, ``sd`` (the weighted sd ``sqrt(sum w (f - mu)^2)``
        of normalised weights) and ``mcse_sd``, each ``(n,)``. The variance is
        itself a self-normalised mean, of ``(f - mu)^2``, so its MCSE is the
        delta method's again, and ``mcse_sd = mcse_var / (2 sd)``.
    """
    w = normalized_weights(log_weight)
    v = np.asarray(values, dtype=float)
    wf = w.reshape(w.shape + (1,) * (v.ndim - 2))
    mean = np.sum(wf * v, axis=(0, 1))
    sq = (v - mean) ** 2
    var = np.sum(wf * sq, axis=(0, 1))
    mcse_mean = np.sqrt(np.sum(wf**2 * sq, axis=(0, 1)))
    mcse_var = np.sqrt(np.sum(wf**2 * (sq - var) ** 2, axis=(0, 1)))
    sd = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        mcse_sd = np.where(sd > 0, mcse_var / (2.0 * np.where(sd > 0, sd, 1.0)), 0.0)
    return {"mean": mean, "mcse_mean": mcse_mean, "sd": sd, "mcse_sd": mcse_sd}


def weighted_quantiles(values: np.ndarray, log_weight: np.ndarray, probs: tuple[float, ...]) -> np.ndarray:
    """Quantiles ``(len(probs), n)`` of the weighted draws ``values (chain, draw, n)``.

    The weighted empirical CDF's inverse: the smallest value whose cumulative
    normalised weight reaches ``p`` (for equal weights, the lower empirical quantile).
    """
    w = normalized_weights(log_weight).ravel()
    v = np.asarray(values, dtype=float).reshape(w.size, -1)
    order = np.argsort(v, axis=0, kind="stable")
    cum = np.cumsum(w[order], axis=0)
    out = np.empty((len(probs), v.shape[1]))
    for j in range(v.shape[1]):
        idx = np.minimum(np.searchsorted(cum[:, j], np.asarray(probs) - 1e-12), w.size - 1)
        out[:, j] = v[order[idx, j], j]
    return out
