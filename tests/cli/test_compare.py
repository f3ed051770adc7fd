"""`mcmc compare` end to end: the three modes, formats, exit codes, bad input."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains
from mcmc.diagnostics import stats

REF = str(Path(__file__).parents[1] / "data" / "compare" / "eight_schools-eight_schools_noncentered.json")

TOP_SAMPLERS = {
    "schema", "mode", "target", "target_options", "dim", "exact_moments", "chains", "warmup", "draws", "seed",
    "grad_cost", "params", "max_z", "check_sd", "passed", "verdict", "best", "samplers", "notes",
}  # fmt: skip
ROW_KEYS = {
    "sampler", "wall_time_s", "warmup_time_s", "sampling_time_s", "n_density_evals", "n_gradient_evals",
    "n_density_evals_warmup", "n_gradient_evals_warmup", "cost", "sampling_cost", "rhat_max", "rhat_argmax",
    "ess_bulk_min", "ess_bulk_argmin", "ess_tail_min", "ess_tail_argmin", "ess_min", "ess_per_s",
    "ess_per_1k_evals", "ess_per_1k_grads", "acceptance", "divergences", "mean_z_max", "mean_z_argmax",
    "sd_z_max", "sd_z_argmax", "acf1_max", "acf1_argmax", "iat_max", "iat_argmax", "passed", "verdict",
}  # fmt: skip
TOP_RUNS = {
    "schema", "mode", "a", "b", "max_z", "check_sd", "passed", "verdict", "failed", "only_in_a", "only_in_b",
    "expected_false_alarms", "bonferroni_max_z_1pct", "notes", "parameters",
}  # fmt: skip
PARAM_KEYS = {
    "name", "mean_a", "mean_b", "mcse_a", "mcse_b", "z", "sd_a", "sd_b", "sd_ratio", "mcse_sd_a", "mcse_sd_b",
    "z_sd", "ess_bulk_a", "ess_bulk_b", "rhat_a", "rhat_b", "passed",
}  # fmt: skip

# Eight schools with every school's observed effect 10 points higher: a
# plausible-looking but wrong model, run by the real sampler.
WRONG_EIGHT = """
from mcmc.core.targets import models

_saved = models.EIGHT_Y
models.EIGHT_Y = _saved + 10.0
try:
    target = models.eight_schools()
finally:
    models.EIGHT_Y = _saved
"""

NO_GRADIENT = """
import numpy as np

dim = 2


def log_density(x):
    return -0.5 * (x**2).sum(axis=1)
"""


def strict_json(text: str) -> dict:
    def refuse(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def one_error_line(r) -> str:
    assert r.code == 2, (r.code, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcmc: error:"), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def eight_runs(tmp_path_factory) -> dict[str, str]:
    """HMC on eight schools with two seeds, and HMC on the wrong-data model (module-wide: a second each)."""
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import get_target

    d = tmp_path_factory.mktemp("eight")
    out = {}
    hmc = get_sampler("hmc")
    for name, seed in (("s1", 1), ("s2", 2)):
        out[name] = str(d / f"{name}.npz")
        chains, _ = run(hmc, get_target("eight-schools"), chains=4, warmup=400, draws=500, seed=seed)
        write_chains(chains, out[name])
    model = d / "wrong_eight.py"
    model.write_text(WRONG_EIGHT)
    out["wrong"] = str(d / "wrong.npz")
    wrong = get_target(f"{model}:target")
    write_chains(run(hmc, wrong, chains=4, warmup=400, draws=500, seed=1).chains, out["wrong"])
    return out


# --------------------------------------------------------------------------- mode 1: samplers


def test_samplers_json_rows_match_the_runs(mcmc) -> None:
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import get_target

    args = ("--chains", "2", "--warmup", "150", "--draws", "200", "--seed", "3", "--no-check")  # rwm: too short
    r = mcmc("compare", "-t", "gaussian", "--dim", "3", "-s", "hmc,rwm", *args, "-f", "json")
    assert r.code == 0, r.stderr
    doc = strict_json(r.out)
    assert set(doc) == TOP_SAMPLERS and doc["schema"] == "mcmc.compare/1" and doc["mode"] == "samplers"
    assert [row["sampler"] for row in doc["samplers"]] == ["hmc", "rwm"]
    assert doc["exact_moments"] and doc["seed"] == 3 and doc["target_options"]["dim"] == 3
    target = get_target("gaussian", dim=3)
    for row in doc["samplers"]:
        assert set(row) == ROW_KEYS
        # Same seed, same draws: the run the command made is reproduced here.
        chains = run(get_sampler(row["sampler"]), target, chains=2, warmup=150, draws=200, seed=3).chains
        a = chains.attrs
        assert row["n_density_evals"] == a["n_density_evals"] + a["n_density_evals_warmup"]
        assert row["n_gradient_evals"] == a["n_gradient_evals"] + a["n_gradient_evals_warmup"]
        assert row["cost"] == row["n_density_evals"] + row["n_gradient_evals"]
        x = chains.posterior["x"]
        z = np.abs(x.mean(axis=(0, 1)) - target.mean) / stats.mcse_mean(x)
        assert row["mean_z_max"] == pytest.approx(z.max(), rel=1e-10)
        assert row["mean_z_argmax"] == f"x[{int(np.argmax(z))}]"
        assert row["ess_bulk_min"] == pytest.approx(stats.ess_bulk(x).min(), rel=1e-10)
    assert doc["samplers"][1]["n_gradient_evals"] == 0 and doc["samplers"][1]["divergences"] is None
    assert doc["best"]["ess_per_1k_evals"] == ["hmc"]
    assert r.stderr.strip().startswith("PASS:") and len(r.stderr.strip().splitlines()) == 1


def test_sampler_tuning_reaches_the_runs(mcmc) -> None:
    # -P passes mcmc sample's tuning options through: the same run as mcmc sample with them.
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import get_target

    args = ("-t", "gaussian", "--dim", "2", "-s", "hmc,rwm", "--chains", "2", "--warmup", "100", "--draws", "100",
            "--no-check")
    r = mcmc("compare", *args, "--seed", "2", "-P", "hmc:target-accept=0.95", "-P", "rwm:scale=0.3", "-f", "json")
    assert r.code == 0, r.stderr
    doc = strict_json(r.out)
    assert doc["params"] == {"hmc": {"target_accept": 0.95}, "rwm": {"scale": 0.3}}
    chains = run(get_sampler("hmc"), get_target("gaussian", dim=2), chains=2, warmup=100, draws=100, seed=2,
                 params={"target_accept": 0.95}).chains  # fmt: skip
    a = chains.attrs
    assert doc["samplers"][0]["n_gradient_evals"] == a["n_gradient_evals"] + a["n_gradient_evals_warmup"]


def test_var_restricts_the_runs_comparison(mcmc, eight_runs) -> None:
    r = mcmc("compare", eight_runs["s1"], eight_runs["s2"], "--var", "mu", "--var", "theta[0]", "--var", "theta[1]",
             "-f", "json")  # fmt: skip
    assert r.code == 0, r.stderr
    doc = strict_json(r.out)
    assert [p["name"] for p in doc["parameters"]] == ["mu", "theta[0]", "theta[1]"]
    assert doc["only_in_a"] == [] and doc["only_in_b"] == []


def test_samplers_table_and_csv(mcmc) -> None:
    args = ("-t", "gaussian", "--dim", "2", "-s", "slice,rwm", "--chains", "2", "--warmup", "100", "--draws", "100",
            "--no-check")
    r = mcmc("compare", *args, "--seed", "1")
    assert r.code == 0, r.stderr
    lines = r.out.splitlines()
    assert lines[0].startswith("gaussian (dim=2, ") and lines[0].endswith("seed 1")
    header = next(line for line in lines if "slice" in line)
    assert header.split() == ["slice", "rwm"]
    bulk = [cell.rstrip("*") for cell in next(line for line in lines if "min bulk ESS" in line).split()[3:]]  # * best
    rows = list(csv.DictReader(io.StringIO(mcmc("compare", *args, "--seed", "1", "-f", "csv").out)))
    assert bulk == [f"{float(row['ess_bulk_min']):.0f}" for row in rows]
    r = mcmc("compare", *args, "--seed", "1", "-f", "csv", "--grad-cost", "3")
    rows = list(csv.DictReader(io.StringIO(r.out)))
    assert [row["sampler"] for row in rows] == ["slice", "rwm"]
    assert set(rows[0]) == ROW_KEYS and rows[0]["divergences"] == ""


def test_samplers_fail_when_a_mean_misses_the_truth(mcmc, tmp_path: Path) -> None:
    # max-z 0 makes any nonzero error a failure: exercises the exit-1 path of mode 1.
    args = ("-t", "gaussian", "--dim", "2", "-s", "hmc", "--chains", "2", "--warmup", "100", "--draws", "100")
    r = mcmc("compare", *args, "--seed", "1", "--max-z", "0", "-f", "json")
    assert r.code == 1
    assert r.stderr.startswith("FAIL: more than 0 MCSE off the exact value: hmc mean (|z|")
    assert strict_json(r.out)["passed"] is False


# --------------------------------------------------------------------------- mode 2: run against run


def test_two_seeds_pass_and_shifted_copy_fails_naming_it(mcmc, eight_runs, tmp_path: Path) -> None:
    r = mcmc("compare", eight_runs["s1"], eight_runs["s2"], "-f", "json")
    assert r.code == 0, r.stderr
    doc = strict_json(r.out)
    assert set(doc) == TOP_RUNS and doc["mode"] == "runs" and doc["passed"] and doc["failed"] == []
    assert all(set(p) == PARAM_KEYS for p in doc["parameters"])
    assert [p["name"] for p in doc["parameters"]] == ["mu", "tau"] + [f"theta[{j}]" for j in range(8)]
    assert r.stderr.startswith("PASS: 10 shared parameters")

    # z equals the direct computation from stats.mcse_mean.
    from mcmc.diagnostics.readers import read_chains

    a, b = read_chains([eight_runs["s1"]]), read_chains([eight_runs["s2"]])
    ta, tb = a.posterior["theta"], b.posterior["theta"]
    z = (stats.mean(ta) - stats.mean(tb)) / np.sqrt(stats.mcse_mean(ta) ** 2 + stats.mcse_mean(tb) ** 2)
    np.testing.assert_allclose([p["z"] for p in doc["parameters"][2:]], z, rtol=1e-12)

    # theta[3] of B moved by 10 combined MCSEs: exactly that parameter fails.
    se = math.hypot(stats.mcse_mean(ta)[3], stats.mcse_mean(tb)[3])
    theta = tb.copy()
    theta[:, :, 3] += 10 * se
    shifted = tmp_path / "shifted.npz"
    write_chains(Chains({**b.posterior, "theta": theta}, b.sample_stats, b.attrs), shifted)
    r = mcmc("compare", eight_runs["s1"], str(shifted))
    assert r.code == 1
    verdict = r.stderr.strip().splitlines()[0]
    assert verdict.startswith("FAIL: 1 of 10 parameters differ beyond |z| 4: theta[3] (z -")
    r = mcmc("compare", eight_runs["s1"], str(shifted), "-f", "csv")
    rows = {row["name"]: row for row in csv.DictReader(io.StringIO(r.out))}
    assert [n for n, row in rows.items() if row["passed"] == "false"] == ["theta[3]"]
    assert float(rows["theta[3]"]["z"]) == pytest.approx(doc["parameters"][5]["z"] - 10, abs=1e-9)


def test_many_parameters_get_the_bonferroni_note(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    paths = []
    for name in ("a", "b"):
        paths.append(str(tmp_path / f"{name}.npz"))
        write_chains(Chains({"w": rng.standard_normal((2, 100, 1000))}), paths[-1])
    r = mcmc("compare", *paths, "-f", "json")
    doc = strict_json(r.out)
    assert doc["bonferroni_max_z_1pct"] == pytest.approx(4.417, abs=1e-3)
    assert doc["expected_false_alarms"] == pytest.approx(1000 * math.erfc(4 / math.sqrt(2)))
    assert "--max-z 4.42 keeps the familywise false-alarm rate at 1% (Bonferroni)" in r.stderr
    assert r.code == (0 if doc["passed"] else 1)


# --------------------------------------------------------------------------- mode 3: against posteriordb


def test_hmc_agrees_with_posteriordb_reference(mcmc, eight_runs) -> None:
    r = mcmc("compare", eight_runs["s1"], "--reference", REF, "-f", "json")
    assert r.code == 0, r.stderr
    doc = strict_json(r.out)
    assert doc["mode"] == "reference" and doc["b"] == {"source": [REF], "chains": 10, "draws": 100}
    names = [p["name"] for p in doc["parameters"]]
    assert sorted(names) == sorted(["mu", "tau"] + [f"theta[{j}]" for j in range(8)])
    assert doc["only_in_a"] == [] and doc["only_in_b"] == []
    assert all(abs(p["z"]) < 4 for p in doc["parameters"])
    # The comparison is on the same quantities: sds agree within a few per cent too.
    assert all(0.8 < p["sd_ratio"] < 1.25 for p in doc["parameters"])
    table = mcmc("compare", eight_runs["s1"], "--reference", REF)
    assert table.code == 0 and "mean ref" in table.out and "theta[7]" in table.out


def test_wrong_model_disagrees_with_posteriordb_reference(mcmc, eight_runs) -> None:
    r = mcmc("compare", eight_runs["wrong"], "-r", REF, "-f", "json")
    assert r.code == 1
    doc = strict_json(r.out)
    assert "mu" in doc["failed"] and all(p["z"] > 0 for p in doc["parameters"] if p["name"] in doc["failed"])
    assert r.stderr.startswith("FAIL:")


# --------------------------------------------------------------------------- bad input


def test_bad_input_is_one_line_and_exit_2(mcmc, eight_runs, tmp_path: Path) -> None:
    no_grad = tmp_path / "nograd.py"
    no_grad.write_text(NO_GRADIENT)
    other = tmp_path / "other.npz"
    write_chains(Chains({"beta": np.zeros((2, 10, 2))}), other)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"mu": [1, 2]}')
    s1 = eight_runs["s1"]
    cases = [
        (("compare", "-t", "gaussian", "-s", "hmc,nope"), "unknown sampler 'nope'"),
        (("compare", "-t", str(no_grad), "-s", "rwm,hmc", "--draws", "10"), "hmc needs grad_log_density"),
        (("compare", "-t", "gaussian"), "needs both --target and --samplers"),
        (("compare", "-t", "gaussian", "-s", "rwm,rwm"), "rwm listed more than once"),
        (("compare", "-t", "gaussian", "-s", "rwm", s1), "not both"),
        (("compare", "-t", "nope", "-s", "rwm"), "unknown target 'nope'"),
        (("compare", s1, str(other)), "share no parameter: A has mu, tau, theta[0]"),
        (("compare", s1, str(tmp_path / "missing.npz")), "missing.npz: no such file"),
        (("compare", s1), "give two runs to compare"),
        (("compare", s1, s1, "-r", REF), "--reference compares one run"),
        (("compare", s1, "-r", str(bad_json)), "expected a list of chains"),
        (("compare", s1, "-r", str(tmp_path / "nope.json")), "nope.json: no such file"),
        (("compare", s1, s1, "--var", "sigma"), "--var 'sigma' matches no variable"),
        (("compare", "-t", "gaussian", "-s", "rwm", "--var", "x"), "with --samplers every coordinate counts"),
        (("compare", s1, s1, "-P", "hmc:target-accept=0.9"), "does not apply to chains files"),
        (("compare", "-t", "gaussian", "-s", "rwm", "-P", "hmc:target-accept=0.9"), "'hmc' is not among --samplers"),
        (("compare", "-t", "gaussian", "-s", "rwm", "-P", "rwm:width=2"), "rwm has no option 'width'"),
        (("compare", "-t", "gaussian", "-s", "rwm", "-P", "rwm-scale"), "expects SAMPLER:KEY=VALUE"),
        (("compare", "-t", "gaussian", "-s", "rwm", "-P", "rwm:scale=wide"), "scale must be a number, got 'wide'"),
    ]
    for argv, message in cases:
        line = one_error_line(mcmc(*argv))
        assert message in line, (argv, line)
    assert "B has beta[0], beta[1]" in one_error_line(mcmc("compare", s1, str(other)))
    r = mcmc("compare", s1, s1, "--format", "yaml")
    assert r.code == 2 and "yaml" in r.stderr


def test_layout_of_bare_arrays(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    draw_major = rng.standard_normal((400, 4, 2))  # (draw, chain, dim), as emcee saves
    np.save(tmp_path / "a.npy", draw_major)
    np.save(tmp_path / "b.npy", draw_major + 0.0)
    r = mcmc("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    assert r.code == 2 and "--layout draw,chain" in r.stderr
    r = mcmc("compare", "--layout", "draw,chain", "-f", "json", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    assert r.code == 0, r.stderr
