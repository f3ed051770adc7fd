"""Exact answers for a run (``--exact``): the junction tree, variable elimination where it is too wide, the error.

* On every bundled network, :func:`posterior_marginals` is one calibrated
  junction tree and equals variable elimination node by node.
* On a generated network of 300 nodes (parents within a window of 8
  earlier nodes, so the treewidth stays small, and some deterministic
  tables), the tree gives every marginal in well under a second and equals
  variable elimination on a sample of nodes; blocked Gibbs through
  ``mcmc sample``'s library call with default options passes its checks and
  matches them.
* A tree over the budget falls back to variable elimination of the nodes
  asked for; when that is too wide as well, the error names the tree's
  largest clique, its size and what to do. ``log p(e)`` comes from variable
  elimination, then the tree, and is ``None`` when neither is in reach.
"""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import InputError
from mcmc.core.networks import exact as exact_mod
from mcmc.core.networks import junction_tree as jt
from mcmc.core.networks import variable_elimination as ve
from mcmc.core.networks.bif import read_bif
from mcmc.core.networks.evidence import parse_evidence
from mcmc.core.networks.exact import log_evidence, posterior_marginals
from mcmc.core.networks.network import BayesianNetwork
from tests.core.random_networks import evidence_of, random_network

DATA = Path(__file__).parents[1] / "data" / "networks"
NAMES = sorted(p.stem for p in DATA.glob("*.bif"))


@cache
def network(name: str) -> BayesianNetwork:
    return random_network(300, seed=7) if name == "random300" else read_bif(DATA / f"{name}.bif")


@pytest.mark.parametrize("name", NAMES)
def test_every_bundled_network_is_one_calibrated_tree_equal_to_variable_elimination(name: str) -> None:
    net = network(name)
    ev = evidence_of(net, seed=3)
    found = posterior_marginals(net, ev)
    assert found.method == "junction tree" and found.why_not_tree is None
    assert found.largest_clique == jt.build(net, [v for v in range(net.n_nodes) if v not in ev]).largest
    for q, p in enumerate(ve.marginals(net, ev)):
        np.testing.assert_allclose(found.marginals[net.nodes[q]], p, atol=1e-12, err_msg=net.nodes[q])
    assert log_evidence(net, ev) == pytest.approx(ve.log_evidence(net, ev), rel=1e-12)


def test_a_network_of_300_nodes_in_one_calibration() -> None:
    net = network("random300")
    ev = evidence_of(net, seed=1, k=6)
    t = time.perf_counter()
    found = posterior_marginals(net, ev)
    elapsed = time.perf_counter() - t
    assert found.method == "junction tree" and len(found.marginals) == 300
    assert found.largest_clique <= 10**5 and elapsed < 5.0, (found.largest_clique, elapsed)
    for q in np.random.default_rng(0).choice(300, size=12, replace=False):
        q = int(q)
        (p,) = ve.node_marginals(net, ev, [q]).values()
        np.testing.assert_allclose(found.marginals[net.nodes[q]], p, atol=1e-10, err_msg=net.nodes[q])
    assert jt.log_evidence(net, ev) == pytest.approx(ve.log_evidence(net, ev), rel=1e-10)


def test_a_network_of_300_nodes_sampled_with_default_options_passes_and_matches(tmp_path: Path) -> None:
    from mcmc.core.networks.driver import sample_network, to_chains
    from mcmc.diagnostics.report.network import estimate_indicators

    net = network("random300")
    ev = evidence_of(net, seed=1, k=6)
    run = sample_network(net, ev, "gibbs", seed=2)  # 4 chains x 1000 draws, the defaults of mcmc sample
    (block,) = run.attrs["blocks"]
    assert block["exact"] and len(block["nodes"]) == 300 - len(ev)
    est = estimate_indicators(to_chains(run), posterior_marginals(net, ev).marginals)
    assert est.report.passed, est.report.verdict()
    assert np.nanmax(est.z) < 4 and est.summary.rhat_max < 1.01


def test_a_tree_over_the_budget_falls_back_to_variable_elimination_of_the_nodes_asked() -> None:
    net = network("alarm")
    ev = parse_evidence(net, "HRBP=HIGH")
    found = posterior_marginals(net, ev, ["HYPOVOLEMIA", "LVFAILURE"], budget=20)
    assert found.method == "variable elimination" and set(found.marginals) == {"HYPOVOLEMIA", "LVFAILURE"}
    assert found.largest_clique > 20 and "over the budget of 20" in found.why_not_tree
    exact = ve.marginals(net, ev)
    for node, p in found.marginals.items():
        np.testing.assert_allclose(p, exact[net.index(node)], atol=1e-12)


def test_both_too_wide_names_the_largest_clique_and_what_to_do(monkeypatch) -> None:
    net = network("insurance")
    monkeypatch.setattr(ve, "MAX_FACTOR", 50)
    with pytest.raises(jt.CliqueBudgetError) as caught:
        posterior_marginals(net, {}, ["Accident"], budget=1000)
    err = caught.value
    full = jt.build(net, range(net.n_nodes), budget=10**9)
    assert err.entries == full.largest and set(err.nodes) == {net.nodes[v] for v in full.largest_clique}
    message = str(err)
    assert f"exact inference needs a junction tree clique of {len(err.nodes)} nodes" in message
    assert f"with {full.largest} table entries, over the budget of 1000" in message
    assert "variable elimination of the 1 nodes asked for needs a factor of" in message and "--query" in message
    assert "--exact" in message


def test_log_evidence_from_the_tree_when_elimination_is_too_wide_and_none_when_both_are(monkeypatch) -> None:
    net = network("alarm")
    ev = parse_evidence(net, "HRBP=HIGH,VENTMACH=ZERO")
    want = ve.log_evidence(net, ev)
    monkeypatch.setattr(ve, "MAX_FACTOR", 4)
    assert log_evidence(net, ev) == pytest.approx(want, rel=1e-12)
    assert log_evidence(net, ev, budget=4) is None
    with pytest.raises(InputError, match="has probability zero"):
        asia = network("asia")
        log_evidence(asia, parse_evidence(asia, "either=no,tub=yes"))


def test_a_run_on_a_network_too_wide_for_exact_inference_still_samples(monkeypatch) -> None:
    from mcmc.core.networks.driver import sample_network

    net = network("alarm")

    def too_wide(*args, **kwargs):
        raise jt.CliqueBudgetError(10**7, ["A", "B"], 10**6)

    monkeypatch.setattr(ve, "MAX_FACTOR", 4)
    monkeypatch.setattr(exact_mod.jt, "log_evidence", too_wide)
    run = sample_network(net, parse_evidence(net, "HRBP=HIGH"), "gibbs", draws=20, warmup=5, seed=1)
    assert run.attrs["log_evidence"] is None and run.codes.shape == (4, 20, 36)
