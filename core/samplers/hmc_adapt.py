"""Warm-up adaptation for HMC: dual averaging of the step size and Stan's windowed
diagonal mass matrix, per chain.

Step size: the dual-averaging scheme of Hoffman & Gelman (2014, section 3.2),
with Stan's defaults ``gamma = 0.05``, ``t0 = 10``, ``kappa = 0.75`` and
``mu = log(10 eps0)``, drives the mean acceptance statistic towards
``target_accept`` (0.8). During warm-up the sampler uses the noisy iterate
``eps_t``; afterwards the averaged ``eps_bar``.

Mass matrix: Stan's three-stage schedule (Stan Reference Manual, "HMC
algorithm parameters", section "Automatic parameter tuning"): an initial fast
interval (75 iterations) where only the step size adapts, a series of slow
windows (25, 50, 100, ... iterations; the last one stretched to reach the
terminal interval) at the end of each of which the diagonal inverse mass matrix
is set to the regularized sample variance of the window's draws
(:class:`mcmc.core.samplers.adapt.Welford`),

    var_reg = n / (n + 5) * var + 1e-3 * 5 / (n + 5),

and a terminal fast interval (50 iterations) for the final step size. When the
warm-up is shorter than 75 + 25 + 50 iterations the three stages take 15%, 75%
and 10% of it, as Stan does. After every slow window the step size is searched
again (the heuristic of Hoffman & Gelman 2014, Algorithm 4) and dual averaging
restarts with ``mu = log(10 eps)``.

:class:`WindowAdapter` drives this for HMC and NUTS and adds two guards
against a warm-up that collapses: a cap on trajectory length while the metric
is still the initial one, undoing a metric update that made the step
size collapse, and refitting, from a short window of its own later draws, the
metric of a chain whose step size stays tiny (see its docstring).

Everything is per chain: no information is pooled across chains, so a chain's
draws do not depend on which other chains run beside it.

References
----------
Hoffman, M. D. & Gelman, A. (2014). The No-U-Turn sampler: adaptively setting
path lengths in Hamiltonian Monte Carlo. *JMLR* 15, 1593-1623.
Nesterov, Y. (2009). Primal-dual subgradient methods for convex problems.
*Mathematical Programming* 120, 221-259.
Stan Development Team. *Stan Reference Manual*, "MCMC Sampling: HMC algorithm
parameters" (adaptation windows); ``stan/mcmc/windowed_adaptation.hpp``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.core.compiled import LoopAdaptation
from mcmc.core.errors import UsageError
from mcmc.core.samplers.adapt import Adapter, Welford
from mcmc.core.samplers.leapfrog import integrate, kinetic_energy

if TYPE_CHECKING:
    from mcmc.core.random import ChainRandom
    from mcmc.core.targets.base import Target


@dataclass
class DualAveraging:
    """Per-chain dual-averaging state (Hoffman & Gelman 2014, eq. 6).

    Attributes
    ----------
    mu
        Shape ``(chains,)``: the shrinkage point ``log(10 eps0)``.
    log_step, log_step_bar, h_bar
        Shape ``(chains,)``: the iterate ``x_t``, its weighted average, and the
        running mean of ``target_accept - accept_stat``.
    counter
        Shape ``(chains,)``: updates since each chain's last (re)start.
    """

    mu: np.ndarray
    log_step: np.ndarray
    log_step_bar: np.ndarray
    h_bar: np.ndarray
    counter: np.ndarray
    target_accept: float = 0.8
    gamma: float = 0.05
    t0: float = 10.0
    kappa: float = 0.75

    @classmethod
    def start(cls, step_size: np.ndarray, target_accept: float = 0.8, **kw: float) -> DualAveraging:
        """Start (or restart) at step size ``step_size (chains,)``: ``mu = log(10 step_size)``."""
        log_eps = np.log(np.asarray(step_size, dtype=float))
        zeros = np.zeros_like(log_eps)
        return cls(log_eps + np.log(10.0), log_eps.copy(), zeros.copy(), zeros.copy(),
                   np.zeros(log_eps.shape, dtype=np.int64), target_accept, **kw)  # fmt: skip

    def restart(self, mask: np.ndarray, step_size: np.ndarray) -> None:
        """Restart the chains where ``mask (chains,)`` is true at ``step_size (chains,)``; the others go on."""
        fresh = DualAveraging.start(step_size, self.target_accept)
        for name in ("mu", "log_step", "log_step_bar", "h_bar", "counter"):
            getattr(self, name)[mask] = getattr(fresh, name)[mask]

    def update(self, accept_stat: np.ndarray) -> None:
        """One dual-averaging step from the acceptance statistics ``(chains,)`` of the last transition."""
        self.counter += 1
        t = self.counter.astype(float)
        # A NaN statistic (should not happen: divergences report 0) would poison
        # the averages for good; count it as a rejection.
        a = np.minimum(1.0, np.nan_to_num(np.asarray(accept_stat, dtype=float), nan=0.0))
        eta = 1.0 / (t + self.t0)
        self.h_bar = (1.0 - eta) * self.h_bar + eta * (self.target_accept - a)
        self.log_step = self.mu - np.sqrt(t) / self.gamma * self.h_bar
        w = t ** (-self.kappa)
        self.log_step_bar = w * self.log_step + (1.0 - w) * self.log_step_bar

    @property
    def step_size(self) -> np.ndarray:
        """The current iterate ``exp(x_t)``, used during warm-up."""
        return np.exp(self.log_step)

    @property
    def final_step_size(self) -> np.ndarray:
        """The averaged ``exp(x_bar_t)``, used after warm-up (the iterate if no update yet)."""
        return np.exp(np.where(self.counter > 0, self.log_step_bar, self.log_step))


def window_ends(
    num_warmup: int, init_buffer: int = 75, term_buffer: int = 50, base_window: int = 25
) -> tuple[int, list[int]]:
    """Stan's slow adaptation windows for ``num_warmup`` iterations.

    Returns
    -------
    start, ends
        Draws of iterations ``start .. num_warmup - term_buffer - 1`` (0-based)
        feed the variance estimate; the mass matrix is updated at the end of
        iteration ``e`` for each ``e`` in ``ends`` (the last of a slow window).
        ``ends`` is empty when ``num_warmup < 20`` (too short to estimate a
        variance: only the step size adapts, as in Stan).

    Notes
    -----
    Follows ``stan::mcmc::windowed_adaptation``: windows double in size, and a
    window is stretched to the terminal buffer when the next one would not fit
    twice (so the last slow window is the longest).
    """
    if num_warmup < 20:
        return num_warmup, []
    if init_buffer + base_window + term_buffer > num_warmup:
        init_buffer = int(0.15 * num_warmup)
        term_buffer = int(0.1 * num_warmup)
        base_window = num_warmup - (init_buffer + term_buffer)
    last = num_warmup - term_buffer - 1
    ends: list[int] = []
    size = base_window
    end = init_buffer + size - 1
    while True:
        ends.append(end)
        if end == last:
            break
        size *= 2
        end = end + size
        if end != last and end + 2 * size >= num_warmup - term_buffer:
            end = last
    return init_buffer, ends


def per_chain(value: Any, chains: int, name: str, sampler: str = "hmc") -> np.ndarray:
    """A positive finite scalar or ``(chains,)`` parameter as a ``(chains,)`` array."""
    arr = np.asarray(value, dtype=float)
    # called every iteration: np.broadcast_to's Python-level checks cost more than the rest
    if arr.shape == (chains,):
        arr = arr.copy()
    else:
        arr = np.full(chains, arr) if arr.ndim == 0 else np.broadcast_to(arr, (chains,)).copy()
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise UsageError(f"{sampler}: {name} must be positive and finite, got {value!r}")
    return arr


def inv_mass_per_chain(value: Any, chains: int, dim: int, sampler: str = "hmc") -> np.ndarray:
    """A diagonal inverse mass ``None`` (identity), ``(dim,)`` or ``(chains, dim)`` as ``(chains, dim)``."""
    if value is None:
        return np.ones((chains, dim))
    arr = np.asarray(value, dtype=float)
    try:
        if arr.shape != (chains, dim):
            arr = np.broadcast_to(arr, (chains, dim))
    except ValueError:
        raise UsageError(f"{sampler}: inv_mass has shape {arr.shape}; expected (dim,) or (chains, dim)") from None
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise UsageError(f"{sampler}: inv_mass must be positive and finite")
    return arr


def find_reasonable_step_size(
    rng: ChainRandom,
    state: Any,
    target: Target,
    step_size: np.ndarray,
    inv_mass: np.ndarray,
    max_iter: int = 100,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Per-chain initial step size (Hoffman & Gelman 2014, Algorithm 4, as in Stan).

    From ``step_size (chains,)``, double (or halve) each chain's step size
    until the acceptance probability of one leapfrog step crosses 0.8, and
    return the first step size past the crossing. Each chain draws one
    momentum (``dim`` normals) for the whole search, so the numbers a chain
    consumes do not depend on how long the other chains search. ``state``
    has ``position``, ``log_density`` and ``grad``. With ``mask (chains,)``
    only those chains search (and draw); the others keep ``step_size``.

    Returns
    -------
    ndarray
        Shape ``(chains,)``, within ``[1e-10, 1e7]``.
    """
    vg = target.value_and_grad
    x, lp, g = state.position, state.log_density, state.grad
    chains, dim = x.shape
    eps = np.array(step_size, dtype=float)
    rows = np.arange(chains) if mask is None else np.flatnonzero(mask)
    p = np.zeros_like(x)
    p[rows] = rng.normal((dim,), mask=None if mask is None else rows) / np.sqrt(inv_mass[rows])
    h0 = -lp + kinetic_energy(p, inv_mass)
    log_08 = np.log(0.8)

    def delta(rows: np.ndarray) -> np.ndarray:
        t = integrate(vg, x[rows], p[rows], lp[rows], g[rows], eps[rows], 1, inv_mass[rows])
        with np.errstate(over="ignore", invalid="ignore"):
            d = h0[rows] + t.log_density - kinetic_energy(t.momentum, inv_mass[rows])
        return np.where(np.isnan(d), -np.inf, d)

    up = np.zeros(chains, dtype=bool)
    up[rows] = delta(rows) > log_08
    for _ in range(max_iter):
        if rows.size == 0:
            break
        eps[rows] = np.where(up[rows], 2.0 * eps[rows], 0.5 * eps[rows])
        d = delta(rows)
        crossed = np.where(up[rows], ~(d > log_08), ~(d < log_08))
        stuck = (eps[rows] > 1e7) | (eps[rows] < 1e-10)
        rows = rows[~(crossed | stuck)]
    if mask is not None:
        return np.where(mask, np.clip(eps, 1e-10, 1e7), step_size)
    return np.clip(eps, 1e-10, 1e7)


CHECK_AFTER = 20
"""Iterations after a metric update at which the new metric is judged (see :class:`WindowAdapter`)."""
COLLAPSE = 0.25
"""A new metric is rejected when it shrinks the typical physical step below this fraction of the old one."""
TINY_STEP = 0.05
"""A step size, in the units of the metric, below which the metric does not fit the chain's draws."""
RESTART_WINDOW = 25
"""Length of the window a chain restarts when its metric does not fit: Stan's first slow window.

Short, because the chain pays full-length paths at a tiny step until it ends."""


class WindowAdapter(Adapter):
    """Stan-style warm-up for HMC and NUTS: dual-averaged step size, windowed diagonal metric.

    Four protections keep a warm-up from collapsing (issue 15):

    * the step size is searched at the start and after every metric update
      (:func:`find_reasonable_step_size`), and dual averaging restarts there;
    * while the metric is still the initial one, the parameters in
      ``early_cap`` (HMC's ``max_steps``, NUTS's ``max_tree_depth``) replace
      the sampler's: an identity metric on a badly scaled posterior forces a
      tiny step, and a full-length path at that step costs hundreds of
      gradients per iteration; ``late_cap`` (HMC's ``max_steps``) does the
      same, less tightly, for the rest of warm-up, where dual averaging's
      iterate dips after rejections and a metric from a window that had not
      converged can ask for long paths until the next window;
    * :data:`CHECK_AFTER` iterations after each metric update, a chain whose
      new metric shrank its typical physical step ``eps sqrt(M^-1_i)``
      (the median over coordinates ``i``, with dual averaging's averaged
      ``eps``) below :data:`COLLAPSE` times that before the update goes back
      to its previous metric and step size, and the next window tries again.
      A variance estimated on a window where the chain was still drifting
      inflates some coordinates, and the step size then collapses for every
      other coordinate: on the Gaussian mixture of posteriordb one chain spent
      350 iterations at 760 to 900 steps each that way. A good metric makes
      the step in wide coordinates longer and keeps it in the stiffest, so
      the median step does not shrink; in one dimension any metric is the
      same (the step scales), and the ratio is 1;
    * at the same check, a chain whose averaged step size is below
      :data:`TINY_STEP` in the units of its metric restarts a window of
      :data:`RESTART_WINDOW` draws and refits its metric from them; a chain
      that went back to its previous metric is judged so
      :data:`CHECK_AFTER` iterations later. The next regular update (but
      the last) leaves a refitted metric alone, since its window began while
      the chain was still drifting. (On the compiled Gaussian mixture at
      seed 2 one chain's metrics, each estimated while it drifted, kept it at
      25 to 55 steps per iteration for 170 iterations.) Judged once per
      window, not on every iteration: on gp_pois_regr a step of 0.03 to 0.08
      in metric units is what a good metric gives, and refitting whenever it
      dips below 0.05 halved the ESS per gradient.

    The variance estimate is Stan's regularized one (see the module docstring).
    Everything is per chain.

    Parameters
    ----------
    warmup
        Number of warm-up iterations.
    state
        The starting state (``position``, ``log_density``, ``grad``).
    target, rng
        Used for the step-size searches.
    step_size
        Initial guess for the search (default 1, as Stan), scalar or ``(chains,)``.
    inv_mass
        Initial diagonal inverse mass ``(dim,)`` or ``(chains, dim)`` (default identity).
    target_accept
        Mean acceptance statistic dual averaging aims at (default 0.8).
    adapt_mass
        Adapt the metric in windows (default true).
    early_cap
        Parameters used instead of the sampler's until the first metric update.
    late_cap
        Parameters used instead of the sampler's for the rest of warm-up.
    name
        The sampler's name, for error messages.
    **fixed
        Other parameters of the sampler's ``step``, passed through unchanged.
    """

    def __init__(
        self,
        warmup: int,
        state: Any,
        target: Target,
        rng: ChainRandom,
        *,
        step_size: float | np.ndarray | None = None,
        inv_mass: np.ndarray | None = None,
        target_accept: float | None = None,
        adapt_mass: bool = True,
        early_cap: dict[str, Any] | None = None,
        late_cap: dict[str, Any] | None = None,
        name: str = "hmc",
        **fixed: Any,
    ) -> None:
        chains, dim = state.position.shape
        self.target = target
        self.rng = rng
        self.fixed = {k: v for k, v in fixed.items() if v is not None}
        self.target_accept = 0.8 if target_accept is None else float(target_accept)
        if not 0.0 < self.target_accept < 1.0:
            raise UsageError(f"{name}: target_accept must be in (0, 1), got {target_accept}")
        self.inv_mass = inv_mass_per_chain(inv_mass, chains, dim, name).copy()
        self.warmup = warmup
        self.start, self.ends = window_ends(warmup) if adapt_mass else (warmup, [])
        self.early_cap = dict(early_cap or {}) if self.ends else {}
        self.late_cap = dict(late_cap or {})
        self.t = 0
        self.welford = Welford((chains, dim))
        self._previous: tuple[np.ndarray, np.ndarray] | None = None
        self._check_at = -1
        self._restart: tuple[np.ndarray, Welford, int] | None = None  # chains, their window, its end
        self.fallbacks = np.zeros(chains, dtype=np.int64)  # metric updates undone, per chain
        self._refit = np.zeros(chains, dtype=bool)  # metric from a restarted window since the last update
        self._recheck, self._recheck_at = np.zeros(chains, dtype=bool), -1  # chains whose old metric came back
        eps = per_chain(1.0 if step_size is None else step_size, chains, "step_size", name)
        if warmup > 0 or step_size is None:
            eps = find_reasonable_step_size(rng, state, target, eps, self.inv_mass)
        self.da = DualAveraging.start(eps, self.target_accept)

    def params(self) -> dict[str, Any]:
        out = {**self.fixed, "step_size": self.da.step_size, "inv_mass": self.inv_mass}
        if self.early_cap and self.t <= self.ends[0]:
            out.update(self.early_cap)
        elif self.late_cap and self.t < self.warmup:
            out.update(self.late_cap)
        return out

    def update(self, state: Any, info: Any) -> None:
        self.da.update(info.acceptance_rate)
        if self.ends and self.start <= self.t <= self.ends[-1]:
            self.welford.add(state.position)
        if self.t in self.ends:
            self._previous = (self.inv_mass, self.da.final_step_size)
            self._check_at = self.t + CHECK_AFTER
            # A chain whose metric came from a restarted window since the last
            # update keeps it: this window's draws began before the restart,
            # while the chain was still drifting under a metric that did not fit.
            # Not at the last update: its window is long, and the metric it
            # gives is the one the draws are taken with.
            fresh = self._refit[:, None] & (self.t != self.ends[-1])
            self.inv_mass = np.where(fresh, self.inv_mass, self.welford.regularized_variance())
            self._refit[:] = False
            self.welford = Welford(state.position.shape)
            # A new metric changes the scale of everything: search the step
            # size again and restart dual averaging from it (as Stan does).
            eps = find_reasonable_step_size(self.rng, state, self.target, self.da.step_size, self.inv_mass)
            self.da = DualAveraging.start(eps, self.target_accept)
        elif self.t == self._check_at and self._previous is not None:
            self._undo_collapsed()
        elif self.t == self._recheck_at:
            self._watch_tiny(self._recheck)
        if self._restart is not None:
            self._restarted_window(state)
        self.t += 1

    def _undo_collapsed(self) -> None:
        old_mass, old_eps = self._previous  # type: ignore[misc]
        new_eps = self.da.final_step_size
        log_ratio = (np.log(new_eps)[:, None] + 0.5 * np.log(self.inv_mass)) - (
            np.log(old_eps)[:, None] + 0.5 * np.log(old_mass)
        )
        bad = np.median(log_ratio, axis=1) < np.log(COLLAPSE)
        if bad.any():
            self.inv_mass = np.where(bad[:, None], old_mass, self.inv_mass)
            self.da.restart(bad, old_eps)
            self.fallbacks += bad
            # The metric restored is judged in turn: it came from a window
            # that may have drifted too, and it can leave the step tiny until
            # the next update (on the compiled Gaussian mixture at seed 2, 80
            # iterations at 25 to 55 steps each).
            self._recheck, self._recheck_at = bad, self.t + CHECK_AFTER
        self._watch_tiny(~bad)

    def _watch_tiny(self, chains: np.ndarray) -> None:
        tiny = chains & (self.da.final_step_size < TINY_STEP)
        end = self.t + RESTART_WINDOW
        if tiny.any() and self._restart is None and end < self.warmup - (self.warmup - self.ends[-1] - 1) // 2:
            self._restart = (tiny, Welford(self.inv_mass.shape), end)

    def _restarted_window(self, state: Any) -> None:
        chains, window, end = self._restart  # type: ignore[misc]
        window.add(state.position)
        if self.t < end:
            return
        self._restart = None
        fresh = window.regularized_variance()
        self.inv_mass = np.where(chains[:, None], fresh, self.inv_mass)
        eps = find_reasonable_step_size(self.rng, state, self.target, self.da.step_size, self.inv_mass, mask=chains)
        self.da.restart(chains, eps)
        self.fallbacks += chains
        self._refit |= chains

    def final(self) -> dict[str, Any]:
        return {**self.fixed, "step_size": self.da.final_step_size, "inv_mass": self.inv_mass}

    def quiet(self) -> tuple[int, LoopAdaptation]:
        """The next iterations whose update is only dual averaging and window sums, and their adaptation state.

        Until the next metric update, check, restarted window's end, the
        start of the metric window or the end of warm-up, :meth:`update` only
        steps dual averaging and adds the draw to the window(s) open, and
        :meth:`params` keeps its caps: a compiled loop of transitions (a JAX
        target's, ``CompiledPaths.hmc_loop``) may run those iterations and
        their updates at once, then hand them back with :meth:`absorb`.
        Returns ``(n, adaptation)``, ``n = 0`` when the next iteration is not such.
        """
        stops = [self.warmup, *(e for e in self.ends if e >= self.t)]
        stops += [t for t in (self._check_at, self._recheck_at, self.start) if t >= self.t]
        if self._restart is not None:
            stops.append(self._restart[2])
        window = self.welford if self.ends and self.start <= self.t <= self.ends[-1] else None
        restart = None if self._restart is None else self._restart[1]
        da = self.da
        adaptation = LoopAdaptation(
            da.mu, da.log_step, da.log_step_bar, da.h_bar, da.counter, da.target_accept, da.gamma, da.t0, da.kappa,
            None if window is None else (window.n, window.mean, window.m2),
            None if restart is None else (restart.n, restart.mean, restart.m2),
        )  # fmt: skip
        return max(min(stops) - self.t, 0), adaptation

    def absorb(self, n: int, adaptation: LoopAdaptation) -> None:
        """Take back the state after ``n`` iterations run by a loop from :meth:`quiet`'s ``adaptation``."""
        a = adaptation
        self.da.log_step, self.da.log_step_bar, self.da.h_bar, self.da.counter = (
            a.log_step, a.log_step_bar, a.h_bar, a.counter)
        for sums, welford in ((a.window, self.welford), (a.restart, None if self._restart is None else
                                                         self._restart[1])):  # fmt: skip
            if sums is not None and welford is not None:
                welford.n, welford.mean, welford.m2 = sums
        self.t += n
