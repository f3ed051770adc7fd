"""Targets: gradients, exact moments against quadrature, variables, user files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate
from scipy import stats as sps

from mcmc.core.errors import InputError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets import TARGETS, get_target
from mcmc.core.targets.base import Target, flat_names
from mcmc.core.targets.models import eight_schools_moments

BUILTINS = [
    ("gaussian", {"dim": 4}),
    ("gaussian", {"dim": 4, "rho": 0.7}),
    ("gaussian", {"dim": 5, "rho": -0.2, "scales": "log"}),
    ("bimodal", {"dim": 3}),
    ("banana", {"dim": 3}),
    ("funnel", {"dim": 4}),
    ("gamma", {"dim": 2, "shape": 3.0, "rate": 2.0}),
    ("logistic", {}),
    ("beta-bernoulli", {}),
    ("eight-schools", {}),
    ("ising", {"size": 4}),
    ("bnn", {"hidden": 3}),
    ("potts", {"size": 4, "q": 3}),
    ("dirichlet", {"counts": "4,1,3,1,1", "eta": 1}),
]
GRADIENT_TARGETS = [(n, o) for n, o in BUILTINS if n not in ("ising", "potts")]  # a spin lattice has no gradient


def test_every_registered_target_is_exercised() -> None:
    assert {name for name, _ in BUILTINS} == set(TARGETS)


def test_the_registry_declares_the_options_each_factory_takes() -> None:
    """Help reads --dim, --data and -T examples from the registry: it must say what each factory takes."""
    import inspect
    from importlib import import_module

    from mcmc.cli.options import parse_target_options

    for name, entry in TARGETS.items():
        parameters = tuple(inspect.signature(getattr(import_module(entry.module), entry.factory)).parameters)
        assert entry.options == parameters, name
        assert set(parse_target_options(entry.example.split())) <= set(parameters), name


def _points(target: Target, n: int = 6) -> np.ndarray:
    x = target.initial(ChainRandom(1, chains=n), n)
    return np.abs(x) + 0.1 if target.name == "gamma" else x


@pytest.mark.parametrize(("name", "options"), GRADIENT_TARGETS, ids=[f"{n}-{o}" for n, o in GRADIENT_TARGETS])
def test_gradient_equals_central_differences(name, options) -> None:
    target = get_target(name, **options)
    x = _points(target)
    h = 1e-5 * np.maximum(1.0, np.abs(x))
    numeric = np.empty_like(x)
    for j in range(target.dim):  # vectorized over points, one column at a time
        e = np.zeros_like(x)
        e[:, j] = h[:, j]
        numeric[:, j] = (target.log_density(x + e) - target.log_density(x - e)) / (2 * h[:, j])
    grad = target.grad_log_density(x)
    assert grad.shape == x.shape
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6 * (1 + np.abs(numeric).max()))
    value, g2 = target.value_and_grad(x)
    np.testing.assert_allclose(value, target.log_density(x), rtol=1e-13)
    np.testing.assert_allclose(g2, grad, rtol=1e-13)
    assert target.log_density(x).shape == (x.shape[0],)


@pytest.mark.parametrize(("name", "options"), BUILTINS, ids=[f"{n}-{o}" for n, o in BUILTINS])
def test_metadata_is_consistent(name, options) -> None:
    target = get_target(name, **options)
    draws = np.stack([_points(target, 5)] * 2, axis=1)  # (chain=5, draw=2, dim)
    variables = target.to_variables(draws)
    assert list(variables) == [v for v, _ in target.variables]
    for vname, shape in target.variables:
        assert variables[vname].shape == (5, 2, *shape)
    assert len(target.names) == target.report(draws).shape[-1]
    if target.mean is not None:
        assert target.mean.shape == target.sd.shape == (len(target.names),)


@pytest.mark.parametrize(("name", "options"), BUILTINS, ids=[f"{n}-{o}" for n, o in BUILTINS])
def test_recorded_options_rebuild_the_target(name, options) -> None:
    # The chains file records (target, target_options); that must be enough.
    target = get_target(name, **options)
    again = get_target(target.name, **target.options)
    x = _points(target)
    np.testing.assert_array_equal(again.log_density(x), target.log_density(x))
    if target.mean is not None:
        np.testing.assert_array_equal(again.mean, target.mean)


def _quad_1d(logpdf, lo, hi, points=None):
    """Normaliser, mean and sd of exp(logpdf) on [lo, hi] by adaptive quadrature."""
    f = lambda x: np.exp(logpdf(x))  # noqa: E731
    z = integrate.quad(f, lo, hi, points=points, limit=200, epsabs=1e-13, epsrel=1e-10)[0]
    m = integrate.quad(lambda x: x * f(x), lo, hi, points=points, limit=200, epsabs=1e-13, epsrel=1e-10)[0] / z
    v = (
        integrate.quad(lambda x: (x - m) ** 2 * f(x), lo, hi, points=points, limit=200, epsabs=1e-13, epsrel=1e-10)[0]
        / z
    )
    return z, m, np.sqrt(v)


def test_one_dimensional_moments_by_quadrature() -> None:
    for target, lo, hi in [
        (get_target("bimodal", dim=1), -30, 30),
        (get_target("gamma", dim=1, shape=3.0, rate=2.0), 0, 60),
        (get_target("gamma", dim=1, shape=0.7, rate=1.0), 0, 80),
        (get_target("gaussian", dim=1), -30, 30),
    ]:
        z, m, s = _quad_1d(lambda x, t=target: t.log_density(np.array([[x]]))[0], lo, hi)
        assert z == pytest.approx(1.0, rel=1e-7), target.name  # densities are normalised
        assert m == pytest.approx(target.mean[0], abs=1e-8)
        assert s == pytest.approx(target.sd[0], rel=1e-8)


def test_beta_bernoulli_posterior_through_the_logit_transform() -> None:
    target = get_target("beta-bernoulli", successes=3, trials=11, a=2.0, b=0.5)
    exact = sps.beta(2.0 + 3, 0.5 + 8)
    assert target.mean[0] == pytest.approx(exact.mean(), rel=1e-12)
    assert target.sd[0] == pytest.approx(exact.std(), rel=1e-12)
    # Sampling density in z = logit(theta), Jacobian included: pushing it
    # through expit must give the Beta posterior's moments.
    logz = lambda z: target.log_density(np.array([[z]]))[0]  # noqa: E731
    z0 = integrate.quad(lambda z: np.exp(logz(z)), -60, 60, limit=200)[0]
    m = integrate.quad(lambda z: target.report(np.array([z]))[0] * np.exp(logz(z)), -60, 60, limit=200)[0] / z0
    assert m == pytest.approx(exact.mean(), rel=1e-8)


def test_gaussian_covariance_and_normaliser() -> None:
    target = get_target("gaussian", dim=3, rho=0.5, scales="log")
    d = target.sd
    cov = np.diag(d) @ (0.5 * np.eye(3) + 0.5) @ np.diag(d)
    x = _points(target)
    np.testing.assert_allclose(target.log_density(x), sps.multivariate_normal(np.zeros(3), cov).logpdf(x), rtol=1e-12)
    with pytest.raises(UsageError, match="--rho"):
        get_target("gaussian", dim=3, rho=-0.6)
    with pytest.raises(UsageError, match="--scales"):
        get_target("gaussian", scales="wide")


def test_banana_and_funnel_moments_by_two_dimensional_quadrature() -> None:
    banana = get_target("banana", dim=2)
    b = banana.options["b"]
    # Integrate in (x0, u = x1 - b (x0^2 - 100)), a unit-Jacobian change of variables.
    x0 = np.linspace(-100, 100, 2001)
    u = np.linspace(-12, 12, 481)
    X0, U = np.meshgrid(x0, u, indexing="ij")
    X1 = U + b * (X0**2 - 100)
    p = np.exp(banana.log_density(np.column_stack([X0.ravel(), X1.ravel()]))).reshape(X0.shape)
    w = np.trapezoid(np.trapezoid(p, u, axis=1), x0)
    assert w == pytest.approx(1.0, rel=1e-6)
    m1 = np.trapezoid(np.trapezoid(p * X1, u, axis=1), x0)
    s1 = np.sqrt(np.trapezoid(np.trapezoid(p * X1**2, u, axis=1), x0) - m1**2)
    s0 = np.sqrt(np.trapezoid(np.trapezoid(p * X0**2, u, axis=1), x0))
    assert abs(m1) < 1e-6 and s1 == pytest.approx(banana.sd[1], rel=1e-5) and s0 == pytest.approx(10.0, rel=1e-6)

    funnel = get_target("funnel", dim=2)
    # x = exp(v/2) z: integrate over (v, z) with Jacobian exp(v/2).
    v = np.linspace(-30, 30, 3001)
    z = np.linspace(-12, 12, 481)
    V, Z = np.meshgrid(v, z, indexing="ij")
    X = np.exp(V / 2) * Z
    p = np.exp(funnel.log_density(np.column_stack([V.ravel(), X.ravel()]))).reshape(V.shape) * np.exp(V / 2)
    assert np.trapezoid(np.trapezoid(p, z, axis=1), v) == pytest.approx(1.0, rel=1e-6)
    sx = np.sqrt(np.trapezoid(np.trapezoid(p * X**2, z, axis=1), v))
    assert sx == pytest.approx(funnel.sd[1], rel=1e-5)


def test_eight_schools_moments_are_converged_and_match_the_classic_results() -> None:
    target = get_target("eight-schools")
    mean, sd = eight_schools_moments(n_grid=200_001)
    np.testing.assert_allclose(target.mean, mean, rtol=1e-10)
    np.testing.assert_allclose(target.sd, sd, rtol=1e-10)
    # mu ~ 4.4 and tau ~ 3.6 (posterior means reported for this model by Stan
    # and PyMC case studies); theta_1 pulled from 28 to about 6.
    assert target.names[:3] == ("mu", "tau", "theta[0]")
    assert target.mean[0] == pytest.approx(4.4, abs=0.05)
    assert target.mean[1] == pytest.approx(3.6, abs=0.05)
    assert 5.5 < target.mean[2] < 7.0


def test_eight_schools_non_centred_log_density() -> None:
    target = get_target("eight-schools")
    x = _points(target)
    mu, log_tau, tt = x[:, 0], x[:, 1], x[:, 2:]
    tau = np.exp(log_tau)
    y = np.array([28, 8, -3, 7, -1, 1, 18, 12.0])
    sigma = np.array([15, 10, 16, 11, 9, 11, 10, 18.0])
    ref = (
        sps.norm(0, 5).logpdf(mu)
        + sps.halfcauchy(scale=5).logpdf(tau)
        + log_tau
        + sps.norm.logpdf(tt).sum(axis=1)
        + sps.norm(mu[:, None] + tau[:, None] * tt, sigma).logpdf(y).sum(axis=1)
    )
    diff = target.log_density(x) - ref
    np.testing.assert_allclose(diff, diff[0], atol=1e-10)  # equal up to one constant
    np.testing.assert_allclose(target.log_prior(x) + target.log_likelihood(x), target.log_density(x), rtol=1e-13)


def test_logistic_data_file(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("a,b,y\n0.5,1,1\n-1,2,0\n0.3,-0.2,1\n")
    target = get_target("logistic", data=str(path))
    assert target.dim == 3 and target.names == ("beta[0]", "beta[1]", "beta[2]")
    beta = _points(target)
    X = np.array([[1, 0.5, 1], [1, -1, 2], [1, 0.3, -0.2]])
    eta = beta @ X.T
    ref = sps.norm(0, 2.5).logpdf(beta).sum(axis=1) + sps.bernoulli.logpmf([1, 0, 1], 1 / (1 + np.exp(-eta))).sum(
        axis=1
    )
    np.testing.assert_allclose(target.log_density(beta), ref, rtol=1e-12)
    default = get_target("logistic")
    assert default.dim == 4 and default.log_likelihood is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a,y\n1,2\n", "must be 0 or 1"),
        ("a,y\n1\n", "row 2 has 1 fields"),
        ("a,y\n1,x\n", "not numeric"),
        ("a,y\n", "header line and at least one data row"),
        ("a,y\nnan,1\n", "NaN"),
    ],
)
def test_logistic_bad_data(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        get_target("logistic", data=str(path))
    assert info.value.source == str(path)


def test_registry_errors() -> None:
    with pytest.raises(UsageError, match="unknown target 'nope'"):
        get_target("nope")
    with pytest.raises(UsageError, match="--rho"):
        get_target("banana", rho=0.5)
    assert get_target("banana", rho=None).dim == 2  # None means "not given"
    with pytest.raises(InputError, match="no such file"):
        get_target("logistic", data="/nonexistent/data.csv")


def test_flat_names() -> None:
    """A target names its coordinates as diagnose and compare name the parameters of its chains file."""
    assert flat_names((("mu", ()), ("theta", (2,)), ("L", (2, 2)))) == (
        "mu",
        "theta[0]",
        "theta[1]",
        "L[0, 0]",
        "L[0, 1]",
        "L[1, 0]",
        "L[1, 1]",
    )


# -- user target files -------------------------------------------------------

GOOD = """
import numpy as np
dim = 2
names = ["a", "b"]
def log_density(x):
    return -0.5 * (x ** 2).sum(axis=1)
def grad_log_density(x):
    return -x
"""


def _write(tmp_path: Path, text: str, name: str = "model.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_user_target_module(tmp_path: Path) -> None:
    target = get_target(_write(tmp_path, GOOD))
    assert target.dim == 2 and target.names == ("a", "b") and target.has_grad
    assert [v for v, _ in target.variables] == ["a", "b"]
    np.testing.assert_allclose(target.log_density(np.ones((3, 2))), [-1.0, -1.0, -1.0])


def test_user_target_namespace_attribute(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        import types, numpy as np
        def _lp(x):
            return -np.abs(x).sum(axis=1)
        def _init(rng, chains):
            return rng.normal((3,))
        laplace = types.SimpleNamespace(log_density=_lp, initial_point=_init)
    """,
    )
    target = get_target(f"{path}:laplace")
    assert target.dim == 3 and not target.has_grad
    assert target.names == ("x[0]", "x[1]", "x[2]")


@pytest.mark.parametrize(
    ("text", "spec_suffix", "message"),
    [
        ("dim = 2\n", "", "defines no function log_density"),
        ("def log_density(x):\n    return x.sum(axis=1)\n", "", "defines neither dim nor initial_point"),
        ("dim = 2\ndef log_density(x):\n    return x\n", "", r"returned shape \(2, 2\)"),
        ("dim = 2\ndef log_density(x):\n    return x[:, 0] * float('nan')\n", "", "NaN or \\+inf"),
        ("dim = 2\ndef log_density(x):\n    raise ValueError('boom')\n", "", "log_density raised ValueError: boom"),
        ("import numpy\nraise RuntimeError('bad import')\n", "", "failed to import: RuntimeError: bad import"),
        ("dim = 2\ndef log_density(x):\n    return -x.sum(axis=1)\n", ":missing", "defines no 'missing'"),
        (
            "dim = 2\ndef log_density(x):\n    return -x.sum(axis=1)\ndef grad_log_density(x):\n    return x[:, 0]\n",
            "",
            "grad_log_density returned shape",
        ),
        ("dim = 'two'\ndef log_density(x):\n    return -x.sum(axis=1)\n", "", "dim must be a positive integer"),
        ("dim = 2\nnames = ['a']\ndef log_density(x):\n    return -x.sum(axis=1)\n", "", "names has 1 entries"),
        ("dim = 2\ndef log_prior(x):\n    return -x.sum(axis=1)\n", "", "not log_likelihood.*two-stage needs both"),
        (
            "dim = 2\ndef log_prior(x):\n    return -(x**2).sum(axis=1)\ndef log_likelihood(x):\n    return x[:, 0]\n"
            "def log_density(x):\n    return x[:, 1]\n",
            "",
            "differs from log_density",
        ),
    ],
)
def test_user_target_errors(tmp_path: Path, text: str, spec_suffix: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match=message) as info:
        get_target(path + spec_suffix)
    assert info.value.source == path


def test_user_target_as_prior_times_likelihood_runs_two_stage(tmp_path: Path) -> None:
    # x ~ N(0, 2^2), y_i ~ N(x, 1) for y = (1, 2): posterior N(3 / (1/4 + 2), 1 / (1/4 + 2)), no log_density given
    path = _write(
        tmp_path,
        """
        import numpy as np
        dim = 1
        def log_prior(x):
            return -0.5 * (x[:, 0] / 2.0) ** 2
        def log_likelihood(x):
            return -0.5 * ((x[:, 0] - 1.0) ** 2 + (x[:, 0] - 2.0) ** 2)
        """,
    )
    from mcmc.core.samplers import get_sampler
    from tests.core.harness import check_sampler

    target = get_target(path)
    assert target.log_prior is not None and target.log_likelihood is not None
    precision = 0.25 + 2.0
    exact = Target(target.name, 1, target.log_density, mean=np.array([3.0 / precision]), sd=np.array([precision**-0.5]),
                   log_prior=target.log_prior, log_likelihood=target.log_likelihood)  # fmt: skip
    check_sampler(get_sampler("two-stage"), exact, draws=3000)


def test_user_target_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        get_target(str(tmp_path / "absent.py"))
    with pytest.raises(UsageError, match="do not apply to a user target"):
        get_target(_write(tmp_path, GOOD), dim=3)


def test_beta_bernoulli_data_file(tmp_path: Path) -> None:
    path = tmp_path / "flips.csv"
    path.write_text("y\n1\n0\n1\n1\n")
    target = get_target("beta-bernoulli", data=str(path), a=2.0)
    assert target.options["successes"] == 3 and target.options["trials"] == 4
    assert target.mean[0] == pytest.approx(5 / 7)


# -- user functions checked on every call, not only at the probe ----------------------

_FAILS_LATER = {
    "raises": (
        """
        import numpy as np
        dim = 2
        calls = [0]
        def log_density(x):
            calls[0] += 1
            if calls[0] > 50:
                raise ValueError("the data ran out")
            return -0.5 * (x ** 2).sum(axis=1)
        """,
        "rwm",
        # 12 calls before the first iteration (probe; the batch check, 8 points together then one by one;
        # starting points; sampler init): call 51 is iteration 39
        r"log_density raised ValueError: the data ran out \(iteration 39\)$",
    ),
    "other chain count": (
        """
        import numpy as np
        dim = 2
        def log_density(x):
            lp = -0.5 * (x ** 2).sum(axis=1)
            return lp if x.shape[0] == 2 else lp[:3]  # fine at the probe's two chains only
        """,
        "rwm",
        r"log_density returned shape \(3,\) for 4 chains; expected \(4,\) \(at the starting points\)$",
    ),
    "gradient shape mid-run": (
        """
        import numpy as np
        dim = 2
        calls = [0]
        def log_density(x):
            return -0.5 * (x ** 2).sum(axis=1)
        def grad_log_density(x):
            calls[0] += 1
            return -x if calls[0] < 30 else np.zeros((x.shape[0], 3))
        """,
        "hmc",
        # HMC integrates only the chains still moving: n is whatever that call had
        r"grad_log_density returned shape \((\d+), 3\) for \1 chains? of dimension 2; expected \(\1, 2\) "
        r"\(iteration \d+\)$",
    ),
    "likelihood raises": (
        """
        import numpy as np
        dim = 1
        calls = [0]
        def log_prior(x):
            return -0.5 * x[:, 0] ** 2
        def log_likelihood(x):
            calls[0] += 1
            if calls[0] > 40:  # past the probe and the batch check (20 calls), into the run
                raise KeyError("y")
            return -0.5 * (x[:, 0] - 1.0) ** 2
        """,
        "two-stage",
        r"log_likelihood raised KeyError: 'y' \(iteration \d+\)$",
    ),
}


@pytest.mark.parametrize("case", list(_FAILS_LATER))
def test_user_function_failing_after_the_probe_names_file_function_and_iteration(tmp_path: Path, case: str) -> None:
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import run

    text, sampler, message = _FAILS_LATER[case]
    path = _write(tmp_path, text)
    target = get_target(path)
    with pytest.raises(InputError, match=message) as info:
        run(get_sampler(sampler), target, chains=4, warmup=50, draws=50, seed=1)
    assert info.value.source == path


def test_nan_and_inf_gradients_are_divergences_not_crashes(tmp_path: Path) -> None:
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import run

    # A disc of radius 3 (-inf outside: the support), with a gradient that turns NaN or inf near the rim.
    path = _write(
        tmp_path,
        """
        import numpy as np
        dim = 2
        def log_density(x):
            r = np.sqrt((x ** 2).sum(axis=1))
            return np.where(r < 3, -0.5 * r ** 2, -np.inf)
        def grad_log_density(x):
            r = np.sqrt((x ** 2).sum(axis=1))
            g = -x.copy()
            g[r > 2.9] = np.nan
            g[(r > 2.84) & (r <= 2.9)] = np.inf
            return g
        """,
    )
    chains = run(get_sampler("hmc"), get_target(path), chains=4, warmup=200, draws=200, seed=1).chains
    x = chains.posterior["x"]
    assert np.all(np.isfinite(x)) and np.all((x**2).sum(axis=2) < 3**2)
    assert chains.sample_stats["diverging"].sum() > 0
