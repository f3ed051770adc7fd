"""Discrete Bayesian networks: the structure.

A :class:`BayesianNetwork` is a directed acyclic graph of discrete nodes, each
with named states and a conditional probability table (CPT) given its
parents (Pearl 1988, *Probabilistic Reasoning in Intelligent Systems*, ch. 3).
The joint law is

    p(x_1, ..., x_n) = prod_i p(x_i | x_parents(i)).

Nodes are kept in a topological order (parents before children), and
everything else refers to a node by its index in that order. A node's
*state code* is the index of its state in ``states[i]``; a configuration of
the network is an integer vector of codes. ``cpts[i]`` is indexed
``[code of parent 1, ..., code of parent k, code of node i]`` (parents in the
order of ``parents[i]``), so ``cpts[i][..., s]`` sums to one over ``s``.

Files are read by :mod:`~mcmc.core.networks.bif`; evidence by name is
:mod:`~mcmc.core.networks.evidence`'s; exact inference lives in
:mod:`~mcmc.core.networks.junction_tree` and
:mod:`~mcmc.core.networks.variable_elimination`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mcmc.core.errors import InputError


@dataclass(frozen=True, eq=False)
class BayesianNetwork:
    """An immutable discrete Bayesian network, nodes in topological order.

    Parameters
    ----------
    nodes
        Node names, parents before children.
    states
        ``states[i]``: the state names of node ``i``, in the file's order.
    parents
        ``parents[i]``: indices of the parents of node ``i`` (each smaller
        than ``i``), in the order the CPT's axes follow.
    cpts
        ``cpts[i]``: float array of shape ``(card[p_1], ..., card[p_k],
        card[i])``, read-only, each last-axis row summing to one.
    name
        The network's name in the file (``"unknown"`` in bnlearn's files).
    source
        The file it was read from (for error messages), or ``None``.
    """

    nodes: tuple[str, ...]
    states: tuple[tuple[str, ...], ...]
    parents: tuple[tuple[int, ...], ...]
    cpts: tuple[np.ndarray, ...]
    name: str = "unknown"
    source: str | None = None

    def __post_init__(self) -> None:
        n = len(self.nodes)
        if not (len(self.states) == len(self.parents) == len(self.cpts) == n):
            raise ValueError("nodes, states, parents and cpts must have one entry per node")
        if len(set(self.nodes)) != n:
            raise ValueError("node names must be distinct")
        frozen = []
        for i, (pa, cpt) in enumerate(zip(self.parents, self.cpts, strict=True)):
            if any(not 0 <= p < i for p in pa):
                raise ValueError(f"node {self.nodes[i]!r}: parents must come earlier in the topological order")
            shape = tuple(len(self.states[p]) for p in pa) + (len(self.states[i]),)
            arr = np.array(cpt, dtype=float)
            if arr.shape != shape:
                raise ValueError(f"node {self.nodes[i]!r}: CPT has shape {arr.shape}; expected {shape}")
            arr.setflags(write=False)
            frozen.append(arr)
        object.__setattr__(self, "cpts", tuple(frozen))

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @cached_property
    def cardinality(self) -> tuple[int, ...]:
        """Number of states of each node."""
        return tuple(len(s) for s in self.states)

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """``children[i]``: the nodes that have ``i`` as a parent, in topological order."""
        out: list[list[int]] = [[] for _ in self.nodes]
        for i, pa in enumerate(self.parents):
            for p in pa:
                out[p].append(i)
        return tuple(tuple(c) for c in out)

    @cached_property
    def _index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.nodes)}

    def index(self, node: str) -> int:
        """Index of the node named ``node``.

        Raises
        ------
        InputError
            No such node; the message lists the nodes.
        """
        try:
            return self._index[node]
        except KeyError:
            raise InputError(self.source, f"unknown node {node!r}; the nodes are: {', '.join(self.nodes)}") from None

    def state_code(self, node: int, state: str) -> int:
        """Code of the state named ``state`` of node ``node`` (an index).

        Raises
        ------
        InputError
            No such state; the message lists the node's states.
        """
        try:
            return self.states[node].index(state)
        except ValueError:
            raise InputError(
                self.source,
                f"node {self.nodes[node]!r} has no state {state!r}; its states are: {', '.join(self.states[node])}",
            ) from None

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        """Log joint probability of configurations ``codes (..., n_nodes)`` (``-inf`` where zero).

        Returns
        -------
        ndarray, shape (...)
        """
        codes = np.asarray(codes, dtype=np.intp)
        total = np.zeros(codes.shape[:-1])
        with np.errstate(divide="ignore"):
            for i, pa in enumerate(self.parents):
                p = self.cpts[i][tuple(codes[..., j] for j in pa) + (codes[..., i],)]
                total += np.log(p)
        return total


Evidence = Mapping[int, int]
"""Observed nodes: node index -> state code."""
