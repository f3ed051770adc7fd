"""`mcmc compare`: samplers head to head on one target, a run against another, a run against reference draws.

Parses options, runs the samplers (:func:`mcmc.core.samplers.driver.run`) or
reads the chains (:func:`mcmc.diagnostics.readers.read_chains`, posteriordb
JSON via :func:`mcmc.diagnostics.compare.read_reference`), asks
:mod:`mcmc.diagnostics.compare` for the numbers and renders them: a rich table
by default, ``--format json`` (schema ``mcmc.compare/1``) or ``csv`` on stdout.
The verdict goes to stderr as one line; exit 0 pass, 1 a difference beyond
``--max-z``, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from dataclasses import asdict
from enum import Enum
from typing import IO, Annotated, Any

import typer

from mcmc.cli.console import CheckFailed, err_console, out_console, progress_enabled, write_output
from mcmc.cli.diagnose import Layout
from mcmc.core.errors import UsageError

SCHEMA = "mcmc.compare/1"


class CompareFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


HELP = """Compare MCMC runs: samplers head to head, one run against another, a run against reference draws.

[bold]Samplers[/] (--target and --samplers): run each sampler on the same target with the
same seed and tabulate wall time, density and gradient evaluations, max R-hat, min
bulk and tail ESS, ESS per second and per 1000 evaluations (the worst coordinate's
min(bulk, tail) ESS over the sampling phase; a gradient counts as --grad-cost density
evaluations, a fused value-and-gradient call as 1 + grad-cost), acceptance,
divergences and, where the target knows its exact moments, the worst
|mean - truth| / MCSE (and the same for the sd with the delta-method MCSE of the sd).
Fails if a sampler's mean (with --check-sd: or sd) is more than --max-z MCSEs off the truth.

[bold]Run against run[/] (A B): for each scalar parameter both share,
z = (mean A - mean B) / sqrt(MCSE_A^2 + MCSE_B^2), the sd ratio and both ESS. Fails
when |z| > --max-z for any parameter: the CI gate for "did my new sampler or model
version change the answer". Each source is any file mcmc diagnose reads, or a quoted
glob of CmdStan CSV files.

[bold]Run against reference[/] (RUN --reference REF): the same test against reference
draws: a chains file, or posteriordb reference-posterior JSON (Stan names theta\\[1]
become theta\\[0]).

Under the null hypothesis each z is about standard normal, so |z| > 4 happens by
chance for about 6.3e-5 of parameters: with N parameters expect N x 6.3e-5 false
alarms. For a familywise false-alarm rate alpha over N parameters use the
Bonferroni threshold Phi^-1(1 - alpha / 2N) (4.26 for N = 500, alpha = 1%); the
verdict notes it when it exceeds --max-z. The MCSEs are estimates and assume converged
chains: check both runs with mcmc diagnose.

Exit status: 0 pass, 1 a difference beyond --max-z, 2 bad usage or unreadable input.
"""


def command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="RUN",
            help="A B: two runs to compare; or one RUN with --reference. Any chains file mcmc diagnose reads; "
            "a quoted glob ('run_*.csv') is several chains of one run.",
            show_default=False,
        ),
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option(
            "--reference",
            "-r",
            metavar="REF",
            rich_help_panel="Reference",
            help="Reference draws: posteriordb JSON (.json) or any chains file.",
            show_default=False,
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            "-t",
            metavar="NAME|FILE.py[:obj]",
            rich_help_panel="Samplers",
            help="Target the samplers run on (as in mcmc sample).",
            show_default=False,
        ),
    ] = None,
    samplers: Annotated[
        str | None,
        typer.Option(
            "--samplers",
            "-s",
            metavar="NAME,NAME,...",
            rich_help_panel="Samplers",
            help="Comma-separated samplers: rwm, mh-independence, mh-lognormal, two-stage, slice, elliptical-slice, "
            "hmc, rejection, isir; gibbs (ising, gaussian), swendsen-wang (ising).",
            show_default=False,
        ),
    ] = None,
    chains: Annotated[
        int, typer.Option("--chains", "-c", min=1, rich_help_panel="Samplers", help="Chains per sampler.")
    ] = 4,
    warmup: Annotated[
        int, typer.Option(min=0, rich_help_panel="Samplers", help="Warm-up iterations per chain.")
    ] = 1000,
    draws: Annotated[
        int, typer.Option(min=1, rich_help_panel="Samplers", help="Sampling iterations per chain.")
    ] = 1000,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            rich_help_panel="Samplers",
            help="Seed shared by every sampler; omitted: a random one, printed.",
            show_default=False,
        ),
    ] = None,
    dim: Annotated[
        int | None,
        typer.Option(min=1, rich_help_panel="Samplers", help="Dimension of the target.", show_default=False),
    ] = None,
    target_option: Annotated[
        list[str] | None,
        typer.Option(
            "--target-option",
            "-T",
            metavar="KEY=VALUE",
            rich_help_panel="Samplers",
            help="Option of a built-in target, repeatable (rho=0.9, scales=log, data=FILE.csv, b=0.1, ...).",
            show_default=False,
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-P",
            metavar="SAMPLER:KEY=VALUE",
            rich_help_panel="Samplers",
            help="Tuning of one sampler, repeatable, with mcmc sample's option names: hmc:target-accept=0.95, "
            "rwm:scale=0.5, slice:width=2, hmc:path-length=3.",
            show_default=False,
        ),
    ] = None,
    var: Annotated[
        list[str] | None,
        typer.Option(
            "--var",
            metavar="NAME|REGEX",
            rich_help_panel="Runs",
            help="Compare only these variables or parameters, by exact name or regular expression (as in mcmc "
            "diagnose). Repeat for several. Default: every parameter the two sides share.",
            show_default=False,
        ),
    ] = None,
    grad_cost: Annotated[
        float,
        typer.Option(
            rich_help_panel="Samplers",
            help="Density evaluations one gradient evaluation counts as in the evaluation totals and ESS per "
            "1000 evaluations (1: a gradient costs one extra density evaluation; set your measured ratio).",
        ),
    ] = 1.0,
    max_z: Annotated[
        float,
        typer.Option(
            metavar="Z",
            help="Fail when |z| exceeds this for any parameter (about 6.3e-5 of parameters exceed 4 by chance).",
        ),
    ] = 4.0,
    check_sd: Annotated[
        bool,
        typer.Option(
            "--check-sd",
            help="Also fail when the sds differ by more than --max-z (delta-method MCSE of the sd; needs finite "
            "fourth moments, so heavy-tailed parameters give indicative z only).",
        ),
    ] = False,
    fmt: Annotated[
        CompareFormat,
        typer.Option(
            "--format",
            "-f",
            metavar="table|json|csv",
            help="table: for a terminal. json: schema mcmc.compare/1 (NaN as null). csv: one row per sampler or "
            "parameter.",
            case_sensitive=False,
        ),
    ] = CompareFormat.table,
    output: Annotated[
        str,
        typer.Option("--output", "-o", metavar="FILE", help="Write the report to FILE (atomically); - is stdout."),
    ] = "-",
    layout: Annotated[
        Layout | None,
        typer.Option(
            metavar="chain,draw|draw,chain",
            help="Axis order of bare arrays (.npy, .npz saved without names), as for mcmc diagnose.",
            show_default=False,
        ),
    ] = None,
) -> None:
    files = list(sources or [])
    from mcmc.core.paths import check_paths
    from mcmc.core.targets import is_user_target

    user_target = target.split(":", 1)[0] if target is not None and is_user_target(target) else None
    data_files = [item.partition("=")[2] for item in target_option or () if item.partition("=")[0].strip() == "data"]
    check_paths({"-o": output}, [*files, reference, user_target, *data_files])
    from mcmc.core.ranges import check_settings

    check_settings({"grad_cost": grad_cost, "max_z": max_z})
    if target is not None or samplers is not None:
        if files or reference is not None:
            raise UsageError("give either --target with --samplers, or chains files to compare, not both")
        if target is None or samplers is None:
            raise UsageError("comparing samplers needs both --target and --samplers (e.g. -t gaussian -s hmc,rwm)")
        if var:
            raise UsageError("--var selects parameters of runs being compared; with --samplers every coordinate counts")
        if layout is not None:
            raise UsageError("--layout describes chains files; with --samplers there are none")
        doc, passed, verdict = _compare_samplers(
            target, samplers, chains=chains, warmup=warmup, draws=draws, seed=seed, dim=dim,
            target_option=target_option or [], param=param or [], grad_cost=grad_cost, max_z=max_z,
            check_sd=check_sd,
        )  # fmt: skip
    else:
        if reference is not None and len(files) != 1:
            raise UsageError(f"--reference compares one run with the reference; got {len(files)} run sources")
        if reference is None and len(files) != 2:
            raise UsageError(
                f"give two runs to compare (A B), one run and --reference REF, or --target and --samplers; "
                f"got {len(files)} source(s)"
            )
        if param:
            raise UsageError("--param tunes the samplers of --target/--samplers; it does not apply to chains files")
        doc, passed, verdict = _compare_files(
            files, reference, max_z=max_z, check_sd=check_sd, var=var, layout=layout.value if layout else None
        )

    if output == "-" and fmt is CompareFormat.table:
        _console(out_console.file).print(_table(doc))
    else:
        data = _render(doc, fmt).encode()
        write_output(output, lambda fh: fh.write(data))

    from rich.text import Text

    head, _, rest = verdict.partition(":")
    style = "bold green" if passed and head == "PASS" else ("bold" if passed else "bold red")
    # Text, not markup: parameter names such as "b[lo]" must print verbatim.
    err_console.print(Text.assemble((head + ":", style), rest), highlight=False, soft_wrap=True)
    for note in doc.get("notes", []):
        err_console.print(Text(f"note: {note}", style="dim"), highlight=False, soft_wrap=True)
    if not passed:
        raise CheckFailed(verdict)


command.__doc__ = HELP


# --------------------------------------------------------------------------- samplers head to head


def _compare_samplers(
    target: str,
    samplers: str,
    *,
    chains: int,
    warmup: int,
    draws: int,
    seed: int | None,
    dim: int | None,
    target_option: list[str],
    param: list[str],
    grad_cost: float,
    max_z: float,
    check_sd: bool,
) -> tuple[dict[str, Any], bool, str]:
    import numpy as np

    from mcmc.cli.sample import parse_target_options
    from mcmc.core.random import ChainRandom
    from mcmc.core.samplers import SAMPLERS, get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import get_target
    from mcmc.diagnostics.compare import best_by_column, sampler_row, samplers_verdict

    names = [s.strip().lower() for s in samplers.split(",") if s.strip()]
    if not names:
        raise UsageError("--samplers needs at least one sampler name")
    for name in names:
        if name not in SAMPLERS:
            raise UsageError(f"--samplers: unknown sampler {name!r}; choose from {', '.join(SAMPLERS)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--samplers: {', '.join(twice)} listed more than once")
    extra = parse_target_options(target_option)
    if dim is not None and "dim" in extra:
        raise UsageError("give the dimension once: --dim or --target-option dim=..., not both")
    params = parse_sampler_params(param, names)  # before the target file is loaded and probed
    tgt = get_target(target, **({"dim": dim} if dim is not None else {}), **extra)
    kernels = {name: get_sampler(name) for name in names}
    # Refuse a sampler that cannot run on this target (hmc without a gradient,
    # two-stage without a prior/likelihood split) before any sampling time is spent.
    probe = tgt.initial(ChainRandom(0, (0,)), 1)
    for kernel in kernels.values():
        kernel.init(probe, tgt)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))  # type: ignore[operator]
        err_console.print(f"seed {seed} (random; pass --seed to repeat)", highlight=False)

    bar = None
    if progress_enabled():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=err_console, transient=True,
        )  # fmt: skip
        bar.start()
    rows = []
    try:
        for name, kernel in kernels.items():
            progress = None
            if bar is not None:
                task = bar.add_task(f"{name} on {tgt.name}", total=warmup + draws)

                def progress(done: int, total: int, task: Any = task) -> None:
                    bar.update(task, completed=done)

            result, timings = run(
                kernel, tgt, chains=chains, warmup=warmup, draws=draws, seed=seed, params=params[name],
                progress=progress,
            )  # fmt: skip
            rows.append(
                sampler_row(result, timings=timings, truth_mean=tgt.mean, truth_sd=tgt.sd, grad_cost=grad_cost)
            )
    finally:
        if bar is not None:
            bar.stop()

    passed, verdict = samplers_verdict(rows, max_z, check_sd)
    opts = {k: v for k, v in tgt.options.items() if v is not None}
    doc = {
        "schema": SCHEMA,
        "mode": "samplers",
        "target": tgt.name,
        "target_options": opts,
        "dim": tgt.dim,
        "exact_moments": tgt.mean is not None,
        "chains": chains,
        "warmup": warmup,
        "draws": draws,
        "seed": seed,
        "grad_cost": grad_cost,
        "params": {name: p for name, p in params.items() if p},
        "max_z": max_z,
        "check_sd": check_sd,
        "passed": passed,
        "verdict": verdict,
        "best": best_by_column(rows),
        "samplers": [asdict(r) for r in rows],
        "notes": [],
    }
    return _clean(doc), passed, verdict


# --------------------------------------------------------------------------- run against run / reference


#: Sampler options whose values are words (two-stage's proposal); every other one is a number.
TEXT_PARAMS = frozenset({"proposal"})


def parse_sampler_params(items: list[str], samplers: list[str]) -> dict[str, dict[str, Any]]:
    """``["hmc:target-accept=0.95"]`` -> ``{"hmc": {"target_accept": 0.95}, ...}`` (kernel keywords, every sampler).

    Option names are ``mcmc sample``'s (``--target-accept`` as ``target-accept``
    or ``target_accept``); values parse as in ``--target-option``.
    """
    from mcmc.cli.sample import SAMPLER_OPTIONS, parse_target_options
    from mcmc.core.ranges import check_setting

    out: dict[str, dict[str, Any]] = {name: {} for name in samplers}
    for item in items:
        sampler, sep, setting = item.partition(":")
        sampler = sampler.strip().lower()
        if not sep or "=" not in setting:
            raise UsageError(f"--param expects SAMPLER:KEY=VALUE, got {item!r}")
        if sampler not in out:
            raise UsageError(f"--param {item!r}: {sampler!r} is not among --samplers ({', '.join(samplers)})")
        ((key, value),) = parse_target_options([setting]).items()
        options = SAMPLER_OPTIONS.get(sampler, {})
        if key not in options:
            known = ", ".join(k.replace("_", "-") for k in options) or "none"
            raise UsageError(
                f"--param {item!r}: {sampler} has no option {key.replace('_', '-')!r} (its options: {known})"
            )
        if key not in TEXT_PARAMS and (isinstance(value, str) or isinstance(value, bool)):
            raise UsageError(f"--param {item!r}: {key.replace('_', '-')} must be a number, got {value!r}")
        check_setting(options[key], value, where=f"--param {item!r}:")
        out[sampler][options[key]] = value
    return out


def _compare_files(
    files: list[str],
    reference: str | None,
    *,
    max_z: float,
    check_sd: bool,
    var: list[str] | None = None,
    layout: str | None = None,
) -> tuple[dict[str, Any], bool, str]:
    from mcmc.diagnostics.compare import compare_draws, read_reference
    from mcmc.diagnostics.readers import read_chains

    if files.count("-") > 1:
        raise UsageError("only one source can be standard input (-)")
    if "-" in files and sys.stdin.isatty():
        raise UsageError("-: standard input is a terminal; pipe a chains file in")

    def read(src: str) -> tuple[Any, list[str]]:
        run = read_chains([src], stdin=sys.stdin.buffer if src == "-" else None, layout=layout)
        return run, list(dict.fromkeys(run.attrs.get("source_files") or [src]))

    a, source_a = read(files[0])
    if reference is not None:
        b, source_b = read_reference(reference, layout=layout), [reference]
    else:
        b, source_b = read(files[1])
    result = compare_draws(a, b, max_z=max_z, check_sd=check_sd, source_a=source_a, source_b=source_b, var=var)
    notes = list(result.notes)
    bonf = result.bonferroni_z(0.01)
    if bonf > max_z:
        notes.append(
            f"{len(result.parameters)} parameters: about {result.expected_false_alarms:.2g} expected beyond "
            f"|z| {max_z:g} by chance; --max-z {bonf:.2f} keeps the familywise false-alarm rate at 1% (Bonferroni)"
        )
    doc = {
        "schema": SCHEMA,
        "mode": "reference" if reference is not None else "runs",
        "a": {"source": source_a, "chains": result.a.n_chains, "draws": result.a.n_draws},
        "b": {"source": source_b, "chains": result.b.n_chains, "draws": result.b.n_draws},
        "max_z": max_z,
        "check_sd": check_sd,
        "passed": result.passed,
        "verdict": result.verdict(),
        "failed": list(result.failed),
        "only_in_a": list(result.only_in_a),
        "only_in_b": list(result.only_in_b),
        "expected_false_alarms": result.expected_false_alarms,
        "bonferroni_max_z_1pct": bonf,
        "notes": notes,
        "parameters": [asdict(p) for p in result.parameters],
    }
    return _clean(doc), result.passed, result.verdict()


# --------------------------------------------------------------------------- rendering


def _clean(value: Any) -> Any:
    """JSON-ready: tuples to lists, non-finite floats to None (strict JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _render(doc: dict[str, Any], fmt: CompareFormat) -> str:
    buf = io.StringIO()
    if fmt is CompareFormat.json:
        json.dump(doc, buf, indent=1, allow_nan=False)
        buf.write("\n")
    elif fmt is CompareFormat.csv:
        rows = doc["samplers"] if doc["mode"] == "samplers" else doc["parameters"]
        w = csv.writer(buf, lineterminator="\n")
        columns = list(rows[0]) if rows else []
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r[c] is None else _csv_cell(r[c]) for c in columns])
    else:
        _console(buf).print(_table(doc))
    return buf.getvalue()


def _table(doc: dict[str, Any]) -> Any:
    return _sampler_table(doc) if doc["mode"] == "samplers" else _parameter_table(doc)


def _csv_cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _console(out: IO[str]) -> Any:
    from rich.console import Console

    # To a file or pipe: a wide fixed width so rows are not wrapped.
    to_tty = hasattr(out, "isatty") and out.isatty()
    width = None if to_tty or os.environ.get("COLUMNS") else 160
    return Console(file=out, width=width, highlight=False)


def _num(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:.0f}"


def _sampler_table(doc: dict[str, Any]) -> Any:
    """One column per sampler, one row per measure: fits a terminal for any sensible number of samplers."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from mcmc.diagnostics.report import Thresholds

    best = doc["best"]
    grad = doc["grad_cost"]
    measures = [
        ("wall_time_s", "time (s)", lambda v: f"{v:.2f}" if v is not None else "-"),
        ("n_density_evals", "density evaluations", lambda v: f"{v:,}"),
        ("n_gradient_evals", "gradient evaluations", lambda v: f"{v:,}"),
        ("rhat_max", "max R-hat", lambda v: f"{v:.3f}" if v is not None else "-"),
        ("ess_bulk_min", "min bulk ESS", lambda v: f"{v:.0f}" if v is not None else "-"),
        ("ess_tail_min", "min tail ESS", lambda v: f"{v:.0f}" if v is not None else "-"),
        ("ess_per_s", "ESS per second", lambda v: _num(v)),
        ("ess_per_1k_evals", "ESS per 1000 evaluations", lambda v: _num(v)),
        ("acceptance", "acceptance rate", lambda v: f"{v:.2f}" if v is not None else "-"),
        ("divergences", "divergences", lambda v: "-" if v is None else str(v)),
    ]
    if doc["exact_moments"]:
        measures += [
            ("mean_z_max", "max |mean - exact| / MCSE", lambda v: _num(v, 2)),
            ("sd_z_max", "max |sd - exact| / MCSE", lambda v: _num(v, 2)),
        ]
    opts = ", ".join(f"{k}={v}" for k, v in doc["target_options"].items())
    title = (
        f"{doc['target']}{f' ({opts})' if opts else ''}: {doc['chains']} chains x {doc['draws']} draws "
        f"(+{doc['warmup']} warm-up), seed {doc['seed']}"
    )
    table = Table(header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("", no_wrap=True)
    for row in doc["samplers"]:
        table.add_column(row["sampler"], justify="right", no_wrap=True)
    for key, label, show in measures:
        cells = []
        for row in doc["samplers"]:
            style = ""
            if row["sampler"] in best.get(key, ()):
                style = "bold green"
            elif key == "rhat_max" and row[key] is not None and row[key] > Thresholds().max_rhat:
                style = "bold red"
            elif key == "mean_z_max" and row[key] is not None and row[key] > doc["max_z"]:
                style = "bold red"
            cells.append(Text(show(row[key]), style=style))
        table.add_row(label, *cells)
    caption = (
        "ESS: the worst coordinate's min(bulk, tail). Per second and per evaluation: sampling phase only, "
        f"a gradient counting as {grad:g} density evaluation{'s' if grad != 1 else ''}. Time and evaluation "
        "counts include warm-up. Best in green."
    )
    return Group(Text(title, style="bold"), table, Text(caption, style="dim"))


def _parameter_table(doc: dict[str, Any]) -> Any:
    from rich.table import Table
    from rich.text import Text

    ref = doc["mode"] == "reference"
    b_label = "ref" if ref else "B"
    from rich.console import Group

    head = Text()
    for side, label in (("a", "A"), ("b", b_label)):
        s = doc[side]
        head.append(f"{label}: ", style="bold")
        head.append(f"{', '.join(s['source'])} ({s['chains']} chains x {s['draws']} draws)\n")
    head.rstrip()
    table = Table(header_style="bold")
    for label in ("parameter", "mean A", f"mean {b_label}", "z", f"sd A / sd {b_label}", "z sd", "ESS A",
                  f"ESS {b_label}"):  # fmt: skip
        table.add_column(label, justify="left" if label == "parameter" else "right")
    limit = doc["max_z"]
    for p in doc["parameters"]:
        z, z_sd = p["z"], p["z_sd"]
        z_style = "bold red" if z is None or abs(z) > limit else ""
        sd_style = "bold red" if doc["check_sd"] and (z_sd is None or abs(z_sd) > limit) else "dim"
        table.add_row(
            Text(p["name"], style="bold"),
            _num(p["mean_a"], 4),
            _num(p["mean_b"], 4),
            Text("undefined" if z is None else f"{z:+.2f}", style=z_style),
            _num(p["sd_ratio"], 3),
            Text("-" if z_sd is None else f"{z_sd:+.2f}", style=sd_style),
            "-" if p["ess_bulk_a"] is None else f"{p['ess_bulk_a']:.0f}",
            "-" if p["ess_bulk_b"] is None else f"{p['ess_bulk_b']:.0f}",
        )
    extra = []
    if doc["only_in_a"]:
        extra.append(f"only in A: {_short(doc['only_in_a'])}")
    if doc["only_in_b"]:
        extra.append(f"only in {b_label}: {_short(doc['only_in_b'])}")
    caption = "z = (mean A - mean B) / sqrt(MCSE_A^2 + MCSE_B^2); ESS is bulk ESS."
    table.caption = Text(caption + ("  " + "; ".join(extra) if extra else ""))  # names verbatim, not markup
    table.caption_justify = "left"
    return Group(head, table)


def _short(names: list[str], cap: int = 8) -> str:
    return ", ".join(names[:cap]) + (f" and {len(names) - cap} more" if len(names) > cap else "")
