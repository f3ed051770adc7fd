"""Junction trees of a Bayesian network restricted to free nodes, the other nodes clamped.

Given a set ``B`` of *free* nodes and values for every other node (evidence,
or the current state of a Gibbs chain), the conditional law of ``x_B`` is

    p(x_B | x_-B) ∝ prod_{j : scope(j) meets B} p(x_j | x_pa(j)),

a product of the CPTs of the nodes of ``B`` and of their children, each
sliced at the clamped values of its other nodes. Its *domain graph* joins
two free nodes when some such CPT holds both (the moral graph restricted to
``B``: clamping a node cuts the paths through it). :func:`build` triangulates
that graph by greedy elimination and joins the cliques into a tree with the
running-intersection property (Lauritzen & Spiegelhalter 1988, "Local
computations with probabilities on graphical structures and their
application to expert systems", JRSS B 50; Jensen, Lauritzen & Olesen 1990).
The tree depends on ``B`` and on which nodes are observed, never on the
clamped values, so a Gibbs sampler builds it once per block and only
recomputes the potentials as the block's boundary moves.

Triangulation: the greedy **min-fill** order (Kjaerulff 1990), as
:func:`~mcmc.core.networks.variable_elimination.min_fill_order`: next the
node whose elimination adds the fewest fill edges, ties broken by the
smaller clique table, then by the smaller node index, so a network always
gives the same tree. Each eliminated node with its remaining neighbours is
a clique; each clique hangs from the clique of the first-eliminated of its
other nodes (the *elimination tree*, a junction tree); cliques contained in
a neighbour are merged into it. Disconnected pieces (clamping can cut the
graph) hang from the root through empty separators.

Calibration (:func:`calibrate`): Hugin-style, with the messages rescaled to
a maximum of one and the scale kept in logs, so ``log p(e)`` does not
underflow on long chains of small probabilities. One collect pass to the
root gives the normaliser, one distribute pass the exact marginal of every
clique, hence of every free node (:func:`exact_marginals`). The cost grows
with the largest clique table, not with the number of joint states of
``B``; a tree whose largest clique exceeds a budget (default ``10**6``
entries) raises :class:`CliqueBudgetError`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.networks.evidence import impossible
from mcmc.core.networks.network import BayesianNetwork, Evidence

DEFAULT_BUDGET = 10**6  # entries of the largest clique table a junction tree may have


class CliqueBudgetError(UsageError):
    """A junction tree whose largest clique table exceeds the budget (the network is too wide).

    Parameters
    ----------
    entries
        Entries of the largest clique table of the greedy triangulation.
    nodes
        Names of that clique's nodes.
    budget
        The budget it exceeds.
    what
        What needed the tree (``"exact inference"``, ``"block 'A+B'"``,
        ``"variable elimination"``, whose factors are cliques of its
        elimination order).
    advice
        What to do, appended to the message.
    """

    def __init__(
        self, entries: int, nodes: Sequence[str], budget: int, what: str = "exact inference", advice: str = ""
    ) -> None:
        self.entries = int(entries)
        self.nodes = tuple(nodes)
        self.budget = int(budget)
        self.what = what
        self.advice = advice
        shown = ", ".join(self.nodes[:12]) + (", ..." if len(self.nodes) > 12 else "")
        kind = "a factor" if what == "variable elimination" else "a junction tree clique"
        super().__init__(
            f"{what} needs {kind} of {len(self.nodes)} nodes ({shown}) with {self.entries} table "
            f"entries, over the budget of {self.budget}: the network is too wide here"
            + (f"; {advice}" if advice else "")
        )

    def __reduce__(self) -> tuple[type[CliqueBudgetError], tuple[int, tuple[str, ...], int, str, str]]:
        # Raised on a Dask worker, it travels back pickled: rebuild it from its fields.
        return type(self), (self.entries, self.nodes, self.budget, self.what, self.advice)


def block_factors(network: BayesianNetwork, free: Iterable[int]) -> tuple[int, ...]:
    """The CPTs (named by their child node) whose scope meets ``free``: the free nodes' and their children's.

    The other CPTs are constant once the nodes outside ``free`` are clamped,
    so they drop out of the conditional of ``x_free``.
    """
    return tuple(sorted({j for v in free for j in (v, *network.children[v])}))


def domain_graph(network: BayesianNetwork, free: Iterable[int]) -> dict[int, set[int]]:
    """Adjacency of the free nodes: two are joined when some CPT of :func:`block_factors` holds both."""
    free = set(free)
    adjacent: dict[int, set[int]] = {v: set() for v in sorted(free)}
    for j in block_factors(network, free):
        inside = [v for v in (*network.parents[j], j) if v in free]
        for a in inside:
            adjacent[a].update(b for b in inside if b != a)
    return adjacent


@dataclass(frozen=True)
class Elimination:
    """A greedy elimination order and its cliques.

    Attributes
    ----------
    order
        The nodes in the order eliminated.
    cliques
        ``cliques[k]``: ``order[k]`` and its neighbours when eliminated, sorted.
    largest
        Entries of the largest clique table, and that clique.
    complete
        False when :func:`eliminate` stopped early because a clique exceeded
        ``stop_above``.
    """

    order: tuple[int, ...]
    cliques: tuple[tuple[int, ...], ...]
    largest: tuple[int, tuple[int, ...]]
    complete: bool


def eliminate(
    adjacent: Mapping[int, set[int]], cardinality: Sequence[int], stop_above: float = math.inf
) -> Elimination:
    """Greedy min-fill elimination of a graph (ties: smaller clique table, then smaller node index).

    Parameters
    ----------
    adjacent
        ``{node: neighbours}``, symmetric; not modified.
    cardinality
        States of every node (indexed by node).
    stop_above
        Stop as soon as a clique table has more entries than this (the caller
        only wants to know whether the graph fits a budget).
    """
    adj = {v: set(nb) for v, nb in adjacent.items()}

    def cost(v: int) -> tuple[int, int, int]:
        nb = sorted(adj[v])
        fill = sum(1 for a in range(len(nb)) for b in range(a + 1, len(nb)) if nb[b] not in adj[nb[a]])
        return fill, math.prod(cardinality[u] for u in nb) * cardinality[v], v

    costs = {v: cost(v) for v in adj}
    order: list[int] = []
    cliques: list[tuple[int, ...]] = []
    largest: tuple[int, tuple[int, ...]] = (0, ())
    while costs:
        v = min(costs.values())[2]
        nb = adj.pop(v)
        clique = tuple(sorted((v, *nb)))
        entries = costs.pop(v)[1]
        order.append(v)
        cliques.append(clique)
        if entries > largest[0]:
            largest = (entries, clique)
        if entries > stop_above:
            return Elimination(tuple(order), tuple(cliques), largest, False)
        for u in nb:
            adj[u].discard(v)
            adj[u].update(w for w in nb if w != u)
        # Fill edges change the fill of the neighbours and of their neighbours only.
        touched = set(nb)
        for u in nb:
            touched.update(adj[u])
        for u in touched:
            costs[u] = cost(u)
    return Elimination(tuple(order), tuple(cliques), largest, True)


@dataclass(frozen=True, eq=False)
class JunctionTree:
    """A junction tree of the free nodes ``free`` of a network, the other nodes clamped.

    Attributes
    ----------
    free
        The free nodes, in topological order.
    cliques
        Each clique's nodes (sorted), in pre-order: the root first, every
        clique after its parent.
    parent
        Index of each clique's parent (``-1`` for the root).
    factors
        The CPTs (by child node) of :func:`block_factors`.
    home
        The clique each factor is multiplied into: the smallest clique that
        holds the factor's free nodes (first in pre-order on ties).
    cardinality
        States of every node of the network.

    Notes
    -----
    The table of a clique has one axis per clique node, in the order of
    ``cliques[q]``; its separator with the parent is ``separator(q)``.
    """

    free: tuple[int, ...]
    cliques: tuple[tuple[int, ...], ...]
    parent: tuple[int, ...]
    factors: tuple[int, ...]
    home: tuple[int, ...]
    cardinality: tuple[int, ...]

    def separator(self, q: int) -> tuple[int, ...]:
        """Nodes clique ``q`` shares with its parent (sorted; empty for the root or a piece hung from it)."""
        if self.parent[q] < 0:
            return ()
        up = set(self.cliques[self.parent[q]])
        return tuple(v for v in self.cliques[q] if v in up)

    @cached_property
    def sizes(self) -> tuple[int, ...]:
        """Entries of each clique table."""
        return tuple(math.prod(self.cardinality[v] for v in c) for c in self.cliques)

    @property
    def largest(self) -> int:
        """Entries of the largest clique table (0 without free nodes)."""
        return max(self.sizes, default=0)

    @property
    def largest_clique(self) -> tuple[int, ...]:
        """Nodes of the largest clique table (the first such clique in pre-order)."""
        return self.cliques[self.sizes.index(self.largest)] if self.cliques else ()

    @property
    def total(self) -> int:
        """Entries of all clique tables together (the memory of one calibration)."""
        return sum(self.sizes)

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        out: list[list[int]] = [[] for _ in self.cliques]
        for q, p in enumerate(self.parent):
            if p >= 0:
                out[p].append(q)
        return tuple(tuple(c) for c in out)


def _join(elimination: Elimination) -> tuple[list[tuple[int, ...]], list[int]]:
    """The elimination tree's maximal cliques in pre-order, and each one's parent."""
    order, cliques = elimination.order, elimination.cliques
    m = len(order)
    pos = {v: k for k, v in enumerate(order)}
    links: dict[int, set[int]] = {k: set() for k in range(m)}
    for k, clique in enumerate(cliques):
        # Hang clique k from the clique of the first-eliminated of its other nodes.
        rest = [pos[u] for u in clique if u != order[k]]
        if rest:
            p = min(rest)
            links[k].add(p)
            links[p].add(k)
    sets = [set(c) for c in cliques]
    # A clique contained in another is contained in its neighbour on the path
    # to it (running intersection), so merging contained neighbours leaves
    # exactly the maximal cliques, still a junction tree.
    changed = True
    while changed:
        changed = False
        for k in sorted(links):
            into = next((j for j in sorted(links[k]) if sets[k] <= sets[j]), None)
            if into is None:
                continue
            for j in links.pop(k):
                links[j].discard(k)
                if j != into:
                    links[j].add(into)
                    links[into].add(j)
            changed = True
    # Pieces of a forest: each rooted at its latest-eliminated clique; the
    # piece holding the last eliminated node is the tree's root piece.
    seen: set[int] = set()
    roots: list[int] = []
    for k in sorted(links, reverse=True):
        if k in seen:
            continue
        roots.append(k)
        stack = [k]
        seen.add(k)
        while stack:
            a = stack.pop()
            for b in links[a]:
                if b not in seen:
                    seen.add(b)
                    stack.append(b)
    index: dict[int, int] = {}
    out: list[tuple[int, ...]] = []
    parent: list[int] = []
    for r, root in enumerate(roots):
        # Breadth first, children by elimination index: the pre-order the samplers read.
        queue = [(root, -1 if r == 0 else 0)]
        queued = {root}
        head = 0
        while head < len(queue):
            a, p = queue[head]
            head += 1
            index[a] = len(out)
            out.append(cliques[a])
            parent.append(p)
            for b in sorted(links[a] - queued):
                queued.add(b)
                queue.append((b, index[a]))
    return out, parent


def build(
    network: BayesianNetwork, free: Iterable[int], budget: float = DEFAULT_BUDGET, what: str = "exact inference"
) -> JunctionTree:
    """The junction tree of the nodes ``free`` with every other node clamped.

    Parameters
    ----------
    network
        The network.
    free
        Node indices of the free nodes (any order; must be distinct).
    budget
        Largest clique table allowed, in entries.
    what
        What the tree is for, in the error message.

    Raises
    ------
    CliqueBudgetError
        The greedy triangulation's largest clique table exceeds ``budget``;
        the message names the clique's size and nodes.
    """
    free_t = tuple(sorted(set(free)))
    card = network.cardinality
    elim = eliminate(domain_graph(network, free_t), card)
    if elim.largest[0] > budget:
        raise CliqueBudgetError(elim.largest[0], [network.nodes[v] for v in elim.largest[1]], int(budget), what)
    cliques, parent = _join(elim)
    factors = block_factors(network, free_t)
    members = [set(c) for c in cliques]
    sizes = [math.prod(card[v] for v in c) for c in cliques]
    fs = set(free_t)
    home = []
    for j in factors:
        inside = {v for v in (*network.parents[j], j) if v in fs}
        home.append(min((q for q in range(len(cliques)) if inside <= members[q]), key=lambda q: (sizes[q], q)))
    return JunctionTree(free_t, tuple(cliques), tuple(parent), factors, tuple(home), tuple(card))


def largest_clique(network: BayesianNetwork, free: Iterable[int], stop_above: float = math.inf) -> int:
    """Entries of the largest clique table :func:`build` would make for ``free`` (structure only, no tables).

    With ``stop_above`` the triangulation stops at the first clique larger
    than that, and returns its size: enough to tell whether ``free`` fits.
    """
    return eliminate(domain_graph(network, free), network.cardinality, stop_above).largest[0]


# -- potentials and calibration (numpy; the sampler's compiled version is in blocked_gibbs) ------


def _values_of(values: Mapping[int, int] | np.ndarray) -> Mapping[int, int] | np.ndarray:
    return values if isinstance(values, Mapping) else np.asarray(values, dtype=np.intp)


def _expand(table: np.ndarray, scope: Sequence[int], into: Sequence[int]) -> np.ndarray:
    """``table`` over ``scope`` reshaped to broadcast against a table over ``into`` (``scope`` a subset)."""
    perm = sorted(range(len(scope)), key=lambda a: into.index(scope[a]))
    shape = [1] * len(into)
    for a in perm:
        shape[into.index(scope[a])] = table.shape[a]
    return np.transpose(table, perm).reshape(shape)


def factor_table(
    network: BayesianNetwork, j: int, free: set[int] | frozenset[int], values: Mapping[int, int] | np.ndarray
) -> tuple[tuple[int, ...], np.ndarray]:
    """CPT ``j`` sliced at the clamped values of its non-free nodes: (free scope, table over it)."""
    scope = (*network.parents[j], j)
    index = tuple(slice(None) if v in free else int(values[v]) for v in scope)
    return tuple(v for v in scope if v in free), np.asarray(network.cpts[j][index])


def potentials(
    tree: JunctionTree, network: BayesianNetwork, values: Mapping[int, int] | np.ndarray
) -> tuple[list[np.ndarray], float]:
    """Each clique's potential: the product of its factors, rescaled to a maximum of one.

    Returns
    -------
    tables
        One array per clique, axes in the clique's node order.
    log_scale
        Sum of the logs of the scales taken out (``-inf`` if a potential is all zero).
    """
    values = _values_of(values)
    free = frozenset(tree.free)
    card = tree.cardinality
    tables = [np.ones([card[v] for v in c]) for c in tree.cliques]
    for j, q in zip(tree.factors, tree.home, strict=True):
        scope, table = factor_table(network, j, free, values)
        tables[q] = tables[q] * _expand(table, scope, tree.cliques[q])
    log_scale = 0.0
    for q, t in enumerate(tables):
        peak = float(t.max())
        if peak <= 0.0:
            return tables, -math.inf
        tables[q] = t / peak
        log_scale += math.log(peak)
    return tables, log_scale


def _sum_to(table: np.ndarray, scope: Sequence[int], keep: Sequence[int]) -> np.ndarray:
    """Marginal of ``table`` (axes ``scope``) on ``keep`` (a subset of ``scope``, same relative order)."""
    return table.sum(axis=tuple(a for a, v in enumerate(scope) if v not in keep))


@dataclass(frozen=True, eq=False)
class Calibration:
    """A calibrated junction tree.

    Attributes
    ----------
    tree
        The tree.
    beliefs
        ``p(x_C | clamped values)`` of each clique (each sums to one), or
        ``None`` when the clamped values have probability zero.
    log_normalizer
        ``log sum_{x_free} prod_{j in tree.factors} p(x_j | x_pa(j))`` at the
        clamped values (``-inf`` when it is zero).
    """

    tree: JunctionTree
    beliefs: tuple[np.ndarray, ...] | None
    log_normalizer: float

    def marginal(self, node: int) -> np.ndarray:
        """``p(x_node | clamped values)`` from the smallest clique holding ``node``."""
        if self.beliefs is None:
            raise ValueError("the clamped values have probability zero: no conditional law")
        tree = self.tree
        q = min((q for q, c in enumerate(tree.cliques) if node in c), key=lambda q: (tree.sizes[q], q))
        p = _sum_to(self.beliefs[q], tree.cliques[q], (node,))
        return p / p.sum()


def calibrate(
    tree: JunctionTree, network: BayesianNetwork, values: Mapping[int, int] | np.ndarray, *, distribute: bool = True
) -> Calibration:
    """Collect to the root (the normaliser), then distribute (every clique's exact marginal).

    Hugin propagation (Jensen, Lauritzen & Olesen 1990) on
    :func:`potentials`: the message from a clique to its parent is its
    belief summed onto the separator, rescaled to a maximum of one (the scale
    kept in logs); distributing, a child's belief is multiplied by the
    parent's separator marginal over the message it sent (``0/0 = 0``: a
    separator state the child gives no mass has none in the parent either).

    Parameters
    ----------
    tree, network
        The tree and its network.
    values
        The clamped nodes' codes: a full configuration ``(n_nodes,)`` or a
        mapping holding at least every clamped node of a factor.
    distribute
        ``False`` stops after the collect pass (enough for the normaliser).
    """
    tables, log_scale = potentials(tree, network, values)
    if log_scale == -math.inf:
        return Calibration(tree, None, -math.inf)
    cliques, parent = tree.cliques, tree.parent
    raw: list[np.ndarray | None] = [None] * len(cliques)
    for q in range(len(cliques) - 1, 0, -1):  # pre-order reversed: children before parents
        sep = tree.separator(q)
        msg = _sum_to(tables[q], cliques[q], sep)
        raw[q] = msg
        peak = float(msg.max())
        if peak <= 0.0:
            return Calibration(tree, None, -math.inf)
        log_scale += math.log(peak)
        p = parent[q]
        tables[p] = tables[p] * _expand(msg / peak, sep, cliques[p])
    if not cliques:
        return Calibration(tree, (), 0.0)
    total = float(tables[0].sum())
    if total <= 0.0:
        return Calibration(tree, None, -math.inf)
    log_norm = log_scale + math.log(total)
    if not distribute:
        return Calibration(tree, None, log_norm)
    tables[0] = tables[0] / total
    for q in range(1, len(cliques)):  # pre-order: parents before children
        sep = tree.separator(q)
        p = parent[q]
        down = _sum_to(tables[p], cliques[p], sep)
        sent = raw[q]
        assert sent is not None
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(sent > 0.0, down / sent, 0.0)
        tables[q] = tables[q] * _expand(ratio, sep, cliques[q])
    return Calibration(tree, tuple(tables), log_norm)


@dataclass(frozen=True, eq=False)
class ExactInference:
    """What :func:`exact_marginals` computes.

    Attributes
    ----------
    marginals
        ``p(x_i | e)`` of every node ``(card_i,)``, summing to one; an
        observed node's is the indicator of its state.
    log_evidence
        ``log p(e)`` (``0`` without evidence).
    tree
        The junction tree of the unobserved nodes (``tree.largest`` is the
        largest clique table it needed).
    """

    marginals: tuple[np.ndarray, ...]
    log_evidence: float
    tree: JunctionTree


def exact_marginals(
    network: BayesianNetwork, evidence: Evidence | None = None, budget: float = DEFAULT_BUDGET
) -> ExactInference:
    """Exact posterior marginals of every node and ``log p(e)``, from one calibrated junction tree.

    One collect and one distribute pass over the junction tree of the
    unobserved nodes (Lauritzen & Spiegelhalter 1988) replace one variable
    elimination per node (:func:`~mcmc.core.networks.variable_elimination.marginals`):
    the cost is a few passes over the clique tables, whatever the number of
    nodes, as long as the largest clique fits ``budget``.

    Parameters
    ----------
    network
        The network.
    evidence
        ``{node index: state code}``.
    budget
        Largest clique table allowed, in entries.

    Raises
    ------
    CliqueBudgetError
        The network with this evidence is too wide for ``budget`` (the
        message names the largest clique's size).
    InputError
        The evidence has probability zero.
    """
    evidence = dict(sorted((evidence or {}).items()))
    free = [i for i in range(network.n_nodes) if i not in evidence]
    tree = build(network, free, budget)
    cal = calibrate(tree, network, evidence)
    log_evidence = cal.log_normalizer + _log_observed(network, tree, evidence)
    if log_evidence == -math.inf:
        raise impossible(network, evidence)
    out = []
    for i in range(network.n_nodes):
        if i in evidence:
            one = np.zeros(network.cardinality[i])
            one[evidence[i]] = 1.0
            out.append(one)
        else:
            out.append(cal.marginal(i))
    return ExactInference(tuple(out), log_evidence, tree)


def _log_observed(network: BayesianNetwork, tree: JunctionTree, evidence: Mapping[int, int]) -> float:
    """The log of the CPTs no free node enters (every node of their scope observed): constants of ``p(e)``."""
    used = set(tree.factors)
    total = 0.0
    for j in range(network.n_nodes):
        if j not in used:
            p = float(network.cpts[j][tuple(evidence[v] for v in (*network.parents[j], j))])
            total += math.log(p) if p > 0.0 else -math.inf
    return total


def log_evidence(network: BayesianNetwork, evidence: Evidence | None = None, budget: float = DEFAULT_BUDGET) -> float:
    """``log p(e)`` from the collect pass alone of the junction tree of the unobserved nodes (``-inf``: impossible).

    Raises
    ------
    CliqueBudgetError
        The tree is too wide for ``budget``.
    """
    evidence = dict(sorted((evidence or {}).items()))
    tree = build(network, [i for i in range(network.n_nodes) if i not in evidence], budget)
    return calibrate(tree, network, evidence, distribute=False).log_normalizer + _log_observed(network, tree, evidence)
