"""Benchmark: :func:`mcmc.diagnostics.stats.classic.classic_report` on AR(1) draws, each diagnostic timed.

The classic diagnostics run only when asked, so they never touch
``bench/diagnose.py``'s ratio; this script shows what asking costs. Draws of
``chains x draws x params`` (fixed seed, phi from 0 to 0.9), best of
``--repeats`` in-process timings per diagnostic and for the whole report.
Run: ``python bench/classic.py`` (4 x 1000 x 1000, a few seconds on a 2-core
machine) or ``--params 100``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mcmc.diagnostics.stats import classic, coda, emcee_tau, nested_rhat, quantile_ess


def draws(chains: int, n_draws: int, params: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    phi = np.linspace(0.0, 0.9, params)
    e = rng.standard_normal((chains, n_draws, params))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    for t in range(1, n_draws):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


def best(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--params", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    x = draws(a.chains, a.draws, a.params)
    ids = np.arange(a.chains) % 2
    names = [f"p{i}" for i in range(a.params)]
    parts = {
        "gelman_rubin (autoburnin)": lambda: coda.gelman_rubin(x),
        "gelman_rubin (all draws)": lambda: coda.gelman_rubin(x, autoburnin=False),
        "geweke": lambda: coda.geweke(x),
        "heidelberger_welch": lambda: coda.heidelberger_welch(x),
        "raftery_lewis": lambda: coda.raftery_lewis(x),
        "effective_size_ar": lambda: coda.effective_size_ar(x),
        "batch_se + rejection_rate": lambda: (coda.batch_se(x), coda.rejection_rate(x)),
        "rhat_nested": lambda: nested_rhat.rhat_nested(x, ids),
        "quantile_ess_mcse": lambda: quantile_ess.quantile_ess_mcse(x),
        "hdi": lambda: quantile_ess.hdi(x),
        "integrated_time (emcee)": lambda: emcee_tau.integrated_time(x),
        "classic_report (all)": lambda: classic.classic_report(x, names, superchains=ids),
    }
    print(f"{a.chains} chains x {a.draws} draws x {a.params} parameters, best of {a.repeats}")
    for label, f in parts.items():
        print(f"{label:28s} {best(f, a.repeats):7.3f} s")


if __name__ == "__main__":
    main()
