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

    from mcmc.core.atomic import atomic_output

    with atomic_output(tmp_path / "out.bin") as fh:
        fh.write(b"x")
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "out.bin").stat().st_mode & 0o777 == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]  # no temporary left behind


def test_make_demos_topic_model_passes_its_own_gate(mcmc) -> None:
    # `make demo` ends with a fit of the built-in synthetic corpus with the defaults, which
    # must pass the topic-model checks or the demo exits 1; this test runs that line so a
    # change of the sampler's draws or of the rule cannot break the demo unseen.
    makefile = (Path(__file__).parents[1] / "Makefile").read_text()
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    lines = [line.split("/mcmc ", 1)[1].split() for line in recipe.splitlines() if "/mcmc lda" in line]
    assert lines, "no `mcmc lda` line in the demo recipe"
    for argv in lines:
        r = mcmc(*argv)
        assert r.code == 0, r.stderr[-400:]
        assert "PASS: the chains have stopped rising" in r.stderr
