"""The leapfrog integrator: the three properties that make HMC's Metropolis correction exact.

Reversibility and volume preservation are checked on a non-quadratic target
(a banana/Rosenbrock-shaped density, where a wrong integrator cannot hide
behind linear dynamics); the order of the energy error on a Gaussian and on
the banana.
"""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.samplers.leapfrog import integrate, kinetic_energy

B = 0.5  # curvature of the banana


def banana(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Haario's twisted Gaussian in 2-D: x0 ~ N(0, 3^2), x1 + b (x0^2 - 9) ~ N(0, 1)."""
    x0, x1 = x[:, 0], x[:, 1]
    r = x1 + B * (x0**2 - 9.0)
    lp = -0.5 * x0**2 / 9.0 - 0.5 * r**2
    g = np.stack([-x0 / 9.0 - r * 2.0 * B * x0, -r], axis=1)
    return lp, g


SCALES = np.array([0.3, 1.0, 2.5])


def gaussian(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return -0.5 * np.sum((x / SCALES) ** 2, axis=1), -x / SCALES**2


def run(f, x, p, eps, n, inv_mass, **kw):
    lp, g = f(x)
    return integrate(f, x, p, lp, g, eps, n, inv_mass, **kw)


def test_reversible_forward_then_back_returns_to_start() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 2)) * [2.0, 1.0]
    p = rng.normal(size=(5, 2))
    inv_mass = rng.uniform(0.5, 2.0, size=(5, 2))
    eps = np.array([0.01, 0.05, 0.1, 0.02, 0.08])
    n = np.array([1, 7, 20, 50, 13])
    fwd = run(banana, x, p, eps, n, inv_mass)
    assert np.array_equal(fwd.n_steps, n) and not fwd.diverged.any()
    assert np.abs(fwd.position - x).max() > 0.01  # it really moved
    back = integrate(banana, fwd.position, -fwd.momentum, fwd.log_density, fwd.grad, eps, n, inv_mass)
    np.testing.assert_allclose(back.position, x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(-back.momentum, p, rtol=0, atol=1e-12)


def test_volume_preserving_jacobian_determinant_is_one() -> None:
    # Central differences of the map (x, p) -> (x', p') on the banana; a
    # non-symplectic scheme (e.g. Euler) gives det != 1 by O(eps) here.
    x0 = np.array([1.3, -0.7])
    p0 = np.array([0.4, 1.1])
    inv_mass = np.array([[0.8, 1.5]])
    z0 = np.concatenate([x0, p0])
    h = 1e-6

    def flow(z: np.ndarray) -> np.ndarray:
        t = run(banana, z[None, :2], z[None, 2:], 0.1, 15, inv_mass)
        return np.concatenate([t.position[0], t.momentum[0]])

    jac = np.empty((4, 4))
    for j in range(4):
        dz = np.zeros(4)
        dz[j] = h
        jac[:, j] = (flow(z0 + dz) - flow(z0 - dz)) / (2 * h)
    assert np.abs(jac - np.eye(4)).max() > 0.1  # a non-trivial map
    assert abs(np.linalg.det(jac) - 1.0) < 1e-7


@pytest.mark.parametrize("f, dim", [(gaussian, 3), (banana, 2)])
def test_energy_error_is_second_order(f, dim) -> None:
    # Global error over a fixed time T: |dH| ~ C eps^2. Fit the slope of
    # log max|dH| against log eps over a range where the asymptotics hold.
    rng = np.random.default_rng(2)
    x = rng.normal(size=(20, dim))
    p = rng.normal(size=(20, dim))
    inv_mass = np.ones((20, dim))
    lp, _ = f(x)
    h0 = -lp + kinetic_energy(p, inv_mass)
    eps_grid = np.array([0.04, 0.02, 0.01, 0.005])
    err = []
    for eps in eps_grid:
        t = run(f, x, p, eps, int(round(1.0 / eps)), inv_mass)
        err.append(np.abs(-t.log_density + kinetic_energy(t.momentum, inv_mass) - h0).max())
    slope = np.polyfit(np.log(eps_grid), np.log(err), 1)[0]
    assert 1.8 < slope < 2.2, slope


def test_per_chain_steps_and_masking() -> None:
    # A chain with fewer steps stops where a lone run of that many steps stops.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 2))
    p = rng.normal(size=(3, 2))
    inv_mass = np.ones((3, 2))
    eps = np.array([0.1, 0.2, 0.05])
    n = np.array([4, 0, 9])
    t = run(banana, x, p, eps, n, inv_mass)
    assert t.n_steps.tolist() == [4, 0, 9]
    np.testing.assert_array_equal(t.position[1], x[1])
    for c in (0, 2):
        alone = run(banana, x[c : c + 1], p[c : c + 1], eps[c], n[c], inv_mass[c : c + 1])
        np.testing.assert_array_equal(t.position[c], alone.position[0])
        np.testing.assert_array_equal(t.momentum[c], alone.momentum[0])


def test_divergence_stops_the_chain_without_warnings() -> None:
    # A huge step on a stiff Gaussian blows the energy up at once; a small
    # step on the other chain must be unaffected. (Warnings are errors here.)
    x = np.ones((2, 3))
    p = np.ones((2, 3))
    t = run(gaussian, x, p, np.array([50.0, 0.01]), 100, np.ones((2, 3)), max_energy_error=1000.0)
    assert t.diverged.tolist() == [True, False]
    assert t.n_steps.tolist() == [1, 100]
    t = run(gaussian, x, p, np.array([1e200, 0.01]), 3, np.ones((2, 3)))  # overflow -> non-finite energy
    assert t.diverged.tolist() == [True, False]


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_a_non_finite_density_stops_the_chain_at_that_step(value: float) -> None:
    # The density turns non-finite past x[1] = 1 (+inf too: an energy of -inf is
    # no energy); chains stop at the first such step, whatever the threshold,
    # and a chain that never gets there runs all its steps.
    def density(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lp, g = gaussian(x)
        return np.where(x[:, 1] > 1.0, value, lp), g

    x, p = np.zeros((3, 3)), np.array([[0.0, 2.0, 0.0], [0.0, -2.0, 0.0], [0.0, 0.3, 0.0]])
    for limit in (np.inf, 1000.0):
        t = run(density, x, p, 0.25, 12, np.ones((3, 3)), max_energy_error=limit)
        assert t.diverged.tolist() == [True, False, False], limit
        assert t.n_steps[0] < 12 and t.position[0, 1] > 1.0 and t.n_steps[1:].tolist() == [12, 12]
        before = run(density, x[:1], p[:1], 0.25, int(t.n_steps[0]) - 1, np.ones((1, 3)), max_energy_error=limit)
        assert before.position[0, 1] <= 1.0 and not before.diverged[0]
