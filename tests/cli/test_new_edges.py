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
