"""The one call of ``mcmc lda``: read the corpus, fit, write the outputs, judge the chains.

:func:`lda_run` refuses options that do not fit and outputs that are inputs
before the corpus is read (:func:`check_lda`), reads it
(:func:`mcmc.core.lda.pipeline.load_input`), fits
(:func:`mcmc.core.lda.pipeline.fit_lda`), writes the chains file, the
estimates and the saved model through ``core``'s writers, and returns an
:class:`LdaResult`: the run, its typed report
(:class:`~mcmc.diagnostics.report.lda.LdaReport`, schema ``mcmc.lda/1``),
the diagnose report of the chains as written (the one verdict: the one
``mcmc diagnose`` gives of the chains file) and the facts the command line
shows while the fit runs (the corpus as read, the model asked for). It never
prints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mcmc.cli.commands.checkpoints import resume_inputs, same_file
from mcmc.cli.commands.files import write_chains_to
from mcmc.cli.commands.progress import Progress, lda_sweeps
from mcmc.core.chains import CHAINS_SUFFIXES
from mcmc.core.errors import InputError, UsageError
from mcmc.core.paths import check_paths
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.lda import CorpusFacts, LdaReport, lda_report
from mcmc.diagnostics.report.report import Report
from mcmc.diagnostics.report.thresholds import Thresholds

if TYPE_CHECKING:  # start-up: the LDA configuration's module loads the kernel registry; the CLI has loaded it
    from mcmc.core.lda.config import LdaConfig

__all__ = ["CorpusInput", "LdaLongRun", "LdaOutputs", "LdaResult", "check_lda", "lda_run"]


@dataclass(frozen=True)
class CorpusInput:
    """Where the corpus is and how to read it (:func:`mcmc.core.lda.pipeline.load_input`).

    ``path`` ``None`` is the built-in synthetic corpus; ``format`` ``None``
    tells it from the name and the first lines; ``vocab`` is the vocabulary
    file of an LDA-C or UCI corpus when it is not beside it; ``min_df`` and
    ``max_df`` prune rare and common words; ``keep_all_words`` keeps a text
    corpus's short words and stop words.
    """

    path: str | None = None
    format: str | None = None
    vocab: str | None = None
    min_df: float | None = None
    max_df: float | None = None
    keep_all_words: bool = False


@dataclass(frozen=True)
class LdaOutputs:
    """Where ``mcmc lda`` writes: the chains file (``-``: npz on stdout), the estimates, the saved model."""

    chains: str | None = None
    estimates: str | None = None
    model: str | None = None
    plot: str | None = None  # drawn by the caller from the result; checked here with the others


#: The fields of :class:`~mcmc.core.lda.config.LdaConfig` that define a fit: a fit that goes on
#: (``--resume``) takes them from its file, and refuses any given otherwise.
DEFINING = ("n_topics", "alpha", "beta", "burn_in", "chains", "seed", "method", "kernel", "holdout",
            "optimize_interval", "optimize_burn_in", "keep_theta")  # fmt: skip
#: The fields of :class:`CorpusInput` that say which corpus was fitted, likewise.
CORPUS_FIELDS = ("path", "format", "vocab", "min_df", "max_df", "keep_all_words")
_FLAGS = {"n_topics": "--topics", "burn_in": "--burn-in", "optimize_interval": "--optimize-interval",
          "optimize_burn_in": "--optimize-burn-in", "keep_theta": "--estimates", "path": "CORPUS",
          "min_df": "--min-df", "max_df": "--max-df", "keep_all_words": "--keep-all-words"}  # fmt: skip


@dataclass(frozen=True)
class LdaLongRun:
    """How a fit goes on and is saved on the way: ``mcmc lda --resume``, checkpoints.

    ``resume``: a chains file or checkpoint of ``mcmc lda`` to go on from, to
    ``LdaConfig.iterations`` sweeps (or, when ``iterations`` is not in
    ``given``, as many as its fit asked for); ``given``: the fields of
    :class:`~mcmc.core.lda.config.LdaConfig` and of :class:`CorpusInput` the
    user gave (:data:`DEFINING`, :data:`CORPUS_FIELDS`, ``iterations``): the
    others are the file's, and a given one that differs is refused;
    ``checkpoints``: where and how often (``None``: never).
    """

    resume: str | None = None
    given: frozenset[str] = frozenset()
    checkpoints: Any = None


@dataclass(frozen=True)
class LdaResult:
    """A finished ``mcmc lda`` fit: the run, its report (schema ``mcmc.lda/1``) and its verdict.

    Attributes
    ----------
    run
        The :class:`~mcmc.core.lda.pipeline.LdaRun` (trace, estimates, scores).
    report
        What every output format shows (:func:`mcmc.diagnostics.report.lda.lda_report`),
        whose ``convergence`` is the topic-model verdict with the matched topics' overlap.
    config
        The settings of the fit, as asked for.
    corpus
        The corpus as read, before documents were held out.
    all_chains
        The table and the CSV carry every chain's topics (``--all-chains``), not only chain 0's.
    checks
        The diagnose report of the chains as written: the one verdict, the
        one ``mcmc diagnose`` gives of the chains file
        (:func:`mcmc.diagnostics.report.check.check_topic_model`).
    """

    run: Any
    report: LdaReport
    config: LdaConfig
    corpus: CorpusFacts
    all_chains: bool = False
    checks: Report | None = None

    @property
    def passed(self) -> bool:
        return self.checks is None or self.checks.passed

    def verdict(self) -> str:
        return "" if self.checks is None else self.checks.verdict()

    @property
    def shown_chains(self) -> range:
        return range(len(self.report.chains)) if self.all_chains else range(1)

    def to_dict(self) -> dict[str, Any]:
        return self.report.to_dict()

    def to_table(self) -> tuple[list[str], list[list[Any]]]:
        """One row per top word of every topic of the shown chains.

        A topic's own scores, when the run made them (learned ``alpha``,
        ``umass``/``npmi``/``cv`` coherence, ``true_topic``/``hellinger`` on a
        synthetic corpus), are columns repeated on each of its word rows, so a
        ``csv`` reader can filter by them without regrouping.
        """
        first = self.report.chains[0].topics[0].to_dict()
        scores = [k for k in ("alpha", "umass", "npmi", "cv", "true_topic", "hellinger") if k in first]
        rows = []
        for c in self.shown_chains:
            for t in self.report.chains[c].topics:
                own = [getattr(t, k) for k in scores]
                for rank, (word, p) in enumerate(zip(t.words, t.probabilities, strict=True)):
                    rows.append([c, t.topic, t.share, *own, rank + 1, word, p])
        return ["chain", "topic", "share", *scores, "rank", "word", "probability"], rows


def check_lda(config: LdaConfig, outputs: LdaOutputs, inputs: list[str | None],
              others: dict[str, str] | None = None) -> None:  # fmt: skip
    """Refuse, before the corpus is read, options that do not fit and outputs that are inputs or unwritable.

    ``others``: more outputs to check (the checkpoint).
    """
    if not 0 <= config.burn_in < config.iterations:
        raise UsageError(
            f"--burn-in must be in 0 .. --iterations - 1 = {config.iterations - 1}, got {config.burn_in}"
        )

    check_paths(
        {"-o": outputs.chains, "--estimates": outputs.estimates, "--plot": outputs.plot,
         "--save-model": outputs.model, **(others or {})},
        inputs,
    )  # fmt: skip
    if outputs.estimates is not None and not config.keep_theta:
        raise UsageError("--estimates writes theta: the configuration must keep it (LdaConfig.keep_theta)")
    for option, name in (("--estimates", outputs.estimates), ("--save-model", outputs.model)):
        if name is not None and not name.lower().endswith(".npz"):
            raise UsageError(f"{name}: {option} writes .npz; give a name ending in .npz")
    if outputs.chains not in (None, "-") and Path(outputs.chains).suffix.lower() not in CHAINS_SUFFIXES:
        raise UsageError(f"{outputs.chains}: unknown chains file format; use .npz or .nc")


def lda_run(
    corpus: CorpusInput,
    config: LdaConfig,
    outputs: LdaOutputs,
    *,
    thresholds: Thresholds | None = None,
    strict: bool = False,
    all_chains: bool = False,
    stdout: IO[bytes] | None = None,
    progress: Progress | None = None,
    scheduler: str | None = None,
    long_run: LdaLongRun | None = None,
) -> LdaResult:
    """Read the corpus, fit ``config``, write the outputs and judge the chains: the one call of ``mcmc lda``.

    Parameters
    ----------
    corpus
        The corpus to read (the synthetic one when its ``path`` is ``None``).
    config
        The :class:`~mcmc.core.lda.config.LdaConfig` of the run.
    outputs
        Files to write; the chains file and the estimates hold the post-burn-in
        and the full trace respectively (docs/formats.md).
    thresholds, strict
        The limits of the checks (``max_ll_gap`` is the topic models' own;
        ``diagnose``'s defaults when ``None``): the chains are judged as
        ``mcmc diagnose`` judges the chains file, each chain for a remaining
        trend and the chains against each other as modes
        (:func:`mcmc.diagnostics.report.check.check_topic_model`).
    all_chains
        The result's table shows every chain (``--all-chains``).
    progress
        Told ``progress("corpus", 1, 1, corpus=CorpusFacts(...))`` once the
        corpus is read, before the fit (what is being fitted is worth showing
        while it runs), then ``progress("chain C", sweeps_done, iterations,
        log_joint_per_token=...)`` after every sweep.
    scheduler
        A Dask scheduler (``tcp://HOST:PORT`` or ``local:N``): chains run as
        tasks on its workers, same bytes as here (:mod:`mcmc.core.scaleout`).
    long_run
        Going on from a file (``resume``) and checkpoints (:class:`LdaLongRun`).
        The chains file carries what the fit needs to go on
        (:mod:`mcmc.core.lda.resume`); a saved model is the same either way.

    Raises
    ------
    UsageError
        Options that do not fit (:func:`check_lda`), before the corpus is read;
        with ``resume``, a setting that differs from the file's.
    InputError
        An unreadable corpus; with ``resume``, a file that is not a chains file
        of ``mcmc lda`` with a resume section of this version, or a corpus
        whose content changed since (its SHA-256).
    """
    # start-up: the LDA pipeline loads numba (0.3 s), past the checks of options and outputs
    from mcmc.core.lda import pipeline

    long_run = long_run or LdaLongRun()
    state = None
    if long_run.resume is not None:
        if scheduler is not None:
            raise UsageError("--resume runs here: leave out --scheduler")
        from mcmc.core.lda.resume import fit_state  # start-up: only when going on from a file

        read = _read_resume(long_run.resume)
        header, state = fit_state(read.resume, long_run.resume)
        config, corpus = resumed_config(config, corpus, long_run.given, header["problem"], long_run.resume)
        if "iterations" not in long_run.given:
            config = replace(config, iterations=int(header["goal"]))
        if config.iterations < state.done:
            raise UsageError(f"--iterations {config.iterations}: {long_run.resume} already has {state.done} sweeps "
                             "per chain")  # fmt: skip
    resume_input = resume_inputs(long_run.resume, outputs.chains)
    ckpt = None if long_run.checkpoints is None else long_run.checkpoints.path
    if ckpt is not None and long_run.resume is not None and same_file(ckpt, long_run.resume):
        ckpt = None  # going on from the checkpoint, which is rewritten as the fit goes on
    check_lda(config, outputs, [corpus.path, corpus.vocab, *resume_input],
              {} if ckpt is None else {"the checkpoint": ckpt})
    if scheduler is not None:
        from mcmc.core.scaleout import check_scheduler  # start-up: only with --scheduler

        check_scheduler(scheduler)  # before the corpus is read
    data = pipeline.load_input(corpus.path, fmt=corpus.format, vocab=corpus.vocab, min_df=corpus.min_df,
                               max_df=corpus.max_df, keep_all_words=corpus.keep_all_words)  # fmt: skip
    pipeline.check_fit(data, config)  # before the banner: a refusal is one line
    problem = lda_problem(config, corpus)  # the corpus is read: its files exist
    if long_run.resume is not None:
        check_corpus(header["problem"], problem, long_run.resume)
        problem = header["problem"]  # the file's own words: the same bytes as a fit that never stopped
    read = data.corpus
    facts = CorpusFacts(data.source, read.n_docs, read.n_tokens, read.vocab_size)
    if progress is not None:
        progress("corpus", 1, 1, corpus=facts)
    run = pipeline.fit_lda(data, config, callback=lda_sweeps(progress, config.iterations), scheduler=scheduler,
                           problem=problem, resume=state,
                           checkpoint=long_run.checkpoints if scheduler is None else None)  # fmt: skip
    chains_file = run.to_chains()
    if outputs.chains is not None:
        write_chains_to(chains_file, outputs.chains, stdout)  # .npz or .nc, by the name
    if long_run.checkpoints is not None:
        long_run.checkpoints.remove()  # the output holds all it held
    if outputs.estimates is not None:
        run.write_estimates(outputs.estimates)
    if outputs.model is not None:
        # start-up: the saved model's module, only when one is saved
        from mcmc.core.lda.model import model_of

        model_of(run).save(outputs.model)
    source = outputs.chains if outputs.chains not in (None, "-") else run.source
    checks = check(chains_file, thresholds=thresholds or Thresholds(), strict=strict, source=[source])
    return LdaResult(run, lda_report(run, checks), config, facts, all_chains, checks)


def _read_resume(path: str) -> Any:
    from mcmc.diagnostics.readers.numpy_files import read_npz_resume  # start-up: only when going on from a file

    if not path.lower().endswith(".npz"):
        raise InputError(path, "--resume reads a .npz chains file or checkpoint (an .nc file has no resume section)")
    return read_npz_resume(path)


def lda_problem(config: LdaConfig, corpus: CorpusInput) -> dict[str, Any]:
    """What defines a fit, as its resume section records it: the settings, the corpus read, its SHA-256."""
    from mcmc.core.resume import file_digest  # start-up: hashlib, only for a fit that records it

    digest = None
    if corpus.path is not None:
        p = Path(corpus.path)
        files = sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p]
        digest = "".join(file_digest(str(q)) for q in files) if files else None
    vocab = None if corpus.vocab is None else file_digest(corpus.vocab)
    settings = {k: getattr(config, k) for k in DEFINING}
    if not config.optimize_interval:
        settings["optimize_burn_in"] = 0  # no updates: its default (a quarter of --iterations) means nothing
    return {"settings": settings,
            "corpus": {k: getattr(corpus, k) for k in CORPUS_FIELDS},
            "files": {"corpus": digest, "vocab": vocab}}  # fmt: skip


def resumed_config(config: LdaConfig, corpus: CorpusInput, given: frozenset[str], problem: dict[str, Any],
                   source: str) -> tuple[LdaConfig, CorpusInput]:  # fmt: skip
    """``config`` and ``corpus`` with every setting the user did not give taken from the fit in ``source``.

    The corpus file is compared by content (:func:`check_corpus`), not by name.

    Raises
    ------
    UsageError
        One line naming the first setting that differs.
    """
    settings, read = problem.get("settings", {}), problem.get("corpus", {})

    def differs(name: str, then: Any, now: Any) -> UsageError:
        flag = _FLAGS.get(name, "--" + name.replace("_", "-"))
        if name == "keep_theta":
            return UsageError(f"--resume {source}: --estimates needs a fit made with --estimates (the run kept no "
                              "sums for theta)")  # fmt: skip
        return UsageError(f"--resume {source}: the fit was made with {flag} {then}; this command gives {now} "
                          "(leave it out to go on with the file's)")  # fmt: skip

    changes = {}
    for name in DEFINING:
        then = settings.get(name)
        now = getattr(config, name)
        if name == "keep_theta":
            if now and not then:
                raise differs(name, then, now)
            changes[name] = then
        elif name in given and now != then and (name != "optimize_burn_in" or settings.get("optimize_interval")):
            raise differs(name, then, now)
        else:
            changes[name] = then
    corpus_changes = {}
    for name in CORPUS_FIELDS:
        then, now = read.get(name), getattr(corpus, name)
        if name in given and now != then and not (name in ("path", "vocab") and now is not None and then is not None):
            raise differs(name, then, now)
        corpus_changes[name] = now if name in given else then
    return replace(config, **changes), replace(corpus, **corpus_changes)


def check_corpus(saved: dict[str, Any], now: dict[str, Any], source: str) -> None:
    """Refuse a corpus (or vocabulary) whose content is not the one the fit in ``source`` was made with."""
    for what in ("corpus", "vocab"):
        if saved.get("files", {}).get(what) != now.get("files", {}).get(what):
            raise InputError(source, f"the fit's {what} has changed since (its SHA-256 differs): --resume goes on "
                                     "only with the same corpus and settings")  # fmt: skip
