"""tomotopy as a whole process, the peer of `mcmc lda` in `bench/lda.py --whole-process` and `--time-to-quality`.

Reads an LDA-C corpus with plain Python (no numpy: what a tomotopy user's
script would do), trains ``tomotopy.LDAModel(k=K, alpha, eta, seed)`` with
hyperparameter optimisation off (``optim_interval = 0``, as ``mcmc lda``
keeps alpha and beta fixed unless asked), computes its log-likelihood per
word after the last sweep (``ll_per_word``; it equals our collapsed log joint
per token to about 1e-4, ``bench/lda.py``), and prints one JSON line.

    python bench/lda_tomotopy_process.py CORPUS.ldac K ITERATIONS SEED WORKERS

With ``--checkpoints N1 N2 ...`` (ascending, the last at most ITERATIONS) it
trains up to each checkpoint in turn (``train(N1)``, ``train(N2 - N1)``, ...)
and prints one JSON line per checkpoint: ``sweeps``, ``clock`` (this process's
``time.monotonic()`` after the sweeps and ``ll_per_word``, the clock every
process on the machine shares, so the parent can subtract its own clock at
launch), ``cpu`` (its ``time.process_time()`` then: CPU seconds since the
process started) and ``paused``/``paused_cpu``, the seconds spent so far
outside the timed work (the dumps below), which the parent subtracts. With ``--assignments PREFIX``
each checkpoint's topic assignments are written, untimed, to
``PREFIX<N>.npz``: ``words`` (the LDA-C word ids, in tomotopy's token order),
``z`` and ``lengths`` (tokens per document), so that the parent can score
them with its own log joint.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("path")
    for name in ("k", "iterations", "seed", "workers"):
        p.add_argument(name, type=int)
    p.add_argument("--checkpoints", type=int, nargs="+")
    p.add_argument("--assignments", help="write each checkpoint's assignments to PREFIX<N>.npz (untimed)")
    args = p.parse_args()
    import tomotopy as tp

    model = tp.LDAModel(k=args.k, alpha=0.1, eta=0.01, seed=args.seed)
    model.optim_interval = 0
    with open(args.path) as fh:
        for line in fh:
            fields = line.split()
            words: list[str] = []
            for pair in fields[1:]:
                w, c = pair.split(":")
                words.extend([w] * int(c))
            if words:  # tomotopy refuses empty documents
                model.add_doc(words)
    t0 = time.perf_counter()
    if not args.checkpoints:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            model.train(args.iterations, workers=args.workers)
        print(json.dumps({"ll_per_token": float(model.ll_per_word), "train_seconds": time.perf_counter() - t0,
                          "tokens": int(model.num_words)}))
        return
    done, paused, paused_cpu = 0, 0.0, 0.0
    for n in args.checkpoints:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            model.train(n - done, workers=args.workers)
        ll = float(model.ll_per_word)
        clock, cpu = time.monotonic(), time.process_time()
        done = n
        print(json.dumps({"sweeps": n, "clock": clock, "paused": paused, "cpu": cpu, "paused_cpu": paused_cpu,
                          "ll_per_token": ll, "tokens": int(model.num_words)}), flush=True)
        if args.assignments:
            _dump(model, f"{args.assignments}{n}.npz")
        paused += time.monotonic() - clock
        paused_cpu += time.process_time() - cpu


def _dump(model, path: str) -> None:  # noqa: ANN001
    import numpy as np

    ids = np.array([int(w) for w in model.vocabs], dtype=np.int32)  # tomotopy's word index -> LDA-C id
    docs = list(model.docs)
    np.savez(path, words=np.concatenate([ids[np.asarray(d.words, dtype=np.int64)] for d in docs]),
             z=np.concatenate([np.asarray(d.topics, dtype=np.int32) for d in docs]),
             lengths=np.array([len(d.words) for d in docs], dtype=np.int64))


if __name__ == "__main__":
    main()
