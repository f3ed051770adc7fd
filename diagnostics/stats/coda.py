"""R ``coda``'s convergence diagnostics, batched over parameters, equal to coda 0.19.

* :func:`gelman_rubin` -- ``coda::gelman.diag`` (Gelman & Rubin 1992; Brooks &
  Gelman 1998 for the multivariate PSRF), ``autoburnin`` both ways;
* :func:`geweke` -- ``coda::geweke.diag`` (Geweke 1992), per chain;
* :func:`heidelberger_welch` -- ``coda::heidel.diag`` (Heidelberger & Welch
  1983), per chain, with coda's ``pcramer``;
* :func:`raftery_lewis` -- ``coda::raftery.diag`` (Raftery & Lewis 1992), per chain;
* :func:`effective_size_ar` -- ``coda::effectiveSize``; :func:`batch_se` --
  ``coda::batchSE`` on an ``mcmc.list`` (batches of 100 draws; not
  ``posterior::mcse_mean`` nor ``mcmcse``); :func:`rejection_rate` --
  ``coda::rejectionRate`` per chain.

The loops left run over chains, AR orders, Heidelberger-Welch start points or
Raftery-Lewis thinning steps.

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
NaN from 0/0).

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mcmc.diagnostics.stats import _ranks
from mcmc.diagnostics.stats._layout import as_draws
from mcmc.diagnostics.stats.spectral import spectrum0_ar

#: R's ``getOption("ts.eps")``: how near an iteration time counts as on the grid in ``window.mcmc``.
_TS_EPS = 1e-5


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
    from scipy import special  # start-up: SciPy (0.1-1 s) only for the coda diagnostics that need it

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
    x = as_draws(x)
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
    from scipy.linalg import solve_triangular  # start-up: SciPy (0.1-1 s) only for the coda diagnostics that need it

    d = xbar - xbar.mean(axis=0)  # B = T / (C - 1) D^T D
    y = solve_triangular(low, d.T, lower=True)  # L^{-1} D^T, (n, C)
    emax = np.linalg.eigvalsh(t / (c - 1) * (y.T @ y))[-1]
    return float(np.sqrt((1 - 1 / t) + (1 + 1 / n) * emax / t))


# --------------------------------------------------------------------------- Geweke


def geweke(x: np.ndarray, frac1: float = 0.1, frac2: float = 0.5) -> np.ndarray:
    """Geweke's (1992) z-score per chain, as ``coda::geweke.diag``.

    ``z = (mean_A - mean_B) / sqrt(S_A(0)/T_A + S_B(0)/T_B)`` for the first
    ``frac1`` and the last ``frac2`` of each chain, ``S(0)`` the spectral
    density at zero by :func:`~mcmc.diagnostics.stats.spectral.spectrum0_ar`. coda's
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
    s = _series(as_draws(x))
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
    from scipy.special import kv  # start-up: SciPy (0.1-1 s) only for the coda diagnostics that need it

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
    s = _series(as_draws(x))
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
    series = _series(as_draws(x))
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

    ``S(0)`` from :func:`~mcmc.diagnostics.stats.spectral.spectrum0_ar`; ``var`` with
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
    s = _series(as_draws(x))
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
    x = as_draws(x)
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
    x = as_draws(x)
    if x.shape[1] < 2:
        return np.full((x.shape[0], x.shape[2]), np.nan)
    return (x[:, 1:] == x[:, :-1]).mean(axis=1)
