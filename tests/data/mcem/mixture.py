"""A two-component Gaussian mixture with unknown means, for `mcmc sample --target mixture.py --mcem`.

y_i ~ 0.5 N(mu_0, 1) + 0.5 N(mu_1, 1), i = 1..60. The latent z_i in {0, 1} is the
component of y_i (stored as a float); theta = (mu_0, mu_1). Given theta the z_i
are independent Bernoulli draws (one Gibbs block, drawn exactly), and the exact
EM step is closed form: responsibilities, then weighted means
(tests/core/test_mcem.py checks Monte Carlo EM against it).
"""

import numpy as np

Y = np.array([
    -1.37, -2.62, -0.94, -0.97, 2.13, 1.95, -2.01, -1.00, 1.45, 2.32, 3.35, 1.88, -2.07, 1.44, 1.06,
    -0.21, 1.99, -1.37, 0.89, 1.72, 2.52, 2.26, 0.01, 0.61, -1.08, 0.84, -1.11, -1.48, 0.44, -0.99,
    0.08, -1.04, 1.02, 1.47, 2.72, 1.92, 0.78, -1.10, 1.45, 0.67, 1.99, -1.08, -0.33, 1.03, -1.03,
    1.53, -1.03, 0.38, -0.89, 2.64, -1.73, -1.23, 1.82, 0.28, -2.30, -0.63, -1.05, 2.39, 2.26, -1.48,
])

latent_dim = Y.size            # one component label per observation
parameters = ["mu_0", "mu_1"]  # the unknown means
theta0 = [-0.5, 0.5]           # where EM starts


def log_joint(z, theta):
    """log p(y, z | theta) up to a constant: each y_i's normal term in its component; -inf unless z is 0/1."""
    mu = np.where(z > 0.5, theta[1], theta[0])
    lp = -0.5 * np.sum((Y - mu) ** 2, axis=1)
    return np.where(np.all((z == 0.0) | (z == 1.0), axis=1), lp, -np.inf)


def grad_theta(z, theta):
    """Gradient in (mu_0, mu_1), per row of z."""
    return np.column_stack([((Y - theta[0]) * (z < 0.5)).sum(axis=1), ((Y - theta[1]) * (z > 0.5)).sum(axis=1)])


def initial_latent(rng, chains):
    return (rng.uniform((latent_dim,)) < 0.5).astype(float)


conditional_blocks = [list(range(Y.size))]  # given theta the labels are independent


def sweep_noise(rng):
    return rng.uniform((latent_dim,))


def draw_conditional(rng, z, block, noise, theta):
    """z_i = 1 with probability N(y_i | mu_1, 1) / (N(y_i | mu_0, 1) + N(y_i | mu_1, 1))."""
    log_odds = -0.5 * ((Y - theta[1]) ** 2 - (Y - theta[0]) ** 2)
    z[:, block] = (noise[:, block] < 1.0 / (1.0 + np.exp(-log_odds))).astype(float)
