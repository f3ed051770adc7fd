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
    }
    doc = _clean(doc)
    doc["parameters"] = [
        {
            "name": p.name,
            "variable": p.variable,
            "mean": _f(p.mean),
            "sd": _f(p.sd),
            "mad": _f(p.mad),
            "quantiles": {k: _f(v) for k, v in p.quantiles.items()},
            "mcse_mean": _f(p.mcse_mean),
            "mcse_sd": _f(p.mcse_sd),
            "ess_bulk": _f(p.ess_bulk),
            "ess_tail": _f(p.ess_tail),
            "rhat": _f(p.rhat),
            "rhat_split": _f(p.rhat_split),
            "ssif": _f(p.ssif),
            "ess_ssif": _f(p.ess_ssif),
            "ssif_disagrees": p.ssif_disagrees,
            "acf": {str(k): _f(v) for k, v in p.acf.items()},
            "iat": _f(p.iat),
            "acceptance": _f(p.acceptance),
            "status": p.status,
        }
        for p in report.parameters
    ]
    return doc


def _f(value: float) -> float | None:
    return value if value - value == 0 else None  # NaN and +-inf fail x - x == 0


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def render(report: Report, out: TextIO) -> None:
    """Indented head, then one compact line per parameter.

    Readable and diff-friendly, and fast: ``indent`` forces the pure-Python
    encoder, which would dominate the run time for thousands of parameters.
    """
    doc = document(report)
    params = doc.pop("parameters")
    head = json.dumps(doc, indent=1, allow_nan=False)
    out.write(head[:-2] + ',\n "parameters": [')
    out.write(",".join("\n  " + json.dumps(p, allow_nan=False) for p in params))
    out.write("\n ]\n}\n")
