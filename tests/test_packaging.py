"""The wheel must carry every subpackage of the three top-level folders, under `mcmc.`."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = {"cli": "mcmc.cli", "core": "mcmc.core", "diagnostics": "mcmc.diagnostics"}


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for folder, package in TOP.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    assert found == listed


def test_outputs_get_the_usual_file_mode(tmp_path: Path) -> None:
    import os

    from mcmc.core.chains import atomic_output

    with atomic_output(tmp_path / "out.bin") as fh:
        fh.write(b"x")
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "out.bin").stat().st_mode & 0o777 == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]  # no temporary left behind
