"""Corpus readers (LDA-C, UCI, text), vocabulary pruning and the synthetic generator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import InputError, UsageError
from mcmc.core.lda.corpus import Corpus, document_frequency, filter_vocabulary, synthetic_corpus
from mcmc.core.lda.readers import ENGLISH_STOP_WORDS, detect_format, load_corpus, read_ldac, tokenize


@pytest.fixture
def lda_dir(data_dir: Path) -> Path:
    return data_dir / "lda"


def docs(corpus: Corpus) -> list[list[str]]:
    bounds = zip(corpus.doc_ptr[:-1], corpus.doc_ptr[1:], strict=True)
    return [[corpus.vocab[w] for w in corpus.words[a:b]] for a, b in bounds]


def test_ldac_tiny_by_hand(lda_dir: Path) -> None:
    c = load_corpus(lda_dir / "tiny.ldac")
    assert c.words.dtype == np.int32 and c.doc_ptr.dtype == np.int64
    assert c.vocab == ("apple", "banana", "cherry", "date", "elder")
    assert docs(c) == [
        ["apple", "apple", "banana"],
        ["banana", "cherry", "cherry", "elder"],
        ["date"] * 4,
    ]
    assert (c.n_docs, c.n_tokens, c.vocab_size) == (3, 11, 5)


def test_uci_tiny_is_the_same_corpus(lda_dir: Path) -> None:
    a = load_corpus(lda_dir / "tiny.ldac")
    b = load_corpus(lda_dir / "docword.tiny.txt")
    assert docs(a) == docs(b)


def test_reuters_excerpt_ldac_and_uci_agree(lda_dir: Path) -> None:
    a = load_corpus(lda_dir / "reuters50.ldac")
    b = load_corpus(lda_dir / "docword.reuters50.txt")
    assert a.n_docs == b.n_docs == 50 and a.vocab_size == b.vocab_size == 4258
    assert (a.document_term_matrix() != b.document_term_matrix()).nnz == 0
    # Token count = sum of the counts, read independently of the reader.
    lines = (lda_dir / "reuters50.ldac").read_text().splitlines()
    assert a.n_tokens == sum(int(p.split(":")[1]) for ln in lines for p in ln.split()[1:])
    first = lines[0].split()
    assert int(first[0]) == len(set(a.words[a.doc_ptr[0] : a.doc_ptr[1]]))


def test_text_lines_tokenize_and_keep_empty_documents(lda_dir: Path) -> None:
    c = load_corpus(lda_dir / "lines.txt")
    assert detect_format(lda_dir / "lines.txt") == "text"
    # "the", "on", "and", "a" are stop words or too short; digits are not letters.
    assert docs(c) == [["cat", "sat", "mat"], ["dogs", "chase", "cats", "dogs", "bark"], [], ["bird", "birds", "cats"]]
    assert list(c.vocab) == sorted(c.vocab)


def test_text_directory_one_document_per_file(lda_dir: Path) -> None:
    c = load_corpus(lda_dir / "text_dir")
    assert c.n_docs == 3
    assert docs(c)[1] == ["gibbs", "sampling", "updates", "coordinate", "block", "time", "gibbs", "geman", "geman"]


def test_tokenize_rules() -> None:
    assert tokenize("Über-Bayes's MCMC, x2 ab abc; THE them") == ["über", "bayes", "mcmc", "abc"]
    assert "the" in ENGLISH_STOP_WORDS and "them" in ENGLISH_STOP_WORDS and len(ENGLISH_STOP_WORDS) > 300


def test_keep_all_words_keeps_short_words_and_stop_words() -> None:
    assert tokenize("Über-Bayes's MCMC, x2 ab abc; THE them", keep_all_words=True) == [
        "über", "bayes", "s", "mcmc", "x", "ab", "abc", "the", "them"]  # fmt: skip


def test_the_notes_five_word_example_is_refused_without_keep_all_words_and_read_with_it(lda_dir: Path) -> None:
    path = lda_dir / "five_words.txt"
    with pytest.raises(InputError, match="empty corpus.*--keep-all-words"):
        load_corpus(path)
    c = load_corpus(path, keep_all_words=True)
    assert c.vocab == ("a", "b", "c", "d", "e") and c.n_docs == 5 and c.n_tokens == 25
    assert docs(c)[0] == ["a", "b", "a", "b", "c"]


def test_keep_all_words_is_for_text_only(lda_dir: Path) -> None:
    with pytest.raises(UsageError, match="--keep-all-words applies to text corpora"):
        load_corpus(lda_dir / "tiny.ldac", keep_all_words=True)


def test_min_df_and_max_df(lda_dir: Path) -> None:
    c = load_corpus(lda_dir / "tiny.ldac")
    np.testing.assert_array_equal(document_frequency(c), [1, 2, 1, 1, 1])
    only_banana = filter_vocabulary(c, min_df=2)
    assert only_banana.vocab == ("banana",) and docs(only_banana) == [["banana"], ["banana"], []]
    # A fraction: 0.5 of 3 documents = 1.5 documents.
    assert filter_vocabulary(c, min_df=0.5).vocab == ("banana",)
    no_banana = filter_vocabulary(c, max_df=0.5)
    assert no_banana.vocab == ("apple", "cherry", "date", "elder")
    assert docs(no_banana)[1] == ["cherry", "cherry", "elder"]
    # LDA-C keeps its vocabulary unless pruning is asked for.
    assert load_corpus(lda_dir / "tiny.ldac", min_df=2).vocab == ("banana",)


def test_detect_format(lda_dir: Path, tmp_path: Path) -> None:
    assert detect_format(lda_dir / "tiny.ldac") == "ldac"
    assert detect_format(lda_dir / "docword.tiny.txt") == "uci"
    assert detect_format(lda_dir / "text_dir") == "text"
    (tmp_path / "corpus.dat").write_text("2 0:2 1:1\n1 3:4\n")
    (tmp_path / "uci.dat").write_text("1\n2\n1\n1 1 1\n")
    assert detect_format(tmp_path / "corpus.dat") == "ldac"
    assert detect_format(tmp_path / "uci.dat") == "uci"


def test_subset_and_document_term_matrix(lda_dir: Path) -> None:
    c = load_corpus(lda_dir / "tiny.ldac")
    s = c.subset(np.array([2, 0]))
    assert docs(s) == [docs(c)[2], docs(c)[0]]
    expected = [[2, 1, 0, 0, 0], [0, 1, 2, 0, 1], [0, 0, 0, 4, 0]]
    np.testing.assert_array_equal(c.document_term_matrix().toarray(), expected)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("word_id.ldac", "line 2: word id 3 is beyond the vocabulary (3 words"),
        ("pair.ldac", "line 2: malformed pair '1' (expected id:count)"),
        ("count.ldac", "line 2: count '0' in '2:0' is not a positive integer"),
        ("m.ldac", "line 2: M = 3 but the line has 2 id:count pairs"),
        ("empty.ldac", "empty corpus"),
        ("docword.wordid.txt", "line 5: word id out of range 1..3"),
        ("docword.nnz.txt", "line 3: NNZ = 3 but the file has 2 triples"),
    ],
)
def test_bad_input_names_file_and_line(lda_dir: Path, name: str, message: str) -> None:
    path = lda_dir / "bad" / name
    with pytest.raises(InputError) as err:
        load_corpus(path)
    assert err.value.source == str(path)
    assert message in err.value.message


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1 0:1.5", "count '1.5' in '0:1.5' is not a positive integer"),
        ("1 0:-2", "count '-2' in '0:-2' is not a positive integer"),
        ("1 0:1:2", "malformed pair '0:1:2'"),
        ("1 x:1", "word id 'x' is not a non-negative integer"),
        ("1 0: 1", "malformed pair '0:'"),
        ("one 0:1", "expected the number of distinct words M first"),
        ("1 0:123456789012345678901234", "too large"),
    ],
)
def test_malformed_ldac_lines(tmp_path: Path, line: str, message: str) -> None:
    (tmp_path / "c.vocab.txt").write_text("a\nb\n")
    (tmp_path / "c.ldac").write_text(f"2 0:1 1:1\n\n{line}\n")
    with pytest.raises(InputError, match=r"line 3: ") as err:
        read_ldac(tmp_path / "c.ldac")
    assert message in err.value.message


def test_ldac_details(tmp_path: Path) -> None:
    # CRLF line ends, blank lines skipped, "0" is an empty document, ids in any order.
    (tmp_path / "c.vocab").write_text("a\nb\nc\n")
    (tmp_path / "c.ldac").write_bytes(b"2 2:1 0:2\r\n\r\n0\r\n1 1:1")
    c = read_ldac(tmp_path / "c.ldac")
    assert docs(c) == [["c", "a", "a"], [], ["b"]]


def test_missing_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_corpus(tmp_path / "nope.ldac")
    (tmp_path / "c.ldac").write_text("1 0:1\n")
    with pytest.raises(InputError, match="no vocabulary file found"):
        load_corpus(tmp_path / "c.ldac")


# -- synthetic corpus ------------------------------------------------------------------


def pearson_z(counts: np.ndarray, probs: np.ndarray) -> float:
    """Standardised Pearson chi-square of multinomial rows, cells with expectation < 5 pooled per row."""
    stat, df = 0.0, 0
    for n_row, p_row in zip(counts, probs, strict=True):
        n = n_row.sum()
        expected = n * p_row
        big = expected >= 5
        obs = np.append(n_row[big], n_row[~big].sum())
        exp = np.append(expected[big], expected[~big].sum())
        keep = exp > 0
        stat += float(((obs[keep] - exp[keep]) ** 2 / exp[keep]).sum())
        df += int(keep.sum()) - 1
    return (stat - df) / np.sqrt(2 * df)


def test_synthetic_corpus_follows_the_generative_process() -> None:
    s = synthetic_corpus(np.random.default_rng(11), n_topics=5, vocab_size=60, n_docs=400, doc_length=80, beta=0.5)
    c = s.corpus
    assert (c.n_docs, c.n_tokens, c.vocab_size) == (400, 32000, 60)
    np.testing.assert_allclose(s.phi.sum(axis=1), 1)
    np.testing.assert_allclose(s.theta.sum(axis=1), 1)
    # Words given topics are Multinomial(n_k, phi_k); topics given documents Multinomial(80, theta_d).
    word_counts = np.zeros((5, 60))
    np.add.at(word_counts, (s.z, c.words), 1)
    assert abs(pearson_z(word_counts, s.phi)) < 4
    topic_counts = np.zeros((400, 5))
    np.add.at(topic_counts, (c.doc_of_token(), s.z), 1)
    assert abs(pearson_z(topic_counts, s.theta)) < 4
    # And the Dirichlet draws have the right mean: E theta_dk = 1/K, sd sqrt((1/K)(1-1/K)/(K alpha + 1)).
    sd = np.sqrt(0.2 * 0.8 / (5 * 0.1 + 1))
    assert np.all(np.abs(s.theta.mean(axis=0) - 0.2) / (sd / np.sqrt(400)) < 4)


def test_synthetic_corpus_is_reproducible() -> None:
    a = synthetic_corpus(np.random.default_rng(3), n_docs=20)
    b = synthetic_corpus(np.random.default_rng(3), n_docs=20)
    assert a.corpus.words.tobytes() == b.corpus.words.tobytes() and np.array_equal(a.phi, b.phi)
    assert a.corpus.vocab[0] == "w000" and a.corpus.vocab_size == 500


# -- compressed and binary files, hostile sizes ---------------------------------------

_COMPRESSORS = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}


def _compress(src: Path, dest: Path, suffix: str) -> Path:
    import importlib

    module = importlib.import_module(_COMPRESSORS[suffix])
    dest.write_bytes(module.compress(src.read_bytes()))
    return dest


def _same(a: Corpus, b: Corpus) -> None:
    assert a.vocab == b.vocab
    np.testing.assert_array_equal(a.doc_ptr, b.doc_ptr)
    np.testing.assert_array_equal(a.words, b.words)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_compressed_corpora_read_as_their_text(lda_dir: Path, tmp_path: Path, suffix: str) -> None:
    import shutil

    # LDA-C, with the vocabulary found beside it under the uncompressed name
    shutil.copy(lda_dir / "tiny.vocab.txt", tmp_path / "tiny.vocab.txt")
    ldac = _compress(lda_dir / "tiny.ldac", tmp_path / f"tiny.ldac{suffix}", suffix)
    _same(load_corpus(ldac), load_corpus(lda_dir / "tiny.ldac"))
    # UCI, as the UCI repository ships it: docword.NAME.txt.gz beside vocab.NAME.txt
    shutil.copy(lda_dir / "vocab.tiny.txt", tmp_path / "vocab.tiny.txt")
    uci = _compress(lda_dir / "docword.tiny.txt", tmp_path / f"docword.tiny.txt{suffix}", suffix)
    _same(load_corpus(uci), load_corpus(lda_dir / "docword.tiny.txt"))
    # one document per line, and a folder of text files
    lines = _compress(lda_dir / "lines.txt", tmp_path / f"lines.txt{suffix}", suffix)
    _same(load_corpus(lines), load_corpus(lda_dir / "lines.txt"))
    (tmp_path / "dir").mkdir()
    for f in sorted((lda_dir / "text_dir").iterdir()):
        _compress(f, tmp_path / "dir" / (f.name + suffix), suffix)
    _same(load_corpus(tmp_path / "dir"), load_corpus(lda_dir / "text_dir"))
    # Told by the magic bytes, not the name: a compressed file named like plain text.
    disguised = _compress(lda_dir / "lines.txt", tmp_path / "plain.txt", suffix)
    _same(load_corpus(disguised), load_corpus(lda_dir / "lines.txt"))


def test_corrupt_compressed_corpus_names_the_file(lda_dir: Path, tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "lines.txt.gz"
    path.write_bytes(gzip.compress((lda_dir / "lines.txt").read_bytes())[:-12])
    with pytest.raises(InputError, match="corrupt or truncated gzip file") as info:
        load_corpus(path)
    assert info.value.source == str(path)


def test_binary_files_are_refused_not_fitted(lda_dir: Path, tmp_path: Path) -> None:
    np.savez(tmp_path / "fit.npz", x=np.arange(10.0))
    (tmp_path / "tool").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40)
    rng = np.random.default_rng(2)
    (tmp_path / "noise").write_bytes(rng.integers(1, 256, size=5000, dtype=np.uint8).tobytes())  # no NUL
    cases = {"fit.npz": "zip archive", "tool": "executable", "noise": "not UTF-8 text"}
    for name, what in cases.items():
        for fmt in (None, "text", "ldac", "uci"):
            vocab = lda_dir / "tiny.vocab.txt" if fmt in ("ldac", "uci") else None
            with pytest.raises(InputError, match=what) as info:
                load_corpus(tmp_path / name, fmt=fmt, vocab=vocab)
            assert info.value.source == str(tmp_path / name)
    # One binary file in a folder of documents is named.
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("markov chains mix slowly\n")
    (tmp_path / "docs" / "b.bin").write_bytes(b"abc\x00def")
    with pytest.raises(InputError, match="NUL") as info:
        load_corpus(tmp_path / "docs")
    assert info.value.source == str(tmp_path / "docs" / "b.bin")


def test_latin1_text_is_still_read_with_replacement(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("the caf\xe9 served cr\xe8me br\xfbl\xe9e to markov\nsecond document here\n".encode("latin-1"))
    assert "markov" in load_corpus(path).vocab


def test_hostile_counts_and_headers_are_refused_before_allocation(
    lda_dir: Path, tmp_path: Path, machine_16gib: None
) -> None:
    import shutil

    shutil.copy(lda_dir / "tiny.vocab.txt", tmp_path / "big.vocab.txt")
    (tmp_path / "big.ldac").write_text("2 0:2 1:1\n1 3:999999999999\n")
    with pytest.raises(InputError, match=r"line 2 has a count of 999999999999\) needs .* more than") as info:
        load_corpus(tmp_path / "big.ldac")
    assert info.value.source == str(tmp_path / "big.ldac")
    shutil.copy(lda_dir / "vocab.tiny.txt", tmp_path / "vocab.big.txt")
    uci = tmp_path / "docword.big.txt"
    uci.write_text("1000000000000\n5\n1\n1 1 2\n")
    with pytest.raises(InputError, match=r"line 1: D = 1000000000000 documents needs .* more than"):
        load_corpus(uci)
    uci.write_text("3\n5\n1000000000000\n1 1 2\n")
    with pytest.raises(InputError, match="line 3: NNZ = 1000000000000 triples cannot fit in a file of"):
        load_corpus(uci)
    uci.write_text("3\n5\n2\n1 1 2\n2 2 999999999999\n")
    with pytest.raises(InputError, match=r"line 5 has a count of 999999999999"):
        load_corpus(uci)


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 21])
def test_ldac_read_in_blocks_of_lines_is_the_same_corpus(lda_dir: Path, tmp_path: Path, monkeypatch,
                                                           block: int) -> None:
    # The reader parses whole lines in blocks (to bound its memory): any block size, the same corpus,
    # and an error in a late block still names the file's line.
    import mcmc.core.lda.readers as corpus_module

    whole = read_ldac(lda_dir / "reuters50.ldac")
    monkeypatch.setattr(corpus_module, "LDAC_BLOCK_BYTES", block)
    c = read_ldac(lda_dir / "reuters50.ldac")
    assert np.array_equal(c.doc_ptr, whole.doc_ptr) and np.array_equal(c.words, whole.words)
    assert c.words.dtype == np.int32
    (tmp_path / "c.vocab.txt").write_text("a\nb\n")
    (tmp_path / "c.ldac").write_text("2 0:1 1:1\n\n1 0:1\n" * 5 + "1 0:x\n")
    with pytest.raises(InputError, match=r"line 16: "):
        read_ldac(tmp_path / "c.ldac")
