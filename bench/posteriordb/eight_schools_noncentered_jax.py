"""posteriordb ``eight_schools-eight_schools_noncentered`` written in JAX, for one point.

The model of ``eight_schools_noncentered.py`` as a NumPyro or BlackJAX user
writes it: ``log_density(x)`` of one point in ``jax.numpy``, no gradient
(``jax.grad`` makes it). The same sampling space ``(theta_trans[0..7], mu,
log tau)``, Jacobian included, and the same reported ``theta``, ``mu``,
``tau``. ``mcmc sample`` and ``bench/posteriordb_blackjax.py`` both load this
file (``docs/formats.md``, "JAX targets").

    mcmc sample -t bench/posteriordb/eight_schools_noncentered_jax.py -s hmc
"""

import json
import os
from pathlib import Path

import jax.numpy as jnp

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "eight_schools.json").read_text())
y = jnp.asarray(_data["y"], dtype=float)
sigma = jnp.asarray(_data["sigma"], dtype=float)
J = int(_data["J"])

dim = J + 2
variables = [("theta", (J,)), ("mu", ()), ("tau", ())]


def log_density(x):
    theta_trans, mu, log_tau = x[:J], x[J], x[J + 1]
    tau = jnp.exp(log_tau)
    theta = theta_trans * tau + mu
    return (-0.5 * jnp.sum(theta_trans**2) - 0.5 * jnp.sum(((y - theta) / sigma) ** 2) - 0.5 * (mu / 5.0) ** 2
            - jnp.log1p((tau / 5.0) ** 2) + log_tau)


def transform(x):
    theta_trans, mu, tau = x[:J], x[J], jnp.exp(x[J + 1])
    return jnp.concatenate([theta_trans * tau + mu, jnp.stack([mu, tau])])
