"""Counter-based random numbers for the compiled LDA kernels.

Kernels do not use numba's ``np.random`` (a hidden per-thread global state).
Each sweep receives a 64-bit ``key`` drawn from the chain's explicit
``numpy.random.Generator`` (:func:`draw_key`), and the uniform used for token
``i`` is SplitMix64 (Steele, Lea & Flood 2014) evaluated at counter ``i``:
``mix64(key + (i + 1) * 0x9E3779B97F4A7C15) >> 11`` scaled to [0, 1). That is
exactly the SplitMix64 stream started at ``key`` read at position ``i``, so the
kernels need no random state, a token's uniform does not depend on which thread
handles its document (same seed, same bytes, for any number of threads), and
no buffer of N uniforms is written and read back every sweep. Gamma variates
for the Dirichlet draws (:func:`gamma_variate`, Marsaglia & Tsang 2000) read
the stream of their own key from counter ``cell << CELL_SHIFT`` on, one cell
per (word, topic) or (document, topic).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 1.0 / 9007199254740992.0


@njit(cache=True, nogil=True, inline="always")
def uniform(key: np.uint64, counter: np.int64) -> float:
    """Uniform on [0, 1): SplitMix64 started at ``key``, read at ``counter``."""
    x = key + np.uint64(counter + 1) * _GOLDEN
    x = (x ^ (x >> _S30)) * _MIX1
    x = (x ^ (x >> _S27)) * _MIX2
    x = x ^ (x >> _S31)
    return np.float64(x >> _S11) * _TWO_M53


@njit(cache=True, nogil=True)
def uniforms(key: np.uint64, start: np.int64, n: np.int64) -> np.ndarray:
    """``n`` uniforms of the stream ``key`` from ``start`` on (for tests)."""
    out = np.empty(n)
    for j in range(n):
        out[j] = uniform(key, start + j)
    return out


CELL_SHIFT = 20  # a Dirichlet cell's uniforms are counters (cell << 20) + j, j < 2**20


@njit(cache=True, nogil=True)
def gamma_variate(shape: float, key: np.uint64, counter: np.int64) -> float:
    """Gamma(shape, 1) from the uniforms ``(key, counter), (key, counter + 1), ...``.

    Marsaglia & Tsang (2000) for shape >= 1 (normals by Box-Muller); for
    shape < 1, ``Gamma(shape + 1) * U^(1 / shape)`` (their section 6). Uses a
    few uniforms on average (the acceptance rate is above 0.95).
    """
    boost = 1.0
    a = shape
    if a < 1.0:
        boost = math.exp(math.log(1.0 - uniform(key, counter)) / shape)  # U in (0, 1]
        counter += 1
        a = shape + 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        u1 = 1.0 - uniform(key, counter)
        u2 = uniform(key, counter + 1)
        counter += 2
        x = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - uniform(key, counter)
        counter += 1
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2 or math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v * boost


def draw_key(rng: np.random.Generator) -> np.uint64:
    """A sweep's 64-bit key, uniform over all of ``uint64``, from the chain's Generator."""
    return rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)
