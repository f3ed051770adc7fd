"""Metropolis-Hastings exactly: enumerated kernels, Hastings terms, and the bias without them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from mcmc.core.random import ChainRandom
from mcmc.core.samplers import get_sampler, proposals, two_stage
from mcmc.core.samplers.base import accept_reject
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from mcmc.diagnostics import stats
from tests.core.harness import check_sampler

K = 7


def _discrete_problem(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    pi = rng.gamma(1.0, size=K)
    pi /= pi.sum()
    # Asymmetric proposal: each row a random distribution over the other states
    # (some moves impossible in one direction only would break irreducibility
    # of MH; keep every off-diagonal entry positive but very uneven).
    q = rng.gamma(0.5, size=(K, K)) + 1e-3
    np.fill_diagonal(q, 0.0)
    q /= q.sum(axis=1, keepdims=True)
    return pi, q


def _mh_matrix(pi: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Transition matrix of MH, with acceptance probabilities from the library's accept_reject."""
    i, j = np.divmod(np.arange(K * K), K)
    off = i != j
    log_ratio = np.log(pi[j[off]]) - np.log(pi[i[off]]) + np.log(q[j[off], i[off]]) - np.log(q[i[off], j[off]])
    rng = ChainRandom(0, chains=int(off.sum()))
    current = (np.asarray(i[off], float)[:, None], np.zeros(off.sum()))
    proposal = (np.asarray(j[off], float)[:, None], np.zeros(off.sum()))
    _, _, rate = accept_reject(rng, log_ratio, _tuple(proposal), _tuple(current))
    p = np.zeros((K, K))
    p[i[off], j[off]] = q[i[off], j[off]] * rate
    p[np.arange(K), np.arange(K)] = 1.0 - p.sum(axis=1)
    return p


def _tuple(fields):  # a NamedTuple-like pair for accept_reject
    from mcmc.core.samplers.rwm import State

    return State(*fields)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_enumerated_mh_kernel_is_reversible_and_leaves_pi_invariant(seed) -> None:
    pi, q = _discrete_problem(seed)
    p = _mh_matrix(pi, q)
    assert np.all(p >= -1e-15) and np.allclose(p.sum(axis=1), 1.0, atol=1e-14)
    flow = pi[:, None] * p
    np.testing.assert_allclose(flow, flow.T, rtol=0, atol=1e-12)  # detailed balance
    np.testing.assert_allclose(pi @ p, pi, rtol=0, atol=1e-12)  # stationarity
    # The proposal really is asymmetric, so the Hastings term mattered.
    assert np.abs(q - q.T).max() > 0.1


def test_enumerated_kernel_without_hastings_term_is_wrong() -> None:
    pi, q = _discrete_problem(0)
    i, j = np.divmod(np.arange(K * K), K)
    off = i != j
    rate = np.minimum(1.0, pi[j[off]] / pi[i[off]])  # Metropolis ratio applied to an asymmetric q
    p = np.zeros((K, K))
    p[i[off], j[off]] = q[i[off], j[off]] * rate
    p[np.arange(K), np.arange(K)] = 1.0 - p.sum(axis=1)
    assert np.abs(pi @ p - pi).max() > 1e-3


def test_enumerated_two_stage_kernel_is_reversible() -> None:
    # Delayed acceptance with the library's stage ratios: a1 from the prior
    # ratio (with the Hastings term), a2 from the likelihood ratio only;
    # pi = prior x likelihood.
    rng = np.random.default_rng(5)
    prior = rng.gamma(1.0, size=K)
    lik = rng.gamma(0.7, size=K)
    pi = prior * lik / (prior * lik).sum()
    _, q = _discrete_problem(3)
    i, j = np.divmod(np.arange(K * K), K)
    off = i != j
    i, j = i[off], j[off]
    log_r1 = two_stage.stage1_log_ratio(np.log(prior[i]), np.log(prior[j]), np.log(q[j, i]) - np.log(q[i, j]))
    log_r2 = two_stage.stage2_log_ratio(np.log(lik[i]), np.log(lik[j]))
    p = np.zeros((K, K))
    p[i, j] = q[i, j] * np.exp(np.minimum(log_r1, 0.0)) * np.exp(np.minimum(log_r2, 0.0))
    p[np.arange(K), np.arange(K)] = 1.0 - p.sum(axis=1)
    flow = pi[:, None] * p
    np.testing.assert_allclose(flow, flow.T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pi @ p, pi, rtol=0, atol=1e-12)


def test_accept_reject_accepts_with_the_stated_probability() -> None:
    n, reps = 500, 200
    rng = ChainRandom(3, chains=n)
    log_ratio = np.log(np.full(n, 0.3))
    log_ratio[:10] = np.nan  # cannot evaluate: always rejected
    state = _tuple((np.zeros((n, 1)), np.zeros(n)))
    moved = _tuple((np.ones((n, 1)), np.ones(n)))
    hits = np.zeros(n)
    for _ in range(reps):
        new, accepted, rate = accept_reject(rng, log_ratio, moved, state)
        np.testing.assert_array_equal(new.position[:, 0], accepted.astype(float))
        hits += accepted
    assert not hits[:10].any() and (rate[:10] == 0).all()
    freq = hits[10:].sum() / ((n - 10) * reps)
    assert abs(freq - 0.3) < 4 * np.sqrt(0.3 * 0.7 / ((n - 10) * reps))


def test_lognormal_hastings_term_equals_the_proposal_density_ratio() -> None:
    rng = ChainRandom(1, chains=5)
    x = np.exp(ChainRandom(2, chains=5).normal((3,)))
    s = np.array([0.1, 0.5, 1.0, 2.0, 0.3])
    y, log_q_ratio = proposals.lognormal_propose(rng, x, s)

    def log_q(to, frm):  # q(to | frm): independent log-normals with median frm and log-sd s
        return sps.lognorm.logpdf(to, s=s[:, None], scale=frm).sum(axis=1)

    np.testing.assert_allclose(log_q_ratio, log_q(x, y) - log_q(y, x), rtol=1e-10, atol=1e-10)


def test_independence_proposal_density_is_the_multivariate_t() -> None:
    x = ChainRandom(4, chains=6).normal((3,))
    loc = np.array([0.5, -1.0, 2.0])
    scale = np.array([1.0, 0.3, 2.5])
    ours = proposals.student_t_logpdf(x, np.broadcast_to(loc, x.shape), np.broadcast_to(scale, x.shape))
    ref = sps.multivariate_t(loc=loc, shape=np.diag(scale**2), df=proposals.DF).logpdf(x)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_independence_draws_follow_the_t_proposal() -> None:
    n, rng = 200, ChainRandom(9, chains=200)
    loc, scale = np.zeros((n, 1)), np.full((n, 1), 2.0)
    draws = np.concatenate([proposals.student_t_draw(rng, loc, scale)[:, 0, 0] for _ in range(100)])
    assert sps.kstest(draws, sps.t(df=proposals.DF, scale=2.0).cdf).pvalue > 1e-3


def test_lognormal_without_hastings_term_is_biased_and_with_it_is_not() -> None:
    # Gamma(2, 1): dropping x'/x targets pi(x)/x = Gamma(1, 1), mean 1 instead of 2.
    target = get_target("gamma", dim=1, shape=2.0, rate=1.0)
    check_sampler(get_sampler("mh-lognormal"), target, warmup=500, draws=3000, params={"hastings": True})
    wrong = run(
        get_sampler("mh-lognormal"), target, chains=4, warmup=500, draws=3000, seed=20261122, params={"hastings": False}
    ).chains
    x = wrong.posterior["x"]
    z = (x.mean() - 2.0) / stats.mcse_mean(x)[0]
    assert z < -10, z
    assert abs(x.mean() - 1.0) < 4 * stats.mcse_mean(x)[0]  # it samples exactly the wrong Gamma(1, 1)
