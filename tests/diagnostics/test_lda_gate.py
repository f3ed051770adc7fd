"""diagnostics.lda_gate: the topic-model verdict on real traces of 20 Newsgroups, AP, Reuters and the synthetic corpus.

The traces and truncated phi in tests/data/lda_gate were written once by
``make_fixtures.py`` there (collapsed Gibbs, alpha 0.1, beta 0.01, burn-in
half of the iterations, 4 chains; the first two chains of a run are the
2-chain run of its seed). Runs a topic modeller accepts (1000 iterations) must
pass with 2 and with 4 chains, and runs stopped during burn-in (20 and 50
iterations) must fail as still burning in; the README there has the table of
every statistic.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from mcmc.diagnostics.report import lda_gate as G

DATA = Path(__file__).parents[1] / "data" / "lda_gate"

REAL = ("20ng_k20", "ap_k50")
SMALL = ("reuters50_k8", "reuters50_k50")
SEEDS = (1, 2, 3)
SYNTHETIC_SEEDS = (1, 2, 3, 4, 5)

#: Runs a topic modeller accepts: 1000 iterations, every corpus; synthetic seed 3 is the exception
#: (its chain 1 sits in a poorer mode, 0.10 nats per token down, for the whole window: see test below).
ACCEPTED = [f"{c}_it1000_s{s}" for c in REAL + SMALL for s in SEEDS] + [
    f"synthetic_k10_it1000_s{s}" for s in SYNTHETIC_SEEDS if s != 3
]
#: Runs stopped during burn-in.
STOPPED = (
    [f"{c}_it{it}_s{s}" for c in REAL for it in (20, 50) for s in SEEDS]
    + [f"{c}_it20_s{s}" for c in SMALL for s in SEEDS]
    + [f"synthetic_k10_it20_s{s}" for s in SYNTHETIC_SEEDS]
)


@cache
def load(name: str) -> dict[str, np.ndarray]:
    """A stored run with its truncated phi made dense again (zeros outside each topic's stored top words)."""
    with np.load(DATA / f"{name}.npz") as f:
        d = {k: f[k] for k in f.files}
    ids = d["top_ids"].astype(np.int64)
    phi = np.zeros(ids.shape[:2] + (int(d["vocab_size"]),))
    np.put_along_axis(phi, ids, d["top_prob"].astype(np.float64), axis=-1)
    d["phi"] = phi
    return d


@cache
def judge(name: str, chains: int, **kw) -> G.TopicModelVerdict:
    d = load(name)
    return G.judge_topic_model(d["trace"][:chains], int(d["burn_in"]), phi=d["phi"][:chains], **kw)


def test_every_fixture_is_listed_and_shaped() -> None:
    stored = {p.stem for p in DATA.glob("*.npz")}
    assert set(ACCEPTED) | set(STOPPED) <= stored
    for name in ACCEPTED + STOPPED:
        d = load(name)
        assert d["trace"].shape == (4, int(d["iterations"]))
        assert int(d["burn_in"]) == int(d["iterations"]) // 2
        assert d["phi"].shape[:2] == (4, int(d["n_topics"]))


# --------------------------------------------------------------------------- the defaults on real runs


@pytest.mark.parametrize("chains", [2, 4])
@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_runs_pass(name: str, chains: int) -> None:
    v = judge(name, chains)
    assert v.passed, v.message
    assert v.status in ("ok", "warning") and v.trending == () and v.worse == () and v.judged
    assert v.topic_overlap is not None and 0 < v.topic_overlap <= 1
    assert all(g >= 0 for g in v.ll_gap) and v.ll_gap[v.best] == 0


@pytest.mark.parametrize("chains", [2, 4])
@pytest.mark.parametrize("name", STOPPED)
def test_runs_stopped_during_burn_in_fail_as_trending(name: str, chains: int) -> None:
    v = judge(name, chains)
    assert not v.passed and v.status == "fail" and v.trending
    assert "still burning in" in v.message and "run more iterations" in v.advice
    if name.startswith(REAL):  # on the large corpora every chain is still climbing
        assert v.trending == tuple(range(chains))


def test_thresholds_have_margin_on_both_sides() -> None:
    """The trend limit sits well inside the gap between accepted and stopped real runs (README table)."""
    accepted = [t.statistic for n in ACCEPTED if not n.startswith("synthetic") for t in judge(n, 4).trends]
    stopped = [t.statistic for n in STOPPED if not n.startswith("synthetic") for t in judge(n, 4).trends]
    assert max(accepted) < G.DEFAULT_MAX_TREND / 1.5
    assert min(stopped) > G.DEFAULT_MAX_TREND * 1.8
    assert min(t.z for n in STOPPED for t in judge(n, 4).trends) > G.DEFAULT_MIN_TREND_Z * 1.4
    gaps = [g - G.GAP_Z * s for n in ACCEPTED for g, s in zip(judge(n, 4).ll_gap, judge(n, 4).ll_gap_se, strict=True)]
    assert max(gaps) < G.DEFAULT_MAX_LL_GAP * 0.7


def test_old_rules_would_fail_accepted_runs() -> None:
    """Why a new rule: rank-normalized R-hat across chains, and significance tests within a chain, fail them."""
    from mcmc.diagnostics import stats
    from mcmc.diagnostics.stats import coda

    d = load("reuters50_k50_it200_s1")  # the example: mcmc lda reuters50.ldac -k 50, all defaults
    post = d["trace"][:2, int(d["burn_in"]) :]
    assert stats.rhat(post[:, :, None])[0] == pytest.approx(1.378, abs=5e-4)
    assert judge("reuters50_k50_it200_s1", 2).passed
    d = load("ap_k50_it1000_s1")
    post = d["trace"][:, int(d["burn_in"]) :]
    assert stats.rhat(post[:, :, None])[0] > 1.5  # across chains: the old gate's 1.01 fails by far
    assert np.abs(coda.geweke(post[:, :, None])).max() > 3  # Geweke's z: a slow creep is "significant"
    assert max(t.z for t in judge("ap_k50_it1000_s1", 4).trends) > 10  # so is the slope, yet it passes


def test_a_chain_shifted_below_the_margin_fails_as_worse() -> None:
    d = load("20ng_k20_it1000_s1")
    trace, b = d["trace"].copy(), int(d["burn_in"])
    v = G.judge_topic_model(trace, b)
    target = 0 if v.best != 0 else 1  # shift a chain other than the best
    shift = 2 * G.DEFAULT_MAX_LL_GAP
    trace[target] -= shift  # the whole trace: its trend and climb are unchanged
    w = G.judge_topic_model(trace, b, phi=d["phi"])
    assert not w.passed and w.worse == (target,) and w.trending == ()
    assert w.ll_gap[target] == pytest.approx(v.ll_gap[target] + shift, abs=1e-9)
    assert "clearly worse" in w.message and "poorer mode" in w.advice
    # within the margin: a warning about modes, not a failure
    trace = d["trace"].copy()
    trace[target] -= 0.5 * G.DEFAULT_MAX_LL_GAP
    m = G.judge_topic_model(trace, b, phi=d["phi"])
    assert m.passed and m.status == "warning" and target in m.distinct
    assert "different modes of similar quality" in m.message and m.advice == ""
    # and a larger margin lets the shifted chain pass
    trace[target] -= 1.5 * G.DEFAULT_MAX_LL_GAP
    assert G.judge_topic_model(trace, b, max_ll_gap=0.5).passed


def test_synthetic_chain_in_a_poorer_mode_is_caught() -> None:
    """Synthetic seed 3, 1000 iterations: chain 1 merged two true topics and stayed there (README)."""
    v = judge("synthetic_k10_it1000_s3", 4)
    assert not v.passed and v.worse == (1,) and v.trending == ()
    assert v.ll_gap[1] == pytest.approx(0.10, abs=0.005)
    assert v.topic_overlap < 0.95  # the other seeds' chains agree on all but a word or two


def test_two_chains_are_the_first_two_of_four() -> None:
    d = load("ap_k50_it1000_s2")
    v2, v4 = judge("ap_k50_it1000_s2", 2), judge("ap_k50_it1000_s2", 4)
    assert v2.n_chains == 2 and v4.n_chains == 4 and v2.trends == v4.trends[:2]
    assert v2.ll_mean == v4.ll_mean[:2]
    assert v2.topic_overlap_pairs[0] == v4.topic_overlap_pairs[0]
    assert d["trace"].shape[0] == 4


def test_topic_overlap_is_higher_after_convergence() -> None:
    early = judge("ap_k50_it50_s1", 4).topic_overlap
    late = judge("ap_k50_it1000_s1", 4).topic_overlap
    assert early is not None and late is not None and late > early + 0.15


def test_truncated_phi_and_top_words_alone_agree() -> None:
    d = load("20ng_k20_it1000_s2")
    by_phi = G.topic_agreement(d["phi"])
    by_words = G.topic_agreement(top_words=d["top_ids"])
    both = G.topic_agreement(d["phi"], d["top_ids"])
    assert by_phi is not None and by_words is not None and both is not None
    assert both.overlap == pytest.approx(by_phi.overlap)
    assert abs(by_words.overlap - by_phi.overlap) < 0.05  # maximizing shared words can only match more
    assert by_words.overlap >= by_phi.overlap - 1e-12 and by_words.hellinger is None


# --------------------------------------------------------------------------- matching on hand-made topics


def _phi(rows: list[list[float]]) -> np.ndarray:
    a = np.array(rows, dtype=np.float64)
    return a / a.sum(axis=1, keepdims=True)


def test_matching_undoes_a_permutation() -> None:
    rng = np.random.default_rng(0)
    a = rng.dirichlet(np.full(30, 0.1), size=6)
    perm = np.array([3, 0, 5, 1, 2, 4])
    b = a[perm]  # topic j of b is topic perm[j] of a
    match, dist = G.match_topics(a, b)
    assert (perm[match] == np.arange(6)).all()
    np.testing.assert_allclose(dist, 0, atol=1e-7)
    agreement = G.topic_agreement(np.stack([a, b]), n_top=5)
    assert agreement is not None and agreement.overlap == 1.0 and agreement.pairs == ((0, 1, 1.0),)


def test_overlap_counts_shared_top_words_of_matched_topics() -> None:
    # V = 8; topic 0 lives on words 0-3, topic 1 on words 4-7
    a = _phi([[8, 7, 6, 5, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 8, 7, 6, 5]])
    # chain b: labels swapped; its "words 0-3" topic has two of the same top 4 words and two others
    b = _phi([[0.1, 0.1, 0.1, 0.1, 5, 6, 7, 8], [8, 7, 0.1, 0.1, 6, 5, 0.1, 0.1]])
    match, dist = G.match_topics(a, b)
    assert match.tolist() == [1, 0] and dist[0] > dist[1] > 0
    ag = G.topic_agreement(np.stack([a, b]), n_top=4)
    assert ag is not None
    # topic 0: top 4 {0,1,2,3} vs b's topic 1 top 4 {0,1,4,5}: 2 of 4; topic 1: {4,5,6,7} both: 4 of 4
    assert ag.overlap == pytest.approx((2 / 4 + 4 / 4) / 2)
    assert ag.hellinger == pytest.approx(dist.mean())


def test_matching_is_hungarian_not_greedy() -> None:
    a = _phi([[1, 0, 0, 0], [0, 1, 0, 0]])
    b = _phi([[0.7, 0.3, 0, 0], [0.45, 0.05, 0.5, 0]])
    from mcmc.core.lda.evaluate import hellinger

    d = hellinger(a, b)
    # greedy would take the closest pair (0, 0) first and be left with (1, 1); the optimum swaps both
    assert d[0, 0] == d.min() and d[0, 0] + d[1, 1] > d[0, 1] + d[1, 0]
    match, dist = G.match_topics(a, b)
    assert match.tolist() == [1, 0]
    np.testing.assert_allclose(dist, [d[0, 1], d[1, 0]])


def test_three_chains_give_three_pairs_and_one_chain_none() -> None:
    rng = np.random.default_rng(1)
    phi = rng.dirichlet(np.full(20, 0.2), size=(3, 4))
    ag = G.topic_agreement(phi, n_top=3)
    assert ag is not None and [p[:2] for p in ag.pairs] == [(0, 1), (0, 2), (1, 2)]
    assert ag.overlap == pytest.approx(np.mean([p[2] for p in ag.pairs]))
    assert G.topic_agreement(phi[:1]) is None and G.topic_agreement() is None


def test_matching_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="differ in shape"):
        G.match_topics(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"\(chain, K, V\)"):
        G.topic_agreement(np.ones((2, 3)))
    with pytest.raises(ValueError, match="n_top"):
        G.topic_agreement(np.ones((2, 2, 3)), n_top=0)


# --------------------------------------------------------------------------- the trend rule on made-up traces


def _climb_then_noise(rng: np.random.Generator, iterations: int, tau: float, noise: float = 0.002) -> np.ndarray:
    """-10 rising to -8 like 1 - exp(-t / tau), plus AR(1) noise: a chain settling after a few tau."""
    t = np.arange(iterations)
    e = np.zeros(iterations)
    z = rng.standard_normal(iterations) * noise
    for i in range(1, iterations):
        e[i] = 0.7 * e[i - 1] + z[i]
    return -10 + 2 * (1 - np.exp(-t / tau)) + e


def test_trend_follows_how_far_the_climb_has_got() -> None:
    rng = np.random.default_rng(2)
    settled = np.stack([_climb_then_noise(rng, 1000, 30) for _ in range(2)])
    climbing = np.stack([_climb_then_noise(rng, 1000, 400) for _ in range(2)])
    assert G.judge_topic_model(settled, 500).passed
    v = G.judge_topic_model(climbing, 500)
    assert not v.passed and v.trending == (0, 1)
    t = v.trends[0]
    assert t.rise > 0 and t.climb > 0 and t.statistic == pytest.approx(t.rise / t.climb)
    assert t.statistic > G.DEFAULT_MAX_TREND and t.z > G.DEFAULT_MIN_TREND_Z
    assert G.judge_topic_model(climbing, 500, max_trend=1.0).passed  # the limit is what decides


def test_noise_alone_is_not_a_trend() -> None:
    """A tiny climb (small corpus) with noisy, short windows: the standard-error guard keeps it from failing."""
    rng = np.random.default_rng(3)
    x = -3 + 0.02 * rng.standard_normal((4, 20))  # no climb at all: statistic is noise over noise
    x[:, 0] = -3.05
    v = G.judge_topic_model(x, 10)
    assert all(abs(t.z) < G.DEFAULT_MIN_TREND_Z for t in v.trends) and v.trending == ()


def test_falling_or_flat_chains_never_trend() -> None:
    x = np.linspace(-8.0, -8.5, 100)[None, :]  # falls: a rise <= 0 is no burn-in
    v = G.judge_topic_model(x, 50)
    assert v.trends[0].rise < 0 and not v.trends[0].trending and v.passed


# --------------------------------------------------------------------------- edge cases


def test_one_chain_is_judged_on_its_own() -> None:
    d = load("20ng_k20_it1000_s3")
    v = G.judge_topic_model(d["trace"][0], int(d["burn_in"]), phi=d["phi"][:1])  # 1-D trace: one chain
    assert v.passed and v.status == "ok" and v.n_chains == 1
    assert v.ll_gap == (0.0,) and v.best == 0 and v.topic_overlap is None and v.topic_overlap_pairs == ()
    assert "one chain" in v.message
    stopped = load("20ng_k20_it50_s3")
    assert G.judge_topic_model(stopped["trace"][:1], int(stopped["burn_in"])).trending == (0,)


@pytest.mark.parametrize(("iterations", "burn_in"), [(2, 1), (9, 4), (15, 8)])
def test_too_short_to_judge_fails(iterations: int, burn_in: int) -> None:
    d = load("synthetic_k10_it1000_s1")  # a settled chain cut short: the verdict still does not pass it
    x = d["trace"][:2, 500 : 500 + iterations]
    v = G.judge_topic_model(x, burn_in)
    assert not v.passed and not v.judged and v.trending == ()
    assert "too few to judge" in v.message and "run more iterations" in v.advice
    assert len(v.trends) == 2 and len(v.ll_mean) == 2


def test_a_short_steep_climb_is_too_short_not_trending() -> None:
    """Under MIN_TREND_DRAWS draws the verdict says why it cannot judge, not that a trend was measured."""
    d = load("20ng_k20_it20_s1")
    x = d["trace"][:, :12]  # 6 post-burn-in sweeps of a chain climbing steeply
    trends = G.chain_trends(x, 6)
    assert all(t.statistic > G.DEFAULT_MAX_TREND and not t.trending for t in trends)
    v = G.judge_topic_model(x, 6)
    assert not v.passed and not v.judged and v.trending == () and "still burning in" not in v.message
    assert G.chain_trends(d["trace"][:, :16], 8)[0].trending  # 8 draws: judged, and climbing


def test_sixteen_iterations_are_enough_to_judge() -> None:
    d = load("synthetic_k10_it1000_s1")
    v = G.judge_topic_model(d["trace"][:2, 500:516], 8)
    assert v.judged and v.n_draws == G.MIN_TREND_DRAWS and v.passed


def test_a_constant_trace_passes() -> None:
    """K = 1: every sweep assigns every token to the one topic, so the log joint never changes."""
    x = np.full((2, 40), -7.25)
    phi = np.full((2, 1, 5), 0.2)
    v = G.judge_topic_model(x, 20, phi=phi, n_top=3)
    assert v.passed and v.status == "ok"
    assert v.ll_mcse == (0.0, 0.0) and v.ll_gap == (0.0, 0.0) and v.topic_overlap == 1.0
    assert all(t.rise == 0 and t.statistic == 0 and t.z == 0 and not t.trending for t in v.trends)


def test_non_finite_chains_fail_and_are_left_out() -> None:
    d = load("ap_k50_it1000_s1")
    x = d["trace"].copy()
    x[2, 700] = np.nan
    x[3, 0] = -np.inf
    phi = d["phi"].copy()
    phi[2] = np.nan
    v = G.judge_topic_model(x, int(d["burn_in"]), phi=phi)
    assert not v.passed and v.nonfinite == (2, 3) and "not finite" in v.message
    assert math.isnan(v.ll_mean[2]) and math.isnan(v.ll_gap[2]) and v.best in (0, 1)
    assert [p[:2] for p in v.topic_overlap_pairs] == [(0, 1), (0, 3), (1, 3)]  # chain 2's phi is left out
    assert not v.trends[2].trending and math.isnan(v.trends[2].statistic)
    everything = G.judge_topic_model(np.full((2, 20), np.nan), 10)
    assert not everything.passed and everything.best is None and everything.nonfinite == (0, 1)


def test_bad_arguments_are_refused() -> None:
    x = np.zeros((2, 10))
    for burn_in in (-1, 10, 2.5):
        with pytest.raises(ValueError, match="burn_in"):
            G.judge_topic_model(x, burn_in)
    with pytest.raises(ValueError, match="phi has 3 chains"):
        G.judge_topic_model(x, 5, phi=np.ones((3, 2, 4)))
    with pytest.raises(ValueError, match="top_words has 1 chains"):
        G.judge_topic_model(x, 5, top_words=np.zeros((1, 2, 4), dtype=int))
    with pytest.raises(ValueError, match="chain, iteration"):
        G.judge_topic_model(np.zeros((2, 3, 4)), 1)
    with pytest.raises(ValueError, match="max_ll_gap"):
        G.judge_topic_model(x, 5, max_ll_gap=-0.1)


def test_to_dict_is_plain_json() -> None:
    v = judge("reuters50_k50_it1000_s2", 4)
    d = v.to_dict()
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["passed"] is v.passed and back["worse"] == list(v.worse)
    assert back["trends"][0]["chain"] == 0 and set(back["trends"][0]) == {
        "chain", "rise", "climb", "statistic", "z", "trending"}  # fmt: skip
    assert back["max_ll_gap"] == G.DEFAULT_MAX_LL_GAP and back["topic_overlap"] == pytest.approx(v.topic_overlap)
    nan = G.judge_topic_model(np.full((1, 4), np.nan), 2).to_dict()
    json.dumps(nan, allow_nan=False)
    assert nan["ll_mean"] == [None]
