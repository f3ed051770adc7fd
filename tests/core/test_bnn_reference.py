"""hmc-gibbs on the BNN agrees with a reference NUTS run of the same model (NumPyro), within Monte Carlo error.

The reference (``tests/data/bnn/reference/``, made once by ``make_reference.py``
there, versions recorded in the JSON) is NumPyro's NUTS on the same network,
priors and standardization, mcycle split as in ``test_bnn.py``, 8 hidden units.
Compared: the noise sd and the network's output at the held-out inputs, the
quantities that are identified (single weights are not: units swap and flip
sign). Each must be within 4 combined MCSEs of the reference.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mcmc.core.samplers import get_sampler
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from mcmc.core.targets.bnn import predict
from mcmc.diagnostics.stats import mcse_mean

DATA = Path(__file__).parents[1] / "data" / "bnn"
REFERENCE = json.loads((DATA / "reference" / "nuts_mcycle_h8.json").read_text())


def _split() -> tuple[np.ndarray, np.ndarray]:
    table = np.loadtxt(DATA / "mcycle.csv", delimiter=",", skiprows=1)
    test = np.arange(table.shape[0]) % 4 == 0
    return table[~test], table[test]


def _z(draws: np.ndarray, ref: dict) -> np.ndarray:
    """|ours - reference| in combined MCSEs, per quantity; ``draws`` (chain, draw, n)."""
    mean = draws.mean(axis=(0, 1))
    return np.abs(mean - np.asarray(ref["mean"])) / np.hypot(mcse_mean(draws), np.asarray(ref["mcse"]))


def test_hmc_gibbs_agrees_with_reference_nuts_on_mcycle(tmp_path: Path) -> None:
    train, test = _split()
    assert np.allclose(test[:, 0], REFERENCE["test_x"])
    path = tmp_path / "train.csv"
    np.savetxt(path, train, delimiter=",", header="times,accel", comments="")
    target = get_target("bnn", data=str(path), hidden=REFERENCE["settings"]["hidden"])
    chains = run(get_sampler("hmc-gibbs"), target, chains=4, warmup=300, draws=400, seed=2).chains
    noise = chains.posterior["noise_sd"].reshape(*chains.posterior["noise_sd"].shape[:2], 1)
    pred = predict(target, chains.posterior, test[:, :1]).draws_mean
    z_noise = _z(noise, REFERENCE["noise_sd"])
    z_pred = _z(pred, REFERENCE["prediction"])
    assert z_noise.max() < 4, z_noise
    assert z_pred.max() < 4, np.round(z_pred, 2)
