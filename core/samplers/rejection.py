"""Rejection sampling: exact with the user's proposal and bound, else from a t proposal learnt in warm-up.

Draw ``x ~ q`` and ``u ~ U(0, 1)`` until ``u M q(x) < pi~(x)``; the accepted
``x`` are independent draws from ``pi`` exactly, provided the envelope holds,
``pi~ <= M q`` everywhere (von Neumann 1951, "Various techniques used in
connection with random digits", NBS Applied Mathematics Series 12). ``q`` is
the multivariate Student-t of :mod:`mcmc.core.samplers.proposals`, one per
chain, whose location and scale warm-up learns from slice sampling's draws
(:class:`EnvelopeAdapter`); after warm-up it is fixed.

No general method proves a bound for an arbitrary density, so ``log M`` is
estimated at the end of warm-up: the largest ``log pi~ - log q`` over the
chain's warm-up draws of the second half and :data:`BOUND_PROPOSALS` fresh
proposals, plus :data:`BOUND_MARGIN`. Every proposal whose ratio still
exceeds ``M`` is counted (statistic ``envelope_exceeded``): where that
happens the draws follow ``min(pi~, M q)`` instead of ``pi``, and the
command-line summary says so. The statistic ``n_evals`` counts the proposals
(density evaluations) a draw took; the overall acceptance rate is
``1 / mean(n_evals)``.

With the target file's own proposal and bound
(:class:`~mcmc.core.targets.protocols.EnvelopeBound`: ``proposal_sample``,
``proposal_log_density`` and ``log_bound``, ``log k`` with ``p <= k q``)
nothing is learnt or estimated: the draws are exact (Robert & Casella 2004,
*Monte Carlo Statistical Methods*, 2nd ed., section 2.3.2), as the
envelope's theory asks, whatever the dimension (the learnt envelope is
estimated from a few hundred points and falls short above about four
dimensions). A proposal where ``p > k q`` means the given bound is wrong: the
run stops with the point and the ratio (:class:`~mcmc.core.errors.InputError`,
exit 2), rather than drawing from ``min(p, k q)`` in silence.

Randomness: every chain draws its proposals and uniforms from its own
stream, in shapes that depend only on its own history, so chain ``i`` depends
only on the seed and ``i``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import InputError, McmcError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.adapt import FixedParams
from mcmc.core.samplers.base import DensityState, density_state
from mcmc.core.samplers.proposals import ProposalAdapter, fixed_proposal, student_t_draw, student_t_logpdf
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import EnvelopeBound

DECLARATION = registry.REJECTION
NAME = DECLARATION.name
#: Fresh proposals per chain, beside the warm-up draws, over which the rejection envelope is maximised.
BOUND_PROPOSALS = 400
#: Added to the largest log ratio seen: ``M`` is 1.2 times the largest ratio found.
BOUND_MARGIN = float(np.log(1.2))
#: Proposals a rejection draw may take before the run stops (an acceptance rate below 1 / this).
MAX_PROPOSALS = 10_000

State = DensityState  # position and log density


class Info(NamedTuple):
    n_evals: np.ndarray  # (chains,) proposals (density evaluations) this draw took
    envelope_exceeded: np.ndarray  # (chains,) proposals whose ratio pi~ / q exceeded M


init = density_state


def step(
    rng: ChainRandom, state: State, target: Target, *, loc: Any = 0.0, scale: Any = 1.0, log_bound: Any = 0.0
) -> tuple[State, Info]:
    """One independent draw per chain by rejection from the t proposal.

    Parameters
    ----------
    loc, scale
        The proposal's location and diagonal scale: scalars, ``(dim,)`` or ``(chains, dim)``.
    log_bound
        ``log M`` per chain: a proposal is accepted with probability ``pi~(x) / (M q(x))``.

    Raises
    ------
    McmcError
        A chain accepted none of :data:`MAX_PROPOSALS` proposals.
    InputError
        With the target's own envelope: a proposal where ``p > k q``.
    """
    if isinstance(target, EnvelopeBound):
        return _step_given(rng, state, target)
    n = state.position.shape[0]
    loc, scale = fixed_proposal(state, loc, scale)
    bound = np.broadcast_to(np.asarray(log_bound, dtype=float), (n,))
    x, lp = state.position.copy(), state.log_density.copy()
    evals = np.zeros(n, dtype=np.int64)
    exceeded = np.zeros(n, dtype=np.int64)
    looking = np.arange(n)
    for _ in range(MAX_PROPOSALS):
        cand = student_t_draw(rng, loc, scale, 1, looking)[:, 0]
        cand_lp = np.asarray(target.log_density(cand), dtype=float)
        log_ratio = cand_lp - student_t_logpdf(cand, loc[looking], scale[looking]) - bound[looking]
        evals[looking] += 1
        exceeded[looking] += log_ratio > 0.0
        hit = rng.log_uniform(mask=looking) < np.where(np.isnan(log_ratio), -np.inf, log_ratio)
        done = looking[hit]
        x[done], lp[done] = cand[hit], cand_lp[hit]
        looking = looking[~hit]
        if not looking.size:
            return State(x, lp), Info(evals, exceeded)
    raise McmcError(
        f"rejection sampling: chain {int(looking[0])} accepted none of {MAX_PROPOSALS} proposals (the envelope "
        "is far too loose for this target); use another sampler"
    )


def _step_given(rng: ChainRandom, state: State, target: EnvelopeBound) -> tuple[State, Info]:
    """One exact draw per chain under the target's own proposal and bound ``log k``."""
    n = state.position.shape[0]
    x, lp = state.position.copy(), state.log_density.copy()
    evals = np.zeros(n, dtype=np.int64)
    looking = np.arange(n)
    for _ in range(MAX_PROPOSALS):
        cand = np.asarray(target.proposal_sample(rng.subset(looking)), dtype=float)
        cand_lp = np.asarray(target.log_density(cand), dtype=float)  # type: ignore[attr-defined]
        log_ratio = cand_lp - np.asarray(target.proposal_log_density(cand), dtype=float) - target.log_bound
        evals[looking] += 1
        over = np.flatnonzero(log_ratio > 0)
        if over.size:
            i = over[np.argmax(log_ratio[over])]
            raise InputError(
                getattr(target, "source", None) or getattr(target, "name", None),
                f"the envelope fails: p > k q at x = [{', '.join(f'{v:.6g}' for v in cand[i])}] "
                f"(log p - log q - log_bound = {log_ratio[i]:.6g} > 0, chain {int(looking[i])}); "
                "log_bound must be at least the largest log p - log q",
            )
        hit = rng.log_uniform(mask=looking) < np.where(np.isnan(log_ratio), -np.inf, log_ratio)
        done = looking[hit]
        x[done], lp[done] = cand[hit], cand_lp[hit]
        looking = looking[~hit]
        if not looking.size:
            return State(x, lp), Info(evals, np.zeros(n, dtype=np.int64))
    raise McmcError(
        f"rejection sampling: chain {int(looking[0])} accepted none of {MAX_PROPOSALS} proposals under the target's "
        f"own bound (log_bound {target.log_bound:g} is far too loose); use another sampler"
    )


class EnvelopeAdapter(ProposalAdapter):
    """The proposal learnt from slice sampling's draws (:class:`ProposalAdapter`), then the envelope ``log M``.

    Setting the envelope at the end of warm-up (see the module docstring)
    costs :data:`BOUND_PROPOSALS` density evaluations per chain.
    """

    def __init__(
        self, warmup: int, state: State, target: Target, rng: ChainRandom, loc: Any, scale: Any, fixed: dict[str, Any]
    ) -> None:
        super().__init__(warmup, state, loc, scale, fixed)
        self.target, self.rng = target, rng
        self.kept: list[State] = []  # second-half draws, for the envelope

    def keep(self, state: State) -> None:
        self.kept.append(state)

    def final(self) -> dict[str, Any]:
        # A given log_bound wins over the estimate (which is still made: same stream either way).
        return {**super().final(), "log_bound": self._log_bound(), **self.fixed}

    def _log_bound(self) -> np.ndarray:
        """``log M`` per chain: the largest ``log pi~ - log q`` seen, plus :data:`BOUND_MARGIN`."""
        n, d = self.loc.shape
        best = np.full(n, -np.inf)
        for s in self.kept:
            best = np.fmax(best, s.log_density - student_t_logpdf(s.position, self.loc, self.scale))
        cand = student_t_draw(self.rng, self.loc, self.scale, BOUND_PROPOSALS)  # (chains, B, dim)
        flat = cand.reshape(n * BOUND_PROPOSALS, d)
        lp = np.asarray(self.target.log_density(flat), dtype=float).reshape(n, BOUND_PROPOSALS)
        loc, scale = (np.repeat(a, BOUND_PROPOSALS, axis=0) for a in (self.loc, self.scale))
        log_q = student_t_logpdf(flat, loc, scale).reshape(n, BOUND_PROPOSALS)
        best = np.fmax(best, np.nanmax(np.where(np.isfinite(lp), lp - log_q, -np.inf), axis=1))
        return best + BOUND_MARGIN


def make_adapter(
    warmup: int, state: State, target: Target, rng: ChainRandom, *, loc: Any = 0.0, scale: Any = 1.0, **fixed: Any
) -> EnvelopeAdapter | FixedParams:
    """Slice sampling in warm-up, then the proposal and the envelope from its draws (:class:`EnvelopeAdapter`);
    a ``log_bound`` given passes through unchanged. With the target's own envelope nothing is learnt."""
    if isinstance(target, EnvelopeBound):
        return FixedParams(**fixed)
    return EnvelopeAdapter(warmup, state, target, rng, loc, scale, fixed)

