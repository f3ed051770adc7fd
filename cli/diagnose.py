"""`mcmc diagnose`: convergence diagnostics of chain files, for people and for CI.

Parses the options, resolves them over ``[tool.mcmc.diagnose]`` from the
nearest ``pyproject.toml`` (:mod:`mcmc.cli.config`), calls
:func:`mcmc.cli.commands.diagnose.diagnose` (which reads the chains and makes
the report), renders the report as the display settings say
(:class:`~mcmc.cli.render.RenderOptions`), prints one verdict line on stderr
and exits 0 (pass), 1 (a check failed) or 2 (bad usage or unreadable input).
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from mcmc.cli import options
from mcmc.cli.console import CheckFailed, command_line
from mcmc.cli.render import Format, RenderOptions, choices, emit
from mcmc.cli.render.common import print_verdict
from mcmc.cli.summaries import SUMMARIES
from mcmc.core.errors import UsageError

DiagnoseFormat = choices("table", "json", "csv", "md")
PLOT_MAX = 8  # parameters plotted by default: more makes an unreadable figure
REPORTS = "Reports"  # help panel of the files written beside the terminal table
FOLLOW = "Following a running sampler"

HELP = SUMMARIES["diagnose"] + """

Reads chain files (chains .npz, .npy of shape (chain, draw[, dim]), ArviZ netCDF .nc or emcee HDF5 backend .h5, ArviZ zarr store .zarr, posteriordb .json, CmdStan CSV with one file per chain, CSV with chain and draw columns, or - for stdin) and reports, per scalar parameter, mean, sd, quantiles, MCSE, rank-normalized split R-hat, bulk and tail ESS, ESS implied by SSIF, autocorrelations and move rate; and for the sampler: acceptance, divergent transitions, tree-depth saturation and E-BFMI per chain (CmdStan `diagnose` semantics). Failing parameters come first, worst first; each failed check says what to do; the log density (lp) has its own row; estimates show the digits their MCSE supports.

Weighted draws (mcmc sample -s importance, -s likelihood-weighting on a network) are judged by their weights instead: the Kish ESS and the Pareto k of the weights' tail (Vehtari et al. 2024: fails at k >= min(1 - 1/log10 S, 0.7) for S draws, warns above 0.5), with the self-normalised mean and sd of every parameter and their delta-method MCSE.

The verdict goes to stderr as one line. Exit status: 0 every check passed, 1 a check failed, 2 bad usage or unreadable input. Defaults can be set in a \\[tool.mcmc.diagnose] table of pyproject.toml (current directory or nearest parent); command-line options override it.

[bold]Examples[/]

[dim]# a CI gate on a CmdStan run: four chains as one quoted glob[/]

mcmc diagnose 'output_*.csv' --max-rhat 1.01 --min-ess 400

[dim]# only the theta variables, as JSON for a script, with plots[/]

mcmc diagnose fit.nc --var 'theta[*]' -f json -o report.json --plot report.png

[dim]# a Markdown summary for a CI job page, straight from mcmc sample[/]

mcmc sample -o - | mcmc diagnose - --format md >> "$GITHUB_STEP_SUMMARY"

[dim]# a CI gate: the table in the log, an HTML page and JUnit XML to keep[/]

mcmc diagnose fit.nc --html report.html --junit junit.xml

[dim]# R coda's classic diagnostics too; nested R-hat over 4 superchains[/]

mcmc diagnose fit.nc --diagnostics classic --superchains 4

[dim]# follow a CmdStan run as it writes; exit 0 once every check passes[/]

mcmc diagnose --follow 'output_*.csv' --until-pass
"""


def command(
    files: Annotated[
        list[str],
        typer.Argument(
            metavar="FILE",
            help="Chain files; several CmdStan CSV files (or a quoted glob) are several chains. '-' reads stdin.",
            show_default=False,
        ),
    ],
    var: options.Var = None,
    fmt: Annotated[
        DiagnoseFormat | None,  # type: ignore[valid-type]
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            help="table: coloured tables for a terminal. json: the documented schema mcmc.diagnose/1. "
            "csv: one row per parameter. md: Markdown for CI summaries. \\[default: table]",
            show_default=False,
            case_sensitive=False,
        ),
    ] = None,
    max_rhat: options.MaxRhat = None,
    min_ess: options.MinEss = None,
    max_divergences: options.MaxDivergences = None,
    min_ebfmi: options.MinEbfmi = None,
    max_treedepth_hits: options.MaxTreedepthHits = None,
    ssif_ratio: options.SsifRatio = None,
    max_ll_gap: options.MaxLlGap = None,
    quantiles: Annotated[
        str | None,
        typer.Option(
            metavar="P,P,...",
            help="Comma-separated probabilities of the reported quantiles. \\[default: 0.05,0.5,0.95]",
            show_default=False,
        ),
    ] = None,
    lags: Annotated[
        str | None,
        typer.Option(
            metavar="K,K,...",
            help="Comma-separated lags of the reported autocorrelations (averaged over chains). "
            "\\[default: 1,2,5,10,20,50]",
            show_default=False,
        ),
    ] = None,
    plot: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.png",
            rich_help_panel=REPORTS,
            help="Also draw density, trace (divergences marked), rank and autocorrelation plots of the worst "
            "parameters, and the energy plot when the file has energies, to this image (.png, .pdf or .svg).",
            show_default=False,
        ),
    ] = None,
    plot_max: Annotated[
        int,
        typer.Option(
            metavar="N", rich_help_panel=REPORTS, min=1,
            help="Plot at most this many parameters, the failing ones first, then the lowest ESS; the title "
            "names those left out. --html draws every failing one all the same.",
        ),
    ] = PLOT_MAX,  # fmt: skip
    html: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.html", rich_help_panel=REPORTS,
            help="Also write one self-contained HTML page to attach to a pull request: the verdict, the checks, a "
            "sortable table of every parameter and lp, a pair plot with the divergences, the plots of every failing "
            "parameter, and how it was made (version, date, command, thresholds, input hashes); nothing loaded "
            "from the network.",
            show_default=False,
        ),
    ] = None,  # fmt: skip
    junit: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.xml", rich_help_panel=REPORTS,
            help="Also write JUnit XML, one test case per check and per failing parameter, for CI test views.",
            show_default=False,
        ),
    ] = None,  # fmt: skip
    output_json: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.json", rich_help_panel=REPORTS,
            help="Also write the JSON document (schema mcmc.diagnose/1) to this file.", show_default=False,
        ),
    ] = None,  # fmt: skip
    output_md: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.md", rich_help_panel=REPORTS,
            help="Also write the Markdown summary (under 60,000 characters, for a pull-request comment).",
            show_default=False,
        ),
    ] = None,  # fmt: skip
    output: options.Output = "-",
    layout: options.LayoutOption = None,
    names: Annotated[
        str | None,
        typer.Option(
            metavar="NAMES",
            help="Names of the last axis of a bare array (.npy, .npz saved without names, emcee's HDF5 backend), "
            "e.g. m,b,log_f; each becomes a parameter.",
            show_default=False,
        ),
    ] = None,
    discard: Annotated[
        int, typer.Option(metavar="N", help="Drop the first N draws of every chain (burn-in) before diagnosing.")
    ] = 0,
    thin: Annotated[int, typer.Option(metavar="K", help="Keep every K-th draw (after --discard).")] = 1,
    strict: options.Strict = False,
    sig_figs: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Show N significant figures of every estimate instead of the digits its Monte Carlo standard "
            "error supports (as stansummary's --sig_figs).",
            show_default=False,
        ),
    ] = None,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Show every table column; by default the least important ones are left out to fit the terminal.",
            show_default=False,
        ),
    ] = False,
    diagnostics: Annotated[
        str | None,
        typer.Option(
            metavar="SET",
            help="default, or classic: also R coda's Gelman-Rubin PSRF (and multivariate), Geweke, Heidelberger-Welch, "
            "Raftery-Lewis, AR effective size, batch SE and rejection rate; nested R-hat; quantile ESS/MCSE; "
            "the HDI beside the equal-tailed interval; emcee's autocorrelation time. \\[default: default]",
            show_default=False,
        ),
    ] = None,
    superchains: Annotated[
        str | None,
        typer.Option(
            metavar="K|IDS",
            help="Nested R-hat for many short chains (implies --diagnostics classic): K superchains of "
            "consecutive chains, or one superchain id per chain.",
            show_default=False,
        ),
    ] = None,
    quiet: options.Quiet = False,
    include_warmup: Annotated[
        bool,
        typer.Option(
            "--include-warmup", rich_help_panel=options.CHECKS,
            help="Judge the warm-up draws a file keeps (mcmc sample --keep-warmup) with the draws, before them; "
            "by default they are left out. --plot draws lp over warm-up and draws either way, the warm-up shaded.",
        ),
    ] = False,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow", rich_help_panel=FOLLOW,
            help="Watch the files while another program writes them (CmdStan CSV, draws tables, mcmc's "
            "checkpoints): reread them as they grow (a partly written last line is skipped), redraw the table "
            "in place on a terminal or print a line per look on a pipe, and stop when they stop growing "
            "(--idle), exit 0 if the checks then pass, else 1.",
        ),
    ] = False,
    until_pass: Annotated[
        bool,
        typer.Option("--until-pass", rich_help_panel=FOLLOW,
                     help="With --follow: exit 0 as soon as every check passes."),
    ] = False,
    poll: Annotated[
        str,
        typer.Option(metavar="DURATION", rich_help_panel=FOLLOW, help="With --follow: look at the files this often."),
    ] = "2s",
    idle: Annotated[
        str,
        typer.Option(metavar="DURATION", rich_help_panel=FOLLOW,
                     help="With --follow: stop when the files have not grown for this long."),
    ] = "60s",
) -> None:
    if follow:
        _follow(files, var, max_rhat, min_ess, max_divergences, min_ebfmi, max_treedepth_hits, ssif_ratio, strict,
                include_warmup, until_pass, poll, idle,
                others={"--format": fmt, "--plot": plot, "--html": html, "--junit": junit, "--output-json": output_json,
                        "--output-md": output_md, "-o": None if output == "-" else output,
                        "--diagnostics": diagnostics, "--superchains": superchains,
                        "--discard": discard or None, "--thin": None if thin == 1 else thin})  # fmt: skip
        return
    if until_pass:
        raise UsageError("--until-pass goes with --follow")
    if plot:
        from mcmc.cli.render.plot import image_format  # start-up: the plot renderer only with --plot

        image_format(plot)  # refuse a bad --plot name before the (possibly long) work
    # start-up: the command layer (NumPy, the readers, the statistics) only once the options parse
    from mcmc.cli.commands.diagnose import DiagnoseSettings, diagnose
    from mcmc.cli.config import resolve

    fmt = options.report_format(fmt, output, [f.value for f in DiagnoseFormat], own=True)
    given = {
        **options.check_options(max_rhat, min_ess, max_divergences, min_ebfmi, max_treedepth_hits, ssif_ratio, strict,
                                max_ll_gap),
        "var": var, "quantiles": quantiles, "lags": lags, "format": fmt, "sig-figs": sig_figs,
        "wide": wide or None, "diagnostics": diagnostics, "superchains": superchains,
    }  # fmt: skip
    settings = resolve(given, formats=tuple(f.value for f in DiagnoseFormat))
    reports = {"--output-json": output_json, "--output-md": output_md, "--html": html, "--junit": junit}
    report = diagnose(
        files,
        DiagnoseSettings(
            thresholds=settings.thresholds, strict=settings.strict, var=settings.var, probs=settings.probs,
            lags=settings.lags, classic=settings.classic, superchains=settings.superchains, labels=settings.labels,
            include_warmup=include_warmup,
        ),
        outputs={"-o": output, "--plot": plot, **reports}, stdin=sys.stdin.buffer,
        inputs=[str(settings.config_path)] if settings.config_path else [], plot=bool(plot or html),
        plot_cap=plot_max, every_failing=bool(html), layout=layout.value if layout is not None else None, names=names,
        discard=discard, thin=thin, command=command_line() if html else None,
    )  # fmt: skip
    # How to show it is the command line's business, not the report's judgement.
    shown = RenderOptions(Format(settings.format or Format.table), settings.wide, settings.sig_figs)
    main = shown.format
    if not (quiet and main is Format.table and output == "-"):
        emit(report, main, output, shown)
    for kind, path in ((Format.json, output_json), (Format.md, output_md), (Format.junit, junit)):
        if path:
            emit(report, kind, path, shown)
    if plot or html:
        from mcmc.cli.render import plot as plot_render  # start-up: matplotlib's renderer only with a plot

        if plot:
            plot_render.save(plot_render.report_figure(report, plot_max), plot)
        if html:
            from mcmc.cli.console import write_output  # start-up: as above, only with --html
            from mcmc.cli.render import html as html_render  # start-up: only with --html

            page = html_render.document(report, plot_render.report_images(report), shown).encode()
            write_output(html, lambda fh: fh.write(page))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from mcmc.cli.render import github  # start-up: only on GitHub Actions

        # GitHub reads workflow commands from stdout; when stdout carries a
        # JSON, CSV or Markdown document they go to stderr, not into the data.
        github.render(report, sys.stdout if output != "-" or main is Format.table else sys.stderr)
    if not (quiet and report.passed):
        print_verdict(report.verdict(), report.passed)
    if not report.passed:
        raise CheckFailed(report.verdict())


def _follow(files: list[str], var: list[str] | None, max_rhat: float | None, min_ess: float | None,
            max_divergences: int | None, min_ebfmi: float | None, max_treedepth_hits: int | None,
            ssif_ratio: float | None, strict: bool, include_warmup: bool, until_pass: bool, poll: str, idle: str,
            others: dict[str, object]) -> None:  # fmt: skip
    """``--follow``: judge the files as they grow, drawn as the table in place (terminal) or a line per look (pipe)."""
    given = [option for option, value in others.items() if value is not None]
    if given:
        raise UsageError(f"--follow shows the checks as the files grow; {', '.join(given)} applies to a finished "
                         "file (run mcmc diagnose on it afterwards)")  # fmt: skip
    poll_s = options.parse_duration(poll, "--poll")
    idle_s = options.parse_duration(idle, "--idle")
    if poll_s is None or idle_s is None or poll_s <= 0:
        raise UsageError("--poll and --idle take durations such as 2s or 5m")
    # start-up: the command layer (NumPy, the readers, the statistics) only once the options parse
    from mcmc.cli.commands.diagnose import DiagnoseSettings
    from mcmc.cli.commands.follow import follow
    from mcmc.cli.config import resolve
    from mcmc.cli.console import err_console, out_console

    settings = resolve({**options.check_options(max_rhat, min_ess, max_divergences, min_ebfmi, max_treedepth_hits,
                                                ssif_ratio, strict), "var": var})  # fmt: skip
    shown = RenderOptions(Format.table)
    live = None
    if out_console.is_terminal:
        from rich.live import Live  # start-up: rich's live display only on a terminal
        from rich.text import Text

        live = Live(Text("waiting for draws ..."), console=out_console, auto_refresh=False, transient=False)
        live.start()

    def on_look(look: object) -> None:
        from mcmc.cli.console import stop_if_signalled  # start-up: as above

        stop_if_signalled()
        report, waiting = look.report, look.waiting  # type: ignore[attr-defined]
        if live is not None:
            live.update(_table_text(report, shown) if report is not None else Text(f"waiting: {waiting}"),
                        refresh=True)  # fmt: skip
        else:
            head = f"{look.seconds:7.1f}s {look.chains} chains x {look.draws} draws: "  # type: ignore[attr-defined]
            out_console.print(head + (report.verdict() if report is not None else f"waiting: {waiting}"),
                              markup=False, highlight=False, soft_wrap=True)
            out_console.file.flush()

    try:
        result = follow(
            files, DiagnoseSettings(thresholds=settings.thresholds, strict=settings.strict, var=settings.var),
            poll=poll_s, idle=idle_s, until_pass=until_pass, include_warmup=include_warmup, on_look=on_look,
        )  # fmt: skip
    finally:
        if live is not None:
            live.stop()
    report = result.last.report  # type: ignore[union-attr]
    if result.reason == "idle":
        err_console.print(f"the files have not grown for {result.idle_seconds:.0f} s: stopped following "
                          f"({result.looks} looks)", markup=False, highlight=False)  # fmt: skip
    print_verdict(report.verdict(), report.passed)  # type: ignore[union-attr]
    if not report.passed:  # type: ignore[union-attr]
        raise CheckFailed(report.verdict())  # type: ignore[union-attr]


def _table_text(report: object, shown: RenderOptions) -> object:
    """The report's table as text for the live display (rendered once per look)."""
    # start-up: the table renderer and rich's text only on a terminal with --follow
    import io
    from rich.text import Text
    from mcmc.cli.render import table

    buf = io.StringIO()
    table.render(report, buf, shown)
    return Text.from_ansi(buf.getvalue())


command.__doc__ = HELP
