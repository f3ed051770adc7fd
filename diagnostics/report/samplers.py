"""Samplers head to head on one target: cost, convergence, efficiency and error against the truth.

This layer computes; it never prints, and it runs no sampler: the command
``mcmc compare --samplers`` runs them (:func:`mcmc.cli.commands.compare.compare_samplers`)
and judges each run here.

**Which sampler is most efficient on this target?** :func:`sampler_row`
summarises one run of :func:`mcmc.core.samplers.driver.run` -- cost (wall
time and evaluation counts from the run's attributes), convergence (max
R-hat, min bulk and tail ESS), efficiency (ESS per second and per 1000
evaluations of the sampling phase) and, where the target knows its exact
moments, the worst standardized error ``|mean - truth| / MCSE``.

Runs are judged with the rank-normalized R-hat and ESS of Vehtari, Gelman,
Simpson, Carpenter & Bürkner (2021), Bayesian Analysis 16(2); the standardized
error ``|mean - truth| / MCSE`` and its threshold :data:`~mcmc.diagnostics.report.compare.DEFAULT_MAX_Z`
are those of :mod:`mcmc.diagnostics.report.compare`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.diagnostics import stats
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.compare import DEFAULT_MAX_Z, SCHEMA
from mcmc.diagnostics.report.selection import flat_draws
from mcmc.diagnostics.report.summary import RunSummary
from mcmc.diagnostics.report.thresholds import Thresholds

if TYPE_CHECKING:  # start-up: types only; the runs that are tabulated have loaded their modules
    from mcmc.core.samplers.driver import Timings
    from mcmc.diagnostics.report.network import IndicatorEstimates


@dataclass(frozen=True)
class SamplerRow:
    """Cost, convergence and efficiency of one sampler's run on a target.

    ``summary`` is the run's :class:`~mcmc.diagnostics.report.summary.RunSummary`
    (max R-hat, min bulk and tail ESS, acceptance, divergences, each with
    where it occurs and whether it passes).

    Costs: ``n_density_evals`` and ``n_gradient_evals`` count, over all
    chains, warm-up included, each chain row evaluated (a fused value-and-
    gradient call counts one of each). ``cost`` is ``n_density_evals +
    grad_cost * n_gradient_evals``: a gradient counted as ``grad_cost``
    density evaluations (1 by default; reverse-mode differentiation costs a
    small constant multiple of the density, typically 1-4). Efficiency is that
    of the tuned kernel: the worst ESS over coordinates, ``min(bulk, tail)``,
    divided by the *sampling-phase* time and cost (warm-up length is the same
    user choice for every sampler, and its cost is shown in the totals).

    ``mean_z_max`` is ``max_i |mean_i - truth_i| / MCSE_i`` over the reported
    coordinates when the target knows its exact means, ``sd_z_max`` the same
    for the standard deviations with :func:`mcmc.diagnostics.stats.mcse_sd`;
    ``None`` when unknown. ``ess_per_1k_grads`` is the worst ESS per 1000
    gradient evaluations of the sampling phase (``None`` for a sampler that
    takes none): the cost measure of gradient-based samplers whatever a
    gradient costs. ``acf1_max`` and ``iat_max`` are the largest lag-1
    autocorrelation and integrated autocorrelation time (in draws) over the
    coordinates, with where: how correlated successive draws are, what ESS
    divides by (two scans of Gibbs, a fixed path of HMC against a jittered
    one). Fields that do not apply are ``None`` (weighted draws have no
    autocorrelation).
    :meth:`to_dict` is the flat JSON record (the summary's fields beside the row's).
    """

    sampler: str
    summary: RunSummary
    wall_time_s: float | None
    warmup_time_s: float | None
    sampling_time_s: float | None
    n_density_evals: int
    n_gradient_evals: int
    n_density_evals_warmup: int
    n_gradient_evals_warmup: int
    cost: float
    sampling_cost: float
    ess_min: float | None
    ess_per_s: float | None
    ess_per_1k_evals: float | None
    mean_z_max: float | None
    mean_z_argmax: str | None
    sd_z_max: float | None
    sd_z_argmax: str | None
    ess_per_1k_grads: float | None = None
    acf1_max: float | None = None
    acf1_argmax: str | None = None
    iat_max: float | None = None
    iat_argmax: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row as one flat record, in the column order of ``mcmc compare --format csv``."""
        s = self.summary
        return {
            "sampler": self.sampler, "wall_time_s": self.wall_time_s, "warmup_time_s": self.warmup_time_s,
            "sampling_time_s": self.sampling_time_s, "n_density_evals": self.n_density_evals,
            "n_gradient_evals": self.n_gradient_evals, "n_density_evals_warmup": self.n_density_evals_warmup,
            "n_gradient_evals_warmup": self.n_gradient_evals_warmup, "cost": self.cost,
            "sampling_cost": self.sampling_cost, "rhat_max": s.rhat_max, "rhat_argmax": s.rhat_argmax,
            "ess_bulk_min": s.ess_bulk_min, "ess_bulk_argmin": s.ess_bulk_argmin, "ess_tail_min": s.ess_tail_min,
            "ess_tail_argmin": s.ess_tail_argmin, "ess_min": self.ess_min, "ess_per_s": self.ess_per_s,
            "ess_per_1k_evals": self.ess_per_1k_evals, "ess_per_1k_grads": self.ess_per_1k_grads,
            "acceptance": s.acceptance, "divergences": s.divergences,
            "mean_z_max": self.mean_z_max, "mean_z_argmax": self.mean_z_argmax, "sd_z_max": self.sd_z_max,
            "sd_z_argmax": self.sd_z_argmax, "acf1_max": self.acf1_max, "acf1_argmax": self.acf1_argmax,
            "iat_max": self.iat_max, "iat_argmax": self.iat_argmax, "passed": s.passed, "verdict": s.verdict,
        }  # fmt: skip


def finite_arg(values: np.ndarray, names: Sequence[str], pick: Any) -> tuple[float | None, str | None]:
    """``pick`` (``np.nanargmax``, ...) over the finite ``values``, with its name; ``None, None`` when none is."""
    if not np.isfinite(values).any():
        return None, None
    i = int(pick(np.where(np.isfinite(values), values, np.nan)))
    return float(values[i]), names[i]


def sampler_row(
    chains: Chains,
    *,
    timings: Timings | None = None,
    truth_mean: np.ndarray | None = None,
    truth_sd: np.ndarray | None = None,
    grad_cost: float = 1.0,
    thresholds: Thresholds | None = None,
    strict: bool = False,
) -> SamplerRow:
    """Summarise one run of the driver (see :class:`SamplerRow`).

    Parameters
    ----------
    chains
        The chains of :func:`mcmc.core.samplers.driver.run`, attrs (counts) intact.
    timings
        The timings beside them (``None``: times and ESS per second unknown).
    truth_mean, truth_sd
        Exact moments of the reported coordinates, ``(n,)`` in the order of
        the flattened variables (the target's ``mean``/``sd``), or ``None``.
    grad_cost
        Density evaluations one gradient evaluation counts as.
    thresholds, strict
        The checks' limits (``diagnose``'s defaults when ``None``): the row's
        summary is derived from the report ``mcmc diagnose`` would make of the draws.
    """
    names, x = flat_draws(chains)
    a = chains.attrs
    report = check(chains, thresholds=thresholds or Thresholds(), strict=strict)
    run = RunSummary.from_report(report, chains)
    params = report.parameters
    pnames = [p.name for p in params]
    acf1 = finite_arg(np.array([p.acf.get(1, np.nan) for p in params], dtype=float), pnames, np.nanargmax)
    iat = finite_arg(np.array([p.iat for p in params], dtype=float), pnames, np.nanargmax)
    bulk_min, tail_min = run.ess_bulk_min, run.ess_tail_min
    ess_min = None if bulk_min is None or tail_min is None else min(bulk_min, tail_min)

    nd, ng = int(a.get("n_density_evals", 0)), int(a.get("n_gradient_evals", 0))
    ndw, ngw = int(a.get("n_density_evals_warmup", 0)), int(a.get("n_gradient_evals_warmup", 0))
    sampling_cost = nd + grad_cost * ng
    cost = sampling_cost + ndw + grad_cost * ngw
    t_sampling = timings.sampling_time_s if timings is not None else None
    ess_per_s = ess_min / t_sampling if ess_min is not None and t_sampling else None
    ess_per_1k = 1000.0 * ess_min / sampling_cost if ess_min is not None and sampling_cost > 0 else None
    ess_per_1k_grads = 1000.0 * ess_min / ng if ess_min is not None and ng > 0 else None

    mean_z = sd_z = (None, None)
    if report.kind == "weighted" and truth_mean is not None and truth_sd is not None:
        # Weighted draws: the self-normalised estimates and their delta-method MCSE, as the report has them.
        by = {p.name: p for p in params}
        rows = [(by[n], m, s) for n, m, s in zip(names, truth_mean, truth_sd, strict=True) if n in by]
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_z = finite_arg(np.array([abs(p.mean - m) / p.mcse_mean for p, m, _ in rows]),
                                [p.name for p, _, _ in rows], np.nanargmax)  # fmt: skip
            sd_z = finite_arg(np.array([abs(p.sd - s) / p.mcse_sd for p, _, s in rows]),
                              [p.name for p, _, _ in rows], np.nanargmax)  # fmt: skip
        truth_mean = truth_sd = None
    if truth_mean is not None:
        truth_mean = np.asarray(truth_mean, dtype=float)
        if truth_mean.shape != (len(names),):
            raise ValueError(f"truth_mean has shape {truth_mean.shape}; the run has {len(names)} coordinates")
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_z = finite_arg(np.abs(stats.mean(x) - truth_mean) / stats.mcse_mean(x), names, np.nanargmax)
    if truth_sd is not None:
        truth_sd = np.asarray(truth_sd, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            sd_z = finite_arg(np.abs(stats.sd(x) - truth_sd) / stats.mcse_sd(x), names, np.nanargmax)

    return SamplerRow(
        sampler=str(a.get("sampler", "?")), summary=run,
        wall_time_s=timings.wall_time_s if timings is not None else None,
        warmup_time_s=timings.warmup_time_s if timings is not None else None, sampling_time_s=t_sampling,
        n_density_evals=nd + ndw, n_gradient_evals=ng + ngw,
        n_density_evals_warmup=ndw, n_gradient_evals_warmup=ngw,
        cost=float(cost), sampling_cost=float(sampling_cost),
        ess_min=ess_min, ess_per_s=ess_per_s, ess_per_1k_evals=ess_per_1k, ess_per_1k_grads=ess_per_1k_grads,
        mean_z_max=mean_z[0], mean_z_argmax=mean_z[1], sd_z_max=sd_z[0], sd_z_argmax=sd_z[1],
        acf1_max=acf1[0], acf1_argmax=acf1[1], iat_max=iat[0], iat_argmax=iat[1],
    )  # fmt: skip


def network_sampler_row(
    sampler: str, estimates: IndicatorEstimates, sampling_evals: int, warmup_evals: int, timings: Mapping[str, float]
) -> SamplerRow:
    """The row of a Bayesian network sampler's run, from its indicators' estimates (``network.estimate_indicators``).

    Its ESS is the smallest ``min(bulk, tail)`` over every state indicator
    (for likelihood weighting the Kish ESS of the weights); an evaluation is
    one pass over the network (a Gibbs sweep or one forward sample),
    ``sampling_evals`` of them in the sampling phase and ``warmup_evals`` in
    warm-up; ``timings`` has the run's ``warmup_time_s`` and ``sampling_time_s``.
    The worst ``|estimate - exact| / MCSE`` is there when exact marginals were given;
    the largest lag-1 autocorrelation and autocorrelation time over the
    indicators for a Markov chain (gibbs), read off the indicators' report.
    """
    s = estimates.summary
    acf1 = iat = (None, None)
    report = estimates.report
    if report is not None and report.kind != "weighted":
        params = report.parameters
        pnames = [p.name for p in params]
        acf1 = finite_arg(np.array([p.acf.get(1, np.nan) for p in params], dtype=float), pnames, np.nanargmax)
        iat = finite_arg(np.array([p.iat for p in params], dtype=float), pnames, np.nanargmax)
    both = (s.ess_bulk_min, s.ess_tail_min)
    ess_min = None if None in both else min(both)  # type: ignore[type-var]
    t_warm, t_sampling = timings["warmup_time_s"], timings["sampling_time_s"]
    z = estimates.z
    mean_z = (None, None) if z is None else finite_arg(z, estimates.names, np.nanargmax)
    total = sampling_evals + warmup_evals
    return SamplerRow(
        sampler=sampler, summary=s, wall_time_s=t_warm + t_sampling, warmup_time_s=t_warm,
        sampling_time_s=t_sampling, n_density_evals=total, n_gradient_evals=0,
        n_density_evals_warmup=warmup_evals, n_gradient_evals_warmup=0, cost=float(total),
        sampling_cost=float(sampling_evals), ess_min=ess_min,
        ess_per_s=ess_min / t_sampling if ess_min is not None and t_sampling > 0 else None,
        ess_per_1k_evals=1000.0 * ess_min / sampling_evals if ess_min is not None and sampling_evals > 0 else None,
        mean_z_max=mean_z[0], mean_z_argmax=mean_z[1], sd_z_max=None, sd_z_argmax=None,
        acf1_max=acf1[0], acf1_argmax=acf1[1], iat_max=iat[0], iat_argmax=iat[1],
    )  # fmt: skip


#: Per column of the sampler table: is a larger value better (True), smaller (False)?
BETTER: dict[str, bool] = {
    "wall_time_s": False,
    "cost": False,
    "rhat_max": False,
    "ess_bulk_min": True,
    "ess_tail_min": True,
    "ess_per_s": True,
    "ess_per_1k_evals": True,
    "ess_per_1k_grads": True,
    "iat_max": False,
    "divergences": False,
    "mean_z_max": False,
    "sd_z_max": False,
}


def best_by_column(rows: Sequence[SamplerRow]) -> dict[str, list[str]]:
    """For each column of :data:`BETTER`, the sampler(s) with the best value (ties share; ``None`` skipped).

    R-hat is judged by its distance from 1 and ``|z|`` columns by their size,
    the smaller the better.
    """
    out: dict[str, list[str]] = {}
    records = [r.to_dict() for r in rows]
    for column, larger in BETTER.items():
        values = [(r["sampler"], r[column]) for r in records]
        values = [(s, v if column != "rhat_max" else abs(v - 1.0)) for s, v in values if v is not None]
        values = [(s, v) for s, v in values if math.isfinite(v)]
        if len(values) < 2:
            continue
        target = max(v for _, v in values) if larger else min(v for _, v in values)
        out[column] = [s for s, v in values if v == target]
    return out


def samplers_verdict(
    rows: Sequence[SamplerRow], max_z: float = DEFAULT_MAX_Z, check_sd: bool = False, judge_draws: bool = True
) -> tuple[bool, str]:
    """Pass unless a sampler's draws fail the checks of ``mcmc diagnose``, or its mean misses the truth.

    A sampler fails the checks when its row's summary (the diagnose report of
    its draws) does; with ``judge_draws`` false (``--no-check``) that is only
    reported. A mean more than ``max_z`` MCSEs off the target's exact mean
    always fails; with ``check_sd``, the same for the standard deviations
    (``sd_z_max``). The MCSE, hence ``z``, of a sampler whose draws fail the
    checks is not to be trusted: the verdict says so.

    Returns
    -------
    passed, verdict
        The verdict is one line starting ``PASS:``, ``FAIL:`` or ``DONE:`` (no truth to check).
    """
    failed = [r for r in rows if not r.summary.passed]
    named = "; ".join(f"{r.sampler}: {r.summary.verdict.removeprefix('FAIL: ')}" for r in failed)
    checks = f"draws fail the checks of mcmc diagnose ({named})" if failed else ""
    warn = "" if not failed or judge_draws else f"; {checks}, so their MCSE and z are unreliable (--no-check)"
    checked = [r for r in rows if r.mean_z_max is not None]
    best = best_by_column(rows).get("ess_per_1k_evals")
    best_note = f"; most ESS per evaluation: {', '.join(best)}" if best else ""
    bad, bad_sd = off_truth(rows, max_z, check_sd)
    if bad or bad_sd or (failed and judge_draws):
        shown = [f"{r.sampler} mean (|z| {r.mean_z_max:.1f} at {r.mean_z_argmax})" for r in bad]
        shown += [f"{r.sampler} sd (|z| {r.sd_z_max:.1f} at {r.sd_z_argmax})" for r in bad_sd]
        parts = [f"more than {max_z:g} MCSE off the exact value: {', '.join(shown)}"] if shown else []
        if failed and judge_draws:
            parts.append(checks)
        return False, f"FAIL: {'; '.join(parts)}{warn}"
    if not checked:
        return True, f"DONE: {len(rows)} samplers compared, no exact moments to check{best_note}{warn}"
    worst = max(r.mean_z_max for r in checked)
    what = "means and sds" if check_sd else "means"
    if check_sd:
        worst = max([worst, *(r.sd_z_max for r in rows if r.sd_z_max is not None)])
    return True, (
        f"PASS: every sampler's {what} within {max_z:g} MCSE of the exact values (max |z| {worst:.2f}){best_note}{warn}"
    )


def off_truth(
    rows: Sequence[SamplerRow], max_z: float = DEFAULT_MAX_Z, check_sd: bool = False
) -> tuple[list[SamplerRow], list[SamplerRow]]:
    """The rows whose mean (and, with ``check_sd``, whose sd) is more than ``max_z`` MCSEs off the truth."""
    bad = [r for r in rows if r.mean_z_max is not None and r.mean_z_max > max_z]
    bad_sd = [r for r in rows if check_sd and r.sd_z_max is not None and r.sd_z_max > max_z]
    return bad, bad_sd


@dataclass(frozen=True)
class SamplerComparison:
    """One :class:`SamplerRow` per sampler, the best of each column, a verdict: what ``compare --samplers`` shows.

    Made by :func:`mcmc.cli.commands.compare.compare_samplers`.

    ``seed`` is the seed every sampler ran with (drawn from OS entropy when
    none was given: ``seed_given`` is then false). ``mean_off`` names the
    samplers whose mean missed the exact value by more than ``max_z`` MCSEs,
    ``sd_off`` those whose sd did (only with ``check_sd``). :meth:`to_dict` is the JSON document (schema
    :data:`SCHEMA`, mode ``samplers``), :meth:`to_table` the CSV table.
    """

    target: str
    target_options: Mapping[str, Any]
    dim: int
    exact_moments: bool
    chains: int
    warmup: int
    draws: int
    seed: int
    seed_given: bool
    grad_cost: float
    params: Mapping[str, Mapping[str, Any]]
    max_z: float
    check_sd: bool
    rows: tuple[SamplerRow, ...]
    passed: bool
    verdict_line: str
    best: Mapping[str, list[str]]
    mean_off: tuple[str, ...]
    sd_off: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def verdict(self) -> str:
        return self.verdict_line

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA, "mode": "samplers", "target": self.target,
            "target_options": dict(self.target_options), "dim": self.dim, "exact_moments": self.exact_moments,
            "chains": self.chains, "warmup": self.warmup, "draws": self.draws, "seed": self.seed,
            "grad_cost": self.grad_cost, "params": {name: dict(p) for name, p in self.params.items() if p},
            "max_z": self.max_z, "check_sd": self.check_sd, "passed": self.passed, "verdict": self.verdict(),
            "best": dict(self.best), "samplers": [r.to_dict() for r in self.rows], "notes": list(self.notes),
        }  # fmt: skip

    def to_table(self) -> tuple[list[str], list[list[Any]]]:
        records = [r.to_dict() for r in self.rows]
        columns = list(records[0]) if records else []
        return columns, [list(r.values()) for r in records]
