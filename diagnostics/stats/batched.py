"""Batched convergence statistics: R-hat, ESS, MCSE, autocorrelation, for all parameters at once.

Every function takes draws ``x`` of shape ``(chain, draw, n)`` -- ``n`` scalar
parameters -- and returns arrays over the last axis, shape ``(n,)`` unless
stated otherwise. There is no Python loop over parameters or chains: ranks,
folds, splits and autocovariances run on ``(n, chain, draw)`` blocks, one
argsort per parameter serves the bulk and folded ranks, the median, the MAD
and the quantiles, and large inputs are cut into blocks of parameters run on
a small thread pool. Geyer's truncation needs the autocovariances only up to
its first non-positive pair of lags, so the first 24 lags are formed by small
matrix products and the FFT is paid only by parameters that mix slowly.
:func:`summarize` (what ``mcmc diagnose`` calls) computes everything for 4
chains x 1000 draws x 1000 parameters in under half a second of CPU time,
an order of magnitude less than ``arviz_stats.summary``, which loops over
parameters in Python.

The numbers are those of ArviZ 1.x (``arviz_stats.base``: ``rhat``, ``ess``
and ``mcse`` with the methods named in each function) to floating-point
rounding; the tests require 1e-8 relative agreement on random, tied,
heavy-tailed and autocorrelated chains, and 1e-12 with R ``posterior`` on
CmdStan output. Deliberate differences:

* one chain: R-hat is computed from the two halves of the chain, as CmdStan
  and R ``posterior`` do (ArviZ returns NaN);
* a constant parameter: every diagnostic is NaN (as in R ``posterior``);
  ArviZ reports ``ess = chains * draws``, an R-hat of NaN with a
  RuntimeWarning and ``mcse_mean = 0``;
* a parameter with an infinite draw: the rank-based R-hat, bulk and tail ESS
  are computed as ArviZ does (ranks are defined for infinities), every
  moment-based statistic is NaN (ArviZ warns and returns NaN or garbage);
* a NaN draw makes every diagnostic NaN, as in ArviZ;
* fewer than 4 draws per chain: every diagnostic is NaN, as in ArviZ;
* the tail ESS uses the 5% and 95% quantiles (Vehtari et al. 2021, R
  ``posterior``, ArviZ's ``ess(method="tail", prob=0.05)``), whereas
  ``arviz_stats.summary`` uses its ``ci_prob`` 0.89 (11% and 89%); see
  :func:`ess_tail`;
* in :func:`acf` a chain that never moves counts as perfectly autocorrelated
  (ArviZ: NaN).

No function here emits a NumPy RuntimeWarning; :func:`status_flags` says why a
statistic is undefined.

This module is the public API and the per-block bookkeeping (:class:`_Work`);
the numerical kernels live beside it by concern: ranks, normal scores and
quantiles in :mod:`mcmc.diagnostics.stats._ranks`, autocovariances and the ESS in
:mod:`mcmc.diagnostics.stats._autocov`, the ``(n, chain, draw)`` layout in
:mod:`mcmc.diagnostics.stats._layout`. SciPy is not used (the normal quantiles are Wichura's AS241 in NumPy), so
``mcmc diagnose`` never pays its import time.

References
----------
Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.

Geyer, C. J. (1992). Practical Markov chain Monte Carlo. *Statistical Science*
7(4), 473-483.

Gelman, A. & Rubin, D. B. (1992). Inference from iterative simulation using
multiple sequences. *Statistical Science* 7(4), 457-472.

Blom, G. (1958). *Statistical Estimates and Transformed Beta-Variables*. Wiley.

Wichura, M. J. (1988). Algorithm AS 241: the percentage points of the normal
distribution. *Applied Statistics* 37(3), 477-484.

Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages.
*The American Statistician* 50(4), 361-365.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from mcmc.diagnostics.stats._autocov import (
    ACF_DIRECT_LAGS,
    RESOLUTION,
    acf_parts,
    ess_core,
    mean_rho_direct,
    mean_rho_fft,
)
from mcmc.diagnostics.stats._blocks import map_blocks
from mcmc.diagnostics.stats._layout import flat, split_chains, to_block
from mcmc.diagnostics.stats._ranks import blom, folded_order, rank_scores, sorted_quantiles, take_rows, z_scale

__all__ = [
    "acf",
    "ess_bulk",
    "ess_mean",
    "ess_quantile",
    "ess_sd",
    "ess_tail",
    "iat",
    "mad",
    "mcse_mean",
    "mcse_sd",
    "mean",
    "quantile_label",
    "quantiles",
    "rhat",
    "rhat_split",
    "sd",
    "ssif",
    "status_flags",
    "summarize",
]

#: Fewest draws per chain for which ArviZ (and we) report a diagnostic.
MIN_DRAWS = 4
#: Default tail probability of :func:`ess_tail` (the 5% and 95% quantiles; Vehtari et al. 2021).
TAIL_PROB = 0.05
#: Default quantile probabilities of :func:`summarize` (and so of ``mcmc diagnose``).
DEFAULT_PROBS = (0.05, 0.5, 0.95)
#: Default autocorrelation lags of :func:`summarize` (and so of ``mcmc diagnose``).
DEFAULT_LAGS = (1, 2, 5, 10, 20, 50)


def quantile_label(p: float) -> str:
    """``0.05 -> "5%"``, ``0.025 -> "2.5%"``: how ArviZ names a quantile column, and so every report here."""
    return f"{100 * p:.10g}%"


def _rhat_core(a: np.ndarray) -> np.ndarray:
    """Gelman-Rubin potential scale reduction of ``(n, M, S)`` sequences (no split, no ranks).

    ``R = sqrt(((S - 1)/S * W + B/S) / W)`` with ``W`` the mean within-sequence
    variance and ``B/S`` the variance of the sequence means (Gelman & Rubin 1992).
    """
    s = a.shape[-1]
    chain_mean = a.mean(axis=-1)
    between = s * np.var(chain_mean, axis=-1, ddof=1)
    centered = a - chain_mean[..., None]
    within = np.vecdot(centered, centered).mean(axis=-1) / (s - 1)  # np.var's sum, in half the passes
    return np.sqrt((between / within + s - 1) / s)


# --------------------------------------------------------------------------- shared work


def _nan_where(values: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``values`` (parameters on the first axis) with NaN for the parameters not ``ok``."""
    out = np.array(values, dtype=np.float64)
    out[~ok] = np.nan
    return out


def _quiet_cached(method):
    """A :func:`functools.cached_property` computed under ``np.errstate(all="ignore")``.

    Undefined results (0/0, log of 0, ...) are masked to NaN by the callers
    with the validity masks of :class:`_Work`, so NumPy's warnings would only
    repeat what :func:`status_flags` reports.
    """

    @functools.wraps(method)
    def compute(self):
        with np.errstate(all="ignore"):
            return method(self)

    return functools.cached_property(compute)


class _Work:
    """Intermediate arrays of one block of draws, each computed at most once.

    Every public statistic is a cached property (or, with an argument, a
    method) of this class, so :func:`summarize` shares the sort, the split,
    both rank normalizations and the FFTs among all statistics, and each
    single-statistic function computes only what it needs. All arithmetic runs
    under ``np.errstate(all="ignore")``; undefined results are masked to NaN
    with the validity masks set here.
    """

    def __init__(self, x: np.ndarray, tail_prob: float = TAIL_PROB) -> None:
        if not 0 < tail_prob < 1:
            raise ValueError(f"tail_prob must lie strictly between 0 and 1, got {tail_prob}")
        self.tail_probs = tuple(sorted((float(tail_prob), 1.0 - float(tail_prob))))
        self.b = to_block(x)
        self.n, self.chains, self.draws = self.b.shape
        # per-lag and per-probability caches of acf() and quantile()
        self._rho_cache: dict[int, np.ndarray] = {}
        self._quantile_cache: dict[float, np.ndarray] = {}
        self._ess_quantile_cache: dict[float, np.ndarray] = {}
        # all draws equal (+-inf included): no rank or moment statistic is defined
        same = np.ones(self.n, dtype=bool)
        self.nan = np.zeros(self.n, dtype=bool)
        self.inf = np.zeros(self.n, dtype=bool)
        if self.draws:
            # per-chain extremes, two passes, give the flags and the stuck chains of acf;
            # max and min propagate NaN
            self.chain_max, self.chain_min = self.b.max(axis=-1), self.b.min(axis=-1)
            high, low = self.chain_max.max(axis=-1), self.chain_min.min(axis=-1)
            self.nan = np.isnan(high)
            self.inf = (high == np.inf) | (low == -np.inf)
            if self.nan.any():
                self.inf[self.nan] = np.isinf(flat(self.b[self.nan])).any(axis=-1)
            with np.errstate(invalid="ignore"):
                same = high == low
        self.finite = ~(self.nan | self.inf)
        self.constant = same & self.finite
        self.size = self.chains * self.draws
        enough = self.draws >= MIN_DRAWS
        # rank-based diagnostics are defined with infinite draws, moment-based are not
        self.rank_ok = ~(self.nan | same) & enough
        self.moment_ok = self.rank_ok & self.finite

    # -- intermediates
    @_quiet_cached
    def order(self):
        return np.argsort(flat(self.b), axis=-1)

    @_quiet_cached
    def sorted(self):
        return take_rows(flat(self.b), self.order)

    @_quiet_cached
    def median(self):
        # np.median's arithmetic on the sorted draws (NaN columns masked by the callers)
        if not self.size:
            return np.full(self.n, np.nan)
        srt, mid = self.sorted, self.sorted.shape[-1] // 2
        return srt[:, mid] if srt.shape[-1] % 2 else (srt[:, mid - 1] + srt[:, mid]) / 2

    @_quiet_cached
    def split(self):
        return split_chains(self.b)

    @_quiet_cached
    def z_bulk(self):
        if self.draws % 2:  # the split drops the middle draws: rank what is left
            return z_scale(self.split)
        # with an even draw count the split keeps every draw: rank all of them
        z = rank_scores(self.order, self.sorted, blom(self.size))
        return split_chains(z.reshape(self.b.shape))

    @_quiet_cached
    def z_bulk_constant(self):
        # the normal scores are all equal iff the draws are; else they differ by far more than
        # finfo.resolution. With an odd draw count the split drops draws: look at what is left.
        if self.draws % 2:
            return None
        return self.sorted[:, -1] == self.sorted[:, 0]

    @_quiet_cached
    def folded(self):
        """Flat order and sorted values of ``|x - median(x)|`` over all draws."""
        return folded_order(self.order, self.sorted, self.median)

    @_quiet_cached
    def z_folded(self):
        if self.draws % 2:
            sp = self.split
            return z_scale(np.abs(sp - np.median(flat(sp), axis=-1)[:, None, None]))
        fo, fs = self.folded
        return split_chains(rank_scores(fo, fs, blom(self.size)).reshape(self.b.shape))

    @_quiet_cached
    def range_below_resolution(self):
        # ArviZ's ESS "constant" test on the raw draws, from the sort (every draw is in the even split)
        srt = self.sorted
        return (srt[:, -1] - srt[:, 0]) < RESOLUTION

    @_quiet_cached
    def ess_tau_mean(self):
        return ess_core(self.split, None if self.draws % 2 else self.range_below_resolution)

    @_quiet_cached
    def centered2(self):
        c = self.b - self.mean[:, None, None]
        return c * c

    @_quiet_cached
    def ess_var(self):
        # ESS of the squared deviations: ArviZ's ess(method="sd") and the ESS inside mcse_sd
        return ess_core(split_chains(self.centered2))[0]

    def ess_quantile_raw(self, prob: float) -> np.ndarray:
        """Split-chain ESS of the indicator ``x <= q_prob`` (Vehtari et al. 2021, sec. 4.3), not masked.

        ``q`` from all draws (middle draw included), indicators then split;
        each probability computed once per instance.
        """
        prob = float(prob)
        cache = self._ess_quantile_cache
        if prob not in cache:
            qp = self.quantile((prob,))[0]
            const = None
            if self.draws % 2 == 0:  # every draw is in the split: constant iff all draws on one side of q
                const = ~(qp < self.sorted[:, -1]) | (qp < self.sorted[:, 0])
            with np.errstate(all="ignore"):
                cache[prob] = ess_core(split_chains((self.b <= qp[:, None, None]).astype(np.float64)), const)[0]
        return cache[prob]

    def ess_quantile(self, prob: float) -> np.ndarray:
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.ess_quantile_raw(prob), self.rank_ok)

    def mcse_quantile(self, prob: float) -> np.ndarray:
        """Monte Carlo standard error of the ``prob`` quantile, to choose the digits it is shown with.

        Vehtari et al. (2021, sec. 4.3), as ``arviz_stats`` ``mcse(method="quantile")``: half the
        distance between the order statistics at the 15.9 % and 84.1 % points of
        ``Beta(ess p + 1, ess (1 - p) + 1)``, except that those points are the Beta's mean minus
        and plus one sd (SciPy's Beta quantile is not loaded for a plain report); within a few
        per cent of ArviZ's at ESS >= 50. The classic report gives the exact one
        (:func:`mcmc.diagnostics.stats.quantile_ess.quantile_ess_mcse`).
        """
        if self.draws < MIN_DRAWS:
            return self.nans
        raw = self.ess_quantile_raw(prob)
        srt = self.sorted
        size = srt.shape[-1]
        with np.errstate(all="ignore"):
            a, b = raw * prob + 1, raw * (1 - prob) + 1
            mean, sd = a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
            lo, hi = (mean - sd) * size - 1, (mean + sd) * size - 1
            i1 = np.floor(np.clip(np.nan_to_num(lo, nan=0.0), 0, size - 1)).astype(np.intp)
            i2 = np.ceil(np.clip(np.nan_to_num(hi, nan=0.0), 0, size - 1)).astype(np.intp)
            rows = np.arange(self.n)
            out = (srt[rows, i2] - srt[rows, i1]) / 2  # inf - inf for a parameter stuck at infinity
        return _nan_where(np.where(np.isfinite(raw), out, np.nan), self.rank_ok & ~self.inf)

    @_quiet_cached
    def ess_quantiles(self):
        # ESS of the indicators x <= q_p and x <= q_{1-p}
        return tuple(self.ess_quantile_raw(p) for p in self.tail_probs)

    @_quiet_cached
    def chain_acf_parts(self):
        """Per-chain centered draws, weights ``1 / (D gamma_c(0))`` (0 if stuck), stuck chains per parameter."""
        return acf_parts(self.b, self.chain_max == self.chain_min)

    @_quiet_cached
    def mean_rho(self):
        """Chain-averaged autocorrelation at every lag ``(n, D)``; a chain that never moves has rho = 1."""
        return mean_rho_fft(*self.chain_acf_parts)

    def _rho_at(self, lags: list[int]) -> np.ndarray:
        """Chain-averaged autocorrelation at ``lags`` (each ``< draws``): ``(n, len(lags))``.

        A few lags (the report's six) by direct products, more (or any, once
        computed) from the FFT that gives every lag.
        """
        cache = self._rho_cache
        missing = [lag for lag in dict.fromkeys(lags) if lag not in cache]
        if len(missing) > ACF_DIRECT_LAGS or (missing and "mean_rho" in self.__dict__):
            full = self.mean_rho
            cache.update((lag, full[:, lag]) for lag in missing)
        elif missing:
            parts = self.chain_acf_parts
            for lag in missing:
                cache[lag] = mean_rho_direct(*parts, lag)
        return np.stack([cache[lag] for lag in lags], axis=1) if lags else np.empty((self.n, 0))

    # -- statistics; the diagnostics are not computed at all below MIN_DRAWS
    @_quiet_cached
    def mean(self):
        if not self.size:
            return np.full(self.n, np.nan)
        out = flat(self.b).mean(axis=-1)
        out[self.constant] = self.b[self.constant, 0, 0]  # exact, and no overflow at 1e308
        return out

    @_quiet_cached
    def sd(self):
        if self.size < 2:
            return np.full(self.n, np.nan)
        out = flat(self.b).std(axis=-1, ddof=1)
        out[self.constant] = 0.0
        return out

    @_quiet_cached
    def mad(self):
        # median(|x - median(x)|), from the sorted folded draws (scipy's median_abs_deviation)
        if not self.size:
            return np.full(self.n, np.nan)
        fs, mid = self.folded[1], self.size // 2
        return _nan_where(fs[:, mid] if self.size % 2 else (fs[:, mid - 1] + fs[:, mid]) / 2, ~self.nan)

    def quantile(self, probs: Sequence[float]) -> np.ndarray:
        """Linear quantiles ``(len(probs), n)``, each probability computed once per instance."""
        probs = np.asarray(probs, dtype=np.float64).reshape(-1)
        if not self.size:
            return np.full((probs.size, self.n), np.nan)
        cache = self._quantile_cache
        missing = sorted({float(p) for p in probs} - cache.keys())
        if missing:
            with np.errstate(all="ignore"):
                values = sorted_quantiles(self.sorted, np.asarray(missing))
            values[:, self.nan] = np.nan
            cache.update(zip(missing, values, strict=True))
        return np.stack([cache[float(p)] for p in probs]) if probs.size else np.empty((0, self.n))

    @_quiet_cached
    def nans(self):
        return np.full(self.n, np.nan)

    @_quiet_cached
    def rhat_bulk(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(_rhat_core(self.z_bulk), self.rank_ok)

    @_quiet_cached
    def rhat_tail(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(_rhat_core(self.z_folded), self.rank_ok)

    @_quiet_cached
    def rhat(self):
        # fmax: when the folded draws are all tied (two values symmetric about the
        # median) the tail R-hat is 0/0 and the bulk R-hat stands, as in ArviZ
        return np.fmax(self.rhat_bulk, self.rhat_tail)

    @_quiet_cached
    def rhat_split(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(_rhat_core(self.split), self.moment_ok)

    @_quiet_cached
    def ess_bulk(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(ess_core(self.z_bulk, self.z_bulk_constant)[0], self.rank_ok)

    @_quiet_cached
    def ess_tail(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        low, high = self.ess_quantiles
        return _nan_where(np.minimum(low, high), self.rank_ok)

    @_quiet_cached
    def ess_mean(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.ess_tau_mean[0], self.moment_ok)

    @_quiet_cached
    def iat(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.ess_tau_mean[1], self.moment_ok)

    @_quiet_cached
    def ess_sd(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.ess_var, self.moment_ok)

    @_quiet_cached
    def mcse_mean(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.sd / np.sqrt(self.ess_mean), self.moment_ok)

    @_quiet_cached
    def mcse_sd(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        # delta method: Var(s^2) ~ (m4 - m2^2) / ess, sd(s) ~ sqrt(Var(s^2) / (4 m2)); ArviZ's mcse_sd
        c2 = flat(self.centered2)
        evar = c2.mean(axis=-1)
        varvar = ((c2 * c2).mean(axis=-1) - evar**2) / self.ess_var
        return _nan_where(np.sqrt(varvar / evar / 4), self.moment_ok)

    def acf(self, lags: Sequence[int]) -> np.ndarray:
        lags = np.asarray(lags, dtype=np.int64).reshape(-1)
        if (lags < 0).any():
            raise ValueError(f"lags must be non-negative, got {lags.tolist()}")
        out = np.full((self.n, lags.size), np.nan)
        inside = lags < self.draws
        if inside.any():
            with np.errstate(all="ignore"):
                out[:, inside] = self._rho_at(lags[inside].tolist())
        ok = self.finite & ~self.constant & (self.draws >= 2)
        return _nan_where(out, ok)

    @_quiet_cached
    def ssif(self):
        if self.draws < MIN_DRAWS:
            return self.nans, self.nans
        r1 = self.acf((1,))[:, 0]
        s = (1.0 + r1) / (1.0 - r1)
        return _nan_where(s, self.moment_ok), _nan_where(self.chains * self.draws / s, self.moment_ok)


# --------------------------------------------------------------------------- public API

def by_blocks(x: np.ndarray, compute, axis: int = 0, **work_kw):
    """``compute(_Work(block))`` over parameter blocks, concatenated along ``axis``.

    ``compute`` returns an array (parameters on ``axis``) or a tuple of them.
    """
    parts = map_blocks(x, lambda block: compute(_Work(block, **work_kw)))
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(p, axis=axis) for p in zip(*parts, strict=True))
    return np.concatenate(parts, axis=axis)


def status_flags(x: np.ndarray) -> dict[str, np.ndarray]:
    """Why a parameter's statistics may be undefined.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    dict
        ``constant``: every draw finite and equal; ``nan``: some draw is NaN;
        ``inf``: some draw is +-inf. Boolean arrays of shape ``(n,)``.
    """
    flags = by_blocks(x, lambda w: (w.constant, w.nan, w.inf))
    return dict(zip(("constant", "nan", "inf"), flags, strict=True))


def rhat(x: np.ndarray) -> np.ndarray:
    """Rank-normalized split R-hat: the larger of the bulk and the folded (tail) R-hat.

    Chains are split in halves; draws are replaced by the normal scores of their
    average ranks over all chains (:func:`~mcmc.diagnostics.stats._ranks.z_scale`), giving the bulk R-hat;
    the same on ``|x - median(x)|`` gives the tail R-hat (Vehtari et al. 2021,
    sec. 4.2); the bulk R-hat alone when the tail one is 0/0 (draws taking two
    values). Equals ``arviz_stats`` ``rhat(method="rank")``. With one chain the
    two halves are compared (ArviZ returns NaN). ``inf`` when the halves are
    each constant but differ (chains stuck at different values).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.rhat)


def rhat_split(x: np.ndarray) -> np.ndarray:
    """Classic split R-hat on the raw draws (Gelman et al. 2013), ``arviz_stats`` ``rhat(method="split")``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
        NaN for parameters with a non-finite draw.
    """
    return by_blocks(x, lambda w: w.rhat_split)


def ess_bulk(x: np.ndarray) -> np.ndarray:
    """Bulk effective sample size: ESS of the rank-normalized split chains.

    Vehtari et al. (2021, sec. 4.1); ``arviz_stats`` ``ess(method="bulk")``.
    The ESS itself is Geyer's (1992) initial monotone sequence estimator as
    described in :func:`~mcmc.diagnostics.stats._autocov.ess_core`.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.ess_bulk)


def ess_tail(x: np.ndarray, prob: float = TAIL_PROB) -> np.ndarray:
    """Tail effective sample size: the smaller ESS of the indicators ``x <= q_prob`` and ``x <= q_(1-prob)``.

    Quantiles are the linear (Hyndman & Fan type 7) quantiles of all draws;
    each indicator's ESS is the split-chain ESS (Vehtari et al. 2021, sec. 4.3).
    With the default ``prob = 0.05`` (the 5% and 95% quantiles, as in the
    paper, R ``posterior`` and Stan) this equals ``arviz_stats``
    ``ess(method="tail", prob=0.05)``. Note: ``arviz_stats.summary`` calls
    ``ess(method="tail")`` without ``prob``, which then takes
    ``rcParams["stats.ci_prob"]`` = 0.89, i.e. the 11% and 89% quantiles, and
    so reports a larger tail ESS than the default here; ``prob=0.11``
    reproduces it.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    prob : float in (0, 1)
        Tail probability; ``prob`` and ``1 - prob`` give the same result.

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.ess_tail, tail_prob=prob)


def ess_quantile(x: np.ndarray, prob: float) -> np.ndarray:
    """ESS of the ``prob`` quantile: split-chain ESS of the indicator ``x <= q_prob``.

    ``q_prob`` is the linear (type 7) quantile of all draws (Vehtari et al.
    2021, sec. 4.3); ``arviz_stats`` ``ess(method="quantile", prob=prob)``.
    :func:`ess_tail` is the smaller of this at ``prob`` and ``1 - prob``.
    NaN for constant parameters (ArviZ: ``chain * draw``), as every ESS here.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    prob : float in [0, 1]

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.ess_quantile(prob))


def ess_mean(x: np.ndarray) -> np.ndarray:
    """ESS for the mean: split-chain ESS of the raw draws, ``arviz_stats`` ``ess(method="mean")``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.ess_mean)


def ess_sd(x: np.ndarray) -> np.ndarray:
    """ESS for the standard deviation as ArviZ computes it: split-chain ESS of ``(x - mean(x))**2``.

    ``arviz_stats`` ``ess(method="sd")``. (R ``posterior``'s ``ess_sd`` is the
    smaller of the ESS of ``x`` and of ``x**2``, a different number.)

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.ess_sd)


def mcse_mean(x: np.ndarray) -> np.ndarray:
    """Monte Carlo standard error of the mean: ``sd(x) / sqrt(ess_mean(x))``.

    ``sd`` with ``ddof=1``; ``arviz_stats`` ``mcse(method="mean")``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.mcse_mean)


def mcse_sd(x: np.ndarray) -> np.ndarray:
    """Monte Carlo standard error of the standard deviation (delta method).

    With ``c = x - mean(x)``, ``m2 = mean(c**2)``, ``m4 = mean(c**4)`` and
    ``e`` the split-chain ESS of ``c**2``: ``sqrt((m4 - m2**2) / e / m2 / 4)``.
    ``arviz_stats`` ``mcse(method="sd")``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.mcse_sd)


def mean(x: np.ndarray) -> np.ndarray:
    """Posterior mean over all chains and draws.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.mean)


def sd(x: np.ndarray) -> np.ndarray:
    """Posterior standard deviation over all chains and draws, ``ddof=1`` (as ``arviz_stats.summary``).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.sd)


def mad(x: np.ndarray) -> np.ndarray:
    """Median absolute deviation ``median(|x - median(x)|)`` over all draws, unscaled.

    As ``arviz_stats.summary(kind="stats_median")`` reports it
    (``scipy.stats.median_abs_deviation`` with ``scale=1``). R ``posterior``'s
    ``mad`` is 1.4826 times this (consistent for the normal sd).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.mad)


def quantiles(x: np.ndarray, probs: Sequence[float]) -> np.ndarray:
    """Quantiles over all draws, linear interpolation (Hyndman & Fan 1996 type 7, NumPy's default).

    The definition ``arviz_stats`` uses for ``eti`` (the ``summary`` interval)
    and R's default ``quantile``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    probs : sequence of float in [0, 1]

    Returns
    -------
    ndarray, shape (len(probs), n)
    """
    return by_blocks(x, lambda w: w.quantile(probs), axis=1)


def acf(x: np.ndarray, lags: Sequence[int]) -> np.ndarray:
    """Autocorrelation at the given lags, per chain, then averaged over chains.

    A few lags (up to 8) by direct products, more from one FFT per chain.

    For chain ``c`` with mean ``m_c``:
    ``gamma_c(k) = (1/D) sum_{t=0}^{D-1-k} (x_t - m_c)(x_{t+k} - m_c)`` (biased,
    as ``arviz_stats.autocorr``), ``rho_c(k) = gamma_c(k) / gamma_c(0)``, and
    the result is ``mean_c rho_c(k)`` (chains not split). A chain that never
    moves counts as perfectly autocorrelated (``rho_c = 1``). NaN for lags
    ``>= draw`` and for constant or non-finite parameters.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    lags : sequence of int >= 0

    Returns
    -------
    ndarray, shape (n, len(lags))
    """
    return by_blocks(x, lambda w: w.acf(lags))


def iat(x: np.ndarray) -> np.ndarray:
    """Integrated autocorrelation time ``tau = 1 + 2 sum_{t>=1} rho_t`` of the split chains.

    The ``tau`` of :func:`ess_mean`: Geyer's (1992) initial monotone sequence
    estimate on the split chains (see :func:`~mcmc.diagnostics.stats._autocov.ess_core`), floored at
    ``1 / log10(S)``, so that ``ess_mean = S / iat`` exactly, ``S`` being the
    number of draws in the split chains (``chain * draw``, less one draw per
    chain when ``draw`` is odd).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return by_blocks(x, lambda w: w.iat)


def ssif(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample size inflation factor from the lag-1 autocorrelation, and the ESS it implies.

    ``s = (1 + r1) / (1 - r1)`` with ``r1`` the chain-averaged lag-1
    autocorrelation of :func:`acf`: the integrated autocorrelation time of an
    AR(1) process with coefficient ``r1``. The implied ESS is
    ``chain * draw / s``. A cheap cross-check of :func:`ess_bulk`: the two
    disagree when the chain is far from AR(1) (e.g. slowly decaying or
    oscillating autocorrelations).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    s, ess : ndarray, shape (n,) each
    """
    return by_blocks(x, lambda w: w.ssif)


def summarize(
    x: np.ndarray,
    probs: Sequence[float] = DEFAULT_PROBS,
    lags: Sequence[int] = DEFAULT_LAGS,
    *,
    tail_prob: float = TAIL_PROB,
) -> dict[str, np.ndarray]:
    """Every statistic of this module in one pass, sharing the sort, ranks and autocovariances.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    probs : sequence of float in [0, 1]
        Quantile probabilities.
    lags : sequence of int >= 0
        Autocorrelation lags.
    tail_prob : float in (0, 1)
        Tail probability of ``ess_tail`` (see :func:`ess_tail`).

    Returns
    -------
    dict
        Shape ``(n,)`` unless noted: ``mean``, ``sd``, ``median``, ``mad``,
        ``quantiles`` and their ``mcse_quantiles`` ``(len(probs), n)``, ``rhat``, ``rhat_bulk``, ``rhat_tail``,
        ``rhat_split``, ``ess_bulk``, ``ess_tail``, ``ess_mean``, ``ess_sd``,
        ``mcse_mean``, ``mcse_sd``, ``acf`` ``(n, len(lags))``, ``iat``,
        ``ssif``, ``ess_ssif``, the :func:`status_flags` ``constant``, ``nan``,
        ``inf`` (bool), and the ``probs`` and ``lags`` used.
    """
    parts = map_blocks(x, lambda block: _summarize_block(_Work(block, tail_prob=tail_prob), probs, lags))
    out = {key: np.concatenate([p[key] for p in parts], axis=1 if key in ("quantiles", "mcse_quantiles") else 0)
           for key in parts[0]}  # fmt: skip
    out["probs"] = np.asarray(probs, dtype=np.float64)
    out["lags"] = np.asarray(lags, dtype=np.int64)
    return out


def _summarize_block(w: _Work, probs: Sequence[float], lags: Sequence[int]) -> dict[str, np.ndarray]:
    w.quantile((*probs, 0.5, *w.tail_probs))  # one partition for all of them
    s, ess_s = w.ssif
    return {
        "mean": w.mean,
        "sd": w.sd,
        "median": _nan_where(w.median, ~w.nan),
        "mad": w.mad,
        "quantiles": w.quantile(probs),
        "mcse_quantiles": np.stack([w.mcse_quantile(p) for p in probs]) if probs else np.empty((0, w.n)),
        "rhat": w.rhat,
        "rhat_bulk": w.rhat_bulk,
        "rhat_tail": w.rhat_tail,
        "rhat_split": w.rhat_split,
        "ess_bulk": w.ess_bulk,
        "ess_tail": w.ess_tail,
        "ess_mean": w.ess_mean,
        "ess_sd": w.ess_sd,
        "mcse_mean": w.mcse_mean,
        "mcse_sd": w.mcse_sd,
        "acf": w.acf(lags),
        "iat": w.iat,
        "ssif": s,
        "ess_ssif": ess_s,
        "constant": w.constant,
        "nan": w.nan,
        "inf": w.inf,
    }
