"""Autocovariances, autocorrelations and the effective sample size of ``(n, sequence, draw)`` blocks.

The ESS is Geyer's (1992) initial monotone sequence estimator on the
autocorrelations of Vehtari et al. (2021, eqs. 10-13), exactly as ArviZ
implements it (:func:`ess_core`). Geyer's truncation needs the autocovariances
only up to its first non-positive pair of lags, so the first
:data:`DIRECT_LAGS` lags are formed by small matrix products
(:func:`acov_direct`) and the FFT (:func:`tau_fft`) is paid only by parameters
that mix slowly. The per-chain autocorrelation function of ``acf`` (chains not
split, a stuck chain counting as perfectly autocorrelated) lives here too:
:func:`acf_parts`, then :func:`mean_rho_direct` for a few lags or
:func:`mean_rho_fft` for all of them.

References
----------
Geyer, C. J. (1992). Practical Markov chain Monte Carlo. *Statistical Science*
7(4), 473-483.

Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.
"""

from __future__ import annotations

import numpy as np

from mcmc.diagnostics.stats._layout import flat

__all__ = ["acf_parts", "ess_core", "mean_rho_direct", "mean_rho_fft"]

# ArviZ's test for "constant after transformation" in its ESS (absolute, not relative).
RESOLUTION = np.finfo(float).resolution


def next_fast_len(target: int) -> int:
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


#: Lags ``0..24`` of the chain-averaged autocovariance are first formed directly
#: (:func:`acov_direct`); FFTs only for the parameters whose Geyer truncation
#: lies beyond them: 5% of the ESS of 4 x 1000 AR(1) draws with phi = 0.6
#: (tau = 4), 15% with 16 lags. Slowly mixing parameters pay both (about +7%
#: on the whole summary at phi = 0.95), well-mixing ones a fraction of an FFT.
DIRECT_LAGS = 24
#: At most this many autocorrelation lags are computed by direct products, more by one FFT.
ACF_DIRECT_LAGS = 8
#: Shortest sequences for which the direct lags are tried (shorter: FFT only).
DIRECT_MIN_DRAWS = 4 * DIRECT_LAGS
#: Rows (chunks of ``DIRECT_LAGS`` draws) per matrix product: keeps each product
#: small enough that OpenBLAS runs it on the calling thread (larger ones start
#: its own threads, which would fight the block pool and spin).
DIRECT_ROWS = 256
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


def acov_direct(a: np.ndarray, chain_mean: np.ndarray, lags: int) -> np.ndarray:
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
    if chunks > DIRECT_ROWS:
        chunks = -(-chunks // DIRECT_ROWS) * DIRECT_ROWS
    pieces = max(1, chunks // DIRECT_ROWS)
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


def geyer_tau(rho: np.ndarray, k_max: int) -> tuple[np.ndarray, np.ndarray]:
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


def rho_from_acov(mean_acov: np.ndarray, chain_mean: np.ndarray, s: int) -> np.ndarray:
    """``rho_t = 1 - (W - mean_m acov_m(t)) / var_plus`` from the chain-averaged ``acov`` (lag 0 first)."""
    mean_var = mean_acov[:, 0] * s / (s - 1.0)
    var_plus = mean_var * (s - 1.0) / s
    if chain_mean.shape[1] > 1:
        var_plus = var_plus + np.var(chain_mean, axis=-1, ddof=1)
    return 1.0 - (mean_var[:, None] - mean_acov) / var_plus[:, None]


def tau_fft(a: np.ndarray, chain_mean: np.ndarray) -> np.ndarray:
    """``tau`` (not floored; NaN where undefined) from the autocovariance at every lag, by FFT.

    The chain-averaged autocovariance is the inverse FFT of the summed
    periodograms (linearity), one inverse transform per parameter instead of
    one per sequence; it differs from ArviZ's per-chain transforms by rounding only.
    """
    n, n_seq, s = a.shape
    k_max = max(0, (s - 3) // 2)
    m = next_fast_len(2 * s)
    f = np.fft.rfft(a - chain_mean[..., None], n=m, axis=-1)
    # |f|^2 summed over sequences without complex temporaries: square (re, im) in place, add
    parts = f.view(np.float64)
    np.multiply(parts, parts, out=parts)
    parts = parts.sum(axis=1)  # (n, 2 * (m // 2 + 1))
    power = parts[:, 0::2] + parts[:, 1::2]
    mean_acov = np.fft.irfft(power, n=m, axis=-1)[:, : 2 * k_max + 2]
    mean_acov /= n_seq * s
    rho = rho_from_acov(mean_acov, chain_mean, s)
    tau = geyer_tau(rho, k_max)[0]
    tau[np.isnan(rho).any(axis=-1)] = np.nan
    return tau


def ess_core(a: np.ndarray, const: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
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
    pair, a few lags for a well-mixing chain: lags ``0..DIRECT_LAGS`` are
    formed directly (:func:`acov_direct`), and only the parameters whose
    truncation lies beyond them (or whose draws are not finite) go through
    the FFT of :func:`tau_fft`. Both agree with ArviZ's FFT to rounding.

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
        rows = flat(a)
        const = (rows.max(axis=-1) - rows.min(axis=-1)) < RESOLUTION
    chain_mean = a.mean(axis=-1)
    tau = np.empty(n)
    rest = ~const
    if s >= DIRECT_MIN_DRAWS and rest.any():
        pairs = (DIRECT_LAGS + 1) // 2  # lags 0..2 pairs - 1, all <= DIRECT_LAGS; pairs <= k_max
        mean_acov = acov_direct(a, chain_mean, DIRECT_LAGS)[:, : 2 * pairs]
        mean_acov /= size
        rho = rho_from_acov(mean_acov, chain_mean, s)
        tau_direct, found = geyer_tau(rho, pairs - 1)
        # non-finite draws (NaN chain means) or overflowing moments: the FFT path's conventions
        ok = found & np.isfinite(rho).all(axis=-1) & np.isfinite(chain_mean).all(axis=-1)
        tau[ok] = tau_direct[ok]
        rest &= ~ok
    if rest.all():
        tau = tau_fft(a, chain_mean)
    elif rest.any():
        tau[rest] = tau_fft(a[rest], chain_mean[rest])
    tau = np.maximum(tau, 1 / np.log10(size))
    ess = size / tau
    ess[const] = size
    tau[const] = 1.0
    return ess, tau


def acf_parts(b: np.ndarray, stuck: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What every lag of the chain-averaged autocorrelation needs, from draws ``b`` ``(n, C, D)``.

    Parameters
    ----------
    b : ndarray, shape (n, C, D)
    stuck : ndarray of bool, shape (n, C)
        Chains that never move.

    Returns
    -------
    centered : ndarray, shape (n, C, D)
        Each chain's draws less the chain's mean.
    weight : ndarray, shape (n, C)
        ``1 / (D gamma_c(0))``, 0 for a stuck chain.
    n_stuck : ndarray of int, shape (n,)
        Stuck chains per parameter (each contributes ``rho = 1`` at every lag).
    """
    centered = b - b.mean(axis=-1, keepdims=True)
    weight = np.where(stuck, 0.0, 1.0 / np.where(stuck, 1.0, np.vecdot(centered, centered)))
    return centered, weight, stuck.sum(axis=-1)


def mean_rho_fft(centered: np.ndarray, weight: np.ndarray, n_stuck: np.ndarray) -> np.ndarray:
    """Chain-averaged autocorrelation at every lag ``(n, D)`` from :func:`acf_parts`.

    ``mean_c gamma_c(k) / gamma_c(0)`` is linear in the periodograms, so the
    weighted periodograms are averaged first and inverted once per parameter.
    """
    _, chains, d = centered.shape
    m = next_fast_len(2 * d)
    f = np.fft.rfft(centered, n=m, axis=-1)
    parts = f.view(np.float64)
    np.multiply(parts, parts, out=parts)
    parts = np.einsum("ncf,nc->nf", parts, weight)
    rho = np.fft.irfft(parts[:, 0::2] + parts[:, 1::2], n=m, axis=-1)[:, :d]
    rho += n_stuck[:, None]
    rho /= chains
    return rho


def mean_rho_direct(centered: np.ndarray, weight: np.ndarray, n_stuck: np.ndarray, lag: int) -> np.ndarray:
    """Chain-averaged autocorrelation at one ``lag < D`` ``(n,)`` from :func:`acf_parts`.

    Direct products ``sum_t c_t c_{t+k}`` per chain: for the report's six lags
    an eighth of the cost of the FFT that gives every lag.
    """
    _, chains, d = centered.shape
    acov = np.vecdot(centered[..., : d - lag], centered[..., lag:])  # (n, chain)
    return (np.vecdot(acov, weight) + n_stuck) / chains
