"""The terminal output of ``mcmc lda --model``: the topics of new documents under a saved model.

:class:`~mcmc.core.lda.model.InferenceResult` lives in the saved model's
module, which reads corpora (compressed ones too) and is too heavy to load for
every table; so this module registers its table on :func:`mcmc.cli.render.table.render`
itself, and ``mcmc lda --model`` imports it before rendering.
"""

from __future__ import annotations

from typing import TextIO

from rich.text import Text

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import console
from mcmc.cli.render.table import render
from mcmc.cli.text import printable
from mcmc.core.lda.model import InferenceResult


@render.register(InferenceResult)
def render_inference(result: InferenceResult, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """The top topics of the first documents under a saved model (chain 0 of the model)."""
    from rich.table import Table  # start-up: rich's tables only when a table is drawn

    table = Table(title="Top topics of the first documents (chain 0 of the model)", title_justify="left",
                  show_edge=False, pad_edge=False)  # fmt: skip
    for name, justify in (("doc", "right"), ("tokens", "right"), ("topic", "right"), ("theta", "right"),
                          ("top words", "left")):  # fmt: skip
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for doc in result.report["documents"]:
        for i, t in enumerate(doc["topics"]):
            table.add_row(str(doc["document"]) if i == 0 else "", str(doc["tokens"]) if i == 0 else "",
                          str(t["topic"]), f"{t['theta']:.3f}", Text(printable(" ".join(t["words"]))))  # fmt: skip
    console(out).print(table)


def inference_summary(result: InferenceResult, out: TextIO) -> None:
    """The line ``mcmc lda --model`` prints on stderr: the model, the corpus, unknown words, the fold-in."""
    c, m = result.report["corpus"], result.report["model"]
    console(out).print(
        Text(f"model: {m['topics']} topics, {m['chains']} chain{'s' if m['chains'] != 1 else ''}, {m['words']} words "
             f"({printable(result.model_path)}); corpus: {c['documents']} documents, {c['tokens']} known tokens; "
             f"{c['unknown_tokens']} tokens of {c['unknown_words']} words unknown to the model ignored "
             f"({printable(c['source'])}); fold-in: {result.sweeps} sweeps ({result.burn_in} burn-in), "
             f"seed {result.seed}"),
        soft_wrap=True,
    )  # fmt: skip
    for warning in result.report.get("warnings", ()):
        console(out).print(Text.assemble(("warning: ", "bold yellow"), printable(warning)), soft_wrap=True)
