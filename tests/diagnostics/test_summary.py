"""The run summary of sample, compare and lda: the worst R-hat and ESS, the sampler's counts, burn-in left out."""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.chains import Chains
from mcmc.diagnostics import stats
from mcmc.diagnostics.report.thresholds import Thresholds
from mcmc.diagnostics.report.summary import summarize_lda, summarize_run


def _disagreeing_chains(rng: np.random.Generator) -> Chains:
    """Four chains of iid normal draws; some parameters with chains shifted apart, by different amounts."""
    chains, draws = 4, 500
    shift = np.arange(chains)[:, None] - 1.5  # chain offsets -1.5 .. 1.5
    mu = rng.standard_normal((chains, draws))  # mixes: R-hat ~1
    L = rng.standard_normal((chains, draws, 2, 2))
    L[:, :, 1, 0] += 0.8 * shift  # clearly unmixed, the worst
    L[:, :, 0, 1] += 0.1 * shift  # mildly unmixed
    return Chains(
        {"mu": mu, "L": L},
        sample_stats={
            "acceptance_rate": rng.uniform(0.3, 0.9, (chains, draws)),
            "diverging": rng.random((chains, draws)) < 0.01,
        },
    )


def test_rhat_max_is_the_largest_rhat_and_names_its_parameter() -> None:
    chains = _disagreeing_chains(np.random.default_rng(1))
    x = np.concatenate([chains.posterior["mu"][..., None], chains.posterior["L"].reshape(4, 500, 4)], axis=2)
    names = ["mu", "L[0, 0]", "L[0, 1]", "L[1, 0]", "L[1, 1]"]
    rhat, bulk, tail = stats.rhat(x), stats.ess_bulk(x), stats.ess_tail(x)
    assert rhat.max() > 1.2 and rhat.min() < 1.01  # max and min far apart: mixing them up cannot pass

    s = summarize_run(chains)
    assert (s.n_chains, s.n_draws, s.n_params) == (4, 500, 5)
    assert s.rhat_max == rhat.max() and s.rhat_argmax == names[int(rhat.argmax())] == "L[1, 0]"
    assert s.ess_bulk_min == bulk.min() and s.ess_bulk_argmin == names[int(bulk.argmin())]
    assert s.ess_tail_min == tail.min() and s.ess_tail_argmin == names[int(tail.argmin())]
    assert s.rhat_ok is False and s.ess_bulk_ok is False
    assert s.thresholds == Thresholds().for_chains(4)  # 100 per chain, made concrete
    rate = chains.sample_stats["acceptance_rate"]
    assert s.acceptance == pytest.approx(rate.mean(), rel=1e-14)
    np.testing.assert_allclose(s.acceptance_by_chain, rate.mean(axis=1), rtol=1e-14)
    assert s.divergences == int(chains.sample_stats["diverging"].sum())
    assert s.n_evals_per_draw is None and s.likelihood_saved is None and s.envelope_exceeded is None


def test_a_run_that_meets_the_thresholds_is_ok_and_the_thresholds_are_the_callers() -> None:
    rng = np.random.default_rng(2)
    chains = Chains({"x": rng.standard_normal((4, 1000, 3))}, sample_stats={"n_evals": np.full((4, 1000), 3.0)})
    s = summarize_run(chains)
    assert s.rhat_ok is True and s.ess_bulk_ok is True
    assert s.acceptance is None and s.divergences is None and s.n_evals_per_draw == 3.0
    strict = summarize_run(chains, thresholds=Thresholds(max_rhat=1.0, min_ess=1e9))
    assert strict.rhat_ok is False and strict.ess_bulk_ok is False and strict.rhat_max == s.rhat_max


def test_undefined_statistics_give_none_not_nan() -> None:
    s = summarize_run(Chains({"c": np.ones((2, 50))}))
    assert s.rhat_max is s.rhat_argmax is s.ess_bulk_min is s.rhat_ok is s.ess_bulk_ok is None


def test_lda_summary_leaves_burn_in_out() -> None:
    """The climb from the random start differs by chain; after burn-in the chains agree.

    R-hat and ESS over the post-burn-in iterations only: with burn-in included
    the R-hat would be far above 1 and the ESS tiny.
    """
    rng = np.random.default_rng(3)
    chains, burn_in, iterations = 4, 300, 600
    trace = -7.5 + 0.01 * rng.standard_normal((chains, iterations))
    start = -9.0 - np.arange(chains)[:, None]  # each chain starts lower than the last
    trace[:, :burn_in] = start + (trace[:, burn_in : burn_in + 1] - start) * np.linspace(0, 1, burn_in)
    post = trace[:, burn_in:, None]
    assert stats.rhat(trace[..., None])[0] > 1.2  # burn-in in would show

    s = summarize_lda(trace, burn_in)
    assert s.rhat_max == stats.rhat(post)[0] and s.rhat_max < 1.02
    assert s.ess_bulk_min == stats.ess_bulk(post)[0] > 1000
    assert s.rhat_argmax == "log_joint_per_token" and s.n_draws == iterations - burn_in
