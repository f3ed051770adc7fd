"""The report of a topic model's fit (schema ``mcmc.lda/1``): topics, scores and the verdict, typed.

:func:`lda_report` reads a fitted :class:`~mcmc.core.lda.pipeline.LdaRun`
(topics, their top words and shares, coherence, held-out perplexity, the
recovery of the true topics of a synthetic corpus) beside the diagnose report
of its chains file, whose verdict is the topic-model rule's
(:func:`mcmc.diagnostics.report.check.check_topic_model`, :mod:`.lda_gate`):
the one judge, so ``mcmc lda`` and ``mcmc diagnose`` of its chains file say
the same. R-hat and ESS of the post-burn-in log joint per token are reported,
not judged; how far the chains' topics agree (:func:`.lda_gate.topic_agreement`)
is reported too. :class:`LdaReport` is what every output format of ``mcmc
lda`` shows; its :meth:`~LdaReport.to_dict` is the JSON document of
``docs/formats.md``, key for key. Nothing here fits, prints or writes a file.

References
----------
Griffiths, T. L. & Steyvers, M. (2004). Finding scientific topics. *PNAS* 101(suppl. 1), 5228-5235.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.diagnostics.report.report import Report

if TYPE_CHECKING:  # start-up: types only; the fit that makes a report has loaded them
    from mcmc.core.lda.pipeline import LdaRun
    from mcmc.diagnostics.report.lda_gate import TopicModelVerdict

__all__ = [
    "SCHEMA", "ChainReport", "Convergence", "CorpusFacts", "HoldoutReport", "LdaReport", "ModelFacts", "Recovery",
    "TopicReport", "lda_report",
]  # fmt: skip

SCHEMA = "mcmc.lda/1"


@dataclass(frozen=True)
class TopicReport:
    """One topic of one chain: its share of the tokens, top words and their probabilities, and its own scores.

    The scores are ``None`` when the run did not make them: coherence
    (``umass``, ``npmi``, ``cv``) with ``--coherence``, ``alpha`` when the
    hyperparameters were learned, ``true_topic`` (-1: unmatched) and
    ``hellinger`` on the synthetic corpus.
    """

    topic: int
    share: float
    words: tuple[str, ...]
    probabilities: tuple[float, ...]
    umass: float | None = None
    npmi: float | None = None
    cv: float | None = None
    alpha: float | None = None
    true_topic: int | None = None
    hellinger: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The topic's JSON record: the scores the run made, and no others."""
        out: dict[str, Any] = {
            "topic": self.topic, "share": self.share, "words": list(self.words),
            "probabilities": list(self.probabilities),
        }  # fmt: skip
        if self.umass is not None:
            out.update(umass=self.umass, npmi=self.npmi, cv=self.cv)
        if self.alpha is not None:
            out["alpha"] = self.alpha
        if self.true_topic is not None:
            out.update(true_topic=self.true_topic, hellinger=self.hellinger)
        return out


@dataclass(frozen=True)
class Recovery:
    """How well a chain found the true topics of the synthetic corpus (Hellinger distance, 0 = identical)."""

    mean_hellinger: float
    max_hellinger: float
    min_cosine: float
    unmatched_hellinger: float


@dataclass(frozen=True)
class ChainReport:
    """One chain: its log joint per token (last sweep, post-burn-in mean), topics and chain-level scores."""

    chain: int
    final_log_joint_per_token: float
    mean_log_joint_per_token: float
    topics: tuple[TopicReport, ...]
    learned_alpha_sum: float | None = None
    learned_beta: float | None = None
    heldout_perplexity: float | None = None
    heldout_log_likelihood: float | None = None
    umass: float | None = None
    npmi: float | None = None
    cv: float | None = None
    recovery: Recovery | None = None

    def to_dict(self) -> dict[str, Any]:
        """The chain's JSON record: the scores the run made, and no others."""
        out: dict[str, Any] = {
            "chain": self.chain, "final_log_joint_per_token": self.final_log_joint_per_token,
            "mean_log_joint_per_token": self.mean_log_joint_per_token, "topics": [t.to_dict() for t in self.topics],
        }  # fmt: skip
        if self.learned_beta is not None:
            out.update(learned_alpha_sum=self.learned_alpha_sum, learned_beta=self.learned_beta)
        if self.heldout_perplexity is not None:
            out.update(heldout_perplexity=self.heldout_perplexity, heldout_log_likelihood=self.heldout_log_likelihood)
        if self.umass is not None:
            out.update(umass=self.umass, npmi=self.npmi, cv=self.cv)
        if self.recovery is not None:
            r = self.recovery
            out["recovery"] = {
                "mean_hellinger": r.mean_hellinger, "max_hellinger": r.max_hellinger, "min_cosine": r.min_cosine,
                "unmatched_hellinger": r.unmatched_hellinger,
            }  # fmt: skip
        return out


@dataclass(frozen=True)
class CorpusFacts:
    """A corpus: where it came from and its size."""

    source: str
    documents: int
    tokens: int
    words: int


@dataclass(frozen=True)
class ModelFacts:
    """The model fitted and how: the JSON document's ``model`` record.

    ``alpha`` and ``beta`` are the starting values when they were learned
    (``optimize_interval`` > 0, ``hyperparameter_updates`` updates made).
    """

    method: str
    kernel: str
    topics: int
    alpha: float
    beta: float
    optimize_interval: int
    optimize_burn_in: int | None
    hyperparameter_updates: int
    iterations: int
    burn_in: int
    chains: int
    seed: int
    threads: int


@dataclass(frozen=True)
class HoldoutReport:
    """Held-out documents scored by document completion (Wallach et al. 2009)."""

    fraction: float
    documents: int
    scored_tokens: int
    method: str


@dataclass(frozen=True)
class Convergence:
    """The verdict on a fit's chains, and how far their topics agree (reported, never judged).

    ``rule`` is the topic-model rule's verdict on the chains file
    (:class:`~.lda_gate.TopicModelVerdict`: each chain's trend, the chains
    compared as modes); ``passed`` and ``verdict`` are the diagnose report's,
    the line ``mcmc lda`` and ``mcmc diagnose`` print; ``topic_overlap`` and
    ``topic_hellinger`` compare the chains' topics, matched one to one
    (``None`` with one chain).
    """

    rule: TopicModelVerdict | None
    passed: bool
    verdict: str
    topic_overlap: float | None
    topic_hellinger: float | None

    def to_dict(self) -> dict[str, Any]:
        """The ``convergence`` record of ``mcmc.lda/1`` (``docs/formats.md``)."""
        return {
            **(self.rule.to_dict() if self.rule is not None else {}),
            "passed": self.passed, "verdict": self.verdict,
            "topic_overlap": self.topic_overlap, "topic_hellinger": self.topic_hellinger,
        }  # fmt: skip


@dataclass(frozen=True)
class LdaReport:
    """Everything ``mcmc lda`` shows of a fit; :meth:`to_dict` is the document ``mcmc.lda/1``.

    Attributes
    ----------
    corpus
        The training documents (the held-out ones excluded).
    model
        The model and the run's settings.
    sampling_seconds, tokens_per_second
        The speed of the sweeps, all chains together.
    rhat, ess_bulk
        R-hat across chains and bulk ESS of the post-burn-in log joint per
        token (NaN: undefined): reported, not judged.
    convergence
        The verdict (:class:`Convergence`).
    holdout
        The held-out scores, or ``None``.
    chains
        One :class:`ChainReport` per chain.
    """

    corpus: CorpusFacts
    model: ModelFacts
    sampling_seconds: float
    tokens_per_second: float
    rhat: float
    ess_bulk: float
    convergence: Convergence
    holdout: HoldoutReport | None
    chains: tuple[ChainReport, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``mcmc.lda/1`` (``docs/formats.md``)."""
        m, h = self.model, self.holdout
        return {
            "schema": SCHEMA,
            "corpus": {"source": self.corpus.source, "documents": self.corpus.documents, "tokens": self.corpus.tokens,
                       "words": self.corpus.words},  # fmt: skip
            "model": {
                "method": m.method, "kernel": m.kernel, "topics": m.topics, "alpha": m.alpha, "beta": m.beta,
                # Monte Carlo EM updates of alpha and beta (0: fixed); alpha and beta above are then the start
                "optimize_interval": m.optimize_interval, "optimize_burn_in": m.optimize_burn_in,
                "hyperparameter_updates": m.hyperparameter_updates, "iterations": m.iterations,
                "burn_in": m.burn_in, "chains": m.chains, "seed": m.seed, "threads": m.threads,
            },  # fmt: skip
            "sampling_seconds": self.sampling_seconds,
            "tokens_per_second": self.tokens_per_second,
            "log_joint_per_token_rhat": self.rhat,
            "log_joint_per_token_ess_bulk": self.ess_bulk,
            # each chain's trend, the chains compared as modes, the matched topics' overlap (docs/formats.md)
            "convergence": self.convergence.to_dict(),
            "holdout": None if h is None else {
                "fraction": h.fraction, "documents": h.documents, "scored_tokens": h.scored_tokens, "method": h.method,
            },  # fmt: skip
            "chains": [c.to_dict() for c in self.chains],
        }


def lda_report(run: LdaRun, checks: Report) -> LdaReport:
    """The report of a fitted run beside ``checks``, the diagnose report of its chains file (the verdict)."""
    # start-up: the LDA registry and the topic matching, only when a fit is reported (not for a table of one)
    from mcmc.core.lda.config import sampler_class
    from mcmc.diagnostics.report.lda_gate import topic_agreement

    result, corpus, holdout = run.fit, run.train, run.config.holdout
    top, shares, umass, npmi, cv, recoveries, completion = (
        run.top, run.shares, run.umass, run.npmi, run.cv, run.recoveries, run.completion
    )  # fmt: skip
    scored = umass is not None and npmi is not None and cv is not None
    post = result.log_joint_per_token[:, result.burn_in :, None]
    chains = []
    for c in range(result.chains):
        topics = tuple(
            TopicReport(
                topic=k, share=float(shares[c, k]), words=tuple(corpus.vocab[w] for w in top[c, k]),
                probabilities=tuple(float(result.phi[c, k, w]) for w in top[c, k]),
                umass=float(umass[c, k]) if scored else None, npmi=float(npmi[c, k]) if scored else None,
                cv=float(cv[c, k]) if scored else None,
                alpha=None if result.learned is None else float(result.learned.final_alpha[c, k]),
                true_topic=None if recoveries is None else int(recoveries[c].true_topic[k]),
                hellinger=None if recoveries is None else float(recoveries[c].hellinger[k]),
            )  # fmt: skip
            for k in range(result.n_topics)
        )
        means = {}
        if scored:
            for key, score in (("umass", umass), ("npmi", npmi), ("cv", cv)):
                means[key] = float(np.nanmean(score[c])) if np.isfinite(score[c]).any() else math.nan
        recovery = None
        if recoveries is not None:
            r = recoveries[c]
            recovery = Recovery(r.mean_hellinger, float(np.nanmax(r.hellinger)), float(np.nanmin(r.cosine)),
                                r.baseline)  # fmt: skip
        learned = result.learned
        chains.append(
            ChainReport(
                chain=c, final_log_joint_per_token=float(result.log_joint_per_token[c, -1]),
                mean_log_joint_per_token=float(post[c].mean()), topics=topics,
                learned_alpha_sum=None if learned is None else float(learned.final_alpha[c].sum()),
                learned_beta=None if learned is None else float(learned.final_beta[c]),
                heldout_perplexity=None if completion is None else float(completion.perplexity[c]),
                heldout_log_likelihood=None if completion is None else float(completion.log_likelihood[c]),
                recovery=recovery, **means,
            )  # fmt: skip
        )
    learned = result.learned
    model = ModelFacts(
        method=result.method, kernel=result.kernel, topics=result.n_topics, alpha=result.alpha, beta=result.beta,
        optimize_interval=0 if learned is None else learned.interval,
        optimize_burn_in=None if learned is None else learned.burn_in,
        hyperparameter_updates=0 if learned is None else int(learned.iterations.size), iterations=result.iterations,
        burn_in=result.burn_in, chains=result.chains, seed=result.seed, threads=result.threads,
    )  # fmt: skip
    held = None
    if completion is not None:
        mixture = sampler_class(result.method).one_topic_per_document
        given = ("the document's topic posterior from the observed half, mixture weights = mean training membership"
                 if mixture else "theta estimated from the observed half by Gibbs sampling")  # fmt: skip
        held = HoldoutReport(
            fraction=holdout, documents=int(completion.theta.shape[1]), scored_tokens=completion.n_tokens,
            method="document completion (Wallach et al. 2009): even-position tokens observed, odd-position "
            "tokens scored with phi fixed; " + given,
        )  # fmt: skip
    # How far the chains' topics agree: reported, never judged (so lda and diagnose give one verdict).
    agreement = topic_agreement(result.phi) if result.chains > 1 else None
    convergence = Convergence(
        checks.topic_model, checks.passed, checks.verdict(), None if agreement is None else agreement.overlap,
        None if agreement is None else agreement.hellinger,
    )  # fmt: skip
    lj = next(p for p in checks.parameters if p.name == "log_joint_per_token")
    return LdaReport(
        corpus=CorpusFacts(run.source, corpus.n_docs, corpus.n_tokens, corpus.vocab_size), model=model,
        sampling_seconds=result.sampling_seconds, tokens_per_second=result.tokens_per_second,
        rhat=_nan_if_none(lj.rhat), ess_bulk=_nan_if_none(lj.ess_bulk), convergence=convergence, holdout=held,
        chains=tuple(chains),
    )  # fmt: skip


def _nan_if_none(value: float | None) -> float:
    # the document's number type: undefined is NaN (JSON null)
    return math.nan if value is None else float(value)
