"""Metropolis-Hastings on finitely many states with an unnormalised target, vectorized over chains.

The target is a law ``pi_j ∝ b_j`` on states ``0 .. n-1`` known by its
weights only (:class:`~mcmc.core.targets.protocols.FiniteStates`, a weights
file ``weights.csv``, :mod:`mcmc.core.targets.finite`). One iteration, for
every chain at once (Metropolis et al. 1953; Hastings 1970; Robert & Casella
2004, *Monte Carlo Statistical Methods*, 2nd ed., algorithm A.24):

1. propose ``j ~ Q[i, :]`` by inverse CDF on one uniform from the chain's own
   stream (``Q`` the proposal matrix, ``-P mh:proposal-matrix=Q.csv``;
   default uniform over the other states);
2. accept with probability ``min(1, b_j Q_ji / (b_i Q_ij))``, one more
   uniform (:func:`~mcmc.core.samplers.base.accept_reject`), else stay.

Only ratios of weights enter, so the normaliser ``sum_k b_k`` is never
needed. The chain's transition matrix is
:func:`~mcmc.core.targets.finite.mh_transition_matrix` (:func:`transition_matrix`
builds it for a target and a proposal), which satisfies detailed balance with
``b / sum(b)``; the run's report analyses it exactly and sets it beside the
simulated frequencies.

Why the proposal matrix is its own setting, ``proposal-matrix``, and not
two-stage's ``proposal``: a setting means one thing for every sampler that
takes it (one help, one type, one set of values, checked by
``tests/test_registry.py``), and two-stage's is a word (``rw`` or
``lognormal``) where this is a file to read.

Statistics: ``acceptance_rate`` (the probability ``min(1, ratio)``) and
``accepted``. No warm-up adaptation: there is nothing to tune; warm-up
iterations are burn-in.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from mcmc.core.errors import InputError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.base import DensityState, accept_reject, density_state
from mcmc.core.targets.base import Target
from mcmc.core.targets.finite import mh_transition_matrix, read_proposal, uniform_proposal
from mcmc.core.targets.markov_chain import MAX_STATES, TransitionMatrix
from mcmc.core.targets.protocols import FiniteStates, require

DECLARATION = registry.MH
NAME = DECLARATION.name
FINITE_STATES = True  # the driver runs only this sampler on a law on finitely many states

State = DensityState  # state codes (chains, 1) as floats, and log b of them


class Info(NamedTuple):
    acceptance_rate: np.ndarray  # (chains,) min(1, b_j Q_ji / (b_i Q_ij))
    accepted: np.ndarray  # (chains,) bool


def finite_states(target: Target) -> FiniteStates:
    """``target`` as :class:`~mcmc.core.targets.protocols.FiniteStates` (``UsageError`` if it is not)."""
    return require(target, FiniteStates, NAME, "a law on finitely many states (--target weights.csv)")


def init(position: np.ndarray, target: Target) -> State:
    """State at codes ``position (chains, 1)``.

    Raises
    ------
    UsageError
        ``target`` is not a law on finitely many states.
    """
    finite_states(target)
    return density_state(position, target)


@lru_cache(maxsize=8)
def _proposal(path: str | None, states: tuple[str, ...]) -> np.ndarray:
    """The proposal matrix (read once per file and process), read-only."""
    q = uniform_proposal(len(states)) if path is None else read_proposal(path, states)
    q.setflags(write=False)
    return q


def proposal(target: Target, proposal_matrix: str | None = None) -> np.ndarray:
    """``Q``, ``(n, n)``: the file ``proposal_matrix`` in the target's state order, or uniform over the other states.

    Raises
    ------
    InputError
        A proposal file that is not a transition matrix of the target's states;
        a target of more than :data:`~mcmc.core.targets.markov_chain.MAX_STATES`
        states (naming its file).
    """
    states = tuple(finite_states(target).states)
    if len(states) > MAX_STATES:
        # Q and P are n x n (60,000 states asked for 27 GiB), and the run's exact analysis costs n^3.
        raise InputError(
            getattr(target, "name", None), f"{len(states)} states: Metropolis-Hastings here works with the n x n "
            f"proposal and transition matrices and analyses its chain exactly (n^3 operations), for at most "
            f"{MAX_STATES} states",
        )
    return _proposal(proposal_matrix, states)


def prepare(target: Target, *, proposal_matrix: str | None = None) -> None:
    """Read and check, before any work, what the settings name: the proposal file (cached for the run).

    Raises
    ------
    InputError
        As :func:`proposal`.
    """
    proposal(target, proposal_matrix)


def transition_matrix(target: Target, proposal_matrix: str | None = None) -> TransitionMatrix:
    """The transition matrix of this sampler on ``target`` with that proposal: what the run simulates.

    Returns
    -------
    TransitionMatrix
        ``P`` of :func:`~mcmc.core.targets.finite.mh_transition_matrix` with the target's state names.
    """
    fin = finite_states(target)
    with np.errstate(over="ignore"):
        b = np.exp(fin.log_weights - np.max(fin.log_weights))  # a rescaling of b: P is unchanged
    p = mh_transition_matrix(b, proposal(target, proposal_matrix))
    p.setflags(write=False)
    return TransitionMatrix(p, tuple(fin.states), getattr(target, "name", None))


def step(rng: ChainRandom, state: State, target: Target, *, proposal_matrix: str | None = None) -> tuple[State, Info]:
    """One Metropolis-Hastings transition on the states for every chain.

    Parameters
    ----------
    proposal_matrix
        A CSV file of the proposal matrix ``Q`` (rows ``q(. | i)``); ``None``:
        uniform over the other states.

    Raises
    ------
    UsageError
        ``target`` is not a law on finitely many states.
    InputError
        A bad proposal file.
    """
    log_b = finite_states(target).log_weights
    q = proposal(target, proposal_matrix)
    thresholds = np.cumsum(q, axis=1)[:, :-1]
    i = state.position[:, 0].astype(np.int64)
    u = rng.uniform(())
    j = np.sum(thresholds[i] <= u[:, None], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = log_b[j] + np.log(q[j, i]) - log_b[i] - np.log(q[i, j])
    position = j.astype(float)[:, None]
    proposed = State(position, log_b[j])
    new, accepted, rate = accept_reject(rng, log_ratio, proposed, state)
    return new, Info(rate, accepted)
