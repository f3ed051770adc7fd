"""posteriordb ``gp_pois_regr-gp_pois_regr`` as in ``gp_pois_regr.py``, written as one compiled point function.

The same model, transforms, data and gradient (through the Cholesky factor,
``dL = L Phi(L^-1 dK L^-T)``, Murray 2016) as ``gp_pois_regr.py``, for one
point in ``@numba.njit`` code, so that ``mcmc sample -s hmc`` runs whole
trajectories compiled (``mcmc.core.compiled``). A kernel matrix that
is not numerically positive definite gives ``-inf``, as there.
"""

import json
import os
from pathlib import Path

import numba
import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "gp_pois_regr.json").read_text())
X = np.asarray(_data["x"], dtype=float)
K = np.asarray(_data["k"], dtype=float)
N = X.size
SQ = (X[:, None] - X[None, :]) ** 2

dim = N + 2
variables = [("rho", ()), ("alpha", ()), ("f", (N,))]


@numba.njit(cache=True)
def _factor(u_rho, u_alpha):
    rho, alpha = np.exp(u_rho), np.exp(u_alpha)
    k0 = alpha**2 * np.exp(-SQ / (2.0 * rho**2))
    a = k0 + 1e-10 * np.eye(N)
    # Cholesky by hand: a failure (not positive definite) is a NaN here, not an exception
    L = np.zeros((N, N))
    for j in range(N):
        s = a[j, j]
        for m in range(j):
            s -= L[j, m] ** 2
        if not s > 0.0:
            L[:, :] = np.nan
            return rho, alpha, k0, L
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, N):
            t = a[i, j]
            for m in range(j):
                t -= L[i, m] * L[j, m]
            L[i, j] = t / L[j, j]
    return rho, alpha, k0, L


@numba.njit(cache=True)
def point_log_density_and_grad(x):
    rho, alpha, k0, L = _factor(x[0], x[1])
    g = np.zeros(dim)
    if not np.isfinite(L[0, 0]):
        return -np.inf, g
    ft = x[2:].copy()
    f = L @ ft
    lp = 24.0 * x[0] - 4.0 * rho - alpha**2 / 8.0 - 0.5 * np.sum(ft**2) + np.sum(K * f - np.exp(f)) + x[0] + x[1]
    gf = K - np.exp(f)
    g[2:] = L.T @ gf - ft
    linv = np.linalg.inv(L)
    for col in range(2):
        dk = k0 * SQ / rho**2 if col == 0 else 2.0 * k0  # dK / d log rho, d log alpha
        a = linv @ dk @ linv.T
        for i in range(N):  # Phi: the lower triangle, the diagonal halved
            a[i, i] *= 0.5
            for j in range(i + 1, N):
                a[i, j] = 0.0
        dl = L @ a
        g[col] = gf @ (dl @ ft)
    g[0] += 24.0 - 4.0 * rho + 1.0
    g[1] += -alpha**2 / 4.0 + 1.0
    return lp, g


def transform(x):
    out = np.empty((x.shape[0], 2 + N))
    for i, row in enumerate(np.asarray(x, dtype=float)):
        rho, alpha, _, L = _factor(row[0], row[1])
        out[i, 0], out[i, 1], out[i, 2:] = rho, alpha, L @ row[2:]
    return out
