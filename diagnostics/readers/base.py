"""What every reader shares: the :class:`Format` record a format family declares, and bare arrays.

A format is declared once, by the module of its family, as a :class:`Format`:
how it is recognised (first bytes, extensions, a test on its text or on a
directory), how it is named in messages, and the function that reads it.
:mod:`mcmc.diagnostics.readers.registry` lists the records; telling a file's
format, the "supported: ..." message, the ``diagnose`` help and the table of
``docs/formats.md`` all follow that list (the last two are tested against it).

A bare array (``.npy``, an ``.npz`` saved without names, emcee's HDF5 backend)
carries no axis names: :class:`Bare` says how to read it, and a format that
names its own variables refuses one (:func:`not_bare`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError
from mcmc.core.npz import load_error  # noqa: F401 - the readers' one-line load error, re-exported

__all__ = ["Bare", "Format", "decode", "load_error", "name_last_axis", "not_bare"]


@dataclass(frozen=True)
class Bare:
    """How to read arrays that carry no names: axis order and the names of the last axis."""

    layout: str | None = None
    names: tuple[str, ...] | None = None

    @property
    def given(self) -> bool:
        """``--layout`` or ``--names`` was given."""
        return self.layout is not None or self.names is not None


@dataclass(frozen=True)
class Format:
    """One input format of :func:`~mcmc.diagnostics.readers.read_chains`, declared by its family's module.

    Attributes
    ----------
    name
        A short identifier (``"npz"``).
    label
        How lists of the supported formats name it (``"chains .npz"``): the
        "supported: ..." message, the ``diagnose`` help and the first column of
        the input table in ``docs/formats.md``.
    description
        What its content is called when a file's extension says otherwise
        (``"named .csv but the content is an .npz (zip) archive, not text"``).
    read
        ``read(content, label, bare) -> Chains``. ``content`` is the file's
        bytes, its decoded text for a text format (:attr:`text`), or its
        :class:`~pathlib.Path` for a directory format and for one read
        ``from_path``. Raises :class:`~mcmc.core.errors.InputError` naming
        ``label``.
    magic
        First bytes that identify it, whatever the file is called.
    extensions
        Lower-case suffixes of files expected to hold it (several formats may
        share one: ``.csv`` is CmdStan output or a draws table).
    sniff
        For a text format: whether decoded text is of this format. Tried in
        the registry's order after every ``magic``.
    store_files
        For a format stored as a directory: the files, any of which marks such a directory.
    bare
        Takes ``--layout`` and ``--names`` (it may hold bare arrays); any other
        format refuses them.
    from_path
        Read straight from the file, never loaded whole into memory first.
    supported
        False for a format recognised only to be refused with a reason (netCDF-3).
    """

    name: str
    label: str
    description: str
    read: Callable[[Any, str, Bare], Chains]
    magic: tuple[bytes, ...] = ()
    extensions: tuple[str, ...] = ()
    sniff: Callable[[str], bool] | None = None
    store_files: tuple[str, ...] = ()
    bare: bool = False
    from_path: bool = False
    supported: bool = True

    @property
    def text(self) -> bool:
        """Read from decoded text (UTF-8, a byte-order mark allowed)."""
        return self.sniff is not None

    def is_store(self, path: Path) -> bool:
        """Whether the directory ``path`` holds this format."""
        return any((path / name).is_file() for name in self.store_files)


def decode(data: bytes) -> str | None:
    """``data`` as text (UTF-8, a byte-order mark dropped), or ``None`` for binary data."""
    if b"\x00" in data[:4096]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def not_bare(bare: Bare) -> str:
    """Why a file that names its variables refuses ``--layout`` and ``--names``."""
    given = " and ".join(o for o, v in (("--layout", bare.layout), ("--names", bare.names)) if v is not None)
    verb = "apply" if " and " in given else "applies"
    return (
        f"{given} {verb} to bare arrays (.npy, .npz saved without names, emcee's HDF5 backend); "
        "this file names its variables and dimensions"
    )


def name_last_axis(
    posterior: dict[str, np.ndarray], names: tuple[str, ...] | None, label: str
) -> dict[str, np.ndarray]:
    """Split the one bare array's last axis into variables called ``names`` (``--names m,b,log_f``)."""
    if names is None:
        return posterior
    if len(posterior) != 1:
        raise InputError(
            label, f"--names names the last axis of one bare array; this file holds {len(posterior)} "
            f"({', '.join(posterior)})"
        )
    ((key, array),) = posterior.items()
    if array.ndim < 2:
        return posterior  # Chains.validate names the shape
    if array.ndim == 2:
        if len(names) != 1:
            raise InputError(
                label, f"--names gives {len(names)} names but {key!r} of shape {array.shape} (chain, draw) "
                "is one parameter"
            )
        return {names[0]: array}
    if array.shape[-1] != len(names):
        raise InputError(
            label, f"--names gives {len(names)} names ({', '.join(names)}) but the last axis of {key!r} "
            f"(shape {array.shape} as (chain, draw, ...)) has {array.shape[-1]}"
        )
    return {name: array[..., k] for k, name in enumerate(names)}
