"""`mcmc lda --max-rhat`: the R-hat gate on the post-burn-in log joint across chains, and the default burn-in."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


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


def test_fifty_documents_and_few_iterations_fail_the_gate(mcmc, data_dir: Path) -> None:
    r = mcmc("lda", str(data_dir / "lda" / "reuters50.ldac"), "-k", "5", "--iterations", "20", "--output-format",
             "json")  # fmt: skip
    assert r.code == 1, r.stderr
    report = json.loads(r.out)
    assert report["max_rhat"] == 1.01 and report["rhat_ok"] is False
    assert report["log_joint_per_token_rhat"] > 1.01
    assert report["model"]["burn_in"] == 10  # half of --iterations by default
    assert "the chains disagree; run more iterations" in r.stderr


def test_converged_run_passes_and_a_looser_limit_lets_a_short_run_pass(mcmc, tmp_path: Path) -> None:
    corpus = str(_two_topic_corpus(tmp_path / "two.ldac"))
    r = mcmc("lda", corpus, "-k", "2", "--iterations", "1000", "--chains", "4", "--output-format", "json")
    assert r.code == 0, r.stderr
    report = json.loads(r.out)
    assert report["rhat_ok"] is True and report["log_joint_per_token_rhat"] <= 1.01
    assert "convergence: ok" in r.stderr
    short = ("lda", corpus, "-k", "2", "--iterations", "20", "--output-format", "json")
    rhat = json.loads(mcmc(*short).out)["log_joint_per_token_rhat"]
    assert mcmc(*short, "--max-rhat", f"{rhat * 1.001}").code == 0
    assert mcmc(*short, "--max-rhat", f"{rhat * 0.999}").code == 1


def test_one_chain_cannot_be_judged(mcmc, data_dir: Path) -> None:
    r = mcmc("lda", str(data_dir / "lda" / "reuters50.ldac"), "-k", "5", "--iterations", "20", "--chains", "1")
    assert r.code == 0, r.stderr
    assert "not checked with one chain" in r.stderr


def test_max_rhat_below_one_is_refused(mcmc) -> None:
    r = mcmc("lda", "--max-rhat", "0.9")
    assert r.code == 2 and "--max-rhat must be at least 1" in r.stderr
