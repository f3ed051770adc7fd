"""`mcmc lda` end to end: the synthetic default, real fixtures, output files and bad input."""

from __future__ import annotations

import csv
import io
import json
import struct
from pathlib import Path

import numpy as np
import pytest

# Twelve sweeps test the outputs, not convergence: the R-hat gate (tests/cli/test_lda_gate.py) is opened.
FAST = ("--iterations", "12", "--burn-in", "6", "--no-check")


def test_synthetic_default_writes_files_that_diagnose_reads(mcmc, tmp_path: Path) -> None:
    chains_file, est_file = tmp_path / "lda.npz", tmp_path / "est.npz"
    r = mcmc("lda", *FAST, "--holdout", "0.2", "--coherence", "-o", str(chains_file), "--estimates", str(est_file))
    assert r.code == 0, r.stderr
    assert "Topics (chain 0)" in r.out and "Recovery of the true topics" in r.out
    assert "held-out perplexity" in r.stderr and "UMass" in r.stderr and "alpha=0.1 (default)" in r.stderr
    assert "C_V" in r.stderr and "C_V" in r.out  # the summary line and the topics table column

    with np.load(chains_file) as f:
        assert f["log_joint_per_token"].shape == (2, 6)  # post-burn-in only
        attrs = json.loads(str(f["__attrs__"]))
    assert attrs["burn_in"] == 6 and attrs["iterations"] == 12 and attrs["n_topics"] == 10
    with np.load(est_file) as f:
        assert f["theta"].shape == (2, 400, 10) and f["phi"].shape == (2, 10, 500)
        assert f["vocab"].dtype.kind == "U" and f["vocab"][0] == "w000"
        assert f["trace_log_joint_per_token"].shape == (2, 12)
        with np.load(chains_file) as g:
            np.testing.assert_array_equal(f["trace_log_joint_per_token"][:, 6:], g["log_joint_per_token"])
        assert f["doc_index"].shape == (400,) and float(f["alpha"]) == 0.1
        np.testing.assert_allclose(f["phi"].sum(axis=2), 1)
    d = mcmc("diagnose", str(chains_file), "--format", "json")
    assert d.code in (0, 1), d.stderr  # 12 sweeps need not converge; the file must be readable
    names = {p["variable"] for p in json.loads(d.out)["parameters"]}
    assert names == {"log_joint", "log_joint_per_token"}


def test_same_seed_same_bytes(mcmc, tmp_path: Path) -> None:
    outs = []
    for name in ("a.npz", "b.npz"):
        assert mcmc("lda", *FAST, "--seed", "7", "-o", str(tmp_path / name)).code == 0
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]


def test_rhat_and_ess_leave_burn_in_out(mcmc, tmp_path: Path) -> None:
    """The report's R-hat and ESS are those of the post-burn-in log joint the chains file holds.

    Twelve sweeps from a random start are mostly climb, so a burn-in left in would change both numbers.
    """
    from mcmc.diagnostics import stats

    out = tmp_path / "lda.npz"
    r = mcmc("lda", *FAST, "-f", "json", "-o", str(out))
    assert r.code == 0, r.stderr
    report = json.loads(r.out)
    with np.load(out) as f:
        post = f["log_joint_per_token"][..., None]  # (chain, iteration after burn-in, 1)
    assert post.shape[1] == report["model"]["iterations"] - report["model"]["burn_in"] == 6
    assert report["log_joint_per_token_rhat"] == stats.rhat(post)[0]
    assert report["log_joint_per_token_ess_bulk"] == stats.ess_bulk(post)[0]


def test_json_and_csv_outputs(mcmc) -> None:
    r = mcmc("lda", *FAST, "--chains", "1", "--top-words", "4", "--coherence", "-f", "json")
    assert r.code == 0, r.stderr
    report = json.loads(r.out)
    chain = report["chains"][0]
    for key in ("umass", "npmi", "cv"):  # per topic, and their mean per chain
        assert chain[key] == pytest.approx(np.mean([t[key] for t in chain["topics"]]))
    assert report["schema"] == "mcmc.lda/1" and report["corpus"]["tokens"] == 50000
    topics = report["chains"][0]["topics"]
    assert len(topics) == 10 and all(len(t["words"]) == 4 for t in topics)
    assert sorted(t["true_topic"] for t in topics) == list(range(10))  # a one-to-one matching
    assert sum(t["share"] for t in topics) == pytest.approx(1)
    r = mcmc("lda", *FAST, "--top-words", "3", "-f", "csv", "--all-chains")
    rows = list(csv.DictReader(io.StringIO(r.out)))
    assert r.code == 0 and len(rows) == 2 * 10 * 3
    assert {row["chain"] for row in rows} == {"0", "1"}
    assert "umass" not in rows[0] and rows[0]["true_topic"] != ""


def test_the_report_does_not_depend_on_whether_theta_is_written(mcmc, data_dir: Path, tmp_path: Path) -> None:
    # Without --estimates no theta is estimated (its D x K sums are the biggest array of a fit at large K):
    # the report is the same, and its topic shares, from per-length sums, are those of the written theta.
    corpus = data_dir / "lda" / "reuters50.ldac"  # documents of many lengths, so the length weights matter
    args = (str(corpus), *FAST, "-k", "4", "-f", "json")
    lean = json.loads(mcmc("lda", *args).out)
    est = tmp_path / "est.npz"
    full = json.loads(mcmc("lda", *args, "--estimates", str(est)).out)
    for report in (lean, full):
        del report["sampling_seconds"], report["tokens_per_second"]
    assert lean == full
    with np.load(est) as f:
        theta = f["theta"]
    # LDA-C: "terms id:count id:count ..." per document
    lengths = np.array([sum(int(pair.split(":")[1]) for pair in line.split()[1:])
                        for line in corpus.read_text().splitlines() if line.strip()], dtype=float)
    assert np.unique(lengths).size > 20
    for c, chain in enumerate(full["chains"]):
        shares = [t["share"] for t in sorted(chain["topics"], key=lambda t: t["topic"])]
        np.testing.assert_allclose(shares, lengths @ theta[c] / lengths.sum(), rtol=1e-12)


def test_csv_carries_each_topics_coherence_beside_its_words(mcmc) -> None:
    args = (*FAST, "--chains", "1", "--top-words", "3", "--coherence")
    report = json.loads(mcmc("lda", *args, "-f", "json").out)
    r = mcmc("lda", *args, "-f", "csv")
    assert r.code == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.out)))
    assert len(rows) == 10 * 3
    for t in report["chains"][0]["topics"]:
        mine = [row for row in rows if int(row["topic"]) == t["topic"]]
        assert [row["word"] for row in mine] == t["words"]
        for key in ("umass", "npmi", "cv", "hellinger"):
            assert [float(row[key]) for row in mine] == pytest.approx([t[key]] * 3)


def test_ldac_fixture_with_explicit_vocab(mcmc, data_dir: Path) -> None:
    corpus = data_dir / "lda" / "reuters50.ldac"
    r = mcmc(
        "lda",
        str(corpus),
        "--vocab",
        str(data_dir / "lda" / "vocab.reuters50.txt"),
        "-k",
        "3",
        *FAST,
        "-f",
        "json",
    )
    assert r.code == 0, r.stderr
    report = json.loads(r.out)
    assert report["corpus"]["documents"] == 50 and report["corpus"]["words"] == 4258
    assert "true_topic" not in report["chains"][0]["topics"][0]


def test_text_input_and_dmm(mcmc, data_dir: Path) -> None:
    r = mcmc("lda", str(data_dir / "lda" / "text_dir"), "-k", "2", "--method", "dmm", *FAST, "-f", "csv")
    assert r.code == 0, r.stderr
    assert "gibbs" in r.out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("bad/word_id.ldac",), "word_id.ldac: line 2: word id 3 is beyond the vocabulary"),
        (("bad/pair.ldac",), "pair.ldac: line 2: malformed pair '1'"),
        (("bad/docword.wordid.txt",), "docword.wordid.txt: line 5: word id out of range"),
        (("missing.ldac",), "missing.ldac: no such file or directory"),
        (("tiny.ldac", "--method", "lsa"), "unknown --method 'lsa'; choose one of collapsed"),
        (("tiny.ldac", "--burn-in", "3000"), "--burn-in must be in 0 .. --iterations - 1"),
        (("tiny.ldac", "--holdout", "1.5"), "--holdout must be a number in [0, 1)"),
        (("tiny.ldac", "--estimates", "est.txt"), "--estimates writes .npz"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(mcmc, data_dir: Path, args: tuple[str, ...], needle: str) -> None:
    path = str(data_dir / "lda" / args[0])
    r = (
        mcmc("lda", path, *args[1:], "--iterations", "5", "--burn-in", "1")
        if "--burn-in" not in args
        else mcmc("lda", path, *args[1:])
    )
    assert r.code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcmc: error:"), r.stderr
    assert needle in lines[0]
    assert "Traceback" not in r.stderr


def test_chains_to_stdout_keeps_stdout_binary(mcmc) -> None:
    r = mcmc("lda", *FAST, "--chains", "3", "--method", "dmm", "--holdout", "0.1", "-o", "-")
    assert r.code == 0, r.stderr
    with np.load(io.BytesIO(r.stdout)) as f:
        assert f["log_joint"].shape == (3, 6)
    assert "Topics (chain 0)" in r.stderr and "held-out perplexity" in r.stderr


def test_plot_draws_the_trace_of_every_chain(mcmc, tmp_path: Path) -> None:
    png = tmp_path / "trace.png"
    r = mcmc("lda", *FAST, "--plot", str(png))
    assert r.code == 0, r.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (900, 460)
    r = mcmc("lda", *FAST, "--plot", str(tmp_path / "trace.gif"))
    assert r.code == 2 and ".png" in r.stderr and r.out == ""  # refused before any sampling
    assert not (tmp_path / "trace.gif").exists()


def test_gzip_corpus_is_fitted_and_binary_input_refused(mcmc, data_dir: Path, tmp_path: Path) -> None:
    import gzip
    import shutil

    shutil.copy(data_dir / "lda" / "reuters50.vocab.txt", tmp_path / "reuters50.vocab.txt")
    plain = (data_dir / "lda" / "reuters50.ldac").read_bytes()
    (tmp_path / "reuters50.ldac.gz").write_bytes(gzip.compress(plain))
    args = ("-k", "3", *FAST, "-f", "json")
    r = mcmc("lda", str(tmp_path / "reuters50.ldac.gz"), *args)
    assert r.code == 0, r.stderr
    assert json.loads(r.out)["corpus"]["documents"] == 50
    np.savez(tmp_path / "fit.npz", x=np.arange(10.0))
    r = mcmc("lda", str(tmp_path / "fit.npz"), *args)
    assert r.code == 2 and r.out == ""
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"mcmc: error: {tmp_path / 'fit.npz'}: is a zip archive")


def test_topics_beyond_memory_are_refused_before_fitting(mcmc, data_dir: Path, machine_16gib: None) -> None:
    r = mcmc("lda", str(data_dir / "lda" / "tiny.ldac"), "-k", "1000000000", "--iterations", "5", "--burn-in", "1")
    assert r.code == 2
    line = r.stderr.strip().splitlines()[-1]  # after the corpus and model lines
    assert line.startswith("mcmc: error:") and "Traceback" not in r.stderr
    assert "K = 1000000000 topics" in line and "more than this machine can hold" in line


def test_help_reads_well_at_80_columns(mcmc, monkeypatch) -> None:
    # Typer keeps the help's line breaks: a hard-wrapped paragraph breaks into
    # stubs at other widths. Rewrapped prose fills its lines up to a paragraph's end.
    monkeypatch.setenv("COLUMNS", "80")
    r = mcmc("lda", "-h")
    assert r.code == 0
    lines = r.out.splitlines()
    prose = [line.rstrip() for line in lines[: next(i for i, x in enumerate(lines) if "─ Arguments" in x)]]
    assert max(len(line) for line in prose) <= 80
    for line, after in zip(prose, prose[1:], strict=False):
        inside = line.strip() and after.strip() and not line.startswith("   ")  # a paragraph, not an example
        if inside and "Usage:" not in line:
            assert len(line) >= 45, f"a stub line {line!r} in mcmc lda -h"
    examples = [line.strip() for line in prose if line.startswith("   mcmc ")]
    assert len(examples) >= 3 and any("--method" in e for e in examples)
