"""tomotopy as a whole process, the peer of `mcmc lda` in `bench/lda.py --whole-process`.

Reads an LDA-C corpus with plain Python (no numpy: what a tomotopy user's
script would do), trains ``tomotopy.LDAModel(k=K, alpha, eta, seed)`` with
hyperparameter optimisation off (``optim_interval = 0``, as ``mcmc lda``
keeps alpha and beta fixed unless asked), computes its log-likelihood per
word after the last sweep (``ll_per_word``; it equals our collapsed log joint
per token to about 1e-4, ``bench/lda.py``), and prints one JSON line.

    python bench/lda_tomotopy_process.py CORPUS.ldac K ITERATIONS SEED WORKERS
"""

from __future__ import annotations

import json
import sys
import time
import warnings


def main() -> None:
    path, k, iterations, seed, workers = sys.argv[1], *map(int, sys.argv[2:6])
    import tomotopy as tp

    model = tp.LDAModel(k=k, alpha=0.1, eta=0.01, seed=seed)
    model.optim_interval = 0
    with open(path) as fh:
        for line in fh:
            fields = line.split()
            words: list[str] = []
            for pair in fields[1:]:
                w, c = pair.split(":")
                words.extend([w] * int(c))
            if words:  # tomotopy refuses empty documents
                model.add_doc(words)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model.train(iterations, workers=workers)
    print(json.dumps({"ll_per_token": float(model.ll_per_word), "train_seconds": time.perf_counter() - t0,
                      "tokens": int(model.num_words)}))


if __name__ == "__main__":
    main()
