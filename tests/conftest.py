"""Shared test fixtures: running the CLI in-process, and Hypothesis profiles."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

DATA = Path(__file__).parent / "data"

# Compiled kernels for the test files' point functions go to a folder of this
# session (inherited by the CLI processes tests start), not the user's cache,
# and the folder goes when the session ends.
if "MCMC_CACHE_DIR" not in os.environ:
    os.environ["MCMC_CACHE_DIR"] = tempfile.mkdtemp(prefix="mcmc-test-kernels-")
    atexit.register(shutil.rmtree, os.environ["MCMC_CACHE_DIR"], ignore_errors=True)

# Two cores shared with numba compilation: wall-clock deadlines would make
# property tests flaky without making them stricter.
settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")


@dataclass
class CliResult:
    code: int
    stdout: bytes
    stderr: str

    @property
    def out(self) -> str:
        return self.stdout.decode()


@pytest.fixture
def data_dir() -> Path:
    """Folder of the small fixtures copied from ../shared into the repository."""
    return DATA


@pytest.fixture
def mcmc(capfdbinary: pytest.CaptureFixture[bytes]) -> Callable[..., CliResult]:
    """Run ``mcmc ARGS...`` in this process through the real entry point.

    Returns exit code, stdout bytes and stderr text, so tests see exactly what
    a shell would (exit codes come from ``mcmc.cli.app.main``).
    """
    from mcmc.cli.app import main

    def run(*argv: str) -> CliResult:
        capfdbinary.readouterr()
        code = main(list(argv))
        captured = capfdbinary.readouterr()
        return CliResult(code, captured.out, captured.err.decode(errors="replace"))

    return run


@pytest.fixture
def machine_16gib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the memory guard (:mod:`mcmc.core.memory`) see a 16 GiB machine, whatever runs the tests."""
    import mcmc.core.memory

    monkeypatch.setattr(mcmc.core.memory, "physical_memory", lambda: 16 * 2**30)
