"""Scale-out benchmark: `--scheduler` on 1 and 2 Dask worker processes against a plain local run.

Figures for docs/scale-out.md, printed as Markdown:

* ``sample``: 64 chains of rwm on an expensive user target (a logistic
  regression written in the user's file: 20,000 rows x 10 predictors, the
  likelihood costs about a millisecond per chain and call), 100 warm-up and
  100 sampling iterations; plain local run, ``local:1`` and ``local:2``
  (blocks of chains as tasks, :func:`mcmc.core.scaleout.run_blocks`).
* ``lda``: the partially collapsed sampler on 20 Newsgroups
  (``/work/shared/corpora/20ng_all_filtered.ldac``), K = 100, 2 chains x
  ITER sweeps; plain local run (1 thread), ``local:1`` and ``local:2``
  (every chain a task, :func:`mcmc.core.scaleout.fit_chains`).
* ``lda`` sharded: one partially collapsed chain of the same run with its
  documents split over 1 and 2 worker processes
  (:func:`mcmc.core.scaleout.fit_sharded`), against the local run on 1 and
  2 threads, and the bytes it moves per sweep (measured by the run).
* bytes: the pickled size of what one task carries (job or corpus) and of
  what it returns.

Every scale-out result is checked equal to the local one. The machine this
ran on has two cores shared with other work: the times are noisy; rerun to
see the spread. Wall times include starting the LocalCluster (about 1 s).

    .venv/bin/python bench/scale.py [--iterations 20] [--skip-lda]
"""

from __future__ import annotations

import argparse
import os
import pickle
import tempfile
import time
from pathlib import Path

import numpy as np

from mcmc.core.chains import npz_bytes
from mcmc.core.lda.gibbs import fit
from mcmc.core.lda.readers import load_corpus
from mcmc.core.scaleout import ChainsJob, fit_chains, fit_sharded, run_block, run_blocks

CORPUS = Path("/work/shared/corpora/20ng_all_filtered.ldac")

MODEL = '''
import numpy as np
_rng = np.random.default_rng(0)
X = _rng.normal(size=(20000, 10))
y = (_rng.random(20000) < 1 / (1 + np.exp(-X @ np.linspace(-1, 1, 10)))).astype(float)
dim = 10
def log_density(b):
    eta = np.einsum("cj,nj->cn", b, X)  # row by row: a chain's value never depends on the batch
    return (y * eta - np.logaddexp(0.0, eta)).sum(axis=1) - 0.5 * (b ** 2).sum(axis=1)
'''


def timed(fn):  # noqa: ANN001, ANN201
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_sample(rows: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "expensive.py"
        path.write_text(MODEL)
        job = ChainsJob(target=str(path), sampler="rwm", seed=1, warmup=100, draws=100)
        ids = range(64)
        local, t_local = timed(lambda: run_block(job, ids))
        rows.append(f"| sample, 64 chains, expensive user target | local (1 process) | {t_local:.1f} | 1.00 |")
        remote_job = ChainsJob(target=str(path), sampler="rwm", seed=1, warmup=100, draws=100, target_text=MODEL)
        for n in (1, 2):
            run, t = timed(lambda n=n: run_blocks(remote_job, ids, f"local:{n}"))
            assert npz_bytes(run.chains) == npz_bytes(local.chains), "scale-out changed the chains"
            rows.append(f"| | local:{n} ({n} worker process{'es' if n > 1 else ''}) | {t:.1f} | {t_local / t:.2f} |")
        block = run_block(job, range(16))
        print(f"sample: per task sent {len(pickle.dumps(remote_job)):,} B (job with the user file's source), "
              f"returned {len(pickle.dumps(block)):,} B for a block of 16 chains")


def bench_lda(rows: list[str], iterations: int) -> None:
    corpus = load_corpus(CORPUS)
    options = dict(n_topics=100, alpha=0.1, beta=0.01, iterations=iterations, burn_in=iterations // 2, chains=2,
                   seed=1, method="partial", threads=1)
    fit(corpus, **{**options, "iterations": 2, "burn_in": 0, "chains": 1})  # compile before the clock
    local, t_local = timed(lambda: fit(corpus, **options))
    label = f"lda partial, 20NG, K=100, 2 chains x {iterations} sweeps"
    rows.append(f"| {label} | local (1 thread) | {t_local:.1f} | 1.00 |")
    for n in (1, 2):
        result, t = timed(lambda n=n: fit_chains(corpus, options, f"local:{n}"))
        for name in ("log_joint", "theta", "phi", "z"):
            assert np.array_equal(getattr(result, name), getattr(local, name)), name
        rows.append(f"| | local:{n} ({n} worker process{'es' if n > 1 else ''}) | {t:.1f} | {t_local / t:.2f} |")
    one = fit(corpus, **{**options, "chains": 1, "iterations": 2, "burn_in": 0})
    print(f"lda: corpus {corpus.n_docs:,} documents, {corpus.n_tokens:,} tokens, V = {corpus.vocab_size:,}; "
          f"scattered once {len(pickle.dumps(corpus)):,} B; one chain's result {len(pickle.dumps(one)):,} B")
    bench_sharded(rows, corpus, {**options, "chains": 1})


def bench_sharded(rows: list[str], corpus, options: dict) -> None:  # noqa: ANN001
    """One chain of partial LDA with its documents sharded over 1 and 2 worker processes."""
    local, t_local = timed(lambda: fit(corpus, **options))
    local2, t_local2 = timed(lambda: fit(corpus, **{**options, "threads": 2}))
    label = f"lda partial, 20NG, K=100, **1 chain sharded**, {options['iterations']} sweeps"
    rows.append(f"| {label} | local (1 thread) | {t_local:.1f} | 1.00 |")
    rows.append(f"| | local (2 threads) | {t_local2:.1f} | {t_local / t_local2:.2f} |")
    for n in (1, 2):
        traffic: dict[str, float] = {}
        # the client draws phi on 2 threads while the workers wait (the result does not depend on threads)
        result, t = timed(lambda n=n, traffic=traffic: fit_sharded(corpus, {**options, "threads": 2}, f"local:{n}",
                                                                   traffic=traffic))
        for name in ("log_joint", "theta", "phi", "z"):
            assert getattr(result, name).tobytes() == getattr(local, name).tobytes(), name
        rows.append(f"| | local:{n} ({n} shard{'s' if n > 1 else ''} on {n} worker process{'es' if n > 1 else ''}, "
                    "client 2 threads) "
                    f"| {t:.1f} | {t_local / t:.2f} |")
        print(f"sharded on {n} worker(s): per sweep {traffic['out_per_sweep']:,.0f} B sent to each worker "
              f"(phi, and the shards' topics once at the start, averaged), {traffic['in_per_sweep']:,.0f} B of "
              "topics gathered from all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--skip-lda", action="store_true")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores (shared with other work: times are noisy)\n")
    rows = ["| run | where | wall s | speed-up |", "|---|---|---:|---:|"]
    bench_sample(rows)
    if not args.skip_lda and CORPUS.exists():
        bench_lda(rows, args.iterations)
    print()
    print("\n".join(rows))


if __name__ == "__main__":
    main()
