"""The periodic square lattice (torus) shared by the Ising and Potts models: neighbours, bonds, colour classes.

Sites of a ``rows x cols`` torus are numbered in row-major order. Everything
here depends on the shape only and is cached (read-only arrays): the
neighbour table the heat-bath updates read, the nearest-neighbour pairs
Swendsen-Wang bonds, and a proper colouring whose classes are the blocks of a
vectorized Gibbs sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from mcmc.core.memory import require_memory
from mcmc.core.targets.base import Target

#: Bytes per site the lattice's own tables take (neighbours, bonds, colour classes): the chains' draws come on top.
LATTICE_BYTES_PER_SITE = 96


def require_lattice(size: int) -> None:
    """Refuse, before anything is built, an ``L x L`` lattice whose tables alone would not fit in memory.

    Raises
    ------
    InputError
        Naming ``-T size`` and the memory asked for (:func:`mcmc.core.memory.require_memory`).
    """
    require_memory(size * size, LATTICE_BYTES_PER_SITE, f"a {size} x {size} lattice", "-T size")

if TYPE_CHECKING:
    from mcmc.core.random import ChainRandom


@lru_cache(maxsize=16)
def neighbours(rows: int, cols: int) -> np.ndarray:
    """Neighbour table of the ``rows x cols`` torus, sites in row-major order.

    Returns
    -------
    ndarray, shape (rows * cols, 4), int
        Site indices of the right, left, lower and upper neighbour of each
        site (periodic boundary). Read-only (cached).
    """
    r, c = np.divmod(np.arange(rows * cols), cols)
    right, left = r * cols + (c + 1) % cols, r * cols + (c - 1) % cols
    down, up = ((r + 1) % rows) * cols + c, ((r - 1) % rows) * cols + c
    table = np.stack([right, left, down, up], axis=1)
    table.setflags(write=False)
    return table


@lru_cache(maxsize=16)
def bonds(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``2 rows cols`` nearest-neighbour pairs of the torus, each once.

    Returns
    -------
    first, second : ndarray, shape (2 * rows * cols,), int
        Pair ``2 i`` joins site ``i`` with its right neighbour, pair ``2 i + 1``
        with the one below: ``first`` is sorted (what a CSR graph wants).
        Read-only (cached).
    """
    nbr = neighbours(rows, cols)
    first = np.repeat(np.arange(rows * cols), 2)
    second = nbr[:, [0, 2]].ravel()
    first.setflags(write=False)
    second.setflags(write=False)
    return first, second


def _cycle_colours(n: int) -> np.ndarray:
    """A proper colouring of the cycle ``C_n`` with colours 0, 1 (and 2 for odd ``n``)."""
    c = np.arange(n) % 2
    if n % 2:
        c[-1] = 2
    return c


@lru_cache(maxsize=16)
def colour_classes(rows: int, cols: int) -> tuple[np.ndarray, ...]:
    """Sites grouped so that no two neighbours share a group: the checkerboard, or 3 groups.

    The torus is the product of two cycles; with proper colourings ``a`` of
    ``C_rows`` and ``b`` of ``C_cols`` in ``0..k-1``, ``(a_r + b_c) mod k`` is
    proper (neighbours differ in one coordinate only). ``k = 2`` (the
    checkerboard) when both sides are even, else ``k = 3``.

    Returns
    -------
    tuple of ndarray
        ``k`` read-only arrays of site indices (row-major), one per colour.
    """
    k = 2 if rows % 2 == 0 and cols % 2 == 0 else 3
    colour = ((_cycle_colours(rows)[:, None] + _cycle_colours(cols)[None, :]) % k).ravel()
    classes = tuple(np.flatnonzero(colour == i) for i in range(k))
    for idx in classes:
        idx.setflags(write=False)
    return classes


@dataclass(frozen=True, eq=False)
class LatticeTarget(Target):
    """A spin model on an ``rows x cols`` torus: what the Ising and Potts targets share.

    Implements :class:`~mcmc.core.targets.protocols.SpinLattice` (``bonds``,
    ``beta``), the scan of :class:`~mcmc.core.targets.protocols.FullConditionals`
    over colour classes with one uniform per site and sweep, and
    :class:`~mcmc.core.targets.protocols.CoordinateConditionals` (one site per
    chain, for random scan); a subclass supplies ``draw_conditional`` and
    ``heat_bath`` (its heat bath on a block, and on single sites).

    Parameters
    ----------
    rows, cols
        The sides of the torus (``dim = rows * cols``, sites in row-major order).
    beta
        The coupling (inverse temperature).
    """

    rows: int = 0
    cols: int = 0
    beta: float = 0.0
    discrete = True  # FullConditionals: sites take finitely many values

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rows * self.cols != self.dim:
            sites = self.rows * self.cols
            raise ValueError(f"lattice {self.rows} x {self.cols} has {sites} sites but dim is {self.dim}")

    def bonds(self) -> tuple[np.ndarray, np.ndarray]:
        """The nearest-neighbour pairs of the torus (see :func:`bonds`)."""
        return bonds(self.rows, self.cols)

    def conditional_blocks(self) -> tuple[np.ndarray, ...]:
        """The colour classes (see :func:`colour_classes`): sites of a class are conditionally independent."""
        return colour_classes(self.rows, self.cols)

    def sweep_noise(self, rng: ChainRandom) -> np.ndarray:
        """One uniform per site and chain, ``(chains, L^2)``."""
        return rng.uniform((self.dim,))

    def coordinate_noise(self, rng: ChainRandom, updates: int) -> np.ndarray:
        """One uniform per update and chain, ``(chains, updates)`` (random scan, one site per update)."""
        return rng.uniform((updates,))

    def draw_coordinates(self, x: np.ndarray, index: np.ndarray, noise: np.ndarray) -> None:
        """Heat bath at site ``index[c]`` of every chain ``c`` (random scan): the subclass's :meth:`heat_bath`."""
        rows = np.arange(x.shape[0])
        x[rows, index] = self.heat_bath(x[rows[:, None], neighbours(self.rows, self.cols)[index]], noise)

    def heat_bath(self, around: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The new value of sites whose neighbours hold ``around (..., 4)``, by inverse CDF on ``u (...)``."""
        raise NotImplementedError
