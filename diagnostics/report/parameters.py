"""One scalar parameter judged (:class:`Parameter`), its JSON record, and the order reports show them in.

Every list of parameters a report shows -- the verdict line, the tables,
JUnit, Markdown, HTML, the plots, GitHub's annotations -- comes worst first,
by one rule (:func:`badness`, :func:`worst_first`): non-finite draws, then
R-hat failures by how far past their limit, then ESS failures by how short of
theirs, then the rest by status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "SEVERITY", "STATUSES", "Parameter", "badness", "by_badness", "ess_fraction", "rank_failing", "record",
    "worst_first",
]  # fmt: skip

STATUSES = ("ok", "rhat", "ess", "constant", "nan", "inf")


@dataclass(frozen=True)
class Parameter:
    """Statistics of one scalar parameter (a component of a variable).

    ``name`` follows ArviZ: ``theta[0]``, ``L[1, 0]`` (0-based, row-major), or
    the source's own labels: ``theta[Choate]`` from ArviZ coordinates,
    ``mu[1]`` and ``M[1,2]`` from CmdStan (:meth:`Chains.scalar_names`).
    ``quantiles`` maps labels such as ``"5%"`` to values and ``acf`` maps lags
    to the chain-averaged autocorrelation. ``acceptance`` is this parameter's
    move rate: the fraction of transitions, over all chains, where it changed.
    Undefined statistics are NaN; ``status`` says why. ``ess_bulk_low`` and
    ``ess_tail_low`` say which ESS failed the threshold of a parameter whose
    status is ``rhat`` or ``ess`` (the parameters the ``ess`` check lists).
    ``max_rhat`` and ``min_ess`` are the limits it was judged by (the general
    ones unless ``Thresholds.per_variable`` sets its own). Every report shows
    an estimate with the digits its own Monte Carlo error supports: the mean
    by ``mcse_mean``, the sd by ``mcse_sd``, each quantile by its entry of
    ``mcse_quantiles``.
    """

    name: str
    variable: str
    mean: float
    sd: float
    mad: float
    quantiles: Mapping[str, float]
    mcse_mean: float
    mcse_sd: float
    ess_bulk: float
    ess_tail: float
    rhat: float
    rhat_split: float
    ssif: float
    ess_ssif: float
    ssif_disagrees: bool
    acf: Mapping[int, float]
    iat: float
    acceptance: float
    status: str
    ess_bulk_low: bool = False
    ess_tail_low: bool = False
    max_rhat: float = 1.01
    min_ess: float = 400.0
    #: The Monte Carlo standard error of each quantile (same labels as ``quantiles``), whose digits it sets.
    mcse_quantiles: Mapping[str, float] = field(default_factory=dict)
    #: emcee's integrated autocorrelation time, for the walkers of an ensemble (NaN for chains).
    iat_emcee: float = float("nan")

    def quantile_mcse(self, label: str) -> float:
        """The MCSE of the quantile ``label``: its own, or the mean's where none was computed."""
        return self.mcse_quantiles.get(label, self.mcse_mean)


def record(p: Parameter) -> dict[str, Any]:
    """One parameter's JSON object (``docs/formats.md``)."""
    return {
        "name": p.name, "variable": p.variable, "mean": p.mean, "sd": p.sd, "mad": p.mad,
        "quantiles": dict(p.quantiles), "mcse_quantiles": dict(p.mcse_quantiles),
        "mcse_mean": p.mcse_mean, "mcse_sd": p.mcse_sd, "ess_bulk": p.ess_bulk, "ess_tail": p.ess_tail,
        "rhat": p.rhat, "rhat_split": p.rhat_split, "ssif": p.ssif, "ess_ssif": p.ess_ssif,
        "ssif_disagrees": p.ssif_disagrees, "acf": {str(k): v for k, v in p.acf.items()},
        "iat": p.iat, "acceptance": p.acceptance, "status": p.status,
        "max_rhat": p.max_rhat, "min_ess": p.min_ess, "iat_emcee": p.iat_emcee,
    }  # fmt: skip


def badness(p: Parameter) -> tuple[int, float]:
    """How far ``p`` is past its limits, as a sort key: smaller is worse.

    Non-finite draws first, then R-hat failures by how far R-hat exceeds the
    parameter's limit, relative to the limit's own distance from 1 (an
    undefined R-hat counts as worst), then ESS failures by the smaller of bulk
    and tail ESS as a fraction of the limit (smallest first), then the rest.
    Every list of failing parameters (the verdict line, JUnit, Markdown, HTML,
    the annotations and their "and N more") is ordered by it.
    """
    if p.status in ("nan", "inf"):
        return 0, 0.0
    if p.status == "rhat":
        excess = (p.rhat - 1.0) / max(p.max_rhat - 1.0, 1e-12)
        return 1, -excess if np.isfinite(excess) else -np.inf
    if p.status == "ess" or p.ess_bulk_low or p.ess_tail_low:
        return 2, ess_fraction(p)
    return 3, 0.0


def ess_fraction(p: Parameter) -> float:
    """The smaller of bulk and tail ESS as a fraction of ``p``'s limit (``-inf`` when undefined): smaller is worse."""
    worst = min(p.ess_bulk, p.ess_tail) / p.min_ess if p.min_ess > 0 else 0.0
    return worst if np.isfinite(worst) else -np.inf


def by_badness(params: Sequence[Parameter], key: Any = None) -> list[Parameter]:
    """``params`` from the worst to the least bad (:func:`badness`, or ``key``); ties keep the file's order."""
    return sorted(params, key=key or badness)


def rank_failing(params: Sequence[Parameter]) -> tuple[int, ...]:
    """Indices of the failing parameters (status ``nan``, ``inf``, ``rhat`` or ``ess``), worst first (:func:`badness`)."""
    failing = [i for i, p in enumerate(params) if p.status in ("nan", "inf", "rhat", "ess")]
    return tuple(sorted(failing, key=lambda i: badness(params[i])))


#: Order of statuses from worst to best: what cannot be trusted at all, then what has not converged.
SEVERITY = {"nan": 0, "inf": 0, "rhat": 1, "ess": 2, "constant": 3, "ok": 4}


def worst_first(parameters: Sequence[Parameter]) -> list[int]:
    """Positions of ``parameters`` from the worst to the best.

    The failing ones first, ranked by :func:`rank_failing` (how badly each
    fails its own limits); then the others by status (:data:`SEVERITY`:
    constant before ok), in file order.
    """
    failing = rank_failing(parameters)
    seen = set(failing)
    rest = sorted((i for i in range(len(parameters)) if i not in seen),
                  key=lambda i: (SEVERITY.get(parameters[i].status, 4), i))  # fmt: skip
    return [*failing, *rest]
