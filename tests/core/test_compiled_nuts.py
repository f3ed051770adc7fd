"""NUTS compiled around a numba point function (mcmc.core.compiled.make_tree).

The compiled transition must be the NumPy one (:mod:`mcmc.core.samplers.nuts`):
the same trees (leapfrog steps, depth, divergences), the same random numbers
read, the same point drawn to rounding. The NumPy transition is the one the
exactness tests (moments, posteriordb references, broken variants) hold to;
this file ties the compiled one to it and checks its law and bytes directly.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import npz_bytes
from mcmc.core.errors import InputError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import driver, nuts
from mcmc.core.targets import get_target
from mcmc.core.targets.user import load_user_target
from mcmc.diagnostics.stats import mcse_mean

GAUSS = Path(__file__).parents[1] / "data" / "sample" / "gauss_numba.py"
MU, SD = np.array([1.0, -2.0, 0.5]), np.array([1.0, 2.0, 0.1])


def _targets() -> dict[str, object]:
    return {"gauss_numba": load_user_target(str(GAUSS)), "eight-schools": get_target("eight-schools"),
            "logistic": get_target("logistic")}  # fmt: skip


TARGETS = _targets()


def _reads(rng: ChainRandom) -> tuple[int, ...]:
    return tuple(int(v) for kind in ("normal", "uniform", "exponential") for v in rng._buffers[kind].pos)


@pytest.mark.parametrize("name", list(TARGETS))
@pytest.mark.parametrize(
    ("scale", "depth"), [(0.1, 10), (0.02, 4), (40.0, 10)], ids=["typical", "max-depth", "diverging"]
)
def test_the_compiled_transition_is_the_numpy_transition(name: str, scale: float, depth: int) -> None:
    compiled = TARGETS[name]
    plain = dataclasses.replace(compiled, compiled=None)
    start = np.random.default_rng(2)
    x = 0.5 * start.normal(size=(4, compiled.dim))
    eps = scale * np.array([1.0, 0.5, 2.0, 1.5])
    minv = start.uniform(0.3, 2.0, size=(4, compiled.dim))
    seen = set()
    for it in range(6):
        runs = []
        for target in (compiled, plain):
            rng = ChainRandom(it, chains=4)
            state, info = nuts.step(rng, nuts.init(x, target), target, step_size=eps, inv_mass=minv,
                                    max_tree_depth=depth)  # fmt: skip
            runs.append((state, info, _reads(rng)))
        (a, ia, ra), (b, ib, rb) = runs
        for stat in ("n_steps", "tree_depth", "diverging", "reached_max_treedepth"):
            assert np.array_equal(getattr(ia, stat), getattr(ib, stat)), (it, stat)
        assert ra == rb, it  # the same random numbers read
        for got, want in ((a.position, b.position), (a.log_density, b.log_density), (ia.energy, ib.energy),
                          (ia.acceptance_rate, ib.acceptance_rate)):  # fmt: skip
            assert np.allclose(got, want, rtol=1e-9, atol=1e-9), it
        seen |= {"diverging"} if ia.diverging.any() else set()
        seen |= {"max-depth"} if ia.reached_max_treedepth.any() else set()
        x = a.position
    assert seen == ({"diverging"} if scale > 1 else {"max-depth"} if depth == 4 else set())


def test_nuts_on_a_compiled_target_has_the_exact_moments() -> None:
    chains = driver.run(nuts, TARGETS["gauss_numba"], chains=4, warmup=500, draws=1000, seed=4).chains
    x = np.stack([chains.posterior[n] for n in ("a", "b", "c")], axis=-1)  # (chain, draw, 3)
    z_mean = (x.mean(axis=(0, 1)) - MU) / mcse_mean(x)
    z_var = (((x - MU) ** 2).mean(axis=(0, 1)) - SD**2) / mcse_mean((x - MU) ** 2)
    assert np.all(np.abs(z_mean) < 4) and np.all(np.abs(z_var) < 4), (z_mean, z_var)


def test_a_run_takes_the_numpy_runs_trees_and_counts_its_gradients() -> None:
    # warm-up included: the adapter sees the same statistics from both paths
    target = TARGETS["gauss_numba"]
    plain = dataclasses.replace(target, compiled=None)
    a, b = (driver.run(nuts, t, chains=2, warmup=60, draws=40, seed=5).chains for t in (target, plain))
    assert np.array_equal(a.sample_stats["n_steps"], b.sample_stats["n_steps"])
    assert np.allclose(a.posterior["a"], b.posterior["a"], atol=1e-4)  # rounding, amplified by the adaptation
    for key in ("n_gradient_evals", "n_gradient_evals_warmup"):
        assert a.attrs[key] == b.attrs[key] > 0, key


def test_same_seed_same_bytes_on_a_compiled_target() -> None:
    runs = [driver.run(nuts, TARGETS["eight-schools"], chains=2, warmup=100, draws=50, seed=9).chains for _ in range(2)]
    assert npz_bytes(runs[0]) == npz_bytes(runs[1])


def test_an_error_inside_the_compiled_function_names_the_file_under_nuts(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"  # fails as soon as a tree moves toward the mode from x[0] = 2.9
    path.write_text("import numba\nimport numpy as np\ndim = 2\n@numba.njit\ndef point_log_density_and_grad(x):\n"
                    "    if x[0] < 2.5:\n        raise ValueError('x[0] too small')\n    return -0.5 * x @ x, -x\n")
    with pytest.raises(InputError, match="point_log_density_and_grad raised ValueError: x.0. too small") as err:
        driver.run(nuts, load_user_target(str(path)), chains=1, warmup=0, draws=5, seed=1,
                   init=np.full((1, 2), 2.9), params={"step_size": 0.5})  # fmt: skip
    assert err.value.source == str(path)


def test_deep_trees_read_the_same_numbers_on_both_paths() -> None:
    # Trees of 2^12 to 2^13 leaves: the NumPy transition reserves its random numbers as the tree grows (requests
    # beyond a buffer block), the compiled one all at once.
    compiled = TARGETS["gauss_numba"]
    plain = dataclasses.replace(compiled, compiled=None)
    x = np.tile(MU, (2, 1))
    runs = []
    for target in (compiled, plain):
        rng = ChainRandom(4, chains=2)
        state, info = nuts.step(rng, nuts.init(x, target), target, step_size=np.array([5e-5, 8e-5]), max_tree_depth=14)
        runs.append((state.position, info.n_steps, _reads(rng)))
    (a, na, ra), (b, nb, rb) = runs
    assert np.array_equal(na, nb) and na.min() >= 2**12 and ra == rb
    assert np.allclose(a, b, rtol=1e-9, atol=1e-9)


def test_past_the_compiled_depth_limit_the_numpy_transition_runs() -> None:
    # the compiled transition reserves 8 * 2^depth bytes per chain up front: not for any depth
    target = TARGETS["gauss_numba"]

    def refuse(*args: object) -> None:
        raise AssertionError("the compiled tree ran")

    deep = dataclasses.replace(target, compiled=target.compiled._replace(tree=refuse))
    x = np.tile(MU, (2, 1))
    nuts.step(ChainRandom(1, chains=2), nuts.init(x, deep), deep, max_tree_depth=nuts.COMPILED_MAX_TREE_DEPTH + 1)
    with pytest.raises(AssertionError, match="the compiled tree ran"):
        nuts.step(ChainRandom(1, chains=2), nuts.init(x, deep), deep, max_tree_depth=nuts.COMPILED_MAX_TREE_DEPTH)
