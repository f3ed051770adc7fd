"""Classic diagnostics compacted to one row per parameter, for the report's tables.

:func:`classic_rows` reduces :class:`~mcmc.diagnostics.stats.classic.ClassicDiagnostics`
over chains to a :class:`ClassicRow` per parameter and flags values beyond the
limits of the papers they come from: Gelman & Rubin (1992) for the PSRF's upper
limit, Geweke (1992) for the z-score, Raftery & Lewis (1992) for the dependence
factor. The flags are display only: they never fail a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mcmc.diagnostics.stats.classic import ClassicDiagnostics


#: Limits behind the flags of the classic panel (display only: they never fail a run).
GEWEKE_Z = 1.96  # two-sided 5 % test of equal means (Geweke 1992)

PSRF_UPPER_LIMIT = 1.1  # the upper confidence limit "close to 1" of Gelman & Rubin (1992); BDA's 1.1

RAFTERY_DEPENDENCE_LIMIT = 5.0  # Raftery & Lewis (1992): I above 5 signals strong dependence


@dataclass(frozen=True)
class ClassicRow:
    """One parameter's classic diagnostics, compacted over chains for a table row (:func:`classic_rows`).

    ``psrf``/``psrf_upper``: Gelman-Rubin with coda's autoburnin, ``psrf_high``
    when the upper limit exceeds :data:`PSRF_UPPER_LIMIT`; ``rhat_nested`` (NaN
    without superchains) and ``nested_high`` (above the parameter's R-hat
    limit); ``geweke_max_abs_z`` over chains and ``geweke_outside`` the chains
    with ``|z| >`` :data:`GEWEKE_Z`; ``heidel_passed`` the chains passing both
    Heidelberger-Welch tests; the largest Raftery-Lewis ``N`` and ``I`` over
    chains and ``raftery_high`` when ``I >`` :data:`RAFTERY_DEPENDENCE_LIMIT`;
    coda's AR ``ess_ar`` and ``batch_se``; the rejection rate's range over
    chains; quantile ESS and MCSE at the report's quantiles; ``hdi`` and
    ``eti`` at ``ClassicDiagnostics.hdi_prob``; emcee's ``iat_emcee`` and
    ``iat_emcee_reliable`` (draws >= 50 tau).
    """

    name: str
    psrf: float
    psrf_upper: float
    psrf_high: bool
    rhat_nested: float
    nested_high: bool
    geweke_max_abs_z: float
    geweke_outside: int
    heidel_passed: int
    raftery_total_max: float
    raftery_dependence_max: float
    raftery_high: bool
    ess_ar: float
    batch_se: float
    rejection_min: float
    rejection_max: float
    ess_quantile: tuple[float, ...]
    mcse_quantile: tuple[float, ...]
    hdi: tuple[float, float]
    eti: tuple[float, float]
    iat_emcee: float
    iat_emcee_reliable: bool

    @staticmethod
    def columns(quantile_labels: Sequence[str], chains: int) -> list[str]:
        """CSV column names of :meth:`values`."""
        return [
            "psrf", "psrf_upper", "rhat_nested", "geweke_max_abs_z", "geweke_outside", "heidel_passed",
            "raftery_total_max", "raftery_dependence_max", "ess_ar", "batch_se", "rejection_rate_min",
            "rejection_rate_max", *(f"ess_q{q}" for q in quantile_labels), *(f"mcse_q{q}" for q in quantile_labels),
            "hdi_lower", "hdi_upper", "eti_lower", "eti_upper", "iat_emcee", "iat_emcee_reliable",
        ]  # fmt: skip

    def values(self) -> list[Any]:
        return [
            self.psrf, self.psrf_upper, self.rhat_nested, self.geweke_max_abs_z, self.geweke_outside,
            self.heidel_passed, self.raftery_total_max, self.raftery_dependence_max, self.ess_ar, self.batch_se,
            self.rejection_min, self.rejection_max, *self.ess_quantile, *self.mcse_quantile, *self.hdi, *self.eti,
            self.iat_emcee, self.iat_emcee_reliable,
        ]  # fmt: skip


def classic_rows(c: ClassicDiagnostics, max_rhat: Sequence[float]) -> tuple[ClassicRow, ...]:
    """Compact :class:`ClassicRow` per parameter of ``c``; ``max_rhat`` ``(n,)`` flags the nested R-hat."""
    with np.errstate(invalid="ignore"):
        absz = np.abs(c.geweke_z)
        gz = np.where(np.isnan(absz).all(axis=0), np.nan, np.nanmax(np.where(np.isnan(absz), -1.0, absz), axis=0))
        outside = (absz > GEWEKE_Z).sum(axis=0)
        heidel = (c.heidel.stationary & c.heidel.halfwidth_passed).sum(axis=0)

        def colmax(a: np.ndarray) -> np.ndarray:
            a = np.asarray(a, dtype=float)
            return np.where(np.isnan(a).all(axis=0), np.nan, np.nanmax(np.where(np.isnan(a), -np.inf, a), axis=0))

        total, dep = colmax(c.raftery.total), colmax(c.raftery.dependence)
        nested = np.full(len(c.names), np.nan) if c.rhat_nested is None else np.asarray(c.rhat_nested, dtype=float)
        rows = []
        for j, name in enumerate(c.names):
            rows.append(
                ClassicRow(
                    name=name,
                    psrf=float(c.gelman.psrf[j]),
                    psrf_upper=float(c.gelman.psrf_upper[j]),
                    psrf_high=bool(c.gelman.psrf_upper[j] > PSRF_UPPER_LIMIT),
                    rhat_nested=float(nested[j]),
                    nested_high=bool(nested[j] > max_rhat[j]),
                    geweke_max_abs_z=float(gz[j]),
                    geweke_outside=int(outside[j]),
                    heidel_passed=int(heidel[j]),
                    raftery_total_max=float(total[j]),
                    raftery_dependence_max=float(dep[j]),
                    raftery_high=bool(dep[j] > RAFTERY_DEPENDENCE_LIMIT),
                    ess_ar=float(c.ess_ar[j]),
                    batch_se=float(c.batch_se[j]),
                    rejection_min=float(np.min(c.rejection_rate[:, j])),
                    rejection_max=float(np.max(c.rejection_rate[:, j])),
                    ess_quantile=tuple(float(v) for v in c.ess_quantile[:, j]),
                    mcse_quantile=tuple(float(v) for v in c.mcse_quantile[:, j]),
                    hdi=(float(c.hdi[0, j]), float(c.hdi[1, j])),
                    eti=(float(c.eti[0, j]), float(c.eti[1, j])),
                    iat_emcee=float(c.iat_emcee[j]),
                    iat_emcee_reliable=bool(c.iat_emcee_reliable[j]),
                )
            )
    return tuple(rows)
