"""Simulating a finite Markov chain from its transition matrix, for every chain at once.

Not a sampler *for* a distribution but the chain itself (Markov 1906; the
lecture's finite chains): each iteration draws ``x_{t+1}`` from row ``x_t``
of the target's row-stochastic matrix ``P``
(:class:`~mcmc.core.targets.protocols.TransitionKernel`,
:class:`~mcmc.core.targets.markov_chain.MarkovChainTarget`) by inverse CDF:
one uniform ``u`` per chain from its own stream, and ``x_{t+1}`` the number
of cumulative row sums ``C[x_t, k] (k < n-1)`` that are ``<= u``. The rows'
cumulative sums are computed once per matrix, and one gather of the
current rows serves all chains, so a step costs ``O(chains * n)`` vectorized.

Warm-up iterations run the chain and are discarded (burn-in); the draws are
the chain's path, so their state frequencies estimate the stationary law of
an irreducible chain (ergodic theorem), with MCSE from their
autocorrelation. Statistic ``moved``: the state changed in this step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.base import DensityState, density_state
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import TransitionKernel, require

DECLARATION = registry.MARKOV
NAME = DECLARATION.name
SIMULATES_CHAIN = True  # the driver runs only this sampler on a transition matrix

State = DensityState  # state codes (chains, 1) as floats, and log pi of them


class Info(NamedTuple):
    moved: np.ndarray  # (chains,) bool, the state changed


def kernel(target: Target) -> TransitionKernel:
    """``target`` as a :class:`~mcmc.core.targets.protocols.TransitionKernel` (``UsageError`` if it is not)."""
    return require(target, TransitionKernel, NAME, "a transition matrix (--target P.csv)")


def init(position: np.ndarray, target: Target) -> State:
    """State at codes ``position (chains, 1)``.

    Raises
    ------
    UsageError
        ``target`` is not a transition matrix.
    """
    kernel(target)
    return density_state(position, target)


def _cumulative(matrix: np.ndarray) -> np.ndarray:
    """``(n, n-1)`` cumulative row sums but the last (which is 1): the inverse-CDF thresholds."""
    return np.cumsum(matrix, axis=1)[:, :-1]


def step(rng: ChainRandom, state: State, target: Target) -> tuple[State, Info]:
    """One transition ``x -> x' ~ P[x, :]`` for every chain.

    Returns
    -------
    state
        The new codes and their log density.
    info
        ``moved (chains,)``.

    Raises
    ------
    UsageError
        ``target`` is not a transition matrix.
    """
    thresholds = _cumulative(kernel(target).transition)
    x = state.position[:, 0].astype(np.int64)
    u = rng.uniform(())
    new = np.sum(thresholds[x] <= u[:, None], axis=1)
    position = new.astype(float)[:, None]
    return State(position, np.asarray(target.log_density(position), dtype=float)), Info(new != x)
