"""Write the diagnose reader fixtures with the real libraries, once.

Run in a throwaway environment, never as a dependency of mcmc::

    python3.12 -m venv /tmp/gen-venv && /tmp/gen-venv/bin/pip install pymc numpyro emcee zarr arviz h5py
    /tmp/gen-venv/bin/python tests/data/diagnose/make_fixtures.py

Every file is small (a few chains of 100 draws) and seeded; the versions used
are written to ``versions.json`` beside them (and listed in tests/data/README.md).
Only the ``posterior`` and ``sample_stats`` groups are kept: that is what
``mcmc diagnose`` reads, and the other groups would only make the files bigger.
"""

from __future__ import annotations

import json
import shutil
from importlib.metadata import version
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SCHOOLS = [
    "Choate", "Deerfield", "Phillips Andover", "Phillips Exeter",
    "Hotchkiss", "Lawrenceville", "St. Paul's", "Mt. Hermon",
]  # fmt: skip
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def keep(tree, groups=("posterior", "sample_stats")):
    """The tree with only ``groups``, and without the wall-clock stamps (same seed, same content)."""
    import xarray as xr

    out = xr.DataTree.from_dict({g: tree[g].to_dataset() for g in groups if g in tree.children})
    out.attrs.update(tree.attrs)
    for node in out.subtree:
        node.attrs.pop("created_at", None)
    return out


def pymc_eight_schools() -> None:
    """Centered eight schools with school names, and a 2 x 2 matrix with labelled rows and columns."""
    import pymc as pm

    coords = {"school": SCHOOLS, "row": ["x", "y"], "col": ["p", "q"]}
    with pm.Model(coords=coords):
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        theta = pm.Normal("theta", mu, tau, dims="school")
        pm.Normal("obs", theta, SIGMA, observed=Y, dims="school")
        # M[x, p] as az.summary prints a labelled matrix
        pm.Deterministic("M", pm.math.stack([[mu, tau], [mu - tau, mu + tau]]), dims=("row", "col"))
        tree = pm.sample(draws=100, tune=300, chains=2, cores=1, random_seed=8, progressbar=False,
                         compute_convergence_checks=False)
    keep(tree).to_netcdf(HERE / "pymc_eight_schools.nc", engine="h5netcdf")


def numpyro_eight_schools():
    """Non-centered eight schools in NumPyro, through az.from_numpyro with school names."""
    import arviz as az
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    numpyro.set_host_device_count(1)

    def model(sigma, y=None):
        mu = numpyro.sample("mu", dist.Normal(0, 5))
        tau = numpyro.sample("tau", dist.HalfCauchy(5))
        with numpyro.plate("J", len(sigma)):
            eta = numpyro.sample("eta", dist.Normal(0, 1))
            theta = numpyro.deterministic("theta", mu + tau * eta)
            numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)

    mcmc = MCMC(NUTS(model), num_warmup=300, num_samples=100, num_chains=2, chain_method="sequential",
                progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), SIGMA, y=Y, extra_fields=("diverging", "energy", "num_steps"))
    tree = az.from_numpyro(mcmc, coords={"school": SCHOOLS}, dims={"theta": ["school"], "eta": ["school"]})
    tree = keep(tree)
    tree.to_netcdf(HERE / "numpyro_eight_schools.nc", engine="h5netcdf")
    store = HERE / "numpyro_eight_schools.zarr"
    shutil.rmtree(store, ignore_errors=True)
    tree.to_zarr(store)


def emcee_line() -> None:
    """emcee's "fitting a model to data" example: m, b, log_f; 10 walkers."""
    import arviz as az
    import emcee

    rng = np.random.default_rng(42)
    m_true, b_true, f_true = -0.9594, 4.294, 0.534
    x = np.sort(10 * rng.random(50))
    yerr = 0.1 + 0.5 * rng.random(50)
    y = m_true * x + b_true
    y += np.abs(f_true * y) * rng.standard_normal(50)
    y += yerr * rng.standard_normal(50)

    def log_prob(theta):
        m, b, log_f = theta
        if not (-5 < m < 0.5 and 0 < b < 10 and -10 < log_f < 1):
            return -np.inf
        model = m * x + b
        s2 = yerr**2 + model**2 * np.exp(2 * log_f)
        return -0.5 * np.sum((y - model) ** 2 / s2 + np.log(s2))

    nwalkers, ndim = 10, 3
    p0 = np.array([-1.0, 4.3, -0.7]) + 1e-4 * rng.standard_normal((nwalkers, ndim))
    sampler = emcee.EnsembleSampler(nwalkers, ndim, log_prob)
    sampler.random_state = np.random.RandomState(1).get_state()  # emcee's own generator, seeded  # noqa: NPY002
    sampler.run_mcmc(p0, 120, progress=False)
    np.save(HERE / "emcee_chain.npy", sampler.get_chain())  # (draw, walker, dim), draw-major
    tree = az.from_emcee(sampler, var_names=["m", "b", "log_f"])
    keep(tree).to_netcdf(HERE / "emcee_line.nc", engine="h5netcdf")

    # The HDF5 backend of a run stopped after 80 of 120 planned steps: the
    # datasets hold 120 rows, only the first `iteration` = 80 are draws.
    path = HERE / "emcee_backend.h5"
    path.unlink(missing_ok=True)
    backend = emcee.backends.HDFBackend(str(path), compression="gzip")
    backend.reset(nwalkers, ndim)
    sampler = emcee.EnsembleSampler(nwalkers, ndim, log_prob, backend=backend)
    sampler.random_state = np.random.RandomState(2).get_state()  # noqa: NPY002
    for i, _ in enumerate(sampler.sample(p0, iterations=120, progress=False)):
        if i + 1 == 80:
            break
    # emcee rewrites its attributes (the random state) at every step and HDF5
    # never reclaims the old space: copy the group into a fresh file (h5py's
    # copy keeps every dataset, chunk layout and attribute as emcee wrote them).
    import h5py

    tmp = path.with_suffix(".tmp.h5")
    with h5py.File(path, "r") as src, h5py.File(tmp, "w") as dst:
        src.copy("mcmc", dst)
    tmp.replace(path)


def main() -> None:
    names = ("arviz", "arviz-base", "xarray", "h5py", "h5netcdf", "zarr", "numpy", "pymc", "pytensor",
             "numpyro", "jax", "emcee")  # fmt: skip
    versions = {}
    for name in names:
        try:
            versions[name] = version(name)
        except Exception:  # noqa: BLE001
            pass
    emcee_line()
    numpyro_eight_schools()
    try:
        pymc_eight_schools()
    except Exception as exc:  # noqa: BLE001 -- PyMC needs a C compiler; say so rather than fail silently
        print(f"PyMC run failed ({exc}); pymc_eight_schools.nc not written")
        versions.pop("pymc", None)
    (HERE / "versions.json").write_text(json.dumps(versions, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
