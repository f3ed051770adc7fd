"""Gibbs sampling on the ALARM network: our compiled sampler against pyAgrum's GibbsSampling.

    .venv/bin/python -m pip install -e '.[bench]'
    .venv/bin/python bench/networks.py [--reps 8] [--sweeps 20000]

Prints, in one run:

1. node updates per second of our Gibbs kernel on alarm without evidence, one
   thread, 4 chains: single-site (blocking only exact zeros: ``near_zero=1e-9``)
   and the default blocked sampler (``near_zero=0.02``);
2. effective samples per second on the marginals of alarm given evidence
   (BP=LOW, VENTMACH=ZERO): ``reps`` independent runs of ``sweeps`` sweeps of
   each sampler (ours: one chain per run; pyAgrum: one GibbsSampling per run,
   ``nbrDrawnVar`` = all nodes, burn-in 1000, no early stop). The ESS of a
   state's estimate is ``p (1 - p) / Var(estimate across runs)`` with ``p``
   the exact posterior (variable elimination): the same yardstick for both,
   needing no access to pyAgrum's draws. Reported: the median and the
   minimum over all states of all unobserved nodes, per second of sampling.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mcmc.core.networks import single_site
from mcmc.core.networks.bif import read_bif
from mcmc.core.networks.driver import sample_network
from mcmc.core.networks.evidence import parse_evidence
from mcmc.core.networks.indicators import indicator_draws
from mcmc.core.networks.tables import initial_states
from mcmc.core.networks.variable_elimination import marginals
from mcmc.core.random import ChainRandom

PATH = "tests/data/networks/alarm.bif"
EVIDENCE = "BP=LOW,VENTMACH=ZERO"


def updates_per_second(near_zero: float, sweeps: int) -> tuple[float, int]:
    net = read_bif(PATH)
    plan = single_site.build(net, {}, near_zero=near_zero)
    chains = 4
    state = single_site.init(initial_states(plan.tables, ChainRandom(0, chains=chains, stream=1)), plan)
    rng = ChainRandom(0, chains=chains)
    single_site.sample(rng, state, plan, 10)  # compile / load the cached kernel
    t = time.perf_counter()
    single_site.sample(rng, state, plan, sweeps)
    dt = time.perf_counter() - t
    return chains * sweeps * net.n_nodes / dt, len(plan.units)


def ess_summary(estimates: np.ndarray, exact: np.ndarray) -> tuple[float, float]:
    var = estimates.var(axis=0, ddof=1)
    ess = exact * (1 - exact) / np.maximum(var, 1e-300)
    keep = (exact > 1e-3) & (exact < 1 - 1e-3)
    return float(np.median(ess[keep])), float(np.min(ess[keep]))


def ours(reps: int, sweeps: int, exact_flat: np.ndarray) -> tuple[np.ndarray, float]:
    net = read_bif(PATH)
    ev = parse_evidence(net, EVIDENCE)
    sample_network(net, ev, chains=1, warmup=10, draws=10, seed=0)  # warm the kernel cache
    est, total = [], 0.0
    for r in range(reps):
        t = time.perf_counter()
        run = sample_network(net, ev, chains=1, warmup=1000, draws=sweeps, seed=100 + r)
        total += time.perf_counter() - t
        x, _ = indicator_draws(run)
        est.append(x.mean(axis=(0, 1)))
    return np.array(est), total / reps


def pyagrum(reps: int, sweeps: int, order: list[tuple[str, int]]) -> tuple[np.ndarray, float, float]:
    import pyagrum as gum

    bn = gum.loadBN(PATH)
    ev = dict(item.split("=") for item in EVIDENCE.split(","))
    est, total, updates = [], 0.0, 0.0
    for r in range(reps):
        gum.initRandom(1000 + r)
        ie = gum.GibbsSampling(bn)
        ie.setEvidence(ev)
        ie.setNbrDrawnVar(bn.size())
        ie.setBurnIn(1000)
        ie.setMaxIter(sweeps)
        ie.setEpsilon(1e-300)
        ie.setMinEpsilonRate(1e-300)
        ie.setMaxTime(1e9)
        t = time.perf_counter()
        ie.makeInference()
        dt = time.perf_counter() - t
        total += dt
        updates += ie.nbrIterations() * (bn.size() - len(ev)) / dt
        row = []
        for node, k in order:
            p = ie.posterior(node)
            row.append(p.toarray()[k])
        est.append(row)
    return np.array(est), total / reps, updates / reps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--sweeps", type=int, default=20000)
    args = ap.parse_args()

    single, n_single = updates_per_second(1e-9, 50000)
    blocked, n_blocked = updates_per_second(0.02, 20000)
    print(f"alarm, no evidence, 1 thread, 4 chains: {single / 1e6:.1f} M node updates/s single-site ({n_single} units), "
          f"{blocked / 1e6:.1f} M/s blocked default ({n_blocked} units)")

    net = read_bif(PATH)
    ev = parse_evidence(net, EVIDENCE)
    exact = marginals(net, ev)
    free = [i for i in range(net.n_nodes) if i not in ev]
    order = [(net.nodes[v], k) for v in free for k in range(net.cardinality[v])]
    exact_flat = np.array([exact[v][k] for v in free for k in range(net.cardinality[v])])

    ours_est, ours_t = ours(args.reps, args.sweeps, exact_flat)
    agrum_est, agrum_t, agrum_ups = pyagrum(args.reps, args.sweeps, order)
    o_med, o_min = ess_summary(ours_est, exact_flat)
    a_med, a_min = ess_summary(agrum_est, exact_flat)
    print(f"alarm | {EVIDENCE}, {args.reps} runs x {args.sweeps} sweeps (+1000 burn-in):")
    print(f"  ours    : {ours_t:.3f} s/run, ESS median {o_med:.0f} min {o_min:.0f}, "
          f"ESS/s median {o_med / ours_t:.0f} min {o_min / ours_t:.0f}, max |err| {np.abs(ours_est.mean(0) - exact_flat).max():.4f}")
    print(f"  pyAgrum : {agrum_t:.3f} s/run, ESS median {a_med:.0f} min {a_min:.0f}, "
          f"ESS/s median {a_med / agrum_t:.0f} min {a_min / agrum_t:.0f}, max |err| {np.abs(agrum_est.mean(0) - exact_flat).max():.4f}, "
          f"{agrum_ups / 1e6:.2f} M node updates/s")
    print(f"  ratio ours/pyAgrum ESS/s: median {(o_med / ours_t) / (a_med / agrum_t):.1f}x, "
          f"min {(o_min / ours_t) / (a_min / agrum_t):.1f}x; node updates/s (single-site): {single / agrum_ups:.0f}x")


if __name__ == "__main__":
    main()
