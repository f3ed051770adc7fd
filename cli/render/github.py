"""GitHub Actions annotations of a diagnose report: one ``::error``/``::warning`` line per failed check.

A workflow command (``::error title=T::message``) printed by a step shows as
an annotation on the run's summary page and the pull request (GitHub's
"Workflow commands for GitHub Actions"). Failed error checks are ``error``,
failed warnings ``warning``. Control characters of names are shown as escapes
(:func:`mcmc.cli.text.printable`, so a newline cannot start a workflow command
of its own), and data is escaped as the runner expects: ``%`` in the message;
also ``:`` and ``,`` in a property.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from mcmc.cli.render import RenderOptions
from mcmc.cli.text import printable

if TYPE_CHECKING:
    from mcmc.diagnostics.report.report import Report


def _data(text: str) -> str:
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """Write an annotation line for each failed check of ``report`` to ``out``."""
    src = ", ".join(report.source) or "input"
    for c in report.checks:
        if c.passed:
            continue
        kind = "error" if c.severity == "error" else "warning"
        out.write(f"::{kind} title={_prop(f'mcmc diagnose {c.name}')}::{_data(f'{src}: {c.message}')}\n")
    out.flush()
