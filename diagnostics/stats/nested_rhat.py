"""Nested R-hat for many short chains grouped into superchains, equal to ``arviz_stats.rhat_nested``.

:func:`rhat_nested` follows Margossian et al. (2024), batched over parameters.

References
----------
Margossian, C. C., Hoffman, M. D., Sountsov, P., Riou-Durand, L., Vehtari, A.
& Gelman, A. (2024). Nested R-hat: assessing the convergence of Markov chain
Monte Carlo when running many short chains. *Bayesian Analysis*.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mcmc.diagnostics.stats import _layout, _ranks
from mcmc.diagnostics.stats import batched as _stats
from mcmc.diagnostics.stats._blocks import map_blocks
from mcmc.diagnostics.stats._layout import as_draws


def _superchain_index(superchain_ids: Sequence[int], chains: int) -> np.ndarray:
    ids = np.asarray(superchain_ids)
    if ids.shape != (chains,):
        raise ValueError(f"need one superchain id per chain ({chains}), got {ids.size}")
    _, index, counts = np.unique(ids, return_inverse=True, return_counts=True)
    if counts.min() != counts.max():
        raise ValueError("every superchain must hold the same number of chains")
    if counts.size < 2:
        raise ValueError("nested R-hat needs at least two superchains")
    return index


def _nested_core(a: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Nested R-hat (Margossian et al. 2024, eqs. 4-8) of ``(n, M, S)`` sequences in superchains ``index`` ``(M,)``."""
    n, m, s = a.shape
    k = int(index.max()) + 1
    per = m // k
    onehot = np.zeros((m, k))
    onehot[np.arange(m), index] = 1.0 / per
    chain_mean = a.mean(axis=-1)
    super_mean = chain_mean @ onehot  # (n, K)
    if per > 1:
        dev = chain_mean - super_mean[:, index]
        between_chain = (dev * dev) @ onehot * per / (per - 1)
    else:
        between_chain = np.zeros((n, k))
    within_chain = a.var(axis=-1, ddof=1) @ onehot if s > 1 else np.zeros((n, k))
    between_super = super_mean.var(axis=-1, ddof=1)
    within_super = (within_chain + between_chain).mean(axis=-1)
    return np.sqrt(1 + between_super / within_super)


def rhat_nested(x: np.ndarray, superchain_ids: Sequence[int]) -> np.ndarray:
    """Rank-normalized split nested R-hat (Margossian et al. 2024), ``arviz_stats.rhat_nested`` (method "rank").

    Chains are split in halves (a half keeps its chain's superchain); the
    draws are rank-normalized over all chains (:func:`mcmc.diagnostics.stats._ranks.z_scale`,
    the normal scores of the bulk R-hat) and, folded about the median, again
    for the tail; the result is the larger of the two nested R-hats
    ``sqrt(1 + B_nu / W_nu)``, ``B_nu`` the variance of the superchain means,
    ``W_nu`` the mean over superchains of the within-chain variance plus the
    between-chain variance inside the superchain.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    superchain_ids : sequence of int, length chain
        Superchain of each chain; every superchain the same size, at least two of them.

    Returns
    -------
    ndarray, shape (n,)
        NaN for a parameter with a NaN draw, and with fewer than 4 draws or 2 chains (as ArviZ).
    """
    x = as_draws(x)
    index = _superchain_index(superchain_ids, x.shape[0])
    parts = map_blocks(x, lambda block: _rhat_nested_block(block, index))
    return np.concatenate(parts)


def _rhat_nested_block(block: np.ndarray, index: np.ndarray) -> np.ndarray:
    b = _layout.to_block(block)  # (n, C, D)
    n, c, d = b.shape
    if d < _stats.MIN_DRAWS or c < 2:
        return np.full(n, np.nan)
    half = d // 2
    split = np.concatenate((b[..., :half], b[..., d - half :]), axis=1)  # all first halves, then all second
    ids = np.concatenate((index, index))
    with np.errstate(all="ignore"):
        bulk = _nested_core(_ranks.z_scale(split), ids)
        folded = np.abs(split - np.median(split.reshape(n, -1), axis=-1)[:, None, None])
        tail = _nested_core(_ranks.z_scale(folded), ids)
    out = np.where(tail > bulk, tail, bulk)  # Python's max(bulk, tail), as ArviZ
    out[np.isnan(b).any(axis=(1, 2))] = np.nan
    return out
