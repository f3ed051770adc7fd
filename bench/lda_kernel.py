"""Kernel micro-benchmark: our collapsed Gibbs sweeps against tomotopy, per thread.

Runs, in one process and back to back (the machine may be shared, so compare
the ratios, not absolute numbers; single-thread rows are also given in CPU
seconds, which other processes disturb less than wall-clock time):

* tomotopy 0.14 ``LDAModel(k=K, alpha, eta=beta, seed)`` with
  ``optim_interval = 0`` (tomotopy re-estimates an *asymmetric* alpha every 10
  iterations by default, which would make the models differ), trained with
  ``workers=1``; its ``ll_per_word`` is the collapsed ``log p(w, z) / N``
  (checked here against :func:`mcmc.core.lda.likelihood.collapsed_log_joint`
  on tomotopy's own final assignments);
* ``mcmc.core.lda.gibbs.fit`` with the auto, dense and sparse kernels, one
  chain, one thread; its sampling time excludes numba compilation and the
  per-iteration log joint;
* thread scaling: two chains on two threads against one chain on one thread
  (exact), and the partially collapsed sampler on one and two threads.

Usage::

    python bench/lda_kernel.py [--corpus FILE.ldac] [--topics 20 100] [--iterations 200]
                               [--max-docs N] [--skip-scaling] [--skip-kernels] [--skip-tomotopy]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from mcmc.core.lda import gibbs, likelihood
from mcmc.core.lda.corpus import Corpus

DEFAULT = Path("/work/shared/corpora/20ng_all_filtered.ldac")


def load_ldac(path: Path, max_docs: int | None) -> Corpus:
    """LDA-C ``M id:count ...`` lines -> Corpus (tokens of a document grouped by word)."""
    ids, counts, lengths = [], [], []
    for line in path.read_text().splitlines()[:max_docs]:
        pairs = np.array([p.split(":") for p in line.split()[1:]], dtype=np.int64).reshape(-1, 2)
        ids.append(pairs[:, 0])
        counts.append(pairs[:, 1])
        lengths.append(pairs[:, 1].sum())
    words = np.repeat(np.concatenate(ids), np.concatenate(counts)).astype(np.int32)
    vocab = tuple(f"w{i}" for i in range(int(words.max()) + 1))
    return Corpus(np.concatenate([[0], np.cumsum(lengths)]), words, vocab)


def run_tomotopy(corpus: Corpus, k: int, alpha: float, beta: float, iterations: int, seed: int) -> dict:
    import tomotopy as tp

    model = tp.LDAModel(k=k, alpha=alpha, eta=beta, seed=seed)
    model.optim_interval = 0
    for d in range(corpus.n_docs):
        tokens = corpus.words[corpus.doc_ptr[d]:corpus.doc_ptr[d + 1]]
        if tokens.size:
            model.add_doc([corpus.vocab[w] for w in tokens])
    model.train(0, workers=1)  # initial assignments, outside the timing
    t0, c0 = time.perf_counter(), time.process_time()
    model.train(iterations, workers=1)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    # tomotopy's ll_per_word against our collapsed joint of its own state
    ids = {w: i for i, w in enumerate(model.used_vocabs)}
    doc_ptr, words, z = [0], [], []
    for doc in model.docs:
        words.extend(ids[model.vocabs[w]] for w in doc.words)
        z.extend(doc.topics)
        doc_ptr.append(len(words))
    ours = likelihood.collapsed_log_joint(np.array(doc_ptr), np.array(words), np.array(z), n_topics=k,
                                          vocab_size=len(ids), alpha=alpha, beta=beta) / len(words)
    updates = corpus.n_tokens * iterations
    return {"tokens_per_s": updates / seconds, "cpu_tokens_per_s": updates / cpu,
            "ll": model.ll_per_word, "ll_check": ours, "seconds": seconds}


def run_ours(corpus: Corpus, k: int, alpha: float, beta: float, iterations: int, seed: int, **kw) -> dict:
    fit = gibbs.fit(corpus, n_topics=k, alpha=alpha, beta=beta, iterations=iterations, burn_in=iterations - 1,
                    seed=seed, **kw)
    updates = fit.chains * fit.iterations * fit.n_tokens
    return {"tokens_per_s": fit.tokens_per_second, "cpu_tokens_per_s": updates / fit.timings["sampling_cpu"],
            "ll": float(fit.log_joint_per_token[:, -1].mean()), "seconds": fit.sampling_seconds,
            "timings": fit.timings, "kernel": fit.kernel}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT)
    parser.add_argument("--topics", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--max-docs", type=int, default=None)
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--beta", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--skip-tomotopy", action="store_true")
    parser.add_argument("--skip-kernels", action="store_true", help="only the auto kernel, not dense and sparse")
    args = parser.parse_args()
    corpus = load_ldac(args.corpus, args.max_docs)
    print(f"corpus {args.corpus.name}: D={corpus.n_docs} N={corpus.n_tokens} V={corpus.vocab_size}; "
          f"alpha={args.alpha} beta={args.beta} iterations={args.iterations}")
    common = dict(alpha=args.alpha, beta=args.beta, iterations=args.iterations, seed=args.seed)
    for k in args.topics:
        print(f"\nK = {k}")
        print(f"  {'sampler':34s} {'M tok/s wall':>12s} {'vs tomotopy':>11s} {'M tok/s CPU':>11s} "
              f"{'vs tomotopy':>11s} {'ll/token':>9s}")
        rows = {}
        if not args.skip_tomotopy:
            rows["tomotopy (workers=1)"] = run_tomotopy(corpus, k, **common)
        rows["mcmc collapsed auto (1 thread)"] = run_ours(corpus, k, kernel="auto", **common)
        if not args.skip_kernels:
            rows["mcmc collapsed dense (1 thread)"] = run_ours(corpus, k, kernel="dense", **common)
            rows["mcmc collapsed sparse (1 thread)"] = run_ours(corpus, k, kernel="sparse", **common)
        if not args.skip_scaling:
            base = rows["mcmc collapsed auto (1 thread)"]
            two = run_ours(corpus, k, chains=2, threads=2, **common)
            rows["mcmc collapsed 2 chains, 2 threads"] = two
            p1 = run_ours(corpus, k, method="partial", threads=1, **common)
            p2 = run_ours(corpus, k, method="partial", threads=2, **common)
            rows["mcmc partial (1 thread)"] = p1
            rows["mcmc partial (2 threads, 1 chain)"] = p2
        ref = rows.get("tomotopy (workers=1)")
        for name, r in rows.items():
            ratio = f"{r['tokens_per_s'] / ref['tokens_per_s']:.2f}x" if ref else ""
            cratio = f"{r['cpu_tokens_per_s'] / ref['cpu_tokens_per_s']:.2f}x" if ref else ""
            print(f"  {name:34s} {r['tokens_per_s'] / 1e6:12.2f} {ratio:>11s} {r['cpu_tokens_per_s'] / 1e6:11.2f} "
                  f"{cratio:>11s} {r['ll']:9.4f}")
        auto = rows["mcmc collapsed auto (1 thread)"]
        print(f"  (auto kernel: {auto['kernel']})")
        if ref:
            print(f"  (tomotopy ll_per_word {ref['ll']:.5f}; our collapsed joint of its state {ref['ll_check']:.5f})")
        if not args.skip_scaling:
            print(f"  two chains on two threads: {two['tokens_per_s'] / base['tokens_per_s']:.2f}x one chain; "
                  f"partial two threads: {p2['tokens_per_s'] / p1['tokens_per_s']:.2f}x one thread")
        for name, r in rows.items():
            if "timings" in r:
                t = r["timings"]
                print(f"  {name:34s} seconds: sampling {t['sampling']:.2f}, log joint {t['log_joint']:.2f}, "
                      f"estimates {t['estimates']:.2f}")


if __name__ == "__main__":
    main()
