"""Samplers built on an independent proposal: rejection sampling and importance resampling (i-SIR).

Both draw from one proposal ``q`` per chain, the multivariate Student-t of
:mod:`mcmc.core.samplers.mh` (4 degrees of freedom, heavier-tailed than most
posteriors, so the ratio ``pi / q`` stays bounded), with a location and a
diagonal scale learnt in warm-up (:class:`ProposalAdapter`). After warm-up
the proposal is fixed.

* **Rejection sampling** (von Neumann 1951): draw ``x ~ q`` and ``u ~ U(0, 1)``
  until ``u M q(x) < pi~(x)``; the accepted ``x`` are independent draws from
  ``pi`` exactly, provided the envelope holds, ``pi~ <= M q`` everywhere. No
  general method proves a bound for an arbitrary density, so ``log M`` is
  estimated at the end of warm-up: the largest ``log pi~ - log q`` over the
  chain's warm-up draws of the second half and :data:`BOUND_PROPOSALS` fresh
  proposals, plus :data:`BOUND_MARGIN`. Every proposal whose ratio still
  exceeds ``M`` is counted (statistic ``envelope_exceeded``): where that
  happens the draws follow ``min(pi~, M q)`` instead of ``pi``, and the
  command-line summary says so. The statistic ``n_evals`` counts the
  proposals (density evaluations) a draw took; the overall acceptance rate is
  ``1 / mean(n_evals)``.
* **Iterated sampling importance resampling**, i-SIR (Andrieu, Lee & Vihola
  2018, "Uniform ergodicity of the iterated conditional SMC and geometric
  ergodicity of particle Gibbs samplers", Bernoulli 24(2), section 4; the
  multiple-try independence sampler): each iteration draws ``N - 1`` fresh
  proposals, adds the current state, weights all ``N`` by importance weights
  ``w_i = pi~(x_i) / q(x_i)`` and moves to one of them with probability
  ``w_i / sum_j w_j``. That is importance sampling with a resampling step,
  and it leaves ``pi`` invariant for *any* proposal (a Gibbs step on an
  extended target), so no envelope is needed. The statistic ``ess_weights``
  is the Kish effective sample size of the ``N`` weights, ``(sum w)^2 /
  sum w^2``, as a fraction of ``N``: near 1 the proposal matches the target
  and draws are nearly independent; near ``1 / N`` the chain mostly stays put.

Randomness: every chain draws its proposals and uniforms from its own
stream, in shapes that depend only on its own history, so chain ``i`` depends
only on the seed and ``i``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import McmcError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import DensityState as State
from mcmc.core.samplers import density_state
from mcmc.core.samplers import slice as slice_sampler
from mcmc.core.samplers.adapt import Welford
from mcmc.core.samplers.mh import DF, student_t_logpdf
from mcmc.core.targets.base import Target

#: The proposal's scale is the warm-up draws' sd times this (wider than the target: a ratio ``pi / q`` that
#: stays small in the tails matters more than a high acceptance rate).
INFLATE = 1.5
#: Fresh proposals per chain, beside the warm-up draws, over which the rejection envelope is maximised.
BOUND_PROPOSALS = 400
#: Added to the largest log ratio seen: ``M`` is 1.2 times the largest ratio found.
BOUND_MARGIN = float(np.log(1.2))
#: Proposals a rejection draw may take before the run stops (an acceptance rate below 1 / this).
MAX_PROPOSALS = 10_000
#: Proposals per i-SIR iteration, the current state included.
DEFAULT_PARTICLES = 16

init = density_state


def _draw(rng: ChainRandom, loc: np.ndarray, scale: np.ndarray, n: int, mask: np.ndarray | None = None) -> np.ndarray:
    """``n`` multivariate-t proposals per chain (or per chain of ``mask``): ``(chains, n, dim)``."""
    d = loc.shape[1]
    z = rng.normal((n, d), mask=mask)
    w = 2.0 * rng.exponential((n, 2), mask=mask).sum(axis=2)  # chi2(4) = 2 (E1 + E2)
    rows = slice(None) if mask is None else mask
    return loc[rows, None, :] + scale[rows, None, :] * z / np.sqrt(w / DF)[:, :, None]


# -- rejection sampling ---------------------------------------------------------


class RejectionInfo(NamedTuple):
    n_evals: np.ndarray  # (chains,) proposals (density evaluations) this draw took
    envelope_exceeded: np.ndarray  # (chains,) proposals whose ratio pi~ / q exceeded M


def rejection_step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    loc: Any = 0.0,
    scale: Any = 1.0,
    log_bound: Any = 0.0,
    slice_width: Any = None,
) -> tuple[State, RejectionInfo]:
    """One independent draw per chain by rejection from the t proposal.

    Parameters
    ----------
    loc, scale
        The proposal's location and diagonal scale: scalars, ``(dim,)`` or ``(chains, dim)``.
    log_bound
        ``log M`` per chain: a proposal is accepted with probability ``pi~(x) / (M q(x))``.
    slice_width
        Warm-up only: a coordinate-wise slice sampling sweep with these widths instead.

    Raises
    ------
    McmcError
        A chain accepted none of :data:`MAX_PROPOSALS` proposals.
    """
    if slice_width is not None:
        moved, info = slice_sampler.step(rng, state, target, width=slice_width)
        return moved, RejectionInfo(info.n_evals, np.zeros_like(info.n_evals))
    n, d = state.position.shape
    loc = np.broadcast_to(np.asarray(loc, dtype=float), (n, d))
    scale = np.broadcast_to(np.asarray(scale, dtype=float), (n, d))
    bound = np.broadcast_to(np.asarray(log_bound, dtype=float), (n,))
    x, lp = state.position.copy(), state.log_density.copy()
    evals = np.zeros(n, dtype=np.int64)
    exceeded = np.zeros(n, dtype=np.int64)
    looking = np.arange(n)
    for _ in range(MAX_PROPOSALS):
        cand = _draw(rng, loc, scale, 1, looking)[:, 0]
        cand_lp = np.asarray(target.log_density(cand), dtype=float)
        log_ratio = cand_lp - student_t_logpdf(cand, loc[looking], scale[looking]) - bound[looking]
        evals[looking] += 1
        exceeded[looking] += log_ratio > 0.0
        hit = rng.log_uniform(mask=looking) < np.where(np.isnan(log_ratio), -np.inf, log_ratio)
        done = looking[hit]
        x[done], lp[done] = cand[hit], cand_lp[hit]
        looking = looking[~hit]
        if not looking.size:
            return State(x, lp), RejectionInfo(evals, exceeded)
    raise McmcError(
        f"rejection sampling: chain {int(looking[0])} accepted none of {MAX_PROPOSALS} proposals (the envelope "
        "is far too loose for this target); use another sampler"
    )


class ProposalAdapter:
    """Warm-up: slice sampling, then the proposal (and for rejection the envelope) from its draws.

    Coordinate-wise slice sampling (:mod:`mcmc.core.samplers.slice`, whose
    widths adapt to each coordinate's scale) runs all of warm-up; the draws of
    its second half give the proposal's location (their mean) and scale
    (:data:`INFLATE` times their sd; an sd that came out zero keeps the initial
    scale). With ``bound=True`` it also sets the rejection envelope ``log M``
    at the end (see the module docstring), which costs
    :data:`BOUND_PROPOSALS` density evaluations per chain.
    """

    def __init__(
        self, warmup: int, state: State, target: Target, rng: ChainRandom, loc: Any, scale: Any, bound: bool
    ) -> None:
        n, d = state.position.shape
        self.loc = np.broadcast_to(np.asarray(loc, dtype=float), (n, d)).copy()
        self.scale = np.broadcast_to(np.asarray(scale, dtype=float), (n, d)).copy()
        self.warmup, self.t = warmup, 0
        self.target, self.rng, self.bound = target, rng, bound
        self.slice = slice_sampler.make_adapter(warmup, state, target, rng)
        self.kept: list[State] = []  # second-half draws, for the envelope
        self.moments = Welford((n, d))

    def params(self) -> dict[str, Any]:
        return {"slice_width": self.slice.params()["width"]}

    def update(self, state: State, info: Any) -> None:
        self.slice.update(state, info)
        self.t += 1
        if self.t > self.warmup // 2:
            self.moments.add(state.position)
            if self.bound:
                self.kept.append(state)

    def final(self) -> dict[str, Any]:
        m = self.moments
        if m.n >= 2:
            sd = m.sd()
            moved = sd > 1e-12 * (1.0 + np.abs(m.mean))
            self.loc = m.mean.copy()
            self.scale = np.where(moved, INFLATE * sd, self.scale)
        params: dict[str, Any] = {"loc": self.loc, "scale": self.scale}
        if self.bound:
            params["log_bound"] = self._log_bound()
        return params

    def _log_bound(self) -> np.ndarray:
        """``log M`` per chain: the largest ``log pi~ - log q`` seen, plus :data:`BOUND_MARGIN`."""
        n, d = self.loc.shape
        best = np.full(n, -np.inf)
        for s in self.kept:
            best = np.fmax(best, s.log_density - student_t_logpdf(s.position, self.loc, self.scale))
        cand = _draw(self.rng, self.loc, self.scale, BOUND_PROPOSALS)  # (chains, B, dim)
        flat = cand.reshape(n * BOUND_PROPOSALS, d)
        lp = np.asarray(self.target.log_density(flat), dtype=float).reshape(n, BOUND_PROPOSALS)
        loc, scale = (np.repeat(a, BOUND_PROPOSALS, axis=0) for a in (self.loc, self.scale))
        log_q = student_t_logpdf(flat, loc, scale).reshape(n, BOUND_PROPOSALS)
        best = np.fmax(best, np.nanmax(np.where(np.isfinite(lp), lp - log_q, -np.inf), axis=1))
        return best + BOUND_MARGIN


# -- i-SIR -------------------------------------------------------------------


class IsirInfo(NamedTuple):
    n_evals: np.ndarray  # (chains,) density evaluations (fresh proposals) this iteration
    ess_weights: np.ndarray  # (chains,) Kish ESS of the N importance weights, as a fraction of N


def _weights(log_w: np.ndarray) -> np.ndarray:
    """Importance weights ``(chains, N)`` from their logs, scaled so each chain's largest is 1 (NaN: weight 0).

    The current state's weight is finite, so every chain's largest is.
    """
    log_w = np.where(np.isnan(log_w), -np.inf, log_w)
    return np.exp(log_w - log_w.max(axis=1, keepdims=True))


def isir_step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    loc: Any = 0.0,
    scale: Any = 1.0,
    particles: int = DEFAULT_PARTICLES,
    slice_width: Any = None,
) -> tuple[State, IsirInfo]:
    """One i-SIR transition per chain: ``particles - 1`` proposals plus the current state, one kept by weight.

    Parameters
    ----------
    loc, scale
        The proposal's location and diagonal scale: scalars, ``(dim,)`` or ``(chains, dim)``.
    particles
        ``N >= 2``, the size of the weighted set.
    slice_width
        Warm-up only: a coordinate-wise slice sampling sweep with these widths instead.
    """
    if slice_width is not None:
        moved, info = slice_sampler.step(rng, state, target, width=slice_width)
        return moved, IsirInfo(info.n_evals, np.full(info.n_evals.shape, np.nan))
    n, d = state.position.shape
    k = int(particles)
    if k < 2:
        raise UsageError(f"i-SIR needs at least 2 particles, got {particles}")
    loc = np.broadcast_to(np.asarray(loc, dtype=float), (n, d))
    scale = np.broadcast_to(np.asarray(scale, dtype=float), (n, d))
    fresh = _draw(rng, loc, scale, k - 1)  # (chains, k - 1, dim)
    points = np.concatenate([state.position[:, None, :], fresh], axis=1)  # the current state first
    flat = fresh.reshape(n * (k - 1), d)
    lp = np.empty((n, k))
    lp[:, 0] = state.log_density
    lp[:, 1:] = np.asarray(target.log_density(flat), dtype=float).reshape(n, k - 1)
    log_q = student_t_logpdf(points.reshape(n * k, d), np.repeat(loc, k, axis=0), np.repeat(scale, k, axis=0))
    w = _weights(lp - log_q.reshape(n, k))
    cum = np.cumsum(w, axis=1)
    u = rng.uniform() * cum[:, -1]
    pick = np.minimum((cum <= u[:, None]).sum(axis=1), k - 1)
    rows = np.arange(n)
    ess = cum[:, -1] ** 2 / (w * w).sum(axis=1) / k
    return State(points[rows, pick], lp[rows, pick]), IsirInfo(np.full(n, k - 1, dtype=np.int64), ess)


# -- the two samplers ---------------------------------------------------------------


class _Sampler:
    """A sampler object (``NAME``, ``State``, ``Info``, ``init``, ``step``, ``make_adapter``)."""

    State = State

    def __init__(self, name: str, info: type, step: Any, bound: bool) -> None:
        self.NAME, self.Info, self.step, self._bound = name, info, step, bound
        self.init = init

    def make_adapter(
        self, warmup: int, state: State, target: Target, rng: ChainRandom, *, loc: Any = 0.0, scale: Any = 1.0,
        **fixed: Any,
    ) -> Any:  # fmt: skip
        """Warm-up learns the proposal (:class:`ProposalAdapter`); other keywords pass through unchanged."""
        adapter = ProposalAdapter(warmup, state, target, rng, loc, scale, self._bound)
        return _WithFixed(adapter, fixed)

    def __repr__(self) -> str:
        return f"<sampler {self.NAME}>"


class _WithFixed:
    """An adapter that adds fixed keyword parameters (``particles``) to the sampling phase."""

    def __init__(self, adapter: ProposalAdapter, fixed: dict[str, Any]) -> None:
        self.adapter, self.fixed = adapter, fixed

    def params(self) -> dict[str, Any]:
        return self.adapter.params()

    def update(self, state: State, info: Any) -> None:
        self.adapter.update(state, info)

    def final(self) -> dict[str, Any]:
        return {**self.adapter.final(), **self.fixed}


rejection = _Sampler("rejection", RejectionInfo, rejection_step, bound=True)
isir = _Sampler("isir", IsirInfo, isir_step, bound=False)
