"""A JAX target's functions, batched over chains and compiled: what a :class:`~mcmc.core.targets.base.Target` carries.

From the point functions of a target file (``log_density(x)`` of one point
``x (dim,)``, and optionally ``log_prior``, ``log_likelihood``, ``transform``)
:func:`build` makes

* NumPy-in, NumPy-out batched forms ``x (n, dim) -> (n,)`` (and the fused
  value and gradient ``-> ((n,), (n, dim))`` by ``jax.value_and_grad``),
  ``jax.vmap``-ed and compiled in float64;
* :class:`~mcmc.core.compiled.CompiledPaths` around the value and gradient:
  the HMC trajectory and the NUTS transition of :mod:`mcmc.core.jax.kernels`
  mapped over chains, with the signatures of the numba paths
  (:func:`mcmc.core.compiled.make_trajectory`, :func:`~mcmc.core.compiled.make_tree`),
  so HMC, HMC within Gibbs and NUTS run them unchanged.

Shapes: XLA compiles one program per argument shape. The samplers call the
batched forms with every chain, with subsets of chains (a step-size search
for some chains, starting points redrawn for others) and with all the draws
(the transform), so the rows are padded up to a power of two (at most
:data:`CHUNK`; more go in chunks of it): a handful of programs per run, not
one per row count. The trajectory and the tree always get every chain; the
tree's random numbers come as fixed-width windows of each chain's buffers, and
its depth is an argument, so warm-up's shallow trees and sampling's deep
ones share one program.

Every compilation goes through :class:`Compiler`, ahead of the call
(``lower().compile()``), timed: :attr:`Compiler.seconds` is what the run
summary reports as compiling.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from mcmc.core.compiled import CompiledPaths, Trajectory, Tree

#: Rows are padded up to a power of two, at most this many; larger batches go in chunks of it.
CHUNK = 1024
#: Deepest tree every shallower one shares a compiled NUTS transition with (Stan's default maximum).
TREE_CAPACITY = 10

Batch = Callable[[np.ndarray], np.ndarray]


class Compiler:
    """Compiles jitted functions ahead of their calls, once per argument shapes, and times it.

    ``seconds``: all the compiling done so far (tracing, lowering, XLA, or
    loading from JAX's persistent cache).
    """

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` compiled by ``jax.jit``; its arguments are arrays (their shapes and dtypes key the programs)."""
        import jax

        jitted = jax.jit(fn)
        programs: dict[tuple[Any, ...], Any] = {}

        def call(*args: Any) -> Any:
            key = tuple((a.shape, a.dtype.str) for a in args)
            program = programs.get(key)
            if program is None:
                t0 = time.perf_counter()
                program = programs[key] = jitted.lower(*args).compile()
                self.seconds += time.perf_counter() - t0
            return program(*args)

        return call


def _bucket(n: int) -> int:
    return min(CHUNK, 1 << max(n - 1, 0).bit_length())


def _rowwise(compiled: Callable[..., Any], dim: int) -> Callable[[np.ndarray], tuple[np.ndarray, ...]]:
    """``compiled`` (a vmapped function of ``(m, dim)``) on any number of rows, padded to :func:`_bucket` sizes."""

    def call(x: np.ndarray) -> tuple[np.ndarray, ...]:
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != dim:
            raise ValueError(f"expected points of shape (n, {dim}), got {x.shape}")
        n = x.shape[0]
        if n == 0:  # the shapes of no rows: those of one, sliced away
            return tuple(o[:0] for o in call(np.zeros((1, dim))))
        parts: list[tuple[np.ndarray, ...]] = []
        for lo in range(0, n, CHUNK):
            rows = x[lo : lo + CHUNK]
            m = _bucket(rows.shape[0])
            if m > rows.shape[0]:  # padded with copies of the first row: a point the caller asked about
                rows = np.concatenate([rows, np.broadcast_to(rows[:1], (m - rows.shape[0], dim))])
            out = compiled(rows)
            out = out if isinstance(out, tuple) else (out,)
            parts.append(tuple(np.array(o)[: min(CHUNK, n - lo)] for o in out))
        if len(parts) == 1:
            return parts[0]
        return tuple(np.concatenate(p) for p in zip(*parts, strict=True))

    return call


class Functions(NamedTuple):
    """What :func:`build` makes: batched NumPy-facing functions and the compiled paths.

    ``log_density``, ``log_prior``, ``log_likelihood``: ``(n, dim) -> (n,)``;
    ``value_and_grad``: ``(n, dim) -> ((n,), (n, dim))``; ``transform``:
    ``(n, dim) -> (n, reported)``; ``compiled``: the HMC trajectory and NUTS
    transition; ``compiler``: whose ``seconds`` is the compiling so far.
    """

    log_density: Batch
    value_and_grad: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    log_prior: Batch | None
    log_likelihood: Batch | None
    transform: Batch | None
    compiled: CompiledPaths
    compiler: Compiler


def build(log_density: Callable[..., Any], dim: int, *, log_prior: Callable[..., Any] | None = None,
          log_likelihood: Callable[..., Any] | None = None,
          transform: Callable[..., Any] | None = None) -> Functions:  # fmt: skip
    """The batched, compiled functions of a JAX target from its point functions (see the module docstring).

    ``log_density`` (and ``log_prior``, ``log_likelihood``) map one point
    ``x (dim,)`` to a scalar; ``transform`` one point to its reported values.
    Nothing is compiled here: each program at its first call.
    """
    import jax
    import jax.numpy as jnp

    from mcmc.core.jax import kernels

    compiler = Compiler()
    f64 = jnp.float64

    def point(fn: Callable[..., Any]) -> Callable[..., Any]:
        return lambda x: jnp.asarray(fn(x), f64)

    def vg(x: Any) -> tuple[Any, Any]:
        lp, g = jax.value_and_grad(point(log_density))(x)
        return lp, jnp.asarray(g, f64)

    def scalar(fn: Callable[..., Any] | None) -> Batch | None:
        if fn is None:
            return None
        call = _rowwise(compiler(jax.vmap(point(fn))), dim)
        return lambda x: call(x)[0]

    value_and_grad = _rowwise(compiler(jax.vmap(vg)), dim)
    reported = None if transform is None else _rowwise(compiler(jax.vmap(point(transform))), dim)
    return Functions(
        log_density=scalar(log_density),  # type: ignore[arg-type]
        value_and_grad=lambda x: value_and_grad(x),  # type: ignore[return-value]
        log_prior=scalar(log_prior),
        log_likelihood=scalar(log_likelihood),
        transform=None if reported is None else (lambda x: reported(x)[0]),
        compiled=CompiledPaths(_trajectory(vg, compiler, kernels), _tree(vg, compiler, kernels),
                               compile_seconds=lambda: compiler.seconds),
        compiler=compiler,
    )  # fmt: skip


def _trajectory(vg: Callable[..., Any], compiler: Compiler, kernels: Any) -> Callable[..., Trajectory]:
    """:func:`mcmc.core.compiled.make_trajectory`'s signature, the path run by :func:`kernels.trajectory`."""
    import jax

    axes = (0, None, 0, 0, 0, 0, 0, 0, 0, None)
    free = compiler(jax.vmap(kernels.trajectory(vg, conditioned=False), in_axes=axes))
    within = compiler(jax.vmap(kernels.trajectory(vg, conditioned=True), in_axes=axes))
    f64 = np.float64

    def trajectory(position: np.ndarray, momentum: np.ndarray, log_density: np.ndarray, grad: np.ndarray,
                   step_size: np.ndarray, n_steps: np.ndarray, inv_mass: np.ndarray, max_energy_error: float, *,
                   base: np.ndarray | None = None, idx: np.ndarray | None = None) -> Trajectory:
        x = np.ascontiguousarray(position, dtype=f64)
        chains, n = x.shape
        if base is None:
            run, full, cols = free, x, np.zeros(0, dtype=np.int64)
        else:
            run, full, cols = within, np.ascontiguousarray(base, dtype=f64), np.asarray(idx, dtype=np.int64)
        out = run(full, cols, x, np.ascontiguousarray(momentum, dtype=f64),
                  np.ascontiguousarray(log_density, dtype=f64), np.ascontiguousarray(grad, dtype=f64),
                  _rows(step_size, (chains,), f64), _rows(n_steps, (chains,), np.int64),
                  _rows(inv_mass, (chains, n), f64), np.asarray(max_energy_error, dtype=f64))  # fmt: skip
        return Trajectory(*(np.array(o) for o in out))

    return trajectory


def _tree(vg: Callable[..., Any], compiler: Compiler, kernels: Any) -> Callable[..., Tree]:
    """:func:`mcmc.core.compiled.make_tree`'s signature, the transition run by :func:`kernels.tree`."""
    import jax

    programs: dict[int, Callable[..., Any]] = {}
    f64 = np.float64

    def tree(position: np.ndarray, momentum: np.ndarray, log_density: np.ndarray, grad: np.ndarray,
             step_size: np.ndarray, inv_mass: np.ndarray, max_tree_depth: int, max_energy_error: float,
             uniforms: np.ndarray, uniform_pos: np.ndarray, exponentials: np.ndarray,
             exponential_pos: np.ndarray) -> Tree:
        x = np.ascontiguousarray(position, dtype=f64)
        chains, dim = x.shape
        depth = int(max_tree_depth)
        capacity = max(depth, TREE_CAPACITY)
        run = programs.get(capacity)
        if run is None:
            axes = (0, 0, 0, 0, 0, 0, None, None, 0, 0)
            run = programs[capacity] = compiler(jax.vmap(kernels.tree(vg, capacity), in_axes=axes))
        out = run(x, np.ascontiguousarray(momentum, dtype=f64), np.ascontiguousarray(log_density, dtype=f64),
                  np.ascontiguousarray(grad, dtype=f64), _rows(step_size, (chains,), f64),
                  _rows(inv_mass, (chains, dim), f64), np.asarray(depth, dtype=np.int64),
                  np.asarray(max_energy_error, dtype=f64),
                  _window(uniforms, uniform_pos, capacity), _window(exponentials, exponential_pos,
                                                                    2**capacity - 1 + capacity))  # fmt: skip
        return Tree(*(np.array(o) for o in out))

    return tree


def _window(buffer: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """Row ``c``'s ``width`` values from ``pos[c]`` on (indices past the row's end repeat its last value, unread)."""
    cols = np.minimum(np.asarray(pos, dtype=np.int64)[:, None] + np.arange(width), buffer.shape[1] - 1)
    return np.ascontiguousarray(np.take_along_axis(buffer, cols, axis=1), dtype=np.float64)


def _rows(value: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``value`` as a C-contiguous array of ``shape`` (broadcast if it is not one already)."""
    arr = np.asarray(value, dtype=dtype)
    if arr.shape != shape:
        arr = np.broadcast_to(arr, shape)
    return np.ascontiguousarray(arr)


def output_shape(fn: Callable[..., Any], dim: int) -> tuple[int, ...]:
    """The shape ``fn`` returns for one point ``(dim,)`` of float64, found by tracing (nothing compiled or run).

    Raises whatever ``fn`` raises while traced (a NumPy call on a traced
    array, an index out of range, a shape that does not fit).
    """
    import jax
    import jax.numpy as jnp

    return tuple(jax.eval_shape(fn, jax.ShapeDtypeStruct((dim,), jnp.float64)).shape)
