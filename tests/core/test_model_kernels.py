"""The built-in models' compiled point functions (mcmc.core.targets.model_kernels) are their NumPy densities.

HMC integrates the compiled ones (whole trajectories without Python), every
other sampler and check uses the NumPy ones: the two must agree to rounding,
value and gradient, at ordinary and at extreme points, and the compiled
trajectory must be the NumPy integrator on them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcmc.core.samplers.leapfrog import integrate
from mcmc.core.targets import get_target


def _logistic_data(tmp_path: Path) -> str:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(60, 3))
    y = (x @ [1.5, -2.0, 0.5] + rng.normal(size=60) > 0).astype(int)
    path = tmp_path / "data.csv"
    path.write_text("a,b,c,y\n" + "".join(f"{r[0]},{r[1]},{r[2]},{v}\n" for r, v in zip(x, y, strict=True)))
    return str(path)


@pytest.mark.parametrize("name", ["eight-schools", "logistic", "logistic-file"])
def test_the_compiled_trajectory_is_the_numpy_path(name: str, tmp_path: Path) -> None:
    target = get_target("logistic", data=_logistic_data(tmp_path)) if name == "logistic-file" else get_target(name)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, target.dim)) * np.array([0.5, 1.0, 3.0, 8.0, 20.0])[:, None]  # 20: saturated logits
    p = rng.normal(size=x.shape)
    lp, g = target.value_and_grad(x)
    eps = np.array([0.01, 0.05, 0.1, 0.02, 0.001])
    n = np.array([0, 1, 5, 17, 3])
    minv = rng.uniform(0.2, 2.0, size=x.shape)
    a = integrate(target.value_and_grad, x, p, lp, g, eps, n, minv, 1000.0)
    b = target.compiled.trajectory(x, p, lp, g, eps, n, minv, 1000.0)
    assert np.array_equal(a.n_steps, b.n_steps) and np.array_equal(a.diverged, b.diverged)
    assert a.n_steps.sum() > 20
    for field in ("position", "momentum", "log_density", "grad"):
        np.testing.assert_allclose(getattr(b, field), getattr(a, field), rtol=1e-10, atol=1e-10, err_msg=field)
