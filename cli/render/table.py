"""The terminal output of every command: rich text, one module per result type, chosen by the result's type.

* a diagnose :class:`~mcmc.diagnostics.report.report.Report`: :mod:`.table_report`;
* a :class:`~mcmc.cli.commands.sample.SampleResult` (``mcmc sample``): :mod:`.table_sample`;
* a :class:`~mcmc.diagnostics.report.samplers.SamplerComparison` (``compare --samplers``) and a
  :class:`~mcmc.diagnostics.report.compare.Comparison` (``compare A B``, ``--reference``): :mod:`.table_compare`;
* an :class:`~mcmc.cli.commands.lda.LdaResult` and an :class:`~mcmc.core.lda.model.InferenceResult`
  (``mcmc lda``): :mod:`.table_lda`.

A new result type registers its function here (:func:`functools.singledispatch`
on the type, so a subclass is shown as its parent). The verdict line is not
written here: the command prints it on stderr
(:func:`mcmc.cli.render.common.print_verdict`) for every format.
"""

from __future__ import annotations

import functools
from typing import Any, TextIO

from mcmc.cli.commands.lda import LdaResult
from mcmc.cli.commands.sample import SampleResult
from mcmc.cli.render import RenderOptions, table_compare, table_lda, table_report, table_sample
from mcmc.core.lda.model import InferenceResult
from mcmc.diagnostics.report.compare import Comparison
from mcmc.diagnostics.report.report import Report
from mcmc.diagnostics.report.samplers import SamplerComparison


@functools.singledispatch
def render(result: Any, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008 - frozen
    """Write ``result`` as rich text to ``out``, by its type."""
    raise TypeError(f"no terminal table for a {type(result).__name__}")


render.register(Report, table_report.render_report)
render.register(SampleResult, table_sample.render_sample)
render.register(SamplerComparison, table_compare.render_samplers)
render.register(Comparison, table_compare.render_runs)
render.register(LdaResult, table_lda.render_lda)
render.register(InferenceResult, table_lda.render_inference)
