"""Markdown output of ``mcmc diagnose``: for CI job summaries and pull-request comments.

GitHub-flavoured Markdown: a verdict line, the checks as a list, a sampler
table and one parameter table (ESS as whole draws, R-hat to 3 decimals,
cells the report flags as failing in bold).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from mcmc.cli.render.common import ess, num, rhat

if TYPE_CHECKING:
    from mcmc.diagnostics.report import Report


def _esc(text: str) -> str:
    return text.replace("|", "\\|")


def render(report: Report, out: TextIO) -> None:
    t = report.thresholds
    w = out.write
    src = ", ".join(f"`{s}`" for s in report.source) or "input"
    w(f"## mcmc diagnose: {src}\n\n")
    w(f"{report.n_chains} chains x {report.n_draws} draws, {len(report.parameters)} parameters.\n\n")
    w(f"**{_esc(report.verdict())}**\n\n")
    w("### Checks\n\n")
    for c in report.checks:
        mark = "pass" if c.passed else ("FAIL" if c.severity == "error" else "warn")
        w(f"- **{mark}** `{c.name}`: {_esc(c.message)}\n")
    for note in report.notes:
        w(f"- note: {_esc(note)}\n")
    s = report.sampler
    w("\n### Sampler\n\n| chain | acceptance | divergences | E-BFMI |\n|---:|---:|---:|---:|\n")
    for c in range(report.n_chains):
        div = "" if s.divergences_per_chain is None else str(s.divergences_per_chain[c])
        e = "" if s.ebfmi is None else num(s.ebfmi[c], 3)
        w(f"| {c} | {num(s.acceptance.per_chain[c], 3)} | {div} | {e} |\n")
    total_div = "" if s.divergences is None else f"{s.divergences} ({s.divergence_percent:.2f}%)"
    w(f"| all | {num(s.acceptance.overall, 3)} | {total_div} | |\n\n")
    w(f"Acceptance: {s.acceptance.source}.")
    if s.treedepth_hits is not None:
        w(f" Tree depth: {s.treedepth_hits} of {s.transitions} transitions at the maximum {s.max_treedepth}.")
    w("\n\n### Parameters\n\n")
    q = report.quantile_labels
    cols = ["parameter", "mean", "sd", *q, "mcse_mean", "ess_bulk", "ess_tail", "ess_ssif", "rhat", "status"]
    w("| " + " | ".join(cols) + " |\n|" + "---|" + "---:|" * (len(cols) - 2) + "---|\n")
    for p in report.parameters:
        r = rhat(p.rhat)
        if p.status == "rhat":
            r = f"**{r}**"
        eb, et = ess(p.ess_bulk), ess(p.ess_tail)
        if p.ess_bulk_low:
            eb = f"**{eb}**"
        if p.ess_tail_low:
            et = f"**{et}**"
        es = ess(p.ess_ssif) + (" (!)" if p.ssif_disagrees else "")
        row = [
            f"`{p.name}`", num(p.mean), num(p.sd), *(num(v) for v in p.quantiles.values()),
            num(p.mcse_mean, 2), eb, et, es, r, p.status,
        ]  # fmt: skip
        w("| " + " | ".join(row) + " |\n")
    if any(p.ssif_disagrees for p in report.parameters):
        w(f"\n(!) ESS by SSIF differs from bulk ESS by more than {t.ssif_ratio:g}x: SSIF assumes an AR(1) chain.\n")
