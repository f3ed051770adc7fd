"""Monte Carlo EM for a latent-variable model: E-steps by MCMC, M-steps by numerical maximisation.

EM (Dempster, Laird & Rubin 1977) maximises the observed-data likelihood
``p(y | theta)`` of a model with latent ``z`` by iterating

    theta_{t+1} = argmax_theta Q(theta | theta_t),   Q(theta | theta_t) = E[log p(y, z | theta) | y, theta_t].

Monte Carlo EM (Wei & Tanner 1990) replaces the expectation, rarely
tractable, by an average over draws ``z_1 .. z_m`` from ``p(z | y, theta_t)``:

    Q_m(theta | theta_t) = (1/m) sum_j log p(y, z_j | theta).

The model is a :class:`~mcmc.core.targets.latent.LatentModel` (a file
declaring ``log_joint(z, theta)`` and which block is latent, or a built-in).
One iteration ``t = 0, 1, ...``:

E-step
    ``m_t`` draws of ``z`` from ``z | y, theta_t`` by any of the samplers
    (:func:`mcmc.core.samplers.driver.run` on
    :meth:`~mcmc.core.targets.latent.LatentModel.conditional`): by default
    ``gibbs`` when the model declares full conditionals for every latent
    coordinate, else ``hmc`` when it gives the gradient in ``z``, else
    ``slice``. ``chains`` chains, each with ``warmup`` iterations (the
    sampler's own tuning) before its ``ceil(m_t / chains)`` draws; after the
    first iteration every chain starts from where it stopped in the previous
    one (the latents move little between nearby thetas), or afresh where that
    point is impossible under the new theta.
M-step
    ``theta_{t+1}`` maximises ``Q_m`` by :func:`scipy.optimize.minimize`
    (BFGS) started from ``theta_t``, with the model's gradient in theta or
    central differences.

Draws per iteration grow geometrically, ``m_t = ceil(draws growth^t)``
(default 100 x 1.2^t: about 20,000 at t = 29). Early iterations are far from
the fixed point and need few draws to know which way to go; near it the step
``theta_{t+1} - theta_t`` shrinks and would drown in Monte Carlo noise unless
``m`` grows (Wei & Tanner 1990; Booth & Hobert 1999 choose ``m_t``
adaptively from that noise; a fixed geometric schedule is simpler, gives the
same draws for the same seed whatever happens, and is what their analysis
recommends in spirit: ``m_t`` growing faster than the EM steps shrink).
The run stops after ``iterations`` iterations.

Monte Carlo error: each M-step reports the standard error of ``theta_{t+1}``
as an estimate of the exact M-step ``argmax Q(. | theta_t)``. To first order
``theta_{t+1} - M(theta_t)`` is the mean of ``psi_j = -H^-1 s_j`` over the
draws (``s_j`` the gradient in theta of ``log p(y, z_j | theta)``, ``H`` the
Hessian of ``Q_m``, both at ``theta_{t+1}``): the sandwich of Booth & Hobert
(1999, section 2.2), whose covariance of the mean score is here the Monte
Carlo standard error of the mean of the ``psi_j`` series, computed by the
caller's rule for MCMC draws (``mean_se``: the effective sample size accounts
for the autocorrelation of the E-step's chains). The error of the final theta
as an estimate of the EM fixed point is this plus what earlier iterations
carried, which EM's contraction shrinks.

Randomness: the E-step of iteration ``t`` runs the driver seeded with the
first 63 bits of ``SeedSequence(seed, spawn_key=(MCEM_KEY, t))`` -- one
stream per iteration derived from the run's seed, from which chain ``c``
reads its own (``SeedSequence(seed_t, spawn_key=(c,))``); the M-step draws
nothing. The same seed gives the same bytes.

References
----------
Dempster, A. P., Laird, N. M. & Rubin, D. B. (1977). Maximum likelihood from
incomplete data via the EM algorithm. *JRSS B* 39, 1-38.
Wei, G. C. G. & Tanner, M. A. (1990). A Monte Carlo implementation of the EM
algorithm and the poor man's data augmentation algorithms. *JASA* 85, 699-704.
Booth, J. G. & Hobert, J. P. (1999). Maximizing generalized linear mixed
model likelihoods with an automated Monte Carlo EM algorithm. *JRSS B* 61, 265-285.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcmc.core.atomic import atomic_output
from mcmc.core.errors import InputError, UsageError
from mcmc.core.mcem.config import McemSettings
from mcmc.core.random import entropy_seed
from mcmc.core.targets.latent import LatentModel, fd_steps

#: The first spawn key of the E-steps' streams: iteration t reads SeedSequence(seed, spawn_key=(MCEM_KEY, t)).
MCEM_KEY = 0x3CE3
#: What the JSON document and the npz file are.
SCHEMA = "mcmc.mcem/1"


def default_sampler(model: LatentModel) -> str:
    """``gibbs`` with full conditionals for every latent, ``hmc`` with a gradient in ``z``, else ``slice``."""
    if model.has_conditionals:
        return "gibbs"
    return "hmc" if model.grad_z is not None else "slice"


def iteration_seed(seed: int, t: int) -> int:
    """The driver's seed for iteration ``t``'s E-step: 63 bits of ``SeedSequence(seed, spawn_key=(MCEM_KEY, t))``."""
    state = np.random.SeedSequence(int(seed), spawn_key=(MCEM_KEY, int(t))).generate_state(1, np.uint64)[0]
    return int(state) >> 1


@dataclass(frozen=True, eq=False)
class McemResult:
    """A finished Monte Carlo EM run.

    Attributes
    ----------
    model, sampler : the model's name and the E-step's sampler.
    parameters : the names of theta's coordinates.
    settings : the run's :class:`McemSettings` (``sampler`` resolved).
    theta : float (iterations + 1, p): ``theta_0`` (the model's ``theta0``), then after each M-step.
    draws : int64 (iterations,): the draws of each E-step.
    mcse : float (iterations, p): the Monte Carlo standard error of each M-step's theta (module docstring).
    objective : float (iterations,): ``Q_m`` at each M-step's maximum, the average complete-data log likelihood.
    converged : bool (iterations,): whether each M-step's optimiser reported success.
    seconds : wall-clock seconds of the E-steps and of the M-steps.
    """

    model: str
    sampler: str
    parameters: tuple[str, ...]
    settings: McemSettings
    theta: np.ndarray
    draws: np.ndarray
    mcse: np.ndarray
    objective: np.ndarray
    converged: np.ndarray
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def final_theta(self) -> np.ndarray:
        """float (p,): theta after the last M-step."""
        return self.theta[-1]

    @property
    def final_mcse(self) -> np.ndarray:
        """float (p,): its Monte Carlo standard error."""
        return self.mcse[-1]

    def arrays(self) -> dict[str, np.ndarray]:
        """The ``.npz`` file: plain arrays (``np.load`` without pickles), ``docs/formats.md``."""
        s = self.settings
        return {
            "schema": np.array(SCHEMA), "model": np.array(self.model), "sampler": np.array(self.sampler),
            "parameters": np.array(self.parameters, dtype=str), "theta": self.theta, "draws": self.draws,
            "mcse": self.mcse, "objective": self.objective, "converged": self.converged,
            "final_theta": self.final_theta, "final_mcse": self.final_mcse, "seed": np.array(s.seed),
            "chains": np.array(s.chains), "warmup": np.array(s.warmup), "growth": np.array(float(s.growth)),
        }  # fmt: skip

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`arrays` to the ``.npz`` file ``path``, atomically."""
        buf = io.BytesIO()
        np.savez(buf, **self.arrays())
        with atomic_output(path) as fh:
            fh.write(buf.getvalue())

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (schema :data:`SCHEMA`): settings, the trace of theta, the final theta."""
        s, names = self.settings, self.parameters

        def named(values: np.ndarray) -> dict[str, float]:
            return {n: float(v) for n, v in zip(names, values, strict=True)}

        return {
            "schema": SCHEMA, "model": self.model, "sampler": self.sampler, "parameters": list(names),
            "settings": {"iterations": s.iterations, "draws": s.draws, "growth": s.growth, "chains": s.chains,
                         "warmup": s.warmup, "seed": s.seed, "params": dict(s.params)},
            "theta0": named(self.theta[0]),
            "iterations": [
                {"iteration": t + 1, "draws": int(self.draws[t]), "theta": named(self.theta[t + 1]),
                 "mcse": named(self.mcse[t]), "objective": float(self.objective[t]),
                 "converged": bool(self.converged[t])}
                for t in range(self.draws.size)
            ],
            "final": {"theta": named(self.final_theta), "mcse": named(self.final_mcse)},
            "seconds": dict(self.seconds),
        }  # fmt: skip

    def to_table(self) -> tuple[list[str], list[list[Any]]]:
        """CSV rows: ``iteration, draws``, then each parameter and its MCSE, then the objective (row 0: theta0)."""
        header = ["iteration", "draws", *(c for n in self.parameters for c in (n, f"{n}_mcse")), "objective"]
        rows: list[list[Any]] = [[0, 0, *(c for v in self.theta[0] for c in (float(v), math.nan)), math.nan]]
        for t in range(self.draws.size):
            pairs = (c for v, e in zip(self.theta[t + 1], self.mcse[t], strict=True) for c in (float(v), float(e)))
            rows.append([t + 1, int(self.draws[t]), *pairs, float(self.objective[t])])
        return header, rows


def mcem(
    model: LatentModel,
    settings: McemSettings,
    *,
    mean_se: Callable[[np.ndarray], np.ndarray] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> McemResult:
    """Run Monte Carlo EM on ``model`` (module docstring).

    Parameters
    ----------
    model
        The latent-variable model (:func:`mcmc.core.targets.latent.load_latent_model`).
    settings
        Iterations, the draws and their growth, the E-step's chains, warm-up,
        sampler and its settings, and the seed.
    mean_se
        The Monte Carlo standard error of the mean of MCMC draws, ``(chain,
        draw, p) -> (p,)``, accounting for autocorrelation: the command passes
        :func:`mcmc.diagnostics.stats.mcse_mean` (ESS-based, the one rule every
        command's MCSE follows; the library below it cannot import it).
        ``None``: the MCSE is not computed (NaN).
    progress
        Called as ``progress("MCEM", done, total)`` after every iteration.

    Returns
    -------
    McemResult

    Raises
    ------
    UsageError
        A bad setting, or a sampler that cannot draw the latents.
    InputError
        The model's functions fail, or every draw of an E-step is impossible.
    """
    from scipy.optimize import minimize  # here, not at the top: scipy.optimize costs ~0.1 s on every start

    from mcmc.core.samplers import SAMPLERS, get_sampler
    from mcmc.core.samplers.driver import run

    if settings.seed is None:
        settings = dataclasses.replace(settings, seed=entropy_seed())
    _check(settings)
    name = settings.sampler or default_sampler(model)
    if name not in SAMPLERS:
        raise UsageError(f"unknown sampler {name!r} for the E-step; choose one of {', '.join(SAMPLERS)}")
    sampler = get_sampler(name)
    schedule = np.array(settings.schedule(), dtype=np.int64)
    theta = np.empty((settings.iterations + 1, model.p))
    theta[0] = model.theta0
    mcse = np.empty((settings.iterations, model.p))
    objective = np.empty(settings.iterations)
    converged = np.zeros(settings.iterations, dtype=bool)
    seconds = {"e_step": 0.0, "m_step": 0.0}
    start: np.ndarray | None = None
    for t in range(settings.iterations):
        t0 = time.perf_counter()
        target = model.conditional(theta[t])
        if start is not None and not np.all(np.isfinite(target.log_density(start.copy()))):
            start = None  # impossible under the new theta: fresh starts
        per_chain = -(-int(schedule[t]) // settings.chains)
        drawn = run(sampler, target, chains=settings.chains, warmup=settings.warmup, draws=per_chain,
                    seed=iteration_seed(settings.seed, t), init=start, params=settings.params).chains
        z = np.asarray(drawn.posterior["z"], dtype=np.float64)  # (chains, draws, latent_dim)
        start = z[:, -1].copy()
        t1 = time.perf_counter()
        flat = z.reshape(-1, model.latent_dim)
        if not np.all(np.isfinite(model.complete(flat, theta[t]))):
            raise InputError(model.name, f"iteration {t + 1}: the E-step drew latents where log_joint is not finite")
        fit = _m_step(model, flat, theta[t], minimize)
        theta[t + 1], objective[t], converged[t] = fit.x, -fit.fun, fit.success
        mcse[t] = np.nan if mean_se is None else _m_step_mcse(model, z, theta[t + 1], mean_se)
        seconds["e_step"] += t1 - t0
        seconds["m_step"] += time.perf_counter() - t1
        if progress is not None:
            progress("MCEM", t + 1, settings.iterations)
    resolved = dataclasses.replace(settings, sampler=name, params=dict(settings.params))
    return McemResult(model.name, name, model.parameters, resolved, theta, schedule, mcse, objective, converged,
                      seconds)


def _check(settings: McemSettings) -> None:
    # named as the command line names them (--em-iterations ...), as the LDA fit's messages are
    for what, value, low in (("--em-iterations", settings.iterations, 1), ("--em-draws", settings.draws, 1),
                             ("--chains", settings.chains, 1), ("--warmup", settings.warmup, 0),
                             ("--seed", settings.seed, 0)):  # fmt: skip
        if isinstance(value, bool) or int(value) != value or value < low:
            raise UsageError(f"{what} must be an integer >= {low}, got {value}")
    if not (math.isfinite(settings.growth) and settings.growth >= 1.0):
        raise UsageError(f"--em-growth must be a number >= 1 (the draws never shrink), got {settings.growth}")
    last = settings.draws * settings.growth ** (settings.iterations - 1)
    if last > 1e8:
        raise UsageError(f"the E-step's draws would grow to {last:.3g} in the last iteration; use fewer "
                         "--em-iterations, fewer --em-draws or a smaller --em-growth")


def _m_step(model: LatentModel, z: np.ndarray, theta: np.ndarray, minimize: Callable[..., Any]) -> Any:
    """``argmax Q_m`` from ``theta`` by BFGS (the model's gradient in theta, or central differences)."""
    m = z.shape[0]

    def negative_q(th: np.ndarray) -> float:
        return -float(np.sum(model.complete(z, th)) / m)

    def gradient(th: np.ndarray) -> np.ndarray:
        return -model.scores(z, th).sum(axis=0) / m

    with np.errstate(all="ignore"):
        fit = minimize(negative_q, np.array(theta, dtype=np.float64), jac=gradient, method="BFGS",
                       options={"gtol": 1e-7 * max(1.0, abs(negative_q(theta))), "maxiter": 1000})
    if not np.all(np.isfinite(fit.x)) or not np.isfinite(fit.fun):
        raise InputError(model.name, "the M-step found no finite maximum of the average log_joint (are the "
                         "parameters unconstrained, e.g. log_sigma rather than sigma?)")  # fmt: skip
    return fit


def _m_step_mcse(model: LatentModel, z: np.ndarray, theta: np.ndarray,
                 mean_se: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Standard errors of the M-step's theta: the MCSE of the mean of ``psi_j = -H^-1 s_j`` (module docstring).

    ``z`` is ``(chains, draws, latent_dim)``; ``s_j`` the score of draw ``j``
    at ``theta``, ``H`` the Hessian of ``Q_m`` there (central differences of
    the mean score). ``theta - M(theta_t) ~ mean(psi)`` to first order, so its
    standard error is ``mean_se`` of the ``psi`` series, ``(chains, draws, p)``.
    NaN where the Hessian is not negative definite.
    """
    chains, n, dim = z.shape
    flat = z.reshape(-1, dim)
    p = model.p
    h = fd_steps(theta) * 10.0  # second differences: a larger step (about eps^(1/4))
    hess = np.empty((p, p))
    for k in range(p):
        e = np.zeros(p)
        e[k] = h[k]
        up, down = model.scores(flat, theta + e).mean(axis=0), model.scores(flat, theta - e).mean(axis=0)
        hess[:, k] = (up - down) / (2 * h[k])
    hess = 0.5 * (hess + hess.T)
    if not np.all(np.linalg.eigvalsh(hess) < 0):
        return np.full(p, np.nan)
    psi = -np.linalg.solve(hess, model.scores(flat, theta).T).T.reshape(chains, n, p)
    return np.asarray(mean_se(psi), dtype=np.float64)
