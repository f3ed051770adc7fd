"""Sampling engines of `mcmc`: targets, samplers, the Gibbs topic models, and the chains format.

Nothing here prints or exits; the command line in :mod:`mcmc.cli` does that.
"""
