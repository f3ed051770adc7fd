"""Consoles and the small output helpers every subcommand shares.

Data goes to stdout, messages and progress to stderr. rich honours ``NO_COLOR``
and drops colour when the stream is not a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO

from rich.console import Console

err_console = Console(stderr=True)
out_console = Console()


class CheckFailed(Exception):
    """Raised by a command whose work succeeded but whose verdict is "fail": exit 1."""


def progress_enabled() -> bool:
    """Progress bars only when a person is watching stderr."""
    return err_console.is_terminal


def write_output(path: str, writer: Callable[[IO[bytes]], None]) -> None:
    """Run ``writer`` on ``path`` (written atomically), or on stdout when ``path`` is ``-``."""
    from mcmc.core.chains import atomic_output

    if path == "-":
        writer(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    with atomic_output(path) as fh:
        writer(fh)
