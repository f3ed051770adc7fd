"""posteriordb ``low_dim_gauss_mix-low_dim_gauss_mix`` as in ``low_dim_gauss_mix.py``, compiled.

The same model, sampling space, data and reported names (imported from that
file); the log density and gradient written as one ``@numba.njit`` point
function (``docs/formats.md``, "Compiled targets").
"""

import runpy
from pathlib import Path

import numba
import numpy as np

_m = runpy.run_path(str(Path(__file__).with_name("low_dim_gauss_mix.py")))  # the NumPy file: model, data, transforms
dim, variables, transform = _m["dim"], _m["variables"], _m["transform"]
Y = _m["_y"]


@numba.njit(cache=True)
def _log1pexp(u):
    return max(u, 0.0) + np.log1p(np.exp(-abs(u)))


@numba.njit(cache=True)
def point_log_density_and_grad(x):
    m1, ld, l1, l2, v = x[0], x[1], x[2], x[3], x[4]
    d = np.exp(ld)
    m2 = m1 + d
    s1, s2 = np.exp(l1), np.exp(l2)
    theta = 0.5 * (1.0 + np.tanh(0.5 * v))
    log_t, log_1mt = -_log1pexp(-v), -_log1pexp(v)
    lp = (-0.5 * (m1 * m1 + m2 * m2) / 4.0 - 0.5 * (s1 * s1 + s2 * s2) / 4.0 + 4.0 * (log_t + log_1mt)
          + ld + l1 + l2 + log_t + log_1mt)  # last five: Jacobians
    g_m1 = g_m2 = g_s1 = g_s2 = sw = 0.0
    for i in range(Y.size):
        z1 = (Y[i] - m1) / s1
        z2 = (Y[i] - m2) / s2
        a = log_t - l1 - 0.5 * z1 * z1
        b = log_1mt - l2 - 0.5 * z2 * z2
        hi = max(a, b)
        lse = hi + np.log(np.exp(a - hi) + np.exp(b - hi))
        lp += lse
        w = np.exp(a - lse)  # responsibility of component 1
        g_m1 += w * z1
        g_m2 += (1.0 - w) * z2
        g_s1 += w * (z1 * z1 - 1.0)
        g_s2 += (1.0 - w) * (z2 * z2 - 1.0)
        sw += w
    g_m1 = g_m1 / s1 - m1 / 4.0
    g_m2 = g_m2 / s2 - m2 / 4.0
    g_s1 = g_s1 / s1 - s1 / 4.0
    g_s2 = g_s2 / s2 - s2 / 4.0
    g = np.empty(5)
    g[0] = g_m1 + g_m2
    g[1] = g_m2 * d + 1.0
    g[2] = g_s1 * s1 + 1.0
    g[3] = g_s2 * s2 + 1.0
    # d/d logit(theta) of sum(log mix) is sum(w - theta); prior beta(5, 5) and Jacobian: 5 - 10 theta
    g[4] = sw - Y.size * theta + 5.0 - 10.0 * theta
    return lp, g
