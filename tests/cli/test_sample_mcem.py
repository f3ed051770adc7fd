"""`mcmc sample --mcem`: Monte Carlo EM from the command line, its table, JSON, CSV and result file."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from mcmc.cli.commands.sample import mcem_run
from mcmc.core.errors import UsageError
from mcmc.core.mcem.config import McemSettings

SHORT = ("--em-iterations", "6", "--em-draws", "40", "--warmup", "20", "--seed", "3")


def test_the_built_in_example_prints_its_trace_and_writes_it(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "mcem.npz"
    r = mcmc("sample", "-t", "censored-normal", "--mcem", *SHORT, "-o", str(out))
    assert r.code == 0, r.stderr
    assert "Monte Carlo EM on censored-normal: gibbs E-steps" in r.out and "final theta: mu = " in r.out
    assert f"-> {out}" in r.stderr
    with np.load(out, allow_pickle=False) as f:
        assert f["theta"].shape == (7, 2) and f["draws"].tolist() == [40, 48, 58, 70, 83, 100]
        assert str(f["sampler"]) == "gibbs" and int(f["seed"]) == 3
        theta = f["theta"]
    doc = json.loads(mcmc("sample", "-t", "censored-normal", "--mcem", *SHORT, "-f", "json").out)
    assert doc["schema"] == "mcmc.mcem/1" and len(doc["iterations"]) == 6
    assert doc["final"]["theta"] == {"mu": theta[-1, 0], "log_sigma": theta[-1, 1]}  # the same run, exactly
    rows = list(csv.reader(io.StringIO(mcmc("sample", "-t", "censored-normal", "--mcem", *SHORT, "-f", "csv").out)))
    assert rows[0] == ["iteration", "draws", "mu", "mu_mcse", "log_sigma", "log_sigma_mcse", "objective"]
    assert len(rows) == 8 and float(rows[-1][2]) == theta[-1, 0]


def test_same_seed_same_bytes_from_the_command_line(mcmc, tmp_path: Path) -> None:
    for name in ("a.npz", "b.npz"):
        assert mcmc("sample", "-t", "censored-normal", "--mcem", *SHORT, "-o", str(tmp_path / name)).code == 0
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_a_user_file_and_another_sampler_with_its_settings(mcmc, data_dir: Path) -> None:
    r = mcmc("sample", "-t", str(data_dir / "mcem" / "mixture.py"), "--mcem", *SHORT, "-f", "json")
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)
    assert doc["sampler"] == "gibbs" and doc["parameters"] == ["mu_0", "mu_1"]  # its Gibbs block, by default
    r = mcmc("sample", "-t", "censored-normal", "--mcem", *SHORT, "-s", "slice", "-P", "width=0.5", "-f", "json")
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)
    assert doc["sampler"] == "slice" and doc["settings"]["params"] == {"width": 0.5}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("-t", "censored-normal"), "latent-variable model: find its maximum-likelihood parameters with --mcem"),
        (("-t", "gaussian", "--mcem"), "--mcem needs a latent-variable model"),
        (("-t", "censored-normal", "--mcem", "--draws", "10"), "--draws applies to sampling"),
        (("-t", "censored-normal", "--mcem", "-o", "x.nc"), "--mcem writes its result as .npz"),
        (("-t", "censored-normal", "--mcem", "-o", "-"), "--mcem writes its result as .npz"),
        (("-t", "censored-normal", "--mcem", "--width", "1"), "name the E-step's --sampler"),
        (("-t", "censored-normal", "--mcem", "--em-growth", "0.9"), "--em-growth must be a number >= 1"),
        (("-t", "gaussian", "--em-draws", "10"), "--em-draws applies to --mcem"),
        (("-t", "gaussian", "-f", "csv"), "--format csv applies to --mcem"),  # a run's summary: table or json
    ],
)
def test_bad_usage_is_one_line_and_exit_2(mcmc, args, needle) -> None:
    r = mcmc("sample", *args)
    assert r.code == 2 and needle in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1


def test_mcem_run_checks_its_output_before_any_work_and_reports_each_iteration(tmp_path: Path) -> None:
    calls = []
    with pytest.raises(UsageError, match="directory"):
        mcem_run("censored-normal", McemSettings(iterations=2, draws=10), str(tmp_path / "missing" / "r.npz"),
                 progress=lambda *a, **k: calls.append(a))
    assert calls == []  # refused before the first E-step
    out = tmp_path / "r.npz"
    result = mcem_run("censored-normal", McemSettings(iterations=2, draws=40, seed=None), str(out),
                      progress=lambda *a, **k: calls.append(a))
    assert calls == [("MCEM", 1, 2), ("MCEM", 2, 2)] and out.exists()
    assert result.settings.seed is not None  # drawn, and recorded
    assert np.all(np.isfinite(result.mcse))  # diagnostics' MCSE, passed by the command layer
