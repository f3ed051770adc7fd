"""Statistics of draws ``(chain, draw, n)``, batched over the ``n`` parameters; nothing here judges.

The package's own namespace is the default report's statistics (R-hat, bulk
and tail ESS, MCSE, quantiles, autocorrelation, IAT, SSIF and
:func:`summarize`, which computes them all at once), defined in
:mod:`.batched` on the shared kernels beside it (:mod:`._ranks`,
:mod:`._autocov`, :mod:`._layout`, :mod:`._blocks`). Everything else is a
module of its source, loaded only when asked for: R ``coda``'s diagnostics
(:mod:`.coda`, on the AR spectral density of :mod:`.spectral`), nested R-hat
(:mod:`.nested_rhat`), quantile ESS and the HDI (:mod:`.quantile_ess`),
emcee's autocorrelation time (:mod:`.emcee_tau`), and :mod:`.classic`, which
gathers them into one result.

A new statistic goes in the module of its source, batched over parameters,
tested equal to its reference implementation (``docs/architecture.md``).
"""

from mcmc.diagnostics.stats.batched import (
    DEFAULT_LAGS,
    DEFAULT_PROBS,
    MIN_DRAWS,
    TAIL_PROB,
    acf,
    by_blocks,
    ess_bulk,
    ess_mean,
    ess_quantile,
    ess_sd,
    ess_tail,
    iat,
    mad,
    mcse_mean,
    mcse_sd,
    mean,
    quantile_label,
    quantiles,
    rhat,
    rhat_split,
    sd,
    ssif,
    status_flags,
    summarize,
)

__all__ = [
    "DEFAULT_LAGS", "DEFAULT_PROBS", "MIN_DRAWS", "TAIL_PROB", "acf", "by_blocks", "ess_bulk", "ess_mean",
    "ess_quantile", "ess_sd", "ess_tail", "iat", "mad", "mcse_mean", "mcse_sd", "mean", "quantile_label",
    "quantiles", "rhat", "rhat_split", "sd", "ssif", "status_flags", "summarize",
]  # fmt: skip
