"""Benchmark: the fixed cost of a run, each command as a whole process beside Python's own floors.

Times, best of ``--repeats``, fresh processes of:

* ``python -c pass`` and ``python -c "import numpy"``: the floors (the
  interpreter, then the one import every command but ``--version`` needs);
* ``mcmc --version``;
* ``mcmc diagnose FILE``: a small chains file (4 chains x 200 draws x 10
  parameters, written here), the default table report;
* ``mcmc sample -t eight-schools --draws 10``: HMC, 4 chains, 1000 warm-up
  iterations (the default) and 10 draws, to a temporary ``.npz``;
* ``mcmc lda CORPUS --iterations 1 --burn-in 0``: one sweep of collapsed
  Gibbs (2 chains) on a 10-document LDA-C corpus (written here).

The runs are interleaved (round after round of every command), so a drift in
the machine's speed meets every command alike, and each is timed from outside
(wall clock; CPU = user + system of that child, from ``wait4``). One untimed
round first fills numba's on-disk cache, as the first use after installation
does: no timed run compiles. ``sample``'s own summary line gives its sampling
seconds (warm-up included), printed beside it: the rest of its process is its
start-up. Exit 1 is a legitimate verdict of all three commands on such short
runs.

``--against COMMIT`` also times the same commands with the package as it was
at ``COMMIT`` (its ``cli``, ``core`` and ``diagnostics`` extracted by ``git archive`` to a
temporary folder, byte-compiled, and put first on ``PYTHONPATH``), interleaved
with today's, and prints their ratio: a before-and-after that holds on a loaded
machine, where every process slows alike.

Target (issue 32): every command under 0.3 s as a whole process. Run from the
repository root: ``.venv/bin/python bench/startup.py`` (about a minute), or
``--repeats 3`` to smoke-test; ``--against cc46e49`` compares with the code
before issue 32's start-up work.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from diagnose import ar1_draws, compile_package  # bench/diagnose.py, beside this file

TARGET = 0.3  # seconds, whole process (issue 32)


def run(argv: list[str], ok: tuple[int, ...] = (0, 1), env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Run ``argv``; return (wall seconds, CPU seconds of that child, its stderr)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    if code not in ok:
        sys.exit(f"{' '.join(argv)} failed with {code}:\n{text[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, text


def write_corpus(folder: Path, rng: np.random.Generator, docs: int = 10, words: int = 200, length: int = 100) -> Path:
    """A ``docs``-document LDA-C corpus of ``length`` tokens each over ``words`` words, and its vocabulary."""
    lines = []
    for _ in range(docs):
        ids, counts = np.unique(rng.integers(0, words, length), return_counts=True)
        lines.append(f"{len(ids)} " + " ".join(f"{i}:{c}" for i, c in zip(ids, counts, strict=True)))
    path = folder / "ten.ldac"
    path.write_text("\n".join(lines) + "\n")
    (folder / "ten.vocab.txt").write_text("\n".join(f"word{i:03d}" for i in range(words)) + "\n")
    return path


def extract(commit: str, folder: Path) -> dict[str, str]:
    """The package at ``commit`` under ``folder/mcmc``, compiled; the environment that imports it first."""
    root = Path(__file__).resolve().parents[1]
    package = folder / "mcmc"
    package.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(root), "archive", commit, "cli", "core", "diagnostics"],
                             capture_output=True, check=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(package)], input=archive, check=True)
    compileall.compile_dir(package, quiet=1)
    return {**os.environ, "PYTHONPATH": str(folder)}


def sampling_seconds(stderr: str) -> float | None:
    """The seconds ``mcmc sample`` reports for its sampling ("... gradient evaluations   0.31 s  -> FILE")."""
    found = re.search(r"evaluations\s+([0-9.]+) s", stderr)
    return float(found.group(1)) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20211)
    parser.add_argument("--against", metavar="COMMIT", help="also time the package as it was at COMMIT")
    args = parser.parse_args()

    compile_package()
    python = sys.executable
    mcmc = str(Path(python).parent / "mcmc")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rng = np.random.default_rng(args.seed)
        draws = folder / "small.npz"
        np.savez(draws, theta=ar1_draws(rng, 4, 200, 10))
        corpus = write_corpus(folder, rng)
        commands = {
            "python -c pass": [python, "-c", "pass"],
            'python -c "import numpy"': [python, "-c", "import numpy"],
            "mcmc --version": [mcmc, "--version"],
            "mcmc diagnose small.npz": [mcmc, "diagnose", str(draws)],
            "mcmc sample -t eight-schools --draws 10": [mcmc, "sample", "-t", "eight-schools", "--draws", "10",
                                                        "--seed", "1", "-o", str(folder / "es.npz")],
            "mcmc lda ten.ldac --iterations 1": [mcmc, "lda", str(corpus), "--iterations", "1", "--burn-in", "0",
                                                 "--seed", "1"],
        }  # fmt: skip
        runs = {name: (argv, None) for name, argv in commands.items()}
        if args.against:
            env = extract(args.against, folder / "against")
            runs |= {f"{name} @{args.against}": (argv, env) for name, argv in commands.items() if argv[0] == mcmc}
        for argv, env in runs.values():  # fills numba's cache and the OS's file cache; not timed
            run(argv, env=env)
        walls: dict[str, list[float]] = {name: [] for name in runs}
        cpus: dict[str, list[float]] = {name: [] for name in runs}
        sampling: list[float] = []
        for _ in range(args.repeats):
            for name, (argv, env) in runs.items():
                wall, cpu, stderr = run(argv, env=env)
                walls[name].append(wall)
                cpus[name].append(cpu)
                if argv[1] == "sample" and env is None and (s := sampling_seconds(stderr)) is not None:
                    sampling.append(wall - s)
    floor = min(walls['python -c "import numpy"'])
    print(f"start-up benchmark: best of {args.repeats} whole processes, interleaved; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"  {'command':<42} {'wall s':>7} {'CPU s':>7} {'- numpy':>8}  target {TARGET} s")
    for name in commands:
        best = min(walls[name])
        verdict = "  met" if best < TARGET else f"  missed by {best - TARGET:.2f} s"
        verdict = "" if name.startswith("python") else verdict
        print(f"  {name:<42} {best:7.3f} {min(cpus[name]):7.3f} {best - floor:+8.3f}{verdict}")
    if sampling:
        rest = min(sampling)
        print(f"  {'  sample: its process less its sampling':<42} {rest:7.3f} {'':>7} {rest - floor:+8.3f}")
    if args.against:
        print(f"  at {args.against} (same runs, interleaved)          wall s   CPU s   now/then wall  CPU")
        for name in commands:
            then = f"{name} @{args.against}"
            if then in runs:
                w, c = min(walls[then]), min(cpus[then])
                print(f"  {name:<42} {w:7.3f} {c:7.3f}   {min(walls[name]) / w:12.2f} {min(cpus[name]) / c:5.2f}")

if __name__ == "__main__":
    main()
