"""Held-out perplexity, coherence and topic recovery, against values computed by hand."""

from __future__ import annotations

from itertools import product
from math import log

import numpy as np
import pytest
from scipy.special import gammaln

from mcmc.core.errors import UsageError
from mcmc.core.lda.corpus import Corpus
from mcmc.core.lda.evaluate import (
    completion_halves,
    cv_coherence,
    dmm_document_completion,
    document_completion,
    hellinger,
    npmi_coherence,
    split_documents,
    top_words,
    topic_recovery,
    umass_coherence,
)


def make(docs: list[list[int]], v: int) -> Corpus:
    lengths = [len(d) for d in docs]
    words = np.array([w for d in docs for w in d])
    return Corpus(np.concatenate([[0], np.cumsum(lengths)]), words, [f"w{i}" for i in range(v)])


# a=0, b=1, c=2, d=3; document frequencies D(a)=3, D(b)=2, D(c)=2, D(d)=1,
# co-occurrences D(a,b)=2, D(a,c)=2, D(b,c)=1, D(x,d)=0. Repeats must not count twice.
COHERENCE_CORPUS = make([[0, 1], [0, 2, 2], [0, 0, 1, 2], [3]], 4)


def test_umass_by_hand() -> None:
    top = np.array([[1, 2, 3], [3, 0, 1], [0, 1, 2]])
    expected = [
        # (c|b) log((1+1)/2), (d|b) log((0+1)/2), (d|c) log((0+1)/2)
        (log(1) + log(0.5) + log(0.5)) / 3,
        # (a|d) log((0+1)/1), (b|d) log((0+1)/1), (b|a) log((2+1)/3)
        0.0,
        # (b|a) log(3/3), (c|a) log(3/3), (c|b) log(2/2)
        0.0,
    ]
    np.testing.assert_allclose(umass_coherence(top, COHERENCE_CORPUS), expected, atol=1e-12)


def test_npmi_by_hand() -> None:
    top = np.array([[0, 1, 2], [0, 3, 1]])
    # P(a)=3/4, P(b)=P(c)=1/2, P(a,b)=P(a,c)=1/2, P(b,c)=1/4, P(a,d)=P(b,d)=0.
    npmi_ab = log((1 / 2) / (3 / 4 * 1 / 2)) / -log(1 / 2)
    npmi_bc = log((1 / 4) / (1 / 2 * 1 / 2)) / -log(1 / 4)
    expected = [(2 * npmi_ab + npmi_bc) / 3, (-1 + npmi_ab - 1) / 3]
    np.testing.assert_allclose(npmi_coherence(top, COHERENCE_CORPUS), expected, atol=1e-12)


def test_npmi_of_words_in_every_document_is_one() -> None:
    c = make([[0, 1], [1, 0, 2]], 3)
    np.testing.assert_allclose(npmi_coherence(np.array([[0, 1]]), c), [1.0])


def test_top_words_order_and_ties() -> None:
    phi = np.array([[[0.1, 0.5, 0.1, 0.3]], [[0.25, 0.25, 0.25, 0.25]]])
    np.testing.assert_array_equal(top_words(phi, 3), [[[1, 3, 0]], [[0, 1, 2]]])


@pytest.mark.parametrize("n", [0, 1, 4, 9, 12])
def test_top_words_is_a_stable_argsort_cut_to_n(n: int) -> None:
    # tie-rich rows (values on a grid of 0.1), the cut through a run of ties, n beyond V
    rng = np.random.default_rng(n)
    phi = rng.integers(0, 4, size=(2, 5, 9)) / 10.0
    np.testing.assert_array_equal(top_words(phi, n), np.argsort(-phi, axis=-1, kind="stable")[..., :n])


def test_completion_halves_alternate_tokens() -> None:
    obs, tgt = completion_halves(make([[5, 5, 6, 7, 7], [1], []], 8))
    assert obs.words.tolist() == [5, 6, 7, 1] and obs.doc_ptr.tolist() == [0, 3, 4, 4]
    assert tgt.words.tolist() == [5, 7] and tgt.doc_ptr.tolist() == [0, 2, 2, 2]


def test_split_documents() -> None:
    c = make([[0]] * 10, 1)
    train, test = split_documents(c, 0.3, np.random.default_rng(0))
    assert test.size == 3 and np.union1d(train, test).tolist() == list(range(10))
    again = split_documents(c, 0.3, np.random.default_rng(0))[1]
    assert np.array_equal(test, again)
    with pytest.raises(UsageError):
        split_documents(c, 1.0, np.random.default_rng(0))


def test_document_completion_exact_when_topics_have_disjoint_words() -> None:
    # Topic 0 owns words 0, 1; topic 1 owns 2, 3: every assignment is forced, so the
    # fold-in counts, theta and the score are deterministic.
    phi = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.25, 0.75]])
    a = 0.3
    held = make([[0, 2, 1, 3, 3, 3], [1], [2, 0]], 4)
    res = document_completion(phi, held, a, np.random.default_rng(1), sweeps=5, burn_in=2)
    # doc 0: observed 0, 1, 3 -> n = (2, 1); target 2, 3, 3.
    t0 = np.array([2 + a, 1 + a]) / (3 + 2 * a)
    # doc 2: observed 2 -> n = (0, 1); target 0.
    t2 = np.array([a, 1 + a]) / (1 + 2 * a)
    ll = log(t0[1] * 0.25) + 2 * log(t0[1] * 0.75) + log(t2[0] * 0.5)
    assert res.n_tokens == 4
    np.testing.assert_allclose(res.log_likelihood, [ll])
    np.testing.assert_allclose(res.perplexity, [np.exp(-ll / 4)])
    np.testing.assert_allclose(res.theta[0, [0, 2]], [t0, t2])


def test_document_completion_one_topic_is_the_unigram_model() -> None:
    phi = np.array([[[0.1, 0.2, 0.7]], [[0.5, 0.25, 0.25]]])  # two "chains", K = 1
    held = make([[0, 2, 1, 1], [2, 2]], 3)  # targets: 2, 1 and 2
    res = document_completion(phi, held, 0.1, np.random.default_rng(0), sweeps=2, burn_in=0)
    expected = [log(0.7) + log(0.2) + log(0.7), log(0.25) + log(0.25) + log(0.25)]
    np.testing.assert_allclose(res.log_likelihood, expected)


def test_fold_in_theta_is_the_posterior_mean() -> None:
    # Overlapping topics: theta | w, phi has no closed form, so enumerate all 2^4
    # assignments of a 4-token document (Dirichlet-multinomial prior on z) for the
    # exact E[(n_k + a) / (n + K a)], and compare with the Gibbs estimate over many
    # independent copies of the document, each its own chain of the fold-in sampler.
    phi = np.array([[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]])
    a, words = 0.5, [0, 0, 2, 1]
    weights, means = [], []
    for z in product(range(2), repeat=4):
        n = np.bincount(z, minlength=2)
        log_prior = gammaln(2 * a) - gammaln(4 + 2 * a) + (gammaln(n + a) - gammaln(a)).sum()
        weights.append(np.exp(log_prior + sum(np.log(phi[k, w]) for k, w in zip(z, words, strict=True))))
        means.append((n + a) / (4 + 2 * a))
    exact = np.average(means, axis=0, weights=weights)
    # Each document is observed on even positions only: double every token so the
    # observed half is exactly `words`.
    copies = 20000
    held = make([[w for w in words for _ in range(2)]] * copies, 3)
    res = document_completion(phi, held, a, np.random.default_rng(5), sweeps=12, burn_in=4)
    est = res.theta[0, :, 0]
    mcse = est.std(ddof=1) / np.sqrt(copies)  # copies are independent chains
    assert abs(est.mean() - exact[0]) / mcse < 4


def test_document_completion_validates() -> None:
    with pytest.raises(UsageError):
        document_completion(np.full((2, 3), 1 / 3), make([[0, 1]], 4), 0.1, np.random.default_rng(0))


def test_hellinger_by_hand() -> None:
    h = hellinger(np.array([[1.0, 0.0], [0.5, 0.5]]), np.array([[0.5, 0.5], [0.0, 1.0]]))
    np.testing.assert_allclose(h, [[np.sqrt(1 - np.sqrt(0.5)), 1.0], [0.0, np.sqrt(1 - np.sqrt(0.5))]], atol=1e-7)


def test_topic_recovery_finds_the_permutation() -> None:
    rng = np.random.default_rng(2)
    truth = rng.dirichlet(np.full(50, 0.1), size=6)
    perm = rng.permutation(6)
    noisy = 0.95 * truth[perm] + 0.05 * rng.dirichlet(np.ones(50), size=6)
    r = topic_recovery(noisy, truth)
    np.testing.assert_array_equal(r.true_topic, perm)
    assert np.all(r.hellinger < 0.3) and np.all(r.cosine > 0.9) and r.baseline > 0.8
    # More fitted than true topics: the extra one is unmatched.
    r2 = topic_recovery(np.vstack([truth, truth[:1]]), truth)
    matched = r2.true_topic[r2.true_topic >= 0]
    assert (r2.true_topic == -1).sum() == 1 and sorted(matched.tolist()) == list(range(6))
    assert np.isnan(r2.hellinger[r2.true_topic == -1]).all()


def test_dmm_document_completion_by_hand() -> None:
    phi = np.array([[0.5, 0.4, 0.1], [0.1, 0.3, 0.6]])
    membership = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [0.0, 1.0]])  # pi = (3/8, 5/8)
    held = make([[0, 2, 1, 2], [2, 2, 0]], 3)  # observed 0, 1 | 2, 0; targets 2, 2 | 2
    res = dmm_document_completion(phi, membership, held)
    pi = np.array([3 / 8, 5 / 8])
    post0 = pi * phi[:, 0] * phi[:, 1]
    post0 /= post0.sum()
    post1 = pi * phi[:, 2] * phi[:, 0]
    post1 /= post1.sum()
    ll = log((post0 * phi[:, 2] ** 2).sum()) + log((post1 * phi[:, 2]).sum())
    np.testing.assert_allclose(res.log_likelihood, [ll])
    np.testing.assert_allclose(res.perplexity, [np.exp(-ll / 3)])
    np.testing.assert_allclose(res.theta[0], [post0, post1])


# -- C_V -----------------------------------------------------------------------------


def brute_force_cv(top: list[list[int]], docs: list[list[int]], window: int) -> list[float]:
    """C_V straight from Röder et al.'s definition: list every window, count, loop over word pairs."""
    windows = []
    for d in docs:
        if not d:
            continue
        if len(d) <= window:
            windows.append(set(d))
        else:
            windows += [set(d[s : s + window]) for s in range(len(d) - window + 1)]
    n, eps = len(windows), 1e-12
    out = []
    for words in top:
        words = [w for w in words if any(w in win for win in windows)]
        if not words:
            out.append(float("nan"))
            continue

        def npmi(u: int, v: int) -> float:
            p_u = sum(u in win for win in windows) / n
            p_v = sum(v in win for win in windows) / n
            p_uv = sum(u in win and v in win for win in windows) / n
            return log((p_uv + eps) / (p_u * p_v)) / -log(p_uv + eps)

        vectors = [[npmi(u, v) for v in words] for u in words]
        total = [sum(col) for col in zip(*vectors, strict=True)]
        cosines = []
        for vec in vectors:
            dot = sum(a * b for a, b in zip(vec, total, strict=True))
            cosines.append(dot / (sum(a * a for a in vec) ** 0.5 * sum(b * b for b in total) ** 0.5))
        out.append(sum(cosines) / len(cosines))
    return out


def test_cv_against_brute_force_definition() -> None:
    rng = np.random.default_rng(3)
    # documents shorter than, equal to and longer than the window, one empty; copies of a word
    # both adjacent (bag-of-words order) and apart
    docs = [list(rng.integers(0, 12, size=n)) for n in (3, 7, 8, 25, 0, 40, 1, 13)]
    docs.append([4, 4, 4, 4, 4, 4, 4, 4, 4, 9, 9, 9, 9, 9, 9, 9, 9, 9, 2, 2])
    top = [[0, 1, 2, 3], [4, 9, 2, 5], [6, 7, 8, 10], [11, 0, 4, 9], [12, 13, 0, 1]]  # 12, 13 never occur
    corpus = make(docs, 14)
    for window, chunk in [(8, 1 << 20), (8, 3), (5, 1), (110, 7), (1, 2)]:
        got = cv_coherence(np.array(top), corpus, window=window, chunk=chunk)
        np.testing.assert_allclose(got, brute_force_cv(top, docs, window), atol=1e-12, rtol=0)


def test_cv_a_word_stays_in_the_window_while_any_copy_is() -> None:
    # window 3 over "a a a b": windows {a}, {a, b}. A counter that drops a when its first copy
    # leaves (gensim) would see the second window as {b} only.
    docs = [[0, 0, 0, 1], [2, 2, 2]]
    np.testing.assert_allclose(cv_coherence(np.array([[0, 1]]), make(docs, 3), window=3),
                               brute_force_cv([[0, 1]], docs, 3), atol=1e-12, rtol=0)


def test_cv_words_that_co_occur_beat_words_that_never_do() -> None:
    # words 0, 1, 2 always appear together; 3, 4, 5 each alone; 6 fills the other documents
    docs = [[0, 1, 2]] * 5 + [[3]] * 3 + [[4]] * 3 + [[5]] * 3 + [[6, 6]] * 4
    got = cv_coherence(np.array([[0, 1, 2], [3, 4, 5]]), make(docs, 7))
    assert got[0] > 0.99 and got[1] < got[0]


def test_cv_of_absent_words_is_nan() -> None:
    got = cv_coherence(np.array([[1, 2], [0, 2]]), make([[0, 0], []], 3))
    assert np.isnan(got[0]) and np.isfinite(got[1])
