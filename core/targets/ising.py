"""The 2-D Ising model on an ``L x L`` periodic square lattice: a discrete target for lattice samplers.

Spins ``s_i`` in ``{-1, +1}`` on the sites of an ``L x L`` torus, with

    pi(s) ∝ exp(beta * sum_<ij> s_i s_j),

the sum running over the ``2 L^2`` nearest-neighbour pairs, each counted once
(zero field, unit coupling; Ising 1925, Onsager 1944). The critical inverse
temperature of the infinite lattice is ``beta_c = log(1 + sqrt 2) / 2 =
0.44069...``; the default ``beta = 0.4407`` sits at it, where single-site
updates slow down most and cluster updates (Swendsen & Wang 1987) pay off.

A point of the sampling space is a configuration of spins stored as floats
``-1.0``/``+1.0`` in row-major order (``dim = L^2``), so the target has the
shape of every other :class:`~mcmc.core.targets.base.Target`; ``log_density``
is the unnormalised ``beta * sum_<ij> s_i s_j`` (``-inf`` for a point that is
not a spin configuration), so the driver's ``lp`` is meaningful. The target
(:class:`IsingTarget`) implements the protocols
:class:`~mcmc.core.targets.protocols.SpinLattice` (for ``swendsen-wang``) and
:class:`~mcmc.core.targets.protocols.FullConditionals` (for ``gibbs``), and
only these lattice samplers apply to it.

Full conditionals: single-site heat-bath updates (Geman & Geman 1984; the
"heat bath" of Glauber 1963 dynamics),

    p(s_i = +1 | rest) = 1 / (1 + exp(-2 beta h_i)),   h_i = sum of the 4 neighbours of i.

The sites are split into colour classes with no two neighbours in one class
(the checkerboard on an even lattice, three classes when a side is odd, see
:func:`colour_classes`): given the other classes, the spins of a class are
conditionally independent, so a class is one block, updated for every chain
in one vectorized NumPy step. All uniforms of a sweep are drawn up front,
``(chains, L^2)`` from each chain's own stream. Near the critical point the
integrated autocorrelation time of the magnetization grows like ``L^2.17``
sweeps (critical slowing down), which cluster moves
(:mod:`mcmc.core.samplers.swendsen_wang`) avoid.

Reported values (per spin): magnetization ``m = sum_i s_i / L^2``, ``abs_m =
|m|`` and energy ``energy = -sum_<ij> s_i s_j / L^2``. Their exact means and
sds come from enumerating all ``2^(L^2)`` configurations for ``L <= 4``
(65536 states); larger lattices have none (``mean = sd = None``).

The lattice geometry (neighbour tables, bonds, a proper colouring of the
torus) lives in :mod:`mcmc.core.targets.lattice`, shared with the Potts model
(:mod:`mcmc.core.targets.potts`, of which this is the ``q = 2`` case at
coupling ``2 beta``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.lattice import LatticeTarget, bonds, colour_classes, neighbours, require_lattice

# The geometry is re-exported: it was defined here before the Potts model shared it.
__all__ = [
    "IsingTarget",
    "bond_sum",
    "bonds",
    "colour_classes",
    "conditional_up",
    "exact_moments",
    "ising",
    "neighbours",
]

BETA_CRITICAL = 0.5 * float(np.log1p(np.sqrt(2.0)))  # 0.44068679...
MAX_EXACT_SIZE = 4  # enumerate 2^(L^2) states up to L = 4


def bond_sum(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``sum_<ij> s_i s_j`` over the nearest-neighbour pairs, for spins ``x (..., rows * cols)``.

    Returns
    -------
    ndarray, shape (...)
    """
    nbr = neighbours(rows, cols)
    return np.einsum("...i,...i->...", x, x[..., nbr[:, 0]] + x[..., nbr[:, 2]])


def conditional_up(beta: float, field: np.ndarray) -> np.ndarray:
    """``p(s_i = +1 | neighbours) = 1 / (1 + exp(-2 beta h_i))`` for local fields ``h_i`` (any shape).

    Written as ``(1 + tanh(beta h)) / 2``, which never overflows.
    """
    return 0.5 * (1.0 + np.tanh(beta * field))


@dataclass(frozen=True, eq=False)
class IsingTarget(LatticeTarget):
    """The Ising model as a :class:`Target`, with its lattice and its full conditionals.

    Implements :class:`~mcmc.core.targets.protocols.SpinLattice` and
    :class:`~mcmc.core.targets.protocols.FullConditionals`.

    Parameters
    ----------
    rows, cols
        The sides of the torus (``dim = rows * cols``, sites in row-major order).
    beta
        Inverse temperature.
    """

    def draw_conditional(self, rng: ChainRandom, x: np.ndarray, block: np.ndarray, noise: np.ndarray) -> None:
        """Heat bath on the sites ``block`` of every chain: ``+1`` where ``u < p(s_i = +1 | neighbours)``."""
        field = x[:, neighbours(self.rows, self.cols)[block]].sum(axis=-1)
        x[:, block] = np.where(noise[:, block] < conditional_up(self.beta, field), 1.0, -1.0)

    def heat_bath(self, around: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``+1`` where ``u < p(s_i = +1 | neighbours around (..., 4))``, else ``-1``."""
        return np.where(u < conditional_up(self.beta, around.sum(axis=-1)), 1.0, -1.0)


@lru_cache(maxsize=8)
def exact_moments(size: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and sd of ``(m, abs_m, energy)`` by enumerating all ``2^(size^2)`` states.

    Returns
    -------
    mean, sd : ndarray, shape (3,)
        Read-only (cached). Feasible for ``size <= 4``.
    """
    n = size * size
    codes = np.arange(2**n, dtype=np.int64)
    spins = (((codes[:, None] >> np.arange(n)) & 1) * 2 - 1).astype(np.float64)
    s = bond_sum(spins, size, size)
    w = np.exp(beta * (s - s.max()))
    w /= w.sum()
    m = spins.mean(axis=1)
    values = np.stack([m, np.abs(m), -s / n], axis=1)
    mean = w @ values
    sd = np.sqrt(np.maximum(w @ (values - mean) ** 2, 0.0))
    mean.setflags(write=False)
    sd.setflags(write=False)
    return mean, sd


def ising(size: int = 16, beta: float = 0.4407) -> IsingTarget:
    """The zero-field 2-D Ising model on a ``size x size`` torus at inverse temperature ``beta``.

    Parameters
    ----------
    size
        ``L``, the side of the lattice (at least 3, so that the four
        neighbours of a site are distinct).
    beta
        Inverse temperature, ``>= 0`` (ferromagnetic); ``0.4407`` is about
        critical.

    Returns
    -------
    IsingTarget
        ``dim = size^2`` spins on a ``size x size`` torus, reported variables
        ``m``, ``abs_m`` and ``energy`` (per spin), exact moments for
        ``size <= 4``, uniform random starting spins.

    Raises
    ------
    UsageError
        ``size`` not an integer >= 3, or ``beta`` not a finite number >= 0.
    """
    if isinstance(size, bool) or int(size) != size or size < 3:
        raise UsageError(f"size must be an integer >= 3, got {size}")
    size, beta = int(size), float(beta)
    if not (np.isfinite(beta) and beta >= 0.0):
        raise UsageError(f"beta must be a finite number >= 0, got {beta}")
    require_lattice(size)
    n = size * size

    def log_density(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        lp = beta * bond_sum(x, size, size)
        return np.where(np.all(np.abs(x) == 1.0, axis=-1), lp, -np.inf)

    def transform(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        m = x.mean(axis=-1)
        return np.stack([m, np.abs(m), -bond_sum(x, size, size) / n], axis=-1)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        return np.where(rng.uniform((n,)) < 0.5, -1.0, 1.0)

    mean = sd = None
    if size <= MAX_EXACT_SIZE:
        mean, sd = (a.copy() for a in exact_moments(size, beta))
        mean[0] = 0.0  # E[m] = 0 exactly by the s -> -s symmetry (the sum leaves ~1e-17)
    return IsingTarget(
        name="ising",
        dim=n,
        log_density=log_density,
        names=("m", "abs_m", "energy"),
        variables=(("m", ()), ("abs_m", ()), ("energy", ())),
        mean=mean,
        sd=sd,
        initial_point=initial_point,
        transform=transform,
        options={"size": size, "beta": beta},
        rows=size,
        cols=size,
        beta=beta,
    )
