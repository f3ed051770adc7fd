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
from typing import TYPE_CHECKING

import numpy as np

from mcmc.core.compiled import Trajectory
from mcmc.core.errors import UsageError

if TYPE_CHECKING:
    from mcmc.core.targets.base import Target

ValueAndGrad = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def gradient_of(target: Target, sampler: str) -> ValueAndGrad:
    """``target.value_and_grad``, or a :class:`UsageError` naming ``sampler`` when the target has no gradient."""
    if not target.has_grad:
        raise UsageError(
            f"{sampler} needs grad_log_density; target {target.name!r} has no gradient "
            "(add grad_log_density(x) to the target, or use --sampler slice or rwm)"
        )
    return target.value_and_grad


def evaluate(position: np.ndarray, target: Target, sampler: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, log density, gradient)`` at ``position (chains, dim)``: what a gradient sampler's ``init`` needs."""
    x = np.array(position, dtype=float)
    lp, g = gradient_of(target, sampler)(x)
    return x, np.asarray(lp, dtype=float), np.asarray(g, dtype=float)
"""``f(x (n, dim)) -> (log density (n,), gradient (n, dim))`` for any number ``n`` of chains."""


def row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product ``(n, d), (n, d) -> (n,)``: products, then each row's pairwise sum.

    Not ``np.vecdot`` (a third faster at a few chains and dimensions): that is
    BLAS's ``ddot``, whose order of summation and fused multiply-adds depend on
    the kernel OpenBLAS picks for the CPU, so an energy check or a U-turn
    decision on the edge, and with it the chain, could differ between machines.
    """
    return np.add.reduce(a * b, axis=1)


def kinetic_energy(momentum: np.ndarray, inv_mass: np.ndarray) -> np.ndarray:
    """``p' M^{-1} p / 2`` per chain: ``(chains, dim), (chains, dim) -> (chains,)``."""
    return 0.5 * np.einsum("ij,ij->i", inv_mass * momentum, momentum)


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
    taken = np.zeros(chains, dtype=np.int64)
    diverged = np.zeros(chains, dtype=bool)

    # The chains still moving are kept in compact working arrays, so a step
    # costs no gather/scatter; rows are written back only when chains stop.
    # All moving chains have taken the same number of steps, ``k``.
    rows = np.flatnonzero(todo > 0)
    xa, pa, ga, lpa = x[rows], p[rows], g[rows], lp[rows]
    ma, left = minv[rows], todo[rows]
    half = 0.5 * eps[rows, None]  # eps / 2 and eps M^{-1}, hoisted out of the loop
    em = eps[rows, None] * ma
    # A chain diverges when its energy -lp + p'M^{-1}p/2 exceeds this, or is not finite.
    limit = -lpa + kinetic_energy(pa, ma) + max_energy_error
    half_m = 0.5 * ma
    k = 0
    first_end = int(left.min(initial=0))  # no chain stops before this step unless it diverges
    # Huge step sizes (the step-size search, a badly scaled user model) overflow
    # on purpose: the energy check below turns inf/NaN into a divergence.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        while rows.size:
            p_half = half * ga
            p_half += pa
            xa = xa + em * p_half
            lpa, ga = value_and_grad(xa)
            lpa = np.asarray(lpa, dtype=float)
            pa = half * ga
            pa += p_half
            k += 1
            # The step's energy in as few NumPy calls as it takes: at a few
            # chains and dimensions each call's overhead, not its arithmetic,
            # is the cost, and this check runs on every step.
            h = row_dot(half_m * pa, pa)
            h -= lpa
            good = h <= limit  # False for NaN
            if k < first_end and good.all() and np.isfinite(h).all():
                continue
            bad = ~(good & np.isfinite(h))
            stop = bad | (left <= k)
            if stop.any():
                out = rows[stop]
                x[out], p[out], g[out], lp[out] = xa[stop], pa[stop], ga[stop], lpa[stop]
                taken[out] = k
                diverged[out] = bad[stop]
                go = ~stop
                rows, xa, pa, ga, lpa = rows[go], xa[go], pa[go], ga[go], lpa[go]
                half_m, left, limit, half, em = half_m[go], left[go], limit[go], half[go], em[go]
                first_end = int(left.min(initial=0))
    return Trajectory(x, p, lp, g, taken, diverged)


def euler(
    value_and_grad: ValueAndGrad,
    position: np.ndarray,
    momentum: np.ndarray,
    step_size: float,
    n_steps: int,
    inv_mass: np.ndarray,
) -> Trajectory:
    """Explicit Euler's method on Hamilton's equations: the integrator HMC must not use, kept to show why.

    One step: ``x <- x + eps M^{-1} p`` and ``p <- p + eps grad log pi(x)``,
    both from the old point. It is neither time-reversible nor volume-preserving,
    and on a Gaussian it multiplies the energy by ``1 + eps^2`` (per unit of
    mass) every step: over a fixed integration time its energy error is
    ``O(eps)``, and it grows without bound as the path lengthens, where the
    leapfrog's stays ``O(eps^2)`` and bounded (Neal 2011, section 2.3 and
    figure 1). ``mcmc sample -s hmc -P hmc:integrator=euler`` is refused
    with that reason; ``bench/integrators.py`` and
    ``tests/core/test_integrators.py`` measure both errors.

    Parameters
    ----------
    value_and_grad
        Log density and its gradient for a batch of points.
    position, momentum
        ``(chains, dim)`` the start.
    step_size, n_steps
        ``eps`` and the number of steps, the same for every chain.
    inv_mass
        ``(chains, dim)`` (or broadcastable) diagonal of ``M^{-1}``.

    Returns
    -------
    Trajectory
        Every chain takes ``n_steps``; none is flagged diverged.
    """
    x = np.array(position, dtype=float)
    p = np.array(momentum, dtype=float)
    minv = np.broadcast_to(np.asarray(inv_mass, dtype=float), x.shape)
    lp, g = value_and_grad(x)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(int(n_steps)):
            x, p = x + step_size * minv * p, p + step_size * g
            lp, g = value_and_grad(x)
    chains = x.shape[0]
    return Trajectory(x, p, np.asarray(lp, dtype=float), np.asarray(g, dtype=float),
                      np.full(chains, int(n_steps), dtype=np.int64), np.zeros(chains, dtype=bool))  # fmt: skip
