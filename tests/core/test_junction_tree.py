"""Junction trees: structure, and exact marginals from one calibration equal to variable elimination.

Every network of tests/data/networks, with evidence sets drawn at random
among those of positive probability (a forward sample's values on 1, 2 and
4 nodes, one on a descendant of a deterministic node where there is one):
the calibrated tree's marginals equal :func:`variable_elimination.marginals`
to 1e-10, ``log p(e)`` its ``log_evidence``, full enumeration where the
network is small enough, and pgmpy 0.1.26's VariableElimination
(reference_marginals.json).
"""

from __future__ import annotations

import json
import math
import pickle
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import InputError, UsageError
from mcmc.core.networks import junction_tree as jt
from mcmc.core.networks.bif import read_bif
from mcmc.core.networks.evidence import parse_evidence
from mcmc.core.networks.network import BayesianNetwork
from mcmc.core.networks.tables import reducibility
from mcmc.core.networks.variable_elimination import MAX_ENUMERATION, enumerate_marginals, log_evidence, marginals

DATA = Path(__file__).parents[1] / "data" / "networks"
NAMES = sorted(p.stem for p in DATA.glob("*.bif"))
REFERENCE = json.loads((DATA / "reference_marginals.json").read_text())


@cache
def network(name: str) -> BayesianNetwork:
    return read_bif(DATA / f"{name}.bif")


def forward_sample(net: BayesianNetwork, rng: np.random.Generator) -> np.ndarray:
    x = np.zeros(net.n_nodes, dtype=np.int64)
    for i in range(net.n_nodes):
        p = net.cpts[i][tuple(x[j] for j in net.parents[i])]
        x[i] = rng.choice(p.size, p=p)
    return x


def descendants(net: BayesianNetwork, roots) -> set[int]:
    out: set[int] = set()
    todo = list(roots)
    while todo:
        for c in net.children[todo.pop()]:
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def random_evidence(net: BayesianNetwork, k: int, seed: int) -> dict[int, int]:
    """``k`` nodes of a forward sample (so ``p(e) > 0``); one below a deterministic group when there is one."""
    rng = np.random.default_rng(seed)
    x = forward_sample(net, rng)
    groups = reducibility(net, {}).groups
    below = sorted(descendants(net, {v for g in groups for v in g}) - {v for g in groups for v in g})
    nodes: list[int] = []
    if below and k >= 2:
        nodes.append(int(rng.choice(below)))
    rest = [i for i in range(net.n_nodes) if i not in nodes]
    nodes += [int(v) for v in rng.choice(rest, size=k - len(nodes), replace=False)]
    return {v: int(x[v]) for v in sorted(nodes)}


EVIDENCE = [(name, k, seed) for name in NAMES for k, seed in ((0, 0), (1, 1), (2, 2), (4, 3), (4, 4))]


@pytest.mark.parametrize(("name", "k", "seed"), EVIDENCE)
def test_exact_marginals_equal_variable_elimination(name: str, k: int, seed: int) -> None:
    net = network(name)
    ev = random_evidence(net, k, seed) if k else {}
    ex = jt.exact_marginals(net, ev)
    ve = marginals(net, ev)
    for i, (a, b) in enumerate(zip(ex.marginals, ve, strict=True)):
        np.testing.assert_allclose(a, b, atol=1e-10, rtol=0, err_msg=net.nodes[i])
        assert a.sum() == pytest.approx(1.0, abs=1e-12)
    assert ex.log_evidence == pytest.approx(log_evidence(net, ev), abs=1e-10)
    free = math.prod(net.cardinality[i] for i in range(net.n_nodes) if i not in ev)
    if free <= MAX_ENUMERATION:
        for a, b in zip(ex.marginals, enumerate_marginals(net, ev), strict=True):
            np.testing.assert_allclose(a, b, atol=1e-12, rtol=0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", ["none", "evidence"])
def test_exact_marginals_match_pgmpy(name: str, case: str) -> None:
    net = network(name)
    ref = REFERENCE["networks"][name][case]
    ev = parse_evidence(net, ref["evidence"])
    ex = jt.exact_marginals(net, ev)
    for node, probs in ref["marginals"].items():
        # 1e-6: we renormalise rows bnlearn rounded (sachs' sum to 1 +- 1e-4), pgmpy does not
        np.testing.assert_allclose(ex.marginals[net.index(node)], probs, atol=1e-6, err_msg=node)


def check_tree(net: BayesianNetwork, tree: jt.JunctionTree) -> None:
    cliques = [set(c) for c in tree.cliques]
    assert set().union(*cliques) == set(tree.free) if cliques else not tree.free
    assert tree.parent[0] == -1 and all(0 <= p < q for q, p in enumerate(tree.parent) if q)  # pre-order
    for a in range(len(cliques)):  # maximal cliques only
        assert not any(a != b and cliques[a] <= cliques[b] for b in range(len(cliques)))
    for v in tree.free:  # running intersection: the cliques holding v are a subtree
        holding = {q for q, c in enumerate(cliques) if v in c}
        tops = [q for q in holding if tree.parent[q] not in holding]
        assert len(tops) == 1, (net.nodes[v], holding)
    fs = set(tree.free)
    assert set(tree.factors) == {j for v in fs for j in (v, *net.children[v])}
    for j, q in zip(tree.factors, tree.home, strict=True):
        assert {v for v in (*net.parents[j], j) if v in fs} <= cliques[q]
    for q in range(1, len(cliques)):
        assert set(tree.separator(q)) == cliques[q] & cliques[tree.parent[q]]


@pytest.mark.parametrize("name", NAMES)
def test_tree_structure_and_same_tree_every_time(name: str) -> None:
    net = network(name)
    rng = np.random.default_rng(5)
    for k in (0, 3, net.n_nodes // 2):
        clamped = set(rng.choice(net.n_nodes, size=k, replace=False).tolist())
        free = [v for v in range(net.n_nodes) if v not in clamped]
        tree = jt.build(net, free[::-1])
        check_tree(net, tree)
        again = jt.build(net, free)
        assert (again.cliques, again.parent, again.home) == (tree.cliques, tree.parent, tree.home)
        assert jt.largest_clique(net, free) == tree.largest


def test_block_conditional_given_a_full_configuration_equals_enumeration() -> None:
    # The sampler's use: a block free, everything else clamped at a chain's current values.
    net = network("alarm")
    rng = np.random.default_rng(2)
    for _ in range(5):
        x = forward_sample(net, rng)
        block = sorted(rng.choice(net.n_nodes, size=6, replace=False).tolist())
        tree = jt.build(net, block)
        check_tree(net, tree)
        cal = jt.calibrate(tree, net, x)
        states = np.array(list(np.ndindex(*(net.cardinality[v] for v in block))))
        full = np.repeat(x[None], len(states), axis=0)
        full[:, block] = states
        w = np.exp(net.log_joint(full))
        for k, v in enumerate(block):
            p = np.bincount(states[:, k], weights=w, minlength=net.cardinality[v])
            np.testing.assert_allclose(cal.marginal(v), p / p.sum(), atol=1e-13)
        # the normaliser: the factors touching the block, summed over it
        outside = [j for j in range(net.n_nodes) if j not in tree.factors]
        const = sum(math.log(net.cpts[j][tuple(x[v] for v in (*net.parents[j], j))]) for j in outside)
        assert cal.log_normalizer + const == pytest.approx(math.log(w.sum()), abs=1e-12)


def test_a_clamp_that_cuts_the_graph_gives_pieces_hung_from_the_root() -> None:
    net = network("asia")
    ev = parse_evidence(net, "either=yes,smoke=no")  # cuts asia-tub from lung-bronc
    ex = jt.exact_marginals(net, ev)
    check_tree(net, ex.tree)
    assert any(not ex.tree.separator(q) for q in range(1, len(ex.tree.cliques)))
    for a, b in zip(ex.marginals, enumerate_marginals(net, ev), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-13)


def test_every_node_observed() -> None:
    net = network("earthquake")
    x = np.array([0, 1, 0, 0, 1])
    ev = dict(enumerate(x.tolist()))
    ex = jt.exact_marginals(net, ev)
    assert ex.tree.cliques == () and ex.tree.largest == 0
    assert ex.log_evidence == pytest.approx(float(net.log_joint(x)), abs=1e-14)


def test_impossible_evidence_is_refused() -> None:
    net = network("asia")
    with pytest.raises(InputError, match="tub=yes,either=no has probability zero"):
        jt.exact_marginals(net, parse_evidence(net, "either=no,tub=yes"))


def test_budget_error_names_the_largest_clique() -> None:
    net = network("insurance")
    tree = jt.build(net, range(net.n_nodes))
    with pytest.raises(jt.CliqueBudgetError) as info:
        jt.exact_marginals(net, {}, budget=tree.largest - 1)
    err = info.value
    assert isinstance(err, UsageError)
    assert err.entries == tree.largest and err.budget == tree.largest - 1
    assert f"{len(err.nodes)} nodes" in str(err) and f"{tree.largest} table entries" in str(err)
    assert str(pickle.loads(pickle.dumps(err))) == str(err)  # travels back from a Dask worker intact
    assert jt.exact_marginals(net, {}, budget=tree.largest).tree.largest == tree.largest


def test_min_fill_order_is_deterministic_and_prefers_no_fill() -> None:
    # A 4-cycle a-b-c-d-a with a pendant e on a: e goes first (no fill), then one chord.
    adj = {0: {1, 3, 4}, 1: {0, 2}, 2: {1, 3}, 3: {2, 0}, 4: {0}}
    elim = jt.eliminate(adj, [2] * 5)
    assert elim.order[:2] == (4, 0) and elim.complete  # then the smallest index among equal costs
    assert elim.cliques[:2] == ((0, 4), (0, 1, 3)) and elim.largest == (8, (0, 1, 3))
    stopped = jt.eliminate(adj, [2] * 5, stop_above=4)
    assert not stopped.complete and stopped.largest[0] == 8
