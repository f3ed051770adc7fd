"""posteriordb ``garch-garch11`` written in JAX, for one point (the model of ``garch11.py``).

``y[t] ~ normal(mu, sigma[t])``, ``sigma[t]^2 = alpha0 + alpha1 (y[t-1] - mu)^2
+ beta1 sigma[t-1]^2`` from ``sigma1``, with ``alpha0 > 0``, ``alpha1`` in
``(0, 1)``, ``beta1`` in ``(0, 1 - alpha1)``; sampling space ``(mu, log alpha0,
logit alpha1, logit(beta1 / (1 - alpha1)))``, Jacobian included. The
recursion is a ``lax.scan``: the model as written in Stan, where the NumPy
file needs a closed form to vectorize over chains. ``log_density(x)`` of one
point, no gradient (``docs/formats.md``, "JAX targets").
"""

import json
import os
from pathlib import Path

import jax
import jax.numpy as jnp

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "garch.json").read_text())
y = jnp.asarray(_data["y"], dtype=float)
v0 = float(_data["sigma1"]) ** 2

dim = 4
variables = [("mu", ()), ("alpha0", ()), ("alpha1", ()), ("beta1", ())]


def log_density(x):
    mu, u0, u1, u2 = x[0], x[1], x[2], x[3]
    alpha0, s1, s2 = jnp.exp(u0), jax.nn.sigmoid(u1), jax.nn.sigmoid(u2)
    alpha1, beta1 = s1, (1.0 - s1) * s2
    e = y - mu

    def step(v, e_prev):
        v = alpha0 + alpha1 * e_prev**2 + beta1 * v
        return v, v

    _, rest = jax.lax.scan(step, v0, e[:-1])
    v = jnp.concatenate([jnp.array([v0]), rest])
    # log |d(alpha0, alpha1, beta1) / d(u0, u1, u2)| = u0 + log s1 + 2 log(1 - s1) + log s2 + log(1 - s2)
    log_jacobian = (u0 - jnp.logaddexp(0.0, -u1) - 2.0 * jnp.logaddexp(0.0, u1) - jnp.logaddexp(0.0, -u2)
                    - jnp.logaddexp(0.0, u2))
    return -0.5 * jnp.sum(jnp.log(v) + e**2 / v) + log_jacobian


def transform(x):
    s1, s2 = jax.nn.sigmoid(x[2]), jax.nn.sigmoid(x[3])
    return jnp.stack([x[0], jnp.exp(x[1]), s1, (1.0 - s1) * s2])
