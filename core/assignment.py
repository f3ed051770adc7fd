"""The linear sum assignment (the Hungarian method) of SciPy, without importing ``scipy.optimize``.

Matching the topics of two LDA chains (``mcmc lda``'s gate, ``mcmc diagnose``
on an LDA chains file) or a fit's topics to the true ones is one call of
SciPy's compiled solver, ``scipy.optimize._lsap``. Importing it the usual way
runs ``scipy.optimize/__init__``, which imports linear programming, SciPy's
FFT, ``scipy.linalg`` and ``scipy.special``: 0.25 s of CPU, most of a one-sweep
``mcmc lda`` on a small corpus (``bench/startup.py``), for a solver that
needs none of them. :func:`linear_sum_assignment` loads the compiled module
alone from SciPy's folder (it depends on NumPy only) and falls back to the
ordinary import when that file is not where SciPy 1.x keeps it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

__all__ = ["linear_sum_assignment", "match"]


@cache
def _solver() -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    import importlib.machinery  # start-up: only when an assignment is solved
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("scipy")
        folder = Path(spec.origin).parent / "optimize" if spec is not None and spec.origin else None
        for suffix in importlib.machinery.EXTENSION_SUFFIXES if folder is not None else ():
            path = folder / f"_lsap{suffix}"
            if path.is_file():
                ext = importlib.util.spec_from_file_location("scipy.optimize._lsap", path)
                if ext is None or ext.loader is None:
                    break
                module: Any = importlib.util.module_from_spec(ext)
                ext.loader.exec_module(module)
                return module.linear_sum_assignment
    except (ImportError, OSError, AttributeError):
        pass
    # start-up: the ordinary import, only where SciPy's layout differs
    from scipy.optimize import linear_sum_assignment as solve

    return solve


def linear_sum_assignment(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.optimize.linear_sum_assignment(cost)``: row indices and their columns, the summed cost least."""
    return _solver()(np.asarray(cost, dtype=np.float64))


def match(cost: np.ndarray) -> np.ndarray:
    """The permutation minimizing the summed cost of a square ``cost``: row ``k`` goes to column ``match[k]``."""
    rows, cols = linear_sum_assignment(cost)
    out = np.empty(np.shape(cost)[0], dtype=np.int64)
    out[rows] = cols
    return out
