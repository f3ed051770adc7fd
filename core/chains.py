"""The in-memory chains structure and the chains file every subcommand writes.

A run is a :class:`Chains`: variables shaped ``(chain, draw, *shape)``, sampler
statistics shaped ``(chain, draw)`` under ArviZ's names (``acceptance_rate``,
``diverging``, ``energy``, ``lp``, ``tree_depth``, ``n_steps``, ...), and a few
attributes (sampler, target, seed). ``docs/formats.md`` documents the files:

* ``.npz``: one array per variable under its own name, one per statistic under
  ``sample_stats__NAME`` (the layout of ArviZ's own example ``.npz`` files),
  and the attributes as JSON text in the 0-d string array ``__attrs__``. No
  object arrays, so it loads without ``allow_pickle``.
* ``.nc``: ArviZ netCDF (groups ``posterior`` and ``sample_stats``).

Two optional parts ride along (``docs/formats.md``): the warm-up draws, kept
with ``mcmc sample --keep-warmup`` under ArviZ's group names
(``warmup_posterior__NAME``, ``warmup_sample_stats__NAME`` in ``.npz``; groups
``warmup_posterior`` and ``warmup_sample_stats`` in ``.nc``), which
``diagnose`` leaves out unless asked; and, in ``.npz`` only, what a run needs
to go on (:class:`Resume`: a JSON header ``__resume__`` and plain arrays
``resume__NAME``), read back by ``--resume``.

Files are written to a temporary name beside the target and renamed
(:func:`mcmc.core.atomic.atomic_output`), so an interrupted run never leaves a
half-written chains file.
"""

from __future__ import annotations

import io
import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from mcmc.core.atomic import atomic_output
from mcmc.core.errors import InputError, UsageError

STATS_PREFIX = "sample_stats__"
ATTRS_KEY = "__attrs__"
WARMUP_PREFIX = "warmup_posterior__"
WARMUP_STATS_PREFIX = "warmup_sample_stats__"
RESUME_KEY = "__resume__"
RESUME_PREFIX = "resume__"
#: What a checkpoint's name adds to its output's: ``run.npz`` -> ``run.npz.checkpoint.npz`` (``docs/errors.md``).
CHECKPOINT_SUFFIX = ".checkpoint.npz"
#: Member names no variable may take: what they start with, and the exact ones.
RESERVED_PREFIXES = (STATS_PREFIX, WARMUP_PREFIX, WARMUP_STATS_PREFIX, RESUME_PREFIX)
RESERVED_KEYS = (ATTRS_KEY, RESUME_KEY)
CHAINS_SUFFIXES = (".npz", ".nc")  # what write_chains writes, so a command can refuse another before its work


@dataclass
class Resume:
    """What a run needs to go on: a JSON ``header`` and plain ``arrays`` (``docs/formats.md``, ``mcmc.resume``).

    Built and read by :mod:`mcmc.core.resume` (samplers) and
    :mod:`mcmc.core.lda.resume` (LDA); here only carried and written.
    """

    header: dict[str, Any]
    arrays: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class Chains:
    """Draws of several chains, their sampler statistics and attributes.

    Attributes
    ----------
    posterior
        Variable name to array of shape ``(chain, draw, *shape)``.
    sample_stats
        Statistic name (ArviZ's) to array of shape ``(chain, draw)``.
    attrs
        JSON-serialisable run metadata (``sampler``, ``target``, ``seed``, ...).
    coords
        Variable name to one tuple of labels per axis of its ``shape``, as the
        source names them: ArviZ coordinate values (``("Choate", ...)``), or
        CmdStan's 1-based indices (``("1", "2", ...)``). A variable not listed
        here is indexed from 0. See :func:`scalar_names`.
    index_sep
        What separates the labels of a multi-index in a scalar name: ``", "``
        as ArviZ prints ``M[x, p]``, ``","`` as CmdStan and R's ``posterior``
        print ``M[1,2]``.
    warmup_posterior, warmup_sample_stats
        The warm-up draws ``(chain, warmup, *shape)`` and their statistics
        ``(chain, warmup)``, when kept (``mcmc sample --keep-warmup``); not
        part of the draws: ``diagnose`` judges them only when asked.
    resume
        What the run needs to go on (:class:`Resume`), or ``None``.
    """

    posterior: dict[str, np.ndarray]
    sample_stats: dict[str, np.ndarray] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)
    coords: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    index_sep: str = ", "
    warmup_posterior: dict[str, np.ndarray] = field(default_factory=dict)
    warmup_sample_stats: dict[str, np.ndarray] = field(default_factory=dict)
    resume: Resume | None = None

    @property
    def n_warmup(self) -> int:
        """Warm-up draws kept per chain (0 when none were)."""
        arrays = (*self.warmup_posterior.values(), *self.warmup_sample_stats.values())
        return int(arrays[0].shape[1]) if arrays else 0

    @property
    def n_chains(self) -> int:
        return next(iter(self.posterior.values())).shape[0]

    @property
    def n_draws(self) -> int:
        return next(iter(self.posterior.values())).shape[1]

    def validate(self, source: str | None, *, allow_no_draws: bool = False) -> Chains:
        """Check shapes and types; raise :class:`InputError` naming ``source``.

        Returns ``self`` so readers can end with ``return Chains(...).validate(path)``.
        NaN and infinite draws are allowed here: ``diagnose`` gives such a
        parameter an explicit status instead of refusing the whole file.
        ``allow_no_draws``: a checkpoint taken during an LDA fit's burn-in has
        no draws yet, and a run can still go on from it.
        """
        if not self.posterior:
            raise InputError(source, "no variables found")
        first_name, first = next(iter(self.posterior.items()))
        for group, arrays in (("variable", self.posterior), ("statistic", self.sample_stats)):
            for name, arr in arrays.items():
                if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
                    kind = getattr(getattr(arr, "dtype", None), "kind", type(arr).__name__)
                    raise InputError(source, f"{group} {name!r} is not numeric (dtype kind {kind!r})")
                if arr.ndim < 2:
                    raise InputError(
                        source, f"{group} {name!r} has shape {arr.shape}; expected (chain, draw, ...)"
                    )
                if arr.shape[:2] != first.shape[:2]:
                    raise InputError(
                        source,
                        f"{group} {name!r} has {arr.shape[0]} chains x {arr.shape[1]} draws but "
                        f"{first_name!r} has {first.shape[0]} x {first.shape[1]} (ragged chains?)",
                    )
        if first.shape[0] == 0:
            raise InputError(source, "zero chains")
        if first.shape[1] == 0 and not allow_no_draws:
            raise InputError(source, "zero draws")
        for group, arrays in (("warm-up variable", self.warmup_posterior),
                              ("warm-up statistic", self.warmup_sample_stats)):  # fmt: skip
            for name, arr in arrays.items():
                if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf" or arr.ndim < 2 \
                        or arr.shape[0] != first.shape[0] or arr.shape[1] != self.n_warmup:  # fmt: skip
                    raise InputError(source, f"{group} {name!r} has shape {getattr(arr, 'shape', None)}; expected "
                                             f"({first.shape[0]} chains, {self.n_warmup} warm-up draws, ...)")
        for name, labels in self.coords.items():
            if name not in self.posterior:
                raise InputError(source, f"coordinates given for {name!r}, which is not a variable")
            shape = self.posterior[name].shape[2:]
            if tuple(len(axis) for axis in labels) != shape:
                sizes = tuple(len(axis) for axis in labels)
                raise InputError(source, f"variable {name!r} has shape {shape} per draw but labels for {sizes}")
        return self

    def scalar_names(self, variable: str) -> list[str]:
        """Names of the scalar components of ``variable``, labelled as the source labels them."""
        return scalar_names(
            variable, self.posterior[variable].shape[2:], self.coords.get(variable), sep=self.index_sep
        )

    def sliced(self, discard: int = 0, thin: int = 1, source: str | None = None) -> Chains:
        """Drop the first ``discard`` draws of every chain, then keep every ``thin``-th.

        Burn-in and thinning as ``arviz``'s ``.sel(draw=slice(discard, None, thin))``
        and emcee's ``get_chain(discard=, thin=)`` apply them: to the variables
        and the sampler statistics alike. Returns a new :class:`Chains` (views,
        no copy); ``attrs`` records ``discard`` and ``thin`` when they change
        anything.

        Raises
        ------
        UsageError
            ``discard`` negative or ``thin`` below 1.
        InputError
            Nothing left: ``discard`` is at least the number of draws.
        """
        if isinstance(discard, bool) or not isinstance(discard, (int, np.integer)) or discard < 0:
            raise UsageError(f"--discard must be a non-negative whole number (got {discard!r})")
        if isinstance(thin, bool) or not isinstance(thin, (int, np.integer)) or thin < 1:
            raise UsageError(f"--thin must be a whole number of at least 1 (got {thin!r})")
        if discard == 0 and thin == 1:
            return self
        if discard >= self.n_draws:
            raise InputError(
                source, f"--discard {discard} leaves no draws: each chain has {self.n_draws}"
            )
        cut = slice(int(discard), None, int(thin))
        attrs = {**self.attrs}
        if discard:
            attrs["discard"] = int(discard)
        if thin != 1:
            attrs["thin_by"] = int(thin)
        return Chains(
            {name: arr[:, cut] for name, arr in self.posterior.items()},
            {name: arr[:, cut] for name, arr in self.sample_stats.items()},
            attrs,
            dict(self.coords),
            self.index_sep,
            dict(self.warmup_posterior),
            dict(self.warmup_sample_stats),
        )

    def with_warmup(self) -> Chains:
        """The warm-up draws and the draws as one run per chain (``diagnose --include-warmup``).

        Variables and statistics present in both parts are joined along the
        draw axis; the rest are left out. ``attrs["warmup_included"]`` records
        how many leading draws of each chain are warm-up.
        """
        if not self.n_warmup:
            return self
        post = {n: np.concatenate([self.warmup_posterior[n], a], axis=1)
                for n, a in self.posterior.items() if n in self.warmup_posterior}  # fmt: skip
        stats = {n: np.concatenate([self.warmup_sample_stats[n], a], axis=1)
                 for n, a in self.sample_stats.items() if n in self.warmup_sample_stats}  # fmt: skip
        attrs = {**self.attrs, "warmup_included": self.n_warmup}
        return Chains(post, stats, attrs, {n: c for n, c in self.coords.items() if n in post}, self.index_sep)


def scalar_names(
    variable: str,
    shape: tuple[int, ...],
    labels: Sequence[Sequence[str]] | None = None,
    sep: str = ", ",
) -> list[str]:
    """Names of the scalar components of ``variable`` with event ``shape``, row-major, as ArviZ labels them.

    ``scalar_names("tau", ()) == ["tau"]``; ``scalar_names("L", (2, 2))`` gives
    ``L[0, 0], L[0, 1], L[1, 0], L[1, 1]`` (0-based, ", " between indices).
    With ``labels`` (one sequence per axis, :attr:`Chains.coords`) the source's
    own labels replace the positions: ``theta[Choate]`` as ``az.summary``
    prints it, or ``M[1,2]`` (``sep=","``) as CmdStan's ``stansummary`` does.
    The one naming of a scalar parameter: targets, ``diagnose``, ``compare``
    and the run summary all use it, so a name printed by one matches the others.
    """
    if not shape:
        return [variable]
    axes = [range(n) if labels is None else labels[k] for k, n in enumerate(shape)]
    return [f"{variable}[{sep.join(map(str, idx))}]" for idx in itertools.product(*axes)]


def npz_bytes(chains: Chains) -> bytes:
    """Serialise ``chains`` to the bytes of an ``.npz`` chains file."""
    arrays: dict[str, np.ndarray] = {}
    for name, arr in chains.posterior.items():
        if name.startswith(RESERVED_PREFIXES) or name in RESERVED_KEYS:
            raise UsageError(f"variable name {name!r} is reserved in the chains format")
        arrays[name] = np.asarray(arr)
    for name, arr in chains.sample_stats.items():
        arrays[STATS_PREFIX + name] = np.asarray(arr)
    for name, arr in chains.warmup_posterior.items():
        arrays[WARMUP_PREFIX + name] = np.asarray(arr)
    for name, arr in chains.warmup_sample_stats.items():
        arrays[WARMUP_STATS_PREFIX + name] = np.asarray(arr)
    arrays[ATTRS_KEY] = np.array(json.dumps(chains.attrs, sort_keys=True, default=_json_default))
    if chains.resume is not None:
        arrays[RESUME_KEY] = np.array(json.dumps(chains.resume.header, sort_keys=True, default=_json_default))
        for name, arr in chains.resume.arrays.items():
            arrays[RESUME_PREFIX + name] = np.asarray(arr)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _json_default(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def write_chains(chains: Chains, dest: str | os.PathLike[str] | IO[bytes]) -> None:
    """Write ``chains`` to a ``.npz`` or ``.nc`` path, atomically, or as npz to a binary stream.

    The command line passes ``sys.stdout.buffer`` for ``-o -``; this module never
    touches the standard streams itself.
    """
    if not isinstance(dest, (str, os.PathLike)):
        dest.write(npz_bytes(chains))
        return
    target = os.fspath(dest)
    suffix = Path(target).suffix.lower()
    if suffix == ".npz":
        with atomic_output(target) as fh:
            fh.write(npz_bytes(chains))
    elif suffix == ".nc":
        # Serialise first: the temporary file is an open descriptor (its
        # ``name`` is an int), and a failed conversion then leaves no file.
        data = netcdf_bytes(chains)
        with atomic_output(target) as fh:
            fh.write(data)
    else:
        raise UsageError(f"{target}: unknown output format {suffix or '(none)'!r}; use .npz or .nc")


NETCDF_ATTRS_KEY = "mcmc_attrs_json"


def netcdf_bytes(chains: Chains) -> bytes:
    """Serialise ``chains`` to the bytes of an ArviZ netCDF (HDF5) file.

    Each attribute is also written on its own for ArviZ users (netCDF has no
    booleans, dicts or None, so those are JSON text there); the full dict is
    kept as JSON in ``mcmc_attrs_json`` so reading the file back is exact.
    """
    from arviz_base import from_dict  # lazy: ArviZ costs a second to import

    groups: dict[str, Mapping[str, np.ndarray]] = {"posterior": chains.posterior}
    if chains.sample_stats:
        groups["sample_stats"] = chains.sample_stats
    if chains.warmup_posterior:
        groups["warmup_posterior"] = chains.warmup_posterior
    if chains.warmup_sample_stats:
        groups["warmup_sample_stats"] = chains.warmup_sample_stats
    # Our arrays are (chain, draw) by construction; ArviZ's check would warn
    # (an error under -W error) whenever a short run has more chains than draws.
    tree = from_dict(groups, check_conventions=False)
    for node in tree.subtree:
        # ArviZ stamps every group with the wall-clock time; without it the
        # same run (same seed) writes the same bytes, as the .npz does.
        node.attrs.pop("created_at", None)
    for key, value in chains.attrs.items():
        if "\x00" in key:  # HDF5 names cannot hold NUL; the JSON copy below keeps it
            continue
        plain = isinstance(value, (str, int, float, np.integer, np.floating))
        # HDF5 strings cannot hold NUL either: such a string goes as JSON text.
        if plain and not isinstance(value, (bool, np.bool_)) and not (isinstance(value, str) and "\x00" in value):
            tree.attrs[key] = value
        else:
            tree.attrs[key] = json.dumps(value, sort_keys=True, default=_json_default)
    tree.attrs[NETCDF_ATTRS_KEY] = json.dumps(chains.attrs, sort_keys=True, default=_json_default)
    return bytes(tree.to_netcdf(engine="h5netcdf"))
