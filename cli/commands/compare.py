"""The calls of ``mcmc compare``: a run against a run or reference draws, and samplers head to head.

* :func:`compare_runs` (``mcmc compare A B``, ``mcmc compare RUN --reference
  REF``) reads both sides and puts them side by side with
  :func:`mcmc.diagnostics.report.compare.compare_draws` (the z-test of every
  shared parameter).
* :func:`compare_samplers` (``mcmc compare --target T --samplers A,B``) runs
  each sampler on the target with the same seed and tabulates each run with
  :func:`mcmc.diagnostics.report.samplers.sampler_row`; on a Bayesian network
  (``NET.bif``) :func:`compare_network_samplers` runs the network samplers.

Each checks its outputs against its inputs and its settings against their
ranges before any work, and returns one result object; nothing here prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, BinaryIO

import numpy as np

from mcmc.cli.commands.files import piped_stdin
from mcmc.cli.commands.progress import Progress, for_label
from mcmc.core.chains import Chains
from mcmc.core.errors import InputError, UsageError
from mcmc.core.paths import check_paths
from mcmc.core.random import ChainRandom, entropy_seed
from mcmc.core.ranges import check_settings
from mcmc.core.targets import is_network_target
from mcmc.diagnostics.readers import read_chains
from mcmc.diagnostics.report.check import is_weighted
from mcmc.diagnostics.report.compare import DEFAULT_MAX_Z, Comparison, compare_draws
from mcmc.diagnostics.report.samplers import (
    SamplerComparison,
    best_by_column,
    network_sampler_row,
    off_truth,
    sampler_row,
    samplers_verdict,
)
from mcmc.diagnostics.report.thresholds import Thresholds

__all__ = ["compare_network_samplers", "compare_runs", "compare_samplers", "read_reference"]


# --------------------------------------------------------------------------- run against run


def read_reference(path: str, *, layout: str | None = None) -> Chains:
    """Reference draws: posteriordb JSON (``.json``) or any other chains file (:func:`read_chains`).

    ``layout`` is the axis order of a bare array (see :func:`read_chains`).
    """
    return read_chains([path], layout=layout)


def compare_runs(
    files: Sequence[str],
    reference: str | None = None,
    *,
    max_z: float = DEFAULT_MAX_Z,
    check_sd: bool = False,
    var: Sequence[str] | None = None,
    outputs: Mapping[str, str | None] | None = None,
    stdin: BinaryIO | None = None,
    layout: str | None = None,
) -> Comparison:
    """The one call of ``mcmc compare A B`` and ``mcmc compare RUN --reference REF``.

    Checks the outputs against the inputs and ``max_z`` before any work, reads
    ``files[0]`` and either ``files[1]`` or the reference
    (:func:`read_reference`), and compares them (:func:`compare_draws`),
    noting the Bonferroni threshold when it exceeds ``max_z``.

    Parameters
    ----------
    files
        One source (with ``reference``) or two; each any chains file
        :func:`~mcmc.diagnostics.readers.read_chains` reads, or a quoted glob;
        at most one ``"-"``, read from ``stdin``.
    outputs
        Option -> path of every output the caller will write (checked first).
    layout
        Axis order of bare arrays (``"chain,draw"`` or ``"draw,chain"``; see
        :func:`~mcmc.diagnostics.readers.read_chains`).
    """
    check_paths(outputs or {}, [*files, reference])
    check_settings({"max_z": max_z})
    if files.count("-") > 1:
        raise UsageError("only one source can be standard input (-)")
    stdin = piped_stdin(files, stdin)

    def read(src: str) -> tuple[Chains, list[str]]:
        run = read_chains([src], stdin=stdin if src == "-" else None, layout=layout)
        if is_weighted(run):
            # The z-test compares chains' means with their MCSE; weighted draws' estimates are self-normalised.
            raise InputError(src, "holds weighted draws (importance sampling, likelihood weighting): compare "
                             "reads equally weighted chains; mcmc diagnose judges weighted draws and gives their "
                             "self-normalised means and MCSE")  # fmt: skip
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
    return replace(result, notes=tuple(notes), mode="reference" if reference is not None else "runs")


# --------------------------------------------------------------------------- samplers head to head


def _sampler_names(samplers: Sequence[str], known: Sequence[str], unknown: str) -> list[str]:
    """``samplers`` as a list, refusing none, an unknown one (``unknown`` says why) or one listed twice.

    An item may be a variant of a sampler, ``NAME:KEY=VALUE`` (its settings in ``params`` under that label).
    """
    names = list(samplers)
    if not names:
        raise UsageError("--samplers needs at least one sampler name")
    for name in names:
        if name.split(":", 1)[0] not in known:
            raise UsageError(unknown.format(name=name.split(":", 1)[0], known=", ".join(known)))
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--samplers: {', '.join(twice)} listed more than once")
    return names


def compare_samplers(
    target: str,
    samplers: Sequence[str],
    *,
    target_options: Mapping[str, Any] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    seed: int | None = None,
    grad_cost: float = 1.0,
    max_z: float = DEFAULT_MAX_Z,
    check_sd: bool = False,
    outputs: Mapping[str, str | None] | None = None,
    progress: Progress | None = None,
    observe: Sequence[str] = (),
    thresholds: Thresholds | None = None,
    strict: bool = False,
    judge_draws: bool = True,
) -> SamplerComparison:
    """The one call of ``mcmc compare --target T --samplers A,B``: run each sampler on the target, tabulate.

    Every sampler runs with the same seed (``None``: one from OS entropy,
    recorded in the result). Before any sampling: the outputs are checked
    against the inputs (a user target file, a ``data`` file), the settings
    against their ranges, and each sampler is initialised once on the target,
    so one that cannot run there (hmc without a gradient) is refused at once.

    Parameters
    ----------
    target
        A registered target name or a user file ``model.py[:name]``
        (:func:`mcmc.core.targets.get_target`).
    samplers
        Registered sampler names (:data:`mcmc.core.samplers.SAMPLERS`), or
        variants of them, ``NAME:KEY=VALUE`` (``gibbs:scan=random``: its
        settings in ``params`` under that label), each once: a row each.
    target_options
        Keyword options of the target (``dim``, ``rho``, ``data``, ...).
    params
        Sampler name (or variant's label) -> keyword tuning of its kernel.
    progress
        Told ``progress("NAME on TARGET", done, total)`` while each sampler runs.
    observe
        Evidence ``NODE=STATE`` items (or comma lists) of a Bayesian network
        target ``NET.bif``, which :func:`compare_network_samplers` compares
        (its samplers: gibbs, rejection, likelihood-weighting).
    thresholds, strict
        The limits of the checks each sampler's draws are judged by, as
        ``mcmc diagnose`` would judge them (its defaults when ``None``).
    judge_draws
        A sampler whose draws fail the checks fails the comparison (the
        default); false: only reported.
    """
    if is_network_target(target):
        if any(v is not None for v in (target_options or {}).values()):
            raise UsageError("target options do not apply to a Bayesian network target")
        if check_sd:
            raise UsageError("--check-sd does not apply to a Bayesian network target (its parameters are indicators)")
        return compare_network_samplers(
            target, samplers, observe=observe, chains=chains, warmup=warmup, draws=draws, seed=seed, max_z=max_z,
            outputs=outputs, progress=progress, thresholds=thresholds, strict=strict, judge_draws=judge_draws,
            params=params,
        )  # fmt: skip
    if observe:
        raise UsageError("--observe applies to a Bayesian network target (--target NET.bif)")
    # start-up: the driver and the targets' registry (about 10 ms), only when samplers run, not for compare A B
    from mcmc.core.samplers import SAMPLERS, get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import get_target, is_user_target

    options = dict(target_options or {})
    user_file = target.split(":", 1)[0] if is_user_target(target) else None
    data = options.get("data")
    check_paths(outputs or {}, [user_file, data if isinstance(data, str) else None])
    check_settings({"grad_cost": grad_cost, "max_z": max_z})
    names = _sampler_names(samplers, list(SAMPLERS), "--samplers: unknown sampler {name!r}; choose from {known}")
    tuning = {name: dict((params or {}).get(name, {})) for name in names}
    tgt = get_target(target, **options)
    kernels = {name: get_sampler(name.split(":", 1)[0]) for name in names}
    probe = tgt.initial(ChainRandom(0, (0,)), 1)
    for name, kernel in kernels.items():
        kernel.init(probe, tgt)
        prepare = getattr(kernel, "prepare", None)  # a sampler whose settings name a file reads it now, not mid-run
        if prepare is not None:
            prepare(tgt, **tuning[name])
    seed_given = seed is not None
    if seed is None:
        seed = entropy_seed()

    rows = []
    for name, kernel in kernels.items():
        result, timings = run(
            kernel, tgt, chains=chains, warmup=warmup, draws=draws, seed=seed, params=tuning[name],
            progress=for_label(progress, f"{name} on {tgt.name}"),
        )  # fmt: skip
        row = sampler_row(result, truth_mean=tgt.mean, truth_sd=tgt.sd, grad_cost=grad_cost, timings=timings,
                          thresholds=thresholds, strict=strict)  # fmt: skip
        rows.append(replace(row, sampler=name))  # a variant's row is labelled as given (gibbs:scan=random)

    passed, verdict = samplers_verdict(rows, max_z, check_sd, judge_draws)
    bad, bad_sd = off_truth(rows, max_z, check_sd)
    return SamplerComparison(
        target=tgt.name, target_options={k: v for k, v in tgt.options.items() if v is not None}, dim=tgt.dim,
        exact_moments=tgt.mean is not None, chains=chains, warmup=warmup, draws=draws, seed=seed,
        seed_given=seed_given, grad_cost=grad_cost, params=tuning, max_z=max_z, check_sd=check_sd,
        rows=tuple(rows), passed=passed, verdict_line=verdict, best=best_by_column(rows),
        mean_off=tuple(r.sampler for r in bad), sd_off=tuple(r.sampler for r in bad_sd),
    )  # fmt: skip


def compare_network_samplers(
    target: str,
    samplers: Sequence[str],
    *,
    observe: Sequence[str] = (),
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    seed: int | None = None,
    max_z: float = 4.0,
    outputs: Mapping[str, str | None] | None = None,
    progress: Progress | None = None,
    thresholds: Thresholds | None = None,
    strict: bool = False,
    judge_draws: bool = True,
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> SamplerComparison:
    """``mcmc compare --target NET.bif -s gibbs,likelihood-weighting,rejection``: the network samplers head to head.

    Each sampler runs on the same evidence with the same seed. A row's ESS is
    the smallest over every state indicator ``NODE[STATE]`` of ``min(bulk,
    tail)`` (for likelihood weighting the Kish ESS of the weights); ESS per
    second is over the sampling phase (gibbs's warm-up excluded, as for every
    sampler in ``compare``). An "evaluation" is one pass over the network: a
    Gibbs sweep or one forward sample (rejection counts the rejected ones).
    Where the junction tree (or variable elimination) gives the exact
    marginals, each row has the worst ``|estimate - exact| / MCSE``. The rows come ranked by ESS per
    second, best first, and a note spells the ranking out. ``progress`` is
    told ``progress("NAME on NETWORK", 0, 1)`` and then ``1, 1`` around each run.
    ``params`` gives a sampler its settings (gibbs: ``blocks``, ``budget``, ``scan``).

    Raises
    ------
    InputError
        An unreadable BIF file, bad evidence (unknown node or state, probability zero).
    UsageError
        A sampler that does not sample networks, or one listed twice; an output that is the input.
    """
    # start-up: the network samplers load numba (0.4 s), and the network's report the readers, only for a network
    from mcmc.core.networks.bif import read_bif
    from mcmc.core.networks.driver import sample_network, to_chains
    from mcmc.core.networks.evidence import format_evidence, parse_evidence, require_unobserved
    from mcmc.core.networks.exact import posterior_marginals
    from mcmc.core.networks.junction_tree import CliqueBudgetError
    from mcmc.core.samplers import NETWORK_SAMPLERS
    from mcmc.diagnostics.report.network import estimate_indicators

    check_paths(outputs or {}, [target])
    check_settings({"max_z": max_z})
    names = _sampler_names(
        samplers, list(NETWORK_SAMPLERS), "--samplers: {name!r} does not sample a Bayesian network; use {known}"
    )
    net = read_bif(target)
    evidence = parse_evidence(net, list(observe))
    require_unobserved(net, evidence)
    notes = []
    try:
        exact: dict[str, np.ndarray] | None = posterior_marginals(net, evidence).marginals
    except CliqueBudgetError as exc:  # too wide for exact inference: compare without the exact check
        exact = None
        notes.append(f"no exact marginals: {exc}")
    seed_given = seed is not None
    if seed is None:
        seed = entropy_seed()

    rows = []
    n_indicators = 0
    for name in names:
        label = f"{name} on {net.name}"
        if progress is not None:
            progress(label, 0, 1)
        # a variant (gibbs:scan=random) runs its sampler with its settings; its row keeps the label
        run = sample_network(net, evidence, name.split(":", 1)[0], chains=chains, warmup=warmup, draws=draws,
                             seed=seed, params=(params or {}).get(name))  # fmt: skip
        if progress is not None:
            progress(label, 1, 1)
        if run.warnings:
            notes.append(f"{name}: {len(run.warnings)} deterministic table(s) can freeze single-site Gibbs "
                         "(mcmc sample names the nodes); judge it by R-hat")  # fmt: skip
        est = estimate_indicators(to_chains(run), exact, thresholds=thresholds or Thresholds(), strict=strict)
        n_indicators = len(est.nodes)
        n_chains = run.codes.shape[0]
        if "n_evals" in run.sample_stats:  # rejection: every proposal was a pass over the network
            sampling = int(np.sum(run.sample_stats["n_evals"]))
        else:
            sampling = n_chains * draws * int(run.attrs.get("thin", 1))
        warm = n_chains * int(run.attrs.get("warmup", 0))
        rows.append(network_sampler_row(name, est, sampling, warm, run.timings))
    rows.sort(key=lambda r: -(r.ess_per_s if r.ess_per_s is not None else -np.inf))
    ranking = " > ".join(f"{r.sampler} {r.ess_per_s:,.0f}" for r in rows if r.ess_per_s is not None)
    notes.insert(0, f"ranked by ESS per second (the smallest over the {n_indicators} state indicators): {ranking}")
    notes.append("an evaluation is one pass over the network: a Gibbs sweep or one forward sample (rejection "
                 "counts the rejected ones); warm-up applies to gibbs only")  # fmt: skip
    if any(name.split(":", 1)[0] == "likelihood-weighting" for name in names):
        notes.append("likelihood-weighting's ESS is the Kish ESS of its weights; it has no R-hat")
    passed, verdict = samplers_verdict(rows, max_z, judge_draws=judge_draws)
    bad, _ = off_truth(rows, max_z)
    observed = format_evidence(net, evidence)
    return SamplerComparison(
        target=target, target_options={"observe": observed} if observed else {}, dim=n_indicators,
        exact_moments=exact is not None, chains=chains, warmup=warmup, draws=draws, seed=seed,
        seed_given=seed_given, grad_cost=1.0, params={name: dict((params or {}).get(name, {})) for name in names},
        max_z=max_z, check_sd=False,
        rows=tuple(rows), passed=passed, verdict_line=verdict, best=best_by_column(rows),
        mean_off=tuple(r.sampler for r in bad), sd_off=(), notes=tuple(notes),
    )  # fmt: skip
