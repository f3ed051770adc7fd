"""posteriordb ``gp_pois_regr-gp_pois_regr`` written in JAX, for one point (the model of ``gp_pois_regr.py``).

``f = cholesky(K(x; alpha, rho) + 1e-10 I) f_tilde``, ``k ~ poisson_log(f)``,
``rho ~ gamma(25, 4)``, ``alpha ~ normal(0, 2)``, ``f_tilde ~ normal(0, 1)``;
sampling space ``(log rho, log alpha, f_tilde[0..N-1])``, Jacobians
included; reported ``rho``, ``alpha``, ``f``. The gradient through the
Cholesky factor is JAX's (the NumPy file writes Murray's 2016 formula by
hand). ``log_density(x)`` of one point (``docs/formats.md``, "JAX targets").
"""

import json
import os
from pathlib import Path

import jax.numpy as jnp
from jax.scipy.linalg import cholesky

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "gp_pois_regr.json").read_text())
xs = jnp.asarray(_data["x"], dtype=float)
k = jnp.asarray(_data["k"], dtype=float)
N = xs.size
SQ = (xs[:, None] - xs[None, :]) ** 2

dim = N + 2
variables = [("rho", ()), ("alpha", ()), ("f", (N,))]


def _f(x):
    rho, alpha, f_tilde = jnp.exp(x[0]), jnp.exp(x[1]), x[2:]
    K = alpha**2 * jnp.exp(-SQ / (2.0 * rho**2)) + 1e-10 * jnp.eye(N)
    return rho, alpha, f_tilde, cholesky(K, lower=True) @ f_tilde


def log_density(x):
    rho, alpha, f_tilde, f = _f(x)
    lp = (24.0 * x[0] - 4.0 * rho - alpha**2 / 8.0 - 0.5 * jnp.sum(f_tilde**2) + jnp.sum(k * f - jnp.exp(f))
          + x[0] + x[1])
    return jnp.where(jnp.isnan(lp), -jnp.inf, lp)  # a covariance not positive definite: outside the support


def transform(x):
    rho, alpha, _, f = _f(x)
    return jnp.concatenate([jnp.stack([rho, alpha]), f])
