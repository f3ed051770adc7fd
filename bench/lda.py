"""LDA benchmark: `mcmc lda`'s engine beside tomotopy and the `lda` package, in one run.

Corpus: 20 Newsgroups as LDA-C (``/work/shared/corpora/20ng_all_filtered.ldac``,
18,771 documents, 2.2 M tokens, 28,431 words), read with our reader
(:func:`mcmc.core.lda.readers.load_corpus`; its time is printed). K = 20 and
K = 100, alpha = 0.1, beta (eta) = 0.01, 200 Gibbs iterations, fixed seeds.

Rows, for each K:

* ``ours 1 thread``: :func:`mcmc.core.lda.gibbs.fit`, collapsed Gibbs, one chain
  (kernel chosen automatically: dense for small K, SparseLDA buckets otherwise).
* ``ours 2 chains/2 threads``: two independent chains side by side (exact);
  tokens/s counts the updates of both chains.
* ``ours partial 2 threads``: one chain of the partially collapsed sampler
  (phi | z, then z | phi with theta integrated out), documents split over two
  threads: an exact parallel sampler of the same posterior.
* ``tomotopy 1 worker`` / ``2 workers``: ``tomotopy.LDAModel(k=K, alpha=0.1,
  eta=0.01, seed=...)`` with hyperparameter optimisation switched off
  (``optim_interval = 0``; it is on by default and would change the model),
  ``train(iterations, workers=w)``. tomotopy's alpha is the symmetric
  per-topic concentration, as ours. With two workers tomotopy uses its default
  parallel scheme (PARTITION/COPY_MERGE), an approximate parallel Gibbs
  sampler in the AD-LDA family.
* ``lda package``: ``lda.LDA(n_topics=K, n_iter=..., alpha=0.1, eta=0.01,
  random_state=...)`` on the document-term matrix; single thread only. Its
  pure-Python initialisation loop over tokens is timed separately (on a fresh
  model) and subtracted.

Timing: tokens/s = tokens x iterations (x chains) / seconds of sampling. For
ours, "sampling" excludes numba compilation (every kernel is compiled or
loaded from cache on a tiny corpus before any clock starts) and the log joint
that ``fit`` evaluates after every iteration; the ``wall`` column is the whole
``fit`` call, log joint included. tomotopy's time is ``train()`` alone
(documents added beforehand).

Log-likelihood: every figure in the ``ll/token`` column is OUR collapsed log
joint ``log p(w, z)`` / N (:mod:`mcmc.core.lda.likelihood`), evaluated on each
library's final topic assignments: tomotopy's per-token ``doc.topics`` mapped
back to our word ids, and, because the ``lda`` package discards its
assignments after fitting, its final count matrices ``ndz_``/``nzw_`` (the
collapsed joint depends on z only through these counts; the count formula is
checked against :func:`collapsed_log_joint` on our own fit first). The
libraries' own figures are printed beside it for reference (``own``):
tomotopy's ``ll_per_word`` and the lda package's ``loglikelihood() / N``.
Ratios are to tomotopy with the same number of threads (ours 1 thread vs
tomotopy 1 worker; ours 2 threads vs tomotopy 2 workers). For "2 chains/2
threads" the ratio compares the two chains' combined throughput with one
tomotopy chain on two workers: the same hardware, different work products
(two exact chains, which also give R-hat, vs one approximate chain).

Run from the repository root on a quiet machine::

    .venv/bin/python bench/lda.py              # full: 20NG, K = 20 and 100, 200 iterations
    .venv/bin/python bench/lda.py --quick      # smoke test: Reuters (84 k tokens), 20 iterations
    .venv/bin/python bench/lda.py --time-to-quality --corpora ap_blei --topics 20 50 --seeds 1 2 3
        # time for our whole process to reach the ll/token tomotopy reaches after 100 and 1000 sweeps
        # (see time_to_quality; the default grid K = 20..500 on both corpora takes hours)
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

from mcmc.core.lda.corpus import Corpus, synthetic_corpus
from mcmc.core.lda.gibbs import fit
from mcmc.core.lda.likelihood import collapsed_log_joint
from mcmc.core.lda.readers import load_corpus

CORPORA = "/work/shared/corpora"
ALPHA, BETA = 0.1, 0.01


@dataclass
class Row:
    name: str
    threads: int
    tokens_per_s: float
    seconds: float
    wall: float | None
    ll: float
    own_ll: float | None = None
    note: str = ""


def log_joint_from_counts(ndk: np.ndarray, nkw: np.ndarray, alpha: float, beta: float) -> float:
    """Collapsed LDA log p(w, z) from the doc-topic (D, K) and topic-word (K, V) counts."""
    ndk = np.asarray(ndk, dtype=np.float64)
    nkw = np.asarray(nkw, dtype=np.float64)
    k, v = nkw.shape
    nd, nk = ndk.sum(axis=1), nkw.sum(axis=1)
    docs = ndk.shape[0] * gammaln(k * alpha) - gammaln(nd + k * alpha).sum()
    docs += (gammaln(ndk + alpha) - gammaln(alpha)).sum()
    topics = k * gammaln(v * beta) - gammaln(nk + v * beta).sum()
    topics += (gammaln(nkw + beta) - gammaln(beta)).sum()
    return float(docs + topics)


def check_count_formula(corpus: Corpus, seed: int) -> None:
    """The count formula must equal our log joint on a real fit's z before it scores anyone."""
    r = fit(corpus, n_topics=7, alpha=ALPHA, beta=BETA, iterations=3, burn_in=0, seed=seed)
    z = r.z[0].astype(np.int64)
    doc = corpus.doc_of_token()
    ndk = np.zeros((corpus.n_docs, 7))
    nkw = np.zeros((7, corpus.vocab_size))
    np.add.at(ndk, (doc, z), 1)
    np.add.at(nkw, (z, corpus.words), 1)
    a = log_joint_from_counts(ndk, nkw, ALPHA, BETA)
    b = collapsed_log_joint(corpus.doc_ptr, corpus.words, r.z[0], n_topics=7, vocab_size=corpus.vocab_size,
                            alpha=ALPHA, beta=BETA)
    assert abs(a - b) <= 1e-9 * abs(b), (a, b)
    assert abs(b - r.log_joint[0, -1]) <= 1e-9 * abs(b), (b, r.log_joint[0, -1])


def run_ours(corpus: Corpus, k: int, iterations: int, seed: int, *, chains: int, threads: int,
             method: str = "collapsed") -> Row:
    t0 = time.perf_counter()
    r = fit(corpus, n_topics=k, alpha=ALPHA, beta=BETA, iterations=iterations, burn_in=iterations - 1,
            chains=chains, seed=seed, method=method, threads=threads)
    wall = time.perf_counter() - t0
    lls = [collapsed_log_joint(corpus.doc_ptr, corpus.words, r.z[c], n_topics=k, vocab_size=corpus.vocab_size,
                               alpha=ALPHA, beta=BETA) / corpus.n_tokens for c in range(chains)]
    name = {"collapsed": "ours", "partial": "ours partial"}[method]
    label = f"{name} {chains} chain{'s' if chains > 1 else ''}/{threads} thread{'s' if threads > 1 else ''}"
    note = f"kernel {r.kernel}" + (f"; chains {', '.join(f'{x:.4f}' for x in lls)}" if chains > 1 else "")
    return Row(label, threads, r.tokens_per_second, r.sampling_seconds, wall, float(np.mean(lls)), None, note)


def run_tomotopy(corpus: Corpus, k: int, iterations: int, seed: int, workers: int) -> Row:
    import tomotopy as tp

    model = tp.LDAModel(k=k, alpha=ALPHA, eta=BETA, seed=seed)
    model.optim_interval = 0  # keep alpha fixed: the default re-estimates it every 10 iterations
    vocab = corpus.vocab
    for d in range(corpus.n_docs):
        model.add_doc([vocab[w] for w in corpus.words[corpus.doc_ptr[d] : corpus.doc_ptr[d + 1]]])
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # "may differ even with fixed seed if workers != 1": said in the note
        warnings.simplefilter("ignore", RuntimeWarning)
        model.train(iterations, workers=workers)
    seconds = time.perf_counter() - t0
    # Rebuild (doc_ptr, words, z) in tomotopy's own token order, in our word ids.
    ours_id = {w: i for i, w in enumerate(vocab)}
    to_ours = np.array([ours_id[w] for w in model.vocabs], dtype=np.int32)
    words, topics, lengths = [], [], []
    for doc in model.docs:
        w = np.asarray(doc.words, dtype=np.int64)
        words.append(to_ours[w])
        topics.append(np.asarray(doc.topics, dtype=np.int32))
        lengths.append(w.size)
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)])
    words_a, z = np.concatenate(words), np.concatenate(topics)
    assert words_a.size == corpus.n_tokens
    ll = collapsed_log_joint(doc_ptr, words_a, z, n_topics=k, vocab_size=corpus.vocab_size, alpha=ALPHA,
                             beta=BETA) / corpus.n_tokens
    tps = corpus.n_tokens * iterations / seconds
    note = "approximate parallel scheme, not reproducible" if workers > 1 else ""
    return Row(f"tomotopy {workers} worker{'s' if workers > 1 else ''}", workers, tps, seconds, None, ll,
               float(model.ll_per_word), note)


def _import_lda_package():  # noqa: ANN202
    # This script is itself named lda.py and Python puts its folder first on sys.path.
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import lda
    finally:
        sys.path[:] = saved
    return lda


def run_lda_package(corpus: Corpus, k: int, iterations: int, seed: int) -> Row:
    lda = _import_lda_package()
    logging.getLogger("lda").setLevel(logging.WARNING)
    x = corpus.document_term_matrix()
    probe = lda.LDA(n_topics=k, n_iter=1, alpha=ALPHA, eta=BETA, random_state=seed)
    t0 = time.perf_counter()
    probe._initialize(x)  # the Python loop over tokens that fit() runs before sampling
    init = time.perf_counter() - t0
    del probe
    model = lda.LDA(n_topics=k, n_iter=iterations, alpha=ALPHA, eta=BETA, random_state=seed, refresh=10**9)
    t0 = time.perf_counter()
    model.fit(x)
    seconds = max(time.perf_counter() - t0 - init, 1e-9)
    ll = log_joint_from_counts(model.ndz_, model.nzw_, ALPHA, BETA) / corpus.n_tokens
    tps = corpus.n_tokens * iterations / seconds
    own = model.loglikelihood() / corpus.n_tokens
    return Row("lda package", 1, tps, seconds, None, ll, float(own), f"init {init:.1f} s excluded")


def table(rows: list[Row]) -> str:
    ref = {r.threads: r for r in rows if r.name.startswith("tomotopy")}
    head = f"{'':30} {'M tok/s':>8} {'x tomotopy':>10} {'sample s':>9} {'wall s':>7} {'ll/token':>9} " \
           f"{'- tomotopy':>10} {'own':>9}  note"
    out = [head, "-" * len(head)]
    for r in rows:
        t = ref.get(min(r.threads, 2))
        ratio = f"{r.tokens_per_s / t.tokens_per_s:10.2f}" if t is not None else f"{'-':>10}"
        dll = f"{r.ll - t.ll:+10.4f}" if t is not None else f"{'-':>10}"
        wall = f"{r.wall:7.1f}" if r.wall is not None else f"{'-':>7}"
        own = f"{r.own_ll:9.4f}" if r.own_ll is not None else f"{'-':>9}"
        out.append(f"{r.name:30} {r.tokens_per_s / 1e6:8.2f} {ratio} {r.seconds:9.1f} {wall} {r.ll:9.4f} {dll} "
                   f"{own}  {r.note}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="Reuters (84 k tokens), 20 iterations: a smoke test")
    p.add_argument("--corpus", help="LDA-C corpus (default: 20NG, or Reuters with --quick)")
    p.add_argument("--topics", type=int, nargs="+", default=[20, 100])
    p.add_argument("--iterations", type=int, help="default 200 (20 with --quick)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--skip-lda-package", action="store_true", help="the lda package takes ~10 min at K=100 on 20NG")
    p.add_argument("--whole-process", action="store_true",
                   help="time `mcmc lda` and tomotopy as separate processes over the K grid (see whole_process)")
    p.add_argument("--repeat", type=int, default=1,
                   help="--whole-process: runs per cell, ours and tomotopy interleaved; times are medians and "
                        "'x tomotopy' the median of the paired ratios (for a machine whose speed drifts)")
    p.add_argument("--corpora", nargs="+", default=["20ng_all_filtered", "ap_blei"],
                   help="--whole-process: LDA-C corpora under ../shared/corpora (default 20 Newsgroups and AP)")
    p.add_argument("--time-to-quality", action="store_true",
                   help="for each K, the wall time at which our whole process first reaches the ll/token tomotopy "
                        "reaches after --targets sweeps, against tomotopy's (see time_to_quality)")
    p.add_argument("--targets", type=int, nargs="+", default=[100, 1000],
                   help="--time-to-quality: tomotopy's sweeps whose ll/token ours must reach")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3],
                   help="--time-to-quality: seeds of both libraries (targets and times are medians over them)")
    args = p.parse_args(argv)
    if args.whole_process:
        return whole_process(args)
    if args.time_to_quality:
        return time_to_quality(args)
    path = args.corpus or os.path.join(CORPORA, "reuters_lda.ldac" if args.quick else "20ng_all_filtered.ldac")
    iterations = args.iterations or (20 if args.quick else 200)

    import tomotopy

    print(f"python {platform.python_version()}, numpy {np.__version__}, tomotopy {tomotopy.__version__} "
          f"({tomotopy.isa}), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    corpus = load_corpus(path)
    print(f"corpus {path}: {corpus.n_docs} documents, {corpus.n_tokens} tokens, {corpus.vocab_size} words "
          f"(read in {time.perf_counter() - t0:.2f} s by mcmc.core.lda.readers)")
    # Compile (or load from numba's cache) every kernel before any clock starts, and check the count formula.
    tiny = synthetic_corpus(np.random.default_rng(0), n_topics=3, vocab_size=30, n_docs=20, doc_length=10).corpus
    for method in ("collapsed", "partial"):
        for kernel in ("dense", "sparse"):
            fit(tiny, n_topics=3, alpha=ALPHA, beta=BETA, iterations=2, burn_in=1, method=method, kernel=kernel,
                threads=2, chains=2)
    check_count_formula(tiny, args.seed)
    print(f"{iterations} iterations, alpha {ALPHA}, beta {BETA}, seed {args.seed}; numba compilation excluded; "
          "ll/token = our collapsed log p(w, z) / N on each library's final assignments\n")

    for k in args.topics:
        rows = [
            run_ours(corpus, k, iterations, args.seed, chains=1, threads=1),
            run_tomotopy(corpus, k, iterations, args.seed, workers=1),
        ]
        if not args.skip_lda_package:
            rows.append(run_lda_package(corpus, k, iterations, args.seed))
        rows += [
            run_ours(corpus, k, iterations, args.seed, chains=2, threads=2),
            run_ours(corpus, k, iterations, args.seed, chains=1, threads=2, method="partial"),
            run_tomotopy(corpus, k, iterations, args.seed, workers=2),
        ]
        print(f"K = {k}")
        print(table(rows))
        print(flush=True)
    return 0


WHOLE_GRID = (20, 50, 100, 200, 500)
HERE = os.path.dirname(os.path.abspath(__file__))


class ProcessRun(NamedTuple):
    """One child process: wall seconds, CPU seconds (user + system), peak resident MB, stdout."""

    wall: float
    cpu: float
    mb: float
    out: str


def _process(argv: list[str]) -> ProcessRun:
    """Run ``argv`` to its end; its own wall and CPU time and peak memory (``wait4``: this child alone)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage (RUSAGE_CHILDREN would be the max of all)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {err.read().strip()[-400:]}")
        return ProcessRun(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read())


def _mcmc_lda(path: str, k: int, iterations: int, seed: int, chains: int = 1, threads: int = 1) -> list[str]:
    """The command line of one `mcmc lda` run as a user types it (``--no-check``: short runs exit 0 all the same)."""
    mcmc = os.path.join(os.path.dirname(sys.executable), "mcmc")
    return [mcmc, "lda", path, "-k", str(k), "--iterations", str(iterations), "--chains", str(chains),
            "--threads", str(threads), "--seed", str(seed), "--no-check", "-f", "json"]


def _ours(path: str, k: int, iterations: int, seed: int, chains: int, threads: int) -> tuple[float, float, float]:
    wall, _, mb, out = _process(_mcmc_lda(path, k, iterations, seed, chains, threads))
    import json

    doc = json.loads(out)
    return wall, mb, float(np.mean([c["final_log_joint_per_token"] for c in doc["chains"]]))


def _tomotopy(path: str, k: int, iterations: int, seed: int, workers: int) -> tuple[float, float, float]:
    import json

    wall, _, mb, out = _process([sys.executable, os.path.join(HERE, "lda_tomotopy_process.py"), path, str(k),
                              str(iterations), str(seed), str(workers)])
    return wall, mb, float(json.loads(out)["ll_per_token"])


def whole_process(args: argparse.Namespace) -> int:
    """Both libraries as whole processes from the command line, over K in 20 50 100 200 500.

    Each cell is one process started from nothing: start-up and imports,
    reading the corpus, compiling or loading kernels, ``--iterations`` sweeps
    (default 100), the log-likelihood trace and writing (``mcmc lda`` prints
    its JSON report, tomotopy its ll/word). Peak memory is that process's
    maximum resident set (``wait4``). Rows: ours 1 chain / 1 thread against
    tomotopy 1 worker (the per-thread ratio), and ours 2 chains on 2 threads
    against 2 x our one-thread time (the two-thread scaling). ll/token is each
    library's own figure after the last sweep: our collapsed log joint per
    token, tomotopy's ``ll_per_word`` (which equals it to about 1e-4 on the
    same assignments, checked by the default mode of this script).
    Before the grid, one untimed run of each kernel fills numba's on-disk
    cache, as the first use after installation does: no cell pays compilation.
    With ``--repeat N`` each cell runs N times, the three processes
    interleaved (ours, tomotopy, ours on two threads), so a drift in the
    machine's speed meets both libraries alike; times are medians and the
    per-thread ratio is the median of the N paired ratios.
    """
    iterations = args.iterations or 100
    import tomotopy

    print(f"python {platform.python_version()}, numpy {np.__version__}, tomotopy {tomotopy.__version__} "
          f"({tomotopy.isa}), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
          f"{iterations} sweeps, alpha {ALPHA}, beta {BETA}, seed {args.seed}, whole processes\n")
    grid = args.topics if args.topics != [20, 100] else list(WHOLE_GRID)
    warm = os.path.join(CORPORA, "reuters_lda.ldac")
    for k in (min(grid), max(grid)):  # dense and sparse kernels into numba's cache
        _ours(warm, k, 2, args.seed, chains=2, threads=2)
    print("| corpus | K | ours s | tomotopy s | × tomotopy | ours MB | tomotopy MB | memory ratio | ours ll/token "
          "| − tomotopy's | ours 2 chains / 2 threads s | 2-thread scaling |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.corpora:
        path = os.path.join(CORPORA, f"{name}.ldac")
        for k in grid:
            runs = []
            for _ in range(args.repeat):
                ours = _ours(path, k, iterations, args.seed, chains=1, threads=1)
                tp = _tomotopy(path, k, iterations, args.seed, workers=1)
                two = _ours(path, k, iterations, args.seed, chains=2, threads=2)
                runs.append((ours, tp, two))
            t_ours, t_tp, t_two = (float(np.median([r[j][0] for r in runs])) for j in range(3))
            ratio = float(np.median([tp[0] / ours[0] for ours, tp, _ in runs]))
            (_, mb_ours, ll_ours), (_, mb_tp, ll_tp), _ = runs[0]  # the same seed: the same memory and ll
            print(f"| {name} | {k} | {t_ours:.1f} | {t_tp:.1f} | {ratio:.2f} | {mb_ours:.0f} | {mb_tp:.0f} | "
                  f"{mb_ours / mb_tp:.2f} | {ll_ours:.4f} | {ll_ours - ll_tp:+.4f} | {t_two:.1f} | "
                  f"{2 * t_ours / t_two:.2f} |", flush=True)
    return 0


class _Reached(Exception):
    """Raised from the trace's callback: the chain has reached every target (or run out of time)."""


def _our_trace(corpus: Corpus, k: int, seed: int, targets: list[float], limit: float) -> list[float]:
    """Our chain's ll/token after each sweep, in this process, until it reaches ``max(targets)``.

    The library call `mcmc lda -k K --seed S --chains 1 --threads 1` makes, with its options (so the same chain,
    sweep for sweep: checked against the timed process's final figure), stopped from the callback once the last
    target is reached or after ``limit`` CPU seconds of this thread.
    """
    trace: list[float] = []
    goal = max(targets)
    t0 = time.thread_time()

    def record(chain: int, it: int, ll: float) -> None:
        trace.append(ll)
        if ll >= goal or time.thread_time() - t0 > limit:
            raise _Reached

    try:
        fit(corpus, n_topics=k, alpha=ALPHA, beta=BETA, iterations=10**6, burn_in=10**6 - 1, chains=1, seed=seed,
            threads=1, callback=record, keep_theta=False)
    except _Reached:
        pass
    return trace


class Mark(NamedTuple):
    """tomotopy at a checkpoint: seconds from launch (wall, and CPU of its process), ll/token (ours, its own)."""

    wall: float
    cpu: float
    ll: float
    own_ll: float


def _tomotopy_checkpoints(path: str, corpus: Corpus, k: int, seed: int, targets: list[int], tmp: str) -> dict[int, Mark]:
    """tomotopy's whole process (one worker) trained to each of ``targets`` sweeps in turn: a :class:`Mark` per target.

    Its assignments at each checkpoint are scored with our collapsed log joint; the time spent writing them
    (untimed in the child) is subtracted from both clocks.
    """
    import json
    import subprocess

    prefix = os.path.join(tmp, f"tomotopy-{k}-{seed}-")
    argv = [sys.executable, os.path.join(HERE, "lda_tomotopy_process.py"), path, str(k), str(max(targets)),
            str(seed), "1", "--checkpoints", *map(str, sorted(targets)), "--assignments", prefix]
    launch = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    freq = np.bincount(corpus.words, minlength=corpus.vocab_size)
    marks = {}
    for line in out.splitlines():
        mark = json.loads(line)
        n = mark["sweeps"]
        with np.load(f"{prefix}{n}.npz") as f:
            words, z, lengths = f["words"], f["z"], f["lengths"]
        assert np.array_equal(np.bincount(words, minlength=corpus.vocab_size), freq), "tomotopy's tokens differ"
        doc_ptr = np.concatenate([[0], np.cumsum(lengths)])
        ll = collapsed_log_joint(doc_ptr, words, z, n_topics=k, vocab_size=corpus.vocab_size, alpha=ALPHA,
                                 beta=BETA) / corpus.n_tokens
        marks[n] = Mark(mark["clock"] - launch - mark["paused"], mark["cpu"] - mark["paused_cpu"], float(ll),
                        float(mark["ll_per_token"]))
    return marks


def _first_reach(trace: list[float], target: float) -> int | None:
    """The first sweep (1-based) whose ll/token is at least ``target``, or ``None``."""
    hits = np.nonzero(np.asarray(trace) >= target)[0]
    return int(hits[0]) + 1 if hits.size else None


@dataclass
class Cell:
    """One corpus, K and target of the time-to-quality table."""

    corpus: str
    k: int
    sweeps: int  # tomotopy's sweeps that set the target
    target: float
    tomotopy_lls: list[float]
    tomotopy: Mark  # medians over the seeds (wall, cpu)
    ours_sweeps: list[int | None]
    ours_wall: float
    ours_cpu: float
    floor_wall: float
    floor_cpu: float
    load: float

    def ratio(self, clock: str) -> float:
        ours = getattr(self, f"ours_{clock}")
        return getattr(self.tomotopy, clock) / ours if np.isfinite(ours) else 0.0


def time_to_quality(args: argparse.Namespace) -> int:
    """Time to quality, as the LDA-sampler literature compares samplers (log-likelihood against time).

    For each corpus and K, and each target T in ``--targets`` (tomotopy's sweeps, default 100 and 1000):

    * **tomotopy**, one whole process per seed (``lda_tomotopy_process.py --checkpoints``, one worker), trained to
      each target in turn. Its time to T sweeps runs from its launch (the parent's clock just before it) to the
      moment ``train`` has done T sweeps and ``ll_per_word`` is computed: start-up, reading, adding documents and
      the sweeps; the untimed writing of assignments at earlier checkpoints is subtracted. Its ll at T is OUR
      collapsed log joint per token on its assignments at that point (so both libraries are judged by one
      log-likelihood; its own ``ll_per_word`` agrees to about 1e-4). The **target** is the median of that ll
      over the seeds; tomotopy's time is the median over the seeds.
    * **ours**, per seed: the chain's ll/token after every sweep, computed in this process by the library call
      `mcmc lda` makes (same options, same seed: the same chain), gives the first sweep n at which it reaches the
      target. Our time is that of the whole process `mcmc lda CORPUS -k K --iterations n --chains 1 --threads 1
      --seed S --no-check -f json` from launch to exit: start-up, reading, loading kernels, n sweeps
      with the log-likelihood trace and the running estimates, the report. That is the first whole process that
      reaches the target (its final ll/token is checked equal to the trace's); its report and exit count against
      us. Our time is the median over the seeds; a seed that does not reach the target within 1.5 x tomotopy's
      CPU time of sampling counts as never.

    Each time is taken on two clocks: **wall** seconds (the issue's measure, exact on a quiet machine) and the
    process's **CPU** seconds (user + system; tomotopy's ``process_time()`` at the checkpoint, ours from
    ``wait4``). Both programs are single-threaded here, so the CPU time is what the wall time would be on an idle
    machine; on a machine busy with other work, the wall time of either grows with the load and its noise, while
    the CPU time hardly moves, so the CPU ratio is the one to read on a loaded machine. Printed beside: the sweeps
    each seed of ours needed, our start-up floor (the whole process with one sweep, median of three) so the
    share of start-up shows, and the load average when the cell ended.
    """
    import json
    import tempfile

    import tomotopy

    targets = sorted(args.targets)
    print(f"python {platform.python_version()}, numpy {np.__version__}, tomotopy {tomotopy.__version__} "
          f"({tomotopy.isa}), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; alpha {ALPHA}, "
          f"beta {BETA}, seeds {' '.join(map(str, args.seeds))}, one thread / one worker, whole processes\n",
          flush=True)
    grid = args.topics if args.topics != [20, 100] else list(WHOLE_GRID)
    warm = os.path.join(CORPORA, "reuters_lda.ldac")
    for k in (min(grid), max(grid)):  # every kernel into numba's cache: no timed process compiles
        _ours(warm, k, 30, args.seed, chains=1, threads=1)
    cells: list[Cell] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.corpora:
            path = os.path.join(CORPORA, f"{name}.ldac")
            corpus = load_corpus(path)
            fit(corpus, n_topics=min(grid), alpha=ALPHA, beta=BETA, iterations=1, burn_in=0)  # compile in-process
            for k in grid:
                floors = [_process(_mcmc_lda(path, k, 1, args.seed)) for _ in range(3)]
                marks: dict[int, list[Mark]] = {n: [] for n in targets}
                for seed in args.seeds:
                    for n, mark in _tomotopy_checkpoints(path, corpus, k, seed, targets, tmp).items():
                        marks[n].append(mark)
                target = {n: float(np.median([m.ll for m in marks[n]])) for n in targets}
                t_tp = {n: Mark(*(float(np.median([getattr(m, f) for m in marks[n]])) for f in Mark._fields))
                        for n in targets}
                # sampling beyond 1.5 x tomotopy's whole process cannot make a ratio worth telling from < 1
                traces = [(seed, _our_trace(corpus, k, seed, list(target.values()), 1.5 * t_tp[targets[-1]].cpu))
                          for seed in args.seeds]
                for n in targets:
                    runs, sweeps = [], []
                    for seed, trace in traces:
                        first = _first_reach(trace, target[n])
                        sweeps.append(first)
                        if first is None:
                            runs.append((np.inf, np.inf))
                            print(f"{name} K={k} T={n} seed {seed}: ours not there after {len(trace)} sweeps "
                                  f"(best ll/token {max(trace):.4f}, at sweep {n} {trace[min(n, len(trace)) - 1]:.4f}, last "
                                  f"{trace[-1]:.4f}; target {target[n]:.4f})",
                                  flush=True)
                            continue
                        run = _process(_mcmc_lda(path, k, first, seed))
                        final = json.loads(run.out)["chains"][0]["final_log_joint_per_token"]
                        assert abs(final - trace[first - 1]) <= 1e-12 * abs(final), (final, trace[first - 1])
                        runs.append((run.wall, run.cpu))
                    cell = Cell(name, k, n, target[n], [m.ll for m in marks[n]], t_tp[n], sweeps,
                                float(np.median([r[0] for r in runs])), float(np.median([r[1] for r in runs])),
                                float(np.median([f.wall for f in floors])), float(np.median([f.cpu for f in floors])),
                                os.getloadavg()[0])
                    cells.append(cell)
                    print(f"{name} K={k} T={n}: target {cell.target:.4f} (tomotopy "
                          f"{' '.join(f'{x:.4f}' for x in cell.tomotopy_lls)}); tomotopy {cell.tomotopy.cpu:.2f} s "
                          f"CPU / {cell.tomotopy.wall:.2f} s wall; ours at sweeps "
                          f"{'/'.join('-' if x is None else str(x) for x in sweeps)}: {cell.ours_cpu:.2f} s CPU / "
                          f"{cell.ours_wall:.2f} s wall; x {cell.ratio('cpu'):.2f} CPU, {cell.ratio('wall'):.2f} wall; "
                          f"load {cell.load:.1f}", flush=True)
    for n in targets:
        print(f"\nTarget: the ll/token tomotopy reaches after {n} sweeps (median over seeds). Seconds: CPU (wall)\n")
        print("| corpus | K | target ll/token | tomotopy s | ours sweeps (per seed) | ours s | × tomotopy CPU (wall) "
              "| ours 1-sweep process s | load |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c in (c for c in cells if c.sweeps == n):
            sweeps = " / ".join("-" if x is None else str(x) for x in c.ours_sweeps)
            ours = f"{c.ours_cpu:.1f} ({c.ours_wall:.1f})" if np.isfinite(c.ours_cpu) else "never"
            ratio = f"**{c.ratio('cpu'):.2f}** ({c.ratio('wall'):.2f})" if np.isfinite(c.ours_cpu) else "< 0.67"
            print(f"| {c.corpus} | {c.k} | {c.target:.4f} | {c.tomotopy.cpu:.1f} ({c.tomotopy.wall:.1f}) | {sweeps} "
                  f"| {ours} | {ratio} | {c.floor_cpu:.2f} ({c.floor_wall:.2f}) | {c.load:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
