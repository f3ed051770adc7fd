"""The sampler-level facts of a run: acceptance, divergences, tree-depth hits, E-BFMI.

Sampler checks have the semantics of CmdStan's ``diagnose``: divergent
transitions (any is a failure by default), transitions that hit the maximum
tree depth (an efficiency warning, not a validity failure), and the energy
Bayesian fraction of missing information per chain,
``E-BFMI = sum_n (E_n - E_{n-1})^2 / sum_n (E_n - mean E)^2`` with the
nominal threshold 0.3 (Betancourt 2016, "Diagnosing suboptimal cotangent
disintegrations in Hamiltonian Monte Carlo", arXiv:1604.00695).

Acceptance comes from the sampler's ``acceptance_rate`` statistic when the
file has it. Otherwise only the *move rate* can be seen: the fraction of
transitions that changed at least one coordinate. It equals the acceptance
rate of a Metropolis-type sampler with continuous proposals, and nothing of
the kind for the others: HMC and NUTS move on almost every transition whatever
their acceptance statistic, a Gibbs sweep always moves, an LDA chain's log
joint changes every sweep. So it is called the move rate in every output, and
its spread across chains is flagged only for samplers where it means
acceptance (:attr:`Acceptance.judged`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mcmc.core.chains import Chains

ACCEPTANCE_FROM_STATS = "sampler statistics"

ACCEPTANCE_FROM_DRAWS = "estimated from draws"

#: Sampler statistics only gradient-based samplers write (HMC, NUTS: CmdStan, PyMC, NumPyro, ours).
GRADIENT_STATS = ("energy", "diverging", "tree_depth", "n_steps", "step_size", "n_leapfrog", "lp_gradient")
#: Samplers (``attrs["sampler"]``) whose draws move on every transition by construction.
ALWAYS_MOVE = ("gibbs", "swendsen-wang", "markov", "hmc-gibbs", "slice", "elliptical-slice", "rejection")

DEFAULT_MAX_TREEDEPTH = 10  # CmdStan's and PyMC's default when the file does not say


@dataclass(frozen=True)
class Acceptance:
    """Acceptance rate per chain and overall, and where it came from.

    ``source`` is ``"sampler statistics"`` (mean of ``acceptance_rate``) or
    ``"estimated from draws"`` (fraction of transitions that moved), and
    :attr:`label` what outputs call it: ``"acceptance"`` or ``"move rate"``.
    ``judged`` is false for a move rate of a sampler for which it does not
    mean acceptance (gradient-based, Gibbs, slice; see the module docstring):
    shown, never flagged. ``outliers`` are the chains whose value lies beyond
    Tukey's fences (1.5 interquartile ranges outside the quartiles of the
    chains), what a compact display of many chains names beside the range;
    empty when not judged.
    """

    per_chain: tuple[float, ...]
    overall: float
    source: str
    outliers: tuple[int, ...] = ()
    judged: bool = True

    @property
    def label(self) -> str:
        return "acceptance" if self.source == ACCEPTANCE_FROM_STATS else "move rate"


@dataclass(frozen=True)
class Sampler:
    """Sampler-level facts behind the CmdStan-style checks.

    Fields are ``None`` when the file lacks the statistic they need
    (``diverging``, ``tree_depth``, ``energy``).
    """

    acceptance: Acceptance
    transitions: int
    divergences: int | None = None
    divergences_per_chain: tuple[int, ...] | None = None
    max_treedepth: int | None = None
    treedepth_hits: int | None = None
    ebfmi: tuple[float, ...] | None = None

    @property
    def divergence_percent(self) -> float | None:
        if self.divergences is None or self.transitions == 0:
            return None
        return 100.0 * self.divergences / self.transitions


def sampler_summary(chains: Chains) -> Sampler:
    """Acceptance, divergences, tree-depth hits and E-BFMI from the sampler statistics."""
    st = chains.sample_stats
    n_chains, n_draws = chains.n_chains, chains.n_draws
    with np.errstate(invalid="ignore", divide="ignore"):
        if "acceptance_rate" in st:
            a = np.asarray(st["acceptance_rate"], dtype=float)
            ok = np.isfinite(a)
            per_chain = np.where(ok, a, 0.0).sum(axis=1) / ok.sum(axis=1)
            overall = np.where(ok, a, 0.0).sum() / ok.sum()
            acceptance = Acceptance(
                tuple(per_chain.tolist()), float(overall), ACCEPTANCE_FROM_STATS, _outliers(per_chain)
            )
        else:
            moved = np.zeros((n_chains, max(n_draws - 1, 0)), dtype=bool)
            for arr in chains.posterior.values():  # few variables; each is vectorised over chains
                flat = arr.reshape(n_chains, n_draws, -1)
                moved |= (flat[:, 1:] != flat[:, :-1]).any(axis=2)
            per_chain = moved.mean(axis=1) if n_draws > 1 else np.full(n_chains, np.nan)
            overall = moved.mean() if n_draws > 1 else np.nan
            judged = _move_rate_is_acceptance(chains)
            acceptance = Acceptance(
                tuple(per_chain.tolist()), float(overall), ACCEPTANCE_FROM_DRAWS,
                _outliers(per_chain) if judged else (), judged,
            )  # fmt: skip

        kwargs: dict[str, Any] = {}
        if "diverging" in st:
            div = np.asarray(st["diverging"]) != 0
            kwargs["divergences"] = int(div.sum())
            kwargs["divergences_per_chain"] = tuple(int(v) for v in div.sum(axis=1))
        if "tree_depth" in st:
            # One value per file when CmdStan files were run with different max_depth.
            depths = np.atleast_1d(np.asarray(chains.attrs.get("max_treedepth", DEFAULT_MAX_TREEDEPTH), dtype=float))
            per_chain = depths if depths.size == n_chains else np.full(n_chains, depths.min())
            kwargs["max_treedepth"] = int(per_chain.min())
            kwargs["treedepth_hits"] = int((np.asarray(st["tree_depth"]) >= per_chain[:, None]).sum())
        if "energy" in st:
            kwargs["ebfmi"] = tuple(ebfmi(np.asarray(st["energy"], dtype=float)).tolist())
    return Sampler(acceptance=acceptance, transitions=n_chains * n_draws, **kwargs)


def _move_rate_is_acceptance(chains: Chains) -> bool:
    """Whether the draws' move rate is the sampler's acceptance rate (a Metropolis-type sampler)."""
    if any(k in chains.sample_stats for k in GRADIENT_STATS):
        return False
    name = str(chains.attrs.get("sampler", ""))
    return not (name in ALWAYS_MOVE or name.startswith("lda-"))


def _outliers(values: np.ndarray) -> tuple[int, ...]:
    """Indices beyond Tukey's fences (1.5 IQR outside the quartiles); none for fewer than 4 values."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    if ok.sum() < 4:
        return ()
    q1, q3 = np.percentile(v[ok], [25, 75])
    fence = 1.5 * (q3 - q1)
    return tuple(np.flatnonzero(ok & ((v < q1 - fence) | (v > q3 + fence))).tolist())


def ebfmi(energy: np.ndarray) -> np.ndarray:
    """Energy Bayesian fraction of missing information per chain.

    Parameters
    ----------
    energy
        Hamiltonian energy at each transition, shape ``(chain, draw)``.

    Returns
    -------
    ndarray
        ``(chain,)``: ``sum_n (E_n - E_{n-1})^2 / sum_n (E_n - mean E)^2``, as
        CmdStan's ``diagnose`` computes it (Betancourt 2016); NaN when undefined.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        num = np.square(np.diff(energy, axis=1)).sum(axis=1)
        den = np.square(energy - energy.mean(axis=1, keepdims=True)).sum(axis=1)
        return num / den
