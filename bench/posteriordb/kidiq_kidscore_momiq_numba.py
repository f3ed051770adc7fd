"""posteriordb ``kidiq-kidscore_momiq`` as in ``kidiq_kidscore_momiq.py``, compiled.

The same model, sampling space, data and reported names (imported from that
file); the log density and gradient written as one ``@numba.njit`` point
function (``docs/formats.md``, "Compiled targets").
"""

import runpy
from pathlib import Path

import numba
import numpy as np

_m = runpy.run_path(str(Path(__file__).with_name("kidiq_kidscore_momiq.py")))  # the NumPy file: model, data, transforms
dim, variables, transform = _m["dim"], _m["variables"], _m["transform"]
SCORE, IQ = _m["_score"], _m["_iq"]


@numba.njit(cache=True)
def point_log_density_and_grad(x):
    b0, b1, u = x[0], x[1], x[2]
    inv_var = np.exp(-2.0 * u)
    s2 = np.exp(2.0 * u) / 6.25
    ss = sr = sri = 0.0
    for i in range(SCORE.size):
        r = SCORE[i] - b0 - b1 * IQ[i]
        ss += r * r
        sr += r
        sri += r * IQ[i]
    n = SCORE.size
    lp = -n * u - 0.5 * ss * inv_var - np.log1p(s2) + u
    g = np.empty(3)
    g[0] = sr * inv_var
    g[1] = sri * inv_var
    g[2] = -n + ss * inv_var - 2.0 * s2 / (1.0 + s2) + 1.0
    return lp, g
