"""Two-stage (delayed-acceptance) Metropolis-Hastings (Christen & Fox 2005).

For a posterior written as ``pi(x) ∝ p(x) L(x)`` (``target.log_prior`` and
``target.log_likelihood``), a proposal ``y ~ q(. | x)`` is first screened with
the cheap prior alone,

    stage 1:  a1 = min(1, p(y) q(x | y) / (p(x) q(y | x))),

and only if it survives is the expensive likelihood evaluated,

    stage 2:  a2 = min(1, L(y) / L(x)).

Christen & Fox's second-stage ratio ``pi(y) q*(x|y) / (pi(x) q*(y|x))`` with
the effective proposal ``q*(y|x) = a1(x, y) q(y|x)`` reduces to ``L(y) / L(x)``
because ``a1(x, y) / a1(y, x)`` is the stage-1 ratio; the kernel therefore
satisfies detailed balance with respect to ``pi`` exactly. Every proposal
rejected at stage 1 saves one likelihood evaluation; the statistic
``n_likelihood_evals`` (0 or 1 per chain per iteration) records them.

Proposals: Gaussian random walk (``proposal="rw"``, symmetric) or the
multiplicative log-normal one (``proposal="lognormal"``, Hastings term
``sum(log y - log x)`` in stage 1) for positive parameters. The scale is tuned
per chain by Robbins-Monro toward an overall acceptance of 0.234 (0.44 in 1-D),
using the unbiased per-iteration estimate ``1[stage 1 passed] a2`` of ``a1 a2``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.adapt import RobbinsMonroScale, per_chain_scale
from mcmc.core.samplers.base import select
from mcmc.core.samplers.proposals import lognormal_propose
from mcmc.core.targets.base import Target

DECLARATION = registry.TWO_STAGE
NAME = DECLARATION.name
PROPOSALS = DECLARATION.setting("proposal").choices  # type: ignore[union-attr]


class State(NamedTuple):
    position: np.ndarray  # (chains, dim)
    log_density: np.ndarray  # (chains,) log_prior + log_likelihood
    log_prior: np.ndarray  # (chains,)
    log_likelihood: np.ndarray  # (chains,)


class Info(NamedTuple):
    acceptance_rate: np.ndarray  # (chains,) 1[stage 1 passed] * a2, unbiased for a1 * a2
    accepted: np.ndarray  # (chains,) bool, accepted at both stages
    stage1_accepted: np.ndarray  # (chains,) bool
    n_likelihood_evals: np.ndarray  # (chains,) 0 or 1
    step_size: np.ndarray  # (chains,) proposal scale


def _factors(target: Target) -> tuple[Any, Any]:
    if target.log_prior is None or target.log_likelihood is None:
        raise UsageError(
            f"two-stage needs a target written as prior x likelihood; {target.name!r} does not "
            "provide log_prior and log_likelihood (built-ins that do: logistic, beta-bernoulli, eight-schools; "
            "a target file may define both)"
        )
    return target.log_prior, target.log_likelihood


def stage1_log_ratio(log_prior_x: np.ndarray, log_prior_y: np.ndarray, log_q_ratio: np.ndarray) -> np.ndarray:
    """``log [p(y) q(x|y) / (p(x) q(y|x))]`` per chain; NaN (unevaluable) becomes ``-inf``."""
    return np.nan_to_num(log_prior_y - log_prior_x + log_q_ratio, nan=-np.inf, posinf=np.inf, neginf=-np.inf)


def stage2_log_ratio(log_lik_x: np.ndarray, log_lik_y: np.ndarray) -> np.ndarray:
    """``log [L(y) / L(x)]`` per chain: the proposal and prior terms cancel (see the module docstring)."""
    return np.nan_to_num(log_lik_y - log_lik_x, nan=-np.inf, posinf=np.inf, neginf=-np.inf)


def init(position: np.ndarray, target: Target) -> State:
    """State at ``position (chains, dim)``, with the prior and likelihood cached separately."""
    log_prior, log_likelihood = _factors(target)
    x = np.asarray(position, dtype=float)
    lpr = np.asarray(log_prior(x), dtype=float)
    lli = np.asarray(log_likelihood(x), dtype=float)
    return State(x, lpr + lli, lpr, lli)


def step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    scale: Any = None,
    metric: Any = None,
    proposal: str = "rw",
) -> tuple[State, Info]:
    """One delayed-acceptance transition for every chain.

    Parameters
    ----------
    scale
        Proposal scale, scalar or ``(chains,)``; default ``2.38 / sqrt(dim)``.
    metric
        Optional diagonal shape ``(dim,)`` or ``(chains, dim)`` of the
        proposal step (``s * metric * z``), learnt in warm-up as for RWM.
    proposal
        ``"rw"`` (Gaussian random walk) or ``"lognormal"`` (multiplicative).
    """
    log_prior, log_likelihood = _factors(target)
    x = state.position
    n, d = x.shape
    s = per_chain_scale(scale, n, d)
    step_sd = s[:, None] if metric is None else s[:, None] * np.broadcast_to(np.asarray(metric, dtype=float), (n, d))
    if proposal == "rw":
        y = x + step_sd * rng.normal((d,))
        log_q_ratio = np.zeros(n)
    elif proposal == "lognormal":
        y, log_q_ratio = lognormal_propose(rng, x, step_sd)
    else:
        raise UsageError(f"two-stage proposal must be one of {', '.join(PROPOSALS)}, got {proposal!r}")

    lpr_y = np.asarray(log_prior(y), dtype=float)
    log_r1 = stage1_log_ratio(state.log_prior, lpr_y, log_q_ratio)
    # Both uniforms are drawn for every chain, so a chain's stream never
    # depends on which other chains passed stage 1.
    log_u1, log_u2 = rng.log_uniform(), rng.log_uniform()
    stage1 = log_u1 < log_r1

    lli_y = np.full(n, -np.inf)
    if stage1.any():
        lli_y[stage1] = np.asarray(log_likelihood(y[stage1]), dtype=float)
    log_r2 = stage2_log_ratio(state.log_likelihood, lli_y)
    accepted = stage1 & (log_u2 < log_r2)
    with np.errstate(over="ignore"):
        a2 = np.where(stage1, np.exp(np.minimum(log_r2, 0.0)), 0.0)

    proposed = State(y, lpr_y + lli_y, lpr_y, lli_y)
    new = select(accepted, proposed, state)
    return new, Info(a2, accepted, stage1, stage1.astype(np.int64), s.copy())


def make_adapter(
    warmup: int,
    state: State,
    target: Target,
    rng: ChainRandom,
    *,
    scale: Any = None,
    metric: Any = None,
    proposal: str = "rw",
    target_accept: float | None = None,
    adapt_metric: bool = True,
) -> RobbinsMonroScale:
    """Robbins-Monro tuning of ``scale`` per chain toward the overall acceptance 0.234 (0.44 in
    1-D), and of a diagonal ``metric`` as for random-walk Metropolis (``proposal="rw"`` only)."""
    return RobbinsMonroScale(
        warmup, state.position.shape, scale, target_accept,
        metric=metric, adapt_metric=adapt_metric and proposal == "rw", proposal=proposal,
    )  # fmt: skip
