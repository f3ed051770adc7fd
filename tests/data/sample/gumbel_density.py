"""A one-dimensional target given by its log density only: the standard Gumbel distribution.

``p(x) = exp(-(x + exp(-x)))``, CDF ``exp(-exp(-x))``, quantile
``-log(-log u)``; mean Euler's gamma, sd ``pi / sqrt(6)``. Without
``quantile(u)``, ``mcmc sample -t gumbel_density.py -s inverse-cdf`` inverts
the CDF numerically; ``gumbel_quantile.py`` gives the quantile
(tests/core/test_independent.py compares both with the exact quantiles).
"""

import numpy as np

dim = 1
names = ["x"]


def log_density(x):
    return -(x[:, 0] + np.exp(-x[:, 0]))


def exact_cdf(x):
    return np.exp(-np.exp(-x))


MEAN = np.euler_gamma
SD = np.pi / np.sqrt(6.0)
