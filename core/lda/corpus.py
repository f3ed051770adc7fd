"""Corpora for `mcmc lda`: the token layout, the synthetic default, and vocabulary pruning.

A :class:`Corpus` is a bag of documents stored as two flat arrays (CSR-like):
``words[doc_ptr[d]:doc_ptr[d + 1]]`` are the word ids of document ``d``. Token
order inside a document carries no meaning for LDA; the readers emit a
document's tokens grouped by word, in file order.

Files are read by :mod:`mcmc.core.lda.readers` (LDA-C, UCI bag-of-words, plain
text; :func:`~mcmc.core.lda.readers.load_corpus` is the one entry point).

Synthetic corpus
----------------
:func:`synthetic_corpus` draws from the LDA generative process (Blei, Ng &
Jordan 2003; Griffiths & Steyvers 2004): ``phi_k ~ Dir(beta)``,
``theta_d ~ Dir(alpha)``, ``z ~ Mult(theta_d)``, ``w ~ Mult(phi_z)``, and returns
the truth so a fit can be scored (:func:`mcmc.core.lda.evaluate.topic_recovery`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.memory import require_memory

if TYPE_CHECKING:
    import scipy.sparse


@dataclass(frozen=True, eq=False)
class Corpus:
    """Documents as flat token arrays.

    Attributes
    ----------
    doc_ptr
        int64, shape ``(D + 1,)``, non-decreasing, ``doc_ptr[0] == 0``: the
        tokens of document ``d`` are ``words[doc_ptr[d]:doc_ptr[d + 1]]``.
    words
        int32, shape ``(N,)``: the word id of every token, documents contiguous.
    vocab
        The ``V`` words; ids index into it.
    """

    doc_ptr: np.ndarray
    words: np.ndarray
    vocab: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "doc_ptr", np.ascontiguousarray(self.doc_ptr, dtype=np.int64))
        object.__setattr__(self, "words", np.ascontiguousarray(self.words, dtype=np.int32))
        object.__setattr__(self, "vocab", tuple(self.vocab))
        if self.doc_ptr.ndim != 1 or self.doc_ptr.size == 0 or self.doc_ptr[0] != 0:
            raise ValueError("doc_ptr must be 1-D and start at 0")
        if self.doc_ptr[-1] != self.words.size or np.any(np.diff(self.doc_ptr) < 0):
            raise ValueError("doc_ptr must be non-decreasing and end at len(words)")

    @property
    def n_docs(self) -> int:
        """Number of documents ``D`` (including empty ones)."""
        return self.doc_ptr.size - 1

    @property
    def n_tokens(self) -> int:
        """Number of tokens ``N``."""
        return int(self.words.size)

    @property
    def vocab_size(self) -> int:
        """Vocabulary size ``V``."""
        return len(self.vocab)

    @property
    def doc_lengths(self) -> np.ndarray:
        """int64, shape ``(D,)``: tokens per document."""
        return np.diff(self.doc_ptr)

    def doc_of_token(self) -> np.ndarray:
        """int64, shape ``(N,)``: the document of every token."""
        return np.repeat(np.arange(self.n_docs, dtype=np.int64), self.doc_lengths)

    def subset(self, docs: np.ndarray) -> Corpus:
        """The documents ``docs`` (int array, in that order) with the same vocabulary."""
        docs = np.asarray(docs, dtype=np.int64)
        lengths = self.doc_lengths[docs]
        ptr = np.concatenate([[0], np.cumsum(lengths)])
        # Position of every kept token in the original array, without a loop per document.
        starts = np.repeat(self.doc_ptr[docs] - ptr[:-1], lengths)
        idx = starts + np.arange(ptr[-1])
        return Corpus(ptr, self.words[idx], self.vocab)

    def document_term_matrix(self) -> scipy.sparse.csr_matrix:
        """Counts as a sparse ``(D, V)`` int64 CSR matrix (SciPy is imported here)."""
        import scipy.sparse

        data = np.ones(self.n_tokens, dtype=np.int64)
        m = scipy.sparse.coo_matrix(
            (data, (self.doc_of_token(), self.words.astype(np.int64))), shape=(self.n_docs, self.vocab_size)
        )
        return m.tocsr()  # duplicates are summed


@dataclass(frozen=True, eq=False)
class SyntheticCorpus:
    """A corpus drawn from the LDA generative process, with the truth.

    Attributes
    ----------
    corpus
        The documents.
    phi
        shape ``(K, V)``: true topic-word distributions.
    theta
        shape ``(D, K)``: true document-topic proportions.
    z
        int32, shape ``(N,)``: true topic of every token.
    alpha, beta
        The Dirichlet parameters used to generate: beta symmetric, alpha
        symmetric (a float) or one per topic (float (K,)).
    """

    corpus: Corpus
    phi: np.ndarray
    theta: np.ndarray
    z: np.ndarray
    alpha: float | np.ndarray
    beta: float


#: Tokens whose topics :func:`synthetic_corpus` draws at once (a block is a tokens x K table).
_BLOCK_TOKENS = 1 << 16


def synthetic_corpus(
    rng: np.random.Generator,
    *,
    n_topics: int = 10,
    vocab_size: int = 500,
    n_docs: int = 500,
    doc_length: int = 100,
    alpha: float | np.ndarray = 0.1,
    beta: float = 0.05,
) -> SyntheticCorpus:
    """Draw a corpus from LDA's generative process.

    ``phi_k ~ Dir(beta 1_V)``, ``theta_d ~ Dir(alpha 1_K)``, then each of the
    ``doc_length`` tokens of document ``d`` gets ``z ~ Categorical(theta_d)`` and
    ``w ~ Categorical(phi_z)``. The defaults (10 sparse topics over 500 words,
    500 documents of 100 tokens, few topics per document) make the topics
    recoverable by a short Gibbs run, so the fit can be checked against the truth.
    Words are named ``w000``, ``w001``, ...

    Parameters
    ----------
    rng
        The only source of randomness.
    alpha
        Symmetric, or one concentration per topic (K,): an asymmetric prior
        such as Monte Carlo EM should recover.

    Returns
    -------
    SyntheticCorpus
    """
    for name, value in (("n_topics", n_topics), ("vocab_size", vocab_size), ("n_docs", n_docs)):
        if value < 1:
            raise UsageError(f"synthetic corpus: {name} must be at least 1, got {value}")
    if doc_length < 0 or np.any(np.asarray(alpha) <= 0) or beta <= 0:
        raise UsageError("synthetic corpus: doc_length must be >= 0 and alpha, beta > 0")
    if np.ndim(alpha) > 0 and np.shape(alpha) != (n_topics,):
        raise UsageError(f"synthetic corpus: alpha needs one value per topic ({n_topics}), got {np.shape(alpha)}")
    k, v, d = n_topics, vocab_size, n_docs
    # per token a document index, two uniforms, a topic and a word (8-byte units, rounded up); theta and phi
    require_memory(4 * d * doc_length + d * k + k * v, 8, f"a synthetic corpus of {d} documents x {doc_length} "
                   f"tokens, K = {k}, V = {v}", None)
    phi = rng.dirichlet(np.full(v, beta), size=k)
    theta = rng.dirichlet(np.broadcast_to(np.asarray(alpha, dtype=np.float64), (k,)), size=d)
    n = d * doc_length
    doc = np.repeat(np.arange(d), doc_length)
    u_topic = rng.random(n)
    u_word = rng.random(n)
    # Inverse-CDF draws; the clip guards against cumulative sums ending a hair below 1.
    # In blocks of tokens: the comparison is a (tokens, K) table.
    cum_theta = np.cumsum(theta, axis=1)
    z = np.empty(n, dtype=np.int32)
    for start in range(0, n, _BLOCK_TOKENS):
        block = slice(start, start + _BLOCK_TOKENS)
        z[block] = np.minimum((u_topic[block, None] >= cum_theta[doc[block]]).sum(axis=1), k - 1)
    words = np.empty(n, dtype=np.int32)
    cum_phi = np.cumsum(phi, axis=1)
    for topic in range(k):  # K is small; a token x V table would not be
        idx = np.flatnonzero(z == topic)
        words[idx] = np.minimum(np.searchsorted(cum_phi[topic], u_word[idx], side="right"), v - 1)
    width = len(str(v - 1))
    vocab = tuple(f"w{i:0{width}d}" for i in range(v))
    corpus = Corpus(np.arange(d + 1, dtype=np.int64) * doc_length, words, vocab)
    alpha = float(alpha) if np.ndim(alpha) == 0 else np.array(alpha, dtype=np.float64)
    return SyntheticCorpus(corpus, phi, theta, z, alpha, float(beta))


# -- pruning -------------------------------------------------------------------------


def document_frequency(corpus: Corpus) -> np.ndarray:
    """int64, shape ``(V,)``: number of documents containing each word."""
    doc = corpus.doc_of_token()
    key = np.unique(doc * corpus.vocab_size + corpus.words)
    return np.bincount(key % corpus.vocab_size, minlength=corpus.vocab_size)


def filter_vocabulary(corpus: Corpus, *, min_df: float = 1, max_df: float = 1.0, source: str | None = None) -> Corpus:
    """Keep the words whose document frequency is within ``[min_df, max_df]``.

    ``min_df`` >= 1 is an absolute number of documents, ``0 < min_df < 1`` a
    fraction of them; ``max_df`` in ``(0, 1]`` is a fraction. Word ids are
    renumbered in the old order; documents (even emptied ones) are kept.
    """
    if min_df < 0 or not (0 < max_df <= 1):
        raise UsageError(f"--min-df must be >= 0 and --max-df in (0, 1], got {min_df} and {max_df}")
    d = corpus.n_docs
    low = min_df if min_df >= 1 else min_df * d
    df = document_frequency(corpus)
    keep = (df >= low) & (df <= max_df * d)
    if keep.all():
        return corpus
    if not keep.any():
        raise InputError(source, f"empty corpus: no word has a document frequency within [{min_df}, {max_df}]")
    new_id = np.cumsum(keep) - 1
    token_keep = keep[corpus.words]
    lengths = np.bincount(corpus.doc_of_token()[token_keep], minlength=corpus.n_docs)
    vocab = tuple(w for w, k in zip(corpus.vocab, keep, strict=True) if k)
    return Corpus(np.concatenate([[0], np.cumsum(lengths)]), new_id[corpus.words[token_keep]], vocab)
