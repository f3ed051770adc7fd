"""Iterated sampling importance resampling, i-SIR (Andrieu, Lee & Vihola 2018), vectorized over chains.

Andrieu, Lee & Vihola (2018), "Uniform ergodicity of the iterated conditional
SMC and geometric ergodicity of particle Gibbs samplers", Bernoulli 24(2),
section 4; the multiple-try independence sampler. Each iteration draws
``N - 1`` fresh proposals from ``q``, adds the current state, weights all
``N`` by importance weights ``w_i = pi~(x_i) / q(x_i)`` and moves to one of
them with probability ``w_i / sum_j w_j``. That is importance sampling with a
resampling step, and it leaves ``pi`` invariant for *any* proposal (a Gibbs
step on an extended target), so no envelope is needed.

``q`` is the multivariate Student-t of :mod:`mcmc.core.samplers.proposals`,
one per chain, whose location and scale warm-up learns from slice sampling's
draws (:class:`~mcmc.core.samplers.proposals.ProposalAdapter`); after
warm-up it is fixed.

The statistic ``ess_weights`` is the Kish effective sample size of the ``N``
weights, ``(sum w)^2 / sum w^2``, as a fraction of ``N``: near 1 the proposal
matches the target and draws are nearly independent; near ``1 / N`` the
chain mostly stays put. Every chain draws from its own stream, in shapes that
depend only on ``N``, so chain ``i`` depends only on the seed and ``i``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.base import DensityState, density_state
from mcmc.core.samplers.proposals import ProposalAdapter, fixed_proposal, student_t_draw, student_t_logpdf
from mcmc.core.targets.base import Target

DECLARATION = registry.ISIR
NAME = DECLARATION.name
#: Proposals per i-SIR iteration, the current state included.
DEFAULT_PARTICLES = 16

State = DensityState  # position and log density


class Info(NamedTuple):
    n_evals: np.ndarray  # (chains,) density evaluations (fresh proposals) this iteration
    ess_weights: np.ndarray  # (chains,) Kish ESS of the N importance weights, as a fraction of N


init = density_state


def _weights(log_w: np.ndarray) -> np.ndarray:
    """Importance weights ``(chains, N)`` from their logs, scaled so each chain's largest is 1 (NaN: weight 0).

    The current state's weight is finite, so every chain's largest is.
    """
    log_w = np.where(np.isnan(log_w), -np.inf, log_w)
    return np.exp(log_w - log_w.max(axis=1, keepdims=True))


def step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    loc: Any = 0.0,
    scale: Any = 1.0,
    particles: int = DEFAULT_PARTICLES,
) -> tuple[State, Info]:
    """One i-SIR transition per chain: ``particles - 1`` proposals plus the current state, one kept by weight.

    Parameters
    ----------
    loc, scale
        The proposal's location and diagonal scale: scalars, ``(dim,)`` or ``(chains, dim)``.
    particles
        ``N >= 2``, the size of the weighted set.
    """
    n, d = state.position.shape
    k = int(particles)
    if k < 2:
        raise UsageError(f"i-SIR needs at least 2 particles, got {particles}")
    loc, scale = fixed_proposal(state, loc, scale)
    fresh = student_t_draw(rng, loc, scale, k - 1)  # (chains, k - 1, dim)
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
    return State(points[rows, pick], lp[rows, pick]), Info(np.full(n, k - 1, dtype=np.int64), ess)


def make_adapter(
    warmup: int, state: State, target: Target, rng: ChainRandom, *, loc: Any = 0.0, scale: Any = 1.0, **fixed: Any
) -> ProposalAdapter:
    """Slice sampling in warm-up, then the proposal from its draws; ``particles`` passes through unchanged."""
    return ProposalAdapter(warmup, state, loc, scale, fixed)
