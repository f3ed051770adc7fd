"""Reading ``.npy`` and ``.npz`` files we did not write: headers checked before NumPy allocates, no pickles.

``np.load`` allocates the whole array a header claims before it reads a
byte of data, and reads what is not ``.npy`` as a pickle. Every reader of a
user's ``.npz`` (chains files in ``diagnose``, saved LDA models) checks
each member's header against the bytes the archive holds and the machine's
memory first (:func:`check_npz_headers`), loads with ``allow_pickle=False``,
and says which member holds Python objects when one does
(:func:`load_error`). :func:`read_npz_arrays` does all of it for a file.
"""

from __future__ import annotations

import os
import zipfile
from typing import Any, BinaryIO

import numpy as np
from numpy.lib import format as npy_format

from mcmc.core.errors import InputError
from mcmc.core.memory import require_memory

__all__ = ["check_npy_header", "check_npz_headers", "load_error", "read_npz_arrays"]


def load_error(label: str, what: str, exc: BaseException) -> InputError:
    """The one-line error for a file a library could not load: a pickle refused, else corrupt or truncated."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "allow_pickle" in reason or "pickled" in reason:
        return InputError(label, f"{what} holds Python objects (a pickle); refusing to unpickle it")
    return InputError(label, f"corrupt or truncated {what} ({reason})")


def check_npy_header(fh: BinaryIO, available: int | None, label: str, what: str) -> int:
    """Read an ``.npy`` header from ``fh`` and refuse a shape the data or the machine cannot hold.

    ``available`` is the number of bytes after the header (``None``: unknown).
    Returns the bytes the array needs. Only the header is read, so a hostile
    shape (``(10**10,)`` float64 in a 200-byte file) never reaches
    ``np.load``, which allocates the whole array before reading it.
    """
    try:
        version = npy_format.read_magic(fh)
        read_header = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}.get(version)
        if read_header is None:  # version 3.0 (UTF-8 field names), rare: np.load judges it
            return 0
        shape, _, dtype = read_header(fh)
    except (ValueError, OSError, EOFError) as exc:
        raise load_error(label, what, exc) from None
    if dtype.hasobject:
        return 0  # refused as a pickle when loaded
    count = 1
    for n in shape:
        count *= int(n)  # Python ints: a hostile shape must not overflow
    needed = count * dtype.itemsize
    if available is not None and needed > available - fh.tell():
        raise InputError(
            label,
            f"corrupt or truncated {what}: its header claims shape {tuple(shape)} {dtype} "
            f"({needed} bytes) but it holds {max(available - fh.tell(), 0)}",
        )
    require_memory(count, dtype.itemsize, f"{what} of shape {tuple(shape)} {dtype}", label)
    return needed


def check_npz_headers(archive: Any, label: str) -> None:
    """Check every member's header against its size in the zip directory and against memory."""
    zf = archive.zip
    names = set(zf.namelist())
    total = 0
    for key in archive.files:
        member = key + ".npy" if key + ".npy" in names else key
        try:
            info = zf.getinfo(member)
            with zf.open(info) as fh:
                total += check_npy_header(fh, info.file_size, label, f"array {key!r} of the npz archive")
        except (OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
            raise load_error(label, f"array {key!r} of the npz archive", exc) from None
    require_memory(total, 1, "the arrays of the npz archive", label)


def read_npz_arrays(path: str | os.PathLike[str], what: str = "npz archive") -> dict[str, np.ndarray]:
    """Every member of the ``.npz`` file ``path`` as an array, each header checked first; no pickles.

    ``what`` names the kind of file in messages (``"model file written by
    mcmc lda --save-model"``).

    Raises
    ------
    InputError
        Naming ``path``: missing, not a zip archive, a member whose header
        claims more than the file holds or the machine can, a member holding
        Python objects (named), a corrupt member.
    """
    label = os.fspath(path)
    try:
        with open(label, "rb") as fh:
            magic = fh.read(4)
    except FileNotFoundError:
        raise InputError(label, "no such file") from None
    except IsADirectoryError:
        raise InputError(label, f"is a directory, not a {what}") from None
    except OSError as exc:
        raise InputError(label, f"cannot be read ({exc.strerror or exc})") from None
    if magic not in (b"PK\x03\x04", b"PK\x05\x06"):  # NumPy would read anything else as a pickle
        raise InputError(label, f"not a {what} (not an .npz archive)")
    try:
        archive = np.load(label, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise load_error(label, what, exc) from None
    arrays: dict[str, np.ndarray] = {}
    with archive:
        check_npz_headers(archive, label)
        for key in archive.files:
            try:
                arrays[key] = archive[key]
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
                raise load_error(label, f"array {key!r}", exc) from None
    return arrays
