"""The default terminal output of ``mcmc diagnose``: rich tables and a sampler panel.

The scalar variables share one table, then one table per array variable,
coloured by status; R-hat and ESS cells are
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
from rich.text import Text

from mcmc.cli.render import ess, finite, num, rhat

if TYPE_CHECKING:
    from mcmc.diagnostics.report import Parameter, Report

STATUS_STYLE = {
    "ok": "green", "rhat": "bold red", "ess": "yellow", "constant": "cyan",
    "nan": "bold magenta", "inf": "bold magenta",
}  # fmt: skip


def _console(out: TextIO) -> Console:
    is_tty = hasattr(out, "isatty") and out.isatty()
    # A file or pipe gets a wide fixed width instead of rich's 80 columns, so
    # saved reports keep one row per parameter.
    width = None if is_tty or os.environ.get("COLUMNS") else 160
    return Console(file=out, width=width, highlight=False)


def _groups(report: Report) -> list[tuple[str, list[Parameter]]]:
    """Scalar variables together in one untitled table first, then one table per array variable."""
    scalars: list[Parameter] = []
    arrays: list[tuple[str, list[Parameter]]] = []
    for variable, group in groupby(report.parameters, key=lambda p: p.variable):
        ps = list(group)
        if len(ps) == 1 and ps[0].name == variable:
            scalars.extend(ps)
        else:
            arrays.append((variable, ps))
    return ([("", scalars)] if scalars else []) + arrays


COLUMNS = ("mean", "sd", "mcse", "R-hat", "ESS bulk", "ESS tail", "SSIF", "ESS SSIF", "ACF(1)", "move")


def _cells(report: Report, p: Parameter, lag1: int) -> list[tuple[str, str]]:
    """(text, style) of each cell of one parameter's row."""
    t = report.thresholds
    failing = p.status in ("rhat", "ess")
    return [
        (p.name, "bold"),
        (num(p.mean), ""),
        (num(p.sd), ""),
        *((num(v), "") for v in p.quantiles.values()),
        (num(p.mcse_mean, 2), ""),
        (rhat(p.rhat), "bold red" if p.status == "rhat" else ""),
        (ess(p.ess_bulk), "bold yellow" if failing and not p.ess_bulk >= t.min_ess else ""),
        (ess(p.ess_tail), "bold yellow" if failing and not p.ess_tail >= t.min_ess else ""),
        (num(p.ssif, 3), "dim"),
        (ess(p.ess_ssif) + (" !" if p.ssif_disagrees else "  "), "yellow" if p.ssif_disagrees else "dim"),
        (num(p.acf.get(lag1, float("nan")), 2), ""),
        (num(p.acceptance, 2), ""),
        (p.status, STATUS_STYLE.get(p.status, "")),
    ]


def parameter_table(report: Report, title: str, params: list[Parameter]) -> Text:
    """An aligned table as one rich Text.

    Built by hand rather than with rich.Table, whose per-cell layout takes
    seconds for a thousand parameters; one Text renders in milliseconds.
    """
    header = ["parameter", "mean", "sd", *report.quantile_labels, *COLUMNS[2:], "status"]
    lag1 = 1 if 1 in report.lags else report.lags[0]
    rows = [_cells(report, p, lag1) for p in params]
    widths = [max([len(header[j]), *(len(r[j][0]) for r in rows)]) for j in range(len(header))]
    last = len(header) - 1

    def pad(j: int, text: str) -> str:
        return text.ljust(widths[j]) if j in (0, last) else text.rjust(widths[j])

    out = Text(no_wrap=True, overflow="ignore")
    if title:
        out.append(title + "\n", style="bold underline")
    out.append("  ".join(pad(j, h) for j, h in enumerate(header)).rstrip() + "\n", style="bold")
    out.append("  ".join("\u2500" * w for w in widths) + "\n", style="dim")
    for r in rows:
        for j, (text, style) in enumerate(r):
            if j:
                out.append("  ")
            out.append(pad(j, text) if j != last else text, style=style or None)
        out.append("\n")
    return out


def sampler_panel(report: Report) -> Panel:
    s = report.sampler
    t = report.thresholds
    lines = []
    acc = " ".join(num(a, 3) for a in s.acceptance.per_chain)
    overall = num(s.acceptance.overall, 3)
    lines.append(Text.assemble(("acceptance  ", "bold"), f"{acc}  (all {overall}; {s.acceptance.source})"))
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
                (
                    f"{s.treedepth_hits} of {s.transitions} at the maximum {s.max_treedepth}",
                    "yellow" if bad else "green",
                ),
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
    return Panel(Group(*lines), title=Text(title), title_align="left", expand=False)  # file names verbatim


def render(report: Report, out: TextIO) -> None:
    console = _console(out)
    for title, params in _groups(report):
        console.print(parameter_table(report, title, params), soft_wrap=True)
    console.print(sampler_panel(report))
