"""One verdict: every command that writes draws judges them as ``mcmc diagnose`` judges the file.

The checks of ``diagnose`` are the only rules (issue 25): ``sample`` and
``compare`` exit 1 when the draws fail them (after the file is written, with
the verdict line and what to do), ``--no-check`` restores exit 0, the limits
come from the same options and ``[tool.mcmc.diagnose]`` table, every list of
failing parameters is worst first, ``--min-ess`` defaults to 100 per chain,
and a move rate estimated from draws is called so and not judged where it is
no acceptance rate.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains

DATA = Path(__file__).parents[1] / "data"
NETWORKS = sorted((DATA / "networks").glob("*.bif"))
BERNOULLI = str(DATA / "fixtures" / "cmdstan" / "bernoulli_chain_1.csv")
NUMPYRO = str(DATA / "diagnose" / "numpyro_eight_schools.nc")
PYMC = str(DATA / "diagnose" / "pymc_eight_schools.nc")


def _verdict(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if line.startswith(("PASS", "FAIL")))


@pytest.mark.parametrize(
    "args",
    [
        ("-t", "eight-schools", "-s", "rwm", "--seed", "1"),  # R-hat 1.06, ESS 60: exited 0 before
        ("-t", "eight-schools", "-s", "hmc", "--seed", "23"),  # one divergence: diagnose fails it
        ("-t", "eight-schools", "-s", "hmc", "--target-accept", "0.9", "--seed", "1"),  # passes
        ("-t", "banana", "-s", "slice", "--draws", "300", "--seed", "2"),
    ],
    ids=["rwm-fails", "divergence", "hmc-passes", "slice-short"],
)
def test_sample_exits_as_diagnose_judges_the_file(mcmc, tmp_path: Path, args: tuple[str, ...]) -> None:
    out = tmp_path / "run.npz"
    s = mcmc("sample", *args, "-o", str(out))
    d = mcmc("diagnose", str(out))
    assert out.exists()  # written either way: the file is the evidence
    assert s.code == d.code and s.code in (0, 1), (s.stderr, d.stderr)
    # the same verdict line, word for word (sample adds where the draws are when they fail)
    assert _verdict(s.stderr).startswith(_verdict(d.stderr))
    if s.code == 1:
        assert f"mcmc diagnose {out}" in s.stderr and "what to do:" in s.stderr
        again = mcmc("sample", *args, "-o", str(tmp_path / "again.npz"), "--no-check")
        assert again.code == 0 and "--no-check" in again.stderr and _verdict(again.stderr).startswith("FAIL")


def test_sample_summary_is_the_diagnose_report(tmp_path: Path) -> None:
    from mcmc.cli.commands.diagnose import diagnose
    from mcmc.cli.commands.sample import SampleSpec, sample_run

    out = tmp_path / "run.npz"
    result = sample_run(SampleSpec(target="funnel", sampler="hmc", seed=3, draws=300, warmup=300), str(out))
    report = diagnose([str(out)])
    assert result.report.to_dict() == report.to_dict()
    s = result.summary
    assert s.passed == report.passed and s.verdict == report.verdict()
    assert s.rhat_max == max(p.rhat for p in report.parameters)
    assert s.ess_tail_min == min(p.ess_tail for p in report.parameters)


def test_sample_limits_come_from_the_options_and_pyproject(mcmc, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ("sample", "-t", "gaussian", "--dim", "2", "-s", "slice", "--warmup", "100", "--draws", "100", "--seed", "4", "-q")
    assert mcmc(*args, "-o", "a.npz").code == 1  # 4 chains x 100 slice draws: ESS below 400
    assert mcmc(*args, "-o", "b.npz", "--min-ess", "10", "--max-rhat", "1.2").code == 0
    (tmp_path / "pyproject.toml").write_text("[tool.mcmc.diagnose]\nmin-ess = 10\nmax-rhat = 1.2\n")
    assert mcmc(*args, "-o", "c.npz").code == 0  # the table every command reads
    assert mcmc("diagnose", "c.npz").code == 0
    assert mcmc(*args, "-o", "d.npz", "--min-ess", "100000").code == 1  # options win
    (tmp_path / "pyproject.toml").write_text("[tool.mcmc.diagnose]\nmax-rhat = 'inf'\n")
    r = mcmc(*args, "-o", "e.npz")
    assert r.code == 2 and "[tool.mcmc.diagnose] max-rhat" in r.stderr and not (tmp_path / "e.npz").exists()


def test_compare_fails_when_a_samplers_draws_fail_the_checks(mcmc) -> None:
    args = ("compare", "-t", "eight-schools", "-s", "hmc,rwm", "--seed", "1")
    r = mcmc(*args, "-f", "json")
    assert r.code == 1
    line = _verdict(r.stderr)
    assert "draws fail the checks of mcmc diagnose (rwm: R-hat > 1.01 for mu" in line and "hmc:" not in line
    rows = {row["sampler"]: row for row in json.loads(r.out)["samplers"]}
    assert rows["hmc"]["passed"] and not rows["rwm"]["passed"]
    assert mcmc(*args, "--no-check").code == 0


def _named(line: str, check: str) -> list[str]:
    part = next(p for p in line.removeprefix("FAIL: ").split("; ") if p.startswith(check))
    return part.split(" for ", 1)[1].split(" and ")[0].split(", ")


def test_failing_parameters_are_listed_worst_first_everywhere(mcmc, tmp_path: Path) -> None:
    # eight parameters whose chains disagree more and more: the worst is last in the file
    rng = np.random.default_rng(0)
    offsets = np.linspace(0.05, 1.5, 8)
    x = rng.standard_normal((4, 500, 8)) + offsets * np.arange(4)[:, None, None]
    run = tmp_path / "run.npz"
    write_chains(Chains({"x": x}), run)
    junit, md = tmp_path / "j.xml", tmp_path / "r.md"
    r = mcmc("diagnose", str(run), "--junit", str(junit), "--output-md", str(md), "-f", "json")
    assert r.code == 1
    doc = json.loads(r.out)
    rhat = {p["name"]: p["rhat"] for p in doc["parameters"]}
    worst = sorted(rhat, key=rhat.get, reverse=True)
    assert worst[0] == "x[7]"
    line = _verdict(r.stderr)
    shown = _named(line, "R-hat")
    assert shown == worst[: len(shown)] and "x[7]" in shown  # "and N more" never hides the worst
    assert doc["failing"][0] == "x[7]"
    assert next(c for c in doc["checks"] if c["name"] == "rhat")["parameters"][:2] == worst[:2]
    cases = junit.read_text()
    assert cases.index('name="x[7]"') < cases.index('name="x[6]"') < cases.index('name="x[2]"')
    text = md.read_text()
    assert text.index("x[7]") < text.index("x[6]")


def test_github_annotations_name_the_worst_first(mcmc, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    r = mcmc("diagnose", PYMC)
    annotation = next(line for line in r.out.splitlines() if line.startswith("::error") and "rhat" in line)
    assert annotation.split("R-hat > 1.01 for ", 1)[1].startswith("tau")  # the worst, left out before


def test_min_ess_is_100_per_chain(mcmc) -> None:
    r = mcmc("diagnose", BERNOULLI, "-f", "json")  # one CmdStan chain, bulk ESS 361 (failed at 400 before)
    doc = json.loads(r.out)
    assert doc["thresholds"]["min_ess"] == 100 and doc["thresholds"]["min_ess_per_chain"] == 100
    assert all(c["passed"] for c in doc["checks"] if c["name"] == "ess")
    assert "ESS >= 100 (100 per chain)" in r.stderr
    help_text = mcmc("diagnose", "--help").out
    assert "100 per chain" in " ".join(help_text.split())
    # a total given is a total, whatever the number of chains
    assert json.loads(mcmc("diagnose", BERNOULLI, "--min-ess", "400", "-f", "json").out)["passed"] is False


def test_a_move_rate_is_called_so_and_judged_only_for_metropolis(mcmc, tmp_path: Path) -> None:
    doc = json.loads(mcmc("diagnose", NUMPYRO, "-f", "json").out)  # NUTS without an accept statistic
    acc = doc["sampler"]["acceptance"]
    assert acc["label"] == "move rate" and acc["judged"] is False and acc["source"] == "estimated from draws"
    table = mcmc("diagnose", NUMPYRO).out
    assert "move rate" in table and "acceptance  " not in table
    # Gibbs draws: always move, never flagged
    rng = np.random.default_rng(1)
    draws = rng.standard_normal((8, 200))
    draws[3] = 0.0  # one chain that never moves would be an acceptance outlier
    gibbs = tmp_path / "gibbs.npz"
    write_chains(Chains({"x": draws}, attrs={"sampler": "gibbs"}), gibbs)
    acc = json.loads(mcmc("diagnose", str(gibbs), "-f", "json").out)["sampler"]["acceptance"]
    assert acc["judged"] is False
    rwm = tmp_path / "rwm.npz"
    write_chains(Chains({"x": draws}, attrs={"sampler": "some-metropolis"}), rwm)
    acc = json.loads(mcmc("diagnose", str(rwm), "-f", "json").out)["sampler"]["acceptance"]
    assert acc["judged"] is True and acc["label"] == "move rate"


def test_a_file_without_parameters_is_refused_not_passed(mcmc, tmp_path: Path) -> None:
    empty = tmp_path / "empty.npy"
    np.save(empty, np.zeros((100, 4, 0)))
    r = mcmc("diagnose", str(empty), "--layout", "draw,chain")
    assert r.code == 2 and "no parameters to judge" in r.stderr


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_infinite_limits_are_refused(mcmc, value: str) -> None:
    r = mcmc("diagnose", BERNOULLI, "--max-rhat", value)
    assert r.code == 2 and "--max-rhat" in r.stderr


# --------------------------------------------------------------------------- networks: never exit 0 when wrong


def _evidence_sets(network, rng: np.random.Generator) -> list[dict[str, str]]:
    """Evidence on 1, 2 and 4 nodes, drawn from forward samples: always of positive probability."""
    from mcmc.core.networks.tables import compile_network, forward_sample
    from mcmc.core.random import ChainRandom

    tables = compile_network(network)
    u = ChainRandom(int(rng.integers(2**31)), (0,)).uniform((network.n_nodes,)).reshape(1, -1)
    codes, _, _ = forward_sample(tables, u, weighted=False)
    out = []
    for k in (1, 2, 4):
        nodes = rng.choice(network.n_nodes, size=min(k, network.n_nodes - 1), replace=False)
        out.append({network.nodes[i]: network.states[i][int(codes[0, i])] for i in sorted(nodes)})
    return out


@pytest.mark.parametrize("path", NETWORKS, ids=[p.stem for p in NETWORKS])
def test_default_network_runs_are_right_or_fail_naming_the_nodes(path: Path, tmp_path: Path) -> None:
    from mcmc.cli.commands.sample import SampleSpec, sample_run
    from mcmc.core.networks.bif import read_bif

    net = read_bif(path)
    rng = np.random.default_rng(zlib.crc32(path.stem.encode()))  # str hash() changes with every process
    for k, evidence in enumerate(_evidence_sets(net, rng)):
        observe = tuple(f"{n}={s}" for n, s in evidence.items())
        spec = SampleSpec(target=str(path), sampler="gibbs", seed=k + 1, observe=observe, exact=True)
        result = sample_run(spec, str(tmp_path / f"{k}.npz"))
        est_ok = all(st.z is None or st.z < 4 for m in result.network.marginals for st in m.states)
        exact = _all_z(result)
        # Blocked Gibbs mixes on every bundled network: each default run (4 x 1000 draws) passes its checks,
        # and is right: every indicator within 4 MCSE of the exact marginal, R-hat < 1.01.
        assert result.passed, (path.stem, evidence, result.verdict(), result.advice)
        assert exact.max() < 4, (path.stem, evidence, exact.max())
        assert result.summary.rhat_max < 1.01 and est_ok


def test_a_network_run_that_fails_names_the_nodes_and_the_remedies(tmp_path: Path) -> None:
    # single-site Gibbs on alarm given VENTMACH=ZERO: near-deterministic chains (VENTMACH -> VENTTUBE -> ...)
    # keep the chains apart, and the run fails naming the nodes, the worst first, and the remedies
    from mcmc.core.networks.bif import read_bif
    from mcmc.core.networks.driver import sample_network, to_chains
    from mcmc.core.networks.evidence import parse_evidence
    from mcmc.diagnostics.report.network import estimate_indicators, network_advice

    net = read_bif(DATA / "networks" / "alarm.bif")
    ev = parse_evidence(net, "VENTMACH=ZERO")
    run = sample_network(net, ev, "gibbs", seed=1, params={"blocks": "single"}, draws=1000)
    chains = to_chains(run)
    report = estimate_indicators(chains).report
    assert not report.passed
    advice = network_advice(report, chains.attrs)
    worst = report.failing()[0].variable
    assert worst in advice and "--draws" in advice and "updated singly" in advice
    assert "-P gibbs:budget=N, now 1000000 entries" in advice and "-P gibbs:blocks=" in advice
    assert "-s likelihood-weighting" in advice


def _all_z(result) -> np.ndarray:
    """|estimate - exact| / MCSE of every state indicator of a network run (0 where both are exact)."""
    from mcmc.core.networks.bif import read_bif
    from mcmc.core.networks.variable_elimination import marginals
    from mcmc.diagnostics.report.network import estimate_indicators

    a = result.chains.attrs
    net = read_bif(a["target"]) if "target" in a else None
    from mcmc.core.networks.evidence import parse_evidence

    evidence = parse_evidence(net, [f"{k}={v}" for k, v in a["observed"].items()])
    exact = dict(zip(net.nodes, marginals(net, evidence), strict=True))
    est = estimate_indicators(result.chains, exact)
    return est.z
