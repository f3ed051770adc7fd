"""The bnn target: gamma conditionals, the compound kernel's invariance (Geweke), predictions, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import digamma

from mcmc.core.errors import InputError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import get_sampler, hmc_within_gibbs
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from mcmc.core.targets.bnn import GROUPS, BnnData, BnnTarget, build, predict
from mcmc.diagnostics import stats

MCYCLE = Path(__file__).parents[1] / "data" / "bnn" / "mcycle.csv"


def test_gibbs_conditionals_are_the_analytic_gammas() -> None:
    # Along each log-precision coordinate the target's density must be the log-gamma density of the
    # conditional written out by hand (shape a + k/2, rate a/m + |w|^2/2; the noise: n residuals).
    target = get_target("bnn", hidden=2)
    x = target.initial(ChainRandom(3, chains=2), 2)
    nw = target.n_weights
    d = target.data
    xs, ys = (d.x - d.x_mean) / d.x_sd, (d.y - d.y_mean) / d.y_sd
    w_in, b_h, w_out, w_dir, b_out = x[:, :2], x[:, 2:4], x[:, 4:6], x[:, 6], x[:, 7]
    f = np.tanh(xs[:, 0][None, :, None] * w_in[:, None, :] + b_h[:, None, :]) @ w_out[:, :, None]
    resid = ys - (f[..., 0] + w_dir[:, None] * xs[:, 0] + b_out[:, None])
    by_hand = [(2, w_in), (2, b_h), (2, w_out), (1, w_dir[:, None]), (1, b_out[:, None]), (ys.size, resid)]
    a, m = target.prior_shape, target.prior_mean
    grid = np.linspace(-3.0, 3.0, 7)
    for k, (count, w) in enumerate(by_hand):
        shape, rate = np.full(2, a[k] + count / 2), a[k] / m[k] + (w**2).sum(axis=1) / 2
        got_shape, got_rate = target.conditional_params(x, nw + k)
        np.testing.assert_allclose(got_shape, shape)
        np.testing.assert_allclose(got_rate, rate)
        for c in range(2):
            pts = np.repeat(x[c : c + 1], grid.size, axis=0)
            pts[:, nw + k] = grid
            lp = target.log_density(pts)
            # density of u = log tau, tau ~ Gamma(shape, rate): the Jacobian e^u included
            ref = sps.gamma.logpdf(np.exp(grid), shape[c], scale=1 / rate[c]) + grid
            np.testing.assert_allclose(lp - lp[0], ref - ref[0], rtol=1e-9, atol=1e-8)
    # and the draw is that gamma's quantile of the pre-drawn uniform
    noise = np.full((2, len(GROUPS)), 0.3)
    y = x.copy()
    target.draw_conditional(None, y, nw + 5, noise)
    np.testing.assert_allclose(np.exp(y[:, nw + 5]), sps.gamma.ppf(0.3, shape, scale=1 / rate), rtol=1e-9)


def _tiny(n: int = 6) -> BnnTarget:
    # Standardization fixed at the identity, so the outcome can be redrawn without changing the model.
    x = np.linspace(-1.5, 1.5, n)[:, None]
    data = BnnData(x, np.zeros(n), np.zeros(1), np.ones(1), 0.0, 1.0, ("x", "y"), "geweke")
    return build(data, 2)


def _geweke(target: BnnTarget, iterations: int, seed: int, conditional=None) -> np.ndarray:
    """Successive-conditional simulator (Geweke 2004): (theta, y) ~ joint by alternating the kernel and y | theta."""
    rng = np.random.default_rng(seed)
    nw = target.n_weights
    xs = target.data.x
    theta = target.draw_prior(rng, 1)
    out = np.empty((iterations, target.dim))
    state = None
    params = {"step_size": 0.15, "path_length": 0.6, "persistence": 0.5}
    for t in range(iterations):
        f = target.network(theta[:, :nw], xs)[0]
        y = f + np.exp(-0.5 * theta[0, -1]) * rng.standard_normal(xs.shape[0])
        d = target.data
        current = build(BnnData(xs, y, d.x_mean, d.x_sd, 0.0, 1.0, d.names, d.source), 2)
        if conditional is not None:
            object.__setattr__(current, "conditional_params", conditional.__get__(current))
        crng = ChainRandom(seed, [t])
        state = hmc_within_gibbs.init(theta, current) if state is None else state._replace(position=theta)
        state = hmc_within_gibbs.init(state.position, current)._replace(momentum=state.momentum)
        state, _ = hmc_within_gibbs.step(crng, state, current, **params)
        theta = state.position
        out[t] = theta[0]
    return out


def _geweke_z(draws: np.ndarray, target: BnnTarget) -> np.ndarray:
    """|estimate - prior moment| / MCSE for E log tau_g (digamma(a) - log rate) and E b_out^2 (= E 1/tau)."""
    a, rate = target.prior_shape, target.prior_shape / target.prior_mean
    nw = target.n_weights
    stats_ = np.column_stack([draws[:, nw:], draws[:, nw - 1] ** 2])
    truth = np.append(digamma(a) - np.log(rate), rate[4] / (a[4] - 1))
    x = stats_.reshape(4, -1, stats_.shape[1])  # four segments as chains for the MCSE
    return (x.mean(axis=(0, 1)) - truth) / stats.mcse_mean(x)


@pytest.mark.slow
def test_geweke_compound_kernel_keeps_the_joint() -> None:
    target = _tiny()
    z = _geweke_z(_geweke(target, 4000, seed=11), target)
    assert np.all(np.abs(z) < 4), z


def test_geweke_catches_a_wrong_conditional() -> None:
    target = _tiny()
    original = BnnTarget.conditional_params

    def wrong(self, x, block):
        shape, rate = original(self, x, block)
        return shape, rate * 1.5 if block == self.n_weights + 1 else rate

    z = _geweke_z(_geweke(target, 2000, seed=11, conditional=wrong), target)
    assert np.max(np.abs(z)) > 4, z


def _split():
    table = np.loadtxt(MCYCLE, delimiter=",", skiprows=1)
    test = np.arange(table.shape[0]) % 4 == 0
    return table[~test], table[test]


def test_mcycle_predictions_beat_ridge(tmp_path) -> None:
    train, test = _split()
    path = tmp_path / "train.csv"
    np.savetxt(path, train, delimiter=",", header="times,accel", comments="")
    target = get_target("bnn", data=str(path), hidden=8)
    chains = run(get_sampler("hmc-gibbs"), target, chains=2, warmup=300, draws=150, seed=3).chains
    pred = predict(target, chains.posterior, test[:, :1], test[:, 1])
    # ridge on the standardized predictor (cubic features, penalty by leave-one-out would be fancier): plain linear
    xs = (train[:, 0] - train[:, 0].mean()) / train[:, 0].std()
    design = np.column_stack([np.ones_like(xs), xs])
    beta = np.linalg.solve(design.T @ design + np.diag([0.0, 1.0]), design.T @ train[:, 1])
    resid_sd = np.sqrt(np.mean((train[:, 1] - design @ beta) ** 2))
    xt = (test[:, 0] - train[:, 0].mean()) / train[:, 0].std()
    ridge_mean = np.column_stack([np.ones_like(xt), xt]) @ beta
    ridge_rmse = np.sqrt(np.mean((ridge_mean - test[:, 1]) ** 2))
    ridge_lpd = np.mean(sps.norm.logpdf(test[:, 1], ridge_mean, resid_sd))
    assert pred.rmse < ridge_rmse and pred.mlpd > ridge_lpd, (pred.rmse, ridge_rmse, pred.mlpd, ridge_lpd)
    assert np.all(pred.q5 < pred.mean) and np.all(pred.mean < pred.q95)
    assert 0.6 < np.mean((pred.q5 < test[:, 1]) & (test[:, 1] < pred.q95)) <= 1.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x,y\n1,2\n2,abc\n3,4\n4,5\n5,1\n", "column 'y' holds 'abc'"),
        ("x,y\n1,2\n2,\n3,4\n4,5\n5,1\n", "no outcome"),
        ("x,z,y\n1,1,2\n2,1,3\n3,1,4\n4,1,5\n5,1,1\n", "column 'z' is constant"),
        ("x,y\n1,2\n2,3\n", "at least 5"),
        ("y\n1\n2\n3\n4\n5\n6\n", "at least one predictor"),
    ],
)
def test_bad_training_data_is_one_line_naming_the_file(tmp_path, text, message) -> None:
    path = tmp_path / "train.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as err:
        get_target("bnn", data=str(path))
    assert err.value.source == str(path)


def test_the_compiled_point_function_is_the_numpy_density() -> None:
    # bnn_kernel.point is what HMC's compiled trajectories integrate: it must be _value_and_grad to rounding,
    # on several inputs (p = 1 and p = 3), at ordinary and at saturating weights (tanh near +-1).
    from mcmc.core.compiled import make_batch
    from mcmc.core.targets.bnn_kernel import point, point_data

    rng = np.random.default_rng(8)
    x3 = rng.normal(size=(20, 3))
    wide = BnnData(x3, x3 @ [1.0, -2.0, 0.5] + rng.normal(size=20), x3.mean(0), x3.std(0, ddof=1), 0.3, 1.7,
                   ("a", "b", "c", "y"), "three")  # fmt: skip
    for target in (get_target("bnn", hidden=5), build(wide, 4)):
        x = rng.normal(size=(6, target.dim)) * np.array([1.0, 1.0, 1.0, 1.0, 30.0, 2.0])[:, None]
        want_lp, want_g = target._value_and_grad(x)
        got_lp, got_g = make_batch(point, point_data(target))(x)
        np.testing.assert_allclose(got_lp, want_lp, rtol=1e-12)
        np.testing.assert_allclose(got_g, want_g, rtol=1e-10, atol=1e-9 * np.abs(want_g).max())


def test_hmc_gibbs_moves_all_chains_in_one_compiled_call_as_the_numpy_loop_does() -> None:
    # The compiled path (every chain under its own precisions, one call) and the per-chain NumPy loop draw
    # the same random numbers, so a few iterations must agree to rounding.
    import dataclasses

    target = get_target("bnn", hidden=4)
    plain = dataclasses.replace(target, compiled=None)
    params = {"step_size": np.array([0.02, 0.03, 0.025]), "path_length": 0.3, "persistence": 0.8,
              "inv_mass": np.linspace(0.5, 1.5, 3 * (target.n_weights))[::-1].reshape(3, -1)}  # fmt: skip
    start = target.initial(ChainRandom(4, chains=3), 3)
    out = []
    for t in (target, plain):
        rng = ChainRandom(12, chains=3)
        state = hmc_within_gibbs.init(start, t)
        infos = []
        for _ in range(5):
            state, info = hmc_within_gibbs.step(rng, state, t, **params)
            infos.append(info)
        out.append((state, infos))
    (a, ia), (b, ib) = out
    np.testing.assert_allclose(a.position, b.position, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a.momentum, b.momentum, rtol=1e-9, atol=1e-9)
    assert all(np.array_equal(x.n_steps, y.n_steps) and np.array_equal(x.accepted, y.accepted)
               for x, y in zip(ia, ib, strict=True))  # fmt: skip
    assert sum(int(i.accepted.sum()) for i in ia) > 5  # the test moved the chains
