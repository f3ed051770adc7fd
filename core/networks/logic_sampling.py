"""Logic sampling of a Bayesian network given evidence: forward sampling with rejection.

Henrion (1988), "Propagating uncertainty in Bayesian networks by
probabilistic logic sampling". Each proposal draws every node in topological
order from its CPT given its sampled parents (an exact draw from the prior
joint); a proposal that disagrees with the evidence is rejected. Accepted
draws are independent and exactly distributed as ``p(x | e)``, at an
expected cost of ``1 / p(e)`` proposals per draw: hopeless for rare
evidence, which is what likelihood weighting and Gibbs sampling are for.

Randomness: proposals consume ``n_nodes`` uniforms each, read in rounds
from each chain's own stream; round ``r`` offers each chain still short of
draws ``min(draws * 2^r, ROUND_CAP)`` proposals, a size that depends on the
round only, so chain ``i``'s draws depend only on the seed and ``i``. A chain
consumes the proposals up to its last accepted draw and no further
(:meth:`~mcmc.core.random.ChainRandom.reserve`), so its draws are one
sequence of proposals whatever the rounds: a run that stops after ``d``
draws and goes on (``mcmc sample --resume``) draws what one run would.

Statistics: ``n_evals`` (proposals spent on the draw, the accepted one
included; its mean is the inverse acceptance rate) and ``lp``
(``log p(x, e)``). The run's acceptance rate per chain is
``draws / sum(n_evals)`` (:func:`run_attrs`).

The protocol of :mod:`mcmc.core.networks`: draws are independent
(``MARKOV = False``: no warm-up, no thinning, no start); the state is the
last accepted draw. :func:`sample` is the driver's call; :func:`step` draws
one accepted configuration per chain, and since a chain reads no proposal
past its last draw, ``draws`` steps give the bytes of one ``sample(draws)``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.networks.evidence import format_evidence
from mcmc.core.networks.network import BayesianNetwork, Evidence
from mcmc.core.networks.tables import ForwardPlan, forward_plan, forward_sample
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry

DECLARATION = registry.LOGIC_SAMPLING
NAME = DECLARATION.name
MARKOV = False  # independent draws: no warm-up, thinning or start
ROUND_CAP = 1 << 15  # proposals per chain per round at most (their uniforms: ROUND_CAP * n_nodes doubles)
#: Proposals (over all chains) beyond which a run is refused before it starts (p(e) known) or stopped (p(e)
#: unknown): about a minute of forward sampling on a network of a few dozen nodes.
MAX_PROPOSALS = 10**8

build = forward_plan


class State(NamedTuple):
    position: np.ndarray | None  # (chains, n_nodes) the last accepted draw; None before the first
    log_density: np.ndarray | None  # (chains,) its log p(x, e)


class Info(NamedTuple):
    n_evals: np.ndarray  # (chains,) proposals spent on the draw, the accepted one included


def init(position: np.ndarray | None, plan: ForwardPlan) -> State:
    """The state before any draw (independent draws need no start: ``position`` is kept as given)."""
    if position is None:
        return State(None, None)
    codes = np.array(position, dtype=np.int64, copy=True)
    return State(codes, plan.tables.network.log_joint(codes))


def _draw(rng: ChainRandom, plan: ForwardPlan, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """``draws`` accepted full configurations per chain ``(chains, draws, n_nodes)`` and their ``n_evals``."""
    tables = plan.tables
    chains, n = rng.chains, tables.network.n_nodes
    full = np.empty((chains, draws, n), dtype=np.int64)
    n_evals = np.zeros((chains, draws), dtype=np.int64)
    filled = np.zeros(chains, dtype=np.int64)
    pending = np.zeros(chains, dtype=np.int64)  # proposals since the chain's last acceptance
    r = 0
    spent = 0
    while draws and (filled < draws).any():
        need = filled < draws
        if spent > MAX_PROPOSALS:
            raise UsageError(
                f"rejection sampling accepted {int(filled.sum())} of {chains * draws} draws in {spent} proposals: "
                "the evidence is too rare for it; use --sampler gibbs or likelihood-weighting"
            )
        rows = np.flatnonzero(need)
        size = min(draws << min(r, 30), ROUND_CAP)
        r += 1
        spent += size * int(need.sum())
        data, pos = rng.reserve("uniform", size * n, mask=need)
        u = np.stack([data[c, pos[c] : pos[c] + size * n] for c in rows])
        codes, _, match = forward_sample(tables, u.reshape(-1, n), weighted=False)
        codes = codes.reshape(rows.size, size, n)
        match = match.reshape(rows.size, size)
        used = np.zeros(chains, dtype=np.int64)
        for j, c in enumerate(rows):
            hits = np.flatnonzero(match[j])[: draws - filled[c]]
            k = hits.size
            used[c] = size * n
            if k == 0:
                pending[c] += size
                continue
            full[c, filled[c] : filled[c] + k] = codes[j, hits]
            gaps = np.diff(hits, prepend=-1)
            gaps[0] += pending[c]
            n_evals[c, filled[c] : filled[c] + k] = gaps
            filled[c] += k
            pending[c] = size - 1 - hits[-1]
            if filled[c] == draws:  # done: the proposals after its last draw stay unread
                used[c] = (hits[-1] + 1) * n
        rng.advance("uniform", used)
    return full, n_evals


def check_cost(
    network: BayesianNetwork, evidence: Evidence, log_evidence: float | None, chains: int, draws: int
) -> None:
    """Refuse a run whose expected number of proposals, ``chains x draws / p(e)``, is beyond reach.

    ``p(e)`` is known exactly before sampling, so a run that would loop for
    hours is refused at once, with the number; when ``p(e)`` is unknown (a
    network too wide to compute it), :func:`sample` stops itself after
    :data:`MAX_PROPOSALS` proposals.

    Raises
    ------
    UsageError
        Naming the evidence, ``p(e)``, the expected proposals and the samplers that do not need them.
    """
    if log_evidence is None or not evidence:
        return
    expected = chains * draws * math.exp(-log_evidence) if log_evidence > -700 else math.inf
    if expected > MAX_PROPOSALS:
        raise UsageError(
            f"{network.source or network.name}: rejection sampling accepts a proposal with probability "
            f"p(e) = {math.exp(log_evidence):.3g} for the evidence {format_evidence(network, evidence)}: "
            f"{chains} chains x {draws} draws would need about {expected:.3g} proposals (limit "
            f"{MAX_PROPOSALS:.0e}); use --sampler gibbs or likelihood-weighting"
        )


def sample(
    rng: ChainRandom, state: State, plan: ForwardPlan, draws: int, thin: int = 1
) -> tuple[State, np.ndarray, dict[str, np.ndarray]]:
    """``draws`` accepted draws for every chain of ``rng`` (``thin`` must be 1: the draws are independent).

    Raises
    ------
    UsageError
        More than :data:`MAX_PROPOSALS` proposals were needed (evidence so
        rare that :func:`check_cost` could not know it in advance).

    Returns
    -------
    state
        The last draw.
    codes
        ``(chains, draws, n_unobserved)`` state codes of the unobserved nodes.
    stats
        ``n_evals`` (int64) and ``lp``, each ``(chains, draws)``.
    """
    if thin != 1:
        raise ValueError("independent draws are not thinned")
    tables = plan.tables
    full, n_evals = _draw(rng, plan, draws)
    lp = tables.network.log_joint(full)
    out = full[:, :, tables.unobserved].astype(tables.code_dtype)
    last = State(full[:, -1].copy(), lp[:, -1].copy()) if draws else state
    return last, out, {"n_evals": n_evals, "lp": lp}


def step(rng: ChainRandom, state: State, plan: ForwardPlan) -> tuple[State, Info]:
    """One accepted draw for every chain."""
    new, _, stats = sample(rng, state, plan, 1)
    return new, Info(stats["n_evals"][:, 0])


def run_attrs(plan: ForwardPlan, stats: dict[str, np.ndarray]) -> dict[str, Any]:
    """``acceptance_rate``: accepted / proposed, per chain (the chains file's attribute)."""
    return {"acceptance_rate": acceptance_rate(stats["n_evals"]).tolist()}


def acceptance_rate(n_evals: np.ndarray) -> np.ndarray:
    """Per-chain acceptance rate ``draws / proposals`` from ``n_evals (chain, draw)``; returns ``(chain,)``."""
    return n_evals.shape[1] / n_evals.sum(axis=1)
