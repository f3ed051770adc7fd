"""MAP estimates of LDA's theta and phi: the clipped Dirichlet mode against brute force, and the fit's arrays."""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.lda.config import LdaConfig
from mcmc.core.lda.corpus import Corpus, synthetic_corpus
from mcmc.core.lda.likelihood import collapsed_log_joint
from mcmc.core.lda.map_estimates import dirichlet_mode, map_phi, map_theta
from mcmc.core.lda.pipeline import LdaInput, fit_lda

EPS = 1e-7  # the truncated simplex {x_i >= EPS} the brute force searches
GRID = 2001


def brute_force_mode(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximisers of log Dir(x | a) on a grid of the truncated 2-simplex {x_i >= EPS}, K = 3.

    Returns the best grid point and the log density's values at the three
    corners (to see ties). The grid holds x_1, x_2 in EPS + j h, and x_3 = 1 - x_1 - x_2,
    which is exactly EPS on the grid's far edge.
    """
    c = a - 1.0
    axis = np.linspace(EPS, 1.0 - 2.0 * EPS, GRID)
    x1, x2 = np.meshgrid(axis, axis, indexing="ij")
    x3 = 1.0 - x1 - x2
    ok = x3 >= EPS * (1 - 1e-9)
    pts = np.stack([x1[ok], x2[ok], np.maximum(x3[ok], EPS)], axis=1)
    f = np.log(pts) @ c
    best = pts[np.argmax(f)]
    corners = np.full((3, 3), EPS) + np.eye(3) * (1.0 - 3.0 * EPS)
    return best, np.log(corners) @ c


@pytest.mark.parametrize(
    ("a", "expected"),
    [
        ((3.0, 2.5, 1.7), (2.0 / 4.2, 1.5 / 4.2, 0.7 / 4.2)),  # every a > 1: textbook (n + eta - 1) / (N + K eta - K)
        ((2.1, 0.3, 1.2), (1.1 / 1.3, 0.0, 0.2 / 1.3)),  # a count of 0 under eta = 0.3: clipped, the rest renormalised
        ((1.05, 0.05, 2.05), (0.05 / 1.1, 0.0, 1.05 / 1.1)),  # counts (1, 0, 2), eta = 0.05
        ((1.0, 4.0, 0.5), (0.0, 1.0, 0.0)),  # a = 1 exactly is clipped too (its factor is flat)
        ((0.5, 0.8, 0.3), (0.0, 1.0, 0.0)),  # no a > 1: the corner of the largest a (a learned, asymmetric alpha)
    ],
)
def test_clipped_mode_is_the_brute_force_maximiser_on_the_truncated_simplex(a, expected) -> None:
    a = np.array(a)
    best, _ = brute_force_mode(a)
    mode = dirichlet_mode(a)
    np.testing.assert_allclose(mode, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(best, mode, rtol=0, atol=3 / GRID)  # within two grid steps


def test_random_concentrations_match_brute_force_and_the_textbook_formula_where_it_applies() -> None:
    rng = np.random.default_rng(31)
    for _ in range(12):
        counts = rng.integers(0, 4, size=3)
        eta = rng.choice([0.05, 0.3, 0.9, 1.0, 1.7])
        a = counts + eta
        if (a <= 1).all():
            continue  # the corner cases are above
        best, _ = brute_force_mode(a)
        mode = dirichlet_mode(a)
        np.testing.assert_allclose(best, mode, rtol=0, atol=3 / GRID, err_msg=f"a = {a}")
        if (a > 1).all():
            textbook = (counts + eta - 1) / (counts.sum() + 3 * eta - 3)
            np.testing.assert_allclose(mode, textbook, rtol=1e-12)
        else:
            textbook = (counts + eta - 1) / (counts.sum() + 3 * eta - 3)
            assert (textbook < 0).any() or (textbook > 1).any() or not np.allclose(textbook, mode)


def test_a_shared_largest_concentration_has_no_unique_mode() -> None:
    for a in ((0.5, 0.5, 0.5), (1.0, 1.0, 1.0), (0.2, 0.7, 0.7)):
        _, corners = brute_force_mode(np.array(a))
        top = np.flatnonzero(np.isclose(corners, corners.max(), rtol=0, atol=1e-9))
        assert top.size >= 2 or np.all(np.array(a) == 1)  # two corners (or, at a = 1, every point) are as good
        assert np.all(np.isnan(dirichlet_mode(np.array(a))))


def test_mode_works_along_the_last_axis_of_a_stack() -> None:
    a = np.array([[[3.0, 2.5, 1.7], [0.5, 0.5, 0.5]], [[2.1, 0.3, 1.2], [0.5, 0.8, 0.3]]])
    out = dirichlet_mode(a)
    for idx in np.ndindex(a.shape[:-1]):
        np.testing.assert_array_equal(out[idx], dirichlet_mode(a[idx]))


# -- the fit's MAP arrays ------------------------------------------------------------------


def small_input() -> LdaInput:
    truth = synthetic_corpus(np.random.default_rng(5), n_topics=3, vocab_size=40, n_docs=30, doc_length=20)
    corpus = truth.corpus
    # one empty document: under alpha < 1 its theta has no unique mode
    corpus = Corpus(np.concatenate([corpus.doc_ptr, corpus.doc_ptr[-1:]]), corpus.words, corpus.vocab)
    return LdaInput(corpus, "test")


@pytest.mark.parametrize("method", ["collapsed", "partial", "uncollapsed", "dmm"])
def test_map_arrays_are_the_modes_given_each_chains_last_state(method: str) -> None:
    data = small_input()
    config = LdaConfig(n_topics=3, alpha=0.1, beta=0.05, iterations=6, burn_in=2, chains=2, seed=3, method=method)
    run = fit_lda(data, config)
    est = run.estimates()
    corpus, fit = run.train, run.fit
    for c in range(2):
        # z is the chain's last state: its collapsed log joint is the last one of the trace
        if method != "dmm":
            last = collapsed_log_joint(corpus.doc_ptr, corpus.words, fit.z[c], n_topics=3,
                                       vocab_size=corpus.vocab_size, alpha=0.1, beta=0.05)
            assert last == pytest.approx(fit.log_joint[c, -1], rel=1e-12)
        nkw = np.zeros((3, corpus.vocab_size))
        np.add.at(nkw, (fit.z[c], corpus.words), 1)
        expected_phi = np.maximum(nkw + 0.05 - 1, 0)
        expected_phi /= expected_phi.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(est["map_phi"][c], expected_phi, rtol=1e-14)
        assert np.all(est["map_phi"][c][nkw == 0] == 0)  # sparse where the Bayes estimate is not
        assert np.all(est["phi"][c] > 0)
    if method == "dmm":
        assert "map_theta" not in est  # the mixture's theta is a membership, not a Dirichlet
        return
    theta = est["map_theta"]
    assert theta.shape == (2, corpus.n_docs, 3)
    assert np.all(np.isnan(theta[:, -1]))  # the empty document
    np.testing.assert_allclose(np.nansum(theta[:, :-1], axis=2), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(theta, np.stack([map_theta(corpus.doc_ptr, fit.z[c], 3, 0.1) for c in range(2)]))


def test_learned_hyperparameters_give_the_chains_last_alpha_and_beta() -> None:
    data = small_input()
    config = LdaConfig(n_topics=3, alpha=0.1, beta=0.05, iterations=12, burn_in=6, chains=2, seed=3,
                       optimize_interval=2, optimize_burn_in=2)
    run = fit_lda(data, config)
    est, fit, corpus = run.estimates(), run.fit, run.train
    for c in range(2):
        alpha, beta = fit.learned.final_alpha[c], fit.learned.final_beta[c]
        np.testing.assert_array_equal(est["map_theta"][c], map_theta(corpus.doc_ptr, fit.z[c], 3, alpha))
        np.testing.assert_array_equal(est["map_phi"][c], map_phi(corpus.words, fit.z[c], 3, corpus.vocab_size, beta))
        # the empty document: the corner of its largest learned alpha (unique unless two are equal)
        np.testing.assert_array_equal(est["map_theta"][c, -1], np.eye(3)[np.argmax(alpha)])
