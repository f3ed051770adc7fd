"""Which nodes blocked Gibbs draws together: near-deterministic groups, grown under a clique budget.

Jensen, Kong & Kjaerulff (1995), "Blocking Gibbs sampling in very large
probabilistic expert systems" (Int. J. Human-Computer Studies 42): a Gibbs
sampler that moves one node at a time is trapped by (near-)deterministic
tables, whose support single-site moves cannot cross; a *block* that holds
every node of such a table, drawn jointly from its exact conditional given
everything outside it, crosses freely. Drawn by forward filtering /
backward sampling on the block's junction tree
(:mod:`~mcmc.core.networks.blocked_gibbs`), a block costs in proportion to
its largest clique table, not to its joint state count, so blocks can be
large: the larger, the closer a sweep is to an independent draw.

The automatic choice (:func:`choose_blocks` with ``"auto"``):

1. if the junction tree of *all* unobserved nodes fits the budget (by
   default :data:`DEFAULT_BUDGET`, ``10**6`` entries), they are
   the one block: its boundary is the evidence only, so every sweep is an
   exact independent draw from the posterior, at about the cost of a
   single-site sweep (the tree's clean cliques are drawn by bisection of
   tables cumulated once; :mod:`~mcmc.core.networks.blocked_gibbs`). On
   alarm, insurance, child and sachs that gives 30 to 1000 times the ESS per
   second of single-site Gibbs (``bench/networks.py``), so it is the choice
   whether or not anything traps single-site moves;
2. otherwise the groups of nodes whose table traps single-site moves, found
   by :func:`~mcmc.core.networks.tables.reducibility` (entries below
   ``near_zero`` count as zeros), merged where they share a node, each seed
   a block that grows along the domain graph (the moral graph of the free
   nodes, i.e. along the junction tree): next the neighbour with the most
   edges into the block (then the smaller node index), taken whole with the
   group it belongs to, while the block's largest clique table stays within
   the budget (by default :data:`GROWN_BUDGET`, ``10**4`` entries: such a
   block's boundary moves, so a sweep recomputes its tables, and smaller
   cliques make cheaper sweeps); a group too wide to block within the
   budget is named in a warning;
3. the nodes left over are updated singly through their Markov blanket.

A network too wide for one block and without such groups gets no block at
all: single-site Gibbs (:mod:`~mcmc.core.networks.single_site`) then does the
work.

The choice can be overridden by a specification string (:func:`parse_blocks`):
``"auto"``, ``"single"`` (no blocks), or blocks of node names
``"A+B+C;D+E"`` (the nodes not named are updated singly).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcmc.core.errors import UsageError
from mcmc.core.networks import junction_tree as jt
from mcmc.core.networks.network import BayesianNetwork, Evidence
from mcmc.core.networks.tables import NEAR_ZERO, reducibility

DEFAULT_BUDGET = jt.DEFAULT_BUDGET  # entries of the largest clique table of one block of every free node
# ... and of a block grown from a near-deterministic group, when no budget is given. Its boundary moves, so a
# sweep recomputes its tables: the smaller cliques make the cheaper sweeps. On a generated 100-node network too
# wide for one block (tests/core/random_networks.py, random_network(100, 7, window=25, max_parents=4)), blocks
# grown to largest cliques of 10^4, 10^5 and 10^6 entries cost 0.7, 5.6 and 80 ms a sweep; the first passed its
# checks (4 x 1000 draws) in 6 s, the second in 46 s, the third would take 10 minutes. The whole network's one
# exact block costs a few bisections per clique, whatever their size, so it keeps the larger budget.
GROWN_BUDGET = 10**4

BlockSpec = str | tuple[tuple[int, ...], ...]
"""``"auto"``, ``"single"``, or blocks of node indices."""


@dataclass(frozen=True, eq=False)
class Block:
    """One block: nodes drawn jointly from their conditional given the rest.

    Attributes
    ----------
    nodes
        Node indices, in topological order.
    tree
        The junction tree of the block with every other node clamped.
    groups
        The near-deterministic groups (from ``reducibility``) inside the block.
    boundary
        The unobserved nodes outside the block its conditional depends on
        (its Markov blanket less the block and the evidence). Empty: the
        block's conditional is fixed, and each draw of it is exact.
    """

    nodes: tuple[int, ...]
    tree: jt.JunctionTree
    groups: tuple[tuple[int, ...], ...]
    boundary: tuple[int, ...]

    @property
    def largest_clique(self) -> int:
        """Entries of the block's largest clique table."""
        return self.tree.largest


@dataclass(frozen=True, eq=False)
class BlockPlan:
    """The update units of a blocked Gibbs sweep.

    Attributes
    ----------
    network, evidence
        The network and ``{node: code}`` evidence.
    spec
        ``"auto"``, ``"single"`` or ``"custom"``: how the blocks were chosen.
    budget
        The largest clique table a block may have, in entries (one block of
        every free node, or a named block).
    grown_budget
        The largest clique table of a block grown from a near-deterministic group.
    units
        The scan order: each unit's nodes (a block, or one node), ordered
        by their first node in topological order.
    blocks
        The units of more than one node, as :class:`Block`.
    groups
        Every near-deterministic group found (whether blocked or not).
    warnings
        Messages for the user: what was blocked and why, and what could not be.
    """

    network: BayesianNetwork
    evidence: dict[int, int]
    spec: str
    budget: int
    grown_budget: int
    units: tuple[tuple[int, ...], ...]
    blocks: tuple[Block, ...]
    groups: tuple[tuple[int, ...], ...]
    warnings: tuple[str, ...]

    def summary(self) -> list[dict[str, Any]]:
        """One JSON-serialisable entry per block: its nodes, its largest clique (entries and nodes), its cliques.

        ``exact`` says the block's boundary is the evidence only, so each of
        its draws is an independent draw of its nodes' posterior.
        """
        names = self.network.nodes
        return [
            {
                "nodes": [names[v] for v in b.nodes],
                "largest_clique": b.largest_clique,
                "largest_clique_nodes": [names[v] for v in b.tree.largest_clique],
                "cliques": len(b.tree.cliques),
                "boundary": len(b.boundary),
                "exact": not b.boundary,
            }
            for b in self.blocks
        ]


def parse_blocks(network: BayesianNetwork, spec: str | None) -> BlockSpec:
    """Read a block specification: ``"auto"`` (or empty), ``"single"``, or ``"A+B+C;D+E"``.

    Returns
    -------
    ``"auto"``, ``"single"``, or a tuple of blocks of node indices (each in
    topological order; empty parts are ignored).

    Raises
    ------
    UsageError
        An unknown node (named, with the closest names), or a node in two blocks.
    """
    text = (spec or "auto").strip()
    if text.lower() in ("auto", "single"):
        return text.lower()
    index = {name: i for i, name in enumerate(network.nodes)}
    blocks: list[tuple[int, ...]] = []
    seen: set[int] = set()
    for part in text.split(";"):
        names = [n.strip() for n in part.split("+") if n.strip()]
        if not names:
            continue
        block: list[int] = []
        for name in names:
            if name not in index:
                close = difflib.get_close_matches(name, network.nodes, n=3)
                hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
                raise UsageError(f"blocks {text!r}: unknown node {name!r} (not in the network){hint}")
            v = index[name]
            if v in seen:
                raise UsageError(f"blocks {text!r}: node {name!r} is named twice")
            seen.add(v)
            block.append(v)
        blocks.append(tuple(sorted(block)))
    return tuple(blocks)


def _merge_groups(groups: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Groups that share a node merged (they must share a block), each sorted, ordered by first node."""
    owner: dict[int, int] = {}

    def find(v: int) -> int:
        while owner[v] != v:
            owner[v] = owner[owner[v]]
            v = owner[v]
        return v

    for g in groups:
        for v in g:
            owner.setdefault(v, v)
        for v in g[1:]:
            a, b = find(g[0]), find(v)
            if a != b:
                owner[max(a, b)] = min(a, b)
    merged: dict[int, list[int]] = {}
    for v in sorted(owner):
        merged.setdefault(find(v), []).append(v)
    return sorted((tuple(m) for m in merged.values()), key=lambda m: m[0])


def _split(
    network: BayesianNetwork, seed: tuple[int, ...], groups: Sequence[tuple[int, ...]], budget: int
) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """A merged group too wide for the budget, as the largest unions of its groups that fit.

    Groups are taken in turn, each joined with the parts it overlaps when the
    union fits; a group that fits with none of them is left out (returned
    second), its nodes then updated singly or grown into a part.
    """
    parts: list[set[int]] = []
    lost: list[tuple[int, ...]] = []
    for g in groups:
        if not set(g) <= set(seed):
            continue
        touching = [p for p in parts if p & set(g)]
        union = set(g).union(*touching)
        if jt.largest_clique(network, union, stop_above=budget) <= budget:
            parts = [p for p in parts if not p & set(g)] + [union]
        else:
            lost.append(g)
    return [tuple(sorted(p)) for p in parts], lost


def _grow(
    network: BayesianNetwork,
    seed: tuple[int, ...],
    adjacent: dict[int, set[int]],
    taken: set[int],
    whole: dict[int, tuple[int, ...]],
    budget: int,
) -> set[int]:
    """Grow ``seed`` along ``adjacent`` while its largest clique table stays within ``budget``."""
    block = set(seed)
    rejected: set[int] = set()
    while True:
        frontier = {u for v in block for u in adjacent[v]} - block - taken - rejected
        if not frontier:
            return block
        # The most tightly coupled neighbour first: it is the one whose
        # single-site moves the block slows down most.
        cand = max(frontier, key=lambda u: (len(adjacent[u] & block), -u))
        add = set(whole.get(cand, (cand,)))  # a group's nodes never split between units
        if jt.largest_clique(network, block | add, stop_above=budget) <= budget:
            block |= add
        else:
            rejected |= add


def _block(network: BayesianNetwork, evidence: dict[int, int], nodes, groups, budget: int, what: str) -> Block:
    nodes = tuple(sorted(nodes))
    tree = jt.build(network, nodes, budget, what)
    inside = set(nodes)
    boundary = sorted(
        {v for j in tree.factors for v in (*network.parents[j], j) if v not in inside and v not in evidence}
    )
    return Block(nodes, tree, tuple(g for g in groups if set(g) <= inside), tuple(boundary))


def choose_blocks(
    network: BayesianNetwork,
    evidence: Evidence | None = None,
    spec: str | BlockSpec | None = "auto",
    budget: int | None = None,
    near_zero: float = NEAR_ZERO,
) -> BlockPlan:
    """The update units of blocked Gibbs for ``network`` given ``evidence``.

    Parameters
    ----------
    network, evidence
        The network and ``{node: code}`` evidence.
    spec
        ``"auto"`` (see the module docstring), ``"single"``, a string
        ``"A+B+C;D+E"``, or blocks of node indices (:func:`parse_blocks`).
    budget
        Largest clique table of a block, in entries; ``None``: ``DEFAULT_BUDGET``
        (``10**6``) for one block of every free node and for named blocks,
        ``GROWN_BUDGET`` (``10**4``) for blocks grown from near-deterministic
        groups (their tables are recomputed every sweep).
    near_zero
        Table entries below this count as zeros when looking for the groups
        that trap single-site moves.

    Observed nodes named in a block are left out of it (a block left with
    one node is updated singly).

    Raises
    ------
    UsageError
        A bad specification: unknown node, a node named twice.
    CliqueBudgetError
        A block given by name whose largest clique exceeds ``budget``.
    """
    evidence = dict(sorted((evidence or {}).items()))
    grown = GROWN_BUDGET if budget is None else int(budget)
    budget = DEFAULT_BUDGET if budget is None else int(budget)
    if isinstance(spec, str) or spec is None:
        spec = parse_blocks(network, spec)
    names = network.nodes
    free = [v for v in range(network.n_nodes) if v not in evidence]
    red = reducibility(network, evidence, near_zero=near_zero)
    groups = red.groups
    warnings: list[str] = []
    chosen: list[Block] = []
    if spec == "single":
        mode = "single"
        warnings.extend(red.warnings)
    elif spec == "auto":
        mode = "auto"
        seeds = _merge_groups(groups)
        if len(free) > 1 and jt.largest_clique(network, free, stop_above=budget) <= budget:
            chosen.append(_block(network, evidence, free, groups, budget, "block"))
        elif seeds:
            adjacent = jt.domain_graph(network, free)
            taken: set[int] = set()
            fitting: list[tuple[int, ...]] = []
            for seed in seeds:
                if jt.largest_clique(network, seed, stop_above=grown) <= grown:
                    fitting.append(seed)
                    continue
                parts, lost = _split(network, seed, groups, grown)
                fitting.extend(parts)
                for g in lost:
                    label = ", ".join(names[v] for v in g)
                    warnings.append(
                        f"the near-deterministic group {label} is too wide to block "
                        f"with its neighbours within {grown} clique entries: single-site moves may freeze on it; "
                        "check R-hat across chains"
                    )
            whole = {v: s for s in fitting for v in s}
            for seed in sorted(fitting, key=lambda s: s[0]):
                if seed[0] in taken:
                    continue  # grown into an earlier block
                block = _grow(network, seed, adjacent, taken, whole, grown)
                taken |= block
                chosen.append(_block(network, evidence, block, groups, grown, "block"))
    else:
        mode = "custom"
        for named in spec:
            # An observed node is not sampled: it leaves its block (whose
            # conditional then holds it clamped), so one list of blocks
            # serves every evidence set.
            nodes = tuple(v for v in named if v not in evidence)
            if len(nodes) > 1:
                label = "+".join(names[v] for v in nodes)
                chosen.append(_block(network, evidence, nodes, groups, budget, f"block {label!r}"))
    unit_of = {v: k for k, b in enumerate(chosen) for v in b.nodes}
    for g in groups:
        if mode == "custom" and len({unit_of.get(v, -1 - v) for v in g}) > 1:
            label = ", ".join(names[v] for v in g)
            warnings.append(
                f"a (near-)deterministic table can freeze single-site Gibbs on {label}, which are not in one "
                "block: the chain may not leave the region it starts in"
            )
    chosen.sort(key=lambda b: b.nodes[0])
    singles = [(v,) for v in free if v not in unit_of]
    units = tuple(sorted([b.nodes for b in chosen] + singles, key=lambda u: u[0]))
    return BlockPlan(network, evidence, mode, budget, grown, units, tuple(chosen), tuple(groups), tuple(warnings))
