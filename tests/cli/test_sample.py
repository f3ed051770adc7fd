"""`mcmc sample` end to end: files, stdout, reproducibility, errors as one line and exit 2."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

FAST = ("--chains", "2", "--warmup", "40", "--draws", "30", "--no-check")  # too short to pass the checks


def _load(data: bytes | Path) -> tuple[dict[str, np.ndarray], dict]:
    with np.load(io.BytesIO(data) if isinstance(data, bytes) else data, allow_pickle=False) as npz:
        # the resume section (what the run needs to go on) is tested by tests/test_resume.py
        arrays = {k: npz[k] for k in npz.files if k != "__resume__" and not k.startswith("resume__")}
    attrs = json.loads(str(arrays.pop("__attrs__")))
    return arrays, attrs


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_sample_writes_a_chains_file_and_a_summary(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "c.npz"
    r = mcmc("sample", "-t", "eight-schools", "-s", "rwm", *FAST, "--seed", "3", "-o", str(out))
    assert r.code == 0, r.stderr
    arrays, attrs = _load(out)
    assert arrays["mu"].shape == (2, 30) and arrays["theta"].shape == (2, 30, 8)
    assert arrays["sample_stats__lp"].shape == (2, 30)
    assert (attrs["sampler"], attrs["target"], attrs["seed"]) == ("rwm", "eight-schools", 3)
    assert "R-hat max" in r.stderr and "bulk ESS min" in r.stderr and "acceptance" in r.stderr
    assert r.stdout == b""


def test_summary_reports_the_largest_rhat_and_the_smallest_ess(mcmc, tmp_path: Path) -> None:
    """Short rwm chains on eight schools: every parameter unmixed, by clearly different amounts."""
    import re

    from mcmc.diagnostics import stats
    from mcmc.diagnostics.readers import read_chains
    from mcmc.diagnostics.report.selection import flatten, select

    out = tmp_path / "c.npz"
    r = mcmc("sample", "-t", "eight-schools", "-s", "rwm", *FAST, "--seed", "3", "-o", str(out))
    assert r.code == 0, r.stderr
    chains = read_chains([str(out)])
    selection = select(chains)
    x = flatten(chains, selection)
    rhat, ess = stats.rhat(x), stats.ess_bulk(x)
    assert rhat.max() - rhat.min() > 0.5 and ess.max() - ess.min() > 2  # a min for a max would show
    shown = re.search(r"R-hat max (\S+) \((\S+)\)\s+bulk ESS min (\S+) \((\S+)\)", r.stderr)
    assert shown is not None, r.stderr
    assert shown[1] == f"{rhat.max():.3f}" and shown[2] == selection.names[int(rhat.argmax())]
    assert shown[3] == f"{ess.min():.0f}" and shown[4] == selection.names[int(ess.argmin())]


@pytest.mark.parametrize(
    "sampler", ["rwm", "mh-independence", "two-stage", "slice", "elliptical-slice", "hmc", "rejection", "isir"]
)
def test_every_sampler_runs_from_the_command_line(mcmc, sampler) -> None:
    r = mcmc("sample", "-t", "beta-bernoulli", "-s", sampler, *FAST, "--seed", "1", "-o", "-")
    assert r.code == 0, r.stderr
    arrays, attrs = _load(r.stdout)
    assert arrays["theta"].shape == (2, 30) and ((arrays["theta"] > 0) & (arrays["theta"] < 1)).all()
    assert attrs["sampler"] == sampler


@pytest.mark.parametrize("sampler", ["gibbs", "swendsen-wang"])
def test_lattice_samplers_on_the_ising_model(mcmc, sampler) -> None:
    r = mcmc("sample", "-t", "ising", "-s", sampler, "-T", "size=8", "-T", "beta=0.3", *FAST, "--seed", "1", "-o", "-")
    assert r.code == 0, r.stderr
    arrays, attrs = _load(r.stdout)
    assert {"m", "abs_m", "energy"} <= set(arrays) and arrays["m"].shape == (2, 30)
    assert (np.abs(arrays["m"]) <= 1).all() and np.allclose(np.abs(arrays["m"]), arrays["abs_m"])
    assert attrs["sampler"] == sampler and attrs["target_options"] == {"size": 8, "beta": 0.3}


def test_stdout_npz_and_same_seed_same_bytes(mcmc) -> None:
    args = ("sample", "-t", "banana", "-s", "slice", *FAST, "--seed", "9", "-o", "-", "--quiet")
    first, second = mcmc(*args), mcmc(*args)
    assert first.code == second.code == 0
    assert first.stderr == ""  # --quiet
    assert first.stdout == second.stdout  # the whole file, byte for byte
    arrays, attrs = _load(first.stdout)
    assert arrays["x"].shape == (2, 30, 2) and attrs["seed"] == 9
    assert not {"wall_time_s", "warmup_time_s", "sampling_time_s"} & set(attrs)  # timings would break byte identity
    other, _ = _load(mcmc(*args[:-5], "--seed", "10", "-o", "-").stdout)
    assert other["x"].tobytes() != arrays["x"].tobytes()


def test_first_chain_splits_a_run_exactly(mcmc) -> None:
    common = ("sample", "-t", "eight-schools", "-s", "hmc", "--warmup", "40", "--draws", "30", "--seed", "5", "-o", "-")
    whole, _ = _load(mcmc(*common, "--chains", "4").stdout)
    low, _ = _load(mcmc(*common, "--chains", "2").stdout)
    high, attrs = _load(mcmc(*common, "--chains", "2", "--first-chain", "2").stdout)
    assert attrs["chain_ids"] == [2, 3]
    for key in whole:
        assert np.concatenate([low[key], high[key]]).tobytes() == whole[key].tobytes(), key


def test_random_seed_is_recorded_and_reported(mcmc) -> None:
    r = mcmc("sample", "-s", "rwm", "--dim", "2", *FAST, "-o", "-")
    assert r.code == 0
    _, attrs = _load(r.stdout)
    assert isinstance(attrs["seed"], int)
    assert f"seed {attrs['seed']} (random" in r.stderr


def test_netcdf_output(mcmc, tmp_path: Path) -> None:
    import xarray as xr

    out = tmp_path / "c.nc"
    r = mcmc("sample", "-t", "funnel", "--dim", "3", "-s", "hmc", *FAST, "--seed", "1", "-o", str(out), "-q")
    assert r.code == 0, r.stderr
    with xr.open_dataset(out, group="posterior", engine="h5netcdf") as ds:
        assert ds["v"].shape == (2, 30) and ds["x"].shape == (2, 30, 2)
    with xr.open_dataset(out, group="sample_stats", engine="h5netcdf") as ds:
        assert "diverging" in ds and "lp" in ds


def test_data_files_and_user_target(mcmc, data_dir: Path) -> None:
    r = mcmc(
        "sample",
        "-t",
        "logistic",
        "--data",
        str(data_dir / "sample" / "logistic.csv"),
        "-s",
        "two-stage",
        *FAST,
        "--seed",
        "2",
        "-o",
        "-",
    )
    assert r.code == 0, r.stderr
    arrays, attrs = _load(r.stdout)
    assert arrays["beta"].shape == (2, 30, 3) and attrs["target_options"]["data"].endswith("logistic.csv")
    assert "likelihood skipped" in r.stderr

    r = mcmc("sample", "-t", str(data_dir / "sample" / "correlated.py"), "-s", "hmc", *FAST, "--seed", "2", "-o", "-")
    assert r.code == 0, r.stderr
    arrays, _ = _load(r.stdout)
    assert arrays["a"].shape == arrays["b"].shape == (2, 30)


def test_target_options(mcmc) -> None:
    r = mcmc(
        "sample",
        "-t",
        "gamma",
        "-T",
        "shape=0.5",
        "-T",
        "rate=2",
        "-s",
        "mh-lognormal",
        *FAST,
        "--seed",
        "1",
        "-o",
        "-",
    )
    assert r.code == 0, r.stderr
    _, attrs = _load(r.stdout)
    assert attrs["target_options"] == {"dim": 1, "shape": 0.5, "rate": 2.0}


def test_init_option(mcmc) -> None:
    r = mcmc(
        "sample",
        "-s",
        "rwm",
        "--dim",
        "2",
        "--chains",
        "1",
        "--warmup",
        "0",
        "--draws",
        "1",
        "--scale",
        "1e-12",
        "--init",
        "5,-5",
        "--seed",
        "1",
        "--no-check",
        "-o",
        "-",
    )
    assert r.code == 0, r.stderr
    arrays, _ = _load(r.stdout)
    np.testing.assert_allclose(arrays["x"][0, 0], [5.0, -5.0], atol=1e-9)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-t", "missing_model.py"), "missing_model.py: no such file"),
        (("-t", "no-such-target"), "unknown target 'no-such-target'"),
        (("-s", "rwm", "--step-size", "0.1"), "--step-size does not apply to --sampler rwm"),
        (("-t", "banana", "--rho", "0.5"), "--rho do not apply to target 'banana'"),
        (("-o", "out.csv"), "unknown output format '.csv'"),
        (("-o", "no/such/dir/out.npz"), "does not exist"),
        (("--dim", "3", "--init", "1,2"), "--init has 2 values"),
        (("--init", "a,b"), "--init must be comma-separated numbers"),
        (("-t", "gaussian", "-s", "two-stage"), "prior x likelihood"),
        (("-t", "gaussian", "-s", "mh-lognormal"), "needs every coordinate positive"),
        (("-t", "gaussian", "--rho", "1.5"), "--rho must lie in"),
        (("-t", "logistic", "--data", "absent.csv"), "absent.csv: no such file"),
        (("-t", "banana", "-T", "shape=2"), "shape do not apply to target 'banana'"),
        (("-t", "banana", "-T", "b"), "--target-option expects KEY=VALUE"),
        (("-t", "banana", "-T", "b=abc"), "b of target 'banana' must be a number, got 'abc'"),
        (("-t", "ising", "-s", "gibbs", "-T", "size=big"), "size of target 'ising' must be a number"),
        (("-t", "gaussian", "-T", "dim=3"), "use --dim instead"),
        (("-s", "rwm", "--particles", "8"), "--particles does not apply to --sampler rwm"),
        (("-s", "hmc", "--max-tree-depth", "5"), "--max-tree-depth does not apply to --sampler hmc"),
        (("-s", "nuts", "--max-tree-depth", "0"), "--max-tree-depth must be a whole number in [1, 30], got 0"),
        (("-t", "ising", "-s", "hmc"), "is a spin lattice: sample it with gibbs or swendsen-wang, not hmc"),
        (("-t", "banana", "-s", "gibbs"), "sampler 'gibbs' needs full conditionals"),
        (("-t", "gaussian", "-s", "swendsen-wang"), "sampler 'swendsen-wang' needs an Ising lattice (ising), a Potts "
                                                    "lattice (potts) or graph.csv"),
        (("-t", "ising", "-s", "gibbs", "-T", "size=2"), "size"),
    ],
)
def test_errors_are_one_line_and_exit_2(mcmc, tmp_path: Path, monkeypatch, args, message) -> None:
    monkeypatch.chdir(tmp_path)
    r = mcmc("sample", *args, *FAST, "--seed", "1")
    assert r.code == 2
    line = _one_error_line(r.stderr)
    assert line.startswith("mcmc: error:") and message in line, line
    assert not list(tmp_path.iterdir())  # nothing written


def test_max_tree_depth_reaches_nuts_and_diagnose(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "d.npz"
    r = mcmc("sample", "-t", "eight-schools", "-s", "nuts", "--max-tree-depth", "2", *FAST, "--seed", "1", "-o", str(out))
    assert r.code == 0, r.stderr
    arrays, attrs = _load(out.read_bytes())
    assert attrs["max_treedepth"] == 2 and attrs["nuts"]["max_tree_depth"] == 2
    assert arrays["sample_stats__tree_depth"].max() == 2 and arrays["sample_stats__reached_max_treedepth"].any()


def test_user_target_errors_from_the_command_line(mcmc, tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("dim = 3\ndef log_density(x):\n    return x\n")
    r = mcmc("sample", "-t", str(bad), *FAST, "-o", str(tmp_path / "o.npz"))
    assert r.code == 2
    assert "log_density returned shape (2, 3)" in _one_error_line(r.stderr)

    nograd = tmp_path / "nograd.py"
    nograd.write_text("dim = 2\ndef log_density(x):\n    return -(x ** 2).sum(axis=1)\n")
    r = mcmc("sample", "-t", str(nograd), "-s", "hmc", *FAST, "-o", str(tmp_path / "o.npz"))
    assert r.code == 2
    line = _one_error_line(r.stderr)
    assert "hmc needs grad_log_density" in line and "slice" in line
    r = mcmc("sample", "-t", str(nograd), "-s", "slice", *FAST, "--seed", "1", "-o", str(tmp_path / "o.npz"), "-q")
    assert r.code == 0, r.stderr


def test_bad_option_values_exit_2(mcmc) -> None:
    assert mcmc("sample", "-s", "nope").code == 2
    assert mcmc("sample", "--chains", "0").code == 2
    assert mcmc("sample", "--draws", "0").code == 2


def test_sample_output_is_read_by_diagnose(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "c.npz"
    assert (
        mcmc(
            "sample",
            "-t",
            "gaussian",
            "--dim",
            "3",
            "-s",
            "slice",
            "--chains",
            "4",
            "--warmup",
            "100",
            "--draws",
            "200",
            "--seed",
            "4",
            "-o",
            str(out),
            "-q",
        ).code
        == 0
    )
    r = mcmc("diagnose", str(out), "--format", "json")
    assert r.code in (0, 1), r.stderr  # a verdict, not an input error


def test_progress_bar_path(mcmc, monkeypatch) -> None:
    # stderr is not a terminal under test; force the progress-bar branch to run.
    import mcmc.cli.console as console

    monkeypatch.setattr(console, "progress_enabled", lambda: True)
    r = mcmc("sample", "-s", "rwm", "--dim", "2", *FAST, "--seed", "1", "-o", "-")
    assert r.code == 0, r.stderr
    assert _load(r.stdout)[0]["x"].shape == (2, 30, 2)


def test_user_function_failing_mid_run_is_one_line_exit_2(mcmc, tmp_path: Path) -> None:
    model = tmp_path / "model.py"
    model.write_text(
        "calls = [0]\ndim = 2\n"
        "def log_density(x):\n"
        "    calls[0] += 1\n"
        "    if calls[0] > 30:\n"
        "        raise ValueError('bad row in data.csv')\n"
        "    return -0.5 * (x ** 2).sum(axis=1)\n"
    )
    out = tmp_path / "o.npz"
    r = mcmc("sample", "-t", str(model), "-s", "rwm", *FAST, "--seed", "1", "-o", str(out))
    assert r.code == 2
    line = _one_error_line(r.stderr)
    # 12 calls before the first iteration (the probe, the batch check's 9: docs/scale-out.md, the starting
    # points, the sampler's start): call 31 is iteration 19
    assert line == f"mcmc: error: {model}: log_density raised ValueError: bad row in data.csv (iteration 19)"
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("-t", "gaussian", "--dim", "1000000000"), "--dim: dimension 1000000000 needs"),
        (("-t", "gaussian", "--chains", "100000", "--dim", "1000"), "100000 chains x 1000 draws x 1000 coordinates"),
        (("-t", "ising", "-s", "gibbs", "-T", "size=100000"), "-T size: a 100000 x 100000 lattice needs"),
        (("-t", "gaussian", "--draws", "1000000000000"), "4 chains x 1000000000000 draws x 10 coordinates needs"),
    ],
)
def test_requests_beyond_memory_are_one_line_exit_2(
    mcmc, tmp_path: Path, monkeypatch, machine_16gib, args, needle
) -> None:
    monkeypatch.chdir(tmp_path)
    r = mcmc("sample", *args, "--seed", "1")
    assert r.code == 2
    line = _one_error_line(r.stderr)
    assert line.startswith("mcmc: error:") and needle in line and "more than this machine can hold" in line, line
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("options", "params"),
    [
        (("--step-size", "0.2", "--path-length", "2"), ("-P", "step-size=0.2", "-P", "hmc:path_length=2")),
        (("--max-tree-depth", "6", "--target-accept", "0.9"), ("-P", "max-tree-depth=6", "-P", "target-accept=0.9")),
        (("--particles", "8",), ("-P", "particles=8")),
        (("--proposal", "rw", "--scale", "1"), ("-P", "proposal=rw", "-P", "two-stage:scale=1")),
    ],
    ids=["hmc", "nuts", "isir", "two-stage"],
)
def test_param_sets_a_setting_as_its_option_does(mcmc, options, params) -> None:
    sampler = {"--step-size": "hmc", "--max-tree-depth": "nuts", "--particles": "isir", "--proposal": "two-stage"}
    args = ("-t", "beta-bernoulli", "-s", sampler[options[0]], *FAST, "--seed", "4", "-o", "-")
    by_option, by_param = mcmc("sample", *args, *options), mcmc("sample", *args, *params)
    assert by_option.code == 0 and by_param.code == 0, by_option.stderr + by_param.stderr
    assert by_param.stdout == by_option.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-s", "rwm", "-P", "step-size=0.1"), "--param 'step-size=0.1': rwm has no option 'step-size' (its options: "
                                               "scale, target-accept)"),
        (("-s", "rwm", "-P", "hmc:scale=1"), "--param 'hmc:scale=1': 'hmc' is not --sampler rwm"),
        (("-s", "rwm", "-P", "scale=-1"), "--param 'scale=-1': must be a number > 0, got -1"),
        (("-s", "rwm", "-P", "scale=wide"), "--param 'scale=wide': scale must be a number, got 'wide'"),
        (("-s", "rwm", "-P", "scale"), "--param expects KEY=VALUE or SAMPLER:KEY=VALUE, got 'scale'"),
        (("-s", "rwm", "--scale", "1", "-P", "scale=2"), "scale is given twice"),
        (("-s", "two-stage", "-P", "proposal=x"), "must be one of rw, lognormal, got 'x'"),
        (("-s", "gibbs", "-P", "scale=1"), "gibbs has no option 'scale' (its options: scan)"),
        (("-s", "gibbs", "-P", "scan=zigzag"), "must be one of systematic, random, got 'zigzag'"),
        (("-s", "mh", "-P", "proposal-matrix=Q.txt"), "must be a file name ending in .csv, got 'Q.txt'"),
        (("-s", "hmc", "-P", "n-steps=0"), "--param 'n-steps=0': must be a whole number in [1, 1024], got 0"),
        (("-s", "hmc", "-P", "jitter=1"), "--param 'jitter=1': must be a number in [0, 1), got 1"),
    ],
)
def test_bad_params_are_one_line_and_exit_2(mcmc, tmp_path: Path, monkeypatch, args, message) -> None:
    monkeypatch.chdir(tmp_path)
    r = mcmc("sample", *args, *FAST, "--seed", "1")
    assert r.code == 2
    assert message in _one_error_line(r.stderr)
    assert not list(tmp_path.iterdir())


def test_every_registered_sampler_is_a_choice_and_listed_in_the_help(mcmc, monkeypatch) -> None:
    from mcmc.core.samplers.registry import DECLARATIONS

    monkeypatch.setenv("COLUMNS", "1000")
    text = " ".join(mcmc("sample", "-h").out.split())
    for d in DECLARATIONS:
        assert f"{d.name} ({d.summary})" in text
    for name in ("nuts", "markov", "likelihood-weighting"):  # once left out of the hand-written list
        r = mcmc("sample", "-s", name, "-t", "no-such-target", "--seed", "1")
        assert "is not one of" not in r.stderr


DENSITY_ONLY = "import numpy as np\ndim = 2\n\ndef log_density(x):\n    return -0.5 * np.sum(x**2, axis=1)\n"
WITH_GRADIENT = DENSITY_ONLY + "\ndef grad_log_density(x):\n    return -x\n"


@pytest.mark.parametrize(
    ("target", "expected"),
    [("ising", "swendsen-wang"), ("potts", "swendsen-wang"), ("bnn", "hmc-gibbs"), ("eight-schools", "hmc"),
     ("density_only.py", "slice"), ("with_gradient.py", "hmc")],
)  # fmt: skip
def test_the_default_sampler_works_for_the_target(mcmc, tmp_path: Path, target: str, expected: str) -> None:
    """Issue 28.2: no --sampler is the target's own, else hmc with a gradient, else slice: never exit 2."""
    (tmp_path / "density_only.py").write_text(DENSITY_ONLY)
    (tmp_path / "with_gradient.py").write_text(WITH_GRADIENT)
    target = str(tmp_path / target) if target.endswith(".py") else target
    out = tmp_path / "c.npz"
    extra = ("-T", "size=6") if target in ("ising", "potts") else ("-T", "hidden=2") if target == "bnn" else ()
    r = mcmc("sample", "-t", target, *extra, *FAST, "--seed", "1", "-o", str(out))
    assert r.code == 0, r.stderr
    assert _load(out)[1]["sampler"] == expected


def test_every_built_in_target_runs_under_its_default_sampler() -> None:
    """A built-in with no sampler of its own has a gradient, so the default chosen from its name is right."""
    from mcmc.core.targets import TARGETS, default_sampler, get_target

    for name in TARGETS:
        options = {"size": 4} if name in ("ising", "potts") else {}
        assert default_sampler(name) == default_sampler(name, get_target(name, **options)), name


def test_tuning_a_target_files_default_sampler(mcmc, tmp_path: Path) -> None:
    """Tuning without --sampler applies to the file's default, and is refused when that sampler lacks it."""
    (tmp_path / "d.py").write_text(DENSITY_ONLY)
    out = str(tmp_path / "c.npz")
    r = mcmc("sample", "-t", str(tmp_path / "d.py"), "--width", "2", *FAST, "--seed", "1", "-o", out)
    assert r.code == 0, r.stderr
    r = mcmc("sample", "-t", str(tmp_path / "d.py"), "--target-accept", "0.9", *FAST, "--seed", "1", "-o", out)
    assert r.code == 2
    assert "--target-accept does not apply to --sampler slice, the default for" in _one_error_line(r.stderr)


def test_sample_help_says_how_the_default_sampler_is_chosen(mcmc, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    words = " ".join(mcmc("sample", "-h").out.replace("│", " ").split())
    assert "the target's own (hmc-gibbs for bnn, swendsen-wang for ising and potts" in words
    assert "else hmc when the target has a gradient (grad_log_density), else slice" in words


@pytest.mark.parametrize(
    ("sampler", "warmup"), [("exact", 0), ("inverse-cdf", 0), ("rwm", 1000), ("importance", 1000)],
)
def test_exact_independent_samplers_run_no_warmup_unless_asked(mcmc, tmp_path: Path, sampler, warmup) -> None:
    """Warm-up is discarded work for draws exact from the first (importance fits its proposal in it); --warmup
    still sets it."""
    base = ("sample", "-t", "gaussian", "--dim", "1", "-s", sampler, "--draws", "50", "--seed", "1", "--no-check",
            "-f", "json")  # fmt: skip
    r = mcmc(*base, "-o", str(tmp_path / "a.npz"))
    assert r.code == 0, r.stderr
    assert json.loads(r.out)["attrs"]["warmup"] == warmup
    r = mcmc(*base, "--warmup", "7", "-o", str(tmp_path / "b.npz"))
    assert r.code == 0 and json.loads(r.out)["attrs"]["warmup"] == 7, r.stderr
