"""A user target written as one numba-compiled point function (docs/formats.md): a Gaussian with known moments."""

import numba
import numpy as np

dim = 3
names = ["a", "b", "c"]
MU = np.array([1.0, -2.0, 0.5])
SD = np.array([1.0, 2.0, 0.1])


@numba.njit(cache=True)
def point_log_density_and_grad(x):
    z = (x - MU) / SD
    return -0.5 * np.sum(z * z), -z / SD
