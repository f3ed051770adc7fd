"""Single-site heat-bath Gibbs sampling of the Ising model, one checkerboard sweep per iteration.

Each spin is redrawn from its full conditional (Geman & Geman 1984; the
"heat bath" of Glauber 1963 dynamics):

    p(s_i = +1 | rest) = 1 / (1 + exp(-2 beta h_i)),   h_i = sum of the 4 neighbours of i.

The sites are split into colour classes with no two neighbours in one class
(the checkerboard on an even lattice, three classes when a side is odd, see
:func:`mcmc.core.targets.ising.colour_classes`): given the other classes, the
spins of a class are conditionally independent, so one class is updated for
every chain in one vectorized NumPy step, and one iteration (a *sweep*)
updates every class once, i.e. every spin once. Each class update leaves
``pi`` invariant, hence so does the sweep (a deterministic-scan Gibbs sampler).

All uniforms of a sweep are drawn up front, ``(chains, L^2)`` from each
chain's own stream, so a chain's path depends only on the seed and its index.
Every update is "accepted"; the statistic ``flip_rate`` is the fraction of
the chain's spins that changed in the sweep. Near the critical point the
integrated autocorrelation time of the magnetization grows like ``L^2.17``
sweeps (critical slowing down), which cluster moves
(:mod:`mcmc.core.samplers.swendsen_wang`) avoid.

No warm-up adaptation: there is nothing to tune.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target
from mcmc.core.targets.ising import colour_classes, lattice_of, neighbours

NAME = "gibbs"
LATTICE = True  # draws spin lattices (Target.lattice); the driver keeps other samplers off them


class State(NamedTuple):
    position: np.ndarray  # (chains, L*L) spins -1.0 / +1.0
    log_density: np.ndarray  # (chains,)


class Info(NamedTuple):
    flip_rate: np.ndarray  # (chains,) fraction of spins that changed in the sweep


def conditional_up(beta: float, field: np.ndarray) -> np.ndarray:
    """``p(s_i = +1 | neighbours) = 1 / (1 + exp(-2 beta h_i))`` for local fields ``h_i`` (any shape).

    Written as ``(1 + tanh(beta h)) / 2``, which never overflows.
    """
    return 0.5 * (1.0 + np.tanh(beta * field))


def lattice_state(position: np.ndarray, target: Target, sampler: str) -> State:
    """State at spins ``position (chains, L*L)``, for the lattice sampler named ``sampler``.

    Raises
    ------
    UsageError
        ``target`` is not an Ising lattice.
    """
    lattice_of(target, sampler)
    position = np.asarray(position, dtype=float)
    return State(position, np.asarray(target.log_density(position), dtype=float))


def init(position: np.ndarray, target: Target) -> State:
    """State at spins ``position (chains, L*L)`` (see :func:`lattice_state`)."""
    return lattice_state(position, target, NAME)


def step(rng: ChainRandom, state: State, target: Target) -> tuple[State, Info]:
    """One heat-bath sweep (every colour class once, in order) for every chain.

    Returns
    -------
    state
        New spins and their log density.
    info
        ``flip_rate (chains,)``.

    Raises
    ------
    UsageError
        ``target`` is not an Ising lattice.
    """
    rows, cols, beta = lattice_of(target, NAME)
    nbr = neighbours(rows, cols)
    x = state.position.copy()
    u = rng.uniform((rows * cols,))
    for sites in colour_classes(rows, cols):
        field = x[:, nbr[sites]].sum(axis=-1)
        x[:, sites] = np.where(u[:, sites] < conditional_up(beta, field), 1.0, -1.0)
    flip_rate = np.mean(x != state.position, axis=1)
    return State(x, np.asarray(target.log_density(x), dtype=float)), Info(flip_rate)
