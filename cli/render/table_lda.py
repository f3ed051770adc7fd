"""The terminal output of ``mcmc lda``'s fit (:class:`~mcmc.cli.commands.lda.LdaResult`), and the lines the command
prints on stderr whatever the format: what is being fitted (:func:`lda_banner`), then how it went
(:func:`lda_summary`), and what ``--generate`` wrote (:func:`generate_summary`). The topics of new documents under a
saved model are :mod:`.table_inference`'s."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TextIO

from rich.text import Text

from mcmc.cli.commands.lda import LdaResult
from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import console, num, plural
from mcmc.cli.render.table import render
from mcmc.cli.text import printable

if TYPE_CHECKING:  # start-up: types only; the command that renders them has loaded them
    from mcmc.core.lda.config import LdaConfig
    from mcmc.core.lda.generate import GeneratedCorpus
    from mcmc.diagnostics.report.lda import CorpusFacts


@render.register(LdaResult)
def render_lda(result: LdaResult, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """The topics of the shown chains, largest share first; the recovery of the true topics (synthetic corpus)."""
    from rich.table import Table  # start-up: rich's tables only when a table is drawn

    con = console(out)
    for c in result.shown_chains:
        chain = result.report.chains[c]
        table = Table(title=f"Topics (chain {c})", title_justify="left", show_edge=False, pad_edge=False)
        first = chain.topics[0]
        columns = [("topic", "right"), ("share", "right")]
        columns += [("alpha", "right")] if first.alpha is not None else []
        columns += [("UMass", "right"), ("NPMI", "right"), ("C_V", "right")] if first.umass is not None else []
        columns += [("true", "right"), ("Hellinger", "right")] if first.true_topic is not None else []
        for name, justify in [*columns, ("top words", "left")]:
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for t in sorted(chain.topics, key=lambda t: -t.share):
            row = [str(t.topic), f"{t.share:.3f}"]
            if t.alpha is not None:
                row.append(num(t.alpha, 3))
            if t.umass is not None:
                row += [num(t.umass, 3), num(t.npmi, 3), num(t.cv, 3)]
            if t.true_topic is not None:
                row += [str(t.true_topic) if t.true_topic >= 0 else "-", num(t.hellinger, 3)]
            table.add_row(*row, Text(printable(" ".join(t.words))))
        con.print(table)
    if result.report.chains[0].recovery is not None:
        table = Table(
            title="Recovery of the true topics (Hungarian matching, Hellinger distance)",
            title_justify="left", show_edge=False, pad_edge=False,
        )  # fmt: skip
        for name in ("chain", "mean Hellinger", "max Hellinger", "min cosine", "unmatched pairs"):
            table.add_column(name, justify="right")
        for chain in result.report.chains:
            r = chain.recovery
            assert r is not None
            table.add_row(str(chain.chain), *(num(v, 3) for v in
                          (r.mean_hellinger, r.max_hellinger, r.min_cosine, r.unmatched_hellinger)))  # fmt: skip
        con.print(table)
        con.print(
            "Hellinger distance 0 = identical topics, 1 = disjoint; 'unmatched pairs' is the mean distance "
            "between a fitted topic and the true topics it was not matched to.",
            style="dim",
        )


def lda_banner(corpus: CorpusFacts, config: LdaConfig, out: TextIO) -> None:
    """The lines ``mcmc lda`` prints on stderr once the corpus is read: the corpus, and the model being fitted."""
    from mcmc.core.lda.config import DEFAULT_ALPHA  # start-up: the LDA configuration only for an LDA banner

    holdout = config.holdout
    lines = [
        f"corpus: {corpus.documents} documents, {corpus.tokens} tokens, {corpus.words} words ({corpus.source})"
        + (f"; holding out {holdout * 100:g}% of the documents" if holdout > 0 else ""),
    ]
    alpha_note = " (default)" if config.alpha == DEFAULT_ALPHA else ""
    learn_note = (f" to start, learned every {config.optimize_interval} sweeps after {config.optimize_burn_in}"
                  if config.optimize_interval else "")  # fmt: skip
    threads = config.threads
    lines.append(
        f"model: K={config.n_topics}, alpha={config.alpha:g}{alpha_note}, beta={config.beta:g}{learn_note}; "
        f"{config.method} Gibbs, {plural(config.chains, 'chain')} x {plural(config.iterations, 'iteration')} ({config.burn_in} burn-in), "
        f"seed {config.seed}, {threads} thread{'s' if threads > 1 else ''}"
    )
    con = console(out)
    for line in lines:
        con.print(Text(printable(line)), soft_wrap=True)


def lda_summary(result: LdaResult, out: TextIO) -> None:
    """The lines ``mcmc lda`` prints on stderr after a fit: speed, log joint and R-hat, scores, trends and modes."""
    report = result.report
    chains = report.chains

    def per_chain(key: str, digits: int = 4) -> str:
        return ", ".join(num(getattr(c, key), digits) for c in chains)

    final = ", ".join(f"{c.final_log_joint_per_token:.4f}" for c in chains)
    lines = [
        f"sampling: {report.sampling_seconds:.2f} s, {report.tokens_per_second / 1e6:.2f} M tokens/s "
        f"({report.model.kernel} kernel, all chains)",
        f"log joint per token, final iteration: {final} "
        f"(chains 0..{len(chains) - 1}); post-burn-in R-hat {num(report.rhat, 4)}, "
        f"bulk ESS {num(report.ess_bulk, 3)}",
    ]
    if chains[0].learned_beta is not None:
        lines.append(
            f"learned hyperparameters ({report.model.hyperparameter_updates} updates): alpha summed over "
            f"topics {per_chain('learned_alpha_sum', 4)}; beta {per_chain('learned_beta', 4)} (per topic alpha in "
            "the topics table and --estimates)"
        )
    if report.holdout is not None:
        h = report.holdout
        lines.append(
            f"held-out perplexity (document completion, {h.documents} documents, {h.scored_tokens} tokens "
            f"scored): {per_chain('heldout_perplexity', 5)}"
        )
    if chains[0].umass is not None:
        lines.append(
            f"coherence of the top words (training documents, mean over topics): UMass {per_chain('umass', 3)}; "
            f"NPMI {per_chain('npmi', 3)}; C_V {per_chain('cv', 3)} (110-token windows in stored token order)"
        )
    conv = report.convergence
    rule = conv.rule
    if rule is not None and rule.trends:
        rises = ", ".join(f"{100 * t.statistic:.1f}%" if math.isfinite(t.statistic) else "-" for t in rule.trends)
        lines.append(f"post-burn-in rise of each chain's log joint per token, as a share of its climb: {rises} "
                     f"(still burning in above {100 * rule.max_trend:.1f}%)")  # fmt: skip
    if len(chains) > 1 and rule is not None and rule.ll_gap:
        gaps = ", ".join(num(g if math.isfinite(g) else None, 3) for g in rule.ll_gap)
        overlap = conv.topic_overlap
        lines.append(f"below the best chain's mean log joint per token: {gaps} (fails beyond "
                     f"--max-ll-gap {rule.max_ll_gap:g})" + (
                         "" if overlap is None else
                         f"; topics matched across chains share {100 * overlap:.0f}% of their top words"))  # fmt: skip
    con = console(out)
    for line in lines:
        con.print(Text(printable(line)), soft_wrap=True)


def generate_summary(result: GeneratedCorpus, out: TextIO) -> None:
    """The line ``mcmc lda --generate`` prints on stderr: what was drawn and the three files written."""
    c = result.config
    console(out).print(
        Text(f"generated from LDA's generative process: {c.n_docs} documents x {c.doc_length} tokens "
             f"({result.data.corpus.n_tokens} tokens), K={c.n_topics} topics over {c.vocab_size} words, "
             f"alpha={c.alpha:g}, beta={c.beta:g}, seed {c.seed} -> {printable(result.corpus)}, "
             f"{printable(result.vocab)}, {printable(result.truth)} (true theta {c.n_docs} x {c.n_topics}, phi {c.n_topics} x {c.vocab_size})"),
        soft_wrap=True,
    )  # fmt: skip
