"""posteriordb ``low_dim_gauss_mix-low_dim_gauss_mix`` written in JAX, for one point (the model of
``low_dim_gauss_mix.py``).

``y ~ theta normal(mu[0], sigma[0]) + (1 - theta) normal(mu[1], sigma[1])``,
``mu`` ordered, ``mu, sigma ~ normal(0, 2)``, ``theta ~ beta(5, 5)``; sampling
space ``(mu[0], log(mu[1] - mu[0]), log sigma[0], log sigma[1], logit theta)``,
Jacobians included. ``log_density(x)`` of one point, no gradient
(``docs/formats.md``, "JAX targets").
"""

import json
import os
from pathlib import Path

import jax
import jax.numpy as jnp

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
y = jnp.asarray(json.loads((_DIR / "low_dim_gauss_mix.json").read_text())["y"], dtype=float)

dim = 5
variables = [("mu", (2,)), ("sigma", (2,)), ("theta", ())]


def log_density(x):
    mu1 = x[0]
    mu2 = mu1 + jnp.exp(x[1])
    sigma1, sigma2 = jnp.exp(x[2]), jnp.exp(x[3])
    log_theta, log_1m_theta = -jnp.logaddexp(0.0, -x[4]), -jnp.logaddexp(0.0, x[4])
    a = log_theta - x[2] - 0.5 * ((y - mu1) / sigma1) ** 2
    b = log_1m_theta - x[3] - 0.5 * ((y - mu2) / sigma2) ** 2
    prior = (-0.5 * (mu1**2 + mu2**2) / 4.0 - 0.5 * (sigma1**2 + sigma2**2) / 4.0
             + 4.0 * (log_theta + log_1m_theta))
    log_jacobian = x[1] + x[2] + x[3] + log_theta + log_1m_theta
    return jnp.sum(jnp.logaddexp(a, b)) + prior + log_jacobian


def transform(x):
    return jnp.stack([x[0], x[0] + jnp.exp(x[1]), jnp.exp(x[2]), jnp.exp(x[3]), jax.nn.sigmoid(x[4])])
