"""The one statistical harness every sampler is tested with.

Run a sampler on a target whose posterior mean and sd are known exactly, then
for every reported coordinate require

* ``|mean - truth| / MCSE(mean) < z_max`` (default 4),
* ``|sd - truth| / MCSE(sd) < z_max``,
* rank-normalized split R-hat ``< rhat_max`` (default 1.01),
* the mean of the ``acceptance_rate`` statistic inside ``accept`` (if given).

MCSE and R-hat come from :mod:`mcmc.diagnostics.stats` (the project's own
kernels, themselves tested equal to arviz_stats to 1e-8). Seeds are fixed, so
a pass is reproducible; a failure message lists every offending coordinate.

Usage from any sampler's tests (``tests`` resolves as a namespace package from
the repository root, also under ``--import-mode=importlib``)::

    from tests.core.harness import check_sampler

    check_sampler(hmc, get_target("gaussian", dim=5), warmup=500, draws=1000, accept=(0.7, 0.9))

Every registered sampler has a statistical test, listed in
:data:`STATISTICAL_TESTS`; ``tests/test_registry.py`` fails when one is
missing or names a test that is not there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.samplers.driver import run
from mcmc.core.samplers.registry import DENSITY, NETWORK
from mcmc.core.targets.base import Target
from mcmc.diagnostics import stats

_EXACT_MOMENTS = "tests/core/test_samplers.py::test_sampler_matches_exact_moments"
_MH = "tests/core/test_mh_exact.py::"

#: (target kind, sampler name) -> the tests judging its draws against exact answers: moments with this harness,
#: enumeration of a small lattice, exact marginals of a network, the stationary law of a Markov chain.
STATISTICAL_TESTS: dict[tuple[str, str], tuple[str, ...]] = {
    (DENSITY, "rwm"): (_EXACT_MOMENTS,),
    (DENSITY, "mh-independence"): (_EXACT_MOMENTS,),
    (DENSITY, "mh-lognormal"): (
        _EXACT_MOMENTS, _MH + "test_lognormal_without_hastings_term_is_biased_and_with_it_is_not",
    ),
    (DENSITY, "two-stage"): (_EXACT_MOMENTS, _MH + "test_enumerated_two_stage_kernel_is_reversible"),
    (DENSITY, "slice"): (_EXACT_MOMENTS,),
    (DENSITY, "elliptical-slice"): (
        _EXACT_MOMENTS,
        "tests/core/test_target_hooks.py::test_elliptical_slice_on_the_models_prior_matches_the_exact_gp_posterior",
    ),
    (DENSITY, "rejection"): (
        _EXACT_MOMENTS,
        "tests/core/test_target_hooks.py::test_rejection_under_the_files_bound_is_exact_in_eight_dimensions",
    ),
    (DENSITY, "importance"): (
        "tests/core/test_target_hooks.py::test_importance_estimates_are_within_their_delta_method_mcse",
    ),
    (DENSITY, "isir"): (_EXACT_MOMENTS,),
    (DENSITY, "inverse-cdf"): (
        "tests/core/test_independent.py::test_inverse_cdf_draws_match_exact_quantiles_and_moments",
        "tests/core/test_independent.py::test_the_numerical_inverse_is_the_exact_quantile_to_1e_9",
    ),
    (DENSITY, "exact"): (
        "tests/core/test_independent.py::test_exact_draws_of_the_gaussian_target_match_its_moments_and_correlation",
        "tests/core/test_independent.py::test_both_forms_give_standard_normals",
    ),
    (DENSITY, "gibbs"): (_EXACT_MOMENTS, "tests/core/test_ising.py::test_sampler_matches_enumeration",
                         "tests/core/test_potts.py::test_sampler_matches_enumeration",
                         "tests/core/test_gibbs_scan.py::test_both_scans_match_the_enumerated_ising_model",
                         "tests/core/test_gibbs_scan.py::test_one_iteration_from_exact_draws_leaves_the_ising_law_unchanged",
                         "tests/core/test_graph_potts.py::test_sampler_matches_enumeration"),
    (DENSITY, "swendsen-wang"): ("tests/core/test_ising.py::test_sampler_matches_enumeration",
                                 "tests/core/test_potts.py::test_sampler_matches_enumeration",
                                 "tests/core/test_graph_potts.py::test_sampler_matches_enumeration"),
    (DENSITY, "hmc"): ("tests/core/test_hmc.py::test_hmc_matches_exact_moments",
                       "tests/core/test_integrators.py::test_hmc_with_twenty_unjittered_steps_takes_exactly_twenty_and_is_exact",
                       "tests/core/test_integrators.py::test_the_leapfrog_energy_error_is_second_order_and_eulers_first"),
    (DENSITY, "hmc-gibbs"): (
        "tests/core/test_hmc_within_gibbs.py::test_docs_example_normal_gamma_matches_exact_posterior",
    ),
    (DENSITY, "markov"): ("tests/core/test_markov_chain.py::test_simulated_frequencies_match_the_stationary_law",),
    (DENSITY, "mh"): ("tests/core/test_mh_finite.py::test_simulated_frequencies_match_b_over_its_sum",
                      "tests/core/test_mh_finite.py::test_the_chain_moves_as_its_transition_matrix_says"),
    (DENSITY, "nuts"): ("tests/core/test_nuts.py::test_nuts_matches_exact_moments",),
    (NETWORK, "gibbs"): ("tests/core/test_networks.py::test_sampler_marginals_within_4_mcse",),
    (NETWORK, "rejection"): ("tests/core/test_networks.py::test_sampler_marginals_within_4_mcse",),
    (NETWORK, "likelihood-weighting"): ("tests/core/test_networks.py::test_sampler_marginals_within_4_mcse",),
}  # fmt: skip


@dataclass
class HarnessResult:
    """What the harness measured (kept so a test can assert more)."""

    chains: Chains
    mean: np.ndarray
    sd: np.ndarray
    z_mean: np.ndarray
    z_sd: np.ndarray
    rhat: np.ndarray
    ess_bulk: np.ndarray
    acceptance: float | None
    failures: list[str] = field(default_factory=list)


def reported_draws(chains: Chains, target: Target) -> np.ndarray:
    """Draws ``(chain, draw, n_reported)`` in ``target.names`` order."""
    parts = [
        np.asarray(chains.posterior[name]).reshape(chains.n_chains, chains.n_draws, -1) for name, _ in target.variables
    ]
    return np.concatenate(parts, axis=2)


def evaluate(
    chains: Chains,
    target: Target,
    *,
    z_max: float = 4.0,
    rhat_max: float = 1.01,
    accept: tuple[float, float] | None = None,
    check_sd: bool = True,
) -> HarnessResult:
    """Compare ``chains`` with ``target.mean`` / ``target.sd``; collect failures (does not raise)."""
    if target.mean is None or target.sd is None:
        raise ValueError(f"target {target.name!r} has no exact moments; the harness needs them")
    x = reported_draws(chains, target)
    mean = x.mean(axis=(0, 1))
    sd = x.std(axis=(0, 1), ddof=1)
    z_mean = (mean - target.mean) / stats.mcse_mean(x)
    z_sd = (sd - target.sd) / stats.mcse_sd(x)
    rhat = stats.rhat(x)
    ess = stats.ess_bulk(x)
    acc = chains.sample_stats.get("acceptance_rate")
    acceptance = None if acc is None else float(np.mean(acc))
    failures = []
    for i, name in enumerate(target.names):
        if not abs(z_mean[i]) < z_max:
            failures.append(f"{name}: mean {mean[i]:.5g} vs {target.mean[i]:.5g} is {z_mean[i]:+.2f} MCSE")
        if check_sd and not abs(z_sd[i]) < z_max:
            failures.append(f"{name}: sd {sd[i]:.5g} vs {target.sd[i]:.5g} is {z_sd[i]:+.2f} MCSE(sd)")
        if not rhat[i] < rhat_max:
            failures.append(f"{name}: R-hat {rhat[i]:.4f} >= {rhat_max} (bulk ESS {ess[i]:.0f})")
    if accept is not None and acceptance is not None and not (accept[0] <= acceptance <= accept[1]):
        failures.append(f"mean acceptance {acceptance:.3f} outside [{accept[0]}, {accept[1]}]")
    if accept is not None and acceptance is None:
        failures.append("no acceptance_rate statistic to check")
    return HarnessResult(chains, mean, sd, z_mean, z_sd, rhat, ess, acceptance, failures)


def check_sampler(
    sampler: Any,
    target: Target,
    *,
    chains: int = 4,
    warmup: int = 500,
    draws: int = 1000,
    seed: int = 20261122,
    params: dict[str, Any] | None = None,
    z_max: float = 4.0,
    rhat_max: float = 1.01,
    accept: tuple[float, float] | None = None,
    check_sd: bool = True,
) -> HarnessResult:
    """Run ``sampler`` on ``target`` with a fixed seed and assert it matches the exact moments.

    Raises
    ------
    AssertionError
        Listing every coordinate that failed and the run's settings.
    """
    result = evaluate(
        run(sampler, target, chains=chains, warmup=warmup, draws=draws, seed=seed, params=params).chains,
        target,
        z_max=z_max,
        rhat_max=rhat_max,
        accept=accept,
        check_sd=check_sd,
    )
    name = getattr(sampler, "NAME", sampler)
    assert not result.failures, (
        f"{name} on {target.name} {target.options} (chains={chains}, warmup={warmup}, draws={draws}, "
        f"seed={seed}, params={params}):\n  " + "\n  ".join(result.failures)
    )
    return result
