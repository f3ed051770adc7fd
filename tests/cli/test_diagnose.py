"""`mcmc diagnose` end to end: formats, exit codes, schema, config, bad input, plots."""

from __future__ import annotations

import csv
import io
import json
import re
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains

FIX = Path(__file__).parents[1] / "data" / "fixtures"
MIX = [str(FIX / "cmdstan" / "mix_output.1.csv"), str(FIX / "cmdstan" / "mix_output.2.csv")]
EIGHT_NPZ = str(FIX / "centered_eight_posterior.npz")
EIGHT_CSV = str(FIX / "cmdstan" / "eight_schools_output.csv")

TOP_KEYS = {
    "schema", "source", "chains", "draws", "thresholds", "passed", "verdict",
    "checks", "sampler", "notes", "parameters", "strict", "failing", "log_density", "ensemble",
}  # fmt: skip
PARAM_KEYS = {
    "name", "variable", "mean", "sd", "mad", "quantiles", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail",
    "rhat", "rhat_split", "ssif", "ess_ssif", "ssif_disagrees", "acf", "iat", "acceptance", "status",
    "max_rhat", "min_ess", "mcse_quantiles", "iat_emcee",
}  # fmt: skip


def strict_json(text: str) -> dict:
    def refuse(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def good_npz(tmp_path: Path) -> str:
    """Well-mixed iid chains: every check passes."""
    rng = np.random.default_rng(11)
    path = tmp_path / "good.npz"
    write_chains(Chains({"a": rng.standard_normal((4, 1000)), "b": rng.standard_normal((4, 1000, 2))}), path)
    return str(path)


def test_pass_exits_0_with_one_verdict_line(mcmc, good_npz: str) -> None:
    r = mcmc("diagnose", good_npz)
    assert r.code == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("PASS: 3 parameters, R-hat <= 1.01")
    for name in ("a", "b[0]", "b[1]", "estimated from draws"):
        assert name in r.out


def test_mix_fails_with_exit_1_naming_the_parameters(mcmc) -> None:
    r = mcmc("diagnose", *MIX)
    assert r.code == 1
    (line,) = r.stderr.strip().splitlines()
    # the names of CmdStan's own diagnose (tests/data/fixtures/cmdstan/mix.nom), 1-based, worst first
    head = line.split(";")[0]
    assert head.startswith("FAIL: R-hat > 1.01 for ")
    named = head.removeprefix("FAIL: R-hat > 1.01 for ").split(", ")
    assert sorted(named) == ["mu[1]", "mu[2]", "sigma[1]", "theta"]
    report = json.loads(mcmc("diagnose", "-f", "json", *MIX).out)
    rhat = {p["name"]: p["rhat"] for p in report["parameters"]}
    assert [rhat[n] for n in named] == sorted((rhat[n] for n in named), reverse=True)  # the worst first
    # two chains: 100 per chain is 200 (Vehtari et al. 2021), not a fixed 400
    assert "ESS < 200 (100 per chain)" in line


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "md"])
@pytest.mark.parametrize("files", [[EIGHT_NPZ], MIX, [EIGHT_CSV]], ids=["npz", "cmdstan2", "cmdstan1"])
def test_every_format_on_real_fixtures(mcmc, fmt: str, files: list[str]) -> None:
    r = mcmc("diagnose", "--format", fmt, *files)
    assert r.code == 1  # all three fixtures fail some check
    assert r.stderr.startswith("FAIL: ") and len(r.stderr.strip().splitlines()) == 1
    if fmt == "json":
        doc = strict_json(r.out)
        assert doc["schema"] == "mcmc.diagnose/1" and doc["source"] == files and doc["passed"] is False
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.out)))
        assert rows and rows[0]["name"] and {"5%", "50%", "95%", "acf_1", "status"} <= set(rows[0])
    elif fmt == "md":
        assert r.out.startswith("## mcmc diagnose") and "| parameter |" in r.out
    else:
        assert "R-hat" in r.out and "ESS SSIF" in r.out and "E-BFMI" in r.out


def test_json_schema_keys_are_stable(mcmc) -> None:
    doc = strict_json(mcmc("diagnose", "-f", "json", EIGHT_NPZ).out)
    assert set(doc) == TOP_KEYS
    assert set(doc["thresholds"]) == {
        "max_rhat", "min_ess", "min_ess_per_chain", "max_divergences", "min_ebfmi", "max_treedepth_hits",
        "ssif_ratio", "max_ll_gap", "per_variable",
    }  # fmt: skip
    assert set(doc["sampler"]) == {
        "acceptance", "transitions", "divergences", "divergences_per_chain", "divergence_percent",
        "max_treedepth", "treedepth_hits", "ebfmi",
    }  # fmt: skip
    assert set(doc["sampler"]["acceptance"]) == {"per_chain", "overall", "source", "label", "judged"}
    assert all(set(c) == {"name", "passed", "severity", "message", "parameters", "advice"} for c in doc["checks"])
    assert [p["name"] for p in doc["parameters"]] == ["mu", *(f"theta[{i}]" for i in range(8)), "tau"]
    p = doc["parameters"][1]
    assert set(p) == PARAM_KEYS
    assert list(p["quantiles"]) == ["5%", "50%", "95%"] and list(p["acf"]) == ["1", "2", "5", "10", "20", "50"]
    assert doc["chains"] == 4 and doc["draws"] == 500 and doc["sampler"]["divergences"] == 19


def test_json_values_equal_arviz_stats(mcmc) -> None:
    from arviz_stats.base import array_stats

    doc = strict_json(mcmc("diagnose", "-f", "json", EIGHT_NPZ).out)
    got = {p["name"]: p for p in doc["parameters"]}
    with np.load(EIGHT_NPZ) as f:
        draws = {"mu": f["mu"], "theta[3]": f["theta"][:, :, 3], "tau": f["tau"]}
    for name, x in draws.items():
        p = got[name]
        expected = {
            "rhat": array_stats.rhat(x, method="rank"),
            "rhat_split": array_stats.rhat(x, method="split"),
            "ess_bulk": array_stats.ess(x, method="bulk"),
            "ess_tail": array_stats.ess(x, method="tail", prob=(0.05, 0.95)),
            "mcse_mean": array_stats.mcse(x, method="mean"),
            "mcse_sd": array_stats.mcse(x, method="sd"),
        }
        for key, value in expected.items():
            assert p[key] == pytest.approx(float(value), rel=1e-8), (name, key)
        assert p["mean"] == pytest.approx(float(x.mean()), rel=1e-12)


def test_var_globs_and_exact_names(mcmc) -> None:
    doc = strict_json(mcmc("diagnose", "-f", "json", "--var", "theta[0]", "--var", "theta[1]", "--var", "theta[2]",
                           "--var", "tau", EIGHT_NPZ).out)  # fmt: skip
    assert [p["name"] for p in doc["parameters"]] == ["theta[0]", "theta[1]", "theta[2]", "tau"]
    doc = strict_json(mcmc("diagnose", "-f", "json", "--var", "t*", EIGHT_NPZ).out)
    assert [p["name"] for p in doc["parameters"]] == [f"theta[{i}]" for i in range(8)] + ["tau"]
    doc = strict_json(mcmc("diagnose", "-f", "json", "--var", "theta[?]", EIGHT_NPZ).out)
    assert len(doc["parameters"]) == 8
    r = mcmc("diagnose", "--var", "sigma", EIGHT_NPZ)
    assert r.code == 2
    assert "available variables: mu, theta, tau" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_thresholds_from_options_change_the_verdict(mcmc) -> None:
    args = ("diagnose", "-f", "csv", "--max-rhat", "1.05", "--min-ess", "10", "--max-divergences", "7")
    args += ("--min-ebfmi", "0.25")
    r = mcmc(*args, EIGHT_CSV)
    assert r.code == 0 and r.stderr.startswith("PASS: 10 parameters, R-hat <= 1.05, bulk and tail ESS >= 10")
    assert mcmc(*args[:-2], EIGHT_CSV).code == 1  # E-BFMI 0.26 < 0.3 again


def test_warning_thresholds_never_change_the_exit_code(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    stats_ = {"tree_depth": np.full((4, 1000), 10), "energy": rng.standard_normal((4, 1000))}
    path = tmp_path / "deep.npz"
    write_chains(Chains({"a": rng.standard_normal((4, 1000))}, stats_), path)
    r = mcmc("diagnose", "-f", "json", str(path))
    assert r.code == 0 and "(warnings: treedepth)" in r.stderr
    doc = strict_json(r.out)
    (td,) = [c for c in doc["checks"] if c["name"] == "treedepth"]
    assert td["severity"] == "warning" and not td["passed"] and doc["sampler"]["treedepth_hits"] == 4000
    r = mcmc("diagnose", "--max-treedepth-hits", "4000", "--ssif-ratio", "100", str(path))
    assert r.code == 0 and "warnings" not in r.stderr


def test_quantiles_and_lags_options(mcmc, good_npz: str) -> None:
    doc = strict_json(mcmc("diagnose", "-f", "json", "--quantiles", "0.025,0.975", "--lags", "1,3", good_npz).out)
    p = doc["parameters"][0]
    assert list(p["quantiles"]) == ["2.5%", "97.5%"] and list(p["acf"]) == ["1", "3"]
    r = mcmc("diagnose", "--quantiles", "0.5,abc", good_npz)
    assert r.code == 2 and "--quantiles" in r.stderr and "Traceback" not in r.stderr


def test_pyproject_config_and_option_override(mcmc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.mcmc.diagnose]\nmax-rhat = 1.05\nmin_ess = 10\nmax-divergences = 7\nmin-ebfmi = 0.25\n"
        'var = ["mu", "tau"]\nquantiles = [0.1, 0.9]\nformat = "json"\n'
    )
    sub = tmp_path / "project" / "analysis"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)  # the nearest parent's pyproject.toml applies
    r = mcmc("diagnose", EIGHT_CSV)
    assert r.code == 0, r.stderr
    doc = strict_json(r.out)
    assert [p["name"] for p in doc["parameters"]] == ["mu", "tau"]
    assert doc["thresholds"]["max_rhat"] == 1.05 and list(doc["parameters"][0]["quantiles"]) == ["10%", "90%"]
    r = mcmc("diagnose", "--min-ess", "400", "--format", "csv", EIGHT_CSV)  # options override the file
    assert r.code == 1 and r.out.startswith("name,variable,")


def test_pyproject_unknown_key_is_a_usage_error(mcmc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mcmc.diagnose]\nmax-rhatt = 1.05\n")
    monkeypatch.chdir(tmp_path)
    r = mcmc("diagnose", EIGHT_CSV)
    assert r.code == 2
    (line,) = r.stderr.strip().splitlines()
    assert "pyproject.toml" in line and "'max-rhatt'" in line and "Traceback" not in line


def _npz_with(path: Path, **arrays: np.ndarray) -> str:
    np.savez(path, **arrays)
    return str(path)


def _bad_inputs(tmp: Path) -> dict[str, str]:
    good = tmp / "good.npz"
    np.savez(good, x=np.zeros((2, 10)))
    truncated = tmp / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[:60])
    pickled = tmp / "pickled.npz"
    with zipfile.ZipFile(pickled, "w") as zf:  # what np.savez writes for an object array
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
        zf.writestr("x.npy", buf.getvalue())
    text = tmp / "notes.npz"
    text.write_text("these are not draws\n")
    return {
        "corrupt archive": str(truncated),
        "pickled object array": str(pickled),
        "ragged chains": _npz_with(tmp / "ragged.npz", x=np.zeros((2, 10)), y=np.zeros((2, 9))),
        "zero draws": _npz_with(tmp / "empty.npz", x=np.zeros((2, 0))),
        "text named .npz": str(text),
        "missing file": str(tmp / "nope.npz"),
    }


@pytest.mark.parametrize(
    "case",
    ["corrupt archive", "pickled object array", "ragged chains", "zero draws", "text named .npz", "missing file"],
)
def test_bad_input_is_one_line_exit_2(mcmc, tmp_path: Path, case: str) -> None:
    path = _bad_inputs(tmp_path)[case]
    r = mcmc("diagnose", path)
    assert r.code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert path in lines[0] and "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert r.out == ""


def test_constant_nan_inf_parameters_get_their_status(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 500, 4))
    x[:, :, 1] = 0.0
    x[2, 7, 2] = np.nan
    x[0, 0, 3] = -np.inf
    path = tmp_path / "odd.npz"
    write_chains(Chains({"x": x}), path)
    r = mcmc("diagnose", "-f", "json", str(path))
    assert r.code == 1 and "non-finite draws in x[2], x[3]" in r.stderr
    doc = strict_json(r.out)  # NaN and inf statistics come out as null, never as NaN
    assert [p["status"] for p in doc["parameters"]] == ["ok", "constant", "nan", "inf"]
    for fmt in ("table", "csv", "md"):
        assert mcmc("diagnose", "-f", fmt, str(path)).code == 1


def test_a_run_where_nothing_moved_fails(mcmc, tmp_path: Path) -> None:
    x = np.full((4, 500, 2), 1.5)
    path = tmp_path / "stuck.npz"
    write_chains(Chains({"x": x}), path)
    r = mcmc("diagnose", str(path))
    assert r.code == 1
    assert r.stderr.strip() == "FAIL: no parameter moved: the sampler is stuck"


def test_single_chain_reports_split_rhat(mcmc) -> None:
    doc = strict_json(mcmc("diagnose", "-f", "json", str(FIX / "cmdstan" / "bernoulli_chain_1.csv")).out)
    assert doc["chains"] == 1
    (p,) = doc["parameters"]
    assert p["rhat"] is not None and p["rhat_split"] is not None and abs(p["rhat_split"] - 1) < 0.05
    assert any("split" in n for n in doc["notes"])


def test_output_file_is_written_and_stdout_stays_empty(mcmc, tmp_path: Path, good_npz: str) -> None:
    out = tmp_path / "report.json"
    r = mcmc("diagnose", "-f", "json", "-o", str(out), good_npz)
    assert r.code == 0 and r.out == "" and r.stderr.startswith("PASS")
    assert strict_json(out.read_text())["passed"] is True
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind
    table = tmp_path / "report.txt"
    assert mcmc("diagnose", "-o", str(table), good_npz).code == 0
    text = table.read_text()
    assert "\x1b[" not in text and "b[1]" in text and "estimated from draws" in text


def test_stdin(mcmc, monkeypatch: pytest.MonkeyPatch, good_npz: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(good_npz).read_bytes())))
    r = mcmc("diagnose", "-f", "csv", "-")
    assert r.code == 0 and len(r.out.strip().splitlines()) == 4


def test_plot_writes_a_png(mcmc, tmp_path: Path) -> None:
    png = tmp_path / "diag.png"
    r = mcmc("diagnose", "-f", "json", "--plot", str(png), EIGHT_NPZ)
    assert r.code == 1
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert 1000 <= width <= 2000 and 800 <= height <= 3000  # 8 rows (capped) of three panels
    assert len(data) > 50_000
    r = mcmc("diagnose", "--plot", str(tmp_path / "diag.gif"), EIGHT_NPZ)
    assert r.code == 2 and ".png" in r.stderr and r.out == ""  # refused before any work


def test_help_speaks_to_statisticians(mcmc) -> None:
    r = mcmc("diagnose", "--help")
    assert r.code == 0
    text = re.sub(r"[\s\u2502]+", " ", r.out)  # undo rich's wrapping inside the option box
    for phrase in ("Vehtari et al. (2021)", "E-BFMI", "pyproject.toml", "[default: 1.01]", "[tool.mcmc.diagnose]"):
        assert phrase in text


def test_pickled_fixture_is_really_an_object_array(tmp_path: Path) -> None:
    # Guard for the bad-input case above: the file must need allow_pickle to load.
    path = _bad_inputs(tmp_path)["pickled object array"]
    with np.load(path, allow_pickle=False) as f, pytest.raises(ValueError, match="allow_pickle"):
        f["x"]


def test_quoted_glob_reports_the_files_it_read(mcmc, tmp_path: Path) -> None:
    for i in (1, 2):
        (tmp_path / f"mix_output.{i}.csv").write_bytes(Path(MIX[i - 1]).read_bytes())
    r = mcmc("diagnose", str(tmp_path / "mix_output.*.csv"), "--format", "json")
    assert r.code == 1
    assert strict_json(r.out)["source"] == [str(tmp_path / "mix_output.1.csv"), str(tmp_path / "mix_output.2.csv")]


def test_posteriordb_reference_draws_pass(mcmc, data_dir: Path) -> None:
    # posteriordb's eight-schools reference: 10 chains of 100 nearly independent draws.
    ref = str(data_dir / "compare" / "eight_schools-eight_schools_noncentered.json")
    r = mcmc("diagnose", "--format", "json", "--min-ess", "100", ref)
    assert r.code == 0, r.stderr
    doc = strict_json(r.out)
    names = [p["name"] for p in doc["parameters"]]
    assert names[:2] == ["theta[1]", "theta[2]"] and {"mu", "tau"} <= set(names)  # posteriordb's own names
    assert max(p["rhat"] for p in doc["parameters"]) < 1.01


def _walkers_apart(rng: np.random.Generator, walkers: int, draws: int, dim: int) -> np.ndarray:
    """AR(1) walkers around different centres, emcee's ``get_chain()`` layout ``(draw, walker, dim)``."""
    centre = rng.normal(0.0, 1.0, size=(walkers, dim))  # walkers that have not mixed
    x = np.empty((draws, walkers, dim))
    x[0] = centre + rng.standard_normal((walkers, dim))
    for t in range(1, draws):
        x[t] = centre + 0.8 * (x[t - 1] - centre) + 0.6 * rng.standard_normal((walkers, dim))
    return x


def test_draw_major_array_is_refused_then_fails_rhat_when_told_its_layout(mcmc, tmp_path: Path) -> None:
    from mcmc.diagnostics import stats

    x = _walkers_apart(np.random.default_rng(21), walkers=16, draws=600, dim=2)
    # The truth: these walkers did not converge (R-hat of the (walker, draw, dim) array).
    assert np.min(stats.rhat(np.ascontiguousarray(x.transpose(1, 0, 2)))) > 1.1
    path = tmp_path / "chain.npy"
    np.save(path, x)
    r = mcmc("diagnose", str(path))
    assert r.code == 2
    (line,) = r.stderr.strip().splitlines()
    assert str(path) in line and "600 chains of only 16 draws" in line and "--layout draw,chain" in line
    r = mcmc("diagnose", "--layout", "draw,chain", "-f", "json", str(path))
    assert r.code == 1 and "R-hat > 1.01 for x[0], x[1]" in r.stderr
    doc = strict_json(r.out)
    assert (doc["chains"], doc["draws"]) == (16, 600)
    # The same array saved without names in an .npz, and piped on stdin, is a bare array too.
    np.savez(tmp_path / "chain.npz", x)
    assert mcmc("diagnose", str(tmp_path / "chain.npz")).code == 2
    assert "R-hat > 1.01" in mcmc("diagnose", "--layout", "draw,chain", str(tmp_path / "chain.npz")).stderr


def test_layout_is_refused_for_a_file_that_names_its_dimensions(mcmc) -> None:
    r = mcmc("diagnose", "--layout", "draw,chain", EIGHT_NPZ)
    assert r.code == 2 and "applies to bare arrays" in r.stderr and EIGHT_NPZ in r.stderr


# --- files of PyMC, NumPyro, emcee and ArviZ (tests/data/diagnose): names and slicing ---------------

SRC = Path(__file__).parents[1] / "data" / "diagnose"


def test_pymc_file_names_schools_and_var_selects_one(mcmc) -> None:
    r = mcmc("diagnose", "-f", "json", "--var", "theta[Choate]", "--var", "M", str(SRC / "pymc_eight_schools.nc"))
    assert r.code in (0, 1), r.stderr
    doc = strict_json(r.out)
    assert [p["name"] for p in doc["parameters"]] == ["theta[Choate]", "M[x, p]", "M[x, q]", "M[y, p]", "M[y, q]"]


def test_zarr_store_and_emcee_backend_on_the_command_line(mcmc) -> None:
    r = mcmc("diagnose", "-f", "json", "--var", "theta", str(SRC / "numpyro_eight_schools.zarr"))
    doc = strict_json(r.out)
    assert r.code in (0, 1) and doc["chains"] == 2 and doc["draws"] == 100
    assert doc["parameters"][2]["name"] == "theta[Phillips Andover]"
    r = mcmc("diagnose", "-f", "json", "--names", "m,b,log_f", "--discard", "20", str(SRC / "emcee_backend.h5"))
    doc = strict_json(r.out)
    assert r.code in (0, 1) and doc["chains"] == 10 and doc["draws"] == 60
    assert [p["name"] for p in doc["parameters"]] == ["m", "b", "log_f"]


def test_emcee_npy_names_discard_thin(mcmc) -> None:
    npy = str(SRC / "emcee_chain.npy")
    args = ("--layout", "draw,chain", "--names", "m,b,log_f", "--discard", "20", "--thin", "2")
    r = mcmc("diagnose", "-f", "json", *args, npy)
    doc = strict_json(r.out)
    assert r.code in (0, 1) and doc["chains"] == 10 and doc["draws"] == 50
    x = np.load(npy)[20::2, :, 1]  # b, as emcee's get_chain(discard=20, thin=2)[:, :, 1]
    assert doc["parameters"][1]["name"] == "b" and doc["parameters"][1]["mean"] == pytest.approx(x.mean(), rel=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--layout", "draw,chain", "--names", "m,b"), "--names gives 2 names (m, b) but the last axis"),
        (("--layout", "draw,chain", "--discard", "120"), "--discard 120 leaves no draws: each chain has 120"),
        (("--layout", "draw,chain", "--thin", "0"), "--thin must be a whole number of at least 1"),
        (("--layout", "draw,chain", "--discard", "-1"), "--discard must be a non-negative whole number"),
    ],
)
def test_bad_names_discard_thin_are_one_line_exit_2(mcmc, args: tuple[str, ...], message: str) -> None:
    r = mcmc("diagnose", *args, str(SRC / "emcee_chain.npy"))
    assert r.code == 2 and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
