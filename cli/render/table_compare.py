"""The terminal output of ``mcmc compare``: samplers head to head, one column each
(:class:`~mcmc.diagnostics.report.samplers.SamplerComparison`), and one run against another or against
reference draws, one row per parameter (:class:`~mcmc.diagnostics.report.compare.Comparison`); both registered
on :func:`mcmc.cli.render.table.render`."""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Group
from rich.text import Text

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import coloured, console, count, ess, names, plural, z
from mcmc.cli.text import printable
from mcmc.cli.render.table import render
from mcmc.diagnostics.report.compare import Comparison
from mcmc.diagnostics.report.samplers import SamplerComparison


@render.register(SamplerComparison)
def render_samplers(result: SamplerComparison, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """One column per sampler, one row per measure: fits a terminal for any sensible number of samplers."""
    from rich import box  # start-up: rich's tables (17 ms) only when this table is drawn
    from rich.table import Table  # start-up: rich's tables (17 ms) only when this table is drawn

    def fixed(digits: int) -> Any:
        return lambda v: "-" if v is None else f"{v:.{digits}f}"

    measures = [
        ("wall_time_s", "time (s)", fixed(2)),
        ("n_density_evals", "density evaluations", lambda v: f"{v:,}"),
        ("n_gradient_evals", "gradient evaluations", lambda v: f"{v:,}"),
        ("rhat_max", "max R-hat", fixed(3)),
        ("ess_bulk_min", "min bulk ESS", fixed(0)),
        ("ess_tail_min", "min tail ESS", fixed(0)),
        ("ess_per_s", "ESS per second", count),
        ("ess_per_1k_evals", "ESS per 1000 evaluations", count),
        ("acf1_max", "max lag-1 autocorrelation", lambda v: "-" if v is None else f"{v:.2f}"),
        ("iat_max", "max autocorrelation time", lambda v: "-" if v is None else f"{v:.1f}"),
        ("acceptance", "acceptance rate", lambda v: count(v, 2)),  # rejection on a network: 0.0036
        ("divergences", "divergences", lambda v: "-" if v is None else str(v)),
        ("passed", "checks of mcmc diagnose", lambda v: "pass" if v else "FAIL"),
    ]
    if result.exact_moments:
        measures += [
            ("mean_z_max", "max |mean - exact| / MCSE", lambda v: count(v, 2)),
            ("sd_z_max", "max |sd - exact| / MCSE", lambda v: count(v, 2)),
        ]
    failing = {
        "rhat_max": {r.sampler for r in result.rows if r.summary.rhat_ok is False},
        "passed": {r.sampler for r in result.rows if not r.summary.passed},
        "mean_z_max": set(result.mean_off),
        "sd_z_max": set(result.sd_off),
    }
    opts = ", ".join(f"{k}={v}" for k, v in result.target_options.items())
    seed_note = "" if result.seed_given else " (random; pass --seed to repeat)"
    title = (
        f"{printable(result.target)}{f' ({printable(opts)})' if opts else ''}: {plural(result.chains, 'chain')} x "
        f"{plural(result.draws, 'draw')} (+{result.warmup} warm-up), seed {result.seed}{seed_note}"
    )
    con = console(out)
    colour = coloured(con)  # without colour the best cell is marked with a star
    table = Table(header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("", no_wrap=True)
    records = [r.to_dict() for r in result.rows]
    for row in records:
        table.add_column(row["sampler"], justify="right", no_wrap=True)
    for key, label, show in measures:
        cells = []
        for row in records:
            style, mark = "", "" if colour else " "
            if row["sampler"] in result.best.get(key, ()):
                style, mark = "bold green", "" if colour else "*"
            elif row["sampler"] in failing.get(key, ()):
                style = "bold red"
            cells.append(Text(show(row[key]) + mark, style=style))
        table.add_row(label, *cells)
    g = result.grad_cost
    caption = (
        "ESS: the worst coordinate's min(bulk, tail). Per second and per evaluation: sampling phase only, "
        f"a gradient counting as {g:g} density evaluation{'s' if g != 1 else ''}. Time and evaluation "
        f"counts include warm-up. {'Best in green' if colour else 'Best marked *'}."
    )
    con.print(Group(Text(title, style="bold"), table, Text(caption, style="dim")))


@render.register(Comparison)
def render_runs(result: Comparison, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """One row per shared parameter: both means, z, the sd ratio and its z, both bulk ESS."""
    from rich.table import Table  # start-up: rich's tables (17 ms) only when this table is drawn

    b_label = "ref" if result.mode == "reference" else "B"
    head = Text()
    for side, label in ((result.a, "A"), (result.b, b_label)):
        head.append(f"{label}: ", style="bold")
        head.append(f"{printable(', '.join(side.source))} ({plural(side.n_chains, 'chain')} x "
                    f"{plural(side.n_draws, 'draw')})\n")
    head.rstrip()
    table = Table(header_style="bold")
    for label in ("parameter", "mean A", f"mean {b_label}", "z", f"sd A / sd {b_label}", "z sd", "ESS A",
                  f"ESS {b_label}"):  # fmt: skip
        table.add_column(label, justify="left" if label == "parameter" else "right")
    for p in result.parameters:
        table.add_row(
            Text(printable(p.name), style="bold"),
            count(p.mean_a, 4),
            count(p.mean_b, 4),
            Text(z(p.z), style="bold red" if p.mean_differs else ""),
            count(p.sd_ratio, 3),
            Text(z(p.z_sd), style="bold red" if p.sd_differs else "dim"),
            ess(p.ess_bulk_a),
            ess(p.ess_bulk_b),
        )
    extra = []
    if result.only_in_a:
        extra.append(f"only in A: {printable(names(result.only_in_a))}")
    if result.only_in_b:
        extra.append(f"only in {b_label}: {printable(names(result.only_in_b))}")
    caption = "z = (mean A - mean B) / sqrt(MCSE_A^2 + MCSE_B^2); ESS is bulk ESS."
    table.caption = Text(caption + ("  " + "; ".join(extra) if extra else ""))  # names verbatim, not markup
    table.caption_justify = "left"
    console(out).print(Group(head, table))
