"""The readers' registry is the one list of input formats: the help, the docs and the messages follow it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcmc.cli.diagnose import HELP
from mcmc.diagnostics.readers import read_chains
from mcmc.diagnostics.readers.registry import FORMATS, SUPPORTED, named, sniff

DOCS = Path(__file__).parents[2] / "docs" / "formats.md"
DATA = Path(__file__).parents[1] / "data"
SUPPORTED_FORMATS = [f for f in FORMATS if f.supported]
#: A real file of every supported format: a new format is not done until it has one here.
EXAMPLES = {
    "npz": "fixtures/centered_eight_posterior.npz",
    "npy": "diagnose/emcee_chain.npy",
    "hdf5": "diagnose/pymc_eight_schools.nc",
    "zarr": "diagnose/numpyro_eight_schools.zarr",
    "posteriordb": "compare/eight_schools-eight_schools_noncentered.json",
    "cmdstan": "fixtures/cmdstan/eight_schools_output.csv",
    "draws-csv": "readers/as_draws_df.csv",
}


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


@pytest.mark.parametrize("fmt", SUPPORTED_FORMATS, ids=lambda f: f.name)
def test_every_format_has_a_real_example_told_and_read_as_it(fmt) -> None:
    path = DATA / EXAMPLES[fmt.name]
    if fmt.store_files:
        assert fmt.is_store(path)
    else:
        assert sniff(path.read_bytes()) is fmt and (not fmt.extensions or fmt in named(path.suffix))
    layout = "draw,chain" if fmt.name == "npy" else None  # emcee's get_chain() is (draw, walker, dim)
    assert read_chains([str(path)], layout=layout).n_chains >= 1


def test_an_unknown_format_lists_the_registry(tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"\x01\x02\x03 not any format")
    from mcmc.core.errors import InputError

    with pytest.raises(InputError, match=re.escape(SUPPORTED)):
        read_chains([str(tmp_path / "x")])
