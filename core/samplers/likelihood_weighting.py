"""Likelihood weighting: importance sampling of a Bayesian network with the evidence clamped.

Fung & Chang (1990), "Weighing and integrating evidence for stochastic
simulation in Bayesian networks"; Shachter & Peot (1990). Each draw samples
the unobserved nodes in topological order from their CPTs, the observed
nodes set to their evidence, and carries the weight

    w = prod_{i observed} p(e_i | sampled parents of i),

the likelihood of the evidence given the draw. The proposal is the prior
with the evidence clamped, so ``w`` is ``p(x, e) / q(x)`` and the
self-normalised estimate ``sum_n w_n f(x_n) / sum_n w_n`` converges to
``E[f(X) | e]``. Draws are independent; their quality is measured by Kish's
effective sample size of the weights, ``(sum w)^2 / sum w^2`` (Kish 1965),
and the error of an estimate by the delta method (:func:`weighted_mean`).

Randomness: ``n_nodes`` uniforms per draw, ``(chains, draws, n_nodes)`` from
each chain's own stream (the observed nodes' uniforms are drawn and unused,
keeping the shape fixed).

Statistics: ``log_weight`` (``log w``, ``-inf`` for a draw incompatible
with the evidence through a zero in a CPT) and ``lp`` (``log p(x, e)``).
"""

from __future__ import annotations

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.network_tables import NetworkTables, forward_sample

DECLARATION = registry.LIKELIHOOD_WEIGHTING
NAME = DECLARATION.name
CHUNK = 4096  # draws per chain per compiled call


def sample(rng: ChainRandom, tables: NetworkTables, draws: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``draws`` weighted draws for every chain of ``rng``.

    Returns
    -------
    codes
        ``(chains, draws, n_unobserved)`` state codes of the unobserved nodes.
    stats
        ``log_weight`` and ``lp``, each ``(chains, draws)``.
    """
    chains, n = rng.chains, tables.network.n_nodes
    out = np.empty((chains, draws, tables.n_unobserved), dtype=tables.code_dtype)
    log_weight = np.empty((chains, draws))
    lp = np.empty((chains, draws))
    for start in range(0, draws, CHUNK):
        k = min(CHUNK, draws - start)
        u = rng.uniform((k, n))
        codes, lw, _ = forward_sample(tables, u.reshape(-1, n), weighted=True)
        codes = codes.reshape(chains, k, n)
        out[:, start : start + k] = codes[:, :, tables.unobserved]
        log_weight[:, start : start + k] = lw.reshape(chains, k)
        lp[:, start : start + k] = tables.network.log_joint(codes)
    return out, {"log_weight": log_weight, "lp": lp}


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
