"""Compiled trajectories (mcmc.core.compiled): a numba point function gets the whole leapfrog path compiled.

The compiled integrator must be the NumPy one (same steps, same divergence
rule) to rounding; HMC on a compiled target must sample the right law (exact
moments within MCSE) and give the same bytes for the same seed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import npz_bytes
from mcmc.core.errors import InputError
from mcmc.core.samplers import get_sampler
from mcmc.core.samplers.driver import run
from mcmc.core.samplers.leapfrog import integrate
from mcmc.core.targets.user import load_user_target
from mcmc.diagnostics.stats import mcse_mean

GAUSS = Path(__file__).parents[1] / "data" / "sample" / "gauss_numba.py"
MU, SD = np.array([1.0, -2.0, 0.5]), np.array([1.0, 2.0, 0.1])


@pytest.fixture(scope="module")
def target():
    return load_user_target(str(GAUSS))


@pytest.mark.parametrize("step", [0.05, 0.3, 50.0])  # the last diverges at once
def test_the_compiled_path_is_the_numpy_path(target, step: float) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 3))
    p = rng.normal(size=(5, 3))
    lp, g = target.value_and_grad(x)
    eps = np.full(5, step) * np.array([1.0, 0.5, 2.0, 1.0, 0.1])
    n = np.array([0, 1, 7, 20, 3])
    minv = rng.uniform(0.01, 2.0, size=(5, 3))
    a = integrate(target.value_and_grad, x, p, lp, g, eps, n, minv, 1000.0)
    b = target.compiled.trajectory(x, p, lp, g, eps, n, minv, 1000.0)
    assert np.array_equal(a.n_steps, b.n_steps) and np.array_equal(a.diverged, b.diverged)
    ok = ~a.diverged
    for name in ("position", "momentum", "log_density", "grad"):
        assert np.allclose(getattr(a, name)[ok], getattr(b, name)[ok], rtol=1e-12, atol=1e-12), name
    if step == 50.0:
        assert a.diverged[1:].any()


def test_hmc_on_a_compiled_target_has_the_exact_moments(target) -> None:
    chains = run(get_sampler("hmc"), target, chains=4, warmup=500, draws=1000, seed=4).chains
    x = np.stack([chains.posterior[n] for n in ("a", "b", "c")], axis=-1)  # (chain, draw, 3)
    z_mean = (x.mean(axis=(0, 1)) - MU) / mcse_mean(x)
    z_var = (((x - MU) ** 2).mean(axis=(0, 1)) - SD**2) / mcse_mean((x - MU) ** 2)
    assert np.all(np.abs(z_mean) < 4) and np.all(np.abs(z_var) < 4), (z_mean, z_var)


def test_gradient_counts_are_the_numpy_paths(target, monkeypatch) -> None:
    # the chains file's evaluation counts (ESS per gradient) must not depend on where the path ran
    compiled = run(get_sampler("hmc"), target, chains=2, warmup=60, draws=40, seed=5).chains.attrs
    import dataclasses

    plain = run(get_sampler("hmc"), dataclasses.replace(target, compiled=None), chains=2, warmup=60, draws=40,
                seed=5).chains.attrs
    for key in ("n_gradient_evals", "n_gradient_evals_warmup"):
        assert compiled[key] == plain[key] > 0, key


def test_same_seed_same_bytes_on_a_compiled_target(target) -> None:
    runs = [run(get_sampler("hmc"), target, chains=2, warmup=100, draws=50, seed=9).chains for _ in range(2)]
    assert npz_bytes(runs[0]) == npz_bytes(runs[1])


def test_a_point_function_not_compiled_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "plain.py"
    path.write_text("import numpy as np\ndim = 2\ndef point_log_density_and_grad(x):\n    return -0.5 * x @ x, -x\n")
    with pytest.raises(InputError, match="must be compiled with @numba.njit") as err:
        load_user_target(str(path))
    assert err.value.source == str(path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("-0.5 * np.sum(x * x)", "raised TypingError: failed to unpack float64"),
        ("np.nan, -x", "returned NaN or +inf at the probe points"),
        ("-0.5 * np.sum(x * x), x * np.nan", "returned NaN or infinite gradients"),
        ("-0.5 * np.sum(x * x), -x[:1]", "raised ValueError: the gradient's length"),  # numba would broadcast it
    ],
)
def test_a_bad_point_function_is_one_line_naming_it(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.py"
    path.write_text(f"import numba\nimport numpy as np\ndim = 2\n@numba.njit\n"
                    f"def point_log_density_and_grad(x):\n    return {body}\n")
    with pytest.raises(InputError) as err:
        load_user_target(str(path))
    assert err.value.source == str(path)
    assert f"point_log_density_and_grad {message}" in err.value.message, err.value.message
    assert "\n" not in err.value.message


def test_an_error_inside_the_compiled_function_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text("import numba\nimport numpy as np\ndim = 2\n@numba.njit\ndef point_log_density_and_grad(x):\n"
                    "    if x[0] > 3.0:\n        raise ValueError('x[0] too large')\n    return -0.5 * x @ x, -x\n")
    t = load_user_target(str(path))
    with pytest.raises(InputError, match="point_log_density_and_grad raised ValueError: x.0. too large") as err:
        t.compiled.trajectory(np.zeros((1, 2)), np.ones((1, 2)) * 100, np.zeros(1), np.zeros((1, 2)), np.ones(1),
                     np.ones(1, int), np.ones((1, 2)), 1000.0)
    assert err.value.source == str(path)


_CACHE_PROBE = """
import sys
import numpy as np
from mcmc.core.targets.user import load_user_target
t = load_user_target(sys.argv[1])
x = np.full((1, 2), 0.5)
lp, g = t.value_and_grad(x)
out = t.compiled.trajectory(x, np.ones((1, 2)), lp, g, np.full(1, 0.1), np.full(1, 3), np.ones((1, 2)), 1000.0)
generated = [m for name, m in sys.modules.items() if name.startswith("mcmc_kernels_")]
print(float(out.log_density[0]), len(generated[0].run.stats.cache_hits))
"""


def test_compiled_kernels_are_cached_across_processes_and_follow_edits_of_the_file(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    path = tmp_path / "model.py"
    env = {**os.environ, "MCMC_CACHE_DIR": str(tmp_path / "kernels")}

    def probe() -> tuple[float, int]:
        out = subprocess.run([sys.executable, "-c", _CACHE_PROBE, str(path)], env=env, capture_output=True,
                             text=True, check=True).stdout.split()  # fmt: skip
        return float(out[0]), int(out[1])

    source = "import numba\nimport numpy as np\ndim = 2\n@numba.njit\ndef point_log_density_and_grad(x):\n"
    path.write_text(source + "    return -0.5 * x @ x, -x\n")
    first, hits_first = probe()
    again, hits_again = probe()
    assert hits_first == 0 and hits_again == 1 and again == first  # compiled once, loaded the second time
    path.write_text(source + "    return -x @ x, -2.0 * x\n")  # the same names, another density
    edited, hits_edited = probe()
    assert hits_edited == 0 and edited != first  # a new kernel, not the stale one
    assert len(list((tmp_path / "kernels").glob("mcmc_kernels_*.py"))) == 2
    # the same bytes in another file are another module, which a cached kernel could not find by name
    path = tmp_path / "copy" / "model.py"
    path.parent.mkdir()
    path.write_text(source + "    return -x @ x, -2.0 * x\n")
    copied, _ = probe()
    assert copied == edited


def test_kernel_files_not_loaded_for_a_month_are_pruned_when_a_new_one_is_written(tmp_path: Path, monkeypatch) -> None:
    import os
    import time

    from mcmc.core.compiled import kernels

    folder = tmp_path / "kernels"
    (folder / "__pycache__").mkdir(parents=True)
    month = time.time() - (kernels.STALE_DAYS + 1) * 86400
    for stem, when in (("mcmc_kernels_old", month), ("mcmc_kernels_recent", time.time() - 86400)):
        (folder / f"{stem}.py").write_text("")
        (folder / "__pycache__" / f"{stem}.run-1.py313.nbi").write_text("")
        os.utime(folder / f"{stem}.py", (when, when))
    monkeypatch.setenv("MCMC_CACHE_DIR", str(folder))
    path = tmp_path / "model.py"
    path.write_text("import numba\nimport numpy as np\ndim = 2\n@numba.njit\ndef point_log_density_and_grad(x):\n"
                    "    return -0.5 * x @ x, -x\n")
    load_user_target(str(path))
    names = sorted(p.name for p in folder.glob("mcmc_kernels_*.py"))
    assert "mcmc_kernels_old.py" not in names and "mcmc_kernels_recent.py" in names and len(names) == 2
    assert not list((folder / "__pycache__").glob("mcmc_kernels_old.*"))
    assert list((folder / "__pycache__").glob("mcmc_kernels_recent.*"))


def test_a_damaged_generated_kernel_file_falls_back_to_compiling_in_memory(tmp_path: Path, monkeypatch) -> None:
    from mcmc.core.compiled import kernels

    monkeypatch.setenv("MCMC_CACHE_DIR", str(tmp_path / "kernels"))
    path = tmp_path / "model.py"
    path.write_text("import numba\nimport numpy as np\ndim = 2\n@numba.njit\ndef point_log_density_and_grad(x):\n"
                    "    return -0.5 * x @ x, -x\n")
    load_user_target(str(path))
    (generated,) = (tmp_path / "kernels").glob("mcmc_kernels_*.py")
    generated.write_text("def broken(:\n")
    kernels.functions.cache_clear()
    t = load_user_target(str(path))
    lp, g = t.value_and_grad(np.array([[1.0, 2.0]]))
    assert lp[0] == -2.5 and np.array_equal(g, [[-1.0, -2.0]])
