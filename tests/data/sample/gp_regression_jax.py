"""``gp_regression.py`` written in JAX: the model's Gaussian prior (``prior_cov``) and its likelihood of one point.

``mcmc`` writes the prior's log density in jax.numpy from ``prior_cov``; ``-s elliptical-slice`` moves on the
prior's ellipses and evaluates only the likelihood. The posterior is Gaussian (``exact_moments``).
"""

import jax.numpy as jnp
import numpy as np

X = np.linspace(0.0, 4.0, 8)
Y = np.array([0.1, 0.9, 1.1, 0.4, -0.5, -1.0, -0.6, 0.2])
NOISE = 0.3
LENGTH, AMPLITUDE = 1.0, 1.0

dim = 8
variables = [("f", (8,))]
prior_cov = AMPLITUDE**2 * np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / LENGTH**2) + 1e-8 * np.eye(8)


def log_likelihood(f):
    return -0.5 * jnp.sum((Y - f) ** 2) / NOISE**2


def exact_moments():
    """Posterior mean and sd of f: K (K + s^2 I)^-1 y and the diagonal of K - K (K + s^2 I)^-1 K."""
    k = prior_cov
    gain = k @ np.linalg.inv(k + NOISE**2 * np.eye(8))
    cov = k - gain @ k
    return gain @ Y, np.sqrt(np.diag(cov))
