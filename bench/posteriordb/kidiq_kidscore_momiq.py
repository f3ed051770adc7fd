"""posteriordb ``kidiq-kidscore_momiq`` as an ``mcmc`` user target.

Stan model (posteriordb ``kidscore_momiq.stan``)::

    parameters { vector[2] beta; real<lower=0> sigma; }
    model { sigma ~ cauchy(0, 2.5);
            kid_score ~ normal(beta[1] + beta[2] * mom_iq, sigma); }

Sampling space ``(beta[0], beta[1], log sigma)`` (Jacobian ``log sigma``
included); reported ``beta``, ``sigma``. Data: ``kidiq.json`` in
``$MCMC_POSTERIORDB_DATA`` (default ``tests/data/posteriordb/``).
"""

import json
import os
from pathlib import Path

import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "kidiq.json").read_text())
_score = np.asarray(_data["kid_score"], dtype=float)
_iq = np.asarray(_data["mom_iq"], dtype=float)
_N = _score.size

dim = 3
variables = [("beta", (2,)), ("sigma", ())]


def _resid(x):
    sigma = np.exp(x[:, 2])
    r = _score - x[:, :1] - x[:, 1:2] * _iq
    return r, sigma


def log_density(x):
    r, sigma = _resid(x)
    s2 = (sigma / 2.5) ** 2
    return -_N * x[:, 2] - 0.5 * np.sum(r**2, axis=1) / sigma**2 - np.log1p(s2) + x[:, 2]


def grad_log_density(x):
    r, sigma = _resid(x)
    inv_var = 1.0 / sigma**2
    s2 = (sigma / 2.5) ** 2
    return np.column_stack([
        r.sum(axis=1) * inv_var,
        (r @ _iq) * inv_var,
        -_N + np.sum(r**2, axis=1) * inv_var - 2.0 * s2 / (1.0 + s2) + 1.0,
    ])


def transform(x):
    return np.column_stack([x[:, 0], x[:, 1], np.exp(x[:, 2])])
