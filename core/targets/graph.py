"""The q-state Potts model on any graph, from an edge list with a coupling per edge (``graph.csv``).

Spins ``s_i`` in ``{0, ..., q-1}`` on the nodes of a graph with couplings
``beta_ij`` on its edges (Potts 1952; Wu 1982, Rev. Mod. Phys. 54, 235):

    pi(s) ∝ exp(sum_{(i,j) in E} beta_ij delta(s_i, s_j)),

each edge counted once. With every ``beta_ij = beta`` on the edges of an
``L x L`` torus this is :mod:`mcmc.core.targets.potts`; ``q = 2`` is the
Ising model at couplings ``beta_ij / 2``. A coupling may be negative
(antiferromagnetic) for Gibbs sampling; Swendsen-Wang needs them all ``>= 0``
(its bonds are drawn with probability ``1 - exp(-beta_ij)``; Swendsen & Wang
1987, Edwards & Sokal 1988).

The file (:func:`read_graph`): a header ``i,j,beta`` then one line
``NODE,NODE,COUPLING`` per edge, or a header ``i,j`` and one coupling for
all edges (``-T beta=B``, default 1). Nodes are named by any text; the node
count is the number of names (numbered in order of first appearance, or
numerically when every name is a whole number).

The target (:class:`GraphPottsTarget`) implements
:class:`~mcmc.core.targets.protocols.PottsLattice` with per-edge couplings
(:class:`~mcmc.core.targets.protocols.WeightedBonds`) for ``swendsen-wang``,
:class:`~mcmc.core.targets.protocols.FullConditionals` for ``gibbs`` (heat
bath: ``p(s_i = k | rest) ∝ exp(sum_{j ~ i} beta_ij delta(s_j, k))``, one
colour class of a greedy proper colouring per vectorized step, the sites of
a class conditionally independent), and
:class:`~mcmc.core.targets.protocols.CoordinateConditionals` (random scan).
Neighbours are kept as a padded table ``(nodes, max degree)`` with the
couplings beside it (0 on the padding), so a heat-bath step is a few array
operations whatever the graph.

Reported values (per sweep): ``energy = -sum_E beta_ij delta(s_i, s_j) /
nodes`` and the order parameter ``m = (q max_k n_k / N - 1) / (q - 1)`` (as
for the lattice). Exact means and sds by enumerating the ``q^nodes``
configurations when there are at most
:data:`~mcmc.core.targets.potts.MAX_EXACT_STATES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target
from mcmc.core.targets.markov_chain import content_rows
from mcmc.core.targets.potts import MAX_EXACT_STATES, conditional_cdf, order_parameter


@dataclass(frozen=True)
class Graph:
    """A validated edge list.

    Attributes
    ----------
    nodes
        Node names, node ``k`` is ``nodes[k]``.
    first, second
        ``(n_edges,)`` int: the two nodes of each edge, ``first < second``,
        sorted by ``first`` then ``second`` (read-only).
    couplings
        ``(n_edges,)`` ``beta_ij`` (read-only); ``None`` when the file has no
        coupling column (the target's ``beta`` then applies to every edge).
    source
        The file it was read from.
    """

    nodes: tuple[str, ...]
    first: np.ndarray
    second: np.ndarray
    couplings: np.ndarray | None
    source: str | None = None


def read_graph(path: str | Path) -> Graph:
    """Read an edge list: header ``i,j,beta`` (or ``i,j``), then one edge per line.

    Raises
    ------
    InputError
        One line naming the file: no header or no edges, a line with the wrong
        number of cells, a coupling that is not a finite number, a self-loop,
        an edge listed twice (either way round).
    """
    source = str(path)
    rows = content_rows(path)
    if not rows:
        raise InputError(source, "no graph: the file is empty")
    head = tuple(c.lower() for c in rows[0][1])
    if head not in (("i", "j"), ("i", "j", "beta")):
        raise InputError(source, f"line {rows[0][0]}: a graph file starts with the header i,j,beta (or i,j)")
    weighted = len(head) == 3
    rows = rows[1:]
    if not rows:
        raise InputError(source, "a header but no edges")
    pairs, values = [], []
    for lineno, cells in rows:
        if len(cells) != len(head):
            raise InputError(source, f"line {lineno}: {len(cells)} entries; expected {','.join(head)}")
        a, b = cells[0], cells[1]
        if not a or not b:
            raise InputError(source, f"line {lineno}: empty node name")
        if a == b:
            raise InputError(source, f"line {lineno}: a self-loop at {a!r}")
        if weighted:
            try:
                value = float(cells[2])
            except ValueError:
                raise InputError(source, f"line {lineno}, column 3: coupling {cells[2]!r} is not a number") from None
            if not np.isfinite(value):
                raise InputError(source, f"line {lineno}, column 3: coupling {cells[2]} is not finite")
            values.append(value)
        pairs.append((lineno, a, b))
    names = list(dict.fromkeys(n for _, a, b in pairs for n in (a, b)))
    if all(n.isdigit() for n in names):
        names.sort(key=int)
    code = {n: k for k, n in enumerate(names)}
    seen: dict[tuple[int, int], int] = {}
    first, second = [], []
    for lineno, a, b in pairs:
        key = tuple(sorted((code[a], code[b])))
        if key in seen:
            raise InputError(source, f"line {lineno}: edge {a}-{b} is listed twice (also line {seen[key]})")  # type: ignore[index]
        seen[key] = lineno  # type: ignore[index]
        first.append(key[0])
        second.append(key[1])
    order = np.lexsort((np.array(second), np.array(first)))
    f, s = np.array(first, dtype=np.int64)[order], np.array(second, dtype=np.int64)[order]
    couplings = np.array(values, dtype=float)[order] if weighted else None
    for a in (f, s, couplings):
        if a is not None:
            a.setflags(write=False)
    return Graph(tuple(names), f, s, couplings, source)


def greedy_colouring(n: int, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, ...]:
    """A proper colouring by the greedy rule in node order: each node the smallest colour its neighbours lack.

    Returns
    -------
    tuple of ndarray
        The colour classes, each the sorted node indices of one colour
        (read-only); no edge joins two nodes of a class.
    """
    adjacent: list[set[int]] = [set() for _ in range(n)]
    for a, b in zip(first.tolist(), second.tolist(), strict=True):
        adjacent[a].add(b)
        adjacent[b].add(a)
    colour = np.full(n, -1, dtype=np.int64)
    for node in range(n):
        taken = {int(colour[m]) for m in adjacent[node] if colour[m] >= 0}
        colour[node] = next(c for c in range(n) if c not in taken)
    classes = tuple(np.flatnonzero(colour == c) for c in range(int(colour.max()) + 1))
    for idx in classes:
        idx.setflags(write=False)
    return classes


def neighbour_table(n: int, first: np.ndarray, second: np.ndarray, couplings: np.ndarray) -> tuple[np.ndarray, ...]:
    """The neighbours of every node and the couplings to them, padded to the largest degree.

    Returns
    -------
    nbr : ndarray, shape (n, max_degree), int
        Neighbour indices; padding points at node 0.
    weight : ndarray, shape (n, max_degree)
        ``beta_ij`` of each neighbour; 0 on the padding (so it counts for nothing).
    """
    ends = np.concatenate([first, second])
    others = np.concatenate([second, first])
    w = np.concatenate([couplings, couplings])
    order = np.lexsort((others, ends))
    ends, others, w = ends[order], others[order], w[order]
    degree = np.bincount(ends, minlength=n)
    width = max(int(degree.max(initial=0)), 1)
    slot = np.arange(ends.size) - np.repeat(np.cumsum(degree) - degree, degree)
    nbr = np.zeros((n, width), dtype=np.int64)
    weight = np.zeros((n, width))
    nbr[ends, slot] = others
    weight[ends, slot] = w
    nbr.setflags(write=False)
    weight.setflags(write=False)
    return nbr, weight


def coupled_agreement(x: np.ndarray, first: np.ndarray, second: np.ndarray, couplings: np.ndarray) -> np.ndarray:
    """``sum_E beta_ij delta(s_i, s_j)`` for states ``x (..., nodes)``; shape ``(...)``.

    The terms are laid out row by row before the sum: indexing ``x[..., first]``
    returns them column-major for several rows and row-major for one, and
    NumPy sums a contiguous row in another order than a strided one, so
    without it a chain's ``lp`` would depend on how many chains run beside it
    (in its last bit). No BLAS: the same bytes on every CPU.
    """
    return np.sum(np.ascontiguousarray(np.where(x[..., first] == x[..., second], couplings, 0.0)), axis=-1)


@dataclass(frozen=True, eq=False)
class GraphPottsTarget(Target):
    """The Potts model on a graph as a :class:`Target`.

    Implements :class:`~mcmc.core.targets.protocols.PottsLattice` (with
    :class:`~mcmc.core.targets.protocols.WeightedBonds`),
    :class:`~mcmc.core.targets.protocols.FullConditionals` and
    :class:`~mcmc.core.targets.protocols.CoordinateConditionals`.

    Parameters
    ----------
    graph
        The edges.
    edge_couplings
        ``(n_edges,)`` ``beta_ij`` in the order of ``graph.first``.
    q
        States per node.
    beta
        The common coupling when every edge has the same one, else NaN (see
        :meth:`couplings` for the per-edge values Swendsen-Wang reads).
    nbr, weight
        :func:`neighbour_table` of the graph.
    classes
        :func:`greedy_colouring` of the graph.
    """

    graph: Graph | None = None
    edge_couplings: Any = None
    q: int = 2
    beta: float = float("nan")
    nbr: Any = None
    weight: Any = None
    classes: tuple[np.ndarray, ...] = ()
    discrete = True

    def bonds(self) -> tuple[np.ndarray, np.ndarray]:
        """The edges, each once, ``first`` sorted (what Swendsen-Wang's bond graph wants)."""
        assert self.graph is not None
        return self.graph.first, self.graph.second

    def couplings(self) -> np.ndarray:
        """``(n_edges,)`` ``beta_ij`` of the edges of :meth:`bonds`."""
        return self.edge_couplings  # type: ignore[no-any-return]

    def conditional_blocks(self) -> tuple[np.ndarray, ...]:
        """The colour classes of :func:`greedy_colouring`: the nodes of a class are conditionally independent."""
        return self.classes

    def sweep_noise(self, rng: ChainRandom) -> np.ndarray:
        """One uniform per node and chain, ``(chains, nodes)``."""
        return rng.uniform((self.dim,))

    def heat_bath(self, around: np.ndarray, weight: np.ndarray, u: np.ndarray) -> np.ndarray:
        """New states of nodes whose neighbours hold ``around (..., D)`` with couplings ``weight``, by inverse CDF."""
        states = np.arange(self.q)
        # Neighbour by neighbour, in a fixed order (not np.sum over a fancy-indexed axis, whose order of
        # summation depends on its memory layout, hence on the number of chains).
        counts = np.zeros((*around.shape[:-1], self.q))
        for d in range(around.shape[-1]):
            counts += weight[..., d, None] * (around[..., d, None] == states)
        cdf = conditional_cdf(1.0, counts)
        return np.sum(cdf[..., :-1] <= u[..., None] * cdf[..., -1:], axis=-1).astype(float)

    def draw_conditional(self, rng: ChainRandom, x: np.ndarray, block: np.ndarray, noise: np.ndarray) -> None:
        """Heat bath on the nodes ``block`` of every chain."""
        x[:, block] = self.heat_bath(x[:, self.nbr[block]], self.weight[block], noise[:, block])

    def coordinate_noise(self, rng: ChainRandom, updates: int) -> np.ndarray:
        """One uniform per update and chain, ``(chains, updates)``."""
        return rng.uniform((updates,))

    def draw_coordinates(self, x: np.ndarray, index: np.ndarray, noise: np.ndarray) -> None:
        """Heat bath at node ``index[c]`` of every chain ``c`` (random scan)."""
        rows = np.arange(x.shape[0])
        x[rows, index] = self.heat_bath(x[rows[:, None], self.nbr[index]], self.weight[index], noise)


def exact_moments(graph: Graph, couplings: np.ndarray, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and sd of ``(energy, m)`` by enumerating the ``q^nodes`` configurations."""
    n = len(graph.nodes)
    states = ((np.arange(q**n)[:, None] // q ** np.arange(n)) % q).astype(float)
    s = coupled_agreement(states, graph.first, graph.second, couplings)
    w = np.exp(s - s.max())
    w /= w.sum()
    values = np.stack([-s / n, order_parameter(states, q)], axis=1)
    mean = np.sum(w[:, None] * values, axis=0)
    sd = np.sqrt(np.maximum(np.sum(w[:, None] * (values - mean) ** 2, axis=0), 0.0))
    return mean, sd


def graph_potts(path: str | Path, q: int = 2, beta: float | None = None) -> GraphPottsTarget:
    """The q-state Potts model on the graph of ``path`` (see :func:`read_graph`).

    Parameters
    ----------
    path
        The edge list.
    q
        States per node, a whole number ``>= 2``.
    beta
        The coupling of every edge when the file has no ``beta`` column
        (default 1); refused when it has one.

    Returns
    -------
    GraphPottsTarget
        ``dim`` = the number of nodes, reported ``energy`` and ``m``, exact
        moments when ``q^nodes <= MAX_EXACT_STATES``, uniformly random starts.

    Raises
    ------
    InputError
        A bad file.
    UsageError
        ``q`` not a whole number ``>= 2``; ``beta`` given for a file with couplings, or not finite.
    """
    if isinstance(q, bool) or not isinstance(q, int) or q < 2:
        raise UsageError(f"-T q must be a whole number >= 2, got {q!r}")
    graph = read_graph(path)
    if graph.couplings is not None and beta is not None:
        raise UsageError(f"{graph.source} gives a coupling per edge (its beta column): -T beta does not apply")
    if beta is not None and (isinstance(beta, (bool, str)) or not np.isfinite(float(beta))):
        raise UsageError(f"-T beta must be a finite number, got {beta!r}")
    couplings = graph.couplings if graph.couplings is not None else np.full(graph.first.size, 1.0 if beta is None
                                                                              else float(beta))  # fmt: skip
    couplings = np.array(couplings, dtype=float)
    couplings.setflags(write=False)
    n = len(graph.nodes)
    first, second = graph.first, graph.second

    def log_density(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        valid = np.all((x == np.floor(x)) & (x >= 0) & (x < q), axis=-1)
        return np.where(valid, coupled_agreement(x, first, second, couplings), -np.inf)

    def transform(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.stack([-coupled_agreement(x, first, second, couplings) / n, order_parameter(x, q)], axis=-1)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        return np.floor(q * rng.uniform((n,)))

    mean = sd = None
    if q**n <= MAX_EXACT_STATES:
        mean, sd = exact_moments(graph, couplings, q)
    common = float(couplings[0]) if np.all(couplings == couplings[0]) else float("nan")
    nbr, weight = neighbour_table(n, first, second, couplings)
    options: dict[str, Any] = {"q": q} if beta is None else {"q": q, "beta": float(beta)}
    return GraphPottsTarget(
        name=str(path), dim=n, log_density=log_density, names=("energy", "m"),
        variables=(("energy", ()), ("m", ())), mean=mean, sd=sd, initial_point=initial_point,
        transform=transform, options=options, graph=graph, edge_couplings=couplings, q=q, beta=common,
        nbr=nbr, weight=weight, classes=greedy_colouring(n, first, second),
    )  # fmt: skip
