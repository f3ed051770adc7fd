"""Classic and supplementary convergence diagnostics: R ``coda``, nested R-hat, quantile ESS, HDI, emcee's tau.

:func:`classic_report` computes them all for draws ``(chain, draw, n)`` and
returns one :class:`ClassicDiagnostics`. Nothing here runs unless asked
(``mcmc diagnose`` computes its default report in :mod:`.stats`). Every
function is batched over parameters; the loops left run over chains, AR
orders, Heidelberger-Welch start points or Raftery-Lewis thinning steps.

Which reference each number equals (tests: ``tests/diagnostics/test_classic.py``
against values stored by ``tests/data/classic/``):

* :func:`gelman_rubin` -- ``coda::gelman.diag`` (Gelman & Rubin 1992; Brooks &
  Gelman 1998 for the multivariate PSRF), ``autoburnin`` both ways;
* :func:`geweke` -- ``coda::geweke.diag`` (Geweke 1992), per chain;
* :func:`heidelberger_welch` -- ``coda::heidel.diag`` (Heidelberger & Welch
  1983), per chain, with coda's ``pcramer``;
* :func:`raftery_lewis` -- ``coda::raftery.diag`` (Raftery & Lewis 1992), per chain;
* :func:`effective_size_ar` -- ``coda::effectiveSize``; :func:`batch_se` --
  ``coda::batchSE`` on an ``mcmc.list`` (batches of 100 draws; not
  ``posterior::mcse_mean`` nor ``mcmcse``); :func:`rejection_rate` --
  ``coda::rejectionRate`` per chain;
* :func:`rhat_nested` -- ``arviz_stats.rhat_nested`` (Margossian et al. 2024);
* :func:`quantile_ess_mcse` -- ``arviz_stats`` ``ess(method="quantile")``,
  ``mcse(method="quantile")``; :func:`hdi` -- ``arviz_stats.hdi``
  (``method="nearest"``, default ``prob`` 0.89 from ArviZ's ``stats.ci_prob``);
* :func:`integrated_time` -- ``emcee.autocorr.integrated_time`` (Sokal's
  automatic window, Goodman & Weare's emcee; Foreman-Mackey et al. 2013).

coda quirks kept on purpose (each said again where it applies): windows of
a chain are cut with ``window.mcmc``'s rounding of iteration times; the
spectral density is 0 for a series within 1.5e-8 (absolutely) of a straight
line (:mod:`.spectral`); ``heidel.diag`` tries the starts
``seq(1, T/2, by = T/10)`` (0 %, 10 %, ..., 40 % discarded for ``T = 1000``,
not up to 50 %); ``batchSE`` divides by all ``chain * draw`` draws though it
uses only whole batches. Where coda stops with an error (one chain for
``gelman.diag``, too few draws for ``raftery.diag``, a singular covariance for
the multivariate PSRF, a constant chain in ``heidel.diag``) the value is NaN.
Constant parameters: as coda (spectral density 0, ``effectiveSize`` 0, PSRF
NaN from 0/0); the quantile ESS/MCSE are NaN as every ESS of :mod:`.stats`
(ArviZ: ``chain * draw`` and 0); emcee's tau is NaN (emcee divides by a zero
autocovariance).

References
----------
Gelman, A. & Rubin, D. B. (1992). Inference from iterative simulation using
multiple sequences. *Statistical Science* 7(4), 457-472.

Brooks, S. P. & Gelman, A. (1998). General methods for monitoring convergence
of iterative simulations. *Journal of Computational and Graphical Statistics*
7(4), 434-455.

Geweke, J. (1992). Evaluating the accuracy of sampling-based approaches to the
calculation of posterior moments. In *Bayesian Statistics 4*, 169-193. Oxford
University Press.

Heidelberger, P. & Welch, P. D. (1983). Simulation run length control in the
presence of an initial transient. *Operations Research* 31(6), 1109-1144.

Raftery, A. E. & Lewis, S. M. (1992). How many iterations in the Gibbs
sampler? In *Bayesian Statistics 4*, 763-773. Oxford University Press.

Cowles, M. K. & Carlin, B. P. (1996). Markov chain Monte Carlo convergence
diagnostics: a comparative review. *JASA* 91(434), 883-904.

Plummer, M., Best, N., Cowles, K. & Vines, K. (2006). CODA: convergence
diagnosis and output analysis for MCMC. *R News* 6(1), 7-11.

Margossian, C. C., Hoffman, M. D., Sountsov, P., Riou-Durand, L., Vehtari, A.
& Gelman, A. (2024). Nested R-hat: assessing the convergence of Markov chain
Monte Carlo when running many short chains. *Bayesian Analysis*.

Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.

Sokal, A. (1997). Monte Carlo methods in statistical mechanics: foundations
and new algorithms. In *Functional Integration*, 131-192. Springer.

Foreman-Mackey, D., Hogg, D. W., Lang, D. & Goodman, J. (2013). emcee: the
MCMC hammer. *PASP* 125(925), 306-312.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcmc.diagnostics import _layout, _ranks
from mcmc.diagnostics import stats as _stats
from mcmc.diagnostics.spectral import spectrum0_ar

__all__ = [
    "ClassicDiagnostics",
    "batch_se",
    "classic_report",
    "effective_size_ar",
    "gelman_rubin",
    "geweke",
    "hdi",
    "heidelberger_welch",
    "integrated_time",
    "pcramer",
    "quantile_ess_mcse",
    "raftery_lewis",
    "rejection_rate",
    "rhat_nested",
]

#: Probabilities whose quantile ESS and MCSE are reported (Vehtari et al. 2021's 5 %, 50 %, 95 %).
QUANTILE_PROBS = (0.05, 0.5, 0.95)
#: ArviZ's default interval probability (``rcParams["stats.ci_prob"]``), the default of ``arviz_stats.hdi``.
HDI_PROB = 0.89
#: R's ``getOption("ts.eps")``: how near an iteration time counts as on the grid in ``window.mcmc``.
_TS_EPS = 1e-5


def _draws(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"expected draws of shape (chain, draw, n), got shape {x.shape}")
    return x


def _series(x: np.ndarray) -> np.ndarray:
    """``(chain, draw, n)`` -> ``(chain, n, draw)``: each chain's series of a parameter as a row."""
    return np.ascontiguousarray(np.moveaxis(x, 1, 2))


def _window_first(start: float) -> int:
    """1-based first iteration ``window.mcmc(x, start=start)`` keeps (``x`` starting at 1, thin 1).

    coda keeps a time within ``ts.eps`` (relative) of the grid as given and
    rounds it half up; any other time moves to the next iteration.
    """
    near = round(start)
    if abs(near - start) <= abs(start) * _TS_EPS:
        return math.trunc(start + 0.5)
    return math.ceil(start)


def _window_last(end: float) -> int:
    """1-based last iteration ``window.mcmc(x, end=end)`` keeps (a time off the grid moves back)."""
    near = round(end)
    if abs(near - end) <= abs(end) * _TS_EPS:
        return math.trunc(end + 0.5)
    return math.floor(end)


# --------------------------------------------------------------------------- Gelman-Rubin


@dataclass(frozen=True)
class GelmanRubin:
    """``coda::gelman.diag`` for one choice of ``autoburnin``.

    Attributes
    ----------
    psrf, psrf_upper : ndarray, shape (n,)
        Point estimate and upper confidence limit of the potential scale reduction factor.
    mpsrf : float
        Multivariate PSRF over all ``n`` parameters (NaN when ``n == 1``, or
        when the pooled within-chain covariance is not positive definite: coda stops there).
    draws : int
        Draws per chain used (the second half with ``autoburnin``).
    """

    psrf: np.ndarray
    psrf_upper: np.ndarray
    mpsrf: float
    draws: int


def _qf(p: float, df1: float, df2: np.ndarray) -> np.ndarray:
    """R's ``qf(p, df1, df2)``, including ``df2 = Inf`` (the chi-square limit ``qchisq(p, df1) / df1``)."""
    from scipy import special

    df2 = np.asarray(df2, dtype=np.float64)
    out = np.full(df2.shape, np.nan)
    finite = np.isfinite(df2) & (df2 > 0)
    out[finite] = special.fdtri(df1, df2[finite], p)
    out[df2 == np.inf] = special.chdtri(df1, 1.0 - p) / df1
    return out


def gelman_rubin(
    x: np.ndarray, *, autoburnin: bool = True, confidence: float = 0.95, multivariate: bool = True
) -> GelmanRubin:
    """Potential scale reduction factor and its upper confidence limit, as ``coda::gelman.diag``.

    Gelman & Rubin (1992) with coda's arithmetic: ``V = (T-1)/T W + (1 + 1/C) B/T``,
    the degrees-of-freedom correction ``(d + 3)/(d + 1)`` with ``d = 2 V^2 / var(V)``
    (the variance of ``V`` from the sample variances and means of the chains), the
    upper limit from the F quantile ``qf((1 + confidence)/2, C - 1, 2 W^2 / var(W))``.
    The multivariate PSRF (Brooks & Gelman 1998) is
    ``sqrt((1 - 1/T) + (1 + 1/n) lambda_max / T)`` with ``lambda_max`` the largest
    eigenvalue of ``W^{-1} B`` for the ``n x n`` covariance matrices, as coda
    computes it (through the Cholesky factor of ``W``; here from the ``C x C``
    matrix ``D W^{-1} D^T`` of the centered chain means ``D``, which has the
    same non-zero eigenvalues). ``transform = FALSE`` (coda's default).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    autoburnin : bool
        Drop the first half of every chain first (coda's default ``TRUE``):
        ``window(x, start = T/2 + 1)``, i.e. keep iterations ``ceil(T/2 + 1)..T``
        (1-based), when ``T > 2``.
    confidence : float
    multivariate : bool

    Returns
    -------
    GelmanRubin
        NaN everywhere with fewer than two chains (coda stops: "You need at least two chains").
    """
    x = _draws(x)
    c, t, n = x.shape
    if autoburnin and 1 < t / 2:
        x = x[:, _window_first(t / 2 + 1) - 1 :]
    t = x.shape[1]
    nans = np.full(n, np.nan)
    if c < 2 or t < 2:
        return GelmanRubin(nans, nans.copy(), math.nan, t)
    with np.errstate(all="ignore"):
        xbar = x.mean(axis=1)  # (C, n)
        s2 = x.var(axis=1, ddof=1)
        w = s2.mean(axis=0)
        b = t * xbar.var(axis=0, ddof=1)
        muhat = xbar.mean(axis=0)
        var_w = s2.var(axis=0, ddof=1) / c
        var_b = 2 * b**2 / (c - 1)

        def cov(u, v):
            return ((u - u.mean(axis=0)) * (v - v.mean(axis=0))).sum(axis=0) / (c - 1)

        cov_wb = (t / c) * (cov(s2, xbar**2) - 2 * muhat * cov(s2, xbar))
        v = (t - 1) * w / t + (1 + 1 / c) * b / t
        var_v = ((t - 1) ** 2 * var_w + (1 + 1 / c) ** 2 * var_b + 2 * (t - 1) * (1 + 1 / c) * cov_wb) / t**2
        df_v = 2 * v**2 / var_v
        df_adj = (df_v + 3) / (df_v + 1)
        w_df = 2 * w**2 / var_w
        r2_fixed = (t - 1) / t
        r2_random = (1 + 1 / c) * (1 / t) * (b / w)
        psrf = np.sqrt(df_adj * (r2_fixed + r2_random))
        upper = np.sqrt(df_adj * (r2_fixed + _qf((1 + confidence) / 2, c - 1, w_df) * r2_random))
    mpsrf = math.nan
    if multivariate and n > 1:
        mpsrf = _mpsrf(x, xbar)
    return GelmanRubin(psrf, upper, mpsrf, t)


def _mpsrf(x: np.ndarray, xbar: np.ndarray) -> float:
    """Brooks & Gelman's multivariate PSRF of ``(C, T, n)`` draws with chain means ``xbar`` ``(C, n)``."""
    c, t, n = x.shape
    if not np.isfinite(x).all():
        return math.nan
    centered = (x - xbar[:, None, :]).reshape(c * t, n)
    w = centered.T @ centered / ((t - 1) * c)  # mean of the chains' covariance matrices
    try:
        low = np.linalg.cholesky(w)
    except np.linalg.LinAlgError:
        return math.nan  # coda: chol() fails, gelman.diag stops
    from scipy.linalg import solve_triangular

    d = xbar - xbar.mean(axis=0)  # B = T / (C - 1) D^T D
    y = solve_triangular(low, d.T, lower=True)  # L^{-1} D^T, (n, C)
    emax = np.linalg.eigvalsh(t / (c - 1) * (y.T @ y))[-1]
    return float(np.sqrt((1 - 1 / t) + (1 + 1 / n) * emax / t))


# --------------------------------------------------------------------------- Geweke


def geweke(x: np.ndarray, frac1: float = 0.1, frac2: float = 0.5) -> np.ndarray:
    """Geweke's (1992) z-score per chain, as ``coda::geweke.diag``.

    ``z = (mean_A - mean_B) / sqrt(S_A(0)/T_A + S_B(0)/T_B)`` for the first
    ``frac1`` and the last ``frac2`` of each chain, ``S(0)`` the spectral
    density at zero by :func:`~mcmc.diagnostics.spectral.spectrum0_ar`. coda's
    windows: iterations ``1..ceiling(1 + frac1 (T - 1))`` and
    ``floor(T - frac2 (T - 1))..T`` (1-based), so each holds a draw or so more
    than the fraction (101 and 501 draws of 1000).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    frac1, frac2 : float

    Returns
    -------
    ndarray, shape (chain, n)
        NaN for a constant chain (0/0, as coda).
    """
    if not (0 <= frac1 <= 1 and 0 <= frac2 <= 1 and frac1 + frac2 <= 1):
        raise ValueError(f"need 0 <= frac1, frac2 and frac1 + frac2 <= 1, got {frac1}, {frac2}")
    s = _series(_draws(x))
    t = s.shape[-1]
    end_a = _window_last(math.ceil(1 + frac1 * (t - 1)))
    start_b = _window_first(math.floor(t - frac2 * (t - 1)))
    a, b = s[..., :end_a], s[..., start_b - 1 :]
    with np.errstate(all="ignore"):
        var = spectrum0_ar(a)[0] / a.shape[-1] + spectrum0_ar(b)[0] / b.shape[-1]
        return (a.mean(axis=-1) - b.mean(axis=-1)) / np.sqrt(var)


# --------------------------------------------------------------------------- Heidelberger-Welch


def pcramer(q: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Distribution function of the Cramer-von Mises statistic, coda's ``pcramer`` (first four terms).

    ``sum_{k=0}^{3} Gamma(k + 1/2) sqrt(4k + 1) / (Gamma(k + 1) pi^{3/2} sqrt(q))
    exp(-u_k) K_{1/4}(u_k)``, ``u_k = (4k + 1)^2 / (16 q)``, a term dropped
    when ``u_k > -log(eps)`` (Anderson & Darling 1952's series as coda truncates it).

    Parameters
    ----------
    q : ndarray

    Returns
    -------
    ndarray, same shape
    """
    from scipy.special import kv

    q = np.asarray(q, dtype=np.float64)
    out = np.zeros(q.shape)
    with np.errstate(all="ignore"):
        for k in range(4):
            z = math.gamma(k + 0.5) * math.sqrt(4 * k + 1) / (math.gamma(k + 1) * math.pi**1.5 * np.sqrt(q))
            u = (4 * k + 1) ** 2 / (16 * q)
            out = out + np.where(u > -math.log(eps), 0.0, z * np.exp(-u) * kv(0.25, u))
    return out


@dataclass(frozen=True)
class HeidelbergerWelch:
    """``coda::heidel.diag`` per chain and parameter; every array has shape ``(chain, n)``.

    Attributes
    ----------
    stationary : bool
        The Cramer-von Mises test passed for some start (coda's ``stest``).
    start : float
        1-based first iteration kept when stationary (coda's ``start``), NaN otherwise.
    pvalue : float
        ``1 - pcramer(I)`` at the start kept (or the last one tried).
    halfwidth_passed : bool
        ``|halfwidth / mean| <= eps`` (coda's ``htest``); False where not
        stationary (coda: NA; ``to_dict`` gives null there).
    mean, halfwidth : float
        Mean of the kept draws and ``1.96 sqrt(S(0)/n)``; NaN where not stationary (as coda).
    """

    stationary: np.ndarray
    start: np.ndarray
    pvalue: np.ndarray
    halfwidth_passed: np.ndarray
    mean: np.ndarray
    halfwidth: np.ndarray


def heidelberger_welch(x: np.ndarray, eps: float = 0.1, pvalue: float = 0.05) -> HeidelbergerWelch:
    """Heidelberger & Welch's (1983) stationarity and half-width tests per chain, as ``coda::heidel.diag``.

    For the starts ``seq(1, T/2, by = T/10)`` (coda's; 1, 101, ..., 401 for
    ``T = 1000``), the draws from that start, ``n`` of them, give the
    Brownian-bridge statistic ``I = sum_k B_k^2 / (n^2 S0)`` with
    ``B_k = sum_{i<=k} y_i - k ybar`` and ``S0`` the spectral density at zero of
    the second half of the whole chain (iterations ``T/2..T``, window-rounded);
    the first start with ``pcramer(I) < 1 - pvalue`` is kept. The half-width
    test compares ``1.96 sqrt(S(0)/n)`` of the kept draws with ``eps |ybar|``.
    A constant chain gives ``I`` = 0/0 (coda stops with an error there; here: not stationary).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    eps, pvalue : float

    Returns
    -------
    HeidelbergerWelch
    """
    s = _series(_draws(x))
    lead, t = s.shape[:-1], s.shape[-1]
    rows = s.reshape(-1, t)
    m = rows.shape[0]
    # R's seq(from = 1, to = T/2, by = T/10)
    count = int((t / 2 - 1) / (t / 10) + 1e-10) if t >= 2 else 0
    starts = [min(1 + k * (t / 10), t / 2) for k in range(count + 1)]
    first = [_window_first(v) for v in starts]
    with np.errstate(all="ignore"):
        s0 = spectrum0_ar(rows[:, _window_first(t / 2) - 1 :])[0]
        stats_i = []
        for f in first:
            y = rows[:, f - 1 :]
            n = y.shape[-1]
            ybar = y.mean(axis=-1)
            bridge = np.cumsum(y, axis=-1) - ybar[:, None] * np.arange(1.0, n + 1.0)
            stats_i.append((bridge * bridge / (n * s0[:, None])).sum(axis=-1) / n)
        big_i = np.stack(stats_i, axis=-1)  # (m, starts)
        p_cramer = pcramer(big_i)
    passed = p_cramer < 1 - pvalue  # NaN: False
    stationary = passed.any(axis=-1)
    kept = np.where(stationary, passed.argmax(axis=-1), len(first) - 1)
    rows_i = np.arange(m)
    out_p = 1 - p_cramer[rows_i, kept]
    mean = np.full(m, np.nan)
    half = np.full(m, np.nan)
    start = np.full(m, np.nan)
    for k, f in enumerate(first):
        sel = stationary & (kept == k)
        if not sel.any():
            continue
        y = rows[sel, f - 1 :]
        with np.errstate(all="ignore"):
            half[sel] = 1.96 * np.sqrt(spectrum0_ar(y)[0] / y.shape[-1])
        mean[sel] = y.mean(axis=-1)
        start[sel] = f
    ok = stationary & ~np.isnan(half)
    mean[~ok], half[~ok], start[~ok] = np.nan, np.nan, np.nan
    with np.errstate(all="ignore"):
        hw_passed = ok & (np.abs(half / mean) <= eps)
    return HeidelbergerWelch(
        stationary.reshape(lead),
        start.reshape(lead),
        out_p.reshape(lead),
        hw_passed.reshape(lead),
        mean.reshape(lead),
        half.reshape(lead),
    )


# --------------------------------------------------------------------------- Raftery-Lewis


@dataclass(frozen=True)
class RafteryLewis:
    """``coda::raftery.diag`` per chain and parameter; arrays of shape ``(chain, n)``.

    Attributes
    ----------
    burnin : float
        ``M``, the burn-in (iterations).
    total : float
        ``N``, total iterations needed (burn-in included).
    nmin : int
        ``Nmin``, the draws needed were they independent.
    dependence : float
        ``I = N / Nmin`` (coda prints it rounded to 3 significant digits; here unrounded).

    NaN everywhere when the chains are shorter than ``nmin`` (coda returns
    ``"Error"``), and where the fitted transition probabilities are undefined.
    """

    burnin: np.ndarray
    total: np.ndarray
    nmin: int
    dependence: np.ndarray


def raftery_lewis(
    x: np.ndarray, q: float = 0.025, r: float = 0.005, s: float = 0.95, converge_eps: float = 0.001
) -> RafteryLewis:
    """Raftery & Lewis's (1992) run-length diagnostic for the ``q`` quantile, per chain, as ``coda::raftery.diag``.

    The chain is dichotomized at its own ``q`` quantile (type 7); the smallest
    thinning ``k`` at which a first-order Markov chain fits the 0/1 series
    better than a second-order one by BIC (``G^2 - 2 log(n - 2) < 0``) is
    found; the fitted transition probabilities ``alpha``, ``beta`` of the
    ``k``-thinned series give the burn-in
    ``M = ceil(log(eps (alpha + beta) / max(alpha, beta)) / log|1 - alpha - beta|) k``
    and ``N = M + ceil((2 - alpha - beta) alpha beta Phi^{-1}((1+s)/2)^2 / ((alpha + beta)^3 r^2)) k``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    q, r, s, converge_eps : float

    Returns
    -------
    RafteryLewis
    """
    series = _series(_draws(x))
    lead, t = series.shape[:-1], series.shape[-1]
    phi = float(_ranks.norm_ppf(np.array([0.5 * (1 + s)]))[0])
    nmin = int(math.ceil(q * (1 - q) * phi**2 / r**2))
    burn = np.full(lead, np.nan).reshape(-1)
    total = burn.copy()
    if nmin > t:
        return RafteryLewis(burn.reshape(lead), total.reshape(lead), nmin, total.reshape(lead))
    rows = series.reshape(-1, t)
    m = rows.shape[0]
    quant = np.quantile(rows, q, axis=-1)
    dichot = (rows <= quant[:, None]).astype(np.int64)
    kthin = np.zeros(m, dtype=np.int64)
    active = np.ones(m, dtype=bool)
    k = 0
    while active.any():
        k += 1
        d = dichot[active, ::k]
        if d.shape[-1] < 3:
            break  # no pair of transitions left: leave those NaN
        code = 4 * d[:, :-2] + 2 * d[:, 1:-1] + d[:, 2:]
        code += 8 * np.arange(d.shape[0])[:, None]
        counts = np.bincount(code.reshape(-1), minlength=8 * d.shape[0]).reshape(-1, 2, 2, 2).astype(np.float64)
        fitted = counts.sum(axis=3, keepdims=True) * counts.sum(axis=1, keepdims=True)
        fitted = fitted / counts.sum(axis=(1, 3), keepdims=True)
        with np.errstate(all="ignore"):
            terms = np.where(counts != 0, counts * np.log(counts / fitted) * 2, 0.0)
        bic = terms.sum(axis=(1, 2, 3)) - math.log(d.shape[-1] - 2) * 2
        idx = np.flatnonzero(active)
        done = bic < 0
        kthin[idx[done]] = k
        active[idx[done]] = False
    for k in np.unique(kthin[kthin > 0]):
        sel = kthin == k
        d = dichot[sel, ::k]
        pair = 2 * d[:, :-1] + d[:, 1:] + 4 * np.arange(d.shape[0])[:, None]
        tran = np.bincount(pair.reshape(-1), minlength=4 * d.shape[0]).reshape(-1, 2, 2).astype(np.float64)
        with np.errstate(all="ignore"):
            alpha = tran[:, 0, 1] / (tran[:, 0, 0] + tran[:, 0, 1])
            beta = tran[:, 1, 0] / (tran[:, 1, 0] + tran[:, 1, 1])
            tempburn = np.log(converge_eps * (alpha + beta) / np.maximum(alpha, beta)) / np.log(
                np.abs(1 - alpha - beta)
            )
            # as.integer truncates toward zero and gives NA for what does not fit
            nburn = np.trunc(np.ceil(tempburn) * k)
            tempprec = (2 - alpha - beta) * alpha * beta * phi**2 / ((alpha + beta) ** 3 * r**2)
            nkeep = np.trunc(np.ceil(tempprec) * k)
        burn[sel] = np.where(np.isfinite(nburn), nburn, np.nan)
        total[sel] = np.where(np.isfinite(nkeep), nkeep, np.nan) + burn[sel]
    bad = ~np.isfinite(rows).all(axis=-1)  # R's quantile() stops on NA
    burn[bad], total[bad] = np.nan, np.nan
    return RafteryLewis(burn.reshape(lead), total.reshape(lead), nmin, (total / nmin).reshape(lead))


# --------------------------------------------------------------------------- coda's ESS, batch SE, rejection rate


def effective_size_ar(x: np.ndarray) -> np.ndarray:
    """``coda::effectiveSize``: per chain ``T var(x) / S(0)`` (0 where ``S(0) = 0``), summed over chains.

    ``S(0)`` from :func:`~mcmc.diagnostics.spectral.spectrum0_ar`; ``var`` with
    ``ddof = 1``. Unlike the rank ESS of :mod:`.stats` the chains are not
    compared with each other: chains stuck in different places still add up.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
        0 for a constant parameter (as coda).
    """
    s = _series(_draws(x))
    t = s.shape[-1]
    spec = spectrum0_ar(s)[0]
    with np.errstate(all="ignore"):
        per_chain = np.where(spec == 0, 0.0, t * s.var(axis=-1, ddof=1) / spec)
    return per_chain.sum(axis=0)


def batch_se(x: np.ndarray, batch_size: int = 100) -> np.ndarray:
    """Batch-means standard error of the mean, as ``coda::batchSE`` on an ``mcmc.list``.

    Each chain is cut into ``b = T // batch_size`` whole batches (the last
    ``T mod batch_size`` draws unused); with ``m_j`` the ``C b`` batch means and
    ``m`` their mean, ``sd = sqrt(batch_size sum_j (m_j - m)^2 / (C b - 1))``
    and the result is ``sd / sqrt(C T)`` -- coda divides by all draws, not by
    the ``C b batch_size`` it used (a quirk kept here).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    batch_size : int

    Returns
    -------
    ndarray, shape (n,)
        NaN with fewer than two batches in all.
    """
    x = _draws(x)
    c, t, n = x.shape
    nbatch = t // batch_size
    if c * nbatch < 2:
        return np.full(n, np.nan)
    means = x[:, : nbatch * batch_size].reshape(c, nbatch, batch_size, n).mean(axis=2).reshape(c * nbatch, n)
    dev = means - means.mean(axis=0)
    return np.sqrt((dev * dev).sum(axis=0) * batch_size / (c * nbatch - 1)) / np.sqrt(t * c)


def rejection_rate(x: np.ndarray) -> np.ndarray:
    """Fraction of transitions in which a parameter did not change, per chain (``coda::rejectionRate``).

    coda's ``rejectionRate`` of an ``mcmc.list`` is the mean of these over chains.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (chain, n)
        NaN with fewer than two draws.
    """
    x = _draws(x)
    if x.shape[1] < 2:
        return np.full((x.shape[0], x.shape[2]), np.nan)
    return (x[:, 1:] == x[:, :-1]).mean(axis=1)


# --------------------------------------------------------------------------- nested R-hat


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
    draws are rank-normalized over all chains (:func:`mcmc.diagnostics._ranks.z_scale`,
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
    x = _draws(x)
    index = _superchain_index(superchain_ids, x.shape[0])
    parts = _stats._map_blocks(x, lambda block: _rhat_nested_block(block, index))
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


# --------------------------------------------------------------------------- quantiles, HDI


def _quantile_block(w, probs: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Quantile ESS and MCSE ``(len(probs), n)`` of one :class:`mcmc.diagnostics.stats._Work` block."""
    from scipy.stats import beta

    srt = w.sorted
    size = srt.shape[-1]
    ess = np.stack([w.ess_quantile(p) for p in probs]) if probs else np.empty((0, w.n))
    mcse = np.full(ess.shape, np.nan)
    rows = np.arange(w.n)
    for i, p in enumerate(probs):
        raw = w.ess_quantile_raw(p)
        with np.errstate(all="ignore"):
            lo, hi = (
                beta.ppf(prob, raw * p + 1, raw * (1 - p) + 1) * size - 1 for prob in (0.1586553, 0.8413447)
            )
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
    return _stats._by_blocks(_draws(x), lambda w: _quantile_block(w, probs), axis=1)


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
    return _stats._by_blocks(_draws(x), lambda w: _hdi_block(w, prob), axis=1)


# --------------------------------------------------------------------------- emcee's tau


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
    x = _draws(x)
    draws = x.shape[1]
    parts = _stats._map_blocks(x, lambda block: _tau_block(block, c))
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


# --------------------------------------------------------------------------- the report


def _json(value: Any) -> Any:
    """Arrays and numbers as JSON values: lists, ``None`` for NaN and infinities."""
    if isinstance(value, np.ndarray):
        return [_json(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def _label(p: float) -> str:
    from mcmc.diagnostics.report import quantile_label

    return quantile_label(p)


@dataclass(frozen=True)
class ClassicDiagnostics:
    """Everything :func:`classic_report` computes. ``n`` parameters, ``chain`` chains.

    Per parameter, shape ``(n,)`` (``(k, n)`` where noted); per chain and
    parameter, shape ``(chain, n)``. See ``docs/formats.md`` for the JSON of :meth:`to_dict`.
    """

    names: tuple[str, ...]
    chains: int
    draws: int
    #: coda ``gelman.diag`` with ``autoburnin = TRUE`` (coda's default) and without.
    gelman: GelmanRubin
    gelman_all: GelmanRubin
    #: coda ``geweke.diag`` z-scores (frac1 0.1, frac2 0.5), ``(chain, n)``.
    geweke_z: np.ndarray
    #: coda ``heidel.diag`` (eps 0.1, pvalue 0.05), every array ``(chain, n)``.
    heidel: HeidelbergerWelch
    #: coda ``raftery.diag`` (q 0.025, r 0.005, s 0.95), arrays ``(chain, n)``.
    raftery: RafteryLewis
    #: coda ``effectiveSize`` (AR spectral density at zero, summed over chains).
    ess_ar: np.ndarray
    #: coda ``batchSE`` (batches of 100 draws, all chains pooled).
    batch_se: np.ndarray
    #: coda ``rejectionRate`` per chain ``(chain, n)``.
    rejection_rate: np.ndarray
    #: Quantile probabilities of ``ess_quantile`` and ``mcse_quantile`` ``(len(probs), n)``.
    quantile_probs: tuple[float, ...]
    ess_quantile: np.ndarray
    mcse_quantile: np.ndarray
    #: HDI (``arviz_stats.hdi``) and the equal-tailed interval at the same ``hdi_prob``, ``(2, n)``.
    hdi_prob: float
    hdi: np.ndarray
    eti: np.ndarray
    #: emcee's integrated autocorrelation time and whether ``draw >= 50 tau``.
    iat_emcee: np.ndarray
    iat_emcee_reliable: np.ndarray
    #: Nested R-hat ``(n,)`` and the superchain of each chain; None when no superchains were given.
    superchains: tuple[int, ...] | None = None
    rhat_nested: np.ndarray | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``None`` for undefined numbers); layout in ``docs/formats.md``."""
        labels = [_label(p) for p in self.quantile_probs]
        params = []
        for j, name in enumerate(self.names):
            stationary = self.heidel.stationary[:, j]
            params.append(
                {
                    "name": name,
                    "psrf": _json(self.gelman.psrf[j]),
                    "psrf_upper": _json(self.gelman.psrf_upper[j]),
                    "psrf_all": _json(self.gelman_all.psrf[j]),
                    "psrf_all_upper": _json(self.gelman_all.psrf_upper[j]),
                    "rhat_nested": None if self.rhat_nested is None else _json(self.rhat_nested[j]),
                    "ess_ar": _json(self.ess_ar[j]),
                    "batch_se": _json(self.batch_se[j]),
                    "ess_quantile": dict(zip(labels, _json(self.ess_quantile[:, j]), strict=True)),
                    "mcse_quantile": dict(zip(labels, _json(self.mcse_quantile[:, j]), strict=True)),
                    "hdi": _json(self.hdi[:, j]),
                    "eti": _json(self.eti[:, j]),
                    "iat_emcee": _json(self.iat_emcee[j]),
                    "iat_emcee_reliable": _json(self.iat_emcee_reliable[j]),
                    "per_chain": {
                        "geweke_z": _json(self.geweke_z[:, j]),
                        "heidel_stationary": _json(stationary),
                        "heidel_start": _json(self.heidel.start[:, j]),
                        "heidel_pvalue": _json(self.heidel.pvalue[:, j]),
                        "heidel_halfwidth_passed": [
                            bool(p) if s else None
                            for p, s in zip(self.heidel.halfwidth_passed[:, j], stationary, strict=True)
                        ],
                        "heidel_mean": _json(self.heidel.mean[:, j]),
                        "heidel_halfwidth": _json(self.heidel.halfwidth[:, j]),
                        "raftery_burnin": _json(self.raftery.burnin[:, j]),
                        "raftery_total": _json(self.raftery.total[:, j]),
                        "raftery_dependence": _json(self.raftery.dependence[:, j]),
                        "rejection_rate": _json(self.rejection_rate[:, j]),
                    },
                }
            )
        return {
            "chains": self.chains,
            "draws": self.draws,
            "gelman": {
                "draws": self.gelman.draws,
                "mpsrf": _json(self.gelman.mpsrf),
                "draws_all": self.gelman_all.draws,
                "mpsrf_all": _json(self.gelman_all.mpsrf),
                "confidence": 0.95,
            },
            "geweke": {"frac1": 0.1, "frac2": 0.5},
            "heidel": {"eps": 0.1, "pvalue": 0.05},
            "raftery": {"q": 0.025, "r": 0.005, "s": 0.95, "nmin": self.raftery.nmin},
            "batch_size": 100,
            "quantile_probs": list(self.quantile_probs),
            "hdi_prob": self.hdi_prob,
            "superchains": None if self.superchains is None else list(self.superchains),
            "parameters": params,
        }


def classic_report(
    draws: np.ndarray,
    names: Sequence[str],
    superchains: Sequence[int] | int | None = None,
    *,
    quantile_probs: Sequence[float] = QUANTILE_PROBS,
    hdi_prob: float = HDI_PROB,
) -> ClassicDiagnostics:
    """The classic diagnostics of R ``coda`` and the supplementary ones of ArviZ and emcee, all at once.

    Parameters
    ----------
    draws : ndarray, shape (chain, draw, n)
    names : sequence of str, length n
    superchains : int or sequence of int, optional
        Superchain id of each chain, or a number ``K`` of superchains (chains
        ``0..C/K-1`` form the first, and so on; ``C`` must be a multiple of
        ``K``). Nested R-hat is computed only when given.
    quantile_probs : sequence of float
        Quantiles whose ESS and MCSE are reported.
    hdi_prob : float
        Probability of the HDI and of the equal-tailed interval beside it.

    Returns
    -------
    ClassicDiagnostics
    """
    x = _draws(draws)
    c, t, n = x.shape
    names = tuple(names)
    if len(names) != n:
        raise ValueError(f"{len(names)} names for {n} parameters")
    ids = None
    if superchains is not None:
        if isinstance(superchains, (int, np.integer)):
            k = int(superchains)
            if k < 2 or c % k:
                raise ValueError(f"{c} chains cannot form {k} superchains of equal size")
            ids = tuple(int(i) for i in np.repeat(np.arange(k), c // k))
        else:
            ids = tuple(int(i) for i in superchains)
    probs = tuple(float(p) for p in quantile_probs)
    ess_q, mcse_q = quantile_ess_mcse(x, probs)
    tau, reliable = integrated_time(x)
    edge = (1 - hdi_prob) / 2
    return ClassicDiagnostics(
        names=names,
        chains=c,
        draws=t,
        gelman=gelman_rubin(x, autoburnin=True),
        gelman_all=gelman_rubin(x, autoburnin=False),
        geweke_z=geweke(x),
        heidel=heidelberger_welch(x),
        raftery=raftery_lewis(x),
        ess_ar=effective_size_ar(x),
        batch_se=batch_se(x),
        rejection_rate=rejection_rate(x),
        quantile_probs=probs,
        ess_quantile=ess_q,
        mcse_quantile=mcse_q,
        hdi_prob=float(hdi_prob),
        hdi=hdi(x, hdi_prob),
        eti=_stats.quantiles(x, (edge, 1 - edge)),
        iat_emcee=tau,
        iat_emcee_reliable=reliable,
        superchains=ids,
        rhat_nested=None if ids is None else rhat_nested(x, ids),
    )
