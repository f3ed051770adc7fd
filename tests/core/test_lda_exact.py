"""Exactness of the LDA and mixture Gibbs kernels against enumerated posteriors.

On corpora small enough to list every assignment (K^N states), the collapsed
joint gives p(z | w) exactly and the systematic-scan Gibbs transition matrix
P is computed from it, so the tests need no tuning constant:

* one sweep from a fixed state, repeated with independent keys, gives iid
  draws from a row of P: Pearson chi-square;
* a long stationary chain (started from an exact draw of p(z | w)) visits
  states with frequencies whose asymptotic covariance is known exactly from
  P (Kemeny & Snell's fundamental matrix), so
  n (p_hat - p)' Sigma^+ (p_hat - p) is chi-square with S - 1 degrees of
  freedom;
* samplers whose state carries phi (partial, uncollapsed) are compared with
  p(z | w) through batch-means standard errors, and by a Geweke (2004) joint
  distribution test.

The collapsed tests walk the registry of collapsed kernels
(:data:`mcmc.core.lda.kernels.COLLAPSED_KERNELS`) and drive each through the
interface the sampler calls, so a newly registered kernel is held to them.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from scipy import special, stats

from mcmc.core.lda.kernels import (
    COLLAPSED_KERNELS,
    collapsed_kernel,
    common,
)
from mcmc.core.lda.kernels import (
    dense as kdense,
)
from mcmc.core.lda.kernels import (
    dmm as kdmm,
)
from mcmc.core.lda.kernels import (
    partial as kpartial,
)
from mcmc.core.lda.kernels import (
    rng as krng,
)
from mcmc.core.lda.kernels import (
    sparse as ksparse,
)
from mcmc.core.lda.kernels import (
    uncollapsed as kuncollapsed,
)
from mcmc.core.lda.sampler import Problem

P_MIN = 1e-3  # smallest p-value accepted (fixed seeds: a deterministic check)

# Two documents, V = 3, N = 5; K = 3 gives 243 states.
DOC_PTR = np.array([0, 3, 5], dtype=np.int64)
WORDS = np.array([0, 1, 0, 1, 2], dtype=np.int32)
V = 3
K = 3
ALPHA, BETA = 0.3, 0.2
# Every registered collapsed kernel, and the dense sweep over exactly K columns (its separate passes: a fit
# always pads the counts, so only these tests run them).
COLLAPSED = [*COLLAPSED_KERNELS, "dense-unpadded"]


def ref_log_joint(doc_ptr, words, z, n_topics, vocab_size, alpha, beta):
    """Collapsed LDA log p(w, z) straight from the formula (dense, scipy)."""
    n_docs = doc_ptr.size - 1
    ndk = np.zeros((n_docs, n_topics))
    nkw = np.zeros((n_topics, vocab_size))
    for d in range(n_docs):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[d, z[i]] += 1
            nkw[z[i], words[i]] += 1
    g = special.gammaln
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (n_topics,))  # symmetric or one per topic
    doc = g(alpha.sum()) - g(ndk.sum(1) + alpha.sum()) + (g(ndk + alpha) - g(alpha)).sum(1)
    top = g(vocab_size * beta) - g(nkw.sum(1) + vocab_size * beta) + (g(nkw + beta) - g(beta)).sum(1)
    return doc.sum() + top.sum()


def ref_dmm_log_joint(doc_ptr, words, zd, n_topics, vocab_size, alpha, beta):
    """Collapsed mixture log p(w, z) straight from the formula."""
    mk = np.bincount(zd, minlength=n_topics)
    nkw = np.zeros((n_topics, vocab_size))
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            nkw[zd[d], words[i]] += 1
    g = special.gammaln
    out = g(n_topics * alpha) - g(mk.sum() + n_topics * alpha) + (g(mk + alpha) - g(alpha)).sum()
    out += (g(vocab_size * beta) - g(nkw.sum(1) + vocab_size * beta) + (g(nkw + beta) - g(beta)).sum(1)).sum()
    return out


def enumerate_states(n_sites, n_topics):
    """All assignments (S, n_sites), site 0 most significant; index = base-K number."""
    return np.array(list(itertools.product(range(n_topics), repeat=n_sites)), dtype=np.int32)


def state_index(z, n_topics):
    index = 0
    for k in z.tolist():
        index = index * n_topics + k
    return index


def scan_matrix(log_target, n_sites, n_topics):
    """Systematic-scan Gibbs transition matrix of a target on K^n_sites states."""
    states = enumerate_states(n_sites, n_topics)
    n_states = len(states)
    weights = n_topics ** np.arange(n_sites - 1, -1, -1)
    P = np.eye(n_states)
    for i in range(n_sites):
        Pi = np.zeros((n_states, n_states))
        for s, z in enumerate(states):
            base = s - z[i] * weights[i]
            nbrs = base + np.arange(n_topics) * weights[i]
            lp = log_target[nbrs]
            p = np.exp(lp - lp.max())
            Pi[s, nbrs] = p / p.sum()
        P = P @ Pi
    return P


def stationary_chi2(visits, pi, P):
    """Chi-square statistic and p-value of state frequencies of a stationary chain.

    The asymptotic covariance of sqrt(n) (p_hat - pi) is
    Sigma = D Z + Z' D - D - pi pi', Z = (I - P + 1 pi')^-1, D = diag(pi).
    """
    n = visits.size
    S = pi.size
    p_hat = np.bincount(visits, minlength=S) / n
    Z = np.linalg.inv(np.eye(S) - P + np.outer(np.ones(S), pi))
    D = np.diag(pi)
    sigma = D @ Z + Z.T @ D - D - np.outer(pi, pi)
    sigma = (sigma + sigma.T) / 2
    vals, vecs = np.linalg.eigh(sigma)
    keep = vals > 1e-10 * vals.max()
    proj = vecs[:, keep].T @ (p_hat - pi)
    x2 = n * np.sum(proj**2 / vals[keep])
    return x2, stats.chi2.sf(x2, keep.sum())


def pearson(counts, probs):
    """Pearson chi-square p-value, bins with expected count < 5 pooled."""
    expected = counts.sum() * probs
    small = expected < 5
    obs = np.append(counts[~small], counts[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


@pytest.fixture(scope="module")
def lda_exact():
    states = enumerate_states(WORDS.size, K)
    log_pi = np.array([ref_log_joint(DOC_PTR, WORDS, z, K, V, ALPHA, BETA) for z in states])
    pi = np.exp(log_pi - log_pi.max())
    pi /= pi.sum()
    P = scan_matrix(log_pi, WORDS.size, K)
    return states, pi, P


@functools.cache
def tiny_problem():
    return Problem.build(DOC_PTR, WORDS, K, V, ALPHA, BETA, 1)


class CollapsedRunner:
    """Drives one collapsed kernel on the tiny corpus, as the collapsed chain does (``kernel``: one of COLLAPSED)."""

    def __init__(self, kernel, z):
        self.z = z.astype(np.int32).copy()
        self.nk = common.topic_counts(self.z, K)
        self.kernel = None if kernel == "dense-unpadded" else collapsed_kernel(kernel)
        if self.kernel is None:
            self.counts = common.word_topic_counts(WORDS, self.z, K, V)
        else:
            self.counts = self.kernel.init(tiny_problem(), self.z)

    def sweep(self, key):
        if self.kernel is None:
            kdense.collapsed_dense_sweep(DOC_PTR, WORDS, self.z, self.counts, self.nk, np.full(K, ALPHA), BETA, key)
        else:
            self.kernel.sweep(tiny_problem(), self.counts, self.z, self.nk, np.full(K, ALPHA), BETA, key)

    def word_topic_counts(self):
        """``n_wk`` (V, K) as the kernel holds it."""
        if self.kernel is None:
            return self.counts
        return self.kernel.word_topic_counts(tiny_problem(), self.counts)[:, :K]


def keys(rng, n):
    return rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)


def test_scan_matrix_keeps_the_posterior(lda_exact):
    # The reference machinery itself: p(z | w) is stationary for the scan.
    _, pi, P = lda_exact
    np.testing.assert_allclose(pi @ P, pi, atol=1e-13)
    np.testing.assert_allclose(P.sum(1), 1.0)


@pytest.mark.parametrize("kernel", COLLAPSED)
def test_collapsed_one_sweep_matches_transition_row(lda_exact, kernel):
    states, _, P = lda_exact
    start = np.array([0, 1, 2, 2, 0], dtype=np.int32)
    row = P[state_index(start, K)]
    rng = np.random.default_rng(11)
    draws = 20_000
    counts = np.zeros(len(states))
    for key in keys(rng, draws):
        runner = CollapsedRunner(kernel, start)
        runner.sweep(key)
        counts[state_index(runner.z, K)] += 1
    assert pearson(counts, row) > P_MIN


@pytest.mark.parametrize("kernel", COLLAPSED)
def test_collapsed_chain_visits_posterior(lda_exact, kernel):
    states, pi, P = lda_exact
    rng = np.random.default_rng(5)
    runner = CollapsedRunner(kernel, states[rng.choice(len(states), p=pi)])
    n = 30_000
    visits = np.empty(n, dtype=np.int64)
    for t, key in enumerate(keys(rng, n)):
        runner.sweep(key)
        visits[t] = state_index(runner.z, K)
    _, p = stationary_chi2(visits, pi, P)
    assert p > P_MIN
    # the kernel's own counts (the sparse kernel's packed lists, ...) stay in step with the assignments
    np.testing.assert_array_equal(runner.word_topic_counts(), common.word_topic_counts(WORDS, runner.z, K, V))
    np.testing.assert_array_equal(runner.nk, common.topic_counts(runner.z, K))


def test_sparse_kernel_small_alpha_beta_buckets():
    # Tiny alpha and beta make the s and r buckets rare but not impossible;
    # K = 4 leaves topics empty so the smoothing walk over all K is exercised.
    alpha, beta, n_topics = 0.05, 0.02, 4
    doc_ptr = np.array([0, 2, 4], dtype=np.int64)
    words = np.array([0, 1, 1, 2], dtype=np.int32)
    states = enumerate_states(4, n_topics)
    log_pi = np.array([ref_log_joint(doc_ptr, words, z, n_topics, 3, alpha, beta) for z in states])
    P = scan_matrix(log_pi, 4, n_topics)
    start = np.array([0, 0, 1, 3], dtype=np.int32)
    rng = np.random.default_rng(3)
    counts = np.zeros(len(states))
    freq = np.bincount(words, minlength=3)
    for key in keys(rng, 20_000):
        z = start.copy()
        nwk = common.word_topic_counts(words, z, n_topics, 3)
        nk = common.topic_counts(z, n_topics)
        lists = ksparse.word_topic_lists(nwk, freq)
        ksparse.collapsed_sparse_sweep(doc_ptr, words, z, nk, *lists, np.full(n_topics, alpha), beta, key)
        counts[state_index(z, n_topics)] += 1
    assert pearson(counts, P[state_index(start, n_topics)]) > P_MIN


def test_partial_one_sweep_given_phi():
    # z | phi with theta collapsed, sequential within a document.
    rng = np.random.default_rng(8)
    phi_wk = rng.dirichlet(np.ones(V), size=K).T.copy()  # (V, K)
    cphi = np.cumsum(phi_wk, axis=1)
    start = np.array([0, 1, 2, 2, 0], dtype=np.int32)
    states = enumerate_states(WORDS.size, K)
    log_target = np.empty(len(states))
    for s, z in enumerate(states):
        lp = 0.0
        for d in range(2):
            zd = z[DOC_PTR[d]:DOC_PTR[d + 1]]
            nd = np.bincount(zd, minlength=K)
            lp += special.gammaln(nd + ALPHA).sum()
        lp += np.log(phi_wk[WORDS, z]).sum()
        log_target[s] = lp
    row = scan_matrix(log_target, WORDS.size, K)[state_index(start, K)]
    counts = np.zeros(len(states))
    for key in keys(rng, 20_000):
        z = start.copy()
        kpartial.partial_sweep(DOC_PTR, WORDS, z, phi_wk, cphi, ALPHA, key, 0, 2)
        counts[state_index(z, K)] += 1
    assert pearson(counts, row) > P_MIN


def test_uncollapsed_one_sweep_given_its_theta():
    # The kernel draws theta_d | z, then z_i | theta, phi. Given the theta it
    # reports, z_i is categorical with p_ik ∝ theta_dk phi_kw, so over many
    # sweeps sum(1[z_i = k] - p_ik) / sqrt(sum p_ik (1 - p_ik)) is ~ N(0, 1).
    rng = np.random.default_rng(9)
    phi_wk = rng.dirichlet(np.ones(V), size=K).T.copy()
    doc_of = np.repeat(np.arange(2), np.diff(DOC_PTR))
    start = np.array([0, 1, 2, 2, 0], dtype=np.int32)
    theta = np.empty((2, K))
    resid = np.zeros((WORDS.size, K))
    var = np.zeros((WORDS.size, K))
    thetas = []
    for key in keys(rng, 20_000).reshape(-1, 2):
        z = start.copy()
        kuncollapsed.uncollapsed_sweep(DOC_PTR, WORDS, z, theta, phi_wk, ALPHA, key[0], key[1], 0, 2)
        p = theta[doc_of] * phi_wk[WORDS]
        p /= p.sum(1, keepdims=True)
        resid += (z[:, None] == np.arange(K)) - p
        var += p * (1 - p)
        thetas.append(theta[0, 0])
    assert np.abs(resid / np.sqrt(var)).max() < 4.0
    # and theta_0 ~ Dirichlet(alpha + n_0): its first coordinate is Beta
    n0 = np.bincount(start[:3], minlength=K) + ALPHA
    assert stats.kstest(thetas, stats.beta(n0[0], n0.sum() - n0[0]).cdf).pvalue > P_MIN


def batch_means_z(values, truth, batches=50):
    """|mean - truth| / MCSE for each column, MCSE by batch means."""
    n = values.shape[0] // batches * batches
    means = values[:n].reshape(batches, -1, values.shape[1]).mean(1)
    mcse = means.std(0, ddof=1) / np.sqrt(batches)
    return np.abs(values[:n].mean(0) - truth) / mcse


@pytest.mark.parametrize("method", ["partial", "uncollapsed"])
def test_phi_carrying_samplers_target_the_posterior(lda_exact, method):
    # The z-marginal of their stationary law must be p(z | w): compare the
    # posterior probability of the likeliest states and of z_i = k per token.
    states, pi, _ = lda_exact
    rng = np.random.default_rng(21)
    z = states[rng.choice(len(states), p=pi)].copy()
    theta = np.empty((2, K))
    n = 20_000
    visits = np.empty(n, dtype=np.int64)
    for t in range(n):
        nwk = common.word_topic_counts(WORDS, z, K, V)
        phi_wk, cphi = common.draw_phi(nwk, BETA, krng.draw_key(rng))
        key = krng.draw_key(rng)
        if method == "partial":
            kpartial.partial_sweep(DOC_PTR, WORDS, z, phi_wk, cphi, ALPHA, key, 0, 2)
        else:
            kuncollapsed.uncollapsed_sweep(DOC_PTR, WORDS, z, theta, phi_wk, ALPHA, krng.draw_key(rng), key, 0, 2)
        visits[t] = state_index(z, K)
    top = np.argsort(pi)[::-1][:8]
    f_states = (visits[:, None] == top[None, :]).astype(float)
    marg = np.stack([(states[visits][:, i] == k) for i in range(WORDS.size) for k in range(K - 1)], 1).astype(float)
    truth_marg = np.array([pi[states[:, i] == k].sum() for i in range(WORDS.size) for k in range(K - 1)])
    zs = np.concatenate([batch_means_z(f_states, pi[top]), batch_means_z(marg, truth_marg)])
    assert zs.max() < 4.0, zs


def test_dmm_matches_enumerated_posterior():
    doc_ptr = np.array([0, 3, 5, 7, 8], dtype=np.int64)
    words = np.array([0, 1, 0, 1, 2, 2, 2, 0], dtype=np.int32)
    n_topics, alpha, beta = 3, 0.4, 0.3
    states = enumerate_states(4, n_topics)
    log_pi = np.array([ref_dmm_log_joint(doc_ptr, words, zd, n_topics, 3, alpha, beta) for zd in states])
    pi = np.exp(log_pi - log_pi.max())
    pi /= pi.sum()
    P = scan_matrix(log_pi, 4, n_topics)
    dw = kdmm.doc_word_counts(doc_ptr, words, 3)
    lg_beta = common.lgamma_table(beta, 8)
    rng = np.random.default_rng(17)

    def counts_of(zd):
        z = np.repeat(zd, np.diff(doc_ptr)).astype(np.int32)
        return (common.topic_counts(zd, n_topics), common.word_topic_counts(words, z, n_topics, 3),
                common.topic_counts(z, n_topics))

    # one sweep from a fixed state: iid draws from a row of P
    start = np.array([0, 0, 1, 2], dtype=np.int32)
    counts = np.zeros(len(states))
    dummy = np.zeros((4, n_topics))
    for key in keys(rng, 20_000):
        zd = start.copy()
        kdmm.dmm_sweep(*dw, zd, *counts_of(zd), alpha, beta, key, dummy, False, lg_beta)
        counts[state_index(zd, n_topics)] += 1
    assert pearson(counts, P[state_index(start, n_topics)]) > P_MIN

    # a stationary chain, and the Rao-Blackwellised p(z_d = k | w)
    zd = states[rng.choice(len(states), p=pi)].copy()
    mk, nwk, nk = counts_of(zd)
    n = 30_000
    prob_sum = np.zeros((4, n_topics))
    visits = np.empty(n, dtype=np.int64)
    for t, key in enumerate(keys(rng, n)):
        kdmm.dmm_sweep(*dw, zd, mk, nwk, nk, alpha, beta, key, prob_sum, True, lg_beta)
        visits[t] = state_index(zd, n_topics)
    _, p = stationary_chi2(visits, pi, P)
    assert p > P_MIN
    exact = np.array([[pi[states[:, d] == k].sum() for k in range(n_topics)] for d in range(4)])
    # RB estimate: an average of conditionals, error far below the indicator's
    assert np.abs(prob_sum / n - exact).max() < 0.02


def geweke_z(sampler, rng, n_docs=3, length=4, vocab_size=4, n_topics=2, alpha=0.7, beta=0.6, draws=12_000):
    """Geweke (2004): marginal-conditional vs successive-conditional simulators."""
    doc_ptr = np.arange(n_docs + 1, dtype=np.int64) * length
    doc_of = np.repeat(np.arange(n_docs), length)
    n = n_docs * length

    def g(theta, phi_wk, z, w):
        # concentration-sensitive functions (sums of squares) as well as means;
        # works on one draw or on a leading axis of draws
        zd = z.reshape(*z.shape[:-1], n_docs, length)
        same = (zd[..., :, :, None] == zd[..., :, None, :]).mean((-1, -2, -3))
        return np.stack([(theta**2).sum(-1).mean(-1), (phi_wk**2).sum(-2).mean(-1), theta[..., 0, 0],
                         phi_wk[..., 0, 0], np.mean(z == 0, -1), np.mean(w == 0, -1),
                         np.mean(z == w % n_topics, -1), same], -1)

    def prior(m):
        theta = rng.dirichlet(np.full(n_topics, alpha), size=(m, n_docs))
        phi_wk = np.swapaxes(rng.dirichlet(np.full(vocab_size, beta), size=(m, n_topics)), 1, 2).copy()
        z = (rng.random((m, n, 1)) > np.cumsum(theta[:, doc_of], 2)).sum(2)
        z = np.minimum(z, n_topics - 1).astype(np.int32)
        phi_z = np.take_along_axis(np.swapaxes(phi_wk, 1, 2), z[:, :, None], 1)  # (m, n, V)
        w = np.minimum((rng.random((m, n, 1)) > np.cumsum(phi_z, 2)).sum(2), vocab_size - 1).astype(np.int32)
        return theta, phi_wk, z, w

    theta, phi_wk, z, w = prior(draws)
    mc = g(theta, phi_wk, z, w)
    theta, phi_wk, z, w = (a[0].copy() for a in prior(1))
    sc = np.empty_like(mc)
    for t in range(draws):
        nwk = common.word_topic_counts(w, z, n_topics, vocab_size)
        phi_wk, cphi = common.draw_phi(nwk, beta, krng.draw_key(rng))
        if sampler == "uncollapsed":
            # theta | z (old z) is drawn inside the kernel, then z | theta, phi
            theta = np.empty((n_docs, n_topics))
            kuncollapsed.uncollapsed_sweep(doc_ptr, w, z, theta, phi_wk, alpha, krng.draw_key(rng), krng.draw_key(rng),
                                      0, n_docs)
        else:
            # theta is integrated out of the partial sampler's z step; drawing
            # it afterwards from theta | z is an extra exact Gibbs step on the
            # joint, so g can still look at it
            kpartial.partial_sweep(doc_ptr, w, z, phi_wk, cphi, alpha, krng.draw_key(rng), 0, n_docs)
            ndk = common.doc_topic_counts(doc_ptr, z, n_topics)
            theta = np.array([rng.dirichlet(alpha + ndk[d]) for d in range(n_docs)])
        cum = np.cumsum(phi_wk.T[z], 1)
        w = np.minimum((rng.random(n)[:, None] > cum).sum(1), vocab_size - 1).astype(np.int32)
        sc[t] = g(theta, phi_wk, z, w)
    batches = 50
    m = draws // batches * batches
    sc_means = sc[:m].reshape(batches, -1, sc.shape[1]).mean(1)
    se = np.sqrt(mc.var(0, ddof=1) / draws + sc_means.var(0, ddof=1) / batches)
    return (mc.mean(0) - sc.mean(0)) / se


@pytest.mark.parametrize("sampler", ["uncollapsed", "partial"])
def test_geweke_joint_distribution(sampler):
    z = geweke_z(sampler, np.random.default_rng(2004))
    assert np.abs(z).max() < 4.0, z


@pytest.mark.parametrize("asymmetric", [False, True])
@pytest.mark.parametrize("kernel", COLLAPSED)
def test_many_topics_transition_row(kernel, asymmetric):
    # K = 10 > 8: the dense kernel's walk crosses blocks (and a padded last
    # block), the sparse kernel's smoothing bucket walks many empty topics.
    # Asymmetric: one alpha per topic (learned hyperparameters), the sparse
    # kernel's smoothing bucket weighted by alpha_k.
    n_topics, beta = 10, 0.1
    alpha = np.linspace(0.02, 0.8, n_topics) if asymmetric else np.full(n_topics, 0.2)
    doc_ptr = np.array([0, 2, 3], dtype=np.int64)
    words = np.array([0, 1, 1], dtype=np.int32)
    states = enumerate_states(3, n_topics)
    log_pi = np.array([ref_log_joint(doc_ptr, words, z, n_topics, 2, alpha, beta) for z in states])
    start = np.array([9, 3, 8], dtype=np.int32)
    row = scan_matrix(log_pi, 3, n_topics)[state_index(start, n_topics)]
    rng = np.random.default_rng(12)
    problem = Problem.build(doc_ptr, words, n_topics, 2, 0.2, beta, 1)  # the sweeps take alpha (K,) apart
    strategy = None if kernel == "dense-unpadded" else collapsed_kernel(kernel)
    counts = np.zeros(len(states))
    for key in keys(rng, 20_000):
        z = start.copy()
        nk = common.topic_counts(z, n_topics)
        if strategy is None:
            nwk = common.word_topic_counts(words, z, n_topics, 2)
            kdense.collapsed_dense_sweep(doc_ptr, words, z, nwk, nk, alpha, beta, key)
        else:
            strategy.sweep(problem, strategy.init(problem, z), z, nk, alpha, beta, key)
        counts[state_index(z, n_topics)] += 1
    assert pearson(counts, row) > P_MIN
    if strategy is None:
        return
    # the log joint a chain records, from the kernel's own counts, against the formula: with a learned
    # (per-topic) alpha, and with the problem's symmetric one read from its lgamma tables
    nk = common.topic_counts(start, n_topics)
    held = strategy.init(problem, start)
    ref = ref_log_joint(doc_ptr, words, start, n_topics, 2, alpha, beta)
    learned = strategy.log_joint_asymmetric(problem, held, start, nk, alpha, beta, common.lgamma_table(beta, 3))
    assert learned == pytest.approx(ref, rel=1e-12)
    if not asymmetric:
        assert strategy.log_joint(problem, held, start, nk) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("kernel", ["dense", "dense-padded"])
def test_repeated_word_transition_row_across_three_blocks(kernel):
    # A token of the same word as the one before reuses that token's terms and
    # recomputes only the topics it left and entered and its own, with their
    # blocks' sums. K = 24 (three blocks) and a start with the two tokens in
    # blocks 1 and 2: when the first moves to block 0, all three blocks change.
    n_topics, alpha, beta = 24, np.full(24, 0.2), 0.1
    doc_ptr = np.array([0, 2], dtype=np.int64)
    words = np.array([0, 0], dtype=np.int32)
    states = enumerate_states(2, n_topics)
    log_pi = np.array([ref_log_joint(doc_ptr, words, z, n_topics, 1, alpha, beta) for z in states])
    start = np.array([8, 16], dtype=np.int32)
    row = scan_matrix(log_pi, 2, n_topics)[state_index(start, n_topics)]
    counts = np.zeros(len(states))
    for key in keys(np.random.default_rng(24), 40_000):
        z = start.copy()
        nk = common.topic_counts(z, n_topics)
        if kernel == "dense-padded":
            nwk = kdense.padded_word_topic_counts(words, z, n_topics, 1)
        else:  # exactly K columns: the separate passes
            nwk = common.word_topic_counts(words, z, n_topics, 1)
        kdense.collapsed_dense_sweep(doc_ptr, words, z, nwk, nk, alpha, beta, key)
        counts[state_index(z, n_topics)] += 1
    first_in_block_0 = states[:, 0] < 8
    assert counts[first_in_block_0].sum() > 5_000  # the case that changes three blocks happens
    assert pearson(counts, row) > P_MIN
