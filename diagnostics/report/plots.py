"""The data behind the plots of a report, computed here so renderers only draw it.

:func:`plot_data` chooses the parameters to plot (the failing ones worst first, as
:func:`mcmc.diagnostics.report.parameters.rank_failing` ranks them, the log density, then the
lowest ESS), the pair plot of the worst against the model's scale (:class:`PairPlot`)
and computes their rank histograms with a pointwise band (the rank plots of
Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021, Bayesian Analysis 16(2)),
autocorrelations, per-chain kernel density estimates (:func:`kde`, Silverman's
rule) and, when the file has energies, the densities of ArviZ's energy plot
(Betancourt 2016, arXiv:1604.00695).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mcmc.diagnostics import stats
from mcmc.diagnostics.report.parameters import Parameter, rank_failing

#: Most failing parameters a report draws (one image each in the HTML page), whatever ``--plot-max`` says.
FAILING_PLOTS = 50
#: Names of the scale parameters a pair plot sets the worst parameter against (hierarchical models' funnels).
SCALE_NAME = re.compile(r"(tau|sigma|scale|sd|omega|kappa|lambda)(_\w*)?", re.IGNORECASE)


def rank_band(draws: int, bins: int, z: float = 2.576) -> tuple[float, float]:
    """Expected count and half-width of a pointwise band for one chain's rank-histogram bin.

    Under convergence a bin's count is Binomial(``draws``, 1 / ``bins``); the
    band is its normal approximation, ``draws / bins +- z sd`` (``z = 2.576``:
    99 %).

    Returns
    -------
    expected, half_width : float
    """
    p = 1.0 / bins
    return draws * p, z * float(np.sqrt(draws * p * (1.0 - p)))


def rank_histograms(x: np.ndarray, bins: int) -> np.ndarray:
    """Counts of pooled ranks per chain, the data of a rank plot (Vehtari et al. 2021).

    Parameters
    ----------
    x
        Draws ``(chain, draw, n)``.
    bins
        Number of equal-width rank bins.

    Returns
    -------
    ndarray
        ``(n, chain, bins)`` integer counts. Under convergence every chain's
        histogram is uniform with ``draw / bins`` per bin.
    """
    c, d, n = x.shape
    total = c * d
    pooled = x.transpose(2, 0, 1).reshape(n, total)
    order = np.argsort(pooled, axis=1, kind="stable")
    srt = np.take_along_axis(pooled, order, axis=1)
    # Tied draws share their average rank (as in rank normalization), so a
    # discrete or constant parameter does not get a staircase of fake ranks.
    pos = np.broadcast_to(np.arange(total), (n, total))
    starts = np.ones((n, total), dtype=bool)
    starts[:, 1:] = srt[:, 1:] != srt[:, :-1]
    ends = np.ones((n, total), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, pos, total)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((n, total))
    np.put_along_axis(ranks, order, (first + last) / 2.0, axis=1)
    which = np.minimum(((ranks + 0.5) * bins / total).astype(np.int64), bins - 1).reshape(n, c, d)
    counts = np.zeros((n, c, bins), dtype=np.int64)
    np.add.at(counts, (np.arange(n)[:, None, None], np.arange(c)[None, :, None], which), 1)
    return counts


@dataclass(frozen=True)
class EnergyPlot:
    """Densities of ArviZ's ``plot_energy``: the marginal energy against the energy transitions.

    When the transition density is much narrower than the marginal one, a
    chain cannot cross the energy levels the posterior needs in few steps
    (low E-BFMI; Betancourt 2016).

    Attributes
    ----------
    grid : ndarray, shape (G,)
        Where both densities are evaluated.
    marginal : ndarray, shape (G,)
        Density of ``E - mean E`` (per chain), pooled over chains.
    transition : ndarray, shape (G,)
        Density of ``E_n - E_{n-1}``, pooled over chains.
    """

    grid: np.ndarray
    marginal: np.ndarray
    transition: np.ndarray


@dataclass(frozen=True)
class PairPlot:
    """The draws of the worst parameter against the model's scale parameter (or ``lp``), divergences marked.

    The first plot to look at after "19 divergences": divergent transitions
    that gather where the scale is small are the neck of a funnel (Betancourt
    & Girolami 2015). ``y_log``: the scale is positive, shown on a log axis.
    """

    x_name: str
    y_name: str
    x: np.ndarray
    y: np.ndarray
    divergent: np.ndarray
    y_log: bool


@dataclass(frozen=True)
class PlotData:
    """What the plots of a report show, computed once here; renderers only draw it.

    Attributes
    ----------
    names
        The plotted rows: the failing parameters worst first, ``lp``, then the lowest ESS; at most the cap.
    index
        Their positions in ``Report.parameters`` (and the last axis of ``Report.draws``).
    omitted
        The parameters left out by the cap, worst first.
    draws : ndarray, shape (chain, draw, n)
        The draws of the plotted parameters.
    ranks : ndarray, shape (n, k, bins)
        Pooled-rank histogram of each of ``k`` sequences (:func:`rank_histograms`):
        the chains, or the two halves of a single chain (a one-chain rank
        plot would always be flat).
    rank_labels
        The ``k`` sequences' names (``"chain 0"``, ``"1st half"``).
    expected, half_width
        Expected bin count and half-width of its pointwise 99% band (:func:`rank_band`).
    acf : ndarray, shape (n, max_lag + 1)
        Chain-averaged autocorrelation at lags ``0 .. max_lag``.
    density_grid : ndarray, shape (n, G)
        Where the densities of each parameter are evaluated.
    density : ndarray, shape (n, chain, G)
        Kernel density estimate of each chain's draws (:func:`kde`).
    divergent : ndarray of bool, shape (chain, draw), or None
        Transitions that ended in a divergence, when the file records them.
    energy
        The energy plot's densities, when the file has energies.
    parameters
        The :class:`Parameter` of every row, the log density's row (``lp``) among them.
    lowest_ess
        True when no parameter failed: the rows are then the lowest ESS, not the worst.
    pair
        The pair plot (:class:`PairPlot`), when there is a parameter to set against a scale or ``lp``.
    lp : ndarray, shape (chain, warmup + draw), or None
        The log density of every draw of every chain, the kept warm-up draws
        first (``mcmc sample --keep-warmup``), when the file has ``lp``.
    lp_warmup
        How many leading entries of ``lp`` are warm-up (shaded in the plot).
    """

    names: tuple[str, ...]
    ranks: np.ndarray
    expected: float
    half_width: float
    acf: np.ndarray
    index: tuple[int, ...] = ()
    omitted: tuple[str, ...] = ()
    draws: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)), repr=False)
    rank_labels: tuple[str, ...] = ()
    density_grid: np.ndarray = field(default_factory=lambda: np.empty((0, 0)), repr=False)
    density: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)), repr=False)
    divergent: np.ndarray | None = field(default=None, repr=False)
    energy: EnergyPlot | None = None
    parameters: tuple[Parameter, ...] = ()
    lowest_ess: bool = False
    pair: PairPlot | None = field(default=None, repr=False)
    lp: np.ndarray | None = field(default=None, repr=False)
    lp_warmup: int = 0

    @property
    def bins(self) -> int:
        return self.ranks.shape[2]

    @property
    def max_lag(self) -> int:
        return self.acf.shape[1] - 1


def kde(x: np.ndarray, grid_points: int = 200, *, grid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian kernel density estimates of several samples of one quantity, on a shared grid.

    Binned estimate (counts on a fine grid convolved with the kernel, as
    ArviZ's and R's ``density`` do), with one bandwidth for all rows,
    Silverman's rule on the pooled sample, so the rows are comparable.

    Parameters
    ----------
    x : ndarray, shape (k, m)
        ``k`` samples of ``m`` draws (the chains of one parameter).
    grid_points
        Size ``G`` of the grid, which spans the pooled range plus three bandwidths.
    grid : ndarray, shape (G,), optional
        An evenly spaced grid to use instead (draws outside it are left out).

    Returns
    -------
    grid : ndarray, shape (G,)
    density : ndarray, shape (k, G)
        Each row integrates to about 1 over the grid; NaN when the row has
        no finite draw, a spike when every draw is the same value.
    """
    from scipy.ndimage import gaussian_filter1d  # start-up: SciPy (0.1-0.2 s) only when a plot is drawn

    k, m = x.shape
    finite = np.isfinite(x)
    pooled = x[finite]
    if pooled.size == 0:
        return np.zeros(grid_points), np.full((k, grid_points), np.nan)
    sd = float(pooled.std())
    iqr = float(np.subtract(*np.percentile(pooled, [75, 25])))
    spread = min(sd, iqr / 1.349) if iqr > 0 else sd
    h = 0.9 * spread * pooled.size ** (-0.2)
    lo, hi = float(pooled.min()), float(pooled.max())
    if not h > 0:  # one value: no spread to smooth over
        h = max(abs(lo), 1.0) * 1e-3
    if grid is None:
        grid = np.linspace(lo - 3 * h, hi + 3 * h, grid_points)
    lo, dx, size = float(grid[0]), float(grid[1] - grid[0]), grid.size
    cell = np.rint((np.where(finite, x, lo) - lo) / dx).astype(np.int64)
    inside = finite & (cell >= 0) & (cell < size)
    counts = np.zeros((k, size))
    np.add.at(counts, (np.broadcast_to(np.arange(k)[:, None], x.shape), np.clip(cell, 0, size - 1)), inside * 1.0)
    smooth = gaussian_filter1d(counts, h / dx, axis=1, mode="constant", truncate=4.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        density = smooth / (finite.sum(axis=1, keepdims=True) * dx)
    return grid, density


def plot_data(
    draws: np.ndarray,
    parameters: Sequence[Parameter],
    cap: int | None = None,
    *,
    divergent: np.ndarray | None = None,
    energy: np.ndarray | None = None,
    every_failing: bool = False,
    log_density: tuple[Parameter, np.ndarray] | None = None,
    lp: np.ndarray | None = None,
    lp_warmup: int = 0,
) -> PlotData:
    """The plot data of the worst ``cap`` parameters (all when ``None``) of ``draws (chain, draw, n)``.

    Parameters
    ----------
    draws : ndarray, shape (chain, draw, n)
        The report's draws, in the order of ``parameters``.
    parameters
        The report's parameters: the failing ones are plotted first, worst
        first; then, or on a passing run, those with the lowest ESS.
    cap
        Most parameters to plot.
    divergent : ndarray, shape (chain, draw), optional
        The sampler's ``diverging`` statistic.
    energy : ndarray, shape (chain, draw), optional
        The sampler's ``energy`` statistic.
    every_failing
        Plot every failing parameter (up to :data:`FAILING_PLOTS`) even beyond
        ``cap``: the HTML page shows each in an image of its own.
    log_density
        The report's ``lp`` row and its draws ``(chain, draw)``: plotted after
        the failing parameters, as the tables show it.
    lp, lp_warmup
        The log density per draw ``(chain, warmup + draw)``, warm-up first,
        and how many of its draws are warm-up: carried as they are.

    Rank bins: ``draw / 25`` clipped to 4-20 (per half-chain for one chain);
    autocorrelation up to lag 50 (fewer for short chains).
    """
    failing = list(rank_failing(parameters))
    seen = set(failing)
    with np.errstate(invalid="ignore"):
        rest = sorted((i for i in range(len(parameters)) if i not in seen),
                      key=lambda i: (np.nan_to_num(min(parameters[i].ess_bulk, parameters[i].ess_tail), nan=np.inf), i))
    order = failing + rest
    n = len(order) if cap is None else min(cap, len(order))
    if every_failing:
        n = max(n, min(len(failing), FAILING_PLOTS))
    index = order[:n]
    rows = [parameters[i] for i in index]
    x = np.ascontiguousarray(draws[:, :, index])
    if log_density is not None:
        at = sum(1 for i in index if i in seen)  # after the failing ones, as in the tables
        rows.insert(at, log_density[0])
        x = np.concatenate([x[:, :, :at], np.asarray(log_density[1], dtype=float)[:, :, None], x[:, :, at:]], axis=2)
    pair = _pair(draws, parameters, order, divergent, log_density)
    data = _plot_arrays(x, divergent, energy)
    return PlotData(
        names=tuple(p.name for p in rows), index=tuple(index), omitted=tuple(parameters[i].name for i in order[n:]),
        parameters=tuple(rows), lowest_ess=not failing, pair=pair, **data,
        lp=None if lp is None else np.asarray(lp, dtype=float), lp_warmup=int(lp_warmup),
    )  # fmt: skip


def _pair(
    draws: np.ndarray, parameters: Sequence[Parameter], order: Sequence[int], divergent: np.ndarray | None,
    log_density: tuple[Parameter, np.ndarray] | None,
) -> PairPlot | None:
    """The worst parameter against the first scale parameter (by name, positive), else against ``lp``."""
    flat = draws.reshape(-1, draws.shape[2]) if draws.size else draws.reshape(0, 0)
    scale = next((i for i, p in enumerate(parameters) if SCALE_NAME.fullmatch(p.variable) and flat.size
                  and np.all(np.isfinite(flat[:, i])) and np.all(flat[:, i] > 0)), None)  # fmt: skip
    worst = next((i for i in order if i != scale), None)
    if worst is None:
        return None
    div = np.zeros(flat.shape[0], dtype=bool) if divergent is None else (np.asarray(divergent) != 0).reshape(-1)
    if scale is not None:
        y, y_name, y_log = flat[:, scale], parameters[scale].name, True
    elif log_density is not None:
        y, y_name, y_log = np.asarray(log_density[1], dtype=float).reshape(-1), "lp", False
    else:
        return None
    return PairPlot(parameters[worst].name, y_name, flat[:, worst], y, div, y_log)


def _plot_arrays(x: np.ndarray, divergent: np.ndarray | None, energy: np.ndarray | None) -> dict[str, object]:
    """Ranks, autocorrelations, densities and the energy plot of the rows ``x (chain, draw, n)``."""
    n = x.shape[2]
    c, d, _ = x.shape
    if c == 1 and d >= 8:
        # Ranks of one chain in itself are uniform by construction; its halves against each other are not.
        half = d // 2
        seqs = np.concatenate([x[:, :half], x[:, d - half :]], axis=0)
        labels: tuple[str, ...] = ("1st half", "2nd half")
    else:
        seqs, labels = x, tuple(f"chain {i}" for i in range(c))
    ds = seqs.shape[1]
    bins = int(min(20, max(4, ds // 25)))
    max_lag = int(min(50, max(1, d - 1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ranks = rank_histograms(seqs, bins) if ds > 1 else np.zeros((n, seqs.shape[0], bins), dtype=np.int64)
        if d > 2:
            rho = np.asarray(stats.acf(x, np.arange(max_lag + 1)), dtype=float)
        else:
            rho = np.full((n, max_lag + 1), np.nan)
        grids, dens = [], []
        for j in range(n):  # a handful of plotted parameters, each vectorised over chains
            g, f = kde(x[:, :, j])
            grids.append(g)
            dens.append(f)
    expected, half_width = rank_band(ds, bins)
    energy_plot = None
    if energy is not None and energy.shape[1] > 2 and np.isfinite(energy).all():
        marginal = (energy - energy.mean(axis=1, keepdims=True)).reshape(1, -1)
        transition = np.diff(energy, axis=1).reshape(1, -1)
        g, _ = kde(np.concatenate([marginal, transition], axis=1))
        fm, ft = kde(marginal, grid=g)[1], kde(transition, grid=g)[1]
        energy_plot = EnergyPlot(g, fm[0], ft[0])
    return {
        "ranks": ranks, "expected": expected, "half_width": half_width, "acf": rho, "draws": x, "rank_labels": labels,
        "density_grid": np.asarray(grids).reshape(n, -1), "density": np.asarray(dens).reshape(n, c, -1),
        "divergent": None if divergent is None else np.asarray(divergent) != 0, "energy": energy_plot,
    }  # fmt: skip
