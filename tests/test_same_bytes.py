"""Same seed, same bytes: every sampler and LDA method against digests stored before a refactor.

``tests/data/same_bytes/cases.py`` lists the runs; ``make_digests.py`` beside
it stored what they wrote. A change here means a sampler's random stream or
arithmetic changed: intended changes regenerate the digests in their own commit.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "data" / "same_bytes"
_spec = importlib.util.spec_from_file_location("same_bytes_cases", HERE / "cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
EXPECTED = json.loads((HERE / "digests.json").read_text())


@pytest.mark.parametrize("name", cases.ALL_CASES)
def test_same_bytes_as_stored(name, tmp_path, capsys):
    got = cases.digests(name, tmp_path)
    assert got == EXPECTED[name]


def test_every_case_has_digests():
    assert sorted(EXPECTED) == sorted(cases.ALL_CASES)
