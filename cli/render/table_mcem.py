"""The terminal output of ``mcmc sample --mcem``: the trace of theta, and the lines on stderr after the run.

:class:`~mcmc.core.mcem.em.McemResult` lives in core (the result of
:func:`mcmc.cli.commands.sample.mcem_run`); this module registers its table
on :func:`mcmc.cli.render.table.render`, and ``--mcem`` imports it before
rendering. Every estimate shows the digits its Monte Carlo standard error
supports (:func:`mcmc.cli.render.common.estimate`).
"""

from __future__ import annotations

from typing import TextIO

from rich.text import Text

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import console, estimate, mcse, num, plural
from mcmc.cli.render.table import render
from mcmc.core.mcem.em import McemResult


@render.register(McemResult)
def render_mcem(result: McemResult, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """One row per iteration: its draws, theta with MCSE, the M-step's maximum; theta0 first, the final theta last."""
    from rich.table import Table  # start-up: rich's tables only when a table is drawn

    s = result.settings
    con = console(out)
    con.print(Text(f"Monte Carlo EM on {result.model}: {result.sampler} E-steps ({plural(s.chains, 'chain')}, "
                   f"{s.warmup} warm-up each), {plural(s.iterations, 'iteration')}, "
                   f"ceil({s.draws} x {s.growth:g}^t) draws "
                   f"({int(result.draws[0])} .. {int(result.draws[-1])}), seed {s.seed}"),
              soft_wrap=True)  # fmt: skip
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("iter", justify="right")
    table.add_column("draws", justify="right")
    for name in result.parameters:
        table.add_column(name, justify="right")
        table.add_column("MCSE", justify="right")
    table.add_column("avg log lik", justify="right")
    table.add_row("0", "-", *(c for v in result.theta[0] for c in (num(v, 6), "-")), "-")
    for t in range(result.draws.size):
        pairs = (c for v, e in zip(result.theta[t + 1], result.mcse[t], strict=True)
                 for c in (estimate(v, e, options.sig_figs), mcse(e, options.sig_figs)))  # fmt: skip
        table.add_row(str(t + 1), str(int(result.draws[t])), *pairs, num(result.objective[t], 6))
    con.print(table)
    final = ", ".join(f"{n} = {estimate(v, e, options.sig_figs)} (MCSE {mcse(e, options.sig_figs)})"
                      for n, v, e in zip(result.parameters, result.final_theta, result.final_mcse, strict=True))
    con.print(Text(f"final theta: {final}"), soft_wrap=True)


def mcem_summary(result: McemResult, output: str | None, *, seed_given: bool, out: TextIO) -> None:
    """The lines ``--mcem`` prints on stderr: time, where the result went, and M-steps that did not converge."""
    seconds = result.seconds
    lines = [
        f"MCEM: {seconds.get('e_step', 0.0):.2f} s of E-steps, {seconds.get('m_step', 0.0):.2f} s of M-steps"
        + (f"; seed {result.settings.seed} (drawn: repeat with --seed {result.settings.seed})" if not seed_given
           else "")
        + (f" -> {output}" if output is not None else ""),
    ]
    failed = [str(t + 1) for t, ok in enumerate(result.converged) if not ok]
    if failed:
        lines.append(f"warning: the M-step's optimiser reported no convergence at iteration(s) {', '.join(failed)}; "
                     "theta there is its last point")
    con = console(out)
    for line in lines:
        con.print(Text(line), soft_wrap=True)
