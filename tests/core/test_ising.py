"""Ising target, heat-bath Gibbs and Swendsen-Wang: exact answers by enumeration, reproducibility, cluster speed-up."""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.errors import UsageError
from mcmc.core.samplers import gibbs
from mcmc.core.samplers import swendsen_wang as sw
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target, ising
from mcmc.core.targets.ising import bonds, colour_classes, neighbours
from mcmc.core.targets.protocols import FullConditionals, SpinLattice
from mcmc.diagnostics import stats
from tests.core.harness import evaluate

SAMPLERS = [gibbs, sw]
HOT, CRITICAL = 0.2, 0.4407


def enumerate_ising(size: int, beta: float) -> dict[str, float]:
    """E|m|, E[energy], E[m^2] and sd(energy) by summing over all 2^(size^2) states.

    Written independently of the target: the pairs are listed site by site
    from (row, col) arithmetic, not taken from its neighbour table.
    """
    n = size * size
    spins = (((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2 - 1).astype(float)
    pairs = [
        (r * size + c, rr * size + cc)
        for r in range(size)
        for c in range(size)
        for rr, cc in ((r, (c + 1) % size), ((r + 1) % size, c))
    ]
    assert len(set(pairs)) == 2 * n
    s = sum(spins[:, i] * spins[:, j] for i, j in pairs)
    w = np.exp(beta * (s - s.max()))
    w /= w.sum()
    m = spins.mean(axis=1)
    energy = -s / n
    e_mean = float(w @ energy)
    return {
        "abs_m": float(w @ np.abs(m)),
        "energy": e_mean,
        "m2": float(w @ m**2),
        "sd_energy": float(np.sqrt(w @ (energy - e_mean) ** 2)),
    }


def z_scores(chains, truth: dict[str, float]) -> np.ndarray:
    """(estimate - truth) / MCSE for E|m|, E[energy], E[m^2]."""
    m = chains.posterior["m"]
    x = np.stack([chains.posterior["abs_m"], chains.posterior["energy"], m**2], axis=-1)
    exact = np.array([truth["abs_m"], truth["energy"], truth["m2"]])
    return (x.mean(axis=(0, 1)) - exact) / stats.mcse_mean(x)


# --- the target ---------------------------------------------------------------


@pytest.mark.parametrize(("size", "beta"), [(3, 0.3), (4, HOT), (4, CRITICAL)])
def test_exact_moments_of_the_target_equal_enumeration(size, beta) -> None:
    target = get_target("ising", size=size, beta=beta)
    truth = enumerate_ising(size, beta)
    assert target.names == ("m", "abs_m", "energy")
    np.testing.assert_allclose(target.mean, [0.0, truth["abs_m"], truth["energy"]], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(target.sd, [np.sqrt(truth["m2"]), target.sd[1], truth["sd_energy"]], rtol=1e-12)
    np.testing.assert_allclose(target.sd[1] ** 2 + target.mean[1] ** 2, truth["m2"], rtol=1e-12)  # E|m|^2 = E m^2


def test_log_density_transform_and_validation() -> None:
    target = get_target("ising", size=4, beta=0.5)
    assert (target.dim, target.rows, target.cols, target.beta) == (16, 4, 4, 0.5)
    assert target.options == {"size": 4, "beta": 0.5}
    assert isinstance(target, SpinLattice) and isinstance(target, FullConditionals) and target.discrete
    up = np.ones((1, 16))
    stripes = np.tile([1.0, -1.0], 8)[None]  # alternate columns: 16 unequal pairs across, 16 equal down
    np.testing.assert_allclose(target.log_density(np.concatenate([up, -up, stripes])), [16.0, 16.0, 0.0])
    np.testing.assert_allclose(target.report(up), [[1.0, 1.0, -2.0]])
    np.testing.assert_allclose(target.report(stripes), [[0.0, 0.0, 0.0]])
    assert target.log_density(np.full((1, 16), 0.5))[0] == -np.inf  # not a spin configuration
    # Reported values keep any leading axes (the driver passes (chain, draw, dim)).
    assert target.report(np.ones((2, 3, 16))).shape == (2, 3, 3)
    assert get_target("ising").rows == 16 and get_target("ising").mean is None
    again = get_target("ising", **target.options)
    np.testing.assert_array_equal(again.mean, target.mean)
    for bad in ({"size": 2}, {"size": 4.5}, {"beta": -0.1}, {"beta": float("nan")}):
        with pytest.raises(UsageError):
            get_target("ising", **bad)


@pytest.mark.parametrize(("rows", "cols"), [(3, 3), (4, 4), (5, 6), (6, 4), (7, 7)])
def test_colour_classes_are_proper_and_cover_the_lattice(rows, cols) -> None:
    classes = colour_classes(rows, cols)
    assert len(classes) == (2 if rows % 2 == 0 and cols % 2 == 0 else 3)
    colour = np.empty(rows * cols, dtype=int)
    colour[np.concatenate(classes)] = np.repeat(np.arange(len(classes)), [c.size for c in classes])
    assert sorted(np.concatenate(classes).tolist()) == list(range(rows * cols))
    nbr = neighbours(rows, cols)
    assert (colour[:, None] != colour[nbr]).all()
    first, second = bonds(rows, cols)
    assert first.size == 2 * rows * cols and (np.diff(first) >= 0).all()


def test_clusters_of_empty_and_full_bond_graphs() -> None:
    first, second = bonds(3, 3)
    bonded = np.zeros((2, first.size), dtype=bool)
    bonded[1] = True
    labels, roots = sw.clusters(bonded, first, second, 9)
    assert np.bincount(roots // 9).tolist() == [9, 1]  # chain 0: singletons; chain 1: one cluster
    assert len(set(labels[9:])) == 1 and roots[labels[9]] == 9


# --- exactness: both samplers against enumeration -------------------------------

EXACT_CASES = [(s, size, beta) for s in SAMPLERS for size, beta in [(3, 0.3), (4, HOT), (4, CRITICAL)]]


@pytest.mark.parametrize(
    ("sampler", "size", "beta"), EXACT_CASES, ids=[f"{c[0].NAME}-L{c[1]}-beta{c[2]}" for c in EXACT_CASES]
)
def test_sampler_matches_enumeration(sampler, size, beta) -> None:
    target = get_target("ising", size=size, beta=beta)
    chains = run(sampler, target, chains=4, warmup=100, draws=3000, seed=20261122).chains
    z = z_scores(chains, enumerate_ising(size, beta))
    assert np.abs(z).max() < 4, z
    # The shared harness too: means and sds of m, abs_m, energy, and R-hat. The
    # sign of m tunnels slowly under single-site updates (IAT ~ 100 sweeps for
    # Gibbs at beta_c on 4 x 4), so its R-hat gets 1.05; the sign-free
    # abs_m and energy keep the usual 1.01.
    result = evaluate(chains, target, rhat_max=1.05)
    assert not result.failures
    assert (result.rhat[1:] < 1.01).all(), result.rhat
    # lp is the log density of the reported state: beta * sum s_i s_j = -beta L^2 energy.
    np.testing.assert_allclose(chains.sample_stats["lp"], -beta * size**2 * chains.posterior["energy"], atol=1e-9)


def _wrong_bonds(beta: float) -> float:
    return float(-np.expm1(-beta))  # should be 1 - exp(-2 beta)


def _wrong_conditional(beta: float, field: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-beta * field))  # should be exp(-2 beta h)


@pytest.mark.parametrize(
    ("sampler", "where", "attr", "wrong"),
    [(sw, sw, "bond_probability", _wrong_bonds), (gibbs, ising, "conditional_up", _wrong_conditional)],
    ids=["swendsen-wang", "gibbs"],
)
def test_a_wrong_kernel_fails_the_same_check(monkeypatch, sampler, where, attr, wrong) -> None:
    # the heat bath's conditional is the target's (FullConditionals), the bond probability the sampler's
    monkeypatch.setattr(where, attr, wrong)
    target = get_target("ising", size=4, beta=CRITICAL)
    chains = run(sampler, target, chains=4, warmup=100, draws=3000, seed=20261122).chains
    z = z_scores(chains, enumerate_ising(4, CRITICAL))
    assert np.abs(z).max() > 4, z
    assert evaluate(chains, target).failures


# --- reproducibility ------------------------------------------------------------


def _arrays(chains) -> dict[str, bytes]:
    out = {f"posterior/{k}": v.tobytes() for k, v in chains.posterior.items()}
    out.update({f"stats/{k}": v.tobytes() for k, v in chains.sample_stats.items()})
    return out


@pytest.mark.parametrize("sampler", SAMPLERS, ids=[s.NAME for s in SAMPLERS])
def test_same_seed_same_bytes_and_chains_split_across_calls(sampler) -> None:
    target = get_target("ising", size=5, beta=CRITICAL)
    kw = {"warmup": 10, "draws": 30}
    a = run(sampler, target, chains=4, seed=5, **kw).chains
    b = run(sampler, target, chains=4, seed=5, **kw).chains
    assert _arrays(a) == _arrays(b)
    assert a.attrs == b.attrs  # timings travel beside the chains, not in them
    assert _arrays(a) != _arrays(run(sampler, target, chains=4, seed=6, **kw).chains)
    parts = [run(sampler, target, chain_ids=ids, seed=5, **kw).chains for ids in ([0, 1], [2, 3])]
    joined = {key: b"".join(_arrays(p)[key] for p in parts) for key in _arrays(a)}
    assert joined == _arrays(a)  # chain is the leading axis, so bytes concatenate
    assert a.attrs["sampler"] == sampler.NAME and a.attrs["target_options"] == {"size": 5, "beta": CRITICAL}


@pytest.mark.parametrize("sampler", SAMPLERS, ids=[s.NAME for s in SAMPLERS])
def test_samplers_refuse_a_continuous_target(sampler) -> None:
    # gibbs also draws Gaussian targets from their full conditionals; banana has none it knows
    with pytest.raises(UsageError, match="Ising lattice"):
        run(sampler, get_target("banana", dim=4), chains=1, warmup=1, draws=1, seed=1)


# --- why Swendsen-Wang exists ---------------------------------------------------


def test_swendsen_wang_beats_gibbs_near_criticality() -> None:
    # 16 x 16 at beta_c: single-site updates slow down critically (IAT of |m|
    # ~ L^2.17 sweeps); SW clusters do not. Equal iterations, generous margin.
    target = get_target("ising", size=16, beta=CRITICAL)
    kw = {"chains": 4, "warmup": 300, "draws": 1500, "seed": 7}
    res = {s.NAME: run(s, target, **kw).chains for s in SAMPLERS}
    ess = {name: float(stats.ess_mean(c.posterior["abs_m"][..., None])[0]) for name, c in res.items()}
    assert ess["swendsen-wang"] > 3 * ess["gibbs"], ess
    # About half the spins flip per SW iteration (each cluster with probability 1/2).
    assert abs(res["swendsen-wang"].sample_stats["flip_rate"].mean() - 0.5) < 0.02
    assert (res["swendsen-wang"].sample_stats["n_clusters"] >= 1).all()
