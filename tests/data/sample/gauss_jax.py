"""A user target written in JAX for one point (docs/formats.md, "JAX targets"): a Gaussian with known moments.

The same density as ``gauss_numba.py``; no gradient (``jax.grad`` makes it), no ``backend`` line (the import
of jax says it).
"""

import jax.numpy as jnp
import numpy as np

dim = 3
names = ["a", "b", "c"]
MU = np.array([1.0, -2.0, 0.5])
SD = np.array([1.0, 2.0, 0.1])


def log_density(x):
    z = (x - MU) / SD
    return -0.5 * jnp.sum(z * z)
