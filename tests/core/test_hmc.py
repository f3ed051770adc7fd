"""HMC: adaptation pieces, divergences, reproducibility, and the shared statistical harness."""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.chains import npz_bytes
from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import driver, hmc, hmc_adapt
from mcmc.core.samplers.adapt import Welford
from mcmc.core.samplers.hmc_adapt import DualAveraging, find_reasonable_step_size, window_ends
from mcmc.core.targets import get_target
from mcmc.core.targets.base import Target
from tests.core.harness import check_sampler, evaluate


def gaussian(dim: int, scales: np.ndarray | None = None, name: str = "gaussian") -> Target:
    s = np.ones(dim) if scales is None else np.asarray(scales, dtype=float)
    return Target(
        name, dim, lambda x: -0.5 * np.sum((x / s) ** 2, axis=1), lambda x: -x / s**2, mean=np.zeros(dim), sd=s
    )


def funnel(dim: int = 10) -> Target:
    """Neal's funnel: v ~ N(0, 3^2), x_i | v ~ N(0, e^v)."""

    def lp(z: np.ndarray) -> np.ndarray:
        v, x = z[:, 0], z[:, 1:]
        return -(v**2) / 18.0 - 0.5 * (dim - 1) * v - 0.5 * np.exp(-v) * np.sum(x**2, axis=1)

    def grad(z: np.ndarray) -> np.ndarray:
        v, x = z[:, :1], z[:, 1:]
        ss = np.sum(x**2, axis=1, keepdims=True)
        return np.concatenate([-v / 9.0 - 0.5 * (dim - 1) + 0.5 * np.exp(-v) * ss, -np.exp(-v) * x], axis=1)

    return Target("funnel", dim, lp, grad)


# -- exactness on targets with known moments (the shared harness) -----------

# (target, options, persistence, run settings, acceptance band). Dual averaging
# aims the warm-up mean of the acceptance statistic at 0.8 and ends on the
# averaged step size, a little smaller: 0.8-0.9 in several dimensions. In one
# dimension the acceptance is ~1 up to the stability limit of the leapfrog and
# then falls off a cliff, so the averaged step size sits below the cliff and
# the acceptance is ~0.95 (Stan behaves the same way).
# Persistence slows the mixing of the energy (tails) in higher dimensions,
# hence the longer run for R-hat < 1.01 on the 10-D case.
MULTI, ONE_D = (0.7, 0.95), (0.7, 0.99)
CASES = [
    ("gaussian", {"dim": 5}, 0.0, {}, MULTI),
    ("gaussian", {"dim": 10, "scales": "log"}, 0.0, {}, MULTI),
    ("gaussian", {"dim": 4, "rho": 0.8}, 0.0, {}, MULTI),
    ("beta-bernoulli", {}, 0.0, {}, ONE_D),
    ("eight-schools", {}, 0.0, {"warmup": 1000, "draws": 2000}, MULTI),
    ("gaussian", {"dim": 10, "scales": "log"}, 0.8, {"draws": 2000}, MULTI),
    ("gaussian", {"dim": 4, "rho": 0.8}, 0.5, {}, MULTI),
    ("beta-bernoulli", {}, 0.9, {}, ONE_D),
]


@pytest.mark.parametrize(
    ("target", "options", "persistence", "settings", "accept"),
    CASES,
    ids=[f"{c[0]}-{'-'.join(f'{k}{v}' for k, v in c[1].items())}-a{c[2]}" for c in CASES],
)
def test_hmc_matches_exact_moments(
    target: str, options: dict, persistence: float, settings: dict, accept: tuple[float, float]
) -> None:
    kw = {"warmup": 500, "draws": 1000, **settings}
    t = get_target(target, **options)
    result = check_sampler(hmc, t, params={"persistence": persistence}, accept=accept, **kw)
    # The non-centred eight schools still diverges now and then at
    # target_accept 0.8 (as in Stan); elsewhere there should be none.
    assert result.chains.sample_stats["diverging"].mean() < 1e-3


def _without_momentum_flip(rng, state, target, **params):  # noqa: ANN001, ANN202
    new, info = hmc.step(rng, state, target, **params)
    return new._replace(momentum=np.where(info.accepted[:, None], new.momentum, -new.momentum)), info


class _NoFlipHMC:
    """HMC with persistence but *without* reversing the momentum on rejection (a known bug)."""

    NAME = "hmc-no-flip"
    init = staticmethod(hmc.init)
    step = staticmethod(_without_momentum_flip)
    make_adapter = staticmethod(hmc.make_adapter)


@pytest.mark.parametrize("sampler, exact", [(hmc, True), (_NoFlipHMC, False)])
def test_persistence_needs_the_momentum_flip_on_rejection(sampler, exact: bool) -> None:
    # One-step generalized HMC (Horowitz 1991) on N(0, 1) with a large step
    # (acceptance ~0.55) and persistence 0.9: with the flip the chain is exact;
    # keeping the momentum after a rejection inflates the sd by ~30%.
    t = get_target("gaussian", dim=1)
    params = {"persistence": 0.9, "step_size": 1.9, "path_length": 0.01}
    chains = driver.run(sampler, t, chains=4, warmup=0, draws=3000, seed=1, params=params).chains
    assert (chains.sample_stats["n_steps"] == 1).all()
    failures = evaluate(chains, t).failures
    assert (not failures) == exact, failures


# -- adaptation pieces ---------------------------------------------------------


@pytest.mark.parametrize(
    "warmup, start, ends",
    [
        # Stan's default: windows of 25, 50, 100, 200 and a stretched 500.
        (1000, 75, [99, 149, 249, 449, 949]),
        (2000, 75, [99, 149, 249, 449, 849, 1949]),
        (150, 75, [99]),  # exactly 75 + 25 + 50
        (100, 15, [89]),  # shorter: 15% / 75% / 10%
        (10, 10, []),  # under 20: no metric adaptation
    ],
)
def test_window_schedule_matches_stan(warmup: int, start: int, ends: list[int]) -> None:
    assert window_ends(warmup) == (start, ends)


def test_dual_averaging_finds_the_step_size_of_the_target_acceptance() -> None:
    # Noise-free acceptance exp(-eps): the fixed point is eps = -log(0.8).
    # Dual averaging forgets its start only like 1/sqrt(t): 3% after 3000.
    da = DualAveraging.start(np.array([1e-3, 1.0, 50.0]))
    for _ in range(3000):
        da.update(np.exp(-da.step_size))
    np.testing.assert_allclose(da.final_step_size, -np.log(0.8), rtol=0.03)


def test_welford_regularized_variance() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=(30, 2, 3)) * [1.0, 5.0, 0.1]
    w = Welford((2, 3))
    for row in x:
        w.add(row)
    n = 30
    expected = n / (n + 5) * x.var(axis=0, ddof=1) + 1e-3 * 5 / (n + 5)
    np.testing.assert_allclose(w.regularized_variance(), expected, rtol=1e-12)


def test_adapted_mass_matrix_tracks_the_variances() -> None:
    s = np.logspace(-2, 0, 8)
    chains = driver.run(hmc, gaussian(8, s), chains=2, warmup=400, draws=10, seed=3).chains
    inv_mass = np.array(chains.attrs["params"]["inv_mass"])
    assert inv_mass.shape == (2, 8)
    # 200 draws in the last window, autocorrelated: a loose but telling check
    # (the scales span a factor 10^4 in variance).
    np.testing.assert_allclose(inv_mass / s**2, 1.0, rtol=0.5)


# -- errors, divergences -----------------------------------------------------


def test_no_gradient_is_a_usage_error() -> None:
    t = Target("nograd", 2, lambda x: -0.5 * np.sum(x**2, axis=1))
    with pytest.raises(UsageError, match="hmc needs grad_log_density.*--sampler slice or rwm"):
        driver.run(hmc, t, chains=2, warmup=10, draws=10, seed=1)


@pytest.mark.parametrize("bad", [{"persistence": 1.0}, {"step_size": -1.0}, {"path_length": 0.0}])
def test_bad_parameters_are_usage_errors(bad: dict) -> None:
    with pytest.raises(UsageError, match="hmc:"):
        driver.run(hmc, gaussian(2), chains=2, warmup=0, draws=2, seed=1, params=bad)


@pytest.mark.parametrize("step_size", [30.0, 1e150])  # the second overflows: no warning may escape
def test_huge_step_size_diverges_and_is_rejected(step_size: float) -> None:
    t = gaussian(5)
    x0 = np.full((3, 5), 0.5)
    chains = driver.run(hmc, t, chains=3, warmup=0, draws=20, seed=2, init=x0, params={"step_size": step_size}).chains
    st = chains.sample_stats
    assert st["diverging"].all()
    assert not st["accepted"].any() and (st["acceptance_rate"] == 0).all()
    np.testing.assert_array_equal(chains.posterior["x"], np.broadcast_to(x0[:, None], (3, 20, 5)))


def test_divergent_proposals_are_rejected_even_when_metropolis_would_accept() -> None:
    # A tiny threshold flags energy errors that min(1, exp(-dH)) would often
    # accept: flagged transitions must be rejected all the same.
    chains = driver.run(
        hmc, gaussian(10), chains=4, warmup=0, draws=100, seed=8,
        params={"step_size": 0.7, "max_energy_error": 0.05},
    ).chains
    st = chains.sample_stats
    assert 20 < st["diverging"].sum() < st["diverging"].size
    assert not st["accepted"][st["diverging"]].any()
    assert st["accepted"][~st["diverging"]].mean() > 0.5


def test_no_divergences_on_a_standard_gaussian() -> None:
    chains = driver.run(hmc, gaussian(10), chains=4, warmup=300, draws=300, seed=5).chains
    assert not chains.sample_stats["diverging"].any()


def test_divergences_flagged_on_the_funnel() -> None:
    # With the identity metric, the curvature of the funnel (~ (dim-1)/2 along
    # v, e^-v along x) makes step size 1 unstable in much of the typical set:
    # divergences must be flagged, and a divergent transition never moves.
    chains = driver.run(
        hmc, funnel(10), chains=4, warmup=0, draws=400, seed=6, params={"step_size": 1.0, "path_length": 2.0}
    ).chains
    div = chains.sample_stats["diverging"]
    assert div.sum() >= 20
    assert not chains.sample_stats["accepted"][div].any()
    x = chains.posterior["x"]
    moved = np.any(x[:, 1:] != x[:, :-1], axis=2)
    assert not moved[div[:, 1:]].any()


def test_max_steps_hits_are_reported() -> None:
    chains = driver.run(
        hmc, gaussian(3), chains=2, warmup=0, draws=5, seed=1, params={"step_size": 0.01, "max_steps": 20}
    ).chains
    assert chains.sample_stats["reached_max_steps"].all()
    assert (chains.sample_stats["n_steps"] == 20).all()


# -- reproducibility ---------------------------------------------------------


def _bytes(chains) -> bytes:
    return npz_bytes(chains)


@pytest.mark.parametrize("persistence", [0.0, 0.7])
def test_same_seed_same_bytes_and_chain_batches_agree(persistence: float) -> None:
    t = gaussian(4, [0.1, 0.5, 1.0, 3.0])
    kw = dict(warmup=120, draws=30, seed=11, params={"persistence": persistence})
    whole = driver.run(hmc, t, chains=4, **kw).chains
    again = driver.run(hmc, t, chains=4, **kw).chains
    assert _bytes(whole) == _bytes(again)
    a = driver.run(hmc, t, chain_ids=[0, 1], **kw).chains
    b = driver.run(hmc, t, chain_ids=[2, 3], **kw).chains
    for name in whole.posterior:
        np.testing.assert_array_equal(whole.posterior[name], np.concatenate([a.posterior[name], b.posterior[name]]))
    for name in whole.sample_stats:
        np.testing.assert_array_equal(
            whole.sample_stats[name], np.concatenate([a.sample_stats[name], b.sample_stats[name]])
        )
    np.testing.assert_array_equal(
        np.array(whole.attrs["params"]["step_size"]),
        np.concatenate([a.attrs["params"]["step_size"], b.attrs["params"]["step_size"]]),
    )


def test_step_size_search_per_chain() -> None:
    # Chains in very different places get their own step sizes.
    t = gaussian(2, [0.01, 1.0])
    state = hmc.init(np.array([[0.0, 0.0], [0.0, 0.0]]), t)
    eps = find_reasonable_step_size(
        ChainRandom(1, chains=2), state, t, np.array([1.0, 1.0]), np.array([[1.0, 1.0], [1e-4, 1.0]])
    )
    # Identity metric: the stiff coordinate (sd 0.01) limits eps to ~0.01;
    # the adapted metric lifts the limit to ~1.
    assert eps[0] < 0.1 < eps[1]


def test_settings_recorded_in_attrs(tmp_path) -> None:
    from mcmc.core.chains import write_chains

    chains = driver.run(hmc, gaussian(2), chains=2, warmup=30, draws=5, seed=1, params={"persistence": 0.5}).chains
    assert chains.attrs["hmc"] == {
        "metric": "diagonal",
        "path_length": hmc.PATH_LENGTH,
        "jitter": 0.5,
        "persistence": 0.5,
        "max_steps": 1024,
        "max_energy_error": 1000.0,
    }
    assert len(chains.attrs["params"]["step_size"]) == 2
    write_chains(chains, tmp_path / "c.nc")  # attrs must be JSON-native
    write_chains(chains, tmp_path / "c.npz")


# -- warm-up guards (issue 15) ---------------------------------------------------


def test_trajectories_are_capped_until_the_first_metric() -> None:
    t = gaussian(2, [0.01, 1.0])
    adapter = hmc.make_adapter(1000, hmc.init(np.zeros((2, 2)), t), t, ChainRandom(0, chains=2))
    first = adapter.ends[0]
    info = hmc.Info(*(np.full(2, 0.8) for _ in hmc.Info._fields))
    caps = []
    for i in range(first + 2):
        caps.append(adapter.params().get("max_steps"))
        adapter.update(hmc.State(np.zeros((2, 2)) + 1e-3 * i * np.arange(2), np.zeros(2), np.zeros((2, 2)),
                                 np.zeros((2, 2))), info)  # fmt: skip
    assert caps[: first + 1] == [hmc.EARLY_MAX_STEPS] * (first + 1)
    assert caps[first + 1] == hmc.WARMUP_MAX_STEPS  # the rest of warm-up
    assert "max_steps" not in adapter.final()  # sampling: the sampler's own cap


def test_a_metric_that_collapses_the_step_size_is_undone_per_chain() -> None:
    # Chain 0's first window drifts a long way in coordinate 0: its variance
    # estimate (1e4) is wrong for a standard Gaussian, and the step size the
    # new metric allows collapses for the other coordinates. Chain 1's window
    # is fine. Only chain 0 goes back to the identity metric.
    t = gaussian(3)
    rng = np.random.default_rng(0)
    adapter = hmc.make_adapter(1000, hmc.init(np.zeros((2, 3)), t), t, ChainRandom(0, chains=2))
    info = hmc.Info(*(np.full(2, 0.8) for _ in hmc.Info._fields))
    end = adapter.ends[0]
    for i in range(end + 1 + 20 + 1):
        x = rng.normal(size=(2, 3))
        x[0, 0] = 400.0 * (i - 87) / 12 if adapter.start <= i <= end else x[0, 0]
        adapter.update(hmc.State(x, t.log_density(x), t.grad_log_density(x), np.zeros((2, 3))), info)
        if i == end:
            assert adapter.inv_mass[0, 0] > 1e3
    np.testing.assert_array_equal(adapter.fallbacks, [1, 0])
    np.testing.assert_array_equal(adapter.inv_mass[0], np.ones(3))
    assert adapter.inv_mass[1, 0] < 3.0 and not np.all(adapter.inv_mass[1] == 1.0)


def test_a_chain_back_on_an_unfit_metric_refits_it_from_draws_after_the_restart() -> None:
    # Chain 0 drifts a long way in coordinate 0 from the second window on, and
    # rejects everything from the update at ends[1] until it restarts: the new
    # metric is undone at the check CHECK_AFTER iterations later, the metric it
    # goes back to leaves the step tiny too, so CHECK_AFTER iterations after
    # that the chain refits its metric on a short window of its own later draws
    # (sd 2), and the update at ends[2] keeps that metric instead of the
    # window's drift-inflated variance. Chain 1 (standard normal draws, no
    # rejections) follows the regular windows.
    t = gaussian(3)
    rng = np.random.default_rng(1)
    adapter = hmc.make_adapter(1000, hmc.init(np.zeros((2, 3)), t), t, ChainRandom(0, chains=2))
    assert adapter.ends[:3] == [99, 149, 249]
    first, second, third = adapter.ends[:3]
    settled = second + 2 * hmc_adapt.CHECK_AFTER  # the restarted window's first draw
    restarted_at = None
    for i in range(third + 1):
        x = rng.normal(size=(2, 3))
        if first < i < settled:
            x[0, 0] = 40.0 * (i - first)  # drift
        elif i >= settled:
            x[0] *= 2.0
        rejecting = restarted_at is None and i > second
        acc = np.array([0.0 if rejecting else 0.8, 0.8])
        info = hmc.Info(*(acc for _ in hmc.Info._fields))
        adapter.update(hmc.State(x, t.log_density(x), t.grad_log_density(x), np.zeros((2, 3))), info)
        if restarted_at is None and adapter._restart is not None:
            restarted_at = i
    assert restarted_at == settled
    np.testing.assert_array_equal(adapter.fallbacks, [2, 0])  # the undo, then the refit
    assert np.all((1.5 < adapter.inv_mass[0]) & (adapter.inv_mass[0] < 10.0)), adapter.inv_mass[0]
    assert np.all((0.4 < adapter.inv_mass[1]) & (adapter.inv_mass[1] < 2.5)), adapter.inv_mass[1]
