"""The files a command reads and writes: standard input, and the chains file it writes.

The formats are ``core``'s (:func:`mcmc.core.chains.write_chains`); this
module only says where the bytes go (a path, written atomically, or standard
output for ``-o -``) and refuses what cannot work before any sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, BinaryIO

from mcmc.core.chains import CHAINS_SUFFIXES, Chains, write_chains
from mcmc.core.errors import UsageError

__all__ = ["check_chains_output", "piped_stdin", "write_chains_to"]


def piped_stdin(files: Sequence[str], stdin: BinaryIO | None, example: str = "") -> BinaryIO | None:
    """The stream to read for ``"-"`` among ``files`` (``None`` when no file is ``"-"``).

    Raises :class:`UsageError` when ``"-"`` is given and ``stdin`` is a
    terminal: a person would wait for input that never comes.
    """
    if "-" not in files:
        return None
    if stdin is None or stdin.isatty():
        raise UsageError(f"-: standard input is a terminal; pipe a chains file in{', ' + example if example else ''}")
    return stdin


def check_chains_output(output: str) -> None:
    """Refuse, before any work, a chains file name whose format ``core`` cannot write."""
    if output != "-" and Path(output).suffix.lower() not in CHAINS_SUFFIXES:
        raise UsageError(
            f"{output}: unknown output format {Path(output).suffix or '(none)'!r}; use .npz or .nc (or - for stdout)"
        )


def write_chains_to(chains: Chains, output: str, stdout: IO[bytes] | None) -> None:
    """Write ``chains`` to ``output`` (``.npz`` or ``.nc``, atomically), or as npz to ``stdout`` for ``-``."""
    if output == "-":
        if stdout is None:
            raise UsageError("-o -: no standard output to write to")
        write_chains(chains, stdout)
        stdout.flush()
    else:
        write_chains(chains, output)
