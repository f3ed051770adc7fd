"""JSON output of ``mcmc diagnose``: schema ``mcmc.diagnose/1`` (see docs/formats.md).

Strict JSON: undefined and infinite values are ``null``. Keys are stable within
a schema version; new keys may be added, none removed or renamed.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from mcmc.diagnostics.report import Report

SCHEMA = "mcmc.diagnose/1"


def document(report: Report) -> dict[str, Any]:
    """The report as plain JSON-ready Python objects (non-finite floats -> None)."""
    t = report.thresholds
    s = report.sampler
    doc = {
        "schema": SCHEMA,
        "source": list(report.source),
        "chains": report.n_chains,
        "draws": report.n_draws,
        "thresholds": {
            "max_rhat": float(t.max_rhat),
            "min_ess": float(t.min_ess),
            "max_divergences": int(t.max_divergences),
            "min_ebfmi": float(t.min_ebfmi),
            "max_treedepth_hits": int(t.max_treedepth_hits),
            "ssif_ratio": float(t.ssif_ratio),
        },
        "passed": report.passed,
        "verdict": report.verdict(),
        "checks": [
            {
                "name": c.name,
                "passed": c.passed,
                "severity": c.severity,
                "message": c.message,
                "parameters": list(c.parameters),
            }
            for c in report.checks
        ],
        "sampler": {
            "acceptance": {
                "per_chain": list(s.acceptance.per_chain),
                "overall": s.acceptance.overall,
                "source": s.acceptance.source,
            },
            "transitions": s.transitions,
            "divergences": s.divergences,
            "divergences_per_chain": None if s.divergences_per_chain is None else list(s.divergences_per_chain),
            "divergence_percent": s.divergence_percent,
            "max_treedepth": s.max_treedepth,
            "treedepth_hits": s.treedepth_hits,
            "ebfmi": None if s.ebfmi is None else list(s.ebfmi),
        },
        "notes": list(report.notes),
        "parameters": [
            {
                "name": p.name,
                "variable": p.variable,
                "mean": p.mean,
                "sd": p.sd,
                "mad": p.mad,
                "quantiles": dict(p.quantiles),
                "mcse_mean": p.mcse_mean,
                "mcse_sd": p.mcse_sd,
                "ess_bulk": p.ess_bulk,
                "ess_tail": p.ess_tail,
                "rhat": p.rhat,
                "rhat_split": p.rhat_split,
                "ssif": p.ssif,
                "ess_ssif": p.ess_ssif,
                "ssif_disagrees": p.ssif_disagrees,
                "acf": {str(k): v for k, v in p.acf.items()},
                "iat": p.iat,
                "acceptance": p.acceptance,
                "status": p.status,
            }
            for p in report.parameters
        ],
    }
    return _clean(doc)


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def render(report: Report, out: TextIO) -> None:
    json.dump(document(report), out, indent=1, allow_nan=False)
    out.write("\n")
