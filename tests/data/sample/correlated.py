"""A user target for `mcmc sample --target correlated.py`: a correlated 2-D Gaussian.

Defines what `mcmc sample` looks for: ``dim``, ``log_density(x)`` vectorized over
the leading (chain) axis, and optionally ``grad_log_density(x)`` and ``names``.
"""

import numpy as np

dim = 2
names = ["a", "b"]
_PRECISION = np.linalg.inv(np.array([[1.0, 0.8], [0.8, 1.0]]))


def log_density(x):
    return -0.5 * np.einsum("ij,jk,ik->i", x, _PRECISION, x)


def grad_log_density(x):
    return -x @ _PRECISION
