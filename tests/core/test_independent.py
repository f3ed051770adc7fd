"""Independent exact draws (issue 31, item 6): the inverse CDF, and the Box-Muller transform, basic and polar."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from mcmc.core.errors import InputError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import exact, inverse_cdf
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from mcmc.core.targets.base import Target
from mcmc.core.targets.builtin import box_muller, marsaglia_polar
from mcmc.diagnostics import stats
from tests.core.harness import check_sampler

SAMPLE = Path(__file__).parents[1] / "data" / "sample"
PROBS = np.array([0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99])


def ecdf_z(x: np.ndarray, exact_quantiles: np.ndarray) -> np.ndarray:
    """(fraction of draws below each exact quantile - its probability) / binomial SE: independent draws only."""
    n = x.size
    freq = np.array([np.mean(x <= q) for q in exact_quantiles])
    return (freq - PROBS) / np.sqrt(PROBS * (1 - PROBS) / n)


def plain(target: Target) -> Target:
    """The same density without its quantile function: inverse-cdf must invert numerically."""
    return Target(target.name, target.dim, target.log_density, names=target.names, variables=target.variables,
                  mean=target.mean, sd=target.sd, initial_point=target.initial_point, transform=target.transform,
                  options=target.options)  # fmt: skip


# --- inverse CDF: the quantile function -------------------------------------------------------

QUANTILE_CASES = {
    "gaussian": (("gaussian", {"dim": 1}), sps.norm()),
    "gamma": (("gamma", {"shape": 3.0, "rate": 2.0}), sps.gamma(3.0, scale=0.5)),
    "beta-bernoulli": (("beta-bernoulli", {}), sps.beta(8, 14)),
}


@pytest.mark.parametrize("case", QUANTILE_CASES, ids=list(QUANTILE_CASES))
@pytest.mark.parametrize("how", ["quantile", "numerical"])
def test_inverse_cdf_draws_match_exact_quantiles_and_moments(case, how) -> None:
    (name, options), law = QUANTILE_CASES[case]
    target = get_target(name, **options)
    if how == "numerical":
        target = plain(target)
    result = check_sampler(inverse_cdf, target, chains=4, warmup=0, draws=2500, seed=41)
    x = result.chains.posterior[target.variables[0][0]].ravel()  # the reported values (theta, not its logit)
    z = ecdf_z(x, law.ppf(PROBS))
    assert np.abs(z).max() < 4, z
    assert result.chains.attrs["inverse_cdf"]["method"] == how
    # independent draws: no autocorrelation beyond chance
    draws = result.chains.posterior[target.variables[0][0]].reshape(4, 2500, 1)
    assert abs(stats.ess_bulk(draws)[0] / x.size - 1) < 0.15


NUMERICAL = {
    "bimodal": (lambda: get_target("bimodal", dim=1), lambda x: 0.5 * sps.norm.cdf(x + 3) + 0.5 * sps.norm.cdf(x - 3)),
    "gumbel": (lambda: get_target(str(SAMPLE / "gumbel_density.py")), lambda x: np.exp(-np.exp(-x))),
    "beta on (0, 1)": (lambda: get_target(str(SAMPLE / "beta_bounded.py")), sps.beta(2, 5).cdf),
    "gamma, shape 3": (lambda: plain(get_target("gamma", shape=3.0)), sps.gamma(3.0).cdf),
}


@pytest.mark.parametrize("case", NUMERICAL, ids=list(NUMERICAL))
def test_the_numerical_inverse_is_the_exact_quantile_to_1e_9(case) -> None:
    """The stated accuracy: |F(F_numerical^-1(u)) - u| <= 1e-9, F the exact CDF, over u from 1e-6 to 1 - 1e-6."""
    make, cdf = NUMERICAL[case]
    target = make()
    table = inverse_cdf.cdf_table(target)
    assert table.error < 1e-10
    u = np.concatenate([[1e-6, 1e-4], np.linspace(0.001, 0.999, 999), [1 - 1e-4, 1 - 1e-6]])
    x, evals = inverse_cdf.invert(target, table, u)
    assert evals.max() <= 6 * inverse_cdf.SOLVE_STEPS
    assert np.max(np.abs(cdf(x) - u)) < 1e-9


def test_a_quantile_function_in_the_target_file_is_used_and_agrees_with_the_numerical_inverse() -> None:
    given = get_target(str(SAMPLE / "gumbel_quantile.py"))
    numerical = get_target(str(SAMPLE / "gumbel_density.py"))
    a = run(inverse_cdf, given, chains=3, warmup=0, draws=200, seed=5).chains
    b = run(inverse_cdf, numerical, chains=3, warmup=0, draws=200, seed=5).chains
    assert a.attrs["inverse_cdf"] == {"method": "quantile"}
    assert b.attrs["inverse_cdf"]["method"] == "numerical"
    np.testing.assert_allclose(a.posterior["x"], b.posterior["x"], rtol=0, atol=1e-8)  # the same u, the same x


def test_inverse_cdf_refuses_more_than_one_dimension_and_a_tail_too_heavy() -> None:
    with pytest.raises(UsageError, match="one-dimensional targets"):
        run(inverse_cdf, get_target("gaussian", dim=2), chains=1, warmup=0, draws=1, seed=1)
    with pytest.raises(InputError, match="too heavy a tail"):
        run(inverse_cdf, get_target(str(SAMPLE / "cauchy.py")), chains=1, warmup=0, draws=1, seed=1)


def test_inverse_cdf_chain_i_depends_only_on_the_seed_and_i() -> None:
    target = get_target("bimodal", dim=1)
    both = run(inverse_cdf, target, chains=4, warmup=3, draws=20, seed=8).chains.posterior["x"]
    part = run(inverse_cdf, target, chain_ids=[2, 3], warmup=3, draws=20, seed=8).chains.posterior["x"]
    np.testing.assert_array_equal(both[2:], part)


# --- Box-Muller ----------------------------------------------------------------------------


def test_box_muller_is_the_transform_of_the_uniforms_it_reads() -> None:
    z = box_muller(ChainRandom(3, chains=2), 3)
    u = ChainRandom(3, chains=2).uniform((2, 2))  # the same stream: two pairs of uniforms per chain
    radius = np.sqrt(-2 * np.log(1 - u[..., 0]))
    expected = np.stack([radius * np.cos(2 * np.pi * u[..., 1]), radius * np.sin(2 * np.pi * u[..., 1])], -1)
    np.testing.assert_allclose(z, expected.reshape(2, 4)[:, :3], rtol=0, atol=1e-15)


def test_the_polar_form_keeps_points_of_the_unit_disc_and_transforms_them() -> None:
    rng = ChainRandom(4, chains=1)
    z = marsaglia_polar(rng, 2)
    w = 2 * ChainRandom(4, chains=1).uniform((40, 2))[0] - 1  # the candidates it read, one pair at a time
    first = w[np.flatnonzero(np.sum(w * w, axis=1) < 1)[0]]
    s = np.sum(first**2)
    np.testing.assert_allclose(z[0], first * np.sqrt(-2 * np.log(s) / s), rtol=0, atol=1e-15)


@pytest.mark.parametrize("method", ["box-muller", "polar"])
def test_both_forms_give_standard_normals(method) -> None:
    normals = {"box-muller": box_muller, "polar": marsaglia_polar}[method]
    z = normals(ChainRandom(11, chains=50), 801).ravel()  # an odd count: the last pair's second value dropped
    assert z.size == 50 * 801
    assert np.abs(ecdf_z(z, sps.norm.ppf(PROBS))).max() < 4
    pairs = z[: 2 * (z.size // 2)].reshape(-1, 2)
    assert abs(np.corrcoef(pairs.T)[0, 1]) < 4 / np.sqrt(pairs.shape[0])  # the two of a pair are independent


@pytest.mark.parametrize("method", ["box-muller", "polar"])
@pytest.mark.parametrize("options", [{"dim": 3, "rho": 0.5}, {"dim": 4, "scales": "log"}, {"dim": 5, "rho": -0.2}])
def test_exact_draws_of_the_gaussian_target_match_its_moments_and_correlation(method, options) -> None:
    target = get_target("gaussian", **options)
    result = check_sampler(exact, target, warmup=0, draws=3000, params={"method": method})
    x = result.chains.posterior["x"].reshape(-1, target.dim)
    rho = options.get("rho", 0.0)
    r = np.corrcoef(x.T)[np.triu_indices(target.dim, 1)]
    assert np.all(np.abs(r - rho) < 4 * (1 - rho**2) / np.sqrt(x.shape[0])), r


def test_exact_refuses_a_target_without_an_exact_sampler_and_an_unknown_method() -> None:
    with pytest.raises(UsageError, match="exact sampler of its own"):
        run(exact, get_target("banana"), chains=1, warmup=0, draws=1, seed=1)
    with pytest.raises(UsageError, match="draws by box-muller, polar"):
        run(exact, get_target("gaussian", dim=2), chains=1, warmup=0, draws=1, seed=1, params={"method": "ziggurat"})


@pytest.mark.parametrize("method", ["box-muller", "polar"])
def test_exact_chain_i_depends_only_on_the_seed_and_i(method) -> None:
    target = get_target("gaussian", dim=3, rho=0.3)
    params = {"method": method}
    both = run(exact, target, chains=4, warmup=2, draws=30, seed=9, params=params).chains.posterior["x"]
    part = run(exact, target, chain_ids=[2, 3], warmup=2, draws=30, seed=9, params=params).chains.posterior["x"]
    np.testing.assert_array_equal(both[2:], part)


def test_plain_keeps_the_density() -> None:
    t = get_target("gamma", shape=3.0)
    assert not hasattr(plain(t), "quantile") and dataclasses.is_dataclass(plain(t))
