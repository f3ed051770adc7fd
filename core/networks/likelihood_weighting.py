"""Likelihood weighting: importance sampling of a Bayesian network with the evidence clamped.

Fung & Chang (1990), "Weighing and integrating evidence for stochastic
simulation in Bayesian networks"; Shachter & Peot (1990). Each draw samples
the unobserved nodes in topological order from their CPTs, the observed
nodes set to their evidence, and carries the weight

    w = prod_{i observed} p(e_i | sampled parents of i),

the likelihood of the evidence given the draw. The proposal is the prior
with the evidence clamped, so ``w`` is ``p(x, e) / q(x)`` and the
self-normalised estimate ``sum_n w_n f(x_n) / sum_n w_n`` converges to
``E[f(X) | e]``. Draws are independent; their quality is measured by Kish's
effective sample size of the weights, ``(sum w)^2 / sum w^2`` (Kish 1965),
and the error of an estimate by the delta method
(:func:`mcmc.core.weights.weighted_mean`).

Randomness: ``n_nodes`` uniforms per draw, ``(chains, draws, n_nodes)`` from
each chain's own stream (the observed nodes' uniforms are drawn and unused,
keeping the shape fixed).

Statistics: ``log_weight`` (``log w``, ``-inf`` for a draw incompatible
with the evidence through a zero in a CPT) and ``lp`` (``log p(x, e)``).

The protocol of :mod:`mcmc.core.networks`: draws are independent
(``MARKOV = False``: no warm-up, no thinning, no start); the state is the
last draw; ``draws`` calls of :func:`step` give the bytes of one
``sample(draws)`` (each draw reads the next ``n_nodes`` uniforms of its chain).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.networks.tables import ForwardPlan, forward_plan, forward_sample
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.weights import kish_ess

DECLARATION = registry.LIKELIHOOD_WEIGHTING
NAME = DECLARATION.name
MARKOV = False  # independent draws: no warm-up, thinning or start
CHUNK = 4096  # draws per chain per compiled call

build = forward_plan


class State(NamedTuple):
    position: np.ndarray | None  # (chains, n_nodes) the last draw; None before the first
    log_density: np.ndarray | None  # (chains,) its log p(x, e)


class Info(NamedTuple):
    log_weight: np.ndarray  # (chains,) log w of the draw


def init(position: np.ndarray | None, plan: ForwardPlan) -> State:
    """The state before any draw (independent draws need no start: ``position`` is kept as given)."""
    if position is None:
        return State(None, None)
    codes = np.array(position, dtype=np.int64, copy=True)
    return State(codes, plan.tables.network.log_joint(codes))


def sample(
    rng: ChainRandom, state: State, plan: ForwardPlan, draws: int, thin: int = 1
) -> tuple[State, np.ndarray, dict[str, np.ndarray]]:
    """``draws`` weighted draws for every chain of ``rng`` (``thin`` must be 1: the draws are independent).

    Returns
    -------
    state
        The last draw.
    codes
        ``(chains, draws, n_unobserved)`` state codes of the unobserved nodes.
    stats
        ``log_weight`` and ``lp``, each ``(chains, draws)``.
    """
    if thin != 1:
        raise ValueError("independent draws are not thinned")
    tables = plan.tables
    chains, n = rng.chains, tables.network.n_nodes
    out = np.empty((chains, draws, tables.n_unobserved), dtype=tables.code_dtype)
    log_weight = np.empty((chains, draws))
    lp = np.empty((chains, draws))
    for start in range(0, draws, CHUNK):
        k = min(CHUNK, draws - start)
        u = rng.uniform((k, n))
        codes, lw, _ = forward_sample(tables, u.reshape(-1, n), weighted=True)
        codes = codes.reshape(chains, k, n)
        out[:, start : start + k] = codes[:, :, tables.unobserved]
        log_weight[:, start : start + k] = lw.reshape(chains, k)
        lp[:, start : start + k] = tables.network.log_joint(codes)
        last = State(codes[:, -1].copy(), lp[:, start + k - 1].copy())
    return (last if draws else state), out, {"log_weight": log_weight, "lp": lp}


def step(rng: ChainRandom, state: State, plan: ForwardPlan) -> tuple[State, Info]:
    """One weighted draw for every chain."""
    new, _, stats = sample(rng, state, plan, 1)
    return new, Info(stats["log_weight"][:, 0])


def run_attrs(plan: ForwardPlan, stats: dict[str, np.ndarray]) -> dict[str, Any]:
    """``weighted``, and Kish's ESS of the weights per chain (``ess_weights``) and pooled (``ess_weights_total``)."""
    lw = stats["log_weight"]
    return {"ess_weights": kish_ess(lw, axis=1).tolist(), "ess_weights_total": float(kish_ess(lw)), "weighted": True}

