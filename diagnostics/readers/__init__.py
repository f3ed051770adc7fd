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
* CmdStan CSV, one file per chain (see :mod:`mcmc.diagnostics.readers.cmdstan`).
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

This module finds the files and joins them; which format a file holds is told
by :mod:`.registry`, the one list of formats, each declared by the module of
its family: :mod:`.numpy_files` (``.npz``, ``.npy``), :mod:`.hdf5_files`
(emcee's backend, ArviZ netCDF and zarr), :mod:`.cmdstan` (CmdStan CSV and
draws tables), :mod:`.posteriordb` (JSON). A Bayesian network run's state
codes become indicators ``NODE[STATE]`` by the network code's own encoding,
:func:`mcmc.core.networks.indicators.indicator_chains` (no sampler, no numba).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from mcmc.core.chains import ATTRS_KEY, STATS_PREFIX, Chains
from mcmc.core.errors import InputError, UsageError
from mcmc.core.networks.indicators import indicator_chains
from mcmc.core.paths import expand_pattern
from mcmc.diagnostics.readers.base import Bare, Format, decode, not_bare
from mcmc.diagnostics.readers.registry import MAGIC_BYTES, SUPPORTED, named, sniff, stores

__all__ = ["LAYOUTS", "Growing", "read_chains", "read_growing", "read_posteriordb"]

LAYOUTS = ("chain,draw", "draw,chain")


def read_chains(
    sources: Sequence[str],
    *,
    stdin: BinaryIO | None = None,
    layout: str | None = None,
    names: str | Sequence[str] | None = None,
    discard: int = 0,
    thin: int = 1,
    include_warmup: bool = False,
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
    include_warmup
        Put the warm-up draws a file keeps (``mcmc sample --keep-warmup``)
        before its draws (:meth:`Chains.with_warmup`); by default they are left out.

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
        (:func:`mcmc.core.networks.indicators.indicator_chains`).

    Raises
    ------
    InputError
        Missing file, directory, unknown or corrupt format, bad cells, ragged
        chains, files whose variables disagree, a header asking for more memory
        than the machine has; the message names the file. Weighted draws
        (importance sampling, likelihood weighting: ``attrs["weighted"]``) are
        read as they are, their ``log_weight`` among the sample statistics:
        judging them is :func:`mcmc.diagnostics.report.check.check_weighted`'s.
    UsageError
        An unknown ``layout``; empty, repeated or reserved ``names``; a
        negative ``discard`` or a ``thin`` below 1. (``discard`` that leaves
        no draw is an :class:`InputError` naming the file.)
    """
    if layout is not None and layout not in LAYOUTS:
        raise UsageError(f"--layout must be one of {', '.join(LAYOUTS)} (got {layout!r})")
    bare = Bare(layout, _parse_names(names))
    if isinstance(sources, (str, os.PathLike)):
        sources = [os.fspath(sources)]
    if not sources:
        raise InputError(None, "no chains file given")
    labels = _expand(sources)
    parts = [(label, _read_one(label, stdin, bare)) for label in labels]
    if include_warmup:
        parts = [(label, chains.with_warmup()) for label, chains in parts]
    chains = parts[0][1] if len(parts) == 1 else _concatenate(parts)
    source = labels[0] if len(labels) == 1 else ", ".join(labels)
    # A Bayesian network run stores state codes, whose mean means nothing: its
    # parameters are the state indicators NODE[STATE] (docs/formats.md).
    return indicator_chains(chains.sliced(discard, thin, source), source, weighted_ok=True)


class Growing(InputError):
    """A file being written has no draws to read yet (``read_growing``): wait and look again."""


def read_growing(sources: Sequence[str], *, include_warmup: bool = False) -> Chains:
    """The draws so far of chains files another program is still writing (``mcmc diagnose --follow``).

    Like :func:`read_chains`, with what a file caught mid-write needs: a text
    file (CmdStan CSV, a draws table) is read up to its last complete line (a
    partly written last line is skipped, not an error); a file without draws
    yet, or one whose read fails while it grows, raises :class:`Growing`; the
    chains are cut to the draws every chain has (they grow at different
    speeds). ``mcmc``'s checkpoints are written whole (renamed into place) and
    read as they are.

    Raises
    ------
    Growing
        No file matches yet, or a file has no complete draw yet (the message says which).
    InputError
        A file that cannot be one of the formats at all.
    """
    labels: list[str] = []
    for source in sources:
        labels.extend(expand_pattern(os.fspath(source)))
    labels = [label for label in dict.fromkeys(labels) if os.path.isfile(label)]
    if not labels:
        raise Growing(", ".join(sources), "no such file yet")
    parts = []
    for label in labels:
        try:
            data = Path(label).read_bytes()
        except OSError as exc:
            raise Growing(label, (exc.strerror or str(exc)).lower()) from None
        found = sniff(data)
        if found is None or found.text:
            cut = data.rfind(b"\n")
            data = data[: cut + 1] if cut >= 0 else b""
            found = sniff(data) if data else None
        if found is None:
            raise Growing(label, "no complete draw yet")
        try:
            chains = _read(found, data, label, Bare())
        except InputError as exc:
            raise Growing(label, exc.message) from None
        parts.append((label, chains.with_warmup() if include_warmup else chains))
    draws = min(chains.n_draws for _, chains in parts)
    parts = [(label, chains if chains.n_draws == draws else _first_draws(chains, draws)) for label, chains in parts]
    chains = parts[0][1] if len(parts) == 1 else _concatenate(parts)
    return indicator_chains(chains, labels[0] if len(labels) == 1 else ", ".join(labels))


def _first_draws(chains: Chains, draws: int) -> Chains:
    return Chains({n: a[:, :draws] for n, a in chains.posterior.items()},
                  {n: a[:, :draws] for n, a in chains.sample_stats.items()},
                  chains.attrs, chains.coords, chains.index_sep)  # fmt: skip


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


def _read_one(label: str, stdin: BinaryIO | None, bare: Bare) -> Chains:
    if label == "-":
        if stdin is None:
            raise InputError("-", "standard input is not available here")
        data = stdin.read()
        if isinstance(data, str):  # handed sys.stdin rather than sys.stdin.buffer
            data = data.encode()
        if not data:
            raise InputError("-", "standard input is empty")
        found = sniff(data)
        if found is None:
            raise InputError("-", f"unrecognised format ({SUPPORTED})")
        return _read(found, data, label, bare)

    if label == "":
        raise InputError(None, "empty file name")
    path = Path(label)
    if path.is_dir():
        store = next((fmt for fmt in stores() if fmt.is_store(path)), None)
        if store is not None:
            return _read(store, path, label, bare)
        kinds = " nor ".join(f"{f.description}: no {' or '.join(f.store_files)}" for f in stores())
        raise InputError(label, f"is a directory, not a chains file (nor {kinds})")
    if not path.exists():
        raise InputError(label, "no such file")
    expected = named(path.suffix)
    try:
        with path.open("rb") as fh:
            head = fh.read(MAGIC_BYTES)
        found = sniff(head) if head else None
        if found is not None and found.from_path and (not expected or found in expected):
            return _read(found, path, label, bare)
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(label, (exc.strerror or str(exc)).lower()) from None
    if not data:
        raise InputError(label, "empty file")
    found = sniff(data)
    if not expected:
        if found is None:
            raise InputError(label, f"unrecognised format ({SUPPORTED})")
        return _read(found, data, label, bare)
    if found in expected:
        return _read(found, data, label, bare)
    if all(f.text for f in expected) and (found is None or found.text):
        # Text that is none of the formats its name promises: the last of them (a .csv: the
        # draws-table reader) says what it lacks.
        return _read(expected[-1], data, label, bare)
    shown = found.description if found is not None else "text" if decode(data) is not None else (
        "binary data of unknown format")  # fmt: skip
    raise InputError(label, f"named {path.suffix} but the content is {shown}, not {expected[0].description}")


def _read(fmt: Format, content: bytes | Path, label: str, bare: Bare) -> Chains:
    """Read ``content`` (bytes, or the path of a directory or of a file read in place) as ``fmt``."""
    if bare.given and not fmt.bare:
        raise InputError(label, not_bare(bare))
    if fmt.text and isinstance(content, bytes):
        text = decode(content)
        if text is None:
            raise InputError(label, "not UTF-8 text")
        return fmt.read(text, label, bare)
    return fmt.read(content, label, bare)


def read_posteriordb(path: str | Path) -> Chains:
    """posteriordb reference draws from ``path`` (same as ``read_chains([path])`` for a ``.json`` file)."""
    return read_chains([str(path)])


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
