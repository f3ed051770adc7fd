"""`mcmc lda --plot`: the log joint per token of every chain over all iterations, burn-in shaded.

Drawn with matplotlib's object API on an Agg canvas, imported only when asked
for. (``diagnose``'s plots are in :mod:`mcmc.cli.render.plot`; this figure
joins them there when ``mcmc lda`` renders an ``LdaRun`` result.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcmc.cli.render.plot import image_format

if TYPE_CHECKING:
    import numpy as np

__all__ = ["image_format", "plot_lda_trace"]


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
