"""The standard Gumbel distribution with its quantile function: ``mcmc sample -s inverse-cdf`` draws through it.

``quantile(u) = -log(-log u)``: each draw is exact (Robert & Casella 2004,
lemma 2.4). The same density as ``gumbel_density.py``, which has no quantile.
"""

import numpy as np

dim = 1
names = ["x"]


def log_density(x):
    return -(x[:, 0] + np.exp(-x[:, 0]))


def quantile(u):
    return -np.log(-np.log(u))
