"""posteriordb ``garch-garch11`` as in ``garch11.py``, written as one compiled point function.

The same model, transforms and data as ``garch11.py``; here the variance
recursion runs forward in a loop and its gradient by the adjoint recursion
backward (``lambda_t = dlp/dv_t + beta1 lambda_{t+1}``), O(T) per point, in
``@numba.njit`` code. ``mcmc sample`` then runs whole HMC trajectories in
compiled code (``mcmc.core.compiled``): no Python per leapfrog step.
"""

import json
import os
from pathlib import Path

import numba
import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "garch.json").read_text())
Y = np.asarray(_data["y"], dtype=float)
V0 = float(_data["sigma1"]) ** 2

dim = 4
variables = [("mu", ()), ("alpha0", ()), ("alpha1", ()), ("beta1", ())]


@numba.njit(cache=True)
def _expit(u):
    return 0.5 * (1.0 + np.tanh(0.5 * u))


@numba.njit(cache=True)
def _log1pexp(u):
    return max(u, 0.0) + np.log1p(np.exp(-abs(u)))


@numba.njit(cache=True)
def point_log_density_and_grad(x):
    mu, u0, u1, u2 = x[0], x[1], x[2], x[3]
    a0, s1, s2 = np.exp(u0), _expit(u1), _expit(u2)
    a1, b1 = s1, (1.0 - s1) * s2
    n = Y.size
    v = np.empty(n)
    e = Y - mu
    v[0] = V0
    for t in range(1, n):
        v[t] = a0 + a1 * e[t - 1] ** 2 + b1 * v[t - 1]
    lp = u0 - _log1pexp(-u1) - 2.0 * _log1pexp(u1) - _log1pexp(-u2) - _log1pexp(u2)
    d_mu = 0.0
    for t in range(n):
        lp -= 0.5 * (np.log(v[t]) + e[t] ** 2 / v[t])
        d_mu += e[t] / v[t]
    d_a0 = d_a1 = d_b1 = 0.0
    lam = 0.0
    for t in range(n - 1, 0, -1):  # adjoint of the recursion: total d lp / d v_t
        lam = (-0.5 / v[t] + 0.5 * e[t] ** 2 / v[t] ** 2) + b1 * lam
        d_a0 += lam
        d_a1 += lam * e[t - 1] ** 2
        d_b1 += lam * v[t - 1]
        d_mu -= lam * 2.0 * a1 * e[t - 1]
    ds1 = s1 * (1.0 - s1)
    g = np.empty(4)
    g[0] = d_mu
    g[1] = d_a0 * a0 + 1.0
    g[2] = (d_a1 - d_b1 * s2) * ds1 + 1.0 - 3.0 * s1
    g[3] = d_b1 * (1.0 - s1) * s2 * (1.0 - s2) + 1.0 - 2.0 * s2
    return lp, g


def transform(x):
    mu, u0, u1, u2 = x.T
    s1, s2 = _expit(u1), _expit(u2)
    return np.column_stack([mu, np.exp(u0), s1, (1.0 - s1) * s2])
