"""One verdict on a topic model's chains: each chain judged on its own, the chains compared as modes.

A Gibbs sampler for latent Dirichlet allocation (Griffiths & Steyvers 2004)
climbs from its random start to a region of high posterior probability and
then stays there, moving slowly. The posterior is multimodal: besides the
``K!`` relabellings of every mode, chains started apart settle in different,
equally good modes -- topics split, merged or mixed a little differently --
and do not visit each other's modes in any practical number of sweeps. So
the usual test of convergence, R-hat of the log joint *across* chains
(Gelman & Rubin 1992; rank-normalized, Vehtari et al. 2021), fails nearly
every real corpus although each chain has long stopped rising. This module
asks the two questions a topic modeller asks of a trace plot instead:

1. **Has each chain stopped rising?** (:func:`chain_trends`) A chain still
   burning in keeps climbing through the iterations that are averaged into
   theta and phi. Over a chain's post-burn-in log joint per token a
   least-squares line gives the *rise* across the window, ``slope * (n - 1)``,
   with a standard error from the spectral density at zero of the residuals
   (an AR fit as in Geweke's (1992) diagnostic and R ``coda``,
   :func:`~mcmc.diagnostics.stats.spectral.spectrum0_ar`), so autocorrelated noise
   is not taken for a trend. The chain is *trending* when the rise is both
   large -- more than ``max_trend`` of the chain's *climb*, the rise from its
   first sweep to its post-burn-in mean -- and real, more than ``min_trend_z``
   standard errors. Relative to the climb because a significance test alone
   flags every long chain: LDA's log joint keeps creeping up for thousands of
   sweeps (on AP at K=50, 1000 sweeps, the slope is 6 to 50 standard errors
   from zero while the window holds under 1% of the climb), and Geweke's z
   and the single-chain split R-hat, both significance measures, fail runs a
   topic modeller accepts (tests/data/lda_gate/README.md has the numbers).
2. **Did the chains find equally good modes?** (:func:`judge_topic_model`)
   Each chain's post-burn-in mean log joint per token, with its Monte Carlo
   standard error from the chain's own effective sample size, is compared
   with the best chain's. A chain is *worse* only when it is below the best by
   more than ``max_ll_gap`` nats per token even after subtracting two standard
   errors of the difference; smaller differences are the multimodality every
   topic model has and give a warning, not a failure. How far the modes agree
   is reported as the overlap of the top words of topics matched one to one
   across chains (Hungarian matching, Kuhn 1955, on the Hellinger distance
   between their word distributions; :func:`topic_agreement`).

Everything here is a pure function of arrays: no printing, no files.
:func:`judge_topic_model` takes a fit's ``log_joint_per_token`` (chain,
iteration), burn-in first, and optionally its ``phi`` (chain, K, V) and
returns a :class:`TopicModelVerdict`.

References
----------
Griffiths, T. L. & Steyvers, M. (2004). Finding scientific topics. *PNAS*
101(suppl. 1), 5228-5235.

Geweke, J. (1992). Evaluating the accuracy of sampling-based approaches to the
calculation of posterior moments. In *Bayesian Statistics 4*, 169-193. Oxford
University Press.

Gelman, A. & Rubin, D. B. (1992). Inference from iterative simulation using
multiple sequences. *Statistical Science* 7(4), 457-472.

Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC. *Bayesian Analysis* 16(2), 667-718.

Kuhn, H. W. (1955). The Hungarian method for the assignment problem. *Naval
Research Logistics Quarterly* 2(1-2), 83-97.

Steyvers, M. & Griffiths, T. (2007). Probabilistic topic models. In *Handbook
of Latent Semantic Analysis*, 427-448 (matching topics across chains).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from mcmc.core.assignment import match
from mcmc.diagnostics import stats
from mcmc.diagnostics.stats.spectral import spectrum0_ar

__all__ = [
    "DEFAULT_MAX_LL_GAP",
    "DEFAULT_MAX_TREND",
    "DEFAULT_MIN_TREND_Z",
    "GAP_Z",
    "MIN_TREND_DRAWS",
    "SAME_MODE_FRACTION",
    "ChainTrend",
    "TopicAgreement",
    "TopicModelVerdict",
    "chain_trends",
    "judge_topic_model",
    "match_topics",
    "topic_agreement",
]

#: A chain is still burning in when its post-burn-in log joint per token rises by more than this
#: fraction of its climb from the first sweep (and by more than DEFAULT_MIN_TREND_Z standard errors).
DEFAULT_MAX_TREND = 0.025
#: Standard errors the rise must exceed to count: noise of short or tiny-corpus chains is not a trend.
DEFAULT_MIN_TREND_Z = 3.0
#: A chain is worse when its mean log joint per token is this many nats below the best chain's
#: (beyond GAP_Z standard errors): about 5% in perplexity.
DEFAULT_MAX_LL_GAP = 0.05
#: Standard errors subtracted from a gap before it is compared with max_ll_gap ("clearly" worse).
GAP_Z = 2.0
#: Gaps below this fraction of max_ll_gap count as agreement even when beyond Monte Carlo error
#: (an MCSE from one chain's ESS can be a little optimistic; 0.005 nats per token by default).
SAME_MODE_FRACTION = 0.1
#: Fewest post-burn-in iterations from which a trend is judged (an AR spectral variance needs a few).
MIN_TREND_DRAWS = 8


# --------------------------------------------------------------------------- within a chain


@dataclass(frozen=True)
class ChainTrend:
    """Whether one chain's post-burn-in log joint per token is still rising.

    Attributes
    ----------
    chain : int
    rise : float
        The least-squares line's rise across the post-burn-in window,
        ``slope * (n - 1)``, in nats per token (positive: rising).
    climb : float
        The chain's post-burn-in mean minus its value after the first sweep:
        how far it has come from the random start.
    statistic : float
        ``rise / climb``, the fraction of the climb still happening inside the
        window (0 for a chain that never rose and does not rise; ``inf`` for one
        that never rose but rises now; NaN for a non-finite trace).
    z : float
        ``rise`` over its standard error (spectral variance of the residuals).
    trending : bool
        ``statistic > max_trend`` and ``z > min_trend_z``, with at least
        :data:`MIN_TREND_DRAWS` post-burn-in draws.
    """

    chain: int
    rise: float
    climb: float
    statistic: float
    z: float
    trending: bool


def chain_trends(
    log_joint_per_token: np.ndarray,
    burn_in: int,
    *,
    max_trend: float = DEFAULT_MAX_TREND,
    min_trend_z: float = DEFAULT_MIN_TREND_Z,
) -> tuple[ChainTrend, ...]:
    """Judge every chain's post-burn-in log joint per token for a remaining upward trend.

    Parameters
    ----------
    log_joint_per_token : ndarray, shape (chain, iteration)
        Every iteration from the first sweep, burn-in first.
    burn_in : int
        Iterations before the window judged.
    max_trend : float
        Largest allowed ``rise / climb`` (see :class:`ChainTrend`).
    min_trend_z : float
        Standard errors a rise must exceed to count.

    Returns
    -------
    tuple of ChainTrend
        One per chain. With fewer than :data:`MIN_TREND_DRAWS` post-burn-in
        draws the numbers are computed where possible but no chain is
        ``trending`` (:func:`judge_topic_model` then fails the run as too short
        to judge). A chain with a non-finite value in the window or at the
        first sweep has NaN statistics and is not ``trending``.

    Notes
    -----
    For residuals ``e`` of the fitted line over ``t = 0..n-1`` (centred),
    ``Var(slope) ~= S_e(0) / sum(t^2)``, ``S_e(0)`` the spectral density at zero
    of ``e`` normalized so that ``Var(mean(e)) ~= S_e(0) / n``: the
    autocorrelation-consistent variance of a weighted sum with slowly varying
    weights, the same spectral variance Geweke (1992) uses for his z-score.
    """
    x = _as_trace(log_joint_per_token)
    burn_in = _check_burn_in(burn_in, x.shape[1])
    post = x[:, burn_in:]
    n = post.shape[1]
    finite = np.isfinite(post).all(axis=1) & np.isfinite(x[:, 0])
    t = np.arange(n, dtype=np.float64) - (n - 1) / 2.0
    tt = float(t @ t)
    with np.errstate(all="ignore"):
        mean = post.mean(axis=1)
        centred = post - mean[:, None]
        slope = centred @ t / tt if tt > 0 else np.zeros(x.shape[0])
        resid = centred - slope[:, None] * t
        spec = spectrum0_ar(resid)[0] if n >= 2 else np.full(x.shape[0], np.nan)
        se = np.sqrt(spec / tt) * (n - 1) if tt > 0 else np.full(x.shape[0], np.nan)
    rise = slope * (n - 1)
    climb = mean - x[:, 0]
    out = []
    for c in range(x.shape[0]):
        if not finite[c]:
            out.append(ChainTrend(c, math.nan, math.nan, math.nan, math.nan, False))
            continue
        r, cl, s = float(rise[c]), float(climb[c]), float(se[c])
        if cl > 0:
            stat = r / cl
        else:
            stat = 0.0 if r <= 0 else math.inf
        if r == 0:
            z = 0.0
        elif s > 0:
            z = r / s
        elif s == 0:
            z = math.copysign(math.inf, r)
        else:
            z = math.nan
        trending = n >= MIN_TREND_DRAWS and stat > max_trend and z > min_trend_z
        out.append(ChainTrend(c, r, cl, stat, z, bool(trending)))
    return tuple(out)


# --------------------------------------------------------------------------- across chains: topics


def match_topics(phi_a: np.ndarray, phi_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Match the topics of two chains one to one by Hungarian matching on Hellinger distance.

    Parameters
    ----------
    phi_a, phi_b : ndarray, shape (K, V)
        Topic-word distributions of two chains (rows are normalized here, so
        counts or a truncated phi -- each topic's top words only, zeros
        elsewhere -- work too).

    Returns
    -------
    match : ndarray of int, shape (K,)
        Topic ``k`` of ``a`` is matched to topic ``match[k]`` of ``b``.
    distance : ndarray, shape (K,)
        Hellinger distance of each matched pair, in [0, 1].

    Notes
    -----
    The matching minimizes the summed Hellinger distance over permutations
    (Kuhn 1955; ``scipy.optimize.linear_sum_assignment``), the usual way to
    undo label switching between chains or runs (Steyvers & Griffiths 2007).
    """
    a, b = _normalized(phi_a), _normalized(phi_b)
    if a.shape != b.shape:
        raise ValueError(f"phi of the two chains differ in shape: {a.shape} and {b.shape}")
    dist = _hellinger_of_roots(np.sqrt(a), np.sqrt(b))
    match = _assign(dist)
    return match, dist[np.arange(a.shape[0]), match]


def _hellinger_of_roots(root_a: np.ndarray, root_b: np.ndarray) -> np.ndarray:
    """Hellinger distances (K, K) from square roots of normalized rows (:func:`mcmc.core.lda.evaluate.hellinger`)."""
    return np.sqrt(1.0 - np.clip(root_a @ root_b.T, 0.0, 1.0))  # 1 - Bhattacharyya coefficient


def _assign(cost: np.ndarray) -> np.ndarray:
    """The permutation minimizing the summed cost (Hungarian method): row ``k`` goes to column ``match[k]``."""
    return match(cost)


@dataclass(frozen=True)
class TopicAgreement:
    """How far the topics of the chains agree after matching them across chains.

    Attributes
    ----------
    overlap : float
        Mean over chain pairs of the mean over matched topic pairs of the
        fraction of their top ``n_top`` words they share (1: every matched
        topic has the same top words, in any order).
    pairs : tuple of (int, int, float)
        ``(a, b, overlap)`` for every pair of chains ``a < b``.
    hellinger : float or None
        Mean Hellinger distance of the matched topics over all pairs (``None``
        when matched on top words alone).
    n_top : int
    """

    overlap: float
    pairs: tuple[tuple[int, int, float], ...]
    hellinger: float | None
    n_top: int


def topic_agreement(
    phi: np.ndarray | None = None, top_words: np.ndarray | None = None, *, n_top: int = 10
) -> TopicAgreement | None:
    """Match topics across every pair of chains and measure the overlap of their top words.

    Parameters
    ----------
    phi : ndarray, shape (chain, K, V), optional
        Each chain's topic-word distributions; topics are matched on their
        Hellinger distance (:func:`match_topics`).
    top_words : ndarray of int, shape (chain, K, n), optional
        Each topic's word ids, most probable first; the first ``n_top`` are
        compared. Default: the ``n_top`` most probable words of ``phi``.
        Without ``phi`` topics are matched to maximize the shared top words.
    n_top : int
        Top words compared per topic.

    Returns
    -------
    TopicAgreement or None
        ``None`` with fewer than two chains or neither ``phi`` nor ``top_words``.
    """
    if n_top < 1:
        raise ValueError(f"n_top must be at least 1, got {n_top}")
    if phi is None and top_words is None:
        return None
    if phi is not None:
        phi = np.asarray(phi, dtype=np.float64)
        if phi.ndim != 3:
            raise ValueError(f"phi must be (chain, K, V), got shape {phi.shape}")
    if top_words is None:
        from mcmc.core.lda.evaluate import top_words as most_probable  # start-up: only without top words given

        assert phi is not None
        top = most_probable(phi, n_top)  # ties to the lower word id, as mcmc lda shows them
    else:
        top = np.asarray(top_words)
        if top.ndim != 3:
            raise ValueError(f"top_words must be (chain, K, n), got shape {top.shape}")
        if phi is not None and top.shape[:2] != phi.shape[:2]:
            raise ValueError(f"top_words {top.shape} and phi {phi.shape} differ in chains or topics")
        top = top[..., :n_top]
    chains = top.shape[0]
    if chains < 2:
        return None
    n = top.shape[2]
    pairs: list[tuple[int, int, float]] = []
    distances: list[float] = []
    k = np.arange(top.shape[1])
    for a in range(chains):
        # two chains' square roots held at a time: phi itself can be hundreds of MB per chain (K = 500)
        root_a = None if phi is None else np.sqrt(_normalized(phi[a]))
        for b in range(a + 1, chains):
            shared = _shared_counts(top[a], top[b])  # (K, K)
            if phi is not None:
                dist = _hellinger_of_roots(root_a, np.sqrt(_normalized(phi[b])))
                match = _assign(dist)
                distances.append(float(dist[k, match].mean()))
            else:
                match = _assign(-shared)
            pairs.append((a, b, float(shared[k, match].mean() / n)))
    overlap = float(np.mean([p[2] for p in pairs]))
    return TopicAgreement(overlap, tuple(pairs), float(np.mean(distances)) if distances else None, n)


# --------------------------------------------------------------------------- the verdict


@dataclass(frozen=True)
class TopicModelVerdict:
    """The one verdict on a topic model's chains (:func:`judge_topic_model`).

    Attributes
    ----------
    passed : bool
        False when a chain is still burning in (``trending``), a chain is
        clearly worse than the best (``worse``), a chain's log joint is not
        finite (``nonfinite``), or the window is too short to judge
        (``judged`` False).
    status : str
        ``"fail"``, ``"warning"`` (passed, but the chains settled in modes of
        measurably different quality -- the multimodality every topic model
        has), or ``"ok"``.
    message : str
        One line saying what was found, worst first.
    advice : str
        What to do ("" when there is nothing to do).
    judged : bool
        At least :data:`MIN_TREND_DRAWS` post-burn-in iterations.
    n_chains, n_draws, burn_in : int
        Chains, post-burn-in iterations per chain, burn-in iterations.
    trends : tuple of ChainTrend
        Every chain's trend statistics.
    trending : tuple of int
        Chains still burning in.
    nonfinite : tuple of int
        Chains with a NaN or infinite log joint (first sweep or window).
    ll_mean, ll_mcse : tuple of float
        Per chain, the post-burn-in mean log joint per token and its Monte
        Carlo standard error (split-chain ESS of the chain alone; 0 for a
        constant chain; NaN for a non-finite one or under 4 draws).
    ll_gap, ll_gap_se : tuple of float
        Per chain, the best chain's mean minus this chain's (>= 0; 0 for the
        best) and its standard error ``sqrt(mcse_c^2 + mcse_best^2)``.
    best : int or None
        The chain with the highest mean (``None`` when no chain is finite).
    worse : tuple of int
        Chains with ``gap - GAP_Z * gap_se > max_ll_gap``.
    distinct : tuple of int
        Other chains below the best by more than ``GAP_Z`` standard errors and
        more than ``SAME_MODE_FRACTION * max_ll_gap``, but within the margin:
        settled in a different, about as good mode.
    topic_overlap : float or None
        Mean matched top-word overlap over chain pairs (:func:`topic_agreement`);
        ``None`` with one chain or without ``phi`` and ``top_words``.
    topic_overlap_pairs : tuple of (int, int, float)
    topic_hellinger : float or None
        Mean Hellinger distance of matched topics.
    max_trend, min_trend_z, max_ll_gap : float
    n_top : int
        The thresholds and the number of top words compared.
    """

    passed: bool
    status: str
    message: str
    advice: str
    judged: bool
    n_chains: int
    n_draws: int
    burn_in: int
    trends: tuple[ChainTrend, ...]
    trending: tuple[int, ...]
    nonfinite: tuple[int, ...]
    ll_mean: tuple[float, ...]
    ll_mcse: tuple[float, ...]
    ll_gap: tuple[float, ...]
    ll_gap_se: tuple[float, ...]
    best: int | None
    worse: tuple[int, ...]
    distinct: tuple[int, ...]
    topic_overlap: float | None
    topic_overlap_pairs: tuple[tuple[int, int, float], ...]
    topic_hellinger: float | None
    max_trend: float
    min_trend_z: float
    max_ll_gap: float
    n_top: int

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values: tuples as lists, NaN and infinities as ``None``."""
        return _jsonable(asdict(self))


def judge_topic_model(
    log_joint_per_token: np.ndarray,
    burn_in: int,
    *,
    phi: np.ndarray | None = None,
    top_words: np.ndarray | None = None,
    max_ll_gap: float = DEFAULT_MAX_LL_GAP,
    max_trend: float = DEFAULT_MAX_TREND,
    min_trend_z: float = DEFAULT_MIN_TREND_Z,
    n_top: int = 10,
) -> TopicModelVerdict:
    """Judge a topic model's chains: each on its own for a trend, then against each other as modes.

    Parameters
    ----------
    log_joint_per_token : ndarray, shape (chain, iteration) or (iteration,)
        The log joint per token after every sweep, from the first, burn-in
        included (``LdaFit.log_joint_per_token``; the estimates file's
        ``trace_log_joint_per_token``). A 1-D array is one chain.
    burn_in : int
        Leading iterations left out of the estimates (``0 <= burn_in < iterations``).
    phi : ndarray, shape (chain, K, V), optional
        Each chain's topic-word distributions (``LdaFit.phi``), for the topic
        agreement; a truncated phi (top words only, zeros elsewhere) gives
        nearly the same matching.
    top_words : ndarray of int, shape (chain, K, n), optional
        Each topic's words, most probable first; default: from ``phi``.
    max_ll_gap : float
        Nats per token by which a chain may fall below the best chain's mean
        log joint per token (beyond :data:`GAP_Z` standard errors) before it
        fails as worse.
    max_trend, min_trend_z : float
        When a chain is still burning in (:func:`chain_trends`).
    n_top : int
        Top words compared per matched topic.

    Returns
    -------
    TopicModelVerdict

    Notes
    -----
    Decisions, and why:

    * A chain is judged on its own window only. Chains in different modes
      are not a failure: LDA's posterior has many near-equivalent modes
      (label switching aside) that Gibbs chains do not cross in practice.
    * Fewer than :data:`MIN_TREND_DRAWS` post-burn-in iterations fail as too
      short to judge: a trend's standard error cannot be estimated from so
      few, and on every corpus studied (tests/data/lda_gate/README.md) a run
      that short is still climbing, so a pass would nearly always be wrong.
    * One chain: the across-chain part is skipped (no gap, no overlap).
    * A constant trace (K = 1, or a chain that cannot move) has no rise and
      passes; a non-finite value fails (the sampler or the corpus is broken).
    """
    x = _as_trace(log_joint_per_token)
    burn_in = _check_burn_in(burn_in, x.shape[1])
    if max_ll_gap < 0 or max_trend < 0 or not math.isfinite(min_trend_z):
        raise ValueError("max_ll_gap and max_trend must be >= 0 and min_trend_z finite")
    chains = x.shape[0]
    if phi is not None and np.shape(phi)[0] != chains:
        raise ValueError(f"phi has {np.shape(phi)[0]} chains, the trace {chains}")
    if top_words is not None and np.shape(top_words)[0] != chains:
        raise ValueError(f"top_words has {np.shape(top_words)[0]} chains, the trace {chains}")
    post = x[:, burn_in:]
    n = post.shape[1]
    judged = n >= MIN_TREND_DRAWS
    trends = chain_trends(x, burn_in, max_trend=max_trend, min_trend_z=min_trend_z)
    nonfinite = tuple(c for c in range(chains) if not (np.isfinite(post[c]).all() and np.isfinite(x[c, 0])))
    trending = tuple(t.chain for t in trends if t.trending)

    mean, mcse = _means(post)
    ok = np.array([c not in nonfinite for c in range(chains)])
    mean[~ok] = np.nan
    mcse[~ok] = np.nan
    best = int(np.nanargmax(mean)) if ok.any() else None
    if best is None:
        gap = np.full(chains, np.nan)
        gap_se = np.full(chains, np.nan)
    else:
        gap = mean[best] - mean
        gap_se = np.sqrt(np.nan_to_num(mcse) ** 2 + np.nan_to_num(mcse[best]) ** 2)
        gap_se[~ok] = np.nan
    with np.errstate(invalid="ignore"):
        worse_mask = ok & (gap - GAP_Z * np.nan_to_num(gap_se) > max_ll_gap)
        distinct_mask = (ok & ~worse_mask & (gap > GAP_Z * np.nan_to_num(gap_se))
                         & (gap > SAME_MODE_FRACTION * max_ll_gap) & (gap > 0))  # fmt: skip
    worse = tuple(int(c) for c in np.flatnonzero(worse_mask))
    distinct = tuple(int(c) for c in np.flatnonzero(distinct_mask))

    agreement = None
    if chains > 1 and (phi is not None or top_words is not None):
        keep = [c for c in range(chains) if phi is None or np.isfinite(np.asarray(phi[c])).all()]
        if len(keep) > 1:
            every = len(keep) == chains  # then phi is passed as it is: a copy of it can be gigabytes
            agreement = topic_agreement(
                None if phi is None else (phi if every else np.asarray(phi)[keep]),
                None if top_words is None else np.asarray(top_words)[keep],
                n_top=n_top,
            )
            if agreement is not None and len(keep) < chains:  # report the pairs by the caller's chain numbers
                pairs = tuple((keep[a], keep[b], v) for a, b, v in agreement.pairs)
                agreement = TopicAgreement(agreement.overlap, pairs, agreement.hellinger, agreement.n_top)

    passed = judged and not nonfinite and not trending and not worse
    status = "fail" if not passed else ("warning" if distinct else "ok")
    message, advice = _words(
        judged=judged, n=n, chains=chains, trends=trends, trending=trending, nonfinite=nonfinite, gap=gap,
        gap_se=gap_se, best=best, worse=worse, distinct=distinct, agreement=agreement, max_ll_gap=max_ll_gap,
        max_trend=max_trend,
    )  # fmt: skip
    return TopicModelVerdict(
        passed=bool(passed), status=status, message=message, advice=advice, judged=judged, n_chains=chains,
        n_draws=n, burn_in=burn_in, trends=trends, trending=trending, nonfinite=nonfinite,
        ll_mean=_floats(mean), ll_mcse=_floats(mcse), ll_gap=_floats(gap), ll_gap_se=_floats(gap_se), best=best,
        worse=worse, distinct=distinct, topic_overlap=None if agreement is None else agreement.overlap,
        topic_overlap_pairs=() if agreement is None else agreement.pairs,
        topic_hellinger=None if agreement is None else agreement.hellinger, max_trend=float(max_trend),
        min_trend_z=float(min_trend_z), max_ll_gap=float(max_ll_gap), n_top=int(n_top),
    )  # fmt: skip


# --------------------------------------------------------------------------- helpers


def _as_trace(x: np.ndarray) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"log_joint_per_token must be (chain, iteration) with at least one of each, got {a.shape}")
    return a


def _check_burn_in(burn_in: int, iterations: int) -> int:
    b = int(burn_in)
    if b != burn_in or not 0 <= b < iterations:
        raise ValueError(f"burn_in must be an integer in [0, {iterations}), got {burn_in}")
    return b


def _normalized(p: np.ndarray) -> np.ndarray:
    a = np.asarray(p, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"phi of a chain must be (K, V), got shape {a.shape}")
    total = a.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, a / total, 0.0)


def _shared_counts(top_a: np.ndarray, top_b: np.ndarray) -> np.ndarray:
    """(K, K): how many of the top words of topic i of ``a`` are among those of topic j of ``b``."""
    k, n = top_a.shape
    out = np.empty((k, top_b.shape[0]))
    step = max(1, (1 << 22) // max(1, top_b.size * n))  # rows per block: a few million comparisons at a time
    for i in range(0, k, step):
        eq = top_a[i : i + step, None, :, None] == top_b[None, :, None, :]  # (rows, K, n, n)
        out[i : i + step] = eq.any(axis=3).sum(axis=2)
    return out


def _means(post: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per chain, the mean and its MCSE from the chain alone (split-chain ESS; 0 when constant)."""
    with np.errstate(all="ignore"):
        mean = post.mean(axis=1)
        if post.shape[1] >= stats.MIN_DRAWS:
            mcse = np.asarray(stats.mcse_mean(np.ascontiguousarray(post.T)[None, :, :]), dtype=np.float64)
        else:
            mcse = np.full(post.shape[0], np.nan)
    constant = np.isfinite(post).all(axis=1) & (post.max(axis=1) == post.min(axis=1))
    mcse[constant] = 0.0
    return mean, mcse


def _floats(a: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in a)


def _chains(cs: tuple[int, ...] | list[int]) -> str:
    return ("chain " if len(cs) == 1 else "chains ") + ", ".join(str(c) for c in cs)


def _words(
    *,
    judged: bool,
    n: int,
    chains: int,
    trends: tuple[ChainTrend, ...],
    trending: tuple[int, ...],
    nonfinite: tuple[int, ...],
    gap: np.ndarray,
    gap_se: np.ndarray,
    best: int | None,
    worse: tuple[int, ...],
    distinct: tuple[int, ...],
    agreement: TopicAgreement | None,
    max_ll_gap: float,
    max_trend: float,
) -> tuple[str, str]:
    """The verdict's one-line message and its advice, the worst finding first."""
    parts: list[str] = []
    advice: list[str] = []
    if nonfinite:
        parts.append(f"{_chains(nonfinite)}: the log joint is not finite")
        advice.append("the sampler produced a NaN or infinite log joint: check the corpus and alpha, beta")
    if not judged:
        parts.append(f"{n} post-burn-in iterations are too few to judge whether the chains still rise "
                     f"(at least {MIN_TREND_DRAWS})")  # fmt: skip
        advice.append("run more iterations (--iterations)")
    if trending:
        worst = max(trending, key=lambda c: trends[c].statistic)
        t = trends[worst]
        parts.append(f"{_chains(trending)} still burning in: the log joint per token still rises "
                     f"({t.rise:.3g} over the last {n} iterations, {t.statistic:.1%} of its climb; limit "
                     f"{max_trend:.1%})")  # fmt: skip
        advice.append("still burning in: run more iterations (--iterations)")
    if worse and best is not None:
        w = max(worse, key=lambda c: gap[c])
        parts.append(f"{_chains(worse)} clearly worse than chain {best}: log joint per token lower by "
                     f"{gap[w]:.3g} +- {gap_se[w]:.2g} (limit {max_ll_gap:g})")  # fmt: skip
        advice.append("a chain is stuck in a poorer mode: run more iterations (--iterations), or use the best chain's topics")
    overlap = ""
    if agreement is not None:
        overlap = f"; matched topics share {agreement.overlap:.0%} of their top {agreement.n_top} words"
    if not parts:
        if chains == 1:
            parts.append("the chain has stopped rising (one chain: nothing to compare across chains)")
        elif distinct:
            largest = float(np.nanmax(gap))
            parts.append(f"the chains settled in different modes of similar quality (log joint per token within "
                         f"{largest:.3g} of the best; limit {max_ll_gap:g}){overlap}: topic models have many "
                         f"equally good modes, so use one chain's topics, do not average across chains")  # fmt: skip
        else:
            parts.append(f"the chains have stopped rising and agree in log joint per token{overlap}")
    elif overlap and chains > 1:
        parts[-1] += overlap
    return "; ".join(parts), "; ".join(advice)


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, float | np.floating):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v
