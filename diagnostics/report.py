"""The diagnose report: per-parameter statistics, sampler checks and one verdict.

This layer decides; it never prints. :func:`check` takes a :class:`~mcmc.core.chains.Chains`,
flattens the selected variables into one ``(chain, draw, n)`` array, calls
:func:`mcmc.diagnostics.stats.summarize` once for all ``n`` scalar parameters, and
turns the numbers into records, checks and a verdict that the command line renders.

Decisions follow the literature and the tools practitioners already trust:

* R-hat is the rank-normalized split R-hat, the maximum of the bulk and folded
  versions, and ESS is reported for the bulk and the tails; the defaults
  R-hat <= 1.01 and ESS >= 400 (100 per chain for four chains) are those of
  Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization,
  folding, and localization: an improved R-hat for assessing convergence of
  MCMC", Bayesian Analysis 16(2).
* Sampler checks have the semantics of CmdStan's ``diagnose``: divergent
  transitions (any is a failure by default), transitions that hit the maximum
  tree depth (an efficiency warning, not a validity failure), and the energy
  Bayesian fraction of missing information per chain,
  ``E-BFMI = sum_n (E_n - E_{n-1})^2 / sum_n (E_n - mean E)^2`` with the
  nominal threshold 0.3 (Betancourt 2016, "Diagnosing suboptimal cotangent
  disintegrations in Hamiltonian Monte Carlo", arXiv:1604.00695).
* SSIF, the sample size inflation factor ``(1 + r1) / (1 - r1)`` from the
  lag-1 autocorrelation, is exact for AR(1) chains only; its ESS is shown beside
  bulk ESS and flagged only where trusting it would mislead: its ESS clears
  ``min_ess`` and the rank-normalized bulk ESS does not (and they differ by more
  than ``ssif_ratio``, 1 by default). Elsewhere a disagreement changes no
  decision, and on ordinary NUTS runs (negative lag-1 autocorrelation, long
  positive tails) SSIF and bulk ESS routinely differ by more than 2x.
* Every failed check carries advice, as CmdStan's ``diagnose`` and ArviZ give
  it (:data:`ADVICE`); failing parameters are ranked worst first
  (:attr:`Report.worst`); the log density (``lp``, CmdStan's ``lp__``) gets
  its own row when the file has it, judged like a parameter but only warned
  about (it is not a parameter of the model); per-variable limits
  (``Thresholds.per_variable``) loosen or tighten R-hat and ESS for chosen
  parameters; ``strict`` makes every warning fail the run.
* Acceptance comes from the sampler's ``acceptance_rate`` statistic when the
  file has it; otherwise it is estimated from the draws as the fraction of
  transitions that changed at least one coordinate (exact for Metropolis-type
  samplers with continuous proposals, an upper bound on nothing else). Each
  parameter also gets its own move rate, which is what matters for
  component-wise (Gibbs, Metropolis-within-Gibbs) samplers.

Every parameter gets an explicit status: ``nan`` or ``inf`` (non-finite draws),
``constant`` (one value in every draw of every chain: reported, not a failure,
as for fixed entries of a Cholesky factor), ``rhat``, ``ess``, or ``ok``. When
every selected parameter is constant the run fails (check ``stuck``): nothing
moved, so R-hat and ESS, undefined, cannot vouch for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import UsageError
from mcmc.diagnostics.stats import DEFAULT_LAGS, DEFAULT_PROBS

if TYPE_CHECKING:  # classic diagnostics load only when asked for
    from mcmc.diagnostics.classic import ClassicDiagnostics

SCHEMA = "mcmc.diagnose/1"  # the JSON document of Report.to_dict (docs/formats.md)
#: What to do about each failed check, in the words of CmdStan's ``diagnose``, Stan's
#: warnings guide and ArviZ; carried by :attr:`Check.advice` so every renderer shows it.
ADVICE = {
    "finite": "non-finite draws mean the log density or a transform overflowed: check the model and its initial values",
    "rhat": "the chains have not mixed: run a longer warm-up, start the chains from better (dispersed but "
    "sensible) initial values, or look for multimodality; more draws help only a slowly mixing chain",
    "ess": "too few effective draws for reliable estimates: draw more (--draws), or make each draw worth more "
    "(a better tuned sampler, a reparameterization that removes strong correlations)",
    "stuck": "the sampler never accepted a move: check the initial values, the step size or proposal scale, "
    "and the log density",
    "constant": "a parameter fixed by construction (a Cholesky factor's zero) is fine; otherwise the sampler "
    "never moved it",
    "divergences": "raise the target acceptance (--target-accept 0.9 to 0.99; CmdStan's adapt delta) so the "
    "step size shrinks, or reparameterize: the non-centered form for hierarchical models",
    "treedepth": "an efficiency problem, not a bias: raise the maximum tree depth, or reparameterize to remove "
    "strong correlations or scale differences",
    "ebfmi": "the momentum resampling explores the energy poorly (Betancourt 2016): reparameterize (the "
    "non-centered form for hierarchical models, a transform for heavy tails); more warm-up can help a "
    "badly adapted metric",
    "ssif": "trust the bulk ESS: SSIF's ESS assumes an AR(1) chain and here clears the ESS limit the "
    "rank-normalized ESS does not",
    "lp": "the log density has not mixed even where the parameters look fine: run longer or look at the "
    "parameters the log density depends on",
}
STATUSES = ("ok", "rhat", "ess", "constant", "nan", "inf")
_TABLE_STATS = ("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "rhat", "rhat_split", "ssif", "ess_ssif")
ACCEPTANCE_FROM_STATS = "sampler statistics"
ACCEPTANCE_FROM_DRAWS = "estimated from draws"
DEFAULT_MAX_TREEDEPTH = 10  # CmdStan's and PyMC's default when the file does not say
_MAX_NAMES = 6  # failing parameters named in the verdict line before "and N more"


@dataclass(frozen=True)
class Thresholds:
    """Limits a run must meet to pass.

    Attributes
    ----------
    max_rhat
        Largest acceptable rank-normalized split R-hat (Vehtari et al. 2021: 1.01).
    min_ess
        Smallest acceptable bulk and tail ESS (Vehtari et al. 2021: 400, i.e. 100
        per chain for four chains).
    max_divergences
        Largest acceptable number of divergent transitions over all chains.
    min_ebfmi
        Smallest acceptable E-BFMI of any chain (Betancourt 2016: 0.3).
    max_treedepth_hits
        Transitions allowed to hit the maximum tree depth before a warning.
    ssif_ratio
        SSIF is flagged where its ESS clears ``min_ess``, the bulk ESS does not,
        and the two differ by more than this factor (1: whenever SSIF alone passes).
    per_variable
        ``(pattern, max_rhat, min_ess)`` limits for the parameters a pattern
        selects (as ``--var``: an exact variable or scalar name, or a regular
        expression matching a whole one); ``None`` keeps the general limit. A
        later entry wins where patterns overlap.
    """

    max_rhat: float = 1.01
    min_ess: float = 400
    max_divergences: int = 0
    min_ebfmi: float = 0.3
    max_treedepth_hits: int = 0
    ssif_ratio: float = 1.0
    per_variable: tuple[tuple[str, float | None, float | None], ...] = ()

    def __post_init__(self) -> None:
        if not self.max_rhat >= 1.0:
            raise UsageError(f"max-rhat must be at least 1 (got {self.max_rhat})")
        if not self.min_ess >= 0:
            raise UsageError(f"min-ess must be non-negative (got {self.min_ess})")
        if not self.max_divergences >= 0:
            raise UsageError(f"max-divergences must be non-negative (got {self.max_divergences})")
        if not 0 <= self.min_ebfmi:
            raise UsageError(f"min-ebfmi must be non-negative (got {self.min_ebfmi})")
        if not self.max_treedepth_hits >= 0:
            raise UsageError(f"max-treedepth-hits must be non-negative (got {self.max_treedepth_hits})")
        if not self.ssif_ratio >= 1:
            raise UsageError(f"ssif-ratio must be at least 1 (got {self.ssif_ratio})")
        for pattern, rhat_limit, ess_limit in self.per_variable:
            if rhat_limit is not None and not rhat_limit >= 1.0:
                raise UsageError(f"per-variable {pattern!r}: max-rhat must be at least 1 (got {rhat_limit})")
            if ess_limit is not None and not ess_limit >= 0:
                raise UsageError(f"per-variable {pattern!r}: min-ess must be non-negative (got {ess_limit})")

    def limits(self, names: Sequence[str], variables: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """R-hat and ESS limits per parameter ``(n,)`` each, and the ``per_variable`` patterns matching nothing."""
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
class Acceptance:
    """Acceptance rate per chain and overall, and where it came from.

    ``source`` is ``"sampler statistics"`` (mean of ``acceptance_rate``) or
    ``"estimated from draws"`` (fraction of transitions that moved).
    ``outliers`` are the chains whose acceptance lies beyond Tukey's fences
    (1.5 interquartile ranges outside the quartiles of the chains), what a
    compact display of many chains names beside the range.
    """

    per_chain: tuple[float, ...]
    overall: float
    source: str
    outliers: tuple[int, ...] = ()


@dataclass(frozen=True)
class Sampler:
    """Sampler-level facts behind the CmdStan-style checks.

    Fields are ``None`` when the file lacks the statistic they need
    (``diverging``, ``tree_depth``, ``energy``).
    """

    acceptance: Acceptance
    transitions: int
    divergences: int | None = None
    divergences_per_chain: tuple[int, ...] | None = None
    max_treedepth: int | None = None
    treedepth_hits: int | None = None
    ebfmi: tuple[float, ...] | None = None

    @property
    def divergence_percent(self) -> float | None:
        if self.divergences is None or self.transitions == 0:
            return None
        return 100.0 * self.divergences / self.transitions


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
    (:func:`plot_data`). ``format`` is the output format a
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
                "min_ess": float(t.min_ess),
                "max_divergences": int(t.max_divergences),
                "min_ebfmi": float(t.min_ebfmi),
                "max_treedepth_hits": int(t.max_treedepth_hits),
                "ssif_ratio": float(t.ssif_ratio),
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
        if self.passed:
            t = self.thresholds
            parts = [
                f"{len(self.parameters)} parameter{'s' if len(self.parameters) != 1 else ''}",
                f"R-hat <= {t.max_rhat:g}",
                f"bulk and tail ESS >= {t.min_ess:g}",
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


def quantile_label(p: float) -> str:
    """``0.05 -> "5%"``, ``0.025 -> "2.5%"`` (ArviZ's column naming)."""
    return f"{100 * p:.10g}%"


# --------------------------------------------------------------------------- selection


@dataclass(frozen=True)
class Selection:
    """Scalar parameters chosen from a :class:`Chains`, in output order.

    ``items`` holds ``(variable, flat_indices)`` per selected variable;
    ``names``/``variables`` hold one entry per scalar parameter, and ``keys``
    its ``(variable, index tuple)``: the position that identifies it whatever
    labels the source gives it (``theta[0]`` here, ``theta[1]`` in CmdStan).
    """

    items: tuple[tuple[str, tuple[int, ...]], ...]
    names: tuple[str, ...]
    variables: tuple[str, ...]
    shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def keys(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        return tuple(
            (v, tuple(int(k) for k in np.unravel_index(i, self.shapes[v])) if self.shapes[v] else ())
            for v, idx in self.items
            for i in idx
        )


def select(chains: Chains, var: Sequence[str] | None = None, *, missing_ok: bool = False) -> Selection:
    """Choose scalar parameters by variable or scalar name, exactly or by regex (full match).

    A pattern equal to a name selects it; otherwise it is a regular expression
    that must match a whole variable name (all its components) or a whole
    scalar name such as ``theta[0]`` or ``theta[Choate]`` (names carry the
    source's labels, :meth:`Chains.scalar_names`). An exact name may be typed
    with or without spaces after the commas (``M[1,2]``, ``M[x, p]``). Raises
    :class:`UsageError` listing the available variables when a pattern matches
    nothing, unless ``missing_ok``.
    """
    all_names = {v: chains.scalar_names(v) for v in chains.posterior}
    chosen: dict[str, set[int]] = {}
    for pattern in var or ():
        regex = _compile(pattern)
        typed = _squeeze(pattern)
        hit = False
        for v, names in all_names.items():
            if pattern == v or (regex is not None and regex.fullmatch(v)):
                chosen.setdefault(v, set()).update(range(len(names)))
                hit = True
                continue
            for i, name in enumerate(names):
                if typed == _squeeze(name) or (regex is not None and regex.fullmatch(name)):
                    chosen.setdefault(v, set()).add(i)
                    hit = True
        if not hit and not missing_ok:
            available = ", ".join(all_names)
            raise UsageError(f"--var {pattern!r} matches no variable or parameter; available variables: {available}")
    if not var:
        chosen = {v: set(range(len(names))) for v, names in all_names.items()}
    items, names, variables = [], [], []
    for v in chains.posterior:  # file order, not pattern order, so output is stable
        if v in chosen:
            idx = tuple(sorted(chosen[v]))
            items.append((v, idx))
            names += [all_names[v][i] for i in idx]
            variables += [v] * len(idx)
    shapes = {v: chains.posterior[v].shape[2:] for v, _ in items}
    return Selection(tuple(items), tuple(names), tuple(variables), shapes)


def select_keys(chains: Chains, keys: Sequence[tuple[str, tuple[int, ...]]]) -> Selection:
    """The parameters at ``keys`` (:attr:`Selection.keys`) of ``chains``, in that order, where present.

    How ``compare`` pairs two runs: by variable and index, so a CmdStan run
    (``theta[1]``, 1-based) and this project's (``theta[0]``) meet.
    """
    items: list[tuple[str, list[int]]] = []
    for v, index in keys:
        arr = chains.posterior.get(v)
        if arr is None or len(index) != arr.ndim - 2 or not all(0 <= k < n for k, n in zip(index, arr.shape[2:])):
            continue
        flat = int(np.ravel_multi_index(index, arr.shape[2:])) if index else 0
        if items and items[-1][0] == v:
            items[-1][1].append(flat)
        else:
            items.append((v, [flat]))
    names: list[str] = []
    variables: list[str] = []
    for v, idx in items:
        all_names = chains.scalar_names(v)
        names += [all_names[i] for i in idx]
        variables += [v] * len(idx)
    shapes = {v: chains.posterior[v].shape[2:] for v, _ in items}
    return Selection(tuple((v, tuple(idx)) for v, idx in items), tuple(names), tuple(variables), shapes)


def matches(pattern: str, names: Sequence[str], variables: Sequence[str]) -> np.ndarray:
    """Which scalar parameters ``pattern`` selects, as :func:`select` reads a ``--var`` pattern; bool ``(n,)``."""
    regex = _compile(pattern)
    typed = _squeeze(pattern)
    return np.array(
        [
            pattern == v
            or typed == _squeeze(name)
            or (regex is not None and (regex.fullmatch(v) is not None or regex.fullmatch(name) is not None))
            for name, v in zip(names, variables, strict=True)
        ],
        dtype=bool,
    )


def _squeeze(name: str) -> str:
    """``M[1, 2]`` and ``M[1,2]`` alike: ArviZ and CmdStan space a multi-index differently."""
    return re.sub(r",\s+", ",", name) if "[" in name else name


def _compile(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None  # not a regex (e.g. "theta[0"): exact names only


def flatten(chains: Chains, selection: Selection) -> np.ndarray:
    """Stack the selected components into one float64 array ``(chain, draw, n)``.

    A view of the chains (no copy) when the selection is one whole float64
    variable: read it, never write to it.
    """
    parts = []
    for v, idx in selection.items:
        arr = chains.posterior[v]
        flat = arr.reshape(arr.shape[0], arr.shape[1], -1)
        if len(idx) != flat.shape[2]:
            flat = flat[:, :, list(idx)]
        parts.append(flat)
    if not parts:
        return np.empty((chains.n_chains, chains.n_draws, 0))
    # one variable taken whole (the common case): no copy of what may be hundreds of megabytes
    stacked = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=2)
    return np.ascontiguousarray(stacked, dtype=np.float64)


# --------------------------------------------------------------------------- the report


def check(
    chains: Chains,
    *,
    var: Sequence[str] | None = None,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen, so a shared default is safe
    probs: Sequence[float] = DEFAULT_PROBS,
    lags: Sequence[int] = DEFAULT_LAGS,
    source: Sequence[str] = (),
) -> Report:
    """Diagnose ``chains``: statistics for every selected scalar, sampler checks, verdict.

    Parameters
    ----------
    chains
        Draws ``(chain, draw, *shape)`` per variable, optional sampler statistics.
    var
        Variable or scalar names, or regular expressions (full match); all when empty.
    thresholds
        Limits of the checks.
    probs
        Quantile probabilities, each strictly between 0 and 1.
    lags
        Autocorrelation lags (non-negative integers).
    source
        The file names, recorded in the report.

    Returns
    -------
    Report
    """
    # Duplicates would collapse in the label -> value maps and misalign CSV columns.
    probs = tuple(dict.fromkeys(float(p) for p in probs))
    lags = tuple(dict.fromkeys(int(k) for k in lags))
    if not probs or not all(0 < p < 1 for p in probs):
        raise UsageError(f"quantiles must lie strictly between 0 and 1 (got {', '.join(map(str, probs))})")
    if not lags or any(k < 0 for k in lags):
        raise UsageError(f"lags must be non-negative integers (got {', '.join(map(str, lags))})")

    selection = select(chains, var)
    x = flatten(chains, selection)
    n_chains, n_draws, _ = x.shape
    max_rhat, min_ess, unmatched = thresholds.limits(selection.names, selection.variables)
    params = _parameters(x, selection.names, selection.variables, probs, lags, thresholds, max_rhat, min_ess)
    log_density = None
    lp = chains.sample_stats.get("lp")
    if lp is not None and np.shape(lp)[:2] == (n_chains, n_draws):
        # Its own summarize call: stacking it onto x would copy every draw.
        lp_x = np.asarray(lp, dtype=np.float64).reshape(n_chains, n_draws, 1)
        limits = np.array([float(thresholds.max_rhat)]), np.array([float(thresholds.min_ess)])
        log_density = _parameters(lp_x, ["lp"], ["lp"], probs, lags, thresholds, *limits)[0]
    sampler = sampler_summary(chains)
    notes = []
    if n_chains == 1:
        notes.append("1 chain: R-hat compares the two halves of the chain (split R-hat)")
    if n_draws < 4:
        notes.append(f"{n_draws} draw{'s' if n_draws != 1 else ''} per chain: R-hat and ESS need at least 4")
    elif n_draws < 4 * max(lags):
        notes.append(f"autocorrelations at lags beyond {n_draws // 4} rest on few pairs of draws")
    for pattern in unmatched:
        notes.append(f"per-variable limits for {pattern!r} match no parameter")
    return Report(
        source=tuple(source),
        n_chains=n_chains,
        n_draws=n_draws,
        thresholds=thresholds,
        probs=probs,
        lags=lags,
        parameters=params,
        sampler=sampler,
        checks=tuple(_checks(params, sampler, thresholds, log_density)),
        notes=tuple(notes),
        draws=x,
        worst=rank_failing(params),
        log_density=log_density,
    )


def rank_failing(params: Sequence[Parameter]) -> tuple[int, ...]:
    """Indices of the failing parameters, worst first.

    Non-finite draws first, then R-hat failures by how far R-hat exceeds the
    parameter's limit, relative to the limit's own distance from 1 (an
    undefined R-hat counts as worst), then ESS failures by the smaller of bulk
    and tail ESS as a fraction of the limit (smallest first). Ties keep the
    file's order.
    """

    def badness(p: Parameter) -> tuple[int, float]:
        if p.status in ("nan", "inf"):
            return 0, 0.0
        if p.status == "rhat":
            excess = (p.rhat - 1.0) / max(p.max_rhat - 1.0, 1e-12)
            return 1, -excess if np.isfinite(excess) else -np.inf
        worst_ess = min(p.ess_bulk, p.ess_tail) / p.min_ess if p.min_ess > 0 else 0.0
        return 2, worst_ess if np.isfinite(worst_ess) else -np.inf

    failing = [i for i, p in enumerate(params) if p.status in ("nan", "inf", "rhat", "ess")]
    return tuple(sorted(failing, key=lambda i: badness(params[i])))


def _parameters(
    x: np.ndarray,
    names: Sequence[str],
    variables: Sequence[str],
    probs: Sequence[float],
    lags: Sequence[int],
    thresholds: Thresholds,
    max_rhat: np.ndarray,
    min_ess: np.ndarray,
) -> tuple[Parameter, ...]:
    """One :class:`Parameter` per column of ``x (chain, draw, n)``, judged by the limits ``(n,)``."""
    from mcmc.diagnostics import stats

    n_draws = x.shape[1]
    s = stats.summarize(x, probs=probs, lags=lags)
    flags = {k: np.asarray(s[k], dtype=bool) for k in ("constant", "nan", "inf")}

    with np.errstate(invalid="ignore", divide="ignore"):
        moved = x[:, 1:, :] != x[:, :-1, :]
        move_rate = moved.mean(axis=(0, 1)) if n_draws > 1 else np.full(x.shape[2], np.nan)
        ess_bulk = np.asarray(s["ess_bulk"], dtype=float)
        ess_ssif = np.asarray(s["ess_ssif"], dtype=float)
        # Only where SSIF alone would pass a parameter the rank ESS fails does
        # the disagreement change a decision (issue 10: elsewhere it is noise).
        disagrees = (ess_ssif >= min_ess) & ~(ess_bulk >= min_ess) & (ess_ssif > thresholds.ssif_ratio * ess_bulk)

    status = _statuses(s, flags, max_rhat, min_ess)
    judged = np.isin(np.asarray(status, dtype=object), ("rhat", "ess"))
    disagrees &= judged
    with np.errstate(invalid="ignore"):
        bulk_low = (judged & ~(ess_bulk >= min_ess)).tolist()
        tail_low = (judged & ~(np.asarray(s["ess_tail"], dtype=float) >= min_ess)).tolist()
    quants = np.asarray(s["quantiles"], dtype=float)
    acf = np.asarray(s["acf"], dtype=float)
    qlabels = [quantile_label(p) for p in probs]
    cols = {k: np.asarray(s[k], dtype=float).tolist() for k in _SCALAR_KEYS}
    qt, at = quants.T.tolist(), acf.tolist()
    mv, dis = move_rate.tolist(), disagrees.tolist()
    mr, me = max_rhat.tolist(), min_ess.tolist()
    return tuple(
        Parameter(
            name=name,
            variable=variable,
            mean=cols["mean"][i],
            sd=cols["sd"][i],
            mad=cols["mad"][i],
            quantiles=dict(zip(qlabels, qt[i], strict=True)),
            mcse_mean=cols["mcse_mean"][i],
            mcse_sd=cols["mcse_sd"][i],
            ess_bulk=cols["ess_bulk"][i],
            ess_tail=cols["ess_tail"][i],
            rhat=cols["rhat"][i],
            rhat_split=cols["rhat_split"][i],
            ssif=cols["ssif"][i],
            ess_ssif=cols["ess_ssif"][i],
            ssif_disagrees=bool(dis[i]),
            acf=dict(zip(lags, at[i], strict=True)),
            iat=cols["iat"][i],
            acceptance=mv[i],
            status=status[i],
            ess_bulk_low=bulk_low[i],
            ess_tail_low=tail_low[i],
            max_rhat=mr[i],
            min_ess=me[i],
        )
        for i, (name, variable) in enumerate(zip(names, variables, strict=True))
    )


_SCALAR_KEYS = (
    "mean", "sd", "mad", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail",
    "rhat", "rhat_split", "ssif", "ess_ssif", "iat",
)  # fmt: skip


def _statuses(
    s: Mapping[str, Any], flags: Mapping[str, np.ndarray], max_rhat: np.ndarray, min_ess: np.ndarray
) -> list[str]:
    rhat = np.asarray(s["rhat"], dtype=float)
    bulk, tail = np.asarray(s["ess_bulk"], dtype=float), np.asarray(s["ess_tail"], dtype=float)
    with np.errstate(invalid="ignore"):
        # An undefined (NaN) R-hat or ESS on finite, non-constant draws (too few
        # draws, chains stuck at different values) cannot establish convergence.
        bad_rhat = ~(rhat <= max_rhat)
        bad_ess = ~((bulk >= min_ess) & (tail >= min_ess))
    # Later assignments win: the most fundamental problem names the status.
    status = np.full(rhat.shape, "ok", dtype=object)
    status[bad_ess] = "ess"
    status[bad_rhat] = "rhat"
    status[flags["constant"]] = "constant"
    status[flags["inf"]] = "inf"
    status[flags["nan"]] = "nan"
    return status.tolist()


def sampler_summary(chains: Chains) -> Sampler:
    """Acceptance, divergences, tree-depth hits and E-BFMI from the sampler statistics."""
    st = chains.sample_stats
    n_chains, n_draws = chains.n_chains, chains.n_draws
    with np.errstate(invalid="ignore", divide="ignore"):
        if "acceptance_rate" in st:
            a = np.asarray(st["acceptance_rate"], dtype=float)
            ok = np.isfinite(a)
            per_chain = np.where(ok, a, 0.0).sum(axis=1) / ok.sum(axis=1)
            overall = np.where(ok, a, 0.0).sum() / ok.sum()
            acceptance = Acceptance(
                tuple(per_chain.tolist()), float(overall), ACCEPTANCE_FROM_STATS, _outliers(per_chain)
            )
        else:
            moved = np.zeros((n_chains, max(n_draws - 1, 0)), dtype=bool)
            for arr in chains.posterior.values():  # few variables; each is vectorised over chains
                flat = arr.reshape(n_chains, n_draws, -1)
                moved |= (flat[:, 1:] != flat[:, :-1]).any(axis=2)
            per_chain = moved.mean(axis=1) if n_draws > 1 else np.full(n_chains, np.nan)
            overall = moved.mean() if n_draws > 1 else np.nan
            acceptance = Acceptance(
                tuple(per_chain.tolist()), float(overall), ACCEPTANCE_FROM_DRAWS, _outliers(per_chain)
            )

        kwargs: dict[str, Any] = {}
        if "diverging" in st:
            div = np.asarray(st["diverging"]) != 0
            kwargs["divergences"] = int(div.sum())
            kwargs["divergences_per_chain"] = tuple(int(v) for v in div.sum(axis=1))
        if "tree_depth" in st:
            # One value per file when CmdStan files were run with different max_depth.
            depths = np.atleast_1d(np.asarray(chains.attrs.get("max_treedepth", DEFAULT_MAX_TREEDEPTH), dtype=float))
            per_chain = depths if depths.size == n_chains else np.full(n_chains, depths.min())
            kwargs["max_treedepth"] = int(per_chain.min())
            kwargs["treedepth_hits"] = int((np.asarray(st["tree_depth"]) >= per_chain[:, None]).sum())
        if "energy" in st:
            kwargs["ebfmi"] = tuple(ebfmi(np.asarray(st["energy"], dtype=float)).tolist())
    return Sampler(acceptance=acceptance, transitions=n_chains * n_draws, **kwargs)


def _outliers(values: np.ndarray) -> tuple[int, ...]:
    """Indices beyond Tukey's fences (1.5 IQR outside the quartiles); none for fewer than 4 values."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    if ok.sum() < 4:
        return ()
    q1, q3 = np.percentile(v[ok], [25, 75])
    fence = 1.5 * (q3 - q1)
    return tuple(np.flatnonzero(ok & ((v < q1 - fence) | (v > q3 + fence))).tolist())


def ebfmi(energy: np.ndarray) -> np.ndarray:
    """Energy Bayesian fraction of missing information per chain.

    Parameters
    ----------
    energy
        Hamiltonian energy at each transition, shape ``(chain, draw)``.

    Returns
    -------
    ndarray
        ``(chain,)``: ``sum_n (E_n - E_{n-1})^2 / sum_n (E_n - mean E)^2``, as
        CmdStan's ``diagnose`` computes it (Betancourt 2016); NaN when undefined.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        num = np.square(np.diff(energy, axis=1)).sum(axis=1)
        den = np.square(energy - energy.mean(axis=1, keepdims=True)).sum(axis=1)
        return num / den


def rank_band(draws: int, bins: int, z: float = 2.576) -> tuple[float, float]:
    """Expected count and half-width of a pointwise band for one chain's rank-histogram bin.

    Under convergence a bin's count is Binomial(``draws``, 1 / ``bins``); the
    band is its normal approximation, ``draws / bins +- z sd`` (``z = 2.576``:
    99 %).

    Returns
    -------
    expected, half_width : float
    """
    p = 1.0 / bins
    return draws * p, z * float(np.sqrt(draws * p * (1.0 - p)))


def rank_histograms(x: np.ndarray, bins: int) -> np.ndarray:
    """Counts of pooled ranks per chain, the data of a rank plot (Vehtari et al. 2021).

    Parameters
    ----------
    x
        Draws ``(chain, draw, n)``.
    bins
        Number of equal-width rank bins.

    Returns
    -------
    ndarray
        ``(n, chain, bins)`` integer counts. Under convergence every chain's
        histogram is uniform with ``draw / bins`` per bin.
    """
    c, d, n = x.shape
    total = c * d
    pooled = x.transpose(2, 0, 1).reshape(n, total)
    order = np.argsort(pooled, axis=1, kind="stable")
    srt = np.take_along_axis(pooled, order, axis=1)
    # Tied draws share their average rank (as in rank normalization), so a
    # discrete or constant parameter does not get a staircase of fake ranks.
    pos = np.broadcast_to(np.arange(total), (n, total))
    starts = np.ones((n, total), dtype=bool)
    starts[:, 1:] = srt[:, 1:] != srt[:, :-1]
    ends = np.ones((n, total), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, pos, total)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((n, total))
    np.put_along_axis(ranks, order, (first + last) / 2.0, axis=1)
    which = np.minimum(((ranks + 0.5) * bins / total).astype(np.int64), bins - 1).reshape(n, c, d)
    counts = np.zeros((n, c, bins), dtype=np.int64)
    np.add.at(counts, (np.arange(n)[:, None, None], np.arange(c)[None, :, None], which), 1)
    return counts


@dataclass(frozen=True)
class EnergyPlot:
    """Densities of ArviZ's ``plot_energy``: the marginal energy against the energy transitions.

    When the transition density is much narrower than the marginal one, a
    chain cannot cross the energy levels the posterior needs in few steps
    (low E-BFMI; Betancourt 2016).

    Attributes
    ----------
    grid : ndarray, shape (G,)
        Where both densities are evaluated.
    marginal : ndarray, shape (G,)
        Density of ``E - mean E`` (per chain), pooled over chains.
    transition : ndarray, shape (G,)
        Density of ``E_n - E_{n-1}``, pooled over chains.
    """

    grid: np.ndarray
    marginal: np.ndarray
    transition: np.ndarray


@dataclass(frozen=True)
class PlotData:
    """What the plots of a report show, computed once here; renderers only draw it.

    Attributes
    ----------
    names
        The plotted parameters, worst first (:meth:`Report.worst_first`), at most the cap.
    index
        Their positions in ``Report.parameters`` (and the last axis of ``Report.draws``).
    omitted
        The parameters left out by the cap, worst first.
    draws : ndarray, shape (chain, draw, n)
        The draws of the plotted parameters.
    ranks : ndarray, shape (n, k, bins)
        Pooled-rank histogram of each of ``k`` sequences (:func:`rank_histograms`):
        the chains, or the two halves of a single chain (a one-chain rank
        plot would always be flat).
    rank_labels
        The ``k`` sequences' names (``"chain 0"``, ``"1st half"``).
    expected, half_width
        Expected bin count and half-width of its pointwise 99% band (:func:`rank_band`).
    acf : ndarray, shape (n, max_lag + 1)
        Chain-averaged autocorrelation at lags ``0 .. max_lag``.
    density_grid : ndarray, shape (n, G)
        Where the densities of each parameter are evaluated.
    density : ndarray, shape (n, chain, G)
        Kernel density estimate of each chain's draws (:func:`kde`).
    divergent : ndarray of bool, shape (chain, draw), or None
        Transitions that ended in a divergence, when the file records them.
    energy
        The energy plot's densities, when the file has energies.
    """

    names: tuple[str, ...]
    ranks: np.ndarray
    expected: float
    half_width: float
    acf: np.ndarray
    index: tuple[int, ...] = ()
    omitted: tuple[str, ...] = ()
    draws: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)), repr=False)
    rank_labels: tuple[str, ...] = ()
    density_grid: np.ndarray = field(default_factory=lambda: np.empty((0, 0)), repr=False)
    density: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)), repr=False)
    divergent: np.ndarray | None = field(default=None, repr=False)
    energy: EnergyPlot | None = None

    @property
    def bins(self) -> int:
        return self.ranks.shape[2]

    @property
    def max_lag(self) -> int:
        return self.acf.shape[1] - 1


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


def kde(x: np.ndarray, grid_points: int = 200, *, grid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian kernel density estimates of several samples of one quantity, on a shared grid.

    Binned estimate (counts on a fine grid convolved with the kernel, as
    ArviZ's and R's ``density`` do), with one bandwidth for all rows,
    Silverman's rule on the pooled sample, so the rows are comparable.

    Parameters
    ----------
    x : ndarray, shape (k, m)
        ``k`` samples of ``m`` draws (the chains of one parameter).
    grid_points
        Size ``G`` of the grid, which spans the pooled range plus three bandwidths.
    grid : ndarray, shape (G,), optional
        An evenly spaced grid to use instead (draws outside it are left out).

    Returns
    -------
    grid : ndarray, shape (G,)
    density : ndarray, shape (k, G)
        Each row integrates to about 1 over the grid; NaN when the row has
        no finite draw, a spike when every draw is the same value.
    """
    from scipy.ndimage import gaussian_filter1d

    k, m = x.shape
    finite = np.isfinite(x)
    pooled = x[finite]
    if pooled.size == 0:
        return np.zeros(grid_points), np.full((k, grid_points), np.nan)
    sd = float(pooled.std())
    iqr = float(np.subtract(*np.percentile(pooled, [75, 25])))
    spread = min(sd, iqr / 1.349) if iqr > 0 else sd
    h = 0.9 * spread * pooled.size ** (-0.2)
    lo, hi = float(pooled.min()), float(pooled.max())
    if not h > 0:  # one value: no spread to smooth over
        h = max(abs(lo), 1.0) * 1e-3
    if grid is None:
        grid = np.linspace(lo - 3 * h, hi + 3 * h, grid_points)
    lo, dx, size = float(grid[0]), float(grid[1] - grid[0]), grid.size
    cell = np.rint((np.where(finite, x, lo) - lo) / dx).astype(np.int64)
    inside = finite & (cell >= 0) & (cell < size)
    counts = np.zeros((k, size))
    np.add.at(counts, (np.broadcast_to(np.arange(k)[:, None], x.shape), np.clip(cell, 0, size - 1)), inside * 1.0)
    smooth = gaussian_filter1d(counts, h / dx, axis=1, mode="constant", truncate=4.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        density = smooth / (finite.sum(axis=1, keepdims=True) * dx)
    return grid, density


def plot_data(
    draws: np.ndarray,
    parameters: Sequence[Parameter],
    cap: int | None = None,
    *,
    divergent: np.ndarray | None = None,
    energy: np.ndarray | None = None,
) -> PlotData:
    """The plot data of the worst ``cap`` parameters (all when ``None``) of ``draws (chain, draw, n)``.

    Parameters
    ----------
    draws : ndarray, shape (chain, draw, n)
        The report's draws, in the order of ``parameters``.
    parameters
        The report's parameters: which to plot is decided by :func:`worst_first`.
    cap
        Most parameters to plot.
    divergent : ndarray, shape (chain, draw), optional
        The sampler's ``diverging`` statistic.
    energy : ndarray, shape (chain, draw), optional
        The sampler's ``energy`` statistic.

    Rank bins: ``draw / 25`` clipped to 4-20 (per half-chain for one chain);
    autocorrelation up to lag 50 (fewer for short chains).
    """
    from mcmc.diagnostics import stats

    order = worst_first(parameters)
    n = len(order) if cap is None else min(cap, len(order))
    index = order[:n]
    x = np.ascontiguousarray(draws[:, :, index])
    c, d, _ = x.shape
    if c == 1 and d >= 8:
        # Ranks of one chain in itself are uniform by construction; its halves against each other are not.
        half = d // 2
        seqs = np.concatenate([x[:, :half], x[:, d - half :]], axis=0)
        labels: tuple[str, ...] = ("1st half", "2nd half")
    else:
        seqs, labels = x, tuple(f"chain {i}" for i in range(c))
    ds = seqs.shape[1]
    bins = int(min(20, max(4, ds // 25)))
    max_lag = int(min(50, max(1, d - 1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ranks = rank_histograms(seqs, bins) if ds > 1 else np.zeros((n, seqs.shape[0], bins), dtype=np.int64)
        if d > 2:
            rho = np.asarray(stats.acf(x, np.arange(max_lag + 1)), dtype=float)
        else:
            rho = np.full((n, max_lag + 1), np.nan)
        grids, dens = [], []
        for j in range(n):  # a handful of plotted parameters, each vectorised over chains
            g, f = kde(x[:, :, j])
            grids.append(g)
            dens.append(f)
    expected, half_width = rank_band(ds, bins)
    energy_plot = None
    if energy is not None and energy.shape[1] > 2 and np.isfinite(energy).all():
        marginal = (energy - energy.mean(axis=1, keepdims=True)).reshape(1, -1)
        transition = np.diff(energy, axis=1).reshape(1, -1)
        g, _ = kde(np.concatenate([marginal, transition], axis=1))
        fm, ft = kde(marginal, grid=g)[1], kde(transition, grid=g)[1]
        energy_plot = EnergyPlot(g, fm[0], ft[0])
    return PlotData(
        names=tuple(parameters[i].name for i in index),
        ranks=ranks,
        expected=expected,
        half_width=half_width,
        acf=rho,
        index=tuple(index),
        omitted=tuple(parameters[i].name for i in order[n:]),
        draws=x,
        rank_labels=labels,
        density_grid=np.asarray(grids).reshape(n, -1),
        density=np.asarray(dens).reshape(n, c, -1),
        divergent=None if divergent is None else np.asarray(divergent) != 0,
        energy=energy_plot,
    )


def _names(names: Sequence[str]) -> str:
    if len(names) <= _MAX_NAMES:
        return ", ".join(names)
    return ", ".join(names[:_MAX_NAMES]) + f" and {len(names) - _MAX_NAMES} more"


def _limit_text(params: Sequence[Parameter], attr: str, general: float) -> str:
    """``"1.01"`` when every parameter in ``params`` has that limit, else ``"its limit"`` (per-variable limits)."""
    values = {getattr(p, attr) for p in params}
    return f"{values.pop():g}" if len(values) == 1 else "its limit"


def _checks(
    params: Sequence[Parameter], sampler: Sampler, t: Thresholds, log_density: Parameter | None = None
) -> list[Check]:
    checks: list[Check] = []

    def add(name: str, passed: bool, message: str, parameters: Sequence[str] = (), severity: str = "error",
            chains: Sequence[int] = ()) -> None:  # fmt: skip
        advice = "" if passed else ADVICE.get(name, "")
        checks.append(Check(name, passed, message, tuple(parameters), severity, tuple(chains), advice))

    by = {s: [p.name for p in params if p.status == s] for s in STATUSES}
    nonfinite = [p.name for p in params if p.status in ("nan", "inf")]
    msg = f"non-finite draws in {_names(nonfinite)}" if nonfinite else "all draws finite"
    add("finite", not nonfinite, msg, nonfinite)
    bad = [p for p in params if p.status == "rhat"]
    undefined = [p.name for p in bad if not np.isfinite(p.rhat)]
    if bad:
        msg = f"R-hat > {_limit_text(bad, 'max_rhat', t.max_rhat)} for {_names([p.name for p in bad])}"
    else:
        msg = f"R-hat <= {t.max_rhat:g}" + (" (per-variable limits where set)" if t.per_variable else "")
    if undefined:
        msg += f" (undefined for {_names(undefined)})"
    add("rhat", not bad, msg, [p.name for p in bad])
    # A parameter failing R-hat usually fails ESS too; list it under both so
    # CI logs show every problem, but the status names the worse one.
    low = [p for p in params if p.ess_bulk_low or p.ess_tail_low]
    if low:
        msg = f"bulk or tail ESS < {_limit_text(low, 'min_ess', t.min_ess)} for {_names([p.name for p in low])}"
    else:
        msg = f"ESS >= {t.min_ess:g}" + (" (per-variable limits where set)" if t.per_variable else "")
    add("ess", not low, msg, [p.name for p in low])
    if params and len(by["constant"]) == len(params):
        # One fixed entry (a Cholesky factor's zero) is normal; nothing moving at all
        # is a sampler that never accepted a move, and no convergence to speak of.
        add("stuck", False, "no parameter moved: the sampler is stuck", by["constant"])
    elif by["constant"]:
        add("constant", False, f"constant in every draw: {_names(by['constant'])}", by["constant"], "warning")
    if sampler.divergences is not None:
        n, pct = sampler.divergences, sampler.divergence_percent or 0.0
        ok = n <= t.max_divergences
        msg = f"{n} of {sampler.transitions} ({pct:.2f}%) transitions divergent"
        if not ok:
            msg += f" (at most {t.max_divergences} allowed)"
        add("divergences", ok, msg)
    if sampler.treedepth_hits is not None:
        hits = sampler.treedepth_hits
        ok = hits <= t.max_treedepth_hits
        msg = f"{hits} of {sampler.transitions} transitions hit the maximum tree depth {sampler.max_treedepth}"
        add("treedepth", ok, msg, severity="warning")
    if sampler.ebfmi is not None:
        e = np.asarray(sampler.ebfmi)
        with np.errstate(invalid="ignore"):
            low_chains = np.flatnonzero(~(e >= t.min_ebfmi))
        if low_chains.size:
            msg = "E-BFMI < {:g} in chain {}".format(
                t.min_ebfmi, ", ".join(f"{c} ({e[c]:.2f})" for c in low_chains.tolist())
            )
        else:
            msg = f"E-BFMI >= {t.min_ebfmi:g} in every chain (min {e.min():.2f})"
        add("ebfmi", not low_chains.size, msg, chains=low_chains.tolist())
    if log_density is not None and log_density.status in ("nan", "inf", "rhat", "ess"):
        lp = log_density
        why = {
            "nan": "has NaN draws",
            "inf": "has infinite draws",
            "rhat": f"R-hat {lp.rhat:.3f} > {lp.max_rhat:g}",
            "ess": f"bulk/tail ESS {_floor(lp.ess_bulk)}/{_floor(lp.ess_tail)} < {lp.min_ess:g}",
        }[lp.status]
        add("lp", False, f"the log density lp {why}", ["lp"], "warning")
    disagree = [p.name for p in params if p.ssif_disagrees]
    if disagree:
        add(
            "ssif",
            False,
            f"ESS by SSIF clears the ESS limit but bulk ESS does not for {_names(disagree)}",
            disagree,
            "warning",
        )
    return checks


def _floor(value: float) -> str:
    return str(int(np.floor(value))) if np.isfinite(value) else "undefined"
