"""One set of options across the commands (issue 28.7): -f/--format is the output format, -q is everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains

DATA = Path(__file__).parents[1] / "data"
REUTERS = str(DATA / "lda" / "reuters50.ldac")
LDA_FAST = ("--iterations", "12", "--burn-in", "6", "--no-check", "-k", "3")


def test_lda_format_is_the_output_format(mcmc) -> None:
    r = mcmc("lda", REUTERS, *LDA_FAST, "-f", "json")
    assert r.code == 0, r.stderr
    assert json.loads(r.out)["schema"] == "mcmc.lda/1"
    r = mcmc("lda", REUTERS, *LDA_FAST, "--corpus-format", "ldac", "--format", "csv")
    assert r.code == 0, r.stderr
    assert r.out.startswith("chain,topic,")


def test_lda_old_spellings_still_work_for_one_release(mcmc) -> None:
    new = mcmc("lda", REUTERS, *LDA_FAST, "--corpus-format", "ldac", "-f", "json")
    old = mcmc("lda", REUTERS, *LDA_FAST, "--format", "ldac", "--output-format", "json")
    assert old.code == 0, old.stderr
    assert "--format ldac is now --corpus-format ldac" in old.stderr
    assert json.loads(old.out)["chains"] == json.loads(new.out)["chains"]
    r = mcmc("lda", REUTERS, *LDA_FAST, "-f", "csv", "--output-format", "json")
    assert r.code == 2 and "give one" in r.stderr


def _run(tmp_path: Path, name: str, shift: float = 0.0) -> str:
    rng = np.random.default_rng(7)
    path = tmp_path / name
    write_chains(Chains({"v": rng.standard_normal((4, 500, 2)) + shift}), path)
    return str(path)


@pytest.mark.parametrize("command", ["sample", "lda", "diagnose", "compare"])
def test_quiet_is_an_option_of_every_command(mcmc, tmp_path: Path, command: str) -> None:
    """-q: nothing on the terminal when the run passes; the verdict line when it fails."""
    a = _run(tmp_path, "a.npz")
    args = {
        "sample": ("sample", "-t", "gaussian", "--dim", "2", "-s", "slice", "--seed", "1", "-o", str(tmp_path / "s.npz")),
        "lda": ("lda", REUTERS, "-k", "3", "--iterations", "20", "--chains", "2", "--no-check"),
        "diagnose": ("diagnose", a),
        "compare": ("compare", a, a),
    }[command]  # fmt: skip
    r = mcmc(*args, "-q")
    assert r.code == 0, r.stderr
    assert (r.out, r.stderr) == ("", "")
    if command in ("diagnose", "compare"):
        failing = (command, a, _run(tmp_path, "b.npz", 1.0)) if command == "compare" else (command, _run(tmp_path, "c.npz", 0.0), "--min-ess", "1e9")  # noqa: E501
        r = mcmc(*failing, "-q")
        assert r.code == 1 and r.out == "" and r.stderr.startswith("FAIL:")


def test_sample_summary_as_json_carries_a_networks_marginals(mcmc, tmp_path: Path) -> None:
    net = str(DATA / "networks" / "earthquake.bif")
    r = mcmc("sample", "-t", net, "--observe", "JohnCalls=True,MaryCalls=True", "--query", "Burglary", "--exact",
             "--seed", "1", "-f", "json", "-o", str(tmp_path / "e.npz"))  # fmt: skip
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)
    assert doc["schema"] == "mcmc.sample/1" and doc["passed"] is True
    assert "Burglary" in json.dumps(doc["network"]) and "exact" in json.dumps(doc["network"])
    matrix = str(DATA / "markov" / "lecture.csv")
    r = mcmc("sample", "-t", matrix, "--seed", "1", "-f", "json", "-q", "-o", str(tmp_path / "m.npz"))
    assert r.code == 0, r.stderr
    assert json.loads(r.out)["markov"]["states"] == ["Sunny", "Cloudy", "Rainy"]
    r = mcmc("sample", "-f", "json", "-o", "-")
    assert r.code == 2 and "pick one" in r.stderr


@pytest.mark.parametrize("command", ["diagnose", "compare"])
def test_the_output_name_sets_the_format_unless_f_is_given(mcmc, tmp_path: Path, command: str) -> None:
    """-o report.json alone writes JSON (not a text table under a .json name); -f still decides when given."""
    a = _run(tmp_path, "a.npz")
    runs = (a,) if command == "diagnose" else (a, a)
    out = tmp_path / "report.json"
    assert mcmc(command, *runs, "-o", str(out), "-q").code == 0
    assert json.loads(out.read_text())["schema"] == f"mcmc.{command}/1"
    out = tmp_path / "report.csv"
    assert mcmc(command, *runs, "-o", str(out), "-q").code == 0
    assert out.read_text().startswith("name,") or out.read_text().startswith("parameter,")
    out = tmp_path / "report.md"
    assert mcmc(command, *runs, "-o", str(out), "-f", "json", "-q").code == 0
    assert json.loads(out.read_text())["schema"] == f"mcmc.{command}/1"
    if command == "diagnose":  # the page and the JUnit cases have options of their own
        for name, option in (("page.html", "--html"), ("cases.xml", "--junit")):
            r = mcmc(command, *runs, "-o", str(tmp_path / name))
            assert r.code == 2 and option in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert not (tmp_path / name).exists()
