"""Consoles and the small output helpers every subcommand shares.

Data goes to stdout, messages and progress to stderr. rich honours ``NO_COLOR``
and drops colour when the stream is not a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

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


#: Set by the entry point's SIGINT/SIGTERM handler (:mod:`mcmc.cli.app`). The handler
#: raises KeyboardInterrupt, but a library may swallow it (numba compiling a kernel
#: when the signal came catches and wraps exceptions), and the run would go on: every
#: progress callback a command passes re-raises it, so the run stops within one step.
SIGNALLED = {"received": False}


def stop_if_signalled() -> None:
    """Raise :class:`KeyboardInterrupt` when a signal arrived that the work in progress did not act on."""
    if SIGNALLED["received"]:
        raise KeyboardInterrupt


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Callable[[str, int, int], None] | None]:
    """A transient progress bar on stderr, one line per label, while a person watches stderr.

    Yields the callback a library run function takes, ``progress(label, done,
    total)``; when stderr is not a terminal or ``enabled`` is false it draws
    nothing. Either way it stops the run once a signal has arrived
    (:func:`stop_if_signalled`).
    """
    if not (enabled and progress_enabled()):

        def quiet(label: str, done: int, total: int) -> None:
            stop_if_signalled()

        yield quiet
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=err_console, transient=True,
    )  # fmt: skip
    tasks: dict[str, Any] = {}

    def report(label: str, done: int, total: int) -> None:
        stop_if_signalled()
        if label not in tasks:
            tasks[label] = bar.add_task(label, total=total)
        bar.update(tasks[label], completed=done)

    bar.start()
    try:
        yield report
    finally:
        bar.stop()
