"""Result objects carry what their renderers show: flags judged in the library, plot data computed there."""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.chains import Chains
from mcmc.diagnostics import stats
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.plots import rank_histograms
from mcmc.diagnostics.report.thresholds import Thresholds


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
    from mcmc.cli.commands.diagnose import diagnose

    rng = np.random.default_rng(5)
    x = _ar1(rng, 2, 300, np.array([0.5, 0.8, 0.1]))
    path = tmp_path / "run.npz"
    np.savez(path, theta=x)
    x[1, :, 1] += 3.0  # theta[1]: one chain elsewhere, the worst by far
    np.savez(path, theta=x)
    report = diagnose([str(path)], plot=True, plot_cap=2)
    data = report.plot
    assert data.names[0] == "theta[1]" and report.parameters[1].status == "rhat"
    assert len(data.names) == 2 and len(data.omitted) == 1  # the cap, and what it left out
    assert set(data.names + data.omitted) == {"theta[0]", "theta[1]", "theta[2]"}
    cols = list(data.index)
    np.testing.assert_array_equal(data.draws, x[:, :, cols])
    np.testing.assert_allclose(data.acf, stats.acf(x[:, :, cols], np.arange(51)))
    np.testing.assert_array_equal(data.ranks, rank_histograms(x[:, :, cols], 12))
    assert data.divergent is None and data.energy is None  # the file has neither
    assert diagnose([str(path)]).plot is None  # only when asked for


def test_worst_first_orders_by_status_then_by_how_badly() -> None:
    from mcmc.diagnostics.report.parameters import worst_first

    rng = np.random.default_rng(8)
    x = _ar1(rng, 4, 500, np.array([0.0, 0.6, 0.0, 0.0, 0.0]))
    x[0, :, 2] += 1.0  # R-hat fails, mildly
    x[0, :, 3] += 4.0  # R-hat fails, badly
    x[:, 7, 4] = np.nan  # non-finite: worst of all
    report = check(Chains({"x": x}), thresholds=Thresholds(min_ess=1000))
    assert [p.status for p in report.parameters] == ["ok", "ess", "rhat", "rhat", "nan"]
    order = [report.parameters[i].name for i in worst_first(report.parameters)]
    assert order == ["x[4]", "x[3]", "x[2]", "x[1]", "x[0]"]
    assert [p.name for p in report.worst_first()] == order


def test_one_chain_rank_plot_compares_its_halves() -> None:
    from mcmc.diagnostics.report.plots import plot_data

    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 400, 1))
    x[0, 200:] += 2.0  # the second half sits elsewhere: a one-chain rank plot must show it
    report = check(Chains({"y": x[:, :, 0]}))
    data = plot_data(report.draws, report.parameters)
    assert data.rank_labels == ("1st half", "2nd half")
    halves = np.concatenate([x[:, :200], x[:, 200:]], axis=0)
    np.testing.assert_array_equal(data.ranks, rank_histograms(halves, 8))
    assert data.ranks[0, 0, 0] > 1.8 * data.expected > 9 * data.ranks[0, 1, 0]  # the 1st half owns the low ranks


def test_density_per_chain_equals_the_exact_gaussian_kde() -> None:
    from scipy.stats import gaussian_kde

    from mcmc.diagnostics.report.plots import kde

    rng = np.random.default_rng(10)
    x = np.stack([rng.standard_normal(3000), 1.5 + 0.5 * rng.standard_normal(3000)])
    grid, dens = kde(x)
    pooled = x.ravel()
    iqr = np.subtract(*np.percentile(pooled, [75, 25]))
    h = 0.9 * min(pooled.std(), iqr / 1.349) * pooled.size ** (-0.2)
    for row in range(2):
        exact = gaussian_kde(x[row], bw_method=h / x[row].std(ddof=1))(grid)
        np.testing.assert_allclose(dens[row], exact, atol=0.01 * exact.max())  # binning error only
        assert np.trapezoid(dens[row], grid) == pytest.approx(1.0, abs=1e-3)


def test_plot_data_carries_divergences_and_the_energy_densities() -> None:
    from mcmc.diagnostics.report.plots import kde, plot_data

    rng = np.random.default_rng(12)
    energy = rng.standard_normal((2, 300)).cumsum(axis=1) * 0.1 + 5.0
    div = np.zeros((2, 300), dtype=bool)
    div[1, [10, 200]] = True
    report = check(Chains({"x": rng.standard_normal((2, 300))}, {"energy": energy, "diverging": div}))
    data = plot_data(report.draws, report.parameters, divergent=div, energy=energy)
    np.testing.assert_array_equal(data.divergent, div)
    marginal = (energy - energy.mean(axis=1, keepdims=True)).reshape(1, -1)
    transition = np.diff(energy, axis=1).reshape(1, -1)
    np.testing.assert_allclose(data.energy.marginal, kde(marginal, grid=data.energy.grid)[1][0])
    np.testing.assert_allclose(data.energy.transition, kde(transition, grid=data.energy.grid)[1][0])
    # a random walk's steps are far narrower than its spread: the plot's warning sign
    assert data.energy.transition.max() > 3 * data.energy.marginal.max()
