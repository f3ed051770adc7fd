"""posteriordb ``low_dim_gauss_mix-low_dim_gauss_mix`` as an ``mcmc`` user target.

Stan model (posteriordb ``low_dim_gauss_mix.stan``)::

    parameters { ordered[2] mu; array[2] real<lower=0> sigma; real<lower=0, upper=1> theta; }
    model { sigma ~ normal(0, 2); mu ~ normal(0, 2); theta ~ beta(5, 5);
            y[n] ~ log_mix(theta, normal(mu[1], sigma[1]), normal(mu[2], sigma[2])); }

Sampling space, with Stan's transforms: ``(mu[0], log(mu[1] - mu[0]),
log sigma[0], log sigma[1], logit theta)``, Jacobians included. Reported
``mu``, ``sigma``, ``theta``. Data: ``low_dim_gauss_mix.json`` in
``$MCMC_POSTERIORDB_DATA`` (default ``tests/data/posteriordb/``).
"""

import json
import os
from pathlib import Path

import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "low_dim_gauss_mix.json").read_text())
_y = np.asarray(_data["y"], dtype=float)

dim = 5
variables = [("mu", (2,)), ("sigma", (2,)), ("theta", ())]


def _parts(x):
    m1 = x[:, 0]
    d = np.exp(x[:, 1])
    m2 = m1 + d
    s1, s2 = np.exp(x[:, 2]), np.exp(x[:, 3])
    theta = 0.5 * (1.0 + np.tanh(0.5 * x[:, 4]))
    log_t, log_1mt = -np.logaddexp(0.0, -x[:, 4]), -np.logaddexp(0.0, x[:, 4])
    z1 = (_y - m1[:, None]) / s1[:, None]
    z2 = (_y - m2[:, None]) / s2[:, None]
    a = log_t[:, None] - x[:, 2:3] - 0.5 * z1**2
    b = log_1mt[:, None] - x[:, 3:4] - 0.5 * z2**2
    lse = np.logaddexp(a, b)
    prior = (-0.5 * (m1**2 + m2**2) / 4.0 - 0.5 * (s1**2 + s2**2) / 4.0 + 4.0 * (log_t + log_1mt)
             + x[:, 1] + x[:, 2] + x[:, 3] + log_t + log_1mt)  # last five: Jacobians
    return m1, m2, d, s1, s2, theta, z1, z2, a, lse, prior


def log_density(x):
    *_, lse, prior = _parts(x)
    return np.sum(lse, axis=1) + prior


def grad_log_density(x):
    m1, m2, d, s1, s2, theta, z1, z2, a, lse, prior = _parts(x)
    w = np.exp(a - lse)  # responsibility of component 1
    g_m1 = np.sum(w * z1, axis=1) / s1 - m1 / 4.0
    g_m2 = np.sum((1.0 - w) * z2, axis=1) / s2 - m2 / 4.0
    g_s1 = np.sum(w * (z1**2 - 1.0), axis=1) / s1 - s1 / 4.0
    g_s2 = np.sum((1.0 - w) * (z2**2 - 1.0), axis=1) / s2 - s2 / 4.0
    # d/d logit(theta) of sum(log mix) is sum(w - theta); prior beta(5, 5) and Jacobian: 5 - 10 theta
    g_t = np.sum(w, axis=1) - _y.size * theta + 5.0 - 10.0 * theta
    return np.column_stack([g_m1 + g_m2, g_m2 * d + 1.0, g_s1 * s1 + 1.0, g_s2 * s2 + 1.0, g_t])


def transform(x):
    m1 = x[:, 0]
    return np.column_stack([m1, m1 + np.exp(x[:, 1]), np.exp(x[:, 2]), np.exp(x[:, 3]),
                            0.5 * (1.0 + np.tanh(0.5 * x[:, 4]))])
