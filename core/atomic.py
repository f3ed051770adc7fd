"""Writing a file whole or not at all: a temporary file beside it, renamed onto it on success.

Every output `mcmc` writes (chains files, LDA models and estimates, reports,
plots, prediction tables) goes through :func:`atomic_output`, so an
interrupted or failed run never leaves a half-written file and an existing
output stays as it was (``docs/errors.md``). Standard library only: the
command line imports it to write a report without paying for NumPy.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from mcmc.core.errors import InputError


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
        with open(target, mode) as fh:
            yield fh
        return
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(str(path), f"directory {str(directory)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=directory)
    # mkstemp creates 0600; give the file the mode a plain open() would have.
    os.fchmod(fd, 0o666 & ~_umask())
    try:
        with os.fdopen(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_output(path, "w") as fh:
        fh.write(text)
