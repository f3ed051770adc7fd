"""Markdown of ``mcmc compare``: a run against a run or reference draws, and samplers head to head.

Registered on :func:`mcmc.cli.render.md.render` by the types it shows
(:class:`~mcmc.diagnostics.report.compare.Comparison`,
:class:`~mcmc.diagnostics.report.samplers.SamplerComparison`), with
:mod:`.md`'s budget of 60,000 characters; ``mcmc compare`` imports it, so
``mcmc diagnose -f md`` does not load the comparison types.
"""

from __future__ import annotations

from typing import Any, TextIO

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import count, ess, num, plural, rhat, z
from mcmc.cli.render.md import LIMIT, code, esc, render, table_rows
from mcmc.diagnostics.report.compare import Comparison
from mcmc.diagnostics.report.samplers import SamplerComparison


@render.register(Comparison)
def _runs(result: Comparison, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    a, b = ", ".join(map(code, result.a.source)) or "A", ", ".join(map(code, result.b.source)) or "B"
    what = "reference" if result.mode == "reference" else "B"
    text = f"## mcmc compare: {a} (A) against {b} ({what})\n\n"
    text += (f"A: {plural(result.a.n_chains, 'chain')} x {plural(result.a.n_draws, 'draw')}; "
             f"{what}: {plural(result.b.n_chains, 'chain')} x {plural(result.b.n_draws, 'draw')}. ")
    text += f"{len(result.parameters)} shared parameters.\n\n**{esc(result.verdict())}**\n\n"
    for note in result.notes:
        text += f"- note: {esc(note)}\n"
    for side, names in (("A", result.only_in_a), ("B", result.only_in_b)):
        if names:
            shown = ", ".join(map(code, names[:20]))
            shown += f" and {len(names) - 20} more" if len(names) > 20 else ""
            text += f"- only in {side}: {shown}\n"
    text += "\n### Parameters, largest |z| first\n\n"
    head = "| parameter | mean A | mean B | z | sd ratio | z sd | ESS A | ESS B | |\n|---|" + "---:|" * 7 + "---|\n"

    def row(p: Any) -> str:
        zc = z(p.z) if not p.mean_differs else f"**{z(p.z)}**"
        zs = z(p.z_sd) if not p.sd_differs else f"**{z(p.z_sd)}**"
        cells = [code(p.name), num(p.mean_a), num(p.mean_b), zc, num(p.sd_ratio, 3), zs,
                 ess(p.ess_bulk_a), ess(p.ess_bulk_b), "ok" if p.passed else "FAIL"]  # fmt: skip
        return "| " + " | ".join(cells) + " |\n"

    out.write(text + table_rows(head, result.worst_first(), row, LIMIT - len(text)))


@render.register(SamplerComparison)
def _samplers(result: SamplerComparison, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    text = f"## mcmc compare: samplers on {code(result.target)} (dim {result.dim})\n\n"
    text += (f"{plural(result.chains, 'chain')} x {plural(result.draws, 'draw')} after {result.warmup} warm-up, "
             f"seed {result.seed}.\n\n")
    text += f"**{esc(result.verdict())}**\n\n"
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
        text += f"- note: {esc(note)}\n"
    out.write(text)
