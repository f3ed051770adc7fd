"""Quantile ESS and MCSE, and the highest-density interval, equal to ``arviz_stats``.

* :func:`quantile_ess_mcse` -- ``arviz_stats`` ``ess(method="quantile")``,
  ``mcse(method="quantile")`` (Vehtari et al. 2021) at :data:`QUANTILE_PROBS`;
* :func:`hdi` -- ``arviz_stats.hdi`` (``method="nearest"``, default ``prob``
  :data:`HDI_PROB`, 0.89 from ArviZ's ``stats.ci_prob``).

Constant parameters: the quantile ESS/MCSE are NaN as every ESS of
:mod:`.stats` (ArviZ: ``chain * draw`` and 0).

References
----------
Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mcmc.diagnostics.stats import batched as _stats
from mcmc.diagnostics.stats._layout import as_draws

#: Probabilities whose quantile ESS and MCSE are reported (Vehtari et al. 2021's 5 %, 50 %, 95 %).
QUANTILE_PROBS = (0.05, 0.5, 0.95)

#: ArviZ's default interval probability (``rcParams["stats.ci_prob"]``), the default of ``arviz_stats.hdi``.
HDI_PROB = 0.89


def _quantile_block(w, probs: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Quantile ESS and MCSE ``(len(probs), n)`` of one :class:`mcmc.diagnostics.stats.batched._Work` block."""
    from scipy.stats import beta  # start-up: SciPy (0.1-1 s) only for the classic diagnostics that need it

    srt = w.sorted
    size = srt.shape[-1]
    ess = np.stack([w.ess_quantile(p) for p in probs]) if probs else np.empty((0, w.n))
    mcse = np.full(ess.shape, np.nan)
    rows = np.arange(w.n)
    for i, p in enumerate(probs):
        raw = w.ess_quantile_raw(p)
        with np.errstate(all="ignore"):
            lo, hi = (beta.ppf(prob, raw * p + 1, raw * (1 - p) + 1) * size - 1 for prob in (0.1586553, 0.8413447))
        i1 = np.floor(np.fmax(lo, 0)).astype(np.intp)
        i2 = np.ceil(np.fmin(hi, size - 1)).astype(np.intp)
        mcse[i] = (srt[rows, i2] - srt[rows, i1]) / 2
    mcse[:, ~w.rank_ok] = np.nan
    mcse[:, w.inf] = np.nan
    return ess, mcse


def quantile_ess_mcse(x: np.ndarray, probs: Sequence[float] = QUANTILE_PROBS) -> tuple[np.ndarray, np.ndarray]:
    """ESS and Monte Carlo standard error of quantiles (Vehtari et al. 2021, sec. 4.3).

    The ESS is :func:`mcmc.diagnostics.stats.ess_quantile`
    (``arviz_stats`` ``ess(method="quantile", prob=p)``); the MCSE is half the
    distance between the order statistics at the 15.9 % and 84.1 % quantiles
    of ``Beta(ess p + 1, ess (1 - p) + 1)``, scaled to the number of draws
    (``arviz_stats`` ``mcse(method="quantile", prob=p)``).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    probs : sequence of float in (0, 1)

    Returns
    -------
    ess, mcse : ndarray, shape (len(probs), n) each
        NaN for constant parameters (ArviZ: ESS ``chain * draw``, MCSE 0), NaN
        or infinite draws, and fewer than 4 draws.
    """
    probs = tuple(float(p) for p in probs)
    return _stats.by_blocks(as_draws(x), lambda w: _quantile_block(w, probs), axis=1)


def _hdi_block(w, prob: float) -> np.ndarray:
    srt = w.sorted
    size = srt.shape[-1]
    inc = min(int(np.floor(prob * size)), size - 1)
    width = srt[:, inc:] - srt[:, : size - inc]
    first = np.argmin(width, axis=-1)
    rows = np.arange(w.n)
    out = np.stack((srt[rows, first], srt[rows, first + inc]))
    out[:, w.nan] = np.nan
    return out


def hdi(x: np.ndarray, prob: float = HDI_PROB) -> np.ndarray:
    """Highest-density interval: the narrowest interval between two draws holding ``floor(prob S)`` gaps.

    Over all ``S = chain * draw`` draws sorted, the pair ``(s_i, s_{i+k})``
    with ``k = min(floor(prob S), S - 1)`` and the least width, the first of
    equal widths: ``arviz_stats.hdi(method="nearest")``, whose default ``prob``
    is ``rcParams["stats.ci_prob"]`` = 0.89 (:data:`HDI_PROB`).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    prob : float in (0, 1]

    Returns
    -------
    ndarray, shape (2, n)
        Lower and upper ends; NaN for a parameter with a NaN draw.
    """
    if not 0 < prob <= 1:
        raise ValueError(f"prob must lie in (0, 1], got {prob}")
    return _stats.by_blocks(as_draws(x), lambda w: _hdi_block(w, prob), axis=1)
