"""`mcmc sample`: draw chains from a built-in or user target with one of the samplers.

Parses the options and calls :func:`mcmc.cli.commands.sample.sample_run`, which
builds the target, runs the sampler, writes the chains file and judges the
run; the summary is rendered on stderr (:mod:`mcmc.cli.render.table_sample`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import Enum
from typing import Annotated, Any

import typer

from mcmc.cli import options
from mcmc.cli.console import (
    CheckFailed,
    err_console,
    print_resume_line,
    progress_bar,
    signals_held,
)
from mcmc.cli.render import choices, emit
from mcmc.cli.render.common import print_verdict
from mcmc.cli.summaries import SUMMARIES
from mcmc.core.errors import UsageError
from mcmc.core.mcem.config import McemSettings
from mcmc.core.samplers import DENSITY, NETWORK, NETWORK_SAMPLERS, SAMPLERS
from mcmc.core.samplers.registry import DECLARATIONS, MH, TWO_STAGE
from mcmc.core.targets import targets_taking

TUNING = "Sampler tuning"
MCEM = "Monte Carlo EM"
#: --format's choices: table and json for a run's summary; csv too for --mcem's trace.
SampleFormat = choices("table", "json", "csv")
#: Warm-up iterations and draws per chain of a run.
WARMUP, DRAWS = 1000, 1000
#: The samplers whose runs need no warm-up (exact, independent draws), in the words of --warmup's help.
_NO_WARMUP = " and ".join(
    ", ".join(d.name for d in DECLARATIONS if not d.warms_up and d.kind == kind) + where
    for kind, where in ((DENSITY, ""), (NETWORK, " on a network"))
)
#: Monte Carlo EM's defaults (its settings' module is NumPy-free).
EM = McemSettings()
#: --proposal: two-stage's proposal kind, and with -s mh its proposal matrix (-P mh:proposal-matrix=Q.csv).
TWO_STAGE_PROPOSAL = TWO_STAGE.setting("proposal")
MH_PROPOSAL = MH.setting("proposal_matrix")
assert TWO_STAGE_PROPOSAL is not None and MH_PROPOSAL is not None


class Scales(str, Enum):
    unit = "unit"
    log = "log"


HELP = (
    SUMMARIES["sample"] + "\n\n"
    "[bold]Targets[/]: gaussian (--dim, --rho, --scales log for an ill-conditioned one), bimodal (0.5 N(-3,1) + "
    "0.5 N(3,1) per coordinate), banana (Haario's twisted Gaussian), funnel (Neal's), gamma, logistic (--data CSV: "
    "predictors, then a 0/1 outcome column), beta-bernoulli, eight-schools, ising (the 2-D Ising model, -T size=L "
    "-T beta=B; reports magnetization m, |m| and energy per spin), potts (the q-state Potts model, -T size=L -T q=Q "
    "-T beta=B; energy and order parameter m per sweep), dirichlet (-T counts=4,1,3,1,1 -T eta=1), bnn (Neal's "
    "Bayesian neural network regression: --data CSV with predictors then the outcome, -T hidden=H tanh units, "
    "default 8; built-in 1-D data without --data; --predict TEST.csv --predictions PRED.csv, --plot PNG; its weights "
    "are not identifiable, so judge the hyperparameters, lp and predictions the summary lists, not single weights)."
    "\n\n"
    "[bold]Your own model[/]: a Python file, --target model.py\\[:name], defining log_density(x) for x of shape "
    "(chains, dim) and dim, optionally grad_log_density(x) and names. log_density alone is enough: the default "
    "sampler is then slice, and hmc with a gradient.\n\n"
    "[bold]Bayesian networks[/]: --target NET.bif, a discrete network in the Bayesian Interchange Format (bnlearn, "
    "pgmpy, GeNIe), with evidence --observe NODE=STATE,..., the marginals to show --query NODE,... (with MCSE) and "
    "--exact (exact marginals beside them, every node's from one calibrated junction tree). Samplers: "
    f"{options.sampler_list(list(NETWORK_SAMPLERS.values()))}; settings "
    f"{options.settings_list(list(NETWORK_SAMPLERS.values()))} (-P blocks=A+B+C;D+E, quoted for the shell, "
    "draws the named nodes together; -P budget=N bounds each block's largest clique table: by default 10^6 entries "
    "for one block of the whole network, whose every draw is exact, and 10^4 for blocks grown from "
    "near-deterministic groups, which a sweep recomputes; -P scan=random updates a block or single node picked "
    "at random, as many times per sweep as there are of them, instead of each in turn).\n\n"
    "[bold]Finite Markov chains[/]: --target P.csv, a row-stochastic transition matrix (optional header of state "
    "names; -T start=STATE, or an initial law -T init=0.21,0.68,0.11, default uniform; -T steps=T adds the exact "
    "law after T steps, pi_0 P^T, beside the chains' states at step T: give --warmup 0 and many chains), simulated "
    "by the markov sampler (the default for it); "
    "the summary gives the exact stationary law (left eigenvector, and power iteration from the initial law), "
    "irreducibility, periodicity, detailed balance and the spectral gap beside the simulated frequencies with MCSE.\n\n"
    "[bold]Finite laws and graphs[/]: --target weights.csv, a law pi_j proportional to b_j (header state,weight, "
    "or one weight per line), sampled by mh (Metropolis-Hastings on the states; --proposal Q.csv, or -P "
    "mh:proposal-matrix=Q.csv, default uniform over the other states), with its transition matrix and the Markov "
    "chain report of it beside b / sum(b); --target graph.csv, a Potts model on any graph (header i,j,beta, an "
    "edge and its coupling per line; -T q=Q), sampled by gibbs or swendsen-wang. docs/formats.md says how the "
    "three CSV targets are told apart.\n\n"
    "[bold]Exact answers[/]: a target that knows its mean and sd (the Gaussians, beta-bernoulli, dirichlet: the "
    "posterior of multinomial counts, a small ising or potts lattice, a small graph) has them set beside the "
    "estimates, mean and variance, with z-scores.\n\n"
    "[bold]Your file's own structure[/]: beside log_density(x), a target file may give quantile(u) (exact "
    "inverse-cdf draws), proposal_sample(rng) with proposal_log_density(x) (importance; with log_bound, exact "
    "rejection), prior_cov with log_likelihood(x) (elliptical-slice on the model's own prior).\n\n"
    "[bold]Monte Carlo EM[/] (Wei & Tanner 1990): --mcem finds the maximum-likelihood parameters of a model with "
    "latent variables, --target censored-normal (right-censored normal data, mean and sd unknown) or your file "
    "model.py declaring log_joint(z, theta), latent_dim, parameters and theta0 (docs/formats.md). Each iteration "
    "draws the latents given theta with --sampler (default: gibbs where the model declares full conditionals) "
    "and maximises the average complete-data log likelihood over the draws (BFGS, from the previous theta); the "
    "draws grow geometrically, --em-draws x --em-growth^t. Prints the trace of theta with its Monte Carlo "
    "standard errors (-f json: schema mcmc.mcem/1); -o FILE.npz keeps it.\n\n"
    f"[bold]Samplers[/]: {options.sampler_list(list(SAMPLERS.values()))}.\n\n"
    "[bold]Settings[/] of each sampler, given as -P KEY=VALUE (or as the option of the same name below): "
    f"{options.settings_list(list(SAMPLERS.values()))}.\n\n"
    "Warm-up tunes each chain on its own and chain i's draws depend only on the seed and i: "
    "--chains 2 --first-chain 2 gives exactly chains 2-3 of a --chains 4 run, for spreading chains over processes "
    "or machines.\n\n"
    "Writes .npz or ArviZ .nc (-o - writes npz to stdout): the same command line gives the same bytes. A summary "
    "goes to stderr: max R-hat, min bulk ESS, acceptance, divergences, time, and what the target knows exactly "
    "beside the estimates; -f json writes it to stdout as one document instead (schema mcmc.sample/1).\n\n"
    "[bold]Examples[/]\n\n"
    "[dim]# eight schools with HMC, then a convergence check[/]\n\n"
    "mcmc sample -t eight-schools --target-accept 0.9 --seed 1 -o fit.npz\n\n"
    "mcmc diagnose fit.npz\n\n"
    "[dim]# go on to 2000 draws, no new warm-up: the bytes of one 2000-draw run[/]\n\n"
    "mcmc sample --resume fit.npz --draws 2000\n\n"
    "[dim]# draw until diagnose's checks pass at two looks in a row (or 4000)[/]\n\n"
    "mcmc sample -t eight-schools --until-converged --max-draws 4000 -o uc.npz\n\n"
    "[dim]# an ill-conditioned Gaussian, slice sampling, piped into diagnose[/]\n\n"
    "mcmc sample -t gaussian --dim 50 --scales log -s slice -o - | mcmc diagnose -\n\n"
    "[dim]# the burglary network given both calls: marginals, estimated and exact[/]\n\n"
    "mcmc sample -t earthquake.bif --observe JohnCalls=True,MaryCalls=True --exact\n\n"
    "[dim]# your own model: chains 4-7 of an 8-chain run, on a second machine[/]\n\n"
    "mcmc sample -t model.py\\[:target] --seed 7 -c 4 --first-chain 4 -o b.nc\n\n"
    "[dim]# a @numba.njit point_log_density_and_grad(x): HMC and NUTS run compiled[/]\n\n"
    "mcmc sample -t bench/posteriordb/garch11_numba.py --seed 1\n\n"
    "[dim]# maximum likelihood with censored data, by Monte Carlo EM[/]\n\n"
    "mcmc sample -t censored-normal --mcem --seed 1 -o mcem.npz\n\n"
    "[dim]# MH on states known up to a constant: P, b / sum(b), detailed balance[/]\n\n"
    "mcmc sample -t weights.csv --proposal Q.csv --seed 1\n\n"
    "[dim]# pi_0 P^10 from (0.21, 0.68, 0.11) beside 2000 chains at step 10[/]\n\n"
    "mcmc sample -t P.csv -T init=0.21,0.68,0.11 -T steps=10 -c 2000 --warmup 0\n\n"
    "[dim]# a Dirichlet posterior: exact mean and variance beside the draws[/]\n\n"
    "mcmc sample -t dirichlet -T counts=4,1,3,1,1 -T eta=1 --seed 1 -f json\n\n"
    "[dim]# independent draws by F^-1(u); weighted draws, Kish ESS, Pareto k[/]\n\n"
    "mcmc sample -t gamma -T shape=3 -s inverse-cdf --seed 1\n\n"
    "mcmc sample -t gaussian --dim 3 -s importance --seed 1\n\n"
    "[dim]# random-scan Gibbs: gaussian, ising, potts, graph.csv, NET.bif, model.py[/]\n\n"
    "mcmc sample -t gaussian --dim 3 --rho 0.5 -s gibbs -P scan=random"
)


def _tuning(setting: str, metavar: str = "X") -> typer.models.OptionInfo:
    """The option ``--SETTING`` of a sampler setting: optional, in its own help panel, its help from the registry."""
    return typer.Option(
        rich_help_panel=TUNING, help=options.setting_help(setting), show_default=False, metavar=metavar
    )


def command(
    target: Annotated[
        str,
        typer.Option(
            "--target",
            "-t",
            metavar="TARGET",
            rich_help_panel="Target",
            help="Built-in target (above), or a Python file model.py\\[:obj] defining log_density(x) and dim (or a "
            "numba-compiled point_log_density_and_grad(x) for compiled HMC and NUTS), NET.bif or P.csv.",
        ),
    ] = "gaussian",
    sampler: options.Sampler = None,
    chains: options.Chains = 4,
    warmup: Annotated[
        int | None,
        typer.Option(
            min=0, metavar="N", rich_help_panel="Run", show_default=False,
            help=f"Warm-up (adaptation) iterations per chain, discarded; with --mcem, before each E-step's draws. "
            f"\\[default: {WARMUP}; 0 for {_NO_WARMUP}; {EM.warmup} with --mcem]",
        ),
    ] = None,
    draws: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="N", rich_help_panel="Run", show_default=False,
            help=f"Sampling iterations per chain (not with --mcem: see --em-draws). \\[default: {DRAWS}]",
        ),
    ] = None,
    thin: Annotated[
        int,
        typer.Option(
            min=1, metavar="N", rich_help_panel="Run",
            help="Keep every N-th sampling iteration (ceil(draws/N) are written).",
        ),
    ] = 1,
    seed: options.Seed = None,
    first_chain: Annotated[
        int,
        typer.Option(
            min=0, metavar="N", rich_help_panel="Run",
            help="Global index of the first chain (runs chains N .. N+CHAINS-1).",
        ),
    ] = 0,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            rich_help_panel="Run",
            show_default=False,
            help="Chains file: .npz, .nc, or - for npz on stdout; with --mcem, the result (.npz: the trace of theta, "
            "draws per iteration, final theta). \\[default: chains.npz; with --mcem none]",
        ),
    ] = None,
    dim: options.Dim = None,
    rho: Annotated[
        float | None,
        typer.Option(
            metavar="RHO", rich_help_panel="Target", help="Equicorrelation of the gaussian target.", show_default=False
        ),
    ] = None,
    scales: Annotated[
        Scales | None,
        typer.Option(
            metavar="unit|log",
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
            help=f"Data of {', '.join(targets_taking('data'))}: CSV with a header row, the outcome last.",
            show_default=False,
        ),
    ] = None,
    target_option: options.TargetOptions = None,
    observe: options.Observe = None,
    query: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NODE,...", rich_help_panel="Target",
            help="Bayesian network: nodes whose marginals the summary shows with MCSE; repeatable or a comma list. "
            "\\[default: every unobserved node when at most 8]",
            show_default=False,
        ),
    ] = None,
    exact: Annotated[
        bool,
        typer.Option(
            "--exact", rich_help_panel="Target",
            help="Bayesian network: show the exact marginals beside the estimates (one calibrated junction tree; "
            "variable elimination of the shown nodes where the tree is too wide).",
        ),
    ] = False,
    init: Annotated[
        str | None,
        typer.Option(
            metavar="X,X,...",
            rich_help_panel="Run",
            help="Starting point for every chain (sampling space), comma-separated.",
            show_default=False,
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param", "-P", metavar="KEY=VALUE", rich_help_panel="Run", show_default=False,
            help="A setting of the --sampler, repeatable: one of its Settings above (-P target-accept=0.95), or "
            "SAMPLER:KEY=VALUE as in mcmc compare. The options below are the same settings.",
        ),
    ] = None,
    scale: Annotated[float | None, _tuning("scale")] = None,
    width: Annotated[float | None, _tuning("width")] = None,
    proposal: Annotated[
        str | None,
        typer.Option(rich_help_panel=TUNING, show_default=False, metavar="KIND",
                     help=f"{TWO_STAGE.name}: {TWO_STAGE_PROPOSAL.help}, {' or '.join(TWO_STAGE_PROPOSAL.choices)} "
                     f"(default {TWO_STAGE_PROPOSAL.default}); {MH.name}: {MH_PROPOSAL.help} (the same as -P "
                     f"{MH_PROPOSAL.key}=Q.csv; default {MH_PROPOSAL.default})."),
    ] = None,
    step_size: Annotated[float | None, _tuning("step_size")] = None,
    path_length: Annotated[float | None, _tuning("path_length")] = None,
    target_accept: Annotated[float | None, _tuning("target_accept")] = None,
    persistence: Annotated[float | None, _tuning("persistence")] = None,
    max_energy_error: Annotated[float | None, _tuning("max_energy_error")] = None,
    max_tree_depth: Annotated[int | None, _tuning("max_tree_depth", "N")] = None,
    particles: Annotated[int | None, _tuning("particles", "N")] = None,
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
            help="bnn with one predictor: draw the data, the predictive mean and its 90% band (.png, .svg, .pdf).",
            show_default=False,
        ),
    ] = None,
    mcem: Annotated[
        bool,
        typer.Option(
            "--mcem", rich_help_panel=MCEM,
            help="Monte Carlo EM instead of sampling: the maximum-likelihood theta of the latent-variable model "
            "--target (censored-normal, or a file declaring log_joint(z, theta), latent_dim, parameters, theta0).",
        ),
    ] = False,
    em_iterations: Annotated[
        int | None,
        typer.Option(min=1, metavar="N", rich_help_panel=MCEM, show_default=False,
                     help=f"EM iterations (E-step and M-step). \\[default: {EM.iterations}]"),
    ] = None,
    em_draws: Annotated[
        int | None,
        typer.Option(min=1, metavar="M", rich_help_panel=MCEM, show_default=False,
                     help=f"Draws of the latents in the first E-step, all chains together. \\[default: {EM.draws}]"),
    ] = None,
    em_growth: Annotated[
        float | None,
        typer.Option(metavar="G", rich_help_panel=MCEM, show_default=False,
                     help="Growth of the draws per iteration: the E-step of iteration t draws ceil(M G^t), so the "
                     f"Monte Carlo error shrinks as EM's steps do (>= 1). \\[default: {EM.growth:g}]"),
    ] = None,
    fmt: Annotated[
        SampleFormat | None,  # type: ignore[valid-type]
        typer.Option(
            "--format", "-f", metavar="FORMAT", rich_help_panel="Run", case_sensitive=False, show_default=False,
            help="The run's summary: table on stderr, or json on stdout (schema mcmc.sample/1: the run, its checks, "
            "and when there is one a network's marginals, a bnn's predictive, a Markov chain's matrix and laws, the "
            "weights, the exact moments). With --mcem, the trace of theta on stdout: table, json (schema "
            "mcmc.mcem/1) or csv (one row per iteration). \\[default: table]",
        ),
    ] = None,
    quiet: options.Quiet = False,
    scheduler: options.Scheduler = None,
    max_rhat: options.MaxRhat = None,
    min_ess: options.MinEss = None,
    max_divergences: options.MaxDivergences = None,
    min_ebfmi: options.MinEbfmi = None,
    max_treedepth_hits: options.MaxTreedepthHits = None,
    strict: options.Strict = False,
    no_check: options.NoCheck = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", metavar="FILE.npz", rich_help_panel=options.LONG_RUNS, show_default=False,
            help="Go on from a chains file or checkpoint of mcmc sample: the same chains, without a new warm-up, to "
            "--draws draws per chain (default: as many as its run asked for), with the same bytes as one run that "
            "never stopped. The target, data, sampler, settings, seed, chains and warm-up are the file's; given "
            "again they must match. Writes -o, by default FILE itself (for a checkpoint, the output it was made "
            "for).",
        ),
    ] = None,
    checkpoint_every: options.CheckpointEvery = options.CHECKPOINT_DEFAULT,
    until_converged: Annotated[
        bool,
        typer.Option(
            "--until-converged", rich_help_panel=options.LONG_RUNS,
            help="Draw in blocks (--draws, then half as many again each time), extending -o in place, until the "
            "checks of mcmc diagnose pass at two successive looks, or --max-draws; the summary says how many "
            "draws it took. Exit 1 if they still fail at --max-draws.",
        ),
    ] = False,
    max_draws: Annotated[
        int | None,
        typer.Option(
            metavar="M", min=1, rich_help_panel=options.LONG_RUNS, show_default=False,
            help="With --until-converged: the most draws per chain. \\[default: 10 x --draws]",
        ),
    ] = None,
    keep_warmup: Annotated[
        bool,
        typer.Option(
            "--keep-warmup", rich_help_panel=options.LONG_RUNS,
            help="Also store the warm-up draws (warmup_posterior__NAME, warmup_sample_stats__NAME: lp and the "
            "sampler's statistics), left out by mcmc diagnose unless --include-warmup; diagnose --plot then "
            "draws lp over warm-up and draws.",
        ),
    ] = False,
    ctx: typer.Context = None,  # type: ignore[assignment] - Typer passes the context
) -> None:
    extra = options.parse_target_options(target_option or [])
    clash = sorted(set(extra) & {"dim", "rho", "scales", "data"})
    if clash:
        raise UsageError(f"use --{clash[0]} instead of --target-option {clash[0]}=...")
    given = {
        "scale": scale, "width": width, "proposal": proposal, "step_size": step_size,
        "path_length": path_length, "target_accept": target_accept, "persistence": persistence,
        "max_energy_error": max_energy_error, "particles": particles, "max_tree_depth": max_tree_depth,
    }  # fmt: skip
    em = {"--em-iterations": em_iterations, "--em-draws": em_draws, "--em-growth": em_growth, "--format": fmt}
    out_format = getattr(fmt, "value", fmt) or "table"
    if mcem:
        _mcem(target, sampler, given, param or (), chains=chains, warmup=warmup, seed=seed, output=output, em=em,
              quiet=quiet, sampling={
                  "--draws": draws, "--thin": thin if thin != 1 else None, "--first-chain": first_chain or None,
                  "--dim": dim, "--rho": rho, "--scales": scales, "--data": data, "--target-option": target_option,
                  "--observe": observe, "--query": query, "--exact": exact or None, "--init": init,
                  "--predict": predict, "--predictions": predictions, "--plot": plot, "--scheduler": scheduler,
                  "--resume": resume, "--until-converged": until_converged or None, "--max-draws": max_draws,
                  "--keep-warmup": keep_warmup or None,
              })  # fmt: skip
        return
    if out_format == "csv":
        raise UsageError("--format csv applies to --mcem (a run's summary is table or json)")
    stray = [option for option, value in em.items() if value is not None and option != "--format"]
    if stray:
        raise UsageError(f"{', '.join(stray)} applies to --mcem")
    draws = DRAWS if draws is None else draws
    output = "chains.npz" if output is None else output
    from mcmc.core.targets import default_sampler, is_network_target  # start-up: the targets' registry, once parsed

    if out_format == "json" and output == "-":
        raise UsageError("-o - and --format json would both write to stdout; pick one")
    typed = options.given_fields(ctx, _DEFINING)
    if max_draws is not None and not until_converged:
        raise UsageError("--max-draws goes with --until-converged")
    every = options.parse_duration(checkpoint_every)
    # None: a target file's, chosen once it is loaded, or going on from a file (--resume), the file's; what was
    # not given is then the file's (the command layer reads it)
    sampler = sampler or (None if resume else default_sampler(target))
    if warmup is None:  # exact, independent draws (inverse-cdf, exact, logic sampling, ...) need none
        chosen = (NETWORK_SAMPLERS if is_network_target(target) else SAMPLERS).get(sampler or "")
        warmup = WARMUP if chosen is None or chosen.warms_up else 0
    if proposal is not None and sampler == MH.name:
        # the notes' spelling, --proposal Q.csv: mh's proposal matrix
        if not proposal.lower().endswith(".csv"):
            raise UsageError(f"--proposal with -s mh is its proposal matrix, a .csv file; got {proposal!r}")
        given = {**given, "proposal": None, MH_PROPOSAL.name: proposal}
    # the settings a tuning option names are the sampler's for its kind of target: both must be given
    if resume and (sampler is None or "target" not in typed) and (param or any(v is not None for v in given.values())):
        raise UsageError("--resume with tuning options: give --sampler and --target too (or leave them out to go on "
                         "with the file's)")
    params = options.tuning(sampler, given, param or (), NETWORK if is_network_target(target) else DENSITY)
    if plot:
        from mcmc.cli.render.plot import image_format  # start-up: the plot renderer only with --plot

        image_format(plot)  # refuse a bad --plot name before the work
    start = None
    if init is not None:
        try:
            start = tuple(float(v) for v in init.split(","))
        except ValueError:
            raise UsageError(f"--init must be comma-separated numbers, got {init!r}") from None

    from mcmc.cli.config import CHECK_KEYS, resolve  # start-up: the config reader only once the options parse

    checks = resolve(
        options.check_options(max_rhat, min_ess, max_divergences, min_ebfmi, max_treedepth_hits, strict=strict),
        keys=CHECK_KEYS,
    )
    # start-up: the command layer (NumPy, the samplers) only once the options parse
    from mcmc.cli.commands.checkpoints import Checkpoints, checkpoint_path, output_of
    from mcmc.cli.commands.sample import LongRun, SampleSpec, sample_run

    spec = SampleSpec(
        target=target, sampler=sampler, chains=chains, first_chain=first_chain, warmup=warmup, draws=draws,
        thin=thin, seed=seed, init=start, params=params, scheduler=scheduler,
        target_options={"dim": dim, "rho": rho, "scales": scales.value if scales else None, "data": data, **extra},
        observe=tuple(observe or ()), query=tuple(query or ()), exact=exact, keep_warmup=keep_warmup,
    )  # fmt: skip
    if resume is not None and "output" not in typed:
        output = output_of(resume)  # extended in place, or the output the checkpoint was made for
    ckpt_path = checkpoint_path(output) if scheduler is None else None
    with progress_bar(not quiet) as progress, signals_held() as stop:
        checkpoints = None if every is None or ckpt_path is None else Checkpoints(ckpt_path, every or None, stop)
        long_run = LongRun(
            resume=resume, given=frozenset(typed), checkpoints=checkpoints,
            max_draws=(max_draws or 10 * draws) if until_converged else None,
        )  # fmt: skip
        try:
            result = sample_run(
                spec, output, stdout=sys.stdout.buffer, thresholds=checks.thresholds, strict=checks.strict,
                progress=progress, predict=predict, predictions=predictions, plot=plot, long_run=long_run,
            )  # fmt: skip
        except KeyboardInterrupt:
            if checkpoints is not None and checkpoints.written is not None:
                print_resume_line("sample", checkpoints.path, checkpoints.written, output)
            raise
    if plot and result.predictive is not None:
        from mcmc.cli.render.plot import plot_predictive  # start-up: matplotlib's renderer only with --plot

        plot_predictive(result.predictive, plot)
    if out_format == "json":
        from mcmc.cli.render import render  # start-up: the renderers only once the run is done

        render(result, "json", sys.stdout)
    elif not quiet:
        # start-up: rich's tables only when the summary is shown
        from mcmc.cli.render import render, table_sample  # noqa: F401 - table_sample registers SampleResult's table

        render(result, "table", sys.stderr)
    finish(result.passed, result.verdict(), result.advice, no_check=no_check, quiet=quiet)


def _mcem(target: str, sampler: str | None, given: dict[str, Any], items: Sequence[str], *, chains: int,
          warmup: int | None, seed: int | None, output: str | None, em: dict[str, Any], quiet: bool,
          sampling: dict[str, Any]) -> None:
    """``--mcem``: Monte Carlo EM on the latent-variable model ``target``; the trace of theta on stdout."""
    stray = [option for option, value in sampling.items() if value not in (None, [], ())]
    if stray:
        raise UsageError(f"--mcem runs Monte Carlo EM; {', '.join(stray)} applies to sampling")
    if sampler is None and (any(v is not None for v in given.values()) or items):
        raise UsageError("--mcem: name the E-step's --sampler to give it settings")
    params = options.tuning(sampler, given, items, DENSITY) if sampler is not None else {}
    # start-up: the command layer and Monte Carlo EM's table only once the options parse
    from mcmc.cli.commands.sample import mcem_run
    from mcmc.cli.render import table_mcem

    settings = McemSettings(
        iterations=em["--em-iterations"] or EM.iterations, draws=em["--em-draws"] or EM.draws,
        growth=EM.growth if em["--em-growth"] is None else em["--em-growth"], chains=chains,
        warmup=EM.warmup if warmup is None else warmup, sampler=sampler, params=params, seed=seed,
    )  # fmt: skip
    with progress_bar(not quiet) as progress:
        result = mcem_run(target, settings, output, progress=progress)
    emit(result, getattr(em["--format"], "value", "table"), "-")
    if not quiet:
        table_mcem.mcem_summary(result, output, seed_given=seed is not None, out=err_console.file)


#: The options whose value a run that goes on (--resume) takes from its file unless given: parameter -> spec field.
_DEFINING = {"target": "target", "sampler": "sampler", "chains": "chains", "first_chain": "first_chain",
             "warmup": "warmup", "thin": "thin", "seed": "seed", "init": "init", "observe": "observe",
             "keep_warmup": "keep_warmup", "draws": "draws", "output": "output"}  # fmt: skip


def finish(passed: bool, verdict: str, advice: Sequence[str] = (), *, no_check: bool, quiet: bool = False) -> None:
    """The verdict line of a command that wrote draws, then exit 1 if they failed the checks (not with --no-check)."""
    if quiet and (passed or no_check):
        return
    notes = [f"what to do: {a}" for a in advice if a] if not passed else []
    if no_check and not passed:
        notes.append("--no-check: exit 0 all the same")
    print_verdict(verdict, passed, notes)
    if not passed and not no_check:
        raise CheckFailed(verdict)


command.__doc__ = HELP
