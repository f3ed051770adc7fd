"""What a sampler's run needs to go on, as plain arrays and a JSON header (format ``mcmc.resume``, version 1).

``mcmc sample -o run.npz`` writes beside the draws everything the driver
needs to continue the same chains (``docs/formats.md``, "Going on from a
chains file"): each chain's last state (every field of the sampler's
``State``), the parameters warm-up tuned (``adapter.final()``: step sizes,
metrics, proposal scales), each chain's position in its random stream
(:meth:`mcmc.core.random.ChainRandom.get_state`), the iterations done and
asked for, and what defines the problem (built by the command that ran it,
compared by the command that goes on). A checkpoint is the same file with
fewer draws.

Nothing here is specific to a sampler: a ``State`` is any NamedTuple of
arrays (or ``None``), and a tuned parameter is an array with a leading chain
axis, or a JSON value (a number, a word, a flag, ``None``) shared by every
chain. Chain ``i``'s numbers depend only on the seed and ``i``
(:mod:`mcmc.core.random`), so a run that stops and goes on writes the bytes
of the run that never stopped (``tests/test_resume.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from mcmc.core.chains import Resume
from mcmc.core.errors import InputError
from mcmc.core.random import KINDS, ChainRandom

FORMAT = "mcmc.resume"
VERSION = 1
#: What ran: the driver's samplers (``sample``), a Bayesian network's (``network``), an LDA fit (``lda``).
KINDS_OF_RUN = ("sample", "network", "lda")


def file_digest(path: str) -> str:
    """SHA-256 of the file at ``path`` (hex): what a run records of its target and data files."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror})") from None
    return h.hexdigest()


def header(kind: str, problem: Mapping[str, Any], goal: int, done: int, **extra: Any) -> dict[str, Any]:
    """The JSON header of a run of ``kind`` that asked for ``goal`` iterations and did ``done``."""
    return {"format": FORMAT, "version": VERSION, "kind": kind, "problem": dict(problem), "goal": int(goal),
            "done": int(done), **extra}  # fmt: skip


def check_header(resume: Resume | None, source: str, kind: str) -> dict[str, Any]:
    """The header of ``resume`` after checking its format, version and kind of run.

    Raises
    ------
    InputError
        No resume section (a file not written by ``mcmc sample`` or ``mcmc lda``
        of this format, or an ``.nc`` file), another format or version, another
        kind of run.
    """
    if resume is None:
        raise InputError(source, "has nothing to resume from (not a .npz chains file written by mcmc with "
                                 "what a run needs to go on)")  # fmt: skip
    h = resume.header
    if h.get("format") != FORMAT:
        raise InputError(source, f"resume section of format {h.get('format')!r}, not {FORMAT!r}")
    if h.get("version") != VERSION:
        raise InputError(source, f"written by {FORMAT} version {h.get('version')!r}; this mcmc goes on from "
                                 f"version {VERSION} only")  # fmt: skip
    if h.get("kind") != kind:
        what = {"sample": "mcmc sample", "network": "mcmc sample on a Bayesian network", "lda": "mcmc lda"}
        raise InputError(source, f"is a run of {what.get(h.get('kind'), repr(h.get('kind')))}, "
                                 f"not of {what[kind]}")  # fmt: skip
    for key in ("goal", "done"):
        if not isinstance(h.get(key), int) or h[key] < 0:
            raise InputError(source, f"resume header: {key!r} is not a count")
    return h


def rng_arrays(rng: ChainRandom) -> dict[str, np.ndarray]:
    """The streams' state under ``rng__`` names."""
    return {f"rng__{k}": v for k, v in rng.get_state().items()}


def restore_rng(rng: ChainRandom, arrays: Mapping[str, np.ndarray], source: str) -> None:
    """Put back the streams' state saved by :func:`rng_arrays` (raises :class:`InputError` if it does not fit)."""
    names = ["bit_generator", *KINDS, *(f"{k}_unread" for k in KINDS)]
    try:
        rng.set_state({k: arrays[f"rng__{k}"] for k in names})
    except KeyError as exc:
        raise InputError(source, f"resume section lacks {exc.args[0]!r}") from None
    except ValueError as exc:
        raise InputError(source, f"resume section: {exc}") from None


def pack_state(state: NamedTuple, prefix: str = "state__") -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A sampler ``State`` as ``({"fields": [...], "none": [...], ...}, {"state__FIELD": array})``.

    A field that is itself a NamedTuple (a table built once, carried along)
    is packed the same way under ``state__FIELD__SUB`` (``"nested"``); a
    Python number stays one, in the header (``"scalars"``), so that what it
    feeds (an attribute) is written as before.
    """
    spec: dict[str, Any] = {"fields": list(state._fields), "none": []}
    arrays: dict[str, np.ndarray] = {}
    for k, v in state._asdict().items():
        if v is None:
            spec["none"].append(k)
        elif isinstance(v, tuple) and hasattr(v, "_fields"):
            sub_spec, sub_arrays = pack_state(v, f"{prefix}{k}__")
            spec.setdefault("nested", {})[k] = sub_spec
            arrays.update(sub_arrays)
        elif isinstance(v, (bool, int, float)):
            spec.setdefault("scalars", {})[k] = v
        else:
            arrays[f"{prefix}{k}"] = np.asarray(v)
    return spec, arrays


def unpack_state(template: NamedTuple, spec: Mapping[str, Any], arrays: Mapping[str, np.ndarray],
                 source: str, prefix: str = "state__") -> Any:  # fmt: skip
    """The ``State`` saved by :func:`pack_state`, as an instance of ``template``'s class."""
    if list(spec.get("fields", ())) != list(template._fields):
        raise InputError(source, f"resume section: the sampler's state has fields {spec.get('fields')}, "
                                 f"this sampler's {list(template._fields)}")  # fmt: skip
    nested, scalars = dict(spec.get("nested", {})), dict(spec.get("scalars", {}))
    values = {}
    for k in template._fields:
        if k in spec.get("none", ()):
            values[k] = None
        elif k in nested:
            inner = getattr(template, k)
            if not (isinstance(inner, tuple) and hasattr(inner, "_fields")):
                raise InputError(source, f"resume section: the state's {k!r} is not this sampler's")
            values[k] = unpack_state(inner, nested[k], arrays, source, f"{prefix}{k}__")
        elif k in scalars:
            values[k] = scalars[k]
        elif f"{prefix}{k}" in arrays:
            values[k] = np.array(arrays[f"{prefix}{k}"])
        else:
            raise InputError(source, f"resume section lacks the state's {k!r}")
    return template._replace(**values)


def pack_params(params: Mapping[str, Any], chains: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Tuned parameters as ``({"json": {...}, "arrays": [...]}, {"param__NAME": array})``.

    An array with a leading axis of ``chains`` is stored as an array; any
    other value must be JSON (a number, a word, a flag, ``None``, a list).
    """
    as_json: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for k, v in params.items():
        if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == chains:
            arrays[f"param__{k}"] = v
        elif isinstance(v, np.ndarray):
            as_json[k] = {"ndarray": v.tolist(), "dtype": v.dtype.str}
        elif isinstance(v, np.generic):
            as_json[k] = v.item()
        elif v is None or isinstance(v, (bool, int, float, str, list, tuple)):
            as_json[k] = v
        else:
            raise TypeError(f"tuned parameter {k!r} of type {type(v).__name__} cannot be stored")
    # the order too: the sampling kernel receives them as keywords, and they are written in this order
    return {"order": list(params), "json": as_json, "arrays": [k.removeprefix("param__") for k in arrays]}, arrays


def unpack_params(spec: Mapping[str, Any], arrays: Mapping[str, np.ndarray], source: str) -> dict[str, Any]:
    """The parameters saved by :func:`pack_params`."""
    out: dict[str, Any] = {}
    as_json, in_arrays = dict(spec.get("json", {})), set(spec.get("arrays", ()))
    for k in spec.get("order", [*as_json, *in_arrays]):
        if k in in_arrays:
            if f"param__{k}" not in arrays:
                raise InputError(source, f"resume section lacks the tuned parameter {k!r}")
            out[k] = np.array(arrays[f"param__{k}"])
        elif k in as_json:
            v = as_json[k]
            out[k] = np.array(v["ndarray"], dtype=v["dtype"]) if isinstance(v, dict) and "ndarray" in v else v
        else:
            raise InputError(source, f"resume section lacks the tuned parameter {k!r}")
    return out


@dataclass(frozen=True)
class SamplerResume:
    """A sampler's run read back: where it stopped and what it needs to go on (:func:`sampler_resume`)."""

    header: dict[str, Any]
    arrays: dict[str, np.ndarray]
    source: str

    @property
    def done(self) -> int:
        """Sampling iterations done (warm-up excluded)."""
        return int(self.header["done"])

    @property
    def goal(self) -> int:
        """Sampling iterations the run asked for."""
        return int(self.header["goal"])

    @property
    def problem(self) -> dict[str, Any]:
        return dict(self.header["problem"])

    def state(self, template: NamedTuple) -> Any:
        return unpack_state(template, self.header.get("state", {}), self.arrays, self.source)

    def params(self) -> dict[str, Any]:
        return unpack_params(self.header.get("params", {}), self.arrays, self.source)

    def restore_rng(self, rng: ChainRandom) -> None:
        restore_rng(rng, self.arrays, self.source)


def sampler_resume(resume: Resume | None, source: str, kind: str = "sample") -> SamplerResume:
    """The resume section of a file written by the driver (or the network driver), checked (:func:`check_header`)."""
    h = check_header(resume, source, kind)
    return SamplerResume(h, dict(resume.arrays), source)  # type: ignore[union-attr]


def sampler_section(problem: Mapping[str, Any], goal: int, done: int, state: NamedTuple,
                    params: Mapping[str, Any], rng: ChainRandom) -> Resume:  # fmt: skip
    """The resume section of the driver's run: after ``done`` of ``goal`` sampling iterations."""
    state_spec, state_arrays = pack_state(state)
    params_spec, params_arrays = pack_params(params, rng.chains)
    return Resume(header("sample", problem, goal, done, state=state_spec, params=params_spec),
                  {**state_arrays, **params_arrays, **rng_arrays(rng)})


def join_sections(parts: list[Resume]) -> Resume:
    """Resume sections of blocks of chains of one run, as one (arrays joined along the chain axis)."""
    first = parts[0]
    if any(p.header != first.header for p in parts):
        raise ValueError("blocks of chains differ in their resume headers")
    arrays = {}
    for name in first.arrays:
        blocks = [p.arrays[name] for p in parts]
        width = max(b.shape[1] for b in blocks) if blocks[0].ndim == 2 and name.startswith("rng__") else None
        if width is not None:  # unread random values: rows of different lengths, zero-padded
            blocks = [np.pad(b, ((0, 0), (0, width - b.shape[1]))) for b in blocks]
        arrays[name] = np.concatenate(blocks)
    return Resume(dict(first.header), arrays)
