"""A user target with a Gibbs block: a normal model with unknown mean and precision.

``y_i ~ N(mu, 1/tau)``, ``mu | tau ~ N(M0, 1/(K0 tau))``, ``tau ~ Gamma(A, B)``
(the normal-gamma conjugate prior). ``mcmc sample -t normal_gamma.py -s hmc-gibbs``
draws ``tau`` exactly from its full conditional, a gamma, and moves ``mu`` by
HMC. The exact posterior is normal-gamma (see ``exact_moments``), which is
what ``tests/core/test_hmc_within_gibbs.py`` checks the run against.
"""

import numpy as np
from scipy.special import gammaincinv

Y = np.array([2.1, 0.4, 1.7, 3.0, 1.2, 2.6, 0.9, 1.8, 2.3, 1.5])
M0, K0, A, B = 0.0, 0.5, 2.0, 1.0
N = Y.size

dim = 2
names = ["mu", "tau"]


def initial_point(rng, chains):
    z = rng.normal((2,))
    return np.column_stack([Y.mean() + 2.0 * z[:, 0], np.exp(0.5 * z[:, 1])])


def _sq(mu):
    return ((Y[None, :] - mu[:, None]) ** 2).sum(axis=1)


def log_density(x):
    mu, tau = x[:, 0], x[:, 1]
    safe = np.where(tau > 0, tau, 1.0)
    lp = (A - 1.0 + 0.5 * (N + 1)) * np.log(safe) - B * safe - 0.5 * safe * (K0 * (mu - M0) ** 2 + _sq(mu))
    return np.where(tau > 0, lp, -np.inf)


def grad_log_density(x):
    mu, tau = x[:, 0], x[:, 1]
    safe = np.where(tau > 0, tau, 1.0)
    g_mu = -safe * (K0 * (mu - M0) - (Y[None, :] - mu[:, None]).sum(axis=1))
    g_tau = (A - 1.0 + 0.5 * (N + 1)) / safe - B - 0.5 * (K0 * (mu - M0) ** 2 + _sq(mu))
    return np.column_stack([g_mu, g_tau])


# Gibbs: one block, the precision (coordinate 1); HMC moves the rest (mu).
conditional_blocks = [[1]]


def sweep_noise(rng):
    return rng.uniform((1,))  # one uniform per chain: the gamma draw by inverse CDF


def draw_conditional(rng, x, block, noise):
    mu = x[:, 0]
    shape = A + 0.5 * (N + 1)
    rate = B + 0.5 * (K0 * (mu - M0) ** 2 + _sq(mu))
    u = noise[:, 0] + 2.0**-54  # in (0, 1): gammaincinv(shape, 0) would be 0
    x[:, 1] = gammaincinv(shape, u) / rate


def exact_moments():
    """Posterior mean and sd of ``(mu, tau)``: normal-gamma with updated parameters."""
    kn = K0 + N
    mn = (K0 * M0 + Y.sum()) / kn
    an = A + 0.5 * N
    bn = B + 0.5 * ((Y - Y.mean()) ** 2).sum() + K0 * N * (Y.mean() - M0) ** 2 / (2.0 * kn)
    mean = np.array([mn, an / bn])
    sd = np.array([np.sqrt(bn / (kn * (an - 1.0))), np.sqrt(an) / bn])
    return mean, sd
