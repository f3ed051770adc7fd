"""Metropolis family and slice sampling: exactness on known targets, reproducibility, bookkeeping."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mcmc.core.errors import InputError, UsageError
from mcmc.core.samplers import get_sampler
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from mcmc.core.targets.base import Target
from tests.core.harness import check_sampler, evaluate

# (sampler, target, target options, run settings, acceptance band or None)
CASES = [
    ("rwm", "gaussian", {"dim": 3}, {"draws": 3000}, (0.19, 0.28)),
    ("rwm", "gaussian", {"dim": 2, "rho": 0.6}, {"draws": 3000}, (0.19, 0.28)),
    ("rwm", "beta-bernoulli", {}, {"draws": 2000}, (0.39, 0.49)),
    ("rwm", "gamma", {"dim": 1, "shape": 3.0}, {"draws": 2000}, (0.39, 0.49)),
    ("mh-independence", "gaussian", {"dim": 3}, {}, (0.3, 0.9)),
    ("mh-independence", "beta-bernoulli", {}, {}, (0.4, 0.95)),
    ("mh-lognormal", "gamma", {"dim": 2}, {"draws": 3000}, (0.19, 0.28)),
    ("two-stage", "beta-bernoulli", {}, {"draws": 2000}, (0.39, 0.49)),
    ("two-stage", "conjugate-normal", {}, {"draws": 3000}, (0.19, 0.28)),
    ("two-stage", "conjugate-normal", {"proposal": "lognormal"}, {"draws": 3000}, (0.19, 0.28)),
    ("slice", "gaussian", {"dim": 3, "scales": "log"}, {"warmup": 200, "draws": 500}, None),
    ("slice", "beta-bernoulli", {}, {"warmup": 200, "draws": 500}, None),
    ("slice", "gamma", {"dim": 1, "shape": 0.7}, {"warmup": 200, "draws": 1000}, None),
    ("slice", "funnel", {"dim": 2}, {"warmup": 300, "draws": 1500}, None),
    # Also checks the quadrature moments of eight schools from a sampler's side.
    ("slice", "eight-schools", {}, {"warmup": 150, "draws": 400}, None),
    ("elliptical-slice", "gaussian", {"dim": 3, "rho": 0.5}, {"warmup": 200, "draws": 1000}, None),
    ("elliptical-slice", "gaussian", {"dim": 3, "scales": "log"}, {"warmup": 200, "draws": 1000}, None),
    ("elliptical-slice", "beta-bernoulli", {}, {"warmup": 200, "draws": 1000}, None),
    ("elliptical-slice", "conjugate-normal", {}, {"warmup": 200, "draws": 1000}, None),
    ("elliptical-slice", "gamma", {"dim": 2, "shape": 2.0}, {"warmup": 200, "draws": 1500}, None),
    ("elliptical-slice", "eight-schools", {}, {"warmup": 300, "draws": 1000}, None),
    ("gibbs", "gaussian", {"dim": 3, "rho": 0.5}, {"warmup": 100, "draws": 2000}, None),
    ("gibbs", "gaussian", {"dim": 4, "scales": "log"}, {"warmup": 100, "draws": 1000}, None),
    ("rejection", "gaussian", {"dim": 3, "rho": 0.5}, {"warmup": 300, "draws": 1000}, None),
    ("rejection", "beta-bernoulli", {}, {"warmup": 300, "draws": 1000}, None),
    ("rejection", "gamma", {"dim": 2, "shape": 2.0}, {"warmup": 300, "draws": 1000}, None),
    ("isir", "gaussian", {"dim": 3, "scales": "log"}, {"warmup": 300, "draws": 1000}, None),
    ("isir", "beta-bernoulli", {}, {"warmup": 300, "draws": 1000}, None),
    ("isir", "conjugate-normal", {}, {"warmup": 300, "draws": 1000}, None),
    ("isir", "eight-schools", {}, {"warmup": 300, "draws": 1000}, None),
]


def conjugate_normal(dim: int = 3, n: int = 5, prior_sd: float = 2.0, offset: float = 0.0) -> Target:
    """``x ~ N(0, prior_sd^2 I)``, ``y_i ~ N(x, I)``: Gaussian posterior in closed form.

    Written as prior x likelihood for two-stage MH; with ``offset`` the prior
    and data sit around ``offset`` (positive support for the log-normal proposal).
    """
    rng = np.random.default_rng(7)
    y = offset + 0.5 + rng.standard_normal((n, dim))
    precision = 1.0 / prior_sd**2 + n
    post_mean = (offset / prior_sd**2 + y.sum(axis=0)) / precision

    def log_prior(x):
        return -0.5 * (((x - offset) / prior_sd) ** 2).sum(axis=1)

    def log_likelihood(x):
        return -0.5 * ((x[:, None, :] - y) ** 2).sum(axis=(1, 2))

    return Target(
        "conjugate-normal",
        dim,
        lambda x: log_prior(x) + log_likelihood(x),
        mean=post_mean,
        sd=np.full(dim, precision**-0.5),
        log_prior=log_prior,
        log_likelihood=log_likelihood,
        initial_point=lambda rng, chains: offset + rng.normal((dim,)),
    )


def _target(name: str, options: dict):
    if name == "conjugate-normal":
        return conjugate_normal(offset=10.0 if options.get("proposal") == "lognormal" else 0.0)
    return get_target(name, **options)


@pytest.mark.parametrize(
    ("sampler", "target", "options", "settings", "accept"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{'-'.join(f'{k}{v}' for k, v in c[2].items())}" for c in CASES],
)
def test_sampler_matches_exact_moments(sampler, target, options, settings, accept) -> None:
    params = {"proposal": options["proposal"]} if "proposal" in options else None
    # Neal's funnel: x = exp(v/2) z has kurtosis ~ 3 e^9, so the MCSE of its
    # sd is meaningless; the means (and R-hat) are still checked.
    check_sampler(
        get_sampler(sampler),
        _target(target, options),
        accept=accept,
        params=params,
        check_sd=target != "funnel",
        **settings,
    )


def test_harness_catches_a_wrong_sampler() -> None:
    # The harness must fail a kernel that targets the wrong distribution: RWM
    # run on N(0, 1.2^2) judged against N(0, 1).
    truth = get_target("gaussian", dim=2)
    wrong = get_target("gaussian", dim=2, scales="unit")
    wrong_wide = Target("gaussian", 2, lambda x: wrong.log_density(x / 1.2), mean=truth.mean, sd=truth.sd)
    chains = run(get_sampler("rwm"), wrong_wide, chains=4, warmup=500, draws=3000, seed=3).chains
    assert any("sd" in f for f in evaluate(chains, truth).failures)


def test_harness_sees_unmixed_modes() -> None:
    # 0.5 N(-3, 1) + 0.5 N(3, 1): a small random walk never crosses, R-hat must say so.
    target = get_target("bimodal", dim=1)
    chains = run(get_sampler("rwm"), target, chains=4, warmup=0, draws=500, seed=2, params={"scale": 0.3}).chains
    result = evaluate(chains, target)
    assert result.rhat[0] > 1.1


ALL = ["rwm", "mh-independence", "two-stage", "slice", "elliptical-slice", "rejection", "isir"]


def _arrays(chains) -> dict[str, bytes]:
    out = {f"posterior/{k}": v.tobytes() for k, v in chains.posterior.items()}
    out.update({f"stats/{k}": v.tobytes() for k, v in chains.sample_stats.items()})
    return out


@pytest.mark.parametrize("sampler", ALL + ["mh-lognormal"])
def test_chains_split_across_calls_give_identical_bytes(sampler) -> None:
    target = get_target("gamma", dim=2) if sampler == "mh-lognormal" else get_target("eight-schools")
    kw = {"warmup": 60, "draws": 40, "seed": 11}
    whole = run(get_sampler(sampler), target, chains=4, **kw).chains
    parts = [run(get_sampler(sampler), target, chain_ids=ids, **kw).chains for ids in ([0, 1], [2, 3])]
    for key in whole.posterior:
        joined = np.concatenate([p.posterior[key] for p in parts])
        assert joined.tobytes() == whole.posterior[key].tobytes(), key
    for key in whole.sample_stats:
        joined = np.concatenate([p.sample_stats[key] for p in parts])
        assert joined.tobytes() == whole.sample_stats[key].tobytes(), key
    # Per-chain adapted parameters agree too (no pooling across chains).
    for name, value in whole.attrs["params"].items():
        if isinstance(value, list):
            assert value == parts[0].attrs["params"][name] + parts[1].attrs["params"][name]


@pytest.mark.parametrize("sampler", ALL)
def test_same_seed_same_bytes_and_different_seed_differs(sampler) -> None:
    target = get_target("beta-bernoulli")
    a = run(get_sampler(sampler), target, chains=2, warmup=30, draws=30, seed=5).chains
    b = run(get_sampler(sampler), target, chains=2, warmup=30, draws=30, seed=5).chains
    c = run(get_sampler(sampler), target, chains=2, warmup=30, draws=30, seed=6).chains
    assert _arrays(a) == _arrays(b)
    assert a.attrs == b.attrs  # timings travel beside the chains, not in them
    assert _arrays(a) != _arrays(c)


def test_driver_shapes_thinning_and_attrs() -> None:
    target = get_target("eight-schools")
    chains = run(get_sampler("rwm"), target, chains=3, warmup=20, draws=25, thin=4, seed=1).chains
    assert chains.posterior["mu"].shape == (3, 7)
    assert chains.posterior["tau"].shape == (3, 7)
    assert chains.posterior["theta"].shape == (3, 7, 8)
    assert (chains.posterior["tau"] > 0).all()
    assert set(chains.sample_stats) == {"acceptance_rate", "accepted", "step_size", "lp"}
    assert all(v.shape == (3, 7) for v in chains.sample_stats.values())
    attrs = chains.attrs
    assert (attrs["sampler"], attrs["target"], attrs["seed"], attrs["thin"]) == ("rwm", "eight-schools", 1, 4)
    assert len(attrs["params"]["scale"]) == 3
    assert attrs["n_density_evals"] == 3 * 25  # one proposal per chain per iteration
    chains.validate("test")


def test_lp_is_the_log_density_of_the_kept_state() -> None:
    target = get_target("gaussian", dim=2, rho=0.3)
    chains = run(get_sampler("slice"), target, chains=2, warmup=10, draws=10, seed=4).chains
    x = chains.posterior["x"].reshape(-1, 2)
    np.testing.assert_allclose(chains.sample_stats["lp"].ravel(), target.log_density(x), rtol=1e-12)


def test_slice_n_evals_counts_every_density_evaluation() -> None:
    target = get_target("banana")
    chains = run(get_sampler("slice"), target, chains=3, warmup=5, draws=20, seed=8).chains
    assert chains.sample_stats["n_evals"].sum() == chains.attrs["n_density_evals"]
    # At least one stepping-out check per side budget and one shrinkage draw per coordinate.
    assert (chains.sample_stats["n_evals"] >= 2 * target.dim).all()


def test_two_stage_saves_likelihood_evaluations() -> None:
    target = get_target("eight-schools")
    chains = run(get_sampler("two-stage"), target, chains=2, warmup=100, draws=300, seed=2).chains
    per_draw = chains.sample_stats["n_likelihood_evals"]
    assert per_draw.sum() == chains.attrs["n_likelihood_evals"]
    assert 0 < per_draw.sum() < per_draw.size  # some proposals stopped at the prior
    # Stage-one rejections never count as accepted.
    assert not (chains.sample_stats["accepted"] & ~chains.sample_stats["stage1_accepted"]).any()


def test_two_stage_refuses_a_target_without_prior_and_likelihood() -> None:
    with pytest.raises(UsageError, match="prior x likelihood"):
        run(get_sampler("two-stage"), get_target("gaussian", dim=2), chains=1, warmup=1, draws=1, seed=1)


def test_lognormal_refuses_non_positive_starts() -> None:
    with pytest.raises(UsageError, match="positive"):
        run(get_sampler("mh-lognormal"), get_target("gaussian", dim=2), chains=1, warmup=1, draws=1, seed=1)


def test_bad_starting_points() -> None:
    nowhere = Target("nowhere", 2, lambda x: np.full(x.shape[0], -np.inf))
    with pytest.raises(InputError, match="no starting point with finite log density"):
        run(get_sampler("rwm"), nowhere, chains=2, warmup=1, draws=1, seed=1)
    with pytest.raises(InputError, match="shape"):
        run(get_sampler("rwm"), get_target("gaussian", dim=2), chains=2, draws=1, seed=1, init=np.zeros(3))
    with pytest.raises(InputError, match="not finite"):
        run(get_sampler("rwm"), get_target("gamma"), chains=2, draws=1, seed=1, init=np.array([-1.0]))


def test_starts_are_redrawn_per_chain_until_finite() -> None:
    # Half of the default Uniform(-2, 2) starts fall outside x > 0.
    half = Target("half", 1, lambda x: np.where(x[:, 0] > 0, -x[:, 0], -np.inf))
    chains = run(get_sampler("rwm"), half, chains=6, warmup=0, draws=5, seed=3).chains
    assert (chains.posterior["x"] > 0).all()


def test_usage_errors() -> None:
    with pytest.raises(UsageError):
        run(get_sampler("rwm"), get_target("gaussian"), draws=0, seed=1)
    with pytest.raises(UsageError):
        run(get_sampler("rwm"), get_target("gaussian"), seed=-1)


def test_progress_callback_reaches_total() -> None:
    calls: list[tuple[int, int]] = []
    run(
        get_sampler("rwm"),
        get_target("gaussian", dim=2),
        chains=2,
        warmup=50,
        draws=150,
        seed=1,
        progress=lambda d, t: calls.append((d, t)),
    )
    assert calls[-1] == (200, 200)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_two_stage_agrees_with_slice_on_logistic_regression() -> None:
    # No closed form here: two independent samplers must agree within their
    # combined Monte Carlo error (the test that two-stage's saved likelihood
    # evaluations do not change the target on a non-conjugate model).
    from mcmc.diagnostics import stats

    target = get_target("logistic")
    a = run(get_sampler("two-stage"), target, chains=4, warmup=1000, draws=6000, seed=21).chains.posterior["beta"]
    b = run(get_sampler("slice"), target, chains=4, warmup=150, draws=400, seed=22).chains.posterior["beta"]
    assert (stats.rhat(a) < 1.01).all() and (stats.rhat(b) < 1.01).all()
    z = (a.mean(axis=(0, 1)) - b.mean(axis=(0, 1))) / np.hypot(stats.mcse_mean(a), stats.mcse_mean(b))
    assert np.abs(z).max() < 4, z


def test_rwm_warmup_learns_the_scales_of_each_coordinate() -> None:
    # sds 0.01 .. 1: the learnt diagonal shape must recover them per chain.
    target = get_target("gaussian", dim=4, scales="log")
    chains = run(get_sampler("rwm"), target, chains=3, warmup=2000, draws=10, seed=12).chains
    metric = np.array(chains.attrs["params"]["metric"])
    assert metric.shape == (3, 4)
    ratio = metric / target.sd
    assert (ratio > 0.6).all() and (ratio < 1.6).all(), ratio
    scale = np.array(chains.attrs["params"]["scale"])
    assert ((scale > 0.5) & (scale < 3.0)).all(), scale  # ~2.38/sqrt(4) once the shape is right


def test_elliptical_slice_without_the_reference_term_is_caught() -> None:
    # L(x) = pi(x) / N(x; mu, sd): forgetting to divide by the reference samples pi x N instead.
    from mcmc.core.samplers import elliptical

    class Wrong:
        NAME = "wrong-elliptical"
        State, Info, init, make_adapter = elliptical.State, elliptical.Info, elliptical.init, elliptical.make_adapter

        @staticmethod
        def step(rng, state, target, **params):
            saved = elliptical._log_reference
            elliptical._log_reference = lambda x, mean, sd: np.zeros(x.shape[0])
            try:
                return elliptical.step(rng, state, target, **params)
            finally:
                elliptical._log_reference = saved

    target = get_target("gaussian", dim=2)
    chains = run(Wrong, target, chains=4, warmup=200, draws=1000, seed=9).chains
    assert any("sd" in f for f in evaluate(chains, target).failures)


def test_elliptical_slice_learns_a_reference_that_fits_a_gaussian_target() -> None:
    # Scales 0.01 to 1 from an N(0, I) start: warm-up finds each coordinate's scale, so L is
    # nearly flat, a point near the start of the ellipse is accepted and draws are nearly independent.
    from mcmc.core.samplers.elliptical import ReferenceAdapter
    from mcmc.diagnostics import stats

    target = get_target("gaussian", dim=4, scales="log")
    chains = run(get_sampler("elliptical-slice"), target, chains=4, warmup=400, draws=500, seed=10).chains
    assert chains.sample_stats["n_evals"].mean() < 2.5
    x = np.asarray(chains.posterior["x"])
    assert stats.ess_bulk(x).min() > 0.5 * x.shape[0] * x.shape[1]
    sd = np.asarray(chains.attrs["params"]["ref_sd"]) / ReferenceAdapter.FINAL
    np.testing.assert_allclose(sd, np.broadcast_to(target.sd, sd.shape), rtol=0.35)


def test_rejection_draws_are_independent_and_the_envelope_is_checked() -> None:
    from mcmc.diagnostics import stats

    target = get_target("gaussian", dim=2)
    chains = run(get_sampler("rejection"), target, chains=4, warmup=300, draws=1000, seed=12).chains
    assert chains.sample_stats["envelope_exceeded"].sum() == 0
    # independent draws: lag-1 autocorrelation within a few standard errors of 0
    assert np.abs(stats.acf(chains.posterior["x"], [1])).max() < 4 / np.sqrt(4000)
    # An envelope set too low (M q below pi near the mode) is seen, proposal by proposal.
    low = run(get_sampler("rejection"), target, chains=2, warmup=0, draws=200, seed=12,
              params={"loc": 0.0, "scale": 1.5, "log_bound": -3.0}).chains  # fmt: skip
    assert low.sample_stats["envelope_exceeded"].sum() > 50
    from mcmc.diagnostics.report.summary import summarize_run

    assert summarize_run(low).envelope_exceeded == int(low.sample_stats["envelope_exceeded"].sum())


def test_rejection_without_the_proposal_density_is_caught() -> None:
    # accepting with pi~(x) / M instead of pi~(x) / (M q(x)) samples pi x q
    from mcmc.core.samplers import rejection

    target = get_target("gaussian", dim=2)
    saved = rejection.student_t_logpdf
    rejection.student_t_logpdf = lambda x, loc, scale: np.zeros(x.shape[0])
    try:
        chains = run(rejection, target, chains=4, warmup=300, draws=1000, seed=13).chains
    finally:
        rejection.student_t_logpdf = saved
    assert evaluate(chains, target).failures


def test_isir_that_ignores_the_weights_is_caught() -> None:
    # choosing uniformly among the N points samples (a mixture toward) q, not pi
    from mcmc.core.samplers import isir

    class Wrong:
        NAME = "wrong-isir"
        State, Info, init, make_adapter = isir.State, isir.Info, isir.init, isir.make_adapter

        @staticmethod
        def step(rng, state, target, **params):
            saved = isir._weights
            isir._weights = np.ones_like
            try:
                return isir.step(rng, state, target, **params)
            finally:
                isir._weights = saved

    target = get_target("gaussian", dim=2)
    chains = run(Wrong, target, chains=4, warmup=300, draws=1000, seed=14).chains
    assert any("sd" in f for f in evaluate(chains, target).failures)


def test_isir_particles_and_weights() -> None:
    target = get_target("gaussian", dim=2)
    chains = run(get_sampler("isir"), target, chains=2, warmup=200, draws=300, seed=15, params={"particles": 8}).chains
    assert (chains.sample_stats["n_evals"] == 7).all()
    ess = chains.sample_stats["ess_weights"]
    assert ((ess > 1 / 8 - 1e-12) & (ess <= 1 + 1e-12)).all() and ess.mean() > 0.3
    assert chains.attrs["params"]["particles"] == 8
    with pytest.raises(UsageError, match="at least 2 particles"):
        run(get_sampler("isir"), target, chains=2, warmup=0, draws=3, seed=15, params={"particles": 1})


def test_gibbs_on_a_correlated_gaussian_is_ar1_with_rho_squared() -> None:
    # Two coordinates with correlation rho: each coordinate's Gibbs chain is AR(1) with coefficient rho^2.
    from mcmc.diagnostics import stats

    target = get_target("gaussian", dim=2, rho=0.9)
    chains = run(get_sampler("gibbs"), target, chains=4, warmup=100, draws=5000, seed=16).chains
    r1 = stats.acf(chains.posterior["x"], [1])[:, 0]
    se = np.sqrt((1 - 0.81**2) / (4 * 5000))  # Bartlett: var of the lag-1 autocorrelation of an AR(1)
    assert np.all(np.abs(r1 - 0.81) < 4 * se), r1


def test_gibbs_with_the_wrong_conditionals_is_caught() -> None:
    # Conditionals that ignore the correlations (diagonal precision) draw from the wrong joint.
    import dataclasses

    target = get_target("gaussian", dim=2, rho=0.7)
    wrong = dataclasses.replace(target, precision=np.diag(np.diag(target.precision)))
    chains = run(get_sampler("gibbs"), wrong, chains=4, warmup=100, draws=2000, seed=17).chains
    assert any("sd" in f for f in evaluate(chains, target).failures)


@dataclasses.dataclass(frozen=True, eq=False)
class _TwoBinaryNodes(Target):
    """A two-node Bayesian network in miniature: p(a, b) from a 2 x 2 table, implementing FullConditionals.

    Written against the protocol only, as a new target would be: gibbs must need nothing else.
    """

    TABLE = np.array([[0.1, 0.2], [0.3, 0.4]])  # p(a, b); E a = 0.7, E b = 0.6
    discrete = True

    def conditional_blocks(self):
        return (0, 1)

    def sweep_noise(self, rng):
        return rng.uniform((2,))

    def draw_conditional(self, rng, x, block, noise):
        other = x[:, 1 - block].astype(int)
        pair = self.TABLE[:, other] if block == 0 else self.TABLE[other, :].T  # (2, chains): p(node = 0/1, other)
        x[:, block] = (noise[:, block] < pair[1] / pair.sum(axis=0)).astype(float)


def _two_binary_nodes() -> Target:
    t = _TwoBinaryNodes.TABLE
    mean = np.array([t[1].sum(), t[:, 1].sum()])
    return _TwoBinaryNodes(
        name="two-nodes", dim=2, log_density=lambda x: np.log(t[x[:, 0].astype(int), x[:, 1].astype(int)]),
        mean=mean, sd=np.sqrt(mean * (1 - mean)), initial_point=lambda rng, n: np.zeros((n, 2)),
    )  # fmt: skip


def test_gibbs_is_generic_over_full_conditionals() -> None:
    # A target gibbs has never heard of, exact marginals by enumeration: MCSE-scaled errors as for every sampler.
    from mcmc.core.targets.protocols import FullConditionals

    target = _two_binary_nodes()
    assert isinstance(target, FullConditionals)
    chains = run(get_sampler("gibbs"), target, chains=4, warmup=100, draws=3000, seed=18).chains
    assert not evaluate(chains, target).failures
    assert 0 < chains.sample_stats["flip_rate"].mean() < 1  # a discrete target reports flip_rate
