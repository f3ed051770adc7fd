"""Ranks, normal scores and order statistics of draws, row by row (one row per parameter).

One ``argsort`` per parameter serves the average ranks of the bulk and of the
folded draws (:func:`folded_order` re-sorts ``|x - median|`` from it in about
linear time), the median, the MAD and the quantiles. Average ranks are
multiples of 1/2, so their normal scores are looked up on a grid
(:func:`blom`) rather than computed per draw. The normal quantile function is
Wichura's AS241 in NumPy, so ``mcmc diagnose`` never imports SciPy.

References
----------
Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.

Blom, G. (1958). *Statistical Estimates and Transformed Beta-Variables*. Wiley.

Wichura, M. J. (1988). Algorithm AS 241: the percentage points of the normal
distribution. *Applied Statistics* 37(3), 477-484.

Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages.
*The American Statistician* 50(4), 361-365.
"""

from __future__ import annotations

import functools

import numpy as np

from mcmc.diagnostics.stats._layout import flat

__all__ = ["blom", "folded_order", "norm_ppf", "rank_scores", "sorted_quantiles", "take_rows", "z_scale"]


# Wichura (1988), algorithm AS241 (PPND16): numerator and denominator
# coefficients, highest power first, of the three rational approximations.
_AS241 = (
    (
        (2.5090809287301226727e3, 3.3430575583588128105e4, 6.7265770927008700853e4, 4.5921953931549871457e4,
         1.3731693765509461125e4, 1.9715909503065514427e3, 1.3314166789178437745e2, 3.3871328727963666080e0),
        (5.2264952788528545610e3, 2.8729085735721942674e4, 3.9307895800092710610e4, 2.1213794301586595867e4,
         5.3941960214247511077e3, 6.8718700749205790830e2, 4.2313330701600911252e1, 1.0),
    ),
    (
        (7.7454501427834140764e-4, 2.2723844989269184583e-2, 2.4178072517745061177e-1, 1.2704582524523683826e0,
         3.6478483247632046050e0, 5.7694972214606914055e0, 4.6303378461565452959e0, 1.4234371107496835773e0),
        (1.0507500716444169e-9, 5.4759380849953449460e-4, 1.5198666563616457197e-2, 1.4810397642748007459e-1,
         6.8976733498510000455e-1, 1.6763848301838038494e0, 2.0531916266377588219e0, 1.0),
    ),
    (
        (2.0103343992922881327e-7, 2.7115555687434875782e-5, 1.2426609473880784386e-3, 2.6532189526576123093e-2,
         2.9656057182850489123e-1, 1.7848265399172913358e0, 5.4637849111641143699e0, 6.6579046435011037772e0),
        (2.0442631033899397856e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5, 7.8686913114561325910e-4,
         1.4875361290850614853e-2, 1.3692988092273580531e-1, 5.9983220655588793769e-1, 1.0),
    ),
)  # fmt: skip


def norm_ppf(p: np.ndarray) -> np.ndarray:
    """Standard normal quantile function for ``0 < p < 1`` (Wichura 1988, AS241; relative error ~1e-16).

    Used instead of ``scipy.special.ndtri`` (which it matches to ~1e-15) so
    that ``mcmc diagnose`` never pays SciPy's import time (~0.4 s).
    """
    p = np.asarray(p, dtype=np.float64)
    q = p - 0.5
    central = np.abs(q) <= 0.425
    with np.errstate(divide="ignore", invalid="ignore"):
        r_tail = np.sqrt(-np.log(np.where(q <= 0, p, 1.0 - p)))
    r = np.where(central, 0.180625 - q * q, np.where(r_tail <= 5.0, r_tail - 1.6, r_tail - 5.0))
    out = np.empty_like(p)
    for k, where in enumerate((central, ~central & (r_tail <= 5.0), ~central & ~(r_tail <= 5.0))):
        num, den = _AS241[k]
        x = r[where]
        pn, pd = np.full_like(x, num[0]), np.full_like(x, den[0])
        for cn, cd in zip(num[1:], den[1:], strict=True):
            pn = pn * x + cn
            pd = pd * x + cd
        out[where] = pn / pd
    out[central] *= q[central]
    out[~central & (q < 0)] *= -1.0
    return out


def take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``np.take_along_axis(a, idx, axis=-1)`` for 2-D arrays, as one flat gather.

    NumPy's ``take_along_axis`` builds broadcast fancy indices; a single
    ``np.take`` with row offsets added is about three times faster, and the
    statistics gather three ``(n, chain * draw)`` arrays per block.
    """
    rows, width = a.shape
    positions = idx + (np.arange(rows, dtype=idx.dtype) * width)[:, None]
    return np.take(a.reshape(-1), positions)


def rank_scores(order: np.ndarray, s: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Scores of the average ranks, given the sorting permutation.

    Parameters
    ----------
    order : ndarray of int, shape (rows, n)
        Row by row, the positions of the data in ascending order (``argsort``).
    s : ndarray, shape (rows, n)
        The data in that order (sorted rows).
    grid : ndarray, shape (2 n - 1,)
        The score of rank ``r`` at ``grid[2 r - 2]``, for ``r = 1, 1.5, ..., n``.

    Returns
    -------
    ndarray, shape (rows, n)
        Scores of the 1-based average ranks (a run of ties gets the mean of its
        positions, ``scipy.stats.rankdata(method="average")``) in the data's
        own positions. Average ranks are multiples of 1/2, so the scores are
        looked up on a grid rather than computed per draw.
    """
    rows, n = s.shape
    # every draw its own rank first: one scatter, no (rows, n) source array
    out = np.empty((rows, n))
    np.put_along_axis(out, order, grid[None, ::2], axis=-1)
    starts = np.empty(s.shape, dtype=bool)
    starts[:, 0] = True
    np.not_equal(s[:, 1:], s[:, :-1], out=starts[:, 1:])
    tied = np.flatnonzero(~starts)  # sorted positions equal to their predecessor: few
    if tied.size:
        # a run of equal values at sorted positions i..j (never across rows, as
        # every row starts a run) gets the rank (i + j) / 2 + 1
        new_run = np.diff(tied, prepend=-2) != 1
        run = np.cumsum(new_run) - 1
        run_first = tied[new_run] - 1
        run_last = tied[np.append(new_run[1:], True)]
        avg = grid[run_first % n + run_last % n]
        # sorted position -> flat position of the draw in out
        flat_order = order.reshape(-1)
        out = out.reshape(-1)
        out[run_first - run_first % n + flat_order[run_first]] = avg
        out[tied - tied % n + flat_order[tied]] = avg[run]
    return out.reshape(rows, n)


def rank_grid(size: int) -> np.ndarray:
    """The average ranks ``1, 1.5, ..., size`` (the grid of :func:`rank_scores`)."""
    return np.arange(2.0, 2.0 * size + 1.0) / 2.0


@functools.lru_cache(maxsize=8)
def blom(size: int) -> np.ndarray:
    """Blom's (1958) normal scores ``Phi^{-1}((r - 3/8) / (size - 3/4 + 1))`` on the rank grid, as ArviZ.

    Cached (read-only): every parameter block of a run shares them.
    """
    c = 3 / 8
    grid = norm_ppf((rank_grid(size) - c) / (size - 2 * c + 1))
    grid.flags.writeable = False
    return grid


def z_scale(a: np.ndarray) -> np.ndarray:
    """Rank-normalize over all chains and draws: ``(n, C, D)`` -> normal scores.

    ``z = Phi^{-1}((r - 3/8) / (S - 3/4 + 1))`` with ``r`` the average rank among
    all ``S = C * D`` draws of the parameter (Blom 1958; Vehtari et al. 2021, eq. 14).
    """
    rows = flat(a)
    order = np.argsort(rows, axis=-1)
    return rank_scores(order, take_rows(rows, order), blom(rows.shape[1])).reshape(a.shape)


def folded_order(order: np.ndarray, s: np.ndarray, med: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort ``|x - med|`` row by row given the sort of ``x``, in about linear time.

    In the order of ``x`` the folded values fall to zero and rise again: a
    descending and an ascending run, which NumPy's stable sort (a run-merging
    timsort) orders in O(n) instead of O(n log n).

    Parameters
    ----------
    order : ndarray of int, shape (rows, n)
        ``argsort(x)`` row by row.
    s : ndarray, shape (rows, n)
        ``x`` sorted row by row.
    med : ndarray, shape (rows,)

    Returns
    -------
    order, sorted_folded
        As :func:`rank_scores` takes them, for ``|x - med|``.
    """
    folded = np.abs(s - med[:, None])
    inner = np.argsort(folded, axis=-1, kind="stable")
    return take_rows(order, inner), take_rows(folded, inner)


def sorted_quantiles(srt: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``np.quantile(srt, probs, axis=-1)`` (linear, type 7) of rows already sorted: ``(len(probs), rows)``.

    NumPy's own arithmetic (virtual index ``(n - 1) p``, its two-sided linear
    interpolation), without its copy and partition of the sorted draws.
    Rows containing NaN are the caller's to mask.
    """
    if not ((probs >= 0) & (probs <= 1)).all():
        return np.quantile(srt, probs, axis=-1)  # NumPy's error
    size = srt.shape[-1]
    virtual = (size - 1) * probs
    above = virtual >= size - 1
    previous = np.where(above, -1, np.floor(virtual)).astype(np.intp)
    following = np.where(above, -1, previous + 1)
    gamma = (virtual - previous)[:, None]
    low, high = srt[:, previous].T, srt[:, following].T
    diff = high - low
    out = low + diff * gamma
    np.subtract(high, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out
