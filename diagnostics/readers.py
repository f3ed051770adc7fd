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
* ``.json``: posteriordb reference draws (Magnusson et al. 2024, "posteriordb:
  testing, benchmarking and developing Bayesian inference algorithms",
  arXiv:2407.04967), a list of chains of ``{name: [draws]}``.
* ``-``: standard input, its format told by its first bytes.

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
    "supported: chains .npz, ArviZ netCDF .nc, CmdStan CSV, CSV with chain and draw columns, "
    ".npy of shape (chain, draw[, dim]), posteriordb .json"
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


def read_chains(sources: Sequence[str], *, stdin: BinaryIO | None = None, layout: str | None = None) -> Chains:
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

    Returns
    -------
    Chains
        Variables ``(chain, draw, *shape)`` and statistics ``(chain, draw)``,
        validated. With several files the chains are stacked in file order;
        attributes equal in every file are kept as they are, those that differ
        (a CmdStan ``chain_id``, say) become a list with one value per file,
        and ``attrs["source_files"]`` names the file of each chain.

    Raises
    ------
    InputError
        Missing file, directory, unknown or corrupt format, bad cells, ragged
        chains, files whose variables disagree, a header asking for more memory
        than the machine has; the message names the file.
    UsageError
        An unknown ``layout``.
    """
    if layout is not None and layout not in LAYOUTS:
        raise UsageError(f"--layout must be one of {', '.join(LAYOUTS)} (got {layout!r})")
    if isinstance(sources, (str, os.PathLike)):
        sources = [os.fspath(sources)]
    if not sources:
        raise InputError(None, "no chains file given")
    labels = _expand(sources)
    parts = [(label, _read_one(label, stdin, layout)) for label in labels]
    if len(parts) == 1:
        return parts[0][1]
    return _concatenate(parts)


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


def _read_one(label: str, stdin: BinaryIO | None, layout: str | None) -> Chains:
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
        return _parse(kind, data, label, layout)

    if label == "":
        raise InputError(None, "empty file name")
    path = Path(label)
    if path.is_dir():
        raise InputError(label, "is a directory, not a chains file")
    if not path.exists():
        raise InputError(label, "no such file")
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
        if head.startswith(b"PK") and _sniff(head) == "npz" and _EXTENSIONS.get(path.suffix.lower(), "npz") == "npz":
            # NumPy reads the members straight into their arrays: no copy of the whole file first
            return _read_npz(path, label, layout)
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
        return _parse(found, data, label, layout)
    if expected == "text" and found not in _MAGIC.values():
        # A .csv that is not comma-separated still gets the draws-table reader's message.
        return _parse(found if found == "cmdstan" else "csv", data, label, layout)
    if expected == "nc" and found == "nc3":
        return _parse(found, data, label, layout)
    if found != expected:
        is_text = found in ("cmdstan", "csv") or (found is None and _decode(data) is not None)
        shown = "text" if is_text else found
        raise InputError(label, f"named {path.suffix} but the content is {_DESCRIBE[shown]}, not {_DESCRIBE[expected]}")
    return _parse(found, data, label, layout)


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


def _parse(kind: str, data: bytes, label: str, layout: str | None = None) -> Chains:
    if kind == "npz":
        return _read_npz(data, label, layout)
    if kind == "npy":
        return _read_npy(data, label, layout)
    if layout is not None:
        raise InputError(label, _LAYOUT_NOT_BARE)
    if kind == "nc":
        return _read_netcdf(data, label)
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


def _read_npz(data: bytes | Path, label: str, layout: str | None = None) -> Chains:
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
    bare = bool(posterior) and not stats and not attrs and all(_BARE_NAME.fullmatch(k) for k in posterior)
    if bare:
        posterior = {key: _orient(array, label, layout, key) for key, array in posterior.items()}
    elif layout is not None:
        raise InputError(label, _LAYOUT_NOT_BARE)
    return Chains(posterior, stats, attrs).validate(label)


_LAYOUT_NOT_BARE = "--layout applies to bare arrays (.npy, or .npz saved without names); this file names its dimensions"


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


def _read_npy(data: bytes, label: str, layout: str | None = None) -> Chains:
    _check_npy_header(io.BytesIO(data), len(data), label, ".npy array")
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise _load_error(label, ".npy array", exc) from None
    if array.ndim < 2:
        raise InputError(label, f".npy array has shape {array.shape}; expected (chain, draw) or (chain, draw, dim)")
    return Chains({"x": _orient(array, label, layout)}).validate(label)


def _read_netcdf(data: bytes, label: str) -> Chains:
    import importlib.util

    if importlib.util.find_spec("h5py") is None or importlib.util.find_spec("xarray") is None:
        raise InputError(label, "reading netCDF needs the h5py and xarray packages (pip install h5py)")
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
    return Chains(posterior, stats, attrs).validate(label)


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
