"""Targets written in JAX (mcmc.core.jax): one point's log density, its gradient by jax.grad, HMC and NUTS inside JAX.

The JAX paths must be the NumPy ones: the trajectory the NumPy integrator,
the NUTS transition the NumPy transition (the same trees from the same random
numbers), a loop of transitions the transitions taken one by one, and the
JAX and NumPy files of one model the same HMC draws at a seed, to rounding.
Every sampler that takes a density takes a JAX target and samples its law.
Chain ``i``'s bytes depend only on the seed and ``i``. A missing jax is one
line and exit 2 (that test runs without jax; the others are skipped).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import npz_bytes
from mcmc.core.errors import InputError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import get_sampler, hmc, nuts
from mcmc.core.samplers.driver import concatenate, run
from mcmc.core.samplers.leapfrog import integrate
from mcmc.core.samplers.registry import DECLARATIONS, DENSITY
from mcmc.core.targets.user import load_user_target
from tests.core.harness import check_sampler

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason="jax is not installed (pip install 'mcmc[jax]')")  # fmt: skip

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "sample"
GAUSS, CONJUGATE = SAMPLE / "gauss_jax.py", SAMPLE / "conjugate_jax.py"
SCHOOLS = ROOT / "bench" / "posteriordb" / "eight_schools_noncentered"
MU, SD = np.array([1.0, -2.0, 0.5]), np.array([1.0, 2.0, 0.1])


def _load(path: Path, suffix: str = "") -> object:
    return load_user_target(f"{path}{suffix}")


def _reads(rng: ChainRandom) -> tuple[int, ...]:
    return tuple(int(v) for kind in ("normal", "uniform", "exponential") for v in rng._buffers[kind].pos)


def _without_loops(target: object) -> object:
    return dataclasses.replace(target, compiled=target.compiled._replace(hmc_loop=None, nuts_loop=None))


@needs_jax
def test_a_jax_file_is_a_target_with_compiled_paths() -> None:
    t = _load(GAUSS)
    assert t.dim == 3 and t.names == ("a", "b", "c") and t.compiled is not None
    x = np.random.default_rng(0).normal(size=(5, 3))
    lp, g = t.value_and_grad(x)
    z = (x - MU) / SD
    np.testing.assert_allclose(lp, -0.5 * (z * z).sum(axis=1), rtol=1e-14)
    np.testing.assert_allclose(g, -z / SD, rtol=1e-14)
    assert lp.dtype == np.float64 and t.log_density(x[:0]).shape == (0,)
    assert _load(GAUSS) is t  # built once per process: its programs are compiled once


@needs_jax
@pytest.mark.parametrize("step", [0.05, 0.3, 50.0])  # the last diverges at once
def test_the_jax_trajectory_is_the_numpy_integrator(step: float) -> None:
    t = _load(GAUSS)
    rng = np.random.default_rng(3)
    x, p = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    lp, g = t.value_and_grad(x)
    eps = np.full(5, step) * np.array([1.0, 0.5, 2.0, 1.0, 0.1])
    n = np.array([0, 1, 7, 20, 3])
    minv = rng.uniform(0.01, 2.0, size=(5, 3))
    a = integrate(t.value_and_grad, x, p, lp, g, eps, n, minv, 1000.0)
    b = t.compiled.trajectory(x, p, lp, g, eps, n, minv, 1000.0)
    assert np.array_equal(a.n_steps, b.n_steps) and np.array_equal(a.diverged, b.diverged)
    ok = ~a.diverged
    for name in ("position", "momentum", "log_density", "grad"):
        assert np.allclose(getattr(a, name)[ok], getattr(b, name)[ok], rtol=1e-12, atol=1e-12), name


@needs_jax
@pytest.mark.parametrize(("scale", "depth"), [(0.1, 10), (0.02, 4), (40.0, 10)],
                         ids=["typical", "max-depth", "diverging"])  # fmt: skip
def test_the_jax_nuts_transition_is_the_numpy_transition(scale: float, depth: int) -> None:
    compiled = _load(GAUSS)
    plain = dataclasses.replace(compiled, compiled=None)
    start = np.random.default_rng(2)
    x = 0.5 * start.normal(size=(4, 3))
    eps = scale * np.array([1.0, 0.5, 2.0, 1.5])
    minv = start.uniform(0.3, 2.0, size=(4, 3))
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
        x = a.position


@needs_jax
@pytest.mark.parametrize("sampler", [hmc, nuts], ids=["hmc", "nuts"])
def test_a_loop_of_transitions_is_the_transitions_one_by_one(sampler) -> None:
    # the loops read each chain's buffers as the steps do, refills included (300 transitions refill every kind)
    t = _load(SCHOOLS, "_jax.py")
    x = np.random.default_rng(1).normal(size=(3, t.dim))
    one, many = ChainRandom(5, chains=3), ChainRandom(5, chains=3)
    state = sampler.init(x, t)
    positions, infos = [], []
    for _ in range(300):
        state, info = sampler.step(one, state, t, step_size=0.2)
        positions.append(state.position)
        infos.append(info)
    batch = sampler.run_iterations(many, sampler.init(x, t), t, 300, None, step_size=0.2)
    assert np.array_equal(batch.draws, np.stack(positions))
    for name in infos[0]._fields:
        got, want = getattr(batch.info, name), np.stack([getattr(i, name) for i in infos])
        if want.dtype.kind == "f":  # the step computes its energies and acceptance in NumPy, the loop in JAX
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)
        else:
            assert np.array_equal(got, want), name
    assert _reads(one) == _reads(many)


@needs_jax
@pytest.mark.parametrize("sampler", ["hmc", "nuts"])
def test_warm_up_in_loops_is_the_adapters_warm_up(sampler: str) -> None:
    # the stretches between the adapter's events run in loops, with dual averaging and the windows' sums
    # inside: the same trees and gradient counts as the adapter updating after every transition
    # (the loop rounds dual averaging's exp and pow as XLA does; warm-up amplifies that, as it does the rounding of
    # a numba path, so the runs are short)
    t = _load(SCHOOLS, "_jax.py")
    a, b = (run(get_sampler(sampler), target, chains=2, warmup=60, draws=40, seed=5).chains
            for target in (t, _without_loops(t)))  # fmt: skip
    assert np.array_equal(a.sample_stats["n_steps"], b.sample_stats["n_steps"])
    for key in ("n_gradient_evals", "n_gradient_evals_warmup"):
        assert a.attrs[key] == b.attrs[key] > 0, key
    assert np.allclose(a.posterior["mu"], b.posterior["mu"], atol=1e-4)


@needs_jax
def test_the_jax_and_numpy_files_of_a_model_give_the_same_hmc_draws() -> None:
    numpy_file, jax_file = _load(SCHOOLS, ".py"), _load(SCHOOLS, "_jax.py")
    # a fixed step size: the same draws to rounding, transition after transition
    fixed = [run(hmc, t, chains=4, warmup=0, draws=300, seed=3, params={"step_size": 0.2}).chains
             for t in (numpy_file, jax_file)]  # fmt: skip
    assert np.array_equal(fixed[0].sample_stats["n_steps"], fixed[1].sample_stats["n_steps"])
    for name in fixed[0].posterior:
        np.testing.assert_allclose(fixed[1].posterior[name], fixed[0].posterior[name], rtol=1e-12, atol=1e-12)
    # with warm-up: the same trajectories; the adaptation amplifies the rounding
    adapted = [run(hmc, t, chains=4, warmup=60, draws=40, seed=3).chains for t in (numpy_file, jax_file)]
    assert np.array_equal(adapted[0].sample_stats["n_steps"], adapted[1].sample_stats["n_steps"])
    for name in adapted[0].posterior:
        np.testing.assert_allclose(adapted[1].posterior[name], adapted[0].posterior[name], atol=1e-4)


@needs_jax
@pytest.mark.parametrize("sampler", ["hmc", "nuts"])
def test_same_seed_same_bytes_and_chain_i_depends_only_on_the_seed_and_i(sampler: str) -> None:
    t = _load(SCHOOLS, "_jax.py")

    def chains(ids: list[int]) -> object:
        return run(get_sampler(sampler), t, chain_ids=ids, warmup=150, draws=60, seed=9).chains

    whole = npz_bytes(chains([0, 1, 2, 3, 4]))
    assert whole == npz_bytes(chains([0, 1, 2, 3, 4]))
    assert whole == npz_bytes(concatenate([chains([0, 1, 2]), chains([3]), chains([4])]))


#: Samplers of the density kind that no target file can feed: the lattices' (swendsen-wang), a transition matrix's
#: (markov), a law on finitely many states from weights.csv (mh) and the built-in Gaussian's own draws (exact).
NOT_FOR_FILES = ("swendsen-wang", "markov", "mh", "exact")


def _samplers() -> list[str]:
    return [d.name for d in DECLARATIONS if d.kind == DENSITY and d.name not in NOT_FOR_FILES]


def _module(path: Path) -> object:
    spec = importlib.util.spec_from_file_location(f"{path.stem}_moments", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_jax
@pytest.mark.parametrize("sampler", _samplers())
def test_every_sampler_that_takes_a_density_samples_a_jax_target(sampler: str) -> None:
    # inverse-cdf draws one-dimensional targets: a JAX file of one dimension; the others the conjugate model
    path = SAMPLE / "normal_1d_jax.py" if sampler == "inverse-cdf" else CONJUGATE
    exact = _module(path)
    t = dataclasses.replace(_load(path, ":by_gibbs" if sampler == "gibbs" else ""), mean=exact.MEAN, sd=exact.SD)
    if sampler == "importance":  # weighted draws, judged by their self-normalised means and their delta-method MCSE
        from tests.core.test_target_hooks import self_normalised

        chains = run(get_sampler(sampler), t, chains=4, warmup=500, draws=2500, seed=13).chains
        assert chains.attrs["weighted"] is True
        log_w = chains.sample_stats["log_weight"].ravel()
        x = np.concatenate([chains.posterior[v].reshape(log_w.size, -1) for v, _ in t.variables], axis=1)
        mean, mcse = self_normalised(x, log_w)
        second, mcse2 = self_normalised((x - t.mean) ** 2, log_w)
        assert np.abs((mean - t.mean) / mcse).max() < 4 and np.abs((second - t.sd**2) / mcse2).max() < 4
        return
    draws = {"rwm": 3000, "mh-lognormal": 3000, "two-stage": 3000}.get(sampler, 1000)
    check_sampler(get_sampler(sampler), t, warmup=0 if sampler == "inverse-cdf" else 500, draws=draws)


@needs_jax
def test_a_gaussian_prior_in_a_jax_file_is_the_models_prior_for_elliptical_slice() -> None:
    # prior_cov in a JAX file: mcmc writes the prior's log density of one point in jax.numpy; elliptical slice moves
    # on the prior's ellipses, evaluating only the likelihood, and matches the exact GP posterior
    from mcmc.core.targets.protocols import GaussianPrior
    from mcmc.core.targets.user import gaussian_log_density

    path = SAMPLE / "gp_regression_jax.py"
    t = _load(path)
    assert isinstance(t, GaussianPrior) and t.compiled is not None
    x = np.random.default_rng(0).normal(size=(5, t.dim))
    np.testing.assert_allclose(t.log_prior(x), gaussian_log_density(x, t.prior_mean, t.prior_chol), rtol=1e-9)
    mean, sd = _module(path).exact_moments()
    result = check_sampler(get_sampler("elliptical-slice"), dataclasses.replace(t, mean=mean, sd=sd), warmup=500,
                           draws=5000)  # fmt: skip
    assert result.chains.attrs["elliptical"] == {"gaussian": "the model's prior"}
    assert result.chains.attrs["n_density_evals"] == 0


@needs_jax
def test_hmc_with_a_fixed_number_of_steps_on_a_jax_target_takes_them() -> None:
    # -P hmc:n-steps=L -P hmc:jitter=0: every transition L leapfrog steps (the loop of transitions steps aside)
    chains = run(hmc, _load(GAUSS), chains=4, warmup=50, draws=50, seed=2,
                 params={"n_steps": 7, "jitter": 0.0}).chains  # fmt: skip
    assert np.all(chains.sample_stats["n_steps"] == 7)


@needs_jax
def test_hmc_on_a_jax_target_has_the_exact_moments_and_counts_its_gradients() -> None:
    chains = run(hmc, _load(GAUSS), chains=4, warmup=500, draws=1000, seed=4).chains
    x = np.stack([chains.posterior[n] for n in ("a", "b", "c")], axis=-1)
    from mcmc.diagnostics.stats import mcse_mean

    z_mean = (x.mean(axis=(0, 1)) - MU) / mcse_mean(x)
    z_var = (((x - MU) ** 2).mean(axis=(0, 1)) - SD**2) / mcse_mean((x - MU) ** 2)
    assert np.all(np.abs(z_mean) < 4) and np.all(np.abs(z_var) < 4), (z_mean, z_var)
    steps = chains.sample_stats["n_steps"].sum()
    assert 0 < steps <= chains.attrs["n_gradient_evals"] <= steps + 8  # the draws' steps, and the starts'


def _write(tmp_path: Path, body: str, name: str = "model.py") -> str:
    path = tmp_path / name
    path.write_text(body)
    return str(path)


@needs_jax
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("import numpy as np\nimport jax.numpy as jnp\ndim = 2\ndef log_density(x):\n    return np.exp(x).sum()\n",
         r"log_density raised TracerArrayConversionError: .* \(in a JAX target it takes one point, x of shape \(2,\)\)"),
        ("import jax.numpy as jnp\ndim = 2\ndef log_density(x):\n    return -0.5 * x * x\n",
         r"log_density\(x\) returned shape \(2,\) for one point; expected a scalar"),
        ("import jax.numpy as jnp\ndim = 2\ndef log_density(x):\n    return -jnp.sum(x * x)\n"
         "def grad_log_density(x):\n    return -2 * x\n", "a JAX target's gradient is jax.grad's"),
        ("backend = 'torch'\ndim = 2\ndef log_density(x):\n    return 0.0\n", "backend must be 'numpy' or 'jax'"),
        ("import jax.numpy as jnp\ndim = 2\nnames = ['a', 'b']\ndef log_density(x):\n    return -jnp.sum(x * x)\n"
         "def transform(x):\n    return jnp.sum(x)\n", r"transform\(x\) returned shape \(\) for one point"),
    ],
    ids=["numpy-on-a-tracer", "not-a-scalar", "gradient-given", "unknown-backend", "transform-scalar"],
)
def test_a_bad_jax_file_is_one_line_naming_it(tmp_path: Path, body: str, message: str) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(InputError, match=message) as err:
        load_user_target(path)
    assert err.value.source == path and "\n" not in str(err.value)


@needs_jax
def test_backend_numpy_keeps_a_file_that_imports_jax_batched(tmp_path: Path) -> None:
    path = _write(tmp_path, "import jax\nimport numpy as np\nbackend = 'numpy'\ndim = 2\n"
                            "def log_density(x):\n    return -0.5 * np.sum(x * x, axis=1)\n")  # fmt: skip
    t = load_user_target(path)
    assert t.compiled is None and t.log_density(np.ones((3, 2))).tolist() == [-1.0, -1.0, -1.0]


def test_a_missing_jax_is_one_line_and_exit_2(tmp_path: Path, mcmc, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError, as when it is not installed
    path = _write(tmp_path, "import jax.numpy as jnp\ndim = 2\ndef log_density(x):\n    return -jnp.sum(x * x)\n")
    r = mcmc("sample", "-t", path, "-o", str(tmp_path / "out.npz"))
    assert r.code == 2
    assert r.stderr.strip().splitlines() == [
        f"mcmc: error: {path}: a JAX target needs jax, which is not installed: pip install 'mcmc[jax]'"
    ]


@needs_jax
def test_the_summary_says_how_long_compiling_took_and_the_cache_keeps_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "MCMC_CACHE_DIR": str(cache)}
    cmd = [str(Path(sys.executable).with_name("mcmc")), "sample", "-t", str(GAUSS), "-s", "nuts", "--chains", "2",
           "--warmup", "100", "--draws", "100", "--seed", "1", "-o", str(tmp_path / "out.npz")]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert done.returncode in (0, 1), done.stderr  # 1: the short run's draws judged too few, written all the same
    assert re.search(r"gradient evaluations   [0-9.]+ s \([0-9.]+ s compiling\)  -> ", done.stderr), done.stderr
    assert any((cache / "jax").iterdir())  # JAX's persistent compilation cache, for the next run


def test_other_commands_and_numpy_targets_do_not_import_jax() -> None:
    # jax (about a second to import) only for a JAX target: a NumPy file, a built-in, diagnose's start-up
    code = (
        "import sys; from mcmc.core.targets import get_target; from mcmc.core.samplers import get_sampler; "
        "from mcmc.core.samplers.driver import run; "
        f"run(get_sampler('hmc'), get_target({str(SAMPLE / 'correlated.py')!r}), chains=2, warmup=10, draws=10, "
        "seed=1); run(get_sampler('nuts'), get_target('eight-schools'), chains=2, warmup=10, draws=10, seed=1); "
        "from mcmc.cli.app import main; main(['diagnose', '--help']); "
        "print('jax' in sys.modules, file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr.split()[-1] == "False"
