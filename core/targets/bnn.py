"""Neal's Bayesian neural network for regression: one tanh hidden layer, hierarchical Gaussian priors.

The model (Neal 1996, chapters 1-3), on predictors and outcome standardized
with the training data's means and sds (``z = (x - mean) / sd``; everything
the user sees is mapped back to the original scale)::

    f(x) = b_out + x . W_direct + sum_h W_out[h] tanh(b_hidden[h] + x . W_in[:, h])
    y_i ~ N(f(x_i), 1 / tau_noise)
    w ~ N(0, 1 / tau_g)    for every weight w of group g
    tau_g ~ Gamma(shape a_g, rate a_g / m_g)   (prior mean precision m_g)

with five weight groups (``in``: input-hidden, ``hidden_bias``, ``out``:
hidden-output, ``direct``: input-output, ``out_bias``) and the noise. The
hidden-output prior mean precision is ``H`` (the hidden units), Neal's
scaling under which the prior over functions has a limit as ``H`` grows.

Sampling space: the weights, then ``log tau`` of the six precisions (so that
every coordinate is unconstrained and plain ``hmc`` or NUTS can also sample
it; the log density includes the Jacobian). The target implements
:class:`~mcmc.core.targets.protocols.FullConditionals`: each ``log tau`` is a
Gibbs block, drawn exactly from its conjugate gamma conditional,
``tau_g | w ~ Gamma(a_g + k_g / 2, a_g / m_g + |w_g|^2 / 2)`` (``k_g``
weights in the group; for the noise, ``n`` residuals and their sum of
squares), by inverse CDF from one uniform per block, so ``hmc-gibbs`` (its
default sampler) runs HMC on the weights only, as Neal did.

Reported: the weights (on the standardized scale; they are **not
identifiable**: hidden units can be permuted and ``(W_in, b_hidden, W_out)``
of a unit can flip sign together, so single weights need not mix; judge a run
by the hyperparameters, ``lp`` and the predictions), the prior sds
``sigma_G = tau_G^(-1/2)`` of the groups and ``noise_sd`` on the outcome's
original scale.

Data: a CSV with a header, predictor columns and the outcome last (as
``logistic`` reads); without one, :func:`default_bnn_data`, 100 points of
``sin(3 x) + x / 2`` plus noise on ``[-2, 2]``.

References
----------
Neal, R. M. (1996). *Bayesian Learning for Neural Networks*. Lecture Notes in
Statistics 118, Springer.
MacKay, D. J. C. (1992). A practical Bayesian framework for backpropagation
networks. *Neural Computation* 4, 448-472.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from math import lgamma
from typing import Any

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target, flat_names
from mcmc.core.targets.models import read_csv

LOG_2PI = float(np.log(2.0 * np.pi))
HIDDEN = 8
"""Default hidden units: enough for the smooth 1-D curves of the examples, cheap per gradient."""
MIN_ROWS = 5
GROUPS = ("in", "hidden_bias", "out", "direct", "out_bias", "noise")
#: The identified quantities: the groups' prior scales and the noise sd (what a run is judged by).
HYPERPARAMETERS = ("sigma_in", "sigma_hidden_bias", "sigma_out", "sigma_direct", "sigma_out_bias", "noise_sd")
PRIOR_SHAPE = 2.0
"""Gamma shape of every precision prior: weakly informative, keeps the prior sd of a group off 0 and infinity."""


@dataclass(frozen=True)
class BnnData:
    """Training data and the standardization learnt from it.

    Attributes
    ----------
    x, y
        ``(n, p)`` predictors and ``(n,)`` outcome, original scale.
    x_mean, x_sd, y_mean, y_sd
        Means and sds (``ddof=1``) of the training columns.
    names
        Header: predictor names, then the outcome's.
    source
        The file (or ``"built-in"``).
    """

    x: np.ndarray
    y: np.ndarray
    x_mean: np.ndarray
    x_sd: np.ndarray
    y_mean: float
    y_sd: float
    names: tuple[str, ...]
    source: str

    def standard_x(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x, dtype=float) - self.x_mean) / self.x_sd


def default_bnn_data(n: int = 100, noise: float = 0.2, seed: int = 20260613) -> tuple[list[str], np.ndarray]:
    """The built-in 1-D set: ``x ~ U(-2, 2)``, ``y = sin(3 x) + x / 2 + N(0, noise^2)``."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2.0, 2.0, n))
    y = true_function(x) + noise * rng.standard_normal(n)
    return ["x", "y"], np.column_stack([x, y])


def true_function(x: np.ndarray) -> np.ndarray:
    """The regression function of the built-in data."""
    return np.sin(3.0 * x) + 0.5 * x


def load_data(path: str | None) -> BnnData:
    """Training data from ``path`` (header, predictors, outcome last) or the built-in set.

    Raises
    ------
    InputError
        Naming the file: unreadable, non-numeric cell, missing outcome, no
        predictor column, fewer than :data:`MIN_ROWS` rows, a constant column.
    """
    if path is None:
        header, table = default_bnn_data()
        source = "built-in"
    else:
        header, table = read_csv(path, outcome_last=True)
        source = path
    if table.shape[1] < 2:
        raise InputError(source, "expected at least one predictor column before the outcome column")
    if table.shape[0] < MIN_ROWS:
        raise InputError(source, f"has {table.shape[0]} data rows; the network needs at least {MIN_ROWS}")
    sd = table.std(axis=0, ddof=1)
    constant = np.flatnonzero(~(sd > 0))
    if constant.size:
        raise InputError(source, f"column {header[constant[0]]!r} is constant: nothing to learn from it")
    return BnnData(
        table[:, :-1], table[:, -1], table[:, :-1].mean(axis=0), sd[:-1], float(table[:, -1].mean()),
        float(sd[-1]), tuple(header), source,
    )  # fmt: skip


def read_test(path: str, data: BnnData) -> tuple[np.ndarray, np.ndarray | None]:
    """Test inputs ``(m, p)`` and the outcome ``(m,)`` when the file has it (``p + 1`` columns).

    Raises
    ------
    InputError
        Naming ``path``: unreadable, non-numeric, or a predictor count other than the training data's.
    """
    header, table = read_csv(path)
    p = data.x.shape[1]
    if table.shape[1] == p:
        return table, None
    if table.shape[1] == p + 1:
        return table[:, :-1], table[:, -1]
    raise InputError(
        path,
        f"has {table.shape[1]} columns; the training data has {p} predictor(s) "
        f"(give {p} predictor columns, optionally then the outcome)",
    )


@dataclass(frozen=True, eq=False)
class BnnTarget(Target):
    """The network's posterior (see the module docstring), with the precisions as Gibbs blocks.

    Attributes
    ----------
    data
        :class:`BnnData`.
    hidden
        Hidden units ``H``.
    prior_shape, prior_mean
        ``(6,)`` gamma shape and mean precision of each group in :data:`GROUPS` order.
    """

    data: Any = None
    hidden: int = HIDDEN
    prior_shape: Any = None
    prior_mean: Any = None
    discrete = False
    # The JudgedVariables protocol: weights are not identifiable, the hyperparameters are.
    judged_variables = HYPERPARAMETERS
    judged_reason = "a neural network's weights are not identifiable"

    # -- layout ------------------------------------------------------------
    @property
    def n_inputs(self) -> int:
        return int(self.data.x.shape[1])

    @property
    def group_sizes(self) -> np.ndarray:
        """Weights per group ``(5,)``: ``p H, H, H, p, 1``."""
        p, h = self.n_inputs, self.hidden
        return np.array([p * h, h, h, p, 1])

    @property
    def n_weights(self) -> int:
        return int(self.group_sizes.sum())

    def unpack(self, w: np.ndarray) -> tuple[np.ndarray, ...]:
        """``W_in (..., p, H), b_hidden (..., H), W_out (..., H), W_direct (..., p), b_out (...)`` of weights ``w (..., n_weights)``."""
        p, h = self.n_inputs, self.hidden
        ends = np.cumsum(self.group_sizes)
        lead = w.shape[:-1]
        return (
            w[..., : ends[0]].reshape(*lead, p, h), w[..., ends[0] : ends[1]], w[..., ends[1] : ends[2]],
            w[..., ends[2] : ends[3]], w[..., ends[3]],
        )  # fmt: skip

    def network(self, w: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Network outputs ``(chains, m)`` (standardized scale) at standardized inputs ``xs (m, p)``."""
        w_in, b_h, w_out, w_dir, b_out = self.unpack(w)
        h = np.tanh(np.einsum("mp,cph->cmh", xs, w_in) + b_h[:, None, :])
        return np.einsum("cmh,ch->cm", h, w_out) + w_dir @ xs.T + b_out[:, None]

    # -- density -----------------------------------------------------------
    def _value_and_grad(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The log density and gradient in NumPy, batched over chains: the reference the compiled
        :func:`mcmc.core.targets.bnn_kernel.point` (which the target evaluates) is tested against."""
        nw = self.n_weights
        w, u = x[:, :nw], x[:, nw:]
        tau = np.exp(u)
        xs, ys = self.data.standard_x(self.data.x), (self.data.y - self.data.y_mean) / self.data.y_sd
        w_in, b_h, w_out, w_dir, b_out = self.unpack(w)
        h = np.tanh(np.einsum("np,cph->cnh", xs, w_in) + b_h[:, None, :])
        r = ys - (np.einsum("cnh,ch->cn", h, w_out) + w_dir @ xs.T + b_out[:, None])
        ends = np.cumsum(self.group_sizes)[:-1]
        sq = np.column_stack([(g**2).sum(axis=1) for g in np.split(w, ends, axis=1)] + [(r**2).sum(axis=1)])
        counts = np.append(self.group_sizes, ys.size)
        shape, rate = self.prior_shape, self.prior_shape / self.prior_mean
        with np.errstate(over="ignore", invalid="ignore"):
            lp = self._const + ((shape + 0.5 * counts) * u - tau * (rate + 0.5 * sq)).sum(axis=1)
            g = np.empty_like(x)
            g[:, nw:] = shape + 0.5 * counts - tau * (rate + 0.5 * sq)
            d = tau[:, -1:] * r  # d loglik / d f, (chains, n)
            dpre = d[:, :, None] * w_out[:, None, :] * (1.0 - h**2)
            prior = -np.repeat(tau[:, :5], self.group_sizes, axis=1) * w
            grads = [
                np.einsum("np,cnh->cph", xs, dpre).reshape(len(x), -1), dpre.sum(axis=1),
                np.einsum("cnh,cn->ch", h, d), d @ xs, d.sum(axis=1, keepdims=True),
            ]  # fmt: skip
            g[:, :nw] = np.concatenate(grads, axis=1) + prior
        return np.where(np.isfinite(lp), lp, -np.inf), g

    @property
    def _const(self) -> float:
        shape, rate = self.prior_shape, self.prior_shape / self.prior_mean
        counts = np.append(self.group_sizes, self.data.y.size)
        return float(sum(a * np.log(b) - lgamma(a) for a, b in zip(shape, rate, strict=True)) - 0.5 * counts.sum() * LOG_2PI)

    # -- FullConditionals --------------------------------------------------
    def conditional_blocks(self) -> tuple[int, ...]:
        """The six ``log tau`` coordinates, one block each (weights are left to HMC)."""
        return tuple(range(self.n_weights, self.n_weights + len(GROUPS)))

    def sweep_noise(self, rng: ChainRandom) -> np.ndarray:
        """One uniform per precision and chain, ``(chains, 6)``: the gamma draws by inverse CDF."""
        return rng.uniform((len(GROUPS),))

    def conditional_params(self, x: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
        """Shape and rate ``(chains,)`` of the gamma full conditional of the precision ``block``."""
        nw = self.n_weights
        k = block - nw
        shape, rate = self.prior_shape[k], self.prior_shape[k] / self.prior_mean[k]
        if k < len(GROUPS) - 1:
            start = int(self.group_sizes[:k].sum())
            w = x[:, start : start + self.group_sizes[k]]
            return np.full(len(x), shape + 0.5 * w.shape[1]), rate + 0.5 * (w**2).sum(axis=1)
        ys = (self.data.y - self.data.y_mean) / self.data.y_sd
        r = ys - self.network(x[:, :nw], self.data.standard_x(self.data.x))
        return np.full(len(x), shape + 0.5 * ys.size), rate + 0.5 * (r**2).sum(axis=1)

    def draw_conditional(self, rng: ChainRandom, x: np.ndarray, block: int, noise: np.ndarray) -> None:
        """``log tau`` of ``block`` from its gamma conditional, with the pre-drawn uniform."""
        # start-up: SciPy (0.1 to 0.2 s) only when a bnn run draws; this module is imported by every sample run
        from scipy.special import gammaincinv

        shape, rate = self.conditional_params(x, block)
        u = noise[:, block - self.n_weights] + 2.0**-54  # in (0, 1): the 0 quantile would be tau = 0
        x[:, block] = np.log(gammaincinv(shape, u)) - np.log(rate)

    # -- prior (for the Geweke test and starts) -----------------------------
    def draw_prior(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` draws ``(n, dim)`` of the weights and log precisions from the prior."""
        shape, rate = self.prior_shape, self.prior_shape / self.prior_mean
        tau = rng.gamma(shape, 1.0 / rate, size=(n, len(GROUPS)))
        sd = np.repeat(tau[:, :5] ** -0.5, self.group_sizes, axis=1)
        return np.concatenate([sd * rng.standard_normal((n, self.n_weights)), np.log(tau)], axis=1)


def bnn(data: str | None = None, hidden: int = HIDDEN) -> BnnTarget:
    """The network's posterior given ``data`` (see the module docstring)."""
    if isinstance(hidden, bool) or int(hidden) != hidden or hidden < 1 or hidden > 10000:
        raise UsageError(f"bnn: hidden must be an integer in 1..10000, got {hidden}")
    return build(load_data(data), int(hidden), {"data": data, "hidden": int(hidden)})


def build(d: BnnData, hidden: int, options: dict[str, Any] | None = None) -> BnnTarget:
    """The network's posterior for already-loaded data ``d`` (tests give standardized data directly)."""
    p = d.x.shape[1]
    prior_shape = np.full(len(GROUPS), PRIOR_SHAPE)
    prior_mean = np.array([1.0, 1.0, float(hidden), 1.0, 1.0, 4.0])
    variables = (
        ("W_in", (p, hidden)), ("b_hidden", (hidden,)), ("W_out", (hidden,)), ("W_direct", (p,)), ("b_out", ()),
        ("sigma_in", ()), ("sigma_hidden_bias", ()), ("sigma_out", ()), ("sigma_direct", ()), ("sigma_out_bias", ()),
        ("noise_sd", ()),
    )  # fmt: skip
    n_weights = p * hidden + 2 * hidden + p + 1
    dim = n_weights + len(GROUPS)

    def transform(x: np.ndarray) -> np.ndarray:
        sigma = np.exp(-0.5 * x[..., n_weights:])
        sigma[..., -1] *= d.y_sd
        return np.concatenate([x[..., :n_weights], sigma], axis=-1)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        # Small weights (near-linear units), precisions at their prior means, jittered on the log scale.
        w = 0.5 * rng.normal((n_weights,))
        u = np.log(prior_mean) + 0.5 * rng.normal((len(GROUPS),))
        return np.concatenate([w, u], axis=1)

    holder: dict[str, Any] = {}

    def value_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return holder["vg"](np.asarray(x, dtype=float))

    target = BnnTarget(
        name="bnn", dim=dim, log_density=lambda x: value_and_grad(x)[0], grad_log_density=lambda x: value_and_grad(x)[1],
        value_and_grad_fn=value_and_grad, names=flat_names(variables), variables=variables, transform=transform,
        initial_point=initial_point, options=dict(options or {"hidden": hidden}), data=d, hidden=hidden,
        prior_shape=prior_shape, prior_mean=prior_mean,
    )  # fmt: skip
    # The density from the compiled point function, one row at a time: a chain's numbers then do not depend
    # on how many chains share the batch (BLAS sums a batched product in another order), and HMC's whole
    # trajectory is compiled too (mcmc.core.compiled), every chain under its own precisions.
    from mcmc.core.compiled import compiled_paths, make_batch
    from mcmc.core.targets.bnn_kernel import point, point_data

    data = point_data(target)
    holder["vg"] = make_batch(point, data)
    return dataclasses.replace(target, compiled=compiled_paths(point, data))


# -- the posterior predictive -------------------------------------------------

PREDICT_CHUNK = 2_000_000  # draws x points x hidden units evaluated at once (16 MB of tanh)


@dataclass(frozen=True)
class Predictive:
    """The posterior predictive at a set of inputs, on the original scale.

    Attributes
    ----------
    x
        ``(m, p)`` inputs.
    outcome
        ``(m,)`` observed outcome, or ``None``.
    mean, sd, q5, q95
        ``(m,)`` mean, sd and 5 % / 95 % quantiles of the predictive (noise included).
    draws_mean
        ``(chain, draw, m)`` the network's output at each draw (the predictive mean given the draw).
    rmse
        Root mean squared error of ``mean`` against ``outcome`` (``None`` without one).
    mlpd
        Mean over points of ``log (1/S) sum_s N(outcome; f_s(x), noise_sd_s^2)`` (``None`` without one).
    """

    x: np.ndarray
    outcome: np.ndarray | None
    mean: np.ndarray
    sd: np.ndarray
    q5: np.ndarray
    q95: np.ndarray
    draws_mean: np.ndarray
    rmse: float | None
    mlpd: float | None


def _weights(target: BnnTarget, posterior: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """Flat weights ``(S, n_weights)`` and noise sds ``(S,)`` from chains-file variables ``(chain, draw, ...)``."""
    lead = np.shape(posterior["b_out"])
    s = int(np.prod(lead))
    parts = [np.asarray(posterior[k], dtype=float).reshape(s, -1) for k in ("W_in", "b_hidden", "W_out", "W_direct", "b_out")]
    return np.concatenate(parts, axis=1), np.asarray(posterior["noise_sd"], dtype=float).reshape(s), lead


def _mixture_quantile(means: np.ndarray, sds: np.ndarray, q: float, iterations: int = 60) -> np.ndarray:
    """``q``-quantile ``(m,)`` of the equal mixture of ``N(means[s, j], sds[s]^2)`` over ``s``, by bisection."""
    from scipy.special import ndtr

    lo = (means - 8.0 * sds[:, None]).min(axis=0)
    hi = (means + 8.0 * sds[:, None]).max(axis=0)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        below = ndtr((mid - means) / sds[:, None]).mean(axis=0) < q
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def predict(target: BnnTarget, posterior: dict[str, np.ndarray], x: np.ndarray, outcome: np.ndarray | None = None) -> Predictive:
    """The posterior predictive at inputs ``x (m, p)`` (original scale) from a run's variables.

    Parameters
    ----------
    target
        The network the run sampled (its standardization is reused).
    posterior
        Chains-file variables ``(chain, draw, ...)``: the weights and ``noise_sd``.
    x, outcome
        Inputs ``(m, p)`` and, optionally, the observed outcome ``(m,)``.
    """
    from scipy.special import logsumexp

    d = target.data
    w, noise_sd, lead = _weights(target, posterior)
    xs = d.standard_x(x)
    chunk = max(1, PREDICT_CHUNK // max(1, w.shape[0] * target.hidden))
    f = np.concatenate([target.network(w, xs[i : i + chunk]) for i in range(0, len(xs), chunk)], axis=1)
    f = d.y_mean + d.y_sd * f  # (S, m), original scale
    mean = f.mean(axis=0)
    sd = np.sqrt(np.maximum((noise_sd**2).mean() + (f**2).mean(axis=0) - mean**2, 0.0))
    q5 = np.concatenate([_mixture_quantile(f[:, i : i + chunk], noise_sd, 0.05) for i in range(0, f.shape[1], chunk)])
    q95 = np.concatenate([_mixture_quantile(f[:, i : i + chunk], noise_sd, 0.95) for i in range(0, f.shape[1], chunk)])
    rmse = mlpd = None
    if outcome is not None:
        outcome = np.asarray(outcome, dtype=float)
        rmse = float(np.sqrt(np.mean((mean - outcome) ** 2)))
        z = (outcome - f) / noise_sd[:, None]
        log_dens = -0.5 * z**2 - np.log(noise_sd)[:, None] - 0.5 * LOG_2PI
        mlpd = float(np.mean(logsumexp(log_dens, axis=0) - np.log(f.shape[0])))
    return Predictive(np.asarray(x, dtype=float), outcome, mean, sd, q5, q95, f.T.reshape(x.shape[0], *lead).transpose(1, 2, 0), rmse, mlpd)


def predictions_csv(target: BnnTarget, pred: Predictive) -> str:
    """The predictions file: the inputs, ``mean, sd, q5, q95``, then the outcome when known."""
    names = list(target.data.names)
    header = names[:-1] + ["mean", "sd", "q5", "q95"] + ([names[-1]] if pred.outcome is not None else [])
    cols = [pred.x[:, j] for j in range(pred.x.shape[1])] + [pred.mean, pred.sd, pred.q5, pred.q95]
    if pred.outcome is not None:
        cols.append(pred.outcome)
    rows = np.column_stack(cols)
    return ",".join(header) + "\n" + "".join(",".join(f"{v:.10g}" for v in row) + "\n" for row in rows)
