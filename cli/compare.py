"""`mcmc compare`: samplers head to head on one target, a run against another, a run against reference draws.

Parses options and calls one command function:
:func:`mcmc.cli.commands.compare.compare_samplers` (``--target`` and
``--samplers``) or :func:`mcmc.cli.commands.compare.compare_runs` (``A B``,
``RUN --reference REF``), then renders the result: a rich table by default,
``--format json`` (schema ``mcmc.compare/1``), ``csv`` or ``md``, and with
``--plot`` an image of it. The verdict goes to
stderr as one line; exit 0 pass, 1 a difference beyond ``--max-z``, 2 bad
usage or unreadable input.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from mcmc.cli import options
from mcmc.cli.console import CheckFailed, progress_bar
from mcmc.cli.render import choices, emit
from mcmc.cli.render.common import print_verdict
from mcmc.cli.summaries import SUMMARIES
from mcmc.core.errors import UsageError

CompareFormat = choices("table", "json", "csv", "md")

HELP = SUMMARIES["compare"] + """

[bold]Samplers[/] (--target and --samplers): run each sampler on the same target with the same seed and tabulate wall time, density and gradient evaluations, max R-hat, min bulk and tail ESS, ESS per second and per 1000 evaluations (the worst coordinate's min(bulk, tail) ESS over the sampling phase; a gradient counts as --grad-cost density evaluations, a fused value-and-gradient call as 1 + grad-cost), acceptance, divergences and, where the target knows its exact moments, the worst |mean - truth| / MCSE (and the same for the sd with the delta-method MCSE of the sd). Fails if a sampler's mean (with --check-sd: or sd) is more than --max-z MCSEs off the truth.

[bold]Run against run[/] (A B): for each scalar parameter both share, z = (mean A - mean B) / sqrt(MCSE_A^2 + MCSE_B^2), the sd ratio and both ESS. Fails when |z| > --max-z for any parameter: the CI gate for "did my new sampler or model version change the answer". Each source is any file mcmc diagnose reads, or a quoted glob of CmdStan CSV files.

[bold]Run against reference[/] (RUN --reference REF): the same test against reference draws: a chains file, or posteriordb reference-posterior JSON (Stan names theta\\[1] become theta\\[0]).

Under the null hypothesis each z is about standard normal, so |z| > 4 happens by chance for about 6.3e-5 of parameters: with N parameters expect N x 6.3e-5 false alarms. For a familywise false-alarm rate alpha over N parameters use the Bonferroni threshold Phi^-1(1 - alpha / 2N) (4.26 for N = 500, alpha = 1%); the verdict notes it when it exceeds --max-z. The MCSEs are estimates and assume converged chains: check both runs with mcmc diagnose.

Exit status: 0 pass, 1 a difference beyond --max-z, 2 bad usage or unreadable input.

[bold]Examples[/]

[dim]# three samplers on a correlated Gaussian, then HMC against slice, tuned[/]

mcmc compare -t gaussian --dim 10 -T rho=0.9 -s hmc,rwm,slice --seed 1

mcmc compare -t eight-schools -s hmc,slice -P hmc:target-accept=0.95

[dim]# did the new model version change the answer? (exit 1 if it did)[/]

mcmc compare old.npz new.npz --var 'theta[*]'

[dim]# a CmdStan run against posteriordb's reference draws, as JSON[/]

mcmc compare 'output_*.csv' -r eight_schools.json -f json -o check.json
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
            metavar="TARGET",
            rich_help_panel="Samplers",
            help="Target the samplers run on: a built-in name, model.py\\[:obj], NET.bif (as in mcmc sample).",
            show_default=False,
        ),
    ] = None,
    samplers: Annotated[
        str | None,
        typer.Option(
            "--samplers",
            "-s",
            metavar="NAMES",
            rich_help_panel="Samplers",
            help="Comma-separated samplers, by mcmc sample's --sampler names; a sampler with settings of its own, "
            "NAME:KEY=VALUE, is a row of its own beside the others (-s gibbs,gibbs:scan=random).",
            show_default=False,
        ),
    ] = None,
    chains: options.Chains = 4,
    warmup: options.Warmup = 1000,
    draws: options.Draws = 1000,
    seed: options.Seed = None,
    dim: options.Dim = None,
    target_option: options.TargetOptions = None,
    observe: options.Observe = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-P",
            metavar="S:KEY=VALUE",
            rich_help_panel=options.RUN,
            help="SAMPLER:KEY=VALUE, the tuning of one sampler, repeatable, with the settings mcmc sample -h lists for it: "
            "hmc:target-accept=0.95, rwm:scale=0.5, slice:width=2, hmc:path-length=3.",
            show_default=False,
        ),
    ] = None,
    var: options.Var = None,
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
        CompareFormat | None,  # type: ignore[valid-type]
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            help="table: for a terminal. json: schema mcmc.compare/1 (NaN as null). csv: one row per sampler or "
            "parameter. md: Markdown for a pull-request comment (under 60,000 characters).",
            case_sensitive=False,
        ),
    ] = None,
    output: options.Output = "-",
    plot: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.png",
            help="Also draw to this image (.png, .pdf or .svg): samplers, bars of ESS per second and per 1000 "
            "evaluations; runs, the z-score of each parameter (largest first) against the --max-z band.",
            show_default=False,
        ),
    ] = None,
    layout: options.LayoutOption = None,
    max_rhat: options.MaxRhat = None,
    min_ess: options.MinEss = None,
    max_divergences: options.MaxDivergences = None,
    min_ebfmi: options.MinEbfmi = None,
    strict: options.Strict = False,
    no_check: options.NoCheck = False,
    quiet: options.Quiet = False,
) -> None:
    if plot:
        from mcmc.cli.render.plot import image_format  # start-up: the plot renderer only with --plot

        image_format(plot)  # refuse a bad --plot name before the (possibly long) work
    shown = options.report_format(None if fmt is None else fmt.value, output, [f.value for f in CompareFormat]) \
        or "table"  # fmt: skip
    files = list(sources or [])
    if target is not None or samplers is not None:
        if files or reference is not None:
            raise UsageError("give either --target with --samplers, or chains files to compare, not both")
        if target is None or samplers is None:
            raise UsageError("comparing samplers needs both --target and --samplers (e.g. -t gaussian -s hmc,rwm)")
        if var:
            raise UsageError("--var selects parameters of runs being compared; with --samplers every coordinate counts")
        if layout is not None:
            raise UsageError("--layout describes chains files; with --samplers there are none")
        items = samplers.split(",")
        extra = options.parse_target_options(target_option or [])
        if dim is not None and "dim" in extra:
            raise UsageError("give the dimension once: --dim or --target-option dim=..., not both")
        # start-up: the registry and the targets' module only when samplers are compared
        from mcmc.core.samplers import DENSITY, NETWORK
        from mcmc.core.targets import is_network_target

        kind = NETWORK if is_network_target(target) else DENSITY
        # before the target file is loaded and probed; an item may be a variant, gibbs:scan=random
        names, params = options.parse_sampler_variants(items, param or [], kind)

        # start-up: the command layer (NumPy, the samplers, the statistics) only once the options parse
        from mcmc.cli.commands.compare import compare_samplers
        from mcmc.cli.config import CHECK_KEYS, resolve

        checks = resolve(
            options.check_options(max_rhat, min_ess, max_divergences, min_ebfmi, strict=strict), keys=CHECK_KEYS
        )
        with progress_bar(not quiet) as progress:
            result = compare_samplers(
                target, names, target_options={**({"dim": dim} if dim is not None else {}), **extra},
                params=params, chains=chains, warmup=warmup, draws=draws, seed=seed, grad_cost=grad_cost,
                max_z=max_z, check_sd=check_sd, outputs={"-o": output, "--plot": plot}, progress=progress,
                observe=tuple(observe or ()), thresholds=checks.thresholds, strict=checks.strict,
                judge_draws=not no_check,
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
        given = options.check_options(max_rhat, min_ess, max_divergences, min_ebfmi, strict=strict)
        if any(v is not None for v in given.values()) or no_check:
            raise UsageError("the check options judge the draws of --samplers; to judge a chains file, run "
                             "mcmc diagnose on it")  # fmt: skip
        from mcmc.cli.commands.compare import compare_runs  # start-up: as above

        result = compare_runs(
            files, reference, max_z=max_z, check_sd=check_sd, var=var, outputs={"-o": output, "--plot": plot},
            stdin=sys.stdin.buffer,
            layout=layout.value if layout is not None else None,
        )

    # start-up: the renderers of comparisons (they register their result types' table and Markdown)
    from mcmc.cli.render import md_compare, table_compare  # noqa: F401

    if not (quiet and shown == "table" and output == "-"):
        emit(result, shown, output)
    if plot:
        from mcmc.cli.render import plot as plot_render  # start-up: matplotlib's renderer only with --plot

        plot_render.render(result, plot)
    if not (quiet and result.passed):
        print_verdict(result.verdict(), result.passed, () if quiet else result.notes)
    if not result.passed:
        raise CheckFailed(result.verdict())


command.__doc__ = HELP
