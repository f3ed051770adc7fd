"""posteriordb ``arK-arK`` (an AR(5) model) as an ``mcmc`` user target.

Stan model (posteriordb ``arK.stan``)::

    parameters { real alpha; array[K] real beta; real<lower=0> sigma; }
    model { alpha ~ normal(0, 10); beta ~ normal(0, 10); sigma ~ cauchy(0, 2.5);
            for (t in (K + 1):T) y[t] ~ normal(alpha + sum_k beta[k] * y[t - k], sigma); }

Sampling space ``(alpha, beta[0..K-1], log sigma)`` (Jacobian included);
reported ``alpha``, ``beta``, ``sigma``. Data: ``arK.json`` in
``$MCMC_POSTERIORDB_DATA`` (default ``tests/data/posteriordb/``).
"""

import json
import os
from pathlib import Path

import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "arK.json").read_text())
_K, _T = int(_data["K"]), int(_data["T"])
_y = np.asarray(_data["y"], dtype=float)
# Lagged design: row i (time t = K + i, 0-based) holds 1, y[t-1], ..., y[t-K].
_Z = np.column_stack([np.ones(_T - _K)] + [_y[_K - k : _T - k] for k in range(1, _K + 1)])
_obs = _y[_K:]
_n = _obs.size

dim = _K + 2
variables = [("alpha", ()), ("beta", (_K,)), ("sigma", ())]


def log_density(x):
    coef, u = x[:, : _K + 1], x[:, _K + 1]
    sigma = np.exp(u)
    r = _obs - coef @ _Z.T
    return (-0.5 * np.sum(coef**2, axis=1) / 100.0 - _n * u - 0.5 * np.sum(r**2, axis=1) / sigma**2
            - np.log1p((sigma / 2.5) ** 2) + u)


def grad_log_density(x):
    coef, u = x[:, : _K + 1], x[:, _K + 1]
    sigma = np.exp(u)
    r = _obs - coef @ _Z.T
    inv_var = 1.0 / sigma**2
    s2 = (sigma / 2.5) ** 2
    g = np.empty_like(x)
    g[:, : _K + 1] = -coef / 100.0 + (r @ _Z) * inv_var[:, None]
    g[:, _K + 1] = -_n + np.sum(r**2, axis=1) * inv_var - 2.0 * s2 / (1.0 + s2) + 1.0
    return g


def transform(x):
    return np.column_stack([x[:, : _K + 1], np.exp(x[:, _K + 1])])
