"""Neal's Bayesian neural network: our ``hmc-gibbs`` against NumPyro's NUTS on the same model and data.

    .venv/bin/python -m pip install -e '.[bench]'
    .venv/bin/python bench/bnn.py [--chains 4] [--warmup 1000] [--draws 1000] [--hidden 16] [--seed 0]
        [--data mcycle,friedman]

Two data sets, each split once with a fixed seed into a training and a test
CSV written to a temporary directory:

- ``mcycle``: the motorcycle data (``tests/data/bnn/mcycle.csv``, 133 rows,
  1 predictor); 100 rows train, 33 test;
- ``friedman``: 400 rows generated with seed 20260613 from Friedman's (1991)
  function of 5 predictors ``x ~ U(0, 1)^5``,
  ``y = 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5 + N(0, 1)``;
  300 rows train, 100 test.

For each, two whole processes, timed from start to exit (Python start-up,
imports, NumPyro's compile, sampling, predictions):

- ours: ``mcmc sample -t bnn --data train.csv -T hidden=H --predict test.csv
  --predictions pred.csv -o run.npz`` (default sampler ``hmc-gibbs``);
- NumPyro: ``bench/bnn_numpyro.py`` (its docstring: the same model term by
  term, float64, sequential chains, default NUTS).

Before timing, the two log densities are compared at random points of the
shared unconstrained space (weights, ``log tau``): their difference must be
a constant (the normalizing constants differ), which shows the NumPyro model
is ours.

Printed per data set and sampler: seconds, bulk ESS (our
:func:`mcmc.diagnostics.stats.ess_bulk` on both runs' draws) of the six
hyperparameters (``sigma_*``, ``noise_sd``; the minimum) and of the
network's output at the test inputs (the predictive mean's draws; minimum
over points), the same per second, the ratio ours / NumPyro, and the
agreement of the two runs: ``z = (mean_ours - mean_numpyro) /
sqrt(MCSE_ours^2 + MCSE_numpyro^2)`` for each hyperparameter and each test
point's predictive mean, listing those with ``|z| > 4``.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mcmc.core.targets import bnn
from mcmc.core.targets.bnn import HYPERPARAMETERS
from mcmc.diagnostics import stats
from mcmc.diagnostics.readers import read_chains
from mcmc.diagnostics.report.compare import z_scores

HERE = Path(__file__).resolve().parent
MCYCLE = HERE.parent / "tests" / "data" / "bnn" / "mcycle.csv"
SPLIT_SEED = 7
DATA_SEED = 20260613
Z_LIMIT = 4.0


def write_csv(path: Path, header: list[str], table: np.ndarray) -> None:
    path.write_text(",".join(header) + "\n" + "".join(",".join(f"{v:.10g}" for v in row) + "\n" for row in table))


def split(header: list[str], table: np.ndarray, n_train: int, out: Path, name: str) -> tuple[Path, Path]:
    order = np.random.default_rng(SPLIT_SEED).permutation(len(table))
    train, test = out / f"{name}_train.csv", out / f"{name}_test.csv"
    write_csv(train, header, table[np.sort(order[:n_train])])
    write_csv(test, header, table[np.sort(order[n_train:])])
    return train, test


def friedman(n: int = 400) -> tuple[list[str], np.ndarray]:
    """Friedman's (1991) first function of 5 uniform predictors plus N(0, 1) noise."""
    rng = np.random.default_rng(DATA_SEED)
    x = rng.uniform(size=(n, 5))
    y = 10 * np.sin(np.pi * x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) ** 2 + 10 * x[:, 3] + 5 * x[:, 4]
    return [f"x{i + 1}" for i in range(5)] + ["y"], np.column_stack([x, y + rng.standard_normal(n)])


def datasets(out: Path, which: list[str]) -> dict[str, tuple[Path, Path]]:
    sets = {}
    if "mcycle" in which:
        table = np.loadtxt(MCYCLE, delimiter=",", skiprows=1)
        sets["mcycle"] = split(["times", "accel"], table, 100, out, "mcycle")
    if "friedman" in which:
        header, table = friedman()
        sets["friedman"] = split(header, table, 300, out, "friedman")
    return sets


def numpyro_module():
    spec = importlib.util.spec_from_file_location("bnn_numpyro", HERE / "bnn_numpyro.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_same_density(train: Path, hidden: int, points: int = 5) -> float:
    """Spread (max - min) over random points of ``lp_ours + potential_energy_numpyro``: 0 up to rounding when the models agree."""
    import jax.numpy as jnp
    from numpyro.infer.util import potential_energy

    npm = numpyro_module()
    target = bnn.bnn(str(train), hidden)
    x = target.draw_prior(np.random.default_rng(1), points)
    x[:, target.n_weights :] += np.random.default_rng(2).normal(size=(points, len(bnn.GROUPS)))
    lp = target.log_density(x)
    d = target.data
    xs = jnp.asarray(d.standard_x(d.x))
    ys = jnp.asarray((d.y - d.y_mean) / d.y_sd)
    diffs = []
    for i in range(points):
        w_in, b_h, w_out, w_dir, b_out = target.unpack(x[i])
        params = {"W_in": w_in, "b_hidden": b_h, "W_out": w_out, "W_direct": w_dir, "b_out": b_out}
        params |= {f"tau_{g}": x[i, target.n_weights + k] for k, g in enumerate(bnn.GROUPS)}  # unconstrained: log tau
        pe = float(potential_energy(npm.model, (xs, ys, hidden), {}, {k: jnp.asarray(v) for k, v in params.items()}))
        diffs.append(lp[i] + pe)
    return float(np.ptp(diffs))


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - t


def mcmc_command() -> str:
    script = Path(sys.executable).parent / "mcmc"
    return str(script) if script.exists() else shutil.which("mcmc") or "mcmc"


def run_ours(
    train: Path, test: Path, out: Path, a: argparse.Namespace
) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
    run, pred = out / f"{train.stem}_ours.npz", out / f"{train.stem}_pred.csv"
    cmd = [
        mcmc_command(), "sample", "-t", "bnn", "--data", str(train), "-T", f"hidden={a.hidden}", "-c", str(a.chains),
        "--warmup", str(a.warmup), "--draws", str(a.draws), "--seed", str(a.seed), "--predict", str(test),
        "--predictions", str(pred), "-o", str(run), "-q",
    ]  # fmt: skip
    seconds = timed(cmd)
    chains = read_chains([str(run)])
    target = bnn.bnn(str(train), a.hidden)
    x_test, _ = bnn.read_test(str(test), target.data)
    f = bnn.predict(target, chains.posterior, x_test).draws_mean
    return seconds, {k: np.asarray(chains.posterior[k]) for k in HYPERPARAMETERS}, f


def run_numpyro(
    train: Path, test: Path, out: Path, a: argparse.Namespace
) -> tuple[float, dict[str, np.ndarray], np.ndarray, np.ndarray]:
    run = out / f"{train.stem}_numpyro.npz"
    cmd = [
        sys.executable, str(HERE / "bnn_numpyro.py"), str(train), str(test), str(run), "--hidden", str(a.hidden),
        "--chains", str(a.chains), "--warmup", str(a.warmup), "--draws", str(a.draws), "--seed", str(a.seed),
    ]  # fmt: skip
    seconds = timed(cmd)
    with np.load(run) as z:
        hyper = {k: z[k] for k in HYPERPARAMETERS}
        return seconds, hyper, z["prediction"], z["num_steps"]


def summarize(name: str, seconds: float, hyper: dict[str, np.ndarray], f: np.ndarray) -> tuple[float, float]:
    ess_h = stats.ess_bulk(np.stack([hyper[k] for k in HYPERPARAMETERS], axis=-1))
    ess_p = stats.ess_bulk(f)
    worst = HYPERPARAMETERS[int(np.argmin(ess_h))]
    print(
        f"  {name:8s} {seconds:8.1f} s   hyper ESS min {ess_h.min():7.0f} ({worst}) = {ess_h.min() / seconds:7.2f}/s"
        f"   prediction ESS min {ess_p.min():7.0f} = {ess_p.min() / seconds:7.2f}/s"
    )
    return ess_h.min() / seconds, ess_p.min() / seconds


def agreement(ours: tuple[dict, np.ndarray], peer: tuple[dict, np.ndarray]) -> None:
    def moments(hyper: dict, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.concatenate([np.stack([hyper[k] for k in HYPERPARAMETERS], axis=-1), f], axis=-1)
        return stats.mean(x), stats.mcse_mean(x)

    names = list(HYPERPARAMETERS) + [f"prediction[{j}]" for j in range(ours[1].shape[-1])]
    z = z_scores(*moments(*ours), *moments(*peer))
    nh = len(HYPERPARAMETERS)
    hz = ", ".join(f"{n} {v:+.1f}" for n, v in zip(HYPERPARAMETERS, z[:nh], strict=True))
    print(f"  agreement z: {hz}; predictions |z| max {np.abs(z[nh:]).max():.1f} over {len(z) - nh} points")
    bad = [f"{names[i]} ({z[i]:+.1f})" for i in np.flatnonzero(~(np.abs(z) <= Z_LIMIT))]
    print(f"  |z| > {Z_LIMIT:g}: {', '.join(bad) if bad else 'none'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default="mcycle,friedman", help="comma-separated: mcycle, friedman")
    a = ap.parse_args()
    print(f"{a.chains} chains x ({a.warmup} warm-up + {a.draws} draws), {a.hidden} hidden units, seed {a.seed}")
    with tempfile.TemporaryDirectory(prefix="bnn-bench-") as tmp:
        out = Path(tmp)
        for name, (train, test) in datasets(out, a.data.split(",")).items():
            n_train, n_test = (len(np.loadtxt(p, delimiter=",", skiprows=1, ndmin=2)) for p in (train, test))
            spread = check_same_density(train, a.hidden)
            print(
                f"{name}: {n_train} train / {n_test} test rows; log density ours + NumPyro's potential spread {spread:.1e} (0: same model)"
            )
            s_ours, h_ours, f_ours = run_ours(train, test, out, a)
            s_np, h_np, f_np, steps = run_numpyro(train, test, out, a)
            r_ours = summarize("ours", s_ours, h_ours, f_ours)
            r_np = summarize("numpyro", s_np, h_np, f_np)
            print(f"  numpyro leapfrog steps per draw: mean {steps.mean():.0f}, max {steps.max()}")
            print(
                f"  ratio ours/numpyro: hyperparameters {r_ours[0] / r_np[0]:.2f}, predictions {r_ours[1] / r_np[1]:.2f}"
            )
            agreement((h_ours, f_ours), (h_np, f_np))


if __name__ == "__main__":
    main()
