"""The No-U-Turn Sampler with multinomial sampling, as Stan implements it, vectorized over chains.

One transition, for every chain at once (Hoffman & Gelman 2014, Algorithm 3,
with the changes of Betancourt 2017 that Stan's ``base_nuts`` carries):

1. Draw a momentum ``p ~ N(0, M)``; the trajectory is the one point
   ``(x, p)`` with weight ``exp(H0 - H) = 1``.
2. Double the trajectory until it turns back on itself: at depth ``d`` pick
   a direction (forward or backward in time, a fair coin) and integrate a new
   subtree of ``2^d`` leapfrog steps from that end of the trajectory.
3. Within the subtree the candidate is drawn *multinomially*: each point with
   probability proportional to its weight ``exp(H0 - H)`` (Betancourt 2017,
   appendix A.3.2; drawn progressively, one uniform per leaf, which gives the
   same distribution as Stan's merge of sibling subtrees). Between the old
   trajectory and a valid new subtree the candidate moves with the *biased*
   probability ``min(1, W_new / W_old)`` (Betancourt 2017, A.3.2), which
   favours points far from the start.
4. A subtree is invalid when one of its leaves *diverges* (energy error above
   ``max_energy_error``, 1000 as Stan, or not finite) or when one of its
   sub-subtrees (its two halves, their halves, ...) makes a U-turn; an
   invalid subtree is thrown away with its candidate and the transition ends.
5. The *generalized* U-turn criterion (Betancourt 2013, 2017 section 4.2):
   a tree with summed momenta ``rho`` keeps going while
   ``p#_minus . rho > 0`` and ``p#_plus . rho > 0``, ``p# = M^{-1} p`` at its
   two ends. It is checked on every merge of two adjacent trees ``a`` and
   ``b`` (both in the subtree and when a subtree joins the trajectory), and,
   since Stan 2.26, also across the boundary: on ``a`` extended by the first
   point of ``b`` and on ``b`` extended by the last point of ``a``. Those two
   extra checks catch the U-turns that fall between two subtrees, which the
   merged check alone misses on near-Gaussian targets (stan-dev/stan#2800).
6. Stop at ``max_tree_depth`` doublings (10 by default, as Stan).

Every chain builds its tree in lockstep with the others: all running chains
are at the same depth and the same leaf, and a chain that has stopped (U-turn,
divergence, maximum depth) is masked out, so the target is evaluated only
for chains still integrating. A chain's random numbers (momentum, directions,
the multinomial draws) come from its own stream only when it is running, so
chain ``i`` depends only on the seed and ``i``.

A target with a compiled point function (a target file's
``point_log_density_and_grad``, the built-in models that have one) carries a
compiled transition, :func:`mcmc.core.compiled.make_tree`: the same
algorithm per chain with no Python per leaf, reading the same random numbers
(tested to build the same trees as the code below). A target written in JAX
carries the same transition in JAX, and loops of them
(:func:`run_iterations`, :mod:`mcmc.core.jax`). The code below is the
reference, and what every other target runs.

Statistics (ArviZ names): ``acceptance_rate`` (Stan's ``accept_stat__``: the
mean over every leapfrog step of the transition, thrown-away subtrees
included, of ``min(1, exp(H0 - H))``; what dual averaging adapts the step size
on), ``diverging``, ``energy`` (the Hamiltonian at the point drawn),
``step_size``, ``n_steps`` (leapfrog steps = gradient evaluations),
``tree_depth`` (doublings kept), ``reached_max_treedepth``, ``lp``.

Warm-up: the same :class:`~mcmc.core.samplers.hmc_adapt.WindowAdapter` as
HMC (dual-averaged step size toward ``target_accept`` 0.8, Stan's windowed
diagonal metric, the guards against a collapsing metric), with the tree depth
capped at :data:`EARLY_MAX_TREE_DEPTH` until the first metric.

References
----------
Hoffman, M. D. & Gelman, A. (2014). The No-U-Turn sampler: adaptively setting
path lengths in Hamiltonian Monte Carlo. *JMLR* 15, 1593-1623.
Betancourt, M. (2017). A conceptual introduction to Hamiltonian Monte Carlo.
arXiv:1701.02434 (sections 4.2 and appendix A.3, multinomial sampling).
Betancourt, M. (2013). Generalizing the No-U-Turn sampler to Riemannian
manifolds. arXiv:1304.1920.
Stan Development Team. ``stan/mcmc/hmc/nuts/base_nuts.hpp`` (2.26 and later:
the extra U-turn checks across subtree boundaries).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.base import Iterations
from mcmc.core.samplers.hmc_adapt import WindowAdapter, inv_mass_per_chain, per_chain
from mcmc.core.samplers.leapfrog import ValueAndGrad, evaluate, gradient_of, kinetic_energy, row_dot
from mcmc.core.targets.base import Target

DECLARATION = registry.NUTS
NAME = DECLARATION.name

MAX_TREE_DEPTH = 10
EARLY_MAX_TREE_DEPTH = 5
"""Tree depth cap (at most 31 leapfrog steps) while the metric is still the initial one.

The counterpart of HMC's ``EARLY_MAX_STEPS``: with an identity metric on a
badly scaled posterior the step size is set by the stiffest coordinate and a
full tree is hundreds of steps that only bring the chain to the typical set."""
MAX_ENERGY_ERROR = 1000.0
COMPILED_MAX_TREE_DEPTH = 15
"""Deepest ``max_tree_depth`` the compiled transition runs (deeper: the NumPy one, the same trees).

It reads from exponentials reserved for the deepest tree, ``8 * 2^depth``
bytes per chain: 256 KB at 15, where a transition is already 32,767 leapfrog steps."""


class State(NamedTuple):
    position: np.ndarray  # (chains, dim)
    log_density: np.ndarray  # (chains,)
    grad: np.ndarray  # (chains, dim)


class Info(NamedTuple):
    acceptance_rate: np.ndarray  # (chains,) mean min(1, exp(H0 - H)) over the tree's leapfrog steps
    diverging: np.ndarray  # (chains,) bool
    energy: np.ndarray  # (chains,) Hamiltonian at the point drawn
    step_size: np.ndarray  # (chains,)
    n_steps: np.ndarray  # (chains,) leapfrog steps
    tree_depth: np.ndarray  # (chains,) doublings kept
    reached_max_treedepth: np.ndarray  # (chains,) bool
    lp: np.ndarray  # (chains,) log density of the point drawn


def init(position: np.ndarray, target: Target) -> State:
    """State at ``position (chains, dim)``: log density and gradient.

    Raises
    ------
    UsageError
        When ``target`` has no gradient.
    """
    x, lp, g = evaluate(position, target, NAME)
    return State(x, lp, g)


def _check_scalars(max_tree_depth: Any, max_energy_error: float) -> int:
    depth = int(max_tree_depth)
    if depth != max_tree_depth or not 1 <= depth <= 30:
        raise UsageError(f"nuts: max_tree_depth must be an integer in [1, 30], got {max_tree_depth}")
    if not max_energy_error > 0:
        raise UsageError(f"nuts: max_energy_error must be positive, got {max_energy_error}")
    return depth


def _no_u_turn(p_a: np.ndarray, p_b: np.ndarray, rho: np.ndarray, minv: np.ndarray) -> np.ndarray:
    """The generalized criterion ``p#_a . rho > 0 and p#_b . rho > 0``, ``p# = M^{-1} p``: ``(n,)`` bool."""
    a = row_dot(minv * p_a, rho)
    b = row_dot(minv * p_b, rho)
    return (a > 0) & (b > 0)


def _merge_ok(
    rho_a: np.ndarray, first_a: np.ndarray, last_a: np.ndarray,
    rho_b: np.ndarray, first_b: np.ndarray, last_b: np.ndarray, minv: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """Stan's three checks on joining tree ``a`` and the tree ``b`` integrated after it.

    ``first``/``last`` are the momenta at each tree's ends in integration
    order (``last_a`` and ``first_b`` are neighbours). The criterion is
    symmetric in the two ends, so the same checks serve both directions.
    """
    ok = _no_u_turn(first_a, last_b, rho_a + rho_b, minv)
    ok &= _no_u_turn(first_a, first_b, rho_a + first_b, minv)
    ok &= _no_u_turn(last_a, last_b, rho_b + last_a, minv)
    return ok


def step(
    rng: ChainRandom,
    state: State,
    target: Target,
    *,
    step_size: float | np.ndarray = 0.1,
    inv_mass: np.ndarray | None = None,
    max_tree_depth: int = MAX_TREE_DEPTH,
    max_energy_error: float | None = None,
) -> tuple[State, Info]:
    """One NUTS transition for every chain.

    Parameters
    ----------
    rng
        Per-chain streams: each chain draws ``dim`` normals, then per doubling
        one uniform for the direction, one per leaf and one per valid subtree.
    state
        Current state (see :func:`init`).
    target
        Must have a gradient.
    step_size
        Leapfrog step size, scalar or ``(chains,)``.
    inv_mass
        Diagonal inverse mass matrix, ``(dim,)`` or ``(chains, dim)``; default identity.
    max_tree_depth
        Most doublings per transition (at most ``2^depth - 1`` leapfrog steps).
    max_energy_error
        Energy error above which a leaf diverges (default 1000).

    Returns
    -------
    state, info
        The new state and per-chain statistics (see the module docstring).
    """
    vg = gradient_of(target, NAME)
    max_err = MAX_ENERGY_ERROR if max_energy_error is None else float(max_energy_error)
    max_depth = _check_scalars(max_tree_depth, max_err)
    x0 = state.position
    chains, dim = x0.shape
    eps = per_chain(step_size, chains, "step_size", NAME)
    minv = inv_mass_per_chain(inv_mass, chains, dim, NAME)

    p0 = rng.normal((dim,)) / np.sqrt(minv)
    draws = _Reserved(rng, max_depth)
    compiled = target.compiled is not None and target.compiled.tree is not None
    if compiled and max_depth <= COMPILED_MAX_TREE_DEPTH:  # the whole transition compiled
        return _compiled_step(rng, draws, state, target.compiled.tree, p0, eps, minv, max_depth, max_err)
    h0 = -state.log_density + kinetic_energy(p0, minv)

    # The trajectory: its two ends (to integrate on from), the momenta there,
    # the summed momenta, the log of its summed weights, and the candidate.
    end_x = [x0.copy(), x0.copy()]  # [backward end, forward end]
    end_p = [p0.copy(), p0.copy()]
    end_lp = [state.log_density.copy(), state.log_density.copy()]
    end_g = [state.grad.copy(), state.grad.copy()]
    rho = p0.copy()
    log_w = np.zeros(chains)
    pick_x, pick_lp, pick_g, pick_h = x0.copy(), state.log_density.copy(), state.grad.copy(), h0.copy()

    depth = np.zeros(chains, dtype=np.int64)
    n_steps = np.zeros(chains, dtype=np.int64)
    sum_accept = np.zeros(chains)
    diverging = np.zeros(chains, dtype=bool)
    running = np.ones(chains, dtype=bool)

    for d in range(max_depth):
        act = np.flatnonzero(running)
        if act.size == 0:
            break
        forward = draws.uniform(act) > 0.5
        draws.reserve_exponentials(2**d + 1)  # a leaf's each, and the subtree's
        fw = forward[:, None]
        sub = _subtree(
            draws, vg, d, act, np.where(forward, 1.0, -1.0) * eps[act], minv[act], h0[act], max_err,
            np.where(fw, end_x[1][act], end_x[0][act]), np.where(fw, end_p[1][act], end_p[0][act]),
            np.where(forward, end_lp[1][act], end_lp[0][act]), np.where(fw, end_g[1][act], end_g[0][act]),
        )  # fmt: skip
        n_steps[act] += sub.n_steps
        sum_accept[act] += sub.sum_accept
        diverging[act] = sub.diverged
        running[act] = sub.valid
        ok = sub.valid
        if not ok.any():
            continue
        rows, fw_ok, fwd = act[ok], fw[ok], forward[ok]
        # The old trajectory is tree ``a``, the new subtree ``b``: ``a``'s end
        # next to ``b`` is the end we integrated from.
        near = np.where(fw_ok, end_p[1][rows], end_p[0][rows])
        far = np.where(fw_ok, end_p[0][rows], end_p[1][rows])
        b_first, b_last, b_rho = sub.first[ok], sub.last[ok], sub.rho[ok]
        turn_ok = _merge_ok(rho[rows], far, near, b_rho, b_first, b_last, minv[rows])
        depth[rows] += 1
        # Biased progressive sampling: move to the subtree's candidate with
        # probability min(1, W_subtree / W_old).
        take = draws.log_uniform(rows) < sub.log_w[ok] - log_w[rows]
        moved = rows[take]
        pick_x[moved], pick_lp[moved] = sub.x[ok][take], sub.lp[ok][take]
        pick_g[moved], pick_h[moved] = sub.g[ok][take], sub.h[ok][take]
        log_w[rows] = np.logaddexp(log_w[rows], sub.log_w[ok])
        rho[rows] += b_rho
        for side, mask in ((1, fwd), (0, ~fwd)):
            r, i = rows[mask], np.flatnonzero(ok)[mask]
            end_x[side][r], end_p[side][r] = sub.end_x[i], b_last[mask]
            end_lp[side][r], end_g[side][r] = sub.end_lp[i], sub.end_g[i]
        running[rows] = turn_ok

    draws.release(rng)
    new = State(pick_x, pick_lp, pick_g)
    info = Info(
        acceptance_rate=sum_accept / np.maximum(n_steps, 1),
        diverging=diverging,
        energy=pick_h,
        step_size=eps,
        n_steps=n_steps,
        tree_depth=depth,
        reached_max_treedepth=depth >= max_depth,
        lp=pick_lp.copy(),
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
    max_tree_depth: int = MAX_TREE_DEPTH,
    max_energy_error: float | None = None,
) -> Iterations | None:
    """``count`` transitions of :func:`step` in one compiled loop, when the target has one; else None.

    A JAX target's ``CompiledPaths.nuts_loop`` (:mod:`mcmc.core.jax`): the
    same trees, reading the same random numbers, with no Python between
    transitions. ``adaptation``: as :func:`mcmc.core.samplers.hmc.run_iterations`.
    """
    loop = None if target.compiled is None else target.compiled.nuts_loop
    max_err = MAX_ENERGY_ERROR if max_energy_error is None else float(max_energy_error)
    max_depth = _check_scalars(max_tree_depth, max_err)
    if loop is None or max_depth > COMPILED_MAX_TREE_DEPTH:
        return None
    chains, dim = state.position.shape
    eps = per_chain(step_size, chains, "step_size", NAME)
    minv = inv_mass_per_chain(inv_mass, chains, dim, NAME)
    out = loop(rng, state.position, state.log_density, state.grad, count, eps, minv, max_depth, max_err, adaptation)
    return Iterations(State(out.position, out.log_density, out.grad), Info(**out.stats), out.draws, out.adaptation)


class _Reserved:
    """The uniforms and exponentials one transition reads, reserved in each chain's buffers and read in place.

    Per chain: one uniform per doubling (the direction), one exponential per
    leaf and one per valid subtree (``-E`` is the log of a uniform), at most
    ``2^depth - 1 + depth`` of them. Reading in place costs a fraction of a
    masked draw per leaf, and it is how the compiled transition reads them
    (:func:`mcmc.core.compiled.make_tree`), so both read the same numbers.
    The exponentials are reserved as the tree grows (:meth:`reserve_exponentials`):
    all of them at once would be ``8 * 2^depth`` bytes per chain.
    """

    def __init__(self, rng: ChainRandom, max_depth: int) -> None:
        self._rng = rng
        self.uni, self.uni_pos = rng.reserve("uniform", max_depth)
        self.exp, self.exp_pos = rng.reserve("exponential", 0)
        self._start = self.uni_pos.copy(), self.exp_pos.copy()

    def reserve_exponentials(self, n: int) -> None:
        """At least ``n`` more exponentials per chain beyond what each has read."""
        used = self.exp_pos - self._start[1]
        # a refill moves each chain's unread values to the front of its row
        self.exp, start = self._rng.reserve("exponential", int(used.max(initial=0)) + n)
        self._start = self._start[0], start
        self.exp_pos = start + used

    def uniform(self, rows: np.ndarray) -> np.ndarray:
        """The next uniform of each chain in ``rows`` (distinct indices)."""
        u = self.uni[rows, self.uni_pos[rows]]
        self.uni_pos[rows] += 1
        return u

    def log_uniform(self, rows: np.ndarray) -> np.ndarray:
        """The log of the next uniform of each chain in ``rows``, as ``-Exponential(1)``."""
        e = self.exp[rows, self.exp_pos[rows]]
        self.exp_pos[rows] += 1
        return -e

    def release(self, rng: ChainRandom) -> None:
        """Tell ``rng`` what each chain read."""
        rng.advance("uniform", self.uni_pos - self._start[0])
        rng.advance("exponential", self.exp_pos - self._start[1])


def _compiled_step(rng: ChainRandom, draws: _Reserved, state: State, tree: Any, p0: np.ndarray, eps: np.ndarray,
                   minv: np.ndarray, max_depth: int, max_err: float) -> tuple[State, Info]:  # fmt: skip
    """:func:`step` by a target's compiled transition, reading the same random numbers in place."""
    draws.reserve_exponentials(2**max_depth - 1 + max_depth)
    out = tree(state.position, p0, state.log_density, state.grad, eps, minv, max_depth, max_err,
               draws.uni, draws.uni_pos, draws.exp, draws.exp_pos)  # fmt: skip
    draws.uni_pos += out.uniforms_used
    draws.exp_pos += out.exponentials_used
    draws.release(rng)
    info = Info(
        acceptance_rate=out.sum_accept / np.maximum(out.n_steps, 1),
        diverging=out.diverging,
        energy=out.energy,
        step_size=eps,
        n_steps=out.n_steps,
        tree_depth=out.depth,
        reached_max_treedepth=out.depth >= max_depth,
        lp=out.log_density.copy(),
    )
    return State(out.position, out.log_density, out.grad), info


class _Subtree(NamedTuple):
    """A subtree built for the chains ``act`` (all arrays have ``act``'s leading size)."""

    valid: np.ndarray  # no divergence, no U-turn inside
    diverged: np.ndarray
    n_steps: np.ndarray
    sum_accept: np.ndarray
    log_w: np.ndarray  # log of the summed weights exp(H0 - H)
    rho: np.ndarray  # summed momenta
    first: np.ndarray  # momentum of the first leaf integrated
    last: np.ndarray  # momentum of the last leaf
    x: np.ndarray  # the candidate: position, log density, gradient, Hamiltonian
    lp: np.ndarray
    g: np.ndarray
    h: np.ndarray
    end_x: np.ndarray  # the last leaf, to integrate on from
    end_lp: np.ndarray
    end_g: np.ndarray


def _subtree(
    draws: _Reserved, vg: ValueAndGrad, depth: int, act: np.ndarray, eps: np.ndarray, minv: np.ndarray,
    h0: np.ndarray, max_err: float, x: np.ndarray, p: np.ndarray, lp: np.ndarray, g: np.ndarray,
) -> _Subtree:  # fmt: skip
    """Integrate ``2^depth`` leapfrog steps of size ``eps (n,)`` for the chains ``act (n,)``.

    Leaf by leaf, so the U-turn checks of Stan's recursive ``build_tree`` come
    as a binary counter: when leaf ``k`` completes a node of ``2^(j+1)``
    leaves, its left half (kept on a stack at level ``j``) is merged with the
    right half just finished and the merge is checked. A chain stops at the
    first divergence or failed check, as the recursion returns there.
    """
    n, dim = x.shape
    leaves = 2**depth
    # What the subtree returns, per chain, written when the chain stops or finishes.
    valid = np.ones(n, dtype=bool)
    diverged = np.zeros(n, dtype=bool)
    steps = np.zeros(n, dtype=np.int64)
    sum_accept = np.zeros(n)
    log_w = np.full(n, -np.inf)
    rho = np.zeros((n, dim))
    first = np.zeros((n, dim))
    last = np.empty((n, dim))
    cand_x, cand_lp, cand_g, cand_h = x.copy(), lp.copy(), g.copy(), np.zeros(n)
    end_x, end_lp, end_g = x.copy(), lp.copy(), g.copy()
    # The chains still integrating, in compact working arrays (row i is chain rows[i]), so a leaf costs no
    # gather or scatter; they shrink only when chains stop. Every row has taken the same k + 1 leaves.
    rows = np.arange(n)
    w = _Work(x.copy(), p.copy(), lp.copy(), g.copy(), 0.5 * eps[:, None], eps[:, None] * minv, minv, h0, act,
              np.full(n, -np.inf), np.zeros(n), x.copy(), lp.copy(), g.copy(), np.zeros(n), np.zeros((n, dim)),
              np.zeros((n, dim)), np.zeros((max(depth, 1), 3, n, dim)))  # fmt: skip
    for k in range(leaves):
        # One leapfrog step, as leapfrog.integrate takes it (the same operations, so the
        # same numbers), without its set-up: a call per leaf cost more than the step.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            p_half = w.half * w.g
            p_half += w.p
            w.x = w.x + w.em * p_half
            lpr, w.g = vg(w.x)
            w.lp = np.asarray(lpr, dtype=float)
            w.p = w.half * w.g
            w.p += p_half
            h = -w.lp + kinetic_energy(w.p, w.minv)
            h[np.isnan(h)] = np.inf
            delta = w.h0 - h
            w.sum_accept += np.exp(np.minimum(delta, 0.0))
            div = ~np.isfinite(h) | ~(h - w.h0 <= max_err)
            new_w = np.logaddexp(w.log_w, delta)
            # Progressive multinomial sampling within the subtree: the candidate
            # is each leaf with probability proportional to its weight.
            take = draws.log_uniform(w.act) < delta - new_w
        w.log_w = new_w
        if k == 0:
            take[:] = True
            w.first = w.p.copy()
        if take.any():
            w.cand_x[take], w.cand_lp[take], w.cand_g[take], w.cand_h[take] = w.x[take], w.lp[take], w.g[take], h[take]
        node_rho, node_first = w.p.copy(), w.p
        ok = ~div
        j = 0
        while (k + 1) % (2 ** (j + 1)) == 0:
            a_rho, a_first, a_last = w.stack[j, 0], w.stack[j, 1], w.stack[j, 2]
            ok &= _merge_ok(a_rho, a_first, a_last, node_rho, node_first, w.p, w.minv)
            node_rho = a_rho + node_rho
            node_first = a_first
            j += 1
        if j < depth:
            w.stack[j, 0], w.stack[j, 1], w.stack[j, 2] = node_rho, node_first, w.p
        else:
            w.rho = node_rho
        done = ~ok if k + 1 < leaves else np.ones(rows.size, dtype=bool)
        if done.any():  # write back the chains that stopped (or all, after the last leaf)
            out = rows[done]
            valid[out], diverged[out], steps[out] = ok[done], div[done], k + 1
            sum_accept[out], log_w[out], rho[out] = w.sum_accept[done], w.log_w[done], w.rho[done]
            first[out], last[out] = w.first[done], w.p[done]
            cand_x[out], cand_lp[out], cand_g[out], cand_h[out] = (w.cand_x[done], w.cand_lp[done], w.cand_g[done],
                                                                   w.cand_h[done])  # fmt: skip
            end_x[out], end_lp[out], end_g[out] = w.x[done], w.lp[done], w.g[done]
            rows = rows[~done]
            if rows.size == 0:
                break
            w = w.keep(~done)
    return _Subtree(valid, diverged, steps, sum_accept, log_w, rho, first, last, cand_x, cand_lp, cand_g, cand_h,
                    end_x, end_lp, end_g)  # fmt: skip


@dataclass
class _Work:
    """A subtree's working state for the chains still integrating (:func:`_subtree`), one row per chain."""

    x: np.ndarray
    p: np.ndarray
    lp: np.ndarray
    g: np.ndarray
    half: np.ndarray  # eps / 2 and eps M^{-1}, hoisted as leapfrog.integrate does
    em: np.ndarray
    minv: np.ndarray
    h0: np.ndarray
    act: np.ndarray  # the chains' indices in the random streams
    log_w: np.ndarray
    sum_accept: np.ndarray
    cand_x: np.ndarray
    cand_lp: np.ndarray
    cand_g: np.ndarray
    cand_h: np.ndarray
    first: np.ndarray
    rho: np.ndarray
    stack: np.ndarray  # (levels, 3, rows, dim): left siblings' summed, first and last momenta

    def keep(self, mask: np.ndarray) -> _Work:
        """The rows ``mask`` only."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return _Work(**{name: (v[:, :, mask] if name == "stack" else v[mask]) for name, v in fields.items()})


def run_attrs(state: State, final: dict[str, Any]) -> dict[str, Any]:
    """Chains-file attributes: the kernel settings in effect, defaults included.

    ``max_treedepth`` at the top level is what ``mcmc diagnose`` counts tree
    depth hits against (as it reads CmdStan's ``max_depth``).
    """
    del state
    depth = int(final.get("max_tree_depth", MAX_TREE_DEPTH))
    return {
        "nuts": {
            "metric": "diagonal",
            "max_tree_depth": depth,
            "max_energy_error": float(final.get("max_energy_error", MAX_ENERGY_ERROR)),
        },
        "max_treedepth": depth,
    }


def make_adapter(warmup: int, state: State, target: Target, rng: ChainRandom, **params: Any) -> WindowAdapter:
    """The warm-up adapter the driver uses (:class:`~mcmc.core.samplers.hmc_adapt.WindowAdapter`).

    The step size adapts on the acceptance statistic (the mean Metropolis
    acceptance over the tree, as Stan). With ``warmup = 0`` the parameters are
    used as given, except that a missing ``step_size`` is found once. While the
    metric is still the initial one, trees are capped at
    :data:`EARLY_MAX_TREE_DEPTH`.
    """
    fixed = {k: v for k, v in params.items() if v is not None}
    depth = _check_scalars(fixed.get("max_tree_depth", MAX_TREE_DEPTH),
                           float(fixed.get("max_energy_error", MAX_ENERGY_ERROR)))  # fmt: skip
    cap = {"max_tree_depth": min(depth, EARLY_MAX_TREE_DEPTH)}
    return WindowAdapter(warmup, state, target, rng, early_cap=cap, name=NAME, **params)
