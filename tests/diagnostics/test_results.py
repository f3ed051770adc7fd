"""Result objects carry what their renderers show: flags judged in the library, plot data computed there."""

from __future__ import annotations

import numpy as np

from mcmc.core.chains import Chains
from mcmc.diagnostics import stats
from mcmc.diagnostics.report import Thresholds, check, rank_histograms


def _ar1(rng: np.random.Generator, chains: int, draws: int, phi: np.ndarray) -> np.ndarray:
    x = np.empty((chains, draws, phi.size))
    x[:, 0] = rng.standard_normal((chains, phi.size))
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + np.sqrt(1 - phi**2) * rng.standard_normal((chains, phi.size))
    return x


def test_ess_flags_are_the_parameters_the_ess_check_lists() -> None:
    rng = np.random.default_rng(3)
    x = _ar1(rng, 4, 400, np.array([0.0, 0.95, 0.3, 0.99]))
    x[:, :, 2] = 1.0  # constant: its ESS is undefined, but it is not an ESS failure
    report = check(Chains({"x": x}), thresholds=Thresholds(min_ess=300))
    flagged = {p.name for p in report.parameters if p.ess_bulk_low or p.ess_tail_low}
    assert flagged == set(report.check("ess").parameters) and "x[2]" not in flagged
    for p in report.parameters:
        judged = p.status in ("rhat", "ess")
        assert p.ess_bulk_low == (judged and not p.ess_bulk >= 300)
        assert p.ess_tail_low == (judged and not p.ess_tail >= 300)
    assert report.parameters[3].ess_bulk_low  # phi = 0.99: a few dozen effective draws


def test_ebfmi_check_names_the_low_chains() -> None:
    rng = np.random.default_rng(4)
    energy = rng.standard_normal((3, 500))
    energy[1] = np.cumsum(energy[1]) * 0.05  # a random walk: E-BFMI near 0
    chains = Chains({"x": rng.standard_normal((3, 500))}, {"energy": energy})
    report = check(chains)
    assert report.check("ebfmi").chains == (1,)
    assert not report.check("ebfmi").passed


def test_plot_data_is_the_acf_and_rank_histograms_of_the_plotted_parameters(tmp_path) -> None:
    from mcmc.diagnostics.diagnose import diagnose

    rng = np.random.default_rng(5)
    x = _ar1(rng, 2, 300, np.array([0.5, 0.8, 0.1]))
    path = tmp_path / "run.npz"
    np.savez(path, theta=x)
    report = diagnose([str(path)], {}, cwd=tmp_path, plot=True, plot_cap=2)
    data = report.plot
    assert data.names == ("theta[0]", "theta[1]")
    np.testing.assert_allclose(data.acf, stats.acf(x[:, :, :2], np.arange(51)))
    np.testing.assert_array_equal(data.ranks, rank_histograms(x[:, :, :2], 12))
    assert diagnose([str(path)], {}, cwd=tmp_path).plot is None  # only when asked for
