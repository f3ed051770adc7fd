"""``check``: the per-parameter statistics of a run, judged, into one :class:`~mcmc.diagnostics.report.report.Report`.

This layer decides; it never prints. :func:`check` takes a :class:`~mcmc.core.chains.Chains`,
flattens the selected variables into one ``(chain, draw, n)`` array, calls
:func:`mcmc.diagnostics.stats.summarize` once for all ``n`` scalar parameters, and
turns the numbers into records, checks and a verdict that the command line renders.

Decisions follow the literature and the tools practitioners already trust:

* R-hat is the rank-normalized split R-hat, the maximum of the bulk and folded
  versions, and ESS is reported for the bulk and the tails, judged against the
  limits of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization,
  folding, and localization: an improved R-hat for assessing convergence of
  MCMC", Bayesian Analysis 16(2).
* SSIF, the sample size inflation factor ``(1 + r1) / (1 - r1)`` from the
  lag-1 autocorrelation, is exact for AR(1) chains only; its ESS is shown beside
  bulk ESS and flagged only where trusting it would mislead: its ESS clears
  ``min_ess`` and the rank-normalized bulk ESS does not (and they differ by more
  than ``ssif_ratio``, 1 by default). Elsewhere a disagreement changes no
  decision, and on ordinary NUTS runs (negative lag-1 autocorrelation, long
  positive tails) SSIF and bulk ESS routinely differ by more than 2x.
* The log density (``lp``, CmdStan's ``lp__``) gets its own row when the file
  has it, judged like a parameter but only warned about (it is not a parameter
  of the model). Each parameter also gets its own move rate, which is what
  matters for component-wise (Gibbs, Metropolis-within-Gibbs) samplers; the
  sampler-level checks are :func:`mcmc.diagnostics.report.sampler.sampler_summary`'s.

Every parameter gets an explicit status: ``nan`` or ``inf`` (non-finite draws),
``constant`` (one value in every draw of every chain: reported, not a failure,
as for fixed entries of a Cholesky factor), ``rhat``, ``ess``, or ``ok``. When
every selected parameter is constant the run fails (check ``stuck``): nothing
moved, so R-hat and ESS, undefined, cannot vouch for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError, UsageError
from mcmc.core.weights import kish_ess, weighted_moments, weighted_quantiles
from mcmc.diagnostics import stats
from mcmc.diagnostics.report.parameters import Parameter, rank_failing
from mcmc.diagnostics.report.report import Report, WeightsSummary
from mcmc.diagnostics.report.sampler import ACCEPTANCE_FROM_DRAWS, Acceptance, Sampler, sampler_summary
from mcmc.diagnostics.report.selection import flatten, select
from mcmc.diagnostics.report.thresholds import Thresholds
from mcmc.diagnostics.report.verdict import Check, advice, report_checks
from mcmc.diagnostics.report.vocabulary import ensemble_of, words_of
from mcmc.diagnostics.stats import DEFAULT_LAGS, DEFAULT_PROBS, quantile_label
from mcmc.diagnostics.stats.emcee_tau import integrated_time


def check(
    chains: Chains,
    *,
    var: Sequence[str] | None = None,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen, so a shared default is safe
    probs: Sequence[float] = DEFAULT_PROBS,
    lags: Sequence[int] = DEFAULT_LAGS,
    source: Sequence[str] = (),
    strict: bool = False,
) -> Report:
    """Diagnose ``chains``: statistics for every selected scalar, sampler checks, verdict.

    Parameters
    ----------
    chains
        Draws ``(chain, draw, *shape)`` per variable, optional sampler statistics.
    var
        Variable or scalar names, or globs (``*``, ``?``) matching whole ones; all when empty.
    thresholds
        Limits of the checks.
    probs
        Quantile probabilities, each strictly between 0 and 1.
    lags
        Autocorrelation lags (non-negative integers).
    source
        The file names, recorded in the report.
    strict
        Warnings fail the run too.

    Returns
    -------
    Report
    """
    if is_topic_model(chains):
        return check_topic_model(chains, thresholds=thresholds, probs=probs, lags=lags, source=source, strict=strict)
    if is_weighted(chains):
        return check_weighted(chains, var=var, thresholds=thresholds, probs=probs, source=source, strict=strict)
    # Duplicates would collapse in the label -> value maps and misalign CSV columns.
    probs = tuple(dict.fromkeys(float(p) for p in probs))
    lags = tuple(dict.fromkeys(int(k) for k in lags))
    if not probs or not all(0 < p < 1 for p in probs):
        raise UsageError(f"quantiles must lie strictly between 0 and 1 (got {', '.join(map(str, probs))})")
    if not lags or any(k < 0 for k in lags):
        raise UsageError(f"lags must be non-negative integers (got {', '.join(map(str, lags))})")

    notes = []
    judged = chains.attrs.get("judge")
    if not var and isinstance(judged, (list, tuple)) and judged:
        # The target named the variables that identify convergence (a neural network's
        # weights are not identifiable): every command judges those, diagnose too.
        var = [str(v) for v in judged]
        notes.append(f"judged on {', '.join(var)}, as the file asks ({chains.attrs.get('judge_reason', 'the target')}"
                     "); --var selects others")  # fmt: skip
    selection = select(chains, var)
    x = flatten(chains, selection)
    n_chains, n_draws, n_params = x.shape
    if n_params == 0:
        # Nothing to judge is not a pass: a CI gate must not wave through an empty file.
        raise InputError(", ".join(source) or None, "has no parameters to judge")
    thresholds = thresholds.for_chains(n_chains)
    max_rhat, min_ess, unmatched = thresholds.limits(selection.names, selection.variables)
    params = _parameters(x, selection.names, selection.variables, probs, lags, thresholds, max_rhat, min_ess)
    log_density = None
    lp = chains.sample_stats.get("lp")
    if lp is not None and np.shape(lp)[:2] == (n_chains, n_draws):
        # Its own summarize call: stacking it onto x would copy every draw.
        lp_x = np.asarray(lp, dtype=np.float64).reshape(n_chains, n_draws, 1)
        limits = np.array([float(thresholds.max_rhat)]), np.array([float(thresholds.min_ess)])
        log_density = _parameters(lp_x, ["lp"], ["lp"], probs, lags, thresholds, *limits)[0]
    sampler = sampler_summary(chains)
    ensemble = ensemble_of(chains.attrs) if n_chains > 1 else None
    if ensemble is not None:
        params, note = _walkers(x, params, ensemble)
        notes.append(note)
    if n_chains == 1:
        notes.append("1 chain: R-hat compares the two halves of the chain (split R-hat)")
    if n_draws < 4:
        notes.append(f"{n_draws} draw{'s' if n_draws != 1 else ''} per chain: R-hat and ESS need at least 4")
    elif n_draws < 4 * max(lags):
        notes.append(f"autocorrelations at lags beyond {n_draws // 4} rest on few pairs of draws")
    for pattern in unmatched:
        notes.append(f"per-variable limits for {pattern!r} match no parameter")
    return Report(
        source=tuple(source),
        n_chains=n_chains,
        n_draws=n_draws,
        thresholds=thresholds,
        probs=probs,
        lags=lags,
        parameters=params,
        sampler=sampler,
        checks=tuple(report_checks(params, sampler, thresholds, log_density, words_of(chains.attrs))),
        notes=tuple(notes),
        draws=x,
        worst=rank_failing(params),
        log_density=log_density,
        strict=strict,
        ensemble=ensemble,
    )


def _walkers(x: np.ndarray, params: tuple[Parameter, ...], sampler: str) -> tuple[tuple[Parameter, ...], str]:
    """The parameters with emcee's autocorrelation time, and the one note that says what walkers are."""
    tau, reliable = integrated_time(x)
    params = tuple(replace(p, iat_emcee=float(t)) for p, t in zip(params, tau.tolist(), strict=True))
    finite = tau[np.isfinite(tau)]
    longest = f"{finite.max():.3g}" if finite.size else "undefined"
    note = (
        f"the {x.shape[0]} chains are the walkers of one {sampler} ensemble: they move together, so they are not "
        f"independent chains and R-hat across them is approximate; {sampler}'s own measure is its autocorrelation "
        f"time tau (the tau column; longest {longest}), and it asks for runs longer than 50 tau"
        + ("" if bool(np.all(reliable[np.isfinite(tau)])) else f" ({x.shape[1]} draws are not, for some parameters)")
    )
    return params, note


def _parameters(
    x: np.ndarray,
    names: Sequence[str],
    variables: Sequence[str],
    probs: Sequence[float],
    lags: Sequence[int],
    thresholds: Thresholds,
    max_rhat: np.ndarray,
    min_ess: np.ndarray,
) -> tuple[Parameter, ...]:
    """One :class:`Parameter` per column of ``x (chain, draw, n)``, judged by the limits ``(n,)``."""
    n_draws = x.shape[1]
    s = stats.summarize(x, probs=probs, lags=lags)
    flags = {k: np.asarray(s[k], dtype=bool) for k in ("constant", "nan", "inf")}

    with np.errstate(invalid="ignore", divide="ignore"):
        moved = x[:, 1:, :] != x[:, :-1, :]
        move_rate = moved.mean(axis=(0, 1)) if n_draws > 1 else np.full(x.shape[2], np.nan)
        ess_bulk = np.asarray(s["ess_bulk"], dtype=float)
        ess_ssif = np.asarray(s["ess_ssif"], dtype=float)
        # Only where SSIF alone would pass a parameter the rank ESS fails does
        # the disagreement change a decision (issue 10: elsewhere it is noise).
        disagrees = (ess_ssif >= min_ess) & ~(ess_bulk >= min_ess) & (ess_ssif > thresholds.ssif_ratio * ess_bulk)

    status = _statuses(s, flags, max_rhat, min_ess)
    judged = np.isin(np.asarray(status, dtype=object), ("rhat", "ess"))
    disagrees &= judged
    with np.errstate(invalid="ignore"):
        bulk_low = (judged & ~(ess_bulk >= min_ess)).tolist()
        tail_low = (judged & ~(np.asarray(s["ess_tail"], dtype=float) >= min_ess)).tolist()
    quants = np.asarray(s["quantiles"], dtype=float)
    qmcse = np.asarray(s["mcse_quantiles"], dtype=float).T.tolist()
    acf = np.asarray(s["acf"], dtype=float)
    qlabels = [quantile_label(p) for p in probs]
    cols = {k: np.asarray(s[k], dtype=float).tolist() for k in _SCALAR_KEYS}
    qt, at = quants.T.tolist(), acf.tolist()
    mv, dis = move_rate.tolist(), disagrees.tolist()
    mr, me = max_rhat.tolist(), min_ess.tolist()
    return tuple(
        Parameter(
            name=name,
            variable=variable,
            mean=cols["mean"][i],
            sd=cols["sd"][i],
            mad=cols["mad"][i],
            quantiles=dict(zip(qlabels, qt[i], strict=True)),
            mcse_quantiles=dict(zip(qlabels, qmcse[i], strict=True)),
            mcse_mean=cols["mcse_mean"][i],
            mcse_sd=cols["mcse_sd"][i],
            ess_bulk=cols["ess_bulk"][i],
            ess_tail=cols["ess_tail"][i],
            rhat=cols["rhat"][i],
            rhat_split=cols["rhat_split"][i],
            ssif=cols["ssif"][i],
            ess_ssif=cols["ess_ssif"][i],
            ssif_disagrees=bool(dis[i]),
            acf=dict(zip(lags, at[i], strict=True)),
            iat=cols["iat"][i],
            acceptance=mv[i],
            status=status[i],
            ess_bulk_low=bulk_low[i],
            ess_tail_low=tail_low[i],
            max_rhat=mr[i],
            min_ess=me[i],
        )
        for i, (name, variable) in enumerate(zip(names, variables, strict=True))
    )


_SCALAR_KEYS = (
    "mean", "sd", "mad", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail",
    "rhat", "rhat_split", "ssif", "ess_ssif", "iat",
)  # fmt: skip


def _statuses(
    s: Mapping[str, Any], flags: Mapping[str, np.ndarray], max_rhat: np.ndarray, min_ess: np.ndarray
) -> list[str]:
    rhat = np.asarray(s["rhat"], dtype=float)
    bulk, tail = np.asarray(s["ess_bulk"], dtype=float), np.asarray(s["ess_tail"], dtype=float)
    with np.errstate(invalid="ignore"):
        # An undefined (NaN) R-hat or ESS on finite, non-constant draws (too few
        # draws, chains stuck at different values) cannot establish convergence.
        bad_rhat = ~(rhat <= max_rhat)
        bad_ess = ~((bulk >= min_ess) & (tail >= min_ess))
    # Later assignments win: the most fundamental problem names the status.
    status = np.full(rhat.shape, "ok", dtype=object)
    status[bad_ess] = "ess"
    status[bad_rhat] = "rhat"
    status[flags["constant"]] = "constant"
    status[flags["inf"]] = "inf"
    status[flags["nan"]] = "nan"
    return status.tolist()


def is_weighted(chains: Chains) -> bool:
    """True for weighted independent draws (importance sampling, likelihood weighting): ``attrs["weighted"]``."""
    return bool(chains.attrs.get("weighted")) and "log_weight" in chains.sample_stats


def _inside(setting: str | None) -> str:
    return f" ({setting})" if setting else ""


def check_weighted(
    chains: Chains,
    *,
    var: Sequence[str] | None = None,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen
    probs: Sequence[float] = DEFAULT_PROBS,
    source: Sequence[str] = (),
    strict: bool = False,
) -> Report:
    """The one judge of weighted draws (importance sampling, likelihood weighting): the weights, and estimates.

    A weighted sample is not a chain: R-hat and the autocorrelation ESS do not
    apply (the draws are independent), and what limits its precision is the
    weights. Two checks, on all the weights (``sample_stats["log_weight"]``)
    together:

    * ``ess``: Kish's effective sample size ``(sum w)^2 / sum w^2`` (Kish
      1965) against the same limit as a chain's draws (100 per chain by
      default), so every command says the same of the same run;
    * ``pareto-k``: the Pareto ``k`` of the weights' upper tail
      (:func:`mcmc.diagnostics.stats.importance.pareto_khat`; Vehtari et al.
      2024). It fails at ``k >= min(1 - 1/log10 S, 0.7)`` for ``S`` draws
      (equation 13 of the paper: at 0.7 and above no sample size makes the
      estimate reliable, below it a small sample may still be too small;
      the advice says how many draws the ``k`` needs); between 0.5 and that
      threshold it warns: the weights' variance is infinite, so the delta
      method's MCSE understates the error. Fewer than 25 draws of positive
      weight give no ``k`` (a warning).

    Every parameter gets the self-normalised mean and sd with their
    delta-method MCSE (:func:`mcmc.core.weights.weighted_moments`; Owen
    2013, section 9.2) and weighted quantiles; its ESS columns hold the Kish
    ESS, R-hat and the autocorrelations are undefined (NaN).

    Parameters
    ----------
    chains
        Weighted draws: variables ``(chain, draw, ...)`` and ``log_weight`` ``(chain, draw)``.
    var, thresholds, probs, source, strict
        As for :func:`check`.
    """
    # start-up: the Pareto fit's module loads SciPy's special functions, only for weighted draws
    from mcmc.diagnostics.stats.importance import (
        K_FINITE_VARIANCE,
        K_MAX,
        MIN_DRAWS,
        khat_threshold,
        min_draws,
        pareto_khat,
    )

    probs = tuple(dict.fromkeys(float(p) for p in probs))
    if not probs or not all(0 < p < 1 for p in probs):
        raise UsageError(f"quantiles must lie strictly between 0 and 1 (got {', '.join(map(str, probs))})")
    selection = select(chains, var)
    x = flatten(chains, selection)
    n_chains, n_draws, n_params = x.shape
    if n_params == 0:
        raise InputError(", ".join(source) or None, "has no parameters to judge")
    log_w = np.asarray(chains.sample_stats["log_weight"], dtype=float)
    if log_w.shape != (n_chains, n_draws):
        raise InputError(", ".join(source) or None, f"log_weight has shape {log_w.shape}; expected "
                         f"{(n_chains, n_draws)} (chain, draw)")  # fmt: skip
    thresholds = thresholds.for_chains(n_chains)
    total = n_chains * n_draws
    # a NaN or +inf log weight leaves no weight usable: nothing is estimated, and the check says which
    nan, plus_inf = int(np.sum(np.isnan(log_w))), int(np.sum(log_w == np.inf))
    positive = int(np.sum(np.isfinite(log_w))) if nan == 0 and plus_inf == 0 else 0
    kish = float(kish_ess(log_w)) if positive else 0.0
    finite = positive > 0 and np.isfinite(kish)
    ess_ok = finite and kish >= float(thresholds.min_ess)
    relation = ">=" if ess_ok else "<"
    unusable = (f"{nan} of {total} log weights are NaN" if nan else
                f"{plus_inf} of {total} log weights are +inf" if plus_inf else "every draw has weight zero")  # fmt: skip
    message = f"Kish ESS of the weights {kish:.0f} {relation} {thresholds.min_ess_text}" if finite and kish > 0 else (
        f"the weights have no usable ESS ({unusable})")  # fmt: skip
    words = words_of(chains.attrs)
    checks = [Check("ess", ess_ok, message, (), "error", (), "" if ess_ok else advice("weights", words))]
    k = pareto_khat(log_w) if positive else float("nan")
    limit = khat_threshold(total)
    if not np.isfinite(k) and positive < MIN_DRAWS:
        checks.append(Check("pareto-k", False, f"Pareto k not computed: {positive} draws of positive weight, "
                            f"fewer than {MIN_DRAWS}", (), "warning", (), f"draw more{_inside(words.draws)}"))  # fmt: skip
    elif not np.isfinite(k):
        checks.append(Check("pareto-k", True, "Pareto k undefined: the largest weights are equal (no tail)"))
    elif k >= limit:
        need = min_draws(k)
        todo = (advice("pareto-k", words) if k >= K_MAX else
                f"the estimate needs about {need:.0f} draws at this k (Vehtari et al. 2024): draw more"
                f"{_inside(words.draws)}, or use a proposal closer to the target")  # fmt: skip
        checks.append(Check("pareto-k", False, f"Pareto k of the weights {k:.2f} >= {limit:.2f} (min(1 - "
                            f"1/log10 {total}, {K_MAX:g}))", (), "error", (), todo))  # fmt: skip
    elif k > K_FINITE_VARIANCE:
        checks.append(Check("pareto-k", False, f"Pareto k of the weights {k:.2f} > {K_FINITE_VARIANCE:g}: their "
                            "variance is infinite and the MCSE understates the error", (), "warning", (),
                            advice("pareto-k-variance", words)))  # fmt: skip
    else:
        checks.append(Check("pareto-k", True, f"Pareto k of the weights {k:.2f} <= {K_FINITE_VARIANCE:g}"))
    params = _weighted_parameters(x, log_w, selection.names, selection.variables, probs, kish, ess_ok, positive,
                                  thresholds, weighted_moments, weighted_quantiles)  # fmt: skip
    nan = (float("nan"),) * n_chains
    sampler = Sampler(Acceptance(nan, float("nan"), ACCEPTANCE_FROM_DRAWS, (), False), total)
    notes = [f"weighted draws ({chains.attrs.get('sampler', 'importance')}): self-normalised estimates with "
             "delta-method MCSE; no R-hat or autocorrelation (the draws are independent)"]  # fmt: skip
    return Report(
        source=tuple(source), n_chains=n_chains, n_draws=n_draws, thresholds=thresholds, probs=probs, lags=(),
        parameters=params, sampler=sampler, checks=tuple(checks), notes=tuple(notes), draws=x,
        worst=rank_failing(params), kind="weighted", strict=strict,
        weights=WeightsSummary(kish, k, limit, min_draws(k) if np.isfinite(k) else float("nan"), total, positive),
    )  # fmt: skip


def _weighted_parameters(
    x: np.ndarray, log_w: np.ndarray, names: Sequence[str], variables: Sequence[str], probs: Sequence[float],
    kish: float, ess_ok: bool, positive: int, thresholds: Thresholds, moments: Any, quantiles: Any,
) -> tuple[Parameter, ...]:  # fmt: skip
    """One :class:`Parameter` per column of ``x``: self-normalised moments and quantiles, the Kish ESS."""
    n = x.shape[2]
    if positive == 0:
        m = {k: np.full(n, np.nan) for k in ("mean", "mcse_mean", "sd", "mcse_sd")}
        q = np.full((len(probs), n), np.nan)
    else:
        m = moments(x, log_w)
        q = quantiles(x, log_w, tuple(probs))
    flags = stats.status_flags(x)
    labels = [quantile_label(p) for p in probs]
    nan = float("nan")
    out = []
    for i, (name, variable) in enumerate(zip(names, variables, strict=True)):
        if flags["nan"][i]:
            status = "nan"
        elif flags["inf"][i]:
            status = "inf"
        elif flags["constant"][i]:
            status = "constant"
        else:
            status = "ok" if ess_ok else "ess"
        out.append(Parameter(
            name=name, variable=variable, mean=float(m["mean"][i]), sd=float(m["sd"][i]), mad=nan,
            quantiles=dict(zip(labels, q[:, i].tolist(), strict=True)), mcse_mean=float(m["mcse_mean"][i]),
            mcse_sd=float(m["mcse_sd"][i]), ess_bulk=kish, ess_tail=kish, rhat=nan, rhat_split=nan, ssif=nan,
            ess_ssif=nan, ssif_disagrees=False, acf={}, iat=nan, acceptance=nan, status=status,
            ess_bulk_low=status == "ess", ess_tail_low=status == "ess", max_rhat=float(thresholds.max_rhat),
            min_ess=float(thresholds.min_ess),
        ))  # fmt: skip
    return tuple(out)


def is_topic_model(chains: Chains) -> bool:
    """True for the chains file of an LDA fit (``mcmc lda -o``): its log joint is judged as a topic model's."""
    return chains.attrs.get("target") == "lda" and "log_joint_per_token" in chains.posterior


def check_topic_model(
    chains: Chains,
    *,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen
    probs: Sequence[float] = DEFAULT_PROBS,
    lags: Sequence[int] = DEFAULT_LAGS,
    source: Sequence[str] = (),
    strict: bool = False,
) -> Report:
    """The report of an LDA fit's chains: each chain judged on its own trend, the chains compared as modes.

    Topic-model posteriors are multimodal: chains settle in different, equally
    good modes and never agree on the log joint to an R-hat of 1.01, which is
    the wrong rule for them. The rule here is
    :func:`mcmc.diagnostics.report.lda_gate.judge_topic_model`'s: a chain still
    rising through its post-burn-in iterations fails ("still burning in"), a
    chain clearly worse than the best by more than ``thresholds.max_ll_gap``
    nats per token fails, and different modes of similar quality are a
    warning. ``mcmc lda`` and ``mcmc diagnose`` of its chains file both judge
    by this function, so they give the same verdict. The rise is measured
    against the climb from the first sweep, which the chains file records
    (``attrs["first_log_joint_per_token"]``) beside the post-burn-in draws.

    The per-parameter statistics (R-hat, ESS across chains, ...) of the log
    joint are reported, not judged.
    """
    # start-up: the topic-model rule (and SciPy, when it matches topics) only for an LDA chains file
    from mcmc.diagnostics.report.lda_gate import judge_topic_model

    post = np.asarray(chains.posterior["log_joint_per_token"], dtype=np.float64)
    first = chains.attrs.get("first_log_joint_per_token")
    if int(chains.attrs.get("burn_in", 0)) > 0 and isinstance(first, list) and len(first) == post.shape[0]:
        trace, burn_in = np.concatenate([np.asarray(first, dtype=np.float64)[:, None], post], axis=1), 1
    else:  # no burn-in, or a file without the first sweep: the climb starts at the first draw kept
        trace, burn_in = post, 0
    verdict = judge_topic_model(trace, burn_in, max_ll_gap=thresholds.max_ll_gap)

    probs = tuple(dict.fromkeys(float(p) for p in probs))
    lags = tuple(dict.fromkeys(int(k) for k in lags))
    selection = select(chains)
    x = flatten(chains, selection)
    n_chains, n_draws, n_params = x.shape
    thresholds = thresholds.for_chains(n_chains)
    unjudged = np.full(n_params, np.inf), np.zeros(n_params)
    params = tuple(
        p if p.status not in ("rhat", "ess") else replace(p, status="ok", ess_bulk_low=False, ess_tail_low=False)
        for p in _parameters(x, selection.names, selection.variables, probs, lags, thresholds, *unjudged)
    )  # fmt: skip
    failing = tuple(sorted({*verdict.trending, *verdict.worse, *verdict.nonfinite}))
    checks = [
        Check("topic-model", verdict.passed, verdict.message, ("log_joint_per_token",), "error", failing,
              "" if verdict.passed else verdict.advice),
    ]  # fmt: skip
    if verdict.passed and verdict.status == "warning":
        checks.append(Check(
            "modes", False, "the chains settled in different modes of similar quality", ("log_joint_per_token",),
            "warning", verdict.distinct, "use one chain's topics; never average topics across chains",
        ))  # fmt: skip
    return Report(
        source=tuple(source), n_chains=n_chains, n_draws=n_draws, thresholds=thresholds, probs=probs, lags=lags,
        parameters=params, sampler=sampler_summary(chains), checks=tuple(checks), draws=x, kind="topic-model",
        strict=strict, topic_model=verdict,
    )  # fmt: skip

