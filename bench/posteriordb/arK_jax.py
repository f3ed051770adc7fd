"""posteriordb ``arK-arK`` written in JAX, for one point (the model of ``arK.py``).

``y[t] ~ normal(alpha + sum_k beta[k] y[t-k], sigma)`` for ``t > K``,
``alpha, beta ~ normal(0, 10)``, ``sigma ~ cauchy(0, 2.5)``; sampling space
``(alpha, beta[0..K-1], log sigma)``, Jacobian included; reported ``alpha``,
``beta``, ``sigma``. ``log_density(x)`` of one point, no gradient
(``docs/formats.md``, "JAX targets").
"""

import json
import os
from pathlib import Path

import jax.numpy as jnp
import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "arK.json").read_text())
K, T = int(_data["K"]), int(_data["T"])
_y = np.asarray(_data["y"], dtype=float)
# Lagged design: row i (time t = K + i, 0-based) holds 1, y[t-1], ..., y[t-K].
Z = jnp.asarray(np.column_stack([np.ones(T - K)] + [_y[K - k : T - k] for k in range(1, K + 1)]))
obs = jnp.asarray(_y[K:])

dim = K + 2
variables = [("alpha", ()), ("beta", (K,)), ("sigma", ())]


def log_density(x):
    coef, log_sigma = x[: K + 1], x[K + 1]
    sigma = jnp.exp(log_sigma)
    r = obs - Z @ coef
    return (-0.5 * jnp.sum(coef**2) / 100.0 - obs.size * log_sigma - 0.5 * jnp.sum(r**2) / sigma**2
            - jnp.log1p((sigma / 2.5) ** 2) + log_sigma)


def transform(x):
    return jnp.concatenate([x[: K + 1], jnp.exp(x[K + 1 :])])
