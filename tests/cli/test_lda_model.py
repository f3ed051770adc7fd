"""`mcmc lda --save-model` and `mcmc lda NEW_CORPUS --model`: saved models and topics of new documents."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.lda.model import LdaModel, load_model

FAST = ("--iterations", "20", "--no-check")


def test_round_trip_saved_model_matches_the_estimates_and_infers(mcmc, data_dir: Path, tmp_path: Path) -> None:
    corpus = str(data_dir / "lda" / "reuters50.ldac")
    model_file, est = tmp_path / "m.npz", tmp_path / "est.npz"
    r = mcmc("lda", corpus, "-k", "4", *FAST, "--optimize-interval", "5", "--save-model", str(model_file),
             "--estimates", str(est))  # fmt: skip
    assert r.code == 0, r.stderr
    model = load_model(model_file)
    with np.load(est) as f:
        np.testing.assert_array_equal(model.phi, f["phi"])
        np.testing.assert_array_equal(model.alpha, f["alpha"])  # learned: (chain, K)
        np.testing.assert_array_equal(model.beta, f["beta"])
        assert model.vocab == tuple(f["vocab"].tolist())
    assert model.method == "collapsed" and model.reading["format"] == "ldac" and model.alpha.shape == (2, 4)
    with np.load(model_file, allow_pickle=False) as f:  # plain arrays only
        assert str(f["format"]) == "mcmc.lda-model" and int(f["version"]) == 1
    theta_file = tmp_path / "theta.csv"
    r = mcmc("lda", corpus, "--model", str(model_file), "--theta", str(theta_file), "--iterations", "30")
    assert r.code == 0, r.stderr
    assert "Top topics of the first documents" in r.out and "0 tokens of 0 words unknown" in r.stderr
    rows = list(csv.reader(io.StringIO(theta_file.read_text())))
    assert rows[0] == ["document", "chain", "topic_0", "topic_1", "topic_2", "topic_3"] and len(rows) == 1 + 2 * 50
    np.testing.assert_allclose(np.array(rows[1:], dtype=float)[:, 2:].sum(axis=1), 1)


def _word(topic: int, i: int) -> str:
    return f"{'abcd'[topic]}{'abcde'[i]}word"  # letters only: the text reader keeps them


def _model(path: Path, k: int = 4, per_topic: int = 5) -> LdaModel:
    """Topics over disjoint blocks of ``per_topic`` words: topic j uses the words ``_word(j, i)``."""
    vocab = tuple(_word(j, i) for j in range(k) for i in range(per_topic))
    phi = np.kron(np.eye(k), np.full(per_topic, 1 / per_topic))[None]
    alpha = np.arange(1, k + 1)[None] / 10  # asymmetric, as learned: 0.1, 0.2, ...
    model = LdaModel(vocab, phi, alpha, np.full(1, 0.01), "collapsed", {}, "test")
    model.save(path)
    return model


def test_theta_of_a_one_topic_document_concentrates_and_unknown_words_are_counted(mcmc, tmp_path: Path) -> None:
    _model(tmp_path / "m.npz")
    rng = np.random.default_rng(0)
    # document 0 from topic 2, document 1 from topic 0, plus two words the model does not know
    docs = [" ".join(_word(2, i) for i in rng.integers(0, 5, 40)), " ".join(_word(0, i) for i in rng.integers(0, 5, 30)),
            "unknownword anotherunknown unknownword"]  # fmt: skip
    (tmp_path / "new.txt").write_text("\n".join(docs) + "\n")
    r = mcmc("lda", str(tmp_path / "new.txt"), "--model", str(tmp_path / "m.npz"), "--theta",
             str(tmp_path / "t.csv"), "-f", "json")  # fmt: skip
    assert r.code == 0, r.stderr
    report = json.loads(r.out)
    assert report["corpus"]["unknown_tokens"] == 3 and report["corpus"]["unknown_words"] == 2
    theta = np.array(list(csv.reader(io.StringIO((tmp_path / "t.csv").read_text())))[1:], dtype=float)[:, 2:]
    # every token of document 0 can only be topic 2: theta = (n_dk + alpha_k) / (40 + sum alpha) exactly
    np.testing.assert_allclose(theta[0], (np.array([0, 0, 40, 0]) + [0.1, 0.2, 0.3, 0.4]) / 41)
    np.testing.assert_allclose(theta[1], (np.array([30, 0, 0, 0]) + [0.1, 0.2, 0.3, 0.4]) / 31)
    np.testing.assert_allclose(theta[2], [0.1, 0.2, 0.3, 0.4])  # nothing known: the prior mean
    assert report["documents"][0]["topics"][0]["topic"] == 2


@pytest.mark.parametrize("kind", ["garbage", "estimates", "missing"])
def test_bad_model_file_is_one_line_and_exit_2(mcmc, data_dir: Path, tmp_path: Path, kind: str) -> None:
    bad = tmp_path / "bad.npz"
    if kind == "garbage":
        bad.write_text("not a model\n")
    elif kind == "estimates":  # an npz, but another file of mcmc lda
        np.savez(bad, phi=np.ones((1, 2, 3)) / 3, vocab=np.array(["a", "b", "c"]))
    r = mcmc("lda", str(data_dir / "lda" / "tiny.ldac"), "--model", str(bad))
    lines = r.stderr.strip().splitlines()
    assert r.code == 2 and len(lines) == 1 and "bad.npz" in lines[0], r.stderr
    assert ("no such file" if kind == "missing" else "not a model file") in lines[0]


def test_fitting_options_with_model_are_refused(mcmc, data_dir: Path, tmp_path: Path) -> None:
    _model(tmp_path / "m.npz")
    r = mcmc("lda", str(data_dir / "lda" / "tiny.ldac"), "--model", str(tmp_path / "m.npz"), "--holdout", "0.2")
    assert r.code == 2 and "--holdout applies to fitting" in r.stderr
    r = mcmc("lda", str(data_dir / "lda" / "tiny.ldac"), "--theta", str(tmp_path / "t.csv"))
    assert r.code == 2 and "needs --model" in r.stderr
    r = mcmc("lda", str(data_dir / "lda" / "tiny.ldac"), "--model", str(tmp_path / "m.npz"), "--theta",
             str(data_dir / "lda" / "tiny.ldac"))  # fmt: skip
    assert r.code == 2 and "tiny.ldac" in r.stderr  # an output never overwrites an input


@pytest.mark.parametrize("fmt", ["ldac", "uci"])
def test_new_documents_without_a_vocabulary_file_use_the_models(mcmc, tmp_path: Path, fmt: str) -> None:
    """Issue 28.8: the model file stores the vocabulary, so LDA-C or UCI ids need no --vocab."""
    _model(tmp_path / "m.npz")
    # document 0: word ids 10-14, topic 2's block of the model's vocabulary; document 1: topic 0's
    if fmt == "ldac":
        (tmp_path / "new.ldac").write_text("2 10:20 12:20\n2 0:15 4:15\n")
    else:
        (tmp_path / "docword.new.txt").write_text("2\n20\n4\n1 11 20\n1 13 20\n2 1 15\n2 5 15\n")
    corpus = str(tmp_path / ("new.ldac" if fmt == "ldac" else "docword.new.txt"))
    r = mcmc("lda", corpus, "--model", str(tmp_path / "m.npz"), "--theta", str(tmp_path / "t.csv"), "-f", "json")
    assert r.code == 0, r.stderr
    assert json.loads(r.out)["corpus"]["unknown_tokens"] == 0
    theta = np.array(list(csv.reader(io.StringIO((tmp_path / "t.csv").read_text())))[1:], dtype=float)[:, 2:]
    assert theta[0].argmax() == 2 and theta[1].argmax() == 0
