"""Parameters in blocks, on a small thread pool: how every batched statistic scales to many parameters.

:mod:`mcmc.diagnostics.stats` and the statistics built beside it
(:mod:`~mcmc.diagnostics.stats.quantile_ess`, :mod:`~mcmc.diagnostics.stats.nested_rhat`,
:mod:`~mcmc.diagnostics.stats.emcee_tau`) compute each parameter independently, so
they cut ``(chain, draw, n)`` draws into blocks of parameters, which bounds
the temporaries, and run the blocks on threads when the input is large.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["BLOCK_DRAWS", "THREAD_MIN_DRAWS", "map_blocks", "workers"]

#: Parameters are processed in blocks of at most this many draws in all, which
#: bounds the temporaries (a few arrays of 2 MB) whatever the number of parameters.
#: Larger blocks cost more than they save: temporaries past glibc's mmap threshold
#: are mapped and unmapped on every operation, and the page faults showed up as
#: half a second of system time on 4 x 1000 x 1000 draws.
BLOCK_DRAWS = 1 << 18
#: Below this many draws in all, one thread: a pool would cost more than it saves.
THREAD_MIN_DRAWS = 1 << 18


def workers() -> int:
    """Threads for the blocks: the CPUs this process may use, at most 4."""
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # not on Linux
        return max(1, min(4, os.cpu_count() or 1))


def map_blocks(x: np.ndarray, compute):
    """``compute(block)`` for blocks ``x[:, :, i:j]`` of parameters, in order.

    Blocks run on a small thread pool when the input is large: NumPy releases
    the GIL in sorts, FFTs and ufunc loops, and every parameter is computed
    independently, so the results do not depend on the blocking.
    """
    x = np.asarray(x)
    if x.ndim != 3:
        raise ValueError(f"expected draws of shape (chain, draw, n), got shape {x.shape}")
    n, per_param = x.shape[2], max(1, x.shape[0] * x.shape[1])
    threads = workers() if n * per_param >= THREAD_MIN_DRAWS else 1
    step = max(1, min(BLOCK_DRAWS // per_param, -(-n // threads)))
    blocks = [x[:, :, i : i + step] for i in range(0, n, step)] or [x]
    if threads > 1 and len(blocks) > 1:
        # start-up: concurrent.futures (7 ms) only for inputs large enough to split
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(threads, len(blocks))) as pool:
            return list(pool.map(compute, blocks))
    return [compute(b) for b in blocks]
