"""The q-state Potts model on an ``L x L`` periodic square lattice: a discrete target for lattice samplers.

Spins ``s_i`` in ``{0, ..., q-1}`` on the sites of an ``L x L`` torus (Potts
1952; review: Wu 1982, Rev. Mod. Phys. 54, 235), with energy and law

    H(s) = -J sum_<ij> delta(s_i, s_j),     pi(s) ∝ exp(-beta H(s)) = exp(beta sum_<ij> delta(s_i, s_j)),

the sum running over the ``2 L^2`` nearest-neighbour pairs, each counted
once. Convention: ``J = 1`` (ferromagnetic), so ``beta`` is the coupling
``beta J``. The infinite lattice orders at ``beta_c = log(1 + sqrt q)``
(Baxter 1973; continuous for ``q <= 4``, first order for ``q > 4``).

Relation to the Ising model (:mod:`mcmc.core.targets.ising`): with ``s = +-1``
spins, ``s_i s_j = 2 delta(s_i, s_j) - 1``, so ``exp(beta_I sum s_i s_j) ∝
exp(2 beta_I sum delta)``: the Ising model at ``beta_I`` is the ``q = 2``
Potts model at ``beta = 2 beta_I`` (and ``beta_c = log(1 + sqrt 2)`` is twice
Onsager's ``0.4407``). The two targets stay separate implementations sharing
the lattice (:mod:`mcmc.core.targets.lattice`): the Ising model keeps its
``+-1`` floats and its ``tanh`` heat bath, whose bytes the reproducibility
digests pin, while the Potts heat bath is a ``q``-way categorical draw.

A point of the sampling space is a configuration stored as floats ``0.0 ..
q-1`` in row-major order (``dim = L^2``); ``log_density`` is the unnormalised
``beta sum_<ij> delta(s_i, s_j)`` (``-inf`` off the state space).
:class:`PottsTarget` implements
:class:`~mcmc.core.targets.protocols.PottsLattice` (for ``swendsen-wang``:
bond probability ``1 - exp(-beta)`` between equal neighbours, each cluster
to a uniformly random state) and
:class:`~mcmc.core.targets.protocols.FullConditionals` (for ``gibbs``):

    p(s_i = k | rest) ∝ exp(beta n_k(i)),   n_k(i) = number of the 4 neighbours of i in state k,

over the colour classes of the torus (conditionally independent given the
other classes), one class per vectorized step for every chain, each site
drawn by inverse CDF on one uniform of its chain's own stream.

Reported values (per sweep): ``energy = H / L^2 = -sum_<ij> delta / L^2``
(per site, ``J = 1``; in ``[-2, 0]``) and the order parameter

    m = (q max_k n_k / N - 1) / (q - 1),   n_k = number of sites in state k, N = L^2,

which is 0 for equal occupation and 1 for an ordered lattice (for ``q = 2``
it is the Ising ``|m|``). Exact means and sds come from enumerating the
``q^(L^2)`` configurations when there are at most :data:`MAX_EXACT_STATES`
(the 3 x 3 lattice up to ``q = 4``, the 4 x 4 lattice for ``q = 2``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.lattice import LatticeTarget, neighbours, require_lattice

MAX_EXACT_STATES = 300_000  # enumerate q^(L^2) configurations up to this many (3^9 = 19683, 4^9 = 262144)
#: Above this many states the heat bath looks only at the neighbours' states (sparse_heat_bath): its cost and memory
#: no longer grow with q. Up to it, the CDF over all q states, whose bytes the reproducibility digests pin.
DENSE_Q = 32


def beta_critical(q: int) -> float:
    """``log(1 + sqrt q)``: the critical coupling of the infinite square-lattice Potts model (Baxter 1973)."""
    return float(np.log1p(np.sqrt(q)))


def equal_pairs(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``sum_<ij> delta(s_i, s_j)`` over the nearest-neighbour pairs, for states ``x (..., rows * cols)``.

    Returns
    -------
    ndarray, shape (...), float
    """
    nbr = neighbours(rows, cols)
    return np.sum(x[..., nbr[:, 0]] == x, axis=-1, dtype=float) + np.sum(x[..., nbr[:, 2]] == x, axis=-1, dtype=float)


def largest_count(x: np.ndarray) -> np.ndarray:
    """``max_k n_k``, the number of sites in the most common state, for states ``x (..., N)``; shape ``(...)``.

    From the runs of each sorted row: time and memory grow with ``N``, never
    with ``q`` (a count per state would take ``q`` passes and ``q`` columns).
    """
    n = x.shape[-1]
    lead = x.shape[:-1]
    rows = np.sort(np.reshape(x, (-1, n)), axis=1)
    if rows.shape[0] == 0:
        return np.zeros(lead, dtype=np.int64)
    starts = np.ones(rows.shape, dtype=bool)
    starts[:, 1:] = rows[:, 1:] != rows[:, :-1]
    where = np.flatnonzero(starts)  # every row starts a run at its first site, position r * n
    lengths = np.diff(np.append(where, rows.size))
    first = np.searchsorted(where, np.arange(rows.shape[0]) * n)
    return np.maximum.reduceat(lengths, first).reshape(lead)


def order_parameter(x: np.ndarray, q: int) -> np.ndarray:
    """``m = (q max_k n_k / N - 1) / (q - 1)`` for states ``x (..., N)``; shape ``(...)``."""
    n = x.shape[-1]
    return (q * largest_count(x) / n - 1.0) / (q - 1)


def conditional_cdf(beta: float, counts: np.ndarray) -> np.ndarray:
    """Unnormalised CDF of ``p(s_i = k | neighbours) ∝ exp(beta n_k)`` over ``k``, for counts ``(..., q)``.

    Shifted by the largest count, so nothing overflows; the last entry is the total.
    """
    return np.cumsum(np.exp(beta * (counts - counts.max(axis=-1, keepdims=True))), axis=-1)


@dataclass(frozen=True, eq=False)
class PottsTarget(LatticeTarget):
    """The Potts model as a :class:`Target`, with its lattice and its full conditionals.

    Implements :class:`~mcmc.core.targets.protocols.PottsLattice` and
    :class:`~mcmc.core.targets.protocols.FullConditionals`.

    Parameters
    ----------
    rows, cols
        The sides of the torus (``dim = rows * cols``, sites in row-major order).
    q
        Number of states per site (``>= 2``), coded ``0.0 .. q-1``.
    beta
        Coupling ``beta J``.
    """

    q: int = 2

    def draw_conditional(self, rng: ChainRandom, x: np.ndarray, block: np.ndarray, noise: np.ndarray) -> None:
        """Heat bath on the sites ``block`` of every chain: state ``k`` by inverse CDF of ``exp(beta n_k)``.

        Up to :data:`DENSE_Q` states the CDF runs over all ``q`` states
        (:func:`conditional_cdf`); beyond, over the at most four states of the
        neighbours and the runs of unseen states between them, each of weight
        ``exp(-beta max_k n_k)`` (:func:`sparse_heat_bath`): the same law, at a
        cost and memory that do not grow with ``q``.
        """
        sites = neighbours(self.rows, self.cols)[block]  # (|block|, 4)
        states = x[:, sites]  # (chains, |block|, 4)
        u = noise[:, block]
        if self.q > DENSE_Q:
            x[:, block] = sparse_heat_bath(states, u, self.beta, self.q)
            return
        counts = (states[..., None] == np.arange(self.q)).sum(axis=-2)  # (chains, |block|, q)
        cdf = conditional_cdf(self.beta, counts)
        # The new state is the number of CDF steps below u * total.
        level = u[..., None] * cdf[..., -1:]
        x[:, block] = np.sum(cdf[..., :-1] <= level, axis=-1)

    def heat_bath(self, around: np.ndarray, u: np.ndarray) -> np.ndarray:
        """State ``k`` by inverse CDF of ``exp(beta n_k)``, ``n_k`` the neighbours in ``around (..., 4)`` at ``k``."""
        cdf = conditional_cdf(self.beta, (around[..., None] == np.arange(self.q)).sum(axis=-2))
        return np.sum(cdf[..., :-1] <= u[..., None] * cdf[..., -1:], axis=-1).astype(float)


def sparse_heat_bath(states: np.ndarray, u: np.ndarray, beta: float, q: int) -> np.ndarray:
    """Inverse-CDF draws of ``p(k) ∝ exp(beta n_k)``, ``k = 0 .. q-1``, from the neighbours' states alone.

    Parameters
    ----------
    states
        ``(..., 4)`` the neighbours' states (floats ``0 .. q-1``).
    u
        ``(...)`` uniforms in ``[0, 1)``.

    Returns
    -------
    ndarray, shape (...)
        The states drawn, as floats. States no neighbour holds weigh
        ``exp(-beta c)`` (``c`` the largest neighbour count), a neighbour's
        state ``d`` weighs ``exp(beta (n_d - c))``: the CDF rises linearly over
        each run of unseen states and jumps at each ``d``, so the level
        ``u * total`` is found run by run, in state order.
    """
    srt = np.sort(states, axis=-1)
    counts = (srt[..., :, None] == srt[..., None, :]).sum(axis=-1)  # (..., 4) neighbours sharing each one's state
    first = np.ones(srt.shape, dtype=bool)
    first[..., 1:] = srt[..., 1:] != srt[..., :-1]
    top = counts.max(axis=-1)
    with np.errstate(under="ignore"):
        unseen = np.exp(-beta * top)  # weight of a state no neighbour holds
        seen = np.where(first, np.exp(beta * (counts - top[..., None])), 0.0)
    distinct = first.sum(axis=-1)
    level = u * ((q - distinct) * unseen + seen.sum(axis=-1))
    out = np.full(u.shape, -1.0)
    cum = np.zeros(u.shape)
    start = np.zeros(u.shape)  # the first state of the current run of unseen states
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(srt.shape[-1]):
            d, here = srt[..., j], first[..., j] & (out < 0)
            run = (d - start) * unseen
            inside = here & (level < cum + run)
            step = np.floor((level - cum) / unseen)
            out = np.where(inside, np.minimum(start + step, d - 1), out)
            cum = np.where(first[..., j], cum + run, cum)
            hit = here & ~inside & (level < cum + seen[..., j])
            out = np.where(hit, d, out)
            cum = cum + seen[..., j]
            start = np.where(first[..., j], d + 1, start)
        step = np.floor((level - cum) / unseen)
        rest = np.clip(start + np.where(np.isfinite(step), step, 0.0), start, q - 1)
    return np.where(out < 0, rest, out)


@lru_cache(maxsize=8)
def exact_moments(size: int, q: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and sd of ``(energy, m)`` by enumerating all ``q^(size^2)`` configurations.

    Returns
    -------
    mean, sd : ndarray, shape (2,)
        Read-only (cached). Feasible up to :data:`MAX_EXACT_STATES` configurations.
    """
    n = size * size
    states = (np.arange(q**n)[:, None] // q ** np.arange(n)) % q
    s = equal_pairs(states, size, size)
    w = np.exp(beta * (s - s.max()))
    w /= w.sum()
    values = np.stack([-s / n, order_parameter(states, q)], axis=1)
    mean = w @ values
    sd = np.sqrt(np.maximum(w @ (values - mean) ** 2, 0.0))
    mean.setflags(write=False)
    sd.setflags(write=False)
    return mean, sd


def potts(size: int = 16, q: int = 3, beta: float = 1.0050525) -> PottsTarget:
    """The q-state Potts model on a ``size x size`` torus at coupling ``beta`` (``J = 1``).

    Parameters
    ----------
    size
        ``L``, the side of the lattice (at least 3, so that the four
        neighbours of a site are distinct).
    q
        Number of states per site, an integer ``>= 2``.
    beta
        Coupling ``beta J >= 0``; the default ``1.0050525`` is about
        ``log(1 + sqrt 3)``, critical for ``q = 3``.

    Returns
    -------
    PottsTarget
        ``dim = size^2`` sites, reported variables ``energy`` (per site) and
        ``m`` (order parameter), exact moments when ``q^(size^2) <=
        MAX_EXACT_STATES``, uniformly random starting states.

    Raises
    ------
    UsageError
        ``size`` not an integer >= 3, ``q`` not an integer >= 2, or ``beta``
        not a finite number >= 0.
    """
    if isinstance(size, bool) or int(size) != size or size < 3:
        raise UsageError(f"size must be an integer >= 3, got {size}")
    if isinstance(q, bool) or int(q) != q or q < 2:
        raise UsageError(f"q must be an integer >= 2, got {q}")
    size, q, beta = int(size), int(q), float(beta)
    if not (np.isfinite(beta) and beta >= 0.0):
        raise UsageError(f"beta must be a finite number >= 0, got {beta}")
    require_lattice(size)
    n = size * size

    def log_density(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        lp = beta * equal_pairs(x, size, size)
        valid = np.all((x == np.floor(x)) & (x >= 0) & (x < q), axis=-1)
        return np.where(valid, lp, -np.inf)

    def transform(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.stack([-equal_pairs(x, size, size) / n, order_parameter(x, q)], axis=-1)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        return np.floor(q * rng.uniform((n,)))

    mean = sd = None
    # Compared in logs: q^(L^2) as an exact integer takes forever for a large lattice.
    if n * math.log(q) <= math.log(MAX_EXACT_STATES):
        mean, sd = (a.copy() for a in exact_moments(size, q, beta))
    return PottsTarget(
        name="potts",
        dim=n,
        log_density=log_density,
        names=("energy", "m"),
        variables=(("energy", ()), ("m", ())),
        mean=mean,
        sd=sd,
        initial_point=initial_point,
        transform=transform,
        options={"size": size, "q": q, "beta": beta},
        rows=size,
        cols=size,
        q=q,
        beta=beta,
    )
