"""The LDA fit API and kernels: log joints, determinism, invariants, recovery."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats
from scipy.optimize import linear_sum_assignment

from mcmc.core.errors import InputError, UsageError
from mcmc.core.lda import collapsed as lda_collapsed
from mcmc.core.lda import gibbs, likelihood
from mcmc.core.lda.corpus import Corpus
from mcmc.core.lda.kernels import (
    common,
)
from mcmc.core.lda.kernels import (
    dense as kdense,
)
from mcmc.core.lda.kernels import (
    rng as krng,
)
from mcmc.core.lda.kernels import (
    sparse as ksparse,
)


def ref_log_joint(doc_ptr, words, z, n_topics, vocab_size, alpha, beta):
    n_docs = doc_ptr.size - 1
    doc_of = np.repeat(np.arange(n_docs), np.diff(doc_ptr))
    ndk = np.zeros((n_docs, n_topics))
    np.add.at(ndk, (doc_of, z), 1)
    nkw = np.zeros((n_topics, vocab_size))
    np.add.at(nkw, (z, words), 1)
    g = special.gammaln
    doc = g(n_topics * alpha) - g(ndk.sum(1) + n_topics * alpha) + (g(ndk + alpha) - g(alpha)).sum(1)
    top = g(vocab_size * beta) - g(nkw.sum(1) + vocab_size * beta) + (g(nkw + beta) - g(beta)).sum(1)
    return doc.sum() + top.sum()


def generate(rng, n_topics=6, vocab_size=120, n_docs=150, mean_length=60, alpha=0.1, beta=0.05):
    """LDA's generative process with ragged document lengths; returns corpus and truth."""
    phi = rng.dirichlet(np.full(vocab_size, beta), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, alpha), size=n_docs)
    lengths = rng.poisson(mean_length, size=n_docs)
    lengths[0] = 0  # an empty document must be harmless
    doc_of = np.repeat(np.arange(n_docs), lengths)
    z = (rng.random((doc_of.size, 1)) > np.cumsum(theta[doc_of], 1)).sum(1).clip(max=n_topics - 1)
    w = (rng.random((doc_of.size, 1)) > np.cumsum(phi[z], 1)).sum(1).clip(max=vocab_size - 1)
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)])
    corpus = Corpus(doc_ptr, w.astype(np.int32), tuple(f"w{i}" for i in range(vocab_size)))
    return corpus, phi, z


@pytest.fixture(scope="module")
def synthetic():
    return generate(np.random.default_rng(2004))


def hellinger(p, q):
    return np.sqrt(0.5 * ((np.sqrt(p)[:, None, :] - np.sqrt(q)[None, :, :]) ** 2).sum(-1))


def test_uniforms_are_splitmix64():
    # Reference SplitMix64 (Steele, Lea & Flood 2014) in plain Python integers.
    mask = (1 << 64) - 1

    def splitmix(state, n):
        out = []
        for _ in range(n):
            state = (state + 0x9E3779B97F4A7C15) & mask
            x = state
            x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
            x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
            x ^= x >> 31
            out.append((x >> 11) * 2.0**-53)
        return out

    key = 0xDEADBEEF12345678
    np.testing.assert_array_equal(krng.uniforms(np.uint64(key), 0, 6), splitmix(key, 6))
    np.testing.assert_array_equal(krng.uniforms(np.uint64(key), 3, 3), splitmix(key, 6)[3:])


@pytest.mark.parametrize("alpha, beta", [(0.1, 0.01), (1.3, 0.5)])
def test_log_joint_matches_gammaln(synthetic, alpha, beta):
    corpus, _, _ = synthetic
    rng = np.random.default_rng(1)
    for n_topics in (1, 7):
        z = rng.integers(0, n_topics, corpus.n_tokens)
        got = likelihood.collapsed_log_joint(corpus.doc_ptr, corpus.words, z, n_topics=n_topics,
                                             vocab_size=corpus.vocab_size, alpha=alpha, beta=beta)
        ref = ref_log_joint(corpus.doc_ptr, corpus.words, z, n_topics, corpus.vocab_size, alpha, beta)
        assert got == pytest.approx(ref, rel=1e-12)


def test_dmm_log_joint_matches_gammaln(synthetic):
    corpus, _, _ = synthetic
    rng = np.random.default_rng(2)
    n_topics, alpha, beta = 5, 0.7, 0.05
    zd = rng.integers(0, n_topics, corpus.n_docs)
    z = np.repeat(zd, np.diff(corpus.doc_ptr))
    mk = np.bincount(zd, minlength=n_topics)
    nkw = np.zeros((n_topics, corpus.vocab_size))
    np.add.at(nkw, (z, corpus.words), 1)
    g = special.gammaln
    ref = g(n_topics * alpha) - g(corpus.n_docs + n_topics * alpha) + (g(mk + alpha) - g(alpha)).sum()
    ref += (g(corpus.vocab_size * beta) - g(nkw.sum(1) + corpus.vocab_size * beta)
            + (g(nkw + beta) - g(beta)).sum(1)).sum()
    got = likelihood.dmm_log_joint(corpus.doc_ptr, corpus.words, zd, n_topics=n_topics,
                                   vocab_size=corpus.vocab_size, alpha=alpha, beta=beta)
    assert got == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("method, kernel", [("collapsed", "sparse"), ("collapsed", "dense"), ("partial", "auto"),
                                            ("uncollapsed", "auto"), ("dmm", "auto")])
def test_fit_shapes_normalisation_and_recorded_log_joint(synthetic, method, kernel):
    corpus, _, _ = synthetic
    seen = []
    fit = gibbs.fit(corpus, n_topics=4, alpha=0.2, beta=0.05, iterations=6, burn_in=2, chains=2, seed=3,
                    method=method, kernel=kernel, callback=lambda c, i, v: seen.append((c, i, v)))
    D, N, V = corpus.n_docs, corpus.n_tokens, corpus.vocab_size
    assert fit.log_joint.shape == fit.log_joint_per_token.shape == (2, 6)
    assert fit.theta.shape == (2, D, 4) and fit.phi.shape == (2, 4, V) and fit.z.shape == (2, N)
    assert fit.z.dtype == np.int32 and fit.z.min() >= 0 and fit.z.max() < 4
    np.testing.assert_allclose(fit.theta.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(fit.phi.sum(-1), 1.0, rtol=1e-12)
    assert sorted((c, i) for c, i, _ in seen) == [(c, i) for c in range(2) for i in range(6)]
    for c, i, v in seen:
        assert v == fit.log_joint_per_token[c, i]
    # the last recorded value is the joint of the returned assignments
    for c in range(2):
        if method == "dmm":
            ref = likelihood.dmm_log_joint(corpus.doc_ptr, corpus.words, fit.z_doc[c], n_topics=4, vocab_size=V,
                                           alpha=0.2, beta=0.05)
            assert fit.log_joint[c, -1] == pytest.approx(ref, rel=1e-12)
            np.testing.assert_array_equal(fit.z[c], np.repeat(fit.z_doc[c], np.diff(corpus.doc_ptr)))
            continue
        ref = ref_log_joint(corpus.doc_ptr, corpus.words, fit.z[c], 4, V, 0.2, 0.05)
        assert fit.log_joint[c, -1] == pytest.approx(ref, rel=1e-12)
    assert fit.sampling_seconds > 0 and fit.tokens_per_second > 0


@pytest.mark.parametrize("method", ["collapsed", "partial", "uncollapsed", "dmm"])
def test_same_seed_same_bytes_whatever_the_threads(synthetic, method):
    corpus, _, _ = synthetic
    kw = dict(n_topics=5, alpha=0.1, beta=0.05, iterations=4, burn_in=1, seed=7, method=method)
    a = gibbs.fit(corpus, chains=2, threads=1, **kw)
    b = gibbs.fit(corpus, chains=2, threads=2, **kw)
    one = gibbs.fit(corpus, chains=1, threads=2, **kw)
    for name in ("log_joint", "theta", "phi", "z"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.tobytes() == y.tobytes(), name
        # chain 0 does not depend on how many chains run beside it
        assert getattr(one, name)[0].tobytes() == x[0].tobytes(), name
    c = gibbs.fit(corpus, chains=2, threads=1, **{**kw, "seed": 8})
    assert c.z.tobytes() != a.z.tobytes()


@pytest.mark.parametrize("method, extra", [("collapsed", {"kernel": "dense"}), ("collapsed", {"kernel": "sparse"}),
                                           ("collapsed", {"optimize_interval": 2}), ("partial", {}),
                                           ("uncollapsed", {}), ("dmm", {})])
def test_topic_shares_are_theta_weighted_by_document_length(synthetic, method, extra):
    # sum_d N_d theta_dk / N, however the fit gets it (per-length sums for token topics; theta itself for dmm)
    corpus, _, _ = synthetic
    fit = gibbs.fit(corpus, n_topics=4, alpha=0.2, beta=0.05, iterations=6, burn_in=2, chains=2, seed=3,
                    method=method, **extra)
    lengths = np.diff(corpus.doc_ptr).astype(float)
    expected = np.einsum("cdk,d->ck", fit.theta, lengths) / lengths.sum()
    np.testing.assert_allclose(fit.topic_shares, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fit.topic_shares.sum(-1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("method, extra", [("collapsed", {"kernel": "dense"}), ("collapsed", {"kernel": "sparse"}),
                                           ("collapsed", {"optimize_interval": 2}), ("partial", {}),
                                           ("uncollapsed", {}), ("dmm", {})])
def test_a_fit_without_theta_is_the_same_fit(synthetic, method, extra):
    # keep_theta=False drops the (D, K) sums and nothing else: every other output is the same, byte for byte
    corpus, _, _ = synthetic
    kw = dict(n_topics=4, alpha=0.2, beta=0.05, iterations=6, burn_in=2, chains=2, seed=5, method=method, **extra)
    full, lean = gibbs.fit(corpus, **kw), gibbs.fit(corpus, keep_theta=False, **kw)
    assert full.theta is not None and lean.theta is None
    for name in ("log_joint", "phi", "topic_shares", "z"):
        assert getattr(full, name).tobytes() == getattr(lean, name).tobytes(), name
    joined = gibbs.concatenate([gibbs.fit(corpus, chain_ids=[c], keep_theta=False, **kw) for c in (0, 1)])
    assert joined.theta is None and joined.topic_shares.tobytes() == full.topic_shares.tobytes()


@pytest.mark.parametrize("kernel", ["dense", "sparse"])
def test_the_log_joint_of_documents_shorter_and_longer_than_k(kernel):
    # the document part walks the topics of a long document and the tokens of a short one: both must count right
    rng = np.random.default_rng(9)
    lengths = np.array([0, 1, 2, 3, 7, 24, 25, 26, 60, 5, 1])
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)])
    words = rng.integers(0, 30, doc_ptr[-1]).astype(np.int32)
    corpus = Corpus(doc_ptr, words, tuple(f"w{i}" for i in range(30)))
    fit = gibbs.fit(corpus, n_topics=25, alpha=0.3, beta=0.05, iterations=3, burn_in=1, seed=2, kernel=kernel)
    assert fit.kernel == kernel
    ref = ref_log_joint(doc_ptr, words, fit.z[0], 25, 30, 0.3, 0.05)
    assert fit.log_joint[0, -1] == pytest.approx(ref, rel=1e-12)
    assert likelihood.collapsed_log_joint(doc_ptr, words, fit.z[0], n_topics=25, vocab_size=30, alpha=0.3,
                                          beta=0.05) == pytest.approx(ref, rel=1e-12)  # fmt: skip


@pytest.mark.parametrize("kernel", ["dense", "sparse"])
@pytest.mark.parametrize("keep_theta", [True, False])
def test_a_sweeps_tally_is_the_log_joint_and_the_sums_of_its_state_to_the_bit(kernel, keep_theta):
    # The sweep adds up each document as it leaves it (common.DocumentTally); the chain's log joint and
    # running sums come from that tally, so they must be exactly what reading the swept state gives.
    from mcmc.core.lda.kernels import collapsed_kernel
    from mcmc.core.lda.sampler import Problem

    rng = np.random.default_rng(12)
    lengths = np.array([0, 1, 2, 3, 7, 24, 25, 26, 60, 5, 1, 40])  # shorter and longer than K
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, 30, doc_ptr[-1]).astype(np.int32)
    n_topics = 25
    p = Problem.build(doc_ptr, words, n_topics, 30, 0.3, 0.05, 1)
    strategy = collapsed_kernel(kernel)
    z = rng.integers(0, n_topics, words.size).astype(np.int32)
    counts, nk = strategy.init(p, z), common.topic_counts(z, n_topics)
    ndk_sum = np.zeros((p.D if keep_theta else 0, n_topics))
    sums = np.zeros((p.lengths.size, n_topics))
    want_ndk, want_sums = ndk_sum.copy(), sums.copy()
    norms = common.document_norms(doc_ptr, n_topics, p.alpha)
    for sweep in range(4):
        tally = common.DocumentTally(np.empty(1), norms, p.lg_alpha, ndk_sum, p.length_group,
                                     sums if sweep % 2 else np.empty((0, n_topics)))
        strategy.sweep(p, counts, z, nk, np.full(n_topics, p.alpha), p.beta, np.uint64(77 + sweep), tally)
        doc_part = common.doc_part(doc_ptr, z, n_topics, p.alpha, p.lg_alpha)
        assert tally.doc_part[0] == doc_part
        assert strategy.log_joint(p, counts, z, nk, float(tally.doc_part[0])) == strategy.log_joint(p, counts, z, nk)
        assert strategy.log_joint(p, counts, z, nk) == pytest.approx(
            ref_log_joint(doc_ptr, words, z, n_topics, 30, 0.3, 0.05), rel=1e-12)
        if sweep % 2:  # a recorded sweep
            common.accumulate_doc_sums(doc_ptr, z, want_ndk, p.length_group, want_sums)
        np.testing.assert_array_equal(sums, want_sums)
        np.testing.assert_array_equal(ndk_sum, want_ndk)
    assert sums.sum() == 2 * words.size
    # a sweep without a tally makes the same draws
    z2 = rng.integers(0, n_topics, words.size).astype(np.int32)
    z3 = z2.copy()
    c2, c3 = strategy.init(p, z2), strategy.init(p, z3)
    n2, n3 = common.topic_counts(z2, n_topics), common.topic_counts(z2, n_topics)
    strategy.sweep(p, c2, z2, n2, np.full(n_topics, p.alpha), p.beta, np.uint64(5))
    strategy.sweep(p, c3, z3, n3, np.full(n_topics, p.alpha), p.beta, np.uint64(5),
                   common.DocumentTally(np.empty(1), norms, p.lg_alpha, np.zeros((p.D, n_topics)), p.length_group,
                                        np.zeros((p.lengths.size, n_topics))))
    np.testing.assert_array_equal(z2, z3)


@pytest.mark.parametrize("chains", [2, 3])
def test_chains_side_by_side_report_every_iteration_from_the_calling_thread(synthetic, chains):
    # With at least as many chains as threads each thread runs its chains through all their iterations (no
    # barrier per sweep); the callback must still see every iteration of every chain, in order per chain, with
    # the values returned, from the calling thread, and the bytes must be the lockstep's (threads = 1).
    import threading

    corpus, _, _ = synthetic
    kw = dict(n_topics=5, alpha=0.1, beta=0.05, iterations=6, burn_in=2, seed=3, chains=chains)
    seen: list[tuple[int, int, float, int]] = []
    fit = gibbs.fit(corpus, threads=2, callback=lambda c, it, v: seen.append((c, it, v, threading.get_ident())), **kw)
    assert {t for *_, t in seen} == {threading.get_ident()}
    for c in range(chains):
        mine = [(it, v) for cc, it, v, _ in seen if cc == c]
        assert [it for it, _ in mine] == list(range(6))
        assert [v for _, v in mine] == list(fit.log_joint_per_token[c])
    lockstep = gibbs.fit(corpus, threads=1, **kw)
    for name in ("log_joint", "theta", "phi", "z"):
        assert getattr(fit, name).tobytes() == getattr(lockstep, name).tobytes(), name


def test_a_failing_chain_stops_the_side_by_side_run(synthetic, monkeypatch):
    # an error in one thread's chain reaches the caller (no hang, no lost exception)
    corpus, _, _ = synthetic
    sweeps = []
    real = lda_collapsed.CollapsedSampler.chains

    def chains(self, problem, rngs):
        states = real(self, problem, rngs)
        if len(states) < 2:  # the warm-up's one-chain toy corpus
            return states
        after = states[1].after_sweep

        def failing():
            sweeps.append(1)
            if len(sweeps) == 3:
                raise RuntimeError("chain 1 failed")
            after()

        states[1].after_sweep = failing
        return states

    monkeypatch.setattr(lda_collapsed.CollapsedSampler, "chains", chains)
    with pytest.raises(RuntimeError, match="chain 1 failed"):
        gibbs.fit(corpus, n_topics=5, alpha=0.1, beta=0.05, iterations=50, burn_in=2, seed=3, chains=2, threads=2)
    assert len(sweeps) == 3


def test_sparse_lists_and_counts_stay_consistent():
    # Many topics on a small corpus: topics appear in and vanish from words
    # and documents all the time, exercising every insertion and removal path.
    corpus, _, _ = generate(np.random.default_rng(4), n_topics=5, vocab_size=60, n_docs=40, mean_length=30)
    rng = np.random.default_rng(5)
    n_topics = 30
    z = rng.integers(0, n_topics, corpus.n_tokens).astype(np.int32)
    nwk = common.word_topic_counts(corpus.words, z, n_topics, corpus.vocab_size)
    nk = common.topic_counts(z, n_topics)
    freq = np.bincount(corpus.words, minlength=corpus.vocab_size)
    ptr, length, packed = ksparse.word_topic_lists(nwk, freq)
    for _ in range(30):
        key = rng.integers(0, 2**63, dtype=np.uint64)
        ksparse.collapsed_sparse_sweep(corpus.doc_ptr, corpus.words, z, nk, ptr, length, packed,
                                       np.full(n_topics, 0.01), 0.01, key)
    nwk = common.word_topic_counts(corpus.words, z, n_topics, corpus.vocab_size)
    np.testing.assert_array_equal(ksparse.unpack_word_topics(ptr, length, packed, n_topics), nwk)
    np.testing.assert_array_equal(nk, np.bincount(z, minlength=n_topics))
    for w in range(corpus.vocab_size):
        entries = packed[ptr[w]:ptr[w] + length[w]]
        assert np.all(np.diff(entries) < 0)  # strictly decreasing: sorted by count
        assert length[w] == np.count_nonzero(nwk[w]) <= min(n_topics, freq[w])


def test_running_sums_follow_their_definition_from_every_count_layout(synthetic):
    # Two states, each added to the sums from the plain counts, the dense kernel's padded
    # counts and the packed lists: all three equal the definition (and each other exactly:
    # zero counts add +0.0), and the document sums equal n_dk and its per-length totals.
    corpus, _, _ = synthetic
    n_topics, vbeta = 5, corpus.vocab_size * 0.05
    rng = np.random.default_rng(6)
    lengths, group = np.unique(np.diff(corpus.doc_ptr), return_inverse=True)
    freq = np.bincount(corpus.words, minlength=corpus.vocab_size)
    sums = {layout: (np.zeros((n_topics, corpus.vocab_size)), np.zeros(n_topics))
            for layout in ("plain", "padded", "packed")}  # fmt: skip
    want_scaled, want_inv = np.zeros((n_topics, corpus.vocab_size)), np.zeros(n_topics)
    ndk_sum, length_sum = np.zeros((corpus.n_docs, n_topics)), np.zeros((lengths.size, n_topics))
    want_ndk = np.zeros((corpus.n_docs, n_topics))
    for _ in range(2):
        z = rng.integers(0, n_topics, corpus.n_tokens).astype(np.int32)
        nwk = common.word_topic_counts(corpus.words, z, n_topics, corpus.vocab_size)
        nk = common.topic_counts(z, n_topics)
        common.accumulate_phi_sums(nwk, nk, vbeta, *sums["plain"])
        padded = kdense.padded_word_topic_counts(corpus.words, z, n_topics, corpus.vocab_size)
        assert padded.shape[1] > n_topics
        common.accumulate_phi_sums(padded, nk, vbeta, *sums["padded"])
        ptr, length, packed = ksparse.word_topic_lists(nwk, freq)
        ksparse.accumulate_phi_sums_packed(ptr, length, packed, nk, vbeta, *sums["packed"])
        want_scaled += nwk.T / (nk[:, None] + vbeta)
        want_inv += 1.0 / (nk + vbeta)
        common.accumulate_doc_sums(corpus.doc_ptr, z, ndk_sum, group, length_sum)
        want_ndk += common.doc_topic_counts(corpus.doc_ptr, z, n_topics)
    for scaled, inv in sums.values():
        np.testing.assert_allclose(scaled, want_scaled, rtol=1e-14, atol=0)
        np.testing.assert_allclose(inv, want_inv, rtol=1e-15, atol=0)
        np.testing.assert_array_equal(scaled, sums["plain"][0])
    np.testing.assert_array_equal(ndk_sum, want_ndk)
    want_length = np.zeros_like(length_sum)
    np.add.at(want_length, group, want_ndk)
    np.testing.assert_array_equal(length_sum, want_length)
    without_theta = np.zeros((lengths.size, n_topics))  # theta not kept: no D x K sums, the same shares
    common.accumulate_doc_sums(corpus.doc_ptr, z, np.zeros((0, n_topics)), group, without_theta)
    one_state = np.zeros_like(length_sum)
    np.add.at(one_state, group, common.doc_topic_counts(corpus.doc_ptr, z, n_topics))
    np.testing.assert_array_equal(without_theta, one_state)


@pytest.mark.parametrize("fraction", [1.0, 0.2])
def test_auto_above_dense_max_starts_dense_then_switches(synthetic, monkeypatch, fraction):
    # Above DENSE_MAX_TOPICS, "auto" runs dense sweeps until the words have
    # concentrated, then builds the sparse lists from the dense counts. With
    # fraction 1 the switch comes after the first sweep; with the default it
    # comes later, after some sweeps on this corpus. Either way the returned
    # joint is that of the returned z (the lists took over the right counts),
    # and the switch, read off the counts only, keeps same seed, same bytes.
    corpus, _, _ = synthetic
    monkeypatch.setattr(lda_collapsed, "SPARSE_SWITCH_FRACTION", fraction)
    built = []
    lists = ksparse.word_topic_lists

    def counting(nwk, freq, n_topics=-1):
        built.append((nwk.shape[0], n_topics if n_topics >= 0 else nwk.shape[1]))
        return lists(nwk, freq, n_topics)

    monkeypatch.setattr(ksparse, "word_topic_lists", counting)
    k = lda_collapsed.DENSE_MAX_TOPICS + 1
    kw = dict(n_topics=k, alpha=0.1, beta=0.05, iterations=12, burn_in=6, seed=5)
    a = gibbs.fit(corpus, chains=2, threads=1, **kw)
    assert a.kernel == "sparse"
    # each chain switched exactly once (the toy warm-up corpus aside)
    assert [shape for shape in built if shape[1] == k] == [(corpus.vocab_size, k)] * 2
    b = gibbs.fit(corpus, chains=2, threads=2, **kw)
    for name in ("log_joint", "theta", "phi", "z"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
    for c in range(2):
        ref = ref_log_joint(corpus.doc_ptr, corpus.words, a.z[c], k, corpus.vocab_size, 0.1, 0.05)
        assert a.log_joint[c, -1] == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("method, kernel", [("collapsed", "sparse"), ("collapsed", "dense"), ("partial", "auto"),
                                            ("uncollapsed", "auto")])
def test_recovers_true_topics(synthetic, method, kernel):
    corpus, phi_true, z_true = synthetic
    n_topics = phi_true.shape[0]
    # LDA is multimodal: a chain can sit for long in a mode with two topics
    # merged (any of the samplers, a few seeds in ten on this corpus), so run
    # four chains and score the one with the highest joint, as one would.
    fit = gibbs.fit(corpus, n_topics=n_topics, alpha=0.1, beta=0.05, iterations=150, burn_in=75, seed=11,
                    chains=4, threads=2, method=method, kernel=kernel)
    best = int(np.argmax(fit.log_joint[:, -1]))
    # Benchmark: the topics estimated from the true assignments (the best any
    # sampler's posterior mean can be expected to do with this much data).
    nkw = np.zeros_like(phi_true)
    np.add.at(nkw, (z_true, corpus.words), 1)
    oracle = (nkw + 0.05) / (nkw.sum(1, keepdims=True) + 0.05 * corpus.vocab_size)
    h = hellinger(phi_true, fit.phi[best])
    rows, cols = linear_sum_assignment(h)
    h_oracle = np.diag(hellinger(phi_true, oracle))
    assert np.all(h[rows, cols] < h_oracle + 0.1), (h[rows, cols], h_oracle)


def test_dmm_recovers_document_clusters():
    rng = np.random.default_rng(6)
    n_topics, vocab_size, n_docs = 4, 80, 120
    phi = rng.dirichlet(np.full(vocab_size, 0.05), size=n_topics)
    zd = rng.integers(0, n_topics, n_docs)
    lengths = rng.integers(15, 40, n_docs)
    w = np.concatenate([rng.choice(vocab_size, size=n, p=phi[k]) for k, n in zip(zd, lengths, strict=True)])
    corpus = Corpus(np.concatenate([[0], np.cumsum(lengths)]), w.astype(np.int32), tuple(map(str, range(vocab_size))))
    fit = gibbs.fit(corpus, n_topics=n_topics, alpha=1.0, beta=0.05, iterations=40, burn_in=20, seed=1, method="dmm")
    est = fit.theta[0].argmax(1)
    confusion = np.zeros((n_topics, n_topics))
    np.add.at(confusion, (zd, est), 1)
    rows, cols = linear_sum_assignment(-confusion)
    assert confusion[rows, cols].sum() >= 0.97 * n_docs
    # token topics are the document topics
    np.testing.assert_array_equal(fit.z[0], np.repeat(fit.z[0][corpus.doc_ptr[:-1]], lengths))


def test_kernel_auto_choice():
    corpus, _, _ = generate(np.random.default_rng(7), n_docs=10, mean_length=10)
    kw = dict(alpha=0.1, beta=0.1, iterations=2, burn_in=0)
    assert gibbs.fit(corpus, n_topics=lda_collapsed.DENSE_MAX_TOPICS, **kw).kernel == "dense"
    assert gibbs.fit(corpus, n_topics=lda_collapsed.DENSE_MAX_TOPICS + 1, **kw).kernel == "sparse"
    assert gibbs.fit(corpus, n_topics=3, kernel="sparse", **kw).kernel == "sparse"
    assert gibbs.fit(corpus, n_topics=100, kernel="dense", **kw).kernel == "dense"
    assert gibbs.fit(corpus, n_topics=3, method="dmm", **kw).kernel == "dmm"


@pytest.mark.parametrize("change, error", [
    (dict(method="adlda"), UsageError), (dict(kernel="alias"), UsageError), (dict(n_topics=0), UsageError),
    (dict(alpha=0.0), UsageError), (dict(beta=float("nan")), UsageError), (dict(iterations=0), UsageError),
    (dict(burn_in=5), UsageError), (dict(chains=0), UsageError), (dict(threads=0), UsageError),
])
def test_bad_arguments(synthetic, change, error):
    corpus, _, _ = synthetic
    kw = dict(n_topics=3, alpha=0.1, beta=0.1, iterations=5, burn_in=1) | change
    with pytest.raises(error):
        gibbs.fit(corpus, **kw)


def test_bad_corpus():
    bad_word = Corpus(np.array([0, 2]), np.array([0, 5], dtype=np.int32), ("a", "b"))
    with pytest.raises(InputError, match="word ids"):
        gibbs.fit(bad_word, n_topics=2, alpha=0.1, beta=0.1, iterations=2, burn_in=0)
    empty = Corpus(np.array([0, 0]), np.array([], dtype=np.int32), ("a",))
    with pytest.raises(InputError, match="no tokens"):
        gibbs.fit(empty, n_topics=2, alpha=0.1, beta=0.1, iterations=2, burn_in=0)


@pytest.mark.parametrize("shape", [0.01, 0.3, 1.0, 2.5, 60.0])
def test_gamma_variates(shape):
    # in-kernel Gamma (Marsaglia & Tsang; boosted below 1) against scipy's law
    key = np.uint64(0x5EED)
    draws = np.array([krng.gamma_variate(shape, key, np.int64(j) << krng.CELL_SHIFT) for j in range(4000)])
    assert stats.kstest(draws, stats.gamma(shape).cdf).pvalue > 1e-3


def test_phi_draw_is_dirichlet_and_thread_blocking_free():
    rng = np.random.default_rng(3)
    vocab_size, n_topics, beta = 600, 3, 0.2  # 3 word chunks
    nwk = rng.poisson(0.5, size=(vocab_size, n_topics)).astype(np.int32)
    draws = np.array([common.draw_phi(nwk, beta, np.uint64(j))[0][[0, 599], 1] for j in range(3000)])
    a = nwk[:, 1] + beta
    for col, w in enumerate((0, 599)):  # phi_kw ~ Beta(a_w, sum a - a_w)
        assert stats.kstest(draws[:, col], stats.beta(a[w], a.sum() - a[w]).cdf).pvalue > 1e-3
    # chunks split between threads in any way give the same bytes
    key = np.uint64(99)
    phi, cphi = common.draw_phi(nwk, beta, key)
    g = np.empty((vocab_size, n_topics))
    sums = np.empty((3, n_topics))
    for c0, c1 in ((2, 3), (0, 1), (1, 2)):
        common.phi_gamma_chunks(nwk, beta, key, c0, c1, g, sums)
    cphi2 = np.empty_like(g)
    common.phi_normalize_chunks(g, 1.0 / sums.sum(axis=0), 0, 3, cphi2)
    assert g.tobytes() == phi.tobytes() and cphi2.tobytes() == cphi.tobytes()
    np.testing.assert_allclose(phi.sum(0), 1.0)
    np.testing.assert_allclose(cphi[:, -1], phi.sum(1))
