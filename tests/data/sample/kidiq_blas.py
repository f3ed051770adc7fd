"""A kidiq regression whose density goes through BLAS matrix products (``r @ x``): issue 29, class 2.

``kid_score ~ normal(beta[0] + beta[1] * mom_iq, sigma)``, ``sigma ~ cauchy+(0, 2.5)``,
sampled in ``(beta[0], beta[1], log sigma)``, as ``bench/posteriordb/kidiq_kidscore_momiq.py``
but written the way users write NumPy: the sums over data points are matrix-vector products,
which OpenBLAS rounds differently with the number of rows in the batch (row ``i`` of
``r @ v`` for 8 chains is not, to the last bit, row ``i`` for 4). Run with ``--chains 8``,
``--first-chain`` or ``--scheduler local:2``, it must still write the same bytes.

Data: the first 40 children of posteriordb's ``kidiq`` (``tests/data/posteriordb/kidiq.json``;
stan-dev/posteriordb, BSD-3), inlined so the file travels alone to a Dask worker.
"""

import numpy as np

_score = np.array([
    65, 98, 85, 83, 115, 98, 69, 106, 102, 95,
    91, 58, 84, 78, 102, 110, 102, 99, 105, 101,
    102, 115, 100, 87, 99, 96, 72, 78, 77, 98,
    69, 130, 109, 106, 92, 100, 107, 86, 90, 110,
], dtype=float)
_iq = np.array([
    121.12, 89.36, 115.44, 99.45, 92.75, 107.9, 138.89, 125.15,
    81.62, 95.07, 88.58, 94.86, 88.96, 114.11, 100.53, 120.42,
    114.43, 111.59, 133.85, 97.26, 110.1, 126.72, 97.91, 99.93,
    97.6, 121.75, 98.75, 97.92, 80.36, 114.31, 109.14, 101.82,
    117.97, 108.63, 96.53, 92.87, 95.9, 107.02, 87.2, 89.36,
])
_ones = np.ones(_score.size)
_N = _score.size

dim = 3
variables = [("beta", (2,)), ("sigma", ())]


def _resid(x):
    return _score - x[:, :1] - x[:, 1:2] * _iq, np.exp(x[:, 2])


def log_density(x):
    r, sigma = _resid(x)
    s2 = (sigma / 2.5) ** 2
    return -_N * x[:, 2] - 0.5 * ((r * r) @ _ones) / sigma**2 - np.log1p(s2) + x[:, 2]


def grad_log_density(x):
    r, sigma = _resid(x)
    inv_var = 1.0 / sigma**2
    s2 = (sigma / 2.5) ** 2
    return np.column_stack([
        (r @ _ones) * inv_var,
        (r @ _iq) * inv_var,
        -_N + ((r * r) @ _ones) * inv_var - 2.0 * s2 / (1.0 + s2) + 1.0,
    ])


def initial_point(rng, chains):
    return np.column_stack([rng.normal(()) * 5 + 25, rng.normal(()) * 0.1 + 0.6, rng.normal(()) * 0.3 + 2.8])


def transform(x):
    return np.column_stack([x[:, 0], x[:, 1], np.exp(x[:, 2])])
