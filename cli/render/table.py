"""The default terminal output of ``mcmc diagnose``: rich tables and a sampler panel.

One table per variable (a scalar variable is a one-row table; consecutive
scalars share one table), coloured by status; R-hat and ESS cells are
highlighted when they fail their threshold; ESS by SSIF sits beside bulk and
tail ESS and is marked when it disagrees with bulk ESS. The verdict line is not
written here: the command prints it on stderr for every format.
"""

from __future__ import annotations

import os
from itertools import groupby
from typing import TYPE_CHECKING, TextIO

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from mcmc.cli.render import ess, finite, num, rhat

if TYPE_CHECKING:
    from mcmc.diagnostics.report import Parameter, Report

STATUS_STYLE = {"ok": "green", "rhat": "bold red", "ess": "yellow", "constant": "cyan", "nan": "bold magenta", "inf": "bold magenta"}


def _console(out: TextIO) -> Console:
    is_tty = hasattr(out, "isatty") and out.isatty()
    # A file or pipe gets a wide fixed width instead of rich's 80 columns, so
    # saved reports keep one row per parameter.
    width = None if is_tty or os.environ.get("COLUMNS") else 160
    return Console(file=out, width=width, highlight=False)


def _groups(report: Report) -> list[tuple[str, list[Parameter]]]:
    """Parameters grouped by variable; runs of scalar variables share a group."""
    out: list[tuple[str, list[Parameter]]] = []
    for variable, ps in groupby(report.parameters, key=lambda p: p.variable):
        ps = list(ps)
        scalar = len(ps) == 1 and ps[0].name == variable
        if scalar and out and out[-1][0] == "":
            out[-1][1].extend(ps)
        else:
            out.append(("" if scalar else variable, ps))
    return out


def parameter_table(report: Report, title: str, params: list[Parameter]) -> Table:
    t = report.thresholds
    table = Table(title=title or None, title_justify="left", title_style="bold", header_style="bold")
    table.add_column("parameter", no_wrap=True)
    for col in ("mean", "sd", *report.quantile_labels, "mcse", "R-hat", "ESS bulk", "ESS tail", "SSIF", "ESS SSIF", "ACF(1)", "move"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    lag1 = 1 if 1 in report.lags else report.lags[0]
    for p in params:
        r = Text(rhat(p.rhat), style="bold red" if not (finite(p.rhat) and p.rhat <= t.max_rhat) and p.status == "rhat" else "")
        eb = Text(ess(p.ess_bulk), style="bold yellow" if p.status in ("rhat", "ess") and not p.ess_bulk >= t.min_ess else "")
        et = Text(ess(p.ess_tail), style="bold yellow" if p.status in ("rhat", "ess") and not p.ess_tail >= t.min_ess else "")
        es = Text(ess(p.ess_ssif) + (" !" if p.ssif_disagrees else ""), style="yellow" if p.ssif_disagrees else "dim")
        table.add_row(
            p.name,
            num(p.mean),
            num(p.sd),
            *(num(v) for v in p.quantiles.values()),
            num(p.mcse_mean, 2),
            r,
            eb,
            et,
            Text(num(p.ssif, 3), style="dim"),
            es,
            num(p.acf.get(lag1, float("nan")), 2),
            num(p.acceptance, 2),
            Text(p.status, style=STATUS_STYLE.get(p.status, "")),
        )
    return table


def sampler_panel(report: Report) -> Panel:
    s = report.sampler
    t = report.thresholds
    lines = []
    acc = " ".join(num(a, 3) for a in s.acceptance.per_chain)
    lines.append(Text.assemble(("acceptance  ", "bold"), f"{acc}  (all {num(s.acceptance.overall, 3)}; {s.acceptance.source})"))
    if s.divergences is not None:
        bad = s.divergences > t.max_divergences
        per = " ".join(map(str, s.divergences_per_chain or ()))
        lines.append(
            Text.assemble(
                ("divergences ", "bold"),
                (f"{s.divergences} of {s.transitions} ({s.divergence_percent:.2f}%)", "bold red" if bad else "green"),
                f"  per chain: {per}",
            )
        )
    if s.treedepth_hits is not None:
        bad = s.treedepth_hits > t.max_treedepth_hits
        lines.append(
            Text.assemble(
                ("tree depth  ", "bold"),
                (f"{s.treedepth_hits} of {s.transitions} at the maximum {s.max_treedepth}", "yellow" if bad else "green"),
            )
        )
    if s.ebfmi is not None:
        parts: list[tuple[str, str] | str] = [("E-BFMI      ", "bold")]
        for e in s.ebfmi:
            parts.append((num(e, 2) + " ", "green" if finite(e) and e >= t.min_ebfmi else "bold red"))
        parts.append(f" (threshold {t.min_ebfmi:g})")
        lines.append(Text.assemble(*parts))
    for c in report.checks:
        if c.severity == "warning" and not c.passed and c.name != "treedepth":
            lines.append(Text(f"warning: {c.message}", style="yellow"))
    for note in report.notes:
        lines.append(Text(f"note: {note}", style="dim"))
    src = ", ".join(report.source) or "input"
    title = f"sampler: {src}, {report.n_chains} chain{'s' if report.n_chains != 1 else ''} x {report.n_draws} draws"
    return Panel(Group(*lines), title=title, title_align="left", expand=False)


def render(report: Report, out: TextIO) -> None:
    console = _console(out)
    for title, params in _groups(report):
        console.print(parameter_table(report, title, params))
    console.print(sampler_panel(report))
