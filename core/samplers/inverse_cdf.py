"""Sampling by the inverse CDF: independent exact draws of a one-dimensional target, vectorized over chains.

If ``F`` is the CDF of the target and ``u ~ U(0, 1)``, then ``x = F^-1(u)``
has law ``F`` (Robert & Casella 2004, *Monte Carlo Statistical Methods*, 2nd
ed., lemma 2.4; Devroye 1986, *Non-Uniform Random Variate Generation*, II.2).
Every iteration draws one uniform per chain from the chain's own stream, so
the draws are independent, and chain ``i`` depends only on the seed and ``i``.

Where ``F^-1`` comes from:

* the target's own quantile function when it has one
  (:class:`~mcmc.core.targets.protocols.Quantile`: a target file's
  ``quantile(u)``; the built-in one-dimensional ``gaussian``, ``gamma`` and
  ``beta-bernoulli``): exact to the rounding of that function;
* otherwise the CDF of the density is built once by adaptive quadrature and
  inverted numerically (:class:`CdfTable`, :func:`cdf_table`):

  1. the support is bracketed on a geometric grid of offsets ``10^(k/8)``
     (``1e-8`` to ``1e8``) either side of an anchor point, cut one grid point
     beyond the outermost point whose log density is within :data:`TAIL`
     nats of the peak (so the mass left out is of order ``e^-40`` of the
     peak's);
  2. the bracket is split into :data:`START_INTERVALS` intervals, and each
     interval whose 5-point Gauss-Legendre integral disagrees with the sum
     over its halves by more than :data:`TOLERANCE` times the total, in
     proportion to its width, is halved, up to :data:`MAX_DEPTH` times: the
     estimated error of the CDF is at most :data:`TOLERANCE` (``1e-10``) in
     probability where the density is smooth (an integrable singularity, the
     gamma's at 0 for shape < 1, stops at the depth limit, and the run
     records the error estimate reached, ``attrs["inverse_cdf"]``);
  3. a draw ``u`` finds its interval by binary search in the cumulative
     masses, then solves ``F(x) = u`` inside it by safeguarded Newton steps
     (bisection when a step would leave the bracket; :func:`invert`), the
     partial integral by 5-point Gauss-Legendre: ``|F(x) - u|`` is at the
     level of the quadrature's error, about ``1e-10``.

  The table depends on the target only (its anchor is drawn from a fixed
  stream of seed 0), never on the chains or the seed. It costs a few
  thousand density evaluations once per process, which the run's counts leave
  out (so that blocks of chains run apart add up to one run) and
  ``attrs["inverse_cdf"]["table_evals"]`` records; each
  draw then costs 6 evaluations per Newton step, about 20 to 40 (more in a
  steep tail, where bisection takes over). A density whose mass sits
  more than ``1e8`` from the anchor, or that does not fall 40 nats below its
  peak within it (a tail heavier than that), is refused: give ``quantile(u)``.

Statistics: ``n_evals``, the density evaluations of the draw. There is
nothing to tune: warm-up iterations are draws thrown away.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import Quantile

DECLARATION = registry.INVERSE_CDF
NAME = DECLARATION.name

TAIL = 40.0  # nats below the peak where the support is cut
OFFSETS = 10.0 ** (np.arange(-64, 65) / 8.0)  # the geometric grid either side of the anchor: 1e-8 .. 1e8
START_INTERVALS = 256
TOLERANCE = 1e-10  # the CDF's estimated error, in probability
MAX_DEPTH = 40  # halvings of a start interval
SOLVE_STEPS = 100  # Newton-or-bisection steps at most per draw (bisection alone: 2^-100 of an interval)
SOLVE_TOLERANCE = 1e-13  # |F(x) - u| at which a draw stops, in probability
SOLVE_WIDTH = 1e-15  # relative width of the bracket at which a draw stops
ANCHOR_TRIES = 100
# 5-point Gauss-Legendre on [-1, 1] in closed form (not leggauss, whose nodes come from LAPACK's eigenvalues and
# could differ in the last bits between CPUs), then mapped to [0, 1].
_A, _B = np.sqrt(5.0 - 2.0 * np.sqrt(10.0 / 7.0)) / 3.0, np.sqrt(5.0 + 2.0 * np.sqrt(10.0 / 7.0)) / 3.0
_WA, _WB = (322.0 + 13.0 * np.sqrt(70.0)) / 900.0, (322.0 - 13.0 * np.sqrt(70.0)) / 900.0
GL_NODES = 0.5 * (np.array([-_B, -_A, 0.0, _A, _B]) + 1.0)
GL_WEIGHTS = 0.5 * np.array([_WB, _WA, 128.0 / 225.0, _WA, _WB])


class CdfTable(NamedTuple):
    """The CDF of a one-dimensional density, tabulated on adaptive intervals (see the module docstring).

    Attributes
    ----------
    edges
        ``(m + 1,)`` the interval edges, increasing.
    cdf
        ``(m + 1,)`` the CDF at the edges (0 ... 1).
    log_peak, log_norm
        The largest log density seen, and ``log`` of the integral of ``exp(log p - log_peak)``.
    error
        The estimated error of the CDF (the sum of the intervals' estimates over the total).
    evaluations
        The density evaluations the table took.
    """

    edges: np.ndarray
    cdf: np.ndarray
    log_peak: float
    log_norm: float
    error: float
    evaluations: int = 0


class State(NamedTuple):
    position: np.ndarray  # (chains, 1)
    log_density: np.ndarray  # (chains,)
    table: CdfTable | None  # the numerical inverse, or None when the target has its quantile function


class Info(NamedTuple):
    n_evals: np.ndarray  # (chains,) density evaluations of this draw


def _one_dimensional(target: Target) -> None:
    if target.dim != 1:
        raise UsageError(
            f"inverse-cdf draws one-dimensional targets; {target.name!r} has dimension {target.dim} "
            "(for the normal in any dimension, -s exact draws by Box-Muller)"
        )


def _density(target: Target, x: np.ndarray) -> np.ndarray:
    """``log p`` at points ``x (n,)``; NaN counts as ``-inf``."""
    lp = np.asarray(target.log_density(np.asarray(x, dtype=float)[:, None]), dtype=float)
    return np.where(np.isnan(lp), -np.inf, lp)


def _anchor(target: Target) -> float:
    """A point of finite log density from a fixed stream (seed 0, stream 3): the same whatever the run."""
    rng = ChainRandom(0, chains=1, stream=3)
    for _ in range(ANCHOR_TRIES):
        x = target.initial(rng, 1)[:, 0]
        if np.isfinite(_density(target, x))[0]:
            return float(x[0])
    raise InputError(target.name, f"inverse-cdf found no point of finite log density in {ANCHOR_TRIES} starts")


def _bracket(target: Target, anchor: float) -> tuple[float, float, float]:
    """``(lo, hi, log_peak)``: the support cut :data:`TAIL` nats below the peak, on the geometric grid."""
    scale = 1.0 + abs(anchor)
    grid = np.concatenate([anchor - scale * OFFSETS[::-1], [anchor], anchor + scale * OFFSETS])
    lp = _density(target, grid)
    peak = float(np.max(lp))
    keep = np.flatnonzero(lp >= peak - TAIL)
    first, last = int(keep[0]), int(keep[-1])
    if first == 0 or last == grid.size - 1:
        raise InputError(
            target.name,
            f"inverse-cdf: the density does not fall {TAIL:g} nats below its peak within {scale * OFFSETS[-1]:.3g} "
            "of its starting region (too heavy a tail to invert numerically); give quantile(u) in the target file",
        )
    return float(grid[first - 1]), float(grid[last + 1]), peak


def _gauss(target: Target, a: np.ndarray, b: np.ndarray, log_peak: float) -> np.ndarray:
    """5-point Gauss-Legendre integrals of ``exp(log p - log_peak)`` over ``[a, b]`` (arrays, any shape)."""
    width = b - a
    x = a[..., None] + width[..., None] * GL_NODES
    f = np.exp(_density(target, x.ravel()) - log_peak).reshape(x.shape)
    return width * np.sum(f * GL_WEIGHTS, axis=-1)


def cdf_table(target: Target) -> CdfTable:
    """Tabulate the CDF of the one-dimensional ``target`` by adaptive quadrature (see the module docstring).

    Raises
    ------
    InputError
        No point of finite density, or a tail too heavy for the bracket.
    """
    calls = [0]
    density = target.log_density

    def counted(x: np.ndarray) -> np.ndarray:
        calls[0] += np.shape(x)[0]
        return density(x)

    target = dataclasses.replace(target, log_density=counted)
    lo, hi, peak = _bracket(target, _anchor(target))
    a = lo + (hi - lo) * np.arange(START_INTERVALS) / START_INTERVALS
    b = np.append(a[1:], hi)
    whole = _gauss(target, a, b, peak)
    done_a, done_b, done_mass, done_err = [], [], [], []
    for depth in range(MAX_DEPTH + 1):
        mid = 0.5 * (a + b)
        left, right = _gauss(target, a, mid, peak), _gauss(target, mid, b, peak)
        err = np.abs(left + right - whole)
        total = float(np.sum(whole)) + sum(float(np.sum(m)) for m in done_mass)
        ok = (err <= TOLERANCE * total * (b - a) / (hi - lo)) | (depth == MAX_DEPTH)
        for arr, values in ((done_a, (a[ok], mid[ok])), (done_b, (mid[ok], b[ok])),
                            (done_mass, (left[ok], right[ok])), (done_err, (err[ok] / 2, err[ok] / 2))):
            arr.extend(values)  # fmt: skip
        split = ~ok
        if not split.any():
            break
        a, b = np.concatenate([a[split], mid[split]]), np.concatenate([mid[split], b[split]])
        whole = np.concatenate([left[split], right[split]])
    starts = np.concatenate(done_a)
    order = np.argsort(starts, kind="stable")
    edges = np.append(starts[order], hi)
    mass = np.concatenate(done_mass)[order]
    total = float(np.sum(mass))
    if not total > 0:
        raise InputError(target.name, "inverse-cdf: the density integrates to zero on its bracket")
    cdf = np.concatenate([[0.0], np.cumsum(mass)]) / total
    cdf[-1] = 1.0
    error = float(np.sum(np.concatenate(done_err))) / total
    return CdfTable(edges, cdf, peak, float(np.log(total)), error, calls[0])


def invert(target: Target, table: CdfTable, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``F^-1(u)`` for ``u (n,)`` in ``(0, 1)``, and the density evaluations each took (see the module docstring).

    Inside its interval ``[a, b]`` each draw solves ``G(x) = r`` (``G`` the
    mass of ``[a, x]`` by 5-point Gauss-Legendre, ``r`` the mass to find) by
    Newton steps kept inside a shrinking bracket, bisecting when a step would
    leave it, until ``|G(x) - r|`` is below :data:`SOLVE_TOLERANCE` of the
    total mass or the bracket below :data:`SOLVE_WIDTH` (relative), at most
    :data:`SOLVE_STEPS` steps. Only the draws still solving are evaluated:
    each draw's work depends on its own ``u`` only.
    """
    n = u.size
    k = np.clip(np.searchsorted(table.cdf, u, side="right") - 1, 0, table.cdf.size - 2)
    a, b = table.edges[k], table.edges[k + 1]
    norm = np.exp(table.log_norm)
    rest = (u - table.cdf[k]) * norm  # the mass to find inside [a, b], unnormalised
    mass = (table.cdf[k + 1] - table.cdf[k]) * norm
    lo, hi = a.copy(), b.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(mass > 0, a + (b - a) * np.clip(rest / mass, 0.0, 1.0), 0.5 * (a + b))
    evals = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    for _ in range(SOLVE_STEPS):
        xs = x[todo]
        g = _gauss(target, a[todo], xs, table.log_peak) - rest[todo]
        f = np.exp(_density(target, xs) - table.log_peak)
        evals[todo] += 6
        below = g < 0
        lo[todo], hi[todo] = np.where(below, xs, lo[todo]), np.where(below, hi[todo], xs)
        done = (np.abs(g) <= SOLVE_TOLERANCE * norm) | (hi[todo] - lo[todo] <= SOLVE_WIDTH * (1.0 + np.abs(xs)))
        with np.errstate(divide="ignore", invalid="ignore"):
            step = xs - g / f
        inside = np.isfinite(step) & (step > lo[todo]) & (step < hi[todo])
        x[todo] = np.where(done, xs, np.where(inside, step, 0.5 * (lo[todo] + hi[todo])))
        todo = todo[~done]
        if not todo.size:
            break
    return x, evals


def init(position: np.ndarray, target: Target) -> State:
    """State at ``position (chains, 1)``, and the CDF table when the target has no quantile function.

    Raises
    ------
    UsageError
        A target of dimension other than 1.
    InputError
        A density the table cannot be built for (see :func:`cdf_table`).
    """
    _one_dimensional(target)
    x = np.asarray(position, dtype=float)
    table = None
    if not isinstance(target, Quantile):
        # Built on the density uncounted (the driver's counter keeps the function as __wrapped__): done once per
        # process, not per chain, so blocks of chains run apart must count the same as one run.
        raw = getattr(target.log_density, "__wrapped__", target.log_density)
        table = cdf_table(dataclasses.replace(target, log_density=raw))
    return State(x, np.asarray(target.log_density(x), dtype=float), table)


def step(rng: ChainRandom, state: State, target: Target) -> tuple[State, Info]:
    """One independent draw ``x = F^-1(u)`` per chain."""
    n = state.position.shape[0]
    u = rng.uniform() + 2.0**-54  # in (0, 1): F^-1(0) may be -inf
    if state.table is None:
        x = np.asarray(target.quantile(u), dtype=float)  # type: ignore[attr-defined]
        evals = np.zeros(n, dtype=np.int64)
    else:
        x, evals = invert(target, state.table, u)
    position = x[:, None]
    return State(position, np.asarray(target.log_density(position), dtype=float), state.table), Info(evals + 1)


def run_attrs(state: State, final: dict[str, Any]) -> dict[str, Any]:
    """How the draws were made: the quantile function, or the table and its accuracy."""
    del final
    if state.table is None:
        return {"inverse_cdf": {"method": "quantile"}}
    t = state.table
    return {"inverse_cdf": {"method": "numerical", "intervals": int(t.edges.size - 1), "error": t.error,
                            "support": [float(t.edges[0]), float(t.edges[-1])], "table_evals": t.evaluations}}
