"""The terminal output of every command: rich text, one module per result type.

* a diagnose :class:`Report`: :mod:`.table_report`;
* a :class:`SampleResult` (``mcmc sample``): :mod:`.table_sample`;
* a :class:`SamplerComparison` (``compare --samplers``) and a :class:`Comparison`
  (``compare A B``, ``--reference``): :mod:`.table_compare`;
* an :class:`LdaResult` and an :class:`InferenceResult` (``mcmc lda``): :mod:`.table_lda`.

The verdict line is not written here: the command prints it on stderr
(:func:`mcmc.cli.render.common.print_verdict`) for every format.
"""

from __future__ import annotations

from typing import Any, TextIO

from mcmc.cli.render import table_compare, table_lda, table_report, table_sample

_RENDERERS = {
    "Report": table_report.render_report,
    "SampleResult": table_sample.render_sample,
    "SamplerComparison": table_compare.render_samplers,
    "Comparison": table_compare.render_runs,
    "LdaResult": table_lda.render_lda,
    "InferenceResult": table_lda.render_inference,
}


def render(result: Any, out: TextIO) -> None:
    """Write ``result`` as rich text to ``out``, by its type."""
    _RENDERERS[type(result).__name__](result, out)
