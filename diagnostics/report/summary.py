"""One run summary: the few numbers of the diagnose report that a run's summary line shows.

``mcmc sample`` prints it after a run, ``mcmc compare`` puts one in each
sampler's row. It is *derived* from the :class:`~mcmc.diagnostics.report.report.Report`
that :func:`mcmc.diagnostics.report.check.check` makes of the draws a command wrote,
the report ``mcmc diagnose`` makes of the same file: the worst
rank-normalized split R-hat and the smallest bulk and tail ESS (Vehtari et al.
2021), where they occur, whether the report's checks passed and its verdict
line, and the sampler's own counts (acceptance, divergences, evaluations).
There is one judge: nothing here applies a threshold of its own.

References
----------
Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from mcmc.core.chains import Chains
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.report import Report
from mcmc.diagnostics.report.sampler import ACCEPTANCE_FROM_STATS
from mcmc.diagnostics.report.thresholds import Thresholds

__all__ = ["RunSummary", "summarize_lda", "summarize_run"]


@dataclass(frozen=True)
class RunSummary:
    """The few numbers that say whether a run converged, and the sampler's own counts.

    Attributes
    ----------
    rhat_max, rhat_argmax
        The largest rank-normalized split R-hat over the judged parameters
        (``+inf`` counts: chains stuck at different values) and its parameter's
        name; ``None`` when no parameter has one (too few draws, every
        parameter constant).
    ess_bulk_min, ess_bulk_argmin, ess_tail_min, ess_tail_argmin
        The smallest bulk and tail ESS and where; ``None`` likewise.
    rhat_ok, ess_bulk_ok
        Whether the report's ``rhat`` and ``ess`` checks passed (the ESS check
        covers bulk and tail); ``None`` without an R-hat or ESS.
    passed, verdict
        The report's verdict: what ``mcmc diagnose`` says of the same file,
        and its one line (``PASS: ...`` / ``FAIL: ...``).
    failing
        The failing parameters' names, worst first.
    acceptance, acceptance_by_chain
        Mean of the sampler's ``acceptance_rate`` statistic overall and per
        chain ``(chains,)``; ``None`` when the sampler reports none.
    divergences
        Divergent transitions over all chains (``diverging``), or ``None``.
    divergences_ok
        Whether the report's divergence check passed; ``None`` without a
        ``diverging`` statistic.
    advice
        What to do about each failed check (:func:`.verdict.advice`, the
        words ``diagnose`` uses), keyed by check name.
    n_evals_per_draw
        Slice samplers: mean density evaluations per draw (``n_evals``).
    likelihood_saved
        Two-stage: fraction of iterations whose likelihood was not evaluated.
    envelope_exceeded
        Rejection: proposals above the envelope, which make the draws inexact
        where they happen.
    thresholds
        The limits the report judged by (``min_ess`` concrete).
    """

    n_chains: int
    n_draws: int
    n_params: int
    rhat_max: float | None
    rhat_argmax: str | None
    ess_bulk_min: float | None
    ess_bulk_argmin: str | None
    ess_tail_min: float | None
    ess_tail_argmin: str | None
    rhat_ok: bool | None
    ess_bulk_ok: bool | None
    acceptance: float | None
    acceptance_by_chain: tuple[float, ...] | None
    divergences: int | None
    n_evals_per_draw: float | None
    likelihood_saved: float | None
    envelope_exceeded: int | None
    thresholds: Thresholds
    divergences_ok: bool | None = None
    advice: Mapping[str, str] = field(default_factory=dict)
    passed: bool = True
    verdict: str = ""
    failing: tuple[str, ...] = ()

    @classmethod
    def from_report(cls, report: Report, chains: Chains) -> RunSummary:
        """The summary of ``report``, the diagnose report of ``chains`` (whose statistics give the costs)."""
        params = report.parameters
        names = [p.name for p in params]
        rhat_max, rhat_arg = _worst(np.array([p.rhat for p in params], dtype=float), names, np.nanargmax)
        bulk_min, bulk_arg = _worst(np.array([p.ess_bulk for p in params], dtype=float), names, np.nanargmin)
        tail_min, tail_arg = _worst(np.array([p.ess_tail for p in params], dtype=float), names, np.nanargmin)
        sampler = report.sampler
        from_sampler = sampler.acceptance.source == ACCEPTANCE_FROM_STATS
        ss = chains.sample_stats

        def passed(name: str) -> bool | None:
            c = report.check(name)
            return None if c is None else c.passed

        return cls(
            n_chains=report.n_chains,
            n_draws=report.n_draws,
            n_params=len(params),
            rhat_max=rhat_max,
            rhat_argmax=rhat_arg,
            ess_bulk_min=bulk_min,
            ess_bulk_argmin=bulk_arg,
            ess_tail_min=tail_min,
            ess_tail_argmin=tail_arg,
            rhat_ok=None if rhat_max is None else passed("rhat"),
            ess_bulk_ok=None if bulk_min is None else passed("ess"),
            acceptance=sampler.acceptance.overall if from_sampler else None,
            acceptance_by_chain=sampler.acceptance.per_chain if from_sampler else None,
            divergences=sampler.divergences,
            n_evals_per_draw=float(np.mean(ss["n_evals"])) if "n_evals" in ss else None,
            likelihood_saved=1.0 - float(np.mean(ss["n_likelihood_evals"])) if "n_likelihood_evals" in ss else None,
            envelope_exceeded=int(np.sum(ss["envelope_exceeded"])) if "envelope_exceeded" in ss else None,
            thresholds=report.thresholds,
            divergences_ok=passed("divergences"),
            advice={c.name: c.advice for c in report.checks if not c.passed and c.advice},
            passed=report.passed,
            verdict=report.verdict(),
            failing=tuple(p.name for p in report.failing()),
        )


def _worst(values: np.ndarray, names: Sequence[str], pick) -> tuple[float | None, str | None]:
    """``pick`` (``np.nanargmax`` or ``np.nanargmin``) over the defined values, with its name."""
    if values.size == 0 or np.isnan(values).all():
        return None, None
    i = int(pick(values))
    return float(values[i]), names[i]


def summarize_run(chains: Chains, *, thresholds: Thresholds = Thresholds()) -> RunSummary:  # noqa: B008 - frozen
    """The run summary of ``chains``: :func:`~mcmc.diagnostics.report.check.check`'s report, summarised.

    Parameters
    ----------
    chains
        Variables ``(chain, draw, *shape)`` and the sampler statistics under
        ArviZ's names.
    thresholds
        The limits of the checks (``diagnose``'s defaults).
    """
    return RunSummary.from_report(check(chains, thresholds=thresholds), chains)


def summarize_lda(
    log_joint_per_token: np.ndarray, burn_in: int, *, thresholds: Thresholds = Thresholds()  # noqa: B008 - frozen
) -> RunSummary:
    """The run summary of an LDA fit: R-hat and ESS of its log joint per token after burn-in.

    The log joint is invariant to relabelling the topics, so unlike any
    per-topic quantity it can be compared across chains. Burn-in iterations
    are left out: they are the climb from the random start, which every chain
    makes differently and which would inflate R-hat and deflate the ESS.

    Parameters
    ----------
    log_joint_per_token : ndarray, shape (chain, iteration)
        Every iteration, burn-in first.
    burn_in : int
        Iterations to leave out at the start of each chain.
    thresholds
        ``rhat_ok`` is judged against ``thresholds.max_rhat`` (``diagnose``'s default).

    Returns
    -------
    RunSummary
        Over the one parameter ``log_joint_per_token``. With one chain
        ``rhat_ok`` is ``None``: split R-hat of a single chain compares its
        halves only, and chains stuck apart in different modes, which is what
        a topic model's gate must catch, cannot be seen from one chain.
    """
    post = np.asarray(log_joint_per_token)[:, burn_in:]
    summary = summarize_run(Chains({"log_joint_per_token": post}), thresholds=thresholds)
    if post.shape[0] < 2:
        summary = replace(summary, rhat_ok=None)
    return summary
