"""The built-in latent-variable model ``censored-normal``: right-censored normal data, mean and sd unknown.

Forty measurements ``y_i ~ N(mu, sigma^2)`` read by an instrument that stops
at :data:`LIMIT`: 32 are seen (:data:`Y`), 8 are only known to be at least
6.5. The censored values are the latent ``z`` (``z_k > 6.5``), the parameters
``theta = (mu, log sigma)``. This is the kind of example with which Wei &
Tanner (1990) introduced Monte Carlo EM (censored regression), and Dempster,
Laird & Rubin (1977, section 4.2) treat censored and truncated normal data by
exact EM; here the exact EM map has a closed form (the moments of the
truncated normal), so Monte Carlo EM can be checked against its fixed point,
the maximum-likelihood estimate (``tests/core/test_mcem.py``).

The module is written in the file protocol of :mod:`mcmc.core.targets.latent`,
as a user's ``model.py`` would be (``docs/formats.md``, "Monte Carlo EM"):
``latent_dim``, ``parameters``, ``theta0``, ``log_joint(z, theta)``, and
optionally the gradients, starting latents and Gibbs blocks. Given theta the
censored values are independent normals truncated to ``(LIMIT, inf)``, one
block drawn exactly by the inverse CDF, so ``gibbs`` runs the E-step.

The data: ``numpy.random.default_rng(1990)``, 40 draws of ``N(5, 2^2)``
rounded to hundredths, censored at 6.5.

References
----------
Wei, G. C. G. & Tanner, M. A. (1990). A Monte Carlo implementation of the EM
algorithm and the poor man's data augmentation algorithms. *JASA* 85, 699-704.
Dempster, A. P., Laird, N. M. & Rubin, D. B. (1977). Maximum likelihood from
incomplete data via the EM algorithm. *JRSS B* 39, 1-38.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

#: The measurements seen (below the limit).
Y = np.array([
    5.78, 4.51, 3.09, 4.29, 3.16, 3.45, 3.81, 5.97, 3.39, 6.12, 3.28, 3.22, 4.69, 6.34, 3.40, 6.24,
    5.68, 3.21, 2.31, 4.09, 2.65, 5.35, 6.05, 4.58, 6.35, 2.89, 5.10, 4.14, 3.68, 5.83, 6.01, 2.83,
])  # fmt: skip
#: The instrument's limit: each censored measurement is known only to be at least this.
LIMIT = 6.5
#: How many measurements were censored.
N_CENSORED = 8

latent_dim = N_CENSORED
parameters = ["mu", "log_sigma"]
theta0 = [0.0, 0.0]  # far from the answer on purpose: EM climbs from anywhere


def _split(theta: np.ndarray) -> tuple[float, float]:
    return float(theta[0]), float(np.exp(theta[1]))


def log_joint(z: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``log p(y, z | mu, sigma)`` up to a constant: 40 normal terms; ``-inf`` unless every ``z_k >= LIMIT``."""
    mu, sigma = _split(theta)
    seen = -0.5 * np.sum(((Y - mu) / sigma) ** 2) - Y.size * np.log(sigma)
    hidden = -0.5 * np.sum(((z - mu) / sigma) ** 2, axis=1) - z.shape[1] * np.log(sigma)
    return np.where(np.all(z >= LIMIT, axis=1), seen + hidden, -np.inf)


def grad_log_joint(z: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Gradient in ``z`` (inside the support): ``-(z - mu) / sigma^2``."""
    mu, sigma = _split(theta)
    return -(z - mu) / sigma**2


def grad_theta(z: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Gradient in ``(mu, log sigma)`` per row of ``z``: the complete data's normal scores."""
    mu, sigma = _split(theta)
    r_seen, r_hidden = (Y - mu) / sigma, (z - mu) / sigma
    d_mu = (r_seen.sum() + r_hidden.sum(axis=1)) / sigma
    d_log_sigma = (r_seen**2).sum() + (r_hidden**2).sum(axis=1) - (Y.size + z.shape[1])
    return np.column_stack([d_mu, d_log_sigma])


def initial_latent(rng: Any, chains: int) -> np.ndarray:
    """Just above the limit, spread by up to one unit."""
    return LIMIT + rng.uniform((latent_dim,))


conditional_blocks = [list(range(N_CENSORED))]  # given theta the censored values are independent


def sweep_noise(rng: Any) -> np.ndarray:
    """One uniform per censored value and chain: each draw by inverse CDF."""
    return rng.uniform((latent_dim,))


def draw_conditional(rng: Any, z: np.ndarray, block: np.ndarray, noise: np.ndarray, theta: np.ndarray) -> None:
    """``z_k ~ N(mu, sigma^2)`` truncated to ``(LIMIT, inf)`` by inverse CDF.

    ``z = mu - sigma Phi^-1(u Phi(-a))`` with ``a = (LIMIT - mu) / sigma``: through
    the upper tail ``Phi(-a)`` rather than ``1 - Phi(a)``, which loses every
    digit once the limit is a few sds above the mean.
    """
    mu, sigma = _split(theta)
    tail = ndtr(-(LIMIT - mu) / sigma)
    u = noise[:, block]
    z[:, block] = mu - sigma * ndtri(np.maximum(u * tail, np.finfo(float).tiny))
