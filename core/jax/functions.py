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
  so HMC, HMC within Gibbs and NUTS run them unchanged; and the loops
  (``hmc_loop``, ``nuts_loop``): many whole transitions per call, with
  warm-up's dual averaging and metric-window sums inside, which HMC's and
  NUTS's ``run_iterations`` run. A transition through Python and a JAX
  dispatch costs 100 to 200 µs, ten times BlackJAX's compiled iteration on
  eight schools; in a loop it costs what XLA's arithmetic costs.

Random numbers: a loop reads each chain's
:class:`~mcmc.core.random.ChainRandom` buffers in place (windows of them),
after making the reservations one transition makes, in its order, and stops
before any chain's next transition could need a refill; the next call makes
that refill. ChainRandom draws every kind from one generator per chain, so
the numbers depend on when each buffer refills: this way they refill exactly
when the step-by-step path refills them, and a chain reads the numbers it
would read step by step, wherever the calls break.

Lanes: XLA's code for a batch of one or two chains rounds differently from
its code for four, so programs run at least :data:`MIN_LANES` chains (copies
of the first fill the rest): chain ``i``'s bytes then do not depend on the
chains run beside it.

Shapes: XLA compiles one program per argument shape. The samplers call the
batched forms with every chain, with subsets of chains (a step-size search
for some chains, starting points redrawn for others) and with all the draws
(the transform), so the rows are padded up to a power of two (at least
:data:`MIN_ROWS`, at most :data:`CHUNK`; more go in chunks of it): a
handful of programs per run, not one per row count. The trajectory and the tree always get every chain; the
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

from mcmc.core.compiled import CompiledPaths, Loop, LoopAdaptation, Trajectory, Tree

#: Rows are padded up to a power of two, at least ``MIN_ROWS`` (a probe's two points, a step-size search's
#: few chains and a run's four share one program) and at most ``CHUNK``; larger batches go in chunks of it.
MIN_ROWS = 8
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
        """``fn`` compiled by ``jax.jit``; its arguments are arrays or tuples of arrays (their shapes and dtypes
        key the programs)."""
        import jax

        jitted = jax.jit(fn)
        programs: dict[tuple[Any, ...], Any] = {}

        def call(*args: Any) -> Any:
            key = tuple((a.shape, a.dtype.str) for a in jax.tree_util.tree_leaves(args))
            program = programs.get(key)
            if program is None:
                t0 = time.perf_counter()
                program = programs[key] = jitted.lower(*args).compile()
                self.seconds += time.perf_counter() - t0
            return program(*args)

        return call


def _bucket(n: int) -> int:
    return min(CHUNK, max(MIN_ROWS, 1 << max(n - 1, 0).bit_length()))


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
                               compile_seconds=lambda: compiler.seconds, hmc_loop=_hmc_loop(vg, compiler, kernels),
                               nuts_loop=_nuts_loop(vg, compiler, kernels)),
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
        lanes = _lanes(chains)
        out = run(_pad(full, lanes), cols, *_pad((x, np.ascontiguousarray(momentum, dtype=f64),
                  np.ascontiguousarray(log_density, dtype=f64), np.ascontiguousarray(grad, dtype=f64),
                  _rows(step_size, (chains,), f64), _rows(n_steps, (chains,), np.int64),
                  _rows(inv_mass, (chains, n), f64)), lanes), np.asarray(max_energy_error, dtype=f64))  # fmt: skip
        return Trajectory(*(np.array(np.asarray(o)[:chains]) for o in out))

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
            axes = (0, 0, 0, 0, 0, 0, None, None, 0, 0, None, None)
            run = programs[capacity] = compiler(jax.vmap(kernels.tree(vg, capacity), in_axes=axes))
        lanes = _lanes(chains)
        states = _pad((x, np.ascontiguousarray(momentum, dtype=f64), np.ascontiguousarray(log_density, dtype=f64),
                       np.ascontiguousarray(grad, dtype=f64), _rows(step_size, (chains,), f64),
                       _rows(inv_mass, (chains, dim), f64)), lanes)  # fmt: skip
        randoms = _pad((_window(uniforms, uniform_pos, capacity),
                        _window(exponentials, exponential_pos, 2**capacity - 1 + capacity)), lanes)  # fmt: skip
        out = run(*states, np.asarray(depth, dtype=np.int64), np.asarray(max_energy_error, dtype=f64), *randoms,
                  _ZERO, _ZERO)  # fmt: skip
        return Tree(*(np.array(np.asarray(o)[:chains]) for o in out))

    return tree


_ZERO = np.zeros((), dtype=np.int64)

#: Transitions one call of a loop runs at most (the size of the buffers it returns the draws in).
LOOP = 256
#: The random numbers a loop reads: each chain's buffers of these kinds (:class:`mcmc.core.random.ChainRandom`).
KINDS = ("normal", "uniform", "exponential")
#: Narrowest window of a buffer handed to a loop (a power of two): ChainRandom refills 4096 values at a time, so a
#: run's windows keep one width, and its loop program one shape.
WINDOW = 8192

HMC_STATS = ("acceptance_rate", "accepted", "diverging", "energy", "step_size", "n_steps", "reached_max_steps", "lp")
NUTS_STATS = ("acceptance_rate", "diverging", "energy", "step_size", "n_steps", "tree_depth", "reached_max_treedepth",
              "lp")


def _adaptation_arrays(adaptation: LoopAdaptation | None, chains: int, dim: int) -> tuple[Any, ...]:
    """The loop program's adaptation arguments: dual averaging, its constants, the two windows, and flags."""
    f64 = np.float64
    if adaptation is None:
        zeros = np.zeros(chains)
        da = (zeros, zeros, zeros, zeros, np.zeros(chains, dtype=np.int64))
        consts = np.zeros(4)
        on = False
    else:
        a = adaptation
        da = tuple(np.asarray(v, dtype=f64) for v in (a.mu, a.log_step, a.log_step_bar, a.h_bar)) + (
            np.asarray(a.counter, dtype=np.int64),)
        consts = np.array([a.target_accept, a.gamma, a.t0, a.kappa], dtype=f64)
        on = True

    def window(w: tuple[int, np.ndarray, np.ndarray] | None) -> tuple[Any, ...]:
        if w is None:
            return (np.zeros((), dtype=np.int64), np.zeros((chains, dim)), np.zeros((chains, dim)))
        return (np.asarray(w[0], dtype=np.int64), np.asarray(w[1], dtype=f64), np.asarray(w[2], dtype=f64))

    windows = (window(None if adaptation is None else adaptation.window),
               window(None if adaptation is None else adaptation.restart))  # fmt: skip
    flags = np.array([on, adaptation is not None and adaptation.window is not None,
                      adaptation is not None and adaptation.restart is not None])  # fmt: skip
    return da, consts, windows, flags


def _adaptation_after(adaptation: LoopAdaptation | None, out: tuple[Any, ...]) -> LoopAdaptation | None:
    if adaptation is None:
        return None
    da, windows = out

    def window(before: Any, after: tuple[Any, ...]) -> tuple[int, np.ndarray, np.ndarray] | None:
        return None if before is None else (int(after[0]), np.array(after[1]), np.array(after[2]))

    log_step, log_step_bar, h_bar, counter = (np.array(v) for v in da[1:])
    return adaptation._replace(log_step=log_step, log_step_bar=log_step_bar, h_bar=h_bar, counter=counter,
                               window=window(adaptation.window, windows[0]),
                               restart=window(adaptation.restart, windows[1]))  # fmt: skip


def _adapt_step(kernels: Any, da: tuple[Any, ...], consts: Any, windows: tuple[Any, ...], flags: Any, accept: Any,
                x: Any) -> tuple[Any, ...]:  # fmt: skip
    """Inside a loop: warm-up's per-iteration updates after one transition (none when ``flags[0]`` is off)."""
    import jax.numpy as jnp

    mu, log_step, log_step_bar, h_bar, counter = da
    new = kernels.dual_averaging(mu, log_step, log_step_bar, h_bar, counter, accept, *consts)
    da = (mu,) + tuple(jnp.where(flags[0], n, o) for n, o in zip(new, da[1:], strict=True))
    out = []
    for (n, mean, m2), on in zip(windows, (flags[1], flags[2]), strict=True):
        added = kernels.welford(n, mean, m2, x)
        out.append(tuple(jnp.where(on, a, b) for a, b in zip(added, (n, mean, m2), strict=True)))
    return da, tuple(out)


#: Chains a loop's program computes at least (copies of the first fill the rest): XLA's code for a batch of one or
#: two chains rounds differently from its code for four, and a chain's draws must not depend on which chains ran
#: beside it (``--first-chain``), so small batches run as four.
MIN_LANES = 4


def _lanes(chains: int) -> int:
    return max(chains, MIN_LANES)


def _pad(value: Any, lanes: int, axis: int = 0) -> Any:
    """``value`` (an array or a tuple of them) with ``lanes`` entries along ``axis``: copies of the first added."""
    if isinstance(value, tuple):
        return tuple(_pad(v, lanes, axis) for v in value)
    arr = np.asarray(value)
    short = lanes - arr.shape[axis]
    if short <= 0:
        return arr
    first = np.take(arr, [0], axis=axis)
    return np.concatenate([arr, np.repeat(first, short, axis=axis)], axis=axis)


def _pad_sums(sums: tuple[Any, ...], lanes: int) -> tuple[Any, ...]:
    """The running sums' per-chain parts padded (their count is shared)."""
    return tuple((n, _pad(mean, lanes), _pad(m2, lanes)) for n, mean, m2 in sums)


def _unpadded(out: tuple[Any, ...], chains: int) -> tuple[Any, ...]:
    """A loop program's outputs for the first ``chains`` lanes: ``(i, state, used, da, sums, draws, stats)``."""
    i, state, used, da, sums, draws, stats = out
    return (i, tuple(np.asarray(v)[:chains] for v in state), np.asarray(used)[:, :chains],
            tuple(np.asarray(v)[:chains] for v in da),
            tuple((n, np.asarray(mean)[:chains], np.asarray(m2)[:chains]) for n, mean, m2 in sums),
            np.asarray(draws)[:, :chains], {name: np.asarray(v)[:, :chains] for name, v in stats.items()})  # fmt: skip


def _random_windows(rng: Any, needs: tuple[int, ...], widths: tuple[int, ...]) -> tuple[list[np.ndarray], np.ndarray]:
    """Each chain's unread normals, uniforms and exponentials, after a transition's own reservations.

    ``needs``: what one transition reserves of each kind (HMC: ``dim``
    normals, a uniform, an exponential; NUTS: ``dim`` normals,
    ``max_depth`` uniforms, ``2^max_depth - 1 + max_depth`` exponentials),
    reserved here in the order the transition draws them, so a chain's
    buffers refill exactly when its transition's own draws would refill them
    and the chain reads the very numbers it reads step by step. Returns the
    windows ``(chains, W)`` (row ``c`` from the chain's next unread value;
    ``widths``, from :func:`_width` of the largest request the program serves,
    so it keeps one shape for a run) and what each chain may read of each,
    ``(3, chains)``.
    """
    windows, available = [], []
    for kind, need, width in zip(KINDS, needs, widths, strict=True):
        data, pos = rng.reserve(kind, need)
        windows.append(_window(data, pos, width))
        available.append(np.minimum(rng.available(kind), width))
    return windows, np.array(available, dtype=np.int64)


def _width(need: int) -> int:
    """A window wide enough for what a chain can have unread after reserving ``need`` values, a power of two.

    A reservation refills a short buffer with what is left (fewer than
    ``need``) and a block of 4096, of ``16 need`` or of ``2 need``
    (:meth:`mcmc.core.random.ChainRandom.reserve`); the width is fixed by
    ``need`` alone, never by how full the buffers happen to be, so warm-up's
    shallow trees and sampling's deep ones use one program. A chain with more
    unread (another sampler drew big blocks) reads the first ``W``.
    """
    block = max(4096, 16 * need if need <= 4096 else 2 * need)
    return max(WINDOW, 1 << (block + need - 1).bit_length())


def _loop_calls(rng: Any, count: int, needs: tuple[int, ...], widths: tuple[int, ...],
                once: Callable[..., Loop]) -> Loop:  # fmt: skip
    """``count`` transitions by calls of ``once(windows, available, n) -> (Loop, used (3, chains))``.

    A call stops early where some chain's next transition would refill a
    buffer; the next call makes that refill first (:func:`_random_windows`).
    So the random numbers, and with them the draws, never depend on where
    the calls break.
    """
    parts: list[Loop] = []
    done = 0
    while done < count:
        windows, available = _random_windows(rng, needs, widths)
        out, used = once(windows, available, min(LOOP, count - done))
        for kind, n in zip(KINDS, used, strict=True):
            rng.advance(kind, n)
        n = out.draws.shape[0]
        if n == 0:  # cannot happen: the reservations above cover one transition
            raise RuntimeError("a loop of transitions ran none")
        parts.append(out)
        done += n
    return _joined(parts)


def _hmc_loop(vg: Callable[..., Any], compiler: Compiler, kernels: Any) -> Callable[..., Loop]:
    """HMC transitions run many at a time in one compiled ``while_loop`` (``CompiledPaths.hmc_loop``)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    transition = kernels.hmc_transition(vg)

    def one(x: Any, lp: Any, g: Any, z: Any, eps: Any, length: Any, minv: Any, normals: Any, unis: Any, exps: Any,
            used: Any, jitter: Any, max_steps: Any, a: Any, max_err: Any) -> tuple[Any, ...]:  # fmt: skip
        noise = lax.dynamic_slice(normals, (used[0],), (x.shape[0],))
        return transition(x, lp, g, z, eps, length, minv, noise, unis[used[1]], exps[used[2]], jitter, max_steps, a,
                          max_err)  # fmt: skip

    step = jax.vmap(one, in_axes=(0,) * 10 + (1,) + (None,) * 4)

    def program(state: tuple[Any, ...], eps: Any, length: Any, minv: Any, windows: tuple[Any, ...], available: Any,
                scalars: tuple[Any, ...], count: Any, da: tuple[Any, ...], consts: Any, sums: tuple[Any, ...],
                flags: Any) -> tuple[Any, ...]:  # fmt: skip
        x = state[0]
        chains, dim = x.shape
        kinds = {"accepted": bool, "diverging": bool, "reached_max_steps": bool, "n_steps": jnp.int64}
        stats = {name: jnp.zeros((LOOP, chains), kinds.get(name, x.dtype)) for name in HMC_STATS}
        draws = jnp.zeros((LOOP, chains, dim), x.dtype)
        need = jnp.array([dim, 1, 1], jnp.int64)[:, None]

        def more(c: tuple[Any, ...]) -> Any:
            return (c[0] < count) & jnp.all(c[2] + need <= available)

        def body(c: tuple[Any, ...]) -> tuple[Any, ...]:
            i, (x, lp, g, z), used, da, sums, draws, stats = c
            e = jnp.where(flags[0], jnp.exp(da[1]), eps)
            x, lp, g, z, rate, accepted, diverging, energy, k, reached = step(x, lp, g, z, e, length, minv,
                                                                             *windows, used, *scalars)
            da, sums = _adapt_step(kernels, da, consts, sums, flags, rate, x)
            row = dict(zip(HMC_STATS, (rate, accepted, diverging, energy, e, k, reached, lp), strict=True))
            stats = {name: stats[name].at[i].set(row[name]) for name in HMC_STATS}
            return i + 1, (x, lp, g, z), used + need, da, sums, draws.at[i].set(x), stats

        start = (jnp.zeros((), jnp.int64), state, jnp.zeros((3, chains), jnp.int64), da, sums, draws, stats)
        return lax.while_loop(more, body, start)

    run = compiler(program)
    f64 = np.float64

    def loop(rng: Any, position: np.ndarray, log_density: np.ndarray, grad: np.ndarray, momentum: np.ndarray,
             count: int, step_size: np.ndarray, inv_mass: np.ndarray, path_length: np.ndarray, jitter: float,
             max_steps: int, persistence: float, max_energy_error: float,
             adaptation: LoopAdaptation | None = None) -> Loop:  # fmt: skip
        """``count`` HMC transitions: each chain reads ``dim`` normals, a uniform and an exponential per
        transition, the numbers :func:`mcmc.core.samplers.hmc.step` reads."""
        state = [np.ascontiguousarray(v, dtype=f64) for v in (position, log_density, grad, momentum)]
        chains, dim = state[0].shape
        eps, length = _rows(step_size, (chains,), f64), _rows(path_length, (chains,), f64)
        minv = _rows(inv_mass, (chains, dim), f64)
        scalars = (np.asarray(jitter, dtype=f64), np.asarray(max_steps, dtype=np.int64),
                   np.asarray(persistence, dtype=f64), np.asarray(max_energy_error, dtype=f64))  # fmt: skip

        def once(windows: list[np.ndarray], available: np.ndarray, n: int) -> tuple[Loop, np.ndarray]:
            nonlocal state, adaptation
            da, consts, sums, flags = _adaptation_arrays(adaptation, chains, dim)
            lanes = _lanes(chains)
            i, (x, lp, g, z), used, da, sums, draws, stats = _unpadded(run(
                _pad(tuple(state), lanes), _pad(eps, lanes), _pad(length, lanes), _pad(minv, lanes),
                _pad(tuple(windows), lanes), _pad(available, lanes, axis=1), scalars, np.asarray(n, dtype=np.int64),
                _pad(da, lanes), consts, _pad_sums(sums, lanes), flags), chains)  # fmt: skip
            done = int(i)
            stats = {name: np.array(np.asarray(v)[:done]) for name, v in stats.items()}
            adaptation = _adaptation_after(adaptation, (da, sums))
            state = [np.array(v) for v in (x, lp, g, z)]
            out = Loop(*state, np.array(np.asarray(draws)[:done]), stats, stats["n_steps"], adaptation)
            return out, np.array(used)

        return _loop_calls(rng, count, (dim, 1, 1), (_width(dim), _width(1), _width(1)), once)

    return loop


def _joined(parts: list[Loop]) -> Loop:
    """The calls of one loop as one: the last state and adaptation, every draw and statistic in order."""
    if len(parts) == 1:
        return parts[0]
    last = parts[-1]
    stats = {name: np.concatenate([p.stats[name] for p in parts]) for name in last.stats}
    return last._replace(draws=np.concatenate([p.draws for p in parts]), stats=stats,
                         n_steps=np.concatenate([p.n_steps for p in parts]))  # fmt: skip


def _nuts_loop(vg: Callable[..., Any], compiler: Compiler, kernels: Any) -> Callable[..., Loop]:
    """NUTS transitions run many at a time in one compiled ``while_loop`` (``CompiledPaths.nuts_loop``)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    programs: dict[int, Callable[..., Any]] = {}

    def make(capacity: int) -> Callable[..., Any]:
        transition = kernels.nuts_transition(vg, capacity)

        def one(x: Any, lp: Any, g: Any, eps: Any, minv: Any, normals: Any, unis: Any, exps: Any, used: Any,
                max_depth: Any, max_err: Any) -> tuple[Any, ...]:  # fmt: skip
            noise = lax.dynamic_slice(normals, (used[0],), (x.shape[0],))
            return transition(x, lp, g, eps, minv, noise, max_depth, max_err, unis, exps, used[1], used[2])

        step = jax.vmap(one, in_axes=(0,) * 8 + (1, None, None))

        def program(state: tuple[Any, ...], eps: Any, minv: Any, windows: tuple[Any, ...], available: Any,
                    max_depth: Any, max_err: Any, count: Any, da: tuple[Any, ...], consts: Any,
                    sums: tuple[Any, ...], flags: Any) -> tuple[Any, ...]:  # fmt: skip
            x = state[0]
            chains, dim = x.shape
            kinds = {"diverging": bool, "reached_max_treedepth": bool, "n_steps": jnp.int64, "tree_depth": jnp.int64}
            stats = {name: jnp.zeros((LOOP, chains), kinds.get(name, x.dtype)) for name in NUTS_STATS}
            draws = jnp.zeros((LOOP, chains, dim), x.dtype)
            deepest = jnp.left_shift(jnp.ones((), jnp.int64), max_depth) - 1 + max_depth
            need = jnp.stack([jnp.asarray(dim, jnp.int64), max_depth, deepest])[:, None]

            def more(c: tuple[Any, ...]) -> Any:
                # every chain stops together, before one's next transition would refill a buffer
                return (c[0] < count) & jnp.all(c[2] + need <= available)

            def body(c: tuple[Any, ...]) -> tuple[Any, ...]:
                i, (x, lp, g), used, da, sums, draws, stats = c
                e = jnp.where(flags[0], jnp.exp(da[1]), eps)
                x, lp, g, energy, k, sum_accept, diverging, depth, u_used, e_used = step(
                    x, lp, g, e, minv, *windows, used, max_depth, max_err)
                rate = sum_accept / jnp.maximum(k, 1)
                da, sums = _adapt_step(kernels, da, consts, sums, flags, rate, x)
                row = dict(zip(NUTS_STATS, (rate, diverging, energy, e, k, depth, depth >= max_depth, lp),
                               strict=True))  # fmt: skip
                stats = {name: stats[name].at[i].set(row[name]) for name in NUTS_STATS}
                used = used + jnp.stack([jnp.full(chains, dim, jnp.int64), u_used, e_used])
                return i + 1, (x, lp, g), used, da, sums, draws.at[i].set(x), stats

            start = (jnp.zeros((), jnp.int64), state, jnp.zeros((3, chains), jnp.int64), da, sums, draws, stats)
            return lax.while_loop(more, body, start)

        return compiler(program)

    f64 = np.float64

    def loop(rng: Any, position: np.ndarray, log_density: np.ndarray, grad: np.ndarray, count: int,
             step_size: np.ndarray, inv_mass: np.ndarray, max_tree_depth: int, max_energy_error: float,
             adaptation: LoopAdaptation | None = None) -> Loop:  # fmt: skip
        """``count`` NUTS transitions: each chain reads ``dim`` normals per transition and its uniforms and
        exponentials as :func:`mcmc.core.samplers.nuts.step` does with a compiled tree, the same numbers."""
        state = [np.ascontiguousarray(v, dtype=f64) for v in (position, log_density, grad)]
        chains, dim = state[0].shape
        depth = int(max_tree_depth)
        capacity = max(depth, TREE_CAPACITY)
        run = programs.get(capacity)
        if run is None:
            run = programs[capacity] = make(capacity)
        eps, minv = _rows(step_size, (chains,), f64), _rows(inv_mass, (chains, dim), f64)

        def once(windows: list[np.ndarray], available: np.ndarray, n: int) -> tuple[Loop, np.ndarray]:
            nonlocal state, adaptation
            da, consts, sums, flags = _adaptation_arrays(adaptation, chains, dim)
            lanes = _lanes(chains)
            i, (x, lp, g), used, da, sums, draws, stats = _unpadded(run(
                _pad(tuple(state), lanes), _pad(eps, lanes), _pad(minv, lanes), _pad(tuple(windows), lanes),
                _pad(available, lanes, axis=1), np.asarray(depth, dtype=np.int64),
                np.asarray(max_energy_error, dtype=f64), np.asarray(n, dtype=np.int64), _pad(da, lanes), consts,
                _pad_sums(sums, lanes), flags), chains)  # fmt: skip
            done = int(i)
            stats = {name: np.array(np.asarray(v)[:done]) for name, v in stats.items()}
            adaptation = _adaptation_after(adaptation, (da, sums))
            state = [np.array(v) for v in (x, lp, g)]
            out = Loop(*state, None, np.array(np.asarray(draws)[:done]), stats, stats["n_steps"], adaptation)
            return out, np.array(used)

        widths = (_width(dim), _width(capacity), _width(2**capacity - 1 + capacity))
        return _loop_calls(rng, count, (dim, depth, 2**depth - 1 + depth), widths, once)

    return loop


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


def gaussian_log_density(mean: np.ndarray, chol: np.ndarray) -> Callable[[Any], Any]:
    """``log N(x; mean, L L^T)`` of one point ``x (dim,)`` in jax.numpy: a JAX file's Gaussian prior (``prior_cov``).

    The value of :func:`mcmc.core.targets.user.gaussian_log_density` at a
    point, by a triangular solve; ``mean`` and ``chol`` are the file's, checked.
    """
    import jax.numpy as jnp
    from jax.scipy.linalg import solve_triangular

    m, c = np.asarray(mean, dtype=np.float64), np.asarray(chol, dtype=np.float64)
    const = -float(np.sum(np.log(np.diag(c)))) - 0.5 * m.size * float(np.log(2.0 * np.pi))

    def log_prior(x: Any) -> Any:
        z = solve_triangular(c, x - m, lower=True)
        return -0.5 * jnp.sum(z * z) + const

    return log_prior
