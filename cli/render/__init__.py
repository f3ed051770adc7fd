"""Renderers of a diagnose report, one format per module.

Each module ``mcmc.cli.render.<format>`` exposes one function,
``render(report: Report, out: TextIO) -> None``, writing the whole report as
text to ``out``. :func:`render` picks the module from a :class:`Format` and
imports it only then, so ``mcmc --help`` loads none of them.
"""

from __future__ import annotations

import importlib
import math
from enum import Enum
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mcmc.diagnostics.report import Report


class Format(str, Enum):
    """Output formats of ``mcmc diagnose``."""

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


def render(report: Report, fmt: Format | str, out: TextIO) -> None:
    """Write ``report`` to ``out`` in format ``fmt``."""
    module = importlib.import_module(f"{__name__}.{Format(fmt).value}")
    module.render(report, out)


def finite(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def num(value: float, digits: int = 4) -> str:
    """Human-readable number with ``digits`` significant digits; ``"-"`` when undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}g}"


def ess(value: float) -> str:
    """ESS as a whole number of draws (ArviZ rounds down too)."""
    return str(int(math.floor(value))) if finite(value) else num(value)


def rhat(value: float) -> str:
    """R-hat to 3 decimals: 1.01 vs 1.005 is the distinction that matters."""
    return f"{value:.3f}" if finite(value) else num(value)
