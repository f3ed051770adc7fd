"""A user target given only by its Gibbs blocks: a bivariate normal with correlation 0.8.

``x ~ N(MEAN, [[1, 0.8 * 2], [0.8 * 2, 4]])``, written as two blocks, each
coordinate drawn from its conditional normal. ``mcmc sample -t
bivariate_gibbs.py -s gibbs`` sweeps the blocks in turn; ``-P scan=random``
picks one at random per update (tests/core/test_gibbs_scan.py).
"""

import numpy as np

MEAN = np.array([1.0, -2.0])
SD = np.array([1.0, 2.0])
RHO = 0.8

dim = 2
names = ["a", "b"]


def log_density(x):
    z = (x - MEAN) / SD
    return -0.5 * (z[:, 0] ** 2 - 2 * RHO * z[:, 0] * z[:, 1] + z[:, 1] ** 2) / (1 - RHO**2)


conditional_blocks = [[0], [1]]


def sweep_noise(rng):
    return rng.normal((2,))  # one normal per block and chain


def draw_conditional(rng, x, block, noise):
    i = int(block[0])
    j = 1 - i
    mean = MEAN[i] + RHO * SD[i] / SD[j] * (x[:, j] - MEAN[j])
    x[:, i] = mean + SD[i] * np.sqrt(1 - RHO**2) * noise[:, i]
