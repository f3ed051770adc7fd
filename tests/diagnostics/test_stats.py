"""The batched kernels of diagnostics.stats against ArviZ 1.x (arviz_stats) and R posterior.

ArviZ is called one parameter at a time on the same draws; agreement is
required to 1e-8 relative. Where we deliberately differ (one chain, constant
parameters, infinite draws) the test says so and checks our definition.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcmc.diagnostics.stats import _autocov as A
from mcmc.diagnostics.stats import _blocks
from mcmc.diagnostics.stats import _ranks as R
from mcmc.diagnostics.stats import batched as S

FIXTURES = Path(__file__).parents[1] / "data" / "fixtures"
RTOL = 1e-8


# ----------------------------------------------------------------------------- references


def _az():
    from arviz_stats.base import array_stats

    return array_stats


def arviz_reference(x: np.ndarray, probs=(0.05, 0.5, 0.95), lags=(1, 2, 5)) -> dict[str, np.ndarray]:
    """ArviZ's numbers for draws (chain, draw, n), parameter by parameter."""
    with warnings.catch_warnings():
        # ArviZ warns where a statistic is 0/0 and returns NaN; we return the NaN silently
        warnings.simplefilter("ignore", RuntimeWarning)
        return _arviz_reference(x, probs, lags)


def _arviz_reference(x, probs, lags):
    from scipy.stats import median_abs_deviation

    az = _az()
    xa = np.moveaxis(x, -1, 0)  # ArviZ wants (..., chain, draw)
    flat = xa.reshape(xa.shape[0], -1)
    n_split = x.shape[0] * 2 * (x.shape[1] // 2)
    # per-chain autocorrelation as ArviZ computes it (NaN for a chain that never
    # moves, which we count as perfectly autocorrelated), averaged over chains
    rho = az.autocorr(xa, axis=-1)
    rho[xa.max(axis=-1) == xa.min(axis=-1)] = 1.0
    ref = {
        "rhat": az.rhat(xa, method="rank"),
        "rhat_split": az.rhat(xa, method="split"),
        "ess_bulk": az.ess(xa, method="bulk"),
        "ess_tail": az.ess(xa, method="tail", prob=TAIL),
        "ess_mean": az.ess(xa, method="mean"),
        "ess_sd": az.ess(xa, method="sd"),
        "mcse_mean": az.mcse(xa, method="mean"),
        "mcse_sd": az.mcse(xa, method="sd"),
        "mean": flat.mean(axis=-1),
        "sd": az.std(xa, axis=(-2, -1)),
        "mad": median_abs_deviation(flat, axis=-1),
        "quantiles": np.moveaxis(az.quantile(xa, list(probs), axis=(-2, -1)), -1, 0),
        "acf": np.stack(
            [rho[..., k].mean(axis=1) if k < x.shape[1] else np.full(x.shape[2], np.nan) for k in lags], axis=-1
        ),
    }
    ref["iat"] = n_split / ref["ess_mean"]
    if x.shape[0] == 1:
        # ArviZ refuses one chain; its own split R-hat formula on the two halves
        ref["rhat"] = np.array([_single_chain_rhat(row) for row in xa])
        ref["rhat_split"] = np.array([az._rhat(az._split_chains(row)) for row in xa])
    r1 = ref["acf"][:, 0]
    ref["ssif"] = (1 + r1) / (1 - r1)
    ref["ess_ssif"] = x.shape[0] * x.shape[1] / ref["ssif"]
    return ref


TAIL = 0.05


def _single_chain_rhat(ary: np.ndarray) -> float:
    az = _az()
    split = az._split_chains(ary)
    bulk = az._rhat(az._z_scale(split))
    tail = az._rhat(az._z_scale(np.abs(split - np.median(split))))
    return max(bulk, tail)


def assert_matches_arviz(x: np.ndarray, keys=None, probs=(0.05, 0.5, 0.95), lags=(1, 2, 5)) -> None:
    ours = S.summarize(x, probs=probs, lags=lags)
    ref = arviz_reference(x, probs=probs, lags=lags)
    for key in keys or ref:
        # autocorrelations lie in [-1, 1]: near zero only an absolute tolerance is meaningful
        atol = 1e-12 if key == "acf" else 0
        np.testing.assert_allclose(ours[key], ref[key], rtol=RTOL, atol=atol, err_msg=key)


# ----------------------------------------------------------------------------- draws


def ar1(rng: np.random.Generator, chains: int, draws: int, n: int, phi, noise) -> np.ndarray:
    """AR(1) chains x_t = phi x_{t-1} + e_t, shape (chain, draw, n); phi per parameter."""
    e = noise(rng, (chains, draws, n))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    for t in range(1, draws):  # recursion over time; chains and parameters vectorized
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


NOISES = {
    "normal": lambda rng, shape: rng.standard_normal(shape),
    "cauchy": lambda rng, shape: rng.standard_cauchy(shape),
    "t2": lambda rng, shape: rng.standard_t(2, shape),
    "lognormal": lambda rng, shape: rng.lognormal(0, 2, shape),
}


@st.composite
def chains_strategy(draw):
    chains = draw(st.integers(1, 6))
    draws = draw(st.integers(4, 300))
    n = draw(st.integers(1, 3))
    phi = np.array(draw(st.lists(st.floats(-0.9, 0.99), min_size=n, max_size=n)))
    noise = draw(st.sampled_from(sorted(NOISES)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = ar1(rng, chains, draws, n, phi, NOISES[noise])
    discrete = draw(st.sampled_from([None, 2, 3, 7]))
    if discrete:  # ties: a few distinct values (bin edges from the draws themselves)
        edges = np.quantile(x, np.linspace(0, 1, discrete + 1)[1:-1])
        x = np.digitize(x, edges).astype(float)
        x[0, 0, np.ptp(x, axis=(0, 1)) == 0] += 1.0  # constants are tested separately
    return x + draw(st.sampled_from([0.0, 1e3]))


# ----------------------------------------------------------------------------- ArviZ agreement


@settings(max_examples=120)
@given(chains_strategy())
def test_matches_arviz_on_random_chains(x):
    assert_matches_arviz(x)


@pytest.mark.parametrize("draws", [4, 5, 6, 7, 8, 9, 11])
def test_matches_arviz_at_the_shortest_chains(draws):
    # Geyer's truncation has its own branches when the split halves have 2-5 draws
    x = ar1(np.random.default_rng(draws), 3, draws, 50, np.linspace(-0.5, 0.9, 50), NOISES["normal"])
    assert_matches_arviz(x)


def test_direct_lags_and_fft_give_the_same_ess(monkeypatch):
    """Geyer's truncation from the first lags by direct products equals the all-lags FFT to rounding.

    phi from 0 to 0.99: the fast-mixing parameters truncate within the direct
    lags, the slow ones fall back to the FFT; ties and a NaN take the FFT path too.
    """
    phi = np.linspace(0.0, 0.99, 40)
    x = ar1(np.random.default_rng(21), 4, 400, 40, phi, NOISES["t2"])
    x[:, :, 3] = np.round(x[:, :, 3])
    x[1, 5, 7] = np.nan
    fft_rows = []
    tau_fft = A.tau_fft
    monkeypatch.setattr(A, "tau_fft", lambda a, m: fft_rows.append(a.shape[0]) or tau_fft(a, m))
    mixed = S.summarize(x)
    assert 0 < sum(fft_rows) < 5 * 40  # both paths ran (five ESS per parameter)
    monkeypatch.setattr(A, "DIRECT_MIN_DRAWS", 10**9)  # FFT only
    fft = S.summarize(x)
    for key in ("ess_bulk", "ess_tail", "ess_mean", "ess_sd", "iat", "mcse_mean", "mcse_sd"):
        np.testing.assert_allclose(mixed[key], fft[key], rtol=1e-13, err_msg=key)
    # the autocorrelations: a few lags by direct products, many by one FFT
    lags = (0, 1, 2, 5, 10, 20, 50, 399)
    monkeypatch.setattr(S, "ACF_DIRECT_LAGS", 0)
    by_fft = S.acf(x, lags)
    monkeypatch.undo()
    direct = S.acf(x, lags)
    assert np.isnan(direct[7]).all() and np.isfinite(direct[8]).all()
    np.testing.assert_allclose(direct, by_fft, rtol=0, atol=1e-14)


def _load_npz(path: Path) -> np.ndarray:
    with np.load(path) as f:
        arrays = [f[k].reshape(f[k].shape[0], f[k].shape[1], -1) for k in f.files if not k.startswith("sample_stats__")]
    return np.concatenate(arrays, axis=-1)


@pytest.mark.parametrize("name", ["centered_eight_posterior.npz", "posterior_R_eight_schools.npz"])
def test_matches_arviz_on_eight_schools(name):
    x = _load_npz(FIXTURES / name)
    assert x.shape[2] == 10
    assert_matches_arviz(x, lags=(1, 2, 5, 10, 20, 50))


def test_matches_arviz_on_4_chains_1000_draws_1000_parameters():
    rng = np.random.default_rng(20211)
    phi = rng.uniform(-0.5, 0.95, 1000)
    x = ar1(rng, 4, 1000, 1000, phi, NOISES["t2"])
    ours = S.summarize(x)
    cols = [0, 1, 317, 998, 999]
    ref = arviz_reference(x[:, :, cols], lags=(1, 2, 5, 10, 20, 50))
    for key, value in ref.items():
        got = ours[key][:, cols] if key == "quantiles" else ours[key][cols]
        np.testing.assert_allclose(got, value, rtol=RTOL, atol=1e-12 if key == "acf" else 0, err_msg=key)


def test_blocks_and_threads_do_not_change_the_numbers(monkeypatch):
    x = ar1(np.random.default_rng(13), 3, 64, 23, np.linspace(-0.5, 0.95, 23), NOISES["t2"])
    x[:, :, 5] = 1.0
    x[0, 3, 7] = np.nan
    whole = S.summarize(x)
    monkeypatch.setattr(_blocks, "BLOCK_DRAWS", 3 * 64 * 4)  # blocks of 4 parameters
    monkeypatch.setattr(_blocks, "THREAD_MIN_DRAWS", 0)  # on a thread pool
    blocked = S.summarize(x)
    for key, value in whole.items():
        np.testing.assert_allclose(blocked[key], value, rtol=1e-13, atol=1e-15, err_msg=key)
    np.testing.assert_array_equal(S.status_flags(x)["constant"], whole["constant"])
    np.testing.assert_allclose(S.quantiles(x, (0.05, 0.5, 0.95)), whole["quantiles"], rtol=1e-15)
    np.testing.assert_allclose(S.ssif(x)[1], whole["ess_ssif"], rtol=1e-13)


def test_single_statistic_functions_equal_summarize():
    x = ar1(np.random.default_rng(7), 3, 101, 4, np.array([0.0, 0.5, 0.9, -0.3]), NOISES["normal"])
    s = S.summarize(x, probs=(0.1, 0.9), lags=(1, 3))
    for name in ["rhat", "rhat_split", "ess_bulk", "ess_tail", "ess_mean", "ess_sd", "mcse_mean", "mcse_sd",
                 "mean", "sd", "mad", "iat"]:  # fmt: skip
        np.testing.assert_array_equal(getattr(S, name)(x), s[name], err_msg=name)
    np.testing.assert_array_equal(S.quantiles(x, (0.1, 0.9)), s["quantiles"])
    np.testing.assert_array_equal(S.acf(x, (1, 3)), s["acf"])
    np.testing.assert_array_equal(S.ssif(x)[0], s["ssif"])
    np.testing.assert_array_equal(S.ssif(x)[1], s["ess_ssif"])
    assert s["rhat"].shape == (4,) and s["quantiles"].shape == (2, 4) and s["acf"].shape == (4, 2)
    np.testing.assert_array_equal(s["rhat"], np.fmax(s["rhat_bulk"], s["rhat_tail"]))
    np.testing.assert_array_equal(s["median"], S.quantiles(x, (0.5,))[0])


# ----------------------------------------------------------------------------- R posterior


def _read_cmdstan_csv(path: Path) -> tuple[list[str], np.ndarray]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return lines[0].split(","), np.loadtxt(io.StringIO("\n".join(lines[1:])), delimiter=",", ndmin=2)


def test_matches_r_posterior_on_cmdstan_blocker():
    """R posterior's values for two CmdStan chains: agreement to rounding (1e-12), not just 1e-8.

    posterior's rhat_rank, ess_bulk, ess_tail, ess_mean, ess_sd (the ESS of
    (x - mean)^2 in the posterior version that produced the reference),
    mcse_mean and mcse_sd are the same estimators as ArviZ's. Its rhat_raw is
    the unsplit R-hat, which we do not report.
    """
    folder = FIXTURES / "stan-blocker"
    names, first = _read_cmdstan_csv(folder / "blocker.1.csv")
    names2, second = _read_cmdstan_csv(folder / "blocker.2.csv")
    assert names == names2 and first.shape == second.shape == (1000, 52)
    rows = list(csv.reader((folder / "reference_posterior.csv").read_text().splitlines()))
    header, params = rows[0], [r[0] for r in rows[1:]]
    ref = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    x = np.stack([first, second])[:, :, [names.index(p) for p in params]]
    s = S.summarize(x)
    for ours, theirs in [("rhat", "rhat_rank"), ("ess_bulk", "ess_bulk"), ("ess_tail", "ess_tail"),
                         ("ess_mean", "ess_mean"), ("ess_sd", "ess_sd"), ("mcse_mean", "mcse_mean"),
                         ("mcse_sd", "mcse_sd")]:  # fmt: skip
        np.testing.assert_allclose(s[ours], ref[:, header.index(theirs) - 1], rtol=1e-12, err_msg=ours)


def test_matches_r_posterior_readme_table():
    """The summary table posterior's README prints for its eight-schools draws (3 significant digits).

    posterior's mad is scaled by 1.4826 (consistent for a normal sd); ours,
    like ArviZ's, is not.
    """
    x = _load_npz(FIXTURES / "posterior_R_eight_schools.npz")
    with np.load(FIXTURES / "posterior_R_eight_schools.npz") as f:
        sizes = {k: int(np.prod(f[k].shape[2:])) for k in f.files}
    names = [k if sizes[k] == 1 else f"{k}[{i + 1}]" for k in sizes for i in range(sizes[k])]
    rows = list(csv.reader((FIXTURES / "posterior_R_eight_schools_reference_README.csv").read_text().splitlines()))
    header, table = rows[0], {r[0]: [float(v) for v in r[1:]] for r in rows[1:]}
    s = S.summarize(x, probs=(0.05, 0.5, 0.95))
    ours = {
        "mean": s["mean"], "median": s["median"], "sd": s["sd"], "mad": 1.4826 * s["mad"],
        "q5": s["quantiles"][0], "q95": s["quantiles"][2], "rhat": s["rhat"],
        "ess_bulk": s["ess_bulk"], "ess_tail": s["ess_tail"], "mcse_mean": s["mcse_mean"],
    }  # fmt: skip
    for i, name in enumerate(names):
        for column, values in ours.items():
            printed = table[name][header.index(column) - 1]
            digits = 3 - int(np.floor(np.log10(abs(printed)))) - 1 if printed else 3
            assert round(float(values[i]), max(digits, 0)) == pytest.approx(printed, abs=1e-9), (name, column)


# ----------------------------------------------------------------------------- edge cases


def test_tail_probability_and_arviz_summary_convention():
    """arviz_stats.summary's ess_tail uses ci_prob = 0.89 (11%/89% quantiles); ours defaults to 5%/95%."""
    from arviz_base import from_dict
    from arviz_stats import summary

    x = ar1(np.random.default_rng(12), 4, 300, 2, np.array([0.3, 0.95]), NOISES["normal"])
    table = summary(from_dict({"posterior": {"a": x[:, :, 0], "b": x[:, :, 1]}}), round_to="none")
    np.testing.assert_allclose(S.ess_tail(x, prob=0.11), table["ess_tail"].to_numpy(), rtol=RTOL)
    np.testing.assert_allclose(S.summarize(x, tail_prob=0.89)["ess_tail"], table["ess_tail"].to_numpy(), rtol=RTOL)
    for key in ("ess_bulk", "mcse_mean", "mcse_sd", "mean", "sd"):
        np.testing.assert_allclose(S.summarize(x)[key], table[key].to_numpy(), rtol=RTOL, err_msg=key)
    np.testing.assert_allclose(S.rhat(x), table["r_hat"].to_numpy(), rtol=RTOL)
    eti = S.quantiles(x, (0.055, 0.945))  # summary's 89% equal-tailed interval
    np.testing.assert_allclose(eti, table[["eti89_lb", "eti89_ub"]].to_numpy().T, rtol=RTOL)
    np.testing.assert_array_equal(S.ess_tail(x), S.ess_tail(x, prob=0.95))
    with pytest.raises(ValueError, match="tail_prob"):
        S.ess_tail(x, prob=0.0)


def test_single_chain_reports_split_rhat():
    x = ar1(np.random.default_rng(3), 1, 200, 3, np.array([0.2, 0.8, 0.99]), NOISES["normal"])
    r = S.rhat(x)
    assert np.isfinite(r).all()
    assert np.isnan(_az().rhat(np.moveaxis(x, -1, 0))).all()  # ArviZ: NaN with one chain
    assert_matches_arviz(x)  # against ArviZ's formula applied to the two halves


def test_rhat_detects_chains_in_different_places():
    x = np.random.default_rng(4).standard_normal((4, 500, 2))
    x[0, :, 1] += 3.0
    r = S.rhat(x)
    assert r[0] < 1.01 and r[1] > 1.3


def test_rhat_is_infinite_when_chains_are_stuck_at_different_values():
    x = np.zeros((2, 10, 1))
    x[1] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert _az().rhat(np.moveaxis(x, -1, 0))[0] == np.inf
    assert S.rhat(x)[0] == np.inf


def test_constant_nan_inf_parameters_never_warn_and_give_nan():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 50, 5))
    x[:, :, 0] = 2.5  # constant
    x[1, 7, 1] = np.nan
    x[2, 3, 2] = np.inf
    x[:, :, 3] = 0.0
    x[0, 0, 3] = 1e-300  # not constant, though ArviZ's ESS calls it so
    s = S.summarize(x)  # filterwarnings=error: any RuntimeWarning fails here
    flags = S.status_flags(x)
    assert flags["constant"].tolist() == [True, False, False, False, False]
    assert flags["nan"].tolist() == [False, True, False, False, False]
    assert flags["inf"].tolist() == [False, False, True, False, False]
    for k in ("constant", "nan", "inf"):
        np.testing.assert_array_equal(s[k], flags[k])
    diagnostics = ["rhat", "rhat_split", "ess_bulk", "ess_tail", "ess_mean", "ess_sd", "mcse_mean", "mcse_sd",
                   "iat", "ssif", "ess_ssif"]  # fmt: skip
    for key in diagnostics:
        assert np.isnan(s[key][:2]).all(), key
        assert np.isfinite(s[key][4]), key
    assert np.isnan(s["acf"][:3]).all()
    # constant: the moments are exact
    assert s["mean"][0] == 2.5 and s["sd"][0] == 0 and s["mad"][0] == 0 and (s["quantiles"][:, 0] == 2.5).all()
    assert np.isnan(s["mean"][1]) and np.isnan(s["quantiles"][:, 1]).all()
    # infinite draw: moment-based statistics NaN, rank-based ones as ArviZ computes them
    for key in ("rhat_split", "ess_mean", "ess_sd", "mcse_mean", "mcse_sd", "iat", "ssif"):
        assert np.isnan(s[key][2]), key
    az = _az()
    col = np.moveaxis(x[:, :, 2:3], -1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(s["rhat"][2], az.rhat(col)[0], rtol=RTOL)
        np.testing.assert_allclose(s["ess_bulk"][2], az.ess(col, method="bulk")[0], rtol=RTOL)
        np.testing.assert_allclose(s["ess_tail"][2], az.ess(col, method="tail", prob=TAIL)[0], rtol=RTOL)
    # almost constant (range below ArviZ's resolution) still agrees with ArviZ
    assert_matches_arviz(x[:, :, 3:5], keys=["rhat", "ess_bulk", "ess_tail", "ess_mean", "mcse_mean"])


def test_all_nan_and_all_inf_parameters():
    x = np.full((2, 20, 3), np.nan)
    x[:, :, 1] = np.inf
    x[:, :, 2] = -np.inf
    x[0, :, 2] = np.inf  # chains at +inf and -inf: ranks still tell them apart
    s = S.summarize(x)
    flags = S.status_flags(x)
    assert flags["nan"].tolist() == [True, False, False]
    assert flags["inf"].tolist() == [False, True, True]
    assert flags["constant"].tolist() == [False, False, False]  # constant means finite and constant
    for key in ("rhat", "rhat_split", "ess_bulk", "ess_tail", "ess_mean", "ess_sd", "mcse_mean", "mcse_sd", "sd",
                "iat", "ssif", "ess_ssif"):  # fmt: skip
        assert np.isnan(s[key][:2]).all(), key
    assert s["rhat"][2] == np.inf  # the chains never meet
    ref = arviz_reference(x[:, :, 2:])
    for key in ("rhat", "ess_bulk", "ess_tail"):
        np.testing.assert_allclose(s[key][2:], ref[key], rtol=RTOL, err_msg=key)
    assert np.isnan(s["acf"]).all()


@pytest.mark.parametrize("draws", [0, 1, 2, 3])
def test_too_few_draws_give_nan_diagnostics(draws):
    x = np.random.default_rng(6).standard_normal((3, draws, 2))
    s = S.summarize(x, lags=(1,))
    for key in ("rhat", "rhat_split", "ess_bulk", "ess_tail", "ess_mean", "ess_sd", "mcse_mean", "mcse_sd", "iat"):
        assert s[key].shape == (2,) and np.isnan(s[key]).all(), key
    if draws:
        np.testing.assert_allclose(s["mean"], x.mean(axis=(0, 1)))


def test_acf_beyond_chain_length_is_nan_and_lag_zero_is_one():
    x = ar1(np.random.default_rng(8), 2, 30, 2, np.array([0.5, 0.9]), NOISES["normal"])
    r = S.acf(x, [0, 1, 29, 30, 100])
    np.testing.assert_allclose(r[:, 0], 1.0)
    assert np.isfinite(r[:, :3]).all() and np.isnan(r[:, 3:]).all()
    with pytest.raises(ValueError, match="non-negative"):
        S.acf(x, [-1])


def test_a_stuck_chain_counts_as_perfectly_autocorrelated():
    x = np.random.default_rng(9).standard_normal((4, 100, 1))
    x[2, :, 0] = 0.3
    r1 = S.acf(x, [1])[0, 0]
    others = np.moveaxis(x[[0, 1, 3]], -1, 0)
    expected = (_az().autocorr(others, axis=-1)[0, :, 1].sum() + 1.0) / 4
    np.testing.assert_allclose(r1, expected, rtol=RTOL)


def test_any_layout_and_dtype_and_no_parameters():
    rng = np.random.default_rng(11)
    ints = rng.integers(0, 5, size=(3, 50, 2))
    np.testing.assert_array_equal(S.ess_bulk(ints), S.ess_bulk(ints.astype(float)))
    np.testing.assert_array_equal(S.rhat(ints > 2), S.rhat((ints > 2).astype(float)))
    x = rng.standard_normal((3, 50, 4))
    np.testing.assert_array_equal(S.summarize(np.asfortranarray(x))["ess_tail"], S.ess_tail(x))
    np.testing.assert_array_equal(S.rhat(x[:, ::2, 1:3]), S.rhat(np.ascontiguousarray(x[:, ::2, 1:3])))
    empty = S.summarize(np.zeros((4, 100, 0)), probs=(0.5,), lags=(1, 2))
    assert empty["rhat"].shape == (0,) and empty["quantiles"].shape == (1, 0) and empty["acf"].shape == (0, 2)
    huge = np.full((2, 5, 1), 1e308)  # constant: exact moments, no overflow
    assert S.mean(huge)[0] == 1e308 and S.sd(huge)[0] == 0


def test_wrong_shape_is_rejected():
    with pytest.raises(ValueError, match=r"\(chain, draw, n\)"):
        S.rhat(np.zeros((4, 100)))


# ----------------------------------------------------------------------------- statistical sanity


def test_iat_and_ssif_recover_the_ar1_autocorrelation_time():
    """For AR(1) with coefficient phi, tau = (1 + phi) / (1 - phi) exactly."""
    phi = np.array([0.0, 0.5, 0.8])
    x = ar1(np.random.default_rng(10), 4, 20_000, 3, phi, NOISES["normal"])
    tau = (1 + phi) / (1 - phi)
    n = x.shape[0] * x.shape[1]
    # Geyer's estimate has relative sd about sqrt(2 (2M + 1) / n) tau-ish; 10% is > 4 sd here
    np.testing.assert_allclose(S.iat(x), tau, rtol=0.1)
    np.testing.assert_allclose(S.ssif(x)[0], tau, rtol=0.05)
    np.testing.assert_allclose(S.ess_mean(x), n / tau, rtol=0.1)
    np.testing.assert_allclose(S.acf(x, [1, 2])[:, 0], phi, atol=0.02)


def test_diagnostics_never_load_scipy():
    # SciPy's import costs ~0.4 s, a third of a 1000-parameter diagnose
    code = (
        "import sys, numpy as np, mcmc.diagnostics.stats as S; "
        "S.summarize(np.random.default_rng(0).standard_normal((2, 101, 3))); "
        "S.summarize(np.random.default_rng(0).standard_normal((2, 100, 3))); print('scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_normal_quantiles_match_scipy():
    from scipy.special import ndtri

    p = np.concatenate([np.linspace(1e-12, 1 - 1e-12, 100_001), np.geomspace(1e-300, 0.5, 1000), [0.5, 0.075, 0.925]])
    p = np.concatenate([p, 1 - p[p > 1e-16]])
    z, ref = R.norm_ppf(p), ndtri(p)
    np.testing.assert_allclose(z, ref, rtol=1e-14, atol=1e-15)
    assert R.norm_ppf(np.array([0.5]))[0] == 0.0
