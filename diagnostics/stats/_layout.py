"""How draws are laid out for the statistics: ``(chain, draw, n)`` in, ``(n, chain, draw)`` blocks inside.

Every statistic of :mod:`mcmc.diagnostics.stats` works on contiguous float64
blocks with the parameters first and the draws last, so that each per-chain
reduction, sort and FFT runs along memory.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_draws", "flat", "split_chains", "to_block"]


def to_block(x: np.ndarray) -> np.ndarray:
    """``(chain, draw, n)`` -> contiguous float64 ``(n, chain, draw)``.

    Draws last and contiguous so that every per-chain reduction and FFT runs
    along memory, and sums are formed in the same order as ArviZ's (which sees
    one ``(chain, draw)`` slice at a time).
    """
    x = np.asarray(x)
    if x.ndim != 3:
        raise ValueError(f"expected draws of shape (chain, draw, n), got shape {x.shape}")
    if x.shape[0] < 1:
        raise ValueError("expected at least one chain")
    return np.ascontiguousarray(np.moveaxis(x, -1, 0), dtype=np.float64)


def split_chains(b: np.ndarray) -> np.ndarray:
    """Split each chain into its first and last halves: ``(n, C, D)`` -> ``(n, 2C, D // 2)``.

    With an odd number of draws the middle draw is dropped (ArviZ, posterior,
    CmdStan). With an even number the result is a view, halves interleaved
    (chain 0 first half, chain 0 second half, ...); ArviZ stacks all first
    halves, then all second halves. Every statistic here is symmetric in the
    sequences, so the order changes only the rounding of sums over them.
    """
    n, c, d = b.shape
    half = d // 2
    if d % 2 == 0 and b.flags.c_contiguous:
        return b.reshape(n, 2 * c, half)
    return np.concatenate((b[..., :half], b[..., d - half :]), axis=1)


def flat(b: np.ndarray) -> np.ndarray:
    """``(n, C, D)`` -> ``(n, C * D)`` (a view)."""
    return b.reshape(b.shape[0], b.shape[1] * b.shape[2])


def as_draws(x: np.ndarray) -> np.ndarray:
    """``x`` as float64 draws ``(chain, draw, n)``; a ``ValueError`` for any other number of axes."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"expected draws of shape (chain, draw, n), got shape {x.shape}")
    return x
