"""The limits a run is judged by (:class:`Thresholds`), in one place for every command.

The default limits R-hat <= 1.01 and bulk and tail ESS >= 100 per chain (400
for four chains, 100 for one) are those of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021),
"Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC", Bayesian Analysis 16(2). Per-variable limits
(``Thresholds.per_variable``) loosen or tighten R-hat and ESS for chosen
parameters. The command line resolves options and ``[tool.mcmc.diagnose]``
into one :class:`Thresholds` (:mod:`mcmc.cli.config`); the library never
reads a flag or a config file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from mcmc.core.errors import UsageError
from mcmc.diagnostics.report.selection import matches

__all__ = ["MIN_ESS_PER_CHAIN", "Thresholds"]

#: The ESS every chain must contribute when no total is given: Vehtari et al. (2021) ask for
#: bulk and tail ESS above 100 per chain (400 for the four chains of their examples).
MIN_ESS_PER_CHAIN = 100


@dataclass(frozen=True)
class Thresholds:
    """Limits a run must meet to pass.

    Attributes
    ----------
    max_rhat
        Largest acceptable rank-normalized split R-hat (Vehtari et al. 2021: 1.01).
    min_ess
        Smallest acceptable bulk and tail ESS over all chains; ``None`` (the
        default) means :data:`MIN_ESS_PER_CHAIN` per chain (Vehtari et al.
        2021: 100 per chain, 400 for four chains), made concrete by
        :meth:`for_chains` when the number of chains is known.
    ess_per_chain
        Set by :meth:`for_chains` when ``min_ess`` came from the per-chain
        default (the reports then say "100 per chain").
    max_divergences
        Largest acceptable number of divergent transitions over all chains.
    min_ebfmi
        Smallest acceptable E-BFMI of any chain (Betancourt 2016: 0.3).
    max_treedepth_hits
        Transitions allowed to hit the maximum tree depth before a warning.
    ssif_ratio
        SSIF is flagged where its ESS clears ``min_ess``, the bulk ESS does not,
        and the two differ by more than this factor (1: whenever SSIF alone passes).
    max_ll_gap
        Topic models: nats per token by which a chain's mean log joint may
        fall below the best chain's (beyond two standard errors) before it
        fails as stuck in a poorer mode (:mod:`mcmc.diagnostics.report.lda_gate`).
    per_variable
        ``(pattern, max_rhat, min_ess)`` limits for the parameters a pattern
        selects (as ``--var``: an exact variable or scalar name, or a glob
        with ``*`` and ``?`` matching a whole one; never a regular
        expression); ``None`` keeps the general limit. A later entry wins
        where patterns overlap.
    """

    max_rhat: float = 1.01
    min_ess: float | None = None
    max_divergences: int = 0
    min_ebfmi: float = 0.3
    max_treedepth_hits: int = 0
    ssif_ratio: float = 1.0
    per_variable: tuple[tuple[str, float | None, float | None], ...] = ()
    ess_per_chain: bool = False
    max_ll_gap: float = 0.05

    def __post_init__(self) -> None:
        # An infinite limit would turn a check off while the report still says it ran.
        if not 1.0 <= self.max_rhat < np.inf:
            raise UsageError(f"max-rhat must be a finite number of at least 1 (got {self.max_rhat})")
        if self.min_ess is not None and not 0 <= self.min_ess < np.inf:
            raise UsageError(f"min-ess must be a finite, non-negative number (got {self.min_ess})")
        if not self.max_divergences >= 0:
            raise UsageError(f"max-divergences must be non-negative (got {self.max_divergences})")
        if not 0 <= self.min_ebfmi < np.inf:
            raise UsageError(f"min-ebfmi must be a finite, non-negative number (got {self.min_ebfmi})")
        if not self.max_treedepth_hits >= 0:
            raise UsageError(f"max-treedepth-hits must be non-negative (got {self.max_treedepth_hits})")
        if not 1 <= self.ssif_ratio < np.inf:
            raise UsageError(f"ssif-ratio must be a finite number of at least 1 (got {self.ssif_ratio})")
        if not 0 <= self.max_ll_gap < np.inf:
            raise UsageError(f"max-ll-gap must be a finite, non-negative number (got {self.max_ll_gap})")
        for pattern, rhat_limit, ess_limit in self.per_variable:
            if rhat_limit is not None and not 1.0 <= rhat_limit < np.inf:
                raise UsageError(f"per-variable {pattern!r}: max-rhat must be a finite number of at least 1 "
                                 f"(got {rhat_limit})")  # fmt: skip
            if ess_limit is not None and not 0 <= ess_limit < np.inf:
                raise UsageError(f"per-variable {pattern!r}: min-ess must be a finite, non-negative number "
                                 f"(got {ess_limit})")  # fmt: skip

    def for_chains(self, n_chains: int) -> Thresholds:
        """These limits with ``min_ess`` concrete: :data:`MIN_ESS_PER_CHAIN` per chain when none was given."""
        if self.min_ess is not None:
            return self
        return replace(self, min_ess=float(MIN_ESS_PER_CHAIN * max(n_chains, 1)), ess_per_chain=True)

    @property
    def min_ess_text(self) -> str:
        """``"400 (100 per chain)"`` for the per-chain default, else the limit: how reports state it."""
        if self.min_ess is None:
            return f"{MIN_ESS_PER_CHAIN} per chain"
        return f"{self.min_ess:g}" + (f" ({MIN_ESS_PER_CHAIN} per chain)" if self.ess_per_chain else "")

    def limits(self, names: Sequence[str], variables: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """R-hat and ESS limits per parameter ``(n,)`` each, and the ``per_variable`` patterns matching nothing.

        ``min_ess`` must be concrete (:meth:`for_chains`).
        """
        if self.min_ess is None:
            raise ValueError("Thresholds.limits needs a concrete min_ess: call for_chains(n_chains) first")
        max_rhat = np.full(len(names), float(self.max_rhat))
        min_ess = np.full(len(names), float(self.min_ess))
        unmatched = []
        for pattern, rhat_limit, ess_limit in self.per_variable:
            hit = matches(pattern, names, variables)
            if not hit.any():
                unmatched.append(pattern)
            if rhat_limit is not None:
                max_rhat[hit] = rhat_limit
            if ess_limit is not None:
                min_ess[hit] = ess_limit
        return max_rhat, min_ess, unmatched
