"""The files a command names: which inputs a pattern means, and whether the outputs can be written.

Every command checks its outputs with :func:`check_paths` before it reads,
samples or fits anything, so a run of minutes cannot end in an unwritable
directory, and no output can replace one of the command's own inputs (or
another of its outputs). Files are compared by identity (device and inode,
:func:`os.path.samefile`), so hard links, symbolic links and other spellings
of one path are caught; outputs that do not exist yet are compared by their
resolved path. Messages name the path as the user typed it.
"""

from __future__ import annotations

import glob
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from mcmc.core.errors import UsageError

STDIO = "-"


def expand_pattern(source: str) -> list[str]:
    """The files ``source`` names: itself, or the sorted matches of a glob pattern.

    A name with ``*``, ``?`` or ``[`` that is not an existing file is a
    pattern (so ``chains[hmc].npz`` that exists is read as it is). An empty
    list means a pattern that matches nothing.
    """
    if source != STDIO and not os.path.lexists(source) and re.search(r"[*?\[]", source):
        return sorted(glob.glob(source), key=_natural_key)
    return [source]


def _natural_key(name: str) -> list[tuple[int, int, str]]:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)]


def check_paths(outputs: Mapping[str, str | None], inputs: Iterable[str | None] = ()) -> None:
    """Refuse outputs that cannot be written or would destroy an input, before any work.

    Parameters
    ----------
    outputs
        Option (``"-o"``, ``"--plot"``) to the path given, ``None`` when the
        option was not given and ``"-"`` for standard output.
    inputs
        Paths (or glob patterns) the command reads; ``None`` and ``"-"`` are
        skipped, and so are names that are not files (a built-in target).

    Raises
    ------
    UsageError
        An empty name; an output that is a directory, a device or other
        non-regular file, in a missing or unwritable directory; an output that
        is the same file as an input or as another output.
    """
    for path in inputs:
        if path == "":
            raise UsageError("empty file name")
    given = {option: path for option, path in outputs.items() if path is not None and path != STDIO}
    for option, path in given.items():
        _check_writable(option, path)
    existing_inputs = [
        (path, match) for path in inputs if path not in (None, STDIO) for match in expand_pattern(path)
        if os.path.isfile(match)
    ]  # fmt: skip
    seen: list[tuple[str, str]] = []
    for option, path in given.items():
        for typed, match in existing_inputs:
            if _same(path, match):
                also = "" if typed == match else f" (matched by {typed!r})"
                raise UsageError(
                    f"{option} {path}: is the input {match}{also}; writing it would destroy the input. "
                    "Choose another output name"
                )
        for other_option, other in seen:
            if _same(path, other):
                raise UsageError(f"{option} {path}: is also the file of {other_option} {other}; give each its own name")
        seen.append((option, path))


def _check_writable(option: str, path: str) -> None:
    if path == "":
        raise UsageError(f"{option}: empty file name")
    target = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:  # a parent that is a file, a loop of links, no permission
        raise UsageError(f"{option} {path}: cannot be written ({exc.strerror})") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise UsageError(f"{option} {path}: is a directory; give a file name")
    if mode is not None and not stat.S_ISREG(mode):  # /dev/null, a FIFO: written directly
        if not os.access(path, os.W_OK):
            raise UsageError(f"{option} {path}: cannot be written (permission denied)")
        return
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        what = "does not exist" if not directory.exists() else "is not a directory"
        raise UsageError(f"{option} {path}: directory {str(directory)!r} {what}")
    # The real test of writability (permissions, ACLs, read-only mounts, quotas on
    # inodes): make and remove the kind of temporary file the output is written to.
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=directory)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write in directory {str(directory)!r} ({exc.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet): the same name once resolved
        return os.path.realpath(a) == os.path.realpath(b)
