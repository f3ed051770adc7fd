"""The judge of weighted draws: Pareto k equal to ArviZ's, the paper's thresholds, and the verdicts they give."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mcmc.core.chains import Chains
from mcmc.core.weights import weighted_moments
from mcmc.diagnostics.report.check import check, check_weighted
from mcmc.diagnostics.stats.importance import khat_threshold, min_draws, pareto_khat, tail_length


def arviz_khat(log_w: np.ndarray) -> float:
    """ArviZ 1.x's Pareto k of the weights ``exp(log_w)``: the ``k`` of ``psislw`` on ``-log_w``.

    (``psislw`` smooths the weights ``exp(-ary)`` of log-likelihood draws; its
    ``pareto_khat(..., log_weights=True)`` fits the log weights themselves.)
    """
    from arviz_stats.base import array_stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(array_stats.psislw(-np.ravel(log_w), r_eff=1.0)[1])


@pytest.mark.parametrize("draws", [40, 100, 1000, 4000, 10000])
@pytest.mark.parametrize("tail", [0.25, 0.6, 0.9, 1.3])
def test_pareto_khat_equals_arviz(draws, tail) -> None:
    rng = np.random.default_rng(draws)
    log_w = tail * np.log(rng.pareto(1.0, size=draws) + 1.0) + rng.normal(0, 0.1, size=draws)
    assert pareto_khat(log_w) == pytest.approx(arviz_khat(log_w), rel=0, abs=1e-12)


@pytest.mark.parametrize(("alpha", "k"), [(4.0, 0.25), (2.0, 0.5), (1.25, 0.8)])
def test_pareto_khat_recovers_the_shape_of_pareto_weights(alpha, k) -> None:
    """Weights with a Pareto(alpha) tail have ``k = 1 / alpha``; 100,000 draws estimate it to a few hundredths."""
    w = np.random.default_rng(1).pareto(alpha, size=100_000) + 1.0
    assert pareto_khat(np.log(w)) == pytest.approx(k, abs=0.04)


def test_thresholds_and_sample_sizes_are_the_papers() -> None:
    # Vehtari et al. (2024), eq. 13 and section 3.2.3; as the loo package's NEWS lists them
    for n, threshold in ((100, 0.5), (320, 0.6), (1000, 2 / 3), (2200, 0.7), (10000, 0.7)):
        assert khat_threshold(n) == pytest.approx(threshold, abs=0.002)
    assert min_draws(0.0) == pytest.approx(10.0) and min_draws(0.5) == pytest.approx(100.0)
    assert min_draws(0.7) == pytest.approx(10 ** (1 / 0.3)) and min_draws(1.0) == np.inf
    assert tail_length(100) == 20 and tail_length(4000) == 189
    assert np.isnan(pareto_khat(np.zeros(20))) and np.isnan(pareto_khat(np.zeros(1000)))  # too few, or no tail


def weighted_chains(log_w: np.ndarray, x: np.ndarray) -> Chains:
    return Chains({"x": x}, {"log_weight": log_w}, {"weighted": True, "sampler": "importance"})


def pareto_weights(alpha: float, chains: int, draws: int) -> np.ndarray:
    """Log weights at the exact quantiles of a Pareto(alpha) law, shuffled over the chains: a tail of ``k = 1/alpha``
    with no sampling noise (the fit's own bias remains: 0.27, 0.61 and 0.78 for these at 4000 draws, 0.59 for
    alpha 1.6 at 240)."""
    n = chains * draws
    u = (np.arange(1, n + 1) - 0.5) / n
    return np.random.default_rng(0).permutation(-np.log1p(-u) / alpha).reshape(chains, draws)


@pytest.mark.parametrize(
    ("alpha", "draws", "expected"),
    [(4.0, 1000, (True, True, "")), (1.6, 1000, (True, False, "warning")), (1.25, 1000, (False, False, "error")),
     (1.6, 60, (False, False, "error"))],
    ids=["thin tail", "infinite variance, enough draws", "k > 0.7", "k between the small-sample threshold and 0.7"],
)  # fmt: skip
def test_the_verdict_of_the_pareto_check(alpha, draws, expected) -> None:
    log_w = pareto_weights(alpha, 4, draws)
    x = np.random.default_rng(2).normal(size=(4, draws, 2))
    report = check_weighted(weighted_chains(log_w, x))
    passed, check_passed, severity = expected
    k = report.check("pareto-k")
    assert report.kind == "weighted" and report.weights.draws == 4 * draws
    assert k.passed is check_passed and (k.passed or k.severity == severity)
    assert report.check("ess").passed is (report.weights.kish_ess >= 400)
    if not check_passed and severity == "error" and report.weights.pareto_k < 0.7:
        assert f"about {min_draws(report.weights.pareto_k):.0f} draws" in k.advice
    assert (report.passed and report.check("ess").passed) or not passed


def test_weighted_parameters_are_the_self_normalised_estimates() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 500, 3))
    log_w = rng.normal(scale=0.5, size=(2, 500))
    report = check(weighted_chains(log_w, x))  # check hands weighted draws to check_weighted
    m = weighted_moments(x, log_w)
    for i, p in enumerate(report.parameters):
        assert p.name == f"x[{i}]"
        assert (p.mean, p.mcse_mean, p.sd, p.mcse_sd) == pytest.approx(
            (m["mean"][i], m["mcse_mean"][i], m["sd"][i], m["mcse_sd"][i]), rel=1e-12
        )
        assert np.isnan(p.rhat) and p.ess_bulk == pytest.approx(report.weights.kish_ess)
    doc = report.to_dict()
    assert doc["weights"]["draws"] == 1000 and {c["name"] for c in doc["checks"]} == {"ess", "pareto-k"}


def test_the_delta_method_mcse_is_the_spread_of_the_estimate_over_repeats() -> None:
    """Repeat a weighted estimate of E[x] = 0 under unequal weights: its sd over repeats is the mean MCSE."""
    rng = np.random.default_rng(4)
    estimates, mcses = [], []
    for _ in range(400):
        z = rng.normal(scale=1.5, size=(1, 400, 1))  # q = N(0, 1.5^2), p = N(0, 1)
        log_w = (-0.5 * z**2 + 0.5 * (z / 1.5) ** 2)[..., 0]
        m = weighted_moments(z, log_w)
        estimates.append(m["mean"][0])
        mcses.append(m["mcse_mean"][0])
    assert np.std(estimates) == pytest.approx(np.mean(mcses), rel=0.1)


def test_weights_all_zero_fail_in_one_check() -> None:
    x = np.zeros((2, 50, 1)) + np.arange(50)[None, :, None]
    report = check_weighted(weighted_chains(np.full((2, 50), -np.inf), x))
    assert not report.passed and "every draw has weight zero" in report.check("ess").message


def test_nan_or_infinite_log_weights_fail_and_say_which() -> None:
    x = np.zeros((2, 50, 1)) + np.arange(50)[None, :, None]
    log_w = np.zeros((2, 50))
    log_w[0, :3] = np.nan
    report = check_weighted(weighted_chains(log_w, x))
    assert not report.passed and "3 of 100 log weights are NaN" in report.check("ess").message
    log_w = np.zeros((2, 50))
    log_w[1, 7] = np.inf
    report = check_weighted(weighted_chains(log_w, x))
    assert not report.passed and "1 of 100 log weights are +inf" in report.check("ess").message
