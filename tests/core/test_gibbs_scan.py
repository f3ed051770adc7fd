"""Random-scan against systematic-scan Gibbs (issue 31, item 2): both leave the target invariant; which mixes faster.

Every Gibbs target is run with both scans: the Gaussian's coordinates, the
Ising and Potts lattices' sites (one vectorized draw per update, each chain at
its own coordinate) and a user file's blocks (random scan over blocks). Each
is judged against exact answers (moments, enumeration), and invariance is
tested directly: chains started at exact draws of ``pi`` are still
distributed as ``pi`` after one iteration.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import UsageError
from mcmc.core.samplers import gibbs
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from mcmc.core.targets.ising import bond_sum
from mcmc.diagnostics import stats
from tests.core.harness import check_sampler, evaluate
from tests.core.test_ising import enumerate_ising
from tests.core.test_ising import z_scores as ising_z
from tests.core.test_potts import enumerate_potts
from tests.core.test_potts import z_scores as potts_z

SCANS = ("systematic", "random")
BIVARIATE = Path(__file__).parents[1] / "data" / "sample" / "bivariate_gibbs.py"


@pytest.mark.parametrize("scan", SCANS)
@pytest.mark.parametrize("options", [{"dim": 3, "rho": 0.5}, {"dim": 4, "scales": "log"}], ids=["rho0.5", "log"])
def test_both_scans_match_the_exact_gaussian_moments(scan, options) -> None:
    check_sampler(gibbs, get_target("gaussian", **options), warmup=100, draws=2000, params={"scan": scan})


@pytest.mark.parametrize("scan", SCANS)
@pytest.mark.parametrize(("size", "beta"), [(3, 0.3), (4, 0.25)])
def test_both_scans_match_the_enumerated_ising_model(scan, size, beta) -> None:
    target = get_target("ising", size=size, beta=beta)
    chains = run(gibbs, target, chains=4, warmup=100, draws=3000, seed=20261124, params={"scan": scan}).chains
    z = ising_z(chains, enumerate_ising(size, beta))
    assert np.abs(z).max() < 4, z
    assert not evaluate(chains, target, rhat_max=1.05).failures
    np.testing.assert_allclose(chains.sample_stats["lp"], -beta * size**2 * chains.posterior["energy"], atol=1e-9)


@pytest.mark.parametrize("scan", SCANS)
def test_both_scans_match_the_enumerated_potts_model(scan) -> None:
    target = get_target("potts", size=3, q=3, beta=0.8)
    chains = run(gibbs, target, chains=4, warmup=100, draws=2500, seed=20261125, params={"scan": scan}).chains
    z = potts_z(chains, enumerate_potts(3, 3, 0.8))
    assert np.abs(z).max() < 4, z
    assert not evaluate(chains, target).failures


@pytest.mark.parametrize("scan", SCANS)
def test_both_scans_of_a_user_files_blocks_match_its_exact_moments(scan) -> None:
    target = get_target(str(BIVARIATE))
    assert target.mean is None  # the file's own exact moments, set here
    from tests.data.sample.bivariate_gibbs import MEAN, SD

    target = dataclasses.replace(target, mean=MEAN, sd=SD)
    check_sampler(gibbs, target, warmup=100, draws=3000, params={"scan": scan})


def _ising_law(size: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Every state of the ``size x size`` Ising model and its probability (by enumeration)."""
    d = size * size
    codes = np.arange(2**d, dtype=np.int64)
    spins = (((codes[:, None] >> np.arange(d)) & 1) * 2 - 1).astype(float)
    w = np.exp(beta * bond_sum(spins, size, size))
    return spins, w / w.sum()


@pytest.mark.parametrize("scan", SCANS)
def test_one_iteration_from_exact_draws_leaves_the_ising_law_unchanged(scan) -> None:
    """Invariance itself: chains started at draws of pi are still distributed as pi after one iteration.

    Judged on the law of the bond sum (the energy), whose every value's
    exact probability enumeration gives: each value's frequency within
    binomial error.
    """
    size, beta, n = 3, 0.4, 4000  # chains: each buffers 4096 random numbers per kind (32 KB), so not more
    spins, p = _ising_law(size, beta)
    start = spins[np.random.default_rng(1).choice(p.size, size=n, p=p)]
    target = get_target("ising", size=size, beta=beta)
    after = run(gibbs, target, chains=n, warmup=0, draws=1, seed=2, init=start, params={"scan": scan}).chains
    s_after = np.round(-after.posterior["energy"][:, 0] * size * size).astype(int)
    s_all = np.round(bond_sum(spins, size, size)).astype(int)
    values = np.unique(s_all)
    exact = np.array([p[s_all == v].sum() for v in values])
    freq = np.array([np.mean(s_after == v) for v in values])
    z = (freq - exact) / np.sqrt(exact * (1 - exact) / n)
    assert np.abs(z).max() < 4, z
    assert np.mean(np.abs(after.posterior["m"][:, 0] - start.mean(axis=1)) > 0) > 0.3  # it did move


@pytest.mark.parametrize("scan", SCANS)
def test_one_iteration_from_exact_draws_leaves_a_correlated_gaussian_unchanged(scan) -> None:
    n, rho = 4000, 0.9
    target = get_target("gaussian", dim=2, rho=rho)
    start = np.random.default_rng(3).multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)
    x = run(gibbs, target, chains=n, warmup=0, draws=1, seed=4, init=start, params={"scan": scan}).chains
    x = x.posterior["x"][:, 0]
    var_se = np.sqrt(2.0 / n)  # sd of a sample variance of N(0, 1)
    assert np.all(np.abs(x.mean(axis=0)) < 4 / np.sqrt(n))
    assert np.all(np.abs(x.var(axis=0) - 1) < 4 * var_se)
    cov_se = np.sqrt((1 + rho**2) / n)
    assert abs(np.mean(x[:, 0] * x[:, 1]) - rho) < 4 * cov_se


def test_random_scan_mixes_slower_per_iteration_on_a_correlated_gaussian() -> None:
    """The lecture's point, measured: at rho = 0.9 a systematic sweep's autocorrelation is rho^2 per iteration
    (AR(1)); random scan updates a coordinate twice or not at all in a third of its updates, and mixes slower."""
    target = get_target("gaussian", dim=2, rho=0.9)
    iat = {}
    for scan in SCANS:
        x = run(gibbs, target, chains=4, warmup=100, draws=8000, seed=12, params={"scan": scan}).chains.posterior["x"]
        iat[scan] = x.shape[0] * x.shape[1] / stats.ess_mean(x)
    systematic_ar1 = (1 + 0.81) / (1 - 0.81)  # IAT of an AR(1) chain with coefficient rho^2
    assert np.all(np.abs(iat["systematic"] / systematic_ar1 - 1) < 0.15), iat
    assert np.all(iat["random"] > 1.3 * iat["systematic"]), iat


def test_an_unknown_scan_is_refused() -> None:
    with pytest.raises(UsageError, match="scan must be one of systematic, random"):
        run(gibbs, get_target("gaussian", dim=2), chains=1, warmup=0, draws=1, seed=1, params={"scan": "zigzag"})


def test_random_scan_chain_i_depends_only_on_the_seed_and_i() -> None:
    for target in (get_target("ising", size=3), get_target(str(BIVARIATE))):
        both = run(gibbs, target, chains=4, warmup=5, draws=20, seed=8, params={"scan": "random"}).chains
        part = run(gibbs, target, chain_ids=[2, 3], warmup=5, draws=20, seed=8, params={"scan": "random"}).chains
        for name in both.posterior:
            np.testing.assert_array_equal(both.posterior[name][2:], part.posterior[name])
        for name in both.sample_stats:
            np.testing.assert_array_equal(both.sample_stats[name][2:], part.sample_stats[name])
