"""Advice in the words of the program that wrote the draws (issue 28.10)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains
from mcmc.diagnostics.readers import read_chains
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.vocabulary import UNKNOWN, VOCABULARY, words_of

DATA = Path(__file__).parents[1] / "data"


@pytest.mark.parametrize(
    ("path", "program"),
    [("diagnose/pymc_eight_schools.nc", "PyMC"), ("diagnose/numpyro_eight_schools.nc", "NumPyro"),
     ("diagnose/emcee_line.nc", "emcee"), ("diagnose/emcee_backend.h5", "emcee"),
     ("fixtures/cmdstan/eight_schools_output.csv", "CmdStan"), ("classic/eight_schools.csv", "")],
)  # fmt: skip
def test_the_readers_say_which_program_wrote_a_file(path: str, program: str) -> None:
    assert words_of(read_chains([str(DATA / path)]).attrs).program == program


def _failing(attrs: dict, divergent: bool = True) -> Chains:
    """Four chains apart (R-hat, ESS fail) with divergences and a low E-BFMI, written by ``attrs``' program."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 200)) + np.array([0.0, 0.0, 0.0, 3.0])[:, None]
    energy = np.cumsum(rng.standard_normal((4, 200)), axis=1)
    stats = {"energy": energy, "diverging": np.eye(4, 200, dtype=bool)} if divergent else {}
    return Chains({"x": x}, stats, attrs)


@pytest.mark.parametrize(
    ("attrs", "draws", "warmup", "target_accept"),
    [({"inference_library": "pymc"}, "(draws)", "(tune)", "target_accept 0.9"),
     ({"inference_library": "numpyro"}, "(num_samples)", "(num_warmup)", "target_accept_prob 0.9"),
     ({"inference_library": "cmdstan"}, "(iter_sampling)", "(iter_warmup)", "adapt_delta 0.9"),
     ({"sampler": "hmc", "warmup": 1000, "seed": 1, "target": "funnel"}, "(--draws)", "(--warmup)",
      "--target-accept 0.9")],
)  # fmt: skip
def test_advice_names_the_writing_programs_settings(attrs: dict, draws: str, warmup: str, target_accept: str) -> None:
    advice = {c.name: c.advice for c in check(_failing(attrs)).checks if not c.passed}
    assert {"rhat", "ess", "divergences", "ebfmi"} <= set(advice)
    assert f"draw more {draws}" in advice["ess"]
    assert f"run a longer warm-up {warmup}" in advice["rhat"] and f"more warm-up {warmup}" in advice["ebfmi"]
    assert target_accept in advice["divergences"]
    if "--draws" not in draws:
        assert "--" not in " ".join(advice.values())  # none of mcmc sample's options for another program's file


def test_emcee_has_no_warm_up_and_unknown_files_get_plain_words() -> None:
    advice = {c.name: c.advice for c in check(_failing({"inference_library": "emcee"}, False)).checks}
    assert "emcee has no warm-up" in advice["rhat"] and "run_mcmc's nsteps" in advice["ess"]
    assert "longer warm-up" not in advice["rhat"]
    plain = {c.name: c.advice for c in check(_failing({})).checks}
    assert "--draws" not in plain["ess"] and "adapt_delta" in plain["divergences"]
    assert words_of({}) is UNKNOWN and set(VOCABULARY) >= {"mcmc", "mcmc lda", "cmdstan", "pymc", "numpyro", "emcee"}


def test_lda_chains_are_told_to_run_more_iterations(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "lda.npz"
    mcmc("lda", str(DATA / "lda" / "reuters50.ldac"), "-k", "3", "--iterations", "30", "--no-check", "-o", str(out))
    report = check(read_chains([str(out)]))
    assert words_of(read_chains([str(out)]).attrs).program == "mcmc lda"
    assert "--iterations" in " ".join(c.advice for c in report.checks if not c.passed)
