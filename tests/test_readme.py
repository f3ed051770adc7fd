"""Every ``mcmc ...`` line of the README's code blocks runs as written, with the exit code the README says.

The lines run in order (a later line reads what an earlier one wrote, as a
reader following the page would), each through ``bash`` in a temporary folder
where ``examples/``, ``bench/`` and ``tests/`` are reachable as from the
repository's root. A line the README says is long (it says "minute") runs with a smaller
budget and ``--no-check`` (the budget changes the verdict, not whether the
command works); every other line runs as written. The README names the exit
code of every line that does not exit 0 ("exits 1", "exit 2"); :data:`EXITS`
lists them here too, so a line that starts failing, or stops, is seen.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: Lines (by a piece of their text) that do not exit 0, as the README says: their exit code, and why.
EXITS = {
    "diagnose examples/output_*.csv": (1, "the two CmdStan chains sit in different modes"),
    "--follow 'examples/output_*.csv'": (1, "the same two chains, followed until the files stop growing"),
    "-s hmc,slice,rwm": (1, "rwm does not mix in 1000 draws"),
    "-s gibbs,swendsen-wang": (1, "single-site Gibbs at the critical point"),
    "-s gibbs,hmc": (1, "Gibbs on a correlation of 0.99"),
    "-t banana -s importance": (1, "the fitted t misses banana's curved tails: Pareto k >= 0.7"),
    "integrator=euler": (2, "Euler's method is refused, with the reason"),
}
#: Lines that need an optional extra (by a piece of their text): the module it installs. The test extra
#: installs every one, so CI runs them all; a checkout without one skips its lines and says so.
EXTRAS = {"_jax.py": "jax"}
#: The budget a long line (the README says "minute") runs with, by its subcommand.
BUDGET = {
    "sample": ("--warmup", "100", "--draws", "100", "--no-check"),
    "lda": ("--iterations", "40", "--no-check"),
}


def readme_commands(text: str) -> list[str]:
    """The ``mcmc`` command lines of the fenced code blocks of ``text``, continuations joined, in order.

    Shell blocks give their lines starting with ``mcmc`` (a trailing ``\\``
    continues a line); YAML blocks their ``run:`` steps, folded ones (``>``)
    joined.
    """
    lines: list[str] = []
    for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.M | re.S):
        rows = body.splitlines()
        if lang == "yaml":
            for k, row in enumerate(rows):
                step = re.match(r"\s*-?\s*run:\s*(.*)$", row)
                if step is None:
                    continue
                command = step[1].strip()
                if command == ">":
                    indent = len(rows[k + 1]) - len(rows[k + 1].lstrip())
                    folded = []
                    for more in rows[k + 1 :]:
                        if len(more) - len(more.lstrip()) < indent or not more.strip():
                            break
                        folded.append(more.strip())
                    command = " ".join(folded)
                if command.startswith("mcmc "):
                    lines.append(command)
            continue
        if lang not in ("sh", "bash", "console"):
            continue
        joined: list[str] = []
        for row in rows:
            if joined and joined[-1].endswith("\\"):
                joined[-1] = joined[-1][:-1].rstrip() + " " + row.strip()
            else:
                joined.append(row.strip())
        lines += [row for row in joined if row.startswith("mcmc ")]
    return list(dict.fromkeys(lines))  # a line repeated (the CI example's sample) runs once


def _expected(line: str) -> tuple[int, str]:
    for key, (code, why) in EXITS.items():
        if key in line:
            return code, why
    return 0, ""


def _with_budget(line: str) -> str:
    """``line`` with the budget of its subcommand before its comment, when the README says it is long."""
    command, hash_, comment = line.partition(" # ")
    if "minute" not in comment:
        return line
    sub = command.split()[1]
    return f"{command.rstrip()} {' '.join(BUDGET[sub])}{'  ' + hash_ + comment if hash_ else ''}"


def test_readme_lines_are_found() -> None:
    lines = readme_commands(README.read_text())
    assert len(lines) >= 20, lines
    assert all("\\" not in line for line in lines)
    assert any(line.startswith("mcmc diagnose run.npz --html report.html") for line in lines)  # the CI step, folded
    for key, (code, _) in EXITS.items():
        assert sum(key in line for line in lines) == 1, f"{key!r} should name one README line"
        line = next(line for line in lines if key in line)
        assert re.search(rf"#.*\bexits? {code}\b", line), f"the README should say this line exits {code}: {line}"
    for line in lines:  # and a line that says it does not exit 0 (not "exit 1 if ...") is in the table
        said = re.search(r"#.*\bexits? ([1-9])\b(?! (if|when|beyond|unless)\b)", line)
        assert said is None or _expected(line)[0] == int(said[1]), f"not in EXITS: {line}"


@pytest.mark.slow
def test_every_readme_command_runs_as_written(tmp_path: Path) -> None:
    """Issue 28.1: the README's examples name files that ship and exit as the README says."""
    for folder in ("examples", "bench", "tests"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    bin_dir = Path(sys.executable).parent
    mcmc = bin_dir / "mcmc"
    if not mcmc.exists():
        found = shutil.which("mcmc")
        assert found is not None, "the mcmc command is not installed"
        bin_dir = Path(found).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "100"}
    env.pop("GITHUB_ACTIONS", None)
    failures, skipped = [], []
    for line in readme_commands(README.read_text()):
        extra = next((module for key, module in EXTRAS.items() if key in line), None)
        if extra is not None and importlib.util.find_spec(extra) is None:
            skipped.append(line)
            continue
        run = _with_budget(line)
        done = subprocess.run(
            ["bash", "-c", run], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        code, why = _expected(line)
        if done.returncode != code:
            tail = "\n".join(done.stderr.strip().splitlines()[-4:])
            failures.append(f"{run}\n  exit {done.returncode}, expected {code} {f'({why})' if why else ''}\n  {tail}")
    assert not failures, "README lines that do not run as written:\n" + "\n".join(failures)
    assert (tmp_path / "report.html").stat().st_size > 0 and (tmp_path / "theta.csv").stat().st_size > 0
    if skipped:
        pytest.skip(f"every other line runs as written; not installed here, so not run: {'; '.join(skipped)}")
