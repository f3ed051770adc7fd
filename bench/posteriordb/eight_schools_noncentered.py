"""posteriordb ``eight_schools-eight_schools_noncentered`` as an ``mcmc`` user target.

Stan model (posteriordb ``eight_schools_noncentered.stan``)::

    parameters { vector[J] theta_trans; real mu; real<lower=0> tau; }
    transformed parameters { vector[J] theta = theta_trans * tau + mu; }
    model { theta_trans ~ normal(0, 1); y ~ normal(theta, sigma);
            mu ~ normal(0, 5); tau ~ cauchy(0, 5); }

Sampling space, as Stan's: ``(theta_trans[0..7], mu, log tau)``; the log
density includes the Jacobian ``log tau``. Reported: ``theta`` (the
transformed parameter), ``mu``, ``tau``, as in the reference draws.
Data: ``$MCMC_POSTERIORDB_DATA/eight_schools.json`` (default: the copy in
``tests/data/posteriordb/``).

    mcmc sample -t bench/posteriordb/eight_schools_noncentered.py -s nuts
"""

import json
import os
from pathlib import Path

import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "eight_schools.json").read_text())
_y = np.asarray(_data["y"], dtype=float)
_sigma = np.asarray(_data["sigma"], dtype=float)
_J = int(_data["J"])

dim = _J + 2
variables = [("theta", (_J,)), ("mu", ()), ("tau", ())]


def _unpack(x):
    tt, mu, u = x[:, :_J], x[:, _J], x[:, _J + 1]
    tau = np.exp(u)
    return tt, mu, u, tau


def log_density(x):
    tt, mu, u, tau = _unpack(x)
    theta = tt * tau[:, None] + mu[:, None]
    return (-0.5 * np.sum(tt**2, axis=1) - 0.5 * np.sum(((_y - theta) / _sigma) ** 2, axis=1)
            - 0.5 * (mu / 5.0) ** 2 - np.log1p((tau / 5.0) ** 2) + u)


def grad_log_density(x):
    tt, mu, u, tau = _unpack(x)
    theta = tt * tau[:, None] + mu[:, None]
    r = (_y - theta) / _sigma**2
    g = np.empty_like(x)
    g[:, :_J] = -tt + r * tau[:, None]
    g[:, _J] = r.sum(axis=1) - mu / 25.0
    t2 = (tau / 5.0) ** 2
    g[:, _J + 1] = tau * np.sum(r * tt, axis=1) - 2.0 * t2 / (1.0 + t2) + 1.0
    return g


def transform(x):
    tt, mu, u, tau = _unpack(x)
    return np.column_stack([tt * tau[:, None] + mu[:, None], mu, tau])
