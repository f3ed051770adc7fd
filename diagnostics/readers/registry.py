"""The one list of input formats, and how a file's format is told from its first bytes and its name.

Each format is a :class:`~mcmc.diagnostics.readers.base.Format` declared by
the module of its family; :data:`FORMATS` lists them, and everything that
names or recognises formats reads it: :func:`sniff` (magic bytes, then each
text format's test, in this order), :func:`named` (what a suffix promises),
:data:`SUPPORTED` (the message for an unrecognised file), and the tests that
hold the ``diagnose`` help and ``docs/formats.md`` to it. A new format is one
record in its family's module (or a new module) and one entry here.
"""

from __future__ import annotations

from mcmc.diagnostics.readers.base import Format, decode
from mcmc.diagnostics.readers.cmdstan import CMDSTAN, DRAWS_TABLE
from mcmc.diagnostics.readers.hdf5_files import HDF5, NETCDF3, ZARR
from mcmc.diagnostics.readers.numpy_files import NPY, NPZ
from mcmc.diagnostics.readers.posteriordb import POSTERIORDB

__all__ = ["FORMATS", "SUPPORTED", "named", "sniff", "stores"]

#: Every format, binary ones (told by their first bytes) first, then the text formats in the order their
#: tests are tried: JSON before CSV (a JSON list has commas too), CmdStan before the plain draws table.
FORMATS: tuple[Format, ...] = (NPZ, NPY, HDF5, NETCDF3, ZARR, POSTERIORDB, CMDSTAN, DRAWS_TABLE)

SUPPORTED = "supported: " + ", ".join(f.label for f in FORMATS if f.supported)

#: Most bytes of a file :func:`sniff` needs to tell a binary format.
MAGIC_BYTES = max(len(m) for f in FORMATS for m in f.magic)


def sniff(data: bytes) -> Format | None:
    """The format of ``data`` from its first bytes, or for text by each text format's test; ``None``: unknown."""
    for fmt in FORMATS:
        if data.startswith(fmt.magic):
            return fmt
    text = decode(data)
    if text is None:
        return None
    return next((fmt for fmt in FORMATS if fmt.sniff is not None and fmt.sniff(text)), None)


def named(suffix: str) -> tuple[Format, ...]:
    """The formats a file named with ``suffix`` is expected to hold, in registry order (none: any)."""
    return tuple(fmt for fmt in FORMATS if suffix.lower() in fmt.extensions)


def stores() -> tuple[Format, ...]:
    """The formats stored as a directory."""
    return tuple(fmt for fmt in FORMATS if fmt.store_files)
