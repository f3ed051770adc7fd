"""`mcmc diagnose --plot` and `mcmc lda --plot`: the figures people would rather look at than read.

``diagnose``: trace, rank and autocorrelation plots of a report.

One row per scalar parameter: the traces of every chain; the rank plot
(histogram of each chain's ranks in the pooled draws, which is flat for every
chain when the chains mix, Vehtari et al. 2021); and the chain-averaged
autocorrelation. ``lda``: the log joint per token of every chain over all
iterations, burn-in shaded. Drawn with matplotlib's object API on an Agg canvas (no
pyplot, no global state, no display needed), imported only when asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mcmc.core.errors import UsageError

if TYPE_CHECKING:
    import numpy as np

    from mcmc.diagnostics.report import Report

FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
STATUS_COLOUR = {
    "ok": "#1a7f37", "rhat": "#cf222e", "ess": "#bf8700", "constant": "#0969da", "nan": "#8250df", "inf": "#8250df",
}  # fmt: skip


def image_format(path: str) -> str:
    """matplotlib's format name for ``path``'s extension; :class:`UsageError` if unsupported."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UsageError(f"--plot {path}: unknown image format; use .png, .pdf or .svg")
    return fmt


def plot_report(report: Report, path: str, *, cap: int | None = 8) -> None:
    """Draw the plots of the first ``cap`` parameters of ``report`` (all if ``None``) to ``path``."""
    fmt = image_format(path)

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from mcmc.core.chains import atomic_output
    from mcmc.diagnostics import stats
    from mcmc.diagnostics.report import rank_band, rank_histograms

    params = report.parameters if cap is None else report.parameters[:cap]
    n = len(params)
    x = report.draws[:, :, :n]
    c, d, _ = x.shape
    bins = int(min(20, max(4, d // 25)))
    max_lag = int(min(50, max(1, d - 1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ranks = rank_histograms(x, bins) if d > 1 else np.zeros((n, c, bins))
        if d > 2:
            rho = np.asarray(stats.acf(x, np.arange(max_lag + 1)), dtype=float)
        else:
            rho = np.full((n, max_lag + 1), np.nan)

    height = 1.9 * n + 0.9
    # Fixed margins (inches): constrained layout measured every tick label many times, half the plotting time.
    fig = Figure(figsize=(12, height))
    fig.subplots_adjust(left=0.07, right=0.985, top=1 - 0.8 / height, bottom=0.75 / height, hspace=0.55, wspace=0.18)
    FigureCanvasAgg(fig)
    axes = fig.subplots(n, 3, squeeze=False, gridspec_kw={"width_ratios": [2.4, 1, 1]})
    colours = [f"C{i % 10}" for i in range(c)]
    draws = np.arange(d)
    expected, half = rank_band(d, bins)  # pointwise 99% band of a bin count under uniform ranks
    for row, p in enumerate(params):
        ax_t, ax_r, ax_a = axes[row]
        for ch in range(c):
            ax_t.plot(draws, x[ch, :, row], lw=0.6, alpha=0.8, color=colours[ch], label=f"chain {ch}")
        ax_t.set_ylabel(p.name, fontsize=10, fontweight="bold", color=STATUS_COLOUR.get(p.status, "black"))
        ax_t.set_xlim(0, max(d - 1, 1))
        ax_t.set_title(
            f"{p.status}   R-hat {p.rhat:.3f}   ESS bulk {p.ess_bulk:.0f} / tail {p.ess_tail:.0f}",
            fontsize=8.5,
            loc="left",
            color=STATUS_COLOUR.get(p.status, "black"),
        )
        ax_r.axhspan(expected - half, expected + half, color="0.9", zorder=0)
        ax_r.axhline(expected, color="0.5", lw=0.8, ls="--", zorder=1)
        edges = np.arange(bins + 1)
        for ch in range(c):
            ax_r.stairs(ranks[row, ch], edges, baseline=None, color=colours[ch], lw=1.2)
        ax_r.set_xlim(0, bins)
        ax_r.set_xticks([])
        ax_r.set_ylim(0, max(float(ranks[row].max()) * 1.1, expected + 1.2 * half))
        # One LineCollection instead of a patch per lag: bars cost seconds with 8 rows.
        ax_a.vlines(np.arange(max_lag + 1), 0, np.nan_to_num(rho[row]), color="0.3", lw=2.2)
        ax_a.axhline(0, color="0.3", lw=0.6)
        ax_a.set_xlim(-0.5, max_lag + 0.5)
        ax_a.set_ylim(min(-0.2, float(np.nanmin(rho[row], initial=0.0)) - 0.05), 1.05)
        for ax in (ax_t, ax_r, ax_a):
            ax.tick_params(labelsize=7.5)
            ax.spines[["top", "right"]].set_visible(False)
    axes[0, 1].set_title(f"rank plot ({bins} bins, 99% band)", fontsize=9)
    axes[0, 2].set_title("autocorrelation (chain mean)", fontsize=9)
    axes[-1, 0].set_xlabel("draw", fontsize=8.5)
    axes[-1, 1].set_xlabel("rank of draw in pooled chains", fontsize=8.5)
    axes[-1, 2].set_xlabel("lag", fontsize=8.5)
    if c > 1:  # outside the axes: inside, it hides the very traces one needs to see
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", fontsize=8, ncols=min(c, 8), frameon=False)
    src = ", ".join(report.source) or "input"
    more = len(report.parameters) - n
    suptitle = f"{src}: {c} chain{'s' if c != 1 else ''} x {d} draws"
    if more:
        suptitle += f" (first {n} of {len(report.parameters)} parameters; select others with --var)"
    fig.suptitle(suptitle, fontsize=10, y=1 - 0.15 / height, va="top")
    with atomic_output(path) as fh:
        fig.savefig(fh, format=fmt, dpi=100)


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

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from mcmc.core.chains import atomic_output

    c, n = per_token.shape
    iterations = np.arange(1, n + 1)
    fig = Figure(figsize=(9, 4.6), layout="constrained")
    FigureCanvasAgg(fig)
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
    fig.suptitle(title, fontsize=10)
    with atomic_output(path) as fh:
        fig.savefig(fh, format=fmt, dpi=100)


def plot_predictive(report: object, path: str) -> None:
    """``mcmc sample --target bnn --plot``: the training data, the predictive mean and its 5-95 % band."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    curve = report.curve  # type: ignore[attr-defined]
    names = report.names  # type: ignore[attr-defined]
    fig = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    x = curve.x[:, 0]
    ax.fill_between(x, curve.q5, curve.q95, color="#0969da", alpha=0.2, label="90% predictive band")
    ax.plot(x, curve.mean, color="#0969da", label="predictive mean")
    ax.scatter(report.train_x[:, 0], report.train_y, s=10, color="black", label="training data")  # type: ignore[attr-defined]
    test = report.test  # type: ignore[attr-defined]
    if test is not None and test.outcome is not None:
        ax.scatter(test.x[:, 0], test.outcome, s=14, marker="x", color="#cf222e", label="test data")
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[-1])
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, format=image_format(path))
