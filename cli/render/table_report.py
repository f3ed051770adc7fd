"""The terminal output of a diagnose :class:`~mcmc.diagnostics.report.report.Report`.

The failing parameters first, worst first (as the report ranks them), then the
scalar variables in one table (the log density leading) and one table per
array variable, coloured by status; R-hat and ESS cells are highlighted where
the report flags them; estimates keep the digits their MCSE supports. At the
terminal's width the least important columns are left out and named
(``--wide`` keeps them), and a legend explains the less known ones. Then a
sampler panel (many chains as a range and the flagged ones) with each failed
check's advice, and the classic diagnostics when the report has them.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from rich.console import Group
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import TAIL_ESS_LEGEND, console, ess, estimate, mcse, names, num, plural, rhat
from mcmc.cli.text import printable

if TYPE_CHECKING:
    from mcmc.diagnostics.report.parameters import Parameter
    from mcmc.diagnostics.report.report import Report


STATUS_STYLE = {
    "ok": "green", "rhat": "bold red", "ess": "yellow", "constant": "cyan",
    "nan": "bold magenta", "inf": "bold magenta",
}  # fmt: skip


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


LEGEND = {
    "SSIF": "SSIF: sample size inflation factor (1 + r1) / (1 - r1) from the lag-1 autocorrelation r1",
    "ESS SSIF": "ESS SSIF: chains x draws / SSIF, exact only for AR(1) chains; ! where it alone clears the ESS limit",
    "move": "move: fraction of transitions in which the parameter changed",
    "ESS tail": TAIL_ESS_LEGEND,
    "tau": "tau: emcee's integrated autocorrelation time (Sokal's window, over the walkers); emcee asks for runs "
    "longer than 50 tau",
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


def parameter_columns(report: Report, params: list[Parameter], sig: int | None = None) -> list[Column]:
    """The columns of a parameter table; estimates rounded to what their MCSE supports (or ``--sig-figs``).

    Weighted draws (``report.kind == "weighted"``) have no R-hat, per-parameter
    ESS, SSIF, autocorrelation or move rate: their table is the self-normalised
    estimates, their MCSE and status; the weights' ESS and Pareto k are a line
    of the sampler panel.
    """
    labels = report.quantile_labels
    middle = len(labels) // 2

    def col(header: str, cell: Any, drop: int = 0, left: bool = False) -> Column:
        return Column(header, [cell(p) for p in params], drop, left)

    estimates = [
        col("parameter", lambda p: (printable(p.name), "dim bold" if p is report.log_density else "bold"), left=True),
        col("mean", lambda p: (estimate(p.mean, p.mcse_mean, sig), "")),
        col("sd", lambda p: (estimate(p.sd, p.mcse_sd, sig), ""), drop=5),
        *(
            # Each quantile to the digits of its own MCSE.
            col(q, lambda p, q=q: (estimate(p.quantiles[q], p.quantile_mcse(q), sig), ""),
                drop=7 if k == middle else 6)
            for k, q in enumerate(labels)
        ),
        col("mcse", lambda p: (mcse(p.mcse_mean, sig), "")),
    ]
    if report.kind == "weighted":
        return [*estimates, col("status", lambda p: (p.status, STATUS_STYLE.get(p.status, "")), left=True)]
    lag1 = 1 if 1 in report.lags else report.lags[0]

    return [
        *estimates,
        col("R-hat", lambda p: (rhat(p.rhat), "bold red" if p.status == "rhat" else "")),
        col("ESS bulk", lambda p: (ess(p.ess_bulk), "bold yellow" if p.ess_bulk_low else "")),
        col("ESS tail", lambda p: (ess(p.ess_tail), "bold yellow" if p.ess_tail_low else "")),
        *(  # an ensemble's walkers: emcee's own autocorrelation time beside the ESS
            [col("tau", lambda p: (num(p.iat_emcee, 3), ""))] if report.ensemble else []
        ),
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


def parameter_table(
    report: Report, title: str, params: list[Parameter], width: int = 10**6, options: RenderOptions = RenderOptions()  # noqa: B008
) -> tuple[Text, list[str]]:
    """One parameter table fitted to ``width`` (unless ``options.wide``), and the headers it left out."""
    kept, dropped = fit(parameter_columns(report, params, options.sig_figs), width, options.wide)
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


def weights_line(report: Report) -> Text:
    """The weights of weighted draws: Kish ESS, Pareto k against its threshold and the draws it needs."""
    w = report.weights
    assert w is not None
    failed = {c.name: c for c in report.checks if not c.passed}
    ess_style = "bold red" if "ess" in failed else "green"
    k_check = failed.get("pareto-k")
    k_style = "green" if k_check is None else ("bold red" if k_check.severity == "error" else "yellow")
    k_text = "-" if w.pareto_k != w.pareto_k else f"{w.pareto_k:.2f}"
    return Text.assemble(
        ("weights     ", "bold"), "Kish ESS ", (ess(w.kish_ess), ess_style), f" of {w.draws} draws; Pareto k ",
        (k_text, k_style), f" (threshold {w.k_threshold:.2f} = min(1 - 1/log10 S, 0.7); Vehtari et al. 2024)",
    )  # fmt: skip


def sampler_panel(report: Report, width: int, boxed: bool = True) -> Group | Panel:
    """The sampler's facts and every failed check with its advice, in a box on a terminal.

    Without a terminal (a CI log, a pipe) no box: a box pads every line and
    cuts a title wider than itself. Advice wraps under itself, indented.
    """
    s = report.sampler
    t = report.thresholds
    failed = {c.name for c in report.checks if not c.passed}
    lines = []
    if report.weights is not None:
        lines.append(weights_line(report))
    else:
        acc = _chains(s.acceptance.per_chain, lambda v: num(v, 3), s.acceptance.outliers, style="yellow")
        overall = num(s.acceptance.overall, 3)
        label = f"{s.acceptance.label:<12}"
        lines.append(Text.assemble((label, "bold"), *acc, f" (all {overall}; {s.acceptance.source})"))
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
        lines.append(Text.assemble((head, "bold red" if fails else "bold yellow"), printable(c.message)))
        if c.advice:
            lines.append(Padding(Text(f"what to do: {printable(c.advice)}", style="dim"), (0, 0, 0, 2)))
    for note in report.notes:
        lines.append(Text(f"note: {printable(note)}", style="dim"))
    src = ", ".join(map(printable, report.source)) or "input"
    title = Text(f"sampler: {src}, {plural(report.n_chains, 'chain')} x {plural(report.n_draws, 'draw')}")
    if not boxed or title.cell_len + 6 > width:  # a title in the border is cut where it does not fit: above instead
        head = Text(title.plain, style="bold", no_wrap=True, overflow="ignore")  # a long file name runs on, whole
        return Group(head, Padding(Group(*lines), (0, 0, 0, 2)))
    return Panel(Group(*lines), title=title, title_align="left", expand=False)  # file names verbatim


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
        col("parameter", lambda r: (printable(r.name), "bold"), left=True),
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


def classic_panel(report: Report, width: int, wide: bool = False) -> Group:
    c = report.classic
    assert c is not None
    columns = classic_columns(report)
    kept, dropped = fit(columns, width, wide)
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


def render_report(report: Report, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """The report as tables fitted to the terminal: failing parameters first, then by variable; sampler; classic."""
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
        tables.append((f"{printable(title)} ({moved} failing, above)" if moved else printable(title), params))
    for title, params in tables:
        text, left_out = parameter_table(report, title, params, width, options)
        shown |= {c.header for c in parameter_columns(report, params[:1], options.sig_figs)} - set(left_out)
        dropped += [h for h in left_out if h not in dropped]
        con.print(text, soft_wrap=True)
    con.print(_legend(shown, dropped, width))
    con.print(sampler_panel(report, width, boxed=con.is_terminal), crop=False)  # a long title runs on, whole
    if report.classic is not None:
        con.print(classic_panel(report, width, options.wide), soft_wrap=True)
