"""Importance sampling as an estimator: independent weighted draws from a proposal, vectorized over chains.

Every iteration draws one point per chain from the proposal ``q`` and weighs
it by ``w = p~(x) / q(x)``, stored as ``log w`` (``sample_stats["log_weight"]``,
``attrs["weighted"] = True``, as likelihood weighting stores the weights of
a network's draws). Nothing is resampled: the draws are not a sample of
``p``, and an expectation is the self-normalised estimate
``sum_i w_i f(x_i) / sum_i w_i`` over all draws of all chains, whose Monte
Carlo standard error comes from the delta method (Owen 2013, *Monte Carlo
theory, methods and examples*, section 9.2; Robert & Casella 2004, section
3.3). How far to trust it is judged from the weights alone
(:mod:`mcmc.diagnostics`): Kish's effective sample size
``(sum w)^2 / sum w^2`` and the Pareto ``k`` of the weights' upper tail
(Vehtari, Simpson, Gelman, Yao & Gabry 2024, "Pareto smoothed importance
sampling", JMLR 25(72)): the estimate's error has a finite variance, and the
estimate can be trusted, only for a thin enough tail.

The proposal is the target file's (:class:`~mcmc.core.targets.protocols.ProposalDistribution`:
``proposal_sample(rng)`` and ``proposal_log_density(x)``) when it gives one;
otherwise the multivariate Student-t (4 degrees of freedom) of
:mod:`mcmc.core.samplers.proposals`, one per chain, fitted in warm-up to
slice sampling's draws (:class:`~mcmc.core.samplers.proposals.ProposalAdapter`,
as for rejection sampling and i-SIR) and fixed after it, wider than the
target (its scale is 1.5 sds) so that the weights' tail stays thin.

The driver's ``lp`` is the log density of the draw (not of a Markov chain's
state). Every chain draws from its own stream, one proposal per iteration,
so chain ``i`` depends only on the seed and ``i``; the draws are independent.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.adapt import FixedParams
from mcmc.core.samplers.base import DensityState, density_state
from mcmc.core.samplers.proposals import ProposalAdapter, fixed_proposal, student_t_draw, student_t_logpdf
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import ProposalDistribution

DECLARATION = registry.IMPORTANCE
NAME = DECLARATION.name

State = DensityState  # the last draw and its log density


class Info(NamedTuple):
    log_weight: np.ndarray  # (chains,) log p~(x) - log q(x) of the draw (-inf: weight zero)


init = density_state


def step(
    rng: ChainRandom, state: State, target: Target, *, loc: Any = 0.0, scale: Any = 1.0
) -> tuple[State, Info]:
    """One weighted draw per chain from the proposal.

    Parameters
    ----------
    loc, scale
        The fitted t proposal's location and diagonal scale (scalars,
        ``(dim,)`` or ``(chains, dim)``); unused with the target's own proposal.
    """
    if isinstance(target, ProposalDistribution):
        x = np.asarray(target.proposal_sample(rng), dtype=float)
        log_q = np.asarray(target.proposal_log_density(x), dtype=float)
    else:
        loc, scale = fixed_proposal(state, loc, scale)
        x = student_t_draw(rng, loc, scale, 1)[:, 0]
        log_q = student_t_logpdf(x, loc, scale)
    lp = np.asarray(target.log_density(x), dtype=float)
    log_w = lp - log_q
    return State(x, lp), Info(np.where(np.isnan(log_w), -np.inf, log_w))


def make_adapter(
    warmup: int, state: State, target: Target, rng: ChainRandom, *, loc: Any = 0.0, scale: Any = 1.0, **fixed: Any
) -> ProposalAdapter | FixedParams:
    """The t proposal fitted in warm-up (slice sampling's draws); with the target's own proposal, nothing to fit."""
    if isinstance(target, ProposalDistribution):
        return FixedParams(**fixed)
    return ProposalAdapter(warmup, state, loc, scale, fixed)


def run_attrs(state: State, final: dict[str, Any]) -> dict[str, Any]:
    """``weighted``: the draws carry weights (``sample_stats["log_weight"]``), and which proposal made them."""
    del state
    fitted = "loc" in final
    return {"weighted": True, "proposal": "student-t fitted in warm-up" if fitted else "the target's own"}
