"""`--scheduler`: chains as tasks on a Dask cluster give the bytes of the local run.

One LocalCluster of two worker processes on 127.0.0.1 (HTTP endpoint on a free loopback port) serves
the module; the CLI reaches it by its tcp:// address, as it would a remote
scheduler. A worker is killed mid-run by its process id; Dask's nanny
restarts it, so the cluster serves the tests after it too.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from mcmc.core import scaleout  # noqa: E402
from mcmc.core.chains import npz_bytes  # noqa: E402
from mcmc.core.lda.gibbs import fit  # noqa: E402
from mcmc.core.samplers.driver import concatenate  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "data" / "same_bytes"))
from cases import SAMPLE_CASES  # noqa: E402

sys.path.pop(0)

SHORT = ("--chains", "5", "--warmup", "40", "--draws", "30", "--seed", "11", "-q", "--no-check")  # too short to pass

MODEL = """
import numpy as np
dim = 3
names = ["a", "b", "c"]
def log_density(x):
    return -0.5 * np.sum((x - np.array([1.0, -2.0, 0.5])) ** 2 / np.array([1.0, 4.0, 0.25]), axis=-1)
"""

# Slow enough (about 1 s a block) that a worker can be killed while it runs one.
SLOW_MODEL = """
import time
import numpy as np
dim = 2
def log_density(x):
    time.sleep(0.01)
    return -0.5 * np.sum(x ** 2, axis=-1)
"""


@pytest.fixture(autouse=True)
def _no_test_hangs():
    """A cluster test that waits on a lost worker must fail, not hang the suite: SIGALRM after 180 s."""

    def stop(signum, frame):  # noqa: ANN001
        raise TimeoutError("scale-out test still running after 180 s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(180)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# A loaded CI machine can take well over 20 s to start a worker process.
WORKER_START = 120


@pytest.fixture(scope="module")
def cluster():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0"
        ) as cluster,
        # not the default client: xarray would take its locks when writing a .nc file here
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield cluster, client


def _sample(mcmc, out: Path, *args: str):
    r = mcmc("sample", *args, "-o", str(out))
    assert r.code == 0, r.stderr
    return out.read_bytes()


def _options(argv: list[str]) -> tuple[str, str, dict]:
    opts: dict = {}
    for flag, key in (("--dim", "dim"), ("--rho", "rho")):
        if flag in argv:
            opts[key] = float(argv[argv.index(flag) + 1]) if key == "rho" else int(argv[argv.index(flag) + 1])
    for i, a in enumerate(argv):
        if a == "-T":
            k, v = argv[i + 1].split("=")
            opts[k] = v if "," in v else float(v) if "." in v else int(v)  # a list (counts=4,1,3) stays text
    return argv[argv.index("-t") + 1], argv[argv.index("-s") + 1], opts


@pytest.mark.parametrize("case", sorted(SAMPLE_CASES))
def test_blocks_of_chains_concatenate_to_the_bytes_of_one_run(case: str) -> None:
    """Every sampler: chains 0-1, 2 and 3-4 run apart and joined are the file of chains 0-4 run together."""
    target, sampler, opts = _options(SAMPLE_CASES[case])
    job = scaleout.ChainsJob(target=target, sampler=sampler, seed=7, warmup=30, draws=20, target_options=opts)
    whole = scaleout.run_block(job, range(5)).chains
    parts = [scaleout.run_block(job, ids).chains for ids in ([0, 1], [2], [3, 4])]
    assert npz_bytes(concatenate(parts)) == npz_bytes(whole)


def test_blocks_of_different_runs_are_refused() -> None:
    job = scaleout.ChainsJob(target="gaussian", sampler="rwm", seed=7, warmup=10, draws=10)
    a = scaleout.run_block(job, [0]).chains
    b = scaleout.run_block(job.__class__(**{**job.__dict__, "seed": 8}), [1]).chains
    with pytest.raises(ValueError, match="seed"):
        concatenate([a, b])


def test_a_user_target_loads_from_its_source_alone(tmp_path: Path) -> None:
    """What a worker gets: the text, under the name the user typed, with no file at that path."""
    job = scaleout.ChainsJob(target="elsewhere/model.py", sampler="rwm", seed=1, warmup=10, draws=10,
                             target_text=MODEL)  # fmt: skip
    chains = scaleout.run_block(job, [0, 1]).chains
    assert chains.attrs["target"] == "elsewhere/model.py"
    assert set(chains.posterior) == {"a", "b", "c"}
    local = tmp_path / "model.py"
    local.write_text(MODEL)
    there = scaleout.run_block(scaleout.ChainsJob(target=str(local), sampler="rwm", seed=1, warmup=10, draws=10),
                               [0, 1]).chains  # fmt: skip
    assert all(np.array_equal(chains.posterior[k], there.posterior[k]) for k in chains.posterior)


def test_sample_on_the_cluster_writes_the_local_bytes(cluster, mcmc, tmp_path: Path) -> None:
    address = cluster[0].scheduler_address
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    for args in (("-t", str(model), "-s", "rwm"), ("-t", "eight-schools", "-s", "hmc")):
        local = _sample(mcmc, tmp_path / "local.npz", *args, *SHORT)
        remote = _sample(mcmc, tmp_path / "remote.npz", *args, *SHORT, "--scheduler", address)
        assert remote == local, args
    nc_local = _sample(mcmc, tmp_path / "local.nc", "-t", "banana", "-s", "slice", *SHORT)
    nc_remote = _sample(mcmc, tmp_path / "remote.nc", "-t", "banana", "-s", "slice", *SHORT, "--scheduler", address)
    assert nc_remote == nc_local


def test_a_target_through_blas_writes_the_local_bytes_on_the_cluster(cluster, mcmc, tmp_path: Path) -> None:
    # Its density's sums are matrix products (r @ x), which BLAS rounds with the batch's shape: on the cluster
    # the 8 chains run in blocks of 2, locally as one block of 8 (issue 29, class 2).
    model = Path(__file__).parent / "data" / "sample" / "kidiq_blas.py"
    args = ("-t", str(model), "--chains", "8", "--warmup", "100", "--draws", "30", "--seed", "9", "-q", "--no-check")
    local = _sample(mcmc, tmp_path / "local.npz", *args)
    assert _sample(mcmc, tmp_path / "remote.npz", *args, "--scheduler", cluster[0].scheduler_address) == local


def test_local_n_starts_its_own_cluster(mcmc, tmp_path: Path) -> None:
    args = ("-t", "gaussian", "--dim", "2", "-s", "slice", "--first-chain", "3", *SHORT)
    local = _sample(mcmc, tmp_path / "local.npz", *args)
    assert _sample(mcmc, tmp_path / "remote.npz", *args, "--scheduler", "local:2") == local


def test_a_worker_killed_mid_run_changes_nothing(cluster, mcmc, tmp_path: Path) -> None:
    cl, client = cluster
    client.wait_for_workers(2, timeout=WORKER_START)
    model = tmp_path / "slow.py"
    model.write_text(SLOW_MODEL)
    args = ("-t", str(model), "-s", "rwm", "--chains", "4", "--warmup", "50", "--draws", "50", "--seed", "5", "-q",
            "--no-check")
    local = _sample(mcmc, tmp_path / "local.npz", *args)
    killed: list[int] = []
    killer = threading.Thread(target=_kill_a_busy_worker, args=(client, killed), kwargs={"into_task": 0.3})
    killer.start()
    remote = _sample(mcmc, tmp_path / "remote.npz", *args, "--scheduler", cl.scheduler_address)
    killer.join()
    assert killed, "no worker was busy to kill"
    assert remote == local
    client.wait_for_workers(2, timeout=WORKER_START)  # the nanny restarts it for the next tests


def _kill_a_busy_worker(client, killed: list[int], *, after: threading.Event | None = None, wait: float = 0.0,
                        into_task: float = 0.0, poll: float = 0.02) -> None:
    """SIGKILL the process of the first worker seen running a task (within 10 s); its pid goes to ``killed``.

    Waits for ``after`` (when given) and ``wait`` seconds first, and ``into_task`` seconds once a worker is busy.
    """
    if after is not None:
        after.wait(20)
    time.sleep(wait)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        busy = [w for w, keys in client.processing().items() if keys]
        if busy:
            time.sleep(into_task)
            # The scheduler may answer for a worker it no longer reaches (its reply then lacks the address, or
            # holds the error): poll again rather than fail in this thread, which pytest would report instead.
            pid = client.run(os.getpid, workers=busy[:1], on_error="return").get(busy[0])
            if isinstance(pid, int):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(poll)


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_a_user_target_failing_to_import_on_a_worker_is_one_line(cluster, mcmc, tmp_path: Path) -> None:
    model = tmp_path / "broken.py"
    model.write_text("import numpy as np\nimport no_such_module_for_mcmc\ndim = 1\n")
    r = mcmc("sample", "-t", str(model), "-s", "rwm", *SHORT, "-o", str(tmp_path / "c.npz"),
             "--scheduler", cluster[0].scheduler_address)  # fmt: skip
    assert r.code == 2
    line = _one_error_line(r.stderr)
    assert f"{model}: failed to import: ModuleNotFoundError" in line and "no_such_module_for_mcmc" in line
    assert not (tmp_path / "c.npz").exists()


def test_an_unreachable_scheduler_is_one_line_within_the_timeout(mcmc, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(scaleout, "CONNECT_TIMEOUT", 1.0)
    t0 = time.monotonic()
    r = mcmc("sample", *SHORT, "-o", str(tmp_path / "c.npz"), "--scheduler", "tcp://127.0.0.1:1")
    assert time.monotonic() - t0 < 8
    assert r.code == 2
    assert "tcp://127.0.0.1:1: no Dask scheduler answered within 1 s" in _one_error_line(r.stderr)


@pytest.mark.parametrize(
    ("address", "words"), [("local:0", "positive number"), ("local:x", "positive number")]
)
def test_a_bad_local_address_is_one_line(mcmc, tmp_path: Path, address: str, words: str) -> None:
    r = mcmc("sample", *SHORT, "-o", str(tmp_path / "c.npz"), "--scheduler", address)
    assert r.code == 2 and words in _one_error_line(r.stderr)


def test_without_distributed_the_option_says_what_to_install(mcmc, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    r = mcmc("sample", *SHORT, "-o", str(tmp_path / "c.npz"), "--scheduler", "local:2")
    assert r.code == 2
    assert "pip install 'mcmc[dask]'" in _one_error_line(r.stderr)


LDA_SHORT = ("--iterations", "10", "--burn-in", "4", "--chains", "3", "--seed", "3", "-k", "4", "--no-check")


@pytest.mark.parametrize(
    "method", [("--method", "partial", "--holdout", "0.2"), ("--method", "collapsed", "--optimize-interval", "2")]
)
def test_lda_chains_on_the_cluster_write_the_local_bytes(cluster, mcmc, tmp_path: Path, method) -> None:
    files = {}
    for where, extra in (("local", ()), ("remote", ("--scheduler", cluster[0].scheduler_address))):
        chains, estimates = tmp_path / f"{where}.npz", tmp_path / f"{where}.estimates.npz"
        r = mcmc("lda", *method, *LDA_SHORT, "-o", str(chains), "--estimates", str(estimates), *extra)
        assert r.code == 0, r.stderr
        files[where] = (chains.read_bytes(), estimates.read_bytes())
    assert files["remote"] == files["local"]


def _synthetic_corpus(n_docs: int, mean_length: int, vocab: int, seed: int) -> SimpleNamespace:
    """Documents of Poisson lengths (some empty) over a Zipf-like vocabulary: the shape of real text."""
    rng = np.random.default_rng(seed)
    lengths = rng.poisson(mean_length, n_docs)
    weights = 1.0 / np.arange(1, vocab + 1)
    words = rng.choice(vocab, size=int(lengths.sum()), p=weights / weights.sum()).astype(np.int32)
    return SimpleNamespace(doc_ptr=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), words=words,
                           vocab=[f"w{i}" for i in range(vocab)])


PARTIAL = dict(n_topics=6, alpha=0.2, beta=0.05, iterations=12, burn_in=5, chains=2, seed=9, method="partial",
               threads=1)


def _assert_same_fit(a, b) -> None:
    for name in ("log_joint", "log_joint_per_token", "theta", "phi", "z"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), f"{name} differs"


@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_a_sharded_partial_chain_is_the_local_chain_whatever_the_shards(cluster, shards: int) -> None:
    corpus = _synthetic_corpus(60, 30, 80, seed=4)
    local = fit(corpus, **PARTIAL)
    traffic: dict[str, float] = {}
    remote = scaleout.fit_sharded(corpus, PARTIAL, cluster[0].scheduler_address, shards=shards, traffic=traffic)
    _assert_same_fit(remote, local)
    assert traffic["shards"] == shards
    assert traffic["in_per_sweep"] == corpus.words.size  # one byte per token: K = 6 fits uint8


def test_a_worker_killed_mid_sharded_run_changes_nothing(cluster) -> None:
    cl, client = cluster
    client.wait_for_workers(2, timeout=WORKER_START)
    corpus = _synthetic_corpus(3000, 60, 2000, seed=5)
    options = {**PARTIAL, "n_topics": 20, "iterations": 150, "burn_in": 50, "chains": 1}
    local = fit(corpus, **options)
    killed: list[int] = []
    started = threading.Event()
    # some sweeps in, so that the shards and their topics live on the workers; a sweep's tasks are short
    killer = threading.Thread(target=_kill_a_busy_worker, args=(client, killed),
                              kwargs={"after": started, "wait": 1.0, "poll": 0.005})
    killer.start()
    remote = scaleout.fit_sharded(corpus, options, cl.scheduler_address, shards=2,
                                  callback=lambda c, it, v: started.set())
    killer.join()
    assert killed, "no worker was busy to kill"
    _assert_same_fit(remote, local)
    client.wait_for_workers(2, timeout=WORKER_START)
