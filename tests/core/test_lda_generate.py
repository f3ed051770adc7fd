"""Synthetic topic-model data on disk: the files round-trip, the same seed writes the same bytes, fits recover it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import UsageError
from mcmc.core.lda.config import LdaConfig
from mcmc.core.lda.corpus import synthetic_corpus
from mcmc.core.lda.evaluate import topic_recovery
from mcmc.core.lda.generate import GenerateConfig, generate_corpus, ldac_text, output_paths
from mcmc.core.lda.pipeline import SYNTHETIC_SEED, LdaInput, fit_lda
from mcmc.core.lda.readers import load_corpus

SMALL = GenerateConfig(n_topics=4, n_docs=120, vocab_size=60, doc_length=40, alpha=0.1, beta=0.05, seed=7)


def counts(corpus) -> np.ndarray:
    """(D, V) document-word counts: what LDA-C keeps (not the order of tokens)."""
    return corpus.document_term_matrix().toarray()


def test_files_round_trip_through_the_ldac_reader(tmp_path: Path) -> None:
    out = generate_corpus(tmp_path / "syn.ldac", SMALL)
    assert (out.corpus, out.vocab, out.truth) == tuple(str(tmp_path / f"syn.{x}") for x in ("ldac", "vocab.txt",
                                                                                               "truth.npz"))
    read = load_corpus(out.corpus)  # format and vocabulary found by name, as for any corpus
    assert read.vocab == out.data.corpus.vocab and read.n_docs == 120 and read.n_tokens == 120 * 40
    np.testing.assert_array_equal(counts(read), counts(out.data.corpus))
    with np.load(out.truth, allow_pickle=False) as f:
        assert sorted(f.files) == ["alpha", "beta", "doc_length", "phi", "seed", "theta"]
        np.testing.assert_array_equal(f["theta"], out.data.theta)
        np.testing.assert_array_equal(f["phi"], out.data.phi)
        assert f["theta"].shape == (120, 4) and f["phi"].shape == (4, 60)
        assert float(f["alpha"]) == 0.1 and float(f["beta"]) == 0.05 and int(f["seed"]) == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["syn.ldac", "syn.truth.npz", "syn.vocab.txt"]


def test_same_seed_same_bytes_and_another_seed_another_corpus(tmp_path: Path) -> None:
    names = ("a.ldac", "a.vocab.txt", "a.truth.npz")
    (tmp_path / "a").mkdir()
    generate_corpus(tmp_path / "a" / "a.ldac", SMALL)
    generate_corpus(tmp_path / "b.ldac", SMALL)
    first = [(tmp_path / "a" / n).read_bytes() for n in names]
    second = [(tmp_path / n.replace("a.", "b.")).read_bytes() for n in names]
    assert first == second
    generate_corpus(tmp_path / "c.ldac", GenerateConfig(**{**SMALL.__dict__, "seed": 8}))
    assert (tmp_path / "c.ldac").read_bytes() != first[0]


def test_the_built_in_corpus_is_seed_2003_with_its_settings(tmp_path: Path) -> None:
    builtin = synthetic_corpus(np.random.default_rng(SYNTHETIC_SEED))
    out = generate_corpus(tmp_path / "builtin.ldac", GenerateConfig(beta=0.05, seed=SYNTHETIC_SEED))
    np.testing.assert_array_equal(out.data.phi, builtin.phi)
    np.testing.assert_array_equal(counts(load_corpus(out.corpus)), counts(builtin.corpus))


def test_ldac_lines_by_hand() -> None:
    from mcmc.core.lda.corpus import Corpus

    c = Corpus(np.array([0, 3, 3, 5]), np.array([2, 0, 2, 1, 1]), ("x", "y", "z"))
    assert ldac_text(c) == "2 0:1 2:2\n0\n1 1:2\n"


def test_fitting_the_generated_corpus_recovers_its_topics(tmp_path: Path) -> None:
    config = GenerateConfig(n_topics=5, n_docs=300, vocab_size=100, doc_length=60, alpha=0.1, beta=0.05, seed=3)
    out = generate_corpus(tmp_path / "syn.ldac", config)
    corpus = load_corpus(out.corpus)
    with np.load(out.truth) as f:
        true_phi = f["phi"]
    run = fit_lda(LdaInput(corpus, out.corpus), LdaConfig(n_topics=5, alpha=0.1, beta=0.05, iterations=300,
                                                          burn_in=150, chains=2, seed=1, keep_theta=False))
    for phi in run.fit.phi:
        r = topic_recovery(phi, true_phi)
        assert sorted(r.true_topic) == list(range(5))  # one to one
        # matched topics close (Hellinger 0 = identical, 1 = disjoint), far closer than unmatched pairs
        assert r.hellinger.max() < 0.2 and r.mean_hellinger < 0.25 * r.baseline


@pytest.mark.parametrize(
    ("name", "message"),
    [("corpus.txt", "name ending in .ldac"), (".ldac", "name ending in .ldac"), ("missing/x.ldac", "does not exist")],
)
def test_bad_names_are_refused_before_anything_is_drawn(tmp_path: Path, name: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        generate_corpus(tmp_path / name, SMALL)
    assert list(tmp_path.iterdir()) == []


def test_output_paths() -> None:
    assert output_paths("d/x.ldac") == ("d/x.ldac", "d/x.vocab.txt", "d/x.truth.npz")
    with pytest.raises(UsageError):
        output_paths("x.npz")
