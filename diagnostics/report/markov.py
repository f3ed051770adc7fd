"""The report of a finite Markov chain run: exact analysis beside the empirical state frequencies.

:func:`markov_report` is the one call behind the summary of ``mcmc sample
--target P.csv``: it takes the run's chains (variable ``state``, the codes
``(chain, draw)`` the ``markov`` sampler writes) and the target's exact
analysis (:func:`mcmc.core.targets.markov_chain.analyse`: stationary law by
eigenvector and by power iteration, irreducibility, periods, detailed
balance, spectral gap) and adds what needs the draws: each state's visit
frequency, the mean of its 0/1 indicator, with its Monte Carlo standard
error (:func:`~mcmc.diagnostics.stats.mcse_mean`: autocorrelation-aware,
Geyer's initial monotone sequence on the split chains) and its standardised
distance to the stationary probability. The analysis lives in ``core`` (it
needs no draws), this in ``diagnostics`` (``core`` never imports it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError
from mcmc.diagnostics import stats

if TYPE_CHECKING:  # start-up: the matrix target's module (8 ms) is a Markov chain run's to load
    from mcmc.core.targets.markov_chain import ChainAnalysis


@dataclass(frozen=True)
class MarkovReport:
    """Exact facts of the chain and what the simulation estimated.

    Attributes
    ----------
    analysis
        The exact analysis (states, stationary law both ways, classes,
        periods, detailed balance, spectral gap).
    frequencies
        ``(n,)`` fraction of all draws (all chains) in each state.
    mcse
        ``(n,)`` Monte Carlo standard error of each frequency (NaN for a
        state never or always visited).
    ess
        ``(n,)`` effective sample size of each state's indicator.
    z
        ``(n,)`` ``(frequency - pi) / mcse``, or ``None`` when ``pi`` is not unique.
    draws
        Draws per chain.
    """

    analysis: ChainAnalysis
    frequencies: np.ndarray
    mcse: np.ndarray
    ess: np.ndarray
    z: np.ndarray | None
    draws: int


def state_indicators(codes: np.ndarray, n_states: int) -> np.ndarray:
    """``(chain, draw, n_states)`` float 0/1 indicators of the state codes ``(chain, draw)``."""
    return (np.asarray(codes)[..., None] == np.arange(n_states)).astype(float)


def markov_report(chains: Chains, analysis: ChainAnalysis, source: str | None = None) -> MarkovReport:
    """Empirical state frequencies with MCSE beside the exact analysis of the chain.

    Parameters
    ----------
    chains
        A ``markov`` run: variable ``state``, codes ``(chain, draw)``.
    analysis
        The target's exact analysis (``MarkovChainTarget.analysis``).
    source
        Name for error messages.

    Raises
    ------
    InputError
        No ``state`` variable, or codes that are not states of the chain.
    """
    if "state" not in chains.posterior:
        raise InputError(source, "no variable 'state': not a Markov chain run")
    codes = np.asarray(chains.posterior["state"])
    n = len(analysis.states)
    if codes.ndim != 2 or not np.all((codes == np.floor(codes)) & (codes >= 0) & (codes < n)):
        raise InputError(source, f"variable 'state' must hold state codes 0..{n - 1} shaped (chain, draw)")
    x = state_indicators(codes, n)
    freq = x.mean(axis=(0, 1))
    mcse = stats.mcse_mean(x)
    ess = stats.ess_mean(x)
    z = None
    if analysis.stationary is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (freq - analysis.stationary) / mcse
    return MarkovReport(analysis, freq, mcse, ess, z, codes.shape[1])
