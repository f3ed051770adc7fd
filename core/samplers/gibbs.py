"""Gibbs sampling: a systematic or a random scan over the full conditionals a target provides (Geman & Geman 1984).

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

Random scan (``-P gibbs:scan=random``): instead of each block in turn,
every update picks one coordinate uniformly at random, each chain its own,
and draws it from its full conditional; an iteration is as many updates as
there are coordinates (a sweep's worth of work), so the two scans compare
per iteration. Each update leaves ``pi`` invariant, so the scan does (the
random-scan Gibbs sampler; Liu, Wong & Kong 1995, "Covariance structure and
convergence rate of the Gibbs sampler with various scans", JRSS B 57;
Roberts & Sahu 1997, JRSS B 59; Robert & Casella 2004, section 10.2). A
target that draws single coordinates per chain
(:class:`~mcmc.core.targets.protocols.CoordinateConditionals`: a Gaussian's
coordinates, a lattice's sites) does it in one vectorized draw per update;
any other (a user file's blocks) gets random scan over its blocks, each
chain picking one block per update, which draws every block for every chain
and keeps the chosen one (``blocks^2`` draws per iteration: meant for a few
blocks). The picks are uniforms of each chain's own stream, drawn up front
per iteration, so chain ``i`` still depends only on the seed and ``i``.
A Bayesian network's Gibbs sampler (``NET.bif``,
:mod:`mcmc.core.networks.blocked_gibbs`) takes the same setting: its
coordinates are its blocks and single nodes, one picked at random per
update.

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
from mcmc.core.targets.protocols import CoordinateConditionals, FullConditionals, block_indices, require

DECLARATION = registry.GIBBS
NAME = DECLARATION.name
NEEDS = ("full conditionals: an Ising lattice (ising), a Potts lattice (potts), a Potts model on a graph (graph.csv), "
         "a Gaussian target (gaussian) or a target file with conditional_blocks")
SCANS = DECLARATION.setting("scan").choices  # type: ignore[union-attr]
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


def step(rng: ChainRandom, state: State, target: Target, *, scan: str = "systematic") -> tuple[State, Info]:
    """One Gibbs iteration for every chain: a systematic sweep over the target's blocks, or a random scan.

    Parameters
    ----------
    scan
        ``"systematic"``: every block in the target's order; ``"random"``:
        ``dim`` updates (or as many as there are blocks, for a target without
        :class:`~mcmc.core.targets.protocols.CoordinateConditionals`), each at
        a coordinate (block) every chain picks uniformly at random.

    Returns
    -------
    state
        The new point and its log density.
    info
        ``flip_rate (chains,)`` on a discrete target, else ``None``.

    Raises
    ------
    UsageError
        ``target`` has no full conditionals, or ``scan`` is neither word.
    """
    conditionals = full_conditionals(target)
    x = state.position.copy()
    if scan == "systematic":
        noise = conditionals.sweep_noise(rng)
        for block in conditionals.conditional_blocks():
            conditionals.draw_conditional(rng, x, block, noise)
    elif scan == "random":
        _random_scan(rng, x, conditionals)
    else:
        raise UsageError(f"gibbs: scan must be one of {', '.join(SCANS)}, got {scan!r}")
    flip_rate = np.mean(x != state.position, axis=1) if conditionals.discrete else None
    return State(x, np.asarray(target.log_density(x), dtype=float)), Info(flip_rate)


def _random_scan(rng: ChainRandom, x: np.ndarray, conditionals: FullConditionals) -> None:
    """A sweep's worth of random-scan updates of ``x (chains, dim)``, in place (see the module docstring)."""
    if isinstance(conditionals, CoordinateConditionals):
        k = x.shape[1]
        index = np.minimum((k * rng.uniform((k,))).astype(np.int64), k - 1)  # (chains, k): each chain's coordinates
        noise = conditionals.coordinate_noise(rng, k)
        for t in range(k):
            conditionals.draw_coordinates(x, index[:, t], noise[:, t])
        return
    blocks = list(conditionals.conditional_blocks())
    m = len(blocks)
    pick = np.minimum((m * rng.uniform((m,))).astype(np.int64), m - 1)  # (chains, m): each chain's blocks
    for t in range(m):
        noise = conditionals.sweep_noise(rng)
        current = x.copy()
        for b, block in enumerate(blocks):
            # Every block is drawn for every chain (the same random numbers whatever the others picked),
            # and each chain keeps the one it picked.
            drawn = current.copy()
            conditionals.draw_conditional(rng, drawn, block, noise)
            chosen = pick[:, t] == b
            x[chosen] = drawn[chosen]
