"""Long runs of ``mcmc sample``: stop and go on with the same bytes, checkpoints, signals, run until converged.

Chain ``i``'s numbers depend only on the seed and ``i``, and the chains file
carries each chain's state, tuned parameters and position in its stream
(:mod:`mcmc.core.resume`), so a run cut in two and gone on from its file
writes, byte for byte, the file of the run that never stopped: for every
case of ``tests/data/same_bytes/cases.py`` (every sampler; Potts, BNN and a
Bayesian network among the targets). Real processes are stopped by SIGTERM
and SIGINT, and killed with SIGKILL at random moments (one process at a time;
``MCMC_TEST_KILLS`` sets how many kills): the last checkpoint is whole and goes
on to the same bytes.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains

HERE = Path(__file__).parent / "data" / "same_bytes"
_spec = importlib.util.spec_from_file_location("same_bytes_cases", HERE / "cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

LECTURE = str(Path(__file__).parent / "data" / "markov" / "lecture.csv")
ASIA = [str(Path(__file__).parent / "data" / "networks" / "asia.bif"), "--observe", "xray=yes,dysp=yes"]
#: Every same-bytes case as a command line of ``mcmc sample`` (the Markov chain's library case too), and blocked
#: Gibbs on a network whose block has a boundary that moves (its cliques recomputed every sweep) and single-site
#: Gibbs (the same-bytes case on earthquake is one exact block).
CASES = {**cases.SAMPLE_CASES, **cases.NETWORK_CASES,
         "markov-lecture": ["-t", LECTURE, "-T", "start=Rainy", "-s", "markov"],
         "gibbs-asia-block": ["-t", *ASIA, "-s", "gibbs", "-P", "gibbs:blocks=tub+lung+either"],
         "gibbs-asia-single": ["-t", *ASIA, "-s", "gibbs", "-P", "gibbs:blocks=single"]}  # fmt: skip


def _short(draws: int) -> list[str]:
    argv = list(cases.SHORT)
    argv[argv.index("--draws") + 1] = str(draws)
    return argv


def _run(*argv: str) -> int:
    from mcmc.cli.app import main

    return main(list(argv))


@pytest.mark.parametrize("name", list(CASES))
def test_a_run_that_stops_and_goes_on_writes_the_bytes_of_one_that_never_stopped(name, tmp_path, capsys):
    whole, part = tmp_path / "whole.npz", tmp_path / "part.npz"
    assert _run("sample", *CASES[name], *_short(30), "-o", str(whole)) == 0
    assert _run("sample", *CASES[name], *_short(13), "-o", str(part)) == 0
    # the settings are the file's; the output is the file itself, extended in place
    assert _run("sample", "--resume", str(part), "--draws", "30", "-q", "--no-check") == 0
    assert part.read_bytes() == whole.read_bytes()


def test_thinned_runs_and_runs_cut_in_three_go_on_to_the_same_bytes(tmp_path, capsys):
    argv = ["-t", "gaussian", "--dim", "3", "-s", "nuts", "--thin", "3", "--keep-warmup"]
    whole, a, b = tmp_path / "whole.npz", tmp_path / "a.npz", tmp_path / "b.npz"
    assert _run("sample", *argv, *_short(31), "-o", str(whole)) == 0
    assert _run("sample", *argv, *_short(7), "-o", str(a)) == 0  # 7 is not a multiple of the thinning
    assert _run("sample", "--resume", str(a), "--draws", "20", "-o", str(b), "-q", "--no-check") == 0
    assert _run("sample", "--resume", str(b), "--draws", "31", "-q", "--no-check", *argv, "--seed", "7") == 0
    assert b.read_bytes() == whole.read_bytes()
    with np.load(whole) as f:
        assert f["x"].shape == (3, 11, 3) and f["warmup_posterior__x"].shape == (3, 40, 3)


@pytest.mark.parametrize("sampler", ["hmc", "nuts"])
def test_a_jax_target_goes_on_to_the_same_bytes_across_its_compiled_batches(sampler, tmp_path, capsys):
    # HMC and NUTS on a JAX target run BATCH iterations per compiled call; the run goes on mid-batch
    pytest.importorskip("jax")
    from mcmc.core.samplers.driver import BATCH

    argv = ["-t", str(Path(__file__).parent / "data" / "sample" / "gauss_jax.py"), "-s", sampler, "--chains", "2",
            "--warmup", "60", "--seed", "3", "--keep-warmup", "-q", "--no-check"]  # fmt: skip
    whole, part = tmp_path / "whole.npz", tmp_path / "part.npz"
    assert _run("sample", *argv, "--draws", str(BATCH + 20), "-o", str(whole)) == 0
    assert _run("sample", *argv, "--draws", "13", "-o", str(part)) == 0
    assert _run("sample", "--resume", str(part), "--draws", str(BATCH + 20), "-q", "--no-check") == 0
    assert part.read_bytes() == whole.read_bytes()
    with np.load(whole) as f:
        assert f["warmup_posterior__a"].shape == (2, 60) and f["warmup_sample_stats__lp"].shape == (2, 60)


def test_blocks_of_chains_join_into_the_resume_section_of_the_whole_run():
    # Dask runs blocks of chains with the one problem of the run and joins them (driver.concatenate)
    from mcmc.core.chains import npz_bytes
    from mcmc.core.samplers import get_sampler
    from mcmc.core.samplers.driver import concatenate, run
    from mcmc.core.targets import get_target

    hmc, target, problem = get_sampler("hmc"), get_target("eight-schools"), {"settings": {"seed": 5}}
    common = dict(warmup=40, draws=20, seed=5, problem=problem)
    whole = run(hmc, target, chains=4, **common).chains
    blocks = [run(hmc, target, chain_ids=ids, **common).chains for ids in ([0], [1, 2], [3])]
    assert npz_bytes(concatenate(blocks)) == npz_bytes(whole)


@pytest.mark.parametrize("settings", [["blocks=tub+lung+either"], ["blocks=single"],
                                      ["blocks=tub+lung+either", "scan=random"]])  # fmt: skip
def test_a_network_run_stopped_at_a_checkpoint_goes_on_to_the_bytes_of_one_run(settings, tmp_path, capsys,
                                                                                monkeypatch):  # fmt: skip
    # Warm-up and draws both span several of the network driver's blocks of sweeps (a checkpoint is polled
    # between them), thinned, warm-up kept; the run is stopped at the checkpoint after the second block of draws.
    from contextlib import contextmanager

    import mcmc.cli.sample
    from mcmc.core.networks.driver import POLL_SWEEPS

    argv = ["-t", *ASIA, "-s", "gibbs", *(f"-Pgibbs:{s}" for s in settings), "--chains", "2", "--seed", "4",
            "--warmup", str(POLL_SWEEPS + 50), "--draws", str(3 * POLL_SWEEPS), "--thin", "3", "--keep-warmup",
            "-q", "--no-check"]  # fmt: skip
    polls = []

    @contextmanager
    def stop_at_the_fourth_poll():
        yield lambda: polls.append(1) or len(polls) >= 4  # two polls in warm-up, then after two blocks of draws

    monkeypatch.setattr(mcmc.cli.sample, "signals_held", stop_at_the_fourth_poll)
    out, ckpt = tmp_path / "run.npz", tmp_path / "run.npz.checkpoint.npz"
    assert _run("sample", *argv, "-o", str(out)) == 130
    assert not out.exists()
    with np.load(ckpt) as f:
        block = 3 * (POLL_SWEEPS // 3)
        assert json.loads(f["__resume__"][()])["done"] == 2 * block
        assert f["lung"].shape == (2, 2 * block // 3) and f["warmup_posterior__lung"].shape == (2, POLL_SWEEPS + 50)
    monkeypatch.undo()
    assert _run("sample", "--resume", str(ckpt), "-q", "--no-check") == 0
    assert not ckpt.exists()
    assert _run("sample", *argv, "-o", str(tmp_path / "whole.npz")) == 0
    assert out.read_bytes() == (tmp_path / "whole.npz").read_bytes()


def test_checkpoint_every_0_writes_only_the_last_checkpoint_on_a_signal(tmp_path, capsys, monkeypatch):
    from contextlib import contextmanager

    import mcmc.cli.commands.checkpoints
    import mcmc.cli.sample

    polls, writes = [], []

    @contextmanager
    def signal_at_the_25th_poll():
        yield lambda: polls.append(1) or len(polls) >= 25  # 20 polls of warm-up (nothing to save), then 5 draws

    monkeypatch.setattr(mcmc.cli.sample, "signals_held", signal_at_the_25th_poll)
    real = mcmc.cli.commands.checkpoints.write_chains
    monkeypatch.setattr(mcmc.cli.commands.checkpoints, "write_chains",
                        lambda chains, path: writes.append(chains.n_draws) or real(chains, path))  # fmt: skip
    out = tmp_path / "run.npz"
    argv = ["-t", "gaussian", "-s", "rwm", "--chains", "2", "--warmup", "20", "--draws", "50", "--seed", "1", "-q"]
    assert _run("sample", *argv, "--checkpoint-every", "0", "-o", str(out)) == 130
    assert writes == [5] and not out.exists()
    monkeypatch.undo()
    assert _run("sample", "--resume", str(tmp_path / "run.npz.checkpoint.npz"), "-q", "--no-check") == 0
    assert _run("sample", *argv, "--no-check", "-o", str(tmp_path / "whole.npz")) == 0
    assert out.read_bytes() == (tmp_path / "whole.npz").read_bytes()


# ----------------------------------------------------------------- what --resume refuses


def _base(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "base.npz"
    assert _run("sample", "-t", "gaussian", "--dim", "3", "-s", "rwm", *_short(20), *extra, "-o", str(out)) == 0
    return out


def test_a_network_run_refuses_other_evidence_and_blocks_in_one_line(mcmc, tmp_path):
    out = tmp_path / "net.npz"
    assert _run("sample", "-t", *ASIA, "-P", "gibbs:blocks=tub+lung+either", *_short(20), "-o", str(out)) == 0
    before = out.read_bytes()
    for given, message in [
        (["--observe", "xray=no"], "the run was made with --observe xray=yes,dysp=yes; this command gives xray=no"),
        (["-t", ASIA[0], "-s", "gibbs", "-P", "gibbs:blocks=single"],
         "the run was made with --blocks tub+lung+either; this command gives single"),
        (["-s", "gibbs", "-P", "gibbs:blocks=single"], "give --sampler and --target too"),
    ]:
        r = mcmc("sample", "--resume", str(out), "--draws", "40", *given)
        assert r.code == 2 and len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (["--sampler", "slice"], "the run was made with --sampler rwm; this command gives slice"),
        (["--seed", "8"], "the run was made with --seed 7; this command gives 8"),
        (["--dim", "4"], "the run was made with --dim 3; this command gives 4"),
        (["--chains", "4"], "the run was made with --chains 3; this command gives 4"),
        (["--warmup", "10"], "the run was made with --warmup 40; this command gives 10"),
        (["-t", "gaussian", "-s", "rwm", "--scale", "0.5"],
         "the run was made with --scale (not given); this command gives 0.5"),
        (["--draws", "10"], "already has 20 draws per chain"),
        (["--scale", "0.5"], "give --sampler and --target too"),
        (["-s", "rwm", "--scale", "0.5"], "give --sampler and --target too"),  # whose settings: a density's or not
    ],
)
def test_resume_refuses_other_settings_in_one_line(mcmc, tmp_path, given, message):
    base = _base(tmp_path)
    before = base.read_bytes()
    r = mcmc("sample", "--resume", str(base), *given)
    assert r.code == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcmc: error:") and message in lines[0], r.stderr
    assert base.read_bytes() == before


def test_resume_refuses_a_changed_data_or_target_file(mcmc, tmp_path):
    data = tmp_path / "data.csv"
    rng = np.random.default_rng(0)
    rows = ["x1,x2,y"] + [f"{a:.3f},{b:.3f},{int(a + b > 0)}" for a, b in rng.normal(size=(40, 2))]
    data.write_text("\n".join(rows) + "\n")
    out = tmp_path / "fit.npz"
    assert mcmc("sample", "-t", "logistic", "--data", str(data), "-s", "rwm", *_short(10), "-o", str(out)).code == 0
    assert mcmc("sample", "--resume", str(out), "--draws", "12", "-q", "--no-check").code == 0  # unchanged: goes on
    data.write_text("\n".join(rows[:-1]) + "\n")
    r = mcmc("sample", "--resume", str(out), "--draws", "14")
    assert r.code == 2 and "the run's data file has changed since (its SHA-256 differs)" in r.stderr

    model = tmp_path / "model.py"
    model.write_text("dim = 2\ndef log_density(x):\n    return -0.5 * (x ** 2).sum(axis=1)\n")
    out = tmp_path / "user.npz"
    assert mcmc("sample", "-t", str(model), "-s", "rwm", *_short(10), "-o", str(out)).code == 0
    model.write_text("dim = 2\ndef log_density(x):\n    return -0.25 * (x ** 2).sum(axis=1)\n")
    r = mcmc("sample", "--resume", str(out), "--draws", "14")
    assert r.code == 2 and "the run's target file has changed since" in r.stderr

    # a file a setting names (mh's proposal matrix) defines the run as much as the target file does
    proposal = tmp_path / "q.csv"
    source = Path(__file__).parent / "data" / "markov"
    proposal.write_text((source / "proposal.csv").read_text())
    out = tmp_path / "mh.npz"
    args = ("-t", str(source / "weights.csv"), "-s", "mh", "-P", f"mh:proposal-matrix={proposal}")
    assert mcmc("sample", *args, *_short(10), "-o", str(out), "-q", "--no-check").code == 0
    assert mcmc("sample", "--resume", str(out), "--draws", "12", "-q", "--no-check").code == 0
    proposal.write_text(proposal.read_text().replace("0.6,0,0,0.4,0", "0.5,0,0,0.5,0"))
    r = mcmc("sample", "--resume", str(out), "--draws", "14")
    assert r.code == 2 and "the file the run's proposal-matrix names has changed since" in r.stderr, r.stderr


def _rewrite_header(path: Path, **changes) -> None:
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = json.loads(str(np.load(io.BytesIO(members["__resume__.npy"]))))
    header.update(changes)
    buf = io.BytesIO()
    np.save(buf, np.array(json.dumps(header)))
    members["__resume__.npy"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def test_resume_refuses_another_format_version_and_files_with_nothing_to_go_on_from(mcmc, tmp_path):
    base = _base(tmp_path)
    _rewrite_header(base, version=2)
    r = mcmc("sample", "--resume", str(base), "--draws", "30")
    assert r.code == 2 and "written by mcmc.resume version 2; this mcmc goes on from version 1 only" in r.stderr

    plain = tmp_path / "plain.npz"
    write_chains(Chains({"mu": np.zeros((2, 10))}), plain)
    r = mcmc("sample", "--resume", str(plain))
    assert r.code == 2 and "has nothing to resume from" in r.stderr

    nc = tmp_path / "run.nc"
    nc.write_bytes(b"whatever")
    r = mcmc("sample", "--resume", str(nc))
    assert r.code == 2 and "an .nc file has no resume section" in r.stderr

    (tmp_path / "dir.npz").mkdir()
    for command in ("sample", "lda"):  # a file that is not there, or not a file: one line naming it
        for name, problem in (("gone.npz", "no such file"), ("dir.npz", "not a file")):
            r = mcmc(command, "--resume", str(tmp_path / name))
            assert r.code == 2 and r.stderr.strip() == f"mcmc: error: {tmp_path / name}: {problem}", r.stderr


# ----------------------------------------------------------------- checkpoints, signals and kill -9

SLOW = """\
import time
dim = 2
def log_density(x):
    time.sleep({sleep})
    return -0.5 * (x ** 2).sum(axis=1)
"""


#: ``mcmc`` with Python's own SIGINT handler: a shell starts background jobs with SIGINT ignored. Set in the child,
#: not by ``preexec_fn``, whose fork would run the fork handlers of what this process has loaded (JAX warns).
LAUNCH = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
          "from mcmc.cli.app import main; sys.exit(main())")  # fmt: skip


def _start(argv: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", LAUNCH, *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()  # this test's own process, by its handle
    proc.communicate()


SLOW_RUN = ["-s", "rwm", "--seed", "3", "--chains", "2", "--warmup", "20", "--draws", "600", "-q", "--no-check"]


@pytest.mark.parametrize(("sig", "code", "last"), [(signal.SIGTERM, 143, "mcmc: terminated"),
                                                    (signal.SIGINT, 130, "mcmc: interrupted")])  # fmt: skip
def test_a_signal_writes_a_last_checkpoint_and_prints_the_command_that_goes_on(tmp_path, capsys, sig, code, last):
    (tmp_path / "slow.py").write_text(SLOW.format(sleep=0.001))
    out = tmp_path / "run.npz"
    out.write_bytes(b"the previous run's file")
    ckpt = tmp_path / "run.npz.checkpoint.npz"
    proc = _start(["sample", "-t", "slow.py", *SLOW_RUN, "--checkpoint-every", "0.2s", "-o", "run.npz"], tmp_path)
    try:
        _wait_for(ckpt, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        _end(proc)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == code, err
    assert lines[-1] == last
    assert out.read_bytes() == b"the previous run's file"  # -o is written only at the end
    said = re.fullmatch(r"mcmc: the run so far \((\d+) draws per chain\) is in run\.npz\.checkpoint\.npz; "
                        r"go on with: (mcmc sample --resume .*)", lines[-2])  # fmt: skip
    assert said, lines
    with np.load(ckpt) as f:
        assert f["x"].shape == (2, int(said[1]), 2)
    os.chdir(tmp_path)
    try:
        assert _run(*shlex.split(said[2])[1:], "-q", "--no-check") == 0
        assert not ckpt.exists()  # served: removed once the output holds it all
        assert _run("sample", "-t", "slow.py", *SLOW_RUN, "-o", "whole.npz") == 0
    finally:
        os.chdir(Path(__file__).parent)
    assert out.read_bytes() == (tmp_path / "whole.npz").read_bytes()


#: Kills of the kill -9 test: each costs a process start and a run of about a second, one process at a time. The
#: suite (CI) kills 6 times; MCMC_TEST_KILLS=50 kills more often, at more moments, when the checkpoints change.
KILLS = int(os.environ.get("MCMC_TEST_KILLS", "6"))


def test_after_kill_9_at_random_moments_the_last_checkpoint_goes_on_to_the_same_bytes(tmp_path, capsys):
    (tmp_path / "slow.py").write_text(SLOW.format(sleep=0.0005))
    argv = ["sample", "-t", "slow.py", *SLOW_RUN[:-4], "--draws", "2000", "-q", "--no-check"]
    os.chdir(tmp_path)
    try:
        assert _run(*argv, "-o", "whole.npz") == 0
        whole = (tmp_path / "whole.npz").read_bytes()
        moments = np.random.default_rng(30).uniform(0.0, 1.0, size=KILLS)
        draws_seen = set()
        for k, moment in enumerate(moments):
            ckpt = tmp_path / f"run{k}.npz.checkpoint.npz"
            proc = _start([*argv, "--checkpoint-every", "0.05s", "-o", f"run{k}.npz"], tmp_path)
            try:
                _wait_for(ckpt, proc)
                time.sleep(moment)
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=60)
            finally:
                _end(proc)
            if proc.returncode == 0:  # finished before the kill: nothing to go on from
                assert not ckpt.exists()
                continue
            assert proc.returncode == -signal.SIGKILL
            assert not (tmp_path / f"run{k}.npz").exists()
            with np.load(ckpt) as f:  # whole: written atomically
                draws_seen.add(int(f["x"].shape[1]))
            assert _run("sample", "--resume", ckpt.name, "-q", "--no-check") == 0
            assert (tmp_path / f"run{k}.npz").read_bytes() == whole
        assert len(draws_seen) >= max(2, KILLS // 3), draws_seen  # the kills fell at many different points
    finally:
        os.chdir(Path(__file__).parent)


# ----------------------------------------------------------------- --until-converged

BIMODAL = """\
import numpy as np
dim = 1
def log_density(x):
    # two modes 40 sds apart: random-walk chains never cross, so R-hat cannot pass
    return np.logaddexp(-0.5 * ((x - 20.0) / 0.5) ** 2, -0.5 * ((x + 20.0) / 0.5) ** 2).sum(axis=1)
"""


def test_until_converged_stops_on_an_easy_target_when_two_successive_looks_pass(mcmc, tmp_path):
    out = tmp_path / "uc.npz"
    r = mcmc("sample", "-t", "gaussian", "--dim", "2", "--seed", "1", "--warmup", "200", "--draws", "100",
             "--until-converged", "-o", str(out))  # fmt: skip
    assert r.code == 0, r.stderr
    assert "until converged: took 225 draws per chain: the checks passed at two successive looks " \
           "(draws per chain at each look: 100 fail, 150 pass, 225 pass)" in r.stderr  # fmt: skip
    with np.load(out) as f:
        assert f["x"].shape == (4, 225, 2)
    # the same bytes as one run of that length: the blocks went on from each other
    whole = tmp_path / "whole.npz"
    assert mcmc("sample", "-t", "gaussian", "--dim", "2", "--seed", "1", "--warmup", "200", "--draws", "225",
                "-o", str(whole)).code == 0  # fmt: skip
    assert out.read_bytes() == whole.read_bytes()


def test_until_converged_runs_to_max_draws_and_exits_1_on_a_target_that_cannot_mix(mcmc, tmp_path):
    (tmp_path / "bimodal.py").write_text(BIMODAL)
    out = tmp_path / "uc.npz"
    r = mcmc("sample", "-t", str(tmp_path / "bimodal.py"), "-s", "rwm", "--seed", "1", "--warmup", "200", "--draws",
             "100", "--until-converged", "--max-draws", "400", "-o", str(out))  # fmt: skip
    assert r.code == 1, r.stderr
    assert "ran to --max-draws, 400 draws per chain" in r.stderr
    assert r.stderr.strip().splitlines()[-3].startswith("FAIL: R-hat > 1.01")
    with np.load(out) as f:
        assert f["x"].shape == (4, 400, 1)


def test_until_converged_on_a_network_stops_when_it_mixes_and_runs_to_max_draws_when_it_cannot(mcmc, tmp_path):
    examples = Path(__file__).parents[1] / "examples"
    out = tmp_path / "net.npz"
    easy = ("sample", "-t", str(examples / "earthquake.bif"), "-s", "gibbs", "-P", "gibbs:blocks=single", "--seed",
            "1", "--warmup", "100")  # fmt: skip
    r = mcmc(*easy, "--draws", "40", "--until-converged", "-o", str(out))
    assert r.code == 0, r.stderr
    found = re.search(r"until converged: took (\d+) draws per chain: the checks passed at two successive", r.stderr)
    assert found, r.stderr
    took = int(found.group(1))
    # the same bytes as one run of that length: the blocks went on from each other
    whole = tmp_path / "whole.npz"
    assert mcmc(*easy, "--draws", str(took), "-o", str(whole), "-q").code == 0
    assert out.read_bytes() == whole.read_bytes()

    # single-site Gibbs on alarm with this evidence does not mix in a few thousand sweeps (issue 27)
    r = mcmc("sample", "-t", str(examples / "alarm.bif"), "-s", "gibbs", "-P", "gibbs:blocks=single", "--observe",
             "HRBP=HIGH,BP=LOW", "--seed", "1", "--warmup", "100", "--draws", "100", "--until-converged",
             "--max-draws", "300", "-o", str(out))  # fmt: skip
    assert r.code == 1, r.stderr
    assert "ran to --max-draws, 300 draws per chain" in r.stderr
    with np.load(out) as f:
        assert f["LVFAILURE"].shape == (4, 300)


def test_next_look_grows_by_half_on_multiples_of_thin():
    from mcmc.cli.commands.sample import next_look

    assert [next_look(d, 1000) for d in (100, 150, 225, 900)] == [150, 225, 337, 1000]
    assert next_look(100, 1000, thin=7) == 156
    assert next_look(1, 10) == 2


# ----------------------------------------------------------------- --keep-warmup


def test_keep_warmup_stores_the_warmup_draws_with_their_exact_log_density(tmp_path, capsys):
    from mcmc.core.targets import get_target

    kept, plain = tmp_path / "kept.npz", tmp_path / "plain.npz"
    argv = ["-t", "gaussian", "--dim", "3", "--rho", "0.5", "-s", "hmc", *_short(30)]
    assert _run("sample", *argv, "--keep-warmup", "-o", str(kept)) == 0
    assert _run("sample", *argv, "-o", str(plain)) == 0
    with np.load(kept) as k, np.load(plain) as p:
        for name in p.files:  # the draws are those of the run that kept nothing
            if name not in ("__attrs__", "__resume__") and not name.startswith("resume__"):
                assert k[name].tobytes() == p[name].tobytes(), name
        x, lp = k["warmup_posterior__x"], k["warmup_sample_stats__lp"]
        assert x.shape == (3, 40, 3) and lp.shape == (3, 40)
        assert "warmup_sample_stats__step_size" in k.files
    target = get_target("gaussian", dim=3, rho=0.5)
    exact = np.asarray(target.log_density(x.reshape(-1, 3))).reshape(3, 40)
    np.testing.assert_allclose(lp, exact, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------- mcmc lda


def _lda_short(iterations: int) -> list[str]:
    argv = list(cases.LDA_SHORT)
    argv[argv.index("--iterations") + 1] = str(iterations)
    return argv


@pytest.mark.parametrize("name", list(cases.LDA_CASES))
def test_an_lda_fit_that_stops_and_goes_on_writes_the_bytes_of_one_that_never_stopped(name, tmp_path, capsys):
    whole, part = tmp_path / "whole.npz", tmp_path / "part.npz"
    est_whole, est_part = tmp_path / "est_whole.npz", tmp_path / "est_part.npz"
    model_whole, model_part = tmp_path / "model_whole.npz", tmp_path / "model_part.npz"
    argv = cases.LDA_CASES[name]
    assert _run("lda", *argv, *_lda_short(12), "-o", str(whole), "--estimates", str(est_whole),
                "--save-model", str(model_whole)) == 0  # fmt: skip
    assert _run("lda", *argv, *_lda_short(8), "-o", str(part), "--estimates", str(est_part)) == 0
    assert _run("lda", "--resume", str(part), "--iterations", "12", "--no-check", "--estimates", str(est_part),
                "--save-model", str(model_part)) == 0  # fmt: skip
    assert part.read_bytes() == whole.read_bytes()
    assert est_part.read_bytes() == est_whole.read_bytes()
    assert model_part.read_bytes() == model_whole.read_bytes()  # the saved model is the same


def test_lda_resume_refuses_other_settings_and_a_changed_corpus(mcmc, tmp_path):
    corpus = tmp_path / "tiny.ldac"
    corpus.write_bytes((Path(__file__).parent / "data" / "lda" / "tiny.ldac").read_bytes())
    vocab = Path(__file__).parent / "data" / "lda" / "tiny.vocab.txt"
    out = tmp_path / "fit.npz"
    common = ["--iterations", "10", "--burn-in", "4", "-k", "3", "--seed", "2", "--no-check", "--vocab", str(vocab)]
    assert mcmc("lda", str(corpus), *common, "-o", str(out)).code == 0
    for given, message in ((["-k", "4"], "the fit was made with --topics 3; this command gives 4"),
                           (["--method", "dmm"], "the fit was made with --method collapsed; this command gives dmm"),
                           (["--estimates", str(tmp_path / "e.npz")], "--estimates needs a fit made with --estimates"),
                           (["--iterations", "5"], "already has 10 sweeps per chain")):  # fmt: skip
        r = mcmc("lda", "--resume", str(out), *given)
        assert r.code == 2 and message in r.stderr, r.stderr
    corpus.write_text(corpus.read_text() + "1 0:1\n")
    r = mcmc("lda", "--resume", str(out), "--iterations", "12")
    assert r.code == 2 and "the fit's corpus has changed since (its SHA-256 differs)" in r.stderr, r.stderr


@pytest.mark.parametrize("threads", ["1", "2"])  # 2: chains side by side, stopped together before one sweep
def test_a_signal_stops_an_lda_fit_with_a_checkpoint_it_goes_on_from(tmp_path, capsys, threads):
    argv = ["lda", "--iterations", "600", "--burn-in", "10", "-k", "5", "--chains", "2", "--threads", threads,
            "--seed", "4", "--no-check"]  # fmt: skip
    ckpt = tmp_path / "fit.npz.checkpoint.npz"
    proc = _start([*argv, "--checkpoint-every", "0.2s", "-o", "fit.npz"], tmp_path)
    try:
        _wait_for(ckpt, proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        _end(proc)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 143 and lines[-1] == "mcmc: terminated", err
    said = re.fullmatch(r"mcmc: the run so far \((\d+) iterations per chain\) is in fit\.npz\.checkpoint\.npz; "
                        r"go on with: (mcmc lda --resume fit\.npz\.checkpoint\.npz)", lines[-2])  # fmt: skip
    assert said, lines
    assert 0 < int(said[1]) < 600 and not (tmp_path / "fit.npz").exists()
    os.chdir(tmp_path)
    try:
        assert _run(*shlex.split(said[2])[1:], "--no-check") == 0
        assert not ckpt.exists()
        assert _run(*argv, "-o", "whole.npz") == 0
    finally:
        os.chdir(Path(__file__).parent)
    assert (tmp_path / "fit.npz").read_bytes() == (tmp_path / "whole.npz").read_bytes()
