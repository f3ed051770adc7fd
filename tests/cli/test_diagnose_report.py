"""`mcmc diagnose` tables that fit and explain themselves (issue 10) and the classic diagnostics (issue 11)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains

DATA = Path(__file__).parents[1] / "data"
MIX = [str(DATA / "fixtures" / "cmdstan" / f"mix_output.{i}.csv") for i in (1, 2)]
PYMC = str(DATA / "diagnose" / "pymc_eight_schools.nc")
README = Path(__file__).parents[2] / "README.md"


def ar1(rng: np.random.Generator, shape: tuple[int, ...], phi: float) -> np.ndarray:
    """Stationary AR(1) along axis 1, unit variance."""
    x = np.empty(shape)
    x[:, 0] = rng.standard_normal((shape[0], *shape[2:]))
    noise = rng.standard_normal(shape) * math.sqrt(1 - phi**2)
    for t in range(1, shape[1]):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def save(path: Path, variables: dict, stats: dict | None = None) -> str:
    write_chains(Chains(variables, sample_stats=stats or {}), path)
    return str(path)


@pytest.fixture
def wide_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def mixed(tmp_path: Path) -> str:
    """ok ``a``; ``b`` with a small R-hat excess; ``c`` with a large one; ``d`` with low ESS only; and lp."""
    rng = np.random.default_rng(5)
    c, d = 4, 500
    a = rng.standard_normal((c, d))
    b = rng.standard_normal((c, d)) + np.array([0, 0, 0, 0.3])[:, None]
    cc = rng.standard_normal((c, d)) + np.array([0, 0, 0, 3.0])[:, None]
    dd = ar1(np.random.default_rng(0), (c, d), 0.7)  # R-hat 1.008, bulk ESS 369
    lp = rng.standard_normal((c, d))
    return save(tmp_path / "mixed.npz", {"a": a, "b": b, "c": cc, "d": dd}, {"lp": lp})


def doc(mcmc, *args: str) -> dict:
    r = mcmc("diagnose", "-f", "json", *args)
    assert r.code in (0, 1), r.stderr
    return json.loads(r.out)


# --------------------------------------------------------------------------- rounding


def test_estimates_keep_the_digits_their_mcse_supports(mcmc, tmp_path: Path, wide_env: None) -> None:
    rng = np.random.default_rng(2)
    # MCSEs near 790 and 0.063: the decade of 2 * MCSE differs from the MCSE's own (ArviZ's rule, not a variant)
    big = -92634.0 + 5e4 * rng.standard_normal((4, 1000))
    small = 4.318 + 4 * rng.standard_normal((4, 1000))
    path = save(tmp_path / "scales.npz", {"big": big, "small": small})
    params = {p["name"]: p for p in doc(mcmc, path)["parameters"]}
    out = mcmc("diagnose", path).out
    assert "e+" not in out and "e-" not in out  # no -9.26e+04 beside 4.318
    for name in ("big", "small"):
        p = params[name]
        decimals = -math.floor(math.log10(2 * p["mcse_mean"]))  # ArviZ's get_decimal_places_from_se
        expected = f"{round(p['mean'], decimals):.{max(decimals, 0)}f}"
        row = next(line.split() for line in out.splitlines() if line.startswith(name + " "))
        assert row[1] == expected, (name, row, p["mean"], p["mcse_mean"])
        assert math.floor(math.log10(2 * p["mcse_mean"])) != math.floor(math.log10(p["mcse_mean"]))
    figs = mcmc("diagnose", "--sig-figs", "6", path).out
    row = next(line.split() for line in figs.splitlines() if line.startswith("small "))
    assert len(row[1].replace("-", "").replace(".", "").lstrip("0")) == 6
    assert mcmc("diagnose", "--sig-figs", "0", path).code == 2


# --------------------------------------------------------------------------- width, legend


def test_an_80_column_terminal_gets_a_table_that_fits_and_names_what_it_left_out(
    mcmc, mixed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = mcmc("diagnose", mixed).out
    table_lines = out.split("left out to fit")[0].splitlines()
    assert max(len(line) for line in table_lines) <= 80
    note = re.search(r"left out to fit 80 columns: (.*) \(--wide shows all\)", out)
    assert note, out
    dropped = note.group(1).split(", ")
    assert "move" in dropped and "ACF(1)" in dropped
    header = next(line for line in table_lines if line.startswith("parameter"))
    assert all(h not in header for h in ("move", "ACF(1)"))
    wide = mcmc("diagnose", "--wide", mixed).out
    header = next(line for line in wide.splitlines() if line.startswith("parameter"))
    assert "move" in header and "SSIF" in header and "left out to fit" not in wide
    # the legend explains the less known columns that are shown
    assert "SSIF: sample size inflation factor" in wide and "move: fraction of transitions" in wide


# --------------------------------------------------------------------------- worst first, lp


def test_failing_parameters_come_first_worst_first(mcmc, mixed: str, wide_env: None) -> None:
    d = doc(mcmc, mixed)
    assert d["failing"] == ["c", "b", "d"]  # R-hat far off, R-hat a little off, then low ESS
    out = mcmc("diagnose", mixed).out
    first = out.split("\n\n")[0].splitlines()
    assert first[0] == "failing, worst first"
    assert [line.split()[0] for line in first[3:]] == ["c", "b", "d"]
    rest = out.split("\n\n")[1]
    assert re.search(r"^a\s", rest, re.M) and not re.search(r"^[bcd]\s", rest, re.M)  # shown once
    md = mcmc("diagnose", "-f", "md", mixed).out
    rows = [line.split("|")[1].strip(" `") for line in md.splitlines() if line.startswith("| `")]
    assert rows[:5] == ["c", "b", "d", "lp", "a"]


def test_the_log_density_is_its_own_row(mcmc, mixed: str, tmp_path: Path, wide_env: None) -> None:
    d = doc(mcmc, mixed)
    assert d["log_density"]["name"] == "lp" and d["log_density"]["status"] == "ok"
    assert "lp" not in [p["name"] for p in d["parameters"]]
    out = mcmc("diagnose", "--var", "a", mixed).out  # shown whatever --var selects, first
    assert [line.split()[0] for line in out.splitlines()[2:4]] == ["lp", "a"]
    rows = list(csv.reader(io.StringIO(mcmc("diagnose", "-f", "csv", mixed).out)))
    assert rows[1][0] == "lp"
    # from a PyMC file (sample_stats lp), and absent when the file has none
    assert doc(mcmc, PYMC)["log_density"]["name"] == "lp"
    plain = save(tmp_path / "plain.npz", {"a": np.random.default_rng(1).standard_normal((4, 100))})
    assert doc(mcmc, plain)["log_density"] is None


def test_a_log_density_that_has_not_mixed_warns_and_fails_only_when_strict(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    lp = rng.standard_normal((4, 1000)) + np.array([0, 0, 0, 2.0])[:, None]
    path = save(tmp_path / "lp.npz", {"a": rng.standard_normal((4, 1000))}, {"lp": lp})
    r = mcmc("diagnose", "-f", "json", path)
    assert r.code == 0 and "warnings: lp" in r.stderr
    check = {c["name"]: c for c in json.loads(r.out)["checks"]}["lp"]
    assert check["severity"] == "warning" and "R-hat" in check["message"] and check["advice"]
    strict = mcmc("diagnose", "--strict", path)
    assert strict.code == 1 and strict.stderr.startswith("FAIL (strict: warnings fail): the log density lp")


# --------------------------------------------------------------------------- advice


def test_every_failed_check_carries_advice_to_every_renderer(mcmc, tmp_path: Path, wide_env: None) -> None:
    from mcmc.diagnostics.report.verdict import advice
    from mcmc.diagnostics.report.vocabulary import UNKNOWN

    rng = np.random.default_rng(4)
    div = np.zeros((4, 1000), dtype=bool)
    div[1, 10] = True
    energy = ar1(rng, (4, 1000), 0.95)  # E-BFMI about 0.1
    path = save(
        tmp_path / "hmc.npz",
        {"x": rng.standard_normal((4, 1000)) + np.array([0, 0, 0, 2.0])[:, None]},
        {"diverging": div, "energy": energy},
    )
    d = doc(mcmc, path)
    failed = {c["name"]: c["advice"] for c in d["checks"] if not c["passed"]}
    assert set(failed) == {"rhat", "ess", "divergences", "ebfmi", "ssif"}
    assert failed == {k: advice(k, UNKNOWN) for k in failed}  # a file no program of ours wrote: plain words
    assert "non-centered" in failed["divergences"] and "target acceptance" in failed["divergences"]
    assert "warm-up" in failed["rhat"] and "draw more" in failed["ess"]
    assert all(c["advice"] == "" for c in d["checks"] if c["passed"])
    table = mcmc("diagnose", path).out
    md = mcmc("diagnose", "-f", "md", path).out
    for name in failed:
        mark = "warning" if name == "ssif" else "FAIL"
        assert f"{mark} {name}:" in table
        assert re.search(rf"- \*\*{mark[:4]}\*\* `{name}`.*\n  - what to do: ", md)
    assert table.count("what to do:") == len(failed)


# --------------------------------------------------------------------------- SSIF


def test_ssif_warning_only_where_ssif_alone_would_pass(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    # AR(2) with only a lag-2 coefficient: no lag-1 correlation, so SSIF sees independent draws, while
    # the bulk ESS is about a ninth of them; both clear 400, and differ by far more than 2x.
    e = rng.standard_normal((4, 2002))
    ma = np.zeros((4, 2002))
    for t in range(2, 2002):
        ma[:, t] = 0.8 * ma[:, t - 2] + e[:, t]
    ma = ma[:, 2:]
    drift_rng = np.random.default_rng(30)
    # A slow drift under white noise: small lag-1 correlation, so SSIF promises what bulk ESS does not find.
    drift = np.cumsum(drift_rng.standard_normal((4, 2000)), axis=1) * 0.05 + drift_rng.standard_normal((4, 2000))
    path = save(tmp_path / "ssif.npz", {"ma": ma, "drift": drift})
    d = doc(mcmc, path)
    p = {q["name"]: q for q in d["parameters"]}
    assert p["ma"]["ess_ssif"] > 2 * p["ma"]["ess_bulk"] >= 2 * 400  # the old rule warned here
    assert not p["ma"]["ssif_disagrees"]
    assert p["drift"]["ess_ssif"] >= 400 > p["drift"]["ess_bulk"] and p["drift"]["ssif_disagrees"]
    ssif = {c["name"]: c for c in d["checks"]}["ssif"]
    assert ssif["parameters"] == ["drift"] and ssif["severity"] == "warning"
    # once the ESS limit is below both, trusting SSIF changes nothing: no warning
    loose = doc(mcmc, "--min-ess", "5", path)
    assert "ssif" not in {c["name"] for c in loose["checks"]}


# --------------------------------------------------------------------------- many chains


def test_many_chains_are_shown_as_a_range_and_the_outliers(mcmc, tmp_path: Path, wide_env: None) -> None:
    rng = np.random.default_rng(6)
    acc = 0.9 + 0.01 * rng.standard_normal((70, 200))
    acc[17] = 0.1
    div = np.zeros((70, 200), dtype=bool)
    div[33, 5] = True
    path = save(
        tmp_path / "many.npz",
        {"x": rng.standard_normal((70, 200))},
        {"acceptance_rate": acc, "diverging": div, "energy": rng.standard_normal((70, 200))},
    )
    d = doc(mcmc, path)
    out = mcmc("diagnose", path).out
    panel = out[out.index("sampler:") :]
    assert len(panel.splitlines()) < 15
    acc_line = next(line for line in panel.splitlines() if "acceptance" in line)
    assert "over 70 chains" in acc_line and "chain 17 (0.1)" in acc_line
    per_chain = d["sampler"]["acceptance"]["per_chain"]
    assert f"{min(per_chain):.3g}" in acc_line and f"{max(per_chain):.3g}" in acc_line
    assert "in chain 33 (1)" in panel
    assert re.search(r"E-BFMI\s+\S+ to \S+ over 70 chains", panel)


# --------------------------------------------------------------------------- per-variable limits, strict


def test_per_variable_limits_from_pyproject(mcmc, mixed: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = doc(mcmc, mixed)
    assert before["failing"] == ["c", "b", "d"]
    (tmp_path / "pyproject.toml").write_text(
        "[tool.mcmc.diagnose.per-variable.d]\nmin-ess = 50\n"
        "[tool.mcmc.diagnose.per-variable.b]\nmax-rhat = 1.5\n"
        "[tool.mcmc.diagnose.per-variable.c]\nmax-rhat = 1.5\n"
        "[tool.mcmc.diagnose.per-variable.nothing]\nmin-ess = 1\n"
    )
    after = doc(mcmc, mixed)
    params = {p["name"]: p for p in after["parameters"]}
    assert after["failing"] == ["c"]  # b passes its looser R-hat, d its looser ESS
    assert params["d"]["min_ess"] == 50 and params["b"]["max_rhat"] == 1.5 and params["a"]["min_ess"] == 400
    assert after["thresholds"]["per_variable"]["d"] == {"max_rhat": None, "min_ess": 50}
    assert "per-variable limits for 'nothing' match no parameter" in after["notes"]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[tool.mcmc.diagnose.per-variable.sigma]\nmin-es = 100\n",
         "unknown key 'min-es' in [tool.mcmc.diagnose.per-variable.sigma]; known keys: max-rhat, min-ess"),
        ("[tool.mcmc.diagnose.per-variable.sigma]\nmin-ess = 'many'\n",
         "[tool.mcmc.diagnose.per-variable.sigma] min-ess: must be a number"),
        ("[tool.mcmc.diagnose]\nper-variable = 3\n", "[tool.mcmc.diagnose.per-variable] must be a table of tables"),
        ("[tool.mcmc.diagnose.per-variable]\nsigma = 3\n", "[tool.mcmc.diagnose.per-variable.sigma] must be a table"),
        ("[tool.mcmc.diagnose]\nstrict = 'yes'\n", "[tool.mcmc.diagnose] strict: must be true or false"),
        ("[tool.mcmc.diagnose.per-variable.sigma]\nmin-ess = -1\n", "per-variable 'sigma': min-ess must be"),
    ],
)  # fmt: skip
def test_config_errors_name_the_table(mcmc, mixed: str, tmp_path: Path, monkeypatch, toml: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(toml)
    r = mcmc("diagnose", mixed)
    assert r.code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_strict_fails_on_warnings(mcmc, tmp_path: Path, monkeypatch) -> None:
    rng = np.random.default_rng(9)
    path = save(tmp_path / "const.npz", {"a": rng.standard_normal((4, 1000)), "k": np.ones((4, 1000))})
    r = mcmc("diagnose", path)
    assert r.code == 0 and "warnings: constant" in r.stderr
    r = mcmc("diagnose", "--strict", "-f", "json", path)
    assert r.code == 1 and json.loads(r.out)["strict"] is True and "constant in every draw: k" in r.stderr
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.mcmc.diagnose]\nstrict = true\n")
    assert mcmc("diagnose", path).code == 1


# --------------------------------------------------------------------------- the README's example


def test_the_readme_headline_example_passes_as_shown(mcmc, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    lines = README.read_text().split("## What it does")[1].split("```sh\n")[1].splitlines()
    sample = next(line for line in lines if line.startswith("mcmc sample --target eight-schools"))
    diagnose = next(line for line in lines if line.startswith("mcmc diagnose run.npz"))
    r = mcmc(*sample.split()[1:])
    assert r.code == 0 and "warning" not in r.stderr, r.stderr
    r = mcmc(*diagnose.split("#")[0].split()[1:])
    assert r.code == 0 and r.stderr.startswith("PASS"), r.stderr


def test_sample_fails_on_a_divergence_as_diagnose_does(mcmc, tmp_path: Path) -> None:
    out = str(tmp_path / "r.npz")
    r = mcmc("sample", "-t", "eight-schools", "-s", "hmc", "--chains", "4", "--seed", "23", "-o", out)
    assert r.code == 1  # one verdict: the file is written, and diagnose fails it too
    assert "FAIL: 1 of 4000 (0.03%) transitions divergent" in r.stderr and "target acceptance" in r.stderr
    assert "non-centered" in r.stderr and f"mcmc diagnose {out}" in r.stderr
    d = mcmc("diagnose", out)
    assert d.code == 1 and "1 of 4000 (0.03%) transitions divergent" in d.stderr


# --------------------------------------------------------------------------- classic diagnostics


@pytest.fixture
def four(tmp_path: Path) -> str:
    rng = np.random.default_rng(12)
    x = ar1(rng, (4, 800, 3), 0.5)
    return save(tmp_path / "four.npz", {"x": x})


def test_classic_diagnostics_in_json_equal_the_library_call(mcmc, four: str) -> None:
    from mcmc.diagnostics.readers import read_chains
    from mcmc.diagnostics.stats.classic import classic_report

    d = doc(mcmc, "--diagnostics", "classic", "--superchains", "2", four)
    x = read_chains([four]).posterior["x"]
    expected = classic_report(x, ["x[0]", "x[1]", "x[2]"], 2, quantile_probs=(0.05, 0.5, 0.95)).to_dict()
    assert json.dumps(d["classic"], sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert d["classic"]["superchains"] == [0, 0, 1, 1]
    assert d["classic"]["parameters"][0]["rhat_nested"] is not None
    by_ids = doc(mcmc, "--superchains", "0,0,1,1", four)["classic"]  # ids, and --superchains implies classic
    assert by_ids == d["classic"]
    plain = doc(mcmc, "--diagnostics", "classic", four)["classic"]
    assert plain["superchains"] is None and plain["parameters"][0]["rhat_nested"] is None
    assert "classic" not in doc(mcmc, four)


def test_the_default_report_never_computes_classic_diagnostics(mcmc, four: str, monkeypatch) -> None:
    import mcmc.diagnostics.stats.classic as classic

    calls = []
    real = classic.classic_report

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(classic, "classic_report", counted)
    assert mcmc("diagnose", four).code == 0 and not calls
    assert mcmc("diagnose", "--diagnostics", "classic", four).code == 0 and len(calls) == 1  # the patch is seen


def test_classic_panel_in_table_csv_and_md(mcmc, four: str, wide_env: None) -> None:
    d = doc(mcmc, "--diagnostics", "classic", "--superchains", "2", four)["classic"]
    out = mcmc("diagnose", "--diagnostics", "classic", "--superchains", "2", four).out
    panel = out[out.index("classic diagnostics:") :]
    assert f"multivariate PSRF {d['gelman']['mpsrf']:.3f}" in panel and "superchains 0 0 1 1" in panel
    header = next(line for line in panel.splitlines() if line.startswith("parameter"))
    for column in ("PSRF", "upper CI", "nested R-hat", "Geweke |z|", "H-W pass", "R-L I", "ESS AR", "HDI 89%",
                   "ETI 89%", "tau emcee"):  # fmt: skip
        assert column in header
    row = next(line for line in panel.splitlines() if line.startswith("x[0] "))
    p0 = d["parameters"][0]
    assert f"{p0['psrf']:.3f}" in row and f"{p0['psrf_upper']:.3f}" in row
    z = max(abs(v) for v in p0["per_chain"]["geweke_z"])
    assert f"{z:.2g} (" in row
    assert "tau emcee: emcee's integrated autocorrelation time" in panel
    rows = list(csv.DictReader(io.StringIO(mcmc("diagnose", "-f", "csv", "--superchains", "2", four).out)))
    assert float(rows[0]["psrf"]) == pytest.approx(p0["psrf"], rel=1e-12)
    assert float(rows[0]["rhat_nested"]) == pytest.approx(p0["rhat_nested"], rel=1e-12)
    assert float(rows[0]["ess_q5%"]) == pytest.approx(p0["ess_quantile"]["5%"], rel=1e-12)
    assert float(rows[0]["hdi_lower"]) == pytest.approx(p0["hdi"][0], rel=1e-12)
    assert "psrf" not in mcmc("diagnose", "-f", "csv", four).out.splitlines()[0]
    md = mcmc("diagnose", "-f", "md", "--diagnostics", "classic", four).out
    assert "### Classic diagnostics" in md and "| `x[0]` | " + f"{p0['psrf']:.3f}" in md


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--superchains", "3"], "--superchains: 4 chains cannot form 3 superchains of equal size"),
        (["--superchains", "0,0,0,1"], "--superchains: at least two superchains, each with the same number"),
        (["--superchains", "0,1"], "--superchains: one superchain id per chain needed (4), got 2"),
        (["--superchains", "a,b"], "--superchains: whole numbers only"),
        (["--diagnostics", "coda"], "--diagnostics: must be one of default, classic"),
    ],
)
def test_bad_classic_options_exit_2_with_one_line(mcmc, four: str, args: list[str], message: str) -> None:
    r = mcmc("diagnose", *args, four)
    assert r.code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
