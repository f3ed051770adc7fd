"""Learned hyperparameters (Monte Carlo EM, :mod:`mcmc.core.lda.hyper`).

The M-step against a general-purpose optimizer of the same likelihood (exact
answer), recovery of a known asymmetric alpha and of beta within their Monte
Carlo error across independent corpora, and held-out perplexity on the
Reuters excerpt no worse with learning than without.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, special

from mcmc.core.lda import hyper
from mcmc.core.lda.config import LdaConfig
from mcmc.core.lda.corpus import synthetic_corpus
from mcmc.core.lda.gibbs import fit
from mcmc.core.lda.kernels import common
from mcmc.core.lda.pipeline import fit_lda, load_input


def _polya_alpha(log_a: np.ndarray, ndk: np.ndarray) -> float:
    a = np.exp(log_a)
    g = special.gammaln
    return float(np.sum(g(a.sum()) - g(ndk.sum(1) + a.sum())) + np.sum(g(ndk + a) - g(a)))


def test_alpha_m_step_is_the_maximum_of_the_polya_likelihood():
    rng = np.random.default_rng(0)
    k, d = 5, 80
    lengths = rng.integers(5, 60, d)
    theta = rng.dirichlet([0.1, 0.3, 0.5, 1.0, 2.0], size=d)
    ndk = np.stack([rng.multinomial(n, t) for n, t in zip(lengths, theta, strict=True)])
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    z = np.concatenate([np.repeat(np.arange(k), row) for row in ndk]).astype(np.int32)
    hist = common.doc_topic_histogram(doc_ptr, z, k)
    assert hist.sum() == np.count_nonzero(ndk)
    got = hyper.optimize_alpha(np.full(k, 0.1), hist, lengths)
    ref = optimize.minimize(lambda x: -_polya_alpha(x, ndk), np.zeros(k), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(got, np.exp(ref.x), rtol=1e-5)


def test_beta_m_step_is_the_maximum_of_the_polya_likelihood():
    rng = np.random.default_rng(1)
    k, v = 4, 300
    nkw = np.stack([rng.multinomial(n, rng.dirichlet(np.full(v, 0.05))) for n in (500, 900, 200, 1500)])
    g = special.gammaln

    def loglik(log_b: np.ndarray) -> float:
        b = np.exp(log_b[0])
        return float(np.sum(g(v * b) - g(nkw.sum(1) + v * b)) + np.sum(g(nkw + b) - g(b)))

    got = hyper.optimize_beta(0.01, nkw[nkw > 0], nkw.sum(1), v)
    ref = optimize.minimize(lambda x: -loglik(x), np.zeros(1), method="BFGS", options={"gtol": 1e-10})
    assert got == pytest.approx(np.exp(ref.x[0]), rel=1e-5)


def test_known_asymmetric_alpha_and_beta_are_recovered():
    """Six corpora drawn with alpha = (0.05, 0.15, 0.3, 0.6), beta = 0.05; one chain each, from alpha = 0.1, beta = 0.01.

    The estimate per corpus is the mean of the post-burn-in updates, topics sorted by alpha (labels are
    arbitrary); across corpora the spread includes both the Monte Carlo error and the corpus's own
    sampling error, and the mean must lie within 4 standard errors of the truth.
    """
    truth, beta = np.array([0.05, 0.15, 0.3, 0.6]), 0.05
    alphas, betas = [], []
    for seed in range(6):
        sc = synthetic_corpus(np.random.default_rng(100 + seed), n_topics=4, vocab_size=200, n_docs=300,
                              doc_length=60, alpha=truth, beta=beta)  # fmt: skip
        r = fit(sc.corpus, n_topics=4, alpha=0.1, beta=0.01, iterations=200, burn_in=100, seed=seed,
                optimize_interval=5, optimize_burn_in=50)  # fmt: skip
        keep = r.learned.iterations > 100
        alphas.append(np.sort(r.learned.alpha[0, keep].mean(axis=0)))
        betas.append(r.learned.beta[0, keep].mean())
    alphas, betas = np.array(alphas), np.array(betas)
    se = alphas.std(axis=0, ddof=1) / np.sqrt(len(alphas))
    assert np.all(np.abs(alphas.mean(axis=0) - truth) < 4 * se), (alphas.mean(axis=0), se)
    assert np.all(se < 0.5 * truth)  # precise enough to tell the four apart
    beta_se = betas.std(ddof=1) / np.sqrt(len(betas))
    assert abs(betas.mean() - beta) < 4 * beta_se and beta_se < 0.2 * beta


def test_heldout_perplexity_no_worse_with_learned_hyperparameters(data_dir: Path):
    data = load_input(data_dir / "lda" / "reuters50.ldac")
    base = LdaConfig(n_topics=8, iterations=300, burn_in=150, chains=4, seed=2, holdout=0.2)
    fixed = fit_lda(data, base).completion.perplexity
    learned_run = fit_lda(data, LdaConfig(**{**base.__dict__, "optimize_interval": 10, "optimize_burn_in": 75}))
    learned = learned_run.completion.perplexity
    se = np.sqrt(fixed.var(ddof=1) / fixed.size + learned.var(ddof=1) / learned.size)
    assert learned.mean() <= fixed.mean() + 4 * se, (learned, fixed)
    assert learned_run.fit.learned.final_alpha.shape == (4, 8)


def test_learning_is_refused_by_samplers_that_keep_alpha_fixed():
    from mcmc.core.errors import UsageError

    sc = synthetic_corpus(np.random.default_rng(0), n_topics=2, vocab_size=10, n_docs=5, doc_length=5)
    with pytest.raises(UsageError, match="collapsed"):
        fit(sc.corpus, n_topics=2, alpha=0.1, beta=0.1, iterations=10, burn_in=5, method="partial",
            optimize_interval=2)  # fmt: skip
