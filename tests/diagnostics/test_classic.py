"""diagnostics.classic and diagnostics.spectral against R coda 0.19, R posterior, arviz_stats and emcee.

The reference values were computed once from the chains in tests/data/classic
by the scripts there (versions recorded in the stored files); agreement is
required to 1e-6 relative (the algorithms are the same and deterministic).
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from mcmc.diagnostics import stats as S
from mcmc.diagnostics.stats import classic, coda, emcee_tau, nested_rhat, quantile_ess
from mcmc.diagnostics.stats.spectral import spectrum0_ar

DATA = Path(__file__).parents[1] / "data" / "classic"
FIXTURES = ["ar1_long", "odd_length", "nonstationary", "not_converged", "eight_schools"]
RTOL = 1e-6


@cache
def load(name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    rows = list(csv.reader((DATA / f"{name}.csv").read_text().splitlines()))
    names = tuple(rows[0][2:])
    body = np.array(rows[1:], dtype=np.float64)
    chains, draws = int(body[:, 0].max()), int(body[:, 1].max())
    return body[:, 2:].reshape(chains, draws, len(names)), names


@cache
def r_reference() -> dict[tuple[str, str], np.ndarray]:
    """``(fixture, stat) -> array (chain + 1, n)``: row 0 for all chains, row i for chain i."""
    lines = (DATA / "reference_R.csv").read_text().splitlines()
    assert lines[0].startswith("# R version") and "coda 0.19" in lines[0]
    out: dict[tuple[str, str], dict[tuple[int, int], float]] = {}
    for row in csv.DictReader(lines[1:]):
        value = math.nan if row["value"] == "NA" else float(row["value"])
        out.setdefault((row["fixture"], row["stat"]), {})[int(row["chain"]), int(row["param"]) - 1] = value
    arrays = {}
    for key, cells in out.items():
        shape = (max(c for c, _ in cells) + 1, max(p for _, p in cells) + 1)
        a = np.full(shape, np.nan)
        for (c, p), v in cells.items():
            a[c, p] = v
        arrays[key] = a
    return arrays


def ref(fixture: str, stat: str, per_chain: bool = False) -> np.ndarray:
    a = r_reference()[fixture, stat]
    return a[1:] if per_chain else a[0]


@cache
def py_reference() -> dict:
    return json.loads((DATA / "reference_python.json").read_text())


def close(ours, theirs, rtol=RTOL, **kw):
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float), rtol=rtol, **kw)


# ----------------------------------------------------------------------------- coda


@pytest.mark.parametrize("fixture", FIXTURES)
def test_spectrum0_ar_matches_coda(fixture):
    x, _ = load(fixture)
    spec, order = spectrum0_ar(np.moveaxis(x, 1, 2))
    np.testing.assert_array_equal(order, ref(fixture, "spectrum0_order", True))
    close(spec, ref(fixture, "spectrum0_spec", True))


@pytest.mark.parametrize("fixture", FIXTURES)
def test_gelman_rubin_matches_coda(fixture):
    x, _ = load(fixture)
    for burn, tag in ((True, "gelman"), (False, "gelman_all")):
        g = coda.gelman_rubin(x, autoburnin=burn)
        close(g.psrf, ref(fixture, f"{tag}_psrf"), err_msg=tag)
        close(g.psrf_upper, ref(fixture, f"{tag}_upper"), err_msg=tag)
        close(g.mpsrf, ref(fixture, f"{tag}_mpsrf")[0], err_msg=tag)
        assert g.draws == (x.shape[1] - math.ceil(x.shape[1] / 2 + 1) + 1 if burn else x.shape[1])


@pytest.mark.parametrize("fixture", FIXTURES)
def test_geweke_matches_coda(fixture):
    x, _ = load(fixture)
    close(coda.geweke(x), ref(fixture, "geweke_z", True))


@pytest.mark.parametrize("fixture", FIXTURES)
def test_heidelberger_welch_matches_coda(fixture):
    x, _ = load(fixture)
    h = coda.heidelberger_welch(x)
    stest = ref(fixture, "heidel_stest", True)
    np.testing.assert_array_equal(h.stationary, stest == 1)
    np.testing.assert_array_equal(h.start, ref(fixture, "heidel_start", True))
    close(h.pvalue, ref(fixture, "heidel_pvalue", True))
    htest = ref(fixture, "heidel_htest", True)
    np.testing.assert_array_equal(h.halfwidth_passed[stest == 1], htest[stest == 1] == 1)
    close(h.mean, ref(fixture, "heidel_mean", True))
    close(h.halfwidth, ref(fixture, "heidel_halfwidth", True))


def test_fixtures_exercise_both_outcomes_of_heidel():
    outcomes = set()
    for fixture in FIXTURES:
        h = coda.heidelberger_welch(load(fixture)[0])
        outcomes |= {(bool(s), float(st)) for s, st in zip(h.stationary.ravel(), np.nan_to_num(h.start).ravel())}
    assert (False, 0.0) in outcomes and any(s and st > 1 for s, st in outcomes)


@pytest.mark.parametrize("fixture", FIXTURES)
def test_raftery_lewis_matches_coda(fixture):
    x, _ = load(fixture)
    r = coda.raftery_lewis(x)
    assert r.nmin == 3746
    if fixture != "ar1_long":
        # coda: "Error" and Nmin when the chains are too short
        assert (fixture, "raftery_error_nmin") in r_reference()
        assert ref(fixture, "raftery_error_nmin", True)[0, 0] == r.nmin
        assert np.isnan(r.burnin).all() and np.isnan(r.total).all() and np.isnan(r.dependence).all()
        return
    np.testing.assert_array_equal(r.burnin, ref(fixture, "raftery_M", True))
    np.testing.assert_array_equal(r.total, ref(fixture, "raftery_N", True))
    np.testing.assert_array_equal(ref(fixture, "raftery_Nmin", True), r.nmin)
    # coda rounds I to 3 significant digits
    rounded = np.vectorize(lambda v: float(f"{v:.3g}"))(r.dependence)
    np.testing.assert_array_equal(rounded, ref(fixture, "raftery_I", True))
    assert (r.dependence > 1.5).any()  # the AR(0.9) parameter needs several times Nmin


@pytest.mark.parametrize("fixture", FIXTURES)
def test_effective_size_batch_se_rejection_rate_match_coda(fixture):
    x, _ = load(fixture)
    close(coda.effective_size_ar(x), ref(fixture, "effectiveSize"))
    close(coda.batch_se(x), ref(fixture, "batchSE"))
    rate = coda.rejection_rate(x)
    close(rate, ref(fixture, "rejectionRate", True), atol=1e-15)
    close(rate.mean(axis=0), ref(fixture, "rejectionRate"), atol=1e-15)


def test_sticky_chain_has_its_rejection_rate():
    x, names = load("ar1_long")
    rate = coda.rejection_rate(x)[:, names.index("sticky")]
    # each transition repeats with probability 0.6: binomial standard error over 3999 transitions
    assert (np.abs(rate - 0.6) < 4 * math.sqrt(0.6 * 0.4 / 3999)).all()


# ----------------------------------------------------------------------------- arviz_stats, posterior, emcee


@pytest.mark.parametrize("fixture", FIXTURES)
def test_quantile_ess_mcse_match_arviz_and_posterior(fixture):
    x, _ = load(fixture)
    expected = py_reference()["fixtures"][fixture]
    ess, mcse = quantile_ess.quantile_ess_mcse(x, (0.05, 0.5, 0.95))
    for i, p in enumerate((0.05, 0.5, 0.95)):
        close(ess[i], expected[f"ess_quantile_{p}"], err_msg=f"ess {p}")
        close(mcse[i], expected[f"mcse_quantile_{p}"], err_msg=f"mcse {p}")
        close(ess[i], ref(fixture, f"posterior_ess_quantile_{p:g}"), err_msg=f"posterior ess {p}")
        close(mcse[i], ref(fixture, f"posterior_mcse_quantile_{p:g}"), err_msg=f"posterior mcse {p}")
    close(S.ess_quantile(x, 0.05), ess[0])


@pytest.mark.parametrize("fixture", FIXTURES)
def test_hdi_and_eti_match_arviz(fixture):
    x, names = load(fixture)
    expected = py_reference()["fixtures"][fixture]
    close(quantile_ess.hdi(x), expected["hdi"])
    report = classic.classic_report(x, names)
    close(report.hdi, expected["hdi"])
    close(report.eti, expected["eti"])


@pytest.mark.parametrize("fixture", ["not_converged", "eight_schools"])
def test_rhat_nested_matches_arviz(fixture):
    x, names = load(fixture)
    ids = py_reference()["superchains"][fixture]
    expected = py_reference()["fixtures"][fixture]["rhat_nested"]
    close(nested_rhat.rhat_nested(x, ids), expected)
    close(classic.classic_report(x, names, superchains=ids).rhat_nested, expected)


def test_rhat_nested_flags_the_superchain_elsewhere():
    x, _ = load("not_converged")
    r = nested_rhat.rhat_nested(x, [0, 0, 1, 1, 2, 2, 3, 3])
    assert r[0] < 1.01 and r[1] > 1.1 and r[2] > 1.05


def test_superchain_count_equals_consecutive_ids():
    x, names = load("not_converged")
    by_count = classic.classic_report(x, names, superchains=4)
    assert by_count.superchains == (0, 0, 1, 1, 2, 2, 3, 3)
    close(by_count.rhat_nested, nested_rhat.rhat_nested(x, [0, 0, 1, 1, 2, 2, 3, 3]), rtol=0)
    with pytest.raises(ValueError, match="superchains"):
        classic.classic_report(x, names, superchains=3)
    with pytest.raises(ValueError, match="same number"):
        nested_rhat.rhat_nested(x, [0, 0, 0, 1, 1, 2, 2, 3])


@pytest.mark.parametrize("fixture", FIXTURES)
def test_integrated_time_matches_emcee(fixture):
    x, _ = load(fixture)
    expected = np.asarray(py_reference()["fixtures"][fixture]["iat_emcee"])
    tau, reliable = emcee_tau.integrated_time(x)
    close(tau, expected)
    np.testing.assert_array_equal(reliable, 50 * expected <= x.shape[1])


def test_integrated_time_rule_of_thumb_both_ways():
    _, reliable_long = emcee_tau.integrated_time(load("ar1_long")[0])
    _, reliable_walk = emcee_tau.integrated_time(load("nonstationary")[0])
    assert reliable_long.all() and not reliable_walk.any()


# ----------------------------------------------------------------------------- the report


def test_report_fields_and_json():
    x, names = load("eight_schools")
    r = classic.classic_report(x, names, superchains=2)
    d = r.to_dict()
    text = json.dumps(d, allow_nan=False)  # strict JSON: no NaN anywhere
    assert json.loads(text) == d
    assert [p["name"] for p in d["parameters"]] == list(names)
    first = d["parameters"][0]
    assert set(first["ess_quantile"]) == {"5%", "50%", "95%"}
    assert len(first["per_chain"]["geweke_z"]) == 4
    assert first["per_chain"]["raftery_total"] == [None] * 4  # 500 draws < Nmin 3746
    assert d["raftery"]["nmin"] == 3746 and d["gelman"]["draws"] == 250
    close(first["psrf"], ref("eight_schools", "gelman_psrf")[0])
    close(d["gelman"]["mpsrf"], ref("eight_schools", "gelman_mpsrf")[0])
    for p, j in zip(d["parameters"], range(len(names)), strict=True):
        for s, hw in zip(p["per_chain"]["heidel_stationary"], p["per_chain"]["heidel_halfwidth_passed"], strict=True):
            assert (hw is None) == (not s), j


def test_constant_parameter_follows_coda_and_never_warns():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal((3, 400, 2)), np.full((3, 400, 1), 2.5)], axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = classic.classic_report(x, ["a", "b", "const"], superchains=[0, 1, 2])
        json.dumps(r.to_dict(), allow_nan=False)
    assert r.ess_ar[2] == 0  # coda: spectral density 0 gives effectiveSize 0
    assert np.isnan(r.gelman.psrf[2]) and np.isnan(r.gelman.mpsrf)  # 0/0; singular W (coda stops)
    assert np.isnan(r.geweke_z[:, 2]).all() and not r.heidel.stationary[:, 2].any()
    assert np.isnan(r.ess_quantile[:, 2]).all() and np.isnan(r.iat_emcee[2])
    assert (r.rejection_rate[:, 2] == 1).all()
    assert np.isfinite(r.gelman.psrf[:2]).all() and np.isfinite(r.rhat_nested[:2]).all()


def test_single_chain_gives_nan_gelman_but_per_chain_statistics():
    x, names = load("ar1_long")
    r = classic.classic_report(x[:1], names)
    assert np.isnan(r.gelman.psrf).all()
    close(r.geweke_z[0], ref("ar1_long", "geweke_z", True)[0])


def test_wrong_shapes_are_rejected():
    with pytest.raises(ValueError, match="shape"):
        classic.classic_report(np.zeros((10, 3)), ["a"])
    with pytest.raises(ValueError, match="names"):
        classic.classic_report(np.zeros((2, 10, 3)), ["a"])
