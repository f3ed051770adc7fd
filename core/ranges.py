"""The valid values of the real-valued settings users give: one table, checked before any work.

A sampler's tuning (``mcmc sample --scale``, ``mcmc compare -P rwm:scale=``)
and a model's hyperparameters (``mcmc lda --alpha``) follow the same rules
wherever they are given, and a bad value is refused with one line before a
corpus is read or a draw is made, instead of running into NaN arithmetic (and
a NumPy RuntimeWarning) or an error after minutes of work. Counts (chains,
draws, topics) are whole numbers with a lower bound, checked by the option
parser itself (``min=``). Every value must be finite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from mcmc.core.errors import UsageError


class Range(NamedTuple):
    """An interval of the real line; ``None`` bounds are open to infinity.

    A NamedTuple rather than a dataclass: ``mcmc --help`` imports this table
    (the sampler registry shows bounded ranges), and a frozen dataclass costs
    half a millisecond to create.
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def __contains__(self, value: float) -> bool:
        if not math.isfinite(value) or (self.integer and not float(value).is_integer()):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)

    def __str__(self) -> str:
        kind = "a whole number" if self.integer else "a number"
        if self.high is None:
            return f"{kind} {'>' if self.low_open else '>='} {self.low:g}" if self.low is not None else f"finite {kind}"
        return f"{kind} in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"


POSITIVE = Range(0.0, low_open=True)
NON_NEGATIVE = Range(0.0)

#: Setting (the keyword the library takes) -> its valid values.
RANGES: dict[str, Range] = {
    # samplers (mcmc sample --NAME, mcmc compare -P SAMPLER:NAME=)
    "scale": POSITIVE,
    "width": POSITIVE,
    "step_size": POSITIVE,
    "path_length": POSITIVE,
    "max_energy_error": POSITIVE,
    "target_accept": Range(0.0, 1.0, low_open=True, high_open=True),
    "persistence": Range(0.0, 1.0, high_open=True),
    "particles": Range(2.0, integer=True),
    "max_tree_depth": Range(1.0, 30.0, integer=True),
    "budget": Range(1.0, integer=True),
    "n_steps": Range(1.0, 1024.0, integer=True),
    "jitter": Range(0.0, 1.0, high_open=True),
    # mcmc compare
    "grad_cost": NON_NEGATIVE,
    "max_z": NON_NEGATIVE,
    # mcmc lda
    "alpha": POSITIVE,
    "beta": POSITIVE,
    "holdout": Range(0.0, 1.0, high_open=True),
    "min_df": POSITIVE,
    "max_df": Range(0.0, 1.0, low_open=True),
    "optimize_interval": Range(0.0, integer=True),
    "optimize_burn_in": Range(0.0, integer=True),
}


def check_setting(name: str, value: Any, where: str | None = None) -> None:
    """Refuse ``value`` of the setting ``name`` outside :data:`RANGES` (a name not listed passes).

    ``where`` is how the user gave it (``"--scale"``, ``"-P 'rwm:scale=-1'"``);
    by default the option ``--name``.

    Raises
    ------
    UsageError
        ``where: must be a number > 0, got -1``.
    """
    valid = RANGES.get(name)
    if valid is None or value is None:
        return
    where = where or f"--{name.replace('_', '-')}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in valid:
        raise UsageError(f"{where} must be {valid}, got {value!r}")


def check_settings(values: Mapping[str, Any]) -> None:
    """:func:`check_setting` for each ``name: value`` given as the option ``--name`` (``None``: not given)."""
    for name, value in values.items():
        check_setting(name, value)
