"""Trust at the new edges (issue 29): networks, Markov chains, Potts, the BNN, saved models, zarr, Dask.

The second trust campaign, one section per class of failure, most severe
first: a failed run that writes its output; the same-bytes promise; hangs
and runaway resources; the memory guard; crashes instead of one line; false
passes; valid inputs refused; what the terminal receives; messages that do
not name their source. Tests that start processes end them by pid, in
bounded time.
"""

from __future__ import annotations

import json
import re
import xml.dom.minidom
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains

DATA = Path(__file__).parents[1] / "data"


def _one_error_line(r) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.code == 2 and len(lines) == 1 and lines[0].startswith("mcmc: error: "), (r.code, r.stderr)
    assert "internal error" not in lines[0] and "Traceback" not in r.stderr
    return lines[0]


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


# ----------------------------------------------------------------- 1. a failed run writes nothing

BNN_TRAIN = DATA / "bnn" / "mcycle.csv"
EARTHQUAKE = DATA / "networks" / "earthquake.bif"
NO_SPACE = Path("/dev/full")


@pytest.fixture
def no_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a density sampler or a network sampler starts: the run should have stopped before."""
    import mcmc.core.networks.driver
    import mcmc.core.scaleout

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started sampling before every input was validated")

    monkeypatch.setattr(mcmc.core.scaleout, "run_block", refuse)
    monkeypatch.setattr(mcmc.core.networks.driver, "sample_network", refuse)


@pytest.mark.parametrize(
    ("test_csv", "needle"),
    [
        ("times,accel,extra\n1,2,3\n", "has 3 columns"),  # one predictor, the outcome, and one too many
        ("times\nfast\n", "'fast'"),
        ("times\nnan\n", "NaN"),
        ("times\n", "header"),
    ],
    ids=["column-count", "text-cell", "nan", "header-only"],
)
def test_a_bad_bnn_test_file_is_refused_before_sampling(mcmc, tmp_path, no_sampling, test_csv, needle) -> None:
    (tmp_path / "test.csv").write_text(test_csv)
    out = tmp_path / "out.npz"
    out.write_bytes(b"the previous run")
    r = mcmc("sample", "-t", "bnn", "--data", str(BNN_TRAIN), "-o", str(out), "--predict", str(tmp_path / "test.csv"),
             "--predictions", str(tmp_path / "pred.csv"), "--warmup", "20", "--draws", "20", "-q")  # fmt: skip
    line = _one_error_line(r)
    assert "test.csv" in line and needle in line, line
    assert out.read_bytes() == b"the previous run"
    assert not (tmp_path / "pred.csv").exists()


@pytest.mark.parametrize("command", ["sample", "compare"])
def test_observing_every_node_of_a_network_is_refused_before_sampling(mcmc, tmp_path, no_sampling, command) -> None:
    every = "Burglary=True,Earthquake=False,Alarm=True,JohnCalls=True,MaryCalls=True"
    out = tmp_path / ("out.npz" if command == "sample" else "out.json")
    argv = {"sample": ["sample", "-o", str(out)], "compare": ["compare", "-s", "gibbs,rejection", "-o", str(out)]}
    r = mcmc(*argv[command], "-t", str(EARTHQUAKE), "--observe", every, "--draws", "50")
    line = _one_error_line(r)
    assert "earthquake.bif" in line and "nothing is left to sample" in line
    assert not out.exists()


@pytest.mark.skipif(not NO_SPACE.exists(), reason="no /dev/full on this system")
def test_a_full_disk_under_a_second_output_leaves_the_first_as_it_was(mcmc, tmp_path) -> None:
    out = tmp_path / "out.npz"
    out.write_bytes(b"the previous run")
    r = mcmc("sample", "-t", "bnn", "--data", str(BNN_TRAIN), "-o", str(out), "--predict", str(BNN_TRAIN),
             "--predictions", str(NO_SPACE), "--warmup", "10", "--draws", "10", "-q", "--seed", "1")  # fmt: skip
    assert "/dev/full: cannot be written (No space left on device)" in _one_error_line(r)
    assert out.read_bytes() == b"the previous run"  # sampled and written, but not renamed onto it
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]


@pytest.mark.skipif(not NO_SPACE.exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("option", ["--junit", "--html", "--output-md", "--output-json"])
def test_a_full_disk_is_one_line_for_every_report_file(mcmc, tmp_path, option) -> None:
    run = tmp_path / "run.npz"
    rng = np.random.default_rng(3)
    write_chains(Chains(posterior={"mu": rng.normal(size=(2, 200))}), run)
    json_out = tmp_path / "report.csv"
    json_out.write_text("previous report")
    line = _one_error_line(mcmc("diagnose", str(run), "-f", "csv", "-o", str(json_out), option, str(NO_SPACE)))
    assert "/dev/full: cannot be written (No space left on device)" in line
    assert json_out.read_text() == "previous report"  # written first, then not renamed onto its name


@pytest.mark.skipif(not NO_SPACE.exists(), reason="no /dev/full on this system")
def test_a_full_disk_under_theta_is_one_line(mcmc, tmp_path) -> None:
    model = tmp_path / "model.npz"
    r = mcmc("lda", str(DATA / "lda" / "tiny.ldac"), "-k", "2", "--iterations", "4", "--burn-in", "1",
             "--save-model", str(model), "--no-check")  # fmt: skip
    assert r.code == 0, r.stderr
    line = _one_error_line(mcmc("lda", str(DATA / "lda" / "tiny.ldac"), "--model", str(model), "--iterations", "4",
                                "--burn-in", "1", "--theta", str(NO_SPACE)))  # fmt: skip
    assert "/dev/full: cannot be written" in line


# ----------------------------------------------------------------- 8. what the terminal and logs receive

#: Names that a terminal, Markdown, XML or a shell would take for something else.
WEIRD = {"pipe": "a|b", "escape": "x\x1b[31my", "newline": "n\nm", "emoji": ":100:", "tab": "t\tab"}


def _weird_run(path: Path) -> Path:
    rng = np.random.default_rng(1)
    write_chains(Chains(posterior={n: rng.normal(0, 1, (2, 100)) for n in [*WEIRD.values(), "ok"]}), path)
    return path


def test_a_file_name_prints_as_typed_without_emoji_or_escape_sequences(mcmc, tmp_path) -> None:
    assert "run:100:.npz: no such file" in _one_error_line(mcmc("diagnose", str(tmp_path / "run:100:.npz")))
    assert "--scheduler local:-1" in _one_error_line(mcmc("sample", "--scheduler", "local:-1", "-o", "x.npz"))
    line = _one_error_line(mcmc("diagnose", "a\x1b[2Jb.npz"))
    assert "\x1b" not in line and "a\\x1b[2Jb.npz" in line


def test_a_newline_in_a_file_name_cannot_forge_a_second_error_line(mcmc) -> None:
    line = _one_error_line(mcmc("diagnose", "a\nmcmc: error: forged.npz"))
    assert "a\\nmcmc: error: forged.npz" in line


def test_parameter_names_print_as_they_are_in_every_report(mcmc, tmp_path) -> None:
    run = _weird_run(tmp_path / "weird.npz")
    r = mcmc("diagnose", str(run), "--junit", str(tmp_path / "r.xml"), "--html", str(tmp_path / "r.html"))
    assert r.code == 1, r.stderr  # in-process, a matplotlib warning (a missing glyph) would be an error
    for text in (r.out, r.stderr):
        assert "\x1b" not in text and "\t" not in text
        assert "x\\x1b[31my" in text and "n\\nm" in text
    table = [line for line in r.out.splitlines() if line.startswith(("n\\nm", ":100:", "a|b", "t\\tab"))]
    assert len(table) == 4, r.out  # one row each: no name broke its row in two
    assert ":100:" in r.stderr and "\U0001f4af" not in r.stderr + r.out

    doc = xml.dom.minidom.parse(str(tmp_path / "r.xml"))  # parses: no raw control characters
    names = {case.getAttribute("name") for case in doc.getElementsByTagName("testcase")}
    assert {"x\\x1b[31my", "n\\nm", "a|b"} <= names
    html = (tmp_path / "r.html").read_text()
    assert "x\\x1b[31my" in html and "\x1b" not in html

    md = mcmc("diagnose", str(run), "-f", "md").out
    rows = [line for line in md.splitlines() if line.startswith("| `a")]
    assert rows and rows[0].startswith("| `a\\|b` |"), md
    cells = re.split(r"(?<!\\)\|", rows[0])[1:-1]
    header = next(line for line in md.splitlines() if line.startswith("| parameter |"))
    assert len(cells) == header.count("|") - 1  # the pipe in the name does not add a column
    assert "\x1b" not in md and "n\\nm" in md
