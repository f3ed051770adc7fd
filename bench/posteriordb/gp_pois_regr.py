"""posteriordb ``gp_pois_regr-gp_pois_regr`` as an ``mcmc`` user target.

Stan model (posteriordb ``gp_pois_regr.stan``)::

    parameters { real<lower=0> rho; real<lower=0> alpha; vector[N] f_tilde; }
    transformed parameters { f = cholesky_decompose(gp_exp_quad_cov(x, alpha, rho)
                                                    + diag_matrix(rep_vector(1e-10, N))) * f_tilde; }
    model { rho ~ gamma(25, 4); alpha ~ normal(0, 2); f_tilde ~ normal(0, 1); k ~ poisson_log(f); }

Sampling space ``(log rho, log alpha, f_tilde[0..N-1])`` (Jacobians
included); reported ``rho``, ``alpha``, ``f``. The gradient through the
Cholesky factor uses ``dL = L Phi(L^-1 dK L^-T)``, ``Phi`` the lower
triangle with a halved diagonal (Murray 2016, "Differentiation of the
Cholesky decomposition", arXiv:1602.07527). Data: ``gp_pois_regr.json``
in ``$MCMC_POSTERIORDB_DATA`` (default ``tests/data/posteriordb/``).
"""

import json
import os
from pathlib import Path

import numpy as np

_DIR = Path(os.environ.get("MCMC_POSTERIORDB_DATA", Path(__file__).resolve().parents[2] / "tests/data/posteriordb"))
_data = json.loads((_DIR / "gp_pois_regr.json").read_text())
_x = np.asarray(_data["x"], dtype=float)
_k = np.asarray(_data["k"], dtype=float)
_N = _x.size
_SQ = (_x[:, None] - _x[None, :]) ** 2
_JITTER = 1e-10 * np.eye(_N)

dim = _N + 2
variables = [("rho", ()), ("alpha", ()), ("f", (_N,))]


def _cholesky(K):
    """Batched Cholesky factors; NaN for a matrix that is not numerically positive definite."""
    try:
        return np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        out = np.full_like(K, np.nan)
        for i, k in enumerate(K):
            try:
                out[i] = np.linalg.cholesky(k)
            except np.linalg.LinAlgError:
                pass
        return out


def _parts(x):
    rho, alpha = np.exp(x[:, 0]), np.exp(x[:, 1])
    ft = x[:, 2:]
    K0 = alpha[:, None, None] ** 2 * np.exp(-_SQ / (2.0 * rho[:, None, None] ** 2))
    L = _cholesky(K0 + _JITTER)
    f = np.einsum("nij,nj->ni", L, ft)
    return rho, alpha, ft, K0, L, f


def log_density(x):
    rho, alpha, ft, K0, L, f = _parts(x)
    lp = (24.0 * x[:, 0] - 4.0 * rho - alpha**2 / 8.0 - 0.5 * np.sum(ft**2, axis=1)
          + np.sum(_k * f - np.exp(f), axis=1) + x[:, 0] + x[:, 1])
    return np.where(np.isnan(lp), -np.inf, lp)


def _phi(A):
    out = np.tril(A)
    idx = np.arange(A.shape[-1])
    out[:, idx, idx] *= 0.5
    return out


def grad_log_density(x):
    rho, alpha, ft, K0, L, f = _parts(x)
    gf = _k - np.exp(f)  # d lp / d f
    g = np.empty_like(x)
    g[:, 2:] = np.einsum("nji,nj->ni", L, gf) - ft
    Linv = np.linalg.inv(L) if np.all(np.isfinite(L)) else np.full_like(L, np.nan)
    for col, dK in ((0, K0 * _SQ / rho[:, None, None] ** 2), (1, 2.0 * K0)):  # dK / d log rho, d log alpha
        dL = L @ _phi(Linv @ dK @ np.swapaxes(Linv, 1, 2))
        g[:, col] = np.einsum("ni,nij,nj->n", gf, dL, ft)
    g[:, 0] += 24.0 - 4.0 * rho + 1.0
    g[:, 1] += -alpha**2 / 4.0 + 1.0
    return g


def transform(x):
    rho, alpha, ft, K0, L, f = _parts(x)
    return np.column_stack([rho, alpha, f])
