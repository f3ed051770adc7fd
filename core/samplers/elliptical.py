"""Elliptical slice sampling, vectorized over chains (Murray, Adams & MacKay 2010).

Two ways to split the target into a Gaussian and the rest: the model's own
Gaussian prior when the target file gives it (``prior_cov`` or ``prior_chol``
with ``log_likelihood``, :class:`~mcmc.core.targets.protocols.GaussianPrior`),
exactly as Murray, Adams & MacKay define the method, only the likelihood
evaluated; otherwise a reference Gaussian learnt in warm-up (below).

Elliptical slice sampling draws from ``pi(x) ∝ N(x; mu, Sigma) L(x)``. From
the current ``x`` (Murray, Adams & MacKay 2010, "Elliptical slice sampling",
AISTATS, Fig. 2):

1. an auxiliary ``nu ~ N(0, Sigma)`` defines the ellipse
   ``x'(theta) = mu + (x - mu) cos(theta) + nu sin(theta)``, through ``x`` at
   ``theta = 0``;
2. the slice level ``log y = log L(x) - E``, ``E ~ Exp(1)``;
3. ``theta ~ U[0, 2 pi)`` and the bracket ``[theta - 2 pi, theta]``; while
   ``log L(x'(theta)) <= log y``, the bracket shrinks toward 0 (the end on
   ``theta``'s side moves to ``theta``) and ``theta`` is redrawn inside it.

Every transition is accepted and there is nothing to tune but the Gaussian.
The bracket always contains ``theta = 0`` (the current point, inside the
slice), so the loop ends.

Any target can be written this way: with a *reference* Gaussian
``N(mu, diag(sd^2))`` and ``L(x) = pi(x) / N(x; mu, diag(sd^2))``, the chain
leaves ``pi`` invariant whatever the reference (Nishihara, Murray & Adams
2014, "Parallel MCMC with generalized elliptical slice sampling", JMLR 15,
use the same decomposition with a Student-t). The closer the reference is to
the target, the flatter ``L`` and the larger the moves; for a Gaussian target
equal to the reference every first proposal is accepted and draws are
independent. Warm-up therefore learns the reference per chain from the
chain's own draws (coordinate-wise slice sampling first, whose draws are
robust to badly scaled targets; see :class:`ReferenceAdapter`); after warm-up
it is fixed, so the draws are an exact MCMC sample. Without warm-up the
reference is ``N(0, I)``, the classical setting of a standard normal prior.

With the model's prior ``N(mu, Sigma)``, ``Sigma = L L^T``, the ellipse's
auxiliary draw is ``nu = L z``, ``z ~ N(0, I)`` (the factor applied by
elementwise sums, no BLAS: the same bytes on every CPU), ``L(x)`` is the
file's ``log_likelihood`` (counted as likelihood evaluations) and there is
no warm-up adaptation: the draws after any warm-up are exact MCMC draws, and
the warm-up iterations are burn-in.

As in :mod:`mcmc.core.samplers.slice`, chains still shrinking evaluate the
density together (masked rows) and draw only from their own streams; the
statistic ``n_evals`` counts the log-density evaluations of each chain.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers import slice as slice_sampler
from mcmc.core.samplers.adapt import Adapter, FixedParams, Step, Welford
from mcmc.core.samplers.base import DensityState as State
from mcmc.core.samplers.base import density_state
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import GaussianPrior

DECLARATION = registry.ELLIPTICAL_SLICE
NAME = DECLARATION.name
MAX_SHRINK = 200  # shrinkage rounds before a chain keeps its point (only for pathological densities)
TWO_PI = 2.0 * np.pi


class Info(NamedTuple):
    n_evals: np.ndarray  # (chains,) log-density evaluations in this iteration


init = density_state


def _log_reference(x: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``log N(x; mean, diag(sd^2))`` up to the constant ``-dim/2 log(2 pi)`` (it cancels in ``L``)."""
    z = (x - mean) / sd
    return -0.5 * np.einsum("ij,ij->i", z, z) - np.log(sd).sum(axis=1)


def step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    ref_mean: Any = 0.0,
    ref_sd: Any = 1.0,
) -> tuple[State, Info]:
    """One elliptical slice transition for every chain.

    Parameters
    ----------
    ref_mean, ref_sd
        The reference Gaussian ``N(ref_mean, diag(ref_sd^2))``: scalars,
        ``(dim,)`` or ``(chains, dim)``; ``ref_sd > 0``. Unused when the
        target has its own Gaussian prior.
    """
    if isinstance(target, GaussianPrior):
        return _step_prior(rng, state, target)
    x, lp = state.position, state.log_density
    n, d = x.shape
    mean = np.broadcast_to(np.asarray(ref_mean, dtype=float), (n, d))
    sd = np.broadcast_to(np.asarray(ref_sd, dtype=float), (n, d))
    offset = x - mean
    nu = sd * rng.normal((d,))
    log_y = lp - _log_reference(x, mean, sd) - rng.exponential()
    theta = TWO_PI * rng.uniform()
    lo, hi = theta - TWO_PI, theta.copy()
    new, new_lp = x.copy(), lp.copy()
    evals = np.zeros(n, dtype=np.int64)
    looking = np.arange(n)
    for _ in range(MAX_SHRINK):
        t = theta[looking]
        cand = mean[looking] + offset[looking] * np.cos(t)[:, None] + nu[looking] * np.sin(t)[:, None]
        cand_lp = np.asarray(target.log_density(cand), dtype=float)
        evals[looking] += 1
        hit = cand_lp - _log_reference(cand, mean[looking], sd[looking]) > log_y[looking]
        done = looking[hit]
        new[done], new_lp[done] = cand[hit], cand_lp[hit]
        miss = looking[~hit]
        below = theta[miss] < 0.0
        lo[miss[below]] = theta[miss[below]]
        hi[miss[~below]] = theta[miss[~below]]
        looking = miss
        if not looking.size:
            break
        theta[looking] = lo[looking] + rng.uniform(mask=looking) * (hi[looking] - lo[looking])
    # A chain still shrinking after MAX_SHRINK rounds keeps x (always in the slice).
    return State(new, new_lp), Info(evals)


def _step_prior(rng: ChainRandom, state: State, target: GaussianPrior) -> tuple[State, Info]:
    """One transition on the ellipses of the model's prior ``N(prior_mean, L L^T)``, the likelihood only evaluated."""
    x = state.position
    n, d = x.shape
    mean, chol = target.prior_mean, target.prior_chol
    prior = target.log_prior  # type: ignore[attr-defined]  # the Gaussian's log density (the file's prior)
    log_lik = state.log_density - np.asarray(prior(x), dtype=float)
    nu = np.sum(rng.normal((d,))[:, None, :] * chol[None, :, :], axis=2)  # L z, row by row
    offset = x - mean
    log_y = log_lik - rng.exponential()
    theta = TWO_PI * rng.uniform()
    lo, hi = theta - TWO_PI, theta.copy()
    new, new_lp = x.copy(), state.log_density.copy()
    evals = np.zeros(n, dtype=np.int64)
    looking = np.arange(n)
    for _ in range(MAX_SHRINK):
        t = theta[looking]
        cand = mean + offset[looking] * np.cos(t)[:, None] + nu[looking] * np.sin(t)[:, None]
        cand_ll = np.asarray(target.log_likelihood(cand), dtype=float)
        evals[looking] += 1
        hit = cand_ll > log_y[looking]
        done = looking[hit]
        new[done] = cand[hit]
        new_lp[done] = np.asarray(prior(cand[hit]), dtype=float) + cand_ll[hit]
        miss = looking[~hit]
        below = theta[miss] < 0.0
        lo[miss[below]] = theta[miss[below]]
        hi[miss[~below]] = theta[miss[~below]]
        looking = miss
        if not looking.size:
            break
        theta[looking] = lo[looking] + rng.uniform(mask=looking) * (hi[looking] - lo[looking])
    return State(new, new_lp), Info(evals)


class ReferenceAdapter(Adapter):
    """Per chain: the reference Gaussian's mean and sd, learnt in warm-up from the chain's own draws.

    A reference narrower than the target makes elliptical slice sampling
    crawl (moves scale with the reference), and draws from a crawling chain
    give a narrower estimate still: started from ``N(0, I)`` on a target with
    scales 0.01 to 1, the chain never recovers. So the first half of warm-up
    runs coordinate-wise slice sampling (:mod:`mcmc.core.samplers.slice`,
    whose widths adapt to each coordinate's scale on their own), and its
    draws in the second quarter give the first reference. The second half
    runs elliptical slice sampling with that reference widened by
    :attr:`EXPLORE`, and its draws give the final reference, widened by
    :attr:`FINAL` (a wider reference costs a few more shrinkage steps; a
    narrower one, mixing). An sd that came out zero (a chain that did not
    move in a coordinate) keeps its previous value.
    """

    #: The sd used in the elliptical half of warm-up is the estimate times this.
    EXPLORE = 1.5
    #: The sd used after warm-up is the estimate times this.
    FINAL = 1.5

    def __init__(self, warmup: int, state: State, target: Target, rng: ChainRandom, ref_mean: Any, ref_sd: Any) -> None:
        n, d = state.position.shape
        self.mean = np.broadcast_to(np.asarray(ref_mean, dtype=float), (n, d)).copy()
        self.sd = np.broadcast_to(np.asarray(ref_sd, dtype=float), (n, d)).copy()
        self.half, self.warmup, self.t = warmup // 2, warmup, 0
        self.slice = slice_sampler.WidthAdapter(self.half, state)
        self.moments = Welford((n, d))
        self.estimated = False

    def warmup_kernel(self) -> Step | None:
        return slice_sampler.step if self.t < self.half else None

    def params(self) -> dict[str, Any]:
        if self.t < self.half:
            return self.slice.params()
        return {"ref_mean": self.mean, "ref_sd": self.sd * self.EXPLORE}

    def update(self, state: State, info: Info) -> None:
        if self.t < self.half:
            self.slice.update(state, info)
        self.t += 1
        m = self.moments
        if self.t > self.half // 2:  # the second quarter, then the second half
            m.add(state.position)
        if self.t in (self.half, self.warmup) and m.n >= 5:
            sd = m.sd()
            moved = sd > 1e-12 * (1.0 + np.abs(m.mean))
            self.mean = m.mean.copy()
            self.sd = np.where(moved, sd, self.sd)
            self.estimated = True
            self.moments = Welford(m.mean.shape)

    def final(self) -> dict[str, Any]:
        return {"ref_mean": self.mean, "ref_sd": self.sd * (self.FINAL if self.estimated else 1.0)}


def make_adapter(
    warmup: int, state: State, target: Target, rng: ChainRandom, *, ref_mean: Any = 0.0, ref_sd: Any = 1.0
) -> ReferenceAdapter | FixedParams:
    """Slice sampling, then elliptical slice sampling, learning the reference (see :class:`ReferenceAdapter`);
    with the model's own prior nothing is learnt."""
    if isinstance(target, GaussianPrior):
        return FixedParams()
    return ReferenceAdapter(warmup, state, target, rng, ref_mean, ref_sd)


def run_attrs(state: State, final: dict[str, Any]) -> dict[str, Any]:
    """Which Gaussian the ellipses were drawn from: the model's prior, or the reference learnt in warm-up."""
    del state
    return {"elliptical": {"gaussian": "learnt in warm-up" if "ref_mean" in final else "the model's prior"}}
