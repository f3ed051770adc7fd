"""Trust at the edges, for every subcommand: no lost files, exit codes on interrupt, verbatim messages.

Each class of failure has a test across the commands: an output that is an
input (or another output), an output location that cannot be written, Ctrl-C
and SIGTERM (a real ``mcmc`` process), rich markup in messages, and numeric
options outside their range. "Before any work" is observed, not assumed: the
user target ``marker.py`` touches a file the first time it is evaluated.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains

LDA = Path(__file__).parents[1] / "data" / "lda"

# A user target that leaves a file `started` beside itself when first evaluated
# (so a test sees whether any work began) and sleeps SLEEP seconds per call.
MARKER_TARGET = """\
import pathlib, time
dim = 2
SLEEP = {sleep}
def log_density(x):
    pathlib.Path(__file__).with_name("started").touch()
    time.sleep(SLEEP)
    return -0.5 * (x ** 2).sum(axis=1)
"""


def _chains(path: Path, shift: float = 0.0) -> Path:
    rng = np.random.default_rng(1)
    write_chains(Chains(posterior={"mu": rng.normal(shift, 1.0, (2, 60))}), path)
    return path


def _draws_csv(path: Path) -> Path:
    rng = np.random.default_rng(2)
    rows = ["chain,draw,mu"] + [f"{c},{d},{rng.normal():.6f}" for c in range(2) for d in range(60)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _marker(tmp_path: Path, sleep: float = 0.0) -> Path:
    path = tmp_path / "marker.py"
    path.write_text(MARKER_TARGET.format(sleep=sleep))
    return path


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


def _one_error_line(r) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.code == 2 and len(lines) == 1 and lines[0].startswith("mcmc: error: "), (r.code, r.stderr)
    assert ".part" not in lines[0] and "internal error" not in lines[0]
    return lines[0]


# ----------------------------------------------------------------- an output that is an input


@pytest.mark.parametrize(
    "case",
    ["diagnose-csv", "diagnose-symlink", "diagnose-glob", "compare-runs", "compare-hardlink", "compare-reference",
     "lda-output-is-estimates", "lda-corpus", "sample-data", "diagnose-plot-is-output"],
)  # fmt: skip
def test_an_output_that_is_an_input_or_another_output_is_refused(mcmc, tmp_path, monkeypatch, case) -> None:
    monkeypatch.chdir(tmp_path)
    _draws_csv(tmp_path / "fit.csv")
    _chains(tmp_path / "old.npz")
    _chains(tmp_path / "new.npz", 0.1)
    (tmp_path / "corpus.ldac").write_bytes((LDA / "tiny.ldac").read_bytes())
    (tmp_path / "corpus.vocab.txt").write_bytes((LDA / "tiny.vocab.txt").read_bytes())
    (tmp_path / "train.nc").write_bytes((Path(__file__).parents[1] / "data" / "sample" / "logistic.csv").read_bytes())
    os.symlink("fit.csv", tmp_path / "link.csv")
    os.link(tmp_path / "old.npz", tmp_path / "hard.npz")
    argv, typed = {
        "diagnose-csv": (["diagnose", "fit.csv", "-f", "csv", "-o", "fit.csv"], "fit.csv"),
        "diagnose-symlink": (["diagnose", "fit.csv", "-f", "csv", "-o", "link.csv"], "link.csv"),
        "diagnose-glob": (["diagnose", "*.npz", "-f", "csv", "-o", "./sub/../new.npz"], "./sub/../new.npz"),
        "compare-runs": (["compare", "old.npz", "new.npz", "-o", "new.npz"], "new.npz"),
        "compare-hardlink": (["compare", "old.npz", "new.npz", "-o", "hard.npz"], "hard.npz"),
        "compare-reference": (["compare", "new.npz", "-r", "old.npz", "-o", str(tmp_path / "old.npz")], "old.npz"),
        "lda-output-is-estimates": (
            ["lda", "corpus.ldac", "-o", "fit.npz", "--estimates", "./fit.npz", "--iterations", "3", "--burn-in", "1"],
            "./fit.npz",
        ),
        "lda-corpus": (["lda", "old.npz", "-o", "old.npz", "--iterations", "3", "--burn-in", "1"], "old.npz"),
        # a CSV named .nc reads as data, and is a name sample writes
        "sample-data": (["sample", "-t", "logistic", "--data", "train.nc", "--warmup", "20", "--draws", "20", "-q",
                         "-o", "train.nc"], "train.nc"),
        "diagnose-plot-is-output": (["diagnose", "old.npz", "-o", "out.svg", "--plot", "out.svg"], "out.svg"),
    }[case]
    (tmp_path / "sub").mkdir()
    before = _snapshot(tmp_path)
    r = mcmc(*argv)
    line = _one_error_line(r)
    assert typed in line, line
    assert r.stdout == b""
    assert _snapshot(tmp_path) == before  # every input intact, nothing written, no temporary file


# ----------------------------------------------------------------- output locations checked first


def _unwritable_directory(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        d = tmp_path / "read-only"
        d.mkdir()
        d.chmod(0o555)
        return d
    # root writes through permission bits; the kernel's /proc takes no new files from anyone
    if not Path("/proc/self").is_dir():
        pytest.skip("running as root without /proc: no directory refuses a new file")
    return Path("/proc")


@pytest.mark.parametrize("where", ["missing-dir", "is-dir", "parent-is-file", "unwritable", "empty"])
@pytest.mark.parametrize("command", ["sample", "compare", "diagnose-plot", "lda-estimates"])
def test_an_unusable_output_is_refused_before_any_work(mcmc, tmp_path, monkeypatch, where, command) -> None:
    monkeypatch.chdir(tmp_path)
    target = _marker(tmp_path)
    _chains(tmp_path / "run.npz")
    suffix = {"diagnose-plot": ".png", "compare": ".json"}.get(command, ".npz")
    (tmp_path / f"a-dir{suffix}").mkdir()
    (tmp_path / "a-file").write_text("x")
    out = {
        "missing-dir": f"no-such-dir/out{suffix}",
        "is-dir": f"a-dir{suffix}",
        "parent-is-file": f"a-file/out{suffix}",
        "unwritable": str(_unwritable_directory(tmp_path) / f"out{suffix}"),
        "empty": "",
    }[where]
    argv = {
        "sample": ["sample", "-t", str(target), "-s", "rwm", "--warmup", "20", "--draws", "20", "-q", "-o", out],
        "compare": ["compare", "-t", str(target), "-s", "rwm", "--warmup", "20", "--draws", "20", "--seed", "1",
                    "-f", "json", "-o", out],
        "diagnose-plot": ["diagnose", "run.npz", "--plot", out],
        "lda-estimates": ["lda", str(LDA / "tiny.ldac"), "--iterations", "3", "--burn-in", "1", "--estimates", out],
    }[command]  # fmt: skip
    r = mcmc(*argv)
    line = _one_error_line(r)
    assert (out or "empty file name") in line, line
    assert not (tmp_path / "started").exists(), "the work began before the output was checked"
    assert r.stdout == b""
    assert not [p for p in tmp_path.rglob("*.part")]


# ----------------------------------------------------------------- Ctrl-C and SIGTERM, in a real process


def _start(argv: list[str], cwd: Path) -> subprocess.Popen:
    # SIGINT back to its default: a shell starts background jobs with it ignored
    # (in the child, not by preexec_fn, whose fork would run the fork handlers of what this process has loaded)
    launch = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
              "from mcmc.cli.app import main; sys.exit(main())")
    return subprocess.Popen([sys.executable, "-c", launch, *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip


@pytest.mark.parametrize(
    ("command", "sig", "code", "message"),
    [
        ("sample", signal.SIGINT, 130, "mcmc: interrupted"),
        ("sample", signal.SIGTERM, 143, "mcmc: terminated"),
        ("compare", signal.SIGINT, 130, "mcmc: interrupted"),
        ("lda", signal.SIGINT, 130, "mcmc: interrupted"),
        ("lda", signal.SIGTERM, 143, "mcmc: terminated"),
    ],
)
def test_an_interrupted_run_fails_and_leaves_the_old_output(tmp_path, command, sig, code, message) -> None:
    target = _marker(tmp_path, sleep=0.005)
    out = tmp_path / "out.npz"
    out.write_bytes(b"the previous run's file")
    argv = {
        "sample": ["sample", "-t", str(target), "-s", "rwm", "--warmup", "1000000", "-o", str(out)],
        "compare": ["compare", "-t", str(target), "-s", "rwm,slice", "--seed", "1", "--warmup", "1000000",
                    "-f", "json", "-o", str(out)],
        "lda": ["lda", "--iterations", "1000000", "--burn-in", "1", "--threads", "2", "--method", "partial",
                "-o", str(out), "--estimates", str(tmp_path / "est.npz")],
    }[command]  # fmt: skip
    proc = _start(argv, tmp_path)
    try:
        deadline = time.monotonic() + 120
        if command == "lda":  # working once the model line is out (the synthetic corpus is drawn)
            assert proc.stderr is not None
            for raw in proc.stderr:
                if raw.startswith(b"model:"):
                    break
            time.sleep(0.5)
        else:
            while not (tmp_path / "started").exists():
                assert proc.poll() is None and time.monotonic() < deadline, "mcmc never started sampling"
                time.sleep(0.02)
        assert proc.poll() is None
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()  # closes the pipes: a failure here must not leak into later tests
    assert proc.returncode == code, err
    assert err.decode().strip().splitlines()[-1] == message
    assert out.read_bytes() == b"the previous run's file"
    assert not (tmp_path / "est.npz").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_numba_compiles_stops_the_run_once_the_kernel_is_done(mcmc, tmp_path, monkeypatch, sig, code):
    # An interrupt raised inside numba's compiler is swallowed by LLVM's ctypes callbacks or
    # passes through exec'd code, after which CPython exits by SIGINT (-2) whatever main
    # returns: the handler holds it until the compiler lock is released. The signal is
    # sent from inside the lock, as a first run's kernel compilation would receive it.
    from numba.core.compiler_lock import global_compiler_lock

    from mcmc.core.lda.collapsed import CollapsedSampler

    steps: list[str] = []

    def compiling(self: CollapsedSampler) -> None:
        with global_compiler_lock:
            with global_compiler_lock:  # nested, as numba compiles a kernel's callees
                os.kill(os.getpid(), sig)
                steps.append("inner")
            steps.append("outer")
        steps.append("released")  # not reached: the interrupt comes as the lock is released

    monkeypatch.setattr(CollapsedSampler, "warm_up", compiling)
    out = tmp_path / "out.npz"
    r = mcmc("lda", str(LDA / "tiny.ldac"), "--iterations", "3", "--burn-in", "1", "-o", str(out))
    assert steps == ["inner", "outer"]
    assert r.code == code
    assert r.stderr.strip().splitlines()[-1] == ("mcmc: interrupted" if sig == signal.SIGINT else "mcmc: terminated")
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_the_output_is_written_removes_the_temporary_file(mcmc, tmp_path, monkeypatch, sig, code):
    # The window is too short to hit from outside: the signal is sent from inside the write.
    run = _chains(tmp_path / "run.npz")
    out = tmp_path / "report.json"
    out.write_text("previous report")
    seen: list[list[str]] = []
    real_fsync = os.fsync

    def fsync_then_signal(fd: int) -> None:
        real_fsync(fd)
        seen.append([p.name for p in tmp_path.iterdir() if p.name.endswith(".part")])
        os.kill(os.getpid(), sig)

    monkeypatch.setattr(os, "fsync", fsync_then_signal)
    r = mcmc("diagnose", str(run), "-f", "json", "-o", str(out))
    assert seen and len(seen[0]) == 1, "the signal did not arrive during the write"
    assert r.code == code
    assert r.stderr.strip().splitlines()[-1] == ("mcmc: interrupted" if sig == signal.SIGINT else "mcmc: terminated")
    assert out.read_text() == "previous report"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


# ----------------------------------------------------------------- messages print verbatim


def test_brackets_in_a_file_name_and_in_a_cell_print_verbatim(mcmc, tmp_path) -> None:
    named = tmp_path / "chains[hmc].npz"
    named.write_text("not an archive")
    line = _one_error_line(mcmc("diagnose", str(named)))
    assert "chains[hmc].npz" in line

    cell = tmp_path / "draws.csv"
    cell.write_text("chain,draw,mu\n0,0,1.0\n0,1,[/bold] {name: [draws]}\n")
    line = _one_error_line(mcmc("diagnose", str(cell)))
    assert "[/bold] {name: [draws]}" in line


def test_user_names_in_summaries_and_titles_print_verbatim(mcmc, tmp_path) -> None:
    run = _chains(tmp_path / "run[v2].npz")
    r = mcmc("diagnose", str(run))
    assert r.code in (0, 1)
    assert "run[v2].npz" in r.out  # the sampler panel's title

    out = tmp_path / "out[hmc].npz"
    r = mcmc("sample", "-s", "rwm", "--warmup", "20", "--draws", "20", "--seed", "1", "--no-check", "-o", str(out))
    assert r.code == 0 and out.exists()
    assert "out[hmc].npz" in r.stderr


# ----------------------------------------------------------------- numeric options: one rule, before work


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["sample", "-s", "rwm", "--scale", "-1"], "--scale must be a number > 0, got -1"),
        (["sample", "-s", "rwm", "--scale", "nan"], "--scale must be a number > 0"),
        (["sample", "-s", "rwm", "--target-accept", "1.5"], "--target-accept must be a number in (0, 1)"),
        (["sample", "-s", "slice", "--width", "0"], "--width must be a number > 0"),
        (["sample", "-s", "isir", "--particles", "1"], "--particles must be a whole number >= 2"),
        (["compare", "-s", "rwm", "-P", "rwm:scale=-1", "--seed", "1"], "--param 'rwm:scale=-1': must be a number > 0"),
        (["compare", "-s", "rwm", "--seed", "1", "--max-z", "nan"], "--max-z must be a number >= 0"),
    ],
)
def test_a_bad_number_is_refused_before_sampling(mcmc, tmp_path, argv, needle) -> None:
    target = _marker(tmp_path)
    r = mcmc(*argv, "-t", str(target), "--warmup", "20", "--draws", "20", "-o", str(tmp_path / "out.npz"))
    assert needle in _one_error_line(r)
    assert not (tmp_path / "started").exists()


@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [
        ("--alpha", "-1", "--alpha must be a number > 0"),
        ("--beta", "inf", "--beta must be a number > 0"),
        ("--holdout", "1", "--holdout must be a number in [0, 1)"),
        ("--max-df", "0", "--max-df must be a number in (0, 1]"),
        ("--topics", "0", "--topics"),
    ],
)
def test_lda_refuses_a_bad_number_before_reading_the_corpus(mcmc, tmp_path, option, value, needle) -> None:
    # The corpus does not exist: an error about it would mean it was read first.
    r = mcmc("lda", str(tmp_path / "missing.ldac"), option, value)
    assert needle in _one_error_line(r)


# ----------------------------------------------------------------- file names and usage


def test_an_empty_file_name_is_called_that(mcmc) -> None:
    assert _one_error_line(mcmc("diagnose", "")) == "mcmc: error: empty file name"
    assert "empty file name" in _one_error_line(mcmc("lda", ""))


@pytest.mark.parametrize("command", ["diagnose", "compare"])
def test_a_command_without_its_files_is_a_one_line_usage_error(mcmc, command) -> None:
    r = mcmc(command)
    line = _one_error_line(r)
    assert r.out == "", "the whole help was printed"
    assert {"diagnose": "Missing argument 'FILE'", "compare": "give two runs to compare"}[command] in line
    help_shown = mcmc(command, "-h")
    assert help_shown.code == 0 and f"Usage: mcmc {command}" in help_shown.out
