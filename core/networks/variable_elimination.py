"""Exact inference in discrete Bayesian networks: enumeration and variable elimination.

Two ways to the marginal posterior ``p(x_i | e)`` of every node given
evidence ``e``:

* :func:`enumerate_marginals`: the full joint table ``prod_i p(x_i | pa_i)``
  with the evidence sliced in, summed over all other axes. Exact and obvious,
  feasible while the unobserved nodes have at most ``MAX_ENUMERATION`` joint
  states; the tests use it to check the other method.
* :func:`marginals` (and :func:`node_marginals` for some nodes): variable elimination (Zhang & Poole 1994, "A simple
  approach to Bayesian network computations"; Dechter 1996 "bucket
  elimination"). For each query node, the nodes that are neither ancestors
  of it nor of the evidence are dropped (they sum out to one), the CPTs are
  reduced by the evidence, and the other nodes are summed out one at a time
  in a greedy **min-fill** order (Kjaerulff 1990): next the node whose
  elimination adds the fewest edges to the interaction graph, ties broken
  by the smaller resulting factor. Intermediate factors are rescaled to a
  maximum of one and the scale kept in logs, so ``log p(e)`` does not
  underflow on long chains of small probabilities.

:func:`check_evidence` refuses evidence of probability zero exactly: it
computes ``p(e)`` by variable elimination over the ancestors of the
evidence. A factor over ``MAX_FACTOR`` entries raises
:class:`~mcmc.core.networks.junction_tree.CliqueBudgetError` before it is
formed. Every node's marginal at once is cheaper from one calibrated
junction tree (:func:`mcmc.core.networks.junction_tree.exact_marginals`);
variable elimination is its cross-check, and the fallback for a few nodes
of a network whose tree is too wide (:mod:`mcmc.core.networks.exact`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import reduce

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.networks.evidence import impossible
from mcmc.core.networks.junction_tree import CliqueBudgetError
from mcmc.core.networks.network import BayesianNetwork, Evidence

MAX_ENUMERATION = 1 << 22  # joint states of the unobserved nodes enumerate_marginals accepts
MAX_FACTOR = 1 << 26  # entries of the largest intermediate factor variable elimination accepts

Factor = tuple[tuple[int, ...], np.ndarray]  # (node indices, table with one axis per node)


def _cpt_factors(network: BayesianNetwork, evidence: Evidence, keep: Sequence[int] | None = None) -> list[Factor]:
    """The CPTs of the nodes in ``keep`` (default all) as factors, evidence sliced in."""
    out: list[Factor] = []
    for i in range(network.n_nodes) if keep is None else keep:
        scope = (*network.parents[i], i)
        table = network.cpts[i]
        index = tuple(evidence.get(v, slice(None)) for v in scope)
        out.append((tuple(v for v in scope if v not in evidence), np.asarray(table[index])))
    return out


def _product(factors: Sequence[Factor]) -> Factor:
    """Product of factors over the union of their scopes (einsum with local labels)."""
    scope: list[int] = []
    for vars_, _ in factors:
        scope.extend(v for v in vars_ if v not in scope)
    label = {v: k for k, v in enumerate(scope)}
    operands: list[object] = []
    for vars_, table in factors:
        operands += [table, [label[v] for v in vars_]]
    return tuple(scope), np.einsum(*operands, list(range(len(scope))), optimize=False)


def min_fill_order(factors: Sequence[Factor], eliminate: Sequence[int], cardinality: Sequence[int]) -> list[int]:
    """Greedy min-fill elimination order of the nodes ``eliminate`` for ``factors``.

    Returns
    -------
    list of int
        The nodes of ``eliminate`` in the order to sum them out.
    """
    adjacent: dict[int, set[int]] = {}
    for vars_, _ in factors:
        for v in vars_:
            adjacent.setdefault(v, set()).update(u for u in vars_ if u != v)
    todo = set(eliminate)
    order: list[int] = []
    while todo:

        def cost(v: int) -> tuple[int, float, int]:
            nb = list(adjacent.get(v, ()))
            fill = sum(1 for a in range(len(nb)) for b in range(a + 1, len(nb)) if nb[b] not in adjacent[nb[a]])
            return fill, math.prod(cardinality[u] for u in nb), v

        v = min(todo, key=cost)
        nb = adjacent.pop(v, set())
        for u in nb:
            adjacent[u].discard(v)
            adjacent[u].update(w for w in nb if w != u)
        todo.discard(v)
        order.append(v)
    return order


def _eliminate(factors: list[Factor], order: Sequence[int], network: BayesianNetwork) -> tuple[list[Factor], float]:
    """Sum out the nodes of ``order`` in turn; returns the remaining factors and the log scale taken out.

    Raises
    ------
    CliqueBudgetError
        A product of factors would exceed ``MAX_FACTOR`` entries (checked
        before it is formed).
    """
    log_scale = 0.0
    card = network.cardinality
    for v in order:
        touching = [f for f in factors if v in f[0]]
        if not touching:
            continue
        union = sorted({u for f in touching for u in f[0]})
        size = math.prod(card[u] for u in union)
        if size > MAX_FACTOR:
            raise CliqueBudgetError(size, [network.nodes[u] for u in union], MAX_FACTOR, "variable elimination")
        factors = [f for f in factors if v not in f[0]]
        scope, table = _product(touching)
        table = table.sum(axis=scope.index(v))
        scope = tuple(u for u in scope if u != v)
        peak = float(table.max()) if table.size else 0.0
        if peak > 0.0:
            table = table / peak
            log_scale += math.log(peak)
        factors.append((scope, table))
    return factors, log_scale


def _ancestral(network: BayesianNetwork, roots: Sequence[int]) -> list[int]:
    """The nodes of ``roots`` and all their ancestors, in topological order."""
    keep = set(roots)
    for i in range(network.n_nodes - 1, -1, -1):
        if i in keep:
            keep.update(network.parents[i])
    return sorted(keep)


def log_evidence(network: BayesianNetwork, evidence: Evidence) -> float:
    """``log p(e)`` by variable elimination (``-inf`` when the evidence is impossible; ``0`` without evidence)."""
    if not evidence:
        return 0.0
    keep = _ancestral(network, list(evidence))
    factors = _cpt_factors(network, evidence, keep)
    hidden = [v for v in keep if v not in evidence]
    factors, log_scale = _eliminate(factors, min_fill_order(factors, hidden, network.cardinality), network)
    total = reduce(lambda a, b: a * b, (float(t) for _, t in factors), 1.0)
    return log_scale + math.log(total) if total > 0.0 else -math.inf


def check_evidence(network: BayesianNetwork, evidence: Evidence) -> float:
    """``log p(e)``, refusing evidence of probability zero.

    Raises
    ------
    InputError
        ``p(e) = 0`` exactly (computed by variable elimination), naming the
        network's file and the evidence.
    CliqueBudgetError
        The elimination needs a factor over ``MAX_FACTOR`` entries.
    """
    lp = log_evidence(network, evidence)
    if lp == -math.inf:
        raise impossible(network, evidence)
    return lp


def _one_hot(k: int, code: int) -> np.ndarray:
    out = np.zeros(k)
    out[code] = 1.0
    return out


def marginals(network: BayesianNetwork, evidence: Evidence | None = None) -> tuple[np.ndarray, ...]:
    """Exact marginal posteriors ``p(x_i | e)`` of every node, by variable elimination.

    Parameters
    ----------
    network
        The network.
    evidence
        ``{node index: state code}`` (see :func:`~mcmc.core.networks.evidence.parse_evidence`).

    Returns
    -------
    tuple of ndarray
        One array ``(card_i,)`` per node, summing to one; an observed node's is
        the indicator of its observed state.

    Raises
    ------
    InputError
        The evidence has probability zero.
    CliqueBudgetError
        An intermediate factor would exceed ``MAX_FACTOR`` entries.
    """
    found = node_marginals(network, evidence, range(network.n_nodes))
    return tuple(found[q] for q in range(network.n_nodes))


def node_marginals(
    network: BayesianNetwork, evidence: Evidence | None, nodes: Iterable[int]
) -> dict[int, np.ndarray]:
    """:func:`marginals` of the nodes ``nodes`` only, ``{node: p(x_node | e)}``: one elimination per node.

    Each elimination keeps only the ancestors of the node and of the
    evidence, so a few nodes of a wide network can be within reach when the
    junction tree of the whole is not.

    Raises
    ------
    InputError
        The evidence has probability zero.
    CliqueBudgetError
        An intermediate factor would exceed ``MAX_FACTOR`` entries.
    """
    evidence = dict(evidence or {})
    check_evidence(network, evidence)
    out: dict[int, np.ndarray] = {}
    for q in nodes:
        if q in evidence:
            out[q] = _one_hot(network.cardinality[q], evidence[q])
            continue
        keep = _ancestral(network, [q, *evidence])
        factors = _cpt_factors(network, evidence, keep)
        hidden = [v for v in keep if v not in evidence and v != q]
        factors, _ = _eliminate(factors, min_fill_order(factors, hidden, network.cardinality), network)
        _, table = _product(factors)  # every remaining factor has scope (q,) or ()
        p = np.broadcast_to(table, (network.cardinality[q],)).astype(float)
        out[q] = p / p.sum()
    return out


def enumerate_marginals(network: BayesianNetwork, evidence: Evidence | None = None) -> tuple[np.ndarray, ...]:
    """Exact marginal posteriors by summing the full joint table (small networks only).

    Same result as :func:`marginals`; the joint of the unobserved nodes must
    have at most ``MAX_ENUMERATION`` states.

    Raises
    ------
    InputError
        The evidence has probability zero.
    UsageError
        The network is too large to enumerate.
    """
    evidence = dict(evidence or {})
    free = [i for i in range(network.n_nodes) if i not in evidence]
    size = math.prod(network.cardinality[i] for i in free)
    if size > MAX_ENUMERATION:
        raise UsageError(f"enumeration needs {size} joint states (limit {MAX_ENUMERATION})")
    scope, joint = _product(_cpt_factors(network, evidence))
    total = float(joint.sum())
    if total <= 0.0:
        raise impossible(network, evidence)
    out = []
    for q in range(network.n_nodes):
        if q in evidence:
            out.append(_one_hot(network.cardinality[q], evidence[q]))
        else:
            axis = scope.index(q)
            out.append(joint.sum(axis=tuple(a for a in range(joint.ndim) if a != axis)) / total)
    return tuple(out)
