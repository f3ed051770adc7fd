"""`mcmc diagnose`: convergence diagnostics of chain files, for people and for CI.

Parses options (and ``[tool.mcmc.diagnose]`` in the nearest ``pyproject.toml``),
reads the chains, asks :func:`mcmc.diagnostics.report.check` for a report,
renders it, prints one verdict line on stderr and exits 0 (pass), 1 (a check
failed) or 2 (bad usage or unreadable input).
"""

from __future__ import annotations

import io
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from mcmc.cli.console import CheckFailed, err_console, out_console, write_output
from mcmc.cli.render import Format
from mcmc.core.errors import UsageError

class Layout(str, Enum):
    """Axis order of bare arrays (:data:`mcmc.diagnostics.readers.LAYOUTS`)."""

    chain_draw = "chain,draw"
    draw_chain = "draw,chain"


PLOT_CAP = 8  # scalar parameters plotted without --var: more makes an unreadable figure

# [tool.mcmc.diagnose] keys (hyphens or underscores) -> option names.
CONFIG_KEYS = (
    "max-rhat", "min-ess", "max-divergences", "min-ebfmi", "max-treedepth-hits",
    "ssif-ratio", "var", "quantiles", "lags", "format",
)  # fmt: skip

HELP = """Diagnose convergence of MCMC draws: R-hat, ESS, MCSE, autocorrelation, SSIF, acceptance.

Reads chain files (.npz, ArviZ .nc or .zarr, emcee's HDF5 backend, CmdStan CSV with one
file per chain, plain CSV with chain/draw columns, .npy, or - for stdin) and reports, per scalar parameter,
mean, sd, quantiles, MCSE, rank-normalized split R-hat, bulk and tail ESS, ESS
implied by SSIF, autocorrelations and move rate; and for the sampler: acceptance,
divergent transitions, tree-depth saturation and E-BFMI per chain (CmdStan
`diagnose` semantics).

The verdict goes to stderr as one line. Exit status: 0 every check passed, 1 a
check failed, 2 bad usage or unreadable input. Defaults can be set in a
\\[tool.mcmc.diagnose] table of pyproject.toml (current directory or nearest
parent); command-line options override it.
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
    var: Annotated[
        list[str] | None,
        typer.Option(
            "--var",
            metavar="NAME|REGEX",
            help="Variable or parameter to report, by exact name (theta, theta[0]) or regular expression matching "
            "the whole name ('theta\\\\[[0-3]]', 'sigma.*'). Repeat for several. Default: all.",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        Format | None,
        typer.Option(
            "--format",
            "-f",
            metavar="table|json|csv|md",
            help="table: coloured tables for a terminal. json: the documented schema mcmc.diagnose/1. "
            "csv: one row per parameter. md: Markdown for CI summaries. \\[default: table]",
            show_default=False,
            case_sensitive=False,
        ),
    ] = None,
    max_rhat: Annotated[
        float | None,
        typer.Option(
            metavar="R",
            help="Fail if the rank-normalized split R-hat (max of bulk and folded) of any parameter exceeds this. "
            "Vehtari et al. (2021) recommend 1.01. \\[default: 1.01]",
            show_default=False,
        ),
    ] = None,
    min_ess: Annotated[
        float | None,
        typer.Option(
            metavar="N",
            help="Fail if the bulk or tail ESS of any parameter is below this. Vehtari et al. (2021) recommend "
            "at least 100 per chain, i.e. 400 for four chains. \\[default: 400]",
            show_default=False,
        ),
    ] = None,
    max_divergences: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Fail if more transitions than this ended in a divergence (HMC/NUTS; any divergence means the "
            "sampler may be missing part of the posterior). \\[default: 0]",
            show_default=False,
        ),
    ] = None,
    min_ebfmi: Annotated[
        float | None,
        typer.Option(
            metavar="E",
            help="Fail if the energy Bayesian fraction of missing information of any chain is below this "
            "(Betancourt 2016; CmdStan uses 0.3). \\[default: 0.3]",
            show_default=False,
        ),
    ] = None,
    max_treedepth_hits: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Warn (never fail) if more transitions than this reached the maximum tree depth: an efficiency "
            "problem, not a bias. The limit is CmdStan's max_depth from the file, else 10. \\[default: 0]",
            show_default=False,
        ),
    ] = None,
    ssif_ratio: Annotated[
        float | None,
        typer.Option(
            metavar="K",
            help="Warn (never fail) when the ESS implied by SSIF and the bulk ESS differ by more than this factor; "
            "SSIF is exact only for AR(1) chains. \\[default: 2]",
            show_default=False,
        ),
    ] = None,
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
            help=f"Also draw trace, rank and autocorrelation plots (first {PLOT_CAP} parameters unless --var "
            "selects) to this image (.png, .pdf or .svg).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        str,
        typer.Option("--output", "-o", metavar="FILE", help="Write the report to FILE (atomically); - is stdout."),
    ] = "-",
    layout: Annotated[
        Layout | None,
        typer.Option(
            metavar="chain,draw|draw,chain",
            help="Axis order of a bare array (.npy, .npz saved without names): chain,draw, or draw,chain as "
            "emcee's get_chain() saves (draw, walker, dim). Without it, a bare array with more chains than "
            "draws is refused. \\[default: chain,draw]",
            show_default=False,
        ),
    ] = None,
    names: Annotated[
        str | None,
        typer.Option(
            metavar="NAME,NAME,...",
            help="Names of the last axis of a bare array (.npy, .npz saved without names, emcee's HDF5 backend), "
            "e.g. m,b,log_f; each becomes a parameter.",
            show_default=False,
        ),
    ] = None,
    discard: Annotated[
        int, typer.Option(metavar="N", help="Drop the first N draws of every chain (burn-in) before diagnosing.")
    ] = 0,
    thin: Annotated[int, typer.Option(metavar="K", help="Keep every K-th draw (after --discard).")] = 1,
) -> None:
    config, config_path = load_config(Path.cwd())
    options: dict[str, Any] = {
        "max-rhat": max_rhat,
        "min-ess": min_ess,
        "max-divergences": max_divergences,
        "min-ebfmi": min_ebfmi,
        "max-treedepth-hits": max_treedepth_hits,
        "ssif-ratio": ssif_ratio,
        "var": var or None,
        "quantiles": quantiles,
        "lags": lags,
        "format": fmt,
    }
    given = {k: v for k, v in options.items() if v is not None}
    settings = {**config, **given}

    def where(key: str) -> str:
        return f"--{key}" if key in given else f"{config_path}: [tool.mcmc.diagnose] {key}"

    from mcmc.diagnostics.readers import read_chains
    from mcmc.diagnostics.report import DEFAULT_LAGS, DEFAULT_PROBS, Thresholds, check

    thresholds = Thresholds(
        **{
            key.replace("-", "_"): _number(settings[key], where(key), int if key in _INT_KEYS else float)
            for key in ("max-rhat", "min-ess", "max-divergences", "min-ebfmi", "max-treedepth-hits", "ssif-ratio")
            if key in settings
        }
    )
    probs = _floats(settings.get("quantiles", list(DEFAULT_PROBS)), where("quantiles"))
    lag_list = [int(v) for v in _floats(settings.get("lags", list(DEFAULT_LAGS)), where("lags"), integer=True)]
    patterns = settings.get("var")
    if isinstance(patterns, str):
        patterns = [patterns]
    if patterns is not None and not (isinstance(patterns, list) and all(isinstance(p, str) for p in patterns)):
        raise UsageError(f"{where('var')}: must be a name or a list of names")
    try:
        out_format = Format(str(getattr(settings.get("format"), "value", settings.get("format") or "table")).lower())
    except ValueError:
        raise UsageError(f"{where('format')}: must be one of table, json, csv, md") from None

    if plot:
        from mcmc.cli.plot import image_format

        image_format(plot)  # refuse a bad --plot name before the (possibly long) work
    from mcmc.core.paths import check_paths

    check_paths({"-o": output, "--plot": plot}, [*files, *([str(config_path)] if config_path else [])])

    if "-" in files and sys.stdin.isatty():
        raise UsageError(
            "-: standard input is a terminal; pipe a chains file in, e.g. 'mcmc sample -o - | mcmc diagnose -'"
        )
    chains = read_chains(
        files,
        stdin=sys.stdin.buffer if "-" in files else None,
        layout=layout.value if layout else None,
        names=names,
        discard=discard,
        thin=thin,
    )
    # A quoted glob is expanded by the reader: report the files actually read.
    sources = list(dict.fromkeys(chains.attrs.get("source_files") or files))
    report = check(chains, var=patterns, thresholds=thresholds, probs=probs, lags=lag_list, source=sources)

    from mcmc.cli.render import render

    if output == "-" and out_format is Format.table:
        render(report, out_format, out_console.file)
    else:
        buf = io.StringIO()
        render(report, out_format, buf)
        data = buf.getvalue().encode()
        write_output(output, lambda fh: fh.write(data))

    if plot:
        from mcmc.cli.plot import plot_report

        plot_report(report, plot, cap=None if patterns else PLOT_CAP)

    from rich.text import Text

    verdict = report.verdict()
    head, _, rest = verdict.partition(":")
    # Text, not markup: parameter names such as "b[lo]" must print verbatim.
    line = Text.assemble((head + ":", "bold green" if report.passed else "bold red"), rest)
    err_console.print(line, highlight=False, soft_wrap=True)
    if not report.passed:
        raise CheckFailed(verdict)


command.__doc__ = HELP

_INT_KEYS = ("max-divergences", "max-treedepth-hits")


def load_config(start: Path) -> tuple[dict[str, Any], Path | None]:
    """Read ``[tool.mcmc.diagnose]`` from the nearest ``pyproject.toml`` at or above ``start``.

    Returns the table with keys normalised to hyphens, and the file it came
    from (``None`` when there is no ``pyproject.toml``, or it has no such
    table). Raises :class:`UsageError` naming the file for invalid TOML or an
    unknown key.
    """
    for directory in (start, *start.parents):
        path = directory / "pyproject.toml"
        if path.is_file():
            break
    else:
        return {}, None
    import tomllib  # only when there is a pyproject.toml

    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    table = doc.get("tool", {}).get("mcmc", {}).get("diagnose")
    if table is None:
        return {}, None
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.mcmc.diagnose] must be a table")
    config: dict[str, Any] = {}
    for key, value in table.items():
        norm = key.replace("_", "-")
        if norm not in CONFIG_KEYS:
            raise UsageError(
                f"{path}: unknown key {key!r} in [tool.mcmc.diagnose]; known keys: {', '.join(CONFIG_KEYS)}"
            )
        config[norm] = value
    return config, path


def _number(value: Any, where: str, kind: type) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise UsageError(f"{where}: must be a number (got {value!r})")
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"{where}: must be a number (got {value!r})") from None
    if kind is int:
        if not number.is_integer():
            raise UsageError(f"{where}: must be a whole number (got {value!r})")
        return int(number)
    return number


def _floats(value: Any, where: str, integer: bool = False) -> list[float]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise UsageError(f"{where}: must be a comma-separated list or an array (got {value!r})")
    out = []
    for item in items:
        if isinstance(item, bool):
            raise UsageError(f"{where}: must hold numbers (got {item!r})")
        try:
            v = float(str(item).strip())
        except ValueError:
            raise UsageError(f"{where}: must hold numbers (got {str(item).strip()!r})") from None
        if integer and not v.is_integer():
            raise UsageError(f"{where}: must hold whole numbers (got {str(item).strip()!r})")
        out.append(v)
    return out
