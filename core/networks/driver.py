"""The one driver of the network samplers: evidence checked, chains run, the chains file's form of the result.

:func:`sample_network` is the one call behind ``mcmc sample --target
NET.bif``: it checks the evidence (exactly, refusing probability zero:
:func:`mcmc.core.networks.exact.log_evidence`),
resolves the sampler by name in the registry
(:data:`mcmc.core.samplers.NETWORK_SAMPLERS`), builds what the sampler
needs from the network and its settings (``build``), runs every chain
(``init``, then ``sample``: warm-up and draws for a Markov chain, the draws
alone for independent samplers) and returns a :class:`NetworkRun`. There is
no dispatch on the sampler's name: every sampler is a module of the protocol
in :mod:`mcmc.core.networks`. :func:`to_chains` turns the run into the
chains file's :class:`~mcmc.core.chains.Chains`.

Chains file layout (``docs/formats.md``): one variable per unobserved node,
named as the node, holding integer state codes ``(chain, draw)``; the state
names in ``attrs["state_names"] = {node: [state, ...]}`` (code ``k`` is the
``k``-th name); the evidence in ``attrs["observed"] = {node: state}``; what
the sampler adds (``run_attrs``: gibbs's blocks, rejection's acceptance
rates, likelihood weighting's ``attrs["weighted"] = true`` and the Kish ESS
of its ``log_weight`` statistic). The indicators ``NODE[STATE]`` the
diagnostics read are :mod:`~mcmc.core.networks.indicators`'.

Reproducibility: as the main driver, chain ``i`` depends only on the seed
and ``i`` (samplers draw from ``ChainRandom(seed, chain_ids)``, starting
states from ``stream=1``).

Going on: with ``problem`` the run carries a resume section
(:mod:`mcmc.core.resume`, kind ``network``: the sampler's ``State``, every
chain's place in its stream, the sweeps done and asked for), and ``resume``
goes on from one, to the bytes of the run that never stopped. The sweeps run
in blocks (a multiple of ``thin``) with a checkpoint polled between them; a
sampler's ``sample`` reads each chain's stream in the same order whatever the
blocks, so the blocks change no byte.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.core.chains import Chains, Resume
from mcmc.core.errors import UsageError
from mcmc.core.memory import require_memory
from mcmc.core.networks.evidence import format_evidence, observed_attr, require_unobserved
from mcmc.core.networks.exact import log_evidence as exact_log_evidence
from mcmc.core.networks.network import BayesianNetwork, Evidence
from mcmc.core.networks.tables import initial_states
from mcmc.core.random import ChainRandom, entropy_seed
from mcmc.core.resume import SamplerResume, sampler_section
from mcmc.core.samplers import NETWORK, NETWORK_SAMPLERS, get_sampler

if TYPE_CHECKING:
    from mcmc.core.samplers.driver import Checkpoint

__all__ = ["NetworkRun", "get_network_sampler", "require_network_memory", "sample_network", "to_chains"]

#: Iterations between two polls of a checkpoint, each block one call of the sampler's ``sample``: sweeps of a Markov
#: chain (rounded to a multiple of thin), draws of the independent samplers.
POLL_SWEEPS = 256
POLL_DRAWS = 4096


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
        log evidence, ``None`` when the network is too wide for exact
        inference) and the sampler's own (``run_attrs``): ``blocks`` for
        gibbs, ``acceptance_rate`` per chain for rejection, ``ess_weights``
        per chain and ``ess_weights_total`` for likelihood weighting.
    warnings
        Messages for the user (deterministic tables that can freeze
        single-site Gibbs, and what was done about them).
    timings
        ``warmup_time_s`` and ``sampling_time_s`` (wall clock): never in the
        chains file (same seed, same bytes).
    warmup_codes, warmup_stats
        With ``keep_warmup``, the warm-up sweeps as ``codes`` and
        ``sample_stats`` hold the draws (``None`` otherwise).
    resume
        With a ``problem``, what the run needs to go on (:mod:`mcmc.core.resume`).
    """

    network: BayesianNetwork
    evidence: dict[int, int]
    nodes: np.ndarray
    codes: np.ndarray
    sample_stats: dict[str, np.ndarray]
    attrs: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    warmup_codes: np.ndarray | None = None
    warmup_stats: dict[str, np.ndarray] | None = None
    resume: Resume | None = None

    @property
    def weighted(self) -> bool:
        return "log_weight" in self.sample_stats


def get_network_sampler(name: str) -> ModuleType:
    """The module of the network sampler registered as ``name``.

    Raises
    ------
    UsageError
        ``name`` samples no Bayesian network (the message lists those that do).
    """
    if name not in NETWORK_SAMPLERS:
        raise UsageError(f"unknown sampler {name!r} for a Bayesian network; use one of {', '.join(NETWORK_SAMPLERS)}")
    return get_sampler(name, NETWORK)  # type: ignore[return-value]


def _build(module: ModuleType, network: BayesianNetwork, evidence: dict[int, int], params: Mapping[str, Any]) -> Any:
    """``module.build(network, evidence, **params)``, refusing a setting the sampler does not take."""
    taken = [p for p in inspect.signature(module.build).parameters if p not in ("network", "evidence")]
    unknown = sorted(set(params) - set(taken))
    if unknown:
        have = f"it takes {', '.join(taken)}" if taken else "it takes none"
        raise UsageError(f"{module.NAME} on a Bayesian network has no setting {', '.join(unknown)}; {have}")
    return module.build(network, evidence, **params)


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
    params: Mapping[str, Any] | None = None,
    keep_warmup: bool = False,
    problem: Mapping[str, Any] | None = None,
    resume: tuple[SamplerResume, Chains] | None = None,
    checkpoint: Checkpoint | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> NetworkRun:
    """Sample ``p(x | e)`` of a Bayesian network with ``sampler``.

    Parameters
    ----------
    network, evidence
        The network and ``{node index: state code}`` (see
        :func:`~mcmc.core.networks.evidence.parse_evidence`).
    sampler
        A name of :data:`~mcmc.core.samplers.NETWORK_SAMPLERS`: ``"gibbs"``,
        ``"rejection"`` or ``"likelihood-weighting"``.
    chains, chain_ids
        Number of chains, or their global indices (chain ``i`` depends only
        on ``seed`` and ``i``).
    warmup, draws, thin
        Sweeps discarded, sweeps run (every ``thin``-th kept) for a Markov
        chain; the independent samplers ignore ``warmup`` and ``thin`` and
        make ``draws`` draws.
    seed
        Non-negative integer; ``None`` draws one from OS entropy.
    init
        A Markov chain's starting configurations ``(chains, n_nodes)`` of
        state codes (evidence nodes are overwritten); default: a forward
        sample per chain consistent with the evidence.
    params
        The sampler's settings, the keywords of its ``build`` (gibbs:
        ``blocks``, ``budget``, ``near_zero``, ``scan``).
    keep_warmup
        A Markov chain: keep the warm-up sweeps (``NetworkRun.warmup_codes``
        and ``warmup_stats``: ``lp`` and the sampler's statistics).
    problem, resume, checkpoint
        As :func:`mcmc.core.samplers.driver.run`'s: with ``problem`` the run
        carries what it needs to go on (``NetworkRun.resume``); ``resume``
        goes on from a run read back (its resume section and its chains
        file: no start, no warm-up, the saved state and streams), to the
        bytes of the run that never stopped; ``checkpoint`` is polled between
        blocks of sweeps (with ``None`` during warm-up).
    progress
        Called as ``progress(done, total)`` after every block of sweeps (or
        draws), warm-up included.

    Returns
    -------
    NetworkRun

    Raises
    ------
    InputError
        The evidence has probability zero.
    UsageError
        Unknown sampler or setting, bad counts, ``init`` for independent
        draws, a starting configuration of probability zero, or evidence too
        rare for forward sampling to find a start; with ``resume``, more
        draws done than ``draws`` or a count that is not a multiple of ``thin``.
    InputError
        With ``resume``: a resume section that does not fit the sampler.
    """
    module = get_network_sampler(sampler)
    if warmup < 0 or draws < 1 or thin < 1:
        raise UsageError(f"need warmup >= 0, draws >= 1 and thin >= 1 (got {warmup}, {draws}, {thin})")
    if seed is None:
        seed = entropy_seed()
    if seed < 0:
        raise UsageError(f"seed must be non-negative, got {seed}")
    ids = tuple(range(chains)) if chain_ids is None else tuple(int(i) for i in chain_ids)
    if not ids:
        raise UsageError("need at least one chain")
    if init is not None and not module.MARKOV:
        raise UsageError(f"{sampler} makes independent draws: it takes no starting configurations")
    evidence = dict(sorted((evidence or {}).items()))
    require_unobserved(network, evidence)
    require_network_memory(network, sampler, len(ids), draws, thin)
    log_evidence = exact_log_evidence(network, evidence)  # None: too wide for exact inference
    check_cost = getattr(module, "check_cost", None)  # optional: refuse a run beyond reach before any work
    if check_cost is not None:
        check_cost(network, evidence, log_evidence, len(ids), draws)
    plan = _build(module, network, evidence, params or {})
    tables = plan.tables
    rng = ChainRandom(seed, ids)
    if not module.MARKOV:
        warmup, thin = 0, 1
    attrs: dict[str, Any] = {
        "sampler": sampler, "target": network.source or network.name, "seed": int(seed), "chains": len(ids),
        "chain_ids": list(ids), "draws": draws, "observed": observed_attr(network, evidence),
        "log_evidence": log_evidence, "warmup": warmup, "thin": thin,
    }  # fmt: skip
    saved, previous = resume if resume is not None else (None, None)
    warm: tuple[np.ndarray, dict[str, np.ndarray]] | None = None
    t0 = time.perf_counter()
    if saved is not None:
        if saved.done > draws or saved.done % thin:
            raise UsageError(f"{saved.source}: {saved.done} draws per chain cannot go on to {draws} with thin {thin}")
        saved.restore_rng(rng)
        state = saved.state(module.State(*(None,) * len(module.State._fields)))
    elif module.MARKOV:
        if init is None:
            start = initial_states(tables, ChainRandom(seed, ids, stream=1))  # UsageError: no start found
        else:
            start = np.asarray(init)
            if start.shape != (len(ids), network.n_nodes):
                raise UsageError(f"init has shape {start.shape}; expected ({len(ids)}, {network.n_nodes})")
        try:
            state = module.init(start, plan)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        kept: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []
        swept = 0
        for n in _blocks(0, warmup, POLL_SWEEPS):
            state, codes, stats = module.sample(rng, state, plan, n)
            swept += n
            if keep_warmup:
                kept.append((codes, stats))
            if progress is not None:
                progress(swept, warmup + draws)
            if checkpoint is not None:
                checkpoint.poll(None)
        if kept:
            warm = _joined(kept)
    else:
        state = module.init(None, plan)
    t1 = time.perf_counter()

    parts: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []
    if previous is not None:
        names = [network.nodes[v] for v in tables.unobserved]
        if set(previous.posterior) != set(names) or previous.n_chains != len(ids):
            raise UsageError(f"{saved.source}: its chains are not this network's {len(ids)} chains")  # type: ignore[union-attr]
        parts.append((_codes(previous.posterior, names, tables.code_dtype), dict(previous.sample_stats)))
        if previous.warmup_posterior:
            warm = (_codes(previous.warmup_posterior, names, tables.code_dtype), dict(previous.warmup_sample_stats))

    def run_so_far(done: int) -> NetworkRun:
        """The run after ``done`` sweeps (or draws), with what it needs to go on."""
        codes, stats = _joined(parts)
        out = dict(attrs, draws=done, **module.run_attrs(plan, stats))
        section = None
        if problem is not None:
            section = sampler_section(problem, draws, done, state, {}, rng)
            section.header["kind"] = "network"
        return NetworkRun(network, evidence, tables.unobserved.copy(), codes, stats, out, plan.warnings, {},
                          *(warm or (None, None)), section)  # fmt: skip

    done = 0 if saved is None else saved.done
    block = thin * max(1, POLL_SWEEPS // thin) if module.MARKOV else POLL_DRAWS
    for n in _blocks(done, draws, block):
        state, codes, stats = module.sample(rng, state, plan, n, thin)
        parts.append((codes, stats))
        done += n
        if progress is not None:
            progress(warmup + done, warmup + draws)
        if checkpoint is not None and done < draws:
            checkpoint.poll(lambda d=done: to_chains(run_so_far(d)))
    result = run_so_far(draws)
    result.timings.update(warmup_time_s=t1 - t0, sampling_time_s=time.perf_counter() - t1)
    return result


def _blocks(start: int, stop: int, size: int) -> list[int]:
    """Lengths of the blocks from ``start`` to ``stop``, each at most ``size`` and ending on a multiple of it."""
    out = []
    while start < stop:
        n = min(size - start % size, stop - start)
        out.append(n)
        start += n
    return out


def _joined(parts: list[tuple[np.ndarray, dict[str, np.ndarray]]]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Blocks of ``(codes, stats)`` joined along the draw axis."""
    if len(parts) == 1:
        return parts[0]
    return (np.concatenate([c for c, _ in parts], axis=1),
            {k: np.concatenate([st[k] for _, st in parts], axis=1) for k in parts[0][1]})  # fmt: skip


def _codes(variables: Mapping[str, np.ndarray], names: list[str], dtype: np.dtype) -> np.ndarray:
    """``(chain, draw, node)`` state codes from a chains file's one variable per node."""
    return np.stack([np.asarray(variables[n]) for n in names], axis=2).astype(dtype)


def require_network_memory(network: BayesianNetwork, sampler: str, chains: int, draws: int, thin: int = 1) -> None:
    """Refuse, before sampling, draws that would not fit: ``(chain, draw, node)`` codes and the indicators made of them.

    Raises
    ------
    InputError
        Naming ``--chains``/``--draws`` and the memory asked for (:func:`mcmc.core.memory.require_memory`).
    UsageError
        ``sampler`` samples no network.
    """
    kept = -(-draws // max(thin, 1)) if get_network_sampler(sampler).MARKOV else draws
    per_draw = network.n_nodes + sum(network.cardinality)  # state codes (int64), then one float per NODE[STATE]
    require_memory(
        chains * kept * per_draw, 8,
        f"{chains} chains x {kept} draws of {network.n_nodes} nodes ({sum(network.cardinality)} states)",
        "--chains, --draws",
    )  # fmt: skip


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
    warm_post, warm_stats = {}, {}
    if run.warmup_codes is not None:
        warm_post = {net.nodes[v]: np.ascontiguousarray(run.warmup_codes[:, :, j]) for j, v in enumerate(run.nodes)}
        warm_stats = dict(run.warmup_stats or {})
    return Chains(posterior, dict(run.sample_stats), attrs, warmup_posterior=warm_post,
                  warmup_sample_stats=warm_stats, resume=run.resume)
