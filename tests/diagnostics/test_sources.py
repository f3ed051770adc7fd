"""Files written by PyMC, NumPyro, emcee and ArviZ (tests/data/diagnose/): names, slicing, zarr, HDF5.

Each file is read back independently (xarray, h5py, NumPy) and compared with
what ``read_chains`` made of it; names are compared with what ``az.summary``
prints for the same file.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import xarray as xr

from mcmc.core.chains import Chains, scalar_names
from mcmc.core.errors import InputError, UsageError
from mcmc.diagnostics.readers import read_chains
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.compare import compare_draws
from mcmc.diagnostics.report.selection import select

DATA = Path(__file__).parents[1] / "data"
SRC = DATA / "diagnose"
PYMC = SRC / "pymc_eight_schools.nc"
NUMPYRO = SRC / "numpyro_eight_schools.nc"
ZARR = SRC / "numpyro_eight_schools.zarr"
EMCEE_NPY = SRC / "emcee_chain.npy"
EMCEE_NC = SRC / "emcee_line.nc"
EMCEE_H5 = SRC / "emcee_backend.h5"
SCHOOLS = [
    "Choate", "Deerfield", "Phillips Andover", "Phillips Exeter",
    "Hotchkiss", "Lawrenceville", "St. Paul's", "Mt. Hermon",
]  # fmt: skip


def read(*paths: Path, **kwargs: object) -> Chains:
    return read_chains([str(p) for p in paths], **kwargs)


def names(chains: Chains, var: list[str] | None = None) -> list[str]:
    return list(select(chains, var).names)


def input_error(paths: list[Path], **kwargs: object) -> InputError:
    with pytest.raises(InputError) as info:
        read(*paths, **kwargs)
    assert "\n" not in str(info.value)
    return info.value


# --- names -----------------------------------------------------------------------


def test_scalar_names_take_labels_and_a_separator() -> None:
    assert scalar_names("theta", (2,), [("Choate", "Deerfield")]) == ["theta[Choate]", "theta[Deerfield]"]
    labels = [("x", "y"), ("p", "q")]
    assert scalar_names("M", (2, 2), labels) == ["M[x, p]", "M[x, q]", "M[y, p]", "M[y, q]"]
    assert scalar_names("M", (1, 2), [("1",), ("1", "2")], sep=",") == ["M[1,1]", "M[1,2]"]
    assert scalar_names("tau", (), None) == ["tau"]


def test_pymc_names_are_those_az_summary_prints() -> None:
    import arviz as az

    chains = read(PYMC)
    with xr.open_datatree(PYMC, engine="h5netcdf") as tree:
        expected = list(az.summary(tree, var_names=["mu", "theta", "tau", "M"], kind="diagnostics").index)
        theta = tree["posterior"]["theta"].transpose("chain", "draw", "school").values
    assert names(chains) == expected
    assert "theta[Choate]" in expected and "M[x, p]" in expected  # the labels really are in the file
    np.testing.assert_array_equal(chains.posterior["theta"], theta)
    assert {"diverging", "energy", "lp", "acceptance_rate", "tree_depth"} <= set(chains.sample_stats)


def test_var_selects_one_labelled_scalar_or_the_whole_variable() -> None:
    chains = read(PYMC)
    assert names(chains, ["theta[Choate]"]) == ["theta[Choate]"]
    assert names(chains, ["theta"]) == [f"theta[{s}]" for s in SCHOOLS]
    assert names(chains, ["theta[Phillips*]"]) == ["theta[Phillips Andover]", "theta[Phillips Exeter]"]
    # typed as CmdStan users type a multi-index, without the space
    assert names(chains, ["M[y,q]"]) == names(chains, ["M[y, q]"]) == ["M[y, q]"]
    report = check(chains, var=["theta[St. Paul's]"])
    (param,) = report.parameters
    np.testing.assert_array_equal(report.draws[:, :, 0], chains.posterior["theta"][:, :, 6])
    assert param.name == "theta[St. Paul's]" and param.variable == "theta"
    with pytest.raises(UsageError, match="theta\\[Eton\\]"):
        select(chains, ["theta[Eton]"])


def test_numpyro_netcdf_and_its_zarr_copy_read_alike() -> None:
    nc, zarr = read(NUMPYRO), read(ZARR)
    assert names(nc) == names(zarr)
    assert f"theta[{SCHOOLS[0]}]" in names(nc) and f"eta[{SCHOOLS[-1]}]" in names(nc)
    assert list(nc.posterior) == list(zarr.posterior) == ["eta", "mu", "tau", "theta"]
    for name in nc.posterior:
        np.testing.assert_array_equal(nc.posterior[name], zarr.posterior[name])
    assert set(nc.sample_stats) == set(zarr.sample_stats) >= {"diverging", "energy", "tree_depth", "n_steps"}
    for name in nc.sample_stats:
        np.testing.assert_array_equal(nc.sample_stats[name], zarr.sample_stats[name])
    with xr.open_datatree(ZARR, engine="zarr") as tree:
        mu = tree["posterior"]["mu"].values
    np.testing.assert_array_equal(zarr.posterior["mu"], mu)
    assert zarr.n_chains == 2 and zarr.n_draws == 100


def test_a_directory_that_is_not_a_zarr_store_or_a_broken_one(tmp_path: Path) -> None:
    plain = tmp_path / "plain.zarr"
    plain.mkdir()
    err = input_error([plain])
    assert err.source == str(plain) and "is a directory" in err.message and "zarr" in err.message
    broken = tmp_path / "broken.zarr"
    shutil.copytree(ZARR, broken)
    (broken / "zarr.json").write_text("{not json")
    err = input_error([broken])
    assert err.source == str(broken) and "corrupt or truncated zarr store" in err.message
    assert "--layout applies to bare arrays" in input_error([ZARR], layout="draw,chain").message


def test_cmdstan_and_r_draws_keep_their_1_based_names() -> None:
    chains = read(DATA / "readers" / "save_warmup_thin.csv")
    z = [n for n in names(chains) if n.startswith("z[")]
    assert z == [f"z[{i},{j}]" for i in (1, 2) for j in (1, 2, 3)]  # stansummary's y[1,2]
    # z.i.j holds d.ij in draw d (readers/README.md): the name points at the right column
    report = check(chains, var=["z[2, 3]"])
    (param,) = report.parameters
    assert param.name == "z[2,3]"
    np.testing.assert_allclose(report.draws[0, :, 0] % 1, 0.23, rtol=1e-9)
    r = read(DATA / "readers" / "as_draws_df.csv")
    assert names(r) == ["mu", "theta[1]", "theta[2]"]


def test_compare_pairs_a_1_based_run_with_a_0_based_one_by_index() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 200, 3)) + np.array([0.0, 10.0, 20.0])
    ours = Chains({"theta": x})
    stan = Chains({"theta": x[::-1].copy()}, coords={"theta": (("1", "2", "3"),)}, index_sep=",")
    assert names(stan) == ["theta[1]", "theta[2]", "theta[3]"]
    result = compare_draws(ours, stan)
    # paired by position: theta[0] with theta[1] (both mean 0), so every z is small
    assert [p.name for p in result.parameters] == ["theta[0]", "theta[1]", "theta[2]"]
    assert all(p.passed for p in result.parameters) and not result.only_in_a and not result.only_in_b
    assert [round(p.mean_b, 6) for p in result.parameters] == [round(v, 6) for v in x.mean(axis=(0, 1))]


# --- emcee -------------------------------------------------------------------------


def test_emcee_npy_with_layout_and_names_equals_az_from_emcee() -> None:
    npy = read(EMCEE_NPY, layout="draw,chain", names="m,b,log_f")
    nc = read(EMCEE_NC)
    assert list(npy.posterior) == list(nc.posterior) == ["m", "b", "log_f"]
    assert npy.n_chains == 10 and npy.n_draws == 120
    for name in nc.posterior:
        np.testing.assert_array_equal(npy.posterior[name], nc.posterior[name])
    raw = np.load(EMCEE_NPY)  # (draw, walker, dim)
    np.testing.assert_array_equal(npy.posterior["log_f"], raw[:, :, 2].T)
    assert names(npy) == ["m", "b", "log_f"]
    np.testing.assert_array_equal(nc.sample_stats["lp"].shape, (10, 120))


def test_emcee_hdf5_backend_reads_only_the_completed_steps() -> None:
    chains = read(EMCEE_H5)
    with h5py.File(EMCEE_H5, "r") as fh:
        g = fh["mcmc"]
        iteration = int(g.attrs["iteration"])
        chain, log_prob, accepted = g["chain"][()], g["log_prob"][()], g["accepted"][()]
    assert iteration == 80 and chain.shape == (120, 10, 3)
    assert not chain[iteration:].any()  # allocated, never written: must not become draws
    assert chains.n_chains == 10 and chains.n_draws == iteration
    np.testing.assert_array_equal(chains.posterior["x"], chain[:iteration].transpose(1, 0, 2))
    np.testing.assert_array_equal(chains.sample_stats["lp"], log_prob[:iteration].T)
    per_chain = check(chains).sampler.acceptance
    np.testing.assert_allclose(per_chain.per_chain, accepted / iteration, rtol=1e-12)
    assert per_chain.source == "sampler statistics"
    assert chains.attrs["sampler"] == "emcee" and chains.attrs["emcee_version"] == "3.1.6"
    named = read(EMCEE_H5, names=["m", "b", "log_f"])
    assert names(named) == ["m", "b", "log_f"]
    np.testing.assert_array_equal(named.posterior["b"], chain[:iteration, :, 1].T)


def test_emcee_hdf5_refuses_a_layout_an_empty_run_and_a_short_chain(tmp_path: Path) -> None:
    assert "own axis order" in input_error([EMCEE_H5], layout="chain,draw").message
    empty = tmp_path / "empty.h5"
    shutil.copy(EMCEE_H5, empty)
    with h5py.File(empty, "r+") as fh:
        fh["mcmc"].attrs["iteration"] = 0
    assert "no draws yet (iteration = 0)" in input_error([empty]).message
    short = tmp_path / "short.h5"
    shutil.copy(EMCEE_H5, short)
    with h5py.File(short, "r+") as fh:
        fh["mcmc"].attrs["iteration"] = 500
    err = input_error([short])
    assert err.source == str(short) and "iteration = 500 but only 120 rows" in err.message


def test_an_hdf5_file_that_is_neither_emcee_nor_netcdf(tmp_path: Path) -> None:
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as fh:
        fh["data"] = np.zeros((2, 3))
    assert "no 'posterior' group" in input_error([path]).message


# --- --names -------------------------------------------------------------------------


def test_names_name_the_last_axis_of_bare_arrays_from_any_source(tmp_path: Path) -> None:
    x = np.arange(2 * 5 * 3, dtype=float).reshape(2, 5, 3)
    np.savez(tmp_path / "bare.npz", x)
    npz = read(tmp_path / "bare.npz", names="a, b ,c")
    assert list(npz.posterior) == ["a", "b", "c"]
    np.testing.assert_array_equal(npz.posterior["c"], x[:, :, 2])
    buf = io.BytesIO()
    np.save(buf, x)
    piped = read_chains(["-"], stdin=io.BytesIO(buf.getvalue()), names=["a", "b", "c"])
    np.testing.assert_array_equal(piped.posterior["b"], x[:, :, 1])
    np.save(tmp_path / "one.npy", x[:, :, 0])
    assert list(read(tmp_path / "one.npy", names="alpha").posterior) == ["alpha"]


def test_names_errors(tmp_path: Path) -> None:
    err = input_error([EMCEE_NPY], layout="draw,chain", names="m,b")
    assert err.source == str(EMCEE_NPY)
    assert "--names gives 2 names (m, b) but the last axis of 'x'" in err.message and "has 3" in err.message
    assert "--names applies to bare arrays" in input_error([EMCEE_NC], names="m,b,log_f").message
    np.savez(tmp_path / "two.npz", np.zeros((2, 5, 3)), np.zeros((2, 5, 3)))
    assert "this file holds 2 (arr_0, arr_1)" in input_error([tmp_path / "two.npz"], names="a,b,c").message
    np.save(tmp_path / "one.npy", np.zeros((2, 5)))
    assert "is one parameter" in input_error([tmp_path / "one.npy"], names="a,b").message
    for bad, message in (("a,,b", "non-empty"), ("a,b,a", "gives a more than once"), ("", "non-empty"),
                         ("sample_stats__x", "reserved")):  # fmt: skip
        with pytest.raises(UsageError, match=message):
            read(EMCEE_NPY, layout="draw,chain", names=bad)


# --- --discard / --thin ---------------------------------------------------------------


def test_discard_and_thin_cut_draws_and_statistics_alike() -> None:
    full = read(PYMC)
    cut = read(PYMC, discard=30, thin=4)
    assert cut.n_draws == len(range(30, 100, 4)) == 18
    for name, arr in full.posterior.items():
        np.testing.assert_array_equal(cut.posterior[name], arr[:, 30::4])
    for name, arr in full.sample_stats.items():
        np.testing.assert_array_equal(cut.sample_stats[name], arr[:, 30::4])
    assert cut.coords == full.coords and names(cut) == names(full)
    assert cut.attrs["discard"] == 30 and cut.attrs["thin_by"] == 4
    assert read(PYMC, discard=0, thin=1) is not None and "discard" not in read(PYMC).attrs
    # emcee's own get_chain(discard=, thin=) gives the same draws
    h5 = read(EMCEE_H5, discard=20, thin=3)
    with h5py.File(EMCEE_H5, "r") as fh:
        chain = fh["mcmc"]["chain"][:80]
    np.testing.assert_array_equal(h5.posterior["x"], chain[20::3].transpose(1, 0, 2))


def test_discard_and_thin_errors() -> None:
    err = input_error([PYMC], discard=100)
    assert err.source == str(PYMC) and "--discard 100 leaves no draws: each chain has 100" in err.message
    with pytest.raises(UsageError, match="--thin must be a whole number of at least 1"):
        read(PYMC, thin=0)
    with pytest.raises(UsageError, match="--discard must be a non-negative"):
        read(PYMC, discard=-1)
    # several CmdStan files: burn-in is taken from each chain, after they are stacked
    mix = [DATA / "fixtures" / "cmdstan" / f"mix_output.{i}.csv" for i in (1, 2)]
    both = read(*mix, discard=10)
    assert both.n_chains == 2 and both.n_draws == read(*mix).n_draws - 10
    assert names(both)[:2] == ["mu[1]", "mu[2]"]
