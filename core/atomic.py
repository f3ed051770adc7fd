"""Writing a file whole or not at all: a temporary file beside it, renamed onto it on success.

Every output `mcmc` writes (chains files, LDA models and estimates, reports,
plots, prediction tables) goes through :func:`atomic_output`, so an
interrupted or failed run never leaves a half-written file and an existing
output stays as it was (``docs/errors.md``). A command that writes several
outputs runs inside one :func:`transaction`: each output is written to its
temporary file as before, and they are all renamed onto their names once the
command has succeeded, or all removed, so a run that fails after writing its
chains file (a full disk under ``--predictions``, a bad ``--html`` path)
leaves every old output as it was. A write that fails (``ENOSPC`` on a full
disk or ``/dev/full``) is one :class:`~mcmc.core.errors.InputError` naming
the output. Standard library only: the command line imports it to write a
report without paying for NumPy.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

from mcmc.core.errors import InputError


class Transaction:
    """Outputs written (to their temporary files) but not yet renamed onto their names: see :func:`transaction`."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, Path]] = []
        self.done = False
        self.after: list[Callable[[], None]] = []

    def add(self, tmp: str, target: Path) -> None:
        self.pending.append((tmp, target))

    def commit(self) -> None:
        """Rename every pending output onto its name, in the order they were written."""
        pending, self.pending = self.pending, []
        self.done = True
        try:
            while pending:
                tmp, target = pending[0]
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise InputError(str(target), f"cannot be written ({exc.strerror or exc})") from None
                pending.pop(0)
        finally:
            _remove(tmp for tmp, _ in pending)
        after, self.after = self.after, []
        for action in after:
            action()

    def discard(self) -> None:
        """Remove every pending output's temporary file: the old outputs stay as they were."""
        pending, self.pending = self.pending, []
        self.done = True
        _remove(tmp for tmp, _ in pending)


_CURRENT: ContextVar[Transaction | None] = ContextVar("mcmc_output_transaction", default=None)


@contextmanager
def transaction() -> Iterator[Transaction]:
    """Hold every output written inside until :meth:`Transaction.commit`; discard them otherwise.

    The command line runs each command inside one (``mcmc.cli.app``) and
    commits when the command succeeded or its draws failed the checks (exit
    1: the chains file is the evidence); an error, Ctrl-C or SIGTERM, or
    leaving without a commit, removes every temporary file. Devices and
    pipes (``/dev/null``, a FIFO) are written at once, as outside.
    """
    current = Transaction()
    token = _CURRENT.set(current)
    try:
        yield current
    finally:
        _CURRENT.reset(token)
        if not current.done:
            current.discard()


@contextmanager
def immediate() -> Iterator[None]:
    """Write the outputs inside at once, outside the command's transaction.

    For a checkpoint (``mcmc.cli.commands.checkpoints``): it must be on disk
    as soon as it is written, to survive ``kill -9``, and stay after Ctrl-C
    or SIGTERM, when the transaction discards the command's outputs.
    """
    token = _CURRENT.set(None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def after_commit(action: Callable[[], None]) -> None:
    """Do ``action`` once the command's outputs are renamed onto their names (at once outside a transaction).

    A checkpoint is removed this way: only when the output that holds all it
    held is in place, never before (a kill in between would lose both).
    """
    current = _CURRENT.get()
    if current is None:
        action()
    else:
        current.after.append(action)


def _remove(paths: Iterator[str] | Any) -> None:
    for tmp in paths:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


@contextmanager
def atomic_output(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; rename it onto ``path`` on success.

    On any exception (or KeyboardInterrupt) the temporary file is removed and
    ``path`` is left as it was. An existing device or pipe (``/dev/null``,
    ``/dev/stdout``, a FIFO) is written directly: renaming onto it would
    replace the device with a file.
    """
    target = Path(path)
    if target.exists() and not target.is_file() and not target.is_dir():
        with _write_errors(path), open(target, mode) as fh:
            yield fh
        return
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(str(path), f"directory {str(directory)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=directory)
    # mkstemp creates 0600; give the file the mode a plain open() would have.
    os.fchmod(fd, 0o666 & ~_umask())
    held = _CURRENT.get()
    try:
        with _write_errors(path), os.fdopen(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if held is not None:
            held.add(tmp, target)  # renamed when the command succeeds
        else:
            os.replace(tmp, target)
    except BaseException:
        _remove([tmp])
        raise


@contextmanager
def _write_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """An operating-system error while writing ``path`` (a full disk, an I/O error) as one line naming it."""
    try:
        yield
    except OSError as exc:
        if exc.errno is None or isinstance(exc, BrokenPipeError):
            raise
        raise InputError(str(path), f"cannot be written ({exc.strerror or exc})") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_output(path, "w") as fh:
        fh.write(text)
