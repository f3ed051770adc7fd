"""A one-dimensional JAX target with known moments, for the samplers of one dimension (``inverse-cdf``).

``x ~ N(1.5, 0.7^2)``, written for one point in ``jax.numpy`` (docs/formats.md, "JAX targets").
"""

import jax.numpy as jnp
import numpy as np

MEAN, SD = np.array([1.5]), np.array([0.7])
dim = 1
names = ["x"]


def log_density(x):
    return -0.5 * jnp.sum(((x - MEAN) / SD) ** 2)
