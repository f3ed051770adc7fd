"""`mcmc lda`: fit latent Dirichlet allocation by Gibbs sampling and show the topics.

Parses the options, calls :func:`mcmc.cli.commands.lda.lda_run` (which reads
the corpus, fits, writes the files and judges the chains) and renders its
:class:`~mcmc.cli.commands.lda.LdaResult` as tables, JSON or CSV; with
``--model``, :func:`mcmc.core.lda.model.infer_documents`. Random streams,
evaluation and file contents live in the library.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from mcmc.cli import options
from mcmc.cli.console import (
    err_console,
    print_resume_line,
    progress_bar,
    signals_held,
    stop_if_signalled,
)
from mcmc.cli.render import emit
from mcmc.cli.summaries import SUMMARIES
from mcmc.core.errors import UsageError
from mcmc.core.lda.config import (
    DEFAULT_ALPHA,
    KERNEL_HELP,
    KERNELS,
    METHODS,
    LdaConfig,
    default_burn_in,
    default_optimize_burn_in,
)

CORPUS_FORMATS = ("ldac", "uci", "text")
OUTPUT_FORMATS = ("table", "json", "csv")
# Help panels: a long option name and a long metavar in one panel squeeze every description.
CORPUS, MODEL, LEARN, RUN, OUTPUTS = "Corpus", "Model", "Learning alpha and beta", "Run", "Outputs"

# Paragraphs are single lines (Typer's rich mode keeps line breaks, so hard
# wrapping breaks at other widths); the examples are lines of their own.
HELP = "\n\n".join(
    [
        SUMMARIES["lda"],
        "CORPUS is an LDA-C file (M id:count ... per line, 0-based ids; vocabulary X.vocab.txt or X.vocab beside "
        "it, or --vocab), a UCI bag-of-words docword.X.txt (with vocab.X.txt), a directory of text files (one "
        "document each), or a text file with one document per line (lower-cased, letters only, words of 3+ "
        "letters, English stop words removed; --keep-all-words keeps short words and stop words). Without "
        "CORPUS, a synthetic corpus drawn from the LDA generative process (10 topics, 500 words, 500 documents of "
        "100 tokens; always the same data) is fitted and the "
        "fitted topics are matched to the true ones (Hungarian matching on Hellinger distance).",
        "Samplers: collapsed Gibbs (Griffiths & Steyvers 2004; SparseLDA bucket decomposition of Yao, Mimno & "
        "McCallum 2009 for large K), partially collapsed (phi | z, then z | phi with theta integrated out; "
        "documents in parallel), uncollapsed blocked Gibbs, and the one-topic-per-document Dirichlet-multinomial "
        "mixture (dmm). All are exact.",
        "Outputs: the top words of each topic (chain 0, or every chain with --all-chains) on stdout; a summary on"
        " stderr. -o writes the chains file for `mcmc diagnose`: the collapsed log joint log p(w, z) and its "
        "per-token value after each post-burn-in iteration, shaped (chain, draw). That quantity is invariant to "
        "relabelling topics, so R-hat and ESS across chains are meaningful; topics themselves are not comparable "
        "across chains (label switching), so theta and phi are averaged within each chain. --estimates writes "
        "them, and beside them the MAP estimates: the modes of theta's and phi's Dirichlets given each chain's last "
        "state.",
        "Synthetic data: --generate X.ldac writes a corpus drawn from LDA's generative process (-k topics, --docs "
        "documents of --doc-length tokens over --vocab-size words, --alpha, --beta, --seed), its vocabulary "
        "X.vocab.txt and the true theta and phi in X.truth.npz, and fits nothing.",
        "Examples:",
        "\n".join(
            [
                "  mcmc lda --holdout 0.1",
                "  mcmc lda ap.ldac -k 50 --iterations 500 --burn-in 250 --chains 4 -o ap.npz",
                "  mcmc diagnose ap.npz",
                "  mcmc lda --resume ap.npz --iterations 1000",
                "  mcmc lda docword.nips.txt -k 20 --method partial --threads 2 --coherence",
                "  mcmc lda tweets.txt -k 8 --method dmm -f json > topics.json",
                "  mcmc lda ap.ldac -k 50 --optimize-interval 10 --save-model ap-model.npz",
                "  mcmc lda new.ldac --model ap-model.npz --theta theta.csv",
                "  mcmc lda --generate syn.ldac -k 10 --docs 500 --alpha 0.1 --beta 0.05",
                "  mcmc lda toy.txt -k 2 --keep-all-words --estimates est.npz",
            ]
        ),
    ]
)


def _choice(value: str | None, allowed: tuple[str, ...], option: str) -> str | None:
    # Checked here rather than by Click so a typo gives the one-line error every command gives.
    if value is None:
        return None
    v = value.lower()
    if v not in allowed:
        raise UsageError(f"unknown {option} {value!r}; choose one of {', '.join(allowed)}")
    return v


#: What ``--model`` (inference with a saved model) takes; every other option is the fit's and is refused with it.
INFERENCE_OPTIONS = ("corpus_path", "vocab", "corpus_format", "model", "theta", "iterations", "burn_in", "seed",
                     "fmt", "output_format", "quiet")  # fmt: skip


def _given(ctx: typer.Context, allowed: tuple[str, ...]) -> list[str]:
    """The options given on the command line (or by environment) that are not in ``allowed``, as typed."""
    # Compared by name: Typer carries its own copy of Click's ParameterSource.
    return [
        max(p.opts, key=len) for p in ctx.command.params
        if p.name not in allowed and getattr(ctx.get_parameter_source(p.name), "name", "DEFAULT") != "DEFAULT"
    ]  # fmt: skip


def _formats(fmt: str | None, old: str | None, corpus_format: str | None) -> tuple[str, str | None]:
    """The output format and the corpus format, from -f/--format, --corpus-format and the old spellings.

    Until the next release ``--output-format`` is ``--format``, and
    ``--format ldac|uci|text`` (the corpus format's old option) is
    ``--corpus-format``: the two sets of words do not overlap.
    """
    if fmt is not None and fmt.lower() in CORPUS_FORMATS:
        if corpus_format is not None:
            raise UsageError(f"--format {fmt} and --corpus-format {corpus_format}: the corpus format is --corpus-format")
        err_console.print(f"mcmc: note: --format {fmt.lower()} is now --corpus-format {fmt.lower()} (--format is "
                          "the output format)", highlight=False, markup=False, soft_wrap=True)  # fmt: skip
        fmt, corpus_format = None, fmt
    if fmt is not None and old is not None and fmt.lower() != old.lower():
        raise UsageError(f"--format {fmt} and --output-format {old}: give one (--output-format is the old --format)")
    output = _choice(fmt or old, OUTPUT_FORMATS, "--format") or "table"
    return output, _choice(corpus_format, CORPUS_FORMATS, "--corpus-format")


def command(
    ctx: typer.Context,
    corpus_path: Annotated[
        str | None,
        typer.Argument(
            metavar="CORPUS",
            help="LDA-C file, UCI docword file, text file (one document per line) or directory of text files. "
            "Default: the built-in synthetic corpus.",
            show_default=False,
        ),
    ] = None,
    vocab: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            rich_help_panel=CORPUS,
            help="Vocabulary, one word per line (LDA-C, UCI). Default: X.vocab.txt or X.vocab beside X.ldac; "
            "vocab.X.txt beside docword.X.txt; with --model and neither, the model's own (the ids are its).",
            show_default=False,
        ),
    ] = None,
    corpus_format: Annotated[
        str | None,
        typer.Option(
            "--corpus-format",
            metavar="FORMAT",
            rich_help_panel=CORPUS,
            help="ldac, uci or text. Default: detected from the name (.ldac, docword.*) and the first lines.",
            show_default=False,
        ),
    ] = None,
    min_df: Annotated[
        float | None,
        typer.Option(
            metavar="N",
            rich_help_panel=CORPUS,
            help="Drop words in fewer than N documents (N >= 1), or in less than that fraction of documents "
            "(N < 1). Default: 1 for text; LDA-C and UCI vocabularies are kept whole unless given.",
            show_default=False,
        ),
    ] = None,
    max_df: Annotated[
        float | None,
        typer.Option(
            metavar="F",
            rich_help_panel=CORPUS,
            help="Drop words in more than this fraction of the documents. Default: 1.0 (keep all).",
            show_default=False,
        ),
    ] = None,
    keep_all_words: Annotated[
        bool,
        typer.Option(
            "--keep-all-words",
            rich_help_panel=CORPUS,
            help="Text corpora: keep every run of letters as a word, short words and stop words too (a toy corpus "
            "of one-letter words is otherwise empty). Recorded in a saved model, which reads new text the same way.",
        ),
    ] = False,
    generate: Annotated[
        str | None,
        typer.Option(
            metavar="X.ldac",
            rich_help_panel="Synthetic data",
            help="Write a corpus drawn from LDA's generative process instead of fitting one: X.ldac, its "
            "vocabulary X.vocab.txt and the true theta and phi in X.truth.npz (docs/formats.md). Takes -k, "
            "--alpha, --beta, --seed and the three options below; the same seed writes the same bytes.",
            show_default=False,
        ),
    ] = None,
    docs: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="D", rich_help_panel="Synthetic data",
            help="With --generate: documents. \\[default: 500]", show_default=False,
        ),
    ] = None,
    vocab_size: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="V", rich_help_panel="Synthetic data",
            help="With --generate: words in the vocabulary. \\[default: 500]", show_default=False,
        ),
    ] = None,
    doc_length: Annotated[
        int | None,
        typer.Option(
            min=0, metavar="N", rich_help_panel="Synthetic data",
            help="With --generate: tokens of every document. \\[default: 100]", show_default=False,
        ),
    ] = None,
    topics: Annotated[
        int, typer.Option("--topics", "-k", min=1, metavar="K", rich_help_panel=MODEL, help="Number of topics.")
    ] = 10,
    alpha: Annotated[
        float,
        typer.Option(
            metavar="A",
            rich_help_panel=MODEL,
            help="Symmetric Dirichlet concentration of each document's topic proportions theta. The default "
            "0.1 is the common choice for sparse topic mixtures (tomotopy's and the lda package's default); "
            "Griffiths & Steyvers (2004) used 50/K.",
        ),
    ] = DEFAULT_ALPHA,
    beta: Annotated[
        float,
        typer.Option(
            metavar="B", rich_help_panel=MODEL,
            help="Symmetric Dirichlet concentration of each topic's word distribution phi.",
        ),
    ] = 0.01,
    iterations: Annotated[
        int, typer.Option(min=1, metavar="N", rich_help_panel=RUN, help="Gibbs sweeps per chain, burn-in included (1000 by default, "
                          "as Mallet: a topic model's log joint keeps rising for hundreds of sweeps).")
    ] = 1000,
    burn_in: Annotated[
        int | None,
        typer.Option(
            min=0,
            metavar="N",
            rich_help_panel=RUN,
            help="Sweeps left out of theta and phi, of the chains file and of the convergence checks (must be < "
            "--iterations). Default: half of --iterations.",
            show_default=False,
        ),
    ] = None,
    chains: Annotated[int, typer.Option(min=1, metavar="N", rich_help_panel=RUN, help="Independent chains.")] = 2,
    seed: Annotated[
        int,
        typer.Option(
            min=0, metavar="S", rich_help_panel=RUN, help="Seed; chain c's draws depend only on S and c. Same seed, same bytes."
        ),
    ] = 1,
    method: Annotated[
        str,
        typer.Option(
            metavar="METHOD",
            rich_help_panel=MODEL,
            help="Gibbs sampler: collapsed (theta, phi integrated out), partial (phi drawn, theta integrated "
            "out; parallel over documents), uncollapsed (blocked: phi, theta, then all z), or dmm (one topic "
            "per document, Dirichlet-multinomial mixture).",
        ),
    ] = "collapsed",
    kernel: Annotated[
        str,
        typer.Option(
            metavar="KERNEL",
            rich_help_panel=RUN,
            help=KERNEL_HELP,
        ),
    ] = "auto",
    optimize_interval: Annotated[
        int,
        typer.Option(
            metavar="N",
            rich_help_panel=LEARN,
            help="Learn the hyperparameters by Monte Carlo EM: every N sweeps each chain sets an asymmetric "
            "alpha (one per topic) and a symmetric beta to the maximizers of the likelihood of its current "
            "topic assignments (Minka's fixed point, as Mallet's --optimize-interval; Wallach, Mimno & McCallum "
            "2009). --alpha and --beta are then the starting values. Collapsed Gibbs only. Default: 0, off "
            "(fixed alpha and beta, as before).",
        ),
    ] = 0,
    optimize_burn_in: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            rich_help_panel=LEARN,
            help="Sweeps before the first hyperparameter update. Default: a quarter of --iterations.",
            show_default=False,
        ),
    ] = None,
    threads: Annotated[
        int,
        typer.Option(
            min=1,
            metavar="N",
            rich_help_panel=RUN,
            help="Worker threads: chains side by side, and document blocks of one chain for partial and "
            "uncollapsed. Results do not depend on it.",
        ),
    ] = 1,
    scheduler: options.LdaScheduler = None,
    holdout: Annotated[
        float,
        typer.Option(
            metavar="F",
            rich_help_panel=MODEL,
            help="Hold out this fraction of documents and report their document-completion perplexity "
            "(Wallach et al. 2009): theta estimated from every other token with phi fixed, the remaining "
            "tokens scored. 0 = train on everything.",
        ),
    ] = 0.0,
    coherence: Annotated[
        bool,
        typer.Option(
            "--coherence",
            rich_help_panel=MODEL,
            help="Report topic coherence of the top words: UMass (Mimno et al. 2011) and NPMI (Bouma 2009) "
            "from document co-occurrence in the training documents, averaged over word pairs, and C_V (Röder et "
            "al. 2015) from 110-token sliding windows over the training documents in stored token order "
            "(bag-of-words files: words grouped; see docs/formats.md).",
        ),
    ] = False,
    n_top: Annotated[
        int, typer.Option("--top-words", min=1, metavar="N", rich_help_panel=OUTPUTS, help="Words shown per topic.")
    ] = 10,
    all_chains: Annotated[
        bool,
        typer.Option(
            "--all-chains", rich_help_panel=OUTPUTS, help="Show the topics of every chain (default: chain 0 only)."
        ),
    ] = False,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            rich_help_panel=OUTPUTS,
            help="Write the chains file (.npz or ArviZ .nc; - for npz on stdout): post-burn-in log joint and "
            "log joint per token, (chain, draw), for `mcmc diagnose`.",
            show_default=False,
        ),
    ] = None,
    estimates: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.npz",
            rich_help_panel=OUTPUTS,
            help="Write the estimates: theta (chain, doc, K), phi (chain, K, V), their MAP estimates map_theta and "
            "map_phi (the modes given each chain's last state: zero where a count is zero under a prior below 1), "
            "vocab, alpha, beta, the "
            "full log-joint trace with burn-in, and the document indices (no pickled objects).",
            show_default=False,
        ),
    ] = None,
    save_model: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.npz",
            rich_help_panel=OUTPUTS,
            help="Save the model for later use with --model: vocabulary, phi of every chain, alpha and beta "
            "(learned or fixed), method and corpus reading options (format mcmc.lda-model, docs/formats.md).",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.npz",
            rich_help_panel=OUTPUTS,
            help="Infer the topics of the documents in CORPUS with a saved model instead of fitting: fold-in Gibbs "
            "with phi fixed (as for held-out perplexity), --iterations sweeps per chain of the model, the last "
            "after --burn-in averaged; words the model does not know are ignored and counted. Prints the top "
            "topics of the first documents.",
            show_default=False,
        ),
    ] = None,
    theta: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.csv",
            rich_help_panel=OUTPUTS,
            help="With --model: write theta, one row per document and chain (document, chain, topic_0, ...).",
            show_default=False,
        ),
    ] = None,
    plot: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.png",
            rich_help_panel=OUTPUTS,
            help="Draw the log joint per token of every chain at every iteration (burn-in shaded) to a .png, "
            ".pdf or .svg: chains that level off apart have not mixed.",
            show_default=False,
        ),
    ] = None,
    max_ll_gap: options.MaxLlGap = None,
    strict: options.Strict = False,
    no_check: options.NoCheck = False,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            rich_help_panel=OUTPUTS,
            help="How the topics are written to stdout: table, json (schema mcmc.lda/1, with the summary) or csv "
            "(chain, topic, share, rank, word, probability). Until the next release --format ldac|uci|text still "
            "means --corpus-format, and --output-format means --format. \\[default: table]",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[str | None, typer.Option("--output-format", hidden=True)] = None,
    quiet: options.Quiet = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", metavar="FILE.npz", rich_help_panel=options.LONG_RUNS, show_default=False,
            help="Go on from a chains file or checkpoint of mcmc lda: every chain from its topic assignments, to "
            "--iterations sweeps (default: as many as its fit asked for), with the same bytes as one fit that "
            "never stopped. The corpus, model and sampler settings are the file's; given again they must match. "
            "Writes -o, by default FILE itself (for a checkpoint, the output it was made for).",
        ),
    ] = None,
    checkpoint_every: options.CheckpointEvery = options.CHECKPOINT_DEFAULT,
) -> None:
    output_format, corpus_format = _formats(fmt, output_format, corpus_format)
    method = _choice(method, METHODS, "--method") or "collapsed"
    kernel = _choice(kernel, KERNELS, "--kernel") or "auto"
    from mcmc.core.ranges import check_settings  # start-up: the settings' ranges only once the options parse

    check_settings({"alpha": alpha, "beta": beta, "holdout": holdout, "min_df": min_df, "max_df": max_df,
                    "optimize_interval": optimize_interval, "optimize_burn_in": optimize_burn_in})  # fmt: skip
    synthetic = {"--docs": docs, "--vocab-size": vocab_size, "--doc-length": doc_length}
    if generate is not None:
        _generate(generate, corpus_path, topics, alpha, beta, seed, synthetic, output_format, {
            "-o": output, "--estimates": estimates, "--save-model": save_model, "--plot": plot, "--model": model,
            "--theta": theta, "--vocab": vocab, "--corpus-format": corpus_format, "--min-df": min_df, "--max-df": max_df,
            "--holdout": holdout or None, "--optimize-interval": optimize_interval or None,
            "--coherence": coherence or None, "--keep-all-words": keep_all_words or None, "--resume": resume,
        })  # fmt: skip
        return
    given = [option for option, value in synthetic.items() if value is not None]
    if given:
        raise UsageError(f"{', '.join(given)} applies to --generate X.ldac")
    if model is not None:
        given = _given(ctx, INFERENCE_OPTIONS)  # -k, --chains, --scheduler, -o, ...: each would be ignored
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise UsageError(f"--model infers the topics of new documents with the saved model; {', '.join(given)} "
                             f"{verb} to fitting"
                             + (" (new text is read as the model's corpus was)" if keep_all_words else ""))  # fmt: skip
        if corpus_path is None:
            raise UsageError("--model needs a CORPUS of new documents")
        if output_format == "csv":
            raise UsageError("--format csv: with --model, write theta with --theta FILE.csv")
        from mcmc.core.lda.model import infer_documents  # start-up: the saved model's module only with --model

        inferred = infer_documents(
            model, corpus_path, sweeps=iterations, burn_in=default_burn_in(iterations) if burn_in is None else burn_in,
            seed=seed, fmt=corpus_format, vocab=vocab, theta_path=theta,
        )  # fmt: skip
        from mcmc.cli.render import table_inference  # start-up: rich's tables only when the inference is shown

        if not quiet:
            table_inference.inference_summary(inferred, err_console.file)
        if not (quiet and output_format == "table"):
            emit(inferred, output_format, "-")
        return
    if theta is not None:
        raise UsageError("--theta writes the topics of new documents; it needs --model")
    typed = options.given_fields(ctx, _DEFINING)
    if resume is not None and output is None:
        from mcmc.cli.commands.checkpoints import output_of  # start-up: only when going on from a file

        output = output_of(resume)  # extended in place, or the output the checkpoint was made for
    if burn_in is None:
        burn_in = default_burn_in(iterations)
    if optimize_burn_in is None:
        optimize_burn_in = default_optimize_burn_in(iterations)
    if output == "-" and output_format != "table":
        raise UsageError("-o - and --format json/csv would both write to stdout; pick one")
    if corpus_path is None and (vocab is not None or corpus_format is not None or keep_all_words):
        raise UsageError("--vocab, --corpus-format and --keep-all-words need a CORPUS")
    if plot is not None:
        from mcmc.cli.render.plot import image_format  # start-up: the plot renderer only with --plot

        image_format(plot)
    config = LdaConfig(
        n_topics=topics, alpha=alpha, beta=beta, iterations=iterations, burn_in=burn_in, chains=chains, seed=seed,
        method=method, kernel=kernel, threads=threads, holdout=holdout, coherence=coherence, n_top=n_top,
        optimize_interval=optimize_interval, optimize_burn_in=optimize_burn_in, keep_theta=estimates is not None,
    )  # fmt: skip
    # start-up: the command layer and the config reader only once the options parse
    from mcmc.cli.commands.checkpoints import Checkpoints, checkpoint_path
    from mcmc.cli.commands.lda import CorpusInput, LdaLongRun, LdaOutputs, lda_run
    from mcmc.cli.commands.sample import failed_advice
    from mcmc.cli.config import CHECK_KEYS, resolve
    from mcmc.cli.render import table, table_lda  # start-up: rich's tables only when the fit is shown
    from mcmc.cli.sample import finish

    checks = resolve(options.check_options(None, None, strict=strict, max_ll_gap=max_ll_gap), keys=CHECK_KEYS)

    every = options.parse_duration(checkpoint_every)
    ckpt_path = None if output in (None, "-") or scheduler is not None else checkpoint_path(output)
    with progress_bar(not quiet, detail="log joint/token {log_joint_per_token:.4f}") as bar, signals_held() as stop:
        checkpoints = None if every is None or ckpt_path is None else Checkpoints(ckpt_path, every or None, stop)
        long_run = LdaLongRun(resume=resume, given=frozenset(typed), checkpoints=checkpoints)

        def progress(label: str, done: int, total: int, /, **fields: Any) -> None:
            if "corpus" in fields:  # read: say what is being fitted while it runs
                stop_if_signalled()
                if not quiet:
                    table_lda.lda_banner(fields["corpus"], config, err_console.file)
            else:
                bar(label, done, total, **fields)

        try:
            result = lda_run(
                CorpusInput(corpus_path, corpus_format, vocab, min_df, max_df, keep_all_words), config,
                LdaOutputs(chains=output, estimates=estimates, model=save_model, plot=plot),
                thresholds=checks.thresholds, strict=checks.strict, all_chains=all_chains, stdout=sys.stdout.buffer,
                progress=progress, scheduler=scheduler, long_run=long_run,
            )  # fmt: skip
        except KeyboardInterrupt:
            if checkpoints is not None and checkpoints.written is not None:
                print_resume_line("lda", checkpoints.path, checkpoints.written, output)  # type: ignore[arg-type]
            raise
    if plot is not None:
        from mcmc.cli.render.plot import plot_lda  # start-up: as above

        plot_lda(result, plot)
    if output == "-":  # the chains file is on stdout: the topics go to stderr
        if not quiet:
            table.render(result, err_console.file)
    elif not (quiet and output_format == "table"):
        emit(result, output_format, "-")
    if not quiet:
        table_lda.lda_summary(result, err_console.file)
    finish(result.passed, result.verdict(), failed_advice(result.checks) if result.checks else (), no_check=no_check,
           quiet=quiet)  # fmt: skip


def _generate(path: str, corpus_path: str | None, topics: int, alpha: float, beta: float, seed: int,
              synthetic: dict[str, int | None], output_format: str, fitting: dict[str, Any]) -> None:
    """``--generate X.ldac``: draw and write the synthetic corpus; a summary on stderr, or JSON on stdout."""
    given = [option for option, value in fitting.items() if value is not None]
    if corpus_path is not None:
        given.insert(0, "CORPUS")
    if given:
        raise UsageError(f"--generate writes a synthetic corpus and fits nothing; {', '.join(given)} applies to "
                         "fitting")
    if output_format == "csv":
        raise UsageError("--format csv: --generate writes its files; show them as table or json")
    # start-up: the generator (NumPy) and its summary only with --generate
    from mcmc.cli.render.table_lda import generate_summary
    from mcmc.core.lda.generate import GenerateConfig, generate_corpus

    defaults = GenerateConfig()
    config = GenerateConfig(
        n_topics=topics, n_docs=synthetic["--docs"] or defaults.n_docs,
        vocab_size=synthetic["--vocab-size"] or defaults.vocab_size,
        doc_length=defaults.doc_length if synthetic["--doc-length"] is None else synthetic["--doc-length"],
        alpha=alpha, beta=beta, seed=seed,
    )  # fmt: skip
    result = generate_corpus(path, config)
    generate_summary(result, err_console.file)
    if output_format == "json":
        emit(result, "json", "-")


#: The options whose value a fit that goes on (--resume) takes from its file unless given: parameter -> field.
_DEFINING = {"topics": "n_topics", "alpha": "alpha", "beta": "beta", "burn_in": "burn_in", "chains": "chains",
             "seed": "seed", "method": "method", "kernel": "kernel", "holdout": "holdout",
             "optimize_interval": "optimize_interval", "optimize_burn_in": "optimize_burn_in",
             "iterations": "iterations", "corpus_path": "path", "corpus_format": "format", "vocab": "vocab",
             "min_df": "min_df", "max_df": "max_df", "keep_all_words": "keep_all_words"}  # fmt: skip


command.__doc__ = HELP
