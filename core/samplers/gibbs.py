"""Gibbs sampling from full conditionals the target knows: the Ising model, Gaussian targets.

**Ising model** (``Target.lattice``): single-site heat-bath updates, one
checkerboard sweep per iteration. Each spin is redrawn from its full conditional (Geman & Geman 1984; the
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

**Gaussian targets** (``Target.gaussian_form``, mean ``mu`` and precision
``Q``): a systematic scan over the coordinates, each drawn from
``x_i | x_-i ~ N(mu_i - sum_{j != i} Q_ij (x_j - mu_j) / Q_ii, 1 / Q_ii)``.
The lecture example of why Gibbs sampling can be slow: for two coordinates
with correlation ``rho``, each coordinate's chain is AR(1) with coefficient
``rho^2``, so ``rho = 0.99`` gives an integrated autocorrelation time near 100.

No warm-up adaptation: there is nothing to tune.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import DensityState, density_state
from mcmc.core.targets.base import Target
from mcmc.core.targets.ising import colour_classes, lattice_of, neighbours

NAME = "gibbs"
LATTICE = True  # draws spin lattices (Target.lattice), among others; the driver keeps other samplers off them


State = DensityState  # spins -1.0 / +1.0 (chains, L*L), or a Gaussian's point, and the log density


class Info(NamedTuple):
    flip_rate: np.ndarray  # (chains,) fraction of spins that changed in the sweep


class GaussianInfo(NamedTuple):
    """A Gaussian sweep has no statistic of its own (the driver records ``lp``)."""


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
    return density_state(position, target)


def init(position: np.ndarray, target: Target) -> State:
    """State at ``position (chains, dim)``: spins of a lattice (see :func:`lattice_state`) or a Gaussian's point.

    Raises
    ------
    UsageError
        ``target`` is neither an Ising lattice nor an exact Gaussian.
    """
    if target.lattice is None:
        _gaussian_form(target)
        return density_state(position, target)
    return lattice_state(position, target, NAME)


def _gaussian_form(target: Target) -> tuple[np.ndarray, np.ndarray]:
    if target.gaussian_form is None:
        raise UsageError(
            f"sampler 'gibbs' needs full conditionals: an Ising lattice (ising) or a Gaussian target (gaussian), "
            f"not {target.name!r}"
        )
    mean, precision = target.gaussian_form
    return np.asarray(mean, dtype=float), np.asarray(precision, dtype=float)


def gaussian_sweep(rng: ChainRandom, state: State, target: Target) -> tuple[State, GaussianInfo]:
    """One systematic-scan Gibbs sweep over the coordinates of a Gaussian target, for every chain."""
    mean, precision = _gaussian_form(target)
    x = state.position.copy()
    d = x.shape[1]
    z = rng.normal((d,))  # a sweep's normals up front: (chains, dim) from each chain's own stream
    diag = np.diag(precision)
    for i in range(d):
        # Q_i. (x - mu) includes Q_ii (x_i - mu_i), which the conditional mean leaves out
        pull = (x - mean) @ precision[i] - diag[i] * (x[:, i] - mean[i])
        x[:, i] = mean[i] - pull / diag[i] + z[:, i] / np.sqrt(diag[i])
    return State(x, np.asarray(target.log_density(x), dtype=float)), GaussianInfo()


def step(rng: ChainRandom, state: State, target: Target) -> tuple[State, Info | GaussianInfo]:
    """One Gibbs sweep for every chain: heat bath on a lattice, else :func:`gaussian_sweep`.

    On a lattice, every colour class once, in order.

    Returns
    -------
    state
        New spins and their log density.
    info
        ``flip_rate (chains,)``.

    Raises
    ------
    UsageError
        ``target`` is neither an Ising lattice nor an exact Gaussian.
    """
    if target.lattice is None:
        return gaussian_sweep(rng, state, target)
    rows, cols, beta = lattice_of(target, NAME)
    nbr = neighbours(rows, cols)
    x = state.position.copy()
    u = rng.uniform((rows * cols,))
    for sites in colour_classes(rows, cols):
        field = x[:, nbr[sites]].sum(axis=-1)
        x[:, sites] = np.where(u[:, sites] < conditional_up(beta, field), 1.0, -1.0)
    flip_rate = np.mean(x != state.position, axis=1)
    return State(x, np.asarray(target.log_density(x), dtype=float)), Info(flip_rate)
