"""Beta(2, 5) on (0, 1), by its log density only: a bounded support for numerical inversion (-inf outside)."""

import numpy as np

dim = 1
names = ["p"]


def initial_point(rng, chains):
    return rng.uniform((1,))


def log_density(x):
    p = x[:, 0]
    inside = (p > 0) & (p < 1)
    safe = np.where(inside, p, 0.5)
    return np.where(inside, np.log(safe) + 4 * np.log1p(-safe), -np.inf)
