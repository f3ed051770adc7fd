"""The summary of an LDA fit that ``mcmc lda`` renders as a table, JSON or CSV."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mcmc.core.lda.config import sampler_class


def fit_report(
    result: Any,
    corpus: Any,
    source: str,
    top: np.ndarray,
    shares: np.ndarray,
    umass: np.ndarray | None,
    npmi: np.ndarray | None,
    cv: np.ndarray | None,
    recoveries: list[Any] | None,
    completion: Any,
    holdout: float,
    *,
    rhat: float | None,
    ess: float | None,
    convergence: dict[str, Any],
) -> dict[str, Any]:
    """The JSON-ready summary of a fit (schema ``mcmc.lda/1``) that every output format renders.

    Per chain: topics with their top words, shares, coherence and, for a
    synthetic corpus, the matched true topic; the final and mean post-burn-in
    log joint per token; held-out perplexity. Across chains: R-hat and bulk ESS
    of the post-burn-in log joint per token (``rhat``, ``ess``), which is
    invariant to topic relabelling (per-topic quantities are only ever
    summarised within a chain), reported and not judged, and ``convergence``,
    the diagnostics layer's verdict as a JSON object: judging a run is its
    business, and ``core`` never imports it.
    """
    post = result.log_joint_per_token[:, result.burn_in :, None]
    mixture = sampler_class(result.method).one_topic_per_document
    chains_out = []
    for c in range(result.chains):
        topics = []
        for k in range(result.n_topics):
            entry: dict[str, Any] = {
                "topic": k,
                "share": float(shares[c, k]),
                "words": [corpus.vocab[w] for w in top[c, k]],
                "probabilities": [float(result.phi[c, k, w]) for w in top[c, k]],
            }
            if umass is not None and npmi is not None and cv is not None:
                entry["umass"] = float(umass[c, k])
                entry["npmi"] = float(npmi[c, k])
                entry["cv"] = float(cv[c, k])
            if result.learned is not None:
                entry["alpha"] = float(result.learned.final_alpha[c, k])
            if recoveries is not None:
                entry["true_topic"] = int(recoveries[c].true_topic[k])
                entry["hellinger"] = float(recoveries[c].hellinger[k])
            topics.append(entry)
        chain: dict[str, Any] = {
            "chain": c,
            "final_log_joint_per_token": float(result.log_joint_per_token[c, -1]),
            "mean_log_joint_per_token": float(post[c].mean()),
            "topics": topics,
        }
        if result.learned is not None:
            chain["learned_alpha_sum"] = float(result.learned.final_alpha[c].sum())
            chain["learned_beta"] = float(result.learned.final_beta[c])
        if completion is not None:
            chain["heldout_perplexity"] = float(completion.perplexity[c])
            chain["heldout_log_likelihood"] = float(completion.log_likelihood[c])
        if umass is not None and npmi is not None and cv is not None:
            for key, score in (("umass", umass), ("npmi", npmi), ("cv", cv)):
                chain[key] = float(np.nanmean(score[c])) if np.isfinite(score[c]).any() else math.nan
        if recoveries is not None:
            r = recoveries[c]
            chain["recovery"] = {
                "mean_hellinger": r.mean_hellinger,
                "max_hellinger": float(np.nanmax(r.hellinger)),
                "min_cosine": float(np.nanmin(r.cosine)),
                "unmatched_hellinger": r.baseline,
            }
        chains_out.append(chain)
    return {
        "schema": "mcmc.lda/1",
        "corpus": {"source": source, "documents": corpus.n_docs, "tokens": corpus.n_tokens, "words": corpus.vocab_size},
        "model": {
            "method": result.method,
            "kernel": result.kernel,
            "topics": result.n_topics,
            "alpha": result.alpha,
            "beta": result.beta,
            # Monte Carlo EM updates of alpha and beta (0: fixed); alpha and beta above are then the start
            "optimize_interval": 0 if result.learned is None else result.learned.interval,
            "optimize_burn_in": None if result.learned is None else result.learned.burn_in,
            "hyperparameter_updates": 0 if result.learned is None else int(result.learned.iterations.size),
            "iterations": result.iterations,
            "burn_in": result.burn_in,
            "chains": result.chains,
            "seed": result.seed,
            "threads": result.threads,
        },
        "sampling_seconds": result.sampling_seconds,
        "tokens_per_second": result.tokens_per_second,
        "log_joint_per_token_rhat": _nan_if_none(rhat),
        "log_joint_per_token_ess_bulk": _nan_if_none(ess),
        # each chain's trend, the chains compared as modes, the matched topics' overlap (docs/formats.md)
        "convergence": convergence,
        "holdout": None
        if completion is None
        else {
            "fraction": holdout,
            "documents": int(completion.theta.shape[1]),
            "scored_tokens": completion.n_tokens,
            "method": "document completion (Wallach et al. 2009): even-position tokens observed, odd-position "
            "tokens scored with phi fixed; "
            + (
                "the document's topic posterior from the observed half, mixture weights = mean training membership"
                if mixture
                else "theta estimated from the observed half by Gibbs sampling"
            ),
        },
        "chains": chains_out,
    }


def _nan_if_none(value: float | None) -> float:
    # the report's number type: undefined is NaN (JSON null), as before the summary moved to diagnostics
    return math.nan if value is None else float(value)
