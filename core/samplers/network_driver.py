"""Sampling a Bayesian network given evidence, and the chains-file variables of the result.

:func:`sample_network` is the one call behind ``mcmc sample --target
NET.bif``: it checks the evidence (exactly, refusing probability zero),
runs ``gibbs`` (:mod:`~mcmc.core.samplers.network_gibbs`), ``rejection``
(:mod:`~mcmc.core.samplers.logic_sampling`) or ``likelihood-weighting``
(:mod:`~mcmc.core.samplers.likelihood_weighting`) over all chains, and
returns a :class:`NetworkRun`. :func:`to_chains` turns it into the chains
file's :class:`~mcmc.core.chains.Chains`, and :func:`indicator_variables`
gives ``diagnose`` its scalar parameters ``NODE[STATE]``.

Chains file layout (``docs/formats.md``): one variable per unobserved node,
named as the node, holding integer state codes ``(chain, draw)``; the state
names in ``attrs["state_names"] = {node: [state, ...]}`` (code ``k`` is the
``k``-th name); the evidence in ``attrs["observed"] = {node: state}``;
likelihood weighting's ``log_weight`` as a sampler statistic, with
``attrs["weighted"] = true``.

Reproducibility: as the main driver, chain ``i`` depends only on the seed
and ``i`` (samplers draw from ``ChainRandom(seed, chain_ids)``, starting
states from ``stream=1``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom, entropy_seed
from mcmc.core.samplers import NETWORK_SAMPLERS, likelihood_weighting, logic_sampling, network_gibbs
from mcmc.core.samplers.network_tables import NEAR_ZERO, compile_network, initial_states
from mcmc.core.targets.bayesnet import BayesianNetwork, Evidence, format_evidence
from mcmc.core.targets.variable_elimination import check_evidence


@dataclass
class NetworkRun:
    """The draws of a network sampler.

    Attributes
    ----------
    network
        The network sampled.
    evidence
        ``{node index: state code}``.
    nodes
        Indices of the unobserved nodes, the last axis of ``codes``.
    codes
        ``(chain, draw, n_unobserved)`` integer state codes.
    sample_stats
        ``(chain, draw)`` statistics: ``lp`` always; ``change_rate`` (gibbs),
        ``n_evals`` (rejection), ``log_weight`` (likelihood weighting).
    attrs
        Run metadata (sampler, seed, chains, chain ids, warmup, draws, thin,
        log evidence; ``acceptance_rate`` per chain for rejection,
        ``ess_weights`` per chain and ``ess_weights_total`` for likelihood
        weighting; ``blocks`` for gibbs).
    warnings
        Messages for the user (deterministic tables that can freeze
        single-site Gibbs, and what was done about them).
    timings
        ``warmup_time_s`` and ``sampling_time_s`` (wall clock): never in the
        chains file (same seed, same bytes).
    """

    network: BayesianNetwork
    evidence: dict[int, int]
    nodes: np.ndarray
    codes: np.ndarray
    sample_stats: dict[str, np.ndarray]
    attrs: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def weighted(self) -> bool:
        return "log_weight" in self.sample_stats


def sample_network(
    network: BayesianNetwork,
    evidence: Evidence | None = None,
    sampler: str = "gibbs",
    *,
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    thin: int = 1,
    seed: int | None = None,
    chain_ids: Sequence[int] | None = None,
    init: np.ndarray | None = None,
    block: bool = True,
    near_zero: float = NEAR_ZERO,
) -> NetworkRun:
    """Sample ``p(x | e)`` of a Bayesian network with ``sampler``.

    Parameters
    ----------
    network, evidence
        The network and ``{node index: state code}`` (see
        :func:`~mcmc.core.targets.bayesnet.parse_evidence`).
    sampler
        ``"gibbs"``, ``"rejection"`` or ``"likelihood-weighting"``.
    chains, chain_ids
        Number of chains, or their global indices (chain ``i`` depends only
        on ``seed`` and ``i``).
    warmup, draws, thin
        Gibbs sweeps discarded, sweeps run (every ``thin``-th kept); the two
        independent samplers ignore ``warmup`` and ``thin`` and make ``draws``
        draws.
    seed
        Non-negative integer; ``None`` draws one from OS entropy.
    init
        Gibbs only: starting configurations ``(chains, n_nodes)`` of state
        codes (evidence nodes are overwritten); default: a forward sample per
        chain consistent with the evidence.
    block
        Gibbs only: update deterministic groups as blocks (see
        :mod:`~mcmc.core.samplers.network_tables`).
    near_zero
        Gibbs only: table entries below this count as zeros when looking for
        tables that trap single-site moves.

    Returns
    -------
    NetworkRun

    Raises
    ------
    InputError
        The evidence has probability zero.
    UsageError
        Unknown sampler, bad counts, or a starting configuration of
        probability zero.
    """
    if sampler not in NETWORK_SAMPLERS:
        raise UsageError(f"unknown sampler {sampler!r} for a Bayesian network; use one of {', '.join(NETWORK_SAMPLERS)}")
    if warmup < 0 or draws < 1 or thin < 1:
        raise UsageError(f"need warmup >= 0, draws >= 1 and thin >= 1 (got {warmup}, {draws}, {thin})")
    if seed is None:
        seed = entropy_seed()
    if seed < 0:
        raise UsageError(f"seed must be non-negative, got {seed}")
    ids = tuple(range(chains)) if chain_ids is None else tuple(int(i) for i in chain_ids)
    if not ids:
        raise UsageError("need at least one chain")
    evidence = dict(sorted((evidence or {}).items()))
    log_evidence = check_evidence(network, evidence)
    rng = ChainRandom(seed, ids)
    attrs: dict[str, Any] = {
        "sampler": sampler, "target": network.source or network.name, "seed": int(seed), "chains": len(ids),
        "chain_ids": list(ids), "draws": draws, "observed": observed_attr(network, evidence),
        "log_evidence": log_evidence,
    }  # fmt: skip
    warnings: tuple[str, ...] = ()
    if sampler == "gibbs":
        plan = network_gibbs.build(network, evidence, block=block, near_zero=near_zero)
        tables = plan.tables
        if init is None:
            start = initial_states(tables, ChainRandom(seed, ids, stream=1))
        else:
            start = np.asarray(init)
            if start.shape != (len(ids), network.n_nodes):
                raise UsageError(f"init has shape {start.shape}; expected ({len(ids)}, {network.n_nodes})")
        try:
            state = network_gibbs.init(start, plan)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        t0 = time.perf_counter()
        state, _, _ = network_gibbs.sample(rng, state, plan, warmup)
        t1 = time.perf_counter()
        state, codes, stats = network_gibbs.sample(rng, state, plan, draws, thin)
        warnings = plan.warnings
        attrs.update(warmup=warmup, thin=thin, blocks=[[network.nodes[v] for v in b] for b in plan.units if len(b) > 1])
    else:
        tables = compile_network(network, evidence)
        t0 = t1 = time.perf_counter()
        if sampler == "rejection":
            codes, stats = logic_sampling.sample(rng, tables, draws)
            attrs["acceptance_rate"] = logic_sampling.acceptance_rate(stats["n_evals"]).tolist()
        else:
            codes, stats = likelihood_weighting.sample(rng, tables, draws)
            attrs["ess_weights"] = likelihood_weighting.kish_ess(stats["log_weight"], axis=1).tolist()
            attrs["ess_weights_total"] = float(likelihood_weighting.kish_ess(stats["log_weight"]))
            attrs["weighted"] = True
        attrs.update(warmup=0, thin=1)
    timings = {"warmup_time_s": t1 - t0, "sampling_time_s": time.perf_counter() - t1}
    return NetworkRun(network, evidence, tables.unobserved.copy(), codes, stats, attrs, warnings, timings)


def observed_attr(network: BayesianNetwork, evidence: Evidence) -> dict[str, str]:
    """The evidence as ``{node name: state name}`` (the chains file's ``attrs["observed"]``)."""
    return {network.nodes[i]: network.states[i][s] for i, s in sorted(evidence.items())}


def to_chains(run: NetworkRun) -> Chains:
    """The chains-file form of ``run``: one integer variable ``(chain, draw)`` per unobserved node.

    ``attrs["state_names"]`` maps each node to its state names (code ``k`` is
    the ``k``-th); ``attrs["observed"]`` holds the evidence; likelihood
    weighting adds ``attrs["weighted"] = True`` and its ``log_weight``
    statistic. ``attrs["warnings"]`` keeps the reducibility warnings.
    """
    net = run.network
    posterior = {net.nodes[v]: np.ascontiguousarray(run.codes[:, :, j]) for j, v in enumerate(run.nodes)}
    attrs = dict(run.attrs)
    attrs["state_names"] = {net.nodes[v]: list(net.states[v]) for v in run.nodes}
    attrs["evidence"] = format_evidence(net, run.evidence)
    if run.warnings:
        attrs["warnings"] = list(run.warnings)
    return Chains(posterior, dict(run.sample_stats), attrs)


def indicator_name(node: str, state: str) -> str:
    """``NODE[STATE]``: the scalar parameter whose mean is ``p(NODE = STATE | e)``."""
    return f"{node}[{state}]"


def indicator_variables(
    posterior: Mapping[str, np.ndarray], state_names: Mapping[str, Sequence[str]]
) -> dict[str, np.ndarray]:
    """Indicator parameters ``NODE[STATE]`` (float 0/1, ``(chain, draw)``) of integer-coded nodes.

    Parameters
    ----------
    posterior
        ``{node: (chain, draw) codes}`` (a chains file's variables).
    state_names
        ``attrs["state_names"]``: the states of each node. Variables not in it
        are left out.

    Returns
    -------
    dict
        ``{"NODE[STATE]": (chain, draw) float}`` for every state of every
        node, in the order of ``state_names``; the mean of one is the
        marginal posterior probability of that state.
    """
    out: dict[str, np.ndarray] = {}
    for node, states in state_names.items():
        if node not in posterior:
            continue
        codes = np.asarray(posterior[node])
        for k, state in enumerate(states):
            out[indicator_name(node, state)] = (codes == k).astype(float)
    return out


def indicator_draws(run: NetworkRun) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """All state indicators of the unobserved nodes as one array.

    Returns
    -------
    x
        ``(chain, draw, n_indicators)`` float 0/1.
    index
        ``(node, state code)`` of each indicator, in order.
    """
    card = run.network.cardinality
    index = [(int(v), k) for v in run.nodes for k in range(card[v])]
    cols = [run.codes[:, :, j] == k for j, v in enumerate(run.nodes) for k in range(card[v])]
    x = np.stack(cols, axis=2).astype(float) if cols else np.zeros((*run.codes.shape[:2], 0))
    return x, index
