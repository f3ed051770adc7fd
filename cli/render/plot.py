"""`mcmc diagnose --plot` and `mcmc compare --plot`: a report's plots, to an image file.

diagnose: one row per plotted parameter, the worst first (the report's
:class:`~mcmc.diagnostics.report.plots.PlotData` chooses them and says which were left
out): the density of each chain beside its trace (as ArviZ's ``plot_trace``),
divergent transitions marked under the traces; the rank plot (histogram of
each chain's ranks in the pooled draws, flat for every chain when the chains
mix, Vehtari et al. 2021; the two halves of a single chain); and the
chain-averaged autocorrelation. When the file has energies, a last row with
the marginal energy against the energy transitions (ArviZ's ``plot_energy``).
The title is the verdict.

compare: ESS per second and per 1000 evaluations, sampler against sampler;
or the z-score of every shared parameter, run against run.

Everything drawn comes computed in the result object. Drawn with
matplotlib's object API on an Agg canvas (no pyplot, no global state, no
display needed), imported only when a plot is asked for.
"""

from __future__ import annotations

import functools
import io
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.cli.render.common import count, ess, plural, rhat
from mcmc.core.atomic import atomic_output
from mcmc.core.errors import UsageError
from mcmc.diagnostics.report.compare import Comparison
from mcmc.diagnostics.report.report import Report
from mcmc.diagnostics.report.samplers import SamplerComparison

if TYPE_CHECKING:  # start-up: matplotlib (0.3 s) loads only when a figure is drawn, not when its name is checked
    from matplotlib.figure import Figure

    from mcmc.cli.commands.lda import LdaResult
    from mcmc.diagnostics.report.predictive import PredictiveReport

FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
STATUS_COLOUR = {
    "ok": "#1a7f37", "rhat": "#cf222e", "ess": "#bf8700", "constant": "#0969da", "nan": "#8250df", "inf": "#8250df",
}  # fmt: skip
PASS_COLOUR, FAIL_COLOUR = "#1a7f37", "#cf222e"
RUNS_PLOT_MAX = 40  # parameters in a run-against-run z plot, largest |z| first


def image_format(path: str, option: str = "--plot") -> str:
    """matplotlib's format name for ``path``'s extension; :class:`UsageError` if unsupported."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UsageError(f"{option} {path}: unknown image format; use .png, .pdf or .svg")
    return fmt


def render(result: Any, path: str) -> None:
    """Draw ``result``'s plots to ``path`` (written atomically; format by extension)."""
    image_format(path)
    save(figure(result), path)


def save(fig: Figure, path: str) -> None:
    """Write ``fig`` to ``path`` atomically, in the format of its extension."""
    fmt = image_format(path)
    with atomic_output(path) as fh:
        fig.savefig(fh, format=fmt, dpi=100)


def png_bytes(fig: Figure, dpi: int = 90) -> bytes:
    """``fig`` as PNG bytes (for the HTML report)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


@functools.singledispatch
def figure(result: Any) -> Figure:
    """The figure of a diagnose report or a comparison, by the result's type."""
    raise TypeError(f"no plot for a {type(result).__name__}")


def _new(width: float, height: float, **options: Any) -> Figure:
    """A figure on an Agg canvas: no pyplot, no global state, no display."""
    # start-up: matplotlib (0.3 s) only when a figure is drawn
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), **options)
    FigureCanvasAgg(fig)
    return fig


def shown(text: str) -> str:
    """A name or message as matplotlib should draw it: exactly the text, control characters visible
    (:func:`mcmc.cli.text.printable`; a font has no glyph for them) and ``$`` escaped, so no mathtext."""
    from mcmc.cli.text import printable  # start-up: with the figure

    return printable(text).replace("$", r"\$")


def _title(fig: Figure, verdict: str, passed: bool, sub: str, height: float) -> None:
    """The verdict (at most two lines, in the verdict's colour) and a line of context, in the top 0.8 inch."""
    verdict, sub = shown(verdict), shown(sub)
    width = fig.get_figwidth()
    head = textwrap.wrap(verdict, int(width * 11.5), max_lines=2, placeholder=" ...")
    fig.text(0.01, 1 - 0.1 / height, "\n".join(head), fontsize=10.5, fontweight="bold", va="top", linespacing=1.3,
             color=PASS_COLOUR if passed else FAIL_COLOUR)  # fmt: skip
    sub = textwrap.shorten(sub, int(width * 15), placeholder=" ...")
    fig.text(0.01, 1 - 0.56 / height, sub, fontsize=8.5, va="top", color="0.25")


def _tidy(ax: Any) -> None:
    ax.tick_params(labelsize=7.5)
    ax.spines[["top", "right"]].set_visible(False)


#: Chains up to which each gets a legend entry; beyond it (an ensemble's walkers) the colours only tell them apart.
LEGEND_CHAINS = 4


def _lp_row(ax: Any, lp: np.ndarray, warmup: int, colours: list[str]) -> None:
    """The log density of every draw, every chain, against the iteration; the warm-up shaded."""
    c, t = lp.shape
    steps = np.arange(t)
    for ch in range(c):
        ax.plot(steps, lp[ch], lw=0.6, alpha=0.8, color=colours[ch % len(colours)])
    if warmup:
        ax.axvspan(-0.5, warmup - 0.5, color="0.88", zorder=0, label="warm-up")
        ax.text(warmup / 2, 1.0, "warm-up", transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=8,
                color="0.35")  # fmt: skip
        # the warm-up's first draws can be far below: show the draws' range and the end of the climb
        finite = lp[:, warmup:][np.isfinite(lp[:, warmup:])]
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
            pad = 0.5 * (hi - lo) + 1e-9
            seen = lp[np.isfinite(lp)]
            ax.set_ylim(max(float(seen.min()), lo - 4 * pad), hi + pad)
    ax.set_xlim(0, max(t - 1, 1))
    ax.set_title("log density lp per draw, every chain" + (" (warm-up shaded)" if warmup else ""), fontsize=8.5,
                 loc="left")  # fmt: skip
    ax.set_xlabel("iteration" if warmup else "draw", fontsize=8.5)
    _tidy(ax)


@figure.register(Report)
def _report(report: Report) -> Figure:
    return report_figure(report)


def report_figure(report: Report, max_rows: int | None = None) -> Figure:
    """Every plotted row of ``report`` (at most ``max_rows``) in one figure, the verdict as its title.

    One row per parameter: density per chain, trace (divergences marked), rank
    plot and autocorrelation; then lp over warm-up and draws when the file
    keeps its warm-up (``mcmc sample --keep-warmup``), and the energy plot
    when the file has energies.
    """
    data = _data(report)
    params = list(data.parameters if max_rows is None else data.parameters[:max_rows])
    n = len(params)
    c, d, _ = data.draws.shape
    rows = max(n, 1) + (data.energy is not None) + (data.lp is not None)
    height = 1.9 * rows + 1.3
    fig = _new(14, height)
    # Fixed margins (inches): constrained layout measured every tick label many times, half the plotting time.
    fig.subplots_adjust(left=0.06, right=0.985, top=1 - 1.15 / height, bottom=0.75 / height, hspace=0.6, wspace=0.2)
    grid = fig.add_gridspec(rows, 4, width_ratios=[1, 2.4, 1, 1])
    first: list[Any] = []
    for row, p in enumerate(params):
        axes = [fig.add_subplot(grid[row, k]) for k in range(4)]
        first = first or axes
        _row(axes, data, row, p, last=row == n - 1)
    if first:
        _heads(first, data)
    if data.lp is not None:  # kept warm-up draws: lp over warm-up and draws, the warm-up shaded
        _lp_row(fig.add_subplot(grid[max(n, 1), :]), data.lp, data.lp_warmup, [f"C{i % 10}" for i in range(max(c, 2))])
    if data.energy is not None:
        _energy(fig.add_subplot(grid[rows - 1, :2]), report)
    _legend(fig, first, data)
    src = ", ".join(report.source) or "input"
    total = len(report.parameters)
    plotted = [q for q in params if q is not report.log_density]
    lp = " and lp" if len(plotted) < len(params) else ""
    if len(params) < len(data.parameters) or data.omitted:
        left = [*(q.name for q in data.parameters[len(params):] if q is not report.log_density), *data.omitted]
        more = f" and {len(left) - 6} more" if len(left) > 6 else ""
        which = (f"{len(plotted)} of {total} parameters with the lowest ESS" if data.lowest_ess
                 else f"{len(plotted)} worst of {total} parameters")  # fmt: skip
        sub = f"The {which}{lp}; left out: {', '.join(left[:6])}{more} (choose with --var, --plot-max). "
    else:
        sub = f"All {plural(total, 'parameter')}{lp}, {'lowest ESS' if data.lowest_ess else 'worst'} first. "
    sub += f"{plural(c, 'chain')} x {plural(d, 'draw')} of {src}"  # the least needed part goes last
    _title(fig, report.verdict(), report.passed, sub, height)
    return fig


def parameter_figures(report: Report) -> list[tuple[str, Figure]]:
    """One small figure per plotted row (the HTML page's images): every failing parameter can be shown."""
    data = _data(report)
    out = []
    for row, p in enumerate(data.parameters):
        fig = _new(14, 2.35)
        fig.subplots_adjust(left=0.06, right=0.985, top=0.8, bottom=0.2, wspace=0.2)
        grid = fig.add_gridspec(1, 4, width_ratios=[1, 2.4, 1, 1])
        axes = [fig.add_subplot(grid[0, k]) for k in range(4)]
        _row(axes, data, row, p, last=True)
        _heads(axes, data)
        _legend(fig, axes, data, inside=True)
        out.append((p.name, fig))
    return out


def report_images(report: Report) -> list[tuple[str, str, bytes]]:
    """The HTML page's images as ``(kind, title, PNG)``: each plotted parameter, the pair plot, the energy plot."""
    images = [("parameter", name, png_bytes(fig, dpi=80)) for name, fig in parameter_figures(report)]
    pair = pair_figure(report)
    if pair is not None:
        images.insert(0, ("pair", "pair plot", png_bytes(pair, dpi=90)))
    energy = energy_figure(report)
    if energy is not None:
        images.append(("energy", "energy", png_bytes(energy, dpi=90)))
    return images


def energy_figure(report: Report) -> Figure | None:
    """The energy plot alone, when the file has energies."""
    data = _data(report)
    if data.energy is None:
        return None
    fig = _new(7, 2.6)
    fig.subplots_adjust(left=0.04, right=0.98, top=0.85, bottom=0.2)
    _energy(fig.add_subplot(1, 1, 1), report)
    return fig


def pair_figure(report: Report) -> Figure | None:
    """The worst parameter against the model's scale (log axis) or ``lp``, divergent transitions marked."""
    pair = _data(report).pair
    if pair is None:
        return None
    fig = _new(6.5, 4.2)
    fig.subplots_adjust(left=0.13, right=0.97, top=0.9, bottom=0.14)
    ax = fig.add_subplot(1, 1, 1)
    ok = ~pair.divergent
    ax.plot(pair.x[ok], pair.y[ok], ls="", marker=".", ms=2.5, alpha=0.35, color="C0", label="draws")
    if pair.divergent.any():
        ax.plot(pair.x[pair.divergent], pair.y[pair.divergent], ls="", marker="o", ms=4, color=FAIL_COLOUR,
                label=f"divergent ({int(pair.divergent.sum())})")  # fmt: skip
    if pair.y_log:
        ax.set_yscale("log")
    ax.set_xlabel(shown(pair.x_name), fontsize=9)
    ax.set_ylabel(shown(pair.y_name) + (" (log scale)" if pair.y_log else ""), fontsize=9)
    ax.set_title(shown(f"{pair.x_name} against {pair.y_name}"), fontsize=9.5, loc="left")
    ax.legend(fontsize=8, frameon=False, loc="best")
    _tidy(ax)
    return fig


def _data(report: Report) -> Any:
    if report.plot is None:
        raise ValueError("the report carries no plot data: diagnose(..., plot=True) makes it")
    return report.plot


def _row(axes: list[Any], data: Any, row: int, p: Any, *, last: bool) -> None:
    """One parameter's density, trace, rank plot and autocorrelation on ``axes``."""
    ax_d, ax_t, ax_r, ax_a = axes
    x = data.draws
    c, d, _ = x.shape
    many = c > LEGEND_CHAINS
    colours = [f"C{i % 10}" for i in range(max(c, 2))]
    lw, alpha = (0.5, 0.45) if many else (0.6, 0.8)
    colour = STATUS_COLOUR.get(p.status, "black")
    draws = np.arange(d)
    for ch in range(c):
        ax_d.plot(data.density_grid[row], data.density[row, ch], lw=lw + 0.4, alpha=alpha, color=colours[ch])
        ax_t.plot(draws, x[ch, :, row], lw=lw, alpha=alpha, color=colours[ch], label=f"chain {ch}")
    ax_d.set_ylabel(shown(p.name), fontsize=10, fontweight="bold", color=colour)
    ax_d.set_yticks([])
    ax_t.set_xlim(0, max(d - 1, 1))
    div = data.divergent
    if div is not None and div.any():
        lo = ax_t.get_ylim()[0]
        hit = np.flatnonzero(div.any(axis=1))
        for ch in hit:
            at = np.flatnonzero(div[ch])
            ax_t.plot(at, np.full(at.size, lo), ls="", marker="|", ms=9, mew=1.2, color="black",
                      label="divergent" if ch == hit[0] else None)  # fmt: skip
        ax_t.set_ylim(bottom=lo)
    ax_t.set_title(f"{p.status}   R-hat {rhat(p.rhat)}   ESS bulk {ess(p.ess_bulk)} / tail {ess(p.ess_tail)}",
                   fontsize=8.5, loc="left", color=colour)  # fmt: skip
    expected, half, bins = data.expected, data.half_width, data.bins
    ax_r.axhspan(expected - half, expected + half, color="0.88", zorder=0)
    ax_r.axhline(expected, color="0.5", lw=0.8, ls="--", zorder=1)
    edges = np.arange(bins + 1)
    counts = data.ranks[row]
    for k in range(counts.shape[0]):
        ax_r.stairs(counts[k], edges, baseline=None, color=colours[k], lw=1.2 if not many else 0.7,
                    alpha=1.0 if not many else 0.6, label=data.rank_labels[k])  # fmt: skip
    # The band stays in view: a spike far above it is cut at the top and its height written there.
    top = max(expected + 1.6 * half, min(float(counts.max(initial=0)), expected + 4.0 * half)) * 1.08
    if many:  # the band's edges on top of the many lines, which hide its shading
        ax_r.hlines([expected - half, expected + half], 0, bins, colors="0.15", lw=0.9, ls=":", zorder=4)
    ax_r.set_xlim(0, bins)
    ax_r.set_xticks([])
    ax_r.set_ylim(0, top)
    if counts.max(initial=0) > top:
        ax_r.text(bins * 0.98, top * 0.97, f"cut: up to {int(counts.max())}", fontsize=7, ha="right", va="top",
                  color="0.3")  # fmt: skip
    rho = data.acf
    # One LineCollection instead of a patch per lag: bars cost seconds with 8 rows.
    ax_a.vlines(np.arange(data.max_lag + 1), 0, np.nan_to_num(rho[row]), color="0.3", lw=2.2)
    ax_a.axhline(0, color="0.3", lw=0.6)
    ax_a.set_xlim(-0.5, data.max_lag + 0.5)
    ax_a.set_ylim(min(-0.2, float(np.nanmin(rho[row], initial=0.0)) - 0.05), 1.05)
    for ax in axes:
        _tidy(ax)
    if last:
        ax_d.set_xlabel("value", fontsize=8.5)
        ax_t.set_xlabel("draw", fontsize=8.5)
        ax_r.set_xlabel("rank of draw in pooled chains", fontsize=8.5)
        ax_a.set_xlabel("lag", fontsize=8.5)


def _heads(first: list[Any], data: Any) -> None:
    first[0].set_title("density per chain", fontsize=9)
    first[2].set_title(f"rank plot ({data.bins} bins, 99% band)", fontsize=9)
    first[3].set_title("autocorrelation (chain mean)", fontsize=9)
    if data.draws.shape[0] == 1 and len(data.rank_labels) == 2:
        first[2].legend(fontsize=7, frameon=False, loc="lower center")


def _legend(fig: Figure, first: list[Any], data: Any, inside: bool = False) -> None:
    """A legend of the chains when there are a few, and of the divergence marks; none beyond that."""
    if not first:
        return
    handles, labels = first[1].get_legend_handles_labels()
    if data.draws.shape[0] > LEGEND_CHAINS or data.draws.shape[0] == 1:
        keep = [k for k, label in enumerate(labels) if label == "divergent"]
        handles, labels = [handles[k] for k in keep], [labels[k] for k in keep]
    if not labels:
        return
    if inside:
        first[1].legend(handles, labels, fontsize=7, ncols=len(labels), frameon=False, loc="upper right",
                        bbox_to_anchor=(1.0, 1.32))  # fmt: skip
    else:  # outside the axes: inside, it hides the very traces one needs to see
        fig.legend(handles, labels, loc="lower center", fontsize=8, ncols=min(len(labels), 9), frameon=False)


def _energy(ax_e: Any, report: Report) -> None:
    e = report.plot.energy  # type: ignore[union-attr]
    ax_e.fill_between(e.grid, e.marginal, color="C0", alpha=0.35, label="marginal energy")
    ax_e.fill_between(e.grid, e.transition, color="C1", alpha=0.35, label="energy transition")
    ebfmi = report.sampler.ebfmi or ()
    values = ", ".join(f"{v:.2f}" for v in ebfmi[:8]) + (", ..." if len(ebfmi) > 8 else "")
    ax_e.set_title(f"energy (E-BFMI per chain: {values})", fontsize=8.5, loc="left")
    ax_e.set_yticks([])
    ax_e.legend(fontsize=8, frameon=False)
    ax_e.set_xlabel("energy - mean", fontsize=8.5)
    _tidy(ax_e)


@figure.register(SamplerComparison)
def _samplers(result: SamplerComparison) -> Figure:
    rows = result.rows
    names = [r.sampler for r in rows]
    panels = [
        ("ess_per_s", "ESS per second"),
        ("ess_per_1k_grads", "ESS per 1000 gradients"),
        ("ess_per_1k_evals", f"ESS per 1000 evaluations (gradient = {result.grad_cost:g})"),
    ]
    height = 1.1 + 0.45 * max(len(rows), 2) + 0.7
    fig = _new(13, height)
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - 1.05 / height, bottom=0.45 / height, wspace=0.3)
    axes = fig.subplots(1, 3, squeeze=True)
    y = np.arange(len(rows))
    for ax, (key, label) in zip(axes, panels, strict=True):
        values = [getattr(r, key) for r in rows]
        best = set(result.best.get(key, ()))
        vals = np.array([v if v is not None else np.nan for v in values], dtype=float)
        colours = ["#1a7f37" if s in best else "#8c959f" for s in names]
        ax.barh(y, np.nan_to_num(vals), color=colours)
        for yi, v in zip(y, vals, strict=True):
            ax.text(0, yi, f" {count(v)}" if np.isfinite(v) else " n/a (none taken)", va="center", fontsize=8)
        ax.set_yticks(y, [shown(n) for n in names], fontsize=9)
        ax.invert_yaxis()
        ax.set_title(label, fontsize=9, loc="left")
        _tidy(ax)
    sub = f"{result.target} (dim {result.dim}), {plural(result.chains, 'chain')} x {plural(result.draws, 'draw')}, seed {result.seed}; "
    sub += "the worst coordinate's min(bulk, tail) ESS over the sampling phase; best in green"
    _title(fig, result.verdict(), result.passed, sub, height)
    return fig


@figure.register(Comparison)
def _runs(result: Comparison) -> Figure:
    worst = result.worst_first()[:RUNS_PLOT_MAX]
    n = max(len(worst), 1)
    height = 1.7 + 0.22 * n
    fig = _new(10, height)
    fig.subplots_adjust(left=0.25, right=0.97, top=1 - 1.0 / height, bottom=0.6 / height)
    ax = fig.add_subplot()
    y = np.arange(len(worst))
    zs = np.array([p.z for p in worst], dtype=float)
    lim = max(result.max_z * 1.3, float(np.nanmax(np.abs(zs[np.isfinite(zs)]), initial=0.0)) * 1.1, 1.0)
    ax.axvspan(-result.max_z, result.max_z, color="0.92", zorder=0)
    ax.axvline(0, color="0.5", lw=0.8)
    colours = [PASS_COLOUR if p.passed else FAIL_COLOUR for p in worst]
    ax.scatter(np.clip(np.nan_to_num(zs, nan=0.0), -lim, lim), y, c=colours, s=18, zorder=3)
    if result.check_sd:
        zsd = np.array([p.z_sd for p in worst], dtype=float)
        ax.scatter(np.clip(np.nan_to_num(zsd, nan=0.0), -lim, lim), y, marker="x", c="0.3", s=14, zorder=3,
                   label="z of the sd")  # fmt: skip
        ax.legend(fontsize=8, frameon=False)
    ax.set_yticks(y, [shown(p.name) for p in worst], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(-lim, lim)
    ax.set_xlabel(f"z = (mean A - mean B) / sqrt(MCSE_A^2 + MCSE_B^2); band |z| <= {result.max_z:g}", fontsize=8.5)
    _tidy(ax)
    a, b = ", ".join(result.a.source) or "A", ", ".join(result.b.source) or "B"
    left = len(result.parameters) - len(worst)
    sub = f"{a} against {b}: {len(result.parameters)} shared parameters" + (
        f", the {len(worst)} largest |z| shown ({left} left out)" if left else ", largest |z| first"
    )
    _title(fig, result.verdict(), result.passed, sub, height)
    return fig


def plot_lda(result: LdaResult, path: str) -> None:
    """``mcmc lda --plot``: :func:`plot_lda_trace` of a fit, titled by its corpus and model."""
    fit, config = result.run.fit, result.config
    corpus = Path(result.run.source).name if result.run.truth is None else "synthetic corpus"
    chains = f"{fit.chains} chain{'s' if fit.chains != 1 else ''}"
    title = f"{corpus}: K={config.n_topics}, {config.method} Gibbs, {chains}"
    plot_lda_trace(fit.log_joint_per_token, fit.burn_in, path, title=title, rhat=result.report.rhat,
                   ess=result.report.ess_bulk)  # fmt: skip


def plot_lda_trace(
    per_token: np.ndarray, burn_in: int, path: str, *, title: str, rhat: float | None, ess: float | None
) -> None:
    """``mcmc lda --plot``: the log joint per token of every chain at every iteration, burn-in shaded.

    ``per_token`` is ``(chain, iteration)``; ``rhat`` and ``ess`` (of the
    post-burn-in draws, from the fit report) go in the corner. Chains that
    level off at different heights have found different modes, which R-hat
    reports and the picture explains.
    """
    fmt = image_format(path)
    c, n = per_token.shape
    iterations = np.arange(1, n + 1)
    fig = _new(9, 4.6, layout="constrained")
    full, tail = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.6, 1]})
    for ch in range(c):
        full.plot(iterations, per_token[ch], lw=1.0, color=f"C{ch % 10}", label=f"chain {ch}")
        tail.plot(iterations[burn_in:], per_token[ch, burn_in:], lw=0.8, color=f"C{ch % 10}")
    if burn_in:
        full.axvspan(0.5, burn_in + 0.5, color="0.92", zorder=0, label="burn-in")
    full.set_xlim(0.5, n + 0.5)
    full.set_title("every iteration", fontsize=9, loc="left")
    stats = "   ".join(
        f"{label} {value:.3g}" for label, value in (("R-hat", rhat), ("bulk ESS", ess)) if value is not None
    )
    tail.set_title(f"after burn-in   {stats}", fontsize=9, loc="left")
    full.set_ylabel("log p(w, z) per token", fontsize=9)
    for ax in (full, tail):
        ax.set_xlabel("iteration", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    full.legend(fontsize=8, frameon=False, loc="lower right")
    fig.suptitle(shown(title), fontsize=10)
    with atomic_output(path) as fh:
        fig.savefig(fh, format=fmt, dpi=100)


def plot_predictive(report: PredictiveReport, path: str) -> None:
    """``mcmc sample --target bnn --plot``: the training data, the predictive mean and its 5-95 % band."""
    curve: Any = report.curve
    names = report.names
    fig = _new(7, 4.5)
    ax = fig.add_subplot(1, 1, 1)
    x = curve.x[:, 0]
    ax.fill_between(x, curve.q5, curve.q95, color="#0969da", alpha=0.2, label="90% predictive band")
    ax.plot(x, curve.mean, color="#0969da", label="predictive mean")
    ax.scatter(report.train_x[:, 0], report.train_y, s=10, color="black", label="training data")
    test: Any = report.test
    if test is not None and test.outcome is not None:
        ax.scatter(test.x[:, 0], test.outcome, s=14, marker="x", color="#cf222e", label="test data")
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[-1])
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fmt = image_format(path)
    with atomic_output(path) as fh:
        fig.savefig(fh, format=fmt)
