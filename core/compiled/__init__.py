"""Leapfrog trajectories and NUTS transitions in compiled code, for targets whose log density is a numba function.

A target may have a *point function* ``point(x, data)``: one point
``x (dim,)`` and a tuple of arrays ``data`` (the model's data, constant
during a run) to ``(log density, gradient (dim,))``, compiled with
``@numba.njit``. A target file's ``point_log_density_and_grad(x)``
(``docs/formats.md``) is one, with no data; the built-in ``bnn`` is another
(:mod:`mcmc.core.targets.bnn_kernel`). Then :func:`make_trajectory` gives a
compiled loop over chains and leapfrog steps that calls it with no Python in
between: the same integrator as :func:`mcmc.core.samplers.leapfrog.integrate`
(same steps, same divergence rule, the same :class:`Trajectory`), so HMC's
transition and its warm-up are unchanged; only where the arithmetic runs.
:func:`make_tree` does the same for a whole NUTS transition
(:mod:`mcmc.core.samplers.nuts`: the tree doubled leaf by leaf, multinomial
sampling, the generalized U-turn checks), reading the random numbers the
NumPy transition would draw from each chain's buffers in place, so both build
the same trees. On small models each NumPy leapfrog step costs tens of
microseconds of interpreter and array overhead per chain (issue 15 measured
24 to 415 µs per chain-gradient against compiled JAX's 0.7 to 22); here a
step costs what the model's arithmetic costs.

Conditioning: the trajectory can move only some coordinates ``idx`` of each
chain's point, the others held at that chain's row of ``base``. HMC within
Gibbs needs this (:mod:`~mcmc.core.samplers.hmc_within_gibbs`): every chain
has its own values of the Gibbs blocks, so its conditional density differs
from the other chains', and one compiled call moves all chains, each under
its own blocks.

Where it sits: a target carries its compiled paths (``Target.compiled``, a
:class:`CompiledPaths`) and HMC, HMC within Gibbs and NUTS run them, so this
package is below both :mod:`mcmc.core.targets` and
:mod:`mcmc.core.samplers` and imports neither. The kernels' numba source and
the generated files numba caches them in are :mod:`mcmc.core.compiled.kernels`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from mcmc.core.compiled import kernels


class Trajectory(NamedTuple):
    """The end point of a leapfrog trajectory, per chain.

    What both integrators return: :func:`mcmc.core.samplers.leapfrog.integrate`
    (NumPy) and :func:`make_trajectory` (compiled). It lives here, below the
    samplers, so that a target can carry a compiled path without the target
    layer importing a sampler module.

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


def is_compiled(fn: Any) -> bool:
    """Whether ``fn`` is a numba-compiled function (a dispatcher of ``@numba.njit``)."""
    try:  # numba only when a target is probed: it takes a large part of a second to import
        from numba.core.registry import CPUDispatcher
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    return isinstance(fn, CPUDispatcher)


def _rows(value: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``value`` as a C-contiguous array of ``shape`` (broadcast if it is not one already)."""
    arr = np.asarray(value, dtype=dtype)
    if arr.shape != shape:  # np.broadcast_to's Python-level checks cost microseconds per call
        arr = np.broadcast_to(arr, shape)
    return np.ascontiguousarray(arr)


def make_batch(point: Any, data: tuple[Any, ...] | None = None) -> Callable[[np.ndarray], tuple[Any, Any]]:
    """``x (n, dim) -> (log density (n,), gradient (n, dim))`` from ``point(x, data)``.

    ``data`` None: ``point`` is a function of ``x`` alone (a target file's).
    """
    batch = kernels.functions(point, data is None).batch
    args = () if data is None else data

    def value_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return batch(np.ascontiguousarray(x, dtype=np.float64), args)

    return value_and_grad


def make_trajectory(point: Any, data: tuple[Any, ...] | None = None) -> Callable[..., Trajectory]:
    """A compiled :func:`~mcmc.core.samplers.leapfrog.integrate` for ``point(x, data)`` (``point(x)``: no data).

    The returned function takes ``(position, momentum, log_density, grad,
    step_size (chains,), n_steps (chains,), inv_mass (chains, n),
    max_energy_error)`` and returns a ``Trajectory``; the inputs are not
    modified. With ``base (chains, dim)`` and ``idx (n,)`` given as keywords,
    ``position`` holds only the coordinates ``idx`` and chain ``c``'s density
    is the point function at ``base[c]`` with those coordinates replaced (its
    gradient restricted to them); without, ``n = dim`` and every coordinate moves.
    """
    run = kernels.functions(point, data is None).run
    args = () if data is None else data
    f64 = np.float64

    def trajectory(position: np.ndarray, momentum: np.ndarray, log_density: np.ndarray, grad: np.ndarray,
                   step_size: np.ndarray, n_steps: np.ndarray, inv_mass: np.ndarray, max_energy_error: float, *,
                   base: np.ndarray | None = None, idx: np.ndarray | None = None) -> Trajectory:
        position = np.ascontiguousarray(position, dtype=f64)
        chains, n = position.shape
        if base is None:
            full, cols = position, np.arange(n, dtype=np.int64)
        else:
            full, cols = np.ascontiguousarray(base, dtype=f64), np.ascontiguousarray(idx, dtype=np.int64)
        out = run(full, cols, position, np.ascontiguousarray(momentum, dtype=f64),
                  np.ascontiguousarray(log_density, dtype=f64), np.ascontiguousarray(grad, dtype=f64),
                  _rows(step_size, (chains,), f64), _rows(n_steps, (chains,), np.int64),
                  _rows(inv_mass, (chains, n), f64), float(max_energy_error),
                  args)  # fmt: skip
        return Trajectory(*out)

    return trajectory


class Tree(NamedTuple):
    """One NUTS transition per chain, as :func:`mcmc.core.samplers.nuts.step` makes it (shapes ``(chains, ...)``).

    ``position``, ``log_density``, ``grad``, ``energy``: the point drawn and its
    Hamiltonian; ``n_steps``: leapfrog steps; ``sum_accept``: the summed
    ``min(1, exp(H0 - H))`` over them; ``diverging``; ``depth``: doublings
    kept; ``uniforms_used``, ``exponentials_used``: values read from each
    chain's buffers.
    """

    position: np.ndarray
    log_density: np.ndarray
    grad: np.ndarray
    energy: np.ndarray
    n_steps: np.ndarray
    sum_accept: np.ndarray
    diverging: np.ndarray
    depth: np.ndarray
    uniforms_used: np.ndarray
    exponentials_used: np.ndarray


def make_tree(point: Any, data: tuple[Any, ...] | None = None) -> Callable[..., Tree]:
    """The whole NUTS transition of :mod:`mcmc.core.samplers.nuts` compiled around ``point(x, data)``.

    The returned function takes ``(position, momentum, log_density, grad,
    step_size (chains,), inv_mass (chains, dim), max_tree_depth,
    max_energy_error, uniforms, uniform_pos, exponentials, exponential_pos)``:
    the random numbers are read in place from each chain's buffers
    (:meth:`mcmc.core.random.ChainRandom.reserve`): row ``c`` of ``uniforms``
    from ``uniform_pos[c]`` on, one per doubling for the direction; of
    ``exponentials``, one per leaf and one per valid subtree (``-E`` is the log
    of a uniform), in the order the NumPy transition draws them, so the two
    read the same numbers. The buffers must hold ``max_tree_depth`` uniforms
    and ``2^max_tree_depth - 1 + max_tree_depth`` exponentials per chain.
    """
    nuts = kernels.functions(point, data is None).nuts
    args = () if data is None else data
    f64 = np.float64

    def tree(position: np.ndarray, momentum: np.ndarray, log_density: np.ndarray, grad: np.ndarray,
             step_size: np.ndarray, inv_mass: np.ndarray, max_tree_depth: int, max_energy_error: float,
             uniforms: np.ndarray, uniform_pos: np.ndarray, exponentials: np.ndarray,
             exponential_pos: np.ndarray) -> Tree:
        position = np.ascontiguousarray(position, dtype=f64)
        chains, dim = position.shape
        out = nuts(position, np.ascontiguousarray(momentum, dtype=f64), np.ascontiguousarray(log_density, dtype=f64),
                   np.ascontiguousarray(grad, dtype=f64),
                   _rows(step_size, (chains,), f64), _rows(inv_mass, (chains, dim), f64), int(max_tree_depth),
                   float(max_energy_error), uniforms, np.ascontiguousarray(uniform_pos, dtype=np.int64),
                   exponentials, np.ascontiguousarray(exponential_pos, dtype=np.int64), args)  # fmt: skip
        return Tree(*out)

    return tree


class LoopAdaptation(NamedTuple):
    """What a loop of warm-up transitions updates after each one, per chain (a JAX target's loops).

    The dual averaging of :class:`mcmc.core.samplers.hmc_adapt.DualAveraging`
    (``mu``, ``log_step``, ``log_step_bar``, ``h_bar``, ``counter``, each
    ``(chains,)``, and its constants; the step size of each transition is
    ``exp(log_step)``), and the running sums (``(n, mean (chains, dim), m2)``,
    :class:`mcmc.core.samplers.adapt.Welford`) each draw is added to: the
    metric window's and a restarted window's, or None.
    """

    mu: np.ndarray
    log_step: np.ndarray
    log_step_bar: np.ndarray
    h_bar: np.ndarray
    counter: np.ndarray
    target_accept: float
    gamma: float
    t0: float
    kappa: float
    window: tuple[int, np.ndarray, np.ndarray] | None = None
    restart: tuple[int, np.ndarray, np.ndarray] | None = None


class Loop(NamedTuple):
    """``count`` transitions run in one call of a compiled loop (``CompiledPaths.hmc_loop``, ``nuts_loop``).

    ``position``, ``log_density``, ``grad`` and (HMC) ``momentum``: the state
    after the last; ``draws (count, chains, dim)``: the position after each;
    ``stats``: the sampler's ``Info`` fields, each ``(count, chains)``;
    ``n_steps``: leapfrog steps, ``(count, chains)`` (what the driver counts);
    ``adaptation``: the :class:`LoopAdaptation` after the last, or None.
    """

    position: np.ndarray
    log_density: np.ndarray
    grad: np.ndarray
    momentum: np.ndarray | None
    draws: np.ndarray
    stats: dict[str, np.ndarray]
    n_steps: np.ndarray
    adaptation: LoopAdaptation | None


class CompiledPaths(NamedTuple):
    """What a target with a compiled point function can do (``Target.compiled``).

    ``trajectory``: :func:`make_trajectory`'s leapfrog path, which HMC and
    HMC within Gibbs run; ``tree``: :func:`make_tree`'s NUTS transition, or
    None where a path exists but no NUTS transition does. A JAX target's
    (:mod:`mcmc.core.jax`) take the same arguments and return the same.
    """

    trajectory: Callable[..., Trajectory]
    tree: Callable[..., Tree] | None = None
    compile_seconds: Callable[[], float] | None = None
    """Seconds spent compiling so far, where compiling happens at a kernel's first call for its shapes (JAX,
    :mod:`mcmc.core.jax`); None where it happens ahead (numba's kernels, compiled or loaded from the cache)."""
    hmc_loop: Callable[..., Loop] | None = None
    """Many HMC transitions in one call, with warm-up's per-iteration updates (:class:`LoopAdaptation`): a JAX
    target's (:func:`mcmc.core.jax.functions.build`), which :func:`mcmc.core.samplers.hmc.run_iterations` runs."""
    nuts_loop: Callable[..., Loop] | None = None
    """The same for NUTS (:func:`mcmc.core.samplers.nuts.run_iterations`)."""

    def wrapped(self, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> CompiledPaths:
        """Every kernel passed through ``wrap`` (the driver's counting, a target file's error messages)."""

        def maybe(kernel: Callable[..., Any] | None) -> Callable[..., Any] | None:
            return None if kernel is None else wrap(kernel)

        return CompiledPaths(wrap(self.trajectory), maybe(self.tree), self.compile_seconds, maybe(self.hmc_loop),
                             maybe(self.nuts_loop))


def compiled_paths(point: Any, data: tuple[Any, ...] | None = None) -> CompiledPaths:
    """The trajectory and the NUTS transition around ``point(x, data)`` (``point(x)``: ``data`` None)."""
    return CompiledPaths(make_trajectory(point, data), make_tree(point, data))


def lazy_paths(module: str, name: str, data: tuple[Any, ...]) -> CompiledPaths:
    """:func:`compiled_paths` for the point function ``module.name``, each kernel made at its first call.

    For built-in targets: building a target then costs no numba import or
    kernel load unless HMC or NUTS runs on it.
    """

    def lazy(make: Callable[[Any, Any], Callable[..., Any]]) -> Callable[..., Any]:
        made: list[Callable[..., Any]] = []

        def kernel(*args: Any, **kwargs: Any) -> Any:
            if not made:
                made.append(make(getattr(importlib.import_module(module), name), data))
            return made[0](*args, **kwargs)

        return kernel

    return CompiledPaths(lazy(make_trajectory), lazy(make_tree))
