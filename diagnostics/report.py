"""The diagnose report and what it is made of: limits, per-parameter records, checks.

:class:`Report` is everything ``mcmc diagnose`` shows, built by
:func:`mcmc.diagnostics.check.check` and handed to a renderer; it never prints.
This module holds the report's types (:class:`Thresholds`, :class:`Parameter`,
:class:`Check`, :class:`Report`), one parameter's JSON record, and the order in
which parameters are shown, worst first (:func:`rank_failing`,
:func:`worst_first`). The parts it carries live beside it: the sampler's facts
in :mod:`mcmc.diagnostics.sampler`, the plot data in :mod:`mcmc.diagnostics.plots`,
the compact classic rows in :mod:`mcmc.diagnostics.classic_rows`, the check
messages and advice in :mod:`mcmc.diagnostics.verdict`.

The default limits R-hat <= 1.01 and bulk and tail ESS >= 100 per chain (400
for four chains, 100 for one) are those of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021),
"Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC", Bayesian Analysis 16(2). Per-variable limits
(``Thresholds.per_variable``) loosen or tighten R-hat and ESS for chosen
parameters; ``strict`` makes every warning fail the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.diagnostics.classic_rows import ClassicRow
from mcmc.diagnostics.selection import matches

if TYPE_CHECKING:
    from mcmc.diagnostics.classic import ClassicDiagnostics  # classic diagnostics load only when asked for
    from mcmc.diagnostics.lda_gate import TopicModelVerdict
    from mcmc.diagnostics.plots import PlotData
    from mcmc.diagnostics.sampler import Sampler


SCHEMA = "mcmc.diagnose/1"  # the JSON document of Report.to_dict (docs/formats.md)

STATUSES = ("ok", "rhat", "ess", "constant", "nan", "inf")

#: The ESS every chain must contribute when no total is given: Vehtari et al. (2021) ask for
#: bulk and tail ESS above 100 per chain (400 for the four chains of their examples).
MIN_ESS_PER_CHAIN = 100

_TABLE_STATS = ("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "rhat", "rhat_split", "ssif", "ess_ssif")


@dataclass(frozen=True)
class Thresholds:
    """Limits a run must meet to pass.

    Attributes
    ----------
    max_rhat
        Largest acceptable rank-normalized split R-hat (Vehtari et al. 2021: 1.01).
    min_ess
        Smallest acceptable bulk and tail ESS over all chains; ``None`` (the
        default) means :data:`MIN_ESS_PER_CHAIN` per chain (Vehtari et al.
        2021: 100 per chain, 400 for four chains), made concrete by
        :meth:`for_chains` when the number of chains is known.
    ess_per_chain
        Set by :meth:`for_chains` when ``min_ess`` came from the per-chain
        default (the reports then say "100 per chain").
    max_divergences
        Largest acceptable number of divergent transitions over all chains.
    min_ebfmi
        Smallest acceptable E-BFMI of any chain (Betancourt 2016: 0.3).
    max_treedepth_hits
        Transitions allowed to hit the maximum tree depth before a warning.
    ssif_ratio
        SSIF is flagged where its ESS clears ``min_ess``, the bulk ESS does not,
        and the two differ by more than this factor (1: whenever SSIF alone passes).
    max_ll_gap
        Topic models: nats per token by which a chain's mean log joint may
        fall below the best chain's (beyond two standard errors) before it
        fails as stuck in a poorer mode (:mod:`mcmc.diagnostics.lda_gate`).
    per_variable
        ``(pattern, max_rhat, min_ess)`` limits for the parameters a pattern
        selects (as ``--var``: an exact variable or scalar name, or a regular
        expression matching a whole one); ``None`` keeps the general limit. A
        later entry wins where patterns overlap.
    """

    max_rhat: float = 1.01
    min_ess: float | None = None
    max_divergences: int = 0
    min_ebfmi: float = 0.3
    max_treedepth_hits: int = 0
    ssif_ratio: float = 1.0
    per_variable: tuple[tuple[str, float | None, float | None], ...] = ()
    ess_per_chain: bool = False
    max_ll_gap: float = 0.05

    def __post_init__(self) -> None:
        # An infinite limit would turn a check off while the report still says it ran.
        if not 1.0 <= self.max_rhat < np.inf:
            raise UsageError(f"max-rhat must be a finite number of at least 1 (got {self.max_rhat})")
        if self.min_ess is not None and not 0 <= self.min_ess < np.inf:
            raise UsageError(f"min-ess must be a finite, non-negative number (got {self.min_ess})")
        if not self.max_divergences >= 0:
            raise UsageError(f"max-divergences must be non-negative (got {self.max_divergences})")
        if not 0 <= self.min_ebfmi:
            raise UsageError(f"min-ebfmi must be non-negative (got {self.min_ebfmi})")
        if not self.max_treedepth_hits >= 0:
            raise UsageError(f"max-treedepth-hits must be non-negative (got {self.max_treedepth_hits})")
        if not self.ssif_ratio >= 1:
            raise UsageError(f"ssif-ratio must be at least 1 (got {self.ssif_ratio})")
        if not 0 <= self.max_ll_gap < np.inf:
            raise UsageError(f"max-ll-gap must be a finite, non-negative number (got {self.max_ll_gap})")
        for pattern, rhat_limit, ess_limit in self.per_variable:
            if rhat_limit is not None and not 1.0 <= rhat_limit < np.inf:
                raise UsageError(f"per-variable {pattern!r}: max-rhat must be a finite number of at least 1 "
                                 f"(got {rhat_limit})")  # fmt: skip
            if ess_limit is not None and not 0 <= ess_limit < np.inf:
                raise UsageError(f"per-variable {pattern!r}: min-ess must be a finite, non-negative number "
                                 f"(got {ess_limit})")  # fmt: skip

    def for_chains(self, n_chains: int) -> Thresholds:
        """These limits with ``min_ess`` concrete: :data:`MIN_ESS_PER_CHAIN` per chain when none was given."""
        if self.min_ess is not None:
            return self
        return replace(self, min_ess=float(MIN_ESS_PER_CHAIN * max(n_chains, 1)), ess_per_chain=True)

    @property
    def min_ess_text(self) -> str:
        """``"400 (100 per chain)"`` for the per-chain default, else the limit: how reports state it."""
        if self.min_ess is None:
            return f"{MIN_ESS_PER_CHAIN} per chain"
        return f"{self.min_ess:g}" + (f" ({MIN_ESS_PER_CHAIN} per chain)" if self.ess_per_chain else "")

    def limits(self, names: Sequence[str], variables: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """R-hat and ESS limits per parameter ``(n,)`` each, and the ``per_variable`` patterns matching nothing.

        ``min_ess`` must be concrete (:meth:`for_chains`).
        """
        if self.min_ess is None:
            raise ValueError("Thresholds.limits needs a concrete min_ess: call for_chains(n_chains) first")
        max_rhat = np.full(len(names), float(self.max_rhat))
        min_ess = np.full(len(names), float(self.min_ess))
        unmatched = []
        for pattern, rhat_limit, ess_limit in self.per_variable:
            hit = matches(pattern, names, variables)
            if not hit.any():
                unmatched.append(pattern)
            if rhat_limit is not None:
                max_rhat[hit] = rhat_limit
            if ess_limit is not None:
                min_ess[hit] = ess_limit
        return max_rhat, min_ess, unmatched


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
    ones unless ``Thresholds.per_variable`` sets its own).
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


@dataclass(frozen=True)
class Check:
    """One check: its outcome and, if it concerns parameters, which ones failed.

    ``severity`` is ``"error"`` (a failure fails the run) or ``"warning"``
    (reported, never changes the exit code unless the report is strict).
    ``chains`` lists the chains a per-chain check failed in (E-BFMI).
    ``advice`` says what to do when it failed (:data:`ADVICE`), empty when it passed.
    """

    name: str
    passed: bool
    message: str
    parameters: tuple[str, ...] = ()
    severity: str = "error"
    chains: tuple[int, ...] = ()
    advice: str = ""


@dataclass(frozen=True)
class Report:
    """Everything ``mcmc diagnose`` shows, for any renderer.

    ``draws`` is the ``(chain, draw, n)`` float array the statistics were
    computed on, in the order of ``parameters``; ``plot`` the data of the
    trace, rank and autocorrelation plots when they were asked for
    (:func:`mcmc.diagnostics.plots.plot_data`). ``format`` is the output format a
    ``[tool.mcmc.diagnose]`` table or the caller asked for, if any.
    ``worst`` indexes the failing parameters, worst first (:func:`rank_failing`);
    ``log_density`` is the row of the sampler's ``lp`` statistic when the file
    has one; ``strict`` makes warnings fail the run. ``sig_figs`` (significant
    figures of every estimate instead of the digits its MCSE supports) and
    ``wide`` (every table column whatever the terminal width) are the display
    settings asked for. ``classic`` holds :func:`mcmc.diagnostics.classic.classic_report`
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
    format: str | None = None
    worst: tuple[int, ...] = ()
    log_density: Parameter | None = None
    strict: bool = False
    sig_figs: int | None = None
    wide: bool = False
    classic: ClassicDiagnostics | None = field(default=None, repr=False, compare=False)
    classic_rows: tuple[ClassicRow, ...] = ()
    kind: str = "chains"
    topic_model: TopicModelVerdict | None = field(default=None, repr=False, compare=False)

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
            "log_density": None if self.log_density is None else _record(self.log_density),
            "parameters": [_record(p) for p in self.parameters],
            **({"classic": self.classic.to_dict()} if self.classic is not None else {}),
            **({"topic_model": self.topic_model.to_dict()} if self.topic_model is not None else {}),
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
        if self.passed and self.kind in ("weighted", "topic-model"):
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


def _record(p: Parameter) -> dict[str, Any]:
    """One parameter's JSON object (``docs/formats.md``)."""
    return {
        "name": p.name, "variable": p.variable, "mean": p.mean, "sd": p.sd, "mad": p.mad,
        "quantiles": dict(p.quantiles),
        "mcse_mean": p.mcse_mean, "mcse_sd": p.mcse_sd, "ess_bulk": p.ess_bulk, "ess_tail": p.ess_tail,
        "rhat": p.rhat, "rhat_split": p.rhat_split, "ssif": p.ssif, "ess_ssif": p.ess_ssif,
        "ssif_disagrees": p.ssif_disagrees, "acf": {str(k): v for k, v in p.acf.items()},
        "iat": p.iat, "acceptance": p.acceptance, "status": p.status,
        "max_rhat": p.max_rhat, "min_ess": p.min_ess,
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


def quantile_label(p: float) -> str:
    """``0.05 -> "5%"``, ``0.025 -> "2.5%"`` (ArviZ's column naming)."""
    return f"{100 * p:.10g}%"
