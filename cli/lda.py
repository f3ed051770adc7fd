"""`mcmc lda`: fit latent Dirichlet allocation by Gibbs sampling and show the topics.

Parses the options, calls :func:`mcmc.core.lda.pipeline.load_input` and
:func:`mcmc.core.lda.pipeline.fit_lda`, writes the files the returned
:class:`~mcmc.core.lda.pipeline.LdaRun` describes, and renders its report
(:func:`mcmc.core.lda.report.fit_report`) as tables, JSON or CSV. Random
streams, evaluation and file contents live in the library.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from mcmc.cli import options
from mcmc.cli.console import CheckFailed, err_console, out_console, progress_enabled, write_output
from mcmc.core.errors import UsageError
from mcmc.core.lda.config import (
    DEFAULT_ALPHA,
    KERNELS,
    METHODS,
    LdaConfig,
    default_burn_in,
    default_optimize_burn_in,
)

T = TypeVar("T")
CORPUS_FORMATS = ("ldac", "uci", "text")
OUTPUT_FORMATS = ("table", "json", "csv")

# Paragraphs are single lines (Typer's rich mode keeps line breaks, so hard
# wrapping breaks at other widths); the examples are lines of their own.
HELP = "\n\n".join(
    [
        "Fit latent Dirichlet allocation (Blei, Ng & Jordan 2003) by Gibbs sampling and show the topics.",
        "CORPUS is an LDA-C file (M id:count ... per line, 0-based ids; vocabulary X.vocab.txt or X.vocab beside "
        "it, or --vocab), a UCI bag-of-words docword.X.txt (with vocab.X.txt), a directory of text files (one "
        "document each), or a text file with one document per line (lower-cased, letters only, words of 3+ "
        "letters, English stop words removed). Without CORPUS, a synthetic corpus drawn from the LDA generative "
        "process (10 topics, 500 words, 500 documents of 100 tokens; always the same data) is fitted and the "
        "fitted topics are matched to the true ones (Hungarian matching on Hellinger distance).",
        "Samplers: collapsed Gibbs (Griffiths & Steyvers 2004; SparseLDA bucket decomposition of Yao, Mimno & "
        "McCallum 2009 for large K), partially collapsed (phi | z, then z | phi with theta integrated out; "
        "documents in parallel), uncollapsed blocked Gibbs, and the one-topic-per-document Dirichlet-multinomial "
        "mixture (dmm). All are exact.",
        "Outputs: the top words of each topic (chain 0, or every chain with --all-chains) on stdout; a summary on"
        " stderr. -o writes the chains file for `mcmc diagnose`: the collapsed log joint log p(w, z) and its "
        "per-token value after each post-burn-in iteration, shaped (chain, draw). That quantity is invariant to "
        "relabelling topics, so R-hat and ESS across chains are meaningful; topics themselves are not comparable "
        "across chains (label switching), so theta and phi are averaged within each chain.",
        "Examples:",
        "\n".join(
            [
                "  mcmc lda --holdout 0.1",
                "  mcmc lda ap.ldac -k 50 --iterations 500 --burn-in 250 --chains 4 -o ap.npz",
                "  mcmc diagnose ap.npz",
                "  mcmc lda docword.nips.txt -k 20 --method partial --threads 2 --coherence",
                "  mcmc lda tweets.txt -k 8 --method dmm --output-format json > topics.json",
                "  mcmc lda ap.ldac -k 50 --optimize-interval 10 --save-model ap-model.npz",
                "  mcmc lda new.ldac --model ap-model.npz --theta theta.csv",
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


def command(
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
            help="Vocabulary, one word per line (LDA-C, UCI). Default: X.vocab.txt or X.vocab beside X.ldac; "
            "vocab.X.txt beside docword.X.txt.",
            show_default=False,
        ),
    ] = None,
    corpus_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="ldac|uci|text",
            help="Corpus format. Default: detected from the name (.ldac, docword.*) and the first lines.",
            show_default=False,
        ),
    ] = None,
    min_df: Annotated[
        float | None,
        typer.Option(
            metavar="N",
            help="Drop words in fewer than N documents (N >= 1), or in less than that fraction of documents "
            "(N < 1). Default: 1 for text; LDA-C and UCI vocabularies are kept whole unless given.",
            show_default=False,
        ),
    ] = None,
    max_df: Annotated[
        float | None,
        typer.Option(
            metavar="F",
            help="Drop words in more than this fraction of the documents. Default: 1.0 (keep all).",
            show_default=False,
        ),
    ] = None,
    topics: Annotated[int, typer.Option("--topics", "-k", min=1, metavar="K", help="Number of topics.")] = 10,
    alpha: Annotated[
        float,
        typer.Option(
            metavar="A",
            help="Symmetric Dirichlet concentration of each document's topic proportions theta. The default "
            "0.1 is the common choice for sparse topic mixtures (tomotopy's and the lda package's default); "
            "Griffiths & Steyvers (2004) used 50/K.",
        ),
    ] = DEFAULT_ALPHA,
    beta: Annotated[
        float,
        typer.Option(metavar="B", help="Symmetric Dirichlet concentration of each topic's word distribution phi."),
    ] = 0.01,
    iterations: Annotated[
        int, typer.Option(min=1, metavar="N", help="Gibbs sweeps per chain, burn-in included.")
    ] = 200,
    burn_in: Annotated[
        int | None,
        typer.Option(
            min=0,
            metavar="N",
            help="Sweeps left out of theta and phi, of the chains file and of the R-hat gate (must be < "
            "--iterations). Default: half of --iterations.",
            show_default=False,
        ),
    ] = None,
    chains: Annotated[int, typer.Option(min=1, metavar="N", help="Independent chains.")] = 2,
    max_rhat: Annotated[
        float | None,
        typer.Option(
            metavar="R",
            help="Exit 1 if the rank-normalized split R-hat of the post-burn-in log joint across chains exceeds "
            "this (the chains disagree: run more iterations). With one chain there is nothing to compare and "
            "the check is skipped. \\[default: 1.01, as diagnose]",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(
            min=0, metavar="S", help="Seed; chain c uses SeedSequence(S, spawn_key=(c,)). Same seed, same bytes."
        ),
    ] = 1,
    method: Annotated[
        str,
        typer.Option(
            metavar="METHOD",
            help="Gibbs sampler: collapsed (theta, phi integrated out), partial (phi drawn, theta integrated "
            "out; parallel over documents), uncollapsed (blocked: phi, theta, then all z), or dmm (one topic "
            "per document, Dirichlet-multinomial mixture).",
        ),
    ] = "collapsed",
    kernel: Annotated[
        str,
        typer.Option(
            metavar="KERNEL",
            help="Implementation of the collapsed conditional: sparse (SparseLDA buckets), dense (K terms per "
            "token), or auto (dense for small K). Same distribution either way.",
        ),
    ] = "auto",
    optimize_interval: Annotated[
        int,
        typer.Option(
            min=0,
            metavar="N",
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
            min=0,
            metavar="N",
            help="Sweeps before the first hyperparameter update. Default: a quarter of --iterations.",
            show_default=False,
        ),
    ] = None,
    threads: Annotated[
        int,
        typer.Option(
            min=1,
            metavar="N",
            help="Worker threads: chains side by side, and document blocks of one chain for partial and "
            "uncollapsed. Results do not depend on it.",
        ),
    ] = 1,
    scheduler: options.Scheduler = None,
    holdout: Annotated[
        float,
        typer.Option(
            metavar="F",
            help="Hold out this fraction of documents and report their document-completion perplexity "
            "(Wallach et al. 2009): theta estimated from every other token with phi fixed, the remaining "
            "tokens scored. 0 = train on everything.",
        ),
    ] = 0.0,
    coherence: Annotated[
        bool,
        typer.Option(
            "--coherence",
            help="Report topic coherence of the top words: UMass (Mimno et al. 2011) and NPMI (Bouma 2009), "
            "both from document co-occurrence in the training documents, averaged over word pairs.",
        ),
    ] = False,
    n_top: Annotated[int, typer.Option("--top-words", min=1, metavar="N", help="Words shown per topic.")] = 10,
    all_chains: Annotated[
        bool, typer.Option("--all-chains", help="Show the topics of every chain (default: chain 0 only).")
    ] = False,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the chains file (.npz or ArviZ .nc; - for npz on stdout): post-burn-in log joint and "
            "log joint per token, (chain, draw), for `mcmc diagnose`.",
            show_default=False,
        ),
    ] = None,
    estimates: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.npz",
            help="Write the estimates: theta (chain, doc, K), phi (chain, K, V), vocab, alpha, beta, the full "
            "log-joint trace with burn-in, and the document indices (no pickled objects).",
            show_default=False,
        ),
    ] = None,
    save_model: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.npz",
            help="Save the model for later use with --model: vocabulary, phi of every chain, alpha and beta "
            "(learned or fixed), method and corpus reading options (format mcmc.lda-model, docs/formats.md).",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.npz",
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
            help="With --model: write theta, one row per document and chain (document, chain, topic_0, ...).",
            show_default=False,
        ),
    ] = None,
    plot: Annotated[
        str | None,
        typer.Option(
            metavar="FILE.png",
            help="Draw the log joint per token of every chain at every iteration (burn-in shaded) to a .png, "
            ".pdf or .svg: chains that level off apart have not mixed.",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--output-format",
            metavar="FORMAT",
            help="How the topics are written to stdout: table, json (schema mcmc.lda/1, with the summary) or csv "
            "(chain, topic, share, rank, word, probability).",
        ),
    ] = "table",
) -> None:
    corpus_format = _choice(corpus_format, CORPUS_FORMATS, "--format")
    method = _choice(method, METHODS, "--method") or "collapsed"
    kernel = _choice(kernel, KERNELS, "--kernel") or "auto"
    output_format = _choice(output_format, OUTPUT_FORMATS, "--output-format") or "table"
    from mcmc.core.ranges import check_settings

    check_settings({"alpha": alpha, "beta": beta, "holdout": holdout, "min_df": min_df, "max_df": max_df})
    if model is not None:
        return _infer(corpus_path, model, theta, vocab=vocab, corpus_format=corpus_format, iterations=iterations,
                      burn_in=burn_in, seed=seed, output_format=output_format,
                      fitting={"-o": output, "--estimates": estimates, "--save-model": save_model, "--plot": plot,
                               "--holdout": holdout or None, "--optimize-interval": optimize_interval or None,
                               "--coherence": coherence or None, "--min-df": min_df, "--max-df": max_df})
    if theta is not None:
        raise UsageError("--theta writes the topics of new documents; it needs --model")
    if burn_in is None:
        burn_in = default_burn_in(iterations)
    if optimize_burn_in is None:
        optimize_burn_in = default_optimize_burn_in(iterations)
    if max_rhat is not None and not max_rhat >= 1:
        raise UsageError(f"--max-rhat must be at least 1 (R-hat of agreeing chains), got {max_rhat:g}")
    if not 0 <= burn_in < iterations:
        raise UsageError(f"--burn-in must be in 0 .. --iterations - 1 = {iterations - 1}, got {burn_in}")
    if output == "-" and output_format != "table":
        raise UsageError("-o - and --output-format json/csv would both write to stdout; pick one")
    # Refuse unusable output names before sampling rather than after.
    from mcmc.core.paths import check_paths

    check_paths({"-o": output, "--estimates": estimates, "--plot": plot, "--save-model": save_model},
                [corpus_path, vocab])
    for option, name in (("--estimates", estimates), ("--save-model", save_model)):
        if name is not None and not name.lower().endswith(".npz"):
            raise UsageError(f"{name}: {option} writes .npz; give a name ending in .npz")
    if output not in (None, "-") and not output.lower().endswith((".npz", ".nc")):
        raise UsageError(f"{output}: unknown chains file format; use .npz or .nc")
    if plot is not None:
        from mcmc.cli.plot import image_format

        image_format(plot)

    from rich.text import Text  # corpus names and words print verbatim, not as markup

    from mcmc.core.lda.pipeline import fit_lda, load_input

    if corpus_path is None and (vocab is not None or corpus_format is not None):
        raise UsageError("--vocab and --format need a CORPUS")
    data = load_input(corpus_path, fmt=corpus_format, vocab=vocab, min_df=min_df, max_df=max_df)
    config = LdaConfig(
        n_topics=topics, alpha=alpha, beta=beta, iterations=iterations, burn_in=burn_in, chains=chains, seed=seed,
        method=method, kernel=kernel, threads=threads, holdout=holdout, coherence=coherence, n_top=n_top,
        optimize_interval=optimize_interval, optimize_burn_in=optimize_burn_in,
    )  # fmt: skip
    corpus = data.corpus
    err_console.print(
        Text(f"corpus: {corpus.n_docs} documents, {corpus.n_tokens} tokens, {corpus.vocab_size} words ({data.source})"
        + (f"; holding out {holdout * 100:g}% of the documents" if holdout > 0 else "")),
        highlight=False,
        soft_wrap=True,
    )
    alpha_note = " (default)" if alpha == DEFAULT_ALPHA else ""
    learn_note = (f" to start, learned every {optimize_interval} sweeps after {optimize_burn_in}"
                  if optimize_interval else "")
    err_console.print(
        f"model: K={topics}, alpha={alpha:g}{alpha_note}, beta={beta:g}{learn_note}; {method} Gibbs, {chains} chains x "
        f"{iterations} iterations ({burn_in} burn-in), seed {seed}, {threads} thread{'s' if threads > 1 else ''}",
        highlight=False,
        soft_wrap=True,
    )

    run = _with_progress(lambda callback: fit_lda(data, config, callback=callback, scheduler=scheduler), iterations, chains)
    result = run.fit

    if output is not None:
        from mcmc.core.chains import write_chains

        chains_file = run.to_chains()
        if output == "-":
            write_output("-", lambda fh: write_chains(chains_file, fh))
        else:
            write_chains(chains_file, output)  # .npz or .nc, by the name
    if estimates is not None:
        run.write_estimates(estimates)
    if save_model is not None:
        from mcmc.core.lda.model import model_of

        model_of(run).save(save_model)

    from mcmc.core.lda.report import fit_report
    from mcmc.diagnostics.summary import summarize_lda

    from mcmc.diagnostics.report import Thresholds

    thresholds = Thresholds() if max_rhat is None else Thresholds(max_rhat=max_rhat)
    convergence = summarize_lda(result.log_joint_per_token, result.burn_in, thresholds=thresholds)
    report = fit_report(result, run.train, run.source, run.top, run.shares, run.umass, run.npmi, run.recoveries,
                        run.completion, holdout, convergence)
    if plot is not None:
        from mcmc.cli.plot import plot_lda_trace

        plot_lda_trace(
            result.log_joint_per_token, result.burn_in, plot,
            title=f"{Path(run.source).name if run.truth is None else 'synthetic corpus'}: K={topics}, {method} "
            f"Gibbs, {result.chains} chain{'s' if result.chains != 1 else ''}",
            rhat=report["log_joint_per_token_rhat"], ess=report["log_joint_per_token_ess_bulk"],
        )  # fmt: skip
    shown = range(result.chains) if all_chains else range(1)
    if output_format == "json":
        text = json.dumps(_json_safe(report), indent=2) + "\n"
        write_output("-", lambda fh: fh.write(text.encode()))
    elif output_format == "csv":
        write_output("-", lambda fh: fh.write(_csv(report, shown).encode()))
    else:
        _render_tables(report, shown, out_console if output != "-" else err_console)
    _summary(report)
    _verdict(report)


# -- new documents against a saved model -------------------------------------------------


def _infer(corpus_path: str | None, model_path: str, theta_path: str | None, *, vocab: str | None,
           corpus_format: str | None, iterations: int, burn_in: int | None, seed: int, output_format: str,
           fitting: dict[str, Any]) -> None:
    given = [option for option, value in fitting.items() if value is not None]
    if given:
        raise UsageError(f"--model infers the topics of new documents; {', '.join(given)} applies to fitting")
    if corpus_path is None:
        raise UsageError("--model needs a CORPUS of new documents")
    if burn_in is None:
        burn_in = default_burn_in(iterations)
    if not 0 <= burn_in < iterations:
        raise UsageError(f"--burn-in must be in 0 .. --iterations - 1 = {iterations - 1}, got {burn_in}")
    if output_format == "csv":
        raise UsageError("--output-format csv: with --model, write theta with --theta FILE.csv")
    from mcmc.core.paths import check_paths

    check_paths({"--theta": theta_path}, [corpus_path, vocab, model_path])
    from rich.table import Table
    from rich.text import Text

    from mcmc.core.lda.model import infer, inference_report, load_model

    model = load_model(model_path)
    inference = infer(model, corpus_path, sweeps=iterations, burn_in=burn_in, seed=seed, fmt=corpus_format,
                      vocab=vocab)
    if theta_path is not None:
        inference.write_theta(theta_path)
    report = inference_report(inference, model)
    c, m = report["corpus"], report["model"]
    err_console.print(
        Text(f"model: {m['topics']} topics, {m['chains']} chain{'s' if m['chains'] != 1 else ''}, {m['words']} words "
             f"({model_path}); corpus: {c['documents']} documents, {c['tokens']} known tokens; "
             f"{c['unknown_tokens']} tokens of {c['unknown_words']} words unknown to the model ignored "
             f"({c['source']}); fold-in: {iterations} sweeps ({burn_in} burn-in), seed {seed}"),
        highlight=False, soft_wrap=True,
    )  # fmt: skip
    if output_format == "json":
        text = json.dumps(_json_safe(report), indent=2) + "\n"
        write_output("-", lambda fh: fh.write(text.encode()))
        return
    table = Table(title="Top topics of the first documents (chain 0 of the model)", title_justify="left",
                  show_edge=False, pad_edge=False)
    for name, justify in (("doc", "right"), ("tokens", "right"), ("topic", "right"), ("theta", "right"),
                          ("top words", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for doc in report["documents"]:
        for i, t in enumerate(doc["topics"]):
            table.add_row(str(doc["document"]) if i == 0 else "", str(doc["tokens"]) if i == 0 else "",
                          str(t["topic"]), f"{t['theta']:.3f}", Text(" ".join(t["words"])))
    out_console.print(table)


# -- progress ------------------------------------------------------------------------


def _with_progress(call: Callable[[Callable[[int, int, float], None] | None], T], iterations: int, chains: int) -> T:
    """``call(callback)`` with a progress bar per chain on stderr when a person is watching."""
    if not progress_enabled():
        return call(None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("chain {task.fields[chain]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("log joint/token {task.fields[ll]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )
    with progress:
        tasks = [progress.add_task("", total=iterations, chain=c, ll="-") for c in range(chains)]

        def callback(chain: int, iteration: int, ll: float) -> None:
            progress.update(tasks[chain], completed=iteration + 1, ll=f"{ll:.4f}")

        return call(callback)


# -- the report (plain data) and its renderings -------------------------------------------


def _json_safe(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def _csv(report: dict[str, Any], shown: range) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["chain", "topic", "share", "rank", "word", "probability"])
    for c in shown:
        for t in report["chains"][c]["topics"]:
            for rank, (word, p) in enumerate(zip(t["words"], t["probabilities"], strict=True)):
                w.writerow([c, t["topic"], f"{t['share']:.6g}", rank + 1, word, f"{p:.6g}"])
    return buf.getvalue()


def _render_tables(report: dict[str, Any], shown: range, console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    for c in shown:
        chain = report["chains"][c]
        table = Table(title=f"Topics (chain {c})", title_justify="left", show_edge=False, pad_edge=False)
        table.add_column("topic", justify="right")
        table.add_column("share", justify="right")
        has_coherence = "umass" in chain["topics"][0]
        has_truth = "true_topic" in chain["topics"][0]
        has_alpha = "alpha" in chain["topics"][0]
        if has_alpha:
            table.add_column("alpha", justify="right")
        if has_coherence:
            table.add_column("UMass", justify="right")
            table.add_column("NPMI", justify="right")
        if has_truth:
            table.add_column("true", justify="right")
            table.add_column("Hellinger", justify="right")
        table.add_column("top words")
        for t in sorted(chain["topics"], key=lambda t: -t["share"]):
            row = [str(t["topic"]), f"{t['share']:.3f}"]
            if has_alpha:
                row.append(_num(t["alpha"], 3))
            if has_coherence:
                row += [_num(t["umass"], 3), _num(t["npmi"], 3)]
            if has_truth:
                row += [str(t["true_topic"]) if t["true_topic"] >= 0 else "-", _num(t["hellinger"], 3)]
            table.add_row(*row, Text(" ".join(t["words"])))
        console.print(table)
    if "recovery" in report["chains"][0]:
        table = Table(
            title="Recovery of the true topics (Hungarian matching, Hellinger distance)",
            title_justify="left",
            show_edge=False,
            pad_edge=False,
        )
        for name in ("chain", "mean Hellinger", "max Hellinger", "min cosine", "unmatched pairs"):
            table.add_column(name, justify="right")
        for chain in report["chains"]:
            r = chain["recovery"]
            table.add_row(
                str(chain["chain"]),
                _num(r["mean_hellinger"], 3),
                _num(r["max_hellinger"], 3),
                _num(r["min_cosine"], 3),
                _num(r["unmatched_hellinger"], 3),
            )
        console.print(table)
        console.print(
            "Hellinger distance 0 = identical topics, 1 = disjoint; 'unmatched pairs' is the mean distance "
            "between a fitted topic and the true topics it was not matched to.",
            highlight=False,
            style="dim",
        )


def _num(value: float | None, digits: int = 4) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def _summary(report: dict[str, Any]) -> None:
    chains = report["chains"]

    def per_chain(key: str, digits: int = 4) -> str:
        return ", ".join(_num(c[key], digits) for c in chains)

    def per_chain_fixed(key: str) -> str:
        return ", ".join(f"{c[key]:.4f}" for c in chains)

    lines = [
        f"sampling: {report['sampling_seconds']:.2f} s, {report['tokens_per_second'] / 1e6:.2f} M tokens/s "
        f"({report['model']['kernel']} kernel, all chains)",
        f"log joint per token, final iteration: {per_chain_fixed('final_log_joint_per_token')} "
        f"(chains 0..{len(chains) - 1}); "
        f"post-burn-in R-hat {_num(report['log_joint_per_token_rhat'], 4)}, "
        f"bulk ESS {_num(report['log_joint_per_token_ess_bulk'], 3)}",
    ]
    if "learned_beta" in chains[0]:
        lines.append(
            f"learned hyperparameters ({report['model']['hyperparameter_updates']} updates): alpha summed over "
            f"topics {per_chain('learned_alpha_sum', 4)}; beta {per_chain('learned_beta', 4)} (per topic alpha in "
            "the topics table and --estimates)"
        )
    if report["holdout"] is not None:
        h = report["holdout"]
        lines.append(
            f"held-out perplexity (document completion, {h['documents']} documents, {h['scored_tokens']} tokens "
            f"scored): {per_chain('heldout_perplexity', 5)}"
        )
    if "umass" in chains[0]:
        lines.append(
            f"coherence of the top words (training documents, mean over topics): UMass {per_chain('umass', 3)}; "
            f"NPMI {per_chain('npmi', 3)}"
        )
    for line in lines:
        err_console.print(line, highlight=False, soft_wrap=True)


def _verdict(report: dict[str, Any]) -> None:
    """The gate's one line on stderr; exit 1 (CheckFailed) when the chains disagree."""
    ok, rhat, limit = report["rhat_ok"], report["log_joint_per_token_rhat"], report["max_rhat"]
    if ok is None:
        why = ("with one chain (R-hat compares chains; use --chains 2 or more)" if report["model"]["chains"] < 2
               else "(too few post-burn-in draws for R-hat)")
        err_console.print(f"convergence: not checked {why}", highlight=False, soft_wrap=True)
        return
    if ok:
        err_console.print(f"convergence: ok (R-hat {_num(rhat, 4)} <= {limit:g})", highlight=False, soft_wrap=True)
        return
    err_console.print(
        f"convergence: FAIL: R-hat of the post-burn-in log joint across chains is {_num(rhat, 4)} > --max-rhat "
        f"{limit:g}: the chains disagree; run more iterations (--iterations, --burn-in)",
        highlight=False, soft_wrap=True,
    )  # fmt: skip
    raise CheckFailed(f"R-hat {rhat} > {limit}")


command.__doc__ = HELP
