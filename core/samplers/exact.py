"""Independent draws from a target's own exact sampler, vectorized over chains.

A target that knows how to draw from itself
(:class:`~mcmc.core.targets.protocols.ExactDraws`) is sampled exactly: every
iteration is a fresh, independent draw per chain from the chain's own
stream, so the draws are an i.i.d. sample (an effective sample size equal to
the number of draws, up to chance) and the checks of ``diagnose`` have
nothing to find. The built-in ``gaussian`` does it by the Box-Muller
transform (``-P exact:method=box-muller``, Box & Muller 1958) or its polar
form (``method=polar``, Marsaglia & Bray 1964), then the linear map of its
covariance (:meth:`~mcmc.core.targets.builtin.GaussianTarget.exact_draws`).

Statistics: none of its own (the driver records ``lp``). There is nothing to
tune: warm-up iterations are draws thrown away.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.base import DensityState, density_state
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import ExactDraws, require

DECLARATION = registry.EXACT
NAME = DECLARATION.name

State = DensityState


class Info(NamedTuple):
    pass


def exact(target: Target) -> ExactDraws:
    """``target`` as :class:`~mcmc.core.targets.protocols.ExactDraws` (``UsageError`` if it is not)."""
    return require(target, ExactDraws, NAME, "a target with an exact sampler of its own (gaussian)")


def init(position: np.ndarray, target: Target) -> State:
    """State at ``position (chains, dim)``.

    Raises
    ------
    UsageError
        ``target`` draws nothing exactly.
    """
    exact(target)
    return density_state(position, target)


def step(rng: ChainRandom, state: State, target: Target, *, method: str | None = None) -> tuple[State, Info]:
    """One exact draw per chain by the target's ``method`` (default: its first, Box-Muller for the normal)."""
    source = exact(target)
    method = method or source.exact_methods[0]
    if method not in source.exact_methods:
        raise UsageError(f"exact: {target.name!r} draws by {', '.join(source.exact_methods)}, not {method!r}")
    x = np.asarray(source.exact_draws(rng, method), dtype=float)
    return State(x, np.asarray(target.log_density(x), dtype=float)), Info()
