"""A target file with its own proposal and envelope bound: exact rejection sampling in eight dimensions.

The target: eight independent standard logistic coordinates,
``p(x) = prod_i e^-x_i / (1 + e^-x_i)^2`` (mean 0, sd ``pi / sqrt 3``). The
proposal ``q``: eight independent Laplace coordinates of scale ``S = 1.5``,
``exp(-|x_i| / S) / (2 S)``, drawn as the difference of two exponentials.
Per coordinate, ``log p - log q`` is largest at ``|x| = log 5`` (where
``2 / (1 + e^|x|) = 1 - 1 / S``), where it equals
``log 3 - (log 5) / 3 - 2 log(6 / 5) = 0.1975``: so ``p <= k q`` with
``log k`` eight times that, ``log_bound`` below, the smallest bound there is.
The acceptance rate is ``1 / k = 0.206`` (both densities are normalised).
``mcmc sample -t envelope.py -s rejection`` is then exact, where an envelope
learnt in warm-up from a few hundred points would not be in eight dimensions.
"""

import numpy as np

DIM = 8
S = 1.5
dim = DIM
MEAN = np.zeros(DIM)
SD = np.full(DIM, np.pi / np.sqrt(3.0))


def log_density(x):
    return np.sum(-x - 2.0 * np.log1p(np.exp(-x)), axis=1)


def proposal_sample(rng):
    e = rng.exponential((DIM, 2))
    return S * (e[..., 0] - e[..., 1])


def proposal_log_density(x):
    return np.sum(-np.abs(x) / S - np.log(2.0 * S), axis=1)


log_bound = DIM * (np.log(3.0) - np.log(5.0) / 3.0 - 2.0 * np.log(6.0 / 5.0))
