"""`mcmc lda` as one library call: hold out, fit, score, and the files of the run.

:func:`load_input` reads a corpus (or draws the built-in synthetic one, with
its true topics); :func:`fit_lda` holds documents out, runs the sampler
(:func:`mcmc.core.lda.gibbs.fit`), scores the fit (:mod:`mcmc.core.lda.evaluate`)
and returns an :class:`LdaRun`, which knows the content of the chains file
(:meth:`LdaRun.to_chains`) and of the estimates file (:meth:`LdaRun.estimates`,
written atomically by :meth:`LdaRun.write_estimates`).

Random streams: chain ``c`` reads ``SeedSequence(seed, spawn_key=(c,))``; the
choice of held-out documents and the fold-in of their observed halves read
:data:`HOLDOUT_KEY` and :data:`FOLD_IN_KEY`, two-element spawn keys that
cannot collide with a chain's. The synthetic corpus has its own seed
(:data:`SYNTHETIC_SEED`), so changing ``seed`` shows the sampler's variability
on fixed data.

Chains file: only the post-burn-in iterations, as the variables ``log_joint``
and ``log_joint_per_token`` shaped ``(chain, draw)``, so that ``mcmc diagnose``
judges the stationary part only (like CmdStan's output without warm-up);
``attrs`` record ``burn_in``, ``iterations`` and the model. The full trace,
burn-in included, is in the estimates file (``trace_log_joint_per_token``).
The collapsed log joint does not change when topics are relabelled, so R-hat
and ESS across chains are meaningful for it; per-topic quantities (theta, phi)
are averaged within a chain only.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcmc.core.atomic import atomic_output
from mcmc.core.chains import Chains
from mcmc.core.errors import UsageError
from mcmc.core.lda import evaluate, map_estimates
from mcmc.core.lda.config import LdaConfig, sampler_class
from mcmc.core.lda.corpus import Corpus, SyntheticCorpus, synthetic_corpus
from mcmc.core.lda.gibbs import LdaFit, fit
from mcmc.core.lda.readers import detect_format, load_corpus
from mcmc.core.random import generator

SYNTHETIC_SEED = 2003
SYNTHETIC_SOURCE = "synthetic (LDA generative process, K=10, alpha=0.1, beta=0.05)"
HOLDOUT_KEY, FOLD_IN_KEY = (0x1DA, 0), (0x1DA, 1)


@dataclass(frozen=True, eq=False)
class LdaInput:
    """A corpus, where it came from, and for the synthetic corpus its true topics."""

    corpus: Corpus
    source: str
    truth: SyntheticCorpus | None = None
    #: how the corpus was read (``format``, ``min_df``, ``max_df``, ``None`` = not given; ``keep_all_words``),
    #: kept with a saved model
    reading: dict[str, Any] = field(default_factory=dict)


def load_input(
    path: str | os.PathLike[str] | None,
    *,
    fmt: str | None = None,
    vocab: str | os.PathLike[str] | None = None,
    min_df: float | None = None,
    max_df: float | None = None,
    keep_all_words: bool = False,
) -> LdaInput:
    """The corpus at ``path`` (:func:`mcmc.core.lda.readers.load_corpus`), or the synthetic one when ``None``."""
    if path is None:
        truth = synthetic_corpus(np.random.default_rng(SYNTHETIC_SEED))
        return LdaInput(truth.corpus, SYNTHETIC_SOURCE, truth)
    corpus = load_corpus(path, fmt=fmt, vocab=vocab, min_df=min_df, max_df=max_df, keep_all_words=keep_all_words)
    reading = {"format": fmt or detect_format(path), "min_df": min_df, "max_df": max_df,
               "keep_all_words": keep_all_words}
    return LdaInput(corpus, os.fspath(path), reading=reading)


@dataclass(frozen=True, eq=False)
class LdaRun:
    """A fitted topic model with its scores.

    Attributes
    ----------
    config : the options of the run.
    fit : the sampler's result (log joint trace, theta, phi, timings).
    train : the documents fitted; ``heldout`` those held out (or ``None``).
    doc_index : int64 (D_train,), the training documents' indices in the input corpus.
    source, truth : as in :class:`LdaInput`.
    completion : held-out document-completion scores (or ``None``).
    top : int (chains, K, n_top), the top words of every topic.
    shares : float (chains, K), each topic's expected share of the training tokens.
    umass, npmi, cv : float (chains, K) coherence of the top words, or ``None``.
    recoveries : per chain, the match of fitted to true topics (synthetic corpus), or ``None``.
    timings : seconds of sampling, log joint, estimates, fit total and ``evaluation``.
    reading : how the corpus was read (:attr:`LdaInput.reading`).
    """

    config: LdaConfig
    fit: LdaFit
    train: Corpus
    heldout: Corpus | None
    doc_index: np.ndarray
    source: str
    truth: SyntheticCorpus | None
    completion: evaluate.Completion | None
    top: np.ndarray
    shares: np.ndarray
    umass: np.ndarray | None
    npmi: np.ndarray | None
    cv: np.ndarray | None
    recoveries: list[evaluate.Recovery] | None
    timings: dict[str, float] = field(default_factory=dict)
    reading: dict[str, Any] = field(default_factory=dict)
    #: What defines the fit (JSON, built by the command): with it the chains file carries what the fit needs to go on.
    problem: dict[str, Any] | None = None

    def attrs(self) -> dict[str, Any]:
        """The attributes of the chains file: the model and where the data came from."""
        f = self.fit
        learned = None if f.learned is None else (f.learned.final_alpha, f.learned.final_beta)
        return fit_attrs(self.config, self.source, self.train, f.method, f.kernel, f.iterations,
                         f.log_joint_per_token[:, 0], learned)  # fmt: skip

    def to_chains(self) -> Chains:
        """The chains file: post-burn-in ``log_joint`` and ``log_joint_per_token``, (chain, draw), and the
        resume section when the fit was made with a ``problem``."""
        b = self.fit.burn_in
        resume = None
        if self.problem is not None and self.fit.state is not None:
            from mcmc.core.lda.resume import lda_section  # start-up: only for a fit that can go on

            resume = lda_section(self.problem, self.fit.iterations, self.fit.state)
        return Chains(
            posterior={
                "log_joint": self.fit.log_joint[:, b:],
                "log_joint_per_token": self.fit.log_joint_per_token[:, b:],
            },
            attrs=self.attrs(),
            resume=resume,
        ).validate(self.source)

    def estimates(self) -> dict[str, np.ndarray]:
        """The arrays of the estimates file (no object arrays, so it loads without pickles).

        ``theta`` (chain, D_train, K; when the run kept it: ``LdaConfig.keep_theta``),
        ``phi`` (chain, K, V), ``vocab`` (V,),
        ``alpha``, ``beta``, ``burn_in``, ``doc_index`` (D_train,), the full
        traces ``trace_log_joint`` and ``trace_log_joint_per_token``
        (chain, iteration), and for the synthetic corpus ``true_phi`` and
        ``true_theta``. With learned hyperparameters ``alpha`` is (chain, K)
        and ``beta`` (chain,), the last values; ``alpha_start``,
        ``beta_start`` the starting values; ``trace_alpha`` (chain, update, K),
        ``trace_beta`` (chain, update) and ``trace_optimize_iteration``
        (update,) the sweep after which each update was made. Beside the
        Bayes estimates, the MAP estimates :meth:`map_estimates`.
        """
        f = self.fit
        learned = f.learned
        arrays: dict[str, np.ndarray] = {
            **({} if f.theta is None else {"theta": f.theta}),
            "phi": f.phi,
            "vocab": np.array(self.train.vocab, dtype=str),
            "alpha": np.array(f.alpha) if learned is None else learned.final_alpha,
            "beta": np.array(f.beta) if learned is None else learned.final_beta,
            "burn_in": np.array(f.burn_in),
            "doc_index": np.asarray(self.doc_index, dtype=np.int64),
            "trace_log_joint": f.log_joint,
            "trace_log_joint_per_token": f.log_joint_per_token,
        }
        if learned is not None:
            arrays.update(alpha_start=np.array(f.alpha), beta_start=np.array(f.beta), trace_alpha=learned.alpha,
                          trace_beta=learned.beta, trace_optimize_iteration=learned.iterations)
        arrays.update(self.map_estimates())
        if self.truth is not None:
            arrays["true_phi"] = self.truth.phi
            arrays["true_theta"] = self.truth.theta
        return arrays

    def map_estimates(self) -> dict[str, np.ndarray]:
        """The MAP estimates: the modes of theta's and phi's Dirichlets given each chain's last state.

        ``map_phi`` (chain, K, V) and, when theta is kept and the method is
        LDA's (the mixture's theta is a membership, not a Dirichlet),
        ``map_theta`` (chain, D_train, K): ``max(n + eta - 1, 0)``
        renormalised, the chain's last alpha and beta
        (:mod:`mcmc.core.lda.map_estimates` derives the clipping and says
        why the last state's counts).
        """
        f, corpus = self.fit, self.train
        k, v = f.n_topics, corpus.vocab_size
        learned = f.learned
        alphas = np.full((f.chains, k), f.alpha) if learned is None else learned.final_alpha
        betas = np.full(f.chains, f.beta) if learned is None else learned.final_beta
        arrays = {"map_phi": np.stack([map_estimates.map_phi(corpus.words, f.z[c], k, v, betas[c])
                                       for c in range(f.chains)])}
        if f.theta is not None and not sampler_class(f.method).one_topic_per_document:
            arrays["map_theta"] = np.stack([map_estimates.map_theta(corpus.doc_ptr, f.z[c], k, alphas[c])
                                            for c in range(f.chains)])
        return arrays

    def write_estimates(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`estimates` to the ``.npz`` file ``path``, atomically."""
        buf = io.BytesIO()
        np.savez(buf, **self.estimates())
        with atomic_output(path) as fh:
            fh.write(buf.getvalue())


def check_fit(data: Any, config: LdaConfig) -> None:
    """Refuse a configuration the corpus just read cannot take, before anything is shown or fitted.

    Raises
    ------
    UsageError
        Naming the corpus: ``--holdout`` on a corpus of fewer than two
        documents (one must be left to train on).
    """
    n_docs = data.corpus.n_docs
    if config.holdout > 0 and n_docs < 2:
        raise UsageError(
            f"{data.source}: --holdout needs at least two documents (one to hold out, one to train on); "
            f"this corpus has {n_docs}"
        )


def fit_attrs(config: LdaConfig, source: str, corpus: Corpus, method: str, kernel: str, iterations: int,
              first_ll: np.ndarray, learned: tuple[np.ndarray, np.ndarray] | None) -> dict[str, Any]:  # fmt: skip
    """The attributes of an LDA chains file (a fit's, or a checkpoint's after ``iterations`` sweeps)."""
    return {
        "sampler": f"lda-{method}",
        "kernel": kernel,
        "target": "lda",
        "corpus": source,
        "n_docs": corpus.n_docs,
        "n_tokens": corpus.n_tokens,
        "vocab_size": corpus.vocab_size,
        "n_topics": config.n_topics,
        "alpha": float(config.alpha),
        "beta": float(config.beta),
        "iterations": iterations,
        "burn_in": config.burn_in,
        # the climb from the first sweep, against which the chains file's draws are judged for a trend
        "first_log_joint_per_token": [float(v) for v in first_ll],
        "seed": config.seed,
        **({"optimize_interval": config.optimize_interval, "optimize_burn_in": config.optimize_burn_in,
            "alpha_learned": learned[0].tolist(), "beta_learned": learned[1].tolist()}
           if learned is not None else {}),
        "draws": "post-burn-in iterations only; the full trace is in the estimates file",
    }


class _CheckpointChains:
    """The fit's checkpoints as chains files: a :class:`~mcmc.core.lda.gibbs.FitState` made into one."""

    def __init__(self, outer: Any, config: LdaConfig, data: Corpus, source: str, kernel: str,
                 problem: dict[str, Any]) -> None:  # fmt: skip
        self.outer, self.config, self.data, self.source, self.kernel, self.problem = (
            outer, config, data, source, kernel, problem)

    def poll(self, snapshot: Callable[[], Any] | None) -> None:
        self.outer.poll(None if snapshot is None else lambda: self.chains(snapshot()))

    def chains(self, state: Any) -> Chains:
        from mcmc.core.lda.resume import lda_section  # start-up: only for a fit that writes checkpoints

        per_token = state.log_joint / self.data.n_tokens
        learned = None
        if state.trace_alpha.shape[1]:
            learned = (state.trace_alpha[:, -1], state.trace_beta[:, -1])
        b = min(self.config.burn_in, state.done)
        attrs = fit_attrs(self.config, self.source, self.data, self.config.method, self.kernel, state.done,
                          per_token[:, 0] if state.done else np.full(state.log_joint.shape[0], np.nan), learned)
        return Chains({"log_joint": state.log_joint[:, b:], "log_joint_per_token": per_token[:, b:]}, attrs=attrs,
                      resume=lda_section(self.problem, self.config.iterations, state))  # fmt: skip


def fit_lda(
    data: LdaInput,
    config: LdaConfig,
    *,
    callback: Callable[[int, int, float], None] | None = None,
    scheduler: str | None = None,
    problem: dict[str, Any] | None = None,
    resume: Any = None,
    checkpoint: Any = None,
) -> LdaRun:
    """Hold documents out, fit, and score: everything ``mcmc lda`` computes.

    Parameters
    ----------
    data
        The corpus (:func:`load_input`).
    config
        The options of the run.
    callback
        ``callback(chain, iteration, log_joint_per_token)`` after every
        iteration of every chain (progress display); with ``scheduler`` and a
        method whose documents are not sharded (``partial``'s are:
        ``Sampler.shards_documents``), once per chain, when it finishes.
    scheduler
        A Dask scheduler (``tcp://HOST:PORT`` or ``local:N``): every chain is
        a task on its workers (:func:`mcmc.core.scaleout.fit_chains`), or for a
        method that shards its documents (``partial``: ``Sampler.shards_documents``)
        every chain's documents are sharded across them
        (:func:`mcmc.core.scaleout.fit_sharded`); the same result, byte for
        byte. ``None``: here.
    problem
        What defines the fit (JSON, built by the command): with it the chains
        file carries what the fit needs to go on (:mod:`mcmc.core.lda.resume`).
    resume, checkpoint
        Go on from a :class:`~mcmc.core.lda.gibbs.FitState` read back, and the
        checkpoints to poll after every sweep (their snapshots made into
        chains files); here only, not with ``scheduler``.

    Returns
    -------
    LdaRun
    """
    corpus = data.corpus
    method = sampler_class(config.method)  # what the method can do, declared by its sampler
    doc_index = np.arange(corpus.n_docs)
    heldout = None
    train = corpus
    if config.holdout > 0:
        doc_index, test_index = evaluate.split_documents(corpus, config.holdout, generator(config.seed, HOLDOUT_KEY))
        heldout = corpus.subset(test_index)
        train = corpus.subset(doc_index)
    options = dict(
        n_topics=config.n_topics, alpha=config.alpha, beta=config.beta, iterations=config.iterations,
        burn_in=config.burn_in, chains=config.chains, seed=config.seed, method=config.method,
        threads=config.threads, kernel=config.kernel,
        optimize_interval=config.optimize_interval, optimize_burn_in=config.optimize_burn_in,
        # the mixture's held-out score weighs its topics by the training documents' memberships
        keep_theta=config.keep_theta or (method.one_topic_per_document and heldout is not None),
    )  # fmt: skip
    save = {"save_state": problem is not None}
    if scheduler is None:
        ckpt = None
        if checkpoint is not None:
            kernel = method(config.n_topics, config.kernel).kernel
            ckpt = _CheckpointChains(checkpoint, config, train, data.source, kernel, problem or {})
        result = fit(train, callback=callback, resume=resume, checkpoint=ckpt, **save, **options)
    elif method.shards_documents:
        from mcmc.core.scaleout import fit_sharded

        result = fit_sharded(train, {**options, **save}, scheduler, callback=callback)
    else:
        from mcmc.core.scaleout import fit_chains

        result = fit_chains(train, {**options, **save}, scheduler, callback=callback)
    t0 = time.perf_counter()
    completion = None
    if heldout is not None:
        if method.one_topic_per_document:
            completion = evaluate.dmm_document_completion(result.phi, result.theta, heldout)
        else:
            rng = generator(config.seed, FOLD_IN_KEY)
            alpha = config.alpha if result.learned is None else result.learned.final_alpha
            completion = evaluate.document_completion(result.phi, heldout, alpha, rng)
    top = evaluate.top_words(result.phi, config.n_top)  # (chains, K, n_top)
    umass = npmi = cv = None
    if config.coherence:
        umass = np.stack([evaluate.umass_coherence(t, train) for t in top])
        npmi = np.stack([evaluate.npmi_coherence(t, train) for t in top])
        cv = np.stack([evaluate.cv_coherence(t, train) for t in top])
    truth = data.truth
    recoveries = [evaluate.topic_recovery(p, truth.phi) for p in result.phi] if truth is not None else None
    shares = result.topic_shares
    timings = {**result.timings, "evaluation": time.perf_counter() - t0}
    return LdaRun(config, result, train, heldout, doc_index, data.source, truth, completion, top, shares, umass,
                  npmi, cv, recoveries, timings, dict(data.reading), problem)
