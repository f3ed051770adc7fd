"""posteriordb reference draws (Magnusson et al. 2024, "posteriordb: testing, benchmarking and developing
Bayesian inference algorithms", arXiv:2407.04967): JSON, a list of chains of ``{name: [draws]}``."""

from __future__ import annotations

import json

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError
from mcmc.diagnostics.readers.base import Format
from mcmc.diagnostics.readers.cmdstan import STAN_INDEX_SEP, group_columns


def read_posteriordb_json(text: str, label: str) -> Chains:
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


def is_json(text: str) -> bool:
    """Whether ``text`` is a JSON array or object (posteriordb's draws are a list of chains)."""
    return text.lstrip()[:1] in ("[", "{")


POSTERIORDB = Format(
    "posteriordb", "posteriordb .json", "posteriordb JSON draws",
    lambda text, label, bare: read_posteriordb_json(text, label), extensions=(".json",), sniff=is_json,
)  # fmt: skip
