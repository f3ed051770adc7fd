"""Hamiltonian Monte Carlo with a jittered path length, vectorized over chains.

One transition, for every chain at once:

1. Momentum: ``p = M^{1/2} z`` with ``z ~ N(0, I)`` drawn afresh (plain HMC,
   ``persistence = 0``) or partially refreshed, ``z <- a z + sqrt(1 - a^2) e``,
   ``e ~ N(0, I)`` (``persistence = a``; the generalized HMC of Horowitz 1991,
   Neal 2011 section 5.5.3). Both leave ``N(0, M)`` invariant.
2. Path length: ``L ~ path_length * U(1 - jitter, 1 + jitter)`` (default
   ``U(0.5, 1.5)``), ``n = ceil(L / eps)`` leapfrog steps, at most
   ``max_steps`` (a hit is reported as ``reached_max_steps``). Jittering
   breaks the periodicities that make a fixed length fail on near-Gaussian
   targets (Mackenzie 1989; Neal 2011, section 5.4.2). With ``n_steps``
   the number of steps is given instead (Neal 2011's ``L``, the lecture's
   20), ``n = ceil(n_steps * U(1 - jitter, 1 + jitter))``: exactly
   ``n_steps`` with ``jitter = 0`` (``-P hmc:n-steps=20 -P hmc:jitter=0``).
3. Integrate with :func:`mcmc.core.samplers.leapfrog.integrate`; the trajectory
   diverges when the energy error exceeds ``max_energy_error`` (1000, as
   Stan) or is not finite; a divergent proposal is rejected.
4. Accept ``(x', -p')`` with probability ``min(1, exp(-dH))``,
   ``dH = H(x', p') - H(x, p)``, then negate the momentum. With ``a = 0`` the
   two negations are invisible (the momentum is redrawn). With ``a > 0`` they
   matter: an accepted move keeps going the same way, a rejected one reverses
   the momentum. This is what keeps the chain exact: each of the three
   pieces (partial refreshment, the Metropolis-corrected reversible proposal,
   the momentum flip) leaves the joint ``pi(x) N(p; 0, M)`` invariant, though
   their composition does not satisfy detailed balance (Horowitz 1991; Neal
   2011, section 5.5.3). The state carries the momentum (whitened, as ``z``)
   for that reason.

The inverse mass matrix is diagonal and per chain. During warm-up
:func:`make_adapter` tunes the step size by dual averaging toward
``target_accept`` (0.8) and the diagonal mass matrix in Stan's windows
(:mod:`mcmc.core.samplers.hmc_adapt`), each chain on its own draws, with
trajectories capped at :data:`EARLY_MAX_STEPS` until the first metric.

The integrator is the leapfrog (:mod:`mcmc.core.samplers.leapfrog`):
time-reversible and volume-preserving, with an energy error that stays
``O(eps^2)`` over a trajectory, which is what makes the Metropolis correction
exact and keeps acceptance high. ``-P hmc:integrator=euler`` is refused with
that reason: Euler's method is neither reversible nor volume-preserving (the
acceptance rule would target the wrong law) and its energy error grows along
the trajectory (``O(eps)`` over a fixed time, without bound as the path
lengthens; Neal 2011, section 2.3, figure 1; :func:`~mcmc.core.samplers.leapfrog.euler`
and ``bench/integrators.py`` show it).

A target with compiled paths runs the trajectory compiled (a numba point
function, :mod:`mcmc.core.compiled`); a JAX target (:mod:`mcmc.core.jax`)
also runs many whole transitions per call (:func:`run_iterations`), reading
the numbers :func:`step` reads.

Statistics (ArviZ names): ``acceptance_rate`` ``min(1, exp(-dH))`` (0 for a
divergence), ``accepted``, ``diverging``, ``energy`` (the Hamiltonian at the
state kept, for E-BFMI), ``step_size``, ``n_steps`` (leapfrog steps = gradient
evaluations), ``reached_max_steps``, ``lp``.

References
----------
Neal, R. M. (2011). MCMC using Hamiltonian dynamics. In *Handbook of Markov
Chain Monte Carlo*, chapter 5. Chapman & Hall/CRC.
Horowitz, A. M. (1991). A generalized guided Monte Carlo algorithm.
*Physics Letters B* 268, 247-252.
Mackenzie, P. B. (1989). An improved hybrid Monte Carlo method.
*Physics Letters B* 226, 369-371.
Hoffman, M. D. & Gelman, A. (2014). The No-U-Turn sampler: adaptively setting
path lengths in Hamiltonian Monte Carlo. *JMLR* 15, 1593-1623.
Stan Development Team. *Stan Reference Manual*, "MCMC Sampling" (HMC
algorithm parameters, adaptation windows, divergent transitions).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.base import Iterations
from mcmc.core.samplers.hmc_adapt import (
    WindowAdapter,
    inv_mass_per_chain,
    per_chain,
)
from mcmc.core.samplers.leapfrog import evaluate, gradient_of, integrate, kinetic_energy
from mcmc.core.targets.base import Target

DECLARATION = registry.HMC
NAME = DECLARATION.name

PATH_LENGTH = np.pi / 2
"""Default integration time, in the units of the adapted metric.

With a well-adapted metric a Gaussian target moves as ``x(t) = x cos t + p sin t``
(period 2 pi). A quarter period, jittered over ``[pi/4, 3 pi/4]``, gives
successive draws uncorrelated on average (``E cos t = 0``) with little
correlation in ``x^2`` (``E cos^2 t ~ 0.18``), so bulk and tail ESS are both
good. Longer paths (t ~ 2) make draws antithetic: a bulk ESS above the number
of draws, bought with a worse tail ESS. On the targets we tried (Gaussians,
eight schools, logistic regression, banana) pi/2 gave the best or near-best
min(bulk, tail) ESS per gradient."""
JITTER = 0.5
MAX_STEPS = 1024
EARLY_MAX_STEPS = 8
"""Cap on leapfrog steps during warm-up while the metric is still the initial one.

With an identity metric on a badly scaled posterior the step size is set by
the stiffest coordinate (0.01 on kidiq or arK) and pi/2 in those units is
160 to 290 steps, some hitting :data:`MAX_STEPS`: half of all gradients of a
run went there (issue 15). Those iterations only have to bring the chain to
the typical set and feed the first variance window; 8 steps of the adapted
size do that (32 left the Gaussian mixture of posteriordb at 64 % warm-up
even when every chain behaved)."""
WARMUP_MAX_STEPS = 64
"""Cap on leapfrog steps for the rest of warm-up (sampling uses :data:`MAX_STEPS`).

Dual averaging's iterate dips far below the step size it converges to after a
run of rejections, and a window whose variance was estimated while the chain
still drifted gives a metric that needs long paths until the next window fixes
it: on the Gaussian mixture one chain spent 52,000 gradients in warm-up that
way, against 6,000 for the others. Warm-up draws only feed the estimates, so a
shorter path there costs nothing in the draws kept. Once adapted, five of the
six posteriordb posteriors take 3 to 10 steps an iteration; the GP one takes
about 70, and capping its warm-up paths at 64 left its ESS per gradient as it
was (``docs/benchmarks.md``, posteriordb)."""
MAX_ENERGY_ERROR = 1000.0
TARGET_ACCEPT = 0.8


class State(NamedTuple):
    position: np.ndarray  # (chains, dim)
    log_density: np.ndarray  # (chains,)
    grad: np.ndarray  # (chains, dim)
    momentum: np.ndarray  # (chains, dim) whitened: p = z / sqrt(inv_mass); kept for persistence


class Info(NamedTuple):
    acceptance_rate: np.ndarray  # (chains,) min(1, exp(-dH)), 0 if diverging
    accepted: np.ndarray  # (chains,) bool
    diverging: np.ndarray  # (chains,) bool
    energy: np.ndarray  # (chains,) Hamiltonian at the state kept
    step_size: np.ndarray  # (chains,)
    n_steps: np.ndarray  # (chains,) leapfrog steps taken
    reached_max_steps: np.ndarray  # (chains,) bool: ceil(L / eps) was capped at max_steps
    lp: np.ndarray  # (chains,) log density of the state kept


def init(position: np.ndarray, target: Target) -> State:
    """State at ``position (chains, dim)``: log density, gradient, zero momentum.

    Raises
    ------
    UsageError
        When ``target`` has no gradient.
    """
    x, lp, g = evaluate(position, target, NAME)
    return State(x, lp, g, np.zeros_like(x))


EULER_REFUSED = (
    "hmc: integrator=euler is refused: Euler's method is neither time-reversible nor volume-preserving, so the "
    "Metropolis correction would not leave the target invariant, and its energy error grows along the trajectory "
    "(O(eps) over a fixed time, unbounded as the path lengthens) where the leapfrog's stays O(eps^2); "
    "bench/integrators.py and docs/benchmarks.md compare the two"
)


def _check_scalars(
    persistence: float, jitter: float, max_steps: int, max_energy_error: float,
    n_steps: int | None = None, integrator: str = "leapfrog",
) -> None:  # fmt: skip
    if integrator == "euler":
        raise UsageError(EULER_REFUSED)
    if integrator != "leapfrog":
        raise UsageError(f"hmc: integrator must be leapfrog (or euler, refused), got {integrator!r}")
    if n_steps is not None and (isinstance(n_steps, bool) or int(n_steps) != n_steps or n_steps < 1):
        raise UsageError(f"hmc: n_steps must be a whole number >= 1, got {n_steps}")
    if not 0.0 <= persistence < 1.0:
        raise UsageError(f"hmc: persistence must be in [0, 1), got {persistence}")
    if not 0.0 <= jitter < 1.0:
        raise UsageError(f"hmc: jitter must be in [0, 1), got {jitter}")
    if max_steps < 1:
        raise UsageError(f"hmc: max_steps must be at least 1, got {max_steps}")
    if not max_energy_error > 0:
        raise UsageError(f"hmc: max_energy_error must be positive, got {max_energy_error}")


def step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    step_size: float | np.ndarray = 0.1,
    inv_mass: np.ndarray | None = None,
    path_length: float | np.ndarray | None = None,
    persistence: float | None = None,
    jitter: float = JITTER,
    max_steps: int = MAX_STEPS,
    max_energy_error: float | None = None,
    n_steps: int | None = None,
    integrator: str = "leapfrog",
) -> tuple[State, Info]:
    """One HMC transition for every chain.

    Parameters
    ----------
    rng
        Per-chain streams: each chain draws ``dim`` normals and two uniforms.
    state
        Current state (see :func:`init`).
    target
        Must have a gradient.
    step_size
        Leapfrog step size, scalar or ``(chains,)``.
    inv_mass
        Diagonal inverse mass matrix, ``(dim,)`` or ``(chains, dim)``; default identity.
    path_length
        Mean integration time ``L``, scalar or ``(chains,)``; default pi/2.
    persistence
        Momentum persistence ``a`` in [0, 1); 0 (default) is plain HMC.
    jitter
        ``L`` is drawn from ``U(1 - jitter, 1 + jitter) * path_length``.
    max_steps
        Cap on leapfrog steps per transition.
    max_energy_error
        Energy error above which a trajectory diverges (default 1000).
    n_steps
        Leapfrog steps per transition (before jitter) instead of
        ``path_length / step_size``; ``None``: from the path length.
    integrator
        ``"leapfrog"``; ``"euler"`` is refused (see the module docstring).

    Returns
    -------
    state, info
        The new state and per-chain statistics (see the module docstring).
    """
    vg = gradient_of(target, NAME)
    x = state.position
    chains, dim = x.shape
    a = 0.0 if persistence is None else float(persistence)
    max_err = MAX_ENERGY_ERROR if max_energy_error is None else float(max_energy_error)
    _check_scalars(a, jitter, max_steps, max_err, n_steps, integrator)
    eps = per_chain(step_size, chains, "step_size", NAME)
    length = per_chain(PATH_LENGTH if path_length is None else path_length, chains, "path_length", NAME)
    minv = inv_mass_per_chain(inv_mass, chains, dim, NAME)

    noise = rng.normal((dim,))
    z = a * state.momentum + np.sqrt(1.0 - a * a) * noise if a > 0 else noise
    p0 = z / np.sqrt(minv)
    spread = 1.0 + jitter * (2.0 * rng.uniform() - 1.0)
    wanted = np.ceil(length * spread / eps) if n_steps is None else np.ceil(int(n_steps) * spread)
    n = np.clip(wanted, 1, max_steps).astype(np.int64)
    if target.compiled is not None:  # compiled: the whole path without Python (mcmc.core.compiled)
        traj = target.compiled.trajectory(x, p0, state.log_density, state.grad, eps, n, minv, max_err)
    else:
        traj = integrate(vg, x, p0, state.log_density, state.grad, eps, n, minv, max_err)

    h0 = -state.log_density + kinetic_energy(p0, minv)
    # A divergent end point may hold inf/NaN: it is rejected below.
    with np.errstate(over="ignore", invalid="ignore"):
        h1 = -traj.log_density + kinetic_energy(traj.momentum, minv)
        dh = h1 - h0
    diverging = traj.diverged | ~np.isfinite(dh)
    log_alpha = np.where(diverging, -np.inf, -dh)
    accepted = rng.log_uniform() < log_alpha
    rate = np.exp(np.minimum(log_alpha, 0.0))

    keep = accepted[:, None]
    # After the flip: forward momentum if accepted, reversed if rejected.
    z_new = np.where(keep, traj.momentum * np.sqrt(minv), -z)
    new = State(
        np.where(keep, traj.position, x),
        np.where(accepted, traj.log_density, state.log_density),
        np.where(keep, traj.grad, state.grad),
        z_new,
    )
    info = Info(
        acceptance_rate=rate,
        accepted=accepted,
        diverging=diverging,
        energy=np.where(accepted, h1, h0),
        step_size=eps,
        n_steps=traj.n_steps,
        reached_max_steps=wanted > max_steps,
        lp=new.log_density.copy(),
    )
    return new, info


def run_iterations(
    rng: ChainRandom,
    state: State,
    target: Target,
    count: int,
    adaptation: Any = None,
    *,
    step_size: float | np.ndarray = 0.1,
    inv_mass: np.ndarray | None = None,
    path_length: float | np.ndarray | None = None,
    persistence: float | None = None,
    jitter: float = JITTER,
    max_steps: int = MAX_STEPS,
    max_energy_error: float | None = None,
    n_steps: int | None = None,
    integrator: str = "leapfrog",
) -> Iterations | None:
    """``count`` transitions of :func:`step` in one compiled loop, when the target has one; else None.

    A JAX target's ``CompiledPaths.hmc_loop`` (:mod:`mcmc.core.jax`): the
    same transition, reading the same random numbers, with no Python between
    transitions. With ``adaptation`` (the warm-up adapter's
    :meth:`~mcmc.core.samplers.hmc_adapt.WindowAdapter.quiet`), each
    transition's step size is dual averaging's, updated after it, and the draws
    are added to the metric windows open; ``step_size`` is then not used.
    The parameters are :func:`step`'s; with a fixed ``n_steps`` the loop is
    not used (None: the driver takes :func:`step`, whose trajectory is still
    the target's compiled one).
    """
    loop = None if target.compiled is None else target.compiled.hmc_loop
    a = 0.0 if persistence is None else float(persistence)
    max_err = MAX_ENERGY_ERROR if max_energy_error is None else float(max_energy_error)
    _check_scalars(a, jitter, max_steps, max_err, n_steps, integrator)
    if loop is None or n_steps is not None:
        return None
    x = state.position
    chains, dim = x.shape
    eps = per_chain(step_size, chains, "step_size", NAME)
    length = per_chain(PATH_LENGTH if path_length is None else path_length, chains, "path_length", NAME)
    minv = inv_mass_per_chain(inv_mass, chains, dim, NAME)
    out = loop(rng, x, state.log_density, state.grad, state.momentum, count, eps, minv, length, float(jitter),
               int(max_steps), a, max_err, adaptation)  # fmt: skip
    return Iterations(State(out.position, out.log_density, out.grad, out.momentum), Info(**out.stats), out.draws,
                      out.adaptation)  # fmt: skip


def run_attrs(state: State, final: dict[str, Any]) -> dict[str, Any]:
    """Chains-file attributes: the kernel settings in effect, defaults included.

    ``attrs["params"]`` (written by the driver) holds what was passed or
    adapted; this records the rest, so a run can be repeated exactly.
    """
    del state

    def plain(value: Any) -> Any:  # JSON-native (the .nc writer has no numpy fallback)
        return np.asarray(value).tolist()

    return {
        "hmc": {
            "metric": "diagonal",
            "path_length": plain(final.get("path_length", PATH_LENGTH)),
            "jitter": plain(final.get("jitter", JITTER)),
            "persistence": plain(final.get("persistence", 0.0)),
            "max_steps": plain(final.get("max_steps", MAX_STEPS)),
            "max_energy_error": plain(final.get("max_energy_error", MAX_ENERGY_ERROR)),
            **({"n_steps": plain(final["n_steps"])} if final.get("n_steps") is not None else {}),
        }
    }


def make_adapter(warmup: int, state: State, target: Target, rng: ChainRandom, **params: Any) -> WindowAdapter:
    """The warm-up adapter the driver uses (:class:`~mcmc.core.samplers.hmc_adapt.WindowAdapter`).

    With ``warmup = 0`` the parameters are used as given, except that a
    missing ``step_size`` is found once by :func:`find_reasonable_step_size`.
    While the metric is still the initial one, trajectories are capped at
    :data:`EARLY_MAX_STEPS` leapfrog steps.
    """
    fixed = {k: v for k, v in params.items() if v is not None}
    _check_scalars(
        float(fixed.get("persistence", 0.0)),
        float(fixed.get("jitter", JITTER)),
        int(fixed.get("max_steps", MAX_STEPS)),
        float(fixed.get("max_energy_error", MAX_ENERGY_ERROR)),
        fixed.get("n_steps"),
        str(fixed.get("integrator", "leapfrog")),
    )
    limit = int(fixed.get("max_steps", MAX_STEPS))
    return WindowAdapter(warmup, state, target, rng, early_cap={"max_steps": min(limit, EARLY_MAX_STEPS)},
                         late_cap={"max_steps": min(limit, WARMUP_MAX_STEPS)}, name=NAME, **params)
