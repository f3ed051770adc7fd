"""The terminal output of every command: rich text, one function per result type.

* A diagnose :class:`Report`: the failing parameters first, worst first (as the
  report ranks them), then the scalar variables in one table (the log density
  leading) and one table per array variable, coloured by status; R-hat and
  ESS cells are highlighted where the report flags them; estimates keep the
  digits their MCSE supports. At the terminal's width the least important
  columns are left out and named (``--wide`` keeps them), and a legend
  explains the less known ones. Then a sampler panel (many chains as a range
  and the flagged ones) with each failed check's advice, and the classic
  diagnostics when the report has them.
* A :class:`SamplerComparison` (``compare --samplers``): one column per sampler.
* A :class:`Comparison` (``compare A B``, ``--reference``): one row per parameter.
* A :class:`SampleResult` (``mcmc sample``): the run summary, a few lines
  for stderr; for a Bayesian network, the evidence, the marginals of the
  shown nodes (estimate, MCSE, the exact value and ``|z|`` when asked for,
  ESS, R-hat) and the warnings about deterministic tables.

The verdict line is not written here: the command prints it on stderr
(:func:`mcmc.cli.render.common.print_verdict`) for every format.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from mcmc.cli.render.common import console, count, ess, estimate, mcse, names, num, rhat, z

if TYPE_CHECKING:
    from mcmc.core.lda.model import InferenceResult
    from mcmc.diagnostics.compare import Comparison
    from mcmc.diagnostics.report import Parameter, Report
    from mcmc.diagnostics.runs import LdaResult, SampleResult
    from mcmc.diagnostics.sampler_comparison import SamplerComparison

STATUS_STYLE = {
    "ok": "green", "rhat": "bold red", "ess": "yellow", "constant": "cyan",
    "nan": "bold magenta", "inf": "bold magenta",
}  # fmt: skip


def render(result: Any, out: TextIO) -> None:
    """Write ``result`` as rich text to ``out``, by its type."""
    _RENDERERS[type(result).__name__](result, out)


def _groups(report: Report, params: list[Parameter]) -> list[tuple[str, list[Parameter]]]:
    """Scalar variables together in one untitled table first (the log density leading), then one per array."""
    scalars: list[Parameter] = [report.log_density] if report.log_density is not None else []
    arrays: list[tuple[str, list[Parameter]]] = []
    for variable, group in groupby(params, key=lambda p: p.variable):
        ps = list(group)
        if len(ps) == 1 and ps[0].name == variable:
            scalars.extend(ps)
        else:
            arrays.append((variable, ps))
    return ([("", scalars)] if scalars else []) + arrays


class Column(NamedTuple):
    """A table column: header, ``(text, style)`` cells, and how readily it is left out to fit (0: never)."""

    header: str
    cells: list[tuple[str, str]]
    drop: int = 0
    left: bool = False


#: The less known columns, explained under the table when shown.
LEGEND = {
    "SSIF": "SSIF: sample size inflation factor (1 + r1) / (1 - r1) from the lag-1 autocorrelation r1",
    "ESS SSIF": "ESS SSIF: chains x draws / SSIF, exact only for AR(1) chains; ! where it alone clears the ESS limit",
    "move": "move: fraction of transitions in which the parameter changed",
}


def fit(columns: list[Column], width: int, wide: bool) -> tuple[list[Column], list[str]]:
    """The columns that fit ``width`` (all when ``wide``), highest ``drop`` left out first, and the left-out headers."""
    kept = list(columns)
    dropped: list[str] = []

    def total(cols: list[Column]) -> int:
        return sum(max([len(c.header), *(len(t) for t, _ in c.cells)]) for c in cols) + 2 * (len(cols) - 1)

    while not wide and total(kept) > width:
        candidates = [c for c in kept if c.drop]
        if not candidates:
            break
        worst = max(candidates, key=lambda c: (c.drop, kept.index(c)))
        kept.remove(worst)
        dropped.insert(0, worst.header)
    return kept, [h for c in columns if (h := c.header) in dropped]


def layout(columns: list[Column], title: str = "") -> Text:
    """An aligned table as one rich Text.

    Built by hand rather than with rich.Table, whose per-cell layout takes
    seconds for a thousand parameters; one Text renders in milliseconds.
    """
    widths = [max([len(c.header), *(len(t) for t, _ in c.cells)]) for c in columns]
    last = len(columns) - 1
    out = Text(no_wrap=True, overflow="ignore")
    if title:
        out.append(title + "\n", style="bold underline")

    def pad(j: int, text: str) -> str:
        if j == last and columns[j].left:
            return text
        return text.ljust(widths[j]) if columns[j].left else text.rjust(widths[j])

    out.append("  ".join(pad(j, c.header) for j, c in enumerate(columns)).rstrip() + "\n", style="bold")
    out.append("  ".join("\u2500" * w for w in widths) + "\n", style="dim")
    for i in range(len(columns[0].cells) if columns else 0):
        for j, c in enumerate(columns):
            text, style = c.cells[i]
            if j:
                out.append("  ")
            out.append(pad(j, text), style=style or None)
        out.append("\n")
    return out


def parameter_columns(report: Report, params: list[Parameter]) -> list[Column]:
    """The columns of a parameter table; estimates rounded to what their MCSE supports (or ``--sig-figs``)."""
    sig = report.sig_figs
    lag1 = 1 if 1 in report.lags else report.lags[0]
    labels = report.quantile_labels
    middle = len(labels) // 2

    def col(header: str, cell: Any, drop: int = 0, left: bool = False) -> Column:
        return Column(header, [cell(p) for p in params], drop, left)

    return [
        col("parameter", lambda p: (p.name, "dim bold" if p is report.log_density else "bold"), left=True),
        col("mean", lambda p: (estimate(p.mean, p.mcse_mean, sig), "")),
        col("sd", lambda p: (estimate(p.sd, p.mcse_sd, sig), ""), drop=5),
        *(
            # Quantiles take the mean's MCSE decade (their own MCSE is in the classic report).
            col(q, lambda p, q=q: (estimate(p.quantiles[q], p.mcse_mean, sig), ""), drop=7 if k == middle else 6)
            for k, q in enumerate(labels)
        ),
        col("mcse", lambda p: (mcse(p.mcse_mean, sig), "")),
        col("R-hat", lambda p: (rhat(p.rhat), "bold red" if p.status == "rhat" else "")),
        col("ESS bulk", lambda p: (ess(p.ess_bulk), "bold yellow" if p.ess_bulk_low else "")),
        col("ESS tail", lambda p: (ess(p.ess_tail), "bold yellow" if p.ess_tail_low else "")),
        col("SSIF", lambda p: (num(p.ssif, 3), "dim"), drop=8),
        col(
            "ESS SSIF",
            lambda p: (ess(p.ess_ssif) + (" !" if p.ssif_disagrees else "  "), "yellow" if p.ssif_disagrees else "dim"),
            drop=9,
        ),
        col("ACF(1)", lambda p: (num(p.acf.get(lag1, float("nan")), 2), ""), drop=10),
        col("move", lambda p: (num(p.acceptance, 2), ""), drop=11),
        col("status", lambda p: (p.status, STATUS_STYLE.get(p.status, "")), left=True),
    ]


def parameter_table(report: Report, title: str, params: list[Parameter], width: int = 10**6) -> tuple[Text, list[str]]:
    """One parameter table fitted to ``width`` (unless ``report.wide``), and the headers it left out."""
    kept, dropped = fit(parameter_columns(report, params), width, report.wide)
    return layout(kept, title), dropped


def _legend(shown: set[str], dropped: list[str], width: int) -> Text:
    lines = [LEGEND[h] for h in LEGEND if h in shown]
    if dropped:
        lines.append(f"left out to fit {width} columns: {', '.join(dropped)} (--wide shows all)")
    return Text("\n".join(lines), style="dim")


def _chains(values: Any, fmt: Any, flagged: Any = (), style: str = "bold red", cap: int = 8) -> list[Any]:
    """Per-chain values: all of them up to ``cap`` chains, else the range and the ``flagged`` chains."""
    values = list(values)
    flagged = list(flagged)
    if len(values) <= cap:
        return [(fmt(v) + " ", style if c in flagged else "green") for c, v in enumerate(values)]
    finite_values = [v for v in values if v == v]
    parts: list[Any] = [
        f"{fmt(min(finite_values))} to {fmt(max(finite_values))} over {len(values)} chains" if finite_values
        else f"undefined in all {len(values)} chains"
    ]  # fmt: skip
    if flagged:
        shown = ", ".join(f"{c} ({fmt(values[c])})" for c in flagged[:cap])
        more = f" and {len(flagged) - cap} more" if len(flagged) > cap else ""
        parts.append(("; chain " + shown + more, style))
    return parts


def sampler_panel(report: Report) -> Panel:
    s = report.sampler
    t = report.thresholds
    failed = {c.name for c in report.checks if not c.passed}
    lines = []
    acc = _chains(s.acceptance.per_chain, lambda v: num(v, 3), s.acceptance.outliers, style="yellow")
    overall = num(s.acceptance.overall, 3)
    lines.append(Text.assemble(("acceptance  ", "bold"), *acc, f" (all {overall}; {s.acceptance.source})"))
    if s.divergences is not None:
        bad = "divergences" in failed
        per_chain = s.divergences_per_chain or ()
        if len(per_chain) <= 8:
            where = f"  per chain: {' '.join(map(str, per_chain))}"
        else:
            hit = [f"{c} ({n})" for c, n in enumerate(per_chain) if n]
            where = f"  in chain {names(hit)}" if hit else ""
        lines.append(
            Text.assemble(
                ("divergences ", "bold"),
                (f"{s.divergences} of {s.transitions} ({s.divergence_percent:.2f}%)", "bold red" if bad else "green"),
                where,
            )
        )
    if s.treedepth_hits is not None:
        bad = "treedepth" in failed
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
        low = getattr(report.check("ebfmi"), "chains", ())
        parts = _chains(s.ebfmi, lambda v: num(v, 2), low)
        lines.append(Text.assemble(("E-BFMI      ", "bold"), *parts, f" (threshold {t.min_ebfmi:g})"))
    for c in report.checks:
        if c.passed:
            continue
        fails = c.severity == "error" or report.strict
        head = ("FAIL " if fails else "warning ") + f"{c.name}: "
        lines.append(Text.assemble((head, "bold red" if fails else "bold yellow"), c.message))
        if c.advice:
            lines.append(Text(f"  what to do: {c.advice}", style="dim"))
    for note in report.notes:
        lines.append(Text(f"note: {note}", style="dim"))
    src = ", ".join(report.source) or "input"
    title = f"sampler: {src}, {report.n_chains} chain{'s' if report.n_chains != 1 else ''} x {report.n_draws} draws"
    return Panel(Group(*lines), title=Text(title), title_align="left", expand=False)  # file names verbatim


def classic_columns(report: Report) -> list[Column]:
    """The columns of the classic panel: one row per parameter, chains compacted (``ClassicRow``)."""
    rows = report.classic_rows
    c = report.classic
    chains = report.n_chains
    labels = report.quantile_labels
    prob = f"{100 * c.hdi_prob:g}%" if c is not None else ""

    def col(header: str, cell: Any, drop: int = 0, left: bool = False) -> Column:
        return Column(header, [cell(r) for r in rows], drop, left)

    def interval(lo: float, hi: float) -> str:
        return f"{num(lo, 3)} to {num(hi, 3)}"

    columns = [
        col("parameter", lambda r: (r.name, "bold"), left=True),
        col("PSRF", lambda r: (rhat(r.psrf), "bold red" if r.psrf_high else "")),
        col("upper CI", lambda r: (rhat(r.psrf_upper), "bold red" if r.psrf_high else "")),
    ]
    if c is not None and c.rhat_nested is not None:
        columns.append(col("nested R-hat", lambda r: (rhat(r.rhat_nested), "bold red" if r.nested_high else "")))
    columns += [
        col(
            "Geweke |z|",
            lambda r: (
                f"{num(r.geweke_max_abs_z, 2)} ({r.geweke_outside}/{chains})", "yellow" if r.geweke_outside else ""
            ),
            drop=4,
        ),
        col(
            "H-W pass", lambda r: (f"{r.heidel_passed}/{chains}", "yellow" if r.heidel_passed < chains else ""), drop=4
        ),
        col("R-L N", lambda r: (ess(r.raftery_total_max), ""), drop=6),
        col("R-L I", lambda r: (num(r.raftery_dependence_max, 3), "yellow" if r.raftery_high else ""), drop=5),
        col("ESS AR", lambda r: (ess(r.ess_ar), ""), drop=3),
        col("batch SE", lambda r: (mcse(r.batch_se), ""), drop=7),
        col("reject", lambda r: (f"{num(r.rejection_min, 2)}-{num(r.rejection_max, 2)}", ""), drop=8),
        *(
            col(f"ESS {q}", lambda r, k=k: (ess(r.ess_quantile[k]), ""), drop=9)
            for k, q in enumerate(labels)
        ),
        col(f"HDI {prob}", lambda r: (interval(*r.hdi), ""), drop=2),
        col(f"ETI {prob}", lambda r: (interval(*r.eti), ""), drop=2),
        col(
            "tau emcee",
            lambda r: (num(r.iat_emcee, 3) + ("" if r.iat_emcee_reliable else " <50tau"),
                       "" if r.iat_emcee_reliable else "yellow"),
            drop=1,
        ),
    ]  # fmt: skip
    return columns


CLASSIC_LEGEND = (
    "PSRF, upper CI: Gelman-Rubin potential scale reduction and its 97.5% limit (coda gelman.diag, "
    "second halves); red above 1.1",
    "nested R-hat: Margossian et al. (2024) over the superchains",
    "Geweke |z|: largest over chains (chains with |z| > 1.96); H-W pass: chains passing both Heidelberger-Welch tests",
    "R-L N, I: Raftery-Lewis draws needed and dependence factor for the 2.5% quantile (largest over chains; "
    "I > 5 is strong dependence; - where a chain is shorter than the 3746 draws it needs)",
    "ESS AR, batch SE: coda effectiveSize and batchSE; reject: rejection rate range over chains; ESS q: "
    "ESS of the quantile",
    "tau emcee: emcee's integrated autocorrelation time (Sokal window, unsplit; the main table's ESS uses "
    "Geyer's); <50tau: chains shorter than 50 tau, too short to trust it",
)


def classic_panel(report: Report, width: int) -> Group:
    c = report.classic
    assert c is not None
    columns = classic_columns(report)
    kept, dropped = fit(columns, width, report.wide)
    mp = f"multivariate PSRF {rhat(c.gelman.mpsrf)} (all draws {rhat(c.gelman_all.mpsrf)})"
    sc = "" if c.superchains is None else f"; superchains {' '.join(map(str, c.superchains))}"
    shown = {col.header for col in kept}
    legend = [line for line in CLASSIC_LEGEND if not line.startswith("nested") or "nested R-hat" in shown]
    if dropped:
        legend.append(f"left out to fit {width} columns: {', '.join(dropped)} (--wide shows all; JSON has every value)")
    return Group(
        Text(f"classic diagnostics: {mp}{sc}", style="bold underline"),
        layout(kept),
        Text("\n".join(legend), style="dim"),
    )


def _report(report: Report, out: TextIO) -> None:
    con = console(out)
    width = con.width
    failing = report.failing()
    failing_ids = {id(p) for p in failing}
    shown: set[str] = set()
    dropped: list[str] = []
    tables = []
    if failing:
        tables.append(("failing, worst first", list(failing)))
    rest = [p for p in report.parameters if id(p) not in failing_ids]
    for title, params in _groups(report, rest):
        moved = sum(1 for p in failing if p.variable == title) if title else 0
        tables.append((f"{title} ({moved} failing, above)" if moved else title, params))
    for title, params in tables:
        text, left_out = parameter_table(report, title, params, width)
        shown |= {c.header for c in parameter_columns(report, params[:1])} - set(left_out)
        dropped += [h for h in left_out if h not in dropped]
        con.print(text, soft_wrap=True)
    con.print(_legend(shown, dropped, width), soft_wrap=True)
    con.print(sampler_panel(report))
    if report.classic is not None:
        con.print(classic_panel(report, width), soft_wrap=True)


# --------------------------------------------------------------------------- mcmc sample


def _markov_lines(m: Any) -> list[str]:
    """The exact analysis of a finite chain beside the simulated state frequencies (``mcmc sample --target P.csv``)."""
    from rich.markup import escape

    a = m.analysis
    lines = ["  [bold]Markov chain[/]: " + (
        f"irreducible, {'aperiodic' if a.aperiodic else 'periodic'}" if a.irreducible
        else f"reducible: {len(a.classes)} communicating classes, {int(sum(a.closed))} closed"
    ) + f"; spectral gap {a.spectral_gap:.4g}" + (
        "" if a.reversible is None else
        f"; detailed balance {'holds' if a.reversible else 'fails'} "
        f"(max |pi_i P_ij - pi_j P_ji| {a.balance_violation:.2g})"
    )]  # fmt: skip
    lines.append(f"  stationary law: left eigenvector, and power iteration from the initial law "
                 f"({'converged' if a.power_converged else 'did not converge'} in {a.power_iterations} steps)")
    lines.append(f"  {'state':<10} {'eigenvector':>11}   {'power':>10}   simulated +- MCSE")
    for i, name in enumerate(a.states):
        exact = "-" if a.stationary is None else f"{a.stationary[i]:.4f}"
        lines.append(
            f"  {escape(name):<10} {exact:>11}   {a.stationary_power[i]:>10.4f}   "
            f"{m.frequencies[i]:.4f} +- {num(m.mcse[i], 2)}" + ("" if m.z is None else f"  (z {num(m.z[i], 2)})")
        )
    return lines


def _sample(result: SampleResult, out: TextIO) -> None:
    """The run summary: what ran, then R-hat, ESS, acceptance, divergences, then cost and where the chains went."""
    from rich.markup import escape  # names, options and paths are the user's: print them verbatim

    if result.network is not None:
        _network_sample(result, out)
        return
    s = result.summary
    a = result.chains.attrs
    opts = escape(", ".join(f"{k}={v}" for k, v in a["target_options"].items() if v is not None))
    seed_note = "" if result.seed_given else " (random; pass --seed to repeat)"
    lines = [
        f"[bold]{a['sampler']}[/] on [bold]{escape(a['target'])}[/]{f' ({opts})' if opts else ''}: "
        f"{a['chains']} chains x {result.chains.n_draws} draws (+{a['warmup']} warm-up), seed {a['seed']}{seed_note}"
    ]
    parts = []
    if s.rhat_max is not None:
        colour = "green" if s.rhat_ok else "red"
        parts.append(f"R-hat max [{colour}]{s.rhat_max:.3f}[/] ({escape(s.rhat_argmax)})")
    if s.ess_bulk_min is not None:
        colour = "green" if s.ess_bulk_ok else "yellow"
        parts.append(f"bulk ESS min [{colour}]{s.ess_bulk_min:.0f}[/] ({escape(s.ess_bulk_argmin)})")
    if s.acceptance is not None and s.acceptance_by_chain is not None:
        by_chain = s.acceptance_by_chain
        parts.append(f"acceptance {s.acceptance:.2f} ({min(by_chain):.2f}-{max(by_chain):.2f} by chain)")
    if s.divergences is not None:
        colour = "green" if s.divergences_ok else "red"
        parts.append(f"divergences [{colour}]{s.divergences}[/]")
    lines.append("  " + "   ".join(parts))
    if s.divergences_ok is False:
        lines.append(
            f"  [bold red]warning:[/] {s.divergences} divergent transition{'s' if s.divergences != 1 else ''}: "
            f"the draws may miss part of the posterior and `mcmc diagnose` will fail; {escape(s.advice['divergences'])}"
        )
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
    cost.append(f"{result.seconds:.2f} s")
    lines.append("  " + "   ".join(cost) + f"  -> {'stdout' if result.output == '-' else escape(result.output)}")
    if result.markov is not None:
        lines += _markov_lines(result.markov)
    p = result.predictive
    if p is not None:
        judged = ";  ".join(f"{escape(q.name)} R-hat {q.rhat:.3f} ESS {q.ess_bulk:.0f}" for q in p.quantities)
        lines.append(f"  judge by (weights are not identifiable): {judged}")
        if p.test is not None and p.test.rmse is not None:
            lines.append(
                f"  test: RMSE {p.test.rmse:.4g}, mean log predictive density {p.test.mlpd:.4g} per point "
                f"({p.test.x.shape[0]} points)"
            )
        if p.predictions_path:
            lines.append(f"  predictions -> {escape(p.predictions_path)}")
    con = console(out)
    for line in lines:
        con.print(line, highlight=False, soft_wrap=True)


def _network_sample(result: SampleResult, out: TextIO) -> None:
    """A Bayesian network run: what ran on what evidence, convergence over all indicators, the marginals, warnings."""
    from rich import box
    from rich.table import Table

    n, s, a = result.network, result.summary, result.chains.attrs
    seed_note = "" if result.seed_given else " (random; pass --seed to repeat)"
    warm = f" (+{a['warmup']} warm-up)" if n.sampler == "gibbs" else ""
    con = console(out)
    head = Text.assemble(
        (n.sampler, "bold"), " on ", (n.network, "bold"),
        f": {a['chains']} chains x {result.chains.n_draws} draws{warm}, seed {a['seed']}{seed_note}",
    )  # fmt: skip
    con.print(head, soft_wrap=True)
    evidence = n.evidence.replace(",", ", ") if n.evidence else "none"
    con.print(Text(f"  evidence: {evidence}   log p(e) = {n.log_evidence:.4g} (exact)"), soft_wrap=True)
    parts = [Text(f"  {n.n_unobserved} of {n.n_nodes} nodes sampled")]
    if s is not None and s.rhat_max is not None:
        parts.append(Text.assemble("R-hat max ", (rhat(s.rhat_max), "green" if s.rhat_ok else "red"),
                                   f" ({s.rhat_argmax})"))  # fmt: skip
    if s is not None and s.ess_bulk_min is not None:
        label = "ESS of " if n.weighted else "bulk ESS min "
        where = s.ess_bulk_argmin if n.weighted else f"({s.ess_bulk_argmin})"
        value = Text(ess(s.ess_bulk_min), "green" if s.ess_bulk_ok else "yellow")
        parts.append(Text.assemble(label + (where + " " if n.weighted else ""), value,
                                   "" if n.weighted else f" {where}"))  # fmt: skip
    if n.acceptance is not None and n.acceptance_by_chain is not None:
        by = n.acceptance_by_chain
        parts.append(Text(f"acceptance {n.acceptance:.3g} ({min(by):.3g}-{max(by):.3g} by chain)"))
    con.print(Text("   ").join(parts), soft_wrap=True)
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
                cells: list[Any] = [Text(m.node if k == 0 else "", "bold"), Text(st.state),
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
    if n.z_max is not None:
        verdict = "within" if n.z_ok else "NOT within"
        con.print(Text(f"  exact marginals: every shown estimate {verdict} {n.max_z:g} MCSE "
                       f"(max |z| {count(n.z_max, 2)} at {n.z_argmax})",
                       "green" if n.z_ok else "bold red"), soft_wrap=True)  # fmt: skip
    if n.weighted:
        con.print(Text("  likelihood weighting: self-normalised estimates, delta-method MCSE, Kish ESS of the "
                       "weights; no R-hat (independent weighted draws)", "dim"), soft_wrap=True)  # fmt: skip
    to = "stdout" if result.output == "-" else result.output
    con.print(Text(f"  {result.seconds:.2f} s  -> {to}"), soft_wrap=True)
    for w in n.warnings:
        con.print(Text.assemble(("  warning: ", "bold yellow"), w), soft_wrap=True)


# --------------------------------------------------------------------------- mcmc compare


def _samplers(result: SamplerComparison, out: TextIO) -> None:
    """One column per sampler, one row per measure: fits a terminal for any sensible number of samplers."""
    from rich import box
    from rich.table import Table

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
        ("acceptance", "acceptance rate", lambda v: count(v, 2)),  # rejection on a network: 0.0036
        ("divergences", "divergences", lambda v: "-" if v is None else str(v)),
    ]
    if result.exact_moments:
        measures += [
            ("mean_z_max", "max |mean - exact| / MCSE", lambda v: count(v, 2)),
            ("sd_z_max", "max |sd - exact| / MCSE", lambda v: count(v, 2)),
        ]
    failing = {
        "rhat_max": {r.sampler for r in result.rows if r.summary.rhat_ok is False},
        "mean_z_max": set(result.mean_off),
        "sd_z_max": set(result.sd_off),
    }
    opts = ", ".join(f"{k}={v}" for k, v in result.target_options.items())
    seed_note = "" if result.seed_given else " (random; pass --seed to repeat)"
    title = (
        f"{result.target}{f' ({opts})' if opts else ''}: {result.chains} chains x {result.draws} draws "
        f"(+{result.warmup} warm-up), seed {result.seed}{seed_note}"
    )
    table = Table(header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("", no_wrap=True)
    records = [r.to_dict() for r in result.rows]
    for row in records:
        table.add_column(row["sampler"], justify="right", no_wrap=True)
    for key, label, show in measures:
        cells = []
        for row in records:
            style = ""
            if row["sampler"] in result.best.get(key, ()):
                style = "bold green"
            elif row["sampler"] in failing.get(key, ()):
                style = "bold red"
            cells.append(Text(show(row[key]), style=style))
        table.add_row(label, *cells)
    g = result.grad_cost
    caption = (
        "ESS: the worst coordinate's min(bulk, tail). Per second and per evaluation: sampling phase only, "
        f"a gradient counting as {g:g} density evaluation{'s' if g != 1 else ''}. Time and evaluation "
        "counts include warm-up. Best in green."
    )
    console(out).print(Group(Text(title, style="bold"), table, Text(caption, style="dim")))


def _runs(result: Comparison, out: TextIO) -> None:
    """One row per shared parameter: both means, z, the sd ratio and its z, both bulk ESS."""
    from rich.table import Table

    b_label = "ref" if result.mode == "reference" else "B"
    head = Text()
    for side, label in ((result.a, "A"), (result.b, b_label)):
        head.append(f"{label}: ", style="bold")
        head.append(f"{', '.join(side.source)} ({side.n_chains} chains x {side.n_draws} draws)\n")
    head.rstrip()
    table = Table(header_style="bold")
    for label in ("parameter", "mean A", f"mean {b_label}", "z", f"sd A / sd {b_label}", "z sd", "ESS A",
                  f"ESS {b_label}"):  # fmt: skip
        table.add_column(label, justify="left" if label == "parameter" else "right")
    for p in result.parameters:
        table.add_row(
            Text(p.name, style="bold"),
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
        extra.append(f"only in A: {names(result.only_in_a)}")
    if result.only_in_b:
        extra.append(f"only in {b_label}: {names(result.only_in_b)}")
    caption = "z = (mean A - mean B) / sqrt(MCSE_A^2 + MCSE_B^2); ESS is bulk ESS."
    table.caption = Text(caption + ("  " + "; ".join(extra) if extra else ""))  # names verbatim, not markup
    table.caption_justify = "left"
    console(out).print(Group(head, table))


def _lda(result: LdaResult, out: TextIO) -> None:
    """The topics of the shown chains, largest share first; the recovery of the true topics (synthetic corpus)."""
    from rich.table import Table

    report = result.report
    con = console(out)
    for c in result.shown_chains:
        chain = report["chains"][c]
        table = Table(title=f"Topics (chain {c})", title_justify="left", show_edge=False, pad_edge=False)
        first = chain["topics"][0]
        columns = [("topic", "right"), ("share", "right")]
        columns += [("alpha", "right")] if "alpha" in first else []
        columns += [("UMass", "right"), ("NPMI", "right"), ("C_V", "right")] if "umass" in first else []
        columns += [("true", "right"), ("Hellinger", "right")] if "true_topic" in first else []
        for name, justify in [*columns, ("top words", "left")]:
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for t in sorted(chain["topics"], key=lambda t: -t["share"]):
            row = [str(t["topic"]), f"{t['share']:.3f}"]
            if "alpha" in t:
                row.append(num(t["alpha"], 3))
            if "umass" in t:
                row += [num(t["umass"], 3), num(t["npmi"], 3), num(t["cv"], 3)]
            if "true_topic" in t:
                row += [str(t["true_topic"]) if t["true_topic"] >= 0 else "-", num(t["hellinger"], 3)]
            table.add_row(*row, Text(" ".join(t["words"])))
        con.print(table)
    if "recovery" in report["chains"][0]:
        table = Table(
            title="Recovery of the true topics (Hungarian matching, Hellinger distance)",
            title_justify="left", show_edge=False, pad_edge=False,
        )  # fmt: skip
        for name in ("chain", "mean Hellinger", "max Hellinger", "min cosine", "unmatched pairs"):
            table.add_column(name, justify="right")
        for chain in report["chains"]:
            r = chain["recovery"]
            table.add_row(str(chain["chain"]), *(num(r[k], 3) for k in
                          ("mean_hellinger", "max_hellinger", "min_cosine", "unmatched_hellinger")))  # fmt: skip
        con.print(table)
        con.print(
            "Hellinger distance 0 = identical topics, 1 = disjoint; 'unmatched pairs' is the mean distance "
            "between a fitted topic and the true topics it was not matched to.",
            style="dim",
        )


def lda_summary(result: LdaResult, out: TextIO) -> None:
    """The lines ``mcmc lda`` prints on stderr after a fit: speed, log joint and R-hat, scores, the gate."""
    report = result.report
    chains = report["chains"]

    def per_chain(key: str, digits: int = 4) -> str:
        return ", ".join(num(c[key], digits) for c in chains)

    final = ", ".join(f"{c['final_log_joint_per_token']:.4f}" for c in chains)
    lines = [
        f"sampling: {report['sampling_seconds']:.2f} s, {report['tokens_per_second'] / 1e6:.2f} M tokens/s "
        f"({report['model']['kernel']} kernel, all chains)",
        f"log joint per token, final iteration: {final} "
        f"(chains 0..{len(chains) - 1}); post-burn-in R-hat {num(report['log_joint_per_token_rhat'], 4)}, "
        f"bulk ESS {num(report['log_joint_per_token_ess_bulk'], 3)}",
    ]
    if "learned_beta" in chains[0]:
        lines.append(
            f"learned hyperparameters ({report['model']['hyperparameter_updates']} updates): alpha summed over "
            f"topics {per_chain('learned_alpha_sum', 4)}; beta {per_chain('learned_beta', 4)} (per topic alpha in "
            "the topics table and --estimates)"
        )
    if report["holdout"] is not None:
        h = report["holdout"]
        lines.append(
            f"held-out perplexity (document completion, {h['documents']} documents, {h['scored_tokens']} tokens "
            f"scored): {per_chain('heldout_perplexity', 5)}"
        )
    if "umass" in chains[0]:
        lines.append(
            f"coherence of the top words (training documents, mean over topics): UMass {per_chain('umass', 3)}; "
            f"NPMI {per_chain('npmi', 3)}; C_V {per_chain('cv', 3)} (110-token windows in stored token order)"
        )
    ok, rhat_value, limit = report["rhat_ok"], report["log_joint_per_token_rhat"], report["max_rhat"]
    if ok is None:
        why = ("with one chain (R-hat compares chains; use --chains 2 or more)" if report["model"]["chains"] < 2
               else "(too few post-burn-in draws for R-hat)")  # fmt: skip
        lines.append(f"convergence: not checked {why}")
    elif ok:
        lines.append(f"convergence: ok (R-hat {num(rhat_value, 4)} <= {limit:g})")
    else:
        lines.append(
            f"convergence: FAIL: R-hat of the post-burn-in log joint across chains is {num(rhat_value, 4)} > "
            f"--max-rhat {limit:g}: the chains disagree; run more iterations (--iterations, --burn-in)"
        )
    con = console(out)
    for line in lines:
        con.print(Text(line), soft_wrap=True)


def _inference(result: InferenceResult, out: TextIO) -> None:
    """The top topics of the first documents under a saved model (chain 0 of the model)."""
    from rich.table import Table

    table = Table(title="Top topics of the first documents (chain 0 of the model)", title_justify="left",
                  show_edge=False, pad_edge=False)  # fmt: skip
    for name, justify in (("doc", "right"), ("tokens", "right"), ("topic", "right"), ("theta", "right"),
                          ("top words", "left")):  # fmt: skip
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for doc in result.report["documents"]:
        for i, t in enumerate(doc["topics"]):
            table.add_row(str(doc["document"]) if i == 0 else "", str(doc["tokens"]) if i == 0 else "",
                          str(t["topic"]), f"{t['theta']:.3f}", Text(" ".join(t["words"])))  # fmt: skip
    console(out).print(table)


def inference_summary(result: InferenceResult, out: TextIO) -> None:
    """The line ``mcmc lda --model`` prints on stderr: the model, the corpus, unknown words, the fold-in."""
    c, m = result.report["corpus"], result.report["model"]
    console(out).print(
        Text(f"model: {m['topics']} topics, {m['chains']} chain{'s' if m['chains'] != 1 else ''}, {m['words']} words "
             f"({result.model_path}); corpus: {c['documents']} documents, {c['tokens']} known tokens; "
             f"{c['unknown_tokens']} tokens of {c['unknown_words']} words unknown to the model ignored "
             f"({c['source']}); fold-in: {result.sweeps} sweeps ({result.burn_in} burn-in), seed {result.seed}"),
        soft_wrap=True,
    )  # fmt: skip


_RENDERERS = {
    "Report": _report,
    "SampleResult": _sample,
    "SamplerComparison": _samplers,
    "Comparison": _runs,
    "LdaResult": _lda,
    "InferenceResult": _inference,
}
