"""hmc-gibbs: exact Gibbs blocks alternating with HMC, on targets with exact answers."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import InputError, UsageError
from mcmc.core.samplers import get_sampler
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from tests.core.harness import check_sampler, evaluate

EXAMPLE = Path(__file__).parents[1] / "data" / "sample" / "normal_gamma.py"


def _example_module():
    spec = importlib.util.spec_from_file_location("normal_gamma_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _example_with_moments():
    target = get_target(str(EXAMPLE))
    mean, sd = _example_module().exact_moments()
    return dataclasses.replace(target, mean=mean, sd=sd)


@pytest.mark.parametrize("persistence", [0.0, 0.8])
def test_docs_example_normal_gamma_matches_exact_posterior(persistence) -> None:
    # The docs' user-file example: tau by its gamma conditional, mu by HMC; normal-gamma posterior exactly.
    check_sampler(get_sampler("hmc-gibbs"), _example_with_moments(), warmup=200, draws=1000,
                  params={"persistence": persistence})  # fmt: skip


def test_wrong_conditional_is_caught() -> None:
    # Break the block once (a rate off by 30 %): the same harness must fail.
    target = _example_with_moments()
    good = target.draw_fn

    def wrong(rng, x, block, noise):
        good(rng, x, block, noise)
        x[:, 1] *= 1.3

    broken = dataclasses.replace(target, draw_fn=wrong)
    chains = run(get_sampler("hmc-gibbs"), broken, chains=4, warmup=200, draws=1000, seed=20261122).chains
    assert evaluate(chains, target).failures


def test_chains_depend_only_on_seed_and_index() -> None:
    target = get_target(str(EXAMPLE))
    sampler = get_sampler("hmc-gibbs")
    whole = run(sampler, target, chains=4, warmup=30, draws=20, seed=5, params={"persistence": 0.5}).chains
    part = run(sampler, target, chain_ids=[2, 3], warmup=30, draws=20, seed=5, params={"persistence": 0.5}).chains
    np.testing.assert_array_equal(whole.posterior["mu"][2:], part.posterior["mu"])
    np.testing.assert_array_equal(whole.sample_stats["step_size"][2:], part.sample_stats["step_size"])


def test_gibbs_refuses_blocks_that_leave_coordinates_out() -> None:
    with pytest.raises(UsageError, match="hmc-gibbs"):
        run(get_sampler("gibbs"), get_target(str(EXAMPLE)), chains=2, warmup=0, draws=2, seed=1)


def test_hmc_gibbs_needs_blocks_that_leave_something_to_hmc() -> None:
    with pytest.raises(UsageError, match="hmc-gibbs"):
        run(get_sampler("hmc-gibbs"), get_target("banana"), chains=2, warmup=0, draws=2, seed=1)
    with pytest.raises(UsageError, match="every coordinate"):
        run(get_sampler("hmc-gibbs"), get_target("gaussian", dim=2), chains=2, warmup=0, draws=2, seed=1)


def test_bad_user_blocks_are_one_line_errors(tmp_path) -> None:
    text = EXAMPLE.read_text()
    bad = tmp_path / "bad.py"
    bad.write_text(text.replace("conditional_blocks = [[1]]", "conditional_blocks = [[5]]"))
    with pytest.raises(InputError, match="outside"):
        get_target(str(bad))
    half = tmp_path / "half.py"
    half.write_text(text.replace("def draw_conditional", "def other_name"))
    with pytest.raises(InputError, match="both conditional_blocks and draw_conditional"):
        get_target(str(half))
    leaky = tmp_path / "leaky.py"
    leaky.write_text(text.replace("x[:, 1] = gammaincinv", "x[:, 0] = 0.0\n    x[:, 1] = gammaincinv"))
    with pytest.raises(InputError, match="changed other coordinates"):
        run(get_sampler("hmc-gibbs"), get_target(str(leaky)), chains=2, warmup=0, draws=2, seed=1)
