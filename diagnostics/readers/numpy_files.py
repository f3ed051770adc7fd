"""This project's ``.npz`` chains files, ArviZ's ``.npz`` examples and bare ``.npy``/``.npz`` arrays.

Loaded without ``allow_pickle`` (an object array is refused), every member's
header checked against the file's size and the machine's memory before NumPy
allocates it. A bare array carries no axis names: :class:`Bare` says how to
read it (see :func:`mcmc.diagnostics.readers.read_chains`).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.chains import (
    ATTRS_KEY,
    RESUME_KEY,
    RESUME_PREFIX,
    STATS_PREFIX,
    WARMUP_PREFIX,
    WARMUP_STATS_PREFIX,
    Chains,
    Resume,
)
from mcmc.core.errors import InputError
from mcmc.core.npz import check_npy_header, check_npz_headers, load_error
from mcmc.diagnostics.readers.base import Bare, Format, name_last_axis, not_bare

_BARE_NAME = re.compile(r"arr_[0-9]+")  # np.savez(path, a, b): positional arrays


def read_npz(data: bytes | Path, label: str, bare: Bare = Bare()) -> Chains:  # noqa: B008 - frozen
    """A chains ``.npz`` (variables by name, ``sample_stats__NAME``, JSON ``__attrs__``) or one of bare arrays.

    The warm-up draws (``warmup_posterior__NAME``, ``warmup_sample_stats__NAME``)
    are read into :attr:`Chains.warmup_posterior` and
    :attr:`Chains.warmup_sample_stats`; a resume section (``__resume__``,
    ``resume__NAME``) is not read (:func:`read_npz_resume` reads it).
    """
    return _read_npz(data, label, bare, resume=False)


def read_npz_resume(path: str) -> Chains:
    """A chains file or checkpoint of ``mcmc`` with its resume section (:attr:`Chains.resume`), for ``--resume``."""
    file = Path(path)
    if not file.is_file():
        raise InputError(path, "no such file" if not file.exists() else "not a file")
    try:
        return _read_npz(file, path, Bare(), resume=True)
    except OSError as exc:  # unreadable (permissions, I/O): one line naming the file
        raise InputError(path, exc.strerror or type(exc).__name__) from None


def _read_npz(data: bytes | Path, label: str, bare: Bare, *, resume: bool) -> Chains:
    posterior: dict[str, np.ndarray] = {}
    stats: dict[str, np.ndarray] = {}
    attrs: dict[str, Any] = {}
    warmup: dict[str, np.ndarray] = {}
    warmup_stats: dict[str, np.ndarray] = {}
    resume_header: dict[str, Any] | None = None
    resume_arrays: dict[str, np.ndarray] = {}
    # the file is ours to close, also when NumPy rejects it
    with data.open("rb") if isinstance(data, Path) else io.BytesIO(data) as fh:
        if fh.read(4) not in (b"PK\x03\x04", b"PK\x05\x06"):  # NumPy would read anything else as a pickle
            raise InputError(label, "not an .npz archive (a chains file of mcmc is a zip of .npy members)")
        fh.seek(0)
        try:
            archive = np.load(fh, allow_pickle=False)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise load_error(label, "npz archive", exc) from None
        with archive:
            check_npz_headers(archive, label)
            for key in archive.files:
                if not resume and (key == RESUME_KEY or key.startswith(RESUME_PREFIX)):
                    continue  # what a run needs to go on: not draws
                try:
                    array = archive[key]
                except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
                    raise load_error(label, f"array {key!r} of the npz archive", exc) from None
                if not isinstance(array, np.ndarray):
                    raise InputError(label, f"member {key!r} of the archive is not a NumPy array")
                if key == ATTRS_KEY:
                    attrs = _attrs_from_json(array, label)
                elif key == RESUME_KEY:
                    resume_header = _attrs_from_json(array, label)
                elif key.startswith(RESUME_PREFIX):
                    resume_arrays[key[len(RESUME_PREFIX) :]] = array
                elif key.startswith(STATS_PREFIX):
                    stats[key[len(STATS_PREFIX) :]] = array
                elif key.startswith(WARMUP_PREFIX):
                    warmup[key[len(WARMUP_PREFIX) :]] = array
                elif key.startswith(WARMUP_STATS_PREFIX):
                    warmup_stats[key[len(WARMUP_STATS_PREFIX) :]] = array
                else:
                    posterior[key] = array
    unnamed = bool(posterior) and not stats and not attrs and all(_BARE_NAME.fullmatch(k) for k in posterior)
    if unnamed:
        posterior = {key: orient(array, label, bare.layout, key) for key, array in posterior.items()}
        posterior = name_last_axis(posterior, bare.names, label)
        attrs = _layout_attrs(bare)
    elif bare.given:
        raise InputError(label, not_bare(bare))
    found = None if resume_header is None else Resume(resume_header, resume_arrays)
    return Chains(posterior, stats, attrs, warmup_posterior=warmup, warmup_sample_stats=warmup_stats,
                  resume=found).validate(label, allow_no_draws=resume)  # fmt: skip


def read_npy(data: bytes, label: str, bare: Bare = Bare()) -> Chains:  # noqa: B008 - frozen
    """A bare ``.npy`` array ``(chain, draw[, dim])`` as the variable ``x`` (or ``bare.names``)."""
    check_npy_header(io.BytesIO(data), len(data), label, ".npy array")
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise load_error(label, ".npy array", exc) from None
    if array.ndim < 2:
        raise InputError(label, f".npy array has shape {array.shape}; expected (chain, draw) or (chain, draw, dim)")
    posterior = name_last_axis({"x": orient(array, label, bare.layout)}, bare.names, label)
    return Chains(posterior, {}, _layout_attrs(bare)).validate(label)


def _layout_attrs(bare: Bare) -> dict[str, Any]:
    """``{"layout": "draw,chain"}`` for an array read as emcee's ``get_chain()`` saves it: its chains are walkers."""
    return {"layout": bare.layout} if bare.layout == "draw,chain" else {}


def orient(array: np.ndarray, label: str, layout: str | None, name: str = "x") -> np.ndarray:
    """A bare array as ``(chain, draw, ...)``, by ``layout`` (see :func:`mcmc.diagnostics.readers.read_chains`)."""
    if array.ndim < 2:
        return array  # Chains.validate names the shape
    if layout == "draw,chain":
        return np.swapaxes(array, 0, 1)
    if layout is None and array.shape[0] > array.shape[1]:
        chains, draws = array.shape[:2]
        raise InputError(
            label,
            f"bare array {name!r} of shape {array.shape} would be {chains} chains of only {draws} draws; "
            "if it is (draw, chain, ...), as emcee's sampler.get_chain() saves it, pass --layout draw,chain "
            "(--layout chain,draw reads it as it is)",
        )
    return array


def _attrs_from_json(array: np.ndarray, label: str) -> dict[str, Any]:
    if array.ndim != 0 or array.dtype.kind not in "US":
        raise InputError(label, f"{ATTRS_KEY} must be a 0-d string array, not {array.dtype} {array.shape}")
    try:
        attrs = json.loads(str(array[()].decode() if array.dtype.kind == "S" else array[()]))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(label, f"{ATTRS_KEY} is not valid JSON ({exc})") from None
    if not isinstance(attrs, dict):
        raise InputError(label, f"{ATTRS_KEY} is JSON but not an object")
    return attrs


NPZ = Format(
    "npz", "chains .npz", "an .npz (zip) archive", read_npz,
    magic=(b"PK\x03\x04", b"PK\x05\x06"),  # a zip archive; the second an empty one
    extensions=(".npz",), bare=True, from_path=True,  # NumPy reads the members straight into their arrays
)  # fmt: skip
NPY = Format(
    "npy", ".npy of shape (chain, draw[, dim])", "a NumPy .npy array", read_npy, magic=(b"\x93NUMPY",),
    extensions=(".npy",), bare=True,
)  # fmt: skip
