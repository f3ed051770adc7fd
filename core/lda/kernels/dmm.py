"""Dirichlet-multinomial mixture, one topic per document, by collapsed Gibbs.

Nigam et al. (2000); Yin & Wang (2014), GSDMM: :func:`dmm_sweep` draws every
document's topic from its full conditional; :func:`dmm_log_joint_from_counts`
is the mixture's collapsed joint (:mod:`mcmc.core.lda.likelihood`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from mcmc.core.lda.kernels.common import topic_word_part
from mcmc.core.lda.kernels.rng import uniform


@njit(cache=True, nogil=True)
def doc_word_counts(
    doc_ptr: np.ndarray, words: np.ndarray, vocab_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct words of every document and their counts (CSR).

    Returns ``ptr`` int64 (D + 1,), ``word`` int32, ``count`` int32.
    """
    n_docs = doc_ptr.size - 1
    seen = np.full(vocab_size, -1, dtype=np.int64)
    ptr = np.zeros(n_docs + 1, dtype=np.int64)
    word = np.empty(words.size, dtype=np.int32)
    count = np.zeros(words.size, dtype=np.int32)
    n = 0
    for d in range(n_docs):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            if seen[w] < ptr[d]:
                seen[w] = n
                word[n] = w
                n += 1
            count[seen[w]] += 1
        ptr[d + 1] = n
    return ptr, word[:n].copy(), count[:n].copy()


@njit(cache=True, nogil=True)
def dmm_sweep(
    dw_ptr: np.ndarray,
    dw_word: np.ndarray,
    dw_count: np.ndarray,
    zd: np.ndarray,
    mk: np.ndarray,
    nwk: np.ndarray,
    nk: np.ndarray,
    alpha: float,
    beta: float,
    key: np.uint64,
    prob_sum: np.ndarray,
    record: bool,
    lg_beta: np.ndarray,
) -> None:
    """One collapsed Gibbs sweep over the document topics of the mixture.

    ``p(z_d = k | z_-d, w) ∝ (m_k + alpha) prod_w prod_{j < c_dw} (n_kw + beta + j)
    / prod_{j < N_d} (n_k + V beta + j)`` with the counts of the other
    documents (Yin & Wang 2014, eq. 4 with repeated words), computed in logs.

    Parameters
    ----------
    dw_ptr, dw_word, dw_count : :func:`doc_word_counts` of the corpus
    zd : int32 (D,) topic of every document, updated in place
    mk : int32 (K,) documents per topic; nwk : int32 (V, K); nk : int32 (K,)
    prob_sum : float (D, K)
        If ``record``, the normalised conditional of every document is added
        to it (the Rao-Blackwellised estimate of p(z_d = k | w)).
    lg_beta : float
        ``lgamma(j + beta)`` for j = 0 .. the largest word frequency.
    """
    n_topics = nk.size
    vbeta = nwk.shape[0] * beta
    logp = np.empty(n_topics)
    for d in range(dw_ptr.size - 1):
        start, stop = dw_ptr[d], dw_ptr[d + 1]
        length = 0
        for j in range(start, stop):
            length += dw_count[j]
        t = zd[d]
        mk[t] -= 1
        nk[t] -= length
        for j in range(start, stop):
            nwk[dw_word[j], t] -= dw_count[j]
        top = -np.inf
        for k in range(n_topics):
            # prod_{c < n} (x + c) = Gamma(x + n) / Gamma(x): table lookups
            # for the words, two lgamma calls for the topic's token count
            lp = math.log(mk[k] + alpha)
            for j in range(start, stop):
                n = nwk[dw_word[j], k]
                lp += lg_beta[n + dw_count[j]] - lg_beta[n]
            lp -= math.lgamma(nk[k] + vbeta + length) - math.lgamma(nk[k] + vbeta)
            logp[k] = lp
            if lp > top:
                top = lp
        total = 0.0
        for k in range(n_topics):
            logp[k] = math.exp(logp[k] - top)
            total += logp[k]
        u = uniform(key, d) * total
        t = n_topics - 1
        acc = 0.0
        for k in range(n_topics):
            acc += logp[k]
            if u < acc:
                t = k
                break
        if record:
            for k in range(n_topics):
                prob_sum[d, k] += logp[k] / total
        zd[d] = t
        mk[t] += 1
        nk[t] += length
        for j in range(start, stop):
            nwk[dw_word[j], t] += dw_count[j]


@njit(cache=True, nogil=True)
def expand_doc_topics(doc_ptr: np.ndarray, zd: np.ndarray, z: np.ndarray) -> None:
    """Token topics from document topics: ``z[doc_ptr[d]:doc_ptr[d+1]] = zd[d]``."""
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            z[i] = zd[d]


@njit(cache=True, nogil=True)
def dmm_log_joint_from_counts(
    mk: np.ndarray, nwk: np.ndarray, nk: np.ndarray, alpha: float, beta: float, lg_beta: np.ndarray
) -> float:
    """Collapsed log joint of the Dirichlet-multinomial mixture from its counts.

    ``mk`` (K,) documents per topic, ``nwk`` (V, K), ``nk`` (K,) tokens per
    topic, ``lg_beta[j] = lgamma(j + beta)``.
    """
    n_topics = nk.size
    n_docs = 0
    for k in range(n_topics):
        n_docs += mk[k]
    kalpha = n_topics * alpha
    total = math.lgamma(kalpha) - math.lgamma(n_docs + kalpha)
    lga = math.lgamma(alpha)
    for k in range(n_topics):
        total += math.lgamma(mk[k] + alpha) - lga
    return total + topic_word_part(nwk, nk, beta, lg_beta)

