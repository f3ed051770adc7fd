"""Metropolis-Hastings with a multiplicative log-normal proposal, for positive parameters (Hastings 1970).

The proposal ``x' = x exp(s e)``, ``e ~ N(0, I)``
(:func:`mcmc.core.samplers.proposals.lognormal_propose`) is not symmetric:
its density is log-normal, ``q(x' | x) = prod_i phi((log x'_i - log x_i) / s)
/ (s x'_i)``, so ``q(x | x') / q(x' | x) = prod_i x'_i / x_i`` and the
Hastings (1970, "Monte Carlo sampling methods using Markov chains and their
applications", Biometrika 57) term is ``sum_i (log x'_i - log x_i)``. Without
it the chain samples ``pi(x) / prod_i x_i`` instead of ``pi``
(``hastings=False`` builds exactly that wrong kernel, for the test that shows
it). The scale ``s`` is tuned by Robbins-Monro as in random-walk Metropolis
(:class:`mcmc.core.samplers.adapt.RobbinsMonroScale`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.adapt import RobbinsMonroScale, per_chain_scale
from mcmc.core.samplers.base import DensityState, accept_reject, density_state
from mcmc.core.samplers.proposals import lognormal_propose
from mcmc.core.targets.base import Target

DECLARATION = registry.MH_LOGNORMAL
NAME = DECLARATION.name

State = DensityState  # position and log density


class Info(NamedTuple):
    acceptance_rate: np.ndarray  # (chains,) min(1, exp(log ratio))
    accepted: np.ndarray  # (chains,) bool
    step_size: np.ndarray  # (chains,) the scale s


def init(position: np.ndarray, target: Target) -> State:
    """State at ``position (chains, dim)``.

    Raises
    ------
    UsageError
        A starting point has a non-positive coordinate.
    """
    if not np.all(np.asarray(position) > 0):
        raise UsageError(
            f"mh-lognormal proposes x' = x exp(s e) and needs every coordinate positive; "
            f"target {target.name!r} starts at non-positive values (use rwm, slice or hmc)"
        )
    return density_state(position, target)


def step(
    rng: ChainRandom, state: State, target: Target, *, scale: Any = None, hastings: bool = True
) -> tuple[State, Info]:
    """One multiplicative log-normal Metropolis-Hastings transition for every chain.

    Parameters
    ----------
    scale
        ``s``, scalar or ``(chains,)``; default ``2.38 / sqrt(dim)``.
    hastings
        Include the Hastings term. ``False`` gives a kernel that targets
        ``pi(x) / prod(x)``, wrong on purpose; it exists for the test that
        shows the correction matters.
    """
    x = state.position
    s = per_chain_scale(scale, *x.shape)
    proposal, log_q_ratio = lognormal_propose(rng, x, s)
    lp = np.asarray(target.log_density(proposal), dtype=float)
    log_ratio = lp - state.log_density + (log_q_ratio if hastings else 0.0)
    new, accepted, rate = accept_reject(rng, log_ratio, State(proposal, lp), state)
    return new, Info(rate, accepted, s.copy())


def make_adapter(
    warmup: int,
    state: State,
    target: Target,
    rng: ChainRandom,
    *,
    scale: Any = None,
    hastings: bool = True,
    target_accept: float | None = None,
) -> RobbinsMonroScale:
    """Robbins-Monro tuning of ``scale`` per chain toward 0.234 (0.44 in 1-D)."""
    return RobbinsMonroScale(warmup, state.position.shape, scale, target_accept, hastings=hastings)
