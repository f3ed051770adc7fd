"""Swendsen-Wang cluster updates of the Ising and Potts models, vectorized over chains.

Swendsen & Wang (1987), "Nonuniversal critical dynamics in Monte Carlo
simulations", Phys. Rev. Lett. 58, 86. One iteration, for every chain:

1. put a bond on each *satisfied* nearest-neighbour pair (equal spins) with
   probability ``p``, independently: ``p = 1 - exp(-2 beta)`` for the Ising
   model at ``beta``, ``p = 1 - exp(-beta)`` for the Potts model at coupling
   ``beta J`` (the same thing: Ising at ``beta`` is Potts ``q = 2`` at
   ``2 beta``);
2. find the clusters, the connected components of the bond graph (a site
   without bonds is a cluster of one);
3. give each cluster a uniformly random state, independently: an Ising
   cluster flips with probability 1/2, a Potts cluster takes state
   ``floor(q u)``.

This is a Gibbs sampler of the Fortuin-Kasteleyn (Edwards & Sokal 1988)
joint distribution of spins and bonds, so it leaves ``pi`` invariant;
updating whole clusters removes most of the critical slowing down of
single-site updates (:mod:`mcmc.core.samplers.gibbs`). The target supplies
the pairs and the coupling through the protocol
:class:`~mcmc.core.targets.protocols.SpinLattice` (the Ising model,
:class:`~mcmc.core.targets.ising.IsingTarget`) or its refinement
:class:`~mcmc.core.targets.protocols.PottsLattice` (the Potts model,
:class:`~mcmc.core.targets.potts.PottsTarget`); a Potts model on any graph
(:class:`~mcmc.core.targets.graph.GraphPottsTarget`, ``graph.csv``) has a
coupling per pair (:class:`~mcmc.core.targets.protocols.WeightedBonds`),
and each pair its own bond probability ``1 - exp(-beta_ij)``: the same
Fortuin-Kasteleyn argument, edge by edge.

All chains form one graph of ``chains * L^2`` nodes, labelled in a single
call of :func:`scipy.sparse.csgraph.connected_components`. Randomness is
drawn in fixed shapes from each chain's own stream: ``(chains, 2 L^2)``
uniforms for the bonds and ``(chains, L^2)`` for the new cluster states, a
cluster using the uniform of its smallest site. Neither depends on the other
chains or on how the components are numbered, so a chain's path depends only
on the seed and its index.

Statistics: ``n_clusters`` (clusters in the chain's lattice, singletons
included; mean cluster size is ``L^2 / n_clusters``) and ``flip_rate`` (the
fraction of the chain's spins that changed: about 1/2 for Ising, ``(q-1)/q``
for Potts). No warm-up adaptation.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry
from mcmc.core.samplers.base import DensityState, density_state
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import PottsLattice, SpinLattice, WeightedBonds, require

DECLARATION = registry.SWENDSEN_WANG
NAME = DECLARATION.name
LATTICE = True  # draws spin lattices (SpinLattice targets); the driver keeps other samplers off them

State = DensityState  # spins -1.0 / +1.0 or states 0.0 .. q-1 (chains, n_spins) and their log density


class Info(NamedTuple):
    n_clusters: np.ndarray  # (chains,) int, clusters of the bond graph (singletons included)
    flip_rate: np.ndarray  # (chains,) fraction of spins changed


def bond_probability(beta: float) -> float:
    """``1 - exp(-2 beta)``: the probability of a bond on a satisfied pair of the Ising model (Swendsen & Wang 1987)."""
    return float(-np.expm1(-2.0 * beta))


def potts_bond_probability(beta: float) -> float:
    """``1 - exp(-beta J)``: the probability of a bond between equal neighbours of the Potts model (``J = 1``)."""
    return float(-np.expm1(-beta))


def _pair_probabilities(lattice: WeightedBonds, potts: bool) -> np.ndarray:
    """``(n_pairs,)`` the bond probability of each pair from its own coupling (a graph, ``graph.csv``)."""
    beta = np.asarray(lattice.couplings(), dtype=float)
    if np.any(beta < 0):
        raise UsageError(
            "swendsen-wang needs every coupling >= 0 (a negative one, antiferromagnetic, has no bond "
            "representation); use gibbs"
        )
    return -np.expm1(-beta) if potts else -np.expm1(-2.0 * beta)


def spin_lattice(target: Target) -> SpinLattice:
    """``target`` as a :class:`~mcmc.core.targets.protocols.SpinLattice` (``UsageError`` if it is not)."""
    return require(target, SpinLattice, NAME, "an Ising lattice (ising), a Potts lattice (potts) or graph.csv")


def init(position: np.ndarray, target: Target) -> State:
    """State at spins ``position (chains, n_spins)``.

    Raises
    ------
    UsageError
        ``target`` is not a spin lattice.
    """
    spin_lattice(target)
    return density_state(position, target)


def clusters(bonded: np.ndarray, first: np.ndarray, second: np.ndarray, sites: int) -> tuple[np.ndarray, np.ndarray]:
    """Connected components of every chain's bond graph at once.

    Parameters
    ----------
    bonded
        ``(chains, n_pairs)`` bool: which pairs carry a bond.
    first, second
        ``(n_pairs,)`` the sites each pair joins, ``first`` sorted.
    sites
        Sites per chain (``L^2``).

    Returns
    -------
    labels
        ``(chains * sites,)`` component of each node (node ``c * sites + i``
        is site ``i`` of chain ``c``); numbering is arbitrary.
    roots
        ``(n_components,)`` the smallest node of each component, indexed by
        label: a representative that depends on the chain's own graph only.
    """
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import connected_components

    chains = bonded.shape[0]
    chain, pair = np.nonzero(bonded)
    offset = chain * sites
    nodes = chains * sites
    # Row indices come out sorted (chain-major, then ``first``): build the CSR
    # arrays directly, far cheaper than scipy's COO -> CSR conversion.
    indptr = np.searchsorted(offset + first[pair], np.arange(nodes + 1))
    graph = csr_array((np.ones(pair.size, dtype=np.int8), offset + second[pair], indptr), shape=(nodes, nodes))
    _, labels = connected_components(graph, directed=False)
    # First occurrence of each label in node order = the component's smallest node.
    _, roots = np.unique(labels, return_index=True)
    return labels, roots


def step(rng: ChainRandom, state: State, target: Target) -> tuple[State, Info]:
    """One Swendsen-Wang update (bonds, clusters, new cluster states) for every chain.

    Returns
    -------
    state
        New spins and their log density.
    info
        ``n_clusters (chains,)`` and ``flip_rate (chains,)``.

    Raises
    ------
    UsageError
        ``target`` is not a spin lattice.
    """
    lattice = spin_lattice(target)
    first, second = lattice.bonds()
    beta = lattice.beta
    x = state.position
    n = x.shape[1]
    chains = x.shape[0]
    u_bond = rng.uniform((first.size,))
    u_new = rng.uniform((n,)).ravel()
    potts = isinstance(lattice, PottsLattice)
    if isinstance(lattice, WeightedBonds):  # a graph: one bond probability per pair
        p = _pair_probabilities(lattice, potts)
    else:
        p = potts_bond_probability(beta) if potts else bond_probability(beta)
    bonded = (x[:, first] == x[:, second]) & (u_bond < p)
    labels, roots = clusters(bonded, first, second, n)
    if potts:
        new = np.floor(lattice.q * u_new[roots])[labels].reshape(chains, n)
        changed = new != x
    else:
        changed = (u_new[roots] < 0.5)[labels].reshape(chains, n)
        new = np.where(changed, -x, x)
    info = Info(np.bincount(roots // n, minlength=chains), np.mean(changed, axis=1))
    return State(new, np.asarray(target.log_density(new), dtype=float)), info
