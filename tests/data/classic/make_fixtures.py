"""Generate the chains of tests/data/classic and the Python reference values (arviz_stats, emcee).

Run once from the repository root (needs arviz_stats and emcee, i.e. the
``bench`` extra): ``python tests/data/classic/make_fixtures.py``; then
``Rscript tests/data/classic/reference_coda.R`` for the R values. The tests
read only the stored files.

Each fixture is a CSV ``chain,draw,<parameter>...`` (1-based chain and draw),
values rounded to 6 decimals so that R and NumPy parse the same doubles.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
ROOT = HERE.parents[2]


def ar1(rng, chains, draws, phi):
    phi = np.asarray(phi, dtype=float)
    e = rng.standard_normal((chains, draws, phi.size))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0] / np.sqrt(1 - phi**2)
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


def sticky(rng, chains, draws, stay):
    """A Metropolis-like chain: with probability ``stay`` it repeats its last draw."""
    x = np.empty((chains, draws))
    x[:, 0] = rng.standard_normal(chains)
    for t in range(1, draws):
        move = rng.random(chains) >= stay
        x[:, t] = np.where(move, 0.5 * x[:, t - 1] + rng.standard_normal(chains), x[:, t - 1])
    return x


def fixtures() -> dict[str, tuple[np.ndarray, list[str]]]:
    rng = np.random.default_rng(20240611)
    out = {}
    # long AR(1) chains (Raftery-Lewis needs >= 3746 draws), a sticky chain for the rejection rate
    x = ar1(rng, 2, 4000, [0.0, 0.5, 0.9])
    x = np.concatenate([x + np.array([1.0, 10.0, -3.0]), sticky(rng, 2, 4000, 0.6)[..., None]], axis=-1)
    # an AR(2) whose dichotomized series is not first-order Markov: Raftery-Lewis thins it
    e = np.random.default_rng(7).standard_normal((2, 4000))
    ar2 = np.zeros_like(e)
    for t in range(2, 4000):
        ar2[:, t] = 0.5 * ar2[:, t - 1] + 0.3 * ar2[:, t - 2] + e[:, t]
    x = np.concatenate([x, ar2[..., None]], axis=-1)
    out["ar1_long"] = (x, ["white", "ar05", "ar09", "sticky", "ar2"])
    # an odd chain length: coda's window rounding (heidel starts 1, 101.5, 202, ...; T/2 = 502.5)
    # and initial transients, so that later starts (202, 303, 403) are chosen and one chain fails
    t = np.arange(1005)
    transients = np.stack([4.0 * np.exp(-t / 100.0), 2.0 * np.exp(-t / 200.0)], axis=-1)
    out["odd_length"] = (ar1(rng, 3, 1005, [0.3, 0.8]) + 2.0 + transients, ["a", "b"])
    # not stationary: an initial transient decaying into AR(1) noise, and a random walk
    t = np.arange(1000)
    transient = 8.0 * np.exp(-t / 150.0)[None, :] + ar1(rng, 2, 1000, [0.5])[..., 0]
    walk = np.cumsum(rng.standard_normal((2, 1000)), axis=1)
    out["nonstationary"] = (np.stack([transient, walk], axis=-1), ["transient", "walk"])
    # many short chains, four superchains of two, the last superchain elsewhere in one parameter
    x = ar1(rng, 8, 200, [0.2, 0.6, 0.6])
    x[6:, :, 1] += 1.5
    x[:, :, 2] += np.repeat(rng.normal(0, 0.3, 4), 2)[:, None]
    out["not_converged"] = (x, ["mixed", "one_superchain_off", "superchain_offsets"])
    # ArviZ's centered eight schools (tests/data/fixtures), 4 chains x 500 draws
    with np.load(ROOT / "tests/data/fixtures/centered_eight_posterior.npz") as f:
        parts, names = [], []
        for key in f.files:
            if key.startswith("sample_stats__"):
                continue
            a = f[key].reshape(f[key].shape[0], f[key].shape[1], -1)
            parts.append(a)
            names += [key] if a.shape[-1] == 1 else [f"{key}[{i}]" for i in range(a.shape[-1])]
    out["eight_schools"] = (np.concatenate(parts, axis=-1), names)
    return {k: (np.round(v, 6), n) for k, (v, n) in out.items()}


SUPERCHAINS = {"not_converged": [0, 0, 1, 1, 2, 2, 3, 3], "eight_schools": [0, 1, 0, 1]}


def write_csv(path: Path, x: np.ndarray, names: list[str]) -> None:
    c, d, n = x.shape
    lines = ["chain,draw," + ",".join(f'"{m}"' for m in names)]
    for i in range(c):
        for j in range(d):
            lines.append(f"{i + 1},{j + 1}," + ",".join(repr(float(v)) for v in x[i, j]))
    path.write_text("\n".join(lines) + "\n")


def python_reference(x: np.ndarray, superchains) -> dict:
    import warnings

    import emcee
    from arviz_stats.base import array_stats as az

    xa = np.moveaxis(x, -1, 0)  # (n, chain, draw)
    ref = {}
    for p in (0.05, 0.5, 0.95):
        ref[f"ess_quantile_{p}"] = az.ess(xa, method="quantile", prob=p).tolist()
        ref[f"mcse_quantile_{p}"] = az.mcse(xa, method="quantile", prob=p).tolist()
    ref["hdi"] = az.hdi(xa, 0.89, axis=(-2, -1), method="nearest").T.tolist()
    ref["eti"] = az.eti(xa, 0.89, axis=(-2, -1)).T.tolist()
    if superchains is not None:
        ref["rhat_nested"] = az.rhat_nested(xa, superchain_ids=np.asarray(superchains)).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref["iat_emcee"] = emcee.autocorr.integrated_time(np.moveaxis(x, 0, 1), quiet=True).tolist()
    return ref


def main() -> None:
    import arviz_stats
    import emcee

    refs = {
        "versions": {"arviz_stats": arviz_stats.__version__, "emcee": emcee.__version__, "numpy": np.__version__},
        "superchains": SUPERCHAINS,
        "fixtures": {},
    }
    for name, (x, names) in fixtures().items():
        write_csv(HERE / f"{name}.csv", x, names)
        refs["fixtures"][name] = python_reference(x, SUPERCHAINS.get(name))
    (HERE / "reference_python.json").write_text(json.dumps(refs, indent=1) + "\n")
    print("wrote", ", ".join(sorted(refs["fixtures"])), file=sys.stderr)


if __name__ == "__main__":
    main()
