"""Gibbs sampling: a systematic scan over the full conditionals a target provides (Geman & Geman 1984).

Geman & Geman (1984), "Stochastic relaxation, Gibbs distributions, and the
Bayesian restoration of images", IEEE PAMI 6. One iteration (a *sweep*), for
every chain at once: each block of coordinates in turn is drawn from its
full conditional given the current values of all others. Each update leaves
``pi`` invariant, hence so does the sweep (a deterministic-scan Gibbs
sampler). What the blocks are and how they are drawn is the target's
business: it implements :class:`~mcmc.core.targets.protocols.FullConditionals`
(the Ising model's heat bath over colour classes,
:class:`~mcmc.core.targets.ising.IsingTarget`; the Potts model's categorical
heat bath, :class:`~mcmc.core.targets.potts.PottsTarget`; a Gaussian's conditional
normals, :class:`~mcmc.core.targets.builtin.GaussianTarget`). The sweep's
random numbers are drawn up front from each chain's own stream
(``sweep_noise``), so a chain's path depends only on the seed and its index.

Every update is "accepted". On a discrete target the statistic ``flip_rate``
is the fraction of the chain's coordinates that changed in the sweep; a
continuous target has no statistic of its own (the driver records ``lp``).
No warm-up adaptation: there is nothing to tune.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.base import DensityState, density_state
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import FullConditionals, block_indices, require

DECLARATION = registry.GIBBS
NAME = DECLARATION.name
NEEDS = "full conditionals: an Ising lattice (ising), a Potts lattice (potts) or a Gaussian target (gaussian)"
LATTICE = True  # draws spin lattices too (they implement FullConditionals); the driver keeps other samplers off them


State = DensityState  # the point (spins -1.0 / +1.0 on a lattice) and its log density


class Info(NamedTuple):
    flip_rate: np.ndarray | None  # (chains,) fraction of coordinates changed (discrete targets; else None)


def full_conditionals(target: Target) -> FullConditionals:
    """``target`` as :class:`~mcmc.core.targets.protocols.FullConditionals` (``UsageError`` if it is not)."""
    return require(target, FullConditionals, NAME, NEEDS)


def init(position: np.ndarray, target: Target) -> State:
    """State at ``position (chains, dim)``.

    Raises
    ------
    UsageError
        ``target`` has no full conditionals.
    """
    conditionals = full_conditionals(target)
    position = np.asarray(position, dtype=float)
    try:
        covered = np.zeros(target.dim, dtype=bool)
        for block in conditionals.conditional_blocks():
            covered[block_indices(block, target.dim)] = True
    except UsageError:  # blocks that are not coordinate indices: the target's own business
        covered = None
    if covered is not None and not covered.all():
        raise UsageError(
            f"the Gibbs blocks of {target.name!r} leave {int((~covered).sum())} coordinate(s) to another kernel "
            f"(first: {int(np.flatnonzero(~covered)[0])}): use --sampler hmc-gibbs"
        )
    return density_state(position, target)


def step(rng: ChainRandom, state: State, target: Target) -> tuple[State, Info]:
    """One systematic-scan Gibbs sweep over the target's blocks, for every chain.

    Returns
    -------
    state
        The new point and its log density.
    info
        ``flip_rate (chains,)`` on a discrete target, else ``None``.

    Raises
    ------
    UsageError
        ``target`` has no full conditionals.
    """
    conditionals = full_conditionals(target)
    x = state.position.copy()
    noise = conditionals.sweep_noise(rng)
    for block in conditionals.conditional_blocks():
        conditionals.draw_conditional(rng, x, block, noise)
    flip_rate = np.mean(x != state.position, axis=1) if conditionals.discrete else None
    return State(x, np.asarray(target.log_density(x), dtype=float)), Info(flip_rate)
