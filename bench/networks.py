"""Gibbs on Bayesian networks: our blocked and single-site samplers against pyAgrum's, in one run.

    .venv/bin/python -m pip install -e '.[bench]'
    .venv/bin/python bench/networks.py [--reps 8] [--sweeps 20000] [--plot docs/networks.png]

Prints, in one run:

1. the cost of a sweep on alarm without evidence, one thread, 4 chains:
   single-site Gibbs (``-P gibbs:blocks=single``, in node updates per second)
   and the default blocked Gibbs (here one block of all 37 nodes drawn exactly
   through its junction tree), in microseconds per sweep and chain;
2. effective samples per second on the marginals of alarm and of insurance
   given evidence, ``reps`` independent runs of ``sweeps`` sweeps (+1000
   burn-in) of each sampler: ours with the default blocks (``gibbs``), ours
   single-site (``-P gibbs:blocks=single``), pyAgrum's ``GibbsSampling`` and
   ``LoopyGibbsSampling`` (loopy belief propagation first, Gibbs from there;
   both draw every node each iteration, early stopping off). Ours: one chain
   per run, timed over the whole ``sample_network`` call (the evidence's exact
   check, the block choice and compilation of the trees, burn-in, draws).
   The ESS of a state's estimate is ``p (1 - p) / Var(estimate across runs)``
   with ``p`` the exact posterior (the junction tree): the same yardstick for
   every sampler, needing no access to pyAgrum's draws. Reported: the median
   and the minimum over the states of the unobserved nodes with ``1e-3 < p <
   1 - 1e-3``, per second, and their ratios to pyAgrum's and to single-site's.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from mcmc.core.networks import blocked_gibbs, single_site
from mcmc.core.networks.bif import read_bif
from mcmc.core.networks.driver import sample_network
from mcmc.core.networks.evidence import parse_evidence
from mcmc.core.networks.exact import posterior_marginals
from mcmc.core.networks.indicators import indicator_draws
from mcmc.core.networks.tables import initial_states
from mcmc.core.random import ChainRandom

CASES = {
    "alarm": ("tests/data/networks/alarm.bif", "BP=LOW,VENTMACH=ZERO"),
    "insurance": ("tests/data/networks/insurance.bif", "Accident=Severe,DrivQuality=Poor"),
}
BURN_IN = 1000


def sweep_costs(sweeps: int) -> tuple[float, float, int]:
    """Alarm, no evidence, 4 chains: single-site node updates/s, single-site and blocked µs per sweep and chain."""
    net = read_bif(CASES["alarm"][0])
    chains = 4
    out = []
    for module, plan in (
        (single_site, single_site.build(net, {})),
        (blocked_gibbs, blocked_gibbs.build(net, {})),
    ):
        state = module.init(initial_states(plan.tables, ChainRandom(0, chains=chains, stream=1)), plan)
        rng = ChainRandom(0, chains=chains)
        module.sample(rng, state, plan, 10)  # compile / load the cached kernel
        t = time.perf_counter()
        module.sample(rng, state, plan, sweeps)
        out.append((time.perf_counter() - t) / (chains * sweeps))
    return net.n_nodes / out[0], 1e6 * out[0], 1e6 * out[1]


def ess_summary(estimates: np.ndarray, exact: np.ndarray) -> tuple[float, float]:
    var = estimates.var(axis=0, ddof=1)
    ess = exact * (1 - exact) / np.maximum(var, 1e-300)
    keep = (exact > 1e-3) & (exact < 1 - 1e-3)
    return float(np.median(ess[keep])), float(np.min(ess[keep]))


def ours(path: str, evidence: str, blocks: str, reps: int, sweeps: int) -> tuple[np.ndarray, float, str]:
    net = read_bif(path)
    ev = parse_evidence(net, evidence)
    params = {"blocks": blocks}
    sample_network(net, ev, chains=1, warmup=10, draws=10, seed=0, params=params)  # warm the kernel cache
    est, total = [], 0.0
    for r in range(reps):
        t = time.perf_counter()
        run = sample_network(net, ev, chains=1, warmup=BURN_IN, draws=sweeps, seed=100 + r, params=params)
        total += time.perf_counter() - t
        x, _ = indicator_draws(run)
        est.append(x.mean(axis=(0, 1)))
    blocks_used = run.attrs["blocks"]
    shape = ", ".join(f"{len(b['nodes'])} nodes (largest clique {b['largest_clique']})" for b in blocks_used)
    return np.array(est), total / reps, shape or "none"


def pyagrum(path: str, evidence: str, kind: str, reps: int, sweeps: int, order: list[tuple[str, int]]):
    import pyagrum as gum

    bn = gum.loadBN(path)
    ev = dict(item.split("=") for item in evidence.split(","))
    est, total = [], 0.0
    for r in range(reps):
        gum.initRandom(1000 + r)
        ie = getattr(gum, kind)(bn)
        ie.setEvidence(ev)
        ie.setNbrDrawnVar(bn.size())
        ie.setBurnIn(BURN_IN)
        ie.setMaxIter(sweeps)
        ie.setEpsilon(1e-300)
        ie.setMinEpsilonRate(1e-300)
        ie.setMaxTime(1e9)
        t = time.perf_counter()
        ie.makeInference()
        total += time.perf_counter() - t
        est.append([ie.posterior(node).toarray()[k] for node, k in order])
    return np.array(est), total / reps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--sweeps", type=int, default=20000)
    ap.add_argument("--plot", help="write a bar chart of ESS per second (median state) to this file")
    args = ap.parse_args()
    import pyagrum as gum

    print(f"{platform.processor() or platform.machine()}, numba one thread, pyAgrum {gum.__version__}")
    ups, single_us, blocked_us = sweep_costs(20000)
    print(f"alarm, no evidence, 4 chains: single-site {ups / 1e6:.1f} M node updates/s ({single_us:.2f} µs/sweep), "
          f"one exact block {blocked_us:.2f} µs/sweep")
    results = {}
    for name, (path, evidence) in CASES.items():
        net = read_bif(path)
        ev = parse_evidence(net, evidence)
        exact = posterior_marginals(net, ev).marginals
        free = [i for i in range(net.n_nodes) if i not in ev]
        order = [(net.nodes[v], k) for v in free for k in range(net.cardinality[v])]
        truth = np.array([exact[node][k] for node, k in order])
        rows = {}
        for label, blocks in (("ours, blocked (default)", "auto"), ("ours, single-site", "single")):
            e, t, shape = ours(path, evidence, blocks, args.reps, args.sweeps)
            rows[label] = (e, t, f"blocks: {shape}")
        for kind in ("GibbsSampling", "LoopyGibbsSampling"):
            e, t = pyagrum(path, evidence, kind, args.reps, args.sweeps, order)
            rows[f"pyAgrum {kind}"] = (e, t, "")
        print(f"\n{name} | {evidence}: {args.reps} runs x {args.sweeps} sweeps (+{BURN_IN} burn-in), "
              f"{len(order)} states of {len(free)} unobserved nodes")
        summary = {}
        for label, (e, t, note) in rows.items():
            med, low = ess_summary(e, truth)
            summary[label] = (med / t, low / t)
            err = np.abs(e.mean(0) - truth).max()
            print(f"  {label:30s} {t:7.3f} s/run  ESS median {med:7.0f} min {low:6.0f}  "
                  f"ESS/s median {med / t:9.0f} min {low / t:8.0f}  max |err| {err:.4f}  {note}")
        blocked = summary["ours, blocked (default)"]
        for other in ("pyAgrum GibbsSampling", "pyAgrum LoopyGibbsSampling", "ours, single-site"):
            ref = summary[other]
            print(f"  blocked / {other}: ESS/s median {blocked[0] / ref[0]:.0f}x, min {blocked[1] / max(ref[1], 1e-9):.0f}x")
        results[name] = summary
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4.5))
        labels = list(next(iter(results.values())))
        width = 0.8 / len(labels)
        for j, label in enumerate(labels):
            ax.bar([i + j * width for i in range(len(results))], [results[n][label][0] for n in results],
                   width, label=label)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(results))], [f"{n}\n{CASES[n][1]}" for n in results])
        ax.set_yscale("log")
        ax.set_ylabel("ESS per second (median state)")
        ax.legend(fontsize=8, ncol=2, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"\nwrote {args.plot}")


if __name__ == "__main__":
    main()
