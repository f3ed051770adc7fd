"""Random-walk Metropolis with a Gaussian proposal, vectorized over chains.

Proposal ``x' = x + s * z`` with ``z ~ N(0, I)`` and per-chain scale ``s``;
accepted with probability ``min(1, pi(x') / pi(x))`` (Metropolis, Rosenbluth,
Rosenbluth, Teller & Teller 1953). Warm-up tunes ``s`` per chain by
Robbins-Monro toward acceptance 0.234 (``dim > 1``; Roberts, Gelman & Gilks
1997) or 0.44 (``dim = 1``) and, in more than one dimension, a diagonal
proposal shape from the chain's own warm-up draws (``x + s * m * z``), see
:mod:`mcmc.core.samplers.adapt`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.adapt import RobbinsMonroScale, per_chain_scale
from mcmc.core.samplers.base import DensityState, accept_reject, density_state
from mcmc.core.targets.base import Target

DECLARATION = registry.RWM
NAME = DECLARATION.name


State = DensityState  # position and log density


class Info(NamedTuple):
    acceptance_rate: np.ndarray  # (chains,) min(1, exp(log ratio))
    accepted: np.ndarray  # (chains,) bool
    step_size: np.ndarray  # (chains,) the proposal scale s


init = density_state


def step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    scale: float | np.ndarray | None = None,
    metric: np.ndarray | None = None,
) -> tuple[State, Info]:
    """One random-walk Metropolis transition for every chain.

    Parameters
    ----------
    scale
        Proposal scale ``s``, scalar or per chain ``(chains,)``; default
        ``2.38 / sqrt(dim)``.
    metric
        Optional diagonal shape ``m`` (``(dim,)`` or ``(chains, dim)``): the
        proposal is ``x + s * m * z``.
    """
    x = state.position
    s = per_chain_scale(scale, *x.shape)
    step_sd = s[:, None] if metric is None else s[:, None] * np.asarray(metric, dtype=float)
    proposal = x + step_sd * rng.normal((x.shape[1],))
    lp = np.asarray(target.log_density(proposal), dtype=float)
    new, accepted, rate = accept_reject(rng, lp - state.log_density, State(proposal, lp), state)
    return new, Info(rate, accepted, s.copy())


def make_adapter(
    warmup: int,
    state: State,
    target: Target,
    rng: ChainRandom,
    *,
    scale: float | np.ndarray | None = None,
    metric: np.ndarray | None = None,
    target_accept: float | None = None,
    adapt_metric: bool = True,
) -> RobbinsMonroScale:
    """Robbins-Monro tuning of ``scale`` per chain (toward 0.234, or 0.44 in 1-D), and of a
    diagonal ``metric`` unless ``adapt_metric=False`` (see :mod:`mcmc.core.samplers.adapt`)."""
    return RobbinsMonroScale(
        warmup, state.position.shape, scale, target_accept, metric=metric, adapt_metric=adapt_metric
    )
