"""`mcmc sample -t bnn`: default sampler, predictions file, plot, and one-line errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

FAST = ["--chains", "2", "--warmup", "30", "--draws", "20", "--seed", "4", "-T", "hidden=3", "--no-check"]


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_bnn_runs_hmc_gibbs_and_writes_predictions_and_plot(mcmc, tmp_path: Path) -> None:
    test = tmp_path / "test.csv"
    test.write_text("x,y\n-1,0.2\n0,0.1\n1.5,-0.3\n")
    pred, plot, out = tmp_path / "pred.csv", tmp_path / "band.png", tmp_path / "c.npz"
    r = mcmc("sample", "-t", "bnn", *FAST, "--predict", str(test), "--predictions", str(pred),
             "--plot", str(plot), "-o", str(out))  # fmt: skip
    assert r.code == 0, r.stderr
    with np.load(out, allow_pickle=False) as f:
        attrs = json.loads(str(f["__attrs__"]))
        assert f["W_in"].shape == (2, 20, 1, 3) and f["noise_sd"].shape == (2, 20)
    assert attrs["sampler"] == "hmc-gibbs"
    rows = np.loadtxt(io.StringIO(pred.read_text()), delimiter=",", skiprows=1)
    assert pred.read_text().splitlines()[0] == "x,mean,sd,q5,q95,y" and rows.shape == (3, 6)
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert "noise_sd R-hat" in r.stderr and "test: RMSE" in r.stderr and "not identifiable" in r.stderr


def test_test_file_with_other_predictors_is_one_line(mcmc, tmp_path: Path) -> None:
    test = tmp_path / "test.csv"
    test.write_text("a,b,c\n1,2,3\n")
    r = mcmc("sample", "-t", "bnn", *FAST, "--predict", str(test), "-o", str(tmp_path / "c.npz"))
    assert r.code == 2
    line = _error_line(r.stderr)
    assert str(test) in line and "predictor" in line


def test_prediction_options_refused_elsewhere(mcmc, tmp_path: Path) -> None:
    test = tmp_path / "test.csv"
    test.write_text("x\n1\n")
    r = mcmc("sample", "-t", "gaussian", "--chains", "1", "--warmup", "5", "--draws", "5", "--predict", str(test),
             "-o", str(tmp_path / "c.npz"))  # fmt: skip
    assert r.code == 2 and "bnn" in _error_line(r.stderr)
