"""Metropolis-Hastings with asymmetric proposals (Hastings 1970), vectorized over chains.

Two kernels, each a sampler in the sense of :mod:`mcmc.core.samplers`
(``mh.independence`` and ``mh.lognormal``):

* **Independence proposal** (Tierney 1994): ``x' ~ q`` regardless of ``x``,
  with ``q`` a multivariate Student-t (``df = 4``, heavier-tailed than most
  posteriors, so the importance ratio ``pi / q`` stays bounded) with per-chain
  location ``loc (chains, dim)`` and diagonal scale ``scale (chains, dim)``.
  Log acceptance ratio ``log pi(x') - log pi(x) + log q(x) - log q(x')``.
  Warm-up fits ``loc`` and ``scale`` to each chain's own history (Welford
  mean and variance, regularised toward the starting guess as Stan regularises
  its mass matrix; restarted at mid-warm-up so the transient is forgotten).

* **Multiplicative log-normal proposal** for positive parameters:
  ``x' = x exp(s e)``, ``e ~ N(0, I)``. The proposal density is log-normal,
  ``q(x' | x) = prod_i phi((log x'_i - log x_i) / s) / (s x'_i)``, so
  ``q(x | x') / q(x' | x) = prod_i x'_i / x_i`` and the Hastings term is
  ``sum_i (log x'_i - log x_i)``. Without it the chain samples
  ``pi(x) / prod_i x_i`` instead of ``pi`` (``hastings=False`` builds exactly
  that wrong kernel, for the test that shows it). The scale ``s`` is tuned by
  Robbins-Monro as in random-walk Metropolis.
"""

from __future__ import annotations

from math import lgamma, log, pi
from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import DensityState, accept_reject, density_state
from mcmc.core.samplers.adapt import RobbinsMonroScale, Welford, default_scale, optimal_acceptance, per_chain_scale
from mcmc.core.targets.base import Target

DF = 4.0  # Student-t degrees of freedom of the independence proposal


State = DensityState  # position and log density


class Info(NamedTuple):
    acceptance_rate: np.ndarray  # (chains,) min(1, exp(log ratio))
    accepted: np.ndarray  # (chains,) bool
    step_size: np.ndarray | None  # (chains,) log-normal scale s; None for the independence kernel


init = density_state


# -- independence proposal -------------------------------------------------


def student_t_logpdf(x: np.ndarray, loc: np.ndarray, scale: np.ndarray, df: float = DF) -> np.ndarray:
    """Log density ``(chains,)`` of the multivariate t with diagonal scale at ``x (chains, dim)``."""
    d = x.shape[1]
    z = (x - loc) / scale
    const = lgamma((df + d) / 2.0) - lgamma(df / 2.0) - 0.5 * d * log(df * pi)
    return const - np.log(scale).sum(axis=1) - 0.5 * (df + d) * np.log1p((z**2).sum(axis=1) / df)


def student_t_draw(rng: ChainRandom, loc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """One multivariate-t (``df = 4``) draw per chain: ``loc + scale z / sqrt(w / df)``, ``w ~ chi2(4)``."""
    z = rng.normal((loc.shape[1],))
    w = 2.0 * rng.exponential((2,)).sum(axis=1)  # chi2(4) = 2 Gamma(2, 1) = 2 (E1 + E2)
    return loc + scale * z / np.sqrt(w / DF)[:, None]


def independence_step(
    rng: ChainRandom, state: State, target: Target, *, loc: Any = 0.0, scale: Any = 1.0
) -> tuple[State, Info]:
    """One independence Metropolis-Hastings transition for every chain.

    Parameters
    ----------
    loc, scale
        Location and diagonal scale of the t proposal: scalars, ``(dim,)`` or
        ``(chains, dim)``.
    """
    x = state.position
    loc = np.broadcast_to(np.asarray(loc, dtype=float), x.shape)
    scale = np.broadcast_to(np.asarray(scale, dtype=float), x.shape)
    proposal = student_t_draw(rng, loc, scale)
    lp = np.asarray(target.log_density(proposal), dtype=float)
    log_ratio = lp - state.log_density + student_t_logpdf(x, loc, scale) - student_t_logpdf(proposal, loc, scale)
    new, accepted, rate = accept_reject(rng, log_ratio, State(proposal, lp), state)
    return new, Info(rate, accepted, None)


class IndependenceAdapter:
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
        return {"loc": self.loc, "scale": self.scale}


# -- multiplicative log-normal proposal -------------------------------------


def lognormal_propose(rng: ChainRandom, x: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x' = x exp(s e)`` and the Hastings term ``log q(x|x') - log q(x'|x) = sum(log x' - log x)``.

    ``scale`` is ``(chains,)`` or per coordinate ``(chains, dim)``.
    """
    scale = np.asarray(scale, dtype=float)
    step = (scale[:, None] if scale.ndim == 1 else scale) * rng.normal((x.shape[1],))
    return x * np.exp(step), step.sum(axis=1)


def lognormal_step(
    rng: ChainRandom, state: State, target: Target, *, scale: Any = None, hastings: bool = True
) -> tuple[State, Info]:
    """One multiplicative log-normal Metropolis-Hastings transition for every chain.

    Parameters
    ----------
    scale
        ``s``, scalar or ``(chains,)``; default ``2.38 / sqrt(dim)``.
    hastings
        Include the Hastings term. ``False`` gives a kernel that targets
        ``pi(x) / prod(x)``, wrong on purpose; it exists for the test that
        shows the correction matters.
    """
    x = state.position
    s = per_chain_scale(scale, *x.shape)
    proposal, log_q_ratio = lognormal_propose(rng, x, s)
    lp = np.asarray(target.log_density(proposal), dtype=float)
    log_ratio = lp - state.log_density + (log_q_ratio if hastings else 0.0)
    new, accepted, rate = accept_reject(rng, log_ratio, State(proposal, lp), state)
    return new, Info(rate, accepted, s.copy())


def _check_positive(position: np.ndarray, target: Target) -> None:
    if not np.all(np.asarray(position) > 0):
        raise UsageError(
            f"mh-lognormal proposes x' = x exp(s e) and needs every coordinate positive; "
            f"target {target.name!r} starts at non-positive values (use rwm, slice or hmc)"
        )


class _Kernel:
    """A sampler object (``NAME``, ``State``, ``Info``, ``init``, ``step``, ``make_adapter``)."""

    State = State
    Info = Info

    def __init__(self, name: str, step: Any, make_adapter: Any, check: Any = None) -> None:
        self.NAME = name
        self.step = step
        self.make_adapter = make_adapter
        self._check = check

    def init(self, position: np.ndarray, target: Target) -> State:
        if self._check is not None:
            self._check(position, target)
        return init(position, target)

    def __repr__(self) -> str:
        return f"<sampler {self.NAME}>"


def _independence_adapter(
    warmup: int, state: State, target: Target, rng: ChainRandom, *, loc: Any = None, scale: Any = None, **_: Any
) -> IndependenceAdapter:
    return IndependenceAdapter(warmup, state, loc, 2.0 if scale is None else scale)


def _lognormal_adapter(
    warmup: int,
    state: State,
    target: Target,
    rng: ChainRandom,
    *,
    scale: Any = None,
    hastings: bool = True,
    target_accept: float | None = None,
) -> RobbinsMonroScale:
    dim = state.position.shape[1]
    return RobbinsMonroScale(
        warmup,
        default_scale(dim) if scale is None else scale,
        state.position.shape[0],
        optimal_acceptance(dim) if target_accept is None else target_accept,
        hastings=hastings,
    )


independence = _Kernel("mh-independence", independence_step, _independence_adapter)
lognormal = _Kernel("mh-lognormal", lognormal_step, _lognormal_adapter, _check_positive)
