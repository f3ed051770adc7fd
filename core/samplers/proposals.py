"""Proposals shared by several samplers: the independent Student-t (and its warm-up), the log-normal step.

The proposal ``q`` of the independence samplers (independence
Metropolis-Hastings, Tierney 1994; rejection sampling; i-SIR) is a
multivariate Student-t with :data:`DF` = 4 degrees of freedom, heavier-tailed
than most posteriors, so the ratio ``pi / q`` stays bounded, with per-chain
location ``loc (chains, dim)`` and diagonal scale ``scale (chains, dim)``. A
draw is ``loc + scale z / sqrt(w / 4)`` with ``z ~ N(0, I)`` and
``w ~ chi2(4) = 2 (E1 + E2)``, ``E ~ Exp(1)``.

:class:`ProposalAdapter` is the warm-up of rejection sampling and i-SIR: it
runs coordinate-wise slice sampling (:mod:`mcmc.core.samplers.slice`, whose
widths adapt to each coordinate's scale on their own) as its warm-up kernel,
and fits ``loc`` and ``scale`` to the draws of the second half.

:func:`lognormal_propose` is the multiplicative step ``x' = x exp(s e)``,
``e ~ N(0, I)``, for positive parameters (log-normal Metropolis-Hastings,
two-stage Metropolis-Hastings). Its density is log-normal,
``q(x' | x) = prod_i phi((log x'_i - log x_i) / s) / (s x'_i)``, so the
Hastings term is ``log q(x | x') - log q(x' | x) = sum_i (log x'_i - log x_i)``.
"""

from __future__ import annotations

from math import lgamma, log, pi
from typing import Any

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import slice as slice_sampler
from mcmc.core.samplers.adapt import Adapter, Step, Welford
from mcmc.core.samplers.base import DensityState as State

DF = 4.0  # Student-t degrees of freedom of the independent proposal
#: The proposal's scale is the warm-up draws' sd times this (wider than the target: a ratio ``pi / q`` that
#: stays small in the tails matters more than a high acceptance rate).
INFLATE = 1.5


def student_t_logpdf(x: np.ndarray, loc: np.ndarray, scale: np.ndarray, df: float = DF) -> np.ndarray:
    """Log density ``(chains,)`` of the multivariate t with diagonal scale at ``x (chains, dim)``."""
    d = x.shape[1]
    z = (x - loc) / scale
    const = lgamma((df + d) / 2.0) - lgamma(df / 2.0) - 0.5 * d * log(df * pi)
    return const - np.log(scale).sum(axis=1) - 0.5 * (df + d) * np.log1p((z**2).sum(axis=1) / df)


def student_t_draw(
    rng: ChainRandom, loc: np.ndarray, scale: np.ndarray, n: int = 1, mask: np.ndarray | None = None
) -> np.ndarray:
    """``n`` multivariate-t (``df = 4``) draws per chain (or per chain of ``mask``): ``(chains, n, dim)``.

    ``loc`` and ``scale`` are ``(chains, dim)`` for all chains, ``mask`` included.
    """
    d = loc.shape[1]
    z = rng.normal((n, d), mask=mask)
    w = 2.0 * rng.exponential((n, 2), mask=mask).sum(axis=2)  # chi2(4) = 2 Gamma(2, 1) = 2 (E1 + E2)
    rows = slice(None) if mask is None else mask
    return loc[rows, None, :] + scale[rows, None, :] * z / np.sqrt(w / DF)[:, :, None]


class ProposalAdapter(Adapter):
    """Warm-up: slice sampling, then the t proposal's location and scale from its draws.

    Slice sampling runs all of warm-up; the draws of its second half give the
    proposal's location (their mean) and scale (:data:`INFLATE` times their
    sd; an sd that came out zero keeps the initial scale). After warm-up the
    proposal is fixed.

    Parameters
    ----------
    warmup
        Number of warm-up iterations.
    state
        The starting state.
    loc, scale
        Initial location and scale: scalars, ``(dim,)`` or ``(chains, dim)``.
    fixed
        Other keyword parameters of the sampling kernel, passed through to
        :meth:`final` unchanged.
    """

    def __init__(self, warmup: int, state: State, loc: Any, scale: Any, fixed: dict[str, Any]) -> None:
        n, d = state.position.shape
        self.loc = np.broadcast_to(np.asarray(loc, dtype=float), (n, d)).copy()
        self.scale = np.broadcast_to(np.asarray(scale, dtype=float), (n, d)).copy()
        self.warmup, self.t, self.fixed = warmup, 0, fixed
        self.slice = slice_sampler.WidthAdapter(warmup, state)
        self.moments = Welford((n, d))

    def warmup_kernel(self) -> Step:
        return slice_sampler.step

    def params(self) -> dict[str, Any]:
        return self.slice.params()

    def update(self, state: State, info: Any) -> None:
        self.slice.update(state, info)
        self.t += 1
        if self.t > self.warmup // 2:
            self.moments.add(state.position)
            self.keep(state)

    def keep(self, state: State) -> None:
        """Hook: a second-half warm-up state (rejection keeps them for its envelope)."""

    def final(self) -> dict[str, Any]:
        m = self.moments
        if m.n >= 2:
            sd = m.sd()
            moved = sd > 1e-12 * (1.0 + np.abs(m.mean))
            self.loc = m.mean.copy()
            self.scale = np.where(moved, INFLATE * sd, self.scale)
        return {"loc": self.loc, "scale": self.scale, **self.fixed}


def fixed_proposal(state: State, loc: Any, scale: Any) -> tuple[np.ndarray, np.ndarray]:
    """``loc`` and ``scale`` broadcast to the shape ``(chains, dim)`` of ``state.position``."""
    shape = state.position.shape
    return tuple(np.broadcast_to(np.asarray(a, dtype=float), shape) for a in (loc, scale))  # type: ignore[return-value]


def lognormal_propose(rng: ChainRandom, x: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x' = x exp(s e)`` and the Hastings term ``log q(x|x') - log q(x'|x) = sum(log x' - log x)``.

    ``scale`` is ``(chains,)`` or per coordinate ``(chains, dim)``.
    """
    scale = np.asarray(scale, dtype=float)
    step = (scale[:, None] if scale.ndim == 1 else scale) * rng.normal((x.shape[1],))
    return x * np.exp(step), step.sum(axis=1)
