"""The terminal output of every command: rich text, one module per result type, chosen by the result's type.

:func:`render` is a :func:`functools.singledispatch` on the result's type (a
subclass is shown as its parent). Each per-type module registers the types it
shows when it is imported, so a command pays only for the results it renders
(the modules of the others' types cost 20 ms of a 0.2 s ``mcmc diagnose``):

* a diagnose :class:`~mcmc.diagnostics.report.report.Report`: :mod:`.table_report`, registered here (every
  command that writes draws judges them into one);
* a :class:`~mcmc.cli.commands.sample.SampleResult` (``mcmc sample``): :mod:`.table_sample`;
* a :class:`~mcmc.diagnostics.report.samplers.SamplerComparison` (``compare --samplers``) and a
  :class:`~mcmc.diagnostics.report.compare.Comparison` (``compare A B``, ``--reference``): :mod:`.table_compare`;
* an :class:`~mcmc.cli.commands.lda.LdaResult` (``mcmc lda``): :mod:`.table_lda`;
* an :class:`~mcmc.core.lda.model.InferenceResult` (``mcmc lda --model``): :mod:`.table_inference`;
* an :class:`~mcmc.core.mcem.em.McemResult` (``mcmc sample --mcem``): :mod:`.table_mcem`.

A command imports the module of the results it shows before rendering them.
The verdict line is not written here: the command prints it on stderr
(:func:`mcmc.cli.render.common.print_verdict`) for every format.
"""

from __future__ import annotations

import functools
from typing import Any, TextIO

from mcmc.cli.render import RenderOptions, table_report
from mcmc.diagnostics.report.report import Report


@functools.singledispatch
def render(result: Any, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008 - frozen
    """Write ``result`` as rich text to ``out``, by its type."""
    raise TypeError(f"no terminal table for a {type(result).__name__}: import the table module that shows it")


render.register(Report, table_report.render_report)
