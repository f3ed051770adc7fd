"""The samplers that use a target file's own structure (issue 31, items 7, 8, 9) and the Dirichlet target (item 12).

* rejection with the file's proposal and bound ``log k``: exact in eight
  dimensions, and a point where ``p > k q`` stops the run with the point and
  the ratio;
* importance sampling: weighted draws, self-normalised estimates within
  their delta-method MCSE of the truth, with the file's proposal or a t
  fitted in warm-up;
* elliptical slice on the model's own Gaussian prior: the exact posterior of
  a Gaussian-process regression, only the likelihood evaluated;
* the hooks refused when they do not fit, one line naming the file;
* ``dirichlet``: the posterior of multinomial counts against its exact moments.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from mcmc.core.errors import InputError, UsageError
from mcmc.core.samplers import elliptical, hmc, importance, rejection
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import EnvelopeBound, GaussianPrior, ProposalDistribution, Quantile
from mcmc.core.targets.user import cholesky, gaussian_log_density
from mcmc.diagnostics import stats
from tests.core.harness import check_sampler

SAMPLE = Path(__file__).parents[1] / "data" / "sample"
ENVELOPE = SAMPLE / "envelope.py"
GP = SAMPLE / "gp_regression.py"


def module(path: Path):  # noqa: ANN201
    spec = importlib.util.spec_from_file_location(path.stem + "_exact", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def with_moments(target, mean, sd):  # noqa: ANN001, ANN201
    return dataclasses.replace(target, mean=np.asarray(mean, dtype=float), sd=np.asarray(sd, dtype=float))


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "model.py"
    path.write_text(text)
    return str(path)


# --- rejection with the file's envelope -----------------------------------------------------


def test_rejection_under_the_files_bound_is_exact_in_eight_dimensions() -> None:
    mod = module(ENVELOPE)
    target = get_target(str(ENVELOPE))
    assert isinstance(target, EnvelopeBound) and target.log_bound == pytest.approx(8 * 0.19749, abs=1e-4)
    result = check_sampler(rejection, with_moments(target, mod.MEAN, mod.SD), warmup=0, draws=1500)
    sample_stats = result.chains.sample_stats
    assert np.all(sample_stats["envelope_exceeded"] == 0)
    # the acceptance rate is 1 / k exactly (both densities normalised): within binomial error
    accepted, tried = sample_stats["n_evals"].size, sample_stats["n_evals"].sum()
    rate = np.exp(-target.log_bound)
    assert abs(accepted / tried - rate) < 4 * np.sqrt(rate * (1 - rate) / tried)
    assert result.chains.attrs["params"] == {}  # nothing learnt: no proposal fitted, no bound estimated


def test_a_bound_too_low_stops_the_run_with_the_point_and_the_ratio() -> None:
    target = dataclasses.replace(get_target(str(ENVELOPE)), log_bound=1.0)
    with pytest.raises(InputError) as err:
        run(rejection, target, chains=4, warmup=0, draws=200, seed=3)
    assert err.value.source == str(ENVELOPE)
    message = err.value.message
    assert message.startswith("the envelope fails: p > k q at x = [")
    assert "log p - log q - log_bound = " in message and "> 0" in message and "(iteration " in message
    x = np.array([float(v) for v in message.split("x = [")[1].split("]")[0].split(", ")])
    ratio = float(message.split("log_bound = ")[1].split(" ")[0])
    lp = target.log_density(x[None])[0] - target.proposal_log_density(x[None])[0] - 1.0
    assert ratio == pytest.approx(lp, rel=1e-5)


# --- importance sampling ------------------------------------------------------------------


def self_normalised(x: np.ndarray, log_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The self-normalised mean of each column of ``x (n, d)`` and its delta-method MCSE (Owen 2013, 9.2)."""
    w = np.exp(log_w - log_w.max())
    w = w / w.sum()
    mean = w @ x
    return mean, np.sqrt(np.sum(w[:, None] ** 2 * (x - mean) ** 2, axis=0))


@pytest.mark.parametrize(
    ("name", "options"), [("gaussian", {"dim": 3, "rho": 0.5}), ("banana", {}), (str(ENVELOPE), {})],
    ids=["gaussian", "banana", "file's proposal"],
)  # fmt: skip
def test_importance_estimates_are_within_their_delta_method_mcse(name, options) -> None:
    target = get_target(name, **options)
    if target.mean is None:
        mod = module(ENVELOPE)
        target = with_moments(target, mod.MEAN, mod.SD)
    chains = run(importance, target, chains=4, warmup=500, draws=2500, seed=13).chains
    assert chains.attrs["weighted"] is True
    assert chains.attrs["proposal"] == ("the target's own" if isinstance(target, ProposalDistribution)
                                        else "student-t fitted in warm-up")  # fmt: skip
    log_w = chains.sample_stats["log_weight"].ravel()
    x = np.concatenate([chains.posterior[v].reshape(log_w.size, -1) for v, _ in target.variables], axis=1)
    mean, mcse = self_normalised(x, log_w)
    z = (mean - target.mean) / mcse
    assert np.abs(z).max() < 4, z
    second, mcse2 = self_normalised((x - target.mean) ** 2, log_w)
    assert np.abs((second - target.sd**2) / mcse2).max() < 4
    # the weights are the densities' ratio at each draw
    lp = chains.sample_stats["lp"].ravel()
    assert np.all(np.isfinite(log_w)) and np.all(log_w <= lp + 50)


def test_importance_draws_are_independent_and_chain_i_depends_only_on_i() -> None:
    target = get_target(str(ENVELOPE))
    both = run(importance, target, chains=4, warmup=0, draws=50, seed=2).chains
    part = run(importance, target, chain_ids=[2, 3], warmup=0, draws=50, seed=2).chains
    np.testing.assert_array_equal(both.posterior["x"][2:], part.posterior["x"])
    np.testing.assert_array_equal(both.sample_stats["log_weight"][2:], part.sample_stats["log_weight"])


# --- elliptical slice on the model's prior ---------------------------------------------------


def test_elliptical_slice_on_the_models_prior_matches_the_exact_gp_posterior() -> None:
    target = get_target(str(GP))
    assert isinstance(target, GaussianPrior)
    mean, sd = module(GP).exact_moments()
    result = check_sampler(elliptical, with_moments(target, mean, sd), warmup=500, draws=5000)
    attrs = result.chains.attrs
    assert attrs["elliptical"] == {"gaussian": "the model's prior"}
    assert attrs["n_density_evals"] == 0 and attrs["n_likelihood_evals"] > 0  # only the likelihood is evaluated
    assert attrs["params"] == {}  # nothing learnt in warm-up
    # The same posterior through a reference learnt in warm-up (the density alone, no prior given) mixes far worse:
    # the prior's ellipses follow the posterior's correlations, a diagonal reference's do not.
    plain = Target("gp", 8, target.log_density, mean=mean, sd=sd)
    learnt = run(elliptical, plain, chains=4, warmup=500, draws=5000, seed=20261122).chains
    ess = stats.ess_bulk(learnt.posterior["x"])
    assert result.ess_bulk.min() > 3 * ess.min(), (result.ess_bulk.min(), ess.min())


def test_the_prior_is_the_files_and_log_density_is_prior_plus_likelihood() -> None:
    target = get_target(str(GP))
    mod = module(GP)
    np.testing.assert_allclose(target.prior_chol @ target.prior_chol.T, mod.prior_cov, rtol=0, atol=1e-12)
    x = np.random.default_rng(0).normal(size=(3, 8))
    expected = sps.multivariate_normal(np.zeros(8), mod.prior_cov).logpdf(x) + mod.log_likelihood(x)
    np.testing.assert_allclose(target.log_density(x), expected, rtol=1e-9)


def test_cholesky_and_the_gaussian_log_density_agree_with_lapack_and_scipy() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(6, 6))
    cov = a @ a.T + 0.5 * np.eye(6)
    np.testing.assert_allclose(cholesky(cov), np.linalg.cholesky(cov), rtol=0, atol=1e-12)
    x, mean = rng.normal(size=(4, 6)), rng.normal(size=6)
    np.testing.assert_allclose(
        gaussian_log_density(x, mean, cholesky(cov)), sps.multivariate_normal(mean, cov).logpdf(x), rtol=1e-12
    )
    with pytest.raises(ValueError, match="not positive definite"):
        cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))


# --- the hooks, refused when they do not fit ----------------------------------------------------

HEAD = "import numpy as np\ndim = 2\n"
LOGD = "def log_density(x):\n    return -0.5 * np.sum(x * x, axis=1)\n"
BAD_HOOKS = {
    "quantile in 2-D": (HEAD + LOGD + "def quantile(u):\n    return u\n", "quantile(u) applies to a one-dimensional"),
    "a proposal half given": (HEAD + LOGD + "def proposal_sample(rng):\n    return rng.normal((2,))\n",
                              "needs both proposal_sample(rng) and proposal_log_density(x)"),
    "a bound without a proposal": (HEAD + LOGD + "log_bound = 1.0\n", "defines log_bound but no proposal"),
    "a bound not a number": (HEAD + LOGD + "def proposal_sample(rng):\n    return rng.normal((2,))\n"
                             "def proposal_log_density(x):\n    return -0.5 * np.sum(x * x, axis=1)\n"
                             "log_bound = 'big'\n",
                             "log_bound must be a finite number"),
    "a proposal of the wrong shape": (HEAD + LOGD + "def proposal_sample(rng):\n    return rng.normal((3,))\n"
                                      "def proposal_log_density(x):\n    return np.zeros(len(x))\n",
                                      "proposal_sample returned shape (2, 3)"),
    "a prior without a likelihood": (HEAD + LOGD + "prior_cov = np.eye(2)\n", "but no log_likelihood"),
    "a prior not positive definite": (HEAD + "prior_cov = [[1.0, 2.0], [2.0, 1.0]]\n"
                                      "def log_likelihood(x):\n    return np.zeros(len(x))\n",
                                      "prior_cov is not positive definite"),
    "a factor not lower-triangular": (HEAD + "prior_chol = [[1.0, 1.0], [0.0, 1.0]]\n"
                                      "def log_likelihood(x):\n    return np.zeros(len(x))\n",
                                      "prior_chol must be lower-triangular"),
    "a prior and log_prior": (HEAD + "prior_cov = np.eye(2)\ndef log_prior(x):\n    return np.zeros(len(x))\n"
                              "def log_likelihood(x):\n    return np.zeros(len(x))\n", "leave log_prior out"),
    "a prior of the wrong size": (HEAD + "prior_cov = np.eye(3)\ndef log_likelihood(x):\n    return np.zeros(len(x))\n",
                                  "must be a finite 2 x 2 matrix"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_HOOKS, ids=list(BAD_HOOKS))
def test_hooks_that_do_not_fit_are_one_line_naming_the_file(tmp_path, case) -> None:
    text, expected = BAD_HOOKS[case]
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        get_target(path)
    assert err.value.source == path and expected in err.value.message, err.value.message


def test_hooks_compose_and_a_file_without_them_is_a_plain_target(tmp_path) -> None:
    both = write(tmp_path, HEAD.replace("dim = 2", "dim = 1") + LOGD + "def quantile(u):\n    return u\n"
                 "def proposal_sample(rng):\n    return rng.normal((1,))\n"
                 "def proposal_log_density(x):\n    return -0.5 * np.sum(x * x, axis=1)\n")  # fmt: skip
    t = get_target(both)
    assert isinstance(t, Quantile) and isinstance(t, ProposalDistribution) and not isinstance(t, EnvelopeBound)
    plain = get_target(write(tmp_path, HEAD + LOGD))
    assert not isinstance(plain, (Quantile, ProposalDistribution, GaussianPrior))


# --- dirichlet ----------------------------------------------------------------------------------------


def test_dirichlet_exact_moments_are_the_conjugate_posteriors() -> None:
    t = get_target("dirichlet", counts="4,1,3,1,1", eta=1)
    alpha = np.array([5, 2, 4, 2, 2.0])
    np.testing.assert_allclose(t.mean, alpha / 15, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.sd**2, alpha * (15 - alpha) / (15**2 * 16), rtol=1e-14)
    assert t.names == tuple(f"theta[{k}]" for k in range(5)) and t.dim == 4
    y = np.random.default_rng(0).normal(size=(3, 4))
    theta = t.report(y)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    # the log density is the Dirichlet's on the simplex plus the log-Jacobian sum(log theta)
    expected = sps.dirichlet(alpha).logpdf(theta.T) + np.log(theta).sum(axis=1)
    np.testing.assert_allclose(t.log_density(y) - expected, (t.log_density(y) - expected)[0], rtol=0, atol=1e-10)
    eps = 1e-6
    numeric = np.array([(t.log_density(y + eps * e) - t.log_density(y - eps * e)) / (2 * eps) for e in np.eye(4)]).T
    np.testing.assert_allclose(t.grad_log_density(y), numeric, rtol=0, atol=1e-7)


def test_dirichlet_draws_match_the_exact_mean_and_variance() -> None:
    check_sampler(hmc, get_target("dirichlet", counts="4,1,3,1,1", eta=1), warmup=500, draws=1000)


def test_two_categories_are_beta_bernoulli() -> None:
    d = get_target("dirichlet", counts="7,13", eta=1)
    b = get_target("beta-bernoulli", successes=7, trials=20)
    np.testing.assert_allclose(d.mean[0], b.mean[0], rtol=1e-15)
    np.testing.assert_allclose(d.sd[0], b.sd[0], rtol=1e-14)


@pytest.mark.parametrize(("options", "expected"), [
    ({"counts": "4"}, "at least two categories"), ({"counts": "4,-1"}, "each a count >= 0"),
    ({"counts": "4,1.5"}, "whole numbers"), ({"eta": 0}, "eta must be a number > 0"),
])  # fmt: skip
def test_dirichlet_refuses_bad_options(options, expected) -> None:
    with pytest.raises(UsageError, match=expected):
        get_target("dirichlet", **options)
