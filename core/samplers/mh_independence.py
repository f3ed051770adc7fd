"""Independence Metropolis-Hastings (Tierney 1994), vectorized over chains.

Tierney (1994), "Markov chains for exploring posterior distributions", Ann.
Statist. 22(4), section 2.3.3: the proposal ``x' ~ q`` does not depend on
``x``; here ``q`` is the multivariate Student-t of
:mod:`mcmc.core.samplers.proposals` (``df = 4``) with per-chain location
``loc (chains, dim)`` and diagonal scale ``scale (chains, dim)``. Log
acceptance ratio (Hastings 1970) ``log pi(x') - log pi(x) + log q(x) - log q(x')``.

Warm-up (:class:`IndependenceAdapter`) runs this kernel and fits ``loc`` and
``scale`` to each chain's own history (Welford mean and variance, regularised
toward the starting guess as Stan regularises its mass matrix; restarted at
mid-warm-up so the transient is forgotten).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.adapt import Adapter, Welford
from mcmc.core.samplers.base import DensityState, accept_reject, density_state
from mcmc.core.samplers.proposals import fixed_proposal, student_t_draw, student_t_logpdf
from mcmc.core.targets.base import Target

DECLARATION = registry.MH_INDEPENDENCE
NAME = DECLARATION.name

State = DensityState  # position and log density


class Info(NamedTuple):
    acceptance_rate: np.ndarray  # (chains,) min(1, exp(log ratio))
    accepted: np.ndarray  # (chains,) bool


init = density_state


def step(rng: ChainRandom, state: State, target: Target, *, loc: Any = 0.0, scale: Any = 1.0) -> tuple[State, Info]:
    """One independence Metropolis-Hastings transition for every chain.

    Parameters
    ----------
    loc, scale
        Location and diagonal scale of the t proposal: scalars, ``(dim,)`` or
        ``(chains, dim)``.
    """
    x = state.position
    loc, scale = fixed_proposal(state, loc, scale)
    proposal = student_t_draw(rng, loc, scale)[:, 0]
    lp = np.asarray(target.log_density(proposal), dtype=float)
    log_ratio = lp - state.log_density + student_t_logpdf(x, loc, scale) - student_t_logpdf(proposal, loc, scale)
    new, accepted, rate = accept_reject(rng, log_ratio, State(proposal, lp), state)
    return new, Info(rate, accepted)


class IndependenceAdapter(Adapter):
    """Fits the proposal's location and scale to each chain's warm-up history.

    ``scale = inflate * sd`` with ``sd^2 = (n var + 5 scale0^2) / (n + 5)``
    (the running variance shrunk toward the initial scale, as Stan shrinks its
    mass-matrix estimate); the estimator restarts at mid-warm-up.
    """

    def __init__(self, warmup: int, state: State, loc: Any, scale: Any, inflate: float = 1.5) -> None:
        shape = state.position.shape
        self.warmup, self.inflate, self.t = warmup, inflate, 0
        self.loc = np.broadcast_to(np.asarray(state.position if loc is None else loc, dtype=float), shape).copy()
        self.scale = np.broadcast_to(np.asarray(scale, dtype=float), shape).copy()
        self._reset()

    def _reset(self) -> None:
        self.moments = Welford(self.loc.shape)
        self.prior_var = (self.scale / self.inflate) ** 2

    def params(self) -> dict[str, Any]:
        return {"loc": self.loc, "scale": self.scale}

    def update(self, state: State, info: Info) -> None:
        m = self.moments
        m.add(state.position)
        self.t += 1
        var = m.m2 / m.n
        shrunk = (m.n * var + 5.0 * self.prior_var) / (m.n + 5.0)
        self.loc = m.mean.copy()
        self.scale = self.inflate * np.sqrt(shrunk)
        if self.t == self.warmup // 2:
            self._reset()

    def final(self) -> dict[str, Any]:
        return self.params()


def make_adapter(
    warmup: int, state: State, target: Target, rng: ChainRandom, *, loc: Any = None, scale: Any = None
) -> IndependenceAdapter:
    """The proposal fitted to each chain's warm-up history (see :class:`IndependenceAdapter`); the
    default start is ``loc`` at the chain's starting point and ``scale = 2``."""
    return IndependenceAdapter(warmup, state, loc, 2.0 if scale is None else scale)
