"""posteriordb ``eight_schools-eight_schools_noncentered`` as in ``eight_schools_noncentered.py``, compiled.

The same model, sampling space, data and reported names (imported from that
file); the log density and gradient written as one ``@numba.njit`` point
function, so ``mcmc sample -s hmc`` runs whole trajectories compiled
(``docs/formats.md``, "Compiled targets").
"""

import runpy
from pathlib import Path

import numba
import numpy as np

_m = runpy.run_path(str(Path(__file__).with_name("eight_schools_noncentered.py")))  # the NumPy file: model, data, transforms
dim, variables, transform = _m["dim"], _m["variables"], _m["transform"]
Y, SIGMA, J = _m["_y"], _m["_sigma"], _m["_J"]


@numba.njit(cache=True)
def point_log_density_and_grad(x):
    mu, u = x[J], x[J + 1]
    tau = np.exp(u)
    t2 = (tau / 5.0) ** 2
    lp = -0.5 * (mu / 5.0) ** 2 - np.log1p(t2) + u
    g = np.empty(J + 2)
    g_mu = -mu / 25.0
    g_u = 1.0 - 2.0 * t2 / (1.0 + t2)
    for j in range(J):
        tt = x[j]
        r = (Y[j] - (tt * tau + mu)) / SIGMA[j]
        lp -= 0.5 * (tt * tt + r * r)
        r /= SIGMA[j]
        g[j] = -tt + r * tau
        g_mu += r
        g_u += tau * r * tt
    g[J], g[J + 1] = g_mu, g_u
    return lp, g
