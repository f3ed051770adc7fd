"""`mcmc lda`'s verdict: each chain judged for a remaining trend, the chains compared as modes.

The rule itself is tested on real corpora's stored traces in
``tests/diagnostics/test_lda_gate.py``; here: the command applies it, exits as
it says, gives the same verdict as ``mcmc diagnose`` of its chains file, and
takes its limit from ``--max-ll-gap`` and ``[tool.mcmc.diagnose]``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

REUTERS = Path(__file__).parents[1] / "data" / "lda" / "reuters50.ldac"


def _two_topic_corpus(path: Path) -> Path:
    """40 documents of 40 tokens, alternately from two topics of 12 words that share 4: mixes in a few hundred sweeps."""
    rng = np.random.default_rng(5)
    lines = []
    for d in range(40):
        words = rng.integers(0, 12, 40) + 8 * (d % 2)
        ids, counts = np.unique(words, return_counts=True)
        lines.append(f"{ids.size} " + " ".join(f"{i}:{c}" for i, c in zip(ids, counts, strict=True)))
    path.write_text("\n".join(lines) + "\n")
    path.with_suffix(".vocab.txt").write_text("".join(f"w{i}\n" for i in range(20)))
    return path


def _verdict(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if line.startswith(("PASS", "FAIL")))


def test_a_run_stopped_in_burn_in_fails_as_still_rising(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "fit.npz"
    r = mcmc("lda", str(REUTERS), "-k", "5", "--iterations", "20", "-f", "json", "-o", str(out))
    assert r.code == 1, r.stderr
    report = json.loads(r.out)
    conv = report["convergence"]
    assert conv["passed"] is False and conv["trending"] and conv["verdict"].startswith("FAIL")
    assert report["model"]["burn_in"] == 10  # half of --iterations by default
    assert "still burning in: run more iterations" in r.stderr
    # one verdict: diagnose judges the chains file by the same rule, word for word
    d = mcmc("diagnose", str(out))
    assert d.code == 1 and _verdict(d.stderr) == _verdict(r.stderr) == conv["verdict"]


def test_a_converged_run_passes_as_diagnose_passes_its_file(mcmc, tmp_path: Path) -> None:
    corpus = str(_two_topic_corpus(tmp_path / "two.ldac"))
    out = tmp_path / "fit.npz"
    r = mcmc("lda", corpus, "-k", "2", "--iterations", "400", "--chains", "4", "-f", "json", "-o", str(out))
    assert r.code == 0, r.stderr
    conv = json.loads(r.out)["convergence"]
    assert conv["passed"] is True and conv["topic_overlap"] > 0.9  # two clear topics: the chains agree
    d = mcmc("diagnose", str(out), "-f", "json")
    assert d.code == 0 and json.loads(d.out)["verdict"] == conv["verdict"]


def test_chains_in_different_modes_pass_with_a_warning_and_a_worse_chain_fails(mcmc, tmp_path: Path, monkeypatch) -> None:
    from mcmc.core.chains import Chains, write_chains
    from mcmc.diagnostics.readers import read_chains

    # reuters50 at K=50 (the example: R-hat 1.378 across chains, exit 1 before): modes, not failure
    out = tmp_path / "fit.npz"
    r = mcmc("lda", str(REUTERS), "-k", "50", "--iterations", "200", "-o", str(out))
    assert r.code == 0, r.stderr
    chains = read_chains([str(out)])
    assert mcmc("diagnose", str(out)).code == 0
    # a chain moved 0.2 nats per token below the others: stuck in a poorer mode, whatever R-hat says
    worse = dict(chains.posterior)
    worse["log_joint_per_token"] = worse["log_joint_per_token"] - np.array([[0.0], [0.2]])
    bad = tmp_path / "worse.npz"
    attrs = {k: v for k, v in chains.attrs.items() if k != "source_files"}
    write_chains(Chains(worse, dict(chains.sample_stats), attrs), bad)
    d = mcmc("diagnose", str(bad))
    assert d.code == 1 and "chain 1 clearly worse than chain 0" in d.stderr
    assert mcmc("diagnose", str(bad), "--max-ll-gap", "0.5").code == 0  # the limit is an option
    (tmp_path / "pyproject.toml").write_text("[tool.mcmc.diagnose]\nmax-ll-gap = 0.5\n")
    monkeypatch.chdir(tmp_path)
    assert mcmc("diagnose", str(bad)).code == 0  # and a key of the table every command reads


def test_one_chain_is_judged_on_its_own(mcmc) -> None:
    r = mcmc("lda", str(REUTERS), "-k", "5", "--iterations", "20", "--chains", "1")
    assert r.code == 1 and "chain 0 still burning in" in r.stderr  # one chain can still be judged for a trend
    ok = mcmc("lda", str(REUTERS), "-k", "5", "--iterations", "400", "--chains", "1")
    assert ok.code == 0 and "one chain: nothing to compare across chains" in ok.stderr


def test_no_check_reports_and_exits_0(mcmc) -> None:
    r = mcmc("lda", str(REUTERS), "-k", "5", "--iterations", "20", "--no-check")
    assert r.code == 0 and _verdict(r.stderr).startswith("FAIL") and "--no-check" in r.stderr


def test_bad_limit_is_refused(mcmc) -> None:
    r = mcmc("lda", "--max-ll-gap", "-1")
    assert r.code == 2 and "--max-ll-gap" in r.stderr
