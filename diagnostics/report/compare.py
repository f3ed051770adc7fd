"""Comparisons of MCMC draws: run against run, and run against reference draws.

This layer computes; it never prints. Two questions, one test (the samplers' head-to-head
comparison is :mod:`mcmc.diagnostics.report.samplers`):

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
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError
from mcmc.diagnostics import stats
from mcmc.diagnostics.report.selection import flatten, select, select_keys
from mcmc.diagnostics.report.thresholds import Thresholds

#: Default threshold on ``|z|``: about 6.3e-5 of parameters exceed it by chance.
DEFAULT_MAX_Z = 4.0

#: The JSON documents of :class:`Comparison` and :class:`SamplerComparison` (docs/formats.md).
SCHEMA = "mcmc.compare/1"


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
    """Result of :func:`compare_draws`: a row per shared parameter and a verdict.

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
        from statistics import NormalDist  # start-up: statistics loads decimal and fractions (2 ms), only here

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
        Variable or parameter names or globs (``diagnose --var``): compare
        only these. Each must match something in ``a``.

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


def _name_list(names: Sequence[str], cap: int = 12) -> str:
    if not names:
        return "(none)"
    shown = ", ".join(names[:cap])
    return shown + (f" and {len(names) - cap} more" if len(names) > cap else "")
