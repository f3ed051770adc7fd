"""Batched convergence statistics: R-hat, ESS, MCSE, autocorrelation, for all parameters at once.

Every function takes draws ``x`` of shape ``(chain, draw, n)`` -- ``n`` scalar
parameters -- and returns arrays over the last axis, shape ``(n,)`` unless
stated otherwise. There is no Python loop over parameters or chains: ranks,
folds, splits and autocovariances run on ``(n, chain, draw)`` blocks, one
argsort per parameter serves the bulk and folded ranks, the median, the MAD
and the quantiles, and large inputs are cut into blocks of parameters run on
a small thread pool. Geyer's truncation needs the autocovariances only up to
its first non-positive pair of lags, so the first 24 lags are formed by small
matrix products and the FFT is paid only by parameters that mix slowly.
:func:`summarize` (what ``mcmc diagnose`` calls) computes everything for 4
chains x 1000 draws x 1000 parameters in under half a second of CPU time,
an order of magnitude less than ``arviz_stats.summary``, which loops over
parameters in Python.

The numbers are those of ArviZ 1.x (``arviz_stats.base``: ``rhat``, ``ess``
and ``mcse`` with the methods named in each function) to floating-point
rounding; the tests require 1e-8 relative agreement on random, tied,
heavy-tailed and autocorrelated chains, and 1e-12 with R ``posterior`` on
CmdStan output. Deliberate differences:

* one chain: R-hat is computed from the two halves of the chain, as CmdStan
  and R ``posterior`` do (ArviZ returns NaN);
* a constant parameter: every diagnostic is NaN (as in R ``posterior``);
  ArviZ reports ``ess = chains * draws``, an R-hat of NaN with a
  RuntimeWarning and ``mcse_mean = 0``;
* a parameter with an infinite draw: the rank-based R-hat, bulk and tail ESS
  are computed as ArviZ does (ranks are defined for infinities), every
  moment-based statistic is NaN (ArviZ warns and returns NaN or garbage);
* a NaN draw makes every diagnostic NaN, as in ArviZ;
* fewer than 4 draws per chain: every diagnostic is NaN, as in ArviZ;
* the tail ESS uses the 5% and 95% quantiles (Vehtari et al. 2021, R
  ``posterior``, ArviZ's ``ess(method="tail", prob=0.05)``), whereas
  ``arviz_stats.summary`` uses its ``ci_prob`` 0.89 (11% and 89%); see
  :func:`ess_tail`;
* in :func:`acf` a chain that never moves counts as perfectly autocorrelated
  (ArviZ: NaN).

No function here emits a NumPy RuntimeWarning; :func:`status_flags` says why a
statistic is undefined. SciPy is not used (the normal quantiles are Wichura's AS241 in NumPy), so
``mcmc diagnose`` never pays its import time.

References
----------
Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.

Geyer, C. J. (1992). Practical Markov chain Monte Carlo. *Statistical Science*
7(4), 473-483.

Gelman, A. & Rubin, D. B. (1992). Inference from iterative simulation using
multiple sequences. *Statistical Science* 7(4), 457-472.

Blom, G. (1958). *Statistical Estimates and Transformed Beta-Variables*. Wiley.

Wichura, M. J. (1988). Algorithm AS 241: the percentage points of the normal
distribution. *Applied Statistics* 37(3), 477-484.

Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages.
*The American Statistician* 50(4), 361-365.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

import numpy as np

__all__ = [
    "acf",
    "ess_bulk",
    "ess_mean",
    "ess_quantile",
    "ess_sd",
    "ess_tail",
    "iat",
    "mad",
    "mcse_mean",
    "mcse_sd",
    "mean",
    "quantiles",
    "rhat",
    "rhat_split",
    "sd",
    "ssif",
    "status_flags",
    "summarize",
]

#: Fewest draws per chain for which ArviZ (and we) report a diagnostic.
MIN_DRAWS = 4
#: Default tail probability of :func:`ess_tail` (the 5% and 95% quantiles; Vehtari et al. 2021).
TAIL_PROB = 0.05
# ArviZ's test for "constant after transformation" in its ESS (absolute, not relative).
_RESOLUTION = np.finfo(float).resolution


# --------------------------------------------------------------------------- layout


def _to_block(x: np.ndarray) -> np.ndarray:
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


def _split(b: np.ndarray) -> np.ndarray:
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


def _flat(b: np.ndarray) -> np.ndarray:
    """``(n, C, D)`` -> ``(n, C * D)`` (a view)."""
    return b.reshape(b.shape[0], b.shape[1] * b.shape[2])


def _next_fast_len(target: int) -> int:
    """Smallest 5-smooth integer >= ``target`` (``scipy.fftpack.next_fast_len``).

    ArviZ pads its FFT to this length; padding identically keeps our
    autocovariances bitwise close to ArviZ's, which matters where Geyer's
    truncation compares a sum of autocorrelations with zero.
    """
    if target <= 6:
        return max(int(target), 1)
    best = 2 ** int(np.ceil(np.log2(target)))
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            # smallest power of two lifting p35 to >= target
            quotient = -(-target // p35)
            p2 = 1 << int(quotient - 1).bit_length()
            n = p2 * p35
            if n == target:
                return n
            best = min(best, n)
            p35 *= 3
        p5 *= 5
    return best


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


def _norm_ppf(p: np.ndarray) -> np.ndarray:
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


def _take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``np.take_along_axis(a, idx, axis=-1)`` for 2-D arrays, as one flat gather.

    NumPy's ``take_along_axis`` builds broadcast fancy indices; a single
    ``np.take`` with row offsets added is about three times faster, and the
    statistics gather three ``(n, chain * draw)`` arrays per block.
    """
    rows, width = a.shape
    flat = idx + (np.arange(rows, dtype=idx.dtype) * width)[:, None]
    return np.take(a.reshape(-1), flat)


def _rank_scores(order: np.ndarray, s: np.ndarray, grid: np.ndarray) -> np.ndarray:
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


def _rank_grid(size: int) -> np.ndarray:
    """The average ranks ``1, 1.5, ..., size`` (the grid of :func:`_rank_scores`)."""
    return np.arange(2.0, 2.0 * size + 1.0) / 2.0


@functools.lru_cache(maxsize=8)
def _blom(size: int) -> np.ndarray:
    """Blom's (1958) normal scores ``Phi^{-1}((r - 3/8) / (size - 3/4 + 1))`` on the rank grid, as ArviZ.

    Cached (read-only): every parameter block of a run shares them.
    """
    c = 3 / 8
    grid = _norm_ppf((_rank_grid(size) - c) / (size - 2 * c + 1))
    grid.flags.writeable = False
    return grid


def _avg_ranks(a: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis of 2-D ``a`` (``scipy.stats.rankdata(method="average")``)."""
    order = np.argsort(a, axis=-1)
    return _rank_scores(order, _take_rows(a, order), _rank_grid(a.shape[-1]))


def _z_scale(a: np.ndarray) -> np.ndarray:
    """Rank-normalize over all chains and draws: ``(n, C, D)`` -> normal scores.

    ``z = Phi^{-1}((r - 3/8) / (S - 3/4 + 1))`` with ``r`` the average rank among
    all ``S = C * D`` draws of the parameter (Blom 1958; Vehtari et al. 2021, eq. 14).
    """
    flat = _flat(a)
    order = np.argsort(flat, axis=-1)
    return _rank_scores(order, _take_rows(flat, order), _blom(flat.shape[1])).reshape(a.shape)


def _folded_order(order: np.ndarray, s: np.ndarray, med: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
        As :func:`_rank_scores` takes them, for ``|x - med|``.
    """
    folded = np.abs(s - med[:, None])
    inner = np.argsort(folded, axis=-1, kind="stable")
    return _take_rows(order, inner), _take_rows(folded, inner)


def _rhat_core(a: np.ndarray) -> np.ndarray:
    """Gelman-Rubin potential scale reduction of ``(n, M, S)`` sequences (no split, no ranks).

    ``R = sqrt(((S - 1)/S * W + B/S) / W)`` with ``W`` the mean within-sequence
    variance and ``B/S`` the variance of the sequence means (Gelman & Rubin 1992).
    """
    s = a.shape[-1]
    chain_mean = a.mean(axis=-1)
    between = s * np.var(chain_mean, axis=-1, ddof=1)
    centered = a - chain_mean[..., None]
    within = np.vecdot(centered, centered).mean(axis=-1) / (s - 1)  # np.var's sum, in half the passes
    return np.sqrt((between / within + s - 1) / s)


#: Lags ``0..24`` of the chain-averaged autocovariance are first formed directly
#: (:func:`_acov_direct`); FFTs only for the parameters whose Geyer truncation
#: lies beyond them: 5% of the ESS of 4 x 1000 AR(1) draws with phi = 0.6
#: (tau = 4), 15% with 16 lags. Slowly mixing parameters pay both (about +7%
#: on the whole summary at phi = 0.95), well-mixing ones a fraction of an FFT.
_DIRECT_LAGS = 24
#: At most this many autocorrelation lags are computed by direct products, more by one FFT.
_ACF_DIRECT_LAGS = 8
#: Shortest sequences for which the direct lags are tried (shorter: FFT only).
_DIRECT_MIN_DRAWS = 4 * _DIRECT_LAGS
#: Rows (chunks of ``_DIRECT_LAGS`` draws) per matrix product: keeps each product
#: small enough that OpenBLAS runs it on the calling thread (larger ones start
#: its own threads, which would fight the block pool and spin).
_DIRECT_ROWS = 256
_DIAGONALS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _diagonals(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Where the lags ``0..size`` lie in two flattened ``(size, size)`` products, for ``np.add.reduceat``.

    Entry ``(i, j)`` of the within-chunk product (first matrix) is a product at
    lag ``j - i``, of the next-chunk product (second) at lag ``j - i + size``.
    Returns the flat indices into both, grouped by lag, and where each lag starts.
    """
    if size not in _DIAGONALS:
        i, j = np.divmod(np.arange(2 * size * size), size)
        second = i >= size
        lag = j - i + np.where(second, 2 * size, 0)  # i counts on into the second matrix
        keep = (lag >= 0) & (lag <= size)
        idx = np.flatnonzero(keep)
        idx = idx[np.argsort(lag[idx], kind="stable")]
        _DIAGONALS[size] = idx, np.searchsorted(lag[idx], np.arange(size + 1))
    return _DIAGONALS[size]


def _acov_direct(a: np.ndarray, chain_mean: np.ndarray, lags: int) -> np.ndarray:
    """``sum_m sum_t c_{m,t} c_{m,t+k}`` for ``k = 0..lags`` with ``c = a - chain_mean``: ``(n, lags + 1)``.

    Each parameter's sequences are laid end to end (zero-padded) and cut into
    chunks of ``lags`` draws; every product at lag ``<= lags`` pairs a chunk
    with itself or with the next one, so two matrix products ``X^T X`` and
    ``X^T X_next`` per parameter hold them all, and the sums of their
    diagonals, less the products straddling two sequences, are the sums.
    About ``4 * lags`` flops per draw in BLAS, cheaper than the FFT up to a few
    dozen lags, and as accurate (dot products, no transform rounding).
    """
    n, n_seq, s = a.shape
    b = lags
    total = n_seq * s
    chunks = -(-total // b)
    if chunks > _DIRECT_ROWS:
        chunks = -(-chunks // _DIRECT_ROWS) * _DIRECT_ROWS
    pieces = max(1, chunks // _DIRECT_ROWS)
    buf = np.empty((n, (chunks + 1) * b))
    buf[:, total:] = 0.0
    c = np.reshape(buf[:, :total], (n, n_seq, s), copy=False)
    np.subtract(a, chain_mean[..., None], out=c)
    x = np.reshape(buf[:, : chunks * b], (n, pieces, chunks // pieces, b), copy=False)
    x_next = np.reshape(buf[:, b:], (n, pieces, chunks // pieces, b), copy=False)
    xt = x.transpose(0, 1, 3, 2)
    products = np.empty((n, 2, b, b))
    if pieces == 1:
        np.matmul(xt[:, 0], x[:, 0], out=products[:, 0])
        np.matmul(xt[:, 0], x_next[:, 0], out=products[:, 1])
    else:
        products[:, 0] = (xt @ x).sum(axis=1)
        products[:, 1] = (xt @ x_next).sum(axis=1)
    if n_seq > 1:
        # the last draws of sequence m times the first of sequence m + 1: not autocovariances
        products[:, 1] -= c[:, :-1, s - b :].transpose(0, 2, 1) @ c[:, 1:, :b]
    idx, starts = _diagonals(b)
    return np.add.reduceat(products.reshape(n, 2 * b * b)[:, idx], starts, axis=1)


def _geyer_tau(rho: np.ndarray, k_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Geyer's initial monotone sequence estimate of ``tau`` from ``rho`` at lags ``0..2 k_max + 1``.

    Returns ``tau`` (not floored) and whether a non-positive pair was found
    (where not, the sum runs to ``k_max``).
    """
    pairs = rho[:, 0::2] + rho[:, 1::2]  # (n, k_max + 1)
    pairs[:, 0] = 1.0 + rho[:, 1]  # ArviZ takes rho_0 = 1 exactly
    nonpos = pairs <= 0.0
    found = nonpos.any(axis=-1)
    k = np.where(found, nonpos.argmax(axis=-1), k_max)  # number of pairs summed
    monotone = np.minimum.accumulate(pairs, axis=-1)
    csum = np.concatenate((np.zeros((rho.shape[0], 1)), np.cumsum(monotone, axis=-1)), axis=-1)
    rows = np.arange(rho.shape[0])
    pair_sum, last_pair, rho_even = csum[rows, k], pairs[rows, k], rho[rows, 2 * k]
    last = np.where((last_pair >= 0.0) | (rho_even > 0.0), rho_even, 0.0)
    last = np.where(k == 0, 1.0, last)
    return -1.0 + 2.0 * pair_sum + last, found


def _rho(mean_acov: np.ndarray, chain_mean: np.ndarray, s: int) -> np.ndarray:
    """``rho_t = 1 - (W - mean_m acov_m(t)) / var_plus`` from the chain-averaged ``acov`` (lag 0 first)."""
    mean_var = mean_acov[:, 0] * s / (s - 1.0)
    var_plus = mean_var * (s - 1.0) / s
    if chain_mean.shape[1] > 1:
        var_plus = var_plus + np.var(chain_mean, axis=-1, ddof=1)
    return 1.0 - (mean_var[:, None] - mean_acov) / var_plus[:, None]


def _tau_fft(a: np.ndarray, chain_mean: np.ndarray) -> np.ndarray:
    """``tau`` (not floored; NaN where undefined) from the autocovariance at every lag, by FFT.

    The chain-averaged autocovariance is the inverse FFT of the summed
    periodograms (linearity), one inverse transform per parameter instead of
    one per sequence; it differs from ArviZ's per-chain transforms by rounding only.
    """
    n, n_seq, s = a.shape
    k_max = max(0, (s - 3) // 2)
    m = _next_fast_len(2 * s)
    f = np.fft.rfft(a - chain_mean[..., None], n=m, axis=-1)
    # |f|^2 summed over sequences without complex temporaries: square (re, im) in place, add
    parts = f.view(np.float64)
    np.multiply(parts, parts, out=parts)
    parts = parts.sum(axis=1)  # (n, 2 * (m // 2 + 1))
    power = parts[:, 0::2] + parts[:, 1::2]
    mean_acov = np.fft.irfft(power, n=m, axis=-1)[:, : 2 * k_max + 2]
    mean_acov /= n_seq * s
    rho = _rho(mean_acov, chain_mean, s)
    tau = _geyer_tau(rho, k_max)[0]
    tau[np.isnan(rho).any(axis=-1)] = np.nan
    return tau


def _ess_core(a: np.ndarray, const: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """ESS and integrated autocorrelation time of ``(n, M, S)`` sequences (Geyer 1992).

    Follows Vehtari et al. (2021, eqs. 10-13) exactly as ArviZ implements it:
    autocorrelations ``rho_t = 1 - (W - mean_m acov_m(t)) / var_plus`` with
    ``W`` the mean within-sequence variance (``ddof=1``) and ``var_plus`` the
    pooled variance estimate; sums of consecutive pairs
    ``P_k = rho_{2k} + rho_{2k+1}`` (with ``rho_0 = 1``) are kept while
    positive (Geyer's initial positive sequence, up to lag ``S - 2``), then made
    non-increasing (initial monotone sequence);
    ``tau = -1 + 2 sum_k P_k + rho_{2K}`` (the next even lag, if positive),
    floored at ``1 / log10(M S)`` (the antithetic cap: ESS at most
    ``M S log10(M S)``); ``ess = M S / tau``.

    The truncation needs the autocovariances only up to the first non-positive
    pair, a few lags for a well-mixing chain: lags ``0.._DIRECT_LAGS`` are
    formed directly (:func:`_acov_direct`), and only the parameters whose
    truncation lies beyond them (or whose draws are not finite) go through
    the FFT of :func:`_tau_fft`. Both agree with ArviZ's FFT to rounding.

    Sequences constant to within ``finfo.resolution`` (absolute, as ArviZ) get
    ``ess = M S`` and ``tau = 1``; ``const`` may pass that mask when the caller
    knows it.

    Returns
    -------
    ess, tau : ndarray, shape (n,)
    """
    n, n_seq, s = a.shape
    size = n_seq * s
    if const is None:
        flat = _flat(a)
        const = (flat.max(axis=-1) - flat.min(axis=-1)) < _RESOLUTION
    chain_mean = a.mean(axis=-1)
    tau = np.empty(n)
    rest = ~const
    if s >= _DIRECT_MIN_DRAWS and rest.any():
        pairs = (_DIRECT_LAGS + 1) // 2  # lags 0..2 pairs - 1, all <= _DIRECT_LAGS; pairs <= k_max
        mean_acov = _acov_direct(a, chain_mean, _DIRECT_LAGS)[:, : 2 * pairs]
        mean_acov /= size
        rho = _rho(mean_acov, chain_mean, s)
        tau_direct, found = _geyer_tau(rho, pairs - 1)
        # non-finite draws (NaN chain means) or overflowing moments: the FFT path's conventions
        ok = found & np.isfinite(rho).all(axis=-1) & np.isfinite(chain_mean).all(axis=-1)
        tau[ok] = tau_direct[ok]
        rest &= ~ok
    if rest.all():
        tau = _tau_fft(a, chain_mean)
    elif rest.any():
        tau[rest] = _tau_fft(a[rest], chain_mean[rest])
    tau = np.maximum(tau, 1 / np.log10(size))
    ess = size / tau
    ess[const] = size
    tau[const] = 1.0
    return ess, tau


def _sorted_quantiles(srt: np.ndarray, probs: np.ndarray) -> np.ndarray:
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


# --------------------------------------------------------------------------- shared work


def _nan_where(values: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``values`` (parameters on the first axis) with NaN for the parameters not ``ok``."""
    out = np.array(values, dtype=np.float64)
    out[~ok] = np.nan
    return out


class _Work:
    """Intermediate arrays of one set of draws, each computed at most once.

    Every public statistic is a method of this class, so :func:`summarize`
    shares the sort, the split, both rank normalizations and the FFTs among all
    statistics, and each single-statistic function computes only what it needs.
    All arithmetic runs under ``np.errstate(all="ignore")``; undefined results
    are masked to NaN with the validity masks set here.
    """

    def __init__(self, x: np.ndarray, tail_prob: float = TAIL_PROB) -> None:
        if not 0 < tail_prob < 1:
            raise ValueError(f"tail_prob must lie strictly between 0 and 1, got {tail_prob}")
        self.tail_probs = tuple(sorted((float(tail_prob), 1.0 - float(tail_prob))))
        self.b = _to_block(x)
        self.n, self.chains, self.draws = self.b.shape
        self._cache: dict[str, object] = {}
        # all draws equal (+-inf included): no rank or moment statistic is defined
        same = np.ones(self.n, dtype=bool)
        self.nan = np.zeros(self.n, dtype=bool)
        self.inf = np.zeros(self.n, dtype=bool)
        if self.draws:
            # per-chain extremes, two passes, give the flags and the stuck chains of acf;
            # max and min propagate NaN
            self.chain_max, self.chain_min = self.b.max(axis=-1), self.b.min(axis=-1)
            high, low = self.chain_max.max(axis=-1), self.chain_min.min(axis=-1)
            self.nan = np.isnan(high)
            self.inf = (high == np.inf) | (low == -np.inf)
            if self.nan.any():
                self.inf[self.nan] = np.isinf(_flat(self.b[self.nan])).any(axis=-1)
            with np.errstate(invalid="ignore"):
                same = high == low
        self.finite = ~(self.nan | self.inf)
        self.constant = same & self.finite
        self.size = self.chains * self.draws
        enough = self.draws >= MIN_DRAWS
        # rank-based diagnostics are defined with infinite draws, moment-based are not
        self.rank_ok = ~(self.nan | same) & enough
        self.moment_ok = self.rank_ok & self.finite

    def __getattr__(self, key: str):
        # intermediates are the methods named _key, computed on first access
        if key.startswith("_"):
            raise AttributeError(key)
        cache = self.__dict__["_cache"]
        if key not in cache:
            with np.errstate(all="ignore"):
                cache[key] = getattr(self, "_" + key)()
        return cache[key]

    # -- intermediates
    def _order(self):
        return np.argsort(_flat(self.b), axis=-1)

    def _sorted(self):
        return _take_rows(_flat(self.b), self.order)

    def _median(self):
        # np.median's arithmetic on the sorted draws (NaN columns masked by the callers)
        if not self.size:
            return np.full(self.n, np.nan)
        srt, mid = self.sorted, self.sorted.shape[-1] // 2
        return srt[:, mid] if srt.shape[-1] % 2 else (srt[:, mid - 1] + srt[:, mid]) / 2

    def _split(self):
        return _split(self.b)

    def _z_bulk(self):
        if self.draws % 2:  # the split drops the middle draws: rank what is left
            return _z_scale(self.split)
        # with an even draw count the split keeps every draw: rank all of them
        z = _rank_scores(self.order, self.sorted, _blom(self.size))
        return _split(z.reshape(self.b.shape))

    def _z_bulk_constant(self):
        # the normal scores are all equal iff the draws are; else they differ by far more than
        # finfo.resolution. With an odd draw count the split drops draws: look at what is left.
        if self.draws % 2:
            return None
        return self.sorted[:, -1] == self.sorted[:, 0]

    def _folded(self):
        """Flat order and sorted values of ``|x - median(x)|`` over all draws."""
        return _folded_order(self.order, self.sorted, self.median)

    def _z_folded(self):
        if self.draws % 2:
            sp = self.split
            return _z_scale(np.abs(sp - np.median(_flat(sp), axis=-1)[:, None, None]))
        fo, fs = self.folded
        return _split(_rank_scores(fo, fs, _blom(self.size)).reshape(self.b.shape))

    def _range_below_resolution(self):
        # ArviZ's ESS "constant" test on the raw draws, from the sort (every draw is in the even split)
        srt = self.sorted
        return (srt[:, -1] - srt[:, 0]) < _RESOLUTION

    def _ess_tau_mean(self):
        return _ess_core(self.split, None if self.draws % 2 else self.range_below_resolution)

    def _centered2(self):
        c = self.b - self.mean[:, None, None]
        return c * c

    def _ess_var(self):
        # ESS of the squared deviations: ArviZ's ess(method="sd") and the ESS inside mcse_sd
        return _ess_core(_split(self.centered2))[0]

    def _ess_quantiles(self):
        return tuple(self.ess_quantile_raw(p) for p in self.tail_probs)

    def ess_quantile_raw(self, prob: float) -> np.ndarray:
        """Split-chain ESS of the indicator ``x <= q_prob`` (Vehtari et al. 2021, sec. 4.3), not masked.

        ``q`` from all draws (middle draw included), indicators then split;
        each probability computed once per instance.
        """
        cache = self._cache.setdefault("ess_quantile", {})
        prob = float(prob)
        if prob not in cache:
            qp = self.quantile((prob,))[0]
            const = None
            if self.draws % 2 == 0:  # every draw is in the split: constant iff all draws on one side of q
                const = ~(qp < self.sorted[:, -1]) | (qp < self.sorted[:, 0])
            with np.errstate(all="ignore"):
                cache[prob] = _ess_core(_split((self.b <= qp[:, None, None]).astype(np.float64)), const)[0]
        return cache[prob]

    def ess_quantile(self, prob: float) -> np.ndarray:
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.ess_quantile_raw(prob), self.rank_ok)

    def _chain_acf_parts(self):
        """Per-chain centered draws, weights ``1 / (D gamma_c(0))`` (0 if stuck), stuck chains per parameter."""
        b = self.b
        centered = b - b.mean(axis=-1, keepdims=True)
        stuck = self.chain_max == self.chain_min
        weight = np.where(stuck, 0.0, 1.0 / np.where(stuck, 1.0, np.vecdot(centered, centered)))
        return centered, weight, stuck.sum(axis=-1)

    def _mean_rho(self):
        """Chain-averaged autocorrelation at every lag ``(n, D)``; a chain that never moves has rho = 1.

        ``mean_c gamma_c(k) / gamma_c(0)`` is linear in the periodograms, so the
        weighted periodograms are averaged first and inverted once per parameter.
        """
        centered, weight, n_stuck = self.chain_acf_parts
        d = self.draws
        m = _next_fast_len(2 * d)
        f = np.fft.rfft(centered, n=m, axis=-1)
        parts = f.view(np.float64)
        np.multiply(parts, parts, out=parts)
        parts = np.einsum("ncf,nc->nf", parts, weight)
        rho = np.fft.irfft(parts[:, 0::2] + parts[:, 1::2], n=m, axis=-1)[:, :d]
        rho += n_stuck[:, None]
        rho /= self.chains
        return rho

    def _rho_at(self, lags: list[int]) -> np.ndarray:
        """Chain-averaged autocorrelation at ``lags`` (each ``< draws``): ``(n, len(lags))``.

        A few lags (the report's six) by direct products, ``sum_t c_t c_{t+k}``
        per chain, an eighth of the cost of the FFT that gives every lag.
        """
        cache = self._cache.setdefault("rho_at", {})
        missing = [lag for lag in dict.fromkeys(lags) if lag not in cache]
        if len(missing) > _ACF_DIRECT_LAGS or (missing and "mean_rho" in self._cache):
            full = self.mean_rho
            cache.update((lag, full[:, lag]) for lag in missing)
        elif missing:
            centered, weight, n_stuck = self.chain_acf_parts
            d = self.draws
            for lag in missing:
                acov = np.vecdot(centered[..., : d - lag], centered[..., lag:])  # (n, chain)
                cache[lag] = (np.vecdot(acov, weight) + n_stuck) / self.chains
        return np.stack([cache[lag] for lag in lags], axis=1) if lags else np.empty((self.n, 0))

    # -- statistics; the diagnostics are not computed at all below MIN_DRAWS
    def _mean(self):
        if not self.size:
            return np.full(self.n, np.nan)
        out = _flat(self.b).mean(axis=-1)
        out[self.constant] = self.b[self.constant, 0, 0]  # exact, and no overflow at 1e308
        return out

    def _sd(self):
        if self.size < 2:
            return np.full(self.n, np.nan)
        out = _flat(self.b).std(axis=-1, ddof=1)
        out[self.constant] = 0.0
        return out

    def _mad(self):
        # median(|x - median(x)|), from the sorted folded draws (scipy's median_abs_deviation)
        if not self.size:
            return np.full(self.n, np.nan)
        fs, mid = self.folded[1], self.size // 2
        return _nan_where(fs[:, mid] if self.size % 2 else (fs[:, mid - 1] + fs[:, mid]) / 2, ~self.nan)

    def quantile(self, probs: Sequence[float]) -> np.ndarray:
        """Linear quantiles ``(len(probs), n)``, each probability computed once per instance."""
        probs = np.asarray(probs, dtype=np.float64).reshape(-1)
        if not self.size:
            return np.full((probs.size, self.n), np.nan)
        cache = self._cache.setdefault("quantiles", {})
        missing = sorted({float(p) for p in probs} - cache.keys())
        if missing:
            with np.errstate(all="ignore"):
                values = _sorted_quantiles(self.sorted, np.asarray(missing))
            values[:, self.nan] = np.nan
            cache.update(zip(missing, values, strict=True))
        return np.stack([cache[float(p)] for p in probs]) if probs.size else np.empty((0, self.n))

    def _nans(self):
        return np.full(self.n, np.nan)

    def _rhat_bulk(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(_rhat_core(self.z_bulk), self.rank_ok)

    def _rhat_tail(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(_rhat_core(self.z_folded), self.rank_ok)

    def _rhat(self):
        # fmax: when the folded draws are all tied (two values symmetric about the
        # median) the tail R-hat is 0/0 and the bulk R-hat stands, as in ArviZ
        return np.fmax(self.rhat_bulk, self.rhat_tail)

    def _rhat_split(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(_rhat_core(self.split), self.moment_ok)

    def _ess_bulk(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(_ess_core(self.z_bulk, self.z_bulk_constant)[0], self.rank_ok)

    def _ess_tail(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        low, high = self.ess_quantiles
        return _nan_where(np.minimum(low, high), self.rank_ok)

    def _ess_mean(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.ess_tau_mean[0], self.moment_ok)

    def _iat(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.ess_tau_mean[1], self.moment_ok)

    def _ess_sd(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.ess_var, self.moment_ok)

    def _mcse_mean(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        return _nan_where(self.sd / np.sqrt(self.ess_mean), self.moment_ok)

    def _mcse_sd(self):
        if self.draws < MIN_DRAWS:
            return self.nans
        # delta method: Var(s^2) ~ (m4 - m2^2) / ess, sd(s) ~ sqrt(Var(s^2) / (4 m2)); ArviZ's mcse_sd
        c2 = _flat(self.centered2)
        evar = c2.mean(axis=-1)
        varvar = ((c2 * c2).mean(axis=-1) - evar**2) / self.ess_var
        return _nan_where(np.sqrt(varvar / evar / 4), self.moment_ok)

    def acf(self, lags: Sequence[int]) -> np.ndarray:
        lags = np.asarray(lags, dtype=np.int64).reshape(-1)
        if (lags < 0).any():
            raise ValueError(f"lags must be non-negative, got {lags.tolist()}")
        out = np.full((self.n, lags.size), np.nan)
        inside = lags < self.draws
        if inside.any():
            with np.errstate(all="ignore"):
                out[:, inside] = self._rho_at(lags[inside].tolist())
        ok = self.finite & ~self.constant & (self.draws >= 2)
        return _nan_where(out, ok)

    def _ssif(self):
        if self.draws < MIN_DRAWS:
            return self.nans, self.nans
        r1 = self.acf((1,))[:, 0]
        s = (1.0 + r1) / (1.0 - r1)
        return _nan_where(s, self.moment_ok), _nan_where(self.chains * self.draws / s, self.moment_ok)


# --------------------------------------------------------------------------- public API

#: Parameters are processed in blocks of at most this many draws in all, which
#: bounds the temporaries (a few arrays of 2 MB) whatever the number of parameters.
#: Larger blocks cost more than they save: temporaries past glibc's mmap threshold
#: are mapped and unmapped on every operation, and the page faults showed up as
#: half a second of system time on 4 x 1000 x 1000 draws.
_BLOCK_DRAWS = 1 << 18
#: Below this many draws in all, one thread: a pool would cost more than it saves.
_THREAD_MIN_DRAWS = 1 << 18


def _workers() -> int:
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # not on Linux
        return max(1, min(4, os.cpu_count() or 1))


def _map_blocks(x: np.ndarray, compute):
    """``compute(block)`` for blocks ``x[:, :, i:j]`` of parameters, in order.

    Blocks run on a small thread pool when the input is large: NumPy releases
    the GIL in sorts, FFTs and ufunc loops, and every parameter is computed
    independently, so the results do not depend on the blocking.
    """
    x = np.asarray(x)
    if x.ndim != 3:
        raise ValueError(f"expected draws of shape (chain, draw, n), got shape {x.shape}")
    n, per_param = x.shape[2], max(1, x.shape[0] * x.shape[1])
    workers = _workers() if n * per_param >= _THREAD_MIN_DRAWS else 1
    step = max(1, min(_BLOCK_DRAWS // per_param, -(-n // workers)))
    blocks = [x[:, :, i : i + step] for i in range(0, n, step)] or [x]
    if workers > 1 and len(blocks) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(workers, len(blocks))) as pool:
            return list(pool.map(compute, blocks))
    return [compute(b) for b in blocks]


def _by_blocks(x: np.ndarray, compute, axis: int = 0, **work_kw):
    """``compute(_Work(block))`` over parameter blocks, concatenated along ``axis``.

    ``compute`` returns an array (parameters on ``axis``) or a tuple of them.
    """
    parts = _map_blocks(x, lambda block: compute(_Work(block, **work_kw)))
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(p, axis=axis) for p in zip(*parts, strict=True))
    return np.concatenate(parts, axis=axis)


def status_flags(x: np.ndarray) -> dict[str, np.ndarray]:
    """Why a parameter's statistics may be undefined.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    dict
        ``constant``: every draw finite and equal; ``nan``: some draw is NaN;
        ``inf``: some draw is +-inf. Boolean arrays of shape ``(n,)``.
    """
    flags = _by_blocks(x, lambda w: (w.constant, w.nan, w.inf))
    return dict(zip(("constant", "nan", "inf"), flags, strict=True))


def rhat(x: np.ndarray) -> np.ndarray:
    """Rank-normalized split R-hat: the larger of the bulk and the folded (tail) R-hat.

    Chains are split in halves; draws are replaced by the normal scores of their
    average ranks over all chains (:func:`_z_scale`), giving the bulk R-hat;
    the same on ``|x - median(x)|`` gives the tail R-hat (Vehtari et al. 2021,
    sec. 4.2); the bulk R-hat alone when the tail one is 0/0 (draws taking two
    values). Equals ``arviz_stats`` ``rhat(method="rank")``. With one chain the
    two halves are compared (ArviZ returns NaN). ``inf`` when the halves are
    each constant but differ (chains stuck at different values).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.rhat)


def rhat_split(x: np.ndarray) -> np.ndarray:
    """Classic split R-hat on the raw draws (Gelman et al. 2013), ``arviz_stats`` ``rhat(method="split")``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
        NaN for parameters with a non-finite draw.
    """
    return _by_blocks(x, lambda w: w.rhat_split)


def ess_bulk(x: np.ndarray) -> np.ndarray:
    """Bulk effective sample size: ESS of the rank-normalized split chains.

    Vehtari et al. (2021, sec. 4.1); ``arviz_stats`` ``ess(method="bulk")``.
    The ESS itself is Geyer's (1992) initial monotone sequence estimator as
    described in :func:`_ess_core`.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.ess_bulk)


def ess_tail(x: np.ndarray, prob: float = TAIL_PROB) -> np.ndarray:
    """Tail effective sample size: the smaller ESS of the indicators ``x <= q_prob`` and ``x <= q_(1-prob)``.

    Quantiles are the linear (Hyndman & Fan type 7) quantiles of all draws;
    each indicator's ESS is the split-chain ESS (Vehtari et al. 2021, sec. 4.3).
    With the default ``prob = 0.05`` (the 5% and 95% quantiles, as in the
    paper, R ``posterior`` and Stan) this equals ``arviz_stats``
    ``ess(method="tail", prob=0.05)``. Note: ``arviz_stats.summary`` calls
    ``ess(method="tail")`` without ``prob``, which then takes
    ``rcParams["stats.ci_prob"]`` = 0.89, i.e. the 11% and 89% quantiles, and
    so reports a larger tail ESS than the default here; ``prob=0.11``
    reproduces it.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    prob : float in (0, 1)
        Tail probability; ``prob`` and ``1 - prob`` give the same result.

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.ess_tail, tail_prob=prob)


def ess_quantile(x: np.ndarray, prob: float) -> np.ndarray:
    """ESS of the ``prob`` quantile: split-chain ESS of the indicator ``x <= q_prob``.

    ``q_prob`` is the linear (type 7) quantile of all draws (Vehtari et al.
    2021, sec. 4.3); ``arviz_stats`` ``ess(method="quantile", prob=prob)``.
    :func:`ess_tail` is the smaller of this at ``prob`` and ``1 - prob``.
    NaN for constant parameters (ArviZ: ``chain * draw``), as every ESS here.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    prob : float in [0, 1]

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.ess_quantile(prob))


def ess_mean(x: np.ndarray) -> np.ndarray:
    """ESS for the mean: split-chain ESS of the raw draws, ``arviz_stats`` ``ess(method="mean")``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.ess_mean)


def ess_sd(x: np.ndarray) -> np.ndarray:
    """ESS for the standard deviation as ArviZ computes it: split-chain ESS of ``(x - mean(x))**2``.

    ``arviz_stats`` ``ess(method="sd")``. (R ``posterior``'s ``ess_sd`` is the
    smaller of the ESS of ``x`` and of ``x**2``, a different number.)

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.ess_sd)


def mcse_mean(x: np.ndarray) -> np.ndarray:
    """Monte Carlo standard error of the mean: ``sd(x) / sqrt(ess_mean(x))``.

    ``sd`` with ``ddof=1``; ``arviz_stats`` ``mcse(method="mean")``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.mcse_mean)


def mcse_sd(x: np.ndarray) -> np.ndarray:
    """Monte Carlo standard error of the standard deviation (delta method).

    With ``c = x - mean(x)``, ``m2 = mean(c**2)``, ``m4 = mean(c**4)`` and
    ``e`` the split-chain ESS of ``c**2``: ``sqrt((m4 - m2**2) / e / m2 / 4)``.
    ``arviz_stats`` ``mcse(method="sd")``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.mcse_sd)


def mean(x: np.ndarray) -> np.ndarray:
    """Posterior mean over all chains and draws.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.mean)


def sd(x: np.ndarray) -> np.ndarray:
    """Posterior standard deviation over all chains and draws, ``ddof=1`` (as ``arviz_stats.summary``).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.sd)


def mad(x: np.ndarray) -> np.ndarray:
    """Median absolute deviation ``median(|x - median(x)|)`` over all draws, unscaled.

    As ``arviz_stats.summary(kind="stats_median")`` reports it
    (``scipy.stats.median_abs_deviation`` with ``scale=1``). R ``posterior``'s
    ``mad`` is 1.4826 times this (consistent for the normal sd).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.mad)


def quantiles(x: np.ndarray, probs: Sequence[float]) -> np.ndarray:
    """Quantiles over all draws, linear interpolation (Hyndman & Fan 1996 type 7, NumPy's default).

    The definition ``arviz_stats`` uses for ``eti`` (the ``summary`` interval)
    and R's default ``quantile``.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    probs : sequence of float in [0, 1]

    Returns
    -------
    ndarray, shape (len(probs), n)
    """
    return _by_blocks(x, lambda w: w.quantile(probs), axis=1)


def acf(x: np.ndarray, lags: Sequence[int]) -> np.ndarray:
    """Autocorrelation at the given lags, per chain, then averaged over chains.

    A few lags (up to 8) by direct products, more from one FFT per chain.

    For chain ``c`` with mean ``m_c``:
    ``gamma_c(k) = (1/D) sum_{t=0}^{D-1-k} (x_t - m_c)(x_{t+k} - m_c)`` (biased,
    as ``arviz_stats.autocorr``), ``rho_c(k) = gamma_c(k) / gamma_c(0)``, and
    the result is ``mean_c rho_c(k)`` (chains not split). A chain that never
    moves counts as perfectly autocorrelated (``rho_c = 1``). NaN for lags
    ``>= draw`` and for constant or non-finite parameters.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    lags : sequence of int >= 0

    Returns
    -------
    ndarray, shape (n, len(lags))
    """
    return _by_blocks(x, lambda w: w.acf(lags))


def iat(x: np.ndarray) -> np.ndarray:
    """Integrated autocorrelation time ``tau = 1 + 2 sum_{t>=1} rho_t`` of the split chains.

    The ``tau`` of :func:`ess_mean`: Geyer's (1992) initial monotone sequence
    estimate on the split chains (see :func:`_ess_core`), floored at
    ``1 / log10(S)``, so that ``ess_mean = S / iat`` exactly, ``S`` being the
    number of draws in the split chains (``chain * draw``, less one draw per
    chain when ``draw`` is odd).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    return _by_blocks(x, lambda w: w.iat)


def ssif(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample size inflation factor from the lag-1 autocorrelation, and the ESS it implies.

    ``s = (1 + r1) / (1 - r1)`` with ``r1`` the chain-averaged lag-1
    autocorrelation of :func:`acf`: the integrated autocorrelation time of an
    AR(1) process with coefficient ``r1``. The implied ESS is
    ``chain * draw / s``. A cheap cross-check of :func:`ess_bulk`: the two
    disagree when the chain is far from AR(1) (e.g. slowly decaying or
    oscillating autocorrelations).

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)

    Returns
    -------
    s, ess : ndarray, shape (n,) each
    """
    return _by_blocks(x, lambda w: w.ssif)


def summarize(
    x: np.ndarray,
    probs: Sequence[float] = (0.05, 0.5, 0.95),
    lags: Sequence[int] = (1, 2, 5, 10, 20, 50),
    *,
    tail_prob: float = TAIL_PROB,
) -> dict[str, np.ndarray]:
    """Every statistic of this module in one pass, sharing the sort, ranks and autocovariances.

    Parameters
    ----------
    x : ndarray, shape (chain, draw, n)
    probs : sequence of float in [0, 1]
        Quantile probabilities.
    lags : sequence of int >= 0
        Autocorrelation lags.
    tail_prob : float in (0, 1)
        Tail probability of ``ess_tail`` (see :func:`ess_tail`).

    Returns
    -------
    dict
        Shape ``(n,)`` unless noted: ``mean``, ``sd``, ``median``, ``mad``,
        ``quantiles`` ``(len(probs), n)``, ``rhat``, ``rhat_bulk``, ``rhat_tail``,
        ``rhat_split``, ``ess_bulk``, ``ess_tail``, ``ess_mean``, ``ess_sd``,
        ``mcse_mean``, ``mcse_sd``, ``acf`` ``(n, len(lags))``, ``iat``,
        ``ssif``, ``ess_ssif``, the :func:`status_flags` ``constant``, ``nan``,
        ``inf`` (bool), and the ``probs`` and ``lags`` used.
    """
    parts = _map_blocks(x, lambda block: _summarize_block(_Work(block, tail_prob=tail_prob), probs, lags))
    out = {key: np.concatenate([p[key] for p in parts], axis=1 if key == "quantiles" else 0) for key in parts[0]}
    out["probs"] = np.asarray(probs, dtype=np.float64)
    out["lags"] = np.asarray(lags, dtype=np.int64)
    return out


def _summarize_block(w: _Work, probs: Sequence[float], lags: Sequence[int]) -> dict[str, np.ndarray]:
    w.quantile((*probs, 0.5, *w.tail_probs))  # one partition for all of them
    s, ess_s = w.ssif
    return {
        "mean": w.mean,
        "sd": w.sd,
        "median": _nan_where(w.median, ~w.nan),
        "mad": w.mad,
        "quantiles": w.quantile(probs),
        "rhat": w.rhat,
        "rhat_bulk": w.rhat_bulk,
        "rhat_tail": w.rhat_tail,
        "rhat_split": w.rhat_split,
        "ess_bulk": w.ess_bulk,
        "ess_tail": w.ess_tail,
        "ess_mean": w.ess_mean,
        "ess_sd": w.ess_sd,
        "mcse_mean": w.mcse_mean,
        "mcse_sd": w.mcse_sd,
        "acf": w.acf(lags),
        "iat": w.iat,
        "ssif": s,
        "ess_ssif": ess_s,
        "constant": w.constant,
        "nan": w.nan,
        "inf": w.inf,
    }
