"""The walkers of an ensemble (emcee) said to be one, with emcee's tau, and many chains drawn legibly (issue 28.4)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parents[1] / "data"
NAMES = "m,b,log_f"


def walkers(tmp_path: Path, n: int = 32) -> str:
    """``get_chain()`` of an emcee-like run, (draw, walker, dim), one walker stuck far off: a rank-plot spike."""
    rng = np.random.default_rng(3)
    x = np.zeros((1500, n, 3))
    for t in range(1, x.shape[0]):
        x[t] = 0.95 * x[t - 1] + 0.3 * rng.standard_normal((n, 3))
    x[:, min(5, n - 1), 0] = 0.1 * x[:, min(5, n - 1), 0] + 4.0
    path = tmp_path / f"walkers{n}.npy"
    np.save(path, x)
    return str(path)


def test_an_ensemble_is_said_once_with_emcee_tau_beside_ess(mcmc, tmp_path: Path, monkeypatch) -> None:
    from mcmc.diagnostics.stats.emcee_tau import integrated_time

    monkeypatch.setenv("COLUMNS", "200")
    src = walkers(tmp_path)
    doc = json.loads(mcmc("diagnose", src, "--layout", "draw,chain", "--names", NAMES, "-f", "json").out)
    assert doc["ensemble"] == "emcee"
    assert sum("walkers of one emcee ensemble" in note for note in doc["notes"]) == 1
    x = np.swapaxes(np.load(src), 0, 1)
    tau, _ = integrated_time(x)
    assert [p["iat_emcee"] for p in doc["parameters"]] == pytest.approx(tau.tolist(), rel=1e-12)
    table = mcmc("diagnose", src, "--layout", "draw,chain", "--names", NAMES)
    header = next(line for line in table.out.splitlines() if line.startswith("parameter"))
    assert header.split()[header.split().index("tail") + 1] == "tau"  # beside the ESS
    assert table.out.count("walkers of one emcee ensemble") == 1 and "not independent chains" in table.out
    backend = json.loads(mcmc("diagnose", str(DATA / "diagnose" / "emcee_backend.h5"), "-f", "json").out)
    assert backend["ensemble"] == "emcee"
    chains = json.loads(mcmc("diagnose", str(DATA / "fixtures" / "centered_eight_posterior.npz"), "-f", "json").out)
    assert chains["ensemble"] is None and all(p["iat_emcee"] is None for p in chains["parameters"])


def test_many_chains_are_drawn_without_a_legend_and_the_band_in_view(tmp_path: Path) -> None:
    from mcmc.cli.commands.diagnose import diagnose
    from mcmc.cli.render.plot import report_figure

    report = diagnose([walkers(tmp_path)], layout="draw,chain", names=NAMES, plot=True)
    fig = report_figure(report)
    assert not fig.legends and not [ax for ax in fig.axes if ax.get_legend() is not None]
    data = report.plot
    ranks = [ax for ax in fig.axes if ax.get_xlabel().startswith("rank") or ax.get_title().startswith("rank")]
    rank_axes = fig.axes[2::4][: len(data.parameters)]
    assert ranks and data.ranks.max() > 2 * (data.expected + data.half_width)  # the stuck walker's spike
    for ax in rank_axes:
        top = ax.get_ylim()[1]
        assert data.expected + data.half_width < top < 0.8 * data.ranks.max()  # the band in view, the spike cut
    few = diagnose([walkers(tmp_path, 4)], layout="draw,chain", names=NAMES, plot=True)
    labels = report_figure(few).legends[0].get_texts()
    assert [t.get_text() for t in labels] == [f"chain {i}" for i in range(4)]  # a few chains: a legend


def test_the_sampler_table_of_many_chains_is_short(mcmc, tmp_path: Path) -> None:
    page, md = tmp_path / "r.html", tmp_path / "r.md"
    mcmc("diagnose", walkers(tmp_path), "--layout", "draw,chain", "--names", NAMES, "--html", str(page),
         "--output-md", str(md))  # fmt: skip
    html = page.read_text()
    sampler = html[html.index("<h2>Sampler</h2>") : html.index("<h2>Parameters</h2>")]
    assert sampler.count("<tr>") <= 10 and "32 more" in sampler
    table = md.read_text().split("### Sampler", 1)[1].split("###", 1)[0]
    assert table.count("\n|") <= 12
