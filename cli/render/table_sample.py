"""The terminal output of ``mcmc sample`` (:class:`~mcmc.cli.commands.sample.SampleResult`), a few lines for stderr.

The run summary; for a Bayesian network, the evidence, the blocks gibbs drew
through their junction trees (nodes and largest clique), the marginals of the
shown nodes (estimate, MCSE, the exact value and ``|z|`` when asked for, ESS,
R-hat) and the warnings about deterministic tables; for a finite Markov chain,
its exact analysis beside the simulated frequencies. Registered on
:func:`mcmc.cli.render.table.render`.
"""

from __future__ import annotations

from typing import Any, TextIO

from rich.text import Text

from mcmc.cli.commands.sample import SampleResult
from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import console, count, ess, estimate, mcse, num, plural, rhat
from mcmc.cli.render.table import render
from mcmc.cli.text import printable


def _markup(text: object) -> str:
    """A user's name or path in rich markup: exactly as given, control characters visible."""
    from rich.markup import escape  # start-up: rich's markup only when a summary is drawn

    return escape(printable(text))


def _markov_lines(m: Any) -> list[str]:
    """The exact analysis of a finite chain beside the simulated state frequencies (``mcmc sample --target P.csv``)."""
    a = m.analysis
    lines = ["  [bold]Markov chain[/]: " + (
        f"irreducible, {'aperiodic' if a.aperiodic else 'periodic'}" if a.irreducible
        else f"reducible: {len(a.classes)} communicating classes, {int(sum(a.closed))} closed"
    ) + f"; spectral gap {a.spectral_gap:.4g}" + (
        "" if a.reversible is None else
        f"; detailed balance {'holds' if a.reversible else 'fails'} "
        f"(max |pi_i P_ij - pi_j P_ji| {a.balance_violation:.2g})"
    )]  # fmt: skip
    t = m.target
    if t is not None:
        width = max(10, *(len(_markup(n)) for n in a.states))
        lines.append("  Metropolis-Hastings transition matrix P_ij = Q_ij min(1, b_j Q_ji / (b_i Q_ij)), "
                     "P_ii = 1 - sum_j!=i P_ij:")  # fmt: skip
        lines.append("  " + " " * width + " " + " ".join(f"{_markup(n)[:8]:>8}" for n in a.states))
        for i, name in enumerate(a.states):
            lines.append(f"  {_markup(name):<{width}} " + " ".join(f"{v:>8.4f}" for v in t.transition[i]))
    lines.append(f"  stationary law: left eigenvector, and power iteration from the initial law "
                 f"({'converged' if a.power_converged else 'did not converge'} in "
                 f"{plural(a.power_iterations, 'step')})"
                 + ("" if t is None else f"; b / sum(b) beside it (max difference {t.max_difference:.2g})"))
    target = "" if t is None else f"   {'b / sum(b)':>10}"
    lines.append(f"  {'state':<10} {'eigenvector':>11}   {'power':>10}{target}   simulated +- MCSE")
    for i, name in enumerate(a.states):
        exact = "-" if a.stationary is None else f"{a.stationary[i]:.4f}"
        law = "" if t is None else f"   {t.law[i]:>10.4f}"
        lines.append(
            f"  {_markup(name):<10} {exact:>11}   {a.stationary_power[i]:>10.4f}{law}   "
            f"{m.frequencies[i]:.4f} +- {num(m.mcse[i], 2)}" + ("" if m.z is None else f"  (z {num(m.z[i], 2)})")
        )
    at = m.at_step
    if at is not None:
        start = ", ".join(f"{v:g}" for v in a.initial)
        lines.append(f"  law after {plural(at.steps, 'step')} from the initial law ({start}): exact pi_0 "
                     f"P^{at.steps} beside the states of the {plural(at.chains, 'chain')} at step "
                     f"{at.steps}")  # fmt: skip
        lines.append(f"  {'state':<10} {'exact':>11}   simulated +- MCSE")
        for i, name in enumerate(a.states):
            lines.append(f"  {_markup(name):<10} {at.exact[i]:>11.4f}   {at.simulated[i]:.4f} +- "
                         f"{num(at.mcse[i], 2)}  (z {num(at.z[i], 2)})")  # fmt: skip
    return lines


#: Exact moments are tabulated for at most this many coordinates; above, one line gives the largest |z|.
EXACT_ROWS = 8


def _exact_lines(e: Any) -> list[str]:
    """The estimates beside the exact mean and variance of a target that knows them."""
    head = f"  exact moments: largest |z| {num(e.max_z_mean, 2)} for the means, {num(e.max_z_var, 2)} for the variances"
    if len(e.rows) > EXACT_ROWS:
        return [head + f" ({len(e.rows)} coordinates; -f json lists them)"]
    width = max(9, *(len(_markup(r.name)) for r in e.rows))
    lines = [head, f"  {'parameter':<{width}} {'mean':>10} {'MCSE':>8} {'exact':>10} {'z':>6}   "
                   f"{'variance':>10} {'MCSE':>8} {'exact':>10} {'z':>6}"]  # fmt: skip
    for r in e.rows:
        lines.append(
            f"  {_markup(r.name):<{width}} {estimate(r.mean, r.mcse_mean):>10} {mcse(r.mcse_mean):>8} "
            f"{num(r.exact_mean, 5):>10} {num(r.z_mean, 2):>6}   {estimate(r.var, r.mcse_var):>10} "
            f"{mcse(r.mcse_var):>8} {num(r.exact_var, 5):>10} {num(r.z_var, 2):>6}"
        )
    return lines


@render.register(SampleResult)
def render_sample(result: SampleResult, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """The run summary: what ran, then R-hat, ESS, acceptance, divergences, then cost and where the chains went."""
    if result.network is not None:
        _network_sample(result, out)
        return
    s = result.summary
    a = result.chains.attrs
    opts = _markup(", ".join(f"{k}={v}" for k, v in a["target_options"].items() if v is not None))
    seed_note = "" if result.seed_given else " (random; pass --seed to repeat)"
    lines = [
        f"[bold]{a['sampler']}[/] on [bold]{_markup(a['target'])}[/]{f' ({opts})' if opts else ''}: "
        f"{plural(a['chains'], 'chain')} x {plural(result.chains.n_draws, 'draw')} (+{a['warmup']} warm-up), "
        f"seed {a['seed']}{seed_note}"
    ]
    parts = []
    w = result.report.weights if result.report is not None else None
    if w is not None:  # weighted draws: the weights' ESS and tail, no R-hat
        failed = {c.name: c for c in result.report.checks if not c.passed}  # type: ignore[union-attr]
        k_colour = "green" if "pareto-k" not in failed else (
            "red" if failed["pareto-k"].severity == "error" else "yellow")  # fmt: skip
        parts.append(f"Kish ESS of the weights [{'red' if 'ess' in failed else 'green'}]{w.kish_ess:.0f}[/] "
                     f"of {w.draws}")  # fmt: skip
        parts.append(f"Pareto k [{k_colour}]{num(w.pareto_k, 3)}[/] (threshold {w.k_threshold:.2f})")
    if s.rhat_max is not None and w is None:
        colour = "green" if s.rhat_ok else "red"
        parts.append(f"R-hat max [{colour}]{s.rhat_max:.3f}[/] ({_markup(s.rhat_argmax)})")
    if s.ess_bulk_min is not None and w is None:
        colour = "green" if s.ess_bulk_ok else "yellow"
        parts.append(f"bulk ESS min [{colour}]{s.ess_bulk_min:.0f}[/] ({_markup(s.ess_bulk_argmin)})")
    if s.acceptance is not None and s.acceptance_by_chain is not None:
        by_chain = s.acceptance_by_chain
        parts.append(f"acceptance {s.acceptance:.2f} ({min(by_chain):.2f}-{max(by_chain):.2f} by chain)")
    if s.divergences is not None:
        colour = "green" if s.divergences_ok else "red"
        parts.append(f"divergences [{colour}]{s.divergences}[/]")
    lines.append("  " + "   ".join(parts))
    cost = []
    if s.n_evals_per_draw is not None:
        cost.append(f"{s.n_evals_per_draw:.1f} density evaluations per draw")
    if s.likelihood_saved is not None:
        cost.append(f"likelihood skipped on {100 * s.likelihood_saved:.0f}% of draws")
    if s.envelope_exceeded:
        lines.append(
            f"  [bold yellow]warning:[/] {s.envelope_exceeded} proposals exceeded the rejection envelope "
            "estimated in warm-up: the draws are not exact there (more --warmup, or another sampler)"
        )
    if a.get("n_gradient_evals"):
        cost.append(f"{a['n_gradient_evals_warmup'] + a['n_gradient_evals']} gradient evaluations")
    compiling = result.timings.get("compile_time_s", 0.0)  # a JAX target's programs, at their first calls
    cost.append(f"{result.seconds:.2f} s" + (f" ({compiling:.2f} s compiling)" if compiling else ""))
    lines.append("  " + "   ".join(cost) + f"  -> {'stdout' if result.output == '-' else _markup(result.output)}")
    lines += [_markup(line) for line in long_run_lines(result)]
    icdf = a.get("inverse_cdf")
    if icdf is not None:  # how F^-1 was had, and how accurate it is
        if icdf.get("method") == "quantile":
            lines.append("  F^-1(u): the target's own quantile function (exact to its rounding)")
        else:
            lo, hi = icdf["support"]
            lines.append(f"  F^-1(u): the CDF by adaptive 5-point Gauss-Legendre quadrature on {icdf['intervals']} "
                         f"intervals over [{lo:.4g}, {hi:.4g}] ({icdf['table_evals']} density evaluations, once), "
                         f"inverted by safeguarded Newton steps; estimated CDF error {icdf['error']:.1e}")
    if result.markov is not None:
        lines += _markov_lines(result.markov)
    if result.exact is not None:
        lines += _exact_lines(result.exact)
    p = result.predictive
    if p is not None:
        judged = ";  ".join(f"{_markup(q.name)} R-hat {q.rhat:.3f} ESS {q.ess_bulk:.0f}" for q in p.quantities)
        lines.append(f"  judge by (weights are not identifiable): {judged}")
        if p.test is not None and p.test.rmse is not None:
            lines.append(
                f"  test: RMSE {p.test.rmse:.4g}, mean log predictive density {p.test.mlpd:.4g} per point "
                f"({p.test.x.shape[0]} points)"
            )
        if p.predictions_path:
            lines.append(f"  predictions -> {_markup(p.predictions_path)}")
    con = console(out)
    for line in lines:
        con.print(line, highlight=False, soft_wrap=True)


def _blocks_line(n: Any) -> str:
    """Which nodes gibbs drew together, each block's largest clique, and how many nodes moved singly."""
    grown = n.grown_block_budget
    spec = f"clique budget {n.block_budget:,}" + (
        f", {grown:,} for grown blocks" if grown is not None and grown != n.block_budget and n.block_choice == "auto"
        and any(not b.exact for b in n.blocks) else ""
    )  # fmt: skip
    scan = ", random scan" if n.scan == "random" else ""
    head = f"  blocks ({n.block_choice}, {spec}{scan}): "
    if not n.blocks:
        return head + f"none: each of the {n.n_unobserved} nodes from its Markov blanket (single-site Gibbs)"
    singly = n.n_unobserved - sum(len(b.nodes) for b in n.blocks)
    if len(n.blocks) == 1 and not singly and n.blocks[0].exact:
        b = n.blocks[0]
        return head + (f"one block of all {len(b.nodes)} unobserved nodes, largest clique {b.largest_clique:,} "
                       f"entries ({b.cliques} clique{'' if b.cliques == 1 else 's'}): every draw exact")
    parts = []
    for b in n.blocks:
        shown = "+".join(printable(node) for node in b.nodes[:6]) + (f"+... ({len(b.nodes)} nodes)" if len(b.nodes) > 6 else "")
        parts.append(f"{shown} (largest clique {b.largest_clique:,}{', exact' if b.exact else ''})")
    return head + "; ".join(parts) + (f"; {plural(singly, 'node')} singly" if singly else "")


def long_run_lines(result: SampleResult) -> list[str]:
    """Where the run went on from, and how many draws ``--until-converged`` took (plain text)."""
    lines = []
    if result.resumed_from is not None:
        lines.append(f"  went on from {result.resumed_from} ({result.resumed_draws} draws per chain, no new warm-up)")
    if result.looks:
        seen = ", ".join(f"{look.draws} {'pass' if look.passed else 'fail'}" for look in result.looks)
        took = result.chains.attrs.get("draws", result.chains.n_draws)
        if result.converged_early:
            how = f"took {took} draws per chain: the checks passed at two successive looks"
        else:
            how = f"ran to --max-draws, {result.max_draws} draws per chain"
        lines.append(f"  until converged: {how} (draws per chain at each look: {seen})")
    return lines


def _network_sample(result: SampleResult, out: TextIO) -> None:
    """A Bayesian network run: what ran on what evidence, convergence over all indicators, the marginals, warnings."""
    from rich import box  # start-up: rich's tables (17 ms) only when this table is drawn
    from rich.table import Table

    n, s, a = result.network, result.summary, result.chains.attrs
    seed_note = "" if result.seed_given else " (random; pass --seed to repeat)"
    warm = f" (+{a['warmup']} warm-up)" if n.sampler == "gibbs" else ""
    con = console(out)
    head = Text.assemble(
        (n.sampler, "bold"), " on ", (printable(n.network), "bold"),
        f": {plural(a['chains'], 'chain')} x {plural(result.chains.n_draws, 'draw')}{warm}, seed {a['seed']}"
        f"{seed_note}",
    )  # fmt: skip
    con.print(head, soft_wrap=True)
    for line in long_run_lines(result):
        con.print(Text(printable(line)), soft_wrap=True)
    evidence = printable(n.evidence.replace(",", ", ")) if n.evidence else "none"
    lpe = "unknown (too wide for exact inference)" if n.log_evidence is None else f"{n.log_evidence:.4g} (exact)"
    con.print(Text(f"  evidence: {evidence}   log p(e) = {lpe}"), soft_wrap=True)
    parts = [Text(f"  {n.n_unobserved} of {n.n_nodes} nodes sampled")]
    if s is not None and s.rhat_max is not None:
        parts.append(Text.assemble("R-hat max ", (rhat(s.rhat_max), "green" if s.rhat_ok else "red"),
                                   f" ({printable(s.rhat_argmax)})"))  # fmt: skip
    if s is not None and s.ess_bulk_min is not None:
        label = "ESS of " if n.weighted else "bulk ESS min "
        where = printable(s.ess_bulk_argmin) if n.weighted else f"({printable(s.ess_bulk_argmin)})"
        value = Text(ess(s.ess_bulk_min), "green" if s.ess_bulk_ok else "yellow")
        parts.append(Text.assemble(label + (where + " " if n.weighted else ""), value,
                                   "" if n.weighted else f" {where}"))  # fmt: skip
    if n.acceptance is not None and n.acceptance_by_chain is not None:
        by = n.acceptance_by_chain
        parts.append(Text(f"acceptance {n.acceptance:.3g} ({min(by):.3g}-{max(by):.3g} by chain)"))
    con.print(Text("   ").join(parts), soft_wrap=True)
    if n.block_choice is not None:
        con.print(Text(_blocks_line(n)), soft_wrap=True)
    if n.marginals:
        table = Table(box=box.SIMPLE_HEAD, header_style="bold", padding=(0, 1), pad_edge=False)
        table.add_column("node", no_wrap=True)
        table.add_column("state", no_wrap=True)
        table.add_column("estimate", justify="right")
        table.add_column("MCSE", justify="right")
        if n.exact:
            table.add_column("exact", justify="right")
            table.add_column("|z|", justify="right")
        table.add_column("Kish ESS" if n.weighted else "ESS", justify="right")
        if not n.weighted:
            table.add_column("R-hat", justify="right")
        for m in n.marginals:
            for k, st in enumerate(m.states):
                cells: list[Any] = [Text(printable(m.node) if k == 0 else "", "bold"), Text(printable(st.state)),
                                    estimate(st.estimate, st.mcse), mcse(st.mcse)]  # fmt: skip
                if n.exact:
                    off = st.z is not None and not st.z <= n.max_z
                    cells += [num(st.exact, 4), Text(count(st.z, 2), "bold red" if off else "")]
                cells.append(ess(st.ess))
                if not n.weighted:
                    cells.append(rhat(st.rhat))
                table.add_row(*cells)
        con.print(table)
    elif not n.queried:
        con.print(Text(f"  {n.n_unobserved} unobserved nodes: --query NODE,NODE shows their marginals "
                       "(mcmc diagnose FILE reports every NODE[STATE])", "dim"), soft_wrap=True)  # fmt: skip
    if n.exact and n.exact_method is not None:
        if n.exact_method == "junction tree":
            how = f"one calibrated junction tree (largest clique {n.exact_largest_clique:,} entries)"
        else:
            how = (f"{n.exact_method} of the shown nodes (the junction tree's largest clique would have "
                   f"{n.exact_largest_clique:,} entries)")
        con.print(Text(f"  exact values: {how}", "dim"), soft_wrap=True)
    if n.z_max is not None:
        verdict = "within" if n.z_ok else "NOT within"
        con.print(Text(f"  exact marginals: every shown estimate {verdict} {n.max_z:g} MCSE "
                       f"(max |z| {count(n.z_max, 2)} at {printable(n.z_argmax)})",
                       "green" if n.z_ok else "bold red"), soft_wrap=True)  # fmt: skip
    if n.weighted:
        con.print(Text("  likelihood weighting: self-normalised estimates, delta-method MCSE, Kish ESS of the "
                       "weights; no R-hat (independent weighted draws)", "dim"), soft_wrap=True)  # fmt: skip
    to = "stdout" if result.output == "-" else printable(result.output)
    con.print(Text(f"  {result.seconds:.2f} s  -> {to}"), soft_wrap=True)
    for w in n.warnings:
        con.print(Text.assemble(("  warning: ", "bold yellow"), printable(w)), soft_wrap=True)
