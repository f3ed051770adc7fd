"""Help text reads well at any terminal width, and each command's help ends with real examples."""

from __future__ import annotations

import re

import pytest

BOX = re.compile("[\u2500-\u257f]")  # rich's box-drawing characters


def _help(mcmc, monkeypatch, command: str, columns: int) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    r = mcmc(command, "-h")
    assert r.code == 0, r.stderr
    return r.out if isinstance(r.out, str) else r.out.decode()


@pytest.mark.parametrize("command", ["sample", "diagnose", "compare"])
def test_help_rewraps_at_any_width(mcmc, monkeypatch, command) -> None:
    narrow, wide = (_help(mcmc, monkeypatch, command, w) for w in (80, 200))
    assert max(len(line) for line in narrow.splitlines()) <= 80
    # The same words in the same order at 80 and 200 columns: every paragraph
    # and option help rewraps. A hard-wrapped docstring or a long metavar
    # breaks this (a fragment of a sentence lands on its own line, or a word
    # is cut in two).
    assert BOX.sub(" ", narrow).split() == BOX.sub(" ", wide).split()


@pytest.mark.parametrize("command", ["sample", "diagnose", "compare"])
def test_description_paragraphs_are_single_lines(mcmc, monkeypatch, command) -> None:
    # Wide enough for any paragraph: each must come out as one line followed by
    # a blank one, so no line of the description is an orphan fragment.
    text = _help(mcmc, monkeypatch, command, 4000)
    description = text.split("\u256d", 1)[0].splitlines()
    start = next(i for i, line in enumerate(description) if line.strip().startswith("Usage:")) + 1
    lines = [line.strip() for line in description[start:]]
    for here, after in zip(lines, lines[1:], strict=False):
        assert not (here and after), f"paragraph broken across lines: {here!r} / {after!r}"


@pytest.mark.parametrize("command", ["sample", "diagnose", "compare"])
def test_help_ends_with_examples_that_fit_80_columns(mcmc, monkeypatch, command) -> None:
    text = _help(mcmc, monkeypatch, command, 80)
    description = text.split("\u256d", 1)[0]
    assert "Examples" in description
    examples = [line.strip() for line in description.split("Examples", 1)[1].splitlines() if line.strip()]
    commands = [line for line in examples if line.startswith("mcmc ")]
    assert len(commands) >= 2
    # every line of the examples is either a comment or a whole command line: none wrapped
    assert all(line.startswith(("mcmc ", "#")) for line in examples), examples


def _narrowest_description(text: str) -> tuple[int, str]:
    """The width of the narrowest description column of the option panels, and that panel's title.

    A description that wraps continues on a line blank up to its column;
    the column starts where the deepest such continuation line starts.
    """
    narrowest, where, title, start, inner_width = 10**6, "", "", 0, 0

    def close() -> None:
        nonlocal narrowest, where
        if start and inner_width - start - 1 < narrowest:
            narrowest, where = inner_width - start - 1, title

    for line in text.splitlines():
        line = line.rstrip()
        if line.startswith("\u256d"):
            title, start = line.strip("\u256d\u256e\u2500 "), 0
        elif line.startswith("\u2502") and line.endswith("\u2502"):
            inner = line[1:-1]
            inner_width = len(inner)
            if inner.startswith("  ") and inner.strip():
                start = max(start, len(inner) - len(inner.lstrip()))
        elif line.startswith("\u2570"):
            close()
    return narrowest, where


@pytest.mark.parametrize("command", ["sample", "lda", "diagnose", "compare"])
def test_every_help_reads_well_at_80_columns(mcmc, monkeypatch, command) -> None:
    """Issue 28.9: no option's description is squeezed into a column narrower than 40 at 80 columns."""
    text = _help(mcmc, monkeypatch, command, 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    width, panel = _narrowest_description(text)
    assert width >= 40, f"mcmc {command} -h at 80 columns: descriptions {width} wide in the panel {panel!r}"


@pytest.mark.parametrize("command", ["sample", "lda", "diagnose", "compare"])
def test_help_shows_bracketed_words_verbatim(mcmc, monkeypatch, command) -> None:
    """Rich markup must not eat 'mcmc[dask]' or [tool.mcmc.diagnose] (it showed pip install 'mcmc')."""
    text = " ".join(BOX.sub(" ", _help(mcmc, monkeypatch, command, 200)).split())
    assert "pip install 'mcmc'" not in text and "defaults from in pyproject" not in text
    if command in ("sample", "lda"):
        assert "pip install 'mcmc[dask]'" in text
    assert "[tool.mcmc.diagnose] in pyproject.toml)" in text
