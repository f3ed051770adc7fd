"""The readers' registry is the one list of input formats: the help, the docs and the messages follow it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcmc.cli.diagnose import HELP
from mcmc.diagnostics.readers import read_chains
from mcmc.diagnostics.readers.registry import FORMATS, SUPPORTED, named, sniff

DOCS = Path(__file__).parents[2] / "docs" / "formats.md"
SUPPORTED_FORMATS = [f for f in FORMATS if f.supported]


def docs_rows() -> list[str]:
    """The first cells of the table of input formats in docs/formats.md, backticks dropped."""
    text = DOCS.read_text().split("## Input formats `diagnose` reads", 1)[1]
    table = text.split("| input | recognised by | what is read |", 1)[1].split("\n\n", 1)[0]
    return [line.split(" | ")[0].lstrip("| ").replace("`", "") for line in table.splitlines()[2:]]


def test_every_format_has_its_row_in_the_docs_in_registry_order() -> None:
    rows = docs_rows()
    assert len(rows) == len(SUPPORTED_FORMATS)
    for row, fmt in zip(rows, SUPPORTED_FORMATS, strict=True):
        assert fmt.label in row, (fmt.name, row)


def test_every_format_is_named_in_the_help_and_the_message() -> None:
    help_text = " ".join(HELP.split())
    for fmt in SUPPORTED_FORMATS:
        assert fmt.label in help_text, fmt.name
        assert fmt.label in SUPPORTED


def test_names_and_magic_are_unique() -> None:
    assert len({f.name for f in FORMATS}) == len(FORMATS)
    magic = [m for f in FORMATS for m in f.magic]
    assert len(set(magic)) == len(magic)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_each_format_declares_how_it_is_recognised(fmt) -> None:
    ways = [bool(fmt.magic), fmt.sniff is not None, bool(fmt.store_files)]
    assert sum(ways) == 1, "a format is told by its first bytes, its text or its directory: one of them"
    assert fmt.description and re.fullmatch(r"[\w.-]+", fmt.name)
    for suffix in fmt.extensions:
        assert suffix.startswith(".") and suffix == suffix.lower() and fmt in named(suffix)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.magic], ids=lambda f: f.name)
def test_magic_bytes_name_their_format(fmt) -> None:
    for magic in fmt.magic:
        assert sniff(magic + b"\0" * 8) is fmt


def test_an_unknown_format_lists_the_registry(tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"\x01\x02\x03 not any format")
    from mcmc.core.errors import InputError

    with pytest.raises(InputError, match=re.escape(SUPPORTED)):
        read_chains([str(tmp_path / "x")])
