"""Benchmark: `mcmc diagnose --format json` against `arviz.summary`, whole processes.

Writes AR(1) draws (fixed seed) of ``chains x draws x params`` to a temporary
``.npz`` and times, best of ``--repeats``, two fresh Python processes on it:

* ``mcmc diagnose --format json FILE`` (read, every statistic of the report:
  R-hat, split R-hat, bulk/tail ESS, MCSE, quantiles, ACF, IAT, SSIF, checks,
  JSON rendering);
* a process that imports ArviZ 1.x, loads the same arrays and calls
  ``arviz.summary`` (mean, sd, HDI, MCSE, bulk/tail ESS, R-hat).

Process start-up and imports are part of both timings: that is what a user or
a CI job pays. Target: ratio <= 0.1. Run: ``python bench/diagnose.py`` (full
size, about a minute on a quiet 2-core machine) or ``--params 100`` to smoke-test.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ARVIZ_SCRIPT = """
import sys
import numpy as np
import arviz as az
with np.load(sys.argv[1]) as f:
    theta = f["theta"]
data = az.from_dict({"posterior": {"theta": theta}})
table = az.summary(data)
assert len(table) == theta.shape[2]
"""


def ar1_draws(rng: np.random.Generator, chains: int, draws: int, params: int, phi: float = 0.6) -> np.ndarray:
    """Stationary AR(1) draws ``(chain, draw, params)``, unit marginal variance."""
    x = np.empty((chains, draws, params))
    x[:, 0] = rng.standard_normal((chains, params))
    noise = rng.standard_normal((chains, draws, params)) * np.sqrt(1 - phi**2)
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def best_time(cmd: list[str], repeats: int, ok_codes: tuple[int, ...]) -> tuple[float, float]:
    """Best wall-clock and best CPU (user + system) seconds of ``cmd`` over ``repeats`` runs.

    CPU time is reported too because on a shared machine wall-clock time
    mostly measures the other jobs.
    """
    best_wall = best_cpu = float("inf")
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in ok_codes:
            sys.exit(f"{' '.join(cmd)} failed with {proc.returncode}:\n{proc.stderr.decode()}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu = min(best_wall, elapsed), min(best_cpu, cpu)
    return best_wall, best_cpu


def compile_package() -> None:
    """Byte-compile mcmc's sources, as installing a wheel does.

    An editable install leaves them uncompiled, and with PYTHONDONTWRITEBYTECODE
    (set on the project's machines) every timed run would compile them again,
    which no installed copy pays. ArviZ's site-packages are compiled by pip.
    """
    import compileall

    import mcmc.cli
    import mcmc.core
    import mcmc.diagnostics

    for package in (mcmc.cli, mcmc.core, mcmc.diagnostics):
        for folder in package.__path__:
            compileall.compile_dir(folder, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--params", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20211)
    args = parser.parse_args()

    compile_package()
    rng = np.random.default_rng(args.seed)
    theta = ar1_draws(rng, args.chains, args.draws, args.params)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "draws.npz"
        np.savez(path, theta=theta)
        # Exit 1 is a legitimate verdict: with 1000 parameters a few R-hats exceed 1.01 by chance.
        mcmc = [sys.executable, "-m", "mcmc.cli.app", "diagnose", "--format", "json", str(path)]
        ours = best_time(mcmc, args.repeats, (0, 1))
        arviz = best_time([sys.executable, "-c", ARVIZ_SCRIPT, str(path)], args.repeats, (0,))
    size = f"{args.chains} chains x {args.draws} draws x {args.params} parameters"
    print(f"diagnose benchmark: {size}, best of {args.repeats} whole processes")
    print("                                  wall s    CPU s")
    print(f"  mcmc diagnose --format json : {ours[0]:7.3f}  {ours[1]:7.3f}")
    print(f"  arviz.summary               : {arviz[0]:7.3f}  {arviz[1]:7.3f}")
    print(f"  ratio (target <= 0.1)       : {ours[0] / arviz[0]:7.3f}  {ours[1] / arviz[1]:7.3f}")


if __name__ == "__main__":
    main()
