"""Fit LDA on real and synthetic corpora and keep what the topic-model verdict needs (tests/data/lda_gate).

Run from the repository root, one run at a time (each chain on one thread)::

    python tests/data/lda_gate/make_fixtures.py            # every run not stored yet
    python tests/data/lda_gate/make_fixtures.py 20ng_k20   # the runs whose name starts with this
    python tests/data/lda_gate/make_fixtures.py --list     # the runs and whether they are stored
    python tests/data/lda_gate/make_fixtures.py --table    # the README's table of statistics, from the stored runs

The real corpora are read from the project's shared folder
(``/work/shared/corpora``, or ``$MCMC_CORPORA``); the tests read only the
stored ``.npz`` files. Every run is ``mcmc lda`` with its defaults (collapsed
Gibbs, alpha 0.1, beta 0.01, burn-in half of the iterations), 4 chains; chain
``c`` depends only on the seed and ``c``, so the first two chains of a run are
the 2-chain run of the same seed.

Each run is one compressed ``.npz``, named ``{corpus}_k{K}_it{iterations}_s{seed}.npz``:

``trace``
    float64 (chain, iteration): the log joint per token after every sweep,
    burn-in included (``LdaFit.log_joint_per_token``).
``top_ids``, ``top_prob``
    uint16 / float32 (chain, K, n): per chain and topic the n most probable
    words of phi (the post-burn-in average), most probable first, and their
    probabilities; n = 100 for the 1000-iteration runs on 20 Newsgroups and
    AP, 50 for the other 1000-iteration runs, 20 for the shorter runs (to keep
    the folder small). The first 20 columns are the top 20 words.
``burn_in``, ``iterations``, ``seed``, ``n_topics``, ``n_tokens``, ``n_docs``,
``vocab_size``, ``alpha``, ``beta``, ``seconds``
    scalars; ``corpus`` and ``kernel`` strings.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
CORPORA = Path(os.environ.get("MCMC_CORPORA", "/work/shared/corpora"))
CHAINS = 4


def n_keep(name: str, iterations: int) -> int:
    """Words of phi kept per topic: 100 for the long runs on the large corpora, 50 and 20 elsewhere (size)."""
    if iterations < 1000:
        return 20
    return 100 if name in ("20ng", "ap") else 50

#: (name, corpus path or None for the synthetic corpus, K, iterations, seeds)
RUNS: list[tuple[str, Path | None, int, tuple[int, ...], tuple[int, ...]]] = [
    ("20ng", CORPORA / "20ng_all_filtered.ldac", 20, (20, 50, 200, 500, 1000), (1, 2, 3)),
    ("ap", CORPORA / "ap_blei.ldac", 50, (20, 50, 200, 500, 1000), (1, 2, 3)),
    ("reuters50", ROOT / "tests/data/lda/reuters50.ldac", 8, (20, 200, 1000), (1, 2, 3)),
    ("reuters50", ROOT / "tests/data/lda/reuters50.ldac", 50, (20, 200, 1000), (1, 2, 3)),
    ("synthetic", None, 10, (20, 200, 1000), (1, 2, 3, 4, 5)),
]


def run_names() -> list[tuple[str, Path | None, int, int, int, int]]:
    out = []
    for name, path, k, iterations, seeds in RUNS:
        for it in iterations:
            for seed in seeds:
                out.append((f"{name}_k{k}_it{it}_s{seed}", path, k, it, seed, n_keep(name, it)))
    return out


def top_of(phi: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` most probable words of every topic, (chain, K, n), most probable first."""
    idx = np.argpartition(-phi, n - 1, axis=-1)[..., :n]
    p = np.take_along_axis(phi, idx, axis=-1)
    order = np.argsort(-p, axis=-1, kind="stable")
    return np.take_along_axis(idx, order, axis=-1), np.take_along_axis(p, order, axis=-1)


def fit_one(path: Path | None, k: int, iterations: int, seed: int, keep: int) -> dict[str, np.ndarray]:
    from mcmc.core.lda.config import LdaConfig, default_burn_in
    from mcmc.core.lda.pipeline import fit_lda, load_input

    data = load_input(path)
    config = LdaConfig(n_topics=k, iterations=iterations, burn_in=default_burn_in(iterations), chains=CHAINS,
                       seed=seed, threads=1, keep_theta=False)  # fmt: skip
    t0 = time.perf_counter()
    run = fit_lda(data, config)
    seconds = time.perf_counter() - t0
    f = run.fit
    ids, prob = top_of(f.phi, min(keep, f.phi.shape[-1]))
    assert f.phi.shape[-1] < 2**16
    return {
        "trace": np.asarray(f.log_joint_per_token, dtype=np.float64),
        "top_ids": ids.astype(np.uint16),
        "top_prob": prob.astype(np.float32),
        "burn_in": np.array(f.burn_in),
        "iterations": np.array(f.iterations),
        "seed": np.array(seed),
        "n_topics": np.array(k),
        "n_tokens": np.array(run.train.n_tokens),
        "n_docs": np.array(run.train.n_docs),
        "vocab_size": np.array(run.train.vocab_size),
        "alpha": np.array(f.alpha),
        "beta": np.array(f.beta),
        "seconds": np.array(seconds),
        "corpus": np.array("synthetic" if path is None else path.name),
        "kernel": np.array(f.kernel),
    }


def dense_phi(d: dict[str, np.ndarray]) -> np.ndarray:
    """The stored truncated phi as (chain, K, V), zeros outside each topic's stored top words."""
    ids = d["top_ids"].astype(np.int64)
    phi = np.zeros(ids.shape[:2] + (int(d["vocab_size"]),))
    np.put_along_axis(phi, ids, d["top_prob"].astype(np.float64), axis=-1)
    return phi


def table() -> str:
    """Markdown table: every statistic the rule was chosen from, per stored run (4 chains; 2 = the first two)."""
    from mcmc.diagnostics import stats
    from mcmc.diagnostics.stats import coda
    from mcmc.diagnostics.report.lda_gate import judge_topic_model

    head = ("| run | iter | rise / climb, max (min) | z of rise, min / max | 1-chain split R-hat, max "
            "| Geweke abs z, max | R-hat across 2 / 4 chains | gap - 2 se, max | gap, max | top-10 overlap 2 / 4 "
            "| verdict 2 / 4 |")  # fmt: skip
    lines = [head, "|" + "---|" * (head.count("|") - 1)]

    def verdict(v) -> str:
        if v.passed:
            return "pass (modes)" if v.status == "warning" else "pass"
        why = (("trend", v.trending), ("worse", v.worse), ("short", not v.judged), ("nan", v.nonfinite))
        return "FAIL " + ",".join(w for w, on in why if on)

    for name, *_ in run_names():
        path = HERE / f"{name}.npz"
        if not path.exists():
            continue
        with np.load(path) as f:
            d = {k: f[k] for k in f.files}
        trace, b = d["trace"], int(d["burn_in"])
        post = trace[:, b:]
        phi = dense_phi(d)
        v4 = judge_topic_model(trace, b, phi=phi)
        v2 = judge_topic_model(trace[:2], b, phi=phi[:2])
        stat = [t.statistic for t in v4.trends]
        z = [t.z for t in v4.trends]
        r1 = [float(stats.rhat(post[c][None, :, None])[0]) for c in range(post.shape[0])]
        gz = np.abs(coda.geweke(post[:, :, None])).max()
        rh2, rh4 = (float(stats.rhat(post[:c, :, None])[0]) for c in (2, 4))
        gap_lo = max(g - 2 * s for g, s in zip(v4.ll_gap, v4.ll_gap_se, strict=True))
        cells = [
            f"{name.rsplit('_it', 1)[0]} s{int(d['seed'])}", f"{int(d['iterations'])}",
            f"{max(stat):.2%} ({min(stat):.2%})", f"{min(z):.1f} / {max(z):.1f}", f"{max(r1):.3f}", f"{gz:.1f}",
            f"{rh2:.3f} / {rh4:.3f}", f"{gap_lo:+.4f}", f"{max(v4.ll_gap):.4f}",
            f"{v2.topic_overlap:.2f} / {v4.topic_overlap:.2f}", f"{verdict(v2)} / {verdict(v4)}",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def versions() -> dict[str, str]:
    import scipy

    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "mcmc_commit": commit, "machine": platform.machine()}  # fmt: skip


def main(argv: list[str]) -> int:
    runs = run_names()
    if "--table" in argv:
        print(table())
        return 0
    if "--list" in argv:
        for name, *_ in runs:
            print(name, "stored" if (HERE / f"{name}.npz").exists() else "-")
        return 0
    prefixes = [a for a in argv if not a.startswith("-")]
    for name, path, k, it, seed, keep in runs:
        target = HERE / f"{name}.npz"
        if target.exists() or (prefixes and not any(name.startswith(p) for p in prefixes)):
            continue
        arrays = fit_one(path, k, it, seed, keep)
        np.savez_compressed(target, **arrays)
        print(f"{name}: {float(arrays['seconds']):.1f} s, {target.stat().st_size / 1024:.0f} kB", flush=True)
    print(json.dumps(versions()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
