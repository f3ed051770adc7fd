"""The Pareto ``k`` of importance weights: how heavy their upper tail is (Vehtari et al. 2024).

Vehtari, Simpson, Gelman, Yao & Gabry (2024), "Pareto smoothed importance
sampling", JMLR 25(72). The largest ``M`` weights of ``S`` draws
(``M = floor(3 sqrt(S))`` for ``S > 225``, else ``floor(S / 5)``, section
3.1, the relative efficiency of independent draws being 1) are fitted with a
generalized Pareto distribution above the ``(M + 1)``-th largest; its shape
``k`` (:func:`pareto_khat`, the empirical-Bayes fit of Zhang & Stephens 2009
with the paper's weakly informative prior on ``k``) says how many moments
the weights have: ``1 / k``. Below ``1/2`` their variance is finite and the
central limit theorem holds for the self-normalised estimate; above ``1/2``
it does not, and the estimate converges slowly; at ``k >= 0.7`` it is too
slow to trust at any practical sample size (section 3.2.4). The threshold
for a reliable estimate depends on ``S`` (equation 13):
:func:`khat_threshold` ``= min(1 - 1 / log10 S, 0.7)`` (0.5, 0.6, 0.67, 0.7
for ``S`` = 100, 320, 1000, 2200); :func:`min_draws` is the sample size a
``k`` needs, ``10^(1 / (1 - k))`` (section 3.2.3). The judge of weighted
draws (:func:`mcmc.diagnostics.report.check.check_weighted`) applies them.

Equal to ArviZ 1.x (``arviz_stats``): ``array_stats.psislw(-log_w)``'s ``k``
to rounding, tested (its ``pareto_khat(..., log_weights=True)`` fits the
logs of the weights instead, which is not this statistic).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

#: Below this many draws there is no tail of 5 to fit (``floor(S / 5) < 5``).
MIN_DRAWS = 25
#: ``k`` at or above which no sample size makes the estimate reliable (section 3.2.4).
K_MAX = 0.7
#: ``k`` above which the weights' variance is infinite (the CLT no longer holds).
K_FINITE_VARIANCE = 0.5


def tail_length(n: int) -> int:
    """``M``, the number of largest weights fitted: ``floor(3 sqrt(n))`` for ``n > 225``, else ``floor(n / 5)``."""
    return int(np.floor(3.0 * np.sqrt(n))) if n > 225 else int(np.floor(n / 5))


def gpd_fit(x: np.ndarray) -> tuple[float, float]:
    """Empirical-Bayes fit ``(k, sigma)`` of a generalized Pareto distribution to sorted positive ``x``.

    Zhang & Stephens (2009), "A new and efficient estimation method for the
    generalized Pareto distribution", Technometrics 51: the posterior mean of
    ``b = -k / sigma`` on a grid of ``30 + sqrt(n)`` values, then ``k``
    shrunk toward 0.5 with the weight of 10 observations (Vehtari et al.
    2024, appendix). ``(nan, nan)`` when the first quartile is the minimum
    (far from a Pareto tail).
    """
    n = x.size
    m = 30 + int(np.sqrt(n))
    xstar = x[int(n / 4 + 0.5) - 1]
    if xstar <= x[0]:
        return float("nan"), float("nan")
    b = 1.0 - np.sqrt(m / (np.arange(1, m + 1) - 0.5))
    b = b / (3.0 * xstar) + 1.0 / x[-1]
    k = np.mean(np.log1p(-b[:, None] * x), axis=1)
    log_lik = n * (np.log(-b / k) - k - 1.0)
    w = np.exp(log_lik - logsumexp(log_lik))
    keep = w >= 10 * np.finfo(float).eps
    w, b = w[keep] / np.sum(w[keep]), b[keep]
    b_post = float(np.sum(b * w))
    k_post = float(np.mean(np.log1p(-b_post * x)))
    sigma = -k_post / b_post
    k_post = (n * k_post + 10 * 0.5) / (n + 10)
    return (float("inf") if np.isnan(k_post) else k_post), sigma


def pareto_khat(log_weight: np.ndarray) -> float:
    """The Pareto ``k`` of the weights ``exp(log_weight)`` over all draws (any shape; ``-inf`` for weight 0).

    Returns NaN with fewer than :data:`MIN_DRAWS` draws of positive weight.
    """
    lw = np.asarray(log_weight, dtype=float).ravel()
    lw = lw[np.isfinite(lw)]
    n = lw.size
    m = tail_length(n)
    if m < 5:
        return float("nan")
    ordered = np.sort(lw - lw.max())
    tail = np.exp(ordered[n - m :])
    cutoff = np.exp(ordered[n - m - 1])
    if tail[-1] - tail[0] < np.finfo(float).tiny:
        return float("nan")  # every tail weight the same: no tail to fit (equal weights)
    return gpd_fit(tail - cutoff)[0]


def khat_threshold(n: int) -> float:
    """``min(1 - 1 / log10 n, 0.7)``: the largest ``k`` with a reliable estimate from ``n`` draws (equation 13)."""
    return float(min(1.0 - 1.0 / np.log10(n), K_MAX)) if n > 1 else float("-inf")


def min_draws(k: float) -> float:
    """``10^(1 / (1 - max(0, k)))``: the draws a ``k`` needs for a reliable estimate (infinite for ``k >= 1``)."""
    if not np.isfinite(k) or k >= 1:
        return float("inf")
    return float(10.0 ** (1.0 / (1.0 - max(0.0, k))))
