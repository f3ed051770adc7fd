"""CSV output of ``mcmc diagnose``: one row per scalar parameter (see docs/formats.md).

Columns: ``name, variable, mean, sd, mad``, one column per quantile (``5%``,
...), ``mcse_mean, mcse_sd, ess_bulk, ess_tail, rhat, rhat_split, ssif,
ess_ssif, ssif_disagrees``, ``acf_K`` per lag, ``iat, acceptance, status``.
Undefined values are empty fields (read as NA by R and NaN by pandas);
numbers are written with full precision (shortest round-trip repr).
"""

from __future__ import annotations

import csv
import math
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mcmc.diagnostics.report import Report

_STATS = ("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "rhat", "rhat_split", "ssif", "ess_ssif")


def header(report: Report) -> list[str]:
    return [
        "name", "variable", "mean", "sd", "mad",
        *report.quantile_labels, *_STATS, "ssif_disagrees",
        *(f"acf_{k}" for k in report.lags), "iat", "acceptance", "status",
    ]  # fmt: skip


def _f(value: float) -> str:
    return repr(value) if math.isfinite(value) else ("" if math.isnan(value) else ("inf" if value > 0 else "-inf"))


def render(report: Report, out: TextIO) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header(report))
    for p in report.parameters:
        w.writerow(
            [
                p.name, p.variable, _f(p.mean), _f(p.sd), _f(p.mad),
                *(_f(v) for v in p.quantiles.values()),
                *(_f(getattr(p, k)) for k in _STATS),
                "true" if p.ssif_disagrees else "false",
                *(_f(v) for v in p.acf.values()),
                _f(p.iat), _f(p.acceptance), p.status,
            ]
        )  # fmt: skip
