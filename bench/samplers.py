"""Samplers benchmark: ESS per second and per evaluation, ours beside emcee and BlackJAX NUTS.

Targets: the 100-D standard Gaussian and the 100-D ill-conditioned Gaussian
(independent coordinates, scales log-spaced from 0.01 to 1: a condition number
of 10^4 in the covariance). For each, with 4 and with 64 chains:

* ours: ``rwm``, ``slice`` and ``hmc`` (when their modules exist), through the
  shared driver, with default settings and Stan-style warm-up for HMC (the
  Metropolis-Hastings variants do not fit these targets: see ``OURS``);
* emcee: the affine-invariant ensemble stretch move (Goodman & Weare 2010;
  Foreman-Mackey et al. 2013), vectorized log density. It needs at least
  ``2 dim`` walkers, so it runs ``max(2 dim, chains)`` walkers: its row is
  the same in both chain groups, and its walkers are not independent chains
  (the ESS treats them as chains, as is common practice; read it with care);
* BlackJAX NUTS with its window adaptation, one chain per ``vmap`` lane,
  ``jit``-compiled; its time INCLUDES compilation (the first call), which is
  what a user of a one-off run pays. float64 (``jax_enable_x64``) for parity.

Every sampler runs the same number of warm-up and sampling iterations with
fixed seeds. ESS is the minimum over coordinates of the rank-normalized bulk
ESS (``mcmc.diagnostics.stats.ess_bulk``, Vehtari et al. 2021; the minimum
tail ESS is shown beside it, because antithetic samplers such as HMC on a
Gaussian can have a bulk ESS above the number of draws); ESS/s divides
it by the whole wall time (warm-up included); ESS/k-eval by the gradient
evaluations (HMC, NUTS) or density evaluations (others), warm-up included.
Ratios are ESS/s relative to our HMC with the same number of chains.

Run from the repository root::

    .venv/bin/python bench/samplers.py            # full: warmup 1000, draws 1000
    .venv/bin/python bench/samplers.py --quick    # smoke: small and fast

The machine should be quiet: timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np

from mcmc.core.samplers import SAMPLERS, driver, get_sampler
from mcmc.core.targets import get_target
from mcmc.diagnostics.stats import ess_bulk, ess_tail

# Our samplers, when their module exists. The Metropolis-Hastings variants are
# left out: the log-normal proposal needs a positive target, and a fixed
# independence proposal in 100-D is a strawman.
OURS = ("rwm", "slice", "hmc")
GRADIENT_BASED = {"hmc", "blackjax-nuts"}


@dataclass
class Row:
    target: str
    chains: int
    sampler: str
    wall: float
    evals: int
    ess: float
    ess_tail: float
    note: str = ""

    @property
    def ess_per_s(self) -> float:
        return self.ess / self.wall if self.wall > 0 else float("nan")

    @property
    def ess_per_keval(self) -> float:
        return 1000.0 * self.ess / self.evals if self.evals > 0 else float("nan")


def min_ess(draws: np.ndarray) -> tuple[float, float]:
    """Minimum bulk and minimum tail ESS over coordinates of ``draws (chain, draw, dim)``."""
    return float(np.nanmin(ess_bulk(draws))), float(np.nanmin(ess_tail(draws)))


def run_ours(name: str, target_opts: dict, chains: int, warmup: int, draws: int, seed: int) -> Row:
    target = get_target("gaussian", **target_opts)
    sampler = get_sampler(name)
    t0 = time.perf_counter()
    out = driver.run(sampler, target, chains=chains, warmup=warmup, draws=draws, seed=seed).chains
    wall = time.perf_counter() - t0
    a = out.attrs
    if name in GRADIENT_BASED:
        evals = a["n_gradient_evals"] + a["n_gradient_evals_warmup"]
    else:
        evals = a["n_density_evals"] + a["n_density_evals_warmup"]
    note = ""
    st = out.sample_stats
    if "acceptance_rate" in st:
        note = f"accept {st['acceptance_rate'].mean():.2f}"
    if "diverging" in st and st["diverging"].any():
        note += f", {int(st['diverging'].sum())} divergent"
    return Row(_label(target_opts), chains, name, wall, int(evals), *min_ess(out.posterior["x"]), note)


def run_emcee(target_opts: dict, chains: int, warmup: int, draws: int, seed: int) -> Row:
    import emcee

    target = get_target("gaussian", **target_opts)
    walkers = max(2 * target.dim, chains)
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=(walkers, target.dim)) * target.sd * 2.0
    t0 = time.perf_counter()
    sampler = emcee.EnsembleSampler(walkers, target.dim, target.log_density, vectorize=True)
    # emcee draws from a legacy RandomState of its own; seed it explicitly.
    sampler.random_state = np.random.RandomState(seed).get_state()
    sampler.run_mcmc(x0, warmup + draws, progress=False)
    wall = time.perf_counter() - t0
    chain = sampler.get_chain(discard=warmup)  # (draw, walker, dim)
    x = np.ascontiguousarray(np.swapaxes(chain, 0, 1))
    note = f"{walkers} walkers, accept {np.mean(sampler.acceptance_fraction):.2f}"
    return Row(_label(target_opts), chains, "emcee", wall, walkers * (warmup + draws), *min_ess(x), note)


def run_blackjax(target_opts: dict, chains: int, warmup: int, draws: int, seed: int, warm: bool = False) -> list[Row]:
    t0 = time.perf_counter()
    import jax

    jax.config.update("jax_enable_x64", True)
    import blackjax
    import jax.numpy as jnp

    target = get_target("gaussian", **target_opts)
    scale = jnp.asarray(target.sd)

    def logdensity(x):  # noqa: ANN001, ANN202
        return -0.5 * jnp.sum((x / scale) ** 2)

    adaptation = blackjax.window_adaptation(blackjax.nuts, logdensity)

    def one_chain(key, x0):  # noqa: ANN001, ANN202
        k_warm, k_draw = jax.random.split(key)
        (state, params), warm_info = adaptation.run(k_warm, x0, num_steps=warmup)
        kernel = blackjax.nuts(logdensity, **params).step

        def body(state, key):  # noqa: ANN001, ANN202
            state, info = kernel(key, state)
            return state, (state.position, info.num_integration_steps, info.acceptance_rate, info.is_divergent)

        _, out = jax.lax.scan(body, state, jax.random.split(k_draw, draws))
        return out, warm_info.info.num_integration_steps

    run = jax.jit(jax.vmap(one_chain))
    keys = jax.random.split(jax.random.key(seed), chains)
    rng = np.random.default_rng(seed)
    x0 = jnp.asarray(rng.normal(size=(chains, target.dim)) * target.sd * 2.0)
    (x, n_steps, accept, divergent), warm_steps = jax.block_until_ready(run(keys, x0))
    wall = time.perf_counter() - t0  # import, tracing, compilation and run
    evals = int(np.sum(n_steps)) + int(np.sum(warm_steps))
    note = f"accept {float(np.mean(accept)):.2f}, incl. compile"
    if np.any(divergent):
        note += f", {int(np.sum(divergent))} divergent"
    ess = min_ess(np.asarray(x))
    rows = [Row(_label(target_opts), chains, "blackjax-nuts", wall, evals, *ess, note)]
    if warm:
        # The same call again, compiled: BlackJAX's steady-state speed (same draws).
        t1 = time.perf_counter()
        jax.block_until_ready(run(keys, x0))
        rows.append(Row(_label(target_opts), chains, "blackjax-nuts", time.perf_counter() - t1, evals, *ess, "compiled, 2nd call"))
    return rows


def _label(opts: dict) -> str:
    return f"gaussian-{opts['dim']}" + ("-illcond" if opts.get("scales") == "log" else "")


def blackjax_available() -> str | None:
    """``None`` if BlackJAX imports, else the reason it does not."""
    try:
        import blackjax  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any failure means: skip it, say why
        return f"{type(exc).__name__}: {exc}"
    return None


def print_table(rows: list[Row]) -> None:
    header = (
        "target", "chains", "sampler", "wall s", "evals", "min ESS", "tail ESS", "ESS/s", "ESS/k-eval", "vs hmc", "notes"
    )
    lines = [header]
    for r in rows:
        ref = next((q for q in rows if q.target == r.target and q.chains == r.chains and q.sampler == "hmc"), None)
        ratio = f"{r.ess_per_s / ref.ess_per_s:.3g}x" if ref is not None and ref.ess_per_s > 0 else "-"
        lines.append(
            (
                r.target,
                str(r.chains),
                r.sampler,
                f"{r.wall:.2f}",
                f"{r.evals:,}",
                f"{r.ess:.0f}",
                f"{r.ess_tail:.0f}",
                f"{r.ess_per_s:.4g}",
                f"{r.ess_per_keval:.4g}",
                ratio,
                r.note,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for k, line in enumerate(lines):
        print("  ".join(cell.ljust(w) if i in (0, 2, 10) else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths, strict=True))))
        if k == 0:
            print("  ".join("-" * w for w in widths))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: dim 10, 100 + 100 iterations")
    parser.add_argument("--dim", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--draws", type=int, default=None)
    parser.add_argument("--chains", type=int, nargs="+", default=[4, 64])
    parser.add_argument("--samplers", nargs="+", default=None, help=f"subset of ours (default {' '.join(OURS)})")
    parser.add_argument("--no-emcee", action="store_true")
    parser.add_argument("--no-blackjax", action="store_true")
    parser.add_argument(
        "--blackjax-warm", action="store_true", help="also time BlackJAX's compiled second call (steady state)"
    )
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args(argv)

    dim = args.dim or (10 if args.quick else 100)
    warmup = args.warmup if args.warmup is not None else (100 if args.quick else 1000)
    draws = args.draws or (100 if args.quick else 1000)
    ours = [s for s in (args.samplers or OURS) if s in SAMPLERS]
    missing = []
    for s in list(ours):
        try:
            get_sampler(s)
        except ImportError:
            ours.remove(s)
            missing.append(s)
    bj_reason = "--no-blackjax" if args.no_blackjax else blackjax_available()

    print(f"# mcmc samplers benchmark: dim {dim}, warmup {warmup}, draws {draws}, chains {args.chains}, seed {args.seed}")
    print(f"# {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, NumPy {np.__version__}")
    print(f"# command: {' '.join([os.path.basename(sys.executable), *sys.argv])}")
    if missing:
        print(f"# not available (module missing): {', '.join(missing)}")
    if bj_reason is not None:
        print(f"# BlackJAX skipped: {bj_reason}")
    sys.stdout.flush()

    rows: list[Row] = []
    emcee_rows: dict[str, Row] = {}
    for opts in ({"dim": dim}, {"dim": dim, "scales": "log"}):
        for chains in args.chains:
            for name in ours:
                rows.append(run_ours(name, opts, chains, warmup, draws, args.seed))
            if not args.no_emcee:
                key = _label(opts)
                if key not in emcee_rows or max(2 * dim, chains) != max(2 * dim, emcee_rows[key].chains):
                    emcee_rows[key] = run_emcee(opts, chains, warmup, draws, args.seed)
                e = emcee_rows[key]
                rows.append(Row(e.target, chains, e.sampler, e.wall, e.evals, e.ess, e.ess_tail, e.note))
            if bj_reason is None:
                rows.extend(run_blackjax(opts, chains, warmup, draws, args.seed, warm=args.blackjax_warm))
    print_table(rows)

    for r in rows:
        if r.sampler == "blackjax-nuts" and r.chains == max(args.chains) and "2nd call" not in r.note:
            ours_hmc = next((q for q in rows if q.target == r.target and q.chains == r.chains and q.sampler == "hmc"), None)
            if ours_hmc is not None:
                verdict = "meets" if ours_hmc.ess_per_s >= r.ess_per_s else "does NOT meet"
                print(
                    f"# {r.target}, {r.chains} chains: hmc {ours_hmc.ess_per_s:.4g} ESS/s vs BlackJAX NUTS "
                    f"{r.ess_per_s:.4g} ESS/s incl. compile ({ours_hmc.ess_per_s / r.ess_per_s:.3g}x): "
                    f"{verdict} the goal"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
