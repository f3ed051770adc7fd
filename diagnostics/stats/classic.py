"""Classic and supplementary convergence diagnostics: R ``coda``, nested R-hat, quantile ESS, HDI, emcee's tau.

:func:`classic_report` computes them all for draws ``(chain, draw, n)`` and
returns one :class:`ClassicDiagnostics`. Nothing here runs unless asked
(``mcmc diagnose`` computes its default report in :mod:`.stats`). Each
diagnostic lives in the module of its source, with its paper references:
:mod:`.coda`, :mod:`.nested_rhat`, :mod:`.quantiles`, :mod:`.emcee_tau`;
every one is batched over parameters.

Which reference each number equals (tests: ``tests/diagnostics/test_classic.py``
against values stored by ``tests/data/classic/``):

* :func:`~mcmc.diagnostics.stats.coda.gelman_rubin` -- ``coda::gelman.diag`` (Gelman & Rubin 1992; Brooks &
  Gelman 1998 for the multivariate PSRF), ``autoburnin`` both ways;
* :func:`~mcmc.diagnostics.stats.coda.geweke` -- ``coda::geweke.diag`` (Geweke 1992), per chain;
* :func:`~mcmc.diagnostics.stats.coda.heidelberger_welch` -- ``coda::heidel.diag`` (Heidelberger & Welch
  1983), per chain, with coda's ``pcramer``;
* :func:`~mcmc.diagnostics.stats.coda.raftery_lewis` -- ``coda::raftery.diag`` (Raftery & Lewis 1992), per chain;
* :func:`~mcmc.diagnostics.stats.coda.effective_size_ar` -- ``coda::effectiveSize``;
  :func:`~mcmc.diagnostics.stats.coda.batch_se` -- ``coda::batchSE`` on an ``mcmc.list`` (batches of 100 draws; not
  ``posterior::mcse_mean`` nor ``mcmcse``); :func:`~mcmc.diagnostics.stats.coda.rejection_rate` --
  ``coda::rejectionRate`` per chain;
* :func:`~mcmc.diagnostics.stats.nested_rhat.rhat_nested` -- ``arviz_stats.rhat_nested`` (Margossian et al. 2024);
* :func:`~mcmc.diagnostics.stats.quantile_ess.quantile_ess_mcse` -- ``arviz_stats`` ``ess(method="quantile")``,
  ``mcse(method="quantile")``; :func:`~mcmc.diagnostics.stats.quantile_ess.hdi` -- ``arviz_stats.hdi``
  (``method="nearest"``, default ``prob`` 0.89 from ArviZ's ``stats.ci_prob``);
* :func:`~mcmc.diagnostics.stats.emcee_tau.integrated_time` -- ``emcee.autocorr.integrated_time`` (Sokal's
  automatic window, Goodman & Weare's emcee; Foreman-Mackey et al. 2013).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcmc.diagnostics.stats import batched as _stats
from mcmc.diagnostics.stats._layout import as_draws
from mcmc.diagnostics.stats.coda import (
    GelmanRubin,
    HeidelbergerWelch,
    RafteryLewis,
    batch_se,
    effective_size_ar,
    gelman_rubin,
    geweke,
    heidelberger_welch,
    raftery_lewis,
    rejection_rate,
)
from mcmc.diagnostics.stats.emcee_tau import integrated_time
from mcmc.diagnostics.stats.nested_rhat import rhat_nested
from mcmc.diagnostics.stats.quantile_ess import HDI_PROB, QUANTILE_PROBS, hdi, quantile_ess_mcse

__all__ = ["ClassicDiagnostics", "classic_report"]


# --------------------------------------------------------------------------- the report


def _json(value: Any) -> Any:
    """Arrays and numbers as JSON values: lists, ``None`` for NaN and infinities."""
    if isinstance(value, np.ndarray):
        return [_json(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


@dataclass(frozen=True)
class ClassicDiagnostics:
    """Everything :func:`classic_report` computes. ``n`` parameters, ``chain`` chains.

    Per parameter, shape ``(n,)`` (``(k, n)`` where noted); per chain and
    parameter, shape ``(chain, n)``. See ``docs/formats.md`` for the JSON of :meth:`to_dict`.
    """

    names: tuple[str, ...]
    chains: int
    draws: int
    #: coda ``gelman.diag`` with ``autoburnin = TRUE`` (coda's default) and without.
    gelman: GelmanRubin
    gelman_all: GelmanRubin
    #: coda ``geweke.diag`` z-scores (frac1 0.1, frac2 0.5), ``(chain, n)``.
    geweke_z: np.ndarray
    #: coda ``heidel.diag`` (eps 0.1, pvalue 0.05), every array ``(chain, n)``.
    heidel: HeidelbergerWelch
    #: coda ``raftery.diag`` (q 0.025, r 0.005, s 0.95), arrays ``(chain, n)``.
    raftery: RafteryLewis
    #: coda ``effectiveSize`` (AR spectral density at zero, summed over chains).
    ess_ar: np.ndarray
    #: coda ``batchSE`` (batches of 100 draws, all chains pooled).
    batch_se: np.ndarray
    #: coda ``rejectionRate`` per chain ``(chain, n)``.
    rejection_rate: np.ndarray
    #: Quantile probabilities of ``ess_quantile`` and ``mcse_quantile`` ``(len(probs), n)``.
    quantile_probs: tuple[float, ...]
    ess_quantile: np.ndarray
    mcse_quantile: np.ndarray
    #: HDI (``arviz_stats.hdi``) and the equal-tailed interval at the same ``hdi_prob``, ``(2, n)``.
    hdi_prob: float
    hdi: np.ndarray
    eti: np.ndarray
    #: emcee's integrated autocorrelation time and whether ``draw >= 50 tau``.
    iat_emcee: np.ndarray
    iat_emcee_reliable: np.ndarray
    #: Nested R-hat ``(n,)`` and the superchain of each chain; None when no superchains were given.
    superchains: tuple[int, ...] | None = None
    rhat_nested: np.ndarray | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``None`` for undefined numbers); layout in ``docs/formats.md``."""
        labels = [_stats.quantile_label(p) for p in self.quantile_probs]
        params = []
        for j, name in enumerate(self.names):
            stationary = self.heidel.stationary[:, j]
            params.append(
                {
                    "name": name,
                    "psrf": _json(self.gelman.psrf[j]),
                    "psrf_upper": _json(self.gelman.psrf_upper[j]),
                    "psrf_all": _json(self.gelman_all.psrf[j]),
                    "psrf_all_upper": _json(self.gelman_all.psrf_upper[j]),
                    "rhat_nested": None if self.rhat_nested is None else _json(self.rhat_nested[j]),
                    "ess_ar": _json(self.ess_ar[j]),
                    "batch_se": _json(self.batch_se[j]),
                    "ess_quantile": dict(zip(labels, _json(self.ess_quantile[:, j]), strict=True)),
                    "mcse_quantile": dict(zip(labels, _json(self.mcse_quantile[:, j]), strict=True)),
                    "hdi": _json(self.hdi[:, j]),
                    "eti": _json(self.eti[:, j]),
                    "iat_emcee": _json(self.iat_emcee[j]),
                    "iat_emcee_reliable": _json(self.iat_emcee_reliable[j]),
                    "per_chain": {
                        "geweke_z": _json(self.geweke_z[:, j]),
                        "heidel_stationary": _json(stationary),
                        "heidel_start": _json(self.heidel.start[:, j]),
                        "heidel_pvalue": _json(self.heidel.pvalue[:, j]),
                        "heidel_halfwidth_passed": [
                            bool(p) if s else None
                            for p, s in zip(self.heidel.halfwidth_passed[:, j], stationary, strict=True)
                        ],
                        "heidel_mean": _json(self.heidel.mean[:, j]),
                        "heidel_halfwidth": _json(self.heidel.halfwidth[:, j]),
                        "raftery_burnin": _json(self.raftery.burnin[:, j]),
                        "raftery_total": _json(self.raftery.total[:, j]),
                        "raftery_dependence": _json(self.raftery.dependence[:, j]),
                        "rejection_rate": _json(self.rejection_rate[:, j]),
                    },
                }
            )
        return {
            "chains": self.chains,
            "draws": self.draws,
            "gelman": {
                "draws": self.gelman.draws,
                "mpsrf": _json(self.gelman.mpsrf),
                "draws_all": self.gelman_all.draws,
                "mpsrf_all": _json(self.gelman_all.mpsrf),
                "confidence": 0.95,
            },
            "geweke": {"frac1": 0.1, "frac2": 0.5},
            "heidel": {"eps": 0.1, "pvalue": 0.05},
            "raftery": {"q": 0.025, "r": 0.005, "s": 0.95, "nmin": self.raftery.nmin},
            "batch_size": 100,
            "quantile_probs": list(self.quantile_probs),
            "hdi_prob": self.hdi_prob,
            "superchains": None if self.superchains is None else list(self.superchains),
            "parameters": params,
        }


def classic_report(
    draws: np.ndarray,
    names: Sequence[str],
    superchains: Sequence[int] | int | None = None,
    *,
    quantile_probs: Sequence[float] = QUANTILE_PROBS,
    hdi_prob: float = HDI_PROB,
) -> ClassicDiagnostics:
    """The classic diagnostics of R ``coda`` and the supplementary ones of ArviZ and emcee, all at once.

    Parameters
    ----------
    draws : ndarray, shape (chain, draw, n)
    names : sequence of str, length n
    superchains : int or sequence of int, optional
        Superchain id of each chain, or a number ``K`` of superchains (chains
        ``0..C/K-1`` form the first, and so on; ``C`` must be a multiple of
        ``K``). Nested R-hat is computed only when given.
    quantile_probs : sequence of float
        Quantiles whose ESS and MCSE are reported.
    hdi_prob : float
        Probability of the HDI and of the equal-tailed interval beside it.

    Returns
    -------
    ClassicDiagnostics
    """
    x = as_draws(draws)
    c, t, n = x.shape
    names = tuple(names)
    if len(names) != n:
        raise ValueError(f"{len(names)} names for {n} parameters")
    ids = None
    if superchains is not None:
        if isinstance(superchains, (int, np.integer)):
            k = int(superchains)
            if k < 2 or c % k:
                raise ValueError(f"{c} chains cannot form {k} superchains of equal size")
            ids = tuple(int(i) for i in np.repeat(np.arange(k), c // k))
        else:
            ids = tuple(int(i) for i in superchains)
    probs = tuple(float(p) for p in quantile_probs)
    ess_q, mcse_q = quantile_ess_mcse(x, probs)
    tau, reliable = integrated_time(x)
    edge = (1 - hdi_prob) / 2
    return ClassicDiagnostics(
        names=names,
        chains=c,
        draws=t,
        gelman=gelman_rubin(x, autoburnin=True),
        gelman_all=gelman_rubin(x, autoburnin=False),
        geweke_z=geweke(x),
        heidel=heidelberger_welch(x),
        raftery=raftery_lewis(x),
        ess_ar=effective_size_ar(x),
        batch_se=batch_se(x),
        rejection_rate=rejection_rate(x),
        quantile_probs=probs,
        ess_quantile=ess_q,
        mcse_quantile=mcse_q,
        hdi_prob=float(hdi_prob),
        hdi=hdi(x, hdi_prob),
        eti=_stats.quantiles(x, (edge, 1 - edge)),
        iat_emcee=tau,
        iat_emcee_reliable=reliable,
        superchains=ids,
        rhat_nested=None if ids is None else rhat_nested(x, ids),
    )
