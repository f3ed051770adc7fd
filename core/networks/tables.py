"""A Bayesian network with evidence, compiled to flat arrays for the compiled samplers.

Shared by the network samplers (:mod:`~mcmc.core.networks.single_site`,
:mod:`~mcmc.core.networks.blocked_gibbs`,
:mod:`~mcmc.core.networks.logic_sampling`,
:mod:`~mcmc.core.networks.likelihood_weighting`):

* the CPTs flattened into one float array: entry ``p(x_i = s | pa_i)`` sits
  at ``cpt_offset[i] + sum_j code[pa_ij] * stride_ij + s``;
* forward sampling in topological order (Henrion 1988, "Propagating
  uncertainty in Bayesian networks by probabilistic logic sampling"), with
  the evidence either checked (logic sampling) or clamped and weighted
  (likelihood weighting, Fung & Chang 1990; Shachter & Peot 1990), one
  numba kernel for both (:class:`ForwardPlan` is what those two build);
* the **groups** of nodes whose (near-)deterministic tables trap
  single-site moves (:func:`reducibility`), which blocked Gibbs draws
  together (:mod:`~mcmc.core.networks.blocks`).

Deterministic zeros and reducibility
------------------------------------
A single-site Gibbs sampler moves one node at a time, and every state it
visits has positive probability, so its path seen through any one table
``p(x_i | pa_i)`` (the evidence sliced in) is a path of one-variable steps
inside the table's *support*. If that support falls apart into pieces no
one-variable step joins, as for a deterministic OR (``either`` in ``asia``:
``(lung, tub, either) = (no, no, no)`` has no support neighbour), the chain
can never cross between the pieces: it is reducible whenever the posterior
gives mass to more than one. :func:`reducibility` finds every table with
that property (after evidence) and names its unobserved nodes as a *group*;
blocked Gibbs draws each group inside one block
(:mod:`~mcmc.core.networks.blocks`), where every step is allowed. The check
is per table, a necessary condition only (a combination of tables whose
supports are each connected could still trap the chain); R-hat across
chains started apart is the remaining safety net. Entries below
``NEAR_ZERO`` count as zeros here: a near-deterministic table traps the
chain almost as surely.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numba as nb
import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.networks.network import BayesianNetwork, Evidence
from mcmc.core.random import ChainRandom

# Entries this small count as zeros when looking for tables that trap
# single-site moves: a route through a 0.01 entry is open in theory and taken
# once in ~1e5 sweeps. With 1e-3, Gibbs misses insurance's SuperLuxury cars
# (reached only through a 0.01 entry of CarValue's table) and alarm's
# INTUBATION given VENTMACH=ZERO by 5 to 400 MCSE; with 0.02 both pass.
NEAR_ZERO = 0.02
INIT_ROUNDS = 30  # rounds of forward samples tried for a start consistent with the evidence


def code_dtype(network: BayesianNetwork) -> np.dtype:
    """The smallest signed integer type holding every state code (``int8`` for at most 127 states)."""
    return np.dtype(np.int8) if max(network.cardinality) <= 127 else np.dtype(np.int16)


@dataclass(frozen=True)
class Reducibility:
    """What :func:`reducibility` found.

    Attributes
    ----------
    groups
        Node indices of each table whose support single-site moves cannot
        cross (its child and unobserved parents), in topological order of the
        table's child.
    warnings
        One message per group, naming its nodes: single-site moves may not
        leave the region they start in.
    """

    groups: tuple[tuple[int, ...], ...]
    warnings: tuple[str, ...]


def _support_connected(table: np.ndarray) -> bool:
    """Whether the true entries of ``table`` form one piece under steps that change one axis."""
    support = np.argwhere(table)
    if len(support) <= 1:
        return True
    parent = list(range(len(support)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for axis in range(table.ndim):
        others = [a for a in range(table.ndim) if a != axis]
        first: dict[tuple[int, ...], int] = {}
        for k, row in enumerate(support):
            key = tuple(row[others])
            j = first.setdefault(key, k)
            if j != k:
                parent[find(k)] = find(j)
    root = find(0)
    return all(find(k) == root for k in range(len(support)))


def reducibility(network: BayesianNetwork, evidence: Evidence, near_zero: float = NEAR_ZERO) -> Reducibility:
    """Find the (near-)deterministic tables that can freeze single-site Gibbs.

    Parameters
    ----------
    network, evidence
        The network and ``{node: code}`` evidence.
    near_zero
        Table entries below this count as zeros.

    Returns
    -------
    Reducibility
    """
    groups: list[tuple[int, ...]] = []
    warnings: list[str] = []
    for i in range(network.n_nodes):
        scope = (*network.parents[i], i)
        table = network.cpts[i][tuple(evidence.get(v, slice(None)) for v in scope)]
        nodes = [v for v in scope if v not in evidence]
        if len(nodes) < 2 or np.all(table >= near_zero) or _support_connected(table >= near_zero):
            continue
        groups.append(tuple(nodes))
        names = ", ".join(network.nodes[v] for v in nodes)
        warnings.append(
            f"the (near-)zeros in the table of {network.nodes[i]!r} can freeze single-site Gibbs on {names}: "
            "the chain may not leave the region it starts in"
        )
    return Reducibility(tuple(groups), tuple(warnings))


@dataclass(frozen=True, eq=False)
class NetworkTables:
    """A network and its evidence compiled to flat arrays (read by the numba kernels).

    Attributes
    ----------
    network
        The network.
    evidence
        ``{node index: state code}``.
    clamp
        ``(n_nodes,)`` int64: the observed code, or ``-1`` for a free node.
    unobserved
        ``(n_unobserved,)`` int64: the free nodes in topological order; the
        last axis of every sampler's draws follows it.
    cpt, cpt_offset
        All CPTs flattened (float64), and where each node's starts.
    card
        ``(n_nodes,)`` int64 cardinalities.
    par_ptr, par, par_stride
        CSR lists of each node's parents and the stride of each in its CPT.
    """

    network: BayesianNetwork
    evidence: dict[int, int]
    clamp: np.ndarray
    unobserved: np.ndarray
    cpt: np.ndarray
    cpt_offset: np.ndarray
    card: np.ndarray
    par_ptr: np.ndarray
    par: np.ndarray
    par_stride: np.ndarray

    @cached_property
    def code_dtype(self) -> np.dtype:
        return code_dtype(self.network)

    @property
    def n_unobserved(self) -> int:
        return int(self.unobserved.size)

    def scope_strides(self, node: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The scope ``(*parents, node)`` of ``node``'s CPT and the flat stride of each."""
        lo, hi = self.par_ptr[node], self.par_ptr[node + 1]
        return (*map(int, self.par[lo:hi]), node), (*map(int, self.par_stride[lo:hi]), 1)


def compile_network(network: BayesianNetwork, evidence: Evidence | None = None) -> NetworkTables:
    """Flatten ``network``'s CPTs and ``evidence`` into :class:`NetworkTables`."""
    evidence = dict(sorted((evidence or {}).items()))
    n = network.n_nodes
    clamp = np.full(n, -1, dtype=np.int64)
    for i, s in evidence.items():
        clamp[i] = s
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([c.size for c in network.cpts])
    par_ptr = np.zeros(n + 1, dtype=np.int64)
    par_ptr[1:] = np.cumsum([len(p) for p in network.parents])
    par = np.array([p for ps in network.parents for p in ps], dtype=np.int64)
    strides = []
    for i, ps in enumerate(network.parents):
        # Row-major strides of the axes [parents..., node], in entries.
        shape = network.cpts[i].shape
        strides.extend(int(math.prod(shape[a + 1 :])) for a in range(len(ps)))
    return NetworkTables(
        network=network,
        evidence=evidence,
        clamp=clamp,
        unobserved=np.array([i for i in range(n) if i not in evidence], dtype=np.int64),
        cpt=np.concatenate([c.ravel() for c in network.cpts]).astype(np.float64),
        cpt_offset=offsets[:-1].copy(),
        card=np.array(network.cardinality, dtype=np.int64),
        par_ptr=par_ptr,
        par=par,
        par_stride=np.array(strides, dtype=np.int64),
    )



@nb.njit(cache=True, nogil=True)
def point_log_joint(x, cpt, cpt_offset, par_ptr, par, par_stride):
    """``log p(x)`` of one full configuration ``x`` from the flat tables: what the Gibbs sweeps record as ``lp``."""
    lp = 0.0
    for i in range(x.size):
        base = cpt_offset[i] + x[i]
        for k in range(par_ptr[i], par_ptr[i + 1]):
            base += x[par[k]] * par_stride[k]
        lp += np.log(cpt[base])
    return lp


def clamped_start(position: np.ndarray, tables: NetworkTables) -> tuple[np.ndarray, np.ndarray]:
    """Full configurations ``position (chains, n_nodes)`` with the evidence set, and their ``log p(x, e)``.

    The start of a Gibbs chain (single-site or blocked).

    Raises
    ------
    ValueError
        A configuration has probability zero (Gibbs could not move from it).
    """
    codes = np.array(position, dtype=np.int64, copy=True)
    for i, s in tables.evidence.items():
        codes[:, i] = s
    lp = tables.network.log_joint(codes)
    if not np.all(np.isfinite(lp)):
        raise ValueError("a starting configuration has probability zero given the evidence")
    return codes, lp


@dataclass(frozen=True, eq=False)
class ForwardPlan:
    """What the forward samplers (logic sampling, likelihood weighting) build: the tables, nothing to warn about."""

    tables: NetworkTables
    warnings: tuple[str, ...] = ()


def forward_plan(network: BayesianNetwork, evidence: Evidence | None = None) -> ForwardPlan:
    """The :class:`ForwardPlan` of ``network`` with ``evidence`` (the ``build`` of both forward samplers)."""
    return ForwardPlan(compile_network(network, evidence))

@nb.njit(cache=True, nogil=True)
def _forward_kernel(u, clamp, weighted, cpt, cpt_offset, card, par_ptr, par, par_stride, codes, log_weight, match):
    """Forward-sample ``u.shape[0]`` configurations in topological order.

    ``u (P, n)``: one uniform per node and proposal. With ``weighted`` the
    observed nodes are clamped and ``log_weight[p]`` collects ``log p(e_i |
    pa_i)`` (likelihood weighting); without, every node is drawn and
    ``match[p]`` says whether the draw agrees with the evidence (logic
    sampling). ``codes (P, n)`` receives the configurations.
    """
    n_prop, n = u.shape
    for p in range(n_prop):
        lw = 0.0
        ok = True
        for i in range(n):
            base = cpt_offset[i]
            for k in range(par_ptr[i], par_ptr[i + 1]):
                base += codes[p, par[k]] * par_stride[k]
            if weighted and clamp[i] >= 0:
                s = clamp[i]
                lw += np.log(cpt[base + s])
            else:
                r = u[p, i]
                s = card[i] - 1
                acc = 0.0
                for t in range(card[i] - 1):
                    acc += cpt[base + t]
                    if r < acc:
                        s = t
                        break
                if clamp[i] >= 0 and s != clamp[i]:
                    ok = False
            codes[p, i] = s
        log_weight[p] = lw
        match[p] = ok


def forward_sample(tables: NetworkTables, u: np.ndarray, weighted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward samples for uniforms ``u (P, n_nodes)``.

    Returns
    -------
    codes
        ``(P, n_nodes)`` int64 configurations.
    log_weight
        ``(P,)``: ``log p(e | sampled parents)`` when ``weighted`` (evidence
        clamped; ``-inf`` for an impossible draw), else 0.
    match
        ``(P,)`` bool: the draw agrees with the evidence (always true when
        ``weighted``).
    """
    u = np.ascontiguousarray(u, dtype=np.float64)
    p = u.shape[0]
    codes = np.empty((p, tables.network.n_nodes), dtype=np.int64)
    log_weight = np.empty(p)
    match = np.empty(p, dtype=np.bool_)
    with np.errstate(divide="ignore"):
        _forward_kernel(
            u, tables.clamp, weighted, tables.cpt, tables.cpt_offset, tables.card,
            tables.par_ptr, tables.par, tables.par_stride, codes, log_weight, match,
        )  # fmt: skip
    return codes, log_weight, match


def initial_states(tables: NetworkTables, rng: ChainRandom) -> np.ndarray:
    """Dispersed starts: a forward sample per chain with the evidence clamped, redrawn while impossible.

    Each chain takes the first draw of positive weight from its own stream
    (give ``rng`` a stream of its own, as the driver's ``stream=1``), so
    starts are independent draws from the prior restricted to configurations
    consistent with the evidence.

    Returns
    -------
    ndarray, shape (chains, n_nodes), int64

    Raises
    ------
    UsageError
        No chain-consistent start after ``INIT_ROUNDS`` rounds (evidence that
        is impossible, or possible but rarer than about one in ``2^INIT_ROUNDS``).
    """
    n = tables.network.n_nodes
    out = np.empty((rng.chains, n), dtype=np.int64)
    need = np.ones(rng.chains, dtype=bool)
    for r in range(INIT_ROUNDS):
        # Round r tries 2^r proposals for each chain still looking: the size
        # depends on r only, so a chain's start depends on its own stream only.
        size = 1 << min(r, 16)
        rows = np.flatnonzero(need)
        u = rng.uniform((size, n), mask=need)
        codes, lw, _ = forward_sample(tables, u.reshape(-1, n), weighted=True)
        good = np.isfinite(lw).reshape(rows.size, size)
        for j, c in enumerate(rows):
            hit = np.flatnonzero(good[j])
            if hit.size:
                out[c] = codes[j * size + hit[0]]
                need[c] = False
        if not need.any():
            return out
    raise UsageError(
        f"{tables.network.source or tables.network.name}: no starting state consistent with the evidence in "
        f"{sum(1 << min(r, 16) for r in range(INIT_ROUNDS))} forward samples per chain: the evidence is impossible "
        "or too rare for a forward-sampled start"
    )
