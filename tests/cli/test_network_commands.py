"""Bayesian networks on the command line: `mcmc sample --target NET.bif` (marginals with MCSE beside exact ones,
evidence errors, the three samplers), `mcmc diagnose` of its chains file (NODE[STATE] parameters) and
`mcmc compare -t NET.bif -s gibbs,likelihood-weighting,rejection` (ranked by ESS per second)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

NETWORKS = Path(__file__).parents[1] / "data" / "networks"
EARTHQUAKE = str(NETWORKS / "earthquake.bif")
ASIA = str(NETWORKS / "asia.bif")
BOTH_CALL = ("--observe", "JohnCalls=True,MaryCalls=True")


def _row(stderr: str, node: str, state: str) -> list[str]:
    """The cells of the marginals table's row ``node state ...`` (a node's later states have no node cell)."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        cells = line.split()
        if cells[:1] == [node]:
            for later in lines[i:]:
                cells = later.split()
                if cells[:2] == [node, state]:
                    return cells[2:]
                if len(cells) > 1 and cells[0] == state:
                    return cells[1:]
    raise AssertionError(f"no row {node} {state} in:\n{stderr}")


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_lecture_example_burglary_given_both_calls_within_4_mcse_of_exact(mcmc, tmp_path: Path) -> None:
    from mcmc.core.networks.bif import read_bif
    from mcmc.core.networks.evidence import parse_evidence
    from mcmc.core.networks.variable_elimination import marginals

    out = tmp_path / "b.npz"
    r = mcmc("sample", "--target", EARTHQUAKE, *BOTH_CALL, "--query", "Burglary", "--exact", "--seed", "1",
             "-o", str(out))  # fmt: skip
    assert r.code == 0, r.stderr
    net = read_bif(EARTHQUAKE)
    exact = marginals(net, parse_evidence(net, "JohnCalls=True,MaryCalls=True"))[net.index("Burglary")]
    for k, state in enumerate(("True", "False")):
        estimate, mcse, shown_exact, z, ess, rhat = _row(r.stderr, "Burglary", state)
        assert float(shown_exact) == pytest.approx(exact[k], abs=5e-5)  # printed to 4 significant figures
        assert 0 < float(mcse) < 0.05
        assert abs(float(estimate) - exact[k]) / float(mcse) < 4
        assert float(ess) > 100 and float(rhat) < 1.05
    assert re.search(r"evidence: JohnCalls=True, MaryCalls=True", r.stderr)
    assert "exact values: one calibrated junction tree (largest clique" in r.stderr
    assert not any(line.split()[:1] == ["Earthquake"] for line in r.stderr.splitlines())  # only the queried node
    with np.load(out, allow_pickle=False) as npz:
        attrs = json.loads(str(npz["__attrs__"]))
        assert npz["Burglary"].shape == (4, 1000) and npz["Burglary"].dtype.kind == "i"
        assert "JohnCalls" not in npz.files
    assert attrs["state_names"]["Burglary"] == ["True", "False"]
    assert attrs["observed"] == {"JohnCalls": "True", "MaryCalls": "True"} and attrs["sampler"] == "gibbs"


def test_same_command_same_bytes(mcmc, tmp_path: Path) -> None:
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    for out in (a, b):
        r = mcmc("sample", "-t", EARTHQUAKE, *BOTH_CALL, "--seed", "5", "--draws", "50", "--no-check", "-o", str(out))
        assert r.code == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("sampler", ["rejection", "likelihood-weighting"])
def test_independent_samplers_report_their_own_figures(mcmc, tmp_path: Path, sampler: str) -> None:
    # likelihood weighting: the Kish ESS of 8000 weights here is about 570, over the 400 the checks ask
    draws = "2000" if sampler == "rejection" else "8000"
    r = mcmc("sample", "-t", EARTHQUAKE, *BOTH_CALL, "-s", sampler, "--exact", "--seed", "2", "--draws", draws,
             "-o", str(tmp_path / "r.npz"))  # fmt: skip
    assert r.code == 0, r.stderr
    if sampler == "rejection":
        # P(J, M) = exp(-4.543) ~ 0.0106: about one forward sample in 94 agrees with the evidence
        rate = float(re.search(r"acceptance (\S+)", r.stderr)[1])
        assert 0.008 < rate < 0.014
        assert "R-hat" in r.stderr
    else:
        assert re.search(r"ESS of the weights \(Kish\) \d+", r.stderr)
        assert "R-hat max" not in r.stderr and "no R-hat" in r.stderr  # weighted draws are not a chain
    # every unobserved node shown by default (3 of them), each state within 4 MCSE of the exact marginal
    for node in ("Burglary", "Earthquake", "Alarm"):
        estimate, mcse, exact, z, *_ = _row(r.stderr, node, "True")
        assert float(z) < 4 and abs(float(estimate) - float(exact)) < 4 * float(mcse) + 5e-5
    assert "every shown estimate within 4 MCSE" in r.stderr


def test_json_document_of_a_network_run(tmp_path: Path) -> None:
    from mcmc.cli.commands.sample import SampleSpec, sample_run
    from mcmc.cli.render import render

    spec = SampleSpec(target=EARTHQUAKE, sampler="likelihood-weighting", draws=500, seed=3,
                      observe=("JohnCalls=True",), query=("Burglary,Alarm",), exact=True)  # fmt: skip
    result = sample_run(spec, str(tmp_path / "w.npz"))
    buf = io.StringIO()
    render(result, "json", buf)
    doc = json.loads(buf.getvalue())
    net = doc["network"]
    assert net["weighted"] and net["evidence"] == "JohnCalls=True" and list(net["marginals"]) == ["Burglary", "Alarm"]
    burglary = net["marginals"]["Burglary"]
    assert set(burglary) == {"True", "False"}
    assert burglary["True"]["estimate"] + burglary["False"]["estimate"] == pytest.approx(1.0)
    assert burglary["True"]["rhat"] is None and burglary["True"]["ess"] == pytest.approx(net["ess_weights"])


def test_deterministic_or_is_drawn_in_one_block_without_warning(mcmc, tmp_path: Path) -> None:
    # asia's 'either' is the deterministic OR of tub and lung: single-site Gibbs would freeze there; the
    # default draws every free node in one block through the junction tree, so nothing is left to warn about
    out = tmp_path / "a.npz"
    r = mcmc("sample", "-t", ASIA, "--seed", "1", "--draws", "50", "--warmup", "20", "--no-check", "-o", str(out))
    assert r.code == 0, r.stderr
    assert "freeze" not in r.stderr
    assert re.search(r"blocks \(auto, clique budget 1,000,000\): one block of all 8 unobserved nodes, largest clique 8 "
                     r"entries \(\d+ cliques\): every draw exact", r.stderr), r.stderr
    with np.load(out, allow_pickle=False) as npz:
        attrs = json.loads(str(npz["__attrs__"]))
    (block,) = attrs["blocks"]
    assert len(block["nodes"]) == 8 and block["exact"] and block["largest_clique"] == 8
    assert attrs["block_choice"] == "auto" and attrs["block_budget"] == 10**6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-t", EARTHQUAKE, "--observe", "JohnCalls=Maybe"), r"no state 'Maybe'; its states are: True, False"),
        (("-t", EARTHQUAKE, "--observe", "John=True"), r"unknown node 'John'; the nodes are: Burglary, Earthquake"),
        (("-t", EARTHQUAKE, "--observe", "JohnCalls"), r"expected NODE=STATE"),
        (("-t", EARTHQUAKE, "--query", "Nope"), r"unknown node 'Nope'"),
        (("-t", EARTHQUAKE, *BOTH_CALL, "--query", "JohnCalls"), r"the node is observed \(JohnCalls=True\)"),
        (("-t", ASIA, "--observe", "either=no", "--observe", "tub=yes"), r"has probability zero"),
        (("-t", ASIA, "--observe", "either=no,tub=yes", "-s", "rejection"), r"has probability zero"),
        (("-t", EARTHQUAKE, "-s", "hmc"), r"--sampler hmc does not sample a Bayesian network; use gibbs"),
        (("-t", EARTHQUAKE, "--dim", "3"), r"do not apply to a Bayesian network"),
        (("-t", "gaussian", "-s", "likelihood-weighting"), r"applies to a Bayesian network target"),
        (("-t", "gaussian", "--observe", "a=b"), r"--observe, --query and --exact apply to a Bayesian network"),
        (("-t", ASIA, "-P", "gibbs:blocks=tub+lungs"), r"unknown node 'lungs' \(not in the network\); did you mean"),
        (("-t", ASIA, "-P", "gibbs:blocks=tub+lung;lung+either"), r"node 'lung' is named twice"),
        (("-t", ASIA, "-P", "gibbs:budget=0"), r"gibbs:budget=0'?: must be a whole number >= 1, got 0"),
        (("-t", ASIA, "-P", "gibbs:budget=4", "-P", "gibbs:blocks=tub+lung+either"),
         r"block 'tub\+lung\+either' needs a junction tree clique of 3 nodes .* 8 table entries, over the budget of 4"),
        (("-t", ASIA, "-s", "rejection", "-P", "budget=10"), r"rejection has no option 'budget'"),
    ],
)
def test_bad_network_input_is_one_line_and_exit_2(mcmc, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    out = tmp_path / "x.npz"
    r = mcmc("sample", *args, "--draws", "20", "--warmup", "10", "-o", str(out))
    assert r.code == 2, r.stderr
    assert re.search(message, _one_error_line(r.stderr)), r.stderr
    assert not out.exists()


def test_blocks_and_budget_reach_gibbs_and_the_summary_names_them(mcmc, tmp_path: Path) -> None:
    args = ("sample", "-t", ASIA, "--seed", "1", "--draws", "200", "--warmup", "20", "--no-check")
    single = mcmc(*args, "-P", "gibbs:blocks=single", "-o", str(tmp_path / "s.npz"))
    assert single.code == 0, single.stderr
    line = "blocks (single, clique budget 1,000,000): none: each of the 8 nodes from its Markov blanket"
    assert line in single.stderr
    assert re.search(r"warning: .*'either'.*freeze single-site Gibbs on lung, tub, either", single.stderr)
    named = mcmc(*args, "-P", "blocks=tub+lung+either;smoke+bronc", "-P", "budget=64", "-o", str(tmp_path / "n.npz"))
    assert named.code == 0, named.stderr
    # blocks in scan order (their first node's topological order), each with its largest clique
    assert re.search(r"blocks \(custom, clique budget 64\): smoke\+bronc \(largest clique 4\); tub\+lung\+either "
                     r"\(largest clique 8\); 3 nodes singly", named.stderr), named.stderr
    with np.load(tmp_path / "n.npz", allow_pickle=False) as npz:
        attrs = json.loads(str(npz["__attrs__"]))
    assert [b["nodes"] for b in attrs["blocks"]] == [["smoke", "bronc"], ["tub", "lung", "either"]]
    assert attrs["block_choice"] == "custom" and attrs["block_budget"] == 64
    assert [b["boundary"] > 0 for b in attrs["blocks"]] == [True, True] and not attrs.get("warnings")


def test_a_run_that_cannot_mix_exits_1_naming_the_nodes_and_the_remedies(mcmc, tmp_path: Path) -> None:
    # single-site Gibbs on alarm given VENTMACH=ZERO: near-deterministic tables keep the chains apart
    r = mcmc("sample", "-t", str(NETWORKS / "alarm.bif"), "--observe", "VENTMACH=ZERO", "-P", "gibbs:blocks=single",
             "--seed", "1", "-o", str(tmp_path / "a.npz"))  # fmt: skip
    assert r.code == 1, r.stderr
    advice = next(line for line in r.stderr.splitlines() if "have not mixed on" in line)
    assert "updated singly" in advice and "-P gibbs:budget=N, now 1000000 entries" in advice
    assert "-P gibbs:blocks=A+B+C;D+E" in advice and "-s likelihood-weighting" in advice
    default = mcmc("sample", "-t", str(NETWORKS / "alarm.bif"), "--observe", "VENTMACH=ZERO", "--seed", "1",
                   "-o", str(tmp_path / "b.npz"))  # fmt: skip
    assert default.code == 0, default.stderr


def test_compare_passes_the_block_settings_to_gibbs(mcmc) -> None:
    r = mcmc("compare", "-t", str(NETWORKS / "alarm.bif"), "--observe", "HRBP=HIGH", "-s",
             "gibbs,likelihood-weighting", "-P", "gibbs:blocks=single", "--seed", "1", "-f", "json",
             "--no-check")  # fmt: skip
    doc = json.loads(r.out)
    assert doc["params"]["gibbs"] == {"blocks": "single"}
    # single-site Gibbs does not mix on alarm: its means are off, which fails even with --no-check
    assert r.code == 1 and "off the exact value: gibbs mean" in doc["verdict"], r.stderr


def test_random_scan_on_a_network_from_sample_and_compare(mcmc, tmp_path: Path) -> None:
    # issue 31, item 2: -P gibbs:scan=random on a network, its marginals beside the junction tree's
    cancer = str(NETWORKS / "cancer.bif")
    out = tmp_path / "r.npz"
    r = mcmc("sample", "-t", cancer, "--observe", "Dyspnoea=True", "-P", "gibbs:scan=random", "-P",
             "gibbs:blocks=Smoker+Cancer", "--exact", "--seed", "2", "--draws", "4000", "-f", "json", "-o", str(out))
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)["network"]
    assert doc["scan"] == "random" and doc["z_ok"] and doc["z_max"] < 4
    with np.load(out, allow_pickle=False) as npz:
        assert json.loads(str(npz["__attrs__"]))["scan"] == "random"
    table = mcmc("sample", "-t", cancer, "-P", "gibbs:scan=random", "-P", "gibbs:blocks=Smoker+Cancer", "--draws",
                 "100", "--warmup", "10", "--no-check", "-o", str(tmp_path / "t.npz"))  # fmt: skip
    assert "blocks (custom, clique budget 1,000,000, random scan): Smoker+Cancer" in table.stderr, table.stderr
    c = mcmc("compare", "-t", cancer, "--observe", "Dyspnoea=True", "-s", "gibbs,gibbs:scan=random", "-P",
             "gibbs:blocks=single", "--draws", "4000", "--seed", "1", "-f", "json")  # fmt: skip
    assert c.code == 0, c.stderr
    cmp = json.loads(c.out)
    assert cmp["params"] == {"gibbs": {"blocks": "single"}, "gibbs:scan=random": {"blocks": "single", "scan": "random"}}
    rows = {row["sampler"]: row for row in cmp["samplers"]}
    assert set(rows) == {"gibbs", "gibbs:scan=random"}
    # a random scan leaves some nodes un-updated in a sweep: its draws are more autocorrelated
    assert rows["gibbs:scan=random"]["iat_max"] > rows["gibbs"]["iat_max"] > 0
    assert rows["gibbs:scan=random"]["acf1_max"] > rows["gibbs"]["acf1_max"]
    bad = mcmc("sample", "-t", cancer, "-P", "gibbs:scan=sideways", "-o", str(tmp_path / "x.npz"))
    assert bad.code == 2 and "gibbs:scan=sideways': must be one of systematic, random" in _one_error_line(bad.stderr)


def test_a_variants_node_names_keep_their_case(mcmc) -> None:
    r = mcmc("compare", "-t", EARTHQUAKE, *BOTH_CALL, "-s", "gibbs,GIBBS:Blocks=Burglary+Alarm", "--draws", "500",
             "--seed", "1", "-f", "json", "--no-check")  # fmt: skip
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)
    assert doc["params"]["gibbs:blocks=Burglary+Alarm"] == {"blocks": "Burglary+Alarm"}
    assert {row["sampler"] for row in doc["samplers"]} == {"gibbs", "gibbs:blocks=Burglary+Alarm"}


def test_default_sampler_of_a_network_is_gibbs() -> None:
    from mcmc.core.targets import default_sampler

    assert default_sampler("nets/alarm.bif") == "gibbs" and default_sampler("ALARM.BIF") == "gibbs"
    assert default_sampler("gaussian") == "hmc"


# --------------------------------------------------------------------------- mcmc diagnose


def test_diagnose_reports_node_states_as_indicator_parameters(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "g.npz"
    r = mcmc("sample", "-t", EARTHQUAKE, *BOTH_CALL, "--seed", "4", "--draws", "500", "-q", "--no-check", "-o",
             str(out))  # fmt: skip
    assert r.code == 0, r.stderr
    with np.load(out, allow_pickle=False) as npz:
        codes = {node: npz[node] for node in ("Burglary", "Earthquake", "Alarm")}
    d = mcmc("diagnose", str(out), "-f", "json")
    assert d.code in (0, 1), d.stderr
    params = {p["name"]: p for p in json.loads(d.out)["parameters"]}
    assert set(params) == {f"{n}[{s}]" for n in codes for s in ("True", "False")}
    for node, c in codes.items():
        t, f = params[f"{node}[True]"], params[f"{node}[False]"]
        assert t["variable"] == node
        assert t["mean"] == pytest.approx(np.mean(c == 0), abs=1e-12)  # code 0 is the file's first state, True
        assert t["mean"] + f["mean"] == pytest.approx(1.0)
        assert t["mcse_mean"] > 0 and np.isfinite(t["rhat"]) and t["ess_bulk"] > 0
    # --var NODE selects the node's states
    v = mcmc("diagnose", str(out), "--var", "Burglary", "-f", "json")
    assert [p["name"] for p in json.loads(v.out)["parameters"]] == ["Burglary[True]", "Burglary[False]"]


def test_diagnose_judges_a_weighted_run_by_its_weights_and_compare_refuses_it(mcmc, tmp_path: Path) -> None:
    """diagnose and sample give one verdict on weighted draws: the Kish ESS and Pareto k of the weights, and the
    self-normalised marginals; compare, which z-tests equally weighted chains, refuses them in one line."""
    out = tmp_path / "w.npz"
    s = mcmc("sample", "-t", EARTHQUAKE, *BOTH_CALL, "-s", "likelihood-weighting", "--seed", "1", "--draws", "2000",
             "-q", "--no-check", "-o", str(out))  # fmt: skip
    assert s.code == 0, s.stderr
    r = mcmc("diagnose", str(out), "-f", "json")
    doc = json.loads(r.out)
    assert {c["name"] for c in doc["checks"]} == {"ess", "pareto-k"}
    assert doc["weights"]["draws"] == 8000 and doc["weights"]["kish_ess"] > 0
    params = {p["name"]: p for p in doc["parameters"]}
    assert params["Burglary[True]"]["mean"] == pytest.approx(0.5565, abs=4 * params["Burglary[True]"]["mcse_mean"])
    assert params["Burglary[True]"]["rhat"] is None  # no R-hat for independent weighted draws
    j = mcmc("sample", "-t", EARTHQUAKE, *BOTH_CALL, "-s", "likelihood-weighting", "--seed", "1", "--draws", "2000",
             "-q", "--no-check", "-o", str(tmp_path / "w2.npz"), "--query", "Burglary")  # fmt: skip
    assert j.code == 0
    assert r.code == (0 if doc["passed"] else 1)
    c = mcmc("compare", str(out), str(tmp_path / "w2.npz"))
    assert c.code == 2
    assert re.search(r"w\.npz: holds weighted draws .* mcmc diagnose judges weighted draws", _one_error_line(c.stderr))


# --------------------------------------------------------------------------- mcmc compare


def test_compare_ranks_the_three_network_samplers_by_ess_per_second(mcmc) -> None:
    r = mcmc("compare", "-t", EARTHQUAKE, *BOTH_CALL, "-s", "gibbs,likelihood-weighting,rejection", "--seed", "1",
             "--draws", "1000", "--warmup", "200", "-f", "json", "--no-check")  # fmt: skip
    # every sampler within 4 MCSE of the exact marginals; likelihood weighting's 4000 weights have a Kish ESS
    # under 400 here, which --no-check reports without failing
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)
    rows = doc["samplers"]
    assert sorted(row["sampler"] for row in rows) == ["gibbs", "likelihood-weighting", "rejection"]
    assert doc["exact_moments"] and doc["dim"] == 6
    assert doc["target_options"] == {"observe": "JohnCalls=True,MaryCalls=True"}
    speeds = [row["ess_per_s"] for row in rows]
    assert all(s > 0 for s in speeds) and speeds == sorted(speeds, reverse=True)  # best first
    for row in rows:
        assert row["mean_z_max"] < 4 and row["ess_min"] > 0
        assert row["ess_per_s"] == pytest.approx(row["ess_min"] / row["sampling_time_s"])
    by = {row["sampler"]: row for row in rows}
    assert by["likelihood-weighting"]["rhat_max"] is None and by["gibbs"]["rhat_max"] < 1.05
    assert 0.008 < by["rejection"]["acceptance"] < 0.014  # P(J, M) ~ 0.0106
    assert by["rejection"]["n_density_evals"] > 50 * 4000  # forward samples, the rejected ones included
    ranking = " > ".join(f"{row['sampler']} {row['ess_per_s']:,.0f}" for row in rows)
    assert f"ranked by ESS per second (the smallest over the 6 state indicators): {ranking}" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-s", "gibbs,hmc"), r"'hmc' does not sample a Bayesian network"),
        (("-s", "gibbs", "--observe", "Alarm=Loud"), r"no state 'Loud'"),
        (("-s", "gibbs", "-P", "gibbs:scale=1"), r"gibbs has no option 'scale'"),
    ],
)
def test_compare_network_errors(mcmc, args: tuple[str, ...], message: str) -> None:
    r = mcmc("compare", "-t", EARTHQUAKE, *args, "--draws", "20")
    assert r.code == 2
    assert re.search(message, _one_error_line(r.stderr)), r.stderr
