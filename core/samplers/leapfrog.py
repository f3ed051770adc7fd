"""Leapfrog (Störmer-Verlet) integration of Hamiltonian dynamics, vectorized over chains.

The Hamiltonian is ``H(x, p) = -log pi(x) + p' M^{-1} p / 2`` with a diagonal
inverse mass matrix ``M^{-1}`` per chain. One leapfrog step of size ``eps`` is

    p <- p + (eps / 2) grad log pi(x)
    x <- x + eps M^{-1} p
    p <- p + (eps / 2) grad log pi(x)

It is time-reversible and volume-preserving (symplectic), and its energy error
over a fixed integration time is O(eps^2) (Neal 2011, section 2.3; Leimkuhler &
Reich 2004, chapter 4). These three properties are what make the Metropolis
correction in HMC exact, and they are what ``tests/core/test_leapfrog.py`` checks.

Every chain has its own step size and its own number of steps: all chains are
integrated together in one loop over steps, and a chain that has taken its
steps (or diverged) is masked out, so the density and its gradient are only
evaluated for the chains still moving.

A chain *diverges* when its energy error ``H(x_i, p_i) - H(x_0, p_0)`` exceeds
``max_energy_error`` or becomes non-finite (Stan's rule, Betancourt 2017,
section 6.2): it stops there and the caller must reject the proposal.

References
----------
Neal, R. M. (2011). MCMC using Hamiltonian dynamics. In *Handbook of Markov
Chain Monte Carlo*, chapter 5. Chapman & Hall/CRC.
Leimkuhler, B. & Reich, S. (2004). *Simulating Hamiltonian Dynamics*. Cambridge.
Betancourt, M. (2017). A conceptual introduction to Hamiltonian Monte Carlo.
arXiv:1701.02434.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

ValueAndGrad = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``f(x (n, dim)) -> (log density (n,), gradient (n, dim))`` for any number ``n`` of chains."""


class Trajectory(NamedTuple):
    """The end point of a leapfrog trajectory, per chain.

    Attributes
    ----------
    position, momentum, grad
        Shape ``(chains, dim)``: where each chain stopped (for a diverged chain,
        the first point whose energy error was too large or non-finite).
    log_density
        Shape ``(chains,)``: ``log pi`` at ``position``.
    n_steps
        Shape ``(chains,)``, int: leapfrog steps taken (= gradient evaluations).
    diverged
        Shape ``(chains,)``, bool: the trajectory stopped on a divergence.
    """

    position: np.ndarray
    momentum: np.ndarray
    log_density: np.ndarray
    grad: np.ndarray
    n_steps: np.ndarray
    diverged: np.ndarray


def kinetic_energy(momentum: np.ndarray, inv_mass: np.ndarray) -> np.ndarray:
    """``p' M^{-1} p / 2`` per chain: ``(chains, dim), (chains, dim) -> (chains,)``."""
    return 0.5 * np.sum(inv_mass * momentum * momentum, axis=-1)


def integrate(
    value_and_grad: ValueAndGrad,
    position: np.ndarray,
    momentum: np.ndarray,
    log_density: np.ndarray,
    grad: np.ndarray,
    step_size: np.ndarray | float,
    n_steps: np.ndarray | int,
    inv_mass: np.ndarray,
    max_energy_error: float = np.inf,
) -> Trajectory:
    """Run ``n_steps[c]`` leapfrog steps of size ``step_size[c]`` for every chain ``c``.

    Parameters
    ----------
    value_and_grad
        Log density and its gradient for a batch of points (any leading size).
    position, momentum, grad
        Shape ``(chains, dim)``: the start, with ``grad = grad log pi(position)``.
    log_density
        Shape ``(chains,)``: ``log pi(position)``.
    step_size
        Scalar or ``(chains,)``; may be negative (integrate backwards in time).
    n_steps
        Scalar or ``(chains,)`` non-negative ints; chains with fewer steps stop early.
    inv_mass
        Shape ``(chains, dim)`` (or broadcastable): diagonal of ``M^{-1}``.
    max_energy_error
        A chain whose energy error exceeds this (or is not finite) stops and is
        flagged ``diverged``. The default never flags a finite error.

    Returns
    -------
    Trajectory
        The inputs are not modified.
    """
    x = np.array(position, dtype=float)
    p = np.array(momentum, dtype=float)
    lp = np.array(log_density, dtype=float)
    g = np.array(grad, dtype=float)
    chains = x.shape[0]
    eps = np.broadcast_to(np.asarray(step_size, dtype=float), (chains,))
    todo = np.broadcast_to(np.asarray(n_steps), (chains,)).astype(np.int64)
    minv = np.broadcast_to(np.asarray(inv_mass, dtype=float), x.shape)
    h0 = -lp + kinetic_energy(p, minv)
    taken = np.zeros(chains, dtype=np.int64)
    diverged = np.zeros(chains, dtype=bool)

    # Huge step sizes (the step-size search, a badly scaled user model) overflow
    # on purpose: the energy check below turns inf/NaN into a divergence.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(int(todo.max(initial=0))):
            moving = (taken < todo) & ~diverged
            n_moving = int(np.count_nonzero(moving))
            if n_moving == 0:
                break
            # A slice keeps the common all-chains case free of fancy-index copies.
            sel: slice | np.ndarray = slice(None) if n_moving == chains else np.flatnonzero(moving)
            e = eps[sel, None]
            m = minv[sel]
            p_half = p[sel] + 0.5 * e * g[sel]
            x_new = x[sel] + e * m * p_half
            lp_new, g_new = value_and_grad(x_new)
            lp_new = np.asarray(lp_new, dtype=float)
            p_new = p_half + 0.5 * e * g_new
            h = -lp_new + kinetic_energy(p_new, m)
            bad = ~np.isfinite(h) | (h - h0[sel] > max_energy_error)
            x[sel], p[sel], lp[sel], g[sel] = x_new, p_new, lp_new, g_new
            taken[sel] += 1
            diverged[sel] = bad
    return Trajectory(x, p, lp, g, taken, diverged)
