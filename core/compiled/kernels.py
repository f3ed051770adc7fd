"""The compiled kernels around a point function, and the generated files numba caches them in.

:data:`KERNELS` is the numba source of the three kernels (a batch of
``(log density, gradient)``, a leapfrog trajectory per chain, a NUTS
transition per chain), written once with ``POINT(...)`` for the call of the
point function; :func:`functions` compiles them for one point function.
:mod:`mcmc.core.compiled` wraps them into the callables targets carry.

Compiled once: the kernels hold the point function as a constant, and
numba's cache does not keep such a function across processes when it is
built in memory. So they are written to a generated file,
``mcmc_kernels_<key>.py`` in :func:`cache_dir`, whose key hashes the point
function's source file: numba caches that file's functions like any other,
the first run compiles (for a small model about 1 s for the batch, 1.7 s for
HMC's trajectory, 3.6 s for the NUTS transition), later runs load (0.1 s),
and an edited target file gets a new key, never a stale kernel; files not
loaded for :data:`STALE_DAYS` days are deleted when a new one is written. A
function with no source file, or a cache folder that cannot be written, falls
back to compiling in memory once per process. The data are arguments, so a
new data set costs no compilation.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

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
        _copy(g[i], gi)
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
        _copy(x[c], xc)
        _copy(p[c], pc)
        _copy(g[c], gc)
        lp[c] = lpc
        taken[c] = k
        diverged[c] = bad
    return x, p, lp, g, taken, diverged


@njit(cache=CACHE)
def _logaddexp(a, b):
    # numpy's npy_logaddexp, step for step (the NumPy NUTS uses np.logaddexp)
    if a == b:
        return a + 0.6931471805599453
    t = a - b
    if t > 0:
        return a + np.log1p(np.exp(-t))
    if t <= 0:
        return b + np.log1p(np.exp(t))
    return a + b


@njit(cache=CACHE)
def _kinetic(p, minv):
    s = 0.0
    for j in range(p.shape[0]):
        s += minv[j] * p[j] * p[j]
    return 0.5 * s


@njit(cache=CACHE)
def _no_u_turn(p_a, p_b, rho, minv):
    a = 0.0
    b = 0.0
    for j in range(rho.shape[0]):
        a += minv[j] * p_a[j] * rho[j]
        b += minv[j] * p_b[j] * rho[j]
    return a > 0 and b > 0


@njit(cache=CACHE)
def _merge_ok(rho_a, first_a, last_a, rho_b, first_b, last_b, minv, tmp):
    # Stan's three checks on joining tree a and the tree b after it (nuts._merge_ok)
    n = rho_a.shape[0]
    for j in range(n):
        tmp[j] = rho_a[j] + rho_b[j]
    ok = _no_u_turn(first_a, last_b, tmp, minv)
    for j in range(n):
        tmp[j] = rho_a[j] + first_b[j]
    ok = _no_u_turn(first_a, first_b, tmp, minv) and ok
    for j in range(n):
        tmp[j] = rho_b[j] + last_a[j]
    return _no_u_turn(last_a, last_b, tmp, minv) and ok


@njit(cache=CACHE)
def _copy(dst, src):
    # a loop, not a slice assignment: numba compiles each of those into broadcasting code, and the NUTS kernel
    # had twenty of them (its compilation took 10 s)
    for j in range(src.shape[0]):
        dst[j] = src[j]


@njit(cache=CACHE)
def nuts(x0, p0, lp0, g0, eps, minv, max_depth, max_err, uni, uni_pos, expo, exp_pos, data):
    chains, dim = x0.shape
    x_out = x0.copy()
    lp_out = lp0.copy()
    g_out = g0.copy()
    h_out = np.empty(chains)
    n_steps = np.zeros(chains, dtype=np.int64)
    sum_accept = np.zeros(chains)
    diverging = np.zeros(chains, dtype=np.bool_)
    depth_out = np.zeros(chains, dtype=np.int64)
    uni_used = np.zeros(chains, dtype=np.int64)
    exp_used = np.zeros(chains, dtype=np.int64)
    end_x = np.empty((2, dim))
    end_p = np.empty((2, dim))
    end_g = np.empty((2, dim))
    end_lp = np.empty(2)
    rho = np.empty(dim)
    tmp = np.empty(dim)
    x = np.empty(dim)
    p = np.empty(dim)
    g = np.empty(dim)
    cand_x = np.empty(dim)
    cand_g = np.empty(dim)
    sub_rho = np.empty(dim)
    first = np.empty(dim)
    node_rho = np.empty(dim)
    node_first = np.empty(dim)
    stack = np.empty((max(max_depth, 1), 3, dim))
    for c in range(chains):
        m = minv[c]
        h0 = -lp0[c] + _kinetic(p0[c], m)
        for s in range(2):
            _copy(end_x[s], x0[c])
            _copy(end_p[s], p0[c])
            _copy(end_g[s], g0[c])
            end_lp[s] = lp0[c]
        _copy(rho, p0[c])
        log_w = 0.0
        h_out[c] = h0
        up = uni_pos[c]
        ep = exp_pos[c]
        steps = 0
        acc = 0.0
        div = False
        depth = 0
        for d in range(max_depth):
            if up >= uni.shape[1]:
                raise ValueError("nuts: the uniform buffer ran short")
            side = 1 if uni[c, up] > 0.5 else 0
            up += 1
            e = eps[c] if side == 1 else -eps[c]
            half = 0.5 * e
            _copy(x, end_x[side])
            _copy(p, end_p[side])
            _copy(g, end_g[side])
            lp = end_lp[side]
            cand_lp = lp
            cand_h = 0.0
            sub_w = -np.inf
            alive = True
            leaf_div = False
            for k in range(1 << d):
                for j in range(dim):
                    p[j] += half * g[j]
                    x[j] += e * m[j] * p[j]
                lp, gnew = POINT(x)
                if gnew.shape[0] != dim:
                    raise ValueError("the gradient's length is not dim")
                for j in range(dim):
                    g[j] = gnew[j]
                    p[j] += half * g[j]
                h = -lp + _kinetic(p, m)
                if np.isnan(h):
                    h = np.inf
                delta = h0 - h
                steps += 1
                acc += np.exp(min(delta, 0.0))
                leaf_div = not np.isfinite(h) or not (h - h0 <= max_err)
                new_w = _logaddexp(sub_w, delta)
                if ep >= expo.shape[1]:
                    raise ValueError("nuts: the exponential buffer ran short")
                log_u = -expo[c, ep]
                ep += 1
                # progressive multinomial sampling within the subtree
                if k == 0 or log_u < delta - new_w:
                    _copy(cand_x, x)
                    _copy(cand_g, g)
                    cand_lp = lp
                    cand_h = h
                sub_w = new_w
                if k == 0:
                    _copy(first, p)
                _copy(node_rho, p)
                _copy(node_first, p)
                ok = not leaf_div
                level = 0
                while (k + 1) % (1 << (level + 1)) == 0:
                    ok = _merge_ok(stack[level, 0], stack[level, 1], stack[level, 2], node_rho, node_first, p, m,
                                   tmp) and ok
                    for j in range(dim):
                        node_rho[j] = stack[level, 0, j] + node_rho[j]
                        node_first[j] = stack[level, 1, j]
                    level += 1
                if level < d:
                    _copy(stack[level, 0], node_rho)
                    _copy(stack[level, 1], node_first)
                    _copy(stack[level, 2], p)
                else:
                    _copy(sub_rho, node_rho)
                alive = ok
                if not alive:
                    break
            div = leaf_div
            if not alive:
                break
            # the old trajectory is tree a, the subtree b: a's end next to b is the one integrated from
            turn_ok = _merge_ok(rho, end_p[1 - side], end_p[side], sub_rho, first, p, m, tmp)
            depth += 1
            log_u = -expo[c, ep]
            ep += 1
            # biased progressive sampling: move to the subtree's candidate w.p. min(1, W_subtree / W_old)
            if log_u < sub_w - log_w:
                _copy(x_out[c], cand_x)
                _copy(g_out[c], cand_g)
                lp_out[c] = cand_lp
                h_out[c] = cand_h
            log_w = _logaddexp(log_w, sub_w)
            for j in range(dim):
                rho[j] += sub_rho[j]
            _copy(end_x[side], x)
            _copy(end_p[side], p)
            _copy(end_g[side], g)
            end_lp[side] = lp
            if not turn_ok:
                break
        n_steps[c] = steps
        sum_accept[c] = acc
        diverging[c] = div
        depth_out[c] = depth
        uni_used[c] = up - uni_pos[c]
        exp_used[c] = ep - exp_pos[c]
    return x_out, lp_out, g_out, h_out, n_steps, sum_accept, diverging, depth_out, uni_used, exp_used
"""

#: Point functions the generated kernel files import, by key (see :func:`functions`).
POINTS: dict[str, Any] = {}


def _source(one_point: bool, cache: bool) -> str:
    def call(arg: str) -> str:
        return f"point({arg})" if one_point else f"point({arg}, data)"

    body = KERNELS.replace("POINT(np.ascontiguousarray(x[i]))", call("np.ascontiguousarray(x[i])"))
    for arg in ("full", "x"):
        body = body.replace(f"POINT({arg})", call(arg))
    return body.replace("CACHE", str(cache))


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
    And this module's name: a generated file imports :data:`POINTS` from it,
    so a file written when it lived elsewhere (``mcmc.core.samplers.compiled``)
    is never loaded again, only pruned.
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
    for part in (source, module.encode(), code.co_name.encode(), kernels, numba.__version__.encode(),
                 __name__.encode()):
        h.update(part)
        h.update(b"\0")
    return h.hexdigest()[:24]


class Functions(NamedTuple):
    """The three compiled kernels of one point function (see :data:`KERNELS`)."""

    batch: Any
    run: Any
    nuts: Any


@lru_cache(maxsize=None)
def functions(point: Any, one_point: bool) -> Functions:
    """The compiled batch, trajectory loop and NUTS transition for ``point``, made once per process.

    ``one_point``: ``point(x)`` (a target file's function), else ``point(x, data)``.
    Loaded from a generated file in :func:`cache_dir` (see the module docstring), or
    compiled in memory when the point function has no source file or the folder fails.
    """
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
    return Functions(namespace["batch"], namespace["run"], namespace["nuts"])


#: Generated kernel files not loaded for this long are deleted when a new one is written.
STALE_DAYS = 30


def _from_file(key: str, one_point: bool) -> Functions:
    name = f"mcmc_kernels_{key}"
    folder = cache_dir()
    path = folder / f"{name}.py"
    if path.exists():
        os.utime(path)  # loaded now: not stale
    else:
        folder.mkdir(parents=True, exist_ok=True)
        _prune(folder)
        text = (
            f'"""Generated by mcmc ({__name__}) for one point function; safe to delete."""\n'
            f"import numpy as np\nfrom numba import njit\n\nfrom {__name__} import POINTS\n\n"
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
    return Functions(module.batch, module.run, module.nuts)


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
