"""Warm-up draws kept by ``mcmc sample --keep-warmup``: left out by ``diagnose`` unless asked, drawn in its lp plot."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcmc.cli.commands.diagnose import DiagnoseSettings, diagnose

RUN = ["sample", "-t", "gaussian", "--dim", "2", "-s", "rwm", "--chains", "3", "--warmup", "60", "--draws", "80",
       "--seed", "11", "-q", "--no-check"]  # fmt: skip


@pytest.fixture
def runs(mcmc, tmp_path) -> tuple[Path, Path]:
    kept, plain = tmp_path / "kept.npz", tmp_path / "plain.npz"
    assert mcmc(*RUN, "--keep-warmup", "-o", str(kept)).code == 0
    assert mcmc(*RUN, "-o", str(plain)).code == 0
    return kept, plain


def test_diagnose_leaves_the_warmup_out_unless_asked(mcmc, runs):
    kept, plain = runs
    a, b = (json.loads(mcmc("diagnose", str(p), "-f", "json").out) for p in (kept, plain))
    assert a["parameters"] == b["parameters"] and a["draws"] == b["draws"] == 80

    report = diagnose([str(kept)], DiagnoseSettings(include_warmup=True))
    with np.load(kept) as f:
        whole = np.concatenate([f["warmup_posterior__x"], f["x"]], axis=1)
    assert report.n_draws == 140
    np.testing.assert_allclose([p.mean for p in report.parameters], whole.mean(axis=(0, 1)), rtol=1e-12)


def test_the_plot_data_carries_lp_of_every_draw_with_the_warmup_first(runs, tmp_path):
    kept, plain = runs
    report = diagnose([str(kept)], plot=True)
    with np.load(kept) as f:
        expected = np.concatenate([f["warmup_sample_stats__lp"], f["sample_stats__lp"]], axis=1)
    assert report.plot.lp_warmup == 60
    assert report.plot.lp.tobytes() == expected.tobytes()
    assert diagnose([str(plain)], plot=True).plot.lp_warmup == 0


def test_var_lp_selects_the_log_density_as_a_parameter(mcmc, runs):
    kept, _ = runs
    doc = json.loads(mcmc("diagnose", str(kept), "--var", "lp", "-f", "json").out)
    assert [p["name"] for p in doc["parameters"]] == ["lp"]
    with np.load(kept) as f:
        assert doc["parameters"][0]["mean"] == pytest.approx(float(f["sample_stats__lp"].mean()), rel=1e-12)


def test_the_plot_is_drawn_with_the_warmup_shaded(mcmc, runs, tmp_path):
    kept, _ = runs
    out = tmp_path / "plot.png"
    r = mcmc("diagnose", str(kept), "--plot", str(out))
    assert r.code in (0, 1), r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
