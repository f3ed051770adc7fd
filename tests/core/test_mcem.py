"""Monte Carlo EM against exact EM: the built-in censored normal and a user file's two-component mixture.

Both have a closed-form EM step, computed here; its fixed point is the
maximum-likelihood estimate (checked against a direct maximisation of the
observed-data likelihood). Monte Carlo EM must land on it within its Monte
Carlo standard error (|theta - fixed point| / MCSE < 4), and one M-step from
theta0 with many draws must be the exact EM step from theta0 within its MCSE.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from mcmc.core.errors import InputError, UsageError
from mcmc.core.mcem.config import McemSettings
from mcmc.core.mcem.em import default_sampler, iteration_seed, mcem
from mcmc.core.targets import censored_normal as cn
from mcmc.core.targets.latent import load_latent_model
from mcmc.diagnostics.stats import mcse_mean

MIXTURE = Path(__file__).parents[1] / "data" / "mcem" / "mixture.py"


def censored_em_step(theta: np.ndarray) -> np.ndarray:
    """Exact EM for right-censored normal data: the truncated normal's first two moments, then the normal MLE."""
    mu, sigma = theta[0], np.exp(theta[1])
    a = (cn.LIMIT - mu) / sigma
    hazard = norm.pdf(a) / norm.sf(a)
    ez = mu + sigma * hazard
    ez2 = mu**2 + sigma**2 + sigma * (cn.LIMIT + mu) * hazard
    n = cn.Y.size + cn.N_CENSORED
    new_mu = (cn.Y.sum() + cn.N_CENSORED * ez) / n
    var = ((cn.Y**2).sum() + cn.N_CENSORED * ez2) / n - new_mu**2
    return np.array([new_mu, 0.5 * np.log(var)])


def mixture_em_step(theta: np.ndarray) -> np.ndarray:
    """Exact EM for the equal-weight, unit-variance two-component mixture: responsibilities, weighted means."""
    y = runpy.run_path(str(MIXTURE))["Y"]
    r1 = 1.0 / (1.0 + np.exp(0.5 * ((y - theta[1]) ** 2 - (y - theta[0]) ** 2)))
    return np.array([np.sum((1 - r1) * y) / np.sum(1 - r1), np.sum(r1 * y) / np.sum(r1)])


def fixed_point(step, theta0) -> np.ndarray:
    theta = np.asarray(theta0, dtype=float)
    for _ in range(10_000):
        new = step(theta)
        if np.max(np.abs(new - theta)) < 1e-14:
            return new
        theta = new
    raise AssertionError("EM did not converge")


def test_the_exact_em_fixed_point_is_the_censored_normals_maximum_likelihood() -> None:
    def minus_log_lik(theta: np.ndarray) -> float:
        mu, sigma = theta[0], np.exp(theta[1])
        return -(norm.logpdf(cn.Y, mu, sigma).sum() + cn.N_CENSORED * norm.logsf(cn.LIMIT, mu, sigma))

    mle = minimize(minus_log_lik, [4.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(fixed_point(censored_em_step, cn.theta0), mle, atol=1e-6)


@pytest.mark.parametrize("model_name", ["censored-normal", str(MIXTURE)])
def test_mcem_converges_to_the_exact_em_fixed_point_within_its_monte_carlo_error(model_name: str) -> None:
    model = load_latent_model(model_name)
    step = censored_em_step if model_name == "censored-normal" else mixture_em_step
    target = fixed_point(step, model.theta0)
    result = mcem(model, McemSettings(seed=1), mean_se=mcse_mean)
    assert result.sampler == "gibbs" and result.converged.all()
    z = (result.final_theta - target) / result.final_mcse
    assert np.all(np.abs(z) < 4), z
    # and it got there from far away: the first iterate is many MCSEs off
    assert np.all(np.abs(result.theta[1] - target) > 50 * result.final_mcse)
    assert result.draws[0] == 100 and result.draws[-1] == int(np.ceil(100 * 1.2**29))


@pytest.mark.parametrize("model_name", ["censored-normal", str(MIXTURE)])
def test_one_m_step_from_theta0_is_the_exact_em_step_within_its_mcse(model_name: str) -> None:
    model = load_latent_model(model_name)
    step = censored_em_step if model_name == "censored-normal" else mixture_em_step
    result = mcem(model, McemSettings(iterations=1, draws=20_000, seed=4), mean_se=mcse_mean)
    z = (result.theta[1] - step(model.theta0)) / result.mcse[0]
    assert np.all(np.abs(z) < 4), z
    assert np.all(result.mcse[0] < 0.01)


def test_the_mcse_is_calibrated_across_seeds() -> None:
    """Over independent runs the final thetas scatter about the fixed point as their MCSEs say."""
    model = load_latent_model("censored-normal")
    target = fixed_point(censored_em_step, model.theta0)
    runs = [mcem(model, McemSettings(iterations=20, draws=50, seed=s), mean_se=mcse_mean) for s in range(10)]
    z = np.array([(r.final_theta - target) / r.final_mcse for r in runs])
    assert np.all(np.abs(z) < 4)
    # chi-square with 10 degrees of freedom per parameter: between its 0.1 % and 99.9 % points
    chi2 = (z**2).sum(axis=0)
    assert np.all((chi2 > 1.48) & (chi2 < 29.6)), chi2


def test_an_e_step_by_slice_sampling_gets_there_too() -> None:
    model = load_latent_model("censored-normal")
    target = fixed_point(censored_em_step, model.theta0)
    result = mcem(model, McemSettings(iterations=12, draws=100, growth=1.3, warmup=50, sampler="slice", seed=2),
                  mean_se=mcse_mean)
    assert result.sampler == "slice"
    z = (result.final_theta - target) / result.final_mcse
    assert np.all(np.abs(z) < 4), z


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    model = load_latent_model("censored-normal")
    settings = McemSettings(iterations=5, draws=40, seed=9)
    for name in ("a.npz", "b.npz"):
        mcem(model, settings, mean_se=mcse_mean).write(tmp_path / name)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    other = mcem(model, McemSettings(iterations=5, draws=40, seed=10), mean_se=mcse_mean)
    with np.load(tmp_path / "a.npz", allow_pickle=False) as f:
        assert not np.array_equal(f["theta"], other.theta)
        assert f["theta"].shape == (6, 2) and f["draws"].tolist() == [40, 48, 58, 70, 83]
        assert list(f["parameters"]) == ["mu", "log_sigma"] and str(f["schema"]) == "mcmc.mcem/1"
        np.testing.assert_array_equal(f["final_theta"], f["theta"][-1])


def test_every_iteration_reads_its_own_stream() -> None:
    seeds = {iteration_seed(1, t) for t in range(50)} | {iteration_seed(2, t) for t in range(50)}
    assert len(seeds) == 100 and all(0 <= s < 2**63 for s in seeds)


def test_result_documents() -> None:
    model = load_latent_model(str(MIXTURE))
    result = mcem(model, McemSettings(iterations=3, draws=20, seed=1))  # no mean_se: no MCSE
    doc = result.to_dict()
    assert doc["schema"] == "mcmc.mcem/1" and doc["parameters"] == ["mu_0", "mu_1"]
    assert [it["draws"] for it in doc["iterations"]] == [20, 24, 29]
    assert doc["final"]["theta"] == {"mu_0": result.final_theta[0], "mu_1": result.final_theta[1]}
    assert np.all(np.isnan(result.mcse))
    header, rows = result.to_table()
    assert header == ["iteration", "draws", "mu_0", "mu_0_mcse", "mu_1", "mu_1_mcse", "objective"]
    assert len(rows) == 4 and rows[0][:3] == [0, 0, -0.5]


def test_default_sampler_follows_what_the_model_declares(tmp_path: Path) -> None:
    assert default_sampler(load_latent_model("censored-normal")) == "gibbs"
    plain = tmp_path / "plain.py"
    plain.write_text("import numpy as np\nlatent_dim = 2\nparameters = ['m']\ntheta0 = [0.0]\n"
                     "def log_joint(z, theta):\n    return -0.5 * ((z - theta[0]) ** 2).sum(axis=1)\n")
    assert default_sampler(load_latent_model(str(plain))) == "slice"
    (tmp_path / "grad.py").write_text(plain.read_text() + "def grad_log_joint(z, theta):\n    return theta[0] - z\n")
    assert default_sampler(load_latent_model(str(tmp_path / "grad.py"))) == "hmc"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("latent_dim = 2\n", "missing parameters, theta0, log_joint"),
        ("latent_dim = 0\nparameters = ['m']\ntheta0 = [0]\ndef log_joint(z, t): return z[:, 0]\n",
         "latent_dim must be a positive integer"),
        ("latent_dim = 2\nparameters = ['m']\ntheta0 = [0, 1]\ndef log_joint(z, t): return z[:, 0]\n",
         "theta0 must be 1 finite numbers"),
        ("latent_dim = 2\nparameters = ['m']\ntheta0 = [0]\ndef log_joint(z, t): return z\n",
         "log_joint returned shape"),
        ("latent_dim = 2\nparameters = ['m']\ntheta0 = [0]\ndef log_joint(z, t): raise ValueError('no')\n",
         "log_joint raised ValueError: no"),
        ("latent_dim = 2\nparameters = ['m']\ntheta0 = [0]\ndef log_joint(z, t): return z[:, 0]\n"
         "conditional_blocks = [[0, 1]]\n", "need both conditional_blocks and draw_conditional"),
    ],
)
def test_a_bad_model_file_is_one_line_naming_it(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "model.py"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as err:
        load_latent_model(str(path))
    assert err.value.source == str(path)


def test_bad_settings_and_names_are_refused() -> None:
    model = load_latent_model("censored-normal")
    with pytest.raises(UsageError, match="--em-growth must be a number >= 1"):
        mcem(model, McemSettings(growth=0.9))
    with pytest.raises(UsageError, match="would grow to"):
        mcem(model, McemSettings(iterations=200, growth=1.5))
    with pytest.raises(UsageError, match="unknown sampler"):
        mcem(model, McemSettings(sampler="nope"))
    with pytest.raises(UsageError, match="--mcem needs a latent-variable model"):
        load_latent_model("gaussian")
