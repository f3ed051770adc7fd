"""Convergence diagnostics of `mcmc`: readers for chain files, batched statistics, checks.

Nothing here prints or exits; the command line in :mod:`mcmc.cli` renders reports.
"""
