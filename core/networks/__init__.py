"""Discrete Bayesian networks: junction trees, exact inference and blocked Gibbs sampling.

* :mod:`~mcmc.core.networks.junction_tree`: the junction tree of a set of
  nodes with the rest of the network clamped (moralise, triangulate by greedy
  min-fill, join the cliques), calibrated in one collect/distribute pass for
  the exact marginal of every free node and ``log p(e)`` (Lauritzen &
  Spiegelhalter 1988; Jensen, Lauritzen & Olesen 1990).
* :mod:`~mcmc.core.networks.blocks`: which nodes Gibbs updates together:
  every near-deterministic group in one block, blocks grown while their
  largest clique table stays under a budget (Jensen, Kong & Kjaerulff 1995).
* :mod:`~mcmc.core.networks.blocked_gibbs`: the sampler; each block is drawn
  from its exact conditional by forward filtering / backward sampling on its
  junction tree (Dawid 1992), compiled with numba.

The network itself (:mod:`mcmc.core.targets.bayesnet`), the BIF reader and
variable elimination still live under :mod:`mcmc.core.targets`, the
single-site sampler under :mod:`mcmc.core.samplers`.
"""
