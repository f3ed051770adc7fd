"""Renderers: one module per output kind, each showing what a result object carries.

``mcmc.cli.render.<kind>`` exposes ``render(result, out: TextIO) -> None`` for
the result objects it can show (:class:`~mcmc.diagnostics.report.Report`,
:class:`~mcmc.diagnostics.compare.Comparison`,
:class:`~mcmc.diagnostics.sampler_comparison.SamplerComparison`,
:class:`~mcmc.diagnostics.runs.SampleResult`):

* ``table``: rich text for a terminal (per result type);
* ``json``: any result's ``to_dict()``, strict JSON (one generic renderer);
* ``csv``: any result's ``to_table()`` (one generic renderer);
* ``md``: GitHub Markdown (pull-request comments, job summaries), under
  60,000 characters whatever the number of parameters;
* ``html``: one self-contained HTML page of a diagnose report (plots inline);
* ``junit``: JUnit XML of a diagnose report's checks, for CI test views;
* ``github``: GitHub Actions annotation lines (``::error::``) of failed checks;
* ``plot`` (an image file rather than text): a report's or comparison's plots.

Shared helpers (JSON cleaning, number formats, the console, the verdict line)
are in :mod:`mcmc.cli.render.common`. A module is imported only when used, so
``mcmc --help`` loads none of them. A renderer computes nothing and judges
nothing: a statistic or a verdict it needs belongs in the result object.
"""

from __future__ import annotations

import importlib
import io
from enum import Enum
from typing import Any, TextIO


class Format(str, Enum):
    """Text output formats; each is the module ``mcmc.cli.render.<value>``.

    A command offers a subset as its ``--format`` choices (:func:`choices`);
    ``html`` and ``junit`` are written to files by their own options.
    """

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"
    html = "html"
    junit = "junit"


def choices(*names: str) -> type[Enum]:
    """The ``--format`` choices of a command that renders only ``names`` (a subset of :class:`Format`)."""
    return Enum("Format", {Format(n).name: Format(n).value for n in names}, type=str)  # type: ignore[return-value]


def render(result: Any, fmt: Format | str, out: TextIO) -> None:
    """Write ``result`` to ``out`` in format ``fmt``."""
    module = importlib.import_module(f"{__name__}.{Format(getattr(fmt, 'value', fmt)).value}")
    module.render(result, out)


def emit(result: Any, fmt: Format | str, output: str) -> None:
    """Render ``result`` to ``output``: the terminal's stdout for ``-``, else a file written atomically.

    A table to the terminal is printed as it renders; any other output is
    rendered whole first, so a failed render leaves no partial file.
    """
    from mcmc.cli.console import out_console, write_output

    fmt = Format(getattr(fmt, "value", fmt))
    if output == "-" and fmt is Format.table:
        render(result, fmt, out_console.file)
        return
    buf = io.StringIO()
    render(result, fmt, buf)
    data = buf.getvalue().encode()
    write_output(output, lambda fh: fh.write(data))
