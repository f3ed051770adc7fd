"""posteriordb benchmark: our HMC and NUTS against BlackJAX NUTS on six real posteriors (issue 15).

Posteriors (``bench/posteriordb/``, data in ``tests/data/posteriordb/``):
eight schools non-centered, kidiq, arK, GARCH(1,1), a 1-D Gaussian mixture,
GP Poisson regression. Each sampler runs as a whole process, timed from
outside (interpreter start, imports, compilation, sampling, writing):

* ours: ``mcmc sample -t bench/posteriordb/X.py -s hmc|nuts``, 4 chains x
  (1000 warm-up + 1000 draws), default settings;
* BlackJAX 1.x NUTS with ``window_adaptation`` (target acceptance 0.8) on the
  JAX versions of the same models, ``bench/posteriordb/X_jax.py``
  (``bench/posteriordb_blackjax.py``, checked equal to the NumPy targets by
  its ``--check``), same chains and iterations;
* ours on those very files, ``X_jax`` (``--posteriors X_jax``: the log density
  of one point in JAX, gradient by ``jax.grad``, HMC and NUTS run inside JAX,
  ``docs/formats.md``, "JAX targets"): both libraries fed the same model.

Per posterior, sampler and seed: max |z| of the posterior means and sds
against the reference moments (``tests/data/posteriordb/reference_moments.json``,
z on the combined MCSE of both), the minimum over parameters of bulk and
tail ESS (``mcmc.diagnostics.stats``) divided by all gradient evaluations,
warm-up included (ours: the chains file's counts; BlackJAX: its integration
steps), the warm-up share of gradients, min bulk ESS per second of the whole process,
and min bulk ESS per second of the run alone (ours: the seconds our summary
reports for starts, warm-up, sampling and writing, after start-up and
loading the target and its compiled kernels; BlackJAX: its compiled run,
timed after ``lower().compile()``). Values are averaged over seeds (max |z|:
the maximum); the next block gives the geometric means over posteriors and
their ratios to BlackJAX; the next compares our HMC on each ``X_numba``
posterior (``COMPILED``) with BlackJAX on ``X``, process against process and
against BlackJAX's compiled run (issue 15: "within 3x of its compiled run");
the last our HMC and NUTS on each ``X_jax`` file (``JAX``) with BlackJAX on the
same file (issue 32: whole process at least BlackJAX's, run alone within 1.5x
of its compiled run; our run alone is the summary's seconds less the compiling
it reports). The first seed of a ``_numba`` posterior compiles its kernels
into numba's cache (a few seconds), the later ones load them; a ``_jax`` file's
programs go to JAX's persistent cache the same way.

Run from the repository root (BlackJAX from the ``bench`` extra)::

    .venv/bin/python bench/posteriordb.py                 # 3 seeds, all six
    .venv/bin/python bench/posteriordb.py --seeds 1 --posteriors kidiq_kidscore_momiq,arK
    .venv/bin/python bench/posteriordb.py --posteriors eight_schools_noncentered,eight_schools_noncentered_jax

Timings on a shared machine are noisy: say so when recording them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcmc.core.targets.user import load_user_target
from mcmc.diagnostics import stats
from mcmc.diagnostics.readers import read_chains

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = json.loads((ROOT / "tests/data/posteriordb/reference_moments.json").read_text())
POSTERIORS = {
    "eight_schools_noncentered": "eight_schools-eight_schools_noncentered",
    "kidiq_kidscore_momiq": "kidiq-kidscore_momiq",
    "arK": "arK-arK",
    "garch11": "garch-garch11",
    "low_dim_gauss_mix": "low_dim_gauss_mix-low_dim_gauss_mix",
    "gp_pois_regr": "gp_pois_regr-gp_pois_regr",
}
SAMPLERS = ("hmc", "nuts", "blackjax")
#: The same posteriors written as numba point functions (docs/formats.md, "Compiled targets"): HMC runs
#: whole trajectories compiled. Named with --posteriors; only our samplers run them (BlackJAX runs the
#: posterior's own JAX model under its plain name).
COMPILED = {f"{name}_numba": posterior for name, posterior in POSTERIORS.items()}
#: The same posteriors written once in JAX, for one point (docs/formats.md, "JAX targets"): our HMC and NUTS load
#: ``X_jax.py`` as a JAX target, and BlackJAX (under the plain name ``X``) samples the same file's log density.
JAX = {f"{name}_jax": posterior for name, posterior in POSTERIORS.items()}
POSTERIORS_ALL = {**POSTERIORS, **COMPILED, **JAX}


@dataclass
class Result:
    posterior: str
    sampler: str
    seed: int
    max_z: float
    ess_bulk: float
    ess_tail: float
    grads: int
    grads_warmup: int
    wall: float
    run_seconds: float | None = None  # the run alone: ours as our summary reports it, BlackJAX's compiled
    compile_seconds: float = 0.0  # ours: the compiling our summary reports (a JAX file); BlackJAX: lower().compile()

    @property
    def bulk_per_grad(self) -> float:
        return self.ess_bulk / self.grads

    @property
    def tail_per_grad(self) -> float:
        return self.ess_tail / self.grads

    @property
    def warmup_share(self) -> float:
        return self.grads_warmup / self.grads

    @property
    def ess_per_s(self) -> float:
        return self.ess_bulk / self.wall

    @property
    def ess_per_run_s(self) -> float | None:
        return None if self.run_seconds is None else self.ess_bulk / self.run_seconds


def _timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    # 1: `mcmc sample` wrote the draws and judged them failing (a few divergences, say); the bench judges them too
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, done.stderr


def _run_seconds(summary: str) -> tuple[float, float]:
    """The seconds ``mcmc sample``'s summary reports for the run (starts, warm-up, sampling, writing), less the
    compiling it reports (a JAX target's programs, compiled at their first calls): the run alone, as BlackJAX's
    compiled run is timed after its compilation; and that compiling."""
    found = re.search(r"([0-9.]+) s(?: \(([0-9.]+) s compiling\))?  -> ", summary)
    if found is None:
        raise RuntimeError(f"no run time in the summary:\n{summary[-2000:]}")
    compiling = float(found.group(2) or 0.0)
    return float(found.group(1)) - compiling, compiling


def run_one(posterior: str, sampler: str, seed: int, args: argparse.Namespace, tmp: Path) -> Result:
    target = load_user_target(str(ROOT / "bench" / "posteriordb" / f"{posterior}.py"))
    out = tmp / f"{posterior}-{sampler}-{seed}.npz"
    common = ["--chains", str(args.chains), "--warmup", str(args.warmup), "--draws", str(args.draws),
              "--seed", str(seed)]  # fmt: skip
    if sampler == "blackjax":
        wall, _ = _timed([sys.executable, str(ROOT / "bench" / "posteriordb_blackjax.py"), posterior, *common,
                          "--out", str(out)])  # fmt: skip
        with np.load(out) as f:
            x, n_steps, n_warm = f["x"], f["n_steps"], f["n_steps_warmup"]
            run_seconds, compile_seconds = float(f["seconds_run"]), float(f["seconds_compile"])
        c, d, dim = x.shape
        draws = target.report(x.reshape(c * d, dim)).reshape(c, d, -1)
        grads_warmup = int(n_warm.sum())
        grads = grads_warmup + int(n_steps.sum())
    else:
        mcmc = str(Path(sys.executable).with_name("mcmc"))
        wall, summary = _timed([mcmc, "sample", "-t", f"bench/posteriordb/{posterior}.py", "-s", sampler, *common,
                                "-o", str(out)])  # fmt: skip
        chains = read_chains([str(out)])
        draws = np.concatenate(
            [np.asarray(chains.posterior[name]).reshape(chains.n_chains, chains.n_draws, -1)
             for name, _ in target.variables], axis=2,
        )  # fmt: skip
        grads_warmup = int(chains.attrs["n_gradient_evals_warmup"])
        grads = grads_warmup + int(chains.attrs["n_gradient_evals"])
        run_seconds, compile_seconds = _run_seconds(summary)
    ref = REFERENCE[POSTERIORS_ALL[posterior]]
    mean, mcse = draws.mean(axis=(0, 1)), stats.mcse_mean(draws)
    sd, mcse_sd = draws.std(axis=(0, 1), ddof=1), stats.mcse_sd(draws)
    z = []
    for i, name in enumerate(target.names):
        r = ref[name]
        z.append(abs(mean[i] - r["mean"]) / math.hypot(mcse[i], r["mcse_mean"]))
        z.append(abs(sd[i] - r["sd"]) / math.hypot(mcse_sd[i], r["mcse_sd"]))
    return Result(posterior, sampler, seed, float(max(z)), float(stats.ess_bulk(draws).min()),
                  float(stats.ess_tail(draws).min()), grads, grads_warmup, wall, run_seconds,
                  compile_seconds)  # fmt: skip


def _gmean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values))))


def table(results: list[Result], samplers: list[str]) -> str:
    lines = [
        "| posterior | sampler | max \\|z\\| | bulk ESS/grad | tail ESS/grad | warm-up share | ESS/s (process) | wall s "
        "| ESS/s (run alone) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    summary: dict[str, dict[str, list[float]]] = {s: {"bulk": [], "tail": [], "eps": []} for s in samplers}
    for posterior in dict.fromkeys(r.posterior for r in results):
        for sampler in samplers:
            rs = [r for r in results if r.posterior == posterior and r.sampler == sampler]
            if not rs:
                continue
            bulk = float(np.mean([r.bulk_per_grad for r in rs]))
            tail = float(np.mean([r.tail_per_grad for r in rs]))
            eps = float(np.mean([r.ess_per_s for r in rs]))
            summary[sampler]["bulk"].append(bulk)
            summary[sampler]["tail"].append(tail)
            summary[sampler]["eps"].append(eps)
            compiled = [r.ess_per_run_s for r in rs if r.ess_per_run_s is not None]
            lines.append(
                f"| {posterior} | {sampler} | {max(r.max_z for r in rs):.2f} | {bulk:.4f} | {tail:.4f} | "
                f"{np.mean([r.warmup_share for r in rs]):.0%} | {eps:.1f} | {np.mean([r.wall for r in rs]):.1f} | "
                f"{f'{np.mean(compiled):.1f}' if compiled else '-'} |"
            )
    lines += ["", "| geometric mean | bulk ESS/grad | tail ESS/grad | ESS/s | vs blackjax (bulk, tail, ESS/s) |",
              "|---|---:|---:|---:|---|"]  # fmt: skip
    base = summary.get("blackjax")
    for sampler in samplers:
        s = summary[sampler]
        if not s["bulk"]:
            continue
        g = [_gmean(s[k]) for k in ("bulk", "tail", "eps")]
        ratio = "-"
        if base and base["bulk"] and len(base["bulk"]) == len(s["bulk"]):
            ratio = ", ".join(f"{v / _gmean(base[k]):.2f}x" for v, k in zip(g, ("bulk", "tail", "eps"), strict=True))
        lines.append(f"| {sampler} | {g[0]:.4f} | {g[1]:.4f} | {g[2]:.1f} | {ratio} |")
    return "\n".join(lines + _compiled_block(results) + _jax_block(results))


def _compiled_block(results: list[Result]) -> list[str]:
    """Our HMC on the numba targets (whole process) against BlackJAX's whole process and its compiled run."""

    def mean(posterior: str, sampler: str, key: str) -> float | None:
        values = [getattr(r, key) for r in results if r.posterior == posterior and r.sampler == sampler]
        values = [v for v in values if v is not None]
        return float(np.mean(values)) if values else None

    lines = []
    for numba_name, name in ((k, k.removesuffix("_numba")) for k in COMPILED):
        ours, ours_run = mean(numba_name, "hmc", "ess_per_s"), mean(numba_name, "hmc", "ess_per_run_s")
        process, run = mean(name, "blackjax", "ess_per_s"), mean(name, "blackjax", "ess_per_run_s")
        if ours is None or ours_run is None or process is None or run is None:
            continue
        if not lines:
            lines = ["", "| compiled target | hmc ESS/s process | hmc ESS/s run | blackjax ESS/s process | "
                     "blackjax ESS/s compiled run | process vs process | process vs compiled run | run vs compiled run |",
                     "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        lines.append(f"| {numba_name} | {ours:.1f} | {ours_run:.1f} | {process:.1f} | {run:.1f} | "
                     f"{ours / process:.2f}x | {ours / run:.2f}x | {ours_run / run:.2f}x |")  # fmt: skip
    return lines


def _jax_block(results: list[Result]) -> list[str]:
    """Our HMC and NUTS on each ``X_jax`` file against BlackJAX NUTS on the same file (its runs under ``X``)."""

    def mean(posterior: str, sampler: str, key: str) -> float | None:
        values = [getattr(r, key) for r in results if r.posterior == posterior and r.sampler == sampler]
        values = [v for v in values if v is not None]
        return float(np.mean(values)) if values else None

    lines: list[str] = []
    ratios: dict[str, dict[str, list[float]]] = {}
    for jax_name, name in ((k, k.removesuffix("_jax")) for k in JAX):
        theirs = {key: mean(name, "blackjax", key) for key in ("ess_per_s", "ess_per_run_s", "bulk_per_grad")}
        for sampler in ("hmc", "nuts"):
            ours = {key: mean(jax_name, sampler, key) for key in ("ess_per_s", "ess_per_run_s", "bulk_per_grad")}
            if None in ours.values() or None in theirs.values():
                continue
            if not lines:
                lines = ["", "| JAX file | sampler | ESS/s process | ESS/s run alone | blackjax ESS/s process | "
                         "blackjax ESS/s compiled run | process vs process | run vs compiled run | "
                         "bulk ESS/grad vs blackjax |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
            r = [ours["ess_per_s"] / theirs["ess_per_s"], ours["ess_per_run_s"] / theirs["ess_per_run_s"],
                 ours["bulk_per_grad"] / theirs["bulk_per_grad"]]  # fmt: skip
            for key, value in zip(("process", "run", "grad"), r, strict=True):
                ratios.setdefault(sampler, {}).setdefault(key, []).append(value)
            lines.append(f"| {jax_name} | {sampler} | {ours['ess_per_s']:.1f} | {ours['ess_per_run_s']:.1f} | "
                         f"{theirs['ess_per_s']:.1f} | {theirs['ess_per_run_s']:.1f} | {r[0]:.2f}x | {r[1]:.2f}x | "
                         f"{r[2]:.2f}x |")  # fmt: skip
    for sampler, by in ratios.items():
        lines.append(f"| geometric mean | {sampler} | | | | | {_gmean(by['process']):.2f}x | {_gmean(by['run']):.2f}x | "
                     f"{_gmean(by['grad']):.2f}x |")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 1..N (default 3)")
    parser.add_argument("--posteriors", default=",".join(POSTERIORS), help="comma-separated subset")
    parser.add_argument("--samplers", default=",".join(SAMPLERS), help="comma-separated subset of hmc,nuts,blackjax")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--jax", action="store_true",
                        help="issue 32: BlackJAX NUTS and our hmc and nuts on each X_jax file of --posteriors (plain "
                             "names), the same model for both; --samplers is then not used")  # fmt: skip
    args = parser.parse_args(argv)
    posteriors = args.posteriors.split(",")
    samplers = args.samplers.split(",")
    unknown = [p for p in posteriors if p not in POSTERIORS_ALL] + [s for s in samplers if s not in SAMPLERS]
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)}")
    if args.jax:  # BlackJAX's runs of X_jax.py go under the plain name X (its NumPy file gives the reported names)
        samplers = list(SAMPLERS)
        runs = [run for p in posteriors if p in POSTERIORS
                for run in ((p, "blackjax"), (f"{p}_jax", "hmc"), (f"{p}_jax", "nuts"))]  # fmt: skip
    else:
        runs = [(p, s) for p in posteriors for s in samplers
                if not ((p in COMPILED or p in JAX) and s == "blackjax")]  # fmt: skip
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for posterior in dict.fromkeys(p for p, _ in runs):
            for seed in range(1, args.seeds + 1):
                for sampler in [s for p, s in runs if p == posterior]:
                    r = run_one(posterior, sampler, seed, args, Path(tmp))
                    print(f"{posterior} {sampler} seed {seed}: max|z| {r.max_z:.2f}, bulk ESS {r.ess_bulk:.0f}, "
                          f"tail ESS {r.ess_tail:.0f}, {r.grads} grads ({r.warmup_share:.0%} warm-up), "
                          f"{r.wall:.1f} s (run {r.run_seconds or 0:.2f} s, compiling {r.compile_seconds:.2f} s)",
                          file=sys.stderr, flush=True)  # fmt: skip
                    results.append(r)
    print(f"# {args.chains} chains x ({args.warmup} + {args.draws}), seeds 1..{args.seeds}, "
          f"{os.cpu_count()} CPUs\n")  # fmt: skip
    print(table(results, samplers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
