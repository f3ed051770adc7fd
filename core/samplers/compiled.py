"""Whole leapfrog trajectories in compiled code, for targets whose log density is a numba function.

A target may have a *point function* ``point(x, data)``: one point
``x (dim,)`` and a tuple of arrays ``data`` (the model's data, constant
during a run) to ``(log density, gradient (dim,))``, compiled with
``@numba.njit``. A target file's ``point_log_density_and_grad(x)``
(``docs/formats.md``) is one, with no data; the built-in ``bnn`` is another
(:mod:`mcmc.core.targets.bnn_kernel`). Then :func:`make_trajectory` gives a
compiled loop over chains and leapfrog steps that calls it with no Python in
between: the same integrator as :func:`mcmc.core.samplers.leapfrog.integrate`
(same steps, same divergence rule, the same
:class:`~mcmc.core.samplers.leapfrog.Trajectory`), so HMC's transition and
its warm-up are unchanged; only where the arithmetic runs. On small models
each NumPy leapfrog step costs tens of microseconds of interpreter and array
overhead per chain (issue 15 measured 24 to 415 µs per chain-gradient
against compiled JAX's 0.7 to 22); here a step costs what the model's
arithmetic costs.

Conditioning: the trajectory can move only some coordinates ``idx`` of each
chain's point, the others held at that chain's row of ``base``. HMC within
Gibbs needs this (:mod:`~mcmc.core.samplers.hmc_within_gibbs`): every chain
has its own values of the Gibbs blocks, so its conditional density differs
from the other chains', and one compiled call moves all chains, each under
its own blocks.

Compiled once: the kernels (:data:`KERNELS`, written once as source) hold the
point function as a constant, and numba's cache does not keep such a function
across processes when it is built in memory. So they are written to a
generated file, ``mcmc_kernels_<key>.py`` in :func:`cache_dir`, whose key
hashes the point function's source file: numba caches that file's functions
like any other, the first run compiles (about 2 seconds for the ``bnn``
network), later runs load (0.1 s), and an edited target file gets a new key,
never a stale kernel; files not loaded for :data:`STALE_DAYS` days are deleted
when a new one is written. A function with no source file, or a cache folder that
cannot be written, falls back to compiling in memory once per process. The
data are arguments, so a new data set costs no compilation.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from mcmc.core.samplers.leapfrog import Trajectory


def is_compiled(fn: Any) -> bool:
    """Whether ``fn`` is a numba-compiled function (a dispatcher of ``@numba.njit``)."""
    try:
        from numba.core.registry import CPUDispatcher
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    return isinstance(fn, CPUDispatcher)


# The compiled kernels, written once as source. ``POINT(...)`` is the call of
# the point function: ``point(x, data)``, or ``point(x)`` for a target file's
# function of one point (see :func:`_source`).
KERNELS = """
@njit(cache=CACHE)
def batch(x, data):
    n, dim = x.shape
    lp = np.empty(n)
    g = np.empty((n, dim))
    for i in range(n):
        v, gi = POINT(np.ascontiguousarray(x[i]))
        if gi.shape[0] != dim:  # numba would broadcast a length-1 gradient without a word
            raise ValueError("the gradient's length is not dim")
        lp[i] = v
        g[i, :] = gi
    return lp, g


@njit(cache=CACHE)
def run(base, idx, x0, p0, lp0, g0, eps, n_steps, minv, max_err, data):
    chains, n = x0.shape
    dim = base.shape[1]
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
        full = base[c].copy()
        xc = x[c].copy()
        pc = p[c].copy()
        gc = g[c].copy()
        em = eps[c] * minv[c]
        h0 = -lp[c]
        for j in range(n):
            h0 += 0.5 * minv[c, j] * pc[j] * pc[j]
        lpc = lp[c]
        k = 0
        bad = False
        while k < n_steps[c]:
            for j in range(n):
                pc[j] += half * gc[j]
                xc[j] += em[j] * pc[j]
                full[idx[j]] = xc[j]
            lpc, gnew = POINT(full)
            if gnew.shape[0] != dim:
                raise ValueError("the gradient's length is not dim")
            for j in range(n):
                gc[j] = gnew[idx[j]]
                pc[j] += half * gc[j]
            k += 1
            h = -lpc
            for j in range(n):
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
"""

#: Point functions the generated kernel files import, by key (see :func:`_kernels`).
POINTS: dict[str, Any] = {}


def _source(one_point: bool, cache: bool) -> str:
    def call(arg: str) -> str:
        return f"point({arg})" if one_point else f"point({arg}, data)"

    body = KERNELS.replace("POINT(np.ascontiguousarray(x[i]))", call("np.ascontiguousarray(x[i])"))
    return body.replace("POINT(full)", call("full")).replace("CACHE", str(cache))


def cache_dir() -> Path:
    """Where generated kernel files (and numba's cache of them) go: ``$MCMC_CACHE_DIR``, else the user's cache."""
    if os.environ.get("MCMC_CACHE_DIR"):
        return Path(os.environ["MCMC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcmc" / "compiled"


def _key(point: Any, one_point: bool) -> str | None:
    """A name for the kernels of ``point``, fixed by the bytes of its source file, or None when it has none.

    numba's cache does not look into the functions a cached function calls:
    the key must change whenever the point function might, so it hashes the
    file the function is defined in (with the kernels' source and numba's
    version), not only the function's name. It hashes the function's module
    name too: a cached kernel finds the point function again by that name, so
    the same bytes in another file (another module) need their own kernel.
    """
    import numba

    try:
        code = point.py_func.__code__
        source = Path(code.co_filename).read_bytes()
        module = str(point.py_func.__module__)
    except (AttributeError, OSError):
        return None
    h = hashlib.sha256()
    kernels = _source(one_point, True).encode()
    for part in (source, module.encode(), code.co_name.encode(), kernels, numba.__version__.encode()):
        h.update(part)
        h.update(b"\0")
    return h.hexdigest()[:24]


class _Kernels(NamedTuple):
    batch: Any
    run: Any


@lru_cache(maxsize=None)
def _kernels(point: Any, one_point: bool) -> _Kernels:
    """The compiled batch and trajectory loop for ``point``, made once per process (see the module docstring)."""
    key = _key(point, one_point)
    if key is not None:
        POINTS[key] = point
        try:
            return _from_file(key, one_point)
        except (OSError, SyntaxError, ImportError):  # an unwritable folder, a damaged generated file
            pass
    from numba import njit

    namespace: dict[str, Any] = {"np": np, "njit": njit, "point": point}
    exec(compile(_source(one_point, False), "<mcmc kernels>", "exec"), namespace)  # noqa: S102 - our own source
    return _Kernels(namespace["batch"], namespace["run"])


#: Generated kernel files not loaded for this long are deleted when a new one is written.
STALE_DAYS = 30


def _from_file(key: str, one_point: bool) -> _Kernels:
    name = f"mcmc_kernels_{key}"
    folder = cache_dir()
    path = folder / f"{name}.py"
    if path.exists():
        os.utime(path)  # loaded now: not stale
    else:
        folder.mkdir(parents=True, exist_ok=True)
        _prune(folder)
        text = (
            '"""Generated by mcmc (mcmc.core.samplers.compiled) for one point function; safe to delete."""\n'
            "import numpy as np\nfrom numba import njit\n\nfrom mcmc.core.samplers.compiled import POINTS\n\n"
            f"point = POINTS[{key!r}]\n{_source(one_point, True)}"
        )
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(text)
        os.replace(tmp, path)  # whole or not at all, when processes race
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise OSError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return _Kernels(module.batch, module.run)


def _prune(folder: Path) -> None:
    """Delete the kernel files (and numba's cache of them) not loaded for :data:`STALE_DAYS` days.

    Every edit of a target file makes a new kernel file; without this the old
    ones would stay for good.
    """
    import time

    limit = time.time() - STALE_DAYS * 86400
    for old in folder.glob("mcmc_kernels_*.py"):
        try:
            if old.stat().st_mtime < limit:
                for cached in (folder / "__pycache__").glob(f"{old.stem}.*"):
                    cached.unlink(missing_ok=True)
                old.unlink(missing_ok=True)
        except OSError:  # another process pruned it first
            continue


def make_batch(point: Any, data: tuple[Any, ...] | None = None) -> Callable[[np.ndarray], tuple[Any, Any]]:
    """``x (n, dim) -> (log density (n,), gradient (n, dim))`` from ``point(x, data)``.

    ``data`` None: ``point`` is a function of ``x`` alone (a target file's).
    """
    batch = _kernels(point, data is None).batch
    args = () if data is None else data

    def value_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return batch(np.ascontiguousarray(x, dtype=np.float64), args)

    return value_and_grad


def make_trajectory(point: Any, data: tuple[Any, ...] | None = None) -> Callable[..., Trajectory]:
    """A compiled :func:`~mcmc.core.samplers.leapfrog.integrate` for ``point(x, data)`` (``point(x)``: ``data`` None).

    The returned function takes ``(position, momentum, log_density, grad,
    step_size (chains,), n_steps (chains,), inv_mass (chains, n),
    max_energy_error)`` and returns a ``Trajectory``; the inputs are not
    modified. With ``base (chains, dim)`` and ``idx (n,)`` given as keywords,
    ``position`` holds only the coordinates ``idx`` and chain ``c``'s density
    is the point function at ``base[c]`` with those coordinates replaced (its
    gradient restricted to them); without, ``n = dim`` and every coordinate moves.
    """
    run = _kernels(point, data is None).run
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
                  np.ascontiguousarray(np.broadcast_to(step_size, (chains,)), dtype=f64),
                  np.ascontiguousarray(np.broadcast_to(n_steps, (chains,)), dtype=np.int64),
                  np.ascontiguousarray(np.broadcast_to(inv_mass, (chains, n)), dtype=f64), float(max_energy_error),
                  args)  # fmt: skip
        return Trajectory(*out)

    return trajectory


def lazy_trajectory(module: str, name: str, data: tuple[Any, ...]) -> Callable[..., Trajectory]:
    """:func:`make_trajectory` for the point function ``module.name``, made at the first call.

    For built-in targets: building a target then costs no numba import or
    kernel load unless HMC runs on it.
    """
    made: list[Callable[..., Trajectory]] = []

    def trajectory(*args: Any, **kwargs: Any) -> Trajectory:
        if not made:
            made.append(make_trajectory(getattr(importlib.import_module(module), name), data))
        return made[0](*args, **kwargs)

    return trajectory

