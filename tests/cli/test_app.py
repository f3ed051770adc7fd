"""The top-level command: help, version, usage errors, and a light start-up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest


def test_help_lists_the_subcommands(mcmc) -> None:
    r = mcmc("--help")
    assert r.code == 0
    for name in ("sample", "lda", "diagnose", "compare"):
        assert name in r.out


def test_version(mcmc) -> None:
    r = mcmc("--version")
    assert r.code == 0 and r.out.startswith("mcmc ")


def test_unknown_option_is_a_usage_error(mcmc) -> None:
    r = mcmc("diagnose", "--no-such-option")
    assert r.code == 2
    assert r.stderr.strip().splitlines() == ["mcmc: error: No such option: --no-such-option (see 'mcmc diagnose -h')"]


def test_unknown_option_value_is_one_line_naming_the_choices(mcmc) -> None:
    r = mcmc("sample", "--sampler", "bogus")
    assert r.code == 2
    (line,) = r.stderr.strip().splitlines()
    assert "'bogus' is not one of" in line and "'hmc'" in line


def test_help_does_not_import_heavy_libraries() -> None:
    # `mcmc --help` must stay instant: ArviZ, SciPy and numba load only where used.
    code = (
        "import sys, json; from mcmc.cli.app import main; "
        "main(['--help']); "
        "heavy = ('arviz', 'arviz_base', 'arviz_stats', 'scipy', 'numba', 'xarray', 'matplotlib', 'markdown_it'); "
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


def test_a_subcommand_run_loads_only_its_own_module() -> None:
    # a CI gate running `mcmc diagnose` does not build the other subcommands' Click commands
    code = (
        "import sys, json; from mcmc.cli.app import main; "
        "main(['diagnose', '--help']); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mcmc.cli.') "
        "and m.count('.') == 2)), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert "mcmc.cli.diagnose" in loaded
    assert not loaded & {"mcmc.cli.sample", "mcmc.cli.lda", "mcmc.cli.compare"}


def test_root_options_before_the_subcommand(mcmc) -> None:
    r = mcmc("--debug", "diagnose", "--help")
    assert r.code == 0 and "Usage: mcmc diagnose" in r.out


def test_allocator_tuning_leaves_a_users_malloc_settings_alone(monkeypatch) -> None:
    import ctypes

    from mcmc.cli import speedups

    calls = []

    class FakeLibc:
        def mallopt(self, option, value):
            calls.append((option, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLibc())
    monkeypatch.setattr(speedups.sys, "platform", "linux")
    for key in [k for k in speedups.os.environ if k.startswith("MALLOC_")]:
        monkeypatch.delenv(key)
    speedups.keep_freed_memory()
    assert sorted(calls) == [(-3, 64 << 20), (-1, 256 << 20)]
    calls.clear()
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000000")
    speedups.keep_freed_memory()
    assert calls == []
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_")
    # for diagnose only: it raised mcmc lda's peak memory by 40 %
    for command, expected in (("lda", 0), ("sample", 0), (None, 0), ("diagnose", 2)):
        calls.clear()
        speedups.apply(command)
        assert len(calls) == expected, command


def test_the_markdown_stand_in_hands_on_to_rich() -> None:
    # --help no longer imports rich.markdown; a Markdown made later must still be rich's own.
    code = (
        "import sys; from mcmc.cli.speedups import defer_rich_markdown; defer_rich_markdown(); "
        "from rich.markdown import Markdown; m = Markdown('# title'); "
        "import rich.markdown; print(type(m) is rich.markdown.Markdown, 'markdown_it' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["True", "True"]


def test_numba_without_its_blas_probe_still_compiles_blas_calls() -> None:
    # lda and sample load numba without scipy.linalg (0.2 s); a kernel that calls BLAS must still work.
    code = (
        "import sys; from mcmc.cli.speedups import apply; apply('lda'); "
        "import numpy as np, numba; from numba.np import arraymath; "
        "print(arraymath._HAVE_BLAS, 'scipy.linalg' in sys.modules); "
        "f = numba.njit(lambda a, b: np.dot(a, b)); a = np.arange(6.0).reshape(2, 3); "
        "g = numba.njit(lambda x, y: np.convolve(x, y)); "
        "print(np.array_equal(f(a, a.T), a @ a.T), np.allclose(g(a[1], a[0]), np.convolve(a[1], a[0])), "
        "'scipy.linalg' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["True", "False", "True", "True", "True"]
    for command in ("diagnose", None):  # commands without numba kernels keep the normal import
        proc = subprocess.run([sys.executable, "-c", f"from mcmc.cli.speedups import apply; apply({command!r}); "
                               "import sys, numba.np.arraymath; print('scipy.linalg' in sys.modules)"],
                              capture_output=True, text=True, check=True)  # fmt: skip
        assert proc.stdout.split() == ["True"], command


@pytest.mark.parametrize(("signum", "code", "line"), [(signal.SIGTERM, 143, "mcmc: terminated"), (signal.SIGINT, 130, "mcmc: interrupted")])
def test_a_signal_wrapped_by_a_library_still_exits_as_a_signal(monkeypatch, capsys, signum, code, line):
    # numba, say, compiling when the signal arrives, re-raises the KeyboardInterrupt as its own error.
    from mcmc.cli import app

    def command(*args, **kwargs):
        try:
            os.kill(os.getpid(), signum)
        except KeyboardInterrupt as exc:
            raise RuntimeError("compilation failed") from exc

    monkeypatch.setattr(app, "build_app", lambda names, **_: command)
    assert app.main(["sample"]) == code
    assert capsys.readouterr().err.strip().splitlines()[-1] == line


def test_an_interrupt_a_library_swallowed_still_stops_lda_after_the_sweep(monkeypatch, capsys):
    # numba compiling when Ctrl-C arrives may catch the KeyboardInterrupt and carry on;
    # the per-sweep callback must stop the fit anyway, not after a million sweeps.
    from mcmc.cli import app
    from mcmc.core.lda import pipeline

    sweeps = []

    def fit_lda(data, config, *, callback=None, scheduler=None, **long_run):  # problem, resume, checkpoint
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pass  # swallowed, as a library might
        for it in range(1000):
            sweeps.append(it)
            if callback is not None:
                callback(0, it, 0.0)
        raise AssertionError("the fit was not stopped")

    monkeypatch.setattr(pipeline, "fit_lda", fit_lda)
    assert app.main(["lda", "--iterations", "1000", "--burn-in", "1"]) == 130
    assert len(sweeps) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == "mcmc: interrupted"
