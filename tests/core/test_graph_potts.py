"""The Potts model on any graph (issue 31, item 11): the edge list, the exact moments, Gibbs and Swendsen-Wang."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import InputError, UsageError
from mcmc.core.samplers import gibbs, rwm
from mcmc.core.samplers import swendsen_wang as sw
from mcmc.core.samplers.driver import run
from mcmc.core.targets import csv_kind, default_sampler, get_target
from mcmc.core.targets.graph import read_graph
from tests.core.harness import evaluate

GRAPHS = Path(__file__).parents[1] / "data" / "graphs"
CUBE = GRAPHS / "cube.csv"
FRUSTRATED = GRAPHS / "frustrated.csv"


def write(tmp_path: Path, text: str, name: str = "g.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def enumerate_potts_graph(path: Path, q: int, beta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and sd of (energy, m), written from the definition: a loop over configurations and edges."""
    lines = [ln.split(",") for ln in path.read_text().splitlines() if ln and not ln.startswith("#")][1:]
    names = list(dict.fromkeys(n for ln in lines for n in ln[:2]))
    if all(n.isdigit() for n in names):
        names.sort(key=int)
    edges = [(names.index(ln[0]), names.index(ln[1]), float(ln[2]) if len(ln) > 2 else beta) for ln in lines]
    n = len(names)
    weights, values = [], []
    for s in itertools.product(range(q), repeat=n):
        agree = sum(b for i, j, b in edges if s[i] == s[j])
        counts = [s.count(k) for k in range(q)]
        weights.append(np.exp(agree))
        values.append((-agree / n, (q * max(counts) / n - 1) / (q - 1)))
    w = np.array(weights) / np.sum(weights)
    v = np.array(values)
    mean = w @ v
    return mean, np.sqrt(w @ (v - mean) ** 2)


# --- the file and the target ---------------------------------------------------


def test_reads_the_cube_its_nodes_edges_and_couplings() -> None:
    g = read_graph(CUBE)
    assert g.nodes == tuple(str(i) for i in range(8))
    assert g.first.size == 12 and np.all(g.first < g.second) and np.all(np.diff(g.first) >= 0)
    k = np.flatnonzero((g.first == 0) & (g.second == 4))[0]
    assert g.couplings[k] == 1.2
    assert csv_kind(str(CUBE)) == "graph" and default_sampler(str(CUBE)) == "gibbs"


def test_names_are_numbered_by_first_appearance_unless_all_are_numbers(tmp_path) -> None:
    assert read_graph(FRUSTRATED).nodes == ("a", "b", "c", "d")
    assert read_graph(write(tmp_path, "i,j\n10,2\n2,9\n")).nodes == ("2", "9", "10")


BAD = {
    "self-loop": ("i,j,beta\na,a,1\n", "line 2: a self-loop at 'a'"),
    "twice": ("i,j,beta\na,b,1\nb,a,2\n", "line 3: edge b-a is listed twice (also line 2)"),
    "coupling": ("i,j,beta\na,b,strong\n", "line 2, column 3: coupling 'strong' is not a number"),
    "infinite": ("i,j,beta\na,b,inf\n", "line 2, column 3: coupling inf is not finite"),
    "short line": ("i,j,beta\na,b\n", "line 2: 2 entries; expected i,j,beta"),
    "no edges": ("i,j,beta\n", "a header but no edges"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_graphs_are_one_line_naming_the_file(tmp_path, case) -> None:
    text, expected = BAD[case]
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_graph(path)
    assert err.value.source == str(path) and expected in err.value.message


def test_options_q_and_beta(tmp_path) -> None:
    plain = write(tmp_path, "i,j\n0,1\n1,2\n2,0\n")
    t = get_target(str(plain), q=3, beta=0.5)
    np.testing.assert_array_equal(t.couplings(), [0.5, 0.5, 0.5])
    assert t.beta == 0.5 and t.options == {"q": 3, "beta": 0.5}
    assert get_target(str(plain)).couplings().tolist() == [1.0, 1.0, 1.0]  # default beta 1, q 2
    with pytest.raises(UsageError, match="coupling per edge"):
        get_target(str(CUBE), beta=0.5)
    for bad in (1, 2.5, "three"):
        with pytest.raises(UsageError, match="q must be a whole number >= 2"):
            get_target(str(CUBE), q=bad)
    with pytest.raises(UsageError, match="do not apply to a graph file"):
        get_target(str(CUBE), size=4)


def test_the_colouring_is_proper_and_the_neighbour_table_lists_each_edge_both_ways() -> None:
    t = get_target(str(CUBE), q=3)
    colour = np.empty(t.dim, dtype=int)
    for c, nodes in enumerate(t.conditional_blocks()):
        colour[nodes] = c
    assert np.all(colour[t.graph.first] != colour[t.graph.second])
    listed = {(i, int(j), w) for i in range(t.dim) for j, w in zip(t.nbr[i], t.weight[i], strict=True) if w != 0}
    expected = {(int(a), int(b), w) for a, b, w in zip(t.graph.first, t.graph.second, t.couplings(), strict=True)}
    assert listed == expected | {(b, a, w) for a, b, w in expected}


@pytest.mark.parametrize(("path", "q"), [(CUBE, 2), (CUBE, 3), (FRUSTRATED, 3)])
def test_exact_moments_equal_an_independent_enumeration(path, q) -> None:
    t = get_target(str(path), q=q)
    mean, sd = enumerate_potts_graph(path, q)
    np.testing.assert_allclose(t.mean, mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.sd, sd, rtol=0, atol=1e-12)


def test_the_torus_as_a_graph_is_the_lattice_potts_model(tmp_path) -> None:
    size, q, beta = 3, 3, 0.8
    lattice = get_target("potts", size=size, q=q, beta=beta)
    first, second = lattice.bonds()
    edges = "\n".join(f"{a},{b}" for a, b in zip(first.tolist(), second.tolist(), strict=True))
    graph = get_target(str(write(tmp_path, f"i,j\n{edges}\n")), q=q, beta=beta)
    # The graph's energy carries the couplings (-sum beta_ij delta / n); the lattice's is per unit coupling.
    np.testing.assert_allclose(graph.mean, lattice.mean * [beta, 1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(graph.sd, lattice.sd * [beta, 1], rtol=0, atol=1e-12)
    x = np.floor(q * np.random.default_rng(0).random((5, size * size)))
    np.testing.assert_allclose(graph.log_density(x), lattice.log_density(x), rtol=0, atol=1e-12)


# --- the samplers against enumeration -------------------------------------------------------

CASES = [(gibbs, {}, CUBE, 3), (gibbs, {"scan": "random"}, CUBE, 3), (sw, {}, CUBE, 3), (sw, {}, CUBE, 2),
         (gibbs, {}, FRUSTRATED, 3), (gibbs, {"scan": "random"}, FRUSTRATED, 2)]  # fmt: skip


@pytest.mark.parametrize(
    ("sampler", "params", "path", "q"), CASES, ids=[f"{c[0].NAME}{c[1]}-{c[2].stem}-q{c[3]}" for c in CASES]
)
def test_sampler_matches_enumeration(sampler, params, path, q) -> None:
    target = get_target(str(path), q=q)
    chains = run(sampler, target, chains=4, warmup=100, draws=3000, seed=20261126, params=params).chains
    result = evaluate(chains, target)
    assert not result.failures, result.failures
    lp = chains.sample_stats["lp"]
    np.testing.assert_allclose(lp, -target.dim * chains.posterior["energy"], atol=1e-9)


def test_swendsen_wang_refuses_a_negative_coupling_and_other_samplers_keep_off() -> None:
    with pytest.raises(UsageError, match="needs every coupling >= 0"):
        run(sw, get_target(str(FRUSTRATED)), chains=2, warmup=1, draws=1, seed=1)
    with pytest.raises(UsageError, match="spin lattice"):
        run(rwm, get_target(str(CUBE)), chains=2, warmup=1, draws=1, seed=1)


@pytest.mark.parametrize("sampler", [gibbs, sw])
def test_chain_i_depends_only_on_the_seed_and_i(sampler) -> None:
    t = get_target(str(CUBE), q=3)
    both = run(sampler, t, chains=4, warmup=5, draws=30, seed=3).chains
    part = run(sampler, t, chain_ids=[2, 3], warmup=5, draws=30, seed=3).chains
    for name in both.posterior:
        np.testing.assert_array_equal(both.posterior[name][2:], part.posterior[name])
    for name in both.sample_stats:  # lp too: a sum whose order once depended on the number of chains
        np.testing.assert_array_equal(both.sample_stats[name][2:], part.sample_stats[name])
    one = run(sampler, t, chain_ids=[2], warmup=5, draws=30, seed=3).chains
    np.testing.assert_array_equal(both.sample_stats["lp"][2:3], one.sample_stats["lp"])
