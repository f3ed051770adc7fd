"""The checks of a report in words: each check's message and, when it failed, advice.

:func:`report_checks` turns judged parameters and the sampler's facts into
:class:`Check` objects whose messages make up the
verdict line. Every failed check carries advice, as CmdStan's ``diagnose`` and
ArviZ give it (:data:`ADVICE`), in the words of the program that wrote the
draws (:mod:`~mcmc.diagnostics.report.vocabulary`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mcmc.diagnostics.report.parameters import STATUSES, Parameter, by_badness, ess_fraction
from mcmc.diagnostics.report.sampler import Sampler
from mcmc.diagnostics.report.thresholds import Thresholds
from mcmc.diagnostics.report.vocabulary import VOCABULARY, Words


@dataclass(frozen=True)
class Check:
    """One check: its outcome and, if it concerns parameters, which ones failed.

    ``severity`` is ``"error"`` (a failure fails the run) or ``"warning"``
    (reported, never changes the exit code unless the report is strict).
    ``chains`` lists the chains a per-chain check failed in (E-BFMI).
    ``advice`` says what to do when it failed (:data:`ADVICE`), empty when it passed.
    """

    name: str
    passed: bool
    message: str
    parameters: tuple[str, ...] = ()
    severity: str = "error"
    chains: tuple[int, ...] = ()
    advice: str = ""



#: What to do about each failed check, in the words of CmdStan's ``diagnose``, Stan's
#: warnings guide and ArviZ; carried by :attr:`Check.advice` so every renderer shows it.
#: ``{draws}``, ``{warmup}``, ``{more_warmup}``, ``{target_accept}``, ``{max_treedepth}``
#: are filled in the words of the program that wrote the draws (:func:`advice`).
ADVICE = {
    "finite": "non-finite draws mean the log density or a transform overflowed: check the model and its initial values",
    "rhat": "the chains have not mixed: {more_warmup}, start the chains from better (dispersed but "
    "sensible) initial values, or look for multimodality; more draws help only a slowly mixing chain",
    "ess": "too few effective draws for reliable estimates: draw more{draws}, or make each draw worth more "
    "(a better tuned sampler, a reparameterization that removes strong correlations)",
    "stuck": "the sampler never accepted a move: check the initial values, the step size or proposal scale, "
    "and the log density",
    "constant": "a parameter fixed by construction (a Cholesky factor's zero) is fine; otherwise the sampler "
    "never moved it",
    "divergences": "raise the target acceptance{target_accept} so the step size shrinks, or reparameterize: the "
    "non-centered form for hierarchical models",
    "treedepth": "an efficiency problem, not a bias: raise the maximum tree depth{max_treedepth}, or reparameterize "
    "to remove strong correlations or scale differences",
    "ebfmi": "the momentum resampling explores the energy poorly (Betancourt 2016): reparameterize (the "
    "non-centered form for hierarchical models, a transform for heavy tails); more warm-up{warmup} can help a "
    "badly adapted metric",
    "ssif": "trust the bulk ESS: SSIF's ESS assumes an AR(1) chain and here clears the ESS limit the "
    "rank-normalized ESS does not",
    "weights": "the weights are too unequal for precise estimates: draw more{draws}, or use a sampler that "
    "moves through the posterior (gibbs) when the evidence is unlikely under the prior",
    "pareto-k": "the weights' tail is too heavy for any sample size to fix (Vehtari et al. 2024): the proposal "
    "misses part of the target; use a wider or heavier-tailed proposal, or an MCMC sampler",
    "pareto-k-variance": "the estimates converge more slowly than their MCSE says: draw more, or use a wider "
    "or heavier-tailed proposal",
    "lp": "the log density has not mixed even where the parameters look fine: run longer or look at the "
    "parameters the log density depends on",
}


def advice(name: str, words: Words = VOCABULARY["mcmc"]) -> str:  # noqa: B008 - a NamedTuple, immutable
    """What to do about the failed check ``name``, in ``words``: the settings as the writing program names them."""
    def inside(setting: str | None) -> str:
        return f" ({setting})" if setting else ""

    if words.warmup_note:
        more_warmup = words.warmup_note
    else:
        more_warmup = "run a longer warm-up" + inside(words.warmup)
    if words.target_accept:
        target_accept = f" ({words.target_accept} 0.9 to 0.99)"
    else:
        target_accept = " (0.9 to 0.99: Stan's adapt_delta, PyMC's target_accept)"
    return ADVICE.get(name, "").format(
        draws=inside(words.draws), warmup=inside(words.warmup), more_warmup=more_warmup,
        target_accept=target_accept, max_treedepth=inside(words.max_treedepth),
    )  # fmt: skip


_MAX_NAMES = 6  # failing parameters named in the verdict line before "and N more"


def _names(names: Sequence[str]) -> str:
    if len(names) <= _MAX_NAMES:
        return ", ".join(names)
    return ", ".join(names[:_MAX_NAMES]) + f" and {len(names) - _MAX_NAMES} more"


def _limit_text(params: Sequence[Parameter], attr: str, general: float) -> str:
    """``"1.01"`` when every parameter in ``params`` has that limit, else ``"its limit"`` (per-variable limits)."""
    values = {getattr(p, attr) for p in params}
    return f"{values.pop():g}" if len(values) == 1 else "its limit"


def report_checks(
    params: Sequence[Parameter], sampler: Sampler, t: Thresholds, log_density: Parameter | None = None,
    words: Words = VOCABULARY["mcmc"],  # noqa: B008 - a NamedTuple, immutable
) -> list[Check]:
    """The checks of a report; the advice of each failed one in ``words`` (the writing program's settings)."""
    checks: list[Check] = []

    def add(name: str, passed: bool, message: str, parameters: Sequence[str] = (), severity: str = "error",
            chains: Sequence[int] = ()) -> None:  # fmt: skip
        checks.append(Check(name, passed, message, tuple(parameters), severity, tuple(chains),
                            "" if passed else advice(name, words)))  # fmt: skip

    by = {s: [p.name for p in params if p.status == s] for s in STATUSES}
    nonfinite = [p.name for p in by_badness([p for p in params if p.status in ("nan", "inf")])]
    msg = f"non-finite draws in {_names(nonfinite)}" if nonfinite else "all draws finite"
    add("finite", not nonfinite, msg, nonfinite)
    # Every list of names is worst first: "and N more" must never hide the worst one.
    bad = by_badness([p for p in params if p.status == "rhat"])
    undefined = [p.name for p in bad if not np.isfinite(p.rhat)]
    if bad:
        msg = f"R-hat > {_limit_text(bad, 'max_rhat', t.max_rhat)} for {_names([p.name for p in bad])}"
    else:
        msg = f"R-hat <= {t.max_rhat:g}" + (" (per-variable limits where set)" if t.per_variable else "")
    if undefined:
        msg += f" (undefined for {_names(undefined)})"
    add("rhat", not bad, msg, [p.name for p in bad])
    # A parameter failing R-hat usually fails ESS too; list it under both so
    # CI logs show every problem, but the status names the worse one.
    low = by_badness([p for p in params if p.ess_bulk_low or p.ess_tail_low], key=ess_fraction)
    if low:
        limit = _limit_text(low, "min_ess", t.min_ess)
        if limit == f"{t.min_ess:g}":
            limit = t.min_ess_text
        msg = f"bulk or tail ESS < {limit} for {_names([p.name for p in low])}"
    else:
        msg = f"ESS >= {t.min_ess_text}" + (" (per-variable limits where set)" if t.per_variable else "")
    add("ess", not low, msg, [p.name for p in low])
    if params and len(by["constant"]) == len(params):
        # One fixed entry (a Cholesky factor's zero) is normal; nothing moving at all
        # is a sampler that never accepted a move, and no convergence to speak of.
        add("stuck", False, "no parameter moved: the sampler is stuck", by["constant"])
    elif by["constant"]:
        add("constant", False, f"constant in every draw: {_names(by['constant'])}", by["constant"], "warning")
    if sampler.divergences is not None:
        n, pct = sampler.divergences, sampler.divergence_percent or 0.0
        ok = n <= t.max_divergences
        msg = f"{n} of {sampler.transitions} ({pct:.2f}%) transitions divergent"
        if not ok:
            msg += f" (at most {t.max_divergences} allowed)"
        add("divergences", ok, msg)
    if sampler.treedepth_hits is not None:
        hits = sampler.treedepth_hits
        ok = hits <= t.max_treedepth_hits
        msg = f"{hits} of {sampler.transitions} transitions hit the maximum tree depth {sampler.max_treedepth}"
        add("treedepth", ok, msg, severity="warning")
    if sampler.ebfmi is not None:
        e = np.asarray(sampler.ebfmi)
        with np.errstate(invalid="ignore"):
            low_chains = np.flatnonzero(~(e >= t.min_ebfmi))
        if low_chains.size:
            msg = "E-BFMI < {:g} in chain {}".format(
                t.min_ebfmi, ", ".join(f"{c} ({e[c]:.2f})" for c in low_chains.tolist())
            )
        else:
            msg = f"E-BFMI >= {t.min_ebfmi:g} in every chain (min {e.min():.2f})"
        add("ebfmi", not low_chains.size, msg, chains=low_chains.tolist())
    if log_density is not None and log_density.status in ("nan", "inf", "rhat", "ess"):
        lp = log_density
        why = {
            "nan": "has NaN draws",
            "inf": "has infinite draws",
            "rhat": f"R-hat {lp.rhat:.3f} > {lp.max_rhat:g}",
            "ess": f"bulk/tail ESS {_floor(lp.ess_bulk)}/{_floor(lp.ess_tail)} < {lp.min_ess:g}",
        }[lp.status]
        add("lp", False, f"the log density lp {why}", ["lp"], "warning")
    disagree = [p.name for p in by_badness([p for p in params if p.ssif_disagrees], key=ess_fraction)]
    if disagree:
        add(
            "ssif",
            False,
            f"ESS by SSIF clears the ESS limit but bulk ESS does not for {_names(disagree)}",
            disagree,
            "warning",
        )
    return checks


def _floor(value: float) -> str:
    return str(int(np.floor(value))) if np.isfinite(value) else "undefined"
