"""The diagnose report: everything ``mcmc diagnose`` shows, its JSON document and its CSV table.

:class:`Report` is built by :func:`mcmc.diagnostics.report.check.check` and
handed to a renderer; it never prints. The parts it carries live beside it,
one concern per module: the limits in :mod:`.thresholds`, the per-parameter
records and the worst-first order in :mod:`.parameters`, the checks with
their messages and advice in :mod:`.verdict`, the sampler's facts in
:mod:`.sampler`, the plot data in :mod:`.plots`, the compact classic rows in
:mod:`.classic_rows`. ``strict`` makes every warning fail the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.diagnostics.report.classic_rows import ClassicRow
from mcmc.diagnostics.report.parameters import Parameter, record, worst_first
from mcmc.diagnostics.report.plots import PlotData
from mcmc.diagnostics.report.sampler import Sampler
from mcmc.diagnostics.report.thresholds import MIN_ESS_PER_CHAIN, Thresholds
from mcmc.diagnostics.report.verdict import Check
from mcmc.diagnostics.stats import quantile_label

if TYPE_CHECKING:  # start-up: the classic diagnostics and the topic-model rule load only when needed
    from mcmc.diagnostics.report.lda_gate import TopicModelVerdict
    from mcmc.diagnostics.stats.classic import ClassicDiagnostics


SCHEMA = "mcmc.diagnose/1"  # the JSON document of Report.to_dict (docs/formats.md)

_TABLE_STATS = ("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "rhat", "rhat_split", "ssif", "ess_ssif")


@dataclass(frozen=True)
class WeightsSummary:
    """What the weights of weighted draws say (:func:`mcmc.diagnostics.report.check.check_weighted`).

    Attributes
    ----------
    kish_ess
        Kish's ``(sum w)^2 / sum w^2`` over every draw.
    pareto_k
        The Pareto ``k`` of the weights' upper tail (NaN when not computed).
    k_threshold
        ``min(1 - 1/log10 S, 0.7)``: the largest ``k`` with a reliable estimate from these ``S`` draws.
    k_min_draws
        ``10^(1 / (1 - k))``: the draws this ``k`` needs.
    draws
        ``S``, every draw of every chain.
    positive
        The draws of positive weight.
    """

    kish_ess: float
    pareto_k: float
    k_threshold: float
    k_min_draws: float
    draws: int
    positive: int

    def to_dict(self) -> dict[str, Any]:
        return {"kish_ess": self.kish_ess, "pareto_k": self.pareto_k, "k_threshold": self.k_threshold,
                "k_min_draws": self.k_min_draws, "draws": self.draws, "positive": self.positive}  # fmt: skip


@dataclass(frozen=True)
class Provenance:
    """How a report was made, for a reader who gets only the report (a pull request's HTML attachment).

    ``version`` of mcmc, ``created`` (ISO 8601, UTC), the ``command`` line, and
    each input file with the SHA-256 of its bytes (``None`` for standard
    input). Not part of the JSON document, which stays the same for the same
    draws.
    """

    version: str
    created: str
    command: str
    inputs: tuple[tuple[str, str | None], ...] = ()


@dataclass(frozen=True)
class Report:
    """Everything ``mcmc diagnose`` shows, for any renderer.

    ``draws`` is the ``(chain, draw, n)`` float array the statistics were
    computed on, in the order of ``parameters``; ``plot`` the data of the
    trace, rank and autocorrelation plots when they were asked for
    (:func:`mcmc.diagnostics.report.plots.plot_data`).
    ``worst`` indexes the failing parameters, worst first
    (:func:`~mcmc.diagnostics.report.parameters.rank_failing`); ``log_density``
    is the row of the sampler's ``lp`` statistic when the file has one;
    ``strict`` makes warnings fail the run. How to show it (format, columns,
    significant figures) is not the report's business: the command line hands
    its own :class:`mcmc.cli.render.RenderOptions` to the renderers. ``classic`` holds
    :func:`mcmc.diagnostics.stats.classic.classic_report`
    when asked for, and ``classic_rows`` its compact per-parameter summary.
    :meth:`to_dict` is the JSON document (schema :data:`SCHEMA`) and
    :meth:`to_table` the CSV table, both documented in ``docs/formats.md``.
    """

    source: tuple[str, ...]
    n_chains: int
    n_draws: int
    thresholds: Thresholds
    probs: tuple[float, ...]
    lags: tuple[int, ...]
    parameters: tuple[Parameter, ...]
    sampler: Sampler
    checks: tuple[Check, ...]
    notes: tuple[str, ...] = ()
    draws: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)), repr=False, compare=False)
    plot: PlotData | None = field(default=None, repr=False, compare=False)
    worst: tuple[int, ...] = ()
    log_density: Parameter | None = None
    strict: bool = False
    classic: ClassicDiagnostics | None = field(default=None, repr=False, compare=False)
    classic_rows: tuple[ClassicRow, ...] = ()
    kind: str = "chains"
    topic_model: TopicModelVerdict | None = field(default=None, repr=False, compare=False)
    weights: WeightsSummary | None = None
    #: The ensemble sampler (``"emcee"``) whose walkers the chains are, else ``None``
    #: (:func:`mcmc.diagnostics.report.vocabulary.ensemble_of`): its parameters carry ``iat_emcee``.
    ensemble: str | None = None
    #: How the report was made (:class:`Provenance`), when the command says (``--html``).
    provenance: Provenance | None = field(default=None, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        """Every error check passed (every check, warnings too, when ``strict``)."""
        return all(c.passed for c in self.checks if c.severity == "error" or self.strict)

    def failing(self) -> tuple[Parameter, ...]:
        """The parameters that failed (status ``nan``, ``inf``, ``rhat`` or ``ess``), worst first."""
        return tuple(self.parameters[i] for i in self.worst)

    def check(self, name: str) -> Check | None:
        """The check called ``name`` (``"divergences"``, ``"ebfmi"``, ...), or ``None`` when it was not run."""
        return next((c for c in self.checks if c.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """The report as the JSON document ``mcmc.diagnose/1`` (floats as they are; NaN stays NaN)."""
        t, s = self.thresholds, self.sampler
        return {
            "schema": SCHEMA,
            "source": list(self.source),
            "chains": self.n_chains,
            "draws": self.n_draws,
            "thresholds": {
                "max_rhat": float(t.max_rhat),
                "min_ess": None if t.min_ess is None else float(t.min_ess),
                "min_ess_per_chain": MIN_ESS_PER_CHAIN if t.ess_per_chain or t.min_ess is None else None,
                "max_divergences": int(t.max_divergences),
                "min_ebfmi": float(t.min_ebfmi),
                "max_treedepth_hits": int(t.max_treedepth_hits),
                "ssif_ratio": float(t.ssif_ratio),
                "max_ll_gap": float(t.max_ll_gap),
                "per_variable": {pattern: {"max_rhat": r, "min_ess": e} for pattern, r, e in t.per_variable},
            },
            "strict": self.strict,
            "passed": self.passed,
            "verdict": self.verdict(),
            "checks": [
                {
                    "name": c.name,
                    "passed": c.passed,
                    "severity": c.severity,
                    "message": c.message,
                    "parameters": list(c.parameters),
                    "advice": c.advice,
                }
                for c in self.checks
            ],  # fmt: skip
            "failing": [p.name for p in self.failing()],
            "sampler": {
                "acceptance": {
                    "per_chain": list(s.acceptance.per_chain),
                    "overall": s.acceptance.overall,
                    "source": s.acceptance.source,
                    "label": s.acceptance.label,
                    "judged": s.acceptance.judged,
                },
                "transitions": s.transitions,
                "divergences": s.divergences,
                "divergences_per_chain": None if s.divergences_per_chain is None else list(s.divergences_per_chain),
                "divergence_percent": s.divergence_percent,
                "max_treedepth": s.max_treedepth,
                "treedepth_hits": s.treedepth_hits,
                "ebfmi": None if s.ebfmi is None else list(s.ebfmi),
            },
            "notes": list(self.notes),
            "ensemble": self.ensemble,
            "log_density": None if self.log_density is None else record(self.log_density),
            "parameters": [record(p) for p in self.parameters],
            **({"classic": self.classic.to_dict()} if self.classic is not None else {}),
            **({"topic_model": self.topic_model.to_dict()} if self.topic_model is not None else {}),
            **({"weights": self.weights.to_dict()} if self.weights is not None else {}),
        }

    def to_table(self) -> tuple[list[str], list[list[Any]]]:
        """One row per scalar parameter (the log density first when present): column names and rows (the CSV).

        With classic diagnostics, each row goes on with :meth:`ClassicRow.values`
        (the log density's row leaves those empty).
        """
        columns = [
            "name", "variable", "mean", "sd", "mad", *self.quantile_labels, *_TABLE_STATS, "ssif_disagrees",
            *(f"acf_{k}" for k in self.lags), "iat", "acceptance", "status",
        ]  # fmt: skip

        def row(p: Parameter) -> list[Any]:
            return [
                p.name, p.variable, p.mean, p.sd, p.mad, *p.quantiles.values(),
                *(getattr(p, k) for k in _TABLE_STATS), p.ssif_disagrees, *p.acf.values(),
                p.iat, p.acceptance, p.status,
            ]  # fmt: skip

        rows = [row(p) for p in self.parameters]
        if self.classic_rows:
            extra = ClassicRow.columns(self.quantile_labels, self.n_chains)
            columns += extra
            rows = [r + c.values() for r, c in zip(rows, self.classic_rows, strict=True)]
        if self.log_density is not None:
            rows.insert(0, row(self.log_density) + [None] * (len(columns) - len(rows[0]) if rows else 0))
        return columns, rows

    def worst_first(self) -> tuple[Parameter, ...]:
        """The parameters from the worst to the best (:func:`worst_first`): what reports show first."""
        return tuple(self.parameters[i] for i in worst_first(self.parameters))

    @property
    def quantile_labels(self) -> tuple[str, ...]:
        return tuple(quantile_label(p) for p in self.probs)

    def verdict(self) -> str:
        """One line: ``PASS: ...`` listing what was checked, or ``FAIL: ...`` listing what failed."""
        if self.passed and self.kind == "weighted":
            line = "PASS: " + ", ".join(c.message for c in self.checks if c.passed)
            warnings = [c.name for c in self.checks if not c.passed]
            return line + (f" (warnings: {', '.join(warnings)})" if warnings else "")
        if self.passed and self.kind == "topic-model":
            line = "PASS: " + self.checks[0].message
            warnings = [c.name for c in self.checks if not c.passed]
            return line + (f" (warnings: {', '.join(warnings)})" if warnings else "")
        if self.passed:
            t = self.thresholds
            parts = [
                f"{len(self.parameters)} parameter{'s' if len(self.parameters) != 1 else ''}",
                f"R-hat <= {t.max_rhat:g}",
                f"bulk and tail ESS >= {t.min_ess_text}",
            ]
            parts += [c.message for c in self.checks if c.name in ("divergences", "ebfmi")]
            warnings = [c.name for c in self.checks if not c.passed]
            line = "PASS: " + ", ".join(parts)
            if warnings:
                line += f" (warnings: {', '.join(warnings)})"
            return line
        failed = [c for c in self.checks if not c.passed and (c.severity == "error" or self.strict)]
        strict_fail = self.strict and any(c.severity != "error" for c in failed)
        head = "FAIL (strict: warnings fail): " if strict_fail else "FAIL: "
        return head + "; ".join(c.message for c in failed)
