"""Estimates beside the exact moments of a target that knows them: ``mcmc sample``'s "exact" table.

A target may carry the exact mean and sd of every reported coordinate
(``Target.mean``, ``Target.sd``: the Gaussians, the conjugate posteriors
``beta-bernoulli`` and ``dirichlet``, a lattice small enough to enumerate).
:func:`exact_moments` sets the run's estimates, read off the report that
judged the draws (the one judge: a chain's mean and its autocorrelation-aware
MCSE, or weighted draws' self-normalised mean and delta-method MCSE), beside
them: the mean, its MCSE, the exact mean and ``z = (mean - exact) / MCSE``,
and the same for the variance (``sd^2``, MCSE ``2 sd MCSE(sd)`` by the delta
method). Nothing is judged here: ``|z|`` near 4 or more says the draws and
the truth disagree, which the statistical tests turn into a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcmc.diagnostics.report.report import Report


@dataclass(frozen=True)
class ExactRow:
    """One reported coordinate: the estimates of its mean and variance beside the exact values."""

    name: str
    mean: float
    mcse_mean: float
    exact_mean: float
    z_mean: float
    var: float
    mcse_var: float
    exact_var: float
    z_var: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ExactMoments:
    """Every coordinate's row, and the largest ``|z|`` of the means and of the variances."""

    rows: tuple[ExactRow, ...]

    @property
    def max_z_mean(self) -> float:
        return max((abs(r.z_mean) for r in self.rows if r.z_mean == r.z_mean), default=float("nan"))

    @property
    def max_z_var(self) -> float:
        return max((abs(r.z_var) for r in self.rows if r.z_var == r.z_var), default=float("nan"))

    def to_dict(self) -> dict[str, Any]:
        return {"rows": [r.to_dict() for r in self.rows], "max_z_mean": self.max_z_mean,
                "max_z_var": self.max_z_var}  # fmt: skip


def _z(estimate: float, exact: float, se: float) -> float:
    if estimate == exact:
        return 0.0
    return (estimate - exact) / se if se > 0 else float("inf")


def exact_moments(report: Report, names: Sequence[str], mean: np.ndarray, sd: np.ndarray) -> ExactMoments | None:
    """The report's estimates of the coordinates ``names`` beside their exact ``mean`` and ``sd``.

    Coordinates the report did not judge (a ``--var`` selection, a target
    judged on some variables only) are left out; ``None`` when none is left.
    """
    by_name = {p.name: p for p in report.parameters}
    rows = []
    for name, m, s in zip(names, np.asarray(mean, dtype=float), np.asarray(sd, dtype=float), strict=True):
        p = by_name.get(name)
        if p is None:
            continue
        var, exact_var, mcse_var = p.sd**2, float(s) ** 2, 2.0 * p.sd * p.mcse_sd
        rows.append(ExactRow(name, p.mean, p.mcse_mean, float(m), _z(p.mean, float(m), p.mcse_mean),
                             var, mcse_var, exact_var, _z(var, exact_var, mcse_var)))  # fmt: skip
    return ExactMoments(tuple(rows)) if rows else None
