"""The one call of ``mcmc sample``: sample, write the chains file, judge the draws as ``diagnose`` would.

``core`` samples and never imports ``diagnostics``; a command that samples
and then reports whether the run converged needs both, so its one call lives
in the command layer. :func:`sample_run` checks the outputs and the starting
point before any work, builds the target, runs the driver, writes the chains
file through :func:`mcmc.core.chains.write_chains` and returns the chains,
their timings, the report :func:`mcmc.diagnostics.report.check.check` makes
of them and its :class:`~mcmc.diagnostics.report.summary.RunSummary`. A
target with a posterior predictive (``bnn``) adds its
:class:`~mcmc.diagnostics.report.predictive.PredictiveReport` and the
predictions file; a transition matrix (``P.csv``) its
:class:`~mcmc.diagnostics.report.markov.MarkovReport` (with ``-T steps=T``
the law after ``T`` steps beside the chains'), as does Metropolis-Hastings on
a weights file (``-s mh``: the report of the chain's transition matrix beside
``b / sum(b)``); a target that knows its exact mean and sd its
:class:`~mcmc.diagnostics.report.exact.ExactMoments`. On a Bayesian network
file (``NET.bif``) it hands over to :func:`network_run`, whose result also
carries the marginals (:mod:`mcmc.diagnostics.report.network`). With
``--mcem`` the target is a latent-variable model and :func:`mcem_run` finds
its maximum-likelihood parameters by Monte Carlo EM instead.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from mcmc.cli.commands.checkpoints import Checkpoints, resume_inputs, same_file
from mcmc.cli.commands.files import check_chains_output, write_chains_to
from mcmc.cli.commands.progress import Progress
from mcmc.core.atomic import write_text_atomic
from mcmc.core.chains import Chains
from mcmc.core.errors import InputError, UsageError
from mcmc.core.paths import check_paths
from mcmc.core.random import entropy_seed
from mcmc.core.targets import default_sampler, is_network_target, is_transition_matrix, is_user_target
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.predictive import PredictiveReport, predictive_report, predictive_request
from mcmc.diagnostics.report.report import Report
from mcmc.diagnostics.report.summary import RunSummary
from mcmc.diagnostics.report.thresholds import Thresholds

if TYPE_CHECKING:  # start-up: a network's and a Markov chain's reports load only for their runs
    from mcmc.core.mcem.config import McemSettings
    from mcmc.core.mcem.em import McemResult
    from mcmc.diagnostics.report.exact import ExactMoments
    from mcmc.diagnostics.report.markov import MarkovReport
    from mcmc.diagnostics.report.network import NetworkSummary

__all__ = ["LongRun", "Look", "SampleResult", "SampleSpec", "failed_advice", "mcem_run", "network_run", "next_look",
           "sample_run"]


@dataclass(frozen=True)
class SampleSpec:
    """What to sample: ``mcmc sample``'s options, parsed.

    ``target_options`` are the target's keyword options (``dim``, ``rho``,
    ``data``, ...; ``None`` values count as not given); ``params`` the
    sampler's keyword tuning (``scale``, ``step_size``, ...); ``init`` a
    starting point for every chain, in the target's dimension. A Bayesian
    network target (``NET.bif``) takes ``observe`` (``NODE=STATE`` items or
    comma lists), ``query`` (node names or comma lists: the marginals to show)
    and ``exact`` (show exact marginals beside them).
    """

    target: str = "gaussian"
    #: ``None``: the target's default (:func:`mcmc.core.targets.default_sampler`: its own, else hmc when
    #: it has a gradient, else slice), chosen once the target is built.
    sampler: str | None = None
    chains: int = 4
    first_chain: int = 0
    warmup: int = 1000
    draws: int = 1000
    thin: int = 1
    seed: int | None = None
    init: tuple[float, ...] | None = None
    target_options: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: Dask scheduler (``tcp://HOST:PORT`` or ``local:N``) to run blocks of chains on; ``None``: here.
    scheduler: str | None = None
    observe: tuple[str, ...] = ()
    query: tuple[str, ...] = ()
    exact: bool = False
    #: Keep the warm-up draws in the chains file (``--keep-warmup``).
    keep_warmup: bool = False


#: The fields of :class:`SampleSpec` that define a run: a run that goes on
#: (``--resume``) takes them from its file, and refuses any given otherwise.
#: ``target_options`` and ``params`` count key by key, as given.
DEFINING = ("target", "sampler", "chains", "first_chain", "warmup", "thin", "seed", "init", "observe", "keep_warmup")


@dataclass(frozen=True)
class LongRun:
    """How a run goes on and stops: ``mcmc sample --resume``, checkpoints, ``--until-converged``.

    Attributes
    ----------
    resume
        A chains file or checkpoint of ``mcmc sample`` to go on from: the same
        chains, no new warm-up, to ``SampleSpec.draws`` (or, when ``draws``
        is not in ``given``, the number its run asked for).
    given
        The fields of :class:`SampleSpec` the user gave (names in
        :data:`DEFINING`, and ``draws``): with ``resume`` the others are the
        file's, and a given one that differs from the file's is refused.
    checkpoints
        Where and how often to write checkpoints (``None``: never).
    max_draws
        ``--until-converged --max-draws M``: draw in blocks, from
        ``SampleSpec.draws``, until the checks pass at two successive looks
        or the chains have ``M`` draws (see :func:`next_look`).
    """

    resume: str | None = None
    given: frozenset[str] = frozenset()
    checkpoints: Checkpoints | None = None
    max_draws: int | None = None


@dataclass(frozen=True)
class Look:
    """One look of ``--until-converged``: the draws per chain judged and whether the checks passed."""

    draws: int
    passed: bool


@dataclass(frozen=True)
class SampleResult:
    """A finished ``mcmc sample`` run.

    Attributes
    ----------
    chains
        The draws ``(chain, draw, *shape)``, sampler statistics and attributes
        as written to ``output``.
    timings
        ``warmup_time_s``, ``sampling_time_s``, ``wall_time_s`` of the run and
        ``write_time_s`` of the chains file: never in the file (same seed,
        same bytes).
    summary
        Max R-hat, min ESS, acceptance, divergences, derived from ``report``.
    seed_given
        False when the seed was drawn from OS entropy (shown so the run can be repeated).
    output
        Where the chains went (``-``: standard output).
    predictive
        For a target with a posterior predictive (``bnn``): the
        :class:`~mcmc.diagnostics.report.predictive.PredictiveReport` (quantities to
        judge, test scores, where the predictions went); else ``None``.
    network
        For a Bayesian network target: the
        :class:`~mcmc.diagnostics.report.network.NetworkSummary` (marginals with
        MCSE, exact values when asked, warnings); ``summary`` is then over the
        state indicators ``NODE[STATE]``. Else ``None``.
    markov
        For a transition matrix target (``P.csv``): the
        :class:`~mcmc.diagnostics.report.markov.MarkovReport` (the exact stationary
        law both ways, classes, periods, detailed balance, spectral gap, and
        the simulated state frequencies with MCSE). Else ``None``.
    report
        The report :func:`mcmc.diagnostics.report.check.check` makes of the draws as
        written, which is what ``mcmc diagnose`` says of the file: one verdict.
    advice
        What to do when the report fails: each failed check's advice, or for
        a network the nodes that did not mix and the remedies.
    """

    chains: Chains
    timings: Mapping[str, float]
    summary: RunSummary | None
    seed_given: bool
    output: str
    predictive: PredictiveReport | None = None
    network: NetworkSummary | None = None
    markov: MarkovReport | None = None
    report: Report | None = None
    advice: tuple[str, ...] = ()
    exact: ExactMoments | None = None
    #: ``--until-converged``: every look, and the most draws per chain it would have drawn.
    looks: tuple[Look, ...] = ()
    max_draws: int | None = None
    #: ``--resume``: the file the run went on from, and the draws per chain it held.
    resumed_from: str | None = None
    resumed_draws: int = 0

    @property
    def converged_early(self) -> bool:
        """``--until-converged`` stopped before ``--max-draws``: the checks passed at two successive looks."""
        return len(self.looks) >= 2 and self.looks[-1].passed and self.looks[-2].passed

    @property
    def passed(self) -> bool:
        """The draws pass the checks of ``mcmc diagnose`` (the report's verdict)."""
        return self.report is None or self.report.passed

    def verdict(self) -> str:
        """The report's verdict line, saying where the evidence is when it fails."""
        if self.report is None:
            return ""
        line = self.report.verdict()
        if not self.report.passed:
            where = "standard output" if self.output == "-" else self.output
            line += f" (the draws are in {where}"
            shown = self.output != "-"
            line += f": mcmc diagnose {self.output} shows every parameter)" if shown else ")"
        return line

    def to_dict(self) -> dict[str, Any]:
        """The run as a JSON document (``mcmc sample -f json``): attributes, timings, the run summary, the checks,
        and the parts a run has: the network's marginals, a Markov chain's exact analysis, the weights of
        weighted draws, the exact moments beside the estimates."""
        summary = None if self.summary is None else dataclasses.asdict(self.summary)
        report = self.report
        return {
            "schema": "mcmc.sample/1", "output": self.output, "seed_given": self.seed_given,
            "attrs": dict(self.chains.attrs), "timings": dict(self.timings), "summary": summary,
            "passed": self.passed, "verdict": self.verdict(), "advice": self.advice,
            "checks": [] if report is None else [
                {"name": c.name, "passed": c.passed, "severity": c.severity, "message": c.message}
                for c in report.checks],
            "network": None if self.network is None else self.network.to_dict(),
            "predictive": None if self.predictive is None else self.predictive.to_dict(),
            "markov": None if self.markov is None else self.markov.to_dict(),
            "weights": None if report is None or report.weights is None else report.weights.to_dict(),
            "exact": None if self.exact is None else self.exact.to_dict(),
            "until_converged": None if not self.looks else {
                "max_draws": self.max_draws, "draws": self.chains.n_draws, "stopped_early": self.converged_early,
                "looks": [dataclasses.asdict(look) for look in self.looks]},
            "resumed_from": self.resumed_from, "resumed_draws": self.resumed_draws,
        }  # fmt: skip

    @property
    def seconds(self) -> float:
        """Wall time of sampling and writing."""
        return self.timings.get("wall_time_s", 0.0) + self.timings.get("write_time_s", 0.0)


def sample_run(
    spec: SampleSpec,
    output: str,
    *,
    stdout: IO[bytes] | None = None,
    thresholds: Thresholds | None = None,
    strict: bool = False,
    progress: Progress | None = None,
    predict: str | None = None,
    predictions: str | None = None,
    plot: str | None = None,
    long_run: LongRun | None = None,
) -> SampleResult:
    """Sample ``spec``, write the chains to ``output`` and judge them as ``mcmc diagnose`` judges the file.

    Parameters
    ----------
    spec
        The run.
    output
        A ``.npz`` or ``.nc`` path (written atomically), or ``-`` for npz on ``stdout``.
    thresholds, strict
        The limits of the checks (``diagnose``'s defaults when ``None``) and
        whether warnings fail: the report of the written draws is
        :func:`mcmc.diagnostics.report.check.check`'s, the one judge of every command.
    progress
        Told ``progress(label, done, total)`` during the run, a label per block of chains.
    predict, predictions, plot
        ``bnn``: test inputs to predict at, where to write the predictions CSV
        (written here, atomically, once the chains are), and the plot the
        caller will draw (checked with the other outputs; the predictive on a
        grid is computed for it).
    long_run
        Going on from a file (``resume``), checkpoints, and ``--until-converged``
        (:class:`LongRun`). The chains file of a ``.npz`` output carries what
        the run needs to go on (:mod:`mcmc.core.resume`).

    Raises
    ------
    UsageError
        An output that is an input or that cannot be written, an output
        format other than npz or nc, an ``init`` of the wrong length, a
        target option the target does not take; with ``scheduler``, no
        scheduler answering or distributed not installed; with ``resume``,
        a setting that differs from the file's, fewer draws than it has.
    InputError
        With ``resume``: a file that is not a chains file of ``mcmc sample``
        with a resume section of this version, or a target or data file
        whose content changed since (its SHA-256).
    ScaleOutError
        With ``scheduler``, workers that kept dying.

    With ``spec.scheduler`` the chains run as blocks on a Dask cluster
    (:mod:`mcmc.core.scaleout`) and the file is the same, byte for byte.
    """
    # start-up: the sampling machinery (driver, scale-out, user targets: about 20 ms) is not a network run's
    from mcmc.core import scaleout
    from mcmc.core.resume import sampler_resume
    from mcmc.core.samplers import NETWORK_SAMPLERS, SAMPLERS, check_applies, get_sampler
    from mcmc.core.targets import get_target
    from mcmc.core.targets.protocols import FiniteStates, TransitionKernel
    from mcmc.core.targets.user import read_source

    if spec.scheduler is not None:
        scaleout.check_scheduler(spec.scheduler)  # before any work, whatever the target
    long_run = long_run or LongRun()
    previous: Chains | None = None
    if long_run.resume is not None:
        previous = _read_resume(long_run.resume)
        kind = previous.resume.header.get("kind") if previous.resume is not None else None
        if kind != "network":
            spec = resumed_spec(spec, long_run.given, sampler_resume(previous.resume, long_run.resume).problem,
                                long_run.resume)  # fmt: skip
    if is_network_target(spec.target) or (previous is not None and previous.resume is not None
                                          and previous.resume.header.get("kind") == "network"):  # fmt: skip
        if predict or predictions or plot:
            raise UsageError("--predict, --predictions and --plot apply to the bnn target, not to a Bayesian network")
        return network_run(spec, output, stdout=stdout, thresholds=thresholds, strict=strict, long_run=long_run,
                           previous=previous, progress=progress)  # fmt: skip
    if spec.observe or spec.query or spec.exact:
        raise UsageError("--observe, --query and --exact apply to a Bayesian network target (--target NET.bif)")
    if spec.sampler is not None and spec.sampler not in SAMPLERS:
        kind = "a Bayesian network target (--target NET.bif)" if spec.sampler in NETWORK_SAMPLERS else "no target"
        raise UsageError(f"--sampler {spec.sampler} applies to {kind}")
    if spec.scheduler is not None and (long_run.resume or long_run.max_draws):
        raise UsageError("--resume and --until-converged run here: leave out --scheduler")
    data = spec.target_options.get("data")
    user_file = spec.target.split(":", 1)[0] if is_user_target(spec.target) else None
    target_file = user_file or (spec.target if is_transition_matrix(spec.target) else None)
    check_paths(
        {"-o": output, "--predictions": predictions, "--plot": plot, **_checkpoint_output(long_run, output)},
        [data if isinstance(data, str) else None, user_file, predict,
         spec.target if is_transition_matrix(spec.target) else None, spec.params.get("proposal_matrix"),
         *resume_inputs(long_run.resume, output)],
    )  # fmt: skip
    check_chains_output(output)
    seed = spec.seed if spec.seed is not None else entropy_seed()  # recorded, so a run given none can go on
    # Built here too (a bad option fails before any work, and the predictive
    # needs it), except a user file bound for a cluster: the workers load it.
    remote_file = user_file is not None and spec.scheduler is not None
    if isinstance(spec.target_options.get("steps"), int) and is_transition_matrix(spec.target):
        _check_step_kept(spec.target_options["steps"], spec)  # before the law after T steps is computed
    tgt = None if remote_file else get_target(spec.target, **spec.target_options)
    if remote_file and (predict or predictions or plot):
        raise UsageError("--predict, --predictions and --plot need the target here; run them without --scheduler")
    steps = getattr(tgt, "steps", None) if isinstance(tgt, TransitionKernel) else None
    if steps is not None:
        _check_step_kept(steps, spec)
    # Every input read and checked before any work: a bad test file must not cost a run and its output.
    request = None if tgt is None else predictive_request(
        tgt, test=predict, predictions=predictions is not None, curve=plot is not None
    )
    sampler = spec.sampler
    if sampler is None and tgt is not None:  # else a user file bound for a cluster: its workers choose
        sampler = default_sampler(spec.target, tgt)
        check_applies(sampler, spec.params, chosen=f", the default for {tgt.name!r}")
    if sampler is not None and tgt is not None:
        prepare = getattr(get_sampler(sampler), "prepare", None)  # what a setting names (a file), read before any work
        if prepare is not None:
            prepare(tgt, **spec.params)
    # mh's transition matrix for its report, now too: a bad Q.csv must not cost a run.
    mh_matrix = _mh_matrix(tgt, spec) if isinstance(tgt, FiniteStates) and sampler == "mh" else None
    spec = dataclasses.replace(spec, sampler=sampler)  # the file records the sampler that ran
    problem = problem_of(dataclasses.replace(spec, seed=seed), target_file, data if isinstance(data, str) else None)
    saved = None
    if previous is not None:
        saved = sampler_resume(previous.resume, long_run.resume)  # type: ignore[arg-type]
        check_files(saved.problem, problem, long_run.resume)  # type: ignore[arg-type]
        problem = saved.problem  # the file's own words (paths as then given): the same bytes as a run never stopped
        goal = spec.draws if "draws" in long_run.given else saved.goal
        if goal < saved.done:
            raise UsageError(f"--draws {goal}: {long_run.resume} already has {saved.done} draws per chain")
        spec = dataclasses.replace(spec, draws=goal)
    if long_run.max_draws is not None and long_run.max_draws < spec.draws:
        raise UsageError(f"--max-draws {long_run.max_draws} is below --draws {spec.draws}, the first look")
    if long_run.max_draws is not None and tgt is not None:
        # The run may grow to --max-draws, every draw kept: refused now if that would not fit, as --draws is.
        from mcmc.core.memory import require_memory  # start-up: only for an until-converged run

        kept = -(-long_run.max_draws // spec.thin)
        require_memory(
            spec.chains * (kept * (tgt.dim + tgt.n_reported) + 8 * tgt.dim), 8,
            f"{spec.chains} chains x {kept} draws x {tgt.dim} coordinates", "--chains, --max-draws",
        )  # fmt: skip
    ids = range(spec.first_chain, spec.first_chain + spec.chains)
    job = scaleout.ChainsJob(
        target=spec.target, sampler=sampler, warmup=spec.warmup, draws=spec.draws, thin=spec.thin,
        seed=seed, init=spec.init, target_options=dict(spec.target_options), params=dict(spec.params),
        keep_warmup=spec.keep_warmup, problem=problem,
    )  # fmt: skip
    timings: dict[str, float] = {}

    def sample(draws: int, go_on: Chains | None) -> Chains:
        block = dataclasses.replace(job, draws=draws)
        if spec.scheduler is None:
            resume = None if go_on is None else (sampler_resume(go_on.resume, long_run.resume or output), go_on)
            chains, run_timings = scaleout.run_block(block, ids, progress, target=tgt, resume=resume,
                                                     checkpoint=long_run.checkpoints)  # fmt: skip
        else:
            if user_file is not None:
                # Its source, not its path: the workers need not see this machine's files,
                # nor import it here (it may need what only the workers have).
                block = dataclasses.replace(block, target_text=read_source(spec.target))
            chains, run_timings = scaleout.run_blocks(block, ids, spec.scheduler, progress=progress)
            if block.sampler is None and chains.resume is not None:
                # The workers chose the sampler of a user file; record the one that ran, as a local run does.
                chains.resume = _with_sampler(chains.resume, chains.attrs.get("sampler"))
        # Timings come beside the chains, never in the file (same seed, same bytes).
        for key, value in run_timings._asdict().items():
            timings[key] = timings.get(key, 0.0) + value
        return chains

    chains = sample(spec.draws, previous)
    report = None
    looks: list[Look] = []
    if long_run.max_draws is not None:
        judged: dict[str, Report] = {}

        def passes(chains: Chains) -> bool:
            judged["report"] = check(chains, thresholds=thresholds or Thresholds(), strict=strict, source=[output])
            return judged["report"].passed

        chains, looks = until_converged(chains, passes, lambda c, draws: sample(draws, c), long_run.max_draws,
                                        spec.thin, lambda c: _timed_write(c, output, stdout, timings), output)
        report = judged["report"]
    else:
        _timed_write(chains, output, stdout, timings)
    if long_run.checkpoints is not None:
        long_run.checkpoints.remove()  # the output holds all it held
    t0 = time.perf_counter()
    predictive = None
    if tgt is not None and request is not None:
        predictive = predictive_report(chains, tgt, request=request)
    if predictive is not None and predictions and predictive.test is not None:
        # start-up: the network target's module loads SciPy; predictive_report has loaded it already
        from mcmc.core.targets.bnn import predictions_csv

        write_text_atomic(predictions, predictions_csv(tgt, predictive.test))
        predictive = dataclasses.replace(predictive, predictions_path=predictions)
    markov = None
    if isinstance(tgt, TransitionKernel):
        from mcmc.diagnostics.report.markov import markov_report  # start-up: only for a Markov chain's run

        markov = markov_report(chains, tgt.analysis, spec.target, steps=steps,
                               law_at_steps=getattr(tgt, "law_at_steps", None))  # fmt: skip
    elif mh_matrix is not None:
        markov = _mh_report(chains, tgt, spec, mh_matrix)
    timings["write_time_s"] = timings.get("write_time_s", 0.0) + time.perf_counter() - t0
    if report is None:
        report = check(chains, thresholds=thresholds or Thresholds(), strict=strict, source=[output])
    summary = RunSummary.from_report(report, chains)
    exact = None
    if tgt is not None and markov is None and tgt.mean is not None and tgt.sd is not None:
        from mcmc.diagnostics.report.exact import exact_moments  # start-up: only for a target that knows them

        exact = exact_moments(report, tgt.names, tgt.mean, tgt.sd)
    return SampleResult(
        chains, timings, summary, spec.seed is not None, output, predictive, markov=markov, report=report,
        advice=failed_advice(report), exact=exact, looks=tuple(looks), max_draws=long_run.max_draws,
        resumed_from=long_run.resume, resumed_draws=0 if saved is None else saved.done,
    )  # fmt: skip


def _check_step_kept(steps: int, spec: SampleSpec) -> None:
    """Refuse, before any work, ``-T steps=T`` whose step the run would not keep (warm-up discards it)."""
    from mcmc.diagnostics.report.markov import step_index  # start-up: only for a Markov chain's run

    kept = -(-spec.draws // spec.thin)
    if step_index(steps, spec.warmup, spec.thin, kept) is None:
        last = spec.warmup + (kept - 1) * spec.thin + 1
        raise UsageError(
            f"-T steps={steps} looks at every chain's state after {steps} step{'s' if steps != 1 else ''}, but this "
            "run keeps steps "
            f"{spec.warmup + 1} to {last} (every {spec.thin}): give --warmup {max(steps - 1, 0)} or less "
            "(--warmup 0 keeps every step)"
        )


def _mh_matrix(target: Any, spec: SampleSpec) -> Any:
    """The transition matrix Metropolis-Hastings simulates on a weights file (its proposal file read and checked).

    Raises
    ------
    InputError
        A proposal file that is not a transition matrix of the target's states (naming it).
    """
    from mcmc.core.samplers.mh import transition_matrix  # start-up: only for a Metropolis-Hastings run on weights

    return transition_matrix(target, spec.params.get("proposal_matrix"))


def _mh_report(chains: Chains, target: Any, spec: SampleSpec, matrix: Any) -> MarkovReport:
    """Metropolis-Hastings on a weights file: its transition matrix, analysed exactly, beside ``b / sum(b)``."""
    # start-up: the analysis and the report only for a Metropolis-Hastings run on weights
    from mcmc.core.targets.markov_chain import analyse
    from mcmc.diagnostics.report.markov import markov_report

    log_b = np.asarray(target.log_weights, dtype=float)
    with np.errstate(over="ignore"):
        b = np.exp(log_b - np.max(log_b))
    return markov_report(chains, analyse(matrix), spec.target, target_law=(matrix.matrix, b / np.sum(b)))


#: ``--until-converged``: each look after the first adds this fraction of the draws so far.
GROWTH = 0.5


def next_look(done: int, max_draws: int, thin: int = 1) -> int:
    """Draws per chain at the look after ``done``: half as many again, a multiple of ``thin``, at most ``max_draws``.

    Geometric growth keeps the number of looks logarithmic in ``max_draws``
    (each look is a chance to stop on a lucky pass: see ``docs/formats.md``,
    "Run until converged"), and no run draws more than half again what it needed.
    """
    step = max(thin, -(-int(done * GROWTH) // thin) * thin)
    return min(max_draws, done + step)


def until_converged(
    chains: Chains,
    passes: Callable[[Chains], bool],
    extend: Callable[[Chains, int], Chains],
    max_draws: int,
    thin: int,
    write: Callable[[Chains], None],
    output: str,
) -> tuple[Chains, list[Look]]:
    """``--until-converged``: look at ``chains``, extend them (:func:`next_look`) until two successive looks pass
    or ``max_draws`` per chain are drawn; the output is written whole at every look (only at the last for stdout).

    ``passes`` judges the chains of a look; ``extend(chains, draws)`` goes on to ``draws`` per chain.
    """
    looks: list[Look] = []
    while True:
        done = int(chains.attrs["draws"])
        looks.append(Look(done, passes(chains)))
        stop = (len(looks) >= 2 and looks[-2].passed and looks[-1].passed) or done >= max_draws
        if output != "-" or stop:  # extended in place, whole at every look
            write(chains)
        if stop:
            return chains, looks
        chains = extend(chains, next_look(done, max_draws, thin))


def _timed_write(chains: Chains, output: str, stdout: IO[bytes] | None, timings: dict[str, float]) -> None:
    t0 = time.perf_counter()
    write_chains_to(chains, output, stdout)
    timings["write_time_s"] = timings.get("write_time_s", 0.0) + time.perf_counter() - t0


def _checkpoint_output(long_run: LongRun, output: str) -> dict[str, str]:
    """The checkpoint among the outputs to check, unless it is the file the run goes on from."""
    ckpt = long_run.checkpoints.path if long_run.checkpoints is not None else None
    if ckpt is None or (long_run.resume is not None and same_file(ckpt, long_run.resume)):
        return {}
    return {"the checkpoint": ckpt}


def _read_resume(path: str) -> Chains:
    """The chains file or checkpoint ``path`` with its warm-up draws and resume section."""
    from mcmc.diagnostics.readers.numpy_files import read_npz_resume  # start-up: only when going on from a file

    if not path.lower().endswith(".npz"):
        raise InputError(path, "--resume reads a .npz chains file or checkpoint (an .nc file has no resume section)")
    return read_npz_resume(path)


def _with_sampler(resume: Any, sampler: str | None) -> Any:
    """``resume`` (a :class:`~mcmc.core.chains.Resume`) whose recorded settings name ``sampler``."""
    import copy  # start-up: only for a cluster run of a user file without --sampler

    header = copy.deepcopy(resume.header)
    settings = header.get("problem", {}).get("settings")
    if isinstance(settings, dict):
        settings["sampler"] = sampler
    return dataclasses.replace(resume, header=header)


def problem_of(spec: SampleSpec, target_file: str | None, data_file: str | None) -> dict[str, Any]:
    """What defines a run, as the resume section records it: the settings, and the SHA-256 of its files."""
    from mcmc.core.resume import file_digest  # start-up: hashlib, only for a run that records it

    settings = {name: _plain(getattr(spec, name)) for name in DEFINING}
    settings["target_options"] = {k: _plain(v) for k, v in spec.target_options.items() if v is not None}
    settings["params"] = {k: _plain(v) for k, v in spec.params.items() if v is not None}
    files: dict[str, Any] = {"target": None if target_file is None else file_digest(target_file),
                             "data": None if data_file is None else file_digest(data_file)}  # fmt: skip
    # a setting that names a file (mh's proposal matrix, a -T option's file): its content defines the run too
    named = {f"{where}:{k}": v for where, values in (("params", spec.params), ("target_options", spec.target_options))
             for k, v in values.items() if k != "data" and isinstance(v, str) and os.path.isfile(v)}  # fmt: skip
    if named:
        files["settings"] = {key: file_digest(path) for key, path in sorted(named.items())}
    return {"settings": settings, "files": files}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


_FLAGS = {"first_chain": "--first-chain", "keep_warmup": "--keep-warmup", "target": "--target",
          "sampler": "--sampler", "chains": "--chains", "warmup": "--warmup", "thin": "--thin", "seed": "--seed",
          "init": "--init", "observe": "--observe"}  # fmt: skip
_TARGET_FLAGS = ("dim", "rho", "scales", "data")


def resumed_spec(spec: SampleSpec, given: frozenset[str], problem: dict[str, Any], source: str) -> SampleSpec:
    """``spec`` with every setting the user did not give taken from the run in ``source``.

    A given setting must equal the file's, except the target file and the
    data file, which :func:`check_files` compares by content.

    Raises
    ------
    UsageError
        One line naming the first setting that differs.
    """
    saved = problem.get("settings", {})

    def differs(flag: str, then: Any, now: Any) -> UsageError:
        def show(v: Any) -> str:
            return "(not given)" if v is None else ",".join(map(str, v)) if isinstance(v, list) else str(v)

        return UsageError(f"--resume {source}: the run was made with {flag} {show(then)}; this command gives "
                          f"{show(now)} (leave it out to go on with the file's)")  # fmt: skip

    changes: dict[str, Any] = {}
    for name in DEFINING:
        then = saved.get(name)
        if name not in given:
            changes[name] = tuple(then) if isinstance(then, list) else then
        elif name == "target" and _file_target(spec.target) and then is not None and _file_target(then):
            changes[name] = then  # a file: compared by content (check_files), named as then
        elif _plain(getattr(spec, name)) != then:
            raise differs(_FLAGS[name], then, _plain(getattr(spec, name)))
    options = dict(saved.get("target_options", {}))
    for key, value in spec.target_options.items():
        if value is None or key == "data" and isinstance(value, str) and isinstance(options.get(key), str):
            continue  # the data file: compared by content
        if _plain(value) != options.get(key):
            raise differs(f"--{key}" if key in _TARGET_FLAGS else f"-T {key}=", options.get(key), _plain(value))
    params = dict(saved.get("params", {}))
    for key, value in spec.params.items():
        if value is not None and _plain(value) != params.get(key):
            raise differs(f"--{key.replace('_', '-')}", params.get(key), _plain(value))
    return dataclasses.replace(spec, target_options=options, params=params, **changes)


def _file_target(target: str) -> bool:
    return is_user_target(target) or is_transition_matrix(target) or is_network_target(target)


def check_files(saved: dict[str, Any], now: dict[str, Any], source: str) -> None:
    """Refuse a target or data file whose content is not the one the run in ``source`` was made with."""
    for what, label in (("target", "target file"), ("data", "data file")):
        then, current = saved.get("files", {}).get(what), now.get("files", {}).get(what)
        if then != current:
            raise InputError(source, f"the run's {label} has changed since (its SHA-256 differs): --resume goes on "
                                     "only with the same target, data and settings")  # fmt: skip
    then, current = saved.get("files", {}).get("settings") or {}, now.get("files", {}).get("settings") or {}
    changed = sorted(key for key in then.keys() & current.keys() if then[key] != current[key])
    if changed:
        option = changed[0].split(":", 1)[1].replace("_", "-")
        raise InputError(source, f"the file the run's {option} names has changed since (its SHA-256 differs): "
                                 "--resume goes on only with the same target, data and settings")  # fmt: skip


def failed_advice(report: Report) -> tuple[str, ...]:
    """The advice of every check that fails ``report`` (each once, in the checks' order)."""
    failing = [c for c in report.checks if not c.passed and (c.severity == "error" or report.strict)]
    return tuple(dict.fromkeys(c.advice for c in failing if c.advice))


def network_run(
    spec: SampleSpec,
    output: str,
    *,
    stdout: IO[bytes] | None = None,
    thresholds: Thresholds | None = None,
    strict: bool = False,
    long_run: LongRun | None = None,
    previous: Chains | None = None,
    progress: Progress | None = None,
) -> SampleResult:
    """``mcmc sample --target NET.bif``: sample a Bayesian network given evidence, write the chains, summarise.

    Reads the BIF file (:func:`mcmc.core.networks.bif.read_bif`), parses
    ``spec.observe`` and ``spec.query`` against it and, with ``spec.exact``,
    computes the exact marginals (every node's from one calibrated junction
    tree, or the shown nodes' by variable elimination where the tree is too
    wide: :func:`mcmc.core.networks.exact.posterior_marginals`), all before sampling;
    then :func:`mcmc.core.networks.driver.sample_network` runs
    ``spec.sampler`` (gibbs, rejection or likelihood-weighting) and the chains
    file is written from :func:`~mcmc.core.networks.driver.to_chains`.

    Returns
    -------
    SampleResult
        ``summary`` over every state indicator ``NODE[STATE]`` (for likelihood
        weighting no R-hat and the Kish ESS of the weights) and ``network``,
        the :class:`~mcmc.diagnostics.report.network.NetworkSummary`.

    Raises
    ------
    InputError
        An unreadable BIF file; an unknown node or state in ``observe`` or
        ``query`` (the message lists the valid ones); evidence of probability
        zero; a queried node that is observed.
    CliqueBudgetError
        ``spec.exact`` on a network too wide for the junction tree and for
        variable elimination of the shown nodes (the message names the
        largest clique).
    UsageError
        A sampler that does not sample networks; a target option or
        ``--init`` (neither applies); a bad block specification or budget
        (``spec.params``: gibbs's ``blocks``, ``budget`` and ``scan``); an
        output that is the input; with ``long_run.resume``, a setting that
        differs from the file's or fewer draws than it has, and
        ``--until-converged``.
    """
    # start-up: the network samplers load numba (0.4 s), and the network's report the readers, only for a network
    from mcmc.core.networks.bif import read_bif
    from mcmc.core.networks.driver import require_network_memory, sample_network, to_chains
    from mcmc.core.networks.evidence import parse_evidence, query_nodes, require_unobserved
    from mcmc.core.networks.exact import posterior_marginals
    from mcmc.core.samplers import NETWORK_SAMPLERS
    from mcmc.diagnostics.report.network import estimate_indicators, network_advice, network_summary

    long_run = long_run or LongRun()
    saved = None
    if previous is not None:
        from mcmc.core.resume import sampler_resume  # start-up: only when going on from a file

        saved = sampler_resume(previous.resume, long_run.resume, "network")  # type: ignore[arg-type]
        spec = resumed_spec(spec, long_run.given, saved.problem, long_run.resume)  # type: ignore[arg-type]
    if long_run.max_draws is not None and long_run.max_draws < spec.draws:
        raise UsageError(f"--max-draws {long_run.max_draws} is below --draws {spec.draws}, the first look")
    if spec.sampler is None:
        spec = dataclasses.replace(spec, sampler=default_sampler(spec.target))
    if spec.sampler not in NETWORK_SAMPLERS:
        raise UsageError(
            f"--sampler {spec.sampler} does not sample a Bayesian network; use {', '.join(NETWORK_SAMPLERS)}"
        )
    if spec.scheduler is not None:
        raise UsageError("--scheduler runs blocks of chains of a density target; a Bayesian network is sampled "
                         "here: run it without --scheduler")  # fmt: skip
    given = sorted(k for k, v in spec.target_options.items() if v is not None)
    if given:
        raise UsageError(f"option(s) {', '.join(given)} do not apply to a Bayesian network target")
    if spec.init is not None:
        raise UsageError("--init does not apply to a Bayesian network target")
    check_paths({"-o": output, **_checkpoint_output(long_run, output)}, [spec.target, *resume_inputs(long_run.resume, output)])
    check_chains_output(output)
    seed = spec.seed if spec.seed is not None else entropy_seed()
    problem = problem_of(dataclasses.replace(spec, seed=seed), spec.target, None)
    if saved is not None:
        check_files(saved.problem, problem, long_run.resume)  # type: ignore[arg-type]
        problem = saved.problem
        goal = spec.draws if "draws" in long_run.given else saved.goal
        if goal < saved.done:
            raise UsageError(f"--draws {goal}: {long_run.resume} already has {saved.done} draws per chain")
        spec = dataclasses.replace(spec, draws=goal)
    net = read_bif(spec.target)
    evidence = parse_evidence(net, list(spec.observe))
    require_unobserved(net, evidence)
    # --until-converged may grow the run to --max-draws: refused now if that would not fit
    require_network_memory(net, spec.sampler, spec.chains, max(spec.draws, long_run.max_draws or 0), spec.thin)
    shown, queried = query_nodes(net, evidence, spec.query)
    exact = posterior_marginals(net, evidence, shown) if spec.exact else None  # refuses impossible evidence too
    def sample(draws: int, go_on: tuple[Any, Chains] | None) -> Any:
        return sample_network(
            net, evidence, spec.sampler, chains=spec.chains, warmup=spec.warmup, draws=draws, thin=spec.thin,
            seed=seed, chain_ids=range(spec.first_chain, spec.first_chain + spec.chains), params=spec.params,
            keep_warmup=spec.keep_warmup, problem=problem, resume=go_on, checkpoint=long_run.checkpoints,
            progress=None if progress is None else (
                lambda done, total: progress(f"{spec.sampler} on {os.path.basename(spec.target)}", done, total)),
        )  # fmt: skip

    def judge(chains: Chains) -> Any:
        return estimate_indicators(chains, None if exact is None else exact.marginals,
                                   thresholds=thresholds or Thresholds(), strict=strict, source=[output])  # fmt: skip

    t0 = time.perf_counter()
    run = sample(spec.draws, None if saved is None else (saved, previous))
    chains = to_chains(run)
    timings: dict[str, float] = {}
    looks: list[Look] = []
    estimates = judge(chains)
    if long_run.max_draws is not None:  # the density targets' rule: two successive passing looks, or --max-draws
        from mcmc.core.resume import sampler_resume  # start-up: only when a run goes on

        def passes(chains: Chains) -> bool:
            return estimates.report is not None and estimates.report.passed

        def extend(chains: Chains, draws: int) -> Chains:
            nonlocal run, estimates
            run = sample(draws, (sampler_resume(chains.resume, output, "network"), chains))  # type: ignore[arg-type]
            chains = to_chains(run)
            estimates = judge(chains)
            return chains

        chains, looks = until_converged(chains, passes, extend, long_run.max_draws, spec.thin,
                                        lambda c: _timed_write(c, output, stdout, timings), output)
    else:
        _timed_write(chains, output, stdout, timings)
    timings = {**run.timings, "wall_time_s": time.perf_counter() - t0, **timings}
    if long_run.checkpoints is not None:
        long_run.checkpoints.remove()
    network = network_summary(run, estimates, shown, queried=queried, exact=exact)
    report = estimates.report
    return SampleResult(
        chains, timings, estimates.summary, spec.seed is not None, output, network=network, report=report,
        advice=() if report is None or report.passed else (network_advice(report, chains.attrs),),
        looks=tuple(looks), max_draws=long_run.max_draws,
        resumed_from=long_run.resume, resumed_draws=0 if saved is None else saved.done,
    )  # fmt: skip


def mcem_run(
    model: str,
    settings: McemSettings,
    output: str | None = None,
    *,
    progress: Progress | None = None,
) -> McemResult:
    """``mcmc sample --target MODEL --mcem``: Monte Carlo EM on a latent-variable model, its result written.

    Checks the output before any work, loads the model
    (:func:`mcmc.core.targets.latent.load_latent_model`), runs
    :func:`mcmc.core.mcem.em.mcem` with the Monte Carlo standard error every
    command uses for a mean of MCMC draws (:func:`mcmc.diagnostics.stats.mcse_mean`)
    and writes the result to ``output`` (``.npz``, atomically) when given.

    Parameters
    ----------
    model
        A built-in latent-variable model or ``model.py[:name]``.
    settings
        The run; a ``seed`` of ``None`` is drawn from OS entropy (and recorded in the result).
    output
        The result file (``.npz``), or ``None`` for none.
    progress
        Told ``progress("MCEM", iterations_done, iterations)`` after every iteration.

    Raises
    ------
    UsageError
        An output that is not ``.npz``, that is the model file or cannot be
        written; a model name that is no latent-variable model; a bad setting.
    InputError
        A model file that does not follow the protocol (``docs/formats.md``), or fails when called.
    """
    # start-up: Monte Carlo EM loads the samplers and SciPy's optimiser only for an --mcem run
    from mcmc.core.mcem.em import mcem
    from mcmc.core.targets.latent import load_latent_model
    from mcmc.diagnostics.stats import mcse_mean

    model_file = model.split(":", 1)[0] if model.split(":", 1)[0].endswith(".py") else None
    check_paths({"-o": output}, [model_file])
    if output == "-" or (output is not None and not output.lower().endswith(".npz")):
        raise UsageError(f"-o {output}: --mcem writes its result as .npz (its trace is printed on stdout); "
                         "give a name ending in .npz")  # fmt: skip
    result = mcem(load_latent_model(model), settings, mean_se=mcse_mean, progress=progress)
    if output is not None:
        result.write(output)
    return result
