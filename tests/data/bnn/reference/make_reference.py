"""Reference posterior of the BNN on mcycle by NumPyro's NUTS, stored for tests/core/test_bnn_reference.py.

Run once from the repository root with the bench extra installed (NumPyro, JAX):

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python tests/data/bnn/reference/make_reference.py

The model is ``bench/bnn_numpyro.py``'s (the same network, priors and
standardization as ``mcmc sample --target bnn``; ``bench/bnn.py --check``
shows the two log densities differ by a constant). Data: ``tests/data/bnn/mcycle.csv``
split as the tests split it (every 4th row held out), H = 8 hidden units,
8 chains x (1000 warm-up + 2500 draws), seed 0.

Stored, for quantities that are identified (single weights are not: hidden
units swap and flip sign): the noise sd and the network's output at the
held-out inputs, each as posterior mean, MCSE of the mean (``mcse_mean`` of
mcmc.diagnostics.stats, equal to ArviZ's) and sd, with the versions used.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
MCYCLE = HERE.parent / "mcycle.csv"
HIDDEN, CHAINS, WARMUP, DRAWS, SEED = 8, 8, 1000, 2500, 0


def split() -> tuple[np.ndarray, np.ndarray]:
    """The tests' split: every 4th row held out."""
    table = np.loadtxt(MCYCLE, delimiter=",", skiprows=1)
    test = np.arange(table.shape[0]) % 4 == 0
    return table[~test], table[test]


def main() -> None:
    from mcmc.diagnostics.stats import mcse_mean

    train, test = split()
    with tempfile.TemporaryDirectory() as tmp:
        tr, te, out = Path(tmp, "train.csv"), Path(tmp, "test.csv"), Path(tmp, "nuts.npz")
        np.savetxt(tr, train, delimiter=",", header="times,accel", comments="")
        np.savetxt(te, test, delimiter=",", header="times,accel", comments="")
        subprocess.run([sys.executable, str(ROOT / "bench" / "bnn_numpyro.py"), str(tr), str(te), str(out),
                        "--hidden", str(HIDDEN), "--chains", str(CHAINS), "--warmup", str(WARMUP),
                        "--draws", str(DRAWS), "--seed", str(SEED)], check=True)
        draws = dict(np.load(out))
    quantities = {"noise_sd": draws["noise_sd"][..., None], "prediction": draws["prediction"]}
    ref = {
        "about": "NumPyro NUTS reference for tests/core/test_bnn_reference.py; made by make_reference.py",
        "versions": {p: version(p) for p in ("numpyro", "jax", "numpy")},
        "settings": {"hidden": HIDDEN, "chains": CHAINS, "warmup": WARMUP, "draws": DRAWS, "seed": SEED,
                     "divergences": int(draws["diverging"].sum())},
        "test_x": test[:, 0].tolist(),
    }
    for name, x in quantities.items():
        ref[name] = {"mean": x.mean(axis=(0, 1)).tolist(), "mcse": mcse_mean(x).tolist(),
                     "sd": x.std(axis=(0, 1), ddof=1).tolist()}
    (HERE / "nuts_mcycle_h8.json").write_text(json.dumps(ref, indent=1) + "\n")


if __name__ == "__main__":
    main()
