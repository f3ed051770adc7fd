"""The Dirichlet posterior of multinomial counts: Beta-Bernoulli's sibling with K categories.

Counts ``n = (n_1, ..., n_K)`` of K categories, a symmetric Dirichlet prior
``Dirichlet(eta, ..., eta)`` on the probabilities ``theta``: by conjugacy
the posterior is ``Dirichlet(alpha)``, ``alpha_k = eta + n_k`` (the
Dirichlet-multinomial model; Gelman et al. 2013, *Bayesian Data Analysis*,
3rd ed., section 3.4), with the exact moments

    E theta_k = alpha_k / A,    Var theta_k = alpha_k (A - alpha_k) / (A^2 (A + 1)),    A = sum_k alpha_k.

The sampling space is unconstrained: the additive log-ratios
``y_k = log(theta_k / theta_K)``, ``k < K`` (``theta = softmax(y, 0)``),
whose Jacobian is ``prod_k theta_k``, so that the log density is
``sum_k alpha_k log theta_k`` and its gradient ``alpha_k - A theta_k``
(``k < K``): HMC, the default, samples it directly. The reported variable
is ``theta`` (K values on the simplex). With K = 2 this is ``beta-bernoulli``
on the logit scale (``theta_1 = expit(y_1)``).
"""

from __future__ import annotations

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target, flat_names


def _counts(text: str | int | float) -> np.ndarray:
    parts = [p.strip() for p in str(text).split(",")]
    try:
        counts = np.array([int(p) for p in parts])
    except ValueError:
        raise UsageError(f"-T counts must be whole numbers >= 0, comma-separated (4,1,3), got {text!r}") from None
    if counts.size < 2 or np.any(counts < 0):
        raise UsageError(f"-T counts needs at least two categories, each a count >= 0, got {text!r}")
    return counts


def _log_softmax(y: np.ndarray) -> np.ndarray:
    """``log theta (n, K)`` from the log-ratios ``y (n, K-1)`` (the last category's is 0)."""
    full = np.concatenate([y, np.zeros((y.shape[0], 1))], axis=1)
    top = np.max(full, axis=1, keepdims=True)
    return full - top - np.log(np.sum(np.exp(full - top), axis=1, keepdims=True))


def dirichlet(counts: str | int = "4,1,3,1,1", eta: float = 1.0) -> Target:
    """The posterior ``Dirichlet(eta + counts)`` of multinomial counts (see the module docstring).

    Parameters
    ----------
    counts
        The counts of the K categories, comma-separated (``"4,1,3,1,1"``).
    eta
        The symmetric Dirichlet prior's concentration, ``> 0`` (1: uniform on the simplex).

    Raises
    ------
    UsageError
        Fewer than two categories, a count that is not a whole number ``>= 0``, or ``eta <= 0``.
    """
    n = _counts(counts)
    if isinstance(eta, (bool, str)) or not np.isfinite(float(eta)) or float(eta) <= 0:
        raise UsageError(f"-T eta must be a number > 0, got {eta!r}")
    eta = float(eta)
    alpha = eta + n.astype(float)
    total = float(alpha.sum())
    k = alpha.size

    def log_density(y: np.ndarray) -> np.ndarray:
        return np.sum(alpha * _log_softmax(y), axis=1)

    def value_and_grad(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        log_theta = _log_softmax(y)
        return np.sum(alpha * log_theta, axis=1), alpha[:-1] - total * np.exp(log_theta[:, :-1])

    def transform(y: np.ndarray) -> np.ndarray:
        flat = np.reshape(y, (-1, k - 1))
        return np.exp(_log_softmax(flat)).reshape(*np.shape(y)[:-1], k)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        # Around the posterior mean's log-ratios, spread by 2 on the log scale.
        centre = np.log(alpha[:-1] / alpha[-1])
        return centre + 2.0 * rng.normal((k - 1,))

    mean = alpha / total
    sd = np.sqrt(alpha * (total - alpha) / (total**2 * (total + 1.0)))
    variables = (("theta", (k,)),)
    return Target(
        name="dirichlet", dim=k - 1, log_density=log_density, grad_log_density=lambda y: value_and_grad(y)[1],
        value_and_grad_fn=value_and_grad, names=flat_names(variables), variables=variables, mean=mean, sd=sd,
        initial_point=initial_point, transform=transform,
        options={"counts": ",".join(str(int(c)) for c in n), "eta": eta},
    )  # fmt: skip
