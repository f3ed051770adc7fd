"""`mcmc sample`: draw chains from a built-in or user target with one of the samplers.

Parses options, builds the target (:func:`mcmc.core.targets.get_target`),
runs :func:`mcmc.core.samplers.driver.run`, writes the chains file (``.npz``,
``.nc``, or npz on stdout for ``-o -``) and prints a short summary on stderr.
"""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mcmc.cli.console import err_console, progress_enabled, write_output
from mcmc.core.errors import UsageError

if TYPE_CHECKING:
    from mcmc.diagnostics.summary import RunSummary


class SamplerName(str, Enum):
    rwm = "rwm"
    mh_independence = "mh-independence"
    mh_lognormal = "mh-lognormal"
    two_stage = "two-stage"
    slice = "slice"
    elliptical_slice = "elliptical-slice"
    hmc = "hmc"
    hmc_gibbs = "hmc-gibbs"
    rejection = "rejection"
    isir = "isir"
    gibbs = "gibbs"
    swendsen_wang = "swendsen-wang"


class Scales(str, Enum):
    unit = "unit"
    log = "log"


# Which sampler accepts which tuning option (option name -> kernel keyword).
SAMPLER_OPTIONS: dict[str, dict[str, str]] = {
    "rwm": {"scale": "scale", "target_accept": "target_accept"},
    "mh-independence": {"scale": "scale"},
    "mh-lognormal": {"scale": "scale", "target_accept": "target_accept"},
    "two-stage": {"scale": "scale", "target_accept": "target_accept", "proposal": "proposal"},
    "slice": {"width": "width"},
    "elliptical-slice": {},
    "rejection": {},
    "isir": {"particles": "particles"},
    "gibbs": {},
    "swendsen-wang": {},
    "hmc-gibbs": {
        "step_size": "step_size",
        "path_length": "path_length",
        "target_accept": "target_accept",
        "persistence": "persistence",
        "max_energy_error": "max_energy_error",
    },
    "hmc": {
        "step_size": "step_size",
        "path_length": "path_length",
        "target_accept": "target_accept",
        "persistence": "persistence",
        "max_energy_error": "max_energy_error",
    },
}

HELP = (
    "Draw MCMC chains from a target distribution and write them to a chains file.\n\n"
    "Targets: gaussian (--dim, --rho, --scales log for an ill-conditioned one), bimodal (0.5 N(-3,1) + "
    "0.5 N(3,1) per coordinate), banana (Haario's twisted Gaussian), funnel (Neal's), gamma, logistic "
    "(--data CSV: predictors, then a 0/1 outcome column), beta-bernoulli, eight-schools, ising (the 2-D "
    "Ising model, -T size=L -T beta=B; reports magnetization m, |m| and energy per spin), bnn (Neal's Bayesian "
    "neural network regression: --data CSV with predictors then the outcome, -T hidden=H tanh units, default 8; "
    "built-in 1-D data without --data; --predict TEST.csv --predictions PRED.csv, --plot PNG; its weights are not "
    "identifiable, so judge the hyperparameters, lp and predictions the summary lists, not single weights); or your own "
    "Python file, --target model.py[:name], defining log_density(x) for x of shape (chains, dim) and dim, "
    "optionally grad_log_density(x) and names.\n\n"
    "Samplers: rwm (random-walk Metropolis), mh-independence, mh-lognormal (positive targets), two-stage "
    "(delayed acceptance, for prior x likelihood targets), slice, elliptical-slice (a Gaussian reference "
    "learnt in warm-up; no tuning), hmc, rejection (independent draws under an envelope estimated in "
    "warm-up; low dimensions) and isir (importance sampling with resampling: exact MCMC for any proposal); "
    "gibbs (full conditionals: heat-bath sweeps on ising, conditional normals on gaussian), hmc-gibbs (exact "
    "Gibbs draws of a target's blocks alternating with HMC with persistence on the rest; bnn's default) and, for ising, "
    "swendsen-wang (cluster flips). Warm-up tunes each chain on its "
    "own and chain i's draws depend only on the seed and i: --chains 2 --first-chain 2 gives exactly "
    "chains 2-3 of a --chains 4 run, for spreading chains over processes or machines.\n\n"
    "Writes .npz or ArviZ .nc (-o - writes npz to stdout): the same command line gives the same bytes. A "
    "summary goes to stderr: max R-hat, min bulk ESS, acceptance, divergences, time."
)


def command(
    target: Annotated[
        str,
        typer.Option(
            "--target",
            "-t",
            metavar="NAME|FILE.py[:obj]",
            rich_help_panel="Target",
            help="Built-in target or a Python file defining log_density(x) and dim.",
        ),
    ] = "gaussian",
    sampler: Annotated[
        SamplerName | None,
        typer.Option(
            "--sampler", "-s", rich_help_panel="Run", case_sensitive=False, show_default=False,
            help="Sampling algorithm [default: hmc; hmc-gibbs for bnn].",
        ),
    ] = None,
    chains: Annotated[int, typer.Option("--chains", "-c", min=1, rich_help_panel="Run", help="Number of chains.")] = 4,
    warmup: Annotated[
        int, typer.Option(min=0, rich_help_panel="Run", help="Warm-up (adaptation) iterations per chain, discarded.")
    ] = 1000,
    draws: Annotated[int, typer.Option(min=1, rich_help_panel="Run", help="Sampling iterations per chain.")] = 1000,
    thin: Annotated[
        int,
        typer.Option(
            min=1, rich_help_panel="Run", help="Keep every THIN-th sampling iteration (ceil(draws/thin) are written)."
        ),
    ] = 1,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            rich_help_panel="Run",
            help="Random seed; omitted: a random one, printed and stored in the file.",
            show_default=False,
        ),
    ] = None,
    first_chain: Annotated[
        int,
        typer.Option(
            min=0, help="Global index of the first chain (runs chains FIRST .. FIRST+CHAINS-1).", rich_help_panel="Run"
        ),
    ] = 0,
    output: Annotated[
        str,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            rich_help_panel="Run",
            help="Chains file: .npz, .nc, or - for npz on stdout.",
        ),
    ] = "chains.npz",
    dim: Annotated[
        int | None,
        typer.Option(
            min=1,
            rich_help_panel="Target",
            help="Dimension (gaussian, bimodal, banana, funnel, gamma).",
            show_default=False,
        ),
    ] = None,
    rho: Annotated[
        float | None,
        typer.Option(rich_help_panel="Target", help="Equicorrelation of the gaussian target.", show_default=False),
    ] = None,
    scales: Annotated[
        Scales | None,
        typer.Option(
            rich_help_panel="Target",
            help="gaussian: unit sds, or log-spaced from 0.01 to 1 (ill-conditioned).",
            show_default=False,
        ),
    ] = None,
    data: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.csv",
            rich_help_panel="Target",
            help="Data of logistic / beta-bernoulli: CSV with header, outcome last.",
            show_default=False,
        ),
    ] = None,
    target_option: Annotated[
        list[str] | None,
        typer.Option(
            "--target-option",
            "-T",
            metavar="KEY=VALUE",
            rich_help_panel="Target",
            help="Other option of a built-in target, repeatable: banana b=0.1, gamma shape=0.5 rate=2, "
            "logistic prior_sd=1, beta-bernoulli successes=3 trials=10 a=1 b=1, ising size=32 beta=0.3.",
            show_default=False,
        ),
    ] = None,
    init: Annotated[
        str | None,
        typer.Option(
            metavar="X,X,...",
            rich_help_panel="Run",
            help="Starting point for every chain (sampling space), comma-separated.",
            show_default=False,
        ),
    ] = None,
    scale: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Sampler tuning",
            help="Initial proposal scale (rwm, mh-*, two-stage); tuned in warm-up.",
            show_default=False,
        ),
    ] = None,
    width: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Sampler tuning",
            help="slice: initial interval width; tuned in warm-up.",
            show_default=False,
        ),
    ] = None,
    proposal: Annotated[
        str | None,
        typer.Option(
            metavar="rw|lognormal",
            rich_help_panel="Sampler tuning",
            help="two-stage: proposal kind.",
            show_default=False,
        ),
    ] = None,
    step_size: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Sampler tuning",
            help="hmc: initial leapfrog step size; tuned in warm-up.",
            show_default=False,
        ),
    ] = None,
    path_length: Annotated[
        float | None,
        typer.Option(rich_help_panel="Sampler tuning", help="hmc: integration time (jittered).", show_default=False),
    ] = None,
    target_accept: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Sampler tuning",
            help="Acceptance rate warm-up aims for (hmc 0.8; rwm 0.234, 0.44 in 1-D).",
            show_default=False,
        ),
    ] = None,
    persistence: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Sampler tuning",
            help="hmc: partial momentum refreshment in [0, 1) (0: plain HMC).",
            show_default=False,
        ),
    ] = None,
    max_energy_error: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Sampler tuning", help="hmc: energy error flagged as a divergence.", show_default=False
        ),
    ] = None,
    particles: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Sampler tuning",
            help="isir: importance samples per iteration, the current state included (default 16).",
            show_default=False,
        ),
    ] = None,
    predict: Annotated[
        str | None,
        typer.Option(
            metavar="TEST.csv", rich_help_panel="Predictions",
            help="bnn: inputs to predict at (the training predictors, optionally the outcome last).",
            show_default=False,
        ),
    ] = None,
    predictions: Annotated[
        str | None,
        typer.Option(
            metavar="PRED.csv", rich_help_panel="Predictions",
            help="bnn: write one row per --predict input: mean, sd, q5, q95 of the posterior predictive.",
            show_default=False,
        ),
    ] = None,
    plot: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.png", rich_help_panel="Predictions",
            help="bnn with one predictor: draw the data, the predictive mean and its 90% band.",
            show_default=False,
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", rich_help_panel="Run", help="No summary on stderr.")] = False,
) -> None:
    import numpy as np

    from mcmc.core.chains import write_chains
    from mcmc.core.samplers import get_sampler
    from mcmc.core.paths import check_paths
    from mcmc.core.ranges import check_settings
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import default_sampler, get_target, is_user_target
    from mcmc.diagnostics.predictive import predictive_report

    name = sampler.value if sampler is not None else default_sampler(target)
    if plot:
        from mcmc.cli.plot import image_format

        image_format(plot)
    check_paths(
        {"-o": output, "--predictions": predictions, "--plot": plot},
        [data, predict, target.split(":", 1)[0] if is_user_target(target) else None],
    )
    _check_output(output)
    given = {
        "scale": scale, "width": width, "proposal": proposal, "step_size": step_size,
        "path_length": path_length, "target_accept": target_accept, "persistence": persistence,
        "max_energy_error": max_energy_error, "particles": particles,
    }  # fmt: skip
    check_settings(given)
    params: dict[str, Any] = {}
    for option, value in given.items():
        if value is None:
            continue
        if option not in SAMPLER_OPTIONS[name]:
            raise UsageError(f"--{option.replace('_', '-')} does not apply to --sampler {name}")
        params[SAMPLER_OPTIONS[name][option]] = value

    extra = parse_target_options(target_option or [])
    clash = sorted(set(extra) & {"dim", "rho", "scales", "data"})
    if clash:
        raise UsageError(f"use --{clash[0]} instead of --target-option {clash[0]}=...")
    tgt = get_target(target, dim=dim, rho=rho, scales=scales.value if scales else None, data=data, **extra)
    start = None
    if init is not None:
        try:
            start = np.array([float(v) for v in init.split(",")])
        except ValueError:
            raise UsageError(f"--init must be comma-separated numbers, got {init!r}") from None
        if start.shape != (tgt.dim,):
            raise UsageError(f"--init has {start.size} values; target {tgt.name!r} has dimension {tgt.dim}")
    kernel = get_sampler(name)

    progress = None
    bar = None
    if progress_enabled() and not quiet:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(
            TextColumn(f"{name} on {tgt.name}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=err_console, transient=True,
        )  # fmt: skip
        task = bar.add_task("sampling", total=warmup + draws)
        bar.start()

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done)

    try:
        result, timings = run(
            kernel, tgt, chains=chains, chain_ids=range(first_chain, first_chain + chains), warmup=warmup,
            draws=draws, thin=thin, seed=seed, init=start, params=params, progress=progress,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.stop()

    t0 = time.perf_counter()
    if output == "-" or Path(output).suffix.lower() == ".npz":
        write_output(output, lambda fh: write_chains(result, fh))
    else:
        write_chains(result, output)
    report = predictive_report(result, tgt, test=predict, predictions=predictions, curve=plot is not None)
    if plot and report is not None:
        from mcmc.cli.plot import plot_predictive

        plot_predictive(report, plot)
    write_s = time.perf_counter() - t0
    if not quiet:
        from mcmc.diagnostics.summary import summarize_run

        _print_summary(result, summarize_run(result), seed is None, output, timings.wall_time_s + write_s)
        if report is not None:
            _print_predictive(report)


def _print_predictive(report: Any) -> None:
    from rich.markup import escape

    parts = [f"{escape(q.name)} R-hat {q.rhat:.3f} ESS {q.ess_bulk:.0f}" for q in report.quantities]
    err_console.print("  judge by (weights are not identifiable): " + ";  ".join(parts), highlight=False, soft_wrap=True)
    t = report.test
    if t is not None and t.rmse is not None:
        err_console.print(
            f"  test: RMSE {t.rmse:.4g}, mean log predictive density {t.mlpd:.4g} per point ({t.x.shape[0]} points)",
            highlight=False,
        )
    if report.predictions_path:
        err_console.print(f"  predictions -> {escape(report.predictions_path)}", highlight=False)


def parse_target_options(items: list[str]) -> dict[str, int | float | str]:
    """``["b=0.1", "trials=10"]`` -> ``{"b": 0.1, "trials": 10}`` (ints, then floats, else text)."""
    out: dict[str, int | float | str] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise UsageError(f"--target-option expects KEY=VALUE, got {item!r}")
        value: int | float | str
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                value = text
        out[key] = value
    return out


def _check_output(output: str) -> None:
    """Refuse an output format we cannot write before spending the sampling time."""
    if output == "-":
        return
    path = Path(output)
    if path.suffix.lower() not in (".npz", ".nc"):
        raise UsageError(
            f"{output}: unknown output format {path.suffix or '(none)'!r}; use .npz or .nc (or - for stdout)"
        )


def _print_summary(result: Any, s: RunSummary, random_seed: bool, output: str, seconds: float) -> None:
    from rich.markup import escape  # names, options and paths are the user's: print them verbatim

    a = result.attrs
    opts = escape(", ".join(f"{k}={v}" for k, v in a["target_options"].items() if v is not None))
    seed_note = " (random; pass --seed to repeat)" if random_seed else ""
    lines = [
        f"[bold]{a['sampler']}[/] on [bold]{escape(a['target'])}[/]{f' ({opts})' if opts else ''}: "
        f"{a['chains']} chains x {result.n_draws} draws (+{a['warmup']} warm-up), seed {a['seed']}{seed_note}"
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
        colour = "green" if s.divergences == 0 else "red"
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
    cost.append(f"{seconds:.2f} s")
    lines.append("  " + "   ".join(cost) + f"  -> {'stdout' if output == '-' else escape(output)}")
    for line in lines:
        err_console.print(line, highlight=False, soft_wrap=True)


command.__doc__ = HELP
