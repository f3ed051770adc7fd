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

Two runs add to it. Metropolis-Hastings on a weights file (``-s mh``) hands
over the chain's transition matrix, printed, and the target law
``b / sum(b)``, which the stationary law of that matrix must be
(:class:`TargetLaw`). A transition matrix run with ``-T init=... -T steps=T``
hands over the exact law after ``T`` steps, ``pi_T = pi_0 P^T``, and gets
beside it the law of the chains' states at step ``T`` (:class:`LawAtStep`:
the fraction of chains in each state, with the binomial MCSE of independent
chains).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError
from mcmc.diagnostics import stats

if TYPE_CHECKING:  # start-up: the matrix target's module (8 ms) is a Markov chain run's to load
    from mcmc.core.targets.markov_chain import ChainAnalysis


@dataclass(frozen=True)
class TargetLaw:
    """The law a Metropolis-Hastings chain targets, beside its transition matrix.

    Attributes
    ----------
    transition
        ``(n, n)`` the chain's transition matrix (self-transitions included).
    law
        ``(n,)`` ``b / sum(b)``.
    max_difference
        ``max_i |pi_i - b_i / sum(b)|``, ``pi`` the matrix's stationary law
        (rounding only, when the construction is right).
    """

    transition: np.ndarray
    law: np.ndarray
    max_difference: float

    def to_dict(self) -> dict[str, Any]:
        return {"transition": self.transition.tolist(), "law": self.law.tolist(),
                "max_difference": self.max_difference}  # fmt: skip


@dataclass(frozen=True)
class LawAtStep:
    """The exact law after ``steps`` steps and the chains' states then.

    Attributes
    ----------
    steps
        ``T``.
    exact
        ``(n,)`` ``pi_0 P^T``.
    simulated
        ``(n,)`` the fraction of chains in each state at step ``T``.
    mcse
        ``(n,)`` ``sqrt(p (1 - p) / chains)`` at ``p`` = the exact law (the chains are independent).
    z
        ``(n,)`` ``(simulated - exact) / mcse`` (where the law is 0 or 1: 0 if the chains agree, else inf).
    chains
        The number of chains.
    """

    steps: int
    exact: np.ndarray
    simulated: np.ndarray
    mcse: np.ndarray
    z: np.ndarray
    chains: int

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "exact": self.exact.tolist(), "simulated": self.simulated.tolist(),
                "mcse": self.mcse.tolist(), "z": self.z.tolist(), "chains": self.chains}  # fmt: skip


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
    target
        For a Metropolis-Hastings run on a weights file: its transition
        matrix and ``b / sum(b)``; else ``None``.
    at_step
        With ``-T steps=T``: the exact law after ``T`` steps beside the
        chains' states then; else ``None``.
    """

    analysis: ChainAnalysis
    frequencies: np.ndarray
    mcse: np.ndarray
    ess: np.ndarray
    z: np.ndarray | None
    draws: int
    target: TargetLaw | None = None
    at_step: LawAtStep | None = None

    def to_dict(self) -> dict[str, Any]:
        """The exact analysis and the estimates as JSON (part of ``mcmc sample -f json``'s document)."""
        a = self.analysis

        def listed(v: np.ndarray | None) -> list[float] | None:
            return None if v is None else np.asarray(v, dtype=float).tolist()

        return {
            "states": list(a.states), "initial": listed(a.initial), "stationary": listed(a.stationary),
            "stationary_power": listed(a.stationary_power), "power_iterations": a.power_iterations,
            "power_converged": a.power_converged, "irreducible": a.irreducible, "aperiodic": a.aperiodic,
            "periods": list(a.periods), "classes": [list(c) for c in a.classes],
            "closed": [bool(c) for c in a.closed], "reversible": a.reversible,
            "balance_violation": a.balance_violation, "spectral_gap": a.spectral_gap,
            "frequencies": listed(self.frequencies), "mcse": listed(self.mcse), "ess": listed(self.ess),
            "z": listed(self.z), "draws": self.draws,
            "target": None if self.target is None else self.target.to_dict(),
            "at_step": None if self.at_step is None else self.at_step.to_dict(),
        }  # fmt: skip


def state_indicators(codes: np.ndarray, n_states: int) -> np.ndarray:
    """``(chain, draw, n_states)`` float 0/1 indicators of the state codes ``(chain, draw)``."""
    return (np.asarray(codes)[..., None] == np.arange(n_states)).astype(float)


def step_index(steps: int, warmup: int, thin: int, kept: int) -> int | None:
    """The kept draw that holds step ``steps`` (1-based, the start is step 0), or ``None`` when none does.

    Iteration ``t`` (1-based, warm-up included) moves the chain to step ``t``;
    warm-up iterations are not kept, and of the sampling iterations every
    ``thin``-th is, from the first: kept draw ``k`` is step ``warmup + k thin + 1``.
    """
    offset = steps - warmup - 1
    if offset < 0 or offset % thin or offset // thin >= kept:
        return None
    return offset // thin


def markov_report(
    chains: Chains,
    analysis: ChainAnalysis,
    source: str | None = None,
    *,
    target_law: tuple[np.ndarray, np.ndarray] | None = None,
    steps: int | None = None,
    law_at_steps: np.ndarray | None = None,
) -> MarkovReport:
    """Empirical state frequencies with MCSE beside the exact analysis of the chain.

    Parameters
    ----------
    chains
        A ``markov`` or ``mh`` run: variable ``state``, codes ``(chain, draw)``.
    analysis
        The exact analysis of the chain's transition matrix (``MarkovChainTarget.analysis``,
        or :func:`~mcmc.core.targets.markov_chain.analyse` of a Metropolis-Hastings matrix).
    source
        Name for error messages.
    target_law
        ``(transition, law)``: a Metropolis-Hastings chain's matrix and ``b / sum(b)``.
    steps, law_at_steps
        ``T`` and ``pi_0 P^T``: the law after ``T`` steps, set beside the
        chains' states at step ``T`` (which must be a kept draw: :func:`step_index`).

    Raises
    ------
    InputError
        No ``state`` variable, codes that are not states of the chain, or step ``T`` not among the kept draws.
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
    target = None
    if target_law is not None:
        transition, law = (np.asarray(a, dtype=float) for a in target_law)
        gap = float(np.max(np.abs(analysis.stationary - law))) if analysis.stationary is not None else float("nan")
        target = TargetLaw(transition, law, gap)
    at_step = None
    if steps is not None and law_at_steps is not None:
        a = chains.attrs
        k = step_index(int(steps), int(a.get("warmup", 0)), int(a.get("thin", 1)), codes.shape[1])
        if k is None:
            raise InputError(source, f"step {steps} is not among the kept draws (warm-up {a.get('warmup', 0)}, "
                             f"{codes.shape[1]} draws, thin {a.get('thin', 1)})")  # fmt: skip
        exact = np.asarray(law_at_steps, dtype=float)
        simulated = np.bincount(codes[:, k].astype(np.int64), minlength=n) / codes.shape[0]
        se = np.sqrt(exact * (1.0 - exact) / codes.shape[0])
        with np.errstate(divide="ignore", invalid="ignore"):
            # Where the law is 0 or 1 a state seen otherwise is infinitely off.
            zs = np.where(se > 0, (simulated - exact) / np.where(se > 0, se, 1.0),
                          np.where(simulated == exact, 0.0, np.inf))  # fmt: skip
        at_step = LawAtStep(int(steps), exact, simulated, se, zs, codes.shape[0])
    return MarkovReport(analysis, freq, mcse, ess, z, codes.shape[1], target, at_step)
