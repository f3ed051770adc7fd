"""A Gaussian-process regression written as the model's own prior and its likelihood.

The latent function values ``f`` at ``X`` have the prior ``N(0, K)`` with a
squared-exponential kernel (``prior_cov``); the observations are
``y ~ N(f, NOISE^2 I)`` (``log_likelihood``). ``mcmc sample -t
gp_regression.py -s elliptical-slice`` moves on the ellipses of this prior,
as Murray, Adams & MacKay (2010) define the method, and evaluates only the
likelihood. The posterior is Gaussian, known exactly (``exact_moments``),
which tests/core/test_target_hooks.py checks the draws against.
"""

import numpy as np

X = np.linspace(0.0, 4.0, 8)
Y = np.array([0.1, 0.9, 1.1, 0.4, -0.5, -1.0, -0.6, 0.2])
NOISE = 0.3
LENGTH, AMPLITUDE = 1.0, 1.0

dim = 8
variables = [("f", (8,))]
prior_cov = AMPLITUDE**2 * np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / LENGTH**2) + 1e-8 * np.eye(8)


def log_likelihood(f):
    return -0.5 * np.sum((Y - f) ** 2, axis=1) / NOISE**2


def exact_moments():
    """Posterior mean and sd of f: K (K + s^2 I)^-1 y and the diagonal of K - K (K + s^2 I)^-1 K."""
    k = prior_cov
    gain = k @ np.linalg.inv(k + NOISE**2 * np.eye(8))
    cov = k - gain @ k
    return gain @ Y, np.sqrt(np.diag(cov))
