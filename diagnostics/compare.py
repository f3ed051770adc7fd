"""Comparisons of MCMC runs: samplers head to head, run against run, run against reference draws.

This layer computes; it never prints. Three questions, one module:

* **Which sampler is most efficient on this target?** :func:`sampler_row`
  summarises one run of :func:`mcmc.core.samplers.driver.run` -- cost (wall
  time and evaluation counts from the run's attributes), convergence (max
  R-hat, min bulk and tail ESS), efficiency (ESS per second and per 1000
  evaluations of the sampling phase) and, where the target knows its exact
  moments, the worst standardized error ``|mean - truth| / MCSE``.
* **Did the answer change?** :func:`compare_draws` puts two sets of draws of
  the same parameters side by side: for each shared scalar parameter
  ``z = (mean_A - mean_B) / sqrt(MCSE_A^2 + MCSE_B^2)``. Under the null
  hypothesis that both runs target the same distribution and both MCSEs are
  right, ``z`` is approximately standard normal (a Markov chain central limit
  theorem for each run; Geyer 1992, Jones 2004), so ``|z| > 4`` happens with
  probability about 6.3e-5 per parameter.
* **Does it agree with a reference posterior?** The same comparison against
  reference draws, e.g. posteriordb's (Magnusson et al. 2024), read by
  :func:`mcmc.diagnostics.readers.read_posteriordb`. posteriordb's reference draws are thinned to be
  nearly independent; their MCSE is still computed from the draws (it is then
  close to ``sd / sqrt(n)``), so a reference that is less independent than
  advertised only widens the test, never biases it.

Caveats that matter when reading ``z``. The MCSEs are estimates: with a few
hundred effective draws they are themselves uncertain by several per cent, so
``|z|`` has slightly heavier tails than a normal. A chain that has not
explored the whole posterior (R-hat well above 1) has an MCSE that understates
its error, and no z-test can see what neither run visited. The MCSE of the
standard deviation (:func:`mcmc.diagnostics.stats.mcse_sd`) is a delta-method
approximation that needs a finite fourth moment; for heavy-tailed parameters
(``tau`` in eight schools) its ``z`` is indicative only.

References
----------
Geyer, C. J. (1992). Practical Markov chain Monte Carlo. *Statistical Science* 7(4), 473-483.

Jones, G. L. (2004). On the Markov chain central limit theorem. *Probability Surveys* 1, 299-320.

Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.

Magnusson, M., Torgander, J., Bürkner, P.-C., Zhang, L., Carpenter, B. &
Vehtari, A. (2024). posteriordb: testing, benchmarking and developing Bayesian
inference algorithms. arXiv:2407.04967.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError, UsageError
from mcmc.diagnostics.report import Thresholds
from mcmc.diagnostics.summary import RunSummary

if TYPE_CHECKING:
    from mcmc.core.samplers.driver import Timings

#: Default threshold on ``|z|``: about 6.3e-5 of parameters exceed it by chance.
DEFAULT_MAX_Z = 4.0
#: The JSON documents of :class:`Comparison` and :class:`SamplerComparison` (docs/formats.md).
SCHEMA = "mcmc.compare/1"


# --------------------------------------------------------------------------- reference draws


def read_reference(path: str, *, layout: str | None = None) -> Chains:
    """Reference draws: posteriordb JSON (``.json``) or any other chains file (:func:`read_chains`).

    ``layout`` is the axis order of a bare array (see :func:`read_chains`).
    """
    from mcmc.diagnostics.readers import read_chains

    return read_chains([path], layout=layout)


# --------------------------------------------------------------------------- run against run


@dataclass(frozen=True)
class SideSummary:
    """One side of a comparison: where the draws came from and their size."""

    source: tuple[str, ...]
    n_chains: int
    n_draws: int


@dataclass(frozen=True)
class ParameterComparison:
    """One scalar parameter present in both runs.

    ``z`` compares the means; ``z_sd`` compares the standard deviations with
    the delta-method MCSE of the sd. ``passed`` is ``|z| <= max_z`` (and the
    same for ``z_sd`` when the sd is checked); an undefined ``z`` (non-finite
    draws, or a parameter constant on one side and not equal on the other)
    fails. ``mean_differs`` and ``sd_differs`` say which part failed
    (``sd_differs`` only when the sd is checked).
    """

    name: str
    mean_a: float
    mean_b: float
    mcse_a: float
    mcse_b: float
    z: float
    sd_a: float
    sd_b: float
    sd_ratio: float
    mcse_sd_a: float
    mcse_sd_b: float
    z_sd: float
    ess_bulk_a: float
    ess_bulk_b: float
    rhat_a: float
    rhat_b: float
    passed: bool
    mean_differs: bool = False
    sd_differs: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The JSON record of the parameter (``mcmc.compare/1``); the part flags are left to ``passed``."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("mean_differs", "sd_differs")}


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_draws` and :func:`compare_runs`: a row per shared parameter and a verdict.

    ``mode`` is ``"runs"`` (A against B) or ``"reference"`` (a run against
    reference draws). :meth:`to_dict` is the JSON document (schema
    :data:`SCHEMA`), :meth:`to_table` the CSV table (one row per parameter).
    """

    a: SideSummary
    b: SideSummary
    max_z: float
    check_sd: bool
    parameters: tuple[ParameterComparison, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    mode: str = "runs"

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "mode": self.mode,
            "a": {"source": list(self.a.source), "chains": self.a.n_chains, "draws": self.a.n_draws},
            "b": {"source": list(self.b.source), "chains": self.b.n_chains, "draws": self.b.n_draws},
            "max_z": self.max_z,
            "check_sd": self.check_sd,
            "passed": self.passed,
            "verdict": self.verdict(),
            "failed": list(self.failed),
            "only_in_a": list(self.only_in_a),
            "only_in_b": list(self.only_in_b),
            "expected_false_alarms": self.expected_false_alarms,
            "bonferroni_max_z_1pct": self.bonferroni_z(0.01),
            "notes": list(self.notes),
            "parameters": [p.to_dict() for p in self.parameters],
        }

    def to_table(self) -> tuple[list[str], list[list[Any]]]:
        records = [p.to_dict() for p in self.parameters]
        columns = list(records[0]) if records else []
        return columns, [list(r.values()) for r in records]

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters if not p.passed)

    def worst_first(self) -> tuple[ParameterComparison, ...]:
        """The parameters failing first, then by the largest ``|z|`` (of the sd too when it is checked).

        An undefined ``z`` counts as the largest; ties keep ``a``'s order.
        """

        def size(p: ParameterComparison) -> float:
            zs = [p.z, p.z_sd] if self.check_sd else [p.z]
            return max(abs(v) if not math.isnan(v) else math.inf for v in zs)

        return tuple(sorted(self.parameters, key=lambda p: (p.passed, -size(p))))

    @property
    def passed(self) -> bool:
        return not self.failed

    @property
    def chance_exceedance(self) -> float:
        """Two-sided normal tail probability of ``|z| > max_z`` for one parameter."""
        return math.erfc(self.max_z / math.sqrt(2.0))

    @property
    def expected_false_alarms(self) -> float:
        """Parameters expected to exceed ``max_z`` when nothing changed (tests per parameter x P)."""
        tests = len(self.parameters) * (2 if self.check_sd else 1)
        return tests * self.chance_exceedance

    def bonferroni_z(self, familywise: float = 0.01) -> float:
        """The ``|z|`` threshold keeping the chance of any false alarm at ``familywise`` (Bonferroni)."""
        tests = max(1, len(self.parameters) * (2 if self.check_sd else 1))
        return NormalDist().inv_cdf(1.0 - familywise / (2.0 * tests))

    def verdict(self) -> str:
        n = len(self.parameters)
        what = "means and sds" if self.check_sd else "means"
        if self.passed:
            zs = [abs(p.z) for p in self.parameters] + [abs(p.z_sd) for p in self.parameters if self.check_sd]
            worst = max(zs, default=0.0)
            return f"PASS: {n} shared parameters, {what} agree (max |z| {worst:.2f} <= {self.max_z:g})"
        bad = [p for p in self.parameters if not p.passed]
        shown = ", ".join(f"{p.name} (z {_fmt_z(p.z)}{_sd_part(p, self.check_sd)})" for p in bad[:6])
        more = f" and {len(bad) - 6} more" if len(bad) > 6 else ""
        return f"FAIL: {len(bad)} of {n} parameters differ beyond |z| {self.max_z:g}: {shown}{more}"


def _fmt_z(z: float) -> str:
    return f"{z:+.1f}" if math.isfinite(z) else ("undefined" if math.isnan(z) else ("+inf" if z > 0 else "-inf"))


def _sd_part(p: ParameterComparison, check_sd: bool) -> str:
    return f", z_sd {_fmt_z(p.z_sd)}" if check_sd else ""


def flat_draws(
    chains: Chains, var: Sequence[str] | None = None, *, missing_ok: bool = False
) -> tuple[list[str], np.ndarray]:
    """Scalar parameters of ``chains`` (all, or those ``var`` selects as in ``diagnose --var``).

    Returns their names (``theta[0]``) and draws ``(chain, draw, n)`` as float64.
    """
    from mcmc.diagnostics.selection import flatten, select

    selection = select(chains, var, missing_ok=missing_ok)
    return list(selection.names), flatten(chains, selection)


def z_scores(mean_a: np.ndarray, se_a: np.ndarray, mean_b: np.ndarray, se_b: np.ndarray) -> np.ndarray:
    """``(mean_a - mean_b) / sqrt(se_a^2 + se_b^2)``, elementwise.

    Equal means give 0 even when both standard errors are 0 (a constant
    parameter equal on both sides); different means with zero total standard
    error give ``+-inf``; NaN anywhere gives NaN.
    """
    diff = np.asarray(mean_a, dtype=float) - np.asarray(mean_b, dtype=float)
    se = np.sqrt(np.square(se_a) + np.square(se_b))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff / se
    return np.where(diff == 0, 0.0, z)


def compare_draws(
    a: Chains,
    b: Chains,
    *,
    max_z: float = DEFAULT_MAX_Z,
    check_sd: bool = False,
    source_a: Sequence[str] = (),
    source_b: Sequence[str] = (),
    var: Sequence[str] | None = None,
) -> Comparison:
    """Compare the shared scalar parameters of two sets of draws.

    Parameters
    ----------
    a, b
        Draws; their variables may differ in number of chains and draws.
        Parameters are matched by variable and index (``theta`` at 0 is
        this project's ``theta[0]`` and CmdStan's ``theta[1]``); the report
        names them as ``a`` does.
    max_z
        A parameter fails when ``|z| > max_z``.
    check_sd
        Also fail parameters whose ``|z_sd| > max_z``.
    source_a, source_b
        File names, for the report.
    var
        Variable or parameter names or regular expressions (``diagnose
        --var``): compare only these. Each must match something in ``a``.

    Returns
    -------
    Comparison
        One :class:`ParameterComparison` per shared parameter, in ``a``'s order.

    Raises
    ------
    InputError
        No parameter name is shared; the message lists both sides' names.
    UsageError
        A ``var`` pattern matches nothing in ``a``.
    """
    from mcmc.diagnostics import stats

    from mcmc.diagnostics.selection import flatten, select, select_keys

    sel_a = select(a, var)
    # Paired by variable and index, not by printed name: A's theta[0] is B's
    # theta[1] when B is a CmdStan run or posteriordb draws (1-based labels).
    sel_b = select_keys(b, sel_a.keys)
    all_b = select(b, var, missing_ok=True)
    index_b = dict(zip(sel_b.keys, range(len(sel_b.keys)), strict=True))
    names_a = list(sel_a.names)
    shared_at = [k for k, key in enumerate(sel_a.keys) if key in index_b]
    if not shared_at:
        raise InputError(
            None,
            f"the two runs share no parameter: A has {_name_list(names_a)}; B has {_name_list(all_b.names)}",
        )
    shared = [names_a[k] for k in shared_at]
    xa = flatten(a, sel_a)[:, :, shared_at]
    xb = flatten(b, sel_b)
    keys_a = set(sel_a.keys)
    only_in_a = tuple(names_a[k] for k, key in enumerate(sel_a.keys) if key not in index_b)
    only_in_b = tuple(n for n, key in zip(all_b.names, all_b.keys, strict=True) if key not in keys_a)

    def side(x: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "mean": stats.mean(x), "sd": stats.sd(x), "mcse": stats.mcse_mean(x), "mcse_sd": stats.mcse_sd(x),
            "ess": stats.ess_bulk(x), "rhat": stats.rhat(x),
        }  # fmt: skip

    sa, sb = side(xa), side(xb)
    for s in (sa, sb):
        # stats gives a constant parameter NaN everywhere; its mean and sd have no Monte Carlo error at all.
        const = s["sd"] == 0
        s["mcse"] = np.where(const, 0.0, s["mcse"])
        s["mcse_sd"] = np.where(const, 0.0, s["mcse_sd"])
    z = z_scores(sa["mean"], sa["mcse"], sb["mean"], sb["mcse"])
    z_sd = z_scores(sa["sd"], sa["mcse_sd"], sb["sd"], sb["mcse_sd"])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = sa["sd"] / sb["sd"]
    mean_differs = ~(np.abs(z) <= max_z)  # NaN compares false: an undefined z fails
    sd_differs = ~(np.abs(z_sd) <= max_z) if check_sd else np.zeros(len(shared), dtype=bool)
    ok = ~(mean_differs | sd_differs)
    params = tuple(
        ParameterComparison(
            name=name,
            mean_a=float(sa["mean"][k]),
            mean_b=float(sb["mean"][k]),
            mcse_a=float(sa["mcse"][k]),
            mcse_b=float(sb["mcse"][k]),
            z=float(z[k]),
            sd_a=float(sa["sd"][k]),
            sd_b=float(sb["sd"][k]),
            sd_ratio=float(ratio[k]),
            mcse_sd_a=float(sa["mcse_sd"][k]),
            mcse_sd_b=float(sb["mcse_sd"][k]),
            z_sd=float(z_sd[k]),
            ess_bulk_a=float(sa["ess"][k]),
            ess_bulk_b=float(sb["ess"][k]),
            rhat_a=float(sa["rhat"][k]),
            rhat_b=float(sb["rhat"][k]),
            passed=bool(ok[k]),
            mean_differs=bool(mean_differs[k]),
            sd_differs=bool(sd_differs[k]),
        )  # fmt: skip
        for k, name in enumerate(shared)
    )
    notes = []
    rhats = np.concatenate([sa["rhat"], sb["rhat"]])
    rhats = rhats[np.isfinite(rhats)]
    worst_rhat = rhats.max() if rhats.size else np.nan
    max_rhat = Thresholds().max_rhat
    if worst_rhat > max_rhat:
        notes.append(
            f"max R-hat {worst_rhat:.3f} > {max_rhat:g}: an unconverged run's MCSE understates its error; "
            "run mcmc diagnose on each side"
        )
    return Comparison(
        a=SideSummary(tuple(source_a), a.n_chains, a.n_draws),
        b=SideSummary(tuple(source_b), b.n_chains, b.n_draws),
        max_z=float(max_z),
        check_sd=check_sd,
        parameters=params,
        only_in_a=only_in_a,
        only_in_b=only_in_b,
        notes=tuple(notes),
    )


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
    from mcmc.core.paths import check_paths
    from mcmc.core.ranges import check_settings
    from mcmc.diagnostics.diagnose import piped_stdin
    from mcmc.diagnostics.readers import read_chains

    check_paths(outputs or {}, [*files, reference])
    check_settings({"max_z": max_z})
    if files.count("-") > 1:
        raise UsageError("only one source can be standard input (-)")
    stdin = piped_stdin(files, stdin)

    def read(src: str) -> tuple[Chains, list[str]]:
        run = read_chains([src], stdin=stdin if src == "-" else None, layout=layout)
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


def _name_list(names: Sequence[str], cap: int = 12) -> str:
    if not names:
        return "(none)"
    shown = ", ".join(names[:cap])
    return shown + (f" and {len(names) - cap} more" if len(names) > cap else "")


# --------------------------------------------------------------------------- samplers head to head


@dataclass(frozen=True)
class SamplerRow:
    """Cost, convergence and efficiency of one sampler's run on a target.

    ``summary`` is the run's :class:`~mcmc.diagnostics.summary.RunSummary`
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
    gradient costs. Fields that do not apply are ``None``.
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
            "sd_z_argmax": self.sd_z_argmax,
        }  # fmt: skip


def _arg(values: np.ndarray, names: Sequence[str], pick: Any) -> tuple[float | None, str | None]:
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
    """
    from mcmc.diagnostics import stats
    from mcmc.diagnostics.summary import summarize_run

    names, x = flat_draws(chains)
    a = chains.attrs
    run = summarize_run(chains)
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
    if truth_mean is not None:
        truth_mean = np.asarray(truth_mean, dtype=float)
        if truth_mean.shape != (len(names),):
            raise ValueError(f"truth_mean has shape {truth_mean.shape}; the run has {len(names)} coordinates")
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_z = _arg(np.abs(stats.mean(x) - truth_mean) / stats.mcse_mean(x), names, np.nanargmax)
    if truth_sd is not None:
        truth_sd = np.asarray(truth_sd, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            sd_z = _arg(np.abs(stats.sd(x) - truth_sd) / stats.mcse_sd(x), names, np.nanargmax)

    return SamplerRow(
        sampler=str(a.get("sampler", "?")), summary=run,
        wall_time_s=timings.wall_time_s if timings is not None else None,
        warmup_time_s=timings.warmup_time_s if timings is not None else None, sampling_time_s=t_sampling,
        n_density_evals=nd + ndw, n_gradient_evals=ng + ngw,
        n_density_evals_warmup=ndw, n_gradient_evals_warmup=ngw,
        cost=float(cost), sampling_cost=float(sampling_cost),
        ess_min=ess_min, ess_per_s=ess_per_s, ess_per_1k_evals=ess_per_1k, ess_per_1k_grads=ess_per_1k_grads,
        mean_z_max=mean_z[0], mean_z_argmax=mean_z[1], sd_z_max=sd_z[0], sd_z_argmax=sd_z[1],
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
    rows: Sequence[SamplerRow], max_z: float = DEFAULT_MAX_Z, check_sd: bool = False
) -> tuple[bool, str]:
    """Pass unless some sampler's mean misses the target's exact mean by more than ``max_z`` MCSEs.

    With ``check_sd``, the same for the standard deviations (``sd_z_max``).

    Without exact moments nothing can fail; samplers whose max R-hat exceeds
    ``Thresholds.max_rhat`` (1.01) are named either way (their MCSE, hence
    their ``z``, is not to be trusted).

    Returns
    -------
    passed, verdict
        The verdict is one line starting ``PASS:``, ``FAIL:`` or ``DONE:`` (no truth to check).
    """
    unconverged = [f"{r.sampler} {r.summary.rhat_max:.3f}" for r in rows if r.summary.rhat_ok is False]
    max_rhat = rows[0].summary.thresholds.max_rhat if rows else Thresholds().max_rhat
    warn = f"; R-hat > {max_rhat:g}, so MCSE and z unreliable: {', '.join(unconverged)}" if unconverged else ""
    checked = [r for r in rows if r.mean_z_max is not None]
    best = best_by_column(rows).get("ess_per_1k_evals")
    best_note = f"; most ESS per evaluation: {', '.join(best)}" if best else ""
    if not checked:
        return True, f"DONE: {len(rows)} samplers compared, no exact moments to check{best_note}{warn}"
    bad, bad_sd = off_truth(rows, max_z, check_sd)
    if bad or bad_sd:
        shown = [f"{r.sampler} mean (|z| {r.mean_z_max:.1f} at {r.mean_z_argmax})" for r in bad]
        shown += [f"{r.sampler} sd (|z| {r.sd_z_max:.1f} at {r.sd_z_argmax})" for r in bad_sd]
        return False, f"FAIL: more than {max_z:g} MCSE off the exact value: {', '.join(shown)}{warn}"
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
    """Result of :func:`compare_samplers`: one :class:`SamplerRow` per sampler, the best of each column, a verdict.

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
    progress: Callable[[str, int, int], None] | None = None,
    observe: Sequence[str] = (),
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
        Registered sampler names (:data:`mcmc.core.samplers.SAMPLERS`), each once.
    target_options
        Keyword options of the target (``dim``, ``rho``, ``data``, ...).
    params
        Sampler name -> keyword tuning of its kernel.
    progress
        Called as ``progress(label, done, total)`` while each sampler runs.
    observe
        Evidence ``NODE=STATE`` items (or comma lists) of a Bayesian network
        target ``NET.bif``, which
        :func:`mcmc.diagnostics.network.compare_network_samplers` compares
        (its samplers: gibbs, rejection, likelihood-weighting).
    """
    from mcmc.core.targets import is_network_target

    if is_network_target(target):
        from mcmc.diagnostics.network import compare_network_samplers

        if any(v is not None for v in (target_options or {}).values()) or any((params or {}).values()):
            raise UsageError("target options and --param do not apply to a Bayesian network target")
        if check_sd:
            raise UsageError("--check-sd does not apply to a Bayesian network target (its parameters are indicators)")
        return compare_network_samplers(
            target, samplers, observe=observe, chains=chains, warmup=warmup, draws=draws, seed=seed, max_z=max_z,
            outputs=outputs, progress=progress,
        )  # fmt: skip
    if observe:
        raise UsageError("--observe applies to a Bayesian network target (--target NET.bif)")
    from mcmc.core.paths import check_paths
    from mcmc.core.random import ChainRandom
    from mcmc.core.ranges import check_settings
    from mcmc.core.samplers import SAMPLERS, get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import get_target, is_user_target

    options = dict(target_options or {})
    user_file = target.split(":", 1)[0] if is_user_target(target) else None
    data = options.get("data")
    check_paths(outputs or {}, [user_file, data if isinstance(data, str) else None])
    check_settings({"grad_cost": grad_cost, "max_z": max_z})
    names = list(samplers)
    if not names:
        raise UsageError("--samplers needs at least one sampler name")
    for name in names:
        if name not in SAMPLERS:
            raise UsageError(f"--samplers: unknown sampler {name!r}; choose from {', '.join(SAMPLERS)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--samplers: {', '.join(twice)} listed more than once")
    tuning = {name: dict((params or {}).get(name, {})) for name in names}
    tgt = get_target(target, **options)
    kernels = {name: get_sampler(name) for name in names}
    probe = tgt.initial(ChainRandom(0, (0,)), 1)
    for kernel in kernels.values():
        kernel.init(probe, tgt)
    seed_given = seed is not None
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))  # type: ignore[operator]

    rows = []
    for name, kernel in kernels.items():
        label = f"{name} on {tgt.name}"
        report = None if progress is None else (lambda done, total, label=label: progress(label, done, total))
        result, timings = run(
            kernel, tgt, chains=chains, warmup=warmup, draws=draws, seed=seed, params=tuning[name], progress=report
        )
        rows.append(
            sampler_row(result, truth_mean=tgt.mean, truth_sd=tgt.sd, grad_cost=grad_cost, timings=timings)
        )

    passed, verdict = samplers_verdict(rows, max_z, check_sd)
    bad, bad_sd = off_truth(rows, max_z, check_sd)
    return SamplerComparison(
        target=tgt.name, target_options={k: v for k, v in tgt.options.items() if v is not None}, dim=tgt.dim,
        exact_moments=tgt.mean is not None, chains=chains, warmup=warmup, draws=draws, seed=seed,
        seed_given=seed_given, grad_cost=grad_cost, params=tuning, max_z=max_z, check_sd=check_sd,
        rows=tuple(rows), passed=passed, verdict_line=verdict, best=best_by_column(rows),
        mean_off=tuple(r.sampler for r in bad), sd_off=tuple(r.sampler for r in bad_sd),
    )  # fmt: skip
