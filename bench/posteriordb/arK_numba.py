"""posteriordb ``arK-arK`` as in ``arK.py``, compiled.

The same model, sampling space, data and reported names (imported from that
file, with its lagged design matrix); the log density and gradient written as
one ``@numba.njit`` point function (``docs/formats.md``, "Compiled targets").
"""

import runpy
from pathlib import Path

import numba
import numpy as np

_m = runpy.run_path(str(Path(__file__).with_name("arK.py")))  # the NumPy file: model, data, transforms
dim, variables, transform = _m["dim"], _m["variables"], _m["transform"]
Z, OBS = np.ascontiguousarray(_m["_Z"]), _m["_obs"]


@numba.njit(cache=True)
def point_log_density_and_grad(x):
    n, m = Z.shape  # m = K + 1 coefficients
    u = x[m]
    inv_var = np.exp(-2.0 * u)
    s2 = np.exp(2.0 * u) / 6.25
    g = np.zeros(m + 1)
    ss = 0.0
    for i in range(n):
        r = OBS[i]
        for k in range(m):
            r -= Z[i, k] * x[k]
        ss += r * r
        for k in range(m):
            g[k] += Z[i, k] * r
    lp = -n * u - 0.5 * ss * inv_var - np.log1p(s2) + u
    for k in range(m):
        lp -= 0.5 * x[k] * x[k] / 100.0
        g[k] = g[k] * inv_var - x[k] / 100.0
    g[m] = -n + ss * inv_var - 2.0 * s2 / (1.0 + s2) + 1.0
    return lp, g
