"""Potts target, heat-bath Gibbs and Swendsen-Wang: exact moments by enumeration, the Ising relation, speed-up."""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.errors import UsageError
from mcmc.core.samplers import gibbs, rwm
from mcmc.core.samplers import swendsen_wang as sw
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target, potts
from mcmc.core.targets.protocols import FullConditionals, PottsLattice, SpinLattice
from mcmc.diagnostics import stats
from tests.core.harness import evaluate

SAMPLERS = [gibbs, sw]
SIZE, Q = 3, 3
BETA_C3 = float(np.log(1.0 + np.sqrt(3.0)))  # 1.0050525...


def enumerate_potts(size: int, q: int, beta: float) -> dict[str, float]:
    """Mean and sd of energy per site and of the order parameter m, summed over all q^(size^2) states.

    Written independently of the target: pairs listed from (row, col)
    arithmetic, occupation counts by bincount per configuration.
    """
    n = size * size
    states = np.array(np.unravel_index(np.arange(q**n), (q,) * n)).T  # (q^n, n)
    pairs = [
        (r * size + c, rr * size + cc)
        for r in range(size)
        for c in range(size)
        for rr, cc in ((r, (c + 1) % size), ((r + 1) % size, c))
    ]
    assert len(set(pairs)) == 2 * n
    equal = sum((states[:, i] == states[:, j]).astype(float) for i, j in pairs)
    w = np.exp(beta * equal)
    w /= w.sum()
    energy = -equal / n
    top = np.array([np.bincount(s, minlength=q).max() for s in states])
    m = (q * top / n - 1) / (q - 1)
    out = {}
    for name, v in (("energy", energy), ("m", m)):
        mean = float(w @ v)
        out[name], out[f"sd_{name}"] = mean, float(np.sqrt(w @ (v - mean) ** 2))
    return out


def z_scores(chains, truth: dict[str, float]) -> np.ndarray:
    """(estimate - truth) / MCSE for E[energy] and E[m]."""
    x = np.stack([chains.posterior["energy"], chains.posterior["m"]], axis=-1)
    return (x.mean(axis=(0, 1)) - np.array([truth["energy"], truth["m"]])) / stats.mcse_mean(x)


# --- the target ---------------------------------------------------------------


@pytest.mark.parametrize("beta", [0.5, BETA_C3])
def test_exact_moments_of_the_target_equal_enumeration(beta) -> None:
    target = get_target("potts", size=SIZE, q=Q, beta=beta)
    truth = enumerate_potts(SIZE, Q, beta)
    assert target.names == ("energy", "m")
    np.testing.assert_allclose(target.mean, [truth["energy"], truth["m"]], rtol=1e-12)
    np.testing.assert_allclose(target.sd, [truth["sd_energy"], truth["sd_m"]], rtol=1e-10)


def test_q2_is_the_ising_model_at_half_the_coupling() -> None:
    # s_i s_j = 2 delta - 1: Ising at beta is Potts q = 2 at 2 beta; energy_I = 2 energy_P + 2, |m_I| = m_P.
    beta = 0.35
    ising = get_target("ising", size=4, beta=beta)
    p = get_target("potts", size=4, q=2, beta=2 * beta)
    np.testing.assert_allclose(ising.mean[2], 2 * p.mean[0] + 2, rtol=1e-12)
    np.testing.assert_allclose(ising.sd[2], 2 * p.sd[0], rtol=1e-10)
    np.testing.assert_allclose(ising.mean[1], p.mean[1], rtol=1e-12)
    assert abs(potts.beta_critical(2) - 2 * 0.44068679350977147) < 1e-15


def test_log_density_transform_and_validation() -> None:
    target = get_target("potts", size=4, q=3, beta=0.5)
    assert (target.dim, target.rows, target.q, target.beta) == (16, 4, 3, 0.5)
    assert target.options == {"size": 4, "q": 3, "beta": 0.5}
    assert target.mean is None  # 3^16 states: no enumeration
    assert isinstance(target, PottsLattice) and isinstance(target, SpinLattice)
    assert isinstance(target, FullConditionals) and target.discrete
    assert not isinstance(get_target("ising", size=4), PottsLattice)
    zeros = np.zeros((1, 16))
    stripes = np.tile([0.0, 1.0, 2.0, 1.0], 4)[None]  # every horizontal pair unequal, every vertical pair equal
    np.testing.assert_allclose(target.log_density(np.concatenate([zeros, zeros + 2, stripes])), [16.0, 16.0, 8.0])
    np.testing.assert_allclose(target.report(zeros), [[-2.0, 1.0]])
    # occupations 4, 8, 4 of 16: m = (3 * 8/16 - 1) / 2 = 0.25
    np.testing.assert_allclose(target.report(stripes), [[-1.0, 0.25]])
    assert target.report(np.zeros((2, 3, 16))).shape == (2, 3, 2)
    for bad in (np.full((1, 16), 0.5), np.full((1, 16), 3.0), np.full((1, 16), -1.0)):
        assert target.log_density(bad)[0] == -np.inf
    for bad in ({"size": 2}, {"q": 1}, {"q": 2.5}, {"beta": -0.1}, {"beta": float("inf")}):
        with pytest.raises(UsageError):
            get_target("potts", **bad)


def test_the_driver_keeps_other_samplers_off_the_lattice() -> None:
    with pytest.raises(UsageError, match="spin lattice"):
        run(rwm, get_target("potts", size=4), chains=1, warmup=1, draws=1, seed=1)


# --- exactness: both samplers against enumeration -------------------------------

EXACT_CASES = [(s, beta) for s in SAMPLERS for beta in (0.5, BETA_C3)]


@pytest.mark.parametrize(("sampler", "beta"), EXACT_CASES, ids=[f"{c[0].NAME}-beta{c[1]:.3f}" for c in EXACT_CASES])
def test_sampler_matches_enumeration(sampler, beta) -> None:
    target = get_target("potts", size=SIZE, q=Q, beta=beta)
    chains = run(sampler, target, chains=4, warmup=100, draws=2500, seed=20261123).chains
    z = z_scores(chains, enumerate_potts(SIZE, Q, beta))
    assert np.abs(z).max() < 4, z
    result = evaluate(chains, target)  # means and sds of energy and m, R-hat
    assert not result.failures, result.failures
    # the run records the target's options, enough to rebuild it
    assert chains.attrs["target_options"] == {"size": SIZE, "q": Q, "beta": beta}
    np.testing.assert_allclose(chains.sample_stats["lp"], -beta * SIZE**2 * chains.posterior["energy"], atol=1e-9)


def _wrong_bonds(beta: float) -> float:
    return float(-np.expm1(-2.0 * beta))  # Ising's formula; the Potts coupling needs 1 - exp(-beta)


def _wrong_conditional(beta: float, counts: np.ndarray) -> np.ndarray:
    return np.cumsum(np.exp(0.5 * beta * counts), axis=-1)  # should be exp(beta n_k)


@pytest.mark.parametrize(
    ("sampler", "where", "attr", "wrong"),
    [(sw, sw, "potts_bond_probability", _wrong_bonds), (gibbs, potts, "conditional_cdf", _wrong_conditional)],
    ids=["swendsen-wang", "gibbs"],
)
def test_a_wrong_kernel_fails_the_same_check(monkeypatch, sampler, where, attr, wrong) -> None:
    monkeypatch.setattr(where, attr, wrong)
    target = get_target("potts", size=SIZE, q=Q, beta=BETA_C3)
    chains = run(sampler, target, chains=4, warmup=100, draws=2500, seed=20261123).chains
    z = z_scores(chains, enumerate_potts(SIZE, Q, BETA_C3))
    assert np.abs(z).max() > 4, z


# --- reproducibility ------------------------------------------------------------


def _arrays(chains) -> dict[str, bytes]:
    out = {f"posterior/{k}": v.tobytes() for k, v in chains.posterior.items()}
    out.update({f"stats/{k}": v.tobytes() for k, v in chains.sample_stats.items()})
    return out


@pytest.mark.parametrize("sampler", SAMPLERS, ids=[s.NAME for s in SAMPLERS])
def test_same_seed_same_bytes_and_chains_split_across_calls(sampler) -> None:
    target = get_target("potts", size=5, q=4, beta=1.0)
    kw = {"warmup": 10, "draws": 30}
    a = run(sampler, target, chains=4, seed=5, **kw).chains
    assert _arrays(a) == _arrays(run(sampler, target, chains=4, seed=5, **kw).chains)
    assert _arrays(a) != _arrays(run(sampler, target, chains=4, seed=6, **kw).chains)
    parts = [run(sampler, target, chain_ids=ids, seed=5, **kw).chains for ids in ([0, 1], [2, 3])]
    joined = {key: b"".join(_arrays(p)[key] for p in parts) for key in _arrays(a)}
    assert joined == _arrays(a)


# --- why Swendsen-Wang exists ---------------------------------------------------


def test_swendsen_wang_decorrelates_the_energy_far_faster_than_gibbs_at_criticality() -> None:
    # 24 x 24, q = 3 at beta_c = log(1 + sqrt 3): the single-site heat bath
    # slows down critically (tau ~ L^2.2), SW clusters hardly (tau_E ~ L^0.5;
    # Salas & Sokal 1997). Equal iterations. Measured over seeds 1-5: tau_E of
    # gibbs 120-300 sweeps, of SW 20-25, ratio 5-14; 16 chains (vectorized,
    # nearly free) steady the estimate of the slow chain.
    target = get_target("potts", size=24, q=3, beta=BETA_C3)
    kw = {"chains": 16, "warmup": 300, "draws": 1000, "seed": 3}
    res = {s.NAME: run(s, target, **kw).chains for s in SAMPLERS}
    tau = {name: float(stats.iat(c.posterior["energy"][..., None])[0]) for name, c in res.items()}
    assert tau["gibbs"] > 3 * tau["swendsen-wang"], tau
    # Every cluster takes a uniform state: a spin changes with probability about (q - 1) / q.
    assert abs(res["swendsen-wang"].sample_stats["flip_rate"].mean() - 2 / 3) < 0.03
