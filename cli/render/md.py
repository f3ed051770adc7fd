"""Markdown output of ``mcmc diagnose``: for CI job summaries and pull-request comments.

GitHub-flavoured Markdown: a verdict line, the checks as a list (each failed
one with its advice), a sampler table and one parameter table, the failing
parameters first and worst first, the log density leading the rest
(estimates to the digits their MCSE supports, ESS as whole draws, R-hat to 3
decimals, cells the report flags as failing in bold); then the classic
diagnostics when the report has them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from mcmc.cli.render.common import ess, estimate, mcse, num, rhat

if TYPE_CHECKING:
    from mcmc.diagnostics.report import Report


def _esc(text: str) -> str:
    return text.replace("|", "\\|")


def render(report: Report, out: TextIO) -> None:
    w = out.write
    src = ", ".join(f"`{s}`" for s in report.source) or "input"
    w(f"## mcmc diagnose: {src}\n\n")
    w(f"{report.n_chains} chains x {report.n_draws} draws, {len(report.parameters)} parameters.\n\n")
    w(f"**{_esc(report.verdict())}**\n\n")
    w("### Checks\n\n")
    for c in report.checks:
        mark = "pass" if c.passed else ("FAIL" if c.severity == "error" or report.strict else "warn")
        w(f"- **{mark}** `{c.name}`: {_esc(c.message)}\n")
        if c.advice:
            w(f"  - what to do: {_esc(c.advice)}\n")
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
    sig = report.sig_figs
    failing = report.failing()
    ids = {id(p) for p in failing}
    first = [report.log_density] if report.log_density is not None else []
    for p in [*failing, *first, *(p for p in report.parameters if id(p) not in ids)]:
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
            f"`{p.name}`", estimate(p.mean, p.mcse_mean, sig), estimate(p.sd, p.mcse_sd, sig),
            *(estimate(v, p.mcse_mean, sig) for v in p.quantiles.values()),
            mcse(p.mcse_mean, sig), eb, et, es, r, p.status,
        ]  # fmt: skip
        w("| " + " | ".join(row) + " |\n")
    if any(p.ssif_disagrees for p in report.parameters):
        w("\n(!) ESS by SSIF clears the ESS limit where bulk ESS does not: SSIF assumes an AR(1) chain.\n")
    if report.classic_rows:
        _classic(report, w)


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
            f"`{r.name}`", f"**{psrf}**" if r.psrf_high else psrf,
            f"**{rhat(r.rhat_nested)}**" if r.nested_high else rhat(r.rhat_nested),
            f"{num(r.geweke_max_abs_z, 2)} ({r.geweke_outside}/{n})", f"{r.heidel_passed}/{n}",
            f"{ess(r.raftery_total_max)} / {num(r.raftery_dependence_max, 3)}", ess(r.ess_ar), mcse(r.batch_se),
            f"{num(r.rejection_min, 2)} to {num(r.rejection_max, 2)}", *(ess(v) for v in r.ess_quantile),
            f"{num(r.hdi[0], 3)} to {num(r.hdi[1], 3)}", f"{num(r.eti[0], 3)} to {num(r.eti[1], 3)}",
            num(r.iat_emcee, 3) + ("" if r.iat_emcee_reliable else " (**no**)"),
        ]  # fmt: skip
        w("| " + " | ".join(row) + " |\n")
