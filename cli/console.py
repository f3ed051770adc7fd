"""Consoles and the small output helpers every subcommand shares.

Data goes to stdout, messages and progress to stderr. rich honours ``NO_COLOR``
and drops colour when the stream is not a terminal.

Every console prints text as it is given: no emoji shortcodes (``run:100:.npz``
stays that, not ``run💯.npz``), no highlighting, and control characters in
the text shown as escapes (:class:`VerbatimConsole`), so a file or parameter
name holding ``\x1b[2J`` cannot clear the terminal (``docs/errors.md``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.segment import Segment

from mcmc.cli.text import printable, visible_controls

if TYPE_CHECKING:
    from collections.abc import Iterable

    from mcmc.cli.commands.progress import Progress


class VerbatimConsole(Console):
    """A rich console that shows the control characters of the text it prints as escapes.

    The last line of defence for the terminal: names are made printable where
    they enter a message or a table (:func:`mcmc.cli.text.printable`, which
    also shows a newline as ``\\n``), and whatever text still holds an
    escape sequence, a bell or a carriage return is shown, not obeyed, here.
    The cursor movements rich makes itself (control segments: the progress
    bars) and its styles pass; line breaks pass (tables are laid out in lines).
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("emoji", False)
        kwargs.setdefault("highlight", False)
        super().__init__(**kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        shown = (seg if seg.control else Segment(visible_controls(seg.text), seg.style) for seg in buffer)
        return super()._render_buffer(shown)


err_console = VerbatimConsole(stderr=True)
out_console = VerbatimConsole()


#: The arguments of the running command, as :func:`mcmc.cli.app.main` received them (a report says how it was made).
INVOKED: dict[str, list[str]] = {"argv": []}


def command_line() -> str:
    """The running command as a shell would take it: ``mcmc diagnose 'output_*.csv' --html r.html``."""
    import shlex  # start-up: only for a report that records its command line

    return shlex.join(["mcmc", *INVOKED["argv"]])


class CheckFailed(Exception):
    """Raised by a command whose work succeeded but whose verdict is "fail": exit 1."""


def progress_enabled() -> bool:
    """Progress bars only when a person is watching stderr."""
    return err_console.is_terminal


def write_output(path: str, writer: Callable[[IO[bytes]], None]) -> None:
    """Run ``writer`` on ``path`` (written atomically), or on stdout when ``path`` is ``-``."""
    from mcmc.core.atomic import atomic_output  # start-up: only when an output is written

    if path == "-":
        writer(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    with atomic_output(path) as fh:
        writer(fh)


#: Set by the entry point's SIGINT/SIGTERM handler (:mod:`mcmc.cli.app`). The handler
#: raises KeyboardInterrupt, except while numba compiles (:func:`numba_compiling`), and a
#: library may swallow what it raises, so the run would go on: every progress callback a
#: command passes raises it, so the run stops within one step.
SIGNALLED = {"received": False, "count": 0}
#: While true (:func:`signals_held`), the first SIGINT or SIGTERM only sets :data:`SIGNALLED`: a run that
#: checkpoints stops at the end of its iteration, after writing a last checkpoint. A second one stops at once.
HELD = {"active": False}


@contextmanager
def signals_held() -> Iterator[Callable[[], bool]]:
    """Hold SIGINT and SIGTERM back while a checkpointed run samples; yields the ``stop()`` its checkpoints poll.

    The hold begins at the first poll, after the run's first iteration: until
    then (reading, building the target, numba compiling) a signal stops the
    command at once, as always (there is nothing to save yet). From then on
    the first signal only sets :data:`SIGNALLED`, and ``stop()`` tells the
    checkpoints to write a last one and stop (see :data:`HELD`).
    """
    before = HELD["active"]

    def stop() -> bool:
        HELD["active"] = True
        return bool(SIGNALLED["received"])

    try:
        yield stop
    finally:
        HELD["active"] = before


def numba_compiling() -> bool:
    """Whether this thread holds numba's compiler lock (compiling or loading a kernel); False if numba is not loaded."""
    lock_module = sys.modules.get("numba.core.compiler_lock")
    return lock_module is not None and lock_module.global_compiler_lock.is_locked()


class _AfterCompile:
    """One numba event listener per process, registered on first use (numba may never be loaded)."""

    listener: Any = None


def raise_after_compiling() -> None:
    """Raise :class:`KeyboardInterrupt` on the main thread as soon as it releases numba's compiler lock.

    For a signal that came while numba was compiling or loading a kernel on
    the main thread (:func:`numba_compiling`): the run stops after that
    kernel, not after all of them.
    """
    if _AfterCompile.listener is None:
        import threading  # start-up: numba's event hooks only once a signal came while it compiled

        from numba.core import event  # start-up: as above

        class Listener(event.Listener):
            pending = False

            def on_start(self, ev: object) -> None:
                pass

            def on_end(self, ev: object) -> None:
                if self.pending and threading.current_thread() is threading.main_thread() and not numba_compiling():
                    self.pending = False
                    raise KeyboardInterrupt

        _AfterCompile.listener = Listener()
        event.register("numba:compiler_lock", _AfterCompile.listener)
    _AfterCompile.listener.pending = True


def stop_if_signalled() -> None:
    """Raise :class:`KeyboardInterrupt` when a signal arrived that the work in progress did not act on.

    Not while signals are held (:func:`signals_held`): the run's checkpoints stop it, after saving it.
    """
    if SIGNALLED["received"] and not HELD["active"]:
        raise KeyboardInterrupt


@contextmanager
def progress_bar(enabled: bool = True, *, detail: str | None = None) -> Iterator[Progress]:
    """A transient progress bar on stderr, one line per label, while a person watches stderr.

    Yields the :class:`~mcmc.cli.commands.progress.Progress` every command
    takes, ``progress(label, done, total, **fields)``; ``detail`` formats the
    fields beside each bar (``"log joint/token {log_joint_per_token:.4f}"``;
    ``-`` until the first). When stderr is not a terminal or ``enabled`` is
    false it draws nothing. Either way it stops the run once a signal has
    arrived (:func:`stop_if_signalled`).
    """
    if not (enabled and progress_enabled()):

        def quiet(label: str, done: int, total: int, /, **fields: Any) -> None:
            stop_if_signalled()

        yield quiet
        return
    # start-up: rich's progress display only when a person watches it
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    # The label holds the user's target name: no markup, control characters visible.
    columns = [TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn()]
    if detail is not None:
        columns.append(TextColumn("{task.fields[detail]}", markup=False))
    bar = Progress(*columns, TimeRemainingColumn(), console=err_console, transient=True)
    tasks: dict[str, Any] = {}
    blank = "" if detail is None else detail.split("{", 1)[0] + "-"

    def report(label: str, done: int, total: int, /, **fields: Any) -> None:
        stop_if_signalled()
        if label not in tasks:
            tasks[label] = bar.add_task(printable(label), total=total, detail=blank)
        shown = detail.format(**fields) if detail is not None and fields else None
        # the total may grow: --until-converged draws on until the checks pass
        bar.update(tasks[label], completed=done, total=total, **({} if shown is None else {"detail": shown}))

    bar.start()
    try:
        yield report
    finally:
        bar.stop()


def resume_command(command: str, checkpoint: str, output: str) -> str:
    """The command that goes on from ``checkpoint`` to ``output`` (names quoted for a POSIX shell)."""
    import shlex  # start-up: only once a run was stopped with a checkpoint

    # -o only when it is not the output the checkpoint's name says (run.npz.checkpoint.npz -> run.npz)
    tail = "" if checkpoint in (output, output + ".checkpoint.npz") else f" -o {shlex.quote(output)}"
    return f"mcmc {command} --resume {shlex.quote(checkpoint)}{tail}"


def print_resume_line(command: str, checkpoint: str, done: int, output: str) -> None:
    """Where a stopped run's work is, and the one command that goes on from it (stderr, before the exit line)."""
    unit = "iterations" if command == "lda" else "draws"
    err_console.print(f"mcmc: the run so far ({done} {unit} per chain) is in {checkpoint}; go on with: "
                      f"{resume_command(command, checkpoint, output)}", highlight=False, markup=False, soft_wrap=True)
