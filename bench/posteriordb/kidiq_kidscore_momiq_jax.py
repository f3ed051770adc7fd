"""posteriordb ``kidiq-kidscore_momiq`` written in JAX, for one point (the model of ``kidiq_kidscore_momiq.py``).

``kid_score ~ normal(beta[0] + beta[1] mom_iq, sigma)``, ``sigma ~ cauchy(0, 2.5)``
(half, ``<lower=0>``); sampling space ``(beta[0], beta[1], log sigma)``,
Jacobian included; reported ``beta``, ``sigma``. ``log_density(x)`` of one
point, no gradient (``docs/formats.md``, "JAX targets").
"""

import json
import os
from pathlib import Path

import jax.numpy as jnp

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "kidiq.json").read_text())
score = jnp.asarray(_data["kid_score"], dtype=float)
iq = jnp.asarray(_data["mom_iq"], dtype=float)

dim = 3
variables = [("beta", (2,)), ("sigma", ())]


def log_density(x):
    log_sigma = x[2]
    sigma = jnp.exp(log_sigma)
    r = score - x[0] - x[1] * iq
    return -score.size * log_sigma - 0.5 * jnp.sum(r**2) / sigma**2 - jnp.log1p((sigma / 2.5) ** 2) + log_sigma


def transform(x):
    return jnp.stack([x[0], x[1], jnp.exp(x[2])])
