"""Univariate slice sampling, coordinate by coordinate, vectorized over chains (Neal 2003).

For each coordinate ``j`` in turn (Neal 2003, "Slice sampling", Ann. Statist.
31(3), sections 4.1-4.2, Figs. 3 and 5):

1. the slice level ``log y = log pi(x) - E``, ``E ~ Exp(1)``;
2. *stepping out*: an interval of width ``w_j`` placed at random around
   ``x_j`` grows by ``w_j`` on each side while the end is inside the slice, at
   most ``m`` steps in all (``J = floor(m V)`` to the left, ``m - 1 - J`` to
   the right, which keeps the scheme reversible);
3. *shrinkage*: draw uniformly on the interval, accept if inside the slice,
   otherwise move the end on the rejected side to the draw.

All chains step out and shrink together: at every round only the chains
still looking evaluate the density (masked rows), and only they consume
random numbers, from their own streams, so a chain's path does not depend on
the other chains. Every transition is accepted; the statistic ``n_evals`` is
the number of log-density evaluations the chain used in the iteration (over
all coordinates), the honest cost to compare with other samplers.

Warm-up sets the width per chain and coordinate to ``3 * mean |x'_j - x_j|``
(for a point drawn uniformly on a slice of width ``W`` from another uniform
point, ``E |x' - x| = W / 3``), regularised toward the initial width; the
average restarts at mid-warm-up to forget the transient.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.adapt import Adapter
from mcmc.core.samplers.base import DensityState, density_state
from mcmc.core.targets.base import Target

DECLARATION = registry.SLICE
NAME = DECLARATION.name
MAX_SHRINK = 200  # shrinkage rounds before a chain keeps its point (only for pathological densities)


State = DensityState  # position and log density


class Info(NamedTuple):
    n_evals: np.ndarray  # (chains,) log-density evaluations in this iteration
    step_size: np.ndarray  # (chains,) mean slice width w over coordinates


init = density_state


def _lp_at(target: Target, x: np.ndarray, rows: np.ndarray, j: int, values: np.ndarray) -> np.ndarray:
    """Log density at ``x[rows]`` with coordinate ``j`` set to ``values``."""
    z = x[rows].copy()
    z[:, j] = values
    return np.asarray(target.log_density(z), dtype=float)


def step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    width: Any = 1.0,
    max_steps: int = 32,
) -> tuple[State, Info]:
    """One sweep of univariate slice updates over all coordinates for every chain.

    Parameters
    ----------
    width
        Initial interval width ``w``: scalar, ``(dim,)``, or ``(chains, dim)``.
    max_steps
        ``m``, the most stepping-out steps per coordinate update.
    """
    x = state.position.copy()
    lp = state.log_density.copy()
    n, d = x.shape
    w = np.broadcast_to(np.asarray(width, dtype=float), (n, d))
    evals = np.zeros(n, dtype=np.int64)
    all_rows = np.arange(n)
    sign = np.array([-1.0, 1.0])
    # The sweep's fixed-count draws up front (levels, interval placement,
    # split of the step budget): two calls instead of three per coordinate.
    levels = rng.exponential((d,))
    place = rng.uniform((d, 2))
    for j in range(d):
        log_y = lp - levels[:, j]
        x0 = x[:, j].copy()
        ends = np.empty((2, n))
        ends[0] = x0 - w[:, j] * place[:, j, 0]
        ends[1] = ends[0] + w[:, j]
        budget = np.empty((2, n), dtype=np.int64)
        budget[0] = np.floor(max_steps * place[:, j, 1]).astype(np.int64)
        budget[1] = max_steps - 1 - budget[0]

        # Stepping out, both ends of every chain in one density call per round.
        side, rows = np.nonzero(budget > 0)
        while rows.size:
            inside = _lp_at(target, x, rows, j, ends[side, rows]) > log_y[rows]
            evals += np.bincount(rows, minlength=n)
            side, rows = side[inside], rows[inside]
            ends[side, rows] += sign[side] * w[rows, j]
            budget[side, rows] -= 1
            keep = budget[side, rows] > 0
            side, rows = side[keep], rows[keep]
        left, right = ends[0], ends[1]

        looking = all_rows
        new = x0.copy()
        new_lp = lp.copy()
        for _ in range(MAX_SHRINK):
            if not looking.size:
                break
            u = rng.uniform(mask=looking)
            cand = left[looking] + u * (right[looking] - left[looking])
            cand_lp = _lp_at(target, x, looking, j, cand)
            evals[looking] += 1
            hit = cand_lp > log_y[looking]
            done = looking[hit]
            new[done] = cand[hit]
            new_lp[done] = cand_lp[hit]
            miss, c_miss = looking[~hit], cand[~hit]
            below = c_miss < x0[miss]
            left[miss[below]] = c_miss[below]
            right[miss[~below]] = c_miss[~below]
            looking = miss
        # A chain still looking after MAX_SHRINK rounds keeps x0 (always in the slice).
        x[:, j] = new
        lp = new_lp
    return State(x, lp), Info(evals, w.mean(axis=1))


class WidthAdapter(Adapter):
    """Per chain and coordinate: ``w = 3 * mean |jump|`` over warm-up, shrunk toward the initial ``w``."""

    def __init__(self, warmup: int, state: State, width: Any = 1.0, max_steps: int = 32) -> None:
        n, d = state.position.shape
        self.w0 = np.broadcast_to(np.asarray(width, dtype=float), (n, d)).copy()
        self.w = self.w0.copy()
        self.warmup, self.t = warmup, 0
        self.max_steps = max_steps
        self.prev = state.position.copy()
        self.total = np.zeros((n, d))
        self.n = 0

    def params(self) -> dict[str, Any]:
        return {"width": self.w, "max_steps": self.max_steps}

    def update(self, state: State, info: Info) -> None:
        self.total += np.abs(state.position - self.prev)
        self.prev = state.position.copy()
        self.n += 1
        self.w = (3.0 * self.total + 5.0 * self.w0) / (self.n + 5.0)
        # Floor: a chain that has not moved in a coordinate keeps a usable width.
        np.maximum(self.w, 1e-8 * (1.0 + np.abs(self.prev)), out=self.w)
        self.t += 1
        if self.t == self.warmup // 2:
            # Forget the jumps of the transient from the overdispersed start.
            self.w0, self.total, self.n = self.w.copy(), np.zeros_like(self.total), 0

    def final(self) -> dict[str, Any]:
        return self.params()


def make_adapter(
    warmup: int, state: State, target: Target, rng: ChainRandom, *, width: Any = 1.0, max_steps: int = 32
) -> WidthAdapter:
    """Width adaptation per chain and coordinate (see :class:`WidthAdapter`)."""
    return WidthAdapter(warmup, state, width, max_steps)
