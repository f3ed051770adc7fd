"""What most samplers build on: the density-only state, the Metropolis accept/reject, the per-chain select.

:class:`DensityState` and :func:`density_state` are the state and ``init``
of every sampler that needs only the position and its log density (rwm,
mh-independence, mh-lognormal, slice, elliptical slice, rejection, i-SIR,
Gibbs, Swendsen-Wang, markov). :func:`accept_reject` is the one Metropolis
accept/reject step the Metropolis-type kernels share; :func:`select` keeps,
chain by chain, one of two states. :class:`Iterations` is what HMC's and
NUTS's ``run_iterations`` return: many transitions run in one compiled loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

if TYPE_CHECKING:
    from mcmc.core.random import ChainRandom
    from mcmc.core.targets.base import Target

S = TypeVar("S")


class DensityState(NamedTuple):
    """A sampler state of the position and its log density only."""

    position: np.ndarray  # (chains, dim)
    log_density: np.ndarray  # (chains,)


def density_state(position: np.ndarray, target: Target) -> DensityState:
    """:class:`DensityState` at ``position (chains, dim)``: the ``init`` of the samplers that use it."""
    position = np.asarray(position, dtype=float)
    return DensityState(position, np.asarray(target.log_density(position), dtype=float))


def accept_reject(rng: ChainRandom, log_ratio: np.ndarray, proposal: S, current: S) -> tuple[S, np.ndarray, np.ndarray]:
    """Metropolis accept/reject for every chain at once.

    Parameters
    ----------
    rng
        Per-chain random streams (one uniform per chain is consumed).
    log_ratio
        ``(chains,)`` log acceptance ratio, Hastings term included. NaN counts
        as ``-inf`` (a proposal whose density cannot be evaluated is rejected).
    proposal, current
        States (NamedTuples of arrays with a leading chain axis).

    Returns
    -------
    state
        Field by field ``proposal`` where accepted, else ``current``.
    accepted
        ``(chains,)`` bool.
    acceptance_rate
        ``(chains,)`` ``min(1, exp(log_ratio))``: the Rao-Blackwellised
        acceptance probability, the statistic adaptation should track.
    """
    log_ratio = np.where(np.isnan(log_ratio), -np.inf, log_ratio)
    accepted = rng.log_uniform() < log_ratio
    with np.errstate(over="ignore"):
        rate = np.exp(np.minimum(log_ratio, 0.0))
    return select(accepted, proposal, current), accepted, rate


class Iterations(NamedTuple):
    """Many transitions run at once (``run_iterations`` of HMC and NUTS, on a target with compiled loops).

    ``state``: after the last; ``info``: the sampler's ``Info``, each field
    ``(count, chains)``; ``draws``: the position after each, ``(count,
    chains, dim)``; ``adaptation``: the warm-up state after the last (what
    the adapter's ``absorb`` takes back), or None when sampling.
    """

    state: Any
    info: Any
    draws: np.ndarray
    adaptation: Any


def select(mask: np.ndarray, new: S, old: S) -> S:
    """``new`` where ``mask (chains,)`` is true, ``old`` elsewhere, for every field of a NamedTuple."""
    fields = []
    for a, b in zip(new, old, strict=True):  # type: ignore[call-overload]
        if a is None:
            fields.append(b)
            continue
        a = np.asarray(a)
        m = mask.reshape(mask.shape + (1,) * (a.ndim - 1))
        fields.append(np.where(m, a, b))
    return type(old)(*fields)  # type: ignore[call-arg]
