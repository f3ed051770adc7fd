"""The posteriordb user targets of ``bench/posteriordb/``: gradients, models, names.

* The gradient against central finite differences of the log density.
* The log density against the Stan program written out again with
  ``scipy.stats`` on the constrained parameters, plus the log Jacobian of
  Stan's transform: differences between points must agree (both are up to
  a constant).
* The reported names are those of the stored reference moments
  (``tests/data/posteriordb/reference_moments.json``).
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as st
from scipy.special import expit, logit

from mcmc.core.targets.user import load_user_target

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "posteriordb"
REFERENCE = json.loads((DATA / "reference_moments.json").read_text())

# target file -> posteriordb posterior name
PLAIN = {
    "eight_schools_noncentered": "eight_schools-eight_schools_noncentered",
    "kidiq_kidscore_momiq": "kidiq-kidscore_momiq",
    "arK": "arK-arK",
    "garch11": "garch-garch11",
    "low_dim_gauss_mix": "low_dim_gauss_mix-low_dim_gauss_mix",
    "gp_pois_regr": "gp_pois_regr-gp_pois_regr",
}
# each also written as a compiled point function, X_numba.py (docs/formats.md, "Compiled targets"), and as the
# log density of one point in JAX, X_jax.py ("JAX targets"; skipped without jax)
JAX = {f"{name}_jax": posterior for name, posterior in PLAIN.items()}
TARGETS = {**PLAIN, **{f"{name}_numba": posterior for name, posterior in PLAIN.items()}, **JAX}
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason="jax is not installed (pip install 'mcmc[jax]')")  # fmt: skip


def _cases(names):
    return [pytest.param(name, marks=needs_jax) if name in JAX else name for name in names]


def load(name):
    return load_user_target(str(ROOT / "bench" / "posteriordb" / f"{name}.py"))


def data(file):
    return json.loads((DATA / file).read_text())


def points(dim, n=4, seed=0):
    # Stan's initial range and a little beyond
    return np.random.default_rng(seed).uniform(-2.5, 2.5, size=(n, dim))


@pytest.mark.parametrize("name", _cases(TARGETS))
def test_gradient_matches_finite_differences(name):
    t = load(name)
    x = points(t.dim)
    g = t.value_and_grad(x)[1]
    h = 1e-6
    fd = np.empty_like(g)
    for j in range(t.dim):
        e = np.zeros(t.dim)
        e[j] = h
        fd[:, j] = (t.log_density(x + e) - t.log_density(x - e)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5 * (1 + np.abs(fd).max()))


@pytest.mark.parametrize("name", _cases(TARGETS))
def test_names_are_the_references(name):
    t = load(name)
    assert sorted(t.names) == sorted(REFERENCE[TARGETS[name]])
    assert t.report(points(t.dim)).shape == (4, len(t.names))


def _eight_schools(z):
    d = data("eight_schools.json")
    tt, mu, tau = z[:8], z[8], np.exp(z[9])
    theta = tt * tau + mu
    return (st.norm.logpdf(tt).sum() + st.norm.logpdf(d["y"], theta, d["sigma"]).sum()
            + st.norm.logpdf(mu, 0, 5) + st.cauchy.logpdf(tau, 0, 5) + z[9])


def _kidiq(z):
    d = data("kidiq.json")
    sigma = np.exp(z[2])
    mean = z[0] + z[1] * np.asarray(d["mom_iq"])
    return st.norm.logpdf(d["kid_score"], mean, sigma).sum() + st.cauchy.logpdf(sigma, 0, 2.5) + z[2]


def _ark(z):
    d = data("arK.json")
    y, K = np.asarray(d["y"]), d["K"]
    alpha, beta, sigma = z[0], z[1 : K + 1], np.exp(z[K + 1])
    lp = st.norm.logpdf(alpha, 0, 10) + st.norm.logpdf(beta, 0, 10).sum() + st.cauchy.logpdf(sigma, 0, 2.5)
    for t in range(K, len(y)):  # Stan's loop, literally
        lp += st.norm.logpdf(y[t], alpha + sum(beta[k - 1] * y[t - k] for k in range(1, K + 1)), sigma)
    return lp + z[K + 1]


def _garch(z):
    d = data("garch.json")
    y = np.asarray(d["y"])
    mu, a0, a1 = z[0], np.exp(z[1]), expit(z[2])
    b1 = (1 - a1) * expit(z[3])
    sigma = [d["sigma1"]]
    for t in range(1, len(y)):
        sigma.append(np.sqrt(a0 + a1 * (y[t - 1] - mu) ** 2 + b1 * sigma[-1] ** 2))
    # log |Jacobian| of (alpha0, alpha1, beta1) = (exp u0, expit u1, (1 - alpha1) expit u2)
    jac = z[1] + np.log(a1 * (1 - a1)) + np.log((1 - a1) * expit(z[3]) * (1 - expit(z[3])))
    return st.norm.logpdf(y, mu, sigma).sum() + jac


def _gauss_mix(z):
    d = data("low_dim_gauss_mix.json")
    y = np.asarray(d["y"])
    mu = np.array([z[0], z[0] + np.exp(z[1])])
    sigma, theta = np.exp(z[2:4]), expit(z[4])
    lp = st.norm.logpdf(sigma, 0, 2).sum() + st.norm.logpdf(mu, 0, 2).sum() + st.beta.logpdf(theta, 5, 5)
    lp += np.logaddexp(np.log(theta) + st.norm.logpdf(y, mu[0], sigma[0]),
                       np.log1p(-theta) + st.norm.logpdf(y, mu[1], sigma[1])).sum()  # fmt: skip
    return lp + z[1] + z[2] + z[3] + np.log(theta * (1 - theta))


def _gp(z):
    d = data("gp_pois_regr.json")
    x, k = np.asarray(d["x"]), np.asarray(d["k"])
    rho, alpha, ft = np.exp(z[0]), np.exp(z[1]), z[2:]
    cov = alpha**2 * np.exp(-((x[:, None] - x[None, :]) ** 2) / (2 * rho**2)) + 1e-10 * np.eye(len(x))
    f = np.linalg.cholesky(cov) @ ft
    return (st.gamma.logpdf(rho, 25, scale=1 / 4) + st.norm.logpdf(alpha, 0, 2) + st.norm.logpdf(ft).sum()
            + st.poisson.logpmf(k, np.exp(f)).sum() + z[0] + z[1])


STAN = {
    "eight_schools_noncentered": _eight_schools,
    "kidiq_kidscore_momiq": _kidiq,
    "arK": _ark,
    "garch11": _garch,
    "low_dim_gauss_mix": _gauss_mix,
    "gp_pois_regr": _gp,
}
STAN.update({f"{name}{suffix}": program for name, program in list(STAN.items()) for suffix in ("_numba", "_jax")})


@pytest.mark.parametrize("name", _cases(TARGETS))
def test_log_density_is_the_stan_program(name):
    t = load(name)
    x = points(t.dim, seed=1)
    ours = t.log_density(x)
    ref = np.array([STAN[name](z) for z in x])
    np.testing.assert_allclose(ours - ours[0], ref - ref[0], rtol=1e-9, atol=1e-8 * (1 + np.abs(ref).max()))


def test_transforms_are_stans():
    t = load("garch11")
    x = points(4)
    mu, a0, a1, b1 = t.report(x).T
    np.testing.assert_allclose(a1, expit(x[:, 2]))
    np.testing.assert_allclose(logit(b1 / (1 - a1)), x[:, 3])
    m = load("low_dim_gauss_mix").report(x[:, :1].repeat(5, axis=1))
    assert np.all(m[:, 1] > m[:, 0])  # ordered


@pytest.mark.parametrize("name", ["low_dim_gauss_mix", "low_dim_gauss_mix_numba"])
def test_hmc_warmup_on_the_gaussian_mixture_stays_at_most_60_percent_of_the_gradients(name):
    # Issue 15: one chain's warm-up on this posterior used to take 52,000 gradients (84 % of the
    # run's, against 50 % on the others): a stiff start at the identity metric, then a first window
    # that had not converged and step sizes that dipped to 1e-3. Gradient counts are exact for a seed;
    # seed 2 is the worst of three. The compiled file rounds differently and takes another path: one
    # chain's drifted windows kept it at 25 to 55 steps per iteration for 170 iterations, the metric it
    # went back to after a collapse never checked again (64.0 %); now 58.5 % (NumPy: 59.9 -> 59.2 %).
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import run

    chains = run(get_sampler("hmc"), load(name), chains=4, warmup=1000, draws=1000, seed=2).chains
    warm, sampling = chains.attrs["n_gradient_evals_warmup"], chains.attrs["n_gradient_evals"]
    assert warm / (warm + sampling) <= 0.60, (warm, sampling)


@pytest.mark.parametrize("name", PLAIN)
def test_the_compiled_version_is_the_numpy_one(name):
    plain, compiled = load(name), load(f"{name}_numba")
    assert compiled.compiled is not None and plain.compiled is None
    x = points(plain.dim, n=6, seed=3)
    (lp_a, g_a), (lp_b, g_b) = plain.value_and_grad(x), compiled.value_and_grad(x)
    np.testing.assert_allclose(lp_b, lp_a, rtol=1e-11)
    np.testing.assert_allclose(g_b, g_a, rtol=1e-9, atol=1e-11 * (1 + np.abs(g_a).max()))
    np.testing.assert_allclose(compiled.report(x), plain.report(x), rtol=1e-13)


@needs_jax
@pytest.mark.parametrize("name", PLAIN)
def test_the_jax_version_is_the_numpy_one(name):
    plain, written_in_jax = load(name), load(f"{name}_jax")
    assert written_in_jax.compiled is not None and written_in_jax.names == plain.names
    x = points(plain.dim, n=6, seed=3)
    (lp_a, g_a), (lp_b, g_b) = plain.value_and_grad(x), written_in_jax.value_and_grad(x)
    # gp_pois_regr: two Cholesky factors of a covariance with a 1e-10 jitter agree to about 1e-9
    rtol = 1e-8 if name == "gp_pois_regr" else 1e-11
    np.testing.assert_allclose(lp_b, lp_a, rtol=rtol)
    np.testing.assert_allclose(g_b, g_a, rtol=rtol * 100, atol=1e-11 * (1 + np.abs(g_a).max()))
    np.testing.assert_allclose(written_in_jax.report(x), plain.report(x), rtol=1e-8 if name == "gp_pois_regr" else 1e-13)


@needs_jax
@pytest.mark.parametrize(("name", "sampler"), [(name, "hmc") for name in JAX] + [("eight_schools_noncentered_jax",
                                                                                    "nuts")])  # fmt: skip
def test_the_jax_models_match_the_posteriordb_reference_draws(name, sampler):
    # The benchmark models, checked against posteriordb's reference draws: every reported mean and sd
    # within 4 combined MCSE (ours and the reference's), as bench/posteriordb.py judges them. HMC on all six;
    # NUTS on one (its JAX transition is tested equal to the NumPy one, and compiling its loop for each model
    # would cost the suite half a minute).
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.diagnostics import stats

    target = load(name)
    chains = run(get_sampler(sampler), target, chains=4, warmup=1000, draws=1000, seed=1).chains
    draws = np.concatenate([np.asarray(chains.posterior[v]).reshape(4, 1000, -1) for v, _ in target.variables],
                           axis=2)  # fmt: skip
    ref = REFERENCE[JAX[name]]
    mean, mcse, sd, mcse_sd = draws.mean(axis=(0, 1)), stats.mcse_mean(draws), draws.std(axis=(0, 1), ddof=1), \
        stats.mcse_sd(draws)
    z = {}
    for i, n in enumerate(target.names):
        z[f"{n} mean"] = abs(mean[i] - ref[n]["mean"]) / math.hypot(mcse[i], ref[n]["mcse_mean"])
        z[f"{n} sd"] = abs(sd[i] - ref[n]["sd"]) / math.hypot(mcse_sd[i], ref[n]["mcse_sd"])
    assert max(z.values()) < 4, {k: round(v, 2) for k, v in z.items() if v >= 4}
