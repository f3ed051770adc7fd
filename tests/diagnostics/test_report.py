"""The report layer: records, statuses, selection, sampler checks, CmdStan agreement."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, scalar_names
from mcmc.core.errors import UsageError
from mcmc.diagnostics import stats
from mcmc.diagnostics.readers import read_chains
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.plots import rank_histograms
from mcmc.diagnostics.report.sampler import ACCEPTANCE_FROM_DRAWS, ACCEPTANCE_FROM_STATS, ebfmi, sampler_summary
from mcmc.diagnostics.report.selection import select
from mcmc.diagnostics.report.thresholds import Thresholds

CMDSTAN = Path(__file__).parents[1] / "data" / "fixtures" / "cmdstan"


def ar1(rng: np.random.Generator, chains: int, draws: int, n: int, phi: float = 0.3) -> np.ndarray:
    """Stationary AR(1) draws ``(chain, draw, n)`` with unit marginal variance."""
    x = np.empty((chains, draws, n))
    x[:, 0] = rng.standard_normal((chains, n))
    eps = rng.standard_normal((chains, draws, n)) * np.sqrt(1 - phi**2)
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + eps[:, t]
    return x


@pytest.fixture
def chains() -> Chains:
    rng = np.random.default_rng(20211)
    return Chains(
        posterior={
            "mu": ar1(rng, 4, 1000, 1)[..., 0],
            "theta": ar1(rng, 4, 1000, 3),
            "L": ar1(rng, 4, 1000, 6).reshape(4, 1000, 2, 3),
        }
    )


def test_records_are_the_batched_statistics_in_arviz_order(chains: Chains) -> None:
    report = check(chains, probs=(0.1, 0.9), lags=(1, 3))
    names = [p.name for p in report.parameters]
    assert names == ["mu", "theta[0]", "theta[1]", "theta[2]", *(f"L[{i}, {j}]" for i in range(2) for j in range(3))]
    assert {p.variable for p in report.parameters} == {"mu", "theta", "L"}
    # L[1, 0] is row-major component 3 of L: its numbers must be those of that slice.
    p = report.parameters[names.index("L[1, 0]")]
    x = chains.posterior["L"][:, :, 1, 0][:, :, None]
    s = stats.summarize(x, probs=(0.1, 0.9), lags=(1, 3))
    for key in ("mean", "sd", "mad", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "rhat", "rhat_split", "iat"):
        assert getattr(p, key) == pytest.approx(float(s[key][0]), rel=1e-12), key
    assert list(p.quantiles) == ["10%", "90%"]
    assert p.quantiles["90%"] == pytest.approx(float(s["quantiles"][1, 0]), rel=1e-12)
    assert list(p.acf) == [1, 3] and p.acf[3] == pytest.approx(float(s["acf"][0, 1]), rel=1e-12)
    assert p.status == "ok" and report.passed
    assert report.draws.shape == (4, 1000, 10)


def test_repeated_quantiles_and_lags_are_reported_once(chains: Chains) -> None:
    report = check(chains, var=["mu"], probs=(0.5, 0.1, 0.5), lags=(2, 2, 1))
    assert report.probs == (0.5, 0.1) and report.quantile_labels == ("50%", "10%")
    assert list(report.parameters[0].acf) == [2, 1]


def test_scalar_names_follow_arviz() -> None:
    assert scalar_names("tau", ()) == ["tau"]
    assert scalar_names("L", (2, 2)) == ["L[0, 0]", "L[0, 1]", "L[1, 0]", "L[1, 1]"]


def test_select_by_exact_name_glob_and_scalar(chains: Chains) -> None:
    assert select(chains, ["theta"]).names == ("theta[0]", "theta[1]", "theta[2]")
    assert select(chains, ["theta[1]"]).names == ("theta[1]",)  # brackets are themselves
    assert select(chains, ["theta[?]"]).names == ("theta[0]", "theta[1]", "theta[2]")
    assert select(chains, ["L[1, *", "m?"]).names == ("mu", "L[1, 0]", "L[1, 1]", "L[1, 2]")  # file order


def test_select_is_a_full_match_and_no_match_lists_variables(chains: Chains) -> None:
    with pytest.raises(UsageError, match=r"'the'.*available variables: mu, theta, L"):
        select(chains, ["the"])
    with pytest.raises(UsageError, match="theta\\[0"):
        select(chains, ["theta[0"])  # exact names only, and none matches
    with pytest.raises(UsageError, match="theta\\[\\[02\\]\\]"):
        select(chains, ["theta[[02]]"])  # no regular expressions, no character classes


def test_statuses_constant_nan_inf_never_crash() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 300, 4))
    x[:, :, 1] = 2.5
    x[1, 17, 2] = np.nan
    x[3, 5, 3] = np.inf
    report = check(Chains({"x": x}))
    assert [p.status for p in report.parameters] == ["ok", "constant", "nan", "inf"]
    checks = {c.name: c for c in report.checks}
    assert not checks["finite"].passed and checks["finite"].parameters == ("x[2]", "x[3]")
    assert checks["constant"].severity == "warning" and checks["constant"].parameters == ("x[1]",)
    assert checks["rhat"].passed and checks["ess"].passed  # non-finite parameters are not double-counted
    assert not report.passed
    assert "non-finite draws in x[2], x[3]" in report.verdict()


def test_rhat_and_ess_statuses() -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 500, 2))
    x[0, :, 0] += 3.0  # one chain elsewhere
    report = check(Chains({"x": x}))
    assert [p.status for p in report.parameters] == ["rhat", "ok"]
    assert report.verdict().startswith("FAIL: R-hat > 1.01 for x[0]")
    strict = check(Chains({"x": x}), thresholds=Thresholds(min_ess=10_000))
    assert [p.status for p in strict.parameters] == ["rhat", "ess"]  # R-hat is the worse problem
    ess = {c.name: c for c in strict.checks}["ess"]
    assert ess.parameters == ("x[0]", "x[1]")  # listed under both checks so CI logs show every problem


def test_ssif_disagreement_flags_slow_mixing() -> None:
    rng = np.random.default_rng(3)
    # A slowly drifting chain plus white noise: lag-1 correlation is small, so
    # SSIF promises far more information than the bulk ESS finds.
    drift = np.cumsum(rng.standard_normal((4, 1000, 1)), axis=1) * 0.05
    x = drift + rng.standard_normal((4, 1000, 1))
    (p,) = check(Chains({"x": x})).parameters
    assert p.ess_ssif > 2 * p.ess_bulk and p.ssif_disagrees
    (q,) = check(Chains({"x": ar1(rng, 4, 1000, 1, phi=0.5)})).parameters
    assert not q.ssif_disagrees  # exact for AR(1)


def test_acceptance_from_draws_and_from_statistics() -> None:
    x = np.arange(2 * 10, dtype=float).reshape(2, 10)
    x[0, 3] = x[0, 2]  # chain 0 rejects twice in 9 transitions
    x[0, 7] = x[0, 6]
    y = np.zeros((2, 10, 2))
    y[1, 5, 1] = 1.0  # chain 1 changes y at transitions 4->5 and 5->6, when x moves anyway
    report = check(Chains({"x": x, "y": y}), var=["x"])
    a = report.sampler.acceptance
    assert a.source == ACCEPTANCE_FROM_DRAWS
    assert a.per_chain == pytest.approx((7 / 9, 1.0)) and a.overall == pytest.approx(16 / 18)
    assert report.parameters[0].acceptance == pytest.approx(16 / 18)
    stats_ = {"acceptance_rate": np.array([[0.5] * 10, [0.9] * 9 + [np.nan]])}
    b = check(Chains({"x": x}, stats_)).sampler.acceptance
    assert b.source == ACCEPTANCE_FROM_STATS and b.per_chain == pytest.approx((0.5, 0.9))


def test_ebfmi_definition() -> None:
    e = np.array([[1.0, 3.0, 2.0, 4.0], [0.0, 0.0, 1.0, 1.0]])
    num = np.array([4 + 1 + 4, 0 + 1 + 0])
    den = np.array([2.25 + 0.25 + 0.25 + 2.25, 0.25 * 4])
    np.testing.assert_allclose(ebfmi(e), num / den)
    assert np.isnan(ebfmi(np.ones((1, 5)))[0])


def test_divergences_and_treedepth_hits() -> None:
    rng = np.random.default_rng(1)
    div = np.zeros((2, 100), dtype=bool)
    div[1, [3, 50]] = True
    depth = np.full((2, 100), 3)
    depth[0, :5] = 6
    st = {"diverging": div, "tree_depth": depth, "energy": rng.standard_normal((2, 100))}
    report = check(Chains({"x": rng.standard_normal((2, 100))}, st, {"max_treedepth": 6}))
    s = report.sampler
    assert (s.divergences, s.divergences_per_chain, s.divergence_percent) == (2, (0, 2), 1.0)
    assert (s.max_treedepth, s.treedepth_hits) == (6, 5)
    checks = {c.name: c for c in report.checks}
    assert not checks["divergences"].passed and "2 of 200 (1.00%)" in checks["divergences"].message
    assert not checks["treedepth"].passed and checks["treedepth"].severity == "warning"
    lenient = check(Chains({"x": rng.standard_normal((2, 100))}, st), thresholds=Thresholds(max_divergences=2))
    assert {c.name: c for c in lenient.checks}["divergences"].passed
    assert lenient.sampler.max_treedepth == 10 and lenient.sampler.treedepth_hits == 0  # CmdStan default


def test_single_chain_reports_split_rhat() -> None:
    rng = np.random.default_rng(2)
    report = check(Chains({"x": rng.standard_normal((1, 600, 2))}))
    assert all(np.isfinite(p.rhat) and np.isfinite(p.rhat_split) for p in report.parameters)
    assert any("split" in n for n in report.notes)


def test_rank_histograms_are_uniform_counts() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 200, 2))
    h = rank_histograms(x, 10)
    assert h.shape == (2, 3, 10)
    assert (h.sum(axis=2) == 200).all() and (h.sum(axis=1) == 60).all()
    # Ties share their average rank: a constant parameter lands in the middle bin.
    x[:, :, 1] = 7.0
    h = rank_histograms(x, 10)
    assert (h[1, :, 5] == 200).all() and h[1].sum() == 600
    # Two values, half the draws each: ranks 0..299 average to 149.5 (bin 2), the rest to 449.5 (bin 7).
    y = np.repeat(np.array([0.0, 1.0]), 300).reshape(3, 200, 1)
    assert rank_histograms(y, 10)[0].sum(axis=0).tolist() == [0, 0, 300, 0, 0, 0, 0, 300, 0, 0]


@pytest.mark.parametrize("kwargs", [{"probs": (0.0, 0.5)}, {"probs": (1.5,)}, {"lags": (-1,)}, {"lags": ()}])
def test_bad_settings_are_usage_errors(chains: Chains, kwargs: dict) -> None:
    with pytest.raises(UsageError):
        check(chains, **kwargs)


@pytest.mark.parametrize("kwargs", [{"max_rhat": 0.99}, {"min_ess": -1}, {"max_divergences": -1}, {"min_ebfmi": -0.1}])
def test_bad_thresholds_are_usage_errors(kwargs: dict) -> None:
    with pytest.raises(UsageError):
        Thresholds(**kwargs)


def _cmdstan_expectations(nom: str) -> dict:
    """What CmdStan's own ``diagnose`` concluded, parsed from its expected output text."""
    text = (CMDSTAN / nom).read_text()
    m = re.search(r"(\d+) of (\d+) \(([\d.]+)%\) transitions ended with a divergence", text)
    divergences = int(m.group(1)) if m else (0 if "No divergent transitions found" in text else None)
    m = re.search(r"R-hat greater than 1.01:\n\s*(.+)\n", text)
    # A CmdStan file keeps CmdStan's names (mu[1], 1-based): they must match its diagnose word for word.
    rhat = {name.strip() for name in m.group(1).split(", ")} if m else set()
    return {
        "divergences": divergences,
        "ebfmi_low": "E-BFMI satisfactory" not in text,
        "ebfmi_value": (float(m.group(1)) if (m := re.search(r"The E-BFMI, ([\d.]+),", text)) else None),
        "rhat": rhat,
        "treedepth_ok": "Treedepth satisfactory" in text,
    }


@pytest.mark.parametrize(
    ("nom", "files"),
    [("eight_schools.nom", ["eight_schools_output.csv"]), ("mix.nom", ["mix_output.1.csv", "mix_output.2.csv"])],
)
def test_sampler_checks_reach_cmdstans_conclusions(nom: str, files: list[str]) -> None:
    expected = _cmdstan_expectations(nom)
    report = check(read_chains([str(CMDSTAN / f) for f in files]))
    checks = {c.name: c for c in report.checks}
    assert report.sampler.divergences == expected["divergences"]
    assert checks["divergences"].passed == (expected["divergences"] == 0)
    assert (not checks["ebfmi"].passed) == expected["ebfmi_low"]
    if expected["ebfmi_value"] is not None:
        assert round(min(report.sampler.ebfmi), 2) == expected["ebfmi_value"]
    assert checks["treedepth"].passed == expected["treedepth_ok"]
    assert set(checks["rhat"].parameters) == expected["rhat"]
    assert {p.name for p in report.parameters if p.rhat > 1.01} == expected["rhat"]


def test_treedepth_hits_use_each_files_own_maximum() -> None:
    # Two CmdStan files run with max_depth 3 and 5: the reader keeps one value per file.
    depth = np.array([[3, 3, 2, 1], [3, 4, 5, 5]])
    rng = np.random.default_rng(0)
    c = Chains({"x": rng.standard_normal((2, 4))}, {"tree_depth": depth}, {"max_treedepth": [3, 5]})
    s = sampler_summary(c)
    assert s.treedepth_hits == 2 + 2
    assert s.max_treedepth == 3


def test_rank_band_covers_the_binomial_99_percent_interval() -> None:
    from scipy.stats import binom

    from mcmc.diagnostics.report.plots import rank_band

    for draws, bins in [(1000, 20), (400, 10), (4000, 50)]:
        expected, half = rank_band(draws, bins)
        lo, hi = binom.ppf([0.005, 0.995], draws, 1 / bins)
        assert expected == draws / bins
        # the normal approximation's edges lie within one count of the exact binomial quantiles
        assert abs((expected - half) - lo) <= 1.5 and abs((expected + half) - hi) <= 1.5


def test_every_parameter_constant_is_a_stuck_sampler() -> None:
    # Four chains that never left one start: R-hat and ESS are undefined, not good.
    x = np.broadcast_to(np.array([0.3, -1.2, 7.0]), (4, 500, 3)).copy()
    report = check(Chains({"x": x}))
    assert [p.status for p in report.parameters] == ["constant"] * 3
    checks = {c.name: c for c in report.checks}
    assert checks["stuck"].severity == "error" and not checks["stuck"].passed
    assert "constant" not in checks
    assert not report.passed
    assert report.verdict() == "FAIL: no parameter moved: the sampler is stuck"


def test_one_constant_parameter_among_moving_ones_stays_a_warning() -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 500, 2))
    x[:, :, 1] = 0.0
    report = check(Chains({"x": x}))
    checks = {c.name: c for c in report.checks}
    assert "stuck" not in checks and checks["constant"].severity == "warning"
    assert report.passed
