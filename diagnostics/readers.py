"""Read chains files of every common kind into one :class:`~mcmc.core.chains.Chains`.

``mcmc diagnose`` (and every other command that reads draws) calls
:func:`read_chains` with the paths the user typed. Supported:

* ``.npz``: this project's chains files and ArviZ's example files (variables
  by name, statistics under ``sample_stats__NAME``, attributes as JSON in
  ``__attrs__``). Loaded without ``allow_pickle``: an object array is refused.
* ``.nc``: ArviZ netCDF-4 (``InferenceData``/``DataTree`` written by ArviZ,
  PyMC, NumPyro, ``mcmc sample -o x.nc``): groups ``posterior`` and, if
  present, ``sample_stats`` (Kumar et al. 2019, "ArviZ a unified library for
  exploratory analysis of Bayesian models in Python", JOSS 4(33), 1143).
  Coordinate labels are kept: ``theta[Choate]``, as ``az.summary`` names it.
* ``.zarr`` directories: the same ArviZ groups in a zarr store (ArviZ's and
  xarray's ``to_zarr``), read by xarray with the ``zarr`` package.
* emcee's HDF5 backend (``emcee.backends.HDFBackend``, Foreman-Mackey et al.
  2013, "emcee: the MCMC hammer", PASP 125, 306): read with h5py; each walker
  is a chain, ``log_prob`` becomes the statistic ``lp``, and emcee's
  acceptance fraction (``accepted / iteration``) the ``acceptance_rate`` of
  every draw of its walker. Only the first ``iteration`` rows are draws (a run
  stopped early leaves the rest allocated but empty).
* CmdStan CSV, one file per chain (see :mod:`mcmc.diagnostics.cmdstan`).
* CSV with ``chain`` and ``draw`` columns (R ``posterior::as_draws_df``).
* ``.npy`` of shape ``(chain, draw)`` or ``(chain, draw, dim)``: variable ``x``.
  A bare array (``.npy``, or an ``.npz`` saved without names, ``arr_0``...)
  carries no axis names, so ``layout`` says which axis is which:
  ``"chain,draw"`` (the default) or ``"draw,chain"`` (emcee's
  ``sampler.get_chain()`` is ``(draw, walker, dim)``). Without an explicit
  layout, a bare array with more chains than draws per chain is refused: it is
  far more likely a draw-major array than a run of thousands of tiny chains,
  and read the wrong way round it passes R-hat (each "chain" spans every walker).
  ``names`` names the last axis of a bare array (``m,b,log_f`` for emcee's
  line fit): each entry becomes a variable of its own.
* ``.json``: posteriordb reference draws (Magnusson et al. 2024, "posteriordb:
  testing, benchmarking and developing Bayesian inference algorithms",
  arXiv:2407.04967), a list of chains of ``{name: [draws]}``.
* ``-``: standard input, its format told by its first bytes.

Burn-in and thinning (``discard``, ``thin``) are applied after reading, to
every file alike (:meth:`~mcmc.core.chains.Chains.sliced`).

Several files are concatenated along the chain axis (the CmdStan case: one
file per chain). A pattern the shell left unexpanded (quoted ``'out_*.csv'``)
is expanded here, in natural order so ``out_10`` follows ``out_9``.

Every problem with the input raises :class:`~mcmc.core.errors.InputError`
naming the file and saying what is wrong in one line.
"""

from __future__ import annotations

import io
import json
import os
import warnings
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from mcmc.core.chains import ATTRS_KEY, NETCDF_ATTRS_KEY, STATS_PREFIX, Chains
from mcmc.core.errors import InputError, UsageError
from mcmc.core.memory import require_memory
from mcmc.core.paths import expand_pattern

LAYOUTS = ("chain,draw", "draw,chain")
_BARE_NAME = re.compile(r"arr_[0-9]+")  # np.savez(path, a, b): positional arrays

SUPPORTED = (
    "supported: chains .npz, ArviZ netCDF .nc or .zarr, emcee HDF5 backend .h5, CmdStan CSV, "
    "CSV with chain and draw columns, .npy of shape (chain, draw[, dim]), posteriordb .json"
)

_MAGIC = {
    b"PK\x03\x04": "npz",
    b"PK\x05\x06": "npz",  # an empty zip archive
    b"\x93NUMPY": "npy",
    b"\x89HDF\r\n\x1a\n": "nc",
    b"CDF\x01": "nc3",
    b"CDF\x02": "nc3",
}
_DESCRIBE = {
    "npz": "an .npz (zip) archive",
    "npy": "a NumPy .npy array",
    "nc": "an HDF5/netCDF-4 file",
    "nc3": "a netCDF-3 file",
    "text": "text",
    "json": "posteriordb JSON draws",
    None: "binary data of unknown format",
}
_EXTENSIONS = {
    ".npz": "npz",
    ".npy": "npy",
    ".nc": "nc",
    ".nc4": "nc",
    ".netcdf": "nc",
    ".h5": "nc",
    ".hdf5": "nc",
    ".csv": "text",
    ".txt": "text",
    ".json": "json",
}


@dataclass(frozen=True)
class _Bare:
    """How to read arrays that carry no names: axis order and the names of the last axis."""

    layout: str | None = None
    names: tuple[str, ...] | None = None


def read_chains(
    sources: Sequence[str],
    *,
    stdin: BinaryIO | None = None,
    layout: str | None = None,
    names: str | Sequence[str] | None = None,
    discard: int = 0,
    thin: int = 1,
) -> Chains:
    """Read one or more chains files into a single :class:`Chains`.

    Parameters
    ----------
    sources
        Paths as the user typed them; ``"-"`` is standard input; a pattern
        with ``*``, ``?`` or ``[`` that names no existing file is expanded.
    stdin
        Binary stream read for ``"-"`` (the CLI passes ``sys.stdin.buffer``).
    layout
        Axis order of bare arrays: ``"chain,draw"`` or ``"draw,chain"``;
        ``None`` reads them as ``"chain,draw"`` but refuses one with more
        chains than draws. For files that name their dimensions a layout is
        an error.
    names
        Names of the last axis of a bare array (``.npy``, ``.npz`` without
        names, emcee's HDF5 backend), as a list or comma-separated text
        (``"m,b,log_f"``); each becomes a variable. A ``(chain, draw)`` array
        takes one name. For files that name their variables it is an error.
    discard, thin
        Drop the first ``discard`` draws of every chain (burn-in), then keep
        every ``thin``-th draw (:meth:`Chains.sliced`).

    Returns
    -------
    Chains
        Variables ``(chain, draw, *shape)`` and statistics ``(chain, draw)``,
        validated. With several files the chains are stacked in file order;
        attributes equal in every file are kept as they are, those that differ
        (a CmdStan ``chain_id``, say) become a list with one value per file,
        and ``attrs["source_files"]`` names the file of each chain. A Bayesian
        network run's integer state codes come back as indicator variables,
        one per node ``(chain, draw, n_states)`` labelled by the states, so its
        parameters are ``NODE[STATE]``
        (:func:`mcmc.diagnostics.network.indicator_chains`).

    Raises
    ------
    InputError
        Missing file, directory, unknown or corrupt format, bad cells, ragged
        chains, files whose variables disagree, a header asking for more memory
        than the machine has, a likelihood-weighting run (weighted draws are
        not chains); the message names the file.
    UsageError
        An unknown ``layout``; empty, repeated or reserved ``names``; a
        negative ``discard`` or a ``thin`` below 1. (``discard`` that leaves
        no draw is an :class:`InputError` naming the file.)
    """
    if layout is not None and layout not in LAYOUTS:
        raise UsageError(f"--layout must be one of {', '.join(LAYOUTS)} (got {layout!r})")
    bare = _Bare(layout, _parse_names(names))
    if isinstance(sources, (str, os.PathLike)):
        sources = [os.fspath(sources)]
    if not sources:
        raise InputError(None, "no chains file given")
    labels = _expand(sources)
    parts = [(label, _read_one(label, stdin, bare)) for label in labels]
    chains = parts[0][1] if len(parts) == 1 else _concatenate(parts)
    source = labels[0] if len(labels) == 1 else ", ".join(labels)
    from mcmc.diagnostics.network import indicator_chains

    # A Bayesian network run stores state codes, whose mean means nothing: its
    # parameters are the state indicators NODE[STATE] (docs/formats.md).
    return indicator_chains(chains.sliced(discard, thin, source), source)


def _parse_names(names: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if names is None:
        return None
    items = names.split(",") if isinstance(names, str) else list(names)
    parsed = tuple(str(name).strip() for name in items)
    if not parsed or any(not name for name in parsed):
        raise UsageError(f"--names must be comma-separated non-empty names (got {names!r})")
    repeated = sorted({name for name in parsed if parsed.count(name) > 1})
    if repeated:
        raise UsageError(f"--names gives {', '.join(repeated)} more than once")
    reserved = [name for name in parsed if name.startswith(STATS_PREFIX) or name == ATTRS_KEY]
    if reserved:
        raise UsageError(f"--names: {reserved[0]!r} is reserved in the chains format")
    return parsed


# --- which files --------------------------------------------------------------


def _expand(sources: Sequence[str]) -> list[str]:
    labels: list[str] = []
    for source in sources:
        source = os.fspath(source)
        matches = expand_pattern(source)
        if not matches:
            raise InputError(source, "no such file (the pattern matches nothing)")
        labels.extend(matches)
    seen: dict[str, str] = {}
    for label in labels:
        key = label if label == "-" else os.path.realpath(label)
        if key in seen:
            # The same chain twice would make R-hat look better than it is.
            raise InputError(label, f"given twice (also as {seen[key]!r})")
        seen[key] = label
    return labels


# --- one file -------------------------------------------------------------------


def _read_one(label: str, stdin: BinaryIO | None, bare: _Bare) -> Chains:
    if label == "-":
        if stdin is None:
            raise InputError("-", "standard input is not available here")
        data = stdin.read()
        if isinstance(data, str):  # handed sys.stdin rather than sys.stdin.buffer
            data = data.encode()
        if not data:
            raise InputError("-", "standard input is empty")
        kind = _sniff(data)
        if kind is None:
            raise InputError("-", f"unrecognised format ({SUPPORTED})")
        return _parse(kind, data, label, bare)

    if label == "":
        raise InputError(None, "empty file name")
    path = Path(label)
    if path.is_dir():
        if (path / "zarr.json").is_file() or (path / ".zgroup").is_file():
            if bare.layout is not None or bare.names is not None:
                raise InputError(label, _not_bare(bare))
            return _read_zarr(path, label)
        raise InputError(label, "is a directory, not a chains file (nor a zarr store: no zarr.json or .zgroup)")
    if not path.exists():
        raise InputError(label, "no such file")
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
        if head.startswith(b"PK") and _sniff(head) == "npz" and _EXTENSIONS.get(path.suffix.lower(), "npz") == "npz":
            # NumPy reads the members straight into their arrays: no copy of the whole file first
            return _read_npz(path, label, bare)
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(label, (exc.strerror or str(exc)).lower()) from None
    if not data:
        raise InputError(label, "empty file")
    found = _sniff(data)
    expected = _EXTENSIONS.get(path.suffix.lower())
    if expected is None:
        if found is None:
            raise InputError(label, f"unrecognised format ({SUPPORTED})")
        return _parse(found, data, label, bare)
    if expected == "text" and found not in _MAGIC.values():
        # A .csv that is not comma-separated still gets the draws-table reader's message.
        return _parse(found if found == "cmdstan" else "csv", data, label, bare)
    if expected == "nc" and found == "nc3":
        return _parse(found, data, label, bare)
    if found != expected:
        is_text = found in ("cmdstan", "csv") or (found is None and _decode(data) is not None)
        shown = "text" if is_text else found
        raise InputError(label, f"named {path.suffix} but the content is {_DESCRIBE[shown]}, not {_DESCRIBE[expected]}")
    return _parse(found, data, label, bare)


def _sniff(data: bytes) -> str | None:
    """Format of ``data`` from its first bytes: npz, npy, nc, nc3, json, cmdstan, csv or None."""
    for magic, kind in _MAGIC.items():
        if data.startswith(magic):
            return kind
    text = _decode(data)
    if text is None:
        return None
    if text.lstrip()[:1] in ("[", "{"):
        return "json"
    from mcmc.diagnostics.cmdstan import is_cmdstan  # csv and its regexes: only for text input

    if is_cmdstan(text):
        return "cmdstan"
    first = next((line for line in text.splitlines() if line.strip()), "")
    return "csv" if "," in first else None


def _decode(data: bytes) -> str | None:
    if b"\x00" in data[:4096]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _parse(kind: str, data: bytes, label: str, bare: _Bare = _Bare()) -> Chains:  # noqa: B008 - frozen
    if kind == "npz":
        return _read_npz(data, label, bare)
    if kind == "npy":
        return _read_npy(data, label, bare)
    if kind == "nc":
        return _read_hdf5(data, label, bare)
    if bare.layout is not None or bare.names is not None:
        raise InputError(label, _not_bare(bare))
    if kind == "nc3":
        raise InputError(label, "netCDF-3 file; ArviZ chains are netCDF-4 (HDF5) with a posterior group")
    text = _decode(data)
    if text is None:
        raise InputError(label, "not UTF-8 text")
    if kind == "json":
        return _read_posteriordb(text, label)
    from mcmc.diagnostics import cmdstan

    if kind == "cmdstan":
        return cmdstan.read_cmdstan(text, label)
    return cmdstan.read_draws_table(text, label)


def _read_posteriordb(text: str, label: str) -> Chains:
    """posteriordb reference draws (JSON text) as a :class:`Chains`.

    posteriordb stores a reference posterior as JSON: a list of chains, each an
    object from Stan-style parameter name (``mu``, ``theta[1]``, ``L[2,1]``,
    1-based) to the list of its draws. Indexed names are grouped into arrays
    as for CmdStan CSV (``theta[1]`` .. ``theta[8]`` become ``theta`` of shape
    ``(chain, draw, 8)``) and keep their names (``theta[1]`` is still the
    first component's name).

    ``read_chains`` takes a ``*.json`` file (``reference_posteriors/draws/draws/NAME.json``
    in posteriordb, unzipped) by its extension, or JSON text starting with ``[``.

    Returns
    -------
    Chains
        Variables ``(chain, draw, *shape)``; ``attrs["source_files"]`` names the file.

    Raises
    ------
    InputError
        Invalid JSON, not a non-empty list of objects with the
        same names in every chain, ragged or non-numeric draws.
    """
    from mcmc.diagnostics.cmdstan import STAN_INDEX_SEP, group_columns

    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(label, f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, list) or not doc or not all(isinstance(c, dict) and c for c in doc):
        raise InputError(
            label, "not posteriordb reference draws: expected a list of chains, each an object {name: [draws]}"
        )
    names = list(doc[0])
    for i, chain in enumerate(doc):
        if list(chain) != names:
            raise InputError(label, f"chain {i} has parameters {sorted(chain)}; chain 0 has {sorted(names)}")
    try:
        values = np.array([[chain[n] for n in names] for chain in doc], dtype=np.float64)
    except (ValueError, TypeError):
        raise InputError(label, "draws must be equally long lists of numbers in every chain and parameter") from None
    if values.ndim != 3:
        raise InputError(label, "draws must be equally long lists of numbers in every chain and parameter")
    if values.shape[2] < 1:
        raise InputError(label, "no draws")
    posterior, stats, coords = group_columns(names, np.ascontiguousarray(np.moveaxis(values, 1, 2)))
    chains = Chains(posterior, stats, {"source_files": [label], "format": "posteriordb"}, coords, STAN_INDEX_SEP)
    return chains.validate(label)


def read_posteriordb(path: str | Path) -> Chains:
    """posteriordb reference draws from ``path`` (same as ``read_chains([path])`` for a ``.json`` file)."""
    return read_chains([str(path)])


# --- binary formats ---------------------------------------------------------------


def _load_error(label: str, what: str, exc: BaseException) -> InputError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "allow_pickle" in reason or "pickled" in reason:
        return InputError(label, f"{what} holds Python objects (a pickle); refusing to unpickle it")
    return InputError(label, f"corrupt or truncated {what} ({reason})")


def _read_npz(data: bytes | Path, label: str, bare: _Bare = _Bare()) -> Chains:  # noqa: B008 - frozen
    posterior: dict[str, np.ndarray] = {}
    stats: dict[str, np.ndarray] = {}
    attrs: dict[str, Any] = {}
    # the file is ours to close, also when NumPy rejects it
    with data.open("rb") if isinstance(data, Path) else io.BytesIO(data) as fh:
        try:
            archive = np.load(fh, allow_pickle=False)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise _load_error(label, "npz archive", exc) from None
        with archive:
            _check_npz_headers(archive, label)
            for key in archive.files:
                try:
                    array = archive[key]
                except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
                    raise _load_error(label, f"array {key!r} of the npz archive", exc) from None
                if not isinstance(array, np.ndarray):
                    raise InputError(label, f"member {key!r} of the archive is not a NumPy array")
                if key == ATTRS_KEY:
                    attrs = _attrs_from_json(array, label)
                elif key.startswith(STATS_PREFIX):
                    stats[key[len(STATS_PREFIX) :]] = array
                else:
                    posterior[key] = array
    unnamed = bool(posterior) and not stats and not attrs and all(_BARE_NAME.fullmatch(k) for k in posterior)
    if unnamed:
        posterior = {key: _orient(array, label, bare.layout, key) for key, array in posterior.items()}
        posterior = _name_last_axis(posterior, bare.names, label)
    elif bare.layout is not None or bare.names is not None:
        raise InputError(label, _not_bare(bare))
    return Chains(posterior, stats, attrs).validate(label)


def _not_bare(bare: _Bare) -> str:
    given = " and ".join(o for o, v in (("--layout", bare.layout), ("--names", bare.names)) if v is not None)
    verb = "apply" if " and " in given else "applies"
    return (
        f"{given} {verb} to bare arrays (.npy, .npz saved without names, emcee's HDF5 backend); "
        "this file names its variables and dimensions"
    )


def _name_last_axis(
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


def _orient(array: np.ndarray, label: str, layout: str | None, name: str = "x") -> np.ndarray:
    """A bare array as ``(chain, draw, ...)``, by ``layout`` (see :func:`read_chains`)."""
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


def _check_npy_header(fh: BinaryIO, available: int | None, label: str, what: str) -> int:
    """Read an ``.npy`` header from ``fh`` and refuse a shape the data or the machine cannot hold.

    ``available`` is the number of bytes after the header (``None``: unknown).
    Returns the bytes the array needs. Only the header is read, so a hostile
    shape (``(10**10,)`` float64 in a 200-byte file) never reaches
    ``np.load``, which allocates the whole array before reading it.
    """
    from numpy.lib import format as npy_format

    try:
        version = npy_format.read_magic(fh)
        read_header = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}.get(version)
        if read_header is None:  # version 3.0 (UTF-8 field names), rare: np.load judges it
            return 0
        shape, _, dtype = read_header(fh)
    except (ValueError, OSError, EOFError) as exc:
        raise _load_error(label, what, exc) from None
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


def _check_npz_headers(archive: Any, label: str) -> None:
    """Check every member's header against its size in the zip directory and against memory."""
    zf = archive.zip
    names = set(zf.namelist())
    total = 0
    for key in archive.files:
        member = key + ".npy" if key + ".npy" in names else key
        try:
            info = zf.getinfo(member)
            with zf.open(info) as fh:
                total += _check_npy_header(fh, info.file_size, label, f"array {key!r} of the npz archive")
        except (OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
            raise _load_error(label, f"array {key!r} of the npz archive", exc) from None
    require_memory(total, 1, "the arrays of the npz archive", label)


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


def _read_npy(data: bytes, label: str, bare: _Bare = _Bare()) -> Chains:  # noqa: B008 - frozen
    _check_npy_header(io.BytesIO(data), len(data), label, ".npy array")
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise _load_error(label, ".npy array", exc) from None
    if array.ndim < 2:
        raise InputError(label, f".npy array has shape {array.shape}; expected (chain, draw) or (chain, draw, dim)")
    posterior = _name_last_axis({"x": _orient(array, label, bare.layout)}, bare.names, label)
    return Chains(posterior).validate(label)


def _read_hdf5(data: bytes, label: str, bare: _Bare) -> Chains:
    """An HDF5 file: emcee's backend (read with h5py) or ArviZ netCDF-4 (read with xarray)."""
    import importlib.util

    if importlib.util.find_spec("h5py") is None or importlib.util.find_spec("xarray") is None:
        raise InputError(label, "reading netCDF needs the h5py and xarray packages (pip install h5py)")
    import h5py  # lazy, as xarray: only for HDF5 files

    try:
        fh = h5py.File(io.BytesIO(data), "r")
    except Exception:  # noqa: BLE001 -- not readable HDF5: the netCDF reader names the problem
        fh = None
    if fh is not None:
        with fh:
            try:
                group = next((g for g in fh.values() if _is_emcee(g)), None)
                if group is not None:
                    return _read_emcee(group, label, bare)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise _load_error(label, "emcee HDF5 backend", exc) from None
    if bare.layout is not None or bare.names is not None:
        raise InputError(label, _not_bare(bare))
    return _read_netcdf(data, label)


_EMCEE_DATASETS = ("chain", "log_prob", "accepted")


def _is_emcee(group: Any) -> bool:
    """Whether an HDF5 object is the group emcee's ``HDFBackend`` writes (``mcmc`` by default)."""
    import h5py

    return (
        isinstance(group, h5py.Group)
        and "iteration" in group.attrs
        and all(isinstance(group.get(name), h5py.Dataset) for name in _EMCEE_DATASETS)
    )


def _read_emcee(group: Any, label: str, bare: _Bare) -> Chains:
    """Draws of an emcee ``HDFBackend`` group: walkers as chains, ``(walker, draw, dim)``.

    ``chain`` is ``(draw, walker, dim)`` and ``log_prob`` ``(draw, walker)``,
    allocated ahead of the run; ``iteration`` counts the rows written. The
    acceptance fraction is emcee's own (``backend.accepted / iteration``).
    """
    if bare.layout is not None:
        raise InputError(label, "--layout: emcee's HDF5 backend says its own axis order (draw, walker, dim)")
    iteration = int(np.asarray(group.attrs["iteration"]).item())
    chain, log_prob, accepted = (group[name] for name in _EMCEE_DATASETS)
    if chain.ndim != 3 or log_prob.shape != chain.shape[:2] or accepted.shape != chain.shape[1:2]:
        raise InputError(
            label, f"emcee backend {group.name!r}: chain {chain.shape}, log_prob {log_prob.shape} and accepted "
            f"{accepted.shape} do not fit (draw, walker, dim), (draw, walker) and (walker,)"
        )
    if iteration <= 0:
        raise InputError(label, f"emcee backend {group.name!r} holds no draws yet (iteration = {iteration})")
    if iteration > chain.shape[0]:
        raise InputError(
            label, f"corrupt emcee backend {group.name!r}: iteration = {iteration} but only {chain.shape[0]} rows"
        )
    require_memory(iteration * chain.shape[1] * chain.shape[2], 8, "the emcee chain", label)
    x = np.ascontiguousarray(np.swapaxes(chain[:iteration], 0, 1))
    lp = np.ascontiguousarray(np.asarray(log_prob[:iteration]).T)
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.asarray(accepted[:], dtype=np.float64) / iteration
    stats = {"lp": lp, "acceptance_rate": np.repeat(fraction[:, None], iteration, axis=1)}
    attrs: dict[str, Any] = {"sampler": "emcee", "format": "emcee HDF5 backend", "emcee_iteration": iteration}
    if "version" in group.attrs:
        attrs["emcee_version"] = _plain(group.attrs["version"])
    posterior = _name_last_axis({"x": x}, bare.names, label)
    return Chains(posterior, stats, attrs).validate(label)


def _read_zarr(path: Path, label: str) -> Chains:
    """An ArviZ zarr store (a directory), read by xarray's zarr engine."""
    import importlib.util

    if importlib.util.find_spec("zarr") is None or importlib.util.find_spec("xarray") is None:
        raise InputError(label, "reading a zarr store needs the zarr and xarray packages (pip install zarr)")
    import xarray as xr  # lazy: only for zarr stores

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = xr.open_datatree(path, engine="zarr", decode_times=False, decode_timedelta=False)
        except Exception as exc:  # noqa: BLE001 -- zarr/xarray raise many types for a bad store
            raise _load_error(label, "zarr store", exc) from None
        return _chains_from_tree(tree, label)


def _read_netcdf(data: bytes, label: str) -> Chains:
    import xarray as xr  # lazy: xarray and h5py take a second to import

    # A library warning would break the one-line stderr contract; the checks below say what matters.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # Draws are numbers: no CF time decoding that would turn a variable into datetime64.
            tree = xr.open_datatree(io.BytesIO(data), engine="h5netcdf", decode_times=False, decode_timedelta=False)
        except Exception as exc:  # noqa: BLE001 -- h5py/xarray raise many types for a bad file
            raise _load_error(label, "netCDF file", exc) from None
        return _chains_from_tree(tree, label)


def _chains_from_tree(tree: Any, label: str) -> Chains:
    try:
        groups = sorted(tree.children)
        if "posterior" in tree.children:
            posterior_ds = tree["posterior"].to_dataset()
        elif {"chain", "draw"} <= set(tree.to_dataset().dims):
            posterior_ds = tree.to_dataset()  # a bare posterior Dataset written by xarray
        else:
            raise InputError(label, f"no 'posterior' group (groups: {', '.join(groups) or 'none'})")
        posterior = {str(name): _draws(da, label, "variable") for name, da in posterior_ds.data_vars.items()}
        coords = {str(name): labels for name, da in posterior_ds.data_vars.items() if (labels := _labels(da))}
        stats: dict[str, np.ndarray] = {}
        dropped: list[str] = []
        if "sample_stats" in tree.children:
            for name, da in tree["sample_stats"].to_dataset().data_vars.items():
                # Chains keeps (chain, draw) numbers; PyMC also stores warnings and per-draw vectors.
                if set(da.dims) == {"chain", "draw"} and da.dtype.kind in "biuf":
                    stats[str(name)] = _draws(da, label, "statistic")
                else:
                    dropped.append(str(name))
        attrs = _netcdf_attrs(tree, posterior_ds)
        if dropped:
            attrs["dropped_sample_stats"] = dropped
    finally:
        tree.close()
    return Chains(posterior, stats, attrs, coords).validate(label)


def _labels(da: Any) -> tuple[tuple[str, ...], ...] | None:
    """Coordinate labels of a variable's non-sample dimensions, as ``az.summary`` prints them.

    ``None`` when every dimension is labelled 0, 1, 2, ... (ArviZ's default
    ``theta_dim_0``) or has no coordinate: the names are then the positions.
    """
    axes = []
    for dim in da.dims:
        if dim in ("chain", "draw"):
            continue
        n = da.sizes[dim]
        values = da.coords[dim].values if dim in da.coords and da.coords[dim].ndim == 1 else range(n)
        axes.append(tuple(_label(v) for v in values))
    if all(axis == tuple(str(i) for i in range(len(axis))) for axis in axes):
        return None
    return tuple(axes)


def _label(value: Any) -> str:
    value = _plain(value)
    return value if isinstance(value, str) else str(value)


def _draws(da: Any, label: str, group: str) -> np.ndarray:
    if "chain" not in da.dims or "draw" not in da.dims:
        raise InputError(label, f"{group} {da.name!r} has dimensions {tuple(da.dims)}; expected chain and draw")
    return np.asarray(da.transpose("chain", "draw", ...).values)


def _netcdf_attrs(tree: Any, posterior_ds: Any) -> dict[str, Any]:
    root = dict(tree.attrs)
    if NETCDF_ATTRS_KEY in root:  # written by write_chains: the exact dict
        try:
            attrs = json.loads(str(root[NETCDF_ATTRS_KEY]))
            if isinstance(attrs, dict):
                return attrs
        except ValueError:
            pass
    merged = {**dict(posterior_ds.attrs), **root}
    merged.pop(NETCDF_ATTRS_KEY, None)
    return {str(key): _plain(value) for key, value in merged.items()}


def _plain(value: Any) -> Any:
    """netCDF attribute -> JSON-serialisable value."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# --- several files ------------------------------------------------------------------


def _concatenate(parts: list[tuple[str, Chains]]) -> Chains:
    first_label, first = parts[0]
    draws = {label: chains.n_draws for label, chains in parts}
    if len(set(draws.values())) > 1:
        bad = next(label for label, n in draws.items() if n != first.n_draws)
        listed = ", ".join(f"{label} has {n}" for label, n in draws.items())
        raise InputError(bad, f"ragged chains: {listed} draws")
    for label, chains in parts[1:]:
        if set(chains.posterior) != set(first.posterior):
            only_here = sorted(set(chains.posterior) - set(first.posterior))
            missing = sorted(set(first.posterior) - set(chains.posterior))
            raise InputError(
                label,
                f"variables differ from {first_label}: only here {', '.join(only_here) or 'none'}; "
                f"only there {', '.join(missing) or 'none'}",
            )
        for name, array in chains.posterior.items():
            if array.shape[2:] != first.posterior[name].shape[2:]:
                raise InputError(
                    label,
                    f"variable {name!r} has shape {array.shape[2:]} per draw but "
                    f"{first.posterior[name].shape[2:]} in {first_label}",
                )
    posterior = {name: np.concatenate([chains.posterior[name] for _, chains in parts]) for name in first.posterior}
    common = [name for name in first.sample_stats if all(name in c.sample_stats for _, c in parts)]
    stats = {name: np.concatenate([chains.sample_stats[name] for _, chains in parts]) for name in common}
    attrs: dict[str, Any] = {}
    keys = list(dict.fromkeys(key for _, chains in parts for key in chains.attrs))
    for key in keys:
        values = [chains.attrs.get(key) for _, chains in parts]
        attrs[key] = values[0] if all(v == values[0] for v in values) else values
    attrs["source_files"] = [label for label, chains in parts for _ in range(chains.n_chains)]
    for label, chains in parts[1:]:
        if chains.coords != first.coords:
            differs = next(v for v in first.posterior if chains.coords.get(v) != first.coords.get(v))
            raise InputError(label, f"variable {differs!r} has other coordinate labels than in {first_label}")
    return Chains(posterior, stats, attrs, first.coords, first.index_sep).validate(first_label)
