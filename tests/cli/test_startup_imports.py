"""What each command imports: the start-up floor held by module, not by time (issue 32).

Each case runs one command in a fresh interpreter, through :func:`mcmc.cli.app.main`
as the console script does, and lists the modules loaded when it ends. A library
that a command does not use must not be loaded by it: a stray top-level import of
SciPy, ArviZ or numba costs 0.1 to 0.3 s of every run (``bench/startup.py`` times
the commands themselves; ``docs/benchmarks.md``, "start-up").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[1] / "data"

#: Never loaded by any of the commands below.
NEVER = ("arviz", "arviz_base", "arviz_stats", "xarray", "pandas", "matplotlib", "pydantic", "markdown_it",
         "scipy.optimize", "scipy.special", "scipy.linalg", "scipy.stats", "scipy.fft")  # fmt: skip
#: What a command that runs no compiled kernel does not load either.
NO_KERNELS = ("numba", "llvmlite", "scipy")


def loaded_after(*argv: str, cwd: Path) -> set[str]:
    """The modules (top-level and their subpackages named in the lists above) loaded by ``mcmc ARGV``."""
    code = (
        "import io, json, sys\n"
        "from mcmc.cli.app import main\n"
        "sys.stdout = io.TextIOWrapper(io.BytesIO())\n"  # the report is not the point
        f"main({list(argv)!r})\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.__stderr__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, check=True)
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules)


def test_version_imports_no_subcommand_and_no_numpy(tmp_path) -> None:
    modules = loaded_after("--version", cwd=tmp_path)
    assert heavy(modules, (*NEVER, *NO_KERNELS, "numpy")) == []
    assert not {m for m in modules if m.startswith(("mcmc.cli.", "mcmc.diagnostics", "mcmc.core.samplers"))} - {
        "mcmc.cli.app", "mcmc.cli.console", "mcmc.cli.speedups", "mcmc.cli.text"}  # fmt: skip  # text: names in messages


def test_diagnose_help_imports_no_numpy(tmp_path) -> None:
    modules = loaded_after("diagnose", "--help", cwd=tmp_path)
    assert heavy(modules, (*NEVER, *NO_KERNELS, "numpy")) == []


def test_diagnose_imports_neither_scipy_nor_numba(tmp_path) -> None:
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "small.npz", theta=rng.standard_normal((4, 200, 10)))
    modules = loaded_after("diagnose", "small.npz", cwd=tmp_path)
    assert heavy(modules, (*NEVER, *NO_KERNELS)) == []


@pytest.mark.parametrize(
    "argv",
    [
        ("sample", "-t", "eight-schools", "--warmup", "20", "--draws", "10", "--seed", "1", "-o", "es.npz"),
        ("lda", str(DATA / "lda" / "tiny.ldac"), "-k", "2", "--iterations", "1", "--burn-in", "0", "--seed", "1",
         "--output", "lda.npz"),
    ],
    ids=["sample", "lda"],
)  # fmt: skip
def test_a_run_loads_numba_but_no_scipy_subpackage(tmp_path, argv) -> None:
    # numba imports SciPy's top level (its version check) and, with the probe deferred
    # (mcmc.cli.speedups), none of scipy.linalg; bnn's scipy.special and the topic
    # matching's scipy.optimize load only where they are used.
    modules = loaded_after(*argv, cwd=tmp_path)
    assert "numba" in modules  # the compiled paths ran: the case tests what it means to
    assert heavy(modules, NEVER) == []


def test_numba_without_its_dependency_checks_still_reads_its_config_file(tmp_path) -> None:
    # mcmc.cli.speedups.defer_numba_checks: numba loads neither SciPy nor PyYAML, and a
    # .numba_config.yaml is read all the same, there at start or written later.
    run = "import sys; from mcmc.cli.speedups import apply; apply('lda'); import numba; from numba.core import config; "
    stand_in = "getattr(sys.modules['yaml'], '__file__', None) is None"
    report = f"print(config.DEVELOPER_MODE, 'scipy' in sys.modules, {stand_in})"
    later = "open('.numba_config.yaml', 'w').write('developer_mode: 1'); config.reload_config(); "
    back = "import scipy, scipy.special; print(scipy.special.ndtr(0.0))"
    out = {}
    for case, code in (("none", run + report), ("later", run + later + report + "; " + back)):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
        out[case] = proc.stdout.split()
        (tmp_path / ".numba_config.yaml").unlink(missing_ok=True)
    (tmp_path / ".numba_config.yaml").write_text("developer_mode: 1\n")
    proc = subprocess.run([sys.executable, "-c", run + report], capture_output=True, text=True, cwd=tmp_path,
                          check=True)  # fmt: skip
    assert out["none"] == ["0", "False", "True"]  # no SciPy, and yaml is the stand-in
    assert out["later"] == ["1", "False", "False", "0.5"]  # the real yaml read the file; SciPy imports as usual
    assert proc.stdout.split() == ["1", "False", "False"]  # a file at start: the real yaml from the start


def test_only_a_bare_version_skips_the_subcommands() -> None:
    # --version is answered before any subcommand is looked at; with -h beside it the help still lists them all
    from mcmc.cli.app import SUBCOMMANDS, _invoked

    assert _invoked(["--version"]) == [] == _invoked(["--debug", "--version"])
    assert _invoked(["--help", "--version"]) == list(SUBCOMMANDS) == _invoked(["--version", "-h"])
    assert _invoked(["diagnose", "--version"]) == ["diagnose"]  # a subcommand's option: diagnose says it has none


@pytest.mark.parametrize("argv", [["--help"], ["-h"], [], ["--debug", "--help"]])
def test_the_top_level_help_lists_the_commands_without_building_them(tmp_path: Path, argv: list[str]) -> None:
    loaded = loaded_after(*argv, cwd=tmp_path)
    assert not {f"mcmc.cli.{name}" for name in ("sample", "lda", "diagnose", "compare")} & loaded


def test_the_listing_is_what_the_whole_build_shows() -> None:
    # mcmc --help lists each command by its summary; built in full, each command's help starts with it
    from typer.testing import CliRunner

    from mcmc.cli.app import SUBCOMMANDS, build_app
    from mcmc.cli.summaries import SUMMARIES

    env = {"COLUMNS": "1000"}
    listed = CliRunner().invoke(build_app(listing=True), ["--help"], env=env).output
    built = CliRunner().invoke(build_app(), ["--help"], env=env).output
    assert listed == built
    for name in SUBCOMMANDS:
        assert SUMMARIES[name] in listed
        whole = CliRunner().invoke(build_app([name]), [name, "--help"], env=env).output
        assert SUMMARIES[name] in whole
