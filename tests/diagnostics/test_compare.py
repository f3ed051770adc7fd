"""The math of `mcmc compare`: posteriordb reader, z-tests, per-sampler rows, verdicts."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from mcmc.cli.commands.compare import read_reference
from mcmc.core.chains import Chains
from mcmc.core.errors import InputError
from mcmc.core.samplers.driver import Run
from mcmc.diagnostics import stats
from mcmc.diagnostics.readers import read_posteriordb
from mcmc.diagnostics.report.compare import compare_draws, z_scores
from mcmc.diagnostics.report.samplers import best_by_column, sampler_row, samplers_verdict

REF = Path(__file__).parents[1] / "data" / "compare" / "eight_schools-eight_schools_noncentered.json"


def ar1(rng: np.random.Generator, chains: int, draws: int, n: int, phi: float = 0.5) -> np.ndarray:
    """Stationary AR(1) draws ``(chain, draw, n)`` with unit marginal variance."""
    e = rng.standard_normal((chains, draws, n)) * math.sqrt(1 - phi**2)
    x = np.empty_like(e)
    x[:, 0] = rng.standard_normal((chains, n))
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


# --------------------------------------------------------------------------- posteriordb


def test_posteriordb_names_become_zero_based_arrays() -> None:
    raw = json.loads(REF.read_text())
    ref = read_posteriordb(REF)
    assert set(ref.posterior) == {"theta", "mu", "tau"}
    assert ref.posterior["theta"].shape == (10, 100, 8)
    assert ref.posterior["mu"].shape == (10, 100)
    # Stan's theta[1] is our theta[0]; theta[8] is theta[7]; chain order kept.
    np.testing.assert_array_equal(ref.posterior["theta"][3, :, 0], raw[3]["theta[1]"])
    np.testing.assert_array_equal(ref.posterior["theta"][9, :, 7], raw[9]["theta[8]"])
    np.testing.assert_array_equal(ref.posterior["tau"][0], raw[0]["tau"])
    assert read_reference(str(REF)).posterior.keys() == ref.posterior.keys()


def test_posteriordb_matrix_names(tmp_path: Path) -> None:
    chain = {"L[1,1]": [1.0, 2.0], "L[2,1]": [3.0, 4.0], "L[1,2]": [5.0, 6.0], "L[2,2]": [7.0, 8.0]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps([chain, chain]))
    L = read_posteriordb(path).posterior["L"]
    assert L.shape == (2, 2, 2, 2)
    np.testing.assert_array_equal(L[0, 1], [[2.0, 6.0], [4.0, 8.0]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON"),
        ('{"mu": [1, 2]}', "expected a list of chains"),
        ("[]", "expected a list of chains"),
        ('[{"mu": [1, 2]}, {"tau": [1, 2]}]', "chain 1 has parameters"),
        ('[{"mu": [1, 2], "tau": [1]}]', "equally long lists of numbers"),
        ('[{"mu": [1, "a"]}]', "equally long lists of numbers"),
        ('[{"mu": []}]', "no draws"),
    ],
)
def test_posteriordb_bad_input(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_posteriordb(path)
    assert str(path) in str(info.value)


def test_posteriordb_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_posteriordb(tmp_path / "nope.json")


# --------------------------------------------------------------------------- z-tests


def test_z_scores_edge_cases() -> None:
    z = z_scores(np.array([1.0, 2.0, 2.0, np.nan]), np.array([0.0, 0.0, 3.0, 1.0]),
                 np.array([1.0, 1.0, 6.0, 0.0]), np.array([0.0, 0.0, 4.0, 1.0]))  # fmt: skip
    assert z[0] == 0.0  # a constant equal on both sides agrees
    assert z[1] == np.inf  # constants that differ: infinitely significant
    assert z[2] == pytest.approx(-4.0 / 5.0)
    assert np.isnan(z[3])


def test_z_equals_direct_computation_and_same_distribution_passes() -> None:
    rng = np.random.default_rng(5)
    xa, xb = ar1(rng, 4, 500, 3), ar1(rng, 3, 400, 3) * 2.0 + 1.0
    a = Chains({"mu": xa[:, :, 0], "beta": xa[:, :, 1:]})
    b = Chains({"mu": xb[:, :, 0], "beta": xb[:, :, 1:]})
    result = compare_draws(a, b)
    expected = (stats.mean(xa) - stats.mean(xb)) / np.sqrt(stats.mcse_mean(xa) ** 2 + stats.mcse_mean(xb) ** 2)
    np.testing.assert_allclose([p.z for p in result.parameters], expected, rtol=1e-12)
    np.testing.assert_allclose([p.sd_ratio for p in result.parameters], stats.sd(xa) / stats.sd(xb), rtol=1e-12)
    assert [p.name for p in result.parameters] == ["mu", "beta[0]", "beta[1]"]
    # b is shifted by 1 and scaled by 2: every mean differs by many MCSE.
    assert not result.passed and set(result.failed) == {"mu", "beta[0]", "beta[1]"}
    assert result.verdict().startswith("FAIL: 3 of 3 parameters")


def test_same_distribution_passes_and_shifted_parameter_fails_alone() -> None:
    rng = np.random.default_rng(8)
    xa, xb = ar1(rng, 4, 1000, 5), ar1(rng, 4, 1000, 5)
    a = Chains({"theta": xa})
    ok = compare_draws(a, Chains({"theta": xb}))
    assert ok.passed, ok.verdict()
    assert all(abs(p.z) < 4 for p in ok.parameters)
    assert ok.verdict().startswith("PASS: 5 shared parameters")
    shifted = xb.copy()
    shifted[:, :, 2] += 10 * math.hypot(stats.mcse_mean(xa)[2], stats.mcse_mean(xb)[2])
    bad = compare_draws(a, Chains({"theta": shifted}))
    assert bad.failed == ("theta[2]",)
    assert bad.parameters[2].z == pytest.approx(ok.parameters[2].z - 10, abs=1e-9)
    assert "theta[2] (z -10." in bad.verdict() or "theta[2] (z -9." in bad.verdict()


def test_check_sd_catches_a_wrong_spread() -> None:
    rng = np.random.default_rng(3)
    xa, xb = rng.standard_normal((4, 1000, 2)), rng.standard_normal((4, 1000, 2))
    xb[:, :, 1] *= 1.5  # same mean, 50% larger sd
    a, b = Chains({"x": xa}), Chains({"x": xb})
    assert compare_draws(a, b).passed  # means still agree
    with_sd = compare_draws(a, b, check_sd=True)
    assert with_sd.failed == ("x[1]",)
    assert abs(with_sd.parameters[1].z_sd) > 4 > abs(with_sd.parameters[0].z_sd)


def test_only_shared_parameters_are_compared_and_none_shared_is_an_error() -> None:
    rng = np.random.default_rng(1)
    a = Chains({"mu": rng.standard_normal((2, 100)), "eta": rng.standard_normal((2, 100, 3))})
    b = Chains({"mu": rng.standard_normal((2, 100)), "tau": rng.standard_normal((2, 100))})
    result = compare_draws(a, b)
    assert [p.name for p in result.parameters] == ["mu"]
    assert result.only_in_a == ("eta[0]", "eta[1]", "eta[2]") and result.only_in_b == ("tau",)
    with pytest.raises(InputError, match=r"share no parameter: A has eta\[0\], eta\[1\], eta\[2\]; B has tau"):
        compare_draws(Chains({"eta": a.posterior["eta"]}), Chains({"tau": b.posterior["tau"]}))


def test_undefined_z_fails() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 100))
    y = x.copy()
    y[0, 5] = np.nan
    result = compare_draws(Chains({"x": x}), Chains({"x": y}))
    assert result.failed == ("x",) and "undefined" in result.verdict()


def test_false_alarm_arithmetic() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 100, 500))
    result = compare_draws(Chains({"x": x}), Chains({"x": x + 0.0}))
    assert result.chance_exceedance == pytest.approx(6.334e-5, rel=1e-3)
    assert result.expected_false_alarms == pytest.approx(500 * 6.334e-5, rel=1e-3)
    # Bonferroni for 500 tests at 1% familywise: Phi^-1(1 - 1e-5).
    assert result.bonferroni_z(0.01) == pytest.approx(4.2649, abs=1e-3)


# --------------------------------------------------------------------------- samplers head to head


@pytest.fixture(scope="module")
def gaussian_runs() -> tuple[object, list[Run]]:
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import get_target

    target = get_target("gaussian", dim=3)
    runs = [run(get_sampler(s), target, chains=2, warmup=200, draws=300, seed=7) for s in ("hmc", "rwm")]
    return target, runs


def test_sampler_row_counts_and_truth_z_by_hand(gaussian_runs) -> None:
    target, runs = gaussian_runs
    for chains, timings in runs:
        a = chains.attrs
        row = sampler_row(chains, timings=timings, truth_mean=target.mean, truth_sd=target.sd, grad_cost=2.0)
        assert row.sampler == a["sampler"]
        assert row.n_density_evals == a["n_density_evals"] + a["n_density_evals_warmup"]
        assert row.n_gradient_evals == a["n_gradient_evals"] + a["n_gradient_evals_warmup"]
        assert row.sampling_cost == a["n_density_evals"] + 2.0 * a["n_gradient_evals"]
        assert row.cost == row.n_density_evals + 2.0 * row.n_gradient_evals
        x = chains.posterior["x"]
        z = np.abs(x.mean(axis=(0, 1)) - target.mean) / stats.mcse_mean(x)
        assert row.mean_z_max == pytest.approx(z.max(), rel=1e-10)
        assert row.mean_z_argmax == f"x[{int(np.argmax(z))}]"
        z_sd = np.abs(x.reshape(-1, 3).std(axis=0, ddof=1) - target.sd) / stats.mcse_sd(x)
        assert row.sd_z_max == pytest.approx(z_sd.max(), rel=1e-10)
        ess = min(stats.ess_bulk(x).min(), stats.ess_tail(x).min())
        assert row.ess_min == pytest.approx(ess)
        assert row.ess_per_1k_evals == pytest.approx(1000 * ess / row.sampling_cost)
        assert row.ess_per_s == pytest.approx(ess / timings.sampling_time_s)
        assert (row.wall_time_s, row.warmup_time_s) == (timings.wall_time_s, timings.warmup_time_s)
        assert row.summary.rhat_max == pytest.approx(stats.rhat(x).max())
        assert row.summary.acceptance == pytest.approx(chains.sample_stats["acceptance_rate"].mean())
    hmc, rwm = (sampler_row(c) for c, _ in runs)
    assert hmc.summary.divergences == int(runs[0].chains.sample_stats["diverging"].sum())
    assert rwm.summary.divergences is None and rwm.n_gradient_evals == 0
    assert hmc.mean_z_max is None and hmc.sd_z_max is None  # no truth given


def test_best_by_column_and_verdicts(gaussian_runs) -> None:
    target, runs = gaussian_runs
    rows = [sampler_row(c, truth_mean=target.mean, truth_sd=target.sd) for c, _ in runs]
    best = best_by_column(rows)
    # HMC on a 3-d standard normal: far more ESS per evaluation than random-walk Metropolis.
    assert best["ess_per_1k_evals"] == ["hmc"]
    assert best["cost"] == ["rwm"]  # rwm: one density evaluation per iteration and no gradient
    # one verdict: rwm's short run fails the checks of mcmc diagnose, and so the comparison
    assert rows[0].summary.passed and not rows[1].summary.passed
    passed, verdict = samplers_verdict(rows)
    assert not passed and "draws fail the checks of mcmc diagnose (rwm: R-hat > 1.01" in verdict, verdict
    # --no-check: reported, not judged; the z-tests against the truth still decide
    passed, verdict = samplers_verdict(rows, judge_draws=False)
    assert passed and verdict.startswith("PASS:") and "(--no-check)" in verdict, verdict
    off = dataclasses.replace(rows[1], mean_z_max=9.5, mean_z_argmax="x[1]")
    passed, verdict = samplers_verdict([rows[0], off], judge_draws=False)
    assert not passed and "rwm mean (|z| 9.5 at x[1])" in verdict and "hmc" not in verdict.split(";")[0]
    wide = dataclasses.replace(rows[0], sd_z_max=6.0, sd_z_argmax="x[2]")
    assert samplers_verdict([wide, rows[1]], judge_draws=False)[0]  # sds are not checked by default
    passed, verdict = samplers_verdict([wide, rows[1]], check_sd=True, judge_draws=False)
    assert not passed and "hmc sd (|z| 6.0 at x[2])" in verdict
    no_truth = [sampler_row(c) for c, _ in runs]
    passed, verdict = samplers_verdict(no_truth, judge_draws=False)
    assert passed and verdict.startswith("DONE:")
    tie = dataclasses.replace(rows[1], sampler="other")
    assert best_by_column([rows[1], tie])["cost"] == ["rwm", "other"]


def test_constant_parameters_compare_without_warnings() -> None:
    # Constant on both sides (a fixed entry of a Cholesky factor, say): every
    # statistic is NaN, yet equal constants agree and no RuntimeWarning escapes.
    same = compare_draws(Chains({"c": np.ones((2, 50))}), Chains({"c": np.ones((3, 40))}))
    assert same.passed and same.parameters[0].z == 0.0 and same.notes == ()
    differ = compare_draws(Chains({"c": np.ones((2, 50))}), Chains({"c": np.zeros((2, 50))}))
    assert differ.failed == ("c",) and differ.parameters[0].z == np.inf


def test_unconverged_run_is_noted() -> None:
    rng = np.random.default_rng(6)
    stuck = rng.standard_normal((4, 200, 1)) + np.arange(4)[:, None, None]  # chains in different places
    result = compare_draws(Chains({"x": stuck}), Chains({"x": rng.standard_normal((4, 200, 1))}))
    assert any(note.startswith("max R-hat") for note in result.notes)
