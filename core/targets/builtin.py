"""Synthetic targets with known moments: Gaussians, a bimodal mixture, a banana, Neal's funnel.

* ``gaussian``: ``N(0, D R D)`` with ``D = diag(scales)`` and ``R`` the
  equicorrelation matrix ``(1 - rho) I + rho 1 1^T``; ``scales="unit"`` (all 1)
  or ``"log"`` (log-spaced from 0.01 to 1: condition number 10^4, the
  ill-conditioned case). Up to :data:`GIBBS_MAX_DIM` it is a
  :class:`GaussianTarget`, whose full conditionals ``gibbs`` draws from and
  whose exact draws ``exact`` makes by the Box-Muller transform, basic
  (:func:`box_muller`) or polar (:func:`marsaglia_polar`); in one dimension
  its quantile function is known (``inverse-cdf``), as the ``gamma``'s is.
* ``bimodal``: independently per coordinate ``0.5 N(-3, 1) + 0.5 N(3, 1)``
  (``2^dim`` modes; mean 0, sd ``sqrt(10)``); local samplers do not cross
  between modes and R-hat should say so.
* ``banana``: Haario, Saksman & Tamminen's (1999) twisted Gaussian: ``x0 ~
  N(0, 10^2)``, ``x1 | x0 ~ N(b (x0^2 - 100), 1)`` and further coordinates
  ``N(0, 1)``; ``b = 0.03`` is their moderately twisted case. Exact moments:
  mean 0, ``sd(x0) = 10``, ``sd(x1) = sqrt(1 + 2 b^2 10^4)``.
* ``gamma``: independent ``Gamma(shape, rate)`` coordinates on ``(0, inf)``
  (``-inf`` elsewhere): the positive target of the multiplicative log-normal
  Metropolis-Hastings proposal. Mean ``shape / rate``, sd ``sqrt(shape) / rate``.
* ``funnel``: Neal's (2003, "Slice sampling", section 8) funnel: ``v ~
  N(0, 3^2)``, ``x_i | v ~ N(0, e^v)``, ``i < dim - 1``; mean 0, ``sd(v) = 3``,
  ``sd(x_i) = exp(9/4)``.

All gradients are analytic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.memory import require_memory
from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target, flat_names

LOG_2PI = float(np.log(2.0 * np.pi))
#: Largest dimension for which the gaussian target carries its precision matrix (for gibbs): 8 MB.
GIBBS_MAX_DIM = 1000


@dataclass(frozen=True, eq=False)
class GaussianTarget(Target):
    """A target that is exactly ``N(loc, precision^-1)`` in the sampling space, with its full conditionals.

    Implements :class:`~mcmc.core.targets.protocols.FullConditionals` and
    :class:`~mcmc.core.targets.protocols.CoordinateConditionals`: the
    blocks are the coordinates, each drawn from
    ``x_i | x_-i ~ N(mu_i - sum_{j != i} Q_ij (x_j - mu_j) / Q_ii, 1 / Q_ii)``.
    The lecture example of why Gibbs sampling can be slow: for two
    coordinates with correlation ``rho``, each coordinate's chain is AR(1)
    with coefficient ``rho^2``, so ``rho = 0.99`` gives an integrated
    autocorrelation time near 100.

    Parameters
    ----------
    loc
        ``mu``, ``(dim,)``.
    precision
        ``Q``, ``(dim, dim)``, symmetric positive definite.
    """

    loc: Any = None
    precision: Any = None
    rho: float = 0.0
    scales: Any = None
    discrete = False  # FullConditionals: continuous coordinates
    exact_methods = ("box-muller", "polar")  # ExactDraws

    def conditional_blocks(self) -> range:
        """The coordinates, in order."""
        return range(self.dim)

    def sweep_noise(self, rng: ChainRandom) -> np.ndarray:
        """One standard normal per coordinate and chain, ``(chains, dim)``."""
        return rng.normal((self.dim,))

    def draw_conditional(self, rng: ChainRandom, x: np.ndarray, block: int, noise: np.ndarray) -> None:
        """``x[:, i]`` from its conditional normal, with the pre-drawn ``noise[:, i]``."""
        i, mean, precision = block, self.loc, self.precision
        diag = np.diag(precision)
        # Q_i. (x - mu) includes Q_ii (x_i - mu_i), which the conditional mean leaves out
        # A row-wise product and sum, not ``@``: BLAS rounds a one-row product differently from a
        # many-row one, and chain i must not depend on how many chains run beside it.
        pull = ((x - mean) * precision[i]).sum(axis=1) - diag[i] * (x[:, i] - mean[i])
        x[:, i] = mean[i] - pull / diag[i] + noise[:, i] / np.sqrt(diag[i])

    def exact_draws(self, rng: ChainRandom, method: str) -> np.ndarray:
        """``(chains, dim)`` exact draws: standard normals by Box-Muller (``method``), then ``D (a z + b 1 1^T z)``.

        ``a = sqrt(1 - rho)`` and ``b = (sqrt(1 - rho + dim rho) - a) / dim``
        make ``a z + b (sum z) 1`` have covariance ``(1 - rho) I + rho 1 1^T``
        (``a^2 = 1 - rho``, ``2 a b + dim b^2 = rho``): no matrix factor, and
        elementwise sums only, so the same bytes on every CPU.
        """
        normals = {"box-muller": box_muller, "polar": marsaglia_polar}.get(method)
        if normals is None:
            raise UsageError(f"exact: the normal's methods are {', '.join(self.exact_methods)}, not {method!r}")
        z = normals(rng, self.dim)
        a = np.sqrt(1.0 - self.rho)
        b = (np.sqrt(1.0 - self.rho + self.dim * self.rho) - a) / self.dim
        return self.loc + self.scales * (a * z + b * np.sum(z, axis=1, keepdims=True))

    def quantile(self, u: np.ndarray) -> np.ndarray:
        """``mu + sd Phi^-1(u)`` (one dimension only: inverse-cdf refuses more)."""
        from scipy.special import ndtri  # start-up: SciPy's special functions only when drawn

        return self.loc[0] + self.scales[0] * ndtri(np.asarray(u, dtype=float))

    def coordinate_noise(self, rng: ChainRandom, updates: int) -> np.ndarray:
        """One standard normal per update and chain, ``(chains, updates)`` (random scan)."""
        return rng.normal((updates,))

    def draw_coordinates(self, x: np.ndarray, index: np.ndarray, noise: np.ndarray) -> None:
        """``x[c, index[c]]`` from its conditional normal for every chain ``c`` (random scan)."""
        rows = np.arange(x.shape[0])
        mean, q = self.loc, self.precision
        diag = np.diag(q)[index]
        # Each chain's row of Q, gathered; the same row-wise sums as draw_conditional (no BLAS).
        pull = ((x - mean) * q[index]).sum(axis=1) - diag * (x[rows, index] - mean[index])
        x[rows, index] = mean[index] - pull / diag + noise / np.sqrt(diag)


def box_muller(rng: ChainRandom, n: int) -> np.ndarray:
    """``(chains, n)`` standard normals by the Box-Muller transform (Box & Muller 1958), from uniforms.

    Box, G. E. P. & Muller, M. E. (1958), "A note on the generation of random
    normal deviates", Ann. Math. Statist. 29, 610-611: for independent
    ``u1, u2 ~ U(0, 1]``, ``sqrt(-2 log u1) (cos 2 pi u2, sin 2 pi u2)`` are
    two independent standard normals (the radius squared is ``Exp(1/2)``,
    the angle uniform). ``ceil(n / 2)`` pairs per chain, two uniforms each.
    """
    pairs = -(-n // 2)
    u = rng.uniform((pairs, 2))
    radius = np.sqrt(-2.0 * np.log1p(-u[..., 0]))  # 1 - u in (0, 1]
    angle = 2.0 * np.pi * u[..., 1]
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1).reshape(u.shape[0], 2 * pairs)[:, :n]


def marsaglia_polar(rng: ChainRandom, n: int) -> np.ndarray:
    """``(chains, n)`` standard normals by the polar form of the Box-Muller transform (Marsaglia & Bray 1964).

    Marsaglia, G. & Bray, T. A. (1964), "A convenient method for generating
    normal variables", SIAM Review 6, 260-264: draw ``(v1, v2)`` uniform on
    the square ``[-1, 1)^2`` until ``0 < s = v1^2 + v2^2 < 1`` (a point of the
    unit disc, probability ``pi / 4``); then ``v sqrt(-2 log s / s)`` are two
    independent standard normals: no sine or cosine. Rejection per pair, each
    chain redrawing only its own pending pairs from its own stream (all of a
    chain's pairs are drawn again while any is pending, so a chain's numbers
    depend on its own draws only).
    """
    pairs = -(-n // 2)
    chains = rng.chains
    v = np.zeros((chains, pairs, 2))
    s = np.zeros((chains, pairs))
    pending = np.ones((chains, pairs), dtype=bool)
    while pending.any():
        rows = np.flatnonzero(pending.any(axis=1))
        w = 2.0 * rng.uniform((pairs, 2), mask=rows) - 1.0
        r2 = np.sum(w * w, axis=-1)
        take = pending[rows] & (r2 > 0.0) & (r2 < 1.0)
        sub_v, sub_s = v[rows], s[rows]
        sub_v[take], sub_s[take] = w[take], r2[take]
        v[rows], s[rows] = sub_v, sub_s
        pending[rows] &= ~take
    z = v * np.sqrt(-2.0 * np.log(s) / s)[..., None]
    return z.reshape(chains, 2 * pairs)[:, :n]


@dataclass(frozen=True, eq=False)
class KnownQuantile(Target):
    """A one-dimensional target whose quantile function is known (:class:`~mcmc.core.targets.protocols.Quantile`).

    Parameters
    ----------
    quantile_fn
        ``u (n,) -> x (n,)`` in the sampling space.
    """

    quantile_fn: Any = None

    def quantile(self, u: np.ndarray) -> np.ndarray:
        """``F^-1(u)`` in the sampling space."""
        return np.asarray(self.quantile_fn(np.asarray(u, dtype=float)), dtype=float)


def _check_dim(dim: int, minimum: int = 1) -> int:
    if int(dim) != dim or dim < minimum:
        raise UsageError(f"--dim must be an integer >= {minimum}, got {dim}")
    # a few float vectors of length dim (mean, sd, scales) and a name string per coordinate (~70 bytes)
    require_memory(int(dim), 8 * 8 + 100, f"dimension {int(dim)}", "--dim")
    return int(dim)


def _gaussian_start(sd: np.ndarray, spread: float = 2.0):  # noqa: ANN202
    """Overdispersed starts: ``N(0, (spread * sd)^2)`` per coordinate."""

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        return spread * sd * rng.normal((sd.size,))

    return initial_point


def gaussian(dim: int = 10, rho: float = 0.0, scales: str = "unit") -> Target:
    """Zero-mean Gaussian, optionally equicorrelated (``rho``) and ill-conditioned (``scales="log"``)."""
    dim = _check_dim(dim)
    if scales == "unit":
        d = np.ones(dim)
    elif scales == "log":
        d = np.logspace(-2, 0, dim) if dim > 1 else np.ones(1)
    else:
        raise UsageError(f"--scales must be 'unit' or 'log', got {scales!r}")
    rho = float(rho)
    if not (-1.0 / max(dim - 1, 1) < rho < 1.0) and rho != 0.0:
        raise UsageError(
            f"--rho must lie in (-1/(dim-1), 1) = ({-1.0 / max(dim - 1, 1):.4g}, 1) for dim {dim}, got {rho}"
        )
    # R^{-1} = (I - c 1 1^T) / (1 - rho), c = rho / (1 + (dim - 1) rho)
    c = rho / (1.0 + (dim - 1) * rho)
    log_det = 2.0 * np.log(d).sum() + (dim - 1) * np.log1p(-rho) + np.log1p((dim - 1) * rho)
    const = -0.5 * (dim * LOG_2PI + log_det)

    def precision_times(y: np.ndarray) -> np.ndarray:
        return (y - c * y.sum(axis=-1, keepdims=True)) / (1.0 - rho)

    def log_density(x: np.ndarray) -> np.ndarray:
        y = x / d
        return const - 0.5 * np.einsum("ij,ij->i", y, precision_times(y))

    def grad(x: np.ndarray) -> np.ndarray:
        return -precision_times(x / d) / d

    def value_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        y = x / d
        py = precision_times(y)
        return const - 0.5 * np.einsum("ij,ij->i", y, py), -py / d

    common: dict[str, Any] = {
        "name": "gaussian", "dim": dim, "log_density": log_density, "grad_log_density": grad,
        "value_and_grad_fn": value_and_grad, "mean": np.zeros(dim), "sd": d.copy(),
        "initial_point": _gaussian_start(d), "options": {"dim": dim, "rho": rho, "scales": scales},
    }  # fmt: skip
    if dim > GIBBS_MAX_DIM:  # the precision matrix is dim^2 floats: only where that is small
        return Target(**common)
    return GaussianTarget(
        **common, loc=np.zeros(dim), precision=precision_times(np.eye(dim)) / np.outer(d, d), rho=rho, scales=d.copy(),
    )  # fmt: skip


def bimodal(dim: int = 1) -> Target:
    """Per coordinate ``0.5 N(-3, 1) + 0.5 N(3, 1)``: mean 0, sd ``sqrt(10)``."""
    dim = _check_dim(dim)
    const = dim * (-np.log(2.0) - 0.5 * LOG_2PI)

    def log_density(x: np.ndarray) -> np.ndarray:
        return const + np.logaddexp(-0.5 * (x + 3.0) ** 2, -0.5 * (x - 3.0) ** 2).sum(axis=-1)

    def grad(x: np.ndarray) -> np.ndarray:
        # Responsibility of the +3 component: sigmoid of the log-density difference (= 6 x).
        w = 0.5 * (1.0 + np.tanh(3.0 * x))
        return -(x + 3.0) * (1.0 - w) - (x - 3.0) * w

    return Target(
        name="bimodal",
        dim=dim,
        log_density=log_density,
        grad_log_density=grad,
        mean=np.zeros(dim),
        sd=np.full(dim, np.sqrt(10.0)),
        initial_point=_gaussian_start(np.full(dim, np.sqrt(10.0))),
        options={"dim": dim},
    )


def banana(dim: int = 2, b: float = 0.03) -> Target:
    """Haario et al.'s twisted Gaussian (``x1 + b (x0^2 - 100)`` is standard normal)."""
    dim = _check_dim(dim, 2)
    b = float(b)
    const = -0.5 * dim * LOG_2PI - np.log(10.0)

    def log_density(x: np.ndarray) -> np.ndarray:
        x0, u = x[:, 0], x[:, 1] - b * (x[:, 0] ** 2 - 100.0)
        return const - 0.5 * ((x0 / 10.0) ** 2 + u**2 + (x[:, 2:] ** 2).sum(axis=1))

    def grad(x: np.ndarray) -> np.ndarray:
        g = -x.copy()
        u = x[:, 1] - b * (x[:, 0] ** 2 - 100.0)
        g[:, 0] = -x[:, 0] / 100.0 + 2.0 * b * x[:, 0] * u
        g[:, 1] = -u
        return g

    sd = np.ones(dim)
    sd[0], sd[1] = 10.0, np.sqrt(1.0 + 2.0 * b**2 * 1e4)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        # Overdispersed along the banana: draw exactly, then double the spread.
        z = 2.0 * rng.normal((dim,))
        x = z.copy()
        x[:, 0] = 10.0 * z[:, 0]
        x[:, 1] = z[:, 1] + b * (x[:, 0] ** 2 - 100.0)
        return x

    return Target(
        name="banana",
        dim=dim,
        log_density=log_density,
        grad_log_density=grad,
        mean=np.zeros(dim),
        sd=sd,
        initial_point=initial_point,
        options={"dim": dim, "b": b},
    )


def funnel(dim: int = 10) -> Target:
    """Neal's funnel: ``v ~ N(0, 9)``, ``x_i | v ~ N(0, e^v)`` (``dim - 1`` of them)."""
    dim = _check_dim(dim, 2)
    k = dim - 1
    const = -0.5 * dim * LOG_2PI - np.log(3.0)

    def log_density(x: np.ndarray) -> np.ndarray:
        v, z = x[:, 0], x[:, 1:]
        return const - v**2 / 18.0 - 0.5 * k * v - 0.5 * np.exp(-v) * (z**2).sum(axis=1)

    def grad(x: np.ndarray) -> np.ndarray:
        v, z = x[:, 0], x[:, 1:]
        g = np.empty_like(x)
        e = np.exp(-v)
        g[:, 0] = -v / 9.0 - 0.5 * k + 0.5 * e * (z**2).sum(axis=1)
        g[:, 1:] = -e[:, None] * z
        return g

    variables = (("v", ()), ("x", (k,)))

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        # Stan-style Uniform(-2, 2): the funnel's neck is where starts go wrong.
        return 4.0 * rng.uniform((dim,)) - 2.0

    return Target(
        name="funnel",
        dim=dim,
        log_density=log_density,
        grad_log_density=grad,
        names=flat_names(variables),
        variables=variables,
        mean=np.zeros(dim),
        sd=np.concatenate([[3.0], np.full(k, np.exp(9.0 / 4.0))]),
        initial_point=initial_point,
        options={"dim": dim},
    )


def gamma(dim: int = 1, shape: float = 2.0, rate: float = 1.0) -> Target:
    """Independent ``Gamma(shape, rate)`` coordinates, on the positive orthant (not transformed)."""
    from math import lgamma

    dim = _check_dim(dim)
    k, r = float(shape), float(rate)
    if k <= 0 or r <= 0:
        raise UsageError(f"gamma needs shape > 0 and rate > 0, got {k}, {r}")
    const = dim * (k * np.log(r) - lgamma(k))

    def log_density(x: np.ndarray) -> np.ndarray:
        positive = np.all(x > 0, axis=1)
        safe = np.where(x > 0, x, 1.0)
        return np.where(positive, const + ((k - 1.0) * np.log(safe) - r * safe).sum(axis=1), -np.inf)

    def grad(x: np.ndarray) -> np.ndarray:
        safe = np.where(x > 0, x, 1.0)
        return np.where(x > 0, (k - 1.0) / safe - r, 0.0)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        # Overdispersed on the log scale around the mean; always positive.
        return (k / r) * np.exp(rng.normal((dim,)))

    from scipy.special import gammaincinv  # start-up: SciPy's special functions only for this target

    cls, extra = (KnownQuantile, {"quantile_fn": lambda u: gammaincinv(k, u) / r}) if dim == 1 else (Target, {})
    return cls(
        **extra,
        name="gamma",
        dim=dim,
        log_density=log_density,
        grad_log_density=grad,
        mean=np.full(dim, k / r),
        sd=np.full(dim, np.sqrt(k) / r),
        initial_point=initial_point,
        options={"dim": dim, "shape": k, "rate": r},
    )
