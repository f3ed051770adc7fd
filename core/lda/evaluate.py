"""Scoring a fitted topic model: held-out perplexity, coherence, topic recovery.

Held-out perplexity by document completion
------------------------------------------
Wallach, Murray, Salakhutdinov & Mimno (2009), "Evaluation methods for topic
models" (ICML), review ways to estimate ``p(w_test | training data)``. We use
*document completion* (their Section 4; Rosen-Zvi et al. 2004): a fraction of
the documents is held out before training; each held-out document's tokens
are split by a fixed rule into an observed half (even positions) and a target
half (odd positions). With ``phi`` fixed at the trained estimate, ``theta_d`` is
estimated from the observed half by Gibbs sampling of its topic assignments
(``p(z_i = k | z_-i) ∝ (n_dk^-i + alpha) phi_k,w_i``, the partially collapsed
sampler's own sweep, :func:`mcmc.core.lda.kernels.partial.partial_sweep`; the
first sweep assigns tokens one by one, then ``sweeps`` full sweeps, the last
``sweeps - burn_in`` averaged into ``theta_d = (n_dk + alpha) / (n_d + K alpha)``), and the target
half is scored as ``sum_i log sum_k theta_dk phi_k,w_i``. Perplexity is
``exp(-sum log p / number of target tokens)``. This plugs in a point estimate
of ``theta_d`` (it is not the left-to-right marginal likelihood of Wallach et
al.'s Section 4.2), which is the usual and fast variant; because tokens within
a document are grouped by word, alternating positions split each word's count
evenly between the halves.

Coherence
---------
UMass and NPMI use *document* co-occurrence in the training corpus over the
top-``M`` words ``v_1, ..., v_M`` of a topic (``D(v)`` = documents containing
``v``, ``D(v, u)`` = documents containing both, ``D`` = documents):

* UMass (Mimno, Wallach, Talley, Leenders & McCallum 2011):
  ``log((D(v_m, v_l) + 1) / D(v_l))`` for ``l < m``. Mimno et al. sum over the
  ``M(M-1)/2`` pairs; we report the mean over pairs (as gensim does) so values
  do not depend on ``M``. Higher (closer to 0) is better.
* NPMI (Bouma 2009): ``log(P(u, v) / (P(u) P(v))) / -log P(u, v)`` with
  ``P(v) = D(v) / D``; ``-1`` when the pair never co-occurs, ``1`` when
  ``P(u, v) = 1``; the mean over pairs, in ``[-1, 1]``. Röder, Both & Hinneburg
  (2015) estimate these probabilities from a sliding window over a reference
  corpus; here they come from whole-document co-occurrence in the training
  corpus.
* C_V (Röder, Both & Hinneburg 2015, "Exploring the space of topic coherence
  measures", WSDM): probabilities are the fractions of *boolean sliding
  windows* of 110 tokens over the training documents that contain the word(s)
  (a document of ``n`` tokens has ``max(n - 109, 1)`` windows, one if it is
  shorter than the window, none if it is empty; a word is in a window if any
  of its copies is). With ``NPMI(u, v) = log((P(u, v) + e) / (P(u) P(v))) /
  -log(P(u, v) + e)``, ``e = 1e-12``, each top word ``w_i`` gets the context
  vector ``v_i = [NPMI(w_i, w_j)]_j`` over all ``M`` top words (``j = i``
  included) and the topic the sum ``s = sum_i v_i`` (one-set segmentation);
  C_V is the mean over ``i`` of ``cos(v_i, s)``. Higher is better. Top words
  that occur in no window are left out of the topic's word set (NaN if none
  remain). The epsilon makes a pair found in *every* window score
  ``NPMI = -1`` (as in Palmetto and gensim), which matters only on toy corpora.

  The "sequence" a window slides over is the stored token order: the text's
  own order (stop words and pruned words removed) for a text corpus, but
  bag-of-words formats (LDA-C, UCI) keep no word order, so there a document's
  tokens are stored grouped by word, copies adjacent; the windows then measure
  proximity in that grouped order, not in the original text, and C_V on such
  corpora is a window statistic of an arbitrary ordering (compare runs on the
  same corpus only; a document of at most 110 tokens is one window either
  way). gensim's ``WordOccurrenceAccumulator`` marks a word absent from the
  window as soon as one copy leaves it, even when another copy is still
  inside; with copies adjacent this undercounts often, so gensim's C_V on our
  corpora differs from this one, which follows the paper's definition.

Topic recovery
--------------
For synthetic data with known ``phi``: Hellinger distances between fitted and
true topics, matched one to one by the Hungarian algorithm
(SciPy's ``linear_sum_assignment``, through :mod:`mcmc.core.assignment`) to minimise the total distance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mcmc.core.assignment import linear_sum_assignment
from mcmc.core.errors import UsageError
from mcmc.core.lda.corpus import Corpus

# -- held-out documents ------------------------------------------------------------


def split_documents(corpus: Corpus, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Choose ``round(fraction * D)`` documents to hold out (at least one, at most D - 1).

    Returns
    -------
    train, test
        Sorted int64 document indices, disjoint, together ``0..D-1``.
    """
    if not 0 < fraction < 1:
        raise UsageError(f"--holdout must be a fraction in (0, 1), got {fraction}")
    d = corpus.n_docs
    if d < 2:
        raise UsageError("--holdout needs at least two documents")
    n_test = min(max(1, round(fraction * d)), d - 1)
    test = np.sort(rng.permutation(d)[:n_test])
    mask = np.ones(d, dtype=bool)
    mask[test] = False
    return np.flatnonzero(mask), test


def completion_halves(corpus: Corpus) -> tuple[Corpus, Corpus]:
    """Split every document's tokens: even positions observed, odd positions to predict.

    Returns
    -------
    observed, target
        Two corpora with the same documents and vocabulary; a document of
        ``n`` tokens has ``ceil(n / 2)`` observed and ``floor(n / 2)`` target tokens.
    """
    pos = np.arange(corpus.n_tokens) - np.repeat(corpus.doc_ptr[:-1], corpus.doc_lengths)
    even = pos % 2 == 0
    doc = corpus.doc_of_token()
    halves = []
    for keep in (even, ~even):
        lengths = np.bincount(doc[keep], minlength=corpus.n_docs)
        halves.append(Corpus(np.concatenate([[0], np.cumsum(lengths)]), corpus.words[keep], corpus.vocab))
    return halves[0], halves[1]


@dataclass(frozen=True, eq=False)
class Completion:
    """Document-completion result per chain.

    Attributes
    ----------
    log_likelihood
        shape ``(chains,)``: ``sum log p(target tokens | theta, phi)``.
    n_tokens
        Number of target tokens scored.
    perplexity
        shape ``(chains,)``: ``exp(-log_likelihood / n_tokens)``.
    theta
        shape ``(chains, D_test, K)``: the estimates from the observed halves.
    """

    log_likelihood: np.ndarray
    n_tokens: int
    perplexity: np.ndarray
    theta: np.ndarray


def fold_in(
    phi: np.ndarray,
    corpus: Corpus,
    alpha: float | np.ndarray,
    rng: np.random.Generator,
    *,
    sweeps: int = 50,
    burn_in: int = 10,
) -> np.ndarray:
    """theta of documents not seen in training, by Gibbs sampling their topics with phi fixed.

    ``p(z_i = k | z_-i) ∝ (n_dk^-i + alpha_k) phi_k,w_i``: the partially
    collapsed sampler's own sweep (:func:`mcmc.core.lda.kernels.partial.partial_sweep`),
    theta integrated out. Sweep 0 assigns tokens one by one from empty counts,
    then ``sweeps`` full sweeps, the last ``sweeps - burn_in`` averaged into
    ``(n_dk + alpha_k) / (N_d + sum_k alpha_k)``. Used for held-out document
    completion and for new documents against a saved model (tomotopy's ``infer``).

    Parameters
    ----------
    phi
        shape ``(chains, K, V)`` or ``(K, V)``: topic-word distributions (rows sum to 1).
    corpus
        The documents, with phi's vocabulary.
    alpha
        A symmetric concentration, or one per topic and chain, shape ``(chains, K)``
        (learned hyperparameters: topic labels differ between chains).
    rng
        Source of the sweeps' keys.
    sweeps, burn_in
        Gibbs sweeps and how many to discard before averaging.

    Returns
    -------
    float (chains, D, K)
    """
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim == 2:
        phi = phi[None]
    if not 0 <= burn_in < sweeps:
        raise UsageError(f"fold-in needs 0 <= burn_in < sweeps, got {burn_in} and {sweeps}")
    if phi.shape[2] != corpus.vocab_size:
        raise UsageError(f"phi has {phi.shape[2]} words but the corpus has {corpus.vocab_size}")
    n_chains, k, _ = phi.shape
    per_topic = np.ndim(alpha) > 0
    if per_topic and np.shape(alpha) != (n_chains, k):
        raise UsageError(f"alpha has shape {np.shape(alpha)}; phi needs ({n_chains}, {k})")
    # numba is imported, and the kernels compiled (or loaded from its cache), on first use only.
    from mcmc.core.lda.kernels.common import doc_topic_counts
    from mcmc.core.lda.kernels.partial import partial_sweep
    from mcmc.core.lda.kernels.rng import draw_key

    phi_t = np.ascontiguousarray(phi.transpose(0, 2, 1))  # (chains, V, K), word-major like the sampler's
    if per_topic:
        # The kernel's smoothing term alpha * cphi[w]: with cphi the running sums of alpha_k phi_wk and a
        # factor 1 it is sum_k alpha_k phi_wk, the asymmetric conditional.
        a = np.asarray(alpha, dtype=np.float64)
        cphi_t = np.cumsum(phi_t * a[:, None, :], axis=2)
        factor = 1.0
        norm = corpus.doc_lengths[None, :, None] + a.sum(axis=1)[:, None, None]  # (chains, D, 1)
        prior = a[:, None, :]
    else:
        cphi_t = np.cumsum(phi_t, axis=2)
        factor = float(alpha)
        norm = np.broadcast_to((corpus.doc_lengths + k * alpha)[:, None], (n_chains, corpus.n_docs, 1))
        prior = np.full((n_chains, 1, 1), alpha)
    z = np.zeros((n_chains, corpus.n_tokens), dtype=np.int32)
    theta_sum = np.zeros((n_chains, corpus.n_docs, k))
    for sweep in range(sweeps + 1):  # sweep 0 assigns tokens sequentially from empty counts
        for c in range(n_chains):
            partial_sweep(corpus.doc_ptr, corpus.words, z[c], phi_t[c], cphi_t[c], factor, draw_key(rng),
                          0, corpus.n_docs, sweep == 0)
            if sweep > burn_in:
                theta_sum[c] += (doc_topic_counts(corpus.doc_ptr, z[c], k) + prior[c]) / norm[c]
    return theta_sum / (sweeps - burn_in)


def document_completion(
    phi: np.ndarray,
    heldout: Corpus,
    alpha: float | np.ndarray,
    rng: np.random.Generator,
    *,
    sweeps: int = 50,
    burn_in: int = 10,
) -> Completion:
    """Document-completion log-likelihood and perplexity of held-out documents.

    Parameters
    ----------
    phi
        shape ``(chains, K, V)`` or ``(K, V)``: topic-word distributions (rows sum to 1).
    heldout
        The held-out documents (never seen in training).
    alpha
        The Dirichlet parameter of ``theta`` used in training: symmetric, or
        learned, shape ``(chains, K)``.
    rng
        Source of the uniforms driving the fold-in Gibbs sampler.
    sweeps, burn_in
        Gibbs sweeps over the observed halves and how many to discard before averaging.

    Returns
    -------
    Completion
        Per chain (each chain's ``phi`` is scored on its own: topic labels differ between chains).
    """
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim == 2:
        phi = phi[None]
    from mcmc.core.lda.kernels.common import token_log_likelihood

    observed, target = completion_halves(heldout)
    theta = fold_in(phi, observed, alpha, rng, sweeps=sweeps, burn_in=burn_in)
    phi_t = np.ascontiguousarray(phi.transpose(0, 2, 1))
    ll = token_log_likelihood(target.words, target.doc_ptr, phi_t, theta)
    n = target.n_tokens
    perplexity = np.exp(-ll / n) if n else np.full(phi.shape[0], np.nan)
    return Completion(ll, n, perplexity, theta)


def dmm_document_completion(phi: np.ndarray, membership: np.ndarray, heldout: Corpus) -> Completion:
    """Document completion for the Dirichlet-multinomial mixture (one topic per document).

    A document's tokens share one topic, so the target half is scored jointly,
    not token by token: with ``phi`` and the mixture weights ``pi`` fixed,
    ``p(k | observed) ∝ pi_k prod_{i in observed} phi_k,w_i`` and
    ``log p(target | observed) = log sum_k p(k | observed) prod_{j in target} phi_k,w_j``.
    The halves are split as in :func:`completion_halves`; the returned
    ``theta`` holds ``p(k | observed)``.

    Parameters
    ----------
    phi
        shape ``(chains, K, V)`` or ``(K, V)``.
    membership
        shape ``(chains, D_train, K)`` or ``(D_train, K)``: the training documents' topic
        probabilities (``LdaFit.theta`` of a ``dmm`` fit); their mean is the weight estimate ``pi``.
    heldout
        The held-out documents.

    Returns
    -------
    Completion
    """
    from scipy.special import logsumexp

    phi = np.asarray(phi, dtype=np.float64)
    weights = np.asarray(membership, dtype=np.float64).mean(axis=-2)
    if phi.ndim == 2:
        phi, weights = phi[None], weights[None]
    if phi.shape[2] != heldout.vocab_size or weights.shape != phi.shape[:2]:
        raise UsageError(f"phi {phi.shape} and weights {weights.shape} do not fit a {heldout.vocab_size}-word corpus")
    observed, target = completion_halves(heldout)
    log_phi = np.log(phi)
    log_pi = np.log(weights / weights.sum(axis=1, keepdims=True))

    def per_doc(c: Corpus) -> np.ndarray:  # (chains, D, K): sum over a document's tokens of log phi_k,w
        out = np.zeros((phi.shape[0], c.n_docs, phi.shape[1]))
        np.add.at(out, (slice(None), c.doc_of_token()), log_phi[:, :, c.words].transpose(0, 2, 1))
        return out

    log_post = log_pi[:, None, :] + per_doc(observed)
    log_post -= logsumexp(log_post, axis=2, keepdims=True)
    ll_doc = logsumexp(log_post + per_doc(target), axis=2)  # (chains, D)
    ll = ll_doc.sum(axis=1)
    n = target.n_tokens
    perplexity = np.exp(-ll / n) if n else np.full(phi.shape[0], np.nan)
    return Completion(ll, n, perplexity, np.exp(log_post))


# -- coherence -------------------------------------------------------------------


def top_words(phi: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` most probable words per topic, most probable first.

    ``phi`` of shape ``(..., K, V)`` gives shape ``(..., K, n)``; ties go to the lower id.
    """
    phi = np.asarray(phi)
    n = min(n, phi.shape[-1])
    rows = phi.reshape(-1, phi.shape[-1])
    out = np.empty((rows.shape[0], n), dtype=np.int64)
    for r, row in enumerate(rows):
        # One topic at a time, and only its n best sorted: a whole argsort of (K, V) held two K x V arrays (-phi and
        # the order, 226 MB at K = 500 on 20 Newsgroups) and sorted every word. The n-th largest value bounds them.
        if n == 0:
            break
        cut = np.partition(row, row.size - n)[row.size - n]
        idx = np.flatnonzero(row > cut)
        idx = np.concatenate([idx, np.flatnonzero(row == cut)[: n - idx.size]])
        out[r] = idx[np.lexsort((idx, -row[idx]))]
    return out.reshape(*phi.shape[:-1], n)


def _cooccurrence(top: np.ndarray, corpus: Corpus) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Document frequencies restricted to the words in ``top``.

    Returns ``(cols, df, codf)``: ``top`` remapped to column indices, ``D(v)`` per
    column and the ``D(v, u)`` matrix, from a sparse binary doc-word incidence.
    """
    import scipy.sparse

    union, cols = np.unique(top, return_inverse=True)
    col_of = np.full(corpus.vocab_size, -1, dtype=np.int64)
    col_of[union] = np.arange(union.size)
    c = col_of[corpus.words]
    keep = c >= 0
    x = scipy.sparse.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.int64), (corpus.doc_of_token()[keep], c[keep])),
        shape=(corpus.n_docs, union.size),
    )
    x.sum_duplicates()
    x.data[:] = 1  # counts -> incidence: co-occurrence counts documents, not tokens
    codf = (x.T @ x).toarray()
    return cols.reshape(top.shape), np.diag(codf).copy(), codf


def umass_coherence(top: np.ndarray, corpus: Corpus) -> np.ndarray:
    """UMass coherence (Mimno et al. 2011) per topic, averaged over word pairs.

    Parameters
    ----------
    top
        int, shape ``(K, M)``: word ids per topic, most probable first (:func:`top_words`).
    corpus
        The reference corpus (the training documents).

    Returns
    -------
    ndarray
        shape ``(K,)``: mean over ``l < m`` of ``log((D(v_m, v_l) + 1) / D(v_l))``;
        pairs whose ``v_l`` occurs in no document are skipped (NaN if all are).
    """
    top = np.asarray(top)
    cols, df, codf = _cooccurrence(top, corpus)
    m = top.shape[1]
    hi, lo = np.tril_indices(m, k=-1)  # hi = m (later word), lo = l (earlier word)
    joint = codf[cols[:, hi], cols[:, lo]]
    base = df[cols[:, lo]].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.where(base > 0, np.log((joint + 1) / base), np.nan)
    return _nanmean_rows(scores)


def npmi_coherence(top: np.ndarray, corpus: Corpus) -> np.ndarray:
    """NPMI coherence (Bouma 2009) per topic from document co-occurrence, mean over pairs.

    Parameters
    ----------
    top
        int, shape ``(K, M)``: word ids per topic.
    corpus
        The reference corpus (the training documents).

    Returns
    -------
    ndarray
        shape ``(K,)``, in ``[-1, 1]``; pairs with a word that occurs in no document are skipped.
    """
    top = np.asarray(top)
    cols, df, codf = _cooccurrence(top, corpus)
    d = corpus.n_docs
    m = top.shape[1]
    i, j = np.triu_indices(m, k=1)
    p_ij = codf[cols[:, i], cols[:, j]] / d
    p_i = df[cols[:, i]] / d
    p_j = df[cols[:, j]] / d
    with np.errstate(divide="ignore", invalid="ignore"):
        npmi = np.log(p_ij / (p_i * p_j)) / -np.log(p_ij)
    npmi = np.where(p_ij == 0, -1.0, np.where(p_ij == 1, 1.0, npmi))
    npmi = np.where((p_i == 0) | (p_j == 0), np.nan, npmi)
    return _nanmean_rows(npmi)


CV_WINDOW = 110  # Röder et al.'s boolean sliding window for C_V, in tokens
_NPMI_EPSILON = 1e-12


def _window_cooccurrence(
    top: np.ndarray, corpus: Corpus, window: int, chunk: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Boolean sliding-window frequencies restricted to the words in ``top``.

    Returns ``(cols, wf, cowf, n_windows)``: ``top`` remapped to column indices,
    windows containing each column's word, the windows-containing-both matrix,
    and the number of windows. The windows x words incidence is built sparse,
    ``chunk`` incidence entries (whole documents) at a time to bound memory.
    """
    import scipy.sparse

    union, cols = np.unique(top, return_inverse=True)
    u = union.size
    col_of = np.full(corpus.vocab_size, -1, dtype=np.int64)
    col_of[union] = np.arange(u)
    lengths = corpus.doc_lengths
    n_win = np.where(lengths > 0, np.maximum(lengths - window + 1, 1), 0)
    first_window = np.concatenate([[0], np.cumsum(n_win)])
    total = int(first_window[-1])
    tok = np.flatnonzero(col_of[corpus.words] >= 0)
    if tok.size == 0:
        return cols.reshape(top.shape), np.zeros(u, dtype=np.int64), np.zeros((u, u), dtype=np.int64), total
    doc = corpus.doc_of_token()[tok]
    col = col_of[corpus.words[tok]]
    pos = tok - corpus.doc_ptr[doc]
    # The token at position p lies in the windows starting at p - window + 1 .. p (within the document).
    lo = first_window[doc] + np.maximum(pos - window + 1, 0)
    hi = first_window[doc] + np.minimum(pos, n_win[doc] - 1)
    # Merge the windows of a word's copies in a document into disjoint runs, so a window holding two
    # copies counts once (the boolean window) and the expanded incidence has no duplicate entries.
    order = np.lexsort((lo, col, doc))
    doc, col, lo, hi = doc[order], col[order], lo[order], hi[order]
    new_group = np.ones(tok.size, dtype=bool)
    new_group[1:] = (doc[1:] != doc[:-1]) | (col[1:] != col[:-1])
    shift = np.cumsum(new_group) * (total + 1)  # groups ordered and far apart: one running max serves all
    reach = np.maximum.accumulate(hi + shift)
    starts = new_group.copy()
    starts[1:] |= lo[1:] + shift[1:] > reach[:-1] + 1
    first = np.flatnonzero(starts)
    last = np.append(first[1:] - 1, tok.size - 1)
    run_lo, run_hi, run_col, run_doc = lo[first], reach[last] - shift[last], col[first], doc[first]
    run_len = run_hi - run_lo + 1
    ends = np.cumsum(run_len)
    cowf = np.zeros((u, u), dtype=np.int64)
    a = 0
    while a < first.size:
        b = int(np.searchsorted(ends, (ends[a - 1] if a else 0) + chunk, side="right"))
        b = max(b, a + 1)
        # a chunk ends at a document boundary so every window's row is whole
        b = int(np.searchsorted(run_doc, run_doc[b - 1], side="right"))
        n = run_len[a:b]
        offset = np.repeat(ends[a:b] - n - (ends[a - 1] if a else 0), n)
        rows = np.repeat(run_lo[a:b], n) + np.arange(int(n.sum())) - offset
        rows -= rows.min()
        x = scipy.sparse.csr_matrix(
            (np.ones(rows.size), (rows, np.repeat(run_col[a:b], n))), shape=(int(rows.max()) + 1, u)
        )
        cowf += np.rint((x.T @ x).toarray()).astype(np.int64)
        a = b
    return cols.reshape(top.shape), np.diag(cowf).copy(), cowf, total


def cv_coherence(top: np.ndarray, corpus: Corpus, *, window: int = CV_WINDOW, chunk: int = 1 << 20) -> np.ndarray:
    """C_V coherence (Röder, Both & Hinneburg 2015) per topic, from boolean sliding windows.

    See the module docstring for the definition, and for what the windows mean
    on bag-of-words corpora (tokens stored grouped by word) and how this differs
    from gensim.

    Parameters
    ----------
    top
        int, shape ``(K, M)``: word ids per topic (:func:`top_words`).
    corpus
        The reference corpus (the training documents), in stored token order.
    window
        Window length in tokens (110 in the paper).
    chunk
        Sparse incidence entries built at a time (memory bound; the result does not depend on it).

    Returns
    -------
    ndarray
        shape ``(K,)``, in ``[-1, 1]``; NaN for a topic none of whose words occurs.
    """
    if window < 1:
        raise UsageError(f"the C_V window must be at least one token, got {window}")
    top = np.asarray(top)
    cols, wf, cowf, n_windows = _window_cooccurrence(top, corpus, window, max(int(chunk), 1))
    if n_windows == 0:
        return np.full(top.shape[0], np.nan)
    p = wf[cols] / n_windows  # (K, M)
    p_ij = cowf[cols[:, :, None], cols[:, None, :]] / n_windows  # (K, M, M); diagonal P(w_i)
    present = p > 0
    both = present[:, :, None] & present[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        npmi = np.log((p_ij + _NPMI_EPSILON) / (p[:, :, None] * p[:, None, :])) / -np.log(p_ij + _NPMI_EPSILON)
    v = np.where(both, npmi, 0.0)  # absent words drop out of every context vector and of the topic's sum
    s = v.sum(axis=1)  # (K, M): v(W*)
    norms = np.linalg.norm(v, axis=2) * np.linalg.norm(s, axis=1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = np.einsum("kij,kj->ki", v, s) / norms
    cos = np.where(present & (norms > 0), cos, np.nan)
    return _nanmean_rows(cos)


def _nanmean_rows(a: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(a)
    count = ok.sum(axis=1)
    total = np.where(ok, a, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


# -- recovery of known topics -------------------------------------------------------


def hellinger(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hellinger distances between the rows of ``p`` (A, V) and ``q`` (B, V): shape ``(A, B)``, in [0, 1]."""
    sp, sq = np.sqrt(np.asarray(p, dtype=np.float64)), np.sqrt(np.asarray(q, dtype=np.float64))
    bc = np.clip(sp @ sq.T, 0.0, 1.0)  # Bhattacharyya coefficient
    return np.sqrt(1.0 - bc)


@dataclass(frozen=True, eq=False)
class Recovery:
    """Fitted topics matched one to one to true topics.

    Attributes
    ----------
    true_topic
        int, shape ``(K,)``: the true topic matched to fitted topic ``k``.
    hellinger
        shape ``(K,)``: Hellinger distance of each matched pair.
    cosine
        shape ``(K,)``: cosine similarity of each matched pair.
    baseline
        Mean Hellinger distance between non-matched (fitted, true) pairs: what a
        random matching would score, for scale.
    """

    true_topic: np.ndarray
    hellinger: np.ndarray
    cosine: np.ndarray
    baseline: float

    @property
    def mean_hellinger(self) -> float:
        return float(self.hellinger.mean())


def topic_recovery(phi_hat: np.ndarray, phi_true: np.ndarray) -> Recovery:
    """Match fitted topics to true ones (Hungarian algorithm on Hellinger distance).

    Parameters
    ----------
    phi_hat
        shape ``(K, V)``: fitted topics of one chain.
    phi_true
        shape ``(K', V)`` with ``K' >= K`` or ``K' < K`` (then only ``K'`` fitted
        topics are matched and the others get ``true_topic = -1`` and NaN scores).

    Returns
    -------
    Recovery
    """
    phi_hat = np.asarray(phi_hat, dtype=np.float64)
    phi_true = np.asarray(phi_true, dtype=np.float64)
    dist = hellinger(phi_hat, phi_true)
    rows, cols = linear_sum_assignment(dist)
    k = phi_hat.shape[0]
    true_topic = np.full(k, -1, dtype=np.int64)
    true_topic[rows] = cols
    h = np.full(k, np.nan)
    h[rows] = dist[rows, cols]
    norm_hat = np.linalg.norm(phi_hat, axis=1)
    norm_true = np.linalg.norm(phi_true, axis=1)
    cos = np.full(k, np.nan)
    cos[rows] = np.einsum("ij,ij->i", phi_hat[rows], phi_true[cols]) / (norm_hat[rows] * norm_true[cols])
    off = np.ones_like(dist, dtype=bool)
    off[rows, cols] = False
    baseline = float(dist[off].mean()) if off.any() else float("nan")
    return Recovery(true_topic, h, cos, baseline)
