"""Benchmark: `mcmc diagnose --html` (plots of 8 parameters inline) as a whole process.

Writes NUTS-like draws (fixed seed: AR(1) chains, ``diverging`` and ``energy``
statistics) of ``chains x draws x params`` to a temporary ``.npz`` and times,
best of ``--repeats``, fresh processes of

* ``mcmc diagnose FILE -f json -o /dev/null`` (the plain gate, no plotting);
* ``mcmc diagnose FILE --html report.html`` (8 parameters plotted: the default
  ``--plot-max``), and the same with ``--junit``, ``--output-md`` and ``--plot``
  beside it.

Target (issue 10): the ``--html`` run under 3 s. Run:
``python bench/report_outputs.py`` or ``--params 1000`` for a wide model.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--params", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(20240601)
    c, d, n = args.chains, args.draws, args.params
    phi = rng.uniform(0.0, 0.95, n)
    x = np.empty((c, d, n))
    x[:, 0] = rng.standard_normal((c, n))
    for t in range(1, d):
        x[:, t] = phi * x[:, t - 1] + np.sqrt(1 - phi**2) * rng.standard_normal((c, n))
    energy = rng.standard_normal((c, d)).cumsum(axis=1) * 0.3
    diverging = rng.random((c, d)) < 0.002
    mcmc = str(Path(sys.executable).with_name("mcmc"))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "run.npz"
        np.savez(src, theta=x, sample_stats__energy=energy, sample_stats__diverging=diverging)
        runs = {
            "plain json": [mcmc, "diagnose", str(src), "-f", "json", "-o", "/dev/null"],
            "--html": [mcmc, "diagnose", str(src), "-o", "/dev/null", "--html", f"{tmp}/r.html"],
            "--html --junit --output-md --plot": [
                mcmc, "diagnose", str(src), "-o", "/dev/null", "--html", f"{tmp}/r.html", "--junit", f"{tmp}/j.xml",
                "--output-md", f"{tmp}/r.md", "--plot", f"{tmp}/p.png",
            ],
        }  # fmt: skip
        print(f"{c} chains x {d} draws x {n} parameters")
        for label, cmd in runs.items():
            best = np.inf
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                subprocess.run(cmd, capture_output=True, check=False)
                best = min(best, time.perf_counter() - t0)
            print(f"  {label:36s} {best:6.2f} s")


if __name__ == "__main__":
    main()
