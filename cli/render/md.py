"""Markdown output of ``mcmc diagnose`` and ``mcmc compare``: for CI job summaries and pull-request comments.

GitHub-flavoured Markdown: a verdict line, the checks as a list (each failed
one with its advice), a sampler table, then the parameters: the failing ones
worst first, the log density, the rest (estimates to the digits their MCSE
supports, ESS as whole draws, R-hat to 3 decimals, cells the report flags as
failing in bold); then the classic diagnostics when the report has them. GitHub refuses a
comment over 65,536 characters, so a document stays under :data:`LIMIT`
whatever the number of parameters: the worst :data:`WORST` in the open, the
rest in a collapsed ``<details>`` block as far as the budget goes, and a
note of how many were left out (the JSON, CSV and HTML outputs have them all).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import TAIL_ESS_LEGEND, chains_shown, ess, estimate, mcse, num, plural, rhat
from mcmc.cli.text import printable
from mcmc.diagnostics.report.parameters import Parameter
from mcmc.diagnostics.report.report import Report

LIMIT = 60_000  # characters; GitHub's limit on a comment is 65,536
WORST = 20  # rows shown before the <details> block


def esc(text: str) -> str:
    """Text in a Markdown line or table cell: control characters visible, ``|``, ``<`` and backticks escaped."""
    return printable(text).replace("|", "\\|").replace("<", "&lt;").replace("`", "\\`")


def code(name: str) -> str:
    """A name as inline code in a table cell: exactly the name, whatever backticks or ``|`` it holds.

    GitHub ends a table cell at ``|`` even inside a code span, unless it is
    escaped (``\\|``, shown as ``|``); a span holding backticks is fenced by a
    longer run of them.
    """
    text = printable(name).replace("|", "\\|")
    fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


@functools.singledispatch
def render(result: Any, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008 - frozen
    """Write ``result`` (a report or a comparison) as Markdown to ``out``, by its type."""
    raise TypeError(f"no Markdown for a {type(result).__name__}: import the module that shows it")


def table_rows(
    head: str, items: Sequence[Any], row: Callable[[Any], str], budget: int, what: str = "parameters"
) -> str:
    """A table of the first :data:`WORST` items, the rest in ``<details>`` while ``budget`` lasts."""
    text = head + "".join(row(p) for p in items[:WORST])
    rest = items[WORST:]
    if not rest:
        return text
    closing = "\n</details>\n"
    inner, shown = "", 0
    for p in rest:
        line = row(p)
        if len(text) + len(inner) + len(line) + len(head) + 400 > budget:
            break
        inner += line
        shown += 1
    if shown:
        text += f"\n<details><summary>{shown} more {what}</summary>\n\n{head}{inner}{closing}"
    if shown < len(rest):
        text += f"\n{len(rest) - shown} more {what} left out to keep this under {LIMIT:,} characters; "
        text += "the JSON, CSV and HTML reports list them all.\n"
    return text


@render.register(Report)
def _report(report: Report, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    parts: list[str] = []
    w = parts.append
    src = ", ".join(code(s) for s in report.source) or "input"
    w(f"## mcmc diagnose: {src}\n\n")
    w(f"{plural(report.n_chains, 'chain')} x {plural(report.n_draws, 'draw')}, "
      f"{plural(len(report.parameters), 'parameter')}.\n\n")
    w(f"**{esc(report.verdict())}**\n\n")
    w("### Checks\n\n")
    for c in report.checks:
        mark = "pass" if c.passed else ("FAIL" if c.severity == "error" or report.strict else "warn")
        w(f"- **{mark}** {code(c.name)}: {esc(c.message)}\n")
        if c.advice:
            w(f"  - what to do: {esc(c.advice)}\n")
    for note in report.notes:
        w(f"- note: {esc(note)}\n")
    s = report.sampler
    w(f"\n### Sampler\n\n| chain | {s.acceptance.label} | divergences | E-BFMI |\n|---:|---:|---:|---:|\n")
    for c in chains_shown(report):
        div = "" if s.divergences_per_chain is None else str(s.divergences_per_chain[c])
        e = "" if s.ebfmi is None else num(s.ebfmi[c], 3)
        w(f"| {c} | {num(s.acceptance.per_chain[c], 3)} | {div} | {e} |\n")
    total_div = "" if s.divergences is None else f"{s.divergences} ({s.divergence_percent:.2f}%)"
    hidden = report.n_chains - len(chains_shown(report))
    if hidden:
        w(f"| {hidden} more | {num(min(s.acceptance.per_chain), 3)} to {num(max(s.acceptance.per_chain), 3)} | | |\n")
    w(f"| all | {num(s.acceptance.overall, 3)} | {total_div} | |\n\n")
    w(f"{s.acceptance.label.capitalize()}: {s.acceptance.source}.")
    if s.treedepth_hits is not None:
        w(f" Tree depth: {s.treedepth_hits} of {s.transitions} transitions at the maximum {s.max_treedepth}.")
    w("\n\n### Parameters, worst first\n\n")
    q = report.quantile_labels
    tau = ["tau"] if report.ensemble else []  # an ensemble's walkers: emcee's autocorrelation time
    cols = ["parameter", "mean", "sd", *q, "mcse_mean", "ess_bulk", "ess_tail", *tau, "ess_ssif", "rhat", "status"]
    head = "| " + " | ".join(cols) + " |\n|" + "---|" + "---:|" * (len(cols) - 2) + "---|\n"
    sig = options.sig_figs

    def row(p: Parameter) -> str:
        r = rhat(p.rhat)
        if p.status == "rhat":
            r = f"**{r}**"
        eb, et = ess(p.ess_bulk), ess(p.ess_tail)
        if p.ess_bulk_low:
            eb = f"**{eb}**"
        if p.ess_tail_low:
            et = f"**{et}**"
        es = ess(p.ess_ssif) + (" (!)" if p.ssif_disagrees else "")
        cells = [
            code(p.name), estimate(p.mean, p.mcse_mean, sig), estimate(p.sd, p.mcse_sd, sig),
            *(estimate(v, p.quantile_mcse(q), sig) for q, v in p.quantiles.items()),
            mcse(p.mcse_mean, sig), eb, et, *([num(p.iat_emcee, 3)] if tau else []), es, r, p.status,
        ]  # fmt: skip
        return "| " + " | ".join(cells) + " |\n"

    footer = f"\n{esc(TAIL_ESS_LEGEND)}.\n"
    if any(p.ssif_disagrees for p in report.parameters):
        footer += "\n(!) ESS by SSIF clears the ESS limit where bulk ESS does not: SSIF assumes an AR(1) chain.\n"
    failing = report.failing()
    lp = [report.log_density] if report.log_density is not None else []
    ids = {id(p) for p in failing}
    items = [*failing, *lp, *(p for p in report.worst_first() if id(p) not in ids)]
    text = "".join(parts)
    text += table_rows(head, items, row, LIMIT - len(text) - len(footer)) + footer
    if report.classic_rows:
        classic: list[str] = []
        _classic(report, classic.append)
        text += "".join(classic)
    out.write(text)


def _classic(report: Report, w: Any) -> None:
    """The classic diagnostics as one table, chains compacted as in the terminal panel."""
    c = report.classic
    n = report.n_chains
    w("\n### Classic diagnostics\n\n")
    if c is not None:
        w(f"Multivariate PSRF {rhat(c.gelman.mpsrf)} (all draws {rhat(c.gelman_all.mpsrf)}).")
        if c.superchains is not None:
            w(f" Superchains: {' '.join(map(str, c.superchains))}.")
        w("\n\n")
    prob = f"{100 * c.hdi_prob:g}%" if c is not None else ""
    q = [f"ESS {label}" for label in report.quantile_labels]
    cols = [
        "parameter", "PSRF (upper)", "nested R-hat", "Geweke max \\|z\\| (chains > 1.96)", "H-W pass",
        "R-L N / I", "ESS AR", "batch SE", "reject", *q, f"HDI {prob}", f"ETI {prob}", "tau emcee (>= 50 tau)",
    ]  # fmt: skip
    w("| " + " | ".join(cols) + " |\n|" + "---|" + "---:|" * (len(cols) - 1) + "\n")
    for r in report.classic_rows:
        psrf = f"{rhat(r.psrf)} ({rhat(r.psrf_upper)})"
        row = [
            code(r.name), f"**{psrf}**" if r.psrf_high else psrf,
            f"**{rhat(r.rhat_nested)}**" if r.nested_high else rhat(r.rhat_nested),
            f"{num(r.geweke_max_abs_z, 2)} ({r.geweke_outside}/{n})", f"{r.heidel_passed}/{n}",
            f"{ess(r.raftery_total_max)} / {num(r.raftery_dependence_max, 3)}", ess(r.ess_ar), mcse(r.batch_se),
            f"{num(r.rejection_min, 2)} to {num(r.rejection_max, 2)}", *(ess(v) for v in r.ess_quantile),
            f"{num(r.hdi[0], 3)} to {num(r.hdi[1], 3)}", f"{num(r.eti[0], 3)} to {num(r.eti[1], 3)}",
            num(r.iat_emcee, 3) + ("" if r.iat_emcee_reliable else " (**no**)"),
        ]  # fmt: skip
        w("| " + " | ".join(row) + " |\n")
