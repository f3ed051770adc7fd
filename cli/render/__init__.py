"""Renderers: one module per output kind, each showing what a result object carries.

``mcmc.cli.render.<kind>`` exposes ``render(result, out: TextIO, options:
RenderOptions) -> None`` for the result objects it can show
(:class:`~mcmc.diagnostics.report.report.Report`,
:class:`~mcmc.diagnostics.report.compare.Comparison`,
:class:`~mcmc.diagnostics.report.samplers.SamplerComparison`,
:class:`~mcmc.cli.commands.sample.SampleResult`,
:class:`~mcmc.cli.commands.lda.LdaResult`); a kind that shows several types
picks the function by the result's type (:func:`functools.singledispatch`).
How to show a result (:class:`RenderOptions`: the format, every column or
those that fit, significant figures) is the command line's choice, handed to
the renderer beside the result; the result itself carries no display setting.

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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class RenderOptions:
    """How the command line shows a result, resolved from options and ``[tool.mcmc.diagnose]``.

    Attributes
    ----------
    format
        The output format of the main output.
    wide
        Every table column, whatever the terminal's width (``--wide``).
    sig_figs
        Significant figures of every estimate instead of the digits its Monte
        Carlo standard error supports (``--sig-figs``, as stansummary's).
    """

    format: Format = Format.table
    wide: bool = False
    sig_figs: int | None = None


def choices(*names: str) -> type[Enum]:
    """The ``--format`` choices of a command that renders only ``names`` (a subset of :class:`Format`)."""
    return Enum("Format", {Format(n).name: Format(n).value for n in names}, type=str)  # type: ignore[return-value]


def render(result: Any, fmt: Format | str, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """Write ``result`` to ``out`` in format ``fmt`` (the module of that name), shown as ``options`` say."""
    # start-up: each output kind's module (rich's tables, matplotlib) loads only when that kind is written
    module = importlib.import_module(f"{__name__}.{Format(getattr(fmt, 'value', fmt)).value}")
    module.render(result, out, options)


def emit(
    result: Any, fmt: Format | str, output: str, options: RenderOptions = RenderOptions()  # noqa: B008 - frozen
) -> None:
    """Render ``result`` to ``output``: the terminal's stdout for ``-``, else a file written atomically.

    A table to the terminal is printed as it renders; any other output is
    rendered whole first, so a failed render leaves no partial file.
    """
    from mcmc.cli.console import out_console, write_output  # start-up: rich's console, when output is written

    fmt = Format(getattr(fmt, "value", fmt))
    if output == "-" and fmt is Format.table:
        render(result, fmt, out_console.file, options)
        return
    buf = io.StringIO()
    render(result, fmt, buf, options)
    data = buf.getvalue().encode()
    write_output(output, lambda fh: fh.write(data))
