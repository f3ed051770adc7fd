"""A JAX target with a known posterior, for every sampler that takes a density (docs/formats.md, "JAX targets").

``x ~ N(10, 2^2 I)``, ``y_i ~ N(x, I)`` for five points in three dimensions:
the posterior is normal, its coordinates independent (``MEAN``, ``SD``). Written
as prior and likelihood of one point in ``jax.numpy`` (two-stage
Metropolis-Hastings uses them; the log density is their sum), away from zero
so the log-normal proposal's positive support holds. Gibbs blocks draw from the
exact conditionals: one block here (``hmc-gibbs`` moves the rest by HMC), every
coordinate in ``by_gibbs`` (``conjugate_jax.py:by_gibbs`` for ``gibbs``).
"""

import jax.numpy as jnp
import numpy as np

OFFSET, PRIOR_SD = 10.0, 2.0
Y = OFFSET + 0.5 + np.random.default_rng(7).standard_normal((5, 3))
PRECISION = 1.0 / PRIOR_SD**2 + len(Y)
MEAN = (OFFSET / PRIOR_SD**2 + Y.sum(axis=0)) / PRECISION
SD = np.full(3, PRECISION**-0.5)

dim = 3
names = ["a", "b", "c"]


def log_prior(x):
    return -0.5 * jnp.sum(((x - OFFSET) / PRIOR_SD) ** 2)


def log_likelihood(x):
    return -0.5 * jnp.sum((x - Y) ** 2)


def initial_point(rng, chains):
    return OFFSET + rng.normal((dim,))


def draw_conditional(rng, x, block, noise):
    x[:, block] = MEAN[block] + SD[block] * rng.normal((len(block),))


conditional_blocks = [[2]]


class by_gibbs:  # noqa: N801 - the name a user writes after the colon
    dim, names = dim, names
    log_prior, log_likelihood, initial_point, draw_conditional = log_prior, log_likelihood, initial_point, draw_conditional
    conditional_blocks = [[0], [1], [2]]
