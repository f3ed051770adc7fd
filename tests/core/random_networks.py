"""Generated Bayesian networks for the tests: as wide as asked, with deterministic tables as bnlearn's have."""

from __future__ import annotations

import numpy as np

from mcmc.core.networks.network import BayesianNetwork


def random_network(n: int, seed: int, window: int = 8, max_parents: int = 3) -> BayesianNetwork:
    """``n`` nodes of 2 to 4 states; each node's parents among the ``window`` nodes before it.

    Every fifth node with two or more parents gets a deterministic table (the
    OR of its parents' first states), as bnlearn's networks have.
    """
    rng = np.random.default_rng(seed)
    card = rng.integers(2, 5, size=n)
    parents, cpts = [], []
    for i in range(n):
        k = int(min(i, rng.integers(0, max_parents + 1)))
        pa = tuple(sorted(int(p) for p in rng.choice(np.arange(max(0, i - window), i), size=k, replace=False)))
        shape = tuple(int(card[p]) for p in pa) + (int(card[i]),)
        if len(pa) >= 2 and i % 5 == 0:
            table = np.zeros(shape)
            idx = np.indices(shape[:-1])
            any_first = np.any(idx == 0, axis=0)
            table[..., 0] = any_first
            table[..., 1] = ~any_first
        else:
            table = rng.dirichlet(np.full(shape[-1], 0.7), size=shape[:-1])
        parents.append(pa)
        cpts.append(table)
    names = tuple(f"N{i:03d}" for i in range(n))
    states = tuple(tuple(f"s{k}" for k in range(int(c))) for c in card)
    return BayesianNetwork(names, states, tuple(parents), tuple(cpts), name=f"random{n}")


def evidence_of(net: BayesianNetwork, seed: int, k: int = 3) -> dict[int, int]:
    """``k`` nodes of a forward sample: evidence of positive probability."""
    rng = np.random.default_rng(seed)
    x = np.zeros(net.n_nodes, dtype=np.int64)
    for i in range(net.n_nodes):
        p = net.cpts[i][tuple(x[j] for j in net.parents[i])]
        x[i] = rng.choice(p.size, p=p)
    nodes = sorted(int(v) for v in rng.choice(net.n_nodes, size=k, replace=False))
    return {v: int(x[v]) for v in nodes}
