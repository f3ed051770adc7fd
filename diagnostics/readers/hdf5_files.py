"""HDF5 and zarr chains files: emcee's HDF5 backend (h5py), ArviZ netCDF-4 and zarr stores (xarray).

* emcee's ``HDFBackend`` (Foreman-Mackey et al. 2013, "emcee: the MCMC
  hammer", PASP 125, 306): each walker is a chain, ``log_prob`` becomes the
  statistic ``lp`` and emcee's acceptance fraction (``accepted /
  iteration``) the ``acceptance_rate`` of every draw of its walker; only the
  first ``iteration`` rows are draws.
* ArviZ netCDF-4 and zarr (Kumar et al. 2019, JOSS 4(33), 1143): groups
  ``posterior`` and, if present, ``sample_stats``; coordinate labels kept
  (``theta[Choate]``).

h5py and xarray are imported only when such a file is read.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.chains import NETCDF_ATTRS_KEY, Chains
from mcmc.core.errors import InputError
from mcmc.core.memory import require_memory
from mcmc.diagnostics.readers.base import Bare, Format, load_error, name_last_axis, not_bare


def read_hdf5(data: bytes, label: str, bare: Bare) -> Chains:
    """An HDF5 file: emcee's backend (read with h5py) or ArviZ netCDF-4 (read with xarray)."""
    if importlib.util.find_spec("h5py") is None or importlib.util.find_spec("xarray") is None:
        raise InputError(label, "reading netCDF needs the h5py and xarray packages (pip install h5py)")
    import h5py  # start-up: h5py and xarray take a second to import, only for HDF5 files

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
                raise load_error(label, "emcee HDF5 backend", exc) from None
    if bare.given:
        raise InputError(label, not_bare(bare))
    return read_netcdf(data, label)


_EMCEE_DATASETS = ("chain", "log_prob", "accepted")


def _is_emcee(group: Any) -> bool:
    """Whether an HDF5 object is the group emcee's ``HDFBackend`` writes (``mcmc`` by default)."""
    import h5py  # start-up: as in read_hdf5, which has imported it already

    return (
        isinstance(group, h5py.Group)
        and "iteration" in group.attrs
        and all(isinstance(group.get(name), h5py.Dataset) for name in _EMCEE_DATASETS)
    )


def _read_emcee(group: Any, label: str, bare: Bare) -> Chains:
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
        attrs["emcee_version"] = plain(group.attrs["version"])
    posterior = name_last_axis({"x": x}, bare.names, label)
    return Chains(posterior, stats, attrs).validate(label)


def read_zarr(path: Path, label: str, bare: Bare = Bare()) -> Chains:  # noqa: B008 - frozen
    """An ArviZ zarr store (a directory), read by xarray's zarr engine."""
    if importlib.util.find_spec("zarr") is None or importlib.util.find_spec("xarray") is None:
        raise InputError(label, "reading a zarr store needs the zarr and xarray packages (pip install zarr)")
    import xarray as xr  # start-up: xarray takes a second to import, only for zarr stores

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check_zarr_sizes(path, label)
        try:
            tree = xr.open_datatree(path, engine="zarr", decode_times=False, decode_timedelta=False)
        except Exception as exc:  # noqa: BLE001 -- zarr/xarray raise many types for a bad store
            raise load_error(label, "zarr store", exc) from None
        return _chains_from_tree(tree, label, "zarr store")


def _check_zarr_sizes(path: Path, label: str) -> None:
    """Refuse a store whose arrays' metadata claim more than memory holds, from the metadata alone.

    xarray loads the coordinates (``draw``: one entry per draw) as it opens a
    store, and the draws when they are read: a ``zarr.json`` claiming
    ``(4, 10**10)`` would allocate before anything could say no.
    """
    import zarr  # start-up: with xarray, only for zarr stores

    try:
        root = zarr.open_group(str(path), mode="r")
        arrays = [(name, a.shape, a.dtype) for name, a in root.arrays()]
        for group_name, group in root.groups():
            arrays += [(f"{group_name}/{name}", a.shape, a.dtype) for name, a in group.arrays()]
    except Exception as exc:  # noqa: BLE001 -- zarr raises many types for bad metadata
        raise load_error(label, "zarr store", exc) from None
    total = 0
    for name, shape, dtype in arrays:
        count = math.prod(int(n) for n in shape)
        itemsize = getattr(dtype, "itemsize", 8) or 8
        require_memory(count, itemsize, f"array {name!r} of shape {tuple(shape)} {dtype}", label)
        total += count * itemsize
    require_memory(total, 1, "the arrays of the zarr store", label)


def read_netcdf(data: bytes, label: str) -> Chains:
    """ArviZ netCDF-4 (an HDF5 file with a ``posterior`` group), read by xarray's h5netcdf engine."""
    import xarray as xr  # start-up: xarray and h5py take a second to import, only for netCDF files

    # A library warning would break the one-line stderr contract; the checks below say what matters.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # Draws are numbers: no CF time decoding that would turn a variable into datetime64.
            tree = xr.open_datatree(io.BytesIO(data), engine="h5netcdf", decode_times=False, decode_timedelta=False)
        except Exception as exc:  # noqa: BLE001 -- h5py/xarray raise many types for a bad file
            raise load_error(label, "netCDF file", exc) from None
        return _chains_from_tree(tree, label, "netCDF file")


def _chains_from_tree(tree: Any, label: str, what: str) -> Chains:
    try:
        return _read_tree(tree, label)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 -- a corrupt chunk fails when its values are read (zstd, HDF5, ...)
        raise load_error(label, what, exc) from None
    finally:
        tree.close()


def _read_tree(tree: Any, label: str) -> Chains:
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
    value = plain(value)
    return value if isinstance(value, str) else str(value)


def _draws(da: Any, label: str, group: str) -> np.ndarray:
    if "chain" not in da.dims or "draw" not in da.dims:
        raise InputError(label, f"{group} {da.name!r} has dimensions {tuple(da.dims)}; expected chain and draw")
    require_memory(int(da.size), int(da.dtype.itemsize), f"{group} {da.name!r} of shape {tuple(da.shape)}", label)
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
    return {str(key): plain(value) for key, value in merged.items()}


def plain(value: Any) -> Any:
    """netCDF attribute -> JSON-serialisable value."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def refuse_netcdf3(data: bytes, label: str, bare: Bare) -> Chains:
    """A netCDF-3 file is told apart only to say why it is refused: ArviZ writes netCDF-4."""
    raise InputError(label, "netCDF-3 file; ArviZ chains are netCDF-4 (HDF5) with a posterior group")


#: Suffixes of HDF5 files: ArviZ's netCDF-4, emcee's backend.
HDF5_SUFFIXES = (".nc", ".nc4", ".netcdf", ".h5", ".hdf5")

HDF5 = Format(
    "hdf5", "ArviZ netCDF .nc or emcee HDF5 backend .h5", "an HDF5/netCDF-4 file", read_hdf5,
    magic=(b"\x89HDF\r\n\x1a\n",), extensions=HDF5_SUFFIXES, bare=True,  # emcee's chain is a bare array
)  # fmt: skip
NETCDF3 = Format(
    "netcdf3", "netCDF-3", "a netCDF-3 file", refuse_netcdf3, magic=(b"CDF\x01", b"CDF\x02"),
    extensions=HDF5_SUFFIXES, supported=False,
)  # fmt: skip
ZARR = Format("zarr", "ArviZ zarr store .zarr", "a zarr store", read_zarr, store_files=("zarr.json", ".zgroup"))
