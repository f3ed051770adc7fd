"""Collapsed log joints: LDA's ``log p(w, z)`` and the mixture's ``log p(w, z)``.

LDA (Griffiths & Steyvers 2004, eq. 2-3), theta and phi integrated out::

    log p(w, z) = sum_d [lgamma(K a) - lgamma(N_d + K a) + sum_k (lgamma(n_dk + a) - lgamma(a))]
                + sum_k [lgamma(V b) - lgamma(n_k + V b) + sum_w (lgamma(n_kw + b) - lgamma(b))]

Dirichlet-multinomial mixture (one topic ``z_d`` per document; Nigam et al.
2000, Yin & Wang 2014), mixture weights and phi integrated out::

    log p(w, z) = lgamma(K a) - lgamma(D + K a) + sum_k (lgamma(m_k + a) - lgamma(a))
                + sum_k [lgamma(V b) - lgamma(n_k + V b) + sum_w (lgamma(n_kw + b) - lgamma(b))]

with ``m_k`` documents and ``n_k`` tokens in topic k. Terms with a zero count
vanish, so both are computed over nonzero counts only, with ``lgamma`` of
integer-plus-constant arguments read from lookup tables.
"""

from __future__ import annotations

import numpy as np

from mcmc.core.lda.kernels import common
from mcmc.core.lda.kernels import dmm as kdmm


def _check(doc_ptr: np.ndarray, words: np.ndarray, z: np.ndarray, n_topics: int, vocab_size: int) -> None:
    if z.shape != words.shape:
        raise ValueError(f"z has shape {z.shape}, words {words.shape}")
    if words.size and (z.min() < 0 or z.max() >= n_topics):
        raise ValueError("z outside 0 .. n_topics - 1")
    if words.size and (words.min() < 0 or words.max() >= vocab_size):
        raise ValueError("word id outside 0 .. vocab_size - 1")
    if doc_ptr[0] != 0 or doc_ptr[-1] != words.size:
        raise ValueError("doc_ptr must run from 0 to the number of tokens")


def collapsed_log_joint(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z: np.ndarray,
    *,
    n_topics: int,
    vocab_size: int,
    alpha: float,
    beta: float,
) -> float:
    """Collapsed LDA log joint ``log p(w, z | alpha, beta)``.

    Parameters
    ----------
    doc_ptr : int (D + 1,)
        Tokens of document d are ``words[doc_ptr[d]:doc_ptr[d + 1]]``.
    words : int (N,)
        Word id of every token.
    z : int (N,)
        Topic of every token.
    n_topics, vocab_size : K and V.
    alpha, beta : symmetric Dirichlet concentrations of theta and phi.

    Returns
    -------
    float
        The log joint in nats (divide by N for the per-token value).
    """
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    words = np.ascontiguousarray(words, dtype=np.int32)
    z = np.ascontiguousarray(z, dtype=np.int32)
    _check(doc_ptr, words, z, n_topics, vocab_size)
    nwk = common.word_topic_counts(words, z, n_topics, vocab_size)
    nk = common.topic_counts(z, n_topics)
    longest = int(np.diff(doc_ptr).max(initial=0))
    lg_alpha = common.lgamma_table(float(alpha), longest)
    lg_beta = common.lgamma_table(float(beta), int(nwk.max(initial=0)))
    return float(common.log_joint_from_counts(doc_ptr, z, nwk, nk, float(alpha), float(beta), lg_alpha, lg_beta))


def dmm_log_joint(
    doc_ptr: np.ndarray,
    words: np.ndarray,
    z_doc: np.ndarray,
    *,
    n_topics: int,
    vocab_size: int,
    alpha: float,
    beta: float,
) -> float:
    """Collapsed log joint ``log p(w, z)`` of the Dirichlet-multinomial mixture.

    Parameters
    ----------
    doc_ptr, words : the corpus, as in :func:`collapsed_log_joint`.
    z_doc : int (D,)
        Topic of every document.
    n_topics, vocab_size, alpha, beta : K, V and the symmetric concentrations
        of the mixture weights and of phi.
    """
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    words = np.ascontiguousarray(words, dtype=np.int32)
    z_doc = np.ascontiguousarray(z_doc, dtype=np.int32)
    n_docs = doc_ptr.size - 1
    if z_doc.shape != (n_docs,):
        raise ValueError(f"z_doc has shape {z_doc.shape}, expected ({n_docs},)")
    z_tok = np.repeat(z_doc, np.diff(doc_ptr))
    _check(doc_ptr, words, z_tok, n_topics, vocab_size)
    nwk = common.word_topic_counts(words, z_tok, n_topics, vocab_size)
    nk = common.topic_counts(z_tok, n_topics)
    mk = common.topic_counts(z_doc, n_topics)
    lg_beta = common.lgamma_table(float(beta), int(nwk.max(initial=0)))
    return float(kdmm.dmm_log_joint_from_counts(mk, nwk, nk, float(alpha), float(beta), lg_beta))
