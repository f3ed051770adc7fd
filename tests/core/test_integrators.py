"""Leapfrog against Euler, and HMC with a fixed number of leapfrog steps (issue 31, item 10).

The lecture's comparison, measured: on a Gaussian, the leapfrog's energy
error over a trajectory of fixed length is ``O(eps^2)`` and stays bounded as
the trajectory lengthens; Euler's is ``O(eps)`` and grows without bound.
The orders are fitted, not assumed. Then HMC with ``n_steps = 20`` (the
notes' L) and no jitter: every transition takes exactly 20 steps and the
draws match the exact moments.
"""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.errors import UsageError
from mcmc.core.samplers import hmc
from mcmc.core.samplers.driver import run
from mcmc.core.samplers.leapfrog import euler, integrate, kinetic_energy
from mcmc.core.targets import get_target
from tests.core.harness import check_sampler

STEP_SIZES = np.array([0.4, 0.2, 0.1, 0.05, 0.025])
TIME = 2.0  # integration time of every trajectory: L = TIME / eps steps


def _gaussian(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return -0.5 * (x * x).sum(axis=1), -x


def _starts(n: int = 2000, d: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, d)), rng.standard_normal((n, d)), np.ones((n, d))


def energy_error(integrator: str, eps: float, steps: int) -> float:
    """Mean |H(end) - H(start)| over 2000 trajectories from the stationary law of a 10-D standard Gaussian."""
    x, p, m = _starts()
    h0 = 0.5 * (x * x).sum(axis=1) + kinetic_energy(p, m)
    if integrator == "leapfrog":
        end = integrate(_gaussian, x, p, *_gaussian(x), eps, steps, m)
    else:
        end = euler(_gaussian, x, p, eps, steps, m)
    return float(np.mean(np.abs(-end.log_density + kinetic_energy(end.momentum, m) - h0)))


def fitted_order(integrator: str) -> float:
    """The slope of log(energy error) against log(eps) at a fixed integration time."""
    errors = [energy_error(integrator, eps, int(round(TIME / eps))) for eps in STEP_SIZES]
    return float(np.polyfit(np.log(STEP_SIZES), np.log(errors), 1)[0])


def test_the_leapfrog_energy_error_is_second_order_and_eulers_first() -> None:
    assert fitted_order("leapfrog") == pytest.approx(2.0, abs=0.1)
    assert fitted_order("euler") == pytest.approx(1.0, abs=0.15)


def test_eulers_energy_error_grows_with_the_path_and_the_leapfrogs_does_not() -> None:
    leapfrog = [energy_error("leapfrog", 0.1, steps) for steps in (10, 100, 1000)]
    euler_ = [energy_error("euler", 0.1, steps) for steps in (10, 100, 1000)]
    assert max(leapfrog) < 2 * min(leapfrog) < 0.02, leapfrog
    assert euler_[0] < euler_[1] / 10 < euler_[2] / 1000, euler_


@pytest.mark.parametrize(("name", "options"), [("banana", {}), ("gamma", {"dim": 3})])
def test_hmc_with_twenty_unjittered_steps_takes_exactly_twenty_and_is_exact(name, options) -> None:
    """On these targets; on a Gaussian an unjittered path of fixed length resonates with the target's period
    (on ``gaussian --dim 3 --scales log`` one coordinate's bulk ESS falls to 73 of 8000 draws), which is why
    jitter is on by default (Neal 2011, section 5.4.2)."""
    result = check_sampler(hmc, get_target(name, **options), warmup=300, draws=2000,
                           params={"n_steps": 20, "jitter": 0.0})  # fmt: skip
    stats = result.chains.sample_stats
    assert np.all(stats["n_steps"][~stats["diverging"]] == 20)  # a divergent path stops where it diverged
    assert result.chains.attrs["hmc"]["n_steps"] == 20 and result.chains.attrs["hmc"]["jitter"] == 0.0


def test_n_steps_is_jittered_by_default() -> None:
    chains = run(hmc, get_target("gaussian", dim=2), chains=2, warmup=50, draws=200, seed=3,
                 params={"n_steps": 20}).chains  # fmt: skip
    steps = chains.sample_stats["n_steps"]
    assert 10 <= steps.min() < 20 < steps.max() <= 30


def test_euler_is_refused_with_the_reason() -> None:
    with pytest.raises(UsageError, match="neither time-reversible nor volume-preserving") as err:
        run(hmc, get_target("gaussian", dim=2), chains=1, warmup=10, draws=1, seed=1, params={"integrator": "euler"})
    assert "O(eps^2)" in str(err.value)
    with pytest.raises(UsageError, match="n_steps must be a whole number"):
        run(hmc, get_target("gaussian", dim=2), chains=1, warmup=10, draws=1, seed=1, params={"n_steps": 0})
