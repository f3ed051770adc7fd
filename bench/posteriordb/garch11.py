"""posteriordb ``garch-garch11`` (a GARCH(1,1) model) as an ``mcmc`` user target.

Stan model (posteriordb ``garch11.stan``)::

    parameters { real mu; real<lower=0> alpha0; real<lower=0, upper=1> alpha1;
                 real<lower=0, upper=(1 - alpha1)> beta1; }
    model { sigma[1] = sigma1;
            sigma[t] = sqrt(alpha0 + alpha1 * square(y[t - 1] - mu) + beta1 * square(sigma[t - 1]));
            y ~ normal(mu, sigma); }

Sampling space, with Stan's transforms: ``(mu, log alpha0, logit alpha1,
logit(beta1 / (1 - alpha1)))``, Jacobians included; flat priors as in the
Stan program. Reported ``mu``, ``alpha0``, ``alpha1``, ``beta1``.

The variance recursion ``v_t = alpha0 + alpha1 e_{t-1}^2 + beta1 v_{t-1}``
is linear in ``v``, so ``v = beta1^t v_0 + P c`` with ``P[t, s] = beta1^(t-s)``
(``s <= t``): a matrix product per chain instead of a Python loop over
time, and its derivatives are products with the same ``P``. Data:
``garch.json`` in ``$MCMC_POSTERIORDB_DATA`` (default ``tests/data/posteriordb/``).
"""

import json
import os
from pathlib import Path

import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "garch.json").read_text())
_y = np.asarray(_data["y"], dtype=float)
_T = _y.size
_v0 = float(_data["sigma1"]) ** 2
_t = np.arange(_T, dtype=float)
_D = _t[:, None] - _t[None, :]  # t - s
_LOWER = (_D >= 0) & (_t[None, :] >= 1)  # s in 1..t: the terms of the sum

dim = 4
variables = [("mu", ()), ("alpha0", ()), ("alpha1", ()), ("beta1", ())]


def _expit(u):
    return 0.5 * (1.0 + np.tanh(0.5 * u))


def _parts(x):
    mu, u0, u1, u2 = x.T
    a0, s1, s2 = np.exp(u0), _expit(u1), _expit(u2)
    a1, b1 = s1, (1.0 - s1) * s2
    e = _y - mu[:, None]  # (n, T)
    shifted = np.zeros_like(e)
    shifted[:, 1:] = e[:, :-1]  # e_{t-1}
    c = np.where(_t >= 1, a0[:, None] + a1[:, None] * shifted**2, 0.0)
    P = np.where(_LOWER, np.exp(_D * np.log(b1)[:, None, None]), 0.0)  # (n, T, T)
    v = np.exp(_t * np.log(b1)[:, None]) * _v0 + np.einsum("nts,ns->nt", P, c)
    return mu, u0, u1, u2, a0, a1, b1, s1, s2, e, shifted, c, P, v


def _log_jacobian(u0, u1, u2):
    # log|d(alpha0, alpha1, beta1)/d(u0, u1, u2)| = u0 + log s1 + 2 log(1 - s1) + log s2 + log(1 - s2)
    return u0 - np.logaddexp(0.0, -u1) - 2.0 * np.logaddexp(0.0, u1) - np.logaddexp(0.0, -u2) - np.logaddexp(0.0, u2)


def log_density(x):
    mu, u0, u1, u2, a0, a1, b1, s1, s2, e, shifted, c, P, v = _parts(x)
    return -0.5 * np.sum(np.log(v) + e**2 / v, axis=1) + _log_jacobian(u0, u1, u2)


def grad_log_density(x):
    mu, u0, u1, u2, a0, a1, b1, s1, s2, e, shifted, c, P, v = _parts(x)
    w = -0.5 / v + 0.5 * e**2 / v**2  # d lp / d v_t
    q = np.einsum("nt,nts->ns", w, P)  # w' P
    ones = (_t >= 1).astype(float)
    d_a0 = q @ ones
    d_a1 = np.sum(q * shifted**2, axis=1)
    d_mu = np.sum(e / v, axis=1) + np.sum(q * (-2.0 * a1[:, None] * shifted), axis=1)
    d_b1 = (np.sum(w * _t * np.exp((_t - 1.0) * np.log(b1)[:, None]), axis=1) * _v0
            + np.einsum("nt,nts,ns->n", w, _D * P, c) / b1)
    ds1 = s1 * (1.0 - s1)
    return np.column_stack([
        d_mu,
        d_a0 * a0 + 1.0,
        (d_a1 - d_b1 * s2) * ds1 + 1.0 - 3.0 * s1,
        d_b1 * (1.0 - s1) * s2 * (1.0 - s2) + 1.0 - 2.0 * s2,
    ])


def transform(x):
    mu, u0, u1, u2 = x.T
    s1, s2 = _expit(u1), _expit(u2)
    return np.column_stack([mu, np.exp(u0), s1, (1.0 - s1) * s2])
