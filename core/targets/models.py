"""Bayesian models as targets: logistic regression, beta-Bernoulli, eight schools.

* ``logistic``: ``y_i ~ Bernoulli(expit(beta_0 + x_i . beta))``,
  ``beta_j ~ N(0, 2.5^2)`` (intercept included). Data: a CSV with a header,
  predictors first and the 0/1 outcome last; without ``data``, 100 rows and 3
  predictors generated from a fixed seed. No closed-form moments.
* ``beta-bernoulli``: ``theta ~ Beta(a, b)``, ``y_i ~ Bernoulli(theta)``;
  posterior ``Beta(a + k, b + n - k)`` exactly. Sampled as ``z = logit(theta)``
  (log density ``(a + k) log expit(z) + (b + n - k) log expit(-z)``, Jacobian
  included); ``theta`` is reported. Default data: 7 successes in 20 trials,
  ``a = b = 1``.
* ``eight-schools``: the SAT coaching study (Rubin 1981; Gelman et al., BDA3
  section 5.5), non-centred: ``mu ~ N(0, 5^2)``, ``tau ~ half-Cauchy(0, 5)``,
  ``theta_tilde_j ~ N(0, 1)``, ``theta_j = mu + tau theta_tilde_j``,
  ``y_j ~ N(theta_j, sigma_j^2)``. Sampled as ``(mu, log tau,
  theta_tilde)``; reported as ``mu``, ``tau``, ``theta``. Exact moments by
  one-dimensional quadrature over ``tau``: given ``tau``, ``mu`` and ``theta``
  are jointly Gaussian in closed form (BDA3 eqs. 5.17-5.21, with the
  ``N(0, 5^2)`` prior on ``mu`` in place of the flat one).

Each model also exposes ``log_prior`` and ``log_likelihood`` (Jacobian in the
prior) for two-stage Metropolis-Hastings.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from mcmc.core.compiled import lazy_paths
from mcmc.core.errors import InputError, UsageError
from mcmc.core.targets.base import Target, flat_names
from mcmc.core.targets.builtin import KnownQuantile

KERNELS = "mcmc.core.targets.model_kernels"  # their point functions, compiled (HMC's trajectories)

LOG_2PI = float(np.log(2.0 * np.pi))
EIGHT_Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
EIGHT_SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def _log_expit(z: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -z)


def _expit(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def read_csv(path: str | Path, *, outcome_last: bool = False) -> tuple[list[str], np.ndarray]:
    """Header and numeric rows ``(n, columns)`` of a CSV file; InputError naming ``path`` otherwise.

    With ``outcome_last`` a row whose last cell is empty or missing is
    reported as a missing outcome.
    """
    source = str(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:  # a byte-order mark is not part of the first name
            lines = [line.strip() for line in fh if line.strip() and not line.lstrip().startswith("#")]
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(source, f"cannot read: {exc}") from None
    if len(lines) < 2:
        raise InputError(source, "expected a header line and at least one data row")
    header = [h.strip() for h in lines[0].split(",")]
    rows = []
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        missing = len(fields) == len(header) - 1 or (len(fields) == len(header) and not fields[-1].strip())
        if outcome_last and missing:
            raise InputError(source, f"row {lineno} has no outcome (the last column, {header[-1]!r})")
        if len(fields) != len(header):
            raise InputError(source, f"row {lineno} has {len(fields)} fields; the header has {len(header)}")
        try:
            rows.append([float(f) for f in fields])
        except ValueError:
            bad = next(j for j, f in enumerate(fields) if not _is_number(f))
            raise InputError(
                source, f"row {lineno} is not numeric: column {header[bad]!r} holds {fields[bad].strip()[:30]!r}"
            ) from None
    data = np.array(rows)
    if not np.all(np.isfinite(data)):
        raise InputError(source, "contains NaN or infinite values")
    return header, data


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _binary_outcome(y: np.ndarray, source: str) -> np.ndarray:
    if not np.all((y == 0) | (y == 1)):
        raise InputError(source, "the last column (the outcome) must be 0 or 1")
    return y


def default_logistic_data(n: int = 100, p: int = 3, seed: int = 20260101) -> tuple[list[str], np.ndarray]:
    """The built-in logistic data: standard-normal predictors, coefficients (0.5, 1, -1, 0.5)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, p))
    beta = np.array([0.5, 1.0, -1.0, 0.5])[: p + 1]
    eta = beta[0] + np.einsum("nj,j->n", x, beta[1:])  # not @: a BLAS sum's order and rounding depend on the CPU
    y = (rng.random(n) < _expit(eta)).astype(float)
    return [f"x{j + 1}" for j in range(p)] + ["y"], np.column_stack([x, y])


def logistic(data: str | None = None, prior_sd: float = 2.5) -> Target:
    """Bayesian logistic regression with an intercept and ``N(0, prior_sd^2)`` coefficients."""
    if data is None:
        _, table = default_logistic_data()
    else:
        _, table = read_csv(data)
        if table.shape[1] < 2:
            raise InputError(data, "expected at least one predictor column before the outcome column")
    y = _binary_outcome(table[:, -1], str(data))
    X = np.column_stack([np.ones(len(y)), table[:, :-1]])
    dim = X.shape[1]
    s2 = float(prior_sd) ** 2
    prior_const = -0.5 * dim * (LOG_2PI + np.log(s2))

    def log_prior(beta: np.ndarray) -> np.ndarray:
        return prior_const - 0.5 * (beta**2).sum(axis=1) / s2

    # einsum's own loops, not BLAS through ``@``: BLAS rounds a product of few rows
    # differently from one of many, and chain i must not depend on how many chains
    # (or which, after a two-stage screen) are evaluated beside it.
    def linear(beta: np.ndarray) -> np.ndarray:
        return np.einsum("cj,nj->cn", beta, X)

    def log_likelihood(beta: np.ndarray) -> np.ndarray:
        eta = linear(beta)
        return (y * eta - np.logaddexp(0.0, eta)).sum(axis=1)

    def log_density(beta: np.ndarray) -> np.ndarray:
        return log_prior(beta) + log_likelihood(beta)

    def value_and_grad(beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        eta = linear(beta)
        value = prior_const - 0.5 * (beta**2).sum(axis=1) / s2 + (y * eta - np.logaddexp(0.0, eta)).sum(axis=1)
        return value, np.einsum("cn,nj->cj", y - _expit(eta), X) - beta / s2

    def grad(beta: np.ndarray) -> np.ndarray:
        return value_and_grad(beta)[1]

    names = ("beta[0]",) + tuple(f"beta[{j}]" for j in range(1, dim))
    point_data = (np.ascontiguousarray(X), y.astype(float), s2, prior_const)
    return Target(
        name="logistic",
        dim=dim,
        log_density=log_density,
        grad_log_density=grad,
        value_and_grad_fn=value_and_grad,
        names=names,
        variables=(("beta", (dim,)),),
        log_prior=log_prior,
        log_likelihood=log_likelihood,
        options={"data": data, "prior_sd": float(prior_sd)},
        compiled=lazy_paths(KERNELS, "logistic", point_data),
    )


def beta_bernoulli(
    data: str | None = None, successes: int = 7, trials: int = 20, a: float = 1.0, b: float = 1.0
) -> Target:
    """Conjugate Beta-Bernoulli, sampled on the logit scale; ``theta`` reported."""
    if data is not None:
        _, table = read_csv(data)
        y = _binary_outcome(table[:, -1], data)
        successes, trials = int(y.sum()), int(y.size)
    if not (0 <= successes <= trials) or a <= 0 or b <= 0:
        raise UsageError(f"need 0 <= successes <= trials and a, b > 0 (got {successes}, {trials}, {a}, {b})")
    k, n = int(successes), int(trials)
    A, B = a + k, b + n - k  # posterior Beta(A, B)

    def log_density(z: np.ndarray) -> np.ndarray:
        return A * _log_expit(z[:, 0]) + B * _log_expit(-z[:, 0])

    def grad(z: np.ndarray) -> np.ndarray:
        t = _expit(z)
        return A * (1.0 - t) - B * t

    def log_prior(z: np.ndarray) -> np.ndarray:
        return a * _log_expit(z[:, 0]) + b * _log_expit(-z[:, 0])

    def log_likelihood(z: np.ndarray) -> np.ndarray:
        return k * _log_expit(z[:, 0]) + (n - k) * _log_expit(-z[:, 0])

    mean = A / (A + B)
    sd = np.sqrt(A * B / ((A + B) ** 2 * (A + B + 1.0)))

    def quantile(u: np.ndarray) -> np.ndarray:  # on the logit scale: the logit of the Beta(A, B) quantile
        from scipy.special import betaincinv, logit  # start-up: SciPy's special functions only when drawn

        return logit(betaincinv(A, B, u))

    return KnownQuantile(
        quantile_fn=quantile,
        name="beta-bernoulli",
        dim=1,
        log_density=log_density,
        grad_log_density=grad,
        names=("theta",),
        variables=(("theta", ()),),
        mean=np.array([mean]),
        sd=np.array([sd]),
        log_prior=log_prior,
        log_likelihood=log_likelihood,
        transform=_expit,
        options={"data": data, "successes": k, "trials": n, "a": float(a), "b": float(b)},
    )


def eight_schools() -> Target:
    """Non-centred eight schools, sampled as ``(mu, log tau, theta_tilde)``; reports ``mu, tau, theta``."""
    y, sigma = EIGHT_Y, EIGHT_SIGMA
    J = y.size

    def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return x[:, 0], x[:, 1], x[:, 2:]

    def log_prior(x: np.ndarray) -> np.ndarray:
        mu, log_tau, tt = split(x)
        tau = np.exp(log_tau)
        # N(0, 25) on mu; half-Cauchy(0, 5) on tau with the Jacobian d tau / d log tau = tau.
        return -(mu**2) / 50.0 - np.log1p((tau / 5.0) ** 2) + log_tau - 0.5 * (tt**2).sum(axis=1)

    def log_likelihood(x: np.ndarray) -> np.ndarray:
        mu, log_tau, tt = split(x)
        theta = mu[:, None] + np.exp(log_tau)[:, None] * tt
        return -0.5 * (((y - theta) / sigma) ** 2).sum(axis=1)

    def log_density(x: np.ndarray) -> np.ndarray:
        # Fused (one pass) rather than log_prior + log_likelihood: slice
        # sampling calls this tens of times per iteration.
        mu, log_tau, tt = x[:, 0], x[:, 1], x[:, 2:]
        tau = np.exp(log_tau)
        r = (y - mu[:, None] - tau[:, None] * tt) / sigma
        return -(mu**2) / 50.0 - np.log1p((tau / 5.0) ** 2) + log_tau - 0.5 * ((tt**2).sum(axis=1) + (r**2).sum(axis=1))

    def value_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu, log_tau, tt = split(x)
        tau = np.exp(log_tau)
        theta = mu[:, None] + tau[:, None] * tt
        r = (y - theta) / sigma**2  # d loglik / d theta
        value = (
            -(mu**2) / 50.0
            - np.log1p((tau / 5.0) ** 2)
            + log_tau
            - 0.5 * (tt**2).sum(axis=1)
            - 0.5 * (((y - theta) / sigma) ** 2).sum(axis=1)
        )
        g = np.empty_like(x)
        g[:, 0] = -mu / 25.0 + r.sum(axis=1)
        q = (tau / 5.0) ** 2
        g[:, 1] = -2.0 * q / (1.0 + q) + 1.0 + tau * (r * tt).sum(axis=1)
        g[:, 2:] = -tt + tau[:, None] * r
        return value, g

    def grad(x: np.ndarray) -> np.ndarray:
        return value_and_grad(x)[1]

    def transform(x: np.ndarray) -> np.ndarray:
        mu, tau = x[..., :1], np.exp(x[..., 1:2])
        return np.concatenate([mu, tau, mu + tau * x[..., 2:]], axis=-1)

    variables = (("mu", ()), ("tau", ()), ("theta", (J,)))
    mean, sd = (a.copy() for a in eight_schools_moments())
    return Target(
        name="eight-schools",
        dim=J + 2,
        log_density=log_density,
        grad_log_density=grad,
        value_and_grad_fn=value_and_grad,
        names=flat_names(variables),
        variables=variables,
        mean=mean,
        sd=sd,
        log_prior=log_prior,
        log_likelihood=log_likelihood,
        transform=transform,
        options={},
        compiled=lazy_paths(KERNELS, "eight_schools", (y, sigma)),
    )


@lru_cache(maxsize=4)
def eight_schools_moments(n_grid: int = 4001) -> tuple[np.ndarray, np.ndarray]:
    """Exact posterior mean and sd of ``(mu, tau, theta_1..8)`` by quadrature over ``log tau``.

    Given ``tau``: ``w_j = 1 / (sigma_j^2 + tau^2)``, ``V_mu = 1 / (sum w_j + 1/25)``,
    ``mu_hat = V_mu sum w_j y_j``, ``p(tau | y) ∝ p(tau) sqrt(V_mu prod w_j)
    exp(-(sum w_j y_j^2 - mu_hat^2 / V_mu) / 2)``; ``theta_j | tau, y`` has mean
    ``(tau^2 y_j + sigma_j^2 mu_hat) / (sigma_j^2 + tau^2)`` and variance
    ``V_j + (sigma_j^2 / (sigma_j^2 + tau^2))^2 V_mu`` with ``V_j = sigma_j^2 tau^2 / (sigma_j^2 + tau^2)``.
    The trapezoid rule on a fine grid of ``log tau`` over ``[-25, 12]`` is
    accurate far beyond Monte Carlo error (the integrand vanishes at both ends): 4001
    points agree with 200 001 to 1e-13 and cost 2 ms of every ``mcmc sample -t
    eight-schools`` (40 001 cost 25 ms, twice: the command and its run block each build
    the target). Cached: the arrays returned are shared, copy before changing them.
    """
    y, s2 = EIGHT_Y, EIGHT_SIGMA**2
    log_tau = np.linspace(-25.0, 12.0, n_grid)
    tau2 = np.exp(2.0 * log_tau)[:, None]
    w = 1.0 / (s2 + tau2)
    v_mu = 1.0 / (w.sum(axis=1) + 1.0 / 25.0)
    mu_hat = v_mu * (w * y).sum(axis=1)
    log_post = (
        -np.log1p(tau2[:, 0] / 25.0)
        + log_tau  # Jacobian: the grid is in log tau
        + 0.5 * (np.log(v_mu) + np.log(w).sum(axis=1))
        - 0.5 * ((w * y**2).sum(axis=1) - mu_hat**2 / v_mu)
    )
    p = np.exp(log_post - log_post.max())
    dx = log_tau[1] - log_tau[0]
    p /= np.trapezoid(p, dx=dx)

    def expect(f: np.ndarray) -> np.ndarray:
        return np.trapezoid(p[:, None] * f, dx=dx, axis=0)

    shrink = s2 / (s2 + tau2)
    theta_mean = (tau2 * y + s2 * mu_hat[:, None]) / (s2 + tau2)
    theta_var = s2 * tau2 / (s2 + tau2) + shrink**2 * v_mu[:, None]
    tau = np.sqrt(tau2)
    m1 = expect(np.column_stack([mu_hat, tau, theta_mean]))
    m2 = expect(np.column_stack([v_mu + mu_hat**2, tau2, theta_var + theta_mean**2]))
    return m1, np.sqrt(m2 - m1**2)
