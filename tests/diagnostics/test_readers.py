"""read_chains: every input format on real files, round trips, and every bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcmc.core.chains import Chains, write_chains
from mcmc.core.errors import InputError
from mcmc.diagnostics.readers import read_chains

CMDSTAN_STATS = {
    "lp": np.float64,
    "acceptance_rate": np.float64,
    "step_size": np.float64,
    "tree_depth": np.int64,
    "n_steps": np.int64,
    "diverging": np.bool_,
    "energy": np.float64,
}



def stan_rows(path: Path) -> tuple[list[str], np.ndarray]:
    """Header and rows of a CmdStan CSV, read independently of the code under test."""
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    rows = list(csv.reader(lines))
    return rows[0], np.array(rows[1:], dtype=float)


def assert_same(a: Chains, b: Chains) -> None:
    assert list(a.posterior) == list(b.posterior)
    for name in a.posterior:
        assert a.posterior[name].dtype == b.posterior[name].dtype, name
        np.testing.assert_array_equal(a.posterior[name], b.posterior[name])
    assert sorted(a.sample_stats) == sorted(b.sample_stats)
    for name in a.sample_stats:
        assert a.sample_stats[name].dtype == b.sample_stats[name].dtype, name
        np.testing.assert_array_equal(a.sample_stats[name], b.sample_stats[name])
    assert a.attrs == b.attrs


def input_error(sources: list[str] | str, **kwargs: object) -> InputError:
    with pytest.raises(InputError) as info:
        read_chains(sources, **kwargs)
    err = info.value
    assert "\n" not in str(err), "the CLI prints InputError on one line"
    return err


# --- CmdStan: real files ------------------------------------------------------------


def test_cmdstan_bernoulli(data_dir: Path) -> None:
    path = data_dir / "fixtures/cmdstan/bernoulli_chain_1.csv"
    header, rows = stan_rows(path)
    chains = read_chains([str(path)])
    assert list(chains.posterior) == ["theta"]
    assert chains.posterior["theta"].shape == (1, 1000) == (1, rows.shape[0])
    np.testing.assert_array_equal(chains.posterior["theta"][0], rows[:, header.index("theta")])
    assert chains.posterior["theta"][0, 0] == 0.182337  # first draw as printed in the file
    for name, dtype in CMDSTAN_STATS.items():
        assert chains.sample_stats[name].dtype == dtype, name
        assert chains.sample_stats[name].shape == (1, 1000)
    np.testing.assert_array_equal(chains.sample_stats["lp"][0], rows[:, header.index("lp__")])
    np.testing.assert_array_equal(chains.sample_stats["n_steps"][0], rows[:, header.index("n_leapfrog__")])
    assert chains.attrs["max_treedepth"] == 10
    assert chains.attrs["stan_version"] == "2.23.0"
    assert chains.attrs["model"] == "bernoulli_model"
    assert chains.attrs["sampler"] == "nuts"
    assert chains.attrs["num_warmup"] == 1000
    assert chains.attrs["save_warmup"] is False
    assert chains.attrs["adapt_delta"] == 0.8
    assert chains.attrs["step_size_adapted"] == 1.02703
    json.dumps(chains.attrs)  # attrs must stay JSON-serialisable for write_chains


def test_cmdstan_eight_schools_groups_theta(data_dir: Path) -> None:
    path = data_dir / "fixtures/cmdstan/eight_schools_output.csv"
    header, rows = stan_rows(path)
    chains = read_chains([str(path)])
    assert list(chains.posterior) == ["mu", "tau", "theta"]
    assert chains.posterior["theta"].shape == (1, 1000, 8)
    assert rows.shape[0] == 1000
    for k in range(8):
        np.testing.assert_array_equal(chains.posterior["theta"][0, :, k], rows[:, header.index(f"theta.{k + 1}")])
    divergent = rows[:, header.index("divergent__")]
    assert divergent.sum() > 0  # this run has divergences; they must survive the mapping
    np.testing.assert_array_equal(chains.sample_stats["diverging"][0], divergent == 1)
    np.testing.assert_array_equal(chains.sample_stats["tree_depth"][0], rows[:, header.index("treedepth__")])
    assert chains.attrs["adapt_delta"] == 0.95


def test_cmdstan_two_files_are_two_chains(data_dir: Path) -> None:
    files = [str(data_dir / f"fixtures/cmdstan/mix_output.{i}.csv") for i in (1, 2)]
    chains = read_chains(files)
    assert chains.posterior["mu"].shape == (2, 1000, 2)
    assert chains.posterior["sigma"].shape == (2, 1000, 2)
    assert chains.posterior["theta"].shape == (2, 1000)
    for chain, path in enumerate(files):
        header, rows = stan_rows(Path(path))
        np.testing.assert_array_equal(chains.posterior["mu"][chain, :, 1], rows[:, header.index("mu.2")])
    assert chains.attrs["source_files"] == files
    assert chains.attrs["max_treedepth"] == 10  # equal in both files: kept as a scalar
    assert isinstance(chains.attrs["seed"], list) and len(chains.attrs["seed"]) == 2


def test_unexpanded_glob_is_expanded_in_natural_order(data_dir: Path, tmp_path: Path) -> None:
    source = data_dir / "fixtures/cmdstan/bernoulli_chain_1.csv"
    for i in (10, 2, 1):
        (tmp_path / f"out_{i}.csv").write_bytes(source.read_bytes())
    chains = read_chains([str(tmp_path / "out_*.csv")])
    assert chains.n_chains == 3
    assert [Path(p).name for p in chains.attrs["source_files"]] == ["out_1.csv", "out_2.csv", "out_10.csv"]
    err = input_error([str(tmp_path / "nothing_*.csv")])
    assert "matches nothing" in err.message


def test_cmdstan_old_layout(data_dir: Path) -> None:
    files = [str(data_dir / f"fixtures/stan-blocker/blocker.{i}.csv") for i in (1, 2)]
    chains = read_chains(files)
    assert chains.n_chains == 2 and chains.n_draws == 1000
    assert chains.posterior["mu"].shape == (2, 1000, 22)
    assert chains.posterior["delta"].shape == (2, 1000, 22)
    assert {"d", "sigmasq_delta", "delta_new", "sigma_delta"} <= set(chains.posterior)
    # Stan 1.3 wrote no n_leapfrog__, divergent__ or energy__.
    assert sorted(chains.sample_stats) == ["acceptance_rate", "lp", "step_size", "tree_depth"]
    assert chains.attrs["stan_version"] == "1.3.0"
    assert chains.attrs["chain_id"] == [1, 2]
    header, rows = stan_rows(Path(files[1]))
    np.testing.assert_array_equal(chains.posterior["delta"][1, :, 21], rows[:, header.index("delta.22")])


def test_cmdstan_save_warmup_thin_and_matrix(data_dir: Path) -> None:
    chains = read_chains([str(data_dir / "readers/save_warmup_thin.csv")])
    # num_warmup=5, thin=2: the first ceil(5/2)=3 rows are warmup; 4 draws remain.
    assert chains.n_draws == 4
    assert not (chains.posterior["z"] == 999).any()
    z = chains.posterior["z"][0]
    assert z.shape == (4, 2, 3)
    d, i, j = np.meshgrid(np.arange(1, 5), np.arange(1, 3), np.arange(1, 4), indexing="ij")
    np.testing.assert_allclose(z, d + 0.1 * i + 0.01 * j, rtol=0, atol=1e-12)
    mu = chains.posterior["mu"][0]
    assert np.isnan(mu[0]) and mu[1] == np.inf and mu[2] == -np.inf and mu[3] == 2.0
    np.testing.assert_array_equal(chains.sample_stats["diverging"][0], [False, True, False, False])
    assert chains.attrs["max_treedepth"] == 6
    assert chains.attrs["save_warmup"] is True
    assert chains.attrs["metric"] == "dense_e"
    assert chains.attrs["chain_id"] == 3
    assert chains.attrs["stan_version"] == "2.36.0"


def test_bracket_names_and_partial_arrays(tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_text(
        'lp__,"a[1,1]","a[2,1]","a[1,2]","a[2,2]",gap.1,gap.3,s,s.1\n'
        "0,11,21,12,22,1,3,5,6\n"
        "0,11,21,12,22,1,3,5,6\n"
    )
    chains = read_chains([str(path)])
    np.testing.assert_array_equal(chains.posterior["a"][0, 0], [[11, 12], [21, 22]])
    # gap.2 is missing and s clashes with s.1: kept as separate columns rather than guessed.
    assert {"gap.1", "gap.3", "s", "s.1"} <= set(chains.posterior)
    assert "gap" not in chains.posterior


# --- other formats -------------------------------------------------------------------


def test_arviz_npz_fixture(data_dir: Path) -> None:
    path = data_dir / "fixtures/centered_eight_posterior.npz"
    chains = read_chains([str(path)])
    raw = np.load(path)
    assert chains.posterior["theta"].shape == (4, 500, 8)
    np.testing.assert_array_equal(chains.posterior["theta"], raw["theta"])
    assert chains.sample_stats["diverging"].dtype == np.bool_
    assert "sample_stats__lp" not in chains.posterior
    assert set(chains.sample_stats) >= {"lp", "tree_depth", "energy", "step_size", "acceptance_rate"}


def example_chains() -> Chains:
    rng = np.random.default_rng(3)
    return Chains(
        posterior={"mu": rng.normal(size=(3, 20)), "theta": rng.normal(size=(3, 20, 2, 4))},
        sample_stats={
            "diverging": rng.random((3, 20)) < 0.1,
            "tree_depth": rng.integers(1, 6, size=(3, 20)),
            "lp": rng.normal(size=(3, 20)),
        },
        attrs={"sampler": "nuts", "seed": 3, "flag": True, "nested": {"a": [1, 2]}, "none": None},
    )


def test_npz_round_trip(tmp_path: Path) -> None:
    chains = example_chains()
    write_chains(chains, tmp_path / "c.npz")
    assert_same(read_chains([str(tmp_path / "c.npz")]), chains)


def test_netcdf_round_trip(tmp_path: Path) -> None:
    chains = example_chains()
    write_chains(chains, tmp_path / "c.nc")
    assert_same(read_chains([str(tmp_path / "c.nc")]), chains)


def test_netcdf_bytes_are_deterministic() -> None:
    from mcmc.core.chains import netcdf_bytes

    assert netcdf_bytes(example_chains()) == netcdf_bytes(example_chains())


def test_netcdf_written_by_arviz(tmp_path: Path) -> None:
    from arviz_base import from_dict

    rng = np.random.default_rng(5)
    mu, theta = rng.normal(size=(4, 50)), rng.normal(size=(4, 50, 3))
    tree = from_dict(
        {"posterior": {"mu": mu, "theta": theta}, "sample_stats": {"diverging": mu > 1, "energy": mu}},
        dims={"theta": ["school"]},
        coords={"school": ["a", "b", "c"]},
    )
    tree.to_netcdf(tmp_path / "az.nc", engine="h5netcdf")
    chains = read_chains([str(tmp_path / "az.nc")])
    np.testing.assert_array_equal(chains.posterior["theta"], theta)
    np.testing.assert_array_equal(chains.sample_stats["diverging"], mu > 1)
    assert chains.attrs["creation_library"] == "ArviZ"


def test_netcdf_dims_transposed_and_odd_stats_dropped(tmp_path: Path) -> None:
    import xarray as xr

    rng = np.random.default_rng(6)
    x = rng.normal(size=(7, 3, 2))  # stored as (draw, dim, chain)
    posterior = xr.Dataset({"x": (("draw", "k", "chain"), x)})
    stats = xr.Dataset(
        {"lp": (("chain", "draw"), x[:, 0, :].T), "per_param": (("chain", "draw", "k"), x.transpose(2, 0, 1))}
    )
    xr.DataTree.from_dict({"posterior": posterior, "sample_stats": stats}).to_netcdf(
        tmp_path / "t.nc", engine="h5netcdf"
    )
    chains = read_chains([str(tmp_path / "t.nc")])
    np.testing.assert_array_equal(chains.posterior["x"], x.transpose(2, 0, 1))
    assert list(chains.sample_stats) == ["lp"]
    assert chains.attrs["dropped_sample_stats"] == ["per_param"]

    xr.DataTree.from_dict({"prior": posterior}).to_netcdf(tmp_path / "prior.nc", engine="h5netcdf")
    err = input_error([str(tmp_path / "prior.nc")])
    assert "no 'posterior' group" in err.message and err.source.endswith("prior.nc")


def test_plain_csv_from_r(data_dir: Path) -> None:
    chains = read_chains([str(data_dir / "readers/as_draws_df.csv")])
    assert list(chains.posterior) == ["mu", "theta"]
    theta = chains.posterior["theta"]
    assert theta.shape == (3, 4, 2)
    chain, iteration = np.meshgrid(np.arange(1, 4), np.arange(1, 5), indexing="ij")
    np.testing.assert_array_equal(theta[..., 0], chain * 10 + iteration)  # rows were shuffled
    np.testing.assert_array_equal(theta[..., 1], -(chain * 10 + iteration))
    mu = chains.posterior["mu"]
    assert np.isnan(mu[1, 2])  # R's NA
    np.testing.assert_allclose(np.delete(mu.ravel(), 6), np.delete((chain + iteration / 10).ravel(), 6))
    np.testing.assert_allclose(chains.sample_stats["lp"], -chain - iteration / 10)


def test_cmdstanpy_draws_pd_csv(tmp_path: Path) -> None:
    # CmdStanPy's fit.draws_pd().to_csv(): pandas index, chain__/iter__/draw__, and lp__.
    path = tmp_path / "pd.csv"
    path.write_text(
        ",chain__,iter__,draw__,lp__,divergent__,mu\n"
        "0,2,1,3,-1,0,0.7\n1,1,2,2,-2,1,0.6\n2,1,1,1,-3,0,0.5\n3,2,2,4,-4,0,0.8\n"
    )
    chains = read_chains([str(path)])
    np.testing.assert_array_equal(chains.posterior["mu"], [[0.5, 0.6], [0.7, 0.8]])
    np.testing.assert_array_equal(chains.sample_stats["diverging"], [[False, True], [False, False]])
    assert list(chains.posterior) == ["mu"]


def test_plain_csv_ragged_and_repeated(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("chain,draw,x\n1,1,0.5\n1,2,0.7\n2,1,0.1\n")
    err = input_error([str(path)])
    assert "ragged chains" in err.message and err.source == str(path)
    path.write_text("chain,draw,x\n1,1,0.5\n1,1,0.7\n2,1,0.1\n2,2,0.3\n")
    err = input_error([str(path)])
    assert "appears twice" in err.message and "line 3" in err.message
    path.write_text("draw,x\n1,0.5\n")
    assert "no 'chain' column" in input_error([str(path)]).message
    path.write_text("x\n0.5\n0.7\n")  # one column: not comma-separated, still a draws table
    assert "no 'chain' column" in input_error([str(path)]).message


def test_npy(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    for shape in [(4, 30), (4, 30, 3)]:
        x = rng.normal(size=shape)
        np.save(tmp_path / "x.npy", x)
        chains = read_chains([str(tmp_path / "x.npy")])
        assert list(chains.posterior) == ["x"]
        np.testing.assert_array_equal(chains.posterior["x"], x)
    np.save(tmp_path / "o.npy", np.array([1, "a"], dtype=object))
    assert "pickle" in input_error([str(tmp_path / "o.npy")]).message
    np.save(tmp_path / "v.npy", np.zeros(5))
    assert "expected (chain, draw)" in input_error([str(tmp_path / "v.npy")]).message


def stdin_kinds(data_dir: Path, tmp_path: Path) -> dict[str, bytes]:
    chains = example_chains()
    buf = io.BytesIO()
    write_chains(chains, buf)
    np.save(tmp_path / "x.npy", chains.posterior["mu"])
    kinds = {
        "npz": buf.getvalue(),
        "npy": (tmp_path / "x.npy").read_bytes(),
        "cmdstan": (data_dir / "fixtures/cmdstan/eight_schools_output.csv").read_bytes(),
        "csv": (data_dir / "readers/as_draws_df.csv").read_bytes(),
    }
    return kinds


@pytest.mark.parametrize("kind", ["npz", "npy", "cmdstan", "csv"])
def test_stdin_is_sniffed(kind: str, data_dir: Path, tmp_path: Path) -> None:
    data = stdin_kinds(data_dir, tmp_path)[kind]
    chains = read_chains(["-"], stdin=io.BytesIO(data))
    expected = {"npz": "theta", "npy": "x", "cmdstan": "theta", "csv": "theta"}[kind]
    assert expected in chains.posterior
    # A file with no (or an unknown) extension is sniffed the same way.
    (tmp_path / "noext").write_bytes(data)
    assert_same(read_chains([str(tmp_path / "noext")]), chains)


def test_stdin_netcdf(tmp_path: Path) -> None:
    chains = example_chains()
    write_chains(chains, tmp_path / "c.nc")
    assert_same(read_chains(["-"], stdin=io.BytesIO((tmp_path / "c.nc").read_bytes())), chains)


def test_several_npz_concatenate_when_they_match(tmp_path: Path) -> None:
    chains = example_chains()
    write_chains(chains, tmp_path / "a.npz")
    write_chains(chains, tmp_path / "b.npz")
    both = read_chains([str(tmp_path / "a.npz"), str(tmp_path / "b.npz")])
    assert both.n_chains == 6
    np.testing.assert_array_equal(both.posterior["theta"][3:], chains.posterior["theta"])
    assert both.attrs["seed"] == 3
    other = Chains({"mu": np.zeros((3, 20))})
    write_chains(other, tmp_path / "c.npz")
    err = input_error([str(tmp_path / "a.npz"), str(tmp_path / "c.npz")])
    assert "variables differ" in err.message and "theta" in err.message and err.source.endswith("c.npz")


# --- bad input -----------------------------------------------------------------------


def test_truncated_npz(tmp_path: Path) -> None:
    buf = io.BytesIO()
    write_chains(example_chains(), buf)
    path = tmp_path / "cut.npz"
    path.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    err = input_error([str(path)])
    assert err.source == str(path) and "corrupt or truncated" in err.message


def test_truncated_netcdf(tmp_path: Path) -> None:
    write_chains(example_chains(), tmp_path / "c.nc")
    data = (tmp_path / "c.nc").read_bytes()
    (tmp_path / "cut.nc").write_bytes(data[: len(data) // 2])
    err = input_error([str(tmp_path / "cut.nc")])
    assert err.source == str(tmp_path / "cut.nc") and "corrupt or truncated netCDF" in err.message


def test_pickled_object_array_in_npz(tmp_path: Path) -> None:
    path = tmp_path / "obj.npz"
    np.savez(path, mu=np.zeros((2, 5)), bad=np.array([np.zeros(3), np.zeros(4)], dtype=object))
    err = input_error([str(path)])
    assert err.source == str(path) and "'bad'" in err.message and "pickle" in err.message


def test_ragged_cmdstan_chains(data_dir: Path, tmp_path: Path) -> None:
    text = (data_dir / "fixtures/cmdstan/bernoulli_chain_1.csv").read_text().splitlines()
    short = [line for k, line in enumerate(text) if k != 60]  # drop one draw
    (tmp_path / "c1.csv").write_text("\n".join(text))
    (tmp_path / "c2.csv").write_text("\n".join(short))
    err = input_error([str(tmp_path / "c1.csv"), str(tmp_path / "c2.csv")])
    assert "ragged chains" in err.message
    assert "c1.csv has 1000" in err.message and "c2.csv has 999" in err.message


def test_zero_draws(tmp_path: Path) -> None:
    np.savez(tmp_path / "z.npz", mu=np.zeros((4, 0)))
    assert "zero draws" in input_error([str(tmp_path / "z.npz")]).message
    (tmp_path / "z.csv").write_text("# model = m\nlp__,mu\n")
    assert "zero draws" in input_error([str(tmp_path / "z.csv")]).message


def test_text_named_npz(tmp_path: Path) -> None:
    path = tmp_path / "fake.npz"
    path.write_text("chain,draw,x\n1,1,0.5\n")
    err = input_error([str(path)])
    assert err.source == str(path) and "named .npz" in err.message and "text" in err.message


def test_non_numeric_cell_names_line_and_column(data_dir: Path, tmp_path: Path) -> None:
    lines = (data_dir / "fixtures/cmdstan/eight_schools_output.csv").read_text().splitlines()
    header_at = next(k for k, line in enumerate(lines) if not line.startswith("#"))
    row = header_at + 5
    cells = lines[row].split(",")
    cells[9] = "oops"  # column theta.1
    lines[row] = ",".join(cells)
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines))
    err = input_error([str(path)])
    assert err.source == str(path)
    assert f"line {row + 1}" in err.message and "'theta.1'" in err.message and "'oops'" in err.message


def test_missing_file_and_directory(tmp_path: Path) -> None:
    err = input_error([str(tmp_path / "nope.npz")])
    assert err.source == str(tmp_path / "nope.npz") and err.message == "no such file"
    err = input_error([str(tmp_path)])
    assert err.source == str(tmp_path) and "directory" in err.message


def test_unknown_format_lists_supported(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\x00\x01\x02garbage")
    err = input_error([str(path)])
    assert err.source == str(path) and "supported" in err.message and ".nc" in err.message
    (tmp_path / "empty.npz").write_bytes(b"")
    assert input_error([str(tmp_path / "empty.npz")]).message == "empty file"
    assert input_error(["-"], stdin=io.BytesIO(b"")).source == "-"


def test_same_file_twice(data_dir: Path) -> None:
    path = str(data_dir / "fixtures/cmdstan/bernoulli_chain_1.csv")
    assert "given twice" in input_error([path, path]).message


def test_not_mcmc_and_short_warmup(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "opt.csv").write_text("# method = optimize\nlp__,x\n0,1\n")
    assert "optimize" in input_error([str(tmp_path / "opt.csv")]).message
    text = (data_dir / "readers/save_warmup_thin.csv").read_text().splitlines()
    data_at = [k for k, line in enumerate(text) if line and not line.startswith("#")]
    keep = set(range(len(text))) - set(data_at[2:])  # header and 1 warmup row only
    (tmp_path / "short.csv").write_text("\n".join(text[k] for k in sorted(keep)))
    assert "interrupted" in input_error([str(tmp_path / "short.csv")]).message


# --- property: write_chains -> read_chains is the identity ----------------------------

names = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True).filter(lambda s: s not in ("chain", "draw"))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def random_chains(draw: st.DrawFn) -> Chains:
    n_chains, n_draws = draw(st.integers(1, 3)), draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    posterior: dict[str, np.ndarray] = {}
    for name in draw(st.lists(names, min_size=1, max_size=3, unique=True)):
        shape = (n_chains, n_draws, *draw(st.lists(st.integers(1, 3), max_size=2)))
        kind = draw(st.sampled_from(["float", "int", "special"]))
        if kind == "float":
            posterior[name] = rng.normal(size=shape) * 10.0 ** draw(st.integers(-300, 300))
        elif kind == "int":
            posterior[name] = rng.integers(-(2**62), 2**62, size=shape)
        else:
            posterior[name] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324], size=shape)
    stats = {
        "diverging": rng.random((n_chains, n_draws)) < 0.5,
        "tree_depth": rng.integers(0, 10, size=(n_chains, n_draws)),
        "energy": rng.normal(size=(n_chains, n_draws)),
    }
    chosen = draw(st.lists(st.sampled_from(sorted(stats)), unique=True))
    attrs = draw(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,7}", fullmatch=True), json_values, max_size=4))
    return Chains(posterior, {k: stats[k] for k in chosen}, attrs)


@given(random_chains())
@settings(max_examples=60)
def test_npz_write_read_identity(chains: Chains) -> None:
    buf = io.BytesIO()
    write_chains(chains, buf)
    assert_same(read_chains(["-"], stdin=io.BytesIO(buf.getvalue())), chains)


@given(random_chains())
@settings(max_examples=20)
def test_netcdf_write_read_identity(chains: Chains) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.nc"
        write_chains(chains, path)
        assert_same(read_chains([str(path)]), chains)


def test_bare_array_layout(tmp_path: Path) -> None:
    x = np.random.default_rng(3).normal(size=(50, 4, 3))  # (draw, chain, dim)
    np.save(tmp_path / "d.npy", x)
    assert "--layout draw,chain" in input_error([str(tmp_path / "d.npy")]).message
    chains = read_chains([str(tmp_path / "d.npy")], layout="draw,chain")
    np.testing.assert_array_equal(chains.posterior["x"], x.transpose(1, 0, 2))
    # Given explicitly, the chain-major reading is taken at its word.
    assert read_chains([str(tmp_path / "d.npy")], layout="chain,draw").posterior["x"].shape == (50, 4, 3)
    data = (tmp_path / "d.npy").read_bytes()
    assert read_chains(["-"], stdin=io.BytesIO(data), layout="draw,chain").n_chains == 4
    np.savez(tmp_path / "d.npz", x, x + 1)  # positional: arr_0, arr_1
    chains = read_chains([str(tmp_path / "d.npz")], layout="draw,chain")
    assert list(chains.posterior) == ["arr_0", "arr_1"] and chains.n_chains == 4
    # More draws than chains, no layout: read as (chain, draw) as always.
    np.save(tmp_path / "c.npy", x.transpose(1, 0, 2))
    assert read_chains([str(tmp_path / "c.npy")]).n_chains == 4


def _npy_header_only(shape: tuple[int, ...]) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buf.getvalue() + b"\x00" * 64


def test_hostile_npy_header_is_refused_before_allocation(tmp_path: Path) -> None:
    path = tmp_path / "huge.npy"
    path.write_bytes(_npy_header_only((4, 10**10)))  # 320 GB claimed, 64 bytes present
    message = input_error([str(path)]).message
    assert "(4, 10000000000)" in message and "truncated" in message
    (tmp_path / "huge.npz").write_bytes(b"")
    import zipfile

    for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        with zipfile.ZipFile(tmp_path / "huge.npz", "w", compression=compression) as zf:
            zf.writestr("x.npy", _npy_header_only((10**10, 4)))
        message = input_error([str(tmp_path / "huge.npz")]).message
        assert "array 'x'" in message and "(10000000000, 4)" in message


def test_npy_beyond_memory_is_refused_by_the_shared_guard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcmc.core.memory

    np.save(tmp_path / "x.npy", np.zeros((4, 1000)))
    np.savez_compressed(tmp_path / "x.npz", x=np.zeros((4, 1000)))
    monkeypatch.setattr(mcmc.core.memory, "physical_memory", lambda: 10_000)
    for name in ("x.npy", "x.npz"):
        message = input_error([str(tmp_path / name)]).message
        assert "(4, 1000) float64 needs 31.2 KiB, more than this machine can hold" in message
