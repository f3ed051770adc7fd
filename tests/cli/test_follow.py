"""``mcmc diagnose --follow``: chains files judged while another process writes them."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mcmc.diagnostics.readers import Growing, read_growing

HEADER = "# method = sample (Default)\nlp__,accept_stat__,mu,tau\n"

# Appends CmdStan CSV rows to out_1.csv .. out_4.csv at a steady rate, every line written in two
# flushed halves (so readers meet partly written lines), then stops. argv: rows, chain offset.
WRITER = """\
import sys, time
import numpy as np
rows, offset = int(sys.argv[1]), float(sys.argv[2])
rng = np.random.default_rng(5)
files = [open(f"out_{i + 1}.csv", "w") for i in range(4)]
for f in files:
    f.write(HEADER); f.flush()
for r in range(rows):
    for i, f in enumerate(files):
        x = rng.normal(size=2) + offset * i
        line = f"{-0.5 * (x ** 2).sum():.6f},0.9,{x[0]:.6f},{x[1]:.6f}\\n"
        f.write(line[:7]); f.flush()
        f.write(line[7:])
    if r % 10 == 9:
        for f in files:
            f.flush()
        time.sleep(0.1)
"""


def test_a_partly_written_last_line_is_skipped_and_chains_are_cut_to_the_draws_all_have(tmp_path):
    (tmp_path / "a.csv").write_text(HEADER + "-1.0,0.9,0.1,0.2\n-2.0,0.8,0.3,0.4\n-3.0,0.7,0.")
    (tmp_path / "b.csv").write_text(HEADER + "-1.5,0.9,1.1,1.2\n-2.5,0.8,1.3,1.4\n-3.5,0.7,1.5,1.6\n")
    chains = read_growing([str(tmp_path / "*.csv")])
    assert chains.n_chains == 2 and chains.n_draws == 2
    np.testing.assert_array_equal(chains.posterior["mu"], [[0.1, 0.3], [1.1, 1.3]])
    np.testing.assert_array_equal(chains.sample_stats["lp"], [[-1.0, -2.0], [-1.5, -2.5]])
    (tmp_path / "c.csv").write_text("# method = sample (Default)\nlp__,accept_st")
    with pytest.raises(Growing, match="c.csv"):
        read_growing([str(tmp_path / "c.csv")])


def _writer(tmp_path: Path, rows: int, offset: float) -> subprocess.Popen:
    (tmp_path / "writer.py").write_text(f"HEADER = {HEADER!r}\n" + WRITER)
    proc = subprocess.Popen([sys.executable, "writer.py", str(rows), str(offset)], cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"out_{i}.csv").exists() for i in range(1, 5)):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    return proc


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()  # the writer this test started, by its handle
    proc.wait()


def test_follow_exits_0_as_soon_as_every_check_passes_while_the_writer_goes_on(mcmc, tmp_path):
    proc = _writer(tmp_path, 3000, 0.0)
    try:
        r = mcmc("diagnose", "--follow", str(tmp_path / "out_*.csv"), "--until-pass", "--poll", "0.2s")
        still_writing = proc.poll() is None
    finally:
        _stop(proc)
    assert r.code == 0, r.stderr
    assert still_writing, "the writer had finished: --until-pass did not stop early"
    look = re.compile(r"\s*[\d.]+s (\d+) chains x (\d+) draws: (PASS|FAIL|waiting)")
    looks = [look.match(line) for line in r.out.splitlines()]
    assert all(looks) and len(looks) >= 2, r.out
    draws = [int(m[2]) for m in looks if m[3] != "waiting"]
    assert draws == sorted(draws) and looks[-1][3] == "PASS" and looks[-1][1] == "4"
    assert r.stderr.strip().splitlines()[-1].startswith("PASS:")


def test_follow_reports_when_the_files_stop_growing_and_exits_1_when_they_fail(mcmc, tmp_path):
    proc = _writer(tmp_path, 60, 10.0)  # four chains ten sds apart: R-hat fails
    try:
        r = mcmc("diagnose", "--follow", str(tmp_path / "out_*.csv"), "--poll", "0.2s", "--idle", "1s")
    finally:
        _stop(proc)
    assert r.code == 1, r.stderr
    assert re.search(r"the files have not grown for \d+ s: stopped following \(\d+ looks\)", r.stderr)
    last = r.out.strip().splitlines()[-1]
    assert "4 chains x 60 draws: FAIL: R-hat > 1.01 for " in last, r.out


def test_follow_refuses_outputs_of_a_finished_file(mcmc, tmp_path):
    r = mcmc("diagnose", "--follow", "x.csv", "-f", "json")
    assert r.code == 2 and "--follow shows the checks as the files grow; --format applies" in r.stderr
    r = mcmc("diagnose", "x.csv", "--until-pass")
    assert r.code == 2 and "--until-pass goes with --follow" in r.stderr


def test_follow_watches_a_checkpoint_and_then_the_output_it_was_made_for(mcmc, tmp_path):
    # mcmc's own run: its checkpoint grows (is replaced) every 0.1 s, then gives way to the output
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcmc.cli.app", "sample", "-t", "gaussian", "--dim", "2", "-s", "rwm", "--seed", "2",
         "--warmup", "200", "--draws", "6000", "--checkpoint-every", "0.1s", "-q", "-o", "run.npz"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "run.npz.checkpoint.npz").exists() and not (tmp_path / "run.npz").exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()[1]
            time.sleep(0.02)
        r = mcmc("diagnose", "--follow", str(tmp_path / "run.npz.checkpoint.npz"), "--poll", "0.1s", "--idle", "2s")
        assert proc.wait(timeout=120) == 0
    finally:
        _stop(proc)
        proc.communicate()
    assert r.code == 0, r.stderr
    last = r.out.strip().splitlines()[-1]
    assert "4 chains x 6000 draws: PASS" in last, r.out  # the whole run, read from run.npz once it was written
