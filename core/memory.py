"""The one guard against requests for absurd amounts of memory.

A file header (an ``.npy`` shape, an LDA-C count, a UCI ``D``) or an option
(``--dim``, ``--draws``) can ask for terabytes. Allocating first and failing
later gives a ``MemoryError`` traceback, or on Linux with overcommit a process
killed by the OOM killer after minutes of swapping. Every reader and option
that sizes an allocation from user input calls :func:`require_memory` first,
which compares the bytes the request needs with a share of the machine's
physical memory and refuses, naming the file or option and the size, with an
:class:`~mcmc.core.errors.InputError` (exit 2).
"""

from __future__ import annotations

import os

# The share of physical memory one request may take: beyond it the process
# would swap or be killed before it could finish, and it is the rest of the
# work (copies, statistics) that needs what is left.
MEMORY_SHARE = 0.8
_FALLBACK_BYTES = 64 * 2**30  # when the platform cannot say (no sysconf)


def physical_memory() -> int:
    """Bytes of physical memory of this machine (64 GiB when the platform does not say)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return _FALLBACK_BYTES
    if pages <= 0 or page_size <= 0:
        return _FALLBACK_BYTES
    return int(pages) * int(page_size)


def memory_limit() -> int:
    """Largest number of bytes one request may ask for (``MEMORY_SHARE`` of physical memory)."""
    return int(MEMORY_SHARE * physical_memory())


def format_bytes(n: float) -> str:
    """``1.5e12 -> "1.4 TiB"``: binary units, three significant figures."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def require_memory(n_items: int | float, item_size: int, what: str, source: str | None) -> None:
    """Refuse a request for ``n_items`` items of ``item_size`` bytes beyond :func:`memory_limit`.

    Parameters
    ----------
    n_items
        Number of elements asked for (a Python int or float: products of
        header fields must not overflow, so compute them in Python, not NumPy).
    item_size
        Bytes per element (8 for float64).
    what
        What the memory is for, as the message should say it: ``"shape (10000000000,) float64"``.
    source
        The file name or option (``"--dim"``) the request came from.

    Raises
    ------
    InputError
        ``source: WHAT needs 74.5 GiB, more than this machine can hold (limit 18.4 GiB)``.
    """
    from mcmc.core.errors import InputError

    needed = float(n_items) * item_size
    limit = memory_limit()
    if needed > limit:
        raise InputError(
            source,
            f"{what} needs {format_bytes(needed)}, more than this machine can hold "
            f"(limit {format_bytes(limit)}, {MEMORY_SHARE:.0%} of its memory)",
        )
