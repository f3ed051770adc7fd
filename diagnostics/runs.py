"""The run functions of the command line: sample (or fit) and judge in one call.

``core`` samples and never imports ``diagnostics``; a command that samples
and then reports whether the run converged needs both, so its one library call
lives here. :func:`sample_run` is ``mcmc sample``: it checks the outputs and
the starting point before any work, builds the target, runs the driver, writes
the chains file through :func:`mcmc.core.chains.write_chains` and returns the
chains, their timings and the :class:`~mcmc.diagnostics.summary.RunSummary`.
On a Bayesian network file (``NET.bif``) it hands over to :func:`network_run`,
whose result also carries the marginals (:mod:`mcmc.diagnostics.network`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mcmc.core.chains import CHAINS_SUFFIXES, Chains, write_chains
from mcmc.core.errors import UsageError
from mcmc.diagnostics.report import Report, Thresholds
from mcmc.diagnostics.summary import RunSummary

__all__ = ["SampleResult", "SampleSpec", "sample_run"]


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
    sampler: str = "hmc"
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
        :class:`~mcmc.diagnostics.predictive.PredictiveReport` (quantities to
        judge, test scores, where the predictions went); else ``None``.
    network
        For a Bayesian network target: the
        :class:`~mcmc.diagnostics.network.NetworkSummary` (marginals with
        MCSE, exact values when asked, warnings); ``summary`` is then over the
        state indicators ``NODE[STATE]``. Else ``None``.
    markov
        For a transition matrix target (``P.csv``): the
        :class:`~mcmc.diagnostics.markov.MarkovReport` (the exact stationary
        law both ways, classes, periods, detailed balance, spectral gap, and
        the simulated state frequencies with MCSE). Else ``None``.
    report
        The report :func:`mcmc.diagnostics.check.check` makes of the draws as
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
    predictive: Any = None
    network: Any = None
    markov: Any = None
    report: Report | None = None
    advice: tuple[str, ...] = ()

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
            shown = self.output != "-" and self.report.kind != "weighted"  # diagnose reads no weighted draws yet
            line += f": mcmc diagnose {self.output} shows every parameter)" if shown else ")"
        return line

    def to_dict(self) -> dict[str, Any]:
        """The run as a JSON document: attributes, timings, the run summary and the network part when there is one."""
        from dataclasses import asdict

        summary = None if self.summary is None else asdict(self.summary)
        return {
            "schema": "mcmc.sample/1", "output": self.output, "seed_given": self.seed_given,
            "attrs": dict(self.chains.attrs), "timings": dict(self.timings), "summary": summary,
            "passed": self.passed, "verdict": self.verdict(), "advice": self.advice,
            "network": None if self.network is None else self.network.to_dict(),
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
    progress: Callable[[str, int, int], None] | None = None,
    predict: str | None = None,
    predictions: str | None = None,
    plot: str | None = None,
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
        :func:`mcmc.diagnostics.check.check`'s, the one judge of every command.
    progress
        Called as ``progress(label, done, total)`` during the run.
    predict, predictions, plot
        ``bnn``: test inputs to predict at, where to write the predictions CSV,
        and the plot the caller will draw (checked with the other outputs;
        the predictive on a grid is computed for it).

    Raises
    ------
    UsageError
        An output that is an input or that cannot be written, an output
        format other than npz or nc, an ``init`` of the wrong length, a
        target option the target does not take; with ``scheduler``, no
        scheduler answering or distributed not installed.
    ScaleOutError
        With ``scheduler``, workers that kept dying.

    With ``spec.scheduler`` the chains run as blocks on a Dask cluster
    (:mod:`mcmc.core.scaleout`) and the file is the same, byte for byte.
    """
    from mcmc.core import scaleout
    from mcmc.core.paths import check_paths
    from mcmc.core.random import entropy_seed
    from mcmc.core.samplers import NETWORK_SAMPLERS, SAMPLERS
    from mcmc.core.targets import get_target, is_network_target, is_transition_matrix, is_user_target
    from mcmc.core.targets.user import read_source

    if is_network_target(spec.target):
        if predict or predictions or plot:
            raise UsageError("--predict, --predictions and --plot apply to the bnn target, not to a Bayesian network")
        return network_run(spec, output, stdout=stdout, thresholds=thresholds, strict=strict)
    if spec.observe or spec.query or spec.exact:
        raise UsageError("--observe, --query and --exact apply to a Bayesian network target (--target NET.bif)")
    if spec.sampler not in SAMPLERS:
        kind = "a Bayesian network target (--target NET.bif)" if spec.sampler in NETWORK_SAMPLERS else "no target"
        raise UsageError(f"--sampler {spec.sampler} applies to {kind}")
    data = spec.target_options.get("data")
    user_file = spec.target.split(":", 1)[0] if is_user_target(spec.target) else None
    check_paths(
        {"-o": output, "--predictions": predictions, "--plot": plot},
        [data if isinstance(data, str) else None, user_file, predict,
         spec.target if is_transition_matrix(spec.target) else None],
    )  # fmt: skip
    _check_output(output)
    ids = range(spec.first_chain, spec.first_chain + spec.chains)
    # Built here too (a bad option fails before any work, and the predictive
    # needs it), except a user file bound for a cluster: the workers load it.
    remote_file = user_file is not None and spec.scheduler is not None
    tgt = None if remote_file else get_target(spec.target, **spec.target_options)
    if remote_file and (predict or predictions or plot):
        raise UsageError("--predict, --predictions and --plot need the target here; run them without --scheduler")
    job = scaleout.ChainsJob(
        target=spec.target, sampler=spec.sampler, warmup=spec.warmup, draws=spec.draws, thin=spec.thin,
        # Every block of a run given no seed must share the one recorded in the file.
        seed=entropy_seed() if spec.seed is None and spec.scheduler is not None else spec.seed,  # type: ignore[arg-type]
        init=spec.init, target_options=dict(spec.target_options), params=dict(spec.params),
    )  # fmt: skip
    if spec.scheduler is None:
        chains, run_timings = scaleout.run_block(job, ids, progress)
    else:
        if user_file is not None:
            # Its source, not its path: the workers need not see this machine's files,
            # nor import it here (it may need what only the workers have).
            job = dataclasses.replace(job, target_text=read_source(spec.target))
        chains, run_timings = scaleout.run_blocks(job, ids, spec.scheduler, progress=progress)
    # Timings come beside the chains, never in the file (same seed, same bytes).
    timings = dict(run_timings._asdict())
    t0 = time.perf_counter()
    _write(chains, output, stdout)
    from mcmc.diagnostics.predictive import predictive_report

    predictive = None
    if tgt is not None:
        predictive = predictive_report(chains, tgt, test=predict, predictions=predictions, curve=plot is not None)
    markov = None
    from mcmc.core.targets.protocols import TransitionKernel

    if isinstance(tgt, TransitionKernel):
        from mcmc.diagnostics.markov import markov_report

        markov = markov_report(chains, tgt.analysis, spec.target)
    timings["write_time_s"] = time.perf_counter() - t0
    from mcmc.diagnostics.check import check

    report = check(chains, thresholds=thresholds or Thresholds(), strict=strict, source=[output])
    summary = RunSummary.from_report(report, chains)
    return SampleResult(
        chains, timings, summary, spec.seed is not None, output, predictive, markov=markov, report=report,
        advice=failed_advice(report),
    )  # fmt: skip


def failed_advice(report: Report) -> tuple[str, ...]:
    """The advice of every check that fails ``report`` (each once, in the checks' order)."""
    failing = [c for c in report.checks if not c.passed and (c.severity == "error" or report.strict)]
    return tuple(dict.fromkeys(c.advice for c in failing if c.advice))


def _stdout(stream: IO[bytes] | None) -> IO[bytes]:
    if stream is None:
        raise UsageError("-o -: no standard output to write to")
    return stream


def _check_output(output: str) -> None:
    if output != "-" and Path(output).suffix.lower() not in CHAINS_SUFFIXES:
        raise UsageError(
            f"{output}: unknown output format {Path(output).suffix or '(none)'!r}; use .npz or .nc (or - for stdout)"
        )


def _write(chains: Chains, output: str, stdout: IO[bytes] | None) -> None:
    if output == "-":
        stream = _stdout(stdout)
        write_chains(chains, stream)
        stream.flush()
    else:
        write_chains(chains, output)


def network_run(
    spec: SampleSpec,
    output: str,
    *,
    stdout: IO[bytes] | None = None,
    thresholds: Thresholds | None = None,
    strict: bool = False,
) -> SampleResult:
    """``mcmc sample --target NET.bif``: sample a Bayesian network given evidence, write the chains, summarise.

    Reads the BIF file (:func:`mcmc.core.targets.bif.read_bif`), parses
    ``spec.observe`` and ``spec.query`` against it and, with ``spec.exact``,
    computes the exact marginals by variable elimination, all before sampling;
    then :func:`mcmc.core.samplers.network_driver.sample_network` runs
    ``spec.sampler`` (gibbs, rejection or likelihood-weighting) and the chains
    file is written from :func:`~mcmc.core.samplers.network_driver.to_chains`.

    Returns
    -------
    SampleResult
        ``summary`` over every state indicator ``NODE[STATE]`` (for likelihood
        weighting no R-hat and the Kish ESS of the weights) and ``network``,
        the :class:`~mcmc.diagnostics.network.NetworkSummary`.

    Raises
    ------
    InputError
        An unreadable BIF file; an unknown node or state in ``observe`` or
        ``query`` (the message lists the valid ones); evidence of probability
        zero; a queried node that is observed.
    UsageError
        A sampler that does not sample networks; a target option, ``--init``
        or tuning option (none applies); an output that is the input.
    """
    from mcmc.core.paths import check_paths
    from mcmc.core.samplers import NETWORK_SAMPLERS
    from mcmc.core.samplers.network_driver import sample_network, to_chains
    from mcmc.core.targets.bayesnet import parse_evidence
    from mcmc.core.targets.bif import read_bif
    from mcmc.core.targets.variable_elimination import marginals
    from mcmc.diagnostics.network import estimate_indicators, network_advice, network_summary, query_nodes

    if spec.sampler not in NETWORK_SAMPLERS:
        raise UsageError(
            f"--sampler {spec.sampler} does not sample a Bayesian network; use {', '.join(NETWORK_SAMPLERS)}"
        )
    given = sorted(k for k, v in spec.target_options.items() if v is not None)
    if given:
        raise UsageError(f"option(s) {', '.join(given)} do not apply to a Bayesian network target")
    if spec.init is not None or spec.params:
        raise UsageError("--init and sampler tuning options do not apply to a Bayesian network target")
    check_paths({"-o": output}, [spec.target])
    _check_output(output)
    net = read_bif(spec.target)
    evidence = parse_evidence(net, list(spec.observe))
    shown, queried = query_nodes(net, evidence, spec.query)
    exact = None
    if spec.exact:
        exact = dict(zip(net.nodes, marginals(net, evidence), strict=True))  # refuses impossible evidence too
    t0 = time.perf_counter()
    run = sample_network(
        net, evidence, spec.sampler, chains=spec.chains, warmup=spec.warmup, draws=spec.draws, thin=spec.thin,
        seed=spec.seed, chain_ids=range(spec.first_chain, spec.first_chain + spec.chains),
    )  # fmt: skip
    timings = {**run.timings, "wall_time_s": time.perf_counter() - t0}
    chains = to_chains(run)
    t0 = time.perf_counter()
    _write(chains, output, stdout)
    timings["write_time_s"] = time.perf_counter() - t0
    estimates = estimate_indicators(chains, exact, thresholds=thresholds or Thresholds(), strict=strict,
                                    source=[output])  # fmt: skip
    network = network_summary(run, estimates, shown, queried=queried)
    report = estimates.report
    return SampleResult(
        chains, timings, estimates.summary, spec.seed is not None, output, network=network, report=report,
        advice=() if report is None or report.passed else (network_advice(report, spec.sampler),),
    )  # fmt: skip




# --------------------------------------------------------------------------- mcmc lda


@dataclass(frozen=True)
class LdaOutputs:
    """Where ``mcmc lda`` writes: the chains file (``-``: npz on stdout), the estimates, the saved model."""

    chains: str | None = None
    estimates: str | None = None
    model: str | None = None
    plot: str | None = None  # drawn by the caller from the result; checked here with the others


@dataclass(frozen=True)
class LdaResult:
    """A finished ``mcmc lda`` fit: the run, its report (schema ``mcmc.lda/1``) and its verdict.

    Attributes
    ----------
    run
        The :class:`~mcmc.core.lda.pipeline.LdaRun` (trace, estimates, scores).
    report
        The JSON-ready summary every output format renders
        (:func:`mcmc.core.lda.report.fit_report`), whose ``convergence`` is
        the topic-model verdict with the matched topics' overlap.
    all_chains
        Show every chain's topics (``--all-chains``), not only chain 0's.
    checks
        The diagnose report of the chains as written: the one verdict, the
        one ``mcmc diagnose`` gives of the chains file
        (:func:`mcmc.diagnostics.check.check_topic_model`).
    """

    run: Any
    report: dict[str, Any]
    all_chains: bool = False
    checks: Report | None = None

    @property
    def passed(self) -> bool:
        return self.checks is None or self.checks.passed

    def verdict(self) -> str:
        return "" if self.checks is None else self.checks.verdict()

    @property
    def shown_chains(self) -> range:
        return range(len(self.report["chains"])) if self.all_chains else range(1)

    def to_dict(self) -> dict[str, Any]:
        return self.report

    def to_table(self) -> tuple[list[str], list[list[Any]]]:
        """One row per top word of every topic of the shown chains.

        A topic's own scores, when the run made them (learned ``alpha``,
        ``umass``/``npmi``/``cv`` coherence, ``true_topic``/``hellinger`` on a
        synthetic corpus), are columns repeated on each of its word rows, so a
        ``csv`` reader can filter by them without regrouping.
        """
        first = self.report["chains"][0]["topics"][0]
        scores = [k for k in ("alpha", "umass", "npmi", "cv", "true_topic", "hellinger") if k in first]
        rows = []
        for c in self.shown_chains:
            for t in self.report["chains"][c]["topics"]:
                own = [t[k] for k in scores]
                for rank, (word, p) in enumerate(zip(t["words"], t["probabilities"], strict=True)):
                    rows.append([c, t["topic"], t["share"], *own, rank + 1, word, p])
        return ["chain", "topic", "share", *scores, "rank", "word", "probability"], rows


def check_lda(config: Any, outputs: LdaOutputs, inputs: list[str | None]) -> None:
    """Refuse, before the corpus is read, options that do not fit and outputs that are inputs or unwritable."""
    from mcmc.core.paths import check_paths

    if not 0 <= config.burn_in < config.iterations:
        raise UsageError(
            f"--burn-in must be in 0 .. --iterations - 1 = {config.iterations - 1}, got {config.burn_in}"
        )

    check_paths(
        {"-o": outputs.chains, "--estimates": outputs.estimates, "--plot": outputs.plot,
         "--save-model": outputs.model},
        inputs,
    )  # fmt: skip
    if outputs.estimates is not None and not config.keep_theta:
        raise UsageError("--estimates writes theta: the configuration must keep it (LdaConfig.keep_theta)")
    for option, name in (("--estimates", outputs.estimates), ("--save-model", outputs.model)):
        if name is not None and not name.lower().endswith(".npz"):
            raise UsageError(f"{name}: {option} writes .npz; give a name ending in .npz")
    if outputs.chains not in (None, "-") and Path(outputs.chains).suffix.lower() not in CHAINS_SUFFIXES:
        raise UsageError(f"{outputs.chains}: unknown chains file format; use .npz or .nc")


def lda_run(
    data: Any,
    config: Any,
    outputs: LdaOutputs,
    *,
    thresholds: Thresholds | None = None,
    strict: bool = False,
    all_chains: bool = False,
    stdout: IO[bytes] | None = None,
    callback: Callable[[int, int, float], None] | None = None,
    scheduler: str | None = None,
) -> LdaResult:
    """Fit ``config`` on ``data``, write the outputs and judge the chains: the one call of ``mcmc lda``.

    Parameters
    ----------
    data
        The corpus (:func:`mcmc.core.lda.pipeline.load_input`); the caller
        checks options and outputs against the inputs before reading it
        (:func:`check_lda`).
    config
        The :class:`~mcmc.core.lda.config.LdaConfig` of the run.
    outputs
        Files to write; the chains file and the estimates hold the post-burn-in
        and the full trace respectively (docs/formats.md).
    thresholds, strict
        The limits of the checks (``max_ll_gap`` is the topic models' own;
        ``diagnose``'s defaults when ``None``): the chains are judged as
        ``mcmc diagnose`` judges the chains file, each chain for a remaining
        trend and the chains against each other as modes
        (:func:`mcmc.diagnostics.check.check_topic_model`).
    callback
        ``callback(chain, iteration, log_joint_per_token)`` after every sweep.
    scheduler
        A Dask scheduler (``tcp://HOST:PORT`` or ``local:N``): chains run as
        tasks on its workers, same bytes as here (:mod:`mcmc.core.scaleout`).
    """
    from mcmc.core.lda.pipeline import fit_lda
    from mcmc.core.lda.report import fit_report
    from mcmc.diagnostics.check import check
    from mcmc.diagnostics.lda_gate import topic_agreement

    check_lda(config, outputs, [])
    run = fit_lda(data, config, callback=callback, scheduler=scheduler)
    chains_file = run.to_chains()
    if outputs.chains is not None:
        if outputs.chains == "-":
            stream = _stdout(stdout)
            write_chains(chains_file, stream)
            stream.flush()
        else:
            write_chains(chains_file, outputs.chains)  # .npz or .nc, by the name
    if outputs.estimates is not None:
        run.write_estimates(outputs.estimates)
    if outputs.model is not None:
        from mcmc.core.lda.model import model_of

        model_of(run).save(outputs.model)
    fit = run.fit
    source = outputs.chains if outputs.chains not in (None, "-") else run.source
    checks = check(chains_file, thresholds=thresholds or Thresholds(), strict=strict, source=[source])
    # How far the chains' topics agree: reported, never judged (so lda and diagnose give one verdict).
    agreement = topic_agreement(fit.phi) if fit.chains > 1 else None
    lj = next(p for p in checks.parameters if p.name == "log_joint_per_token")
    convergence = {
        **(checks.topic_model.to_dict() if checks.topic_model is not None else {}),
        "passed": checks.passed, "verdict": checks.verdict(),
        "topic_overlap": None if agreement is None else agreement.overlap,
        "topic_hellinger": None if agreement is None else agreement.hellinger,
    }  # fmt: skip
    report = fit_report(fit, run.train, run.source, run.top, run.shares, run.umass, run.npmi, run.cv,
                        run.recoveries, run.completion, config.holdout, rhat=lj.rhat, ess=lj.ess_bulk,
                        convergence=convergence)  # fmt: skip
    return LdaResult(run, report, all_chains, checks)
