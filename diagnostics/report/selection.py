"""Choosing scalar parameters from chains: ``--var`` patterns, pairing by index, flattening.

:func:`select` reads ``--var`` patterns (exact names, or globs where ``*`` is
any run of characters and ``?`` one character, over variable and scalar
names), :func:`select_keys` picks the same
positions in another run (how ``compare`` pairs a CmdStan run with this
project's), :func:`matches` tells which parameters a pattern selects (the
per-variable limits), and :func:`flatten` stacks a :class:`Selection` into one
``(chain, draw, n)`` array for the batched statistics.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import UsageError


@dataclass(frozen=True)
class Selection:
    """Scalar parameters chosen from a :class:`Chains`, in output order.

    ``items`` holds ``(variable, flat_indices)`` per selected variable;
    ``names``/``variables`` hold one entry per scalar parameter, and ``keys``
    its ``(variable, index tuple)``: the position that identifies it whatever
    labels the source gives it (``theta[0]`` here, ``theta[1]`` in CmdStan).
    """

    items: tuple[tuple[str, tuple[int, ...]], ...]
    names: tuple[str, ...]
    variables: tuple[str, ...]
    shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def keys(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        return tuple(
            (v, tuple(int(k) for k in np.unravel_index(i, self.shapes[v])) if self.shapes[v] else ())
            for v, idx in self.items
            for i in idx
        )


def select(chains: Chains, var: Sequence[str] | None = None, *, missing_ok: bool = False) -> Selection:
    """Choose scalar parameters by variable or scalar name, exactly or by a glob.

    A pattern equal to a name selects it; a pattern with ``*`` (any run of
    characters) or ``?`` (one character) selects the whole variables and the
    scalar names it matches entirely, such as ``theta[*]`` or ``sigma_?``
    (names carry the source's labels, :meth:`Chains.scalar_names`). Every
    other character, brackets included, is itself: a name is never read as a
    regular expression, whose backtracking a pattern such as ``(a+)+`` would
    turn into a hang. An exact name may be typed
    with or without spaces after the commas (``M[1,2]``, ``M[x, p]``). Raises
    :class:`UsageError` listing the available variables when a pattern matches
    nothing, unless ``missing_ok``.
    """
    all_names = {v: chains.scalar_names(v) for v in chains.posterior}
    chosen: dict[str, set[int]] = {}
    for pattern in var or ():
        wild = is_glob(pattern)
        typed = _squeeze(pattern)
        hit = False
        for v, names in all_names.items():
            if pattern == v or (wild and glob_match(pattern, v)):
                chosen.setdefault(v, set()).update(range(len(names)))
                hit = True
                continue
            for i, name in enumerate(names):
                if typed == _squeeze(name) or (wild and glob_match(pattern, name)):
                    chosen.setdefault(v, set()).add(i)
                    hit = True
        if not hit and not missing_ok:
            available = ", ".join(all_names)
            raise UsageError(f"--var {pattern!r} matches no variable or parameter; available variables: {available}")
    if not var:
        chosen = {v: set(range(len(names))) for v, names in all_names.items()}
    items, names, variables = [], [], []
    for v in chains.posterior:  # file order, not pattern order, so output is stable
        if v in chosen:
            idx = tuple(sorted(chosen[v]))
            items.append((v, idx))
            names += [all_names[v][i] for i in idx]
            variables += [v] * len(idx)
    shapes = {v: chains.posterior[v].shape[2:] for v, _ in items}
    return Selection(tuple(items), tuple(names), tuple(variables), shapes)


def select_keys(chains: Chains, keys: Sequence[tuple[str, tuple[int, ...]]]) -> Selection:
    """The parameters at ``keys`` (:attr:`Selection.keys`) of ``chains``, in that order, where present.

    How ``compare`` pairs two runs: by variable and index, so a CmdStan run
    (``theta[1]``, 1-based) and this project's (``theta[0]``) meet.
    """
    items: list[tuple[str, list[int]]] = []
    for v, index in keys:
        arr = chains.posterior.get(v)
        if arr is None or len(index) != arr.ndim - 2 or not all(0 <= k < n for k, n in zip(index, arr.shape[2:])):
            continue
        flat = int(np.ravel_multi_index(index, arr.shape[2:])) if index else 0
        if items and items[-1][0] == v:
            items[-1][1].append(flat)
        else:
            items.append((v, [flat]))
    names: list[str] = []
    variables: list[str] = []
    for v, idx in items:
        all_names = chains.scalar_names(v)
        names += [all_names[i] for i in idx]
        variables += [v] * len(idx)
    shapes = {v: chains.posterior[v].shape[2:] for v, _ in items}
    return Selection(tuple((v, tuple(idx)) for v, idx in items), tuple(names), tuple(variables), shapes)


def matches(pattern: str, names: Sequence[str], variables: Sequence[str]) -> np.ndarray:
    """Which scalar parameters ``pattern`` selects, as :func:`select` reads a ``--var`` pattern; bool ``(n,)``."""
    wild = is_glob(pattern)
    typed = _squeeze(pattern)
    return np.array(
        [
            pattern == v
            or typed == _squeeze(name)
            or (wild and (glob_match(pattern, v) or glob_match(pattern, name)))
            for name, v in zip(names, variables, strict=True)
        ],
        dtype=bool,
    )


def _squeeze(name: str) -> str:
    """``M[1, 2]`` and ``M[1,2]`` alike: ArviZ and CmdStan space a multi-index differently."""
    return re.sub(r",\s+", ",", name) if "[" in name else name


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` has a wildcard (``*`` or ``?``); without one it selects by its exact name only."""
    return "*" in pattern or "?" in pattern


def glob_match(pattern: str, name: str) -> bool:
    """Whether the glob ``pattern`` (``*``: any run of characters, ``?``: one; all else literal) matches all of ``name``.

    The classic two-pointer match, backtracking only to the last ``*``: at most
    ``len(pattern) * len(name)`` steps whatever the pattern, so no pattern can
    hang the run.
    """
    p = n = 0
    star, mark = -1, 0
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            star, mark = p, n
            p += 1
        elif p < len(pattern) and (pattern[p] == "?" or pattern[p] == name[n]):
            p += 1
            n += 1
        elif star >= 0:
            p, mark = star + 1, mark + 1
            n = mark
        else:
            return False
    return all(c == "*" for c in pattern[p:])


def flatten(chains: Chains, selection: Selection) -> np.ndarray:
    """Stack the selected components into one float64 array ``(chain, draw, n)``.

    A view of the chains (no copy) when the selection is one whole float64
    variable: read it, never write to it.
    """
    parts = []
    for v, idx in selection.items:
        arr = chains.posterior[v]
        flat = arr.reshape(arr.shape[0], arr.shape[1], -1)
        if len(idx) != flat.shape[2]:
            flat = flat[:, :, list(idx)]
        parts.append(flat)
    if not parts:
        return np.empty((chains.n_chains, chains.n_draws, 0))
    # one variable taken whole (the common case): no copy of what may be hundreds of megabytes
    stacked = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=2)
    return np.ascontiguousarray(stacked, dtype=np.float64)


def flat_draws(
    chains: Chains, var: Sequence[str] | None = None, *, missing_ok: bool = False
) -> tuple[list[str], np.ndarray]:
    """Scalar parameters of ``chains`` (all, or those ``var`` selects as in ``diagnose --var``).

    Returns their names (``theta[0]``) and draws ``(chain, draw, n)`` as float64.
    """
    selection = select(chains, var, missing_ok=missing_ok)
    return list(selection.names), flatten(chains, selection)
