"""Point functions of the built-in models, compiled: HMC's trajectories on them run without Python per step.

Each is ``point(x, data) -> (log density, gradient)`` for one point, the
NumPy density of :mod:`mcmc.core.targets.models` written as loops for numba
(:mod:`mcmc.core.compiled`), and tested equal to it
(``tests/core/test_model_kernels.py``). On a 4-chain run of eight schools a NumPy
leapfrog step costs tens of microseconds of array calls (the model's and
the integrator's); compiled, a whole path costs about as much as one of them.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def eight_schools(x, data):  # noqa: ANN001, ANN201
    """Non-centred eight schools at ``x = (mu, log tau, theta_tilde (J,))``; ``data = (y, sigma)``."""
    y, sigma = data
    mu, log_tau = x[0], x[1]
    tau = np.exp(log_tau)
    q = (tau / 5.0) ** 2
    lp = -(mu * mu) / 50.0 - np.log1p(q) + log_tau
    g = np.empty(x.shape[0])
    g_mu = -mu / 25.0
    g_lt = -2.0 * q / (1.0 + q) + 1.0
    for j in range(y.shape[0]):
        tt = x[2 + j]
        z = (y[j] - (mu + tau * tt)) / sigma[j]
        r = z / sigma[j]  # d loglik / d theta_j
        lp -= 0.5 * (tt * tt + z * z)
        g_mu += r
        g_lt += tau * r * tt
        g[2 + j] = -tt + tau * r
    g[0], g[1] = g_mu, g_lt
    return lp, g


@njit(cache=True)
def logistic(beta, data):  # noqa: ANN001, ANN201
    """Logistic regression at coefficients ``beta (p,)``; ``data = (X (n, p), y (n,), prior variance, constant)``."""
    X, y, s2, const = data
    n, p = X.shape
    g = np.empty(p)
    lp = const
    for j in range(p):
        g[j] = -beta[j] / s2
        lp -= 0.5 * beta[j] * beta[j] / s2
    for i in range(n):
        eta = 0.0
        for j in range(p):
            eta += X[i, j] * beta[j]
        lp += y[i] * eta - (max(eta, 0.0) + np.log1p(np.exp(-abs(eta))))  # log(1 + e^eta), stably
        e = np.exp(-abs(eta))
        prob = 1.0 / (1.0 + e) if eta >= 0 else e / (1.0 + e)
        for j in range(p):
            g[j] += (y[i] - prob) * X[i, j]
    return lp, g
