"""`mcmc lda` for the lecture's exercises: a toy corpus of short words, MAP estimates, synthetic data on disk."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FAST = ("--iterations", "12", "--burn-in", "6", "--no-check")


def test_the_notes_five_word_example_is_refused_then_fitted_with_keep_all_words(mcmc, data_dir: Path,
                                                                                 tmp_path: Path) -> None:
    corpus = str(data_dir / "lda" / "five_words.txt")
    refused = mcmc("lda", corpus, "-k", "2", *FAST)
    assert refused.code == 2 and "empty corpus" in refused.stderr and "--keep-all-words" in refused.stderr
    assert refused.stderr.count("\n") == 1  # one line
    est = tmp_path / "est.npz"
    r = mcmc("lda", corpus, "-k", "2", "--keep-all-words", "--seed", "1", "--estimates", str(est), *FAST)
    assert r.code == 0, r.stderr
    assert "5 documents, 25 tokens, 5 words" in r.stderr
    with np.load(est, allow_pickle=False) as f:
        assert list(f["vocab"]) == ["a", "b", "c", "d", "e"]
        assert f["map_theta"].shape == (2, 5, 2) and f["map_phi"].shape == (2, 2, 5)
        np.testing.assert_allclose(f["map_phi"].sum(axis=2), 1.0)
        assert np.all(f["phi"] > 0) and np.any(f["map_phi"] == 0)  # the mode is sparse where the mean is not


def test_keep_all_words_is_refused_where_it_cannot_apply(mcmc, data_dir: Path) -> None:
    r = mcmc("lda", str(data_dir / "lda" / "tiny.ldac"), "--keep-all-words", *FAST)
    assert r.code == 2 and "--keep-all-words applies to text corpora" in r.stderr
    r = mcmc("lda", "--keep-all-words", *FAST)
    assert r.code == 2 and "need a CORPUS" in r.stderr


def test_generate_writes_the_corpus_its_vocabulary_and_truth_the_same_bytes_for_the_same_seed(
        mcmc, tmp_path: Path) -> None:
    args = ("-k", "3", "--docs", "40", "--vocab-size", "30", "--doc-length", "25", "--alpha", "0.1", "--beta",
            "0.05", "--seed", "7")
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    for where in (first, second):
        r = mcmc("lda", "--generate", str(where / "syn.ldac"), *args)
        assert r.code == 0, r.stderr
        assert r.out == "" and "40 documents x 25 tokens" in r.stderr  # a summary line; stdout is for data
    for name in ("syn.ldac", "syn.vocab.txt", "syn.truth.npz"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    with np.load(first / "syn.truth.npz", allow_pickle=False) as f:
        assert f["theta"].shape == (40, 3) and f["phi"].shape == (3, 30)
    # the generated corpus is an mcmc lda corpus like any other
    fit = mcmc("lda", str(first / "syn.ldac"), "-k", "3", "--output-format", "json", *FAST)
    assert fit.code == 0, fit.stderr
    assert json.loads(fit.out)["corpus"]["tokens"] == 1000


def test_generate_prints_json_when_asked_and_refuses_fitting_options(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "syn.ldac"
    r = mcmc("lda", "--generate", str(out), "-k", "2", "--docs", "5", "--output-format", "json")
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)
    assert doc["schema"] == "mcmc.lda-generate/1" and doc["files"]["truth"] == str(tmp_path / "syn.truth.npz")
    assert doc["documents"] == 5 and doc["tokens"] == 500 and doc["beta"] == 0.01
    for extra, needle in (
        (("-o", str(tmp_path / "x.npz")), "-o applies to fitting"),
        ((str(out),), "CORPUS applies to fitting"),
        (("--output-format", "csv"), "show them as table or json"),
    ):
        r = mcmc("lda", "--generate", str(tmp_path / "other.ldac"), *extra)
        assert r.code == 2 and needle in r.stderr, r.stderr
    r = mcmc("lda", "--generate", str(tmp_path / "corpus.txt"))
    assert r.code == 2 and "name ending in .ldac" in r.stderr
    r = mcmc("lda", "--docs", "5", *FAST)
    assert r.code == 2 and "--docs applies to --generate" in r.stderr
