"""One run summary: did a run converge, and what did its sampler report?

``mcmc sample`` prints it after a run, ``mcmc compare`` puts one in each
sampler's row and ``mcmc lda`` reports it for the post-burn-in log joint per
token: the worst rank-normalized split R-hat and the smallest bulk and tail
ESS over all scalar parameters (Vehtari et al. 2021, as computed by
:mod:`mcmc.diagnostics.stats`), where they occur, judged against the
:class:`~mcmc.diagnostics.report.Thresholds` that ``diagnose`` uses, and the
sampler's own counts (acceptance, divergences, evaluations).

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
from mcmc.diagnostics import stats
from mcmc.diagnostics.report import Thresholds
from mcmc.diagnostics.sampler import ACCEPTANCE_FROM_STATS, sampler_summary
from mcmc.diagnostics.selection import flatten, select
from mcmc.diagnostics.verdict import ADVICE

__all__ = ["RunSummary", "summarize_lda", "summarize_run"]


@dataclass(frozen=True)
class RunSummary:
    """The few numbers that say whether a run converged, and the sampler's own counts.

    Attributes
    ----------
    rhat_max, rhat_argmax
        The largest rank-normalized split R-hat over all scalar parameters
        (``+inf`` counts: chains stuck at different values) and its parameter's
        name (:func:`mcmc.core.chains.scalar_names`); ``None`` when no
        parameter has one (too few draws, every parameter constant).
    ess_bulk_min, ess_bulk_argmin, ess_tail_min, ess_tail_argmin
        The smallest bulk and tail ESS and where; ``None`` likewise.
    rhat_ok
        ``rhat_max <= thresholds.max_rhat``; ``None`` without an R-hat.
    ess_bulk_ok
        ``ess_bulk_min >= thresholds.min_ess``; ``None`` without an ESS.
    acceptance, acceptance_by_chain
        Mean of the sampler's ``acceptance_rate`` statistic overall and per
        chain ``(chains,)``; ``None`` when the sampler reports none.
    divergences
        Divergent transitions over all chains (``diverging``), or ``None``.
    divergences_ok
        ``divergences <= thresholds.max_divergences`` (what ``diagnose`` will
        judge); ``None`` without a ``diverging`` statistic.
    advice
        What to do about each problem found (``ADVICE`` of :mod:`.report`, the
        words ``diagnose`` uses), keyed by check name: today ``"divergences"``.
    n_evals_per_draw
        Slice samplers: mean density evaluations per draw (``n_evals``).
    likelihood_saved
        Two-stage: fraction of iterations whose likelihood was not evaluated.
    envelope_exceeded
        Rejection: proposals above the envelope, which make the draws inexact
        where they happen.
    thresholds
        What ``rhat_ok`` and ``ess_bulk_ok`` were judged by.
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


def _worst(values: np.ndarray, names: Sequence[str], pick) -> tuple[float | None, str | None]:
    """``pick`` (``np.nanargmax`` or ``np.nanargmin``) over the defined values, with its name."""
    if np.isnan(values).all():
        return None, None
    i = int(pick(values))
    return float(values[i]), names[i]


def summarize_run(chains: Chains, *, thresholds: Thresholds = Thresholds()) -> RunSummary:  # noqa: B008 - frozen
    """Summarise a run: worst R-hat and ESS over every scalar parameter, and the sampler's counts.

    Parameters
    ----------
    chains
        Variables ``(chain, draw, *shape)`` and the sampler statistics under
        ArviZ's names.
    thresholds
        The limits ``rhat_ok`` and ``ess_bulk_ok`` are judged by (``diagnose``'s defaults).

    Returns
    -------
    RunSummary
    """
    selection = select(chains)
    x = flatten(chains, selection)
    names = selection.names
    rhat_max, rhat_arg = _worst(stats.rhat(x), names, np.nanargmax)
    bulk_min, bulk_arg = _worst(stats.ess_bulk(x), names, np.nanargmin)
    tail_min, tail_arg = _worst(stats.ess_tail(x), names, np.nanargmin)

    sampler = sampler_summary(chains)
    from_sampler = sampler.acceptance.source == ACCEPTANCE_FROM_STATS
    ss = chains.sample_stats
    return RunSummary(
        n_chains=x.shape[0],
        n_draws=x.shape[1],
        n_params=x.shape[2],
        rhat_max=rhat_max,
        rhat_argmax=rhat_arg,
        ess_bulk_min=bulk_min,
        ess_bulk_argmin=bulk_arg,
        ess_tail_min=tail_min,
        ess_tail_argmin=tail_arg,
        rhat_ok=None if rhat_max is None else rhat_max <= thresholds.max_rhat,
        ess_bulk_ok=None if bulk_min is None else bulk_min >= thresholds.min_ess,
        acceptance=sampler.acceptance.overall if from_sampler else None,
        acceptance_by_chain=sampler.acceptance.per_chain if from_sampler else None,
        divergences=sampler.divergences,
        n_evals_per_draw=float(np.mean(ss["n_evals"])) if "n_evals" in ss else None,
        likelihood_saved=1.0 - float(np.mean(ss["n_likelihood_evals"])) if "n_likelihood_evals" in ss else None,
        envelope_exceeded=int(np.sum(ss["envelope_exceeded"])) if "envelope_exceeded" in ss else None,
        thresholds=thresholds,
        divergences_ok=None if sampler.divergences is None else sampler.divergences <= thresholds.max_divergences,
        advice={"divergences": ADVICE["divergences"]}
        if sampler.divergences is not None and sampler.divergences > thresholds.max_divergences
        else {},
    )


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
