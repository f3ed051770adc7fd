"""Whole leapfrog trajectories in compiled code, for targets whose log density is a numba function.

A target file may define ``point_log_density_and_grad(x)``: one point
``x (dim,)`` to ``(log density, gradient (dim,))``, compiled with
``@numba.njit`` (``docs/formats.md``). Then :func:`make_trajectory` builds,
once per process, a compiled loop over chains and leapfrog steps that calls
it with no Python in between: the same integrator as
:func:`mcmc.core.samplers.leapfrog.integrate` (same steps, same divergence
rule, the same :class:`~mcmc.core.samplers.leapfrog.Trajectory`), so HMC's
transition and its warm-up are unchanged; only where the arithmetic runs.
On small models each NumPy leapfrog step costs tens of microseconds of
interpreter and array overhead per chain (issue 15 measured 24 to 415 µs per
chain-gradient against compiled JAX's 0.7 to 22); here a step costs what the
model's arithmetic costs.

The compiled loop holds the user's function as a constant, so it is compiled
for that function: about a second, once per process (numba cannot cache a
function that closes over another across processes; the user's own function
can be ``cache=True``). ``batch`` gives the vectorized log density and
gradient that everything else (step-size search, initial checks, other
samplers) uses, from the same point function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mcmc.core.samplers.leapfrog import Trajectory


def is_compiled(fn: Any) -> bool:
    """Whether ``fn`` is a numba-compiled function (a dispatcher of ``@numba.njit``)."""
    try:
        from numba.core.registry import CPUDispatcher
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    return isinstance(fn, CPUDispatcher)


def make_batch(point: Any) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``x (n, dim) -> (log density (n,), gradient (n, dim))`` from the point function ``point``."""
    from numba import njit

    @njit
    def batch(x):  # noqa: ANN001, ANN202
        n, dim = x.shape
        lp = np.empty(n)
        g = np.empty((n, dim))
        for i in range(n):
            v, gi = point(np.ascontiguousarray(x[i]))
            if gi.shape[0] != dim:  # numba would broadcast a length-1 gradient without a word
                raise ValueError("the gradient's length is not dim")
            lp[i] = v
            g[i, :] = gi
        return lp, g

    def value_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return batch(np.ascontiguousarray(x, dtype=np.float64))

    return value_and_grad


def make_trajectory(point: Any) -> Callable[..., Trajectory]:
    """A compiled :func:`~mcmc.core.samplers.leapfrog.integrate` for the point function ``point``.

    The returned function takes ``(position, momentum, log_density, grad,
    step_size (chains,), n_steps (chains,), inv_mass (chains, dim),
    max_energy_error)`` and returns a ``Trajectory``; the inputs are not
    modified.
    """
    from numba import njit

    @njit
    def run(x0, p0, lp0, g0, eps, n_steps, minv, max_err):  # noqa: ANN001, ANN202
        chains, dim = x0.shape
        x = x0.copy()
        p = p0.copy()
        lp = lp0.copy()
        g = g0.copy()
        taken = np.zeros(chains, dtype=np.int64)
        diverged = np.zeros(chains, dtype=np.bool_)
        for c in range(chains):
            if n_steps[c] <= 0:
                continue
            half = 0.5 * eps[c]
            xc = x[c].copy()
            pc = p[c].copy()
            gc = g[c].copy()
            em = eps[c] * minv[c]
            h0 = -lp[c]
            for j in range(dim):
                h0 += 0.5 * minv[c, j] * pc[j] * pc[j]
            lpc = lp[c]
            k = 0
            bad = False
            while k < n_steps[c]:
                for j in range(dim):
                    pc[j] += half * gc[j]
                    xc[j] += em[j] * pc[j]
                lpc, gnew = point(xc)
                if gnew.shape[0] != dim:
                    raise ValueError("the gradient's length is not dim")
                gc[:] = gnew
                for j in range(dim):
                    pc[j] += half * gc[j]
                k += 1
                h = -lpc
                for j in range(dim):
                    h += 0.5 * minv[c, j] * pc[j] * pc[j]
                # as leapfrog.integrate: a non-finite density or energy error is a divergence
                if not np.isfinite(lpc) or not (h - h0 <= max_err):
                    bad = True
                    break
            x[c, :] = xc
            p[c, :] = pc
            g[c, :] = gc
            lp[c] = lpc
            taken[c] = k
            diverged[c] = bad
        return x, p, lp, g, taken, diverged

    def trajectory(position: np.ndarray, momentum: np.ndarray, log_density: np.ndarray, grad: np.ndarray,
                   step_size: np.ndarray, n_steps: np.ndarray, inv_mass: np.ndarray,
                   max_energy_error: float) -> Trajectory:
        chains, dim = np.shape(position)
        f64 = np.float64
        out = run(np.ascontiguousarray(position, dtype=f64), np.ascontiguousarray(momentum, dtype=f64),
                  np.ascontiguousarray(log_density, dtype=f64), np.ascontiguousarray(grad, dtype=f64),
                  np.ascontiguousarray(np.broadcast_to(step_size, (chains,)), dtype=f64),
                  np.ascontiguousarray(np.broadcast_to(n_steps, (chains,)), dtype=np.int64),
                  np.ascontiguousarray(np.broadcast_to(inv_mass, (chains, dim)), dtype=f64), float(max_energy_error))
        return Trajectory(*out)

    return trajectory
