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
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import count, ess, estimate, mcse, num, rhat, z
from mcmc.diagnostics.report.compare import Comparison
from mcmc.diagnostics.report.parameters import Parameter
from mcmc.diagnostics.report.report import Report
from mcmc.diagnostics.report.samplers import SamplerComparison

LIMIT = 60_000  # characters; GitHub's limit on a comment is 65,536
WORST = 20  # rows shown before the <details> block


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


@functools.singledispatch
def render(result: Any, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008 - frozen
    """Write ``result`` (a report or a comparison) as Markdown to ``out``, by its type."""
    raise TypeError(f"no Markdown for a {type(result).__name__}")


def _rows(
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
    w(f"\n### Sampler\n\n| chain | {s.acceptance.label} | divergences | E-BFMI |\n|---:|---:|---:|---:|\n")
    for c in range(report.n_chains):
        div = "" if s.divergences_per_chain is None else str(s.divergences_per_chain[c])
        e = "" if s.ebfmi is None else num(s.ebfmi[c], 3)
        w(f"| {c} | {num(s.acceptance.per_chain[c], 3)} | {div} | {e} |\n")
    total_div = "" if s.divergences is None else f"{s.divergences} ({s.divergence_percent:.2f}%)"
    w(f"| all | {num(s.acceptance.overall, 3)} | {total_div} | |\n\n")
    w(f"{s.acceptance.label.capitalize()}: {s.acceptance.source}.")
    if s.treedepth_hits is not None:
        w(f" Tree depth: {s.treedepth_hits} of {s.transitions} transitions at the maximum {s.max_treedepth}.")
    w("\n\n### Parameters, worst first\n\n")
    q = report.quantile_labels
    cols = ["parameter", "mean", "sd", *q, "mcse_mean", "ess_bulk", "ess_tail", "ess_ssif", "rhat", "status"]
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
            f"`{p.name}`", estimate(p.mean, p.mcse_mean, sig), estimate(p.sd, p.mcse_sd, sig),
            *(estimate(v, p.mcse_mean, sig) for v in p.quantiles.values()),
            mcse(p.mcse_mean, sig), eb, et, es, r, p.status,
        ]  # fmt: skip
        return "| " + " | ".join(cells) + " |\n"

    footer = ""
    if any(p.ssif_disagrees for p in report.parameters):
        footer = "\n(!) ESS by SSIF clears the ESS limit where bulk ESS does not: SSIF assumes an AR(1) chain.\n"
    failing = report.failing()
    lp = [report.log_density] if report.log_density is not None else []
    ids = {id(p) for p in failing}
    items = [*failing, *lp, *(p for p in report.worst_first() if id(p) not in ids)]
    text = "".join(parts)
    text += _rows(head, items, row, LIMIT - len(text) - len(footer)) + footer
    if report.classic_rows:
        classic: list[str] = []
        _classic(report, classic.append)
        text += "".join(classic)
    out.write(text)


@render.register(Comparison)
def _runs(result: Comparison, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    a, b = ", ".join(f"`{s}`" for s in result.a.source) or "A", ", ".join(f"`{s}`" for s in result.b.source) or "B"
    what = "reference" if result.mode == "reference" else "B"
    text = f"## mcmc compare: {a} against {what} {b}\n\n"
    text += f"A: {result.a.n_chains} chains x {result.a.n_draws} draws; B: {result.b.n_chains} x {result.b.n_draws}. "
    text += f"{len(result.parameters)} shared parameters.\n\n**{_esc(result.verdict())}**\n\n"
    for note in result.notes:
        text += f"- note: {_esc(note)}\n"
    for side, names in (("A", result.only_in_a), ("B", result.only_in_b)):
        if names:
            shown = ", ".join(f"`{n}`" for n in names[:20])
            shown += f" and {len(names) - 20} more" if len(names) > 20 else ""
            text += f"- only in {side}: {_esc(shown)}\n"
    text += "\n### Parameters, largest |z| first\n\n"
    head = "| parameter | mean A | mean B | z | sd ratio | z sd | ESS A | ESS B | |\n|---|" + "---:|" * 7 + "---|\n"

    def row(p: Any) -> str:
        zc = z(p.z) if not p.mean_differs else f"**{z(p.z)}**"
        zs = z(p.z_sd) if not p.sd_differs else f"**{z(p.z_sd)}**"
        cells = [f"`{p.name}`", num(p.mean_a), num(p.mean_b), zc, num(p.sd_ratio, 3), zs,
                 ess(p.ess_bulk_a), ess(p.ess_bulk_b), "ok" if p.passed else "FAIL"]  # fmt: skip
        return "| " + " | ".join(cells) + " |\n"

    out.write(text + _rows(head, result.worst_first(), row, LIMIT - len(text)))


@render.register(SamplerComparison)
def _samplers(result: SamplerComparison, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    text = f"## mcmc compare: samplers on `{result.target}` (dim {result.dim})\n\n"
    text += f"{result.chains} chains x {result.draws} draws after {result.warmup} warm-up, seed {result.seed}.\n\n"
    text += f"**{_esc(result.verdict())}**\n\n"
    cols = [
        ("wall time (s)", "wall_time_s", count), ("ESS/s", "ess_per_s", count),
        ("ESS/1k evals", "ess_per_1k_evals", count), ("ESS/1k grads", "ess_per_1k_grads", count),
        ("max R-hat", "rhat_max", rhat),
        ("min ESS bulk", "ess_bulk_min", ess), ("min ESS tail", "ess_tail_min", ess),
        ("acceptance", "acceptance", lambda v: num(v, 3)), ("divergences", "divergences", lambda v: num(v)),
        ("max mean z", "mean_z_max", lambda v: num(v, 3)),
    ]  # fmt: skip
    text += "| sampler | " + " | ".join(c[0] for c in cols) + " |\n|---|" + "---:|" * len(cols) + "\n"
    for r in result.rows:
        d = r.to_dict()
        cells = []
        for _, key, fmt in cols:
            cell = fmt(d[key]) if d[key] is not None else ""
            cells.append(f"**{cell}**" if r.sampler in result.best.get(key, ()) else cell)
        text += f"| {r.sampler} | " + " | ".join(cells) + " |\n"
    text += f"\nBest of each column in bold. Evaluations count a gradient as {result.grad_cost:g} density evaluation"
    text += f"{'s' if result.grad_cost != 1 else ''}.\n"
    for note in result.notes:
        text += f"- note: {_esc(note)}\n"
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
            f"`{r.name}`", f"**{psrf}**" if r.psrf_high else psrf,
            f"**{rhat(r.rhat_nested)}**" if r.nested_high else rhat(r.rhat_nested),
            f"{num(r.geweke_max_abs_z, 2)} ({r.geweke_outside}/{n})", f"{r.heidel_passed}/{n}",
            f"{ess(r.raftery_total_max)} / {num(r.raftery_dependence_max, 3)}", ess(r.ess_ar), mcse(r.batch_se),
            f"{num(r.rejection_min, 2)} to {num(r.rejection_max, 2)}", *(ess(v) for v in r.ess_quantile),
            f"{num(r.hdi[0], 3)} to {num(r.hdi[1], 3)}", f"{num(r.eti[0], 3)} to {num(r.eti[1], 3)}",
            num(r.iat_emcee, 3) + ("" if r.iat_emcee_reliable else " (**no**)"),
        ]  # fmt: skip
        w("| " + " | ".join(row) + " |\n")
