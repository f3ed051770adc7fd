"""CSV output of any result object: its ``to_table()``, one row per parameter or sampler (see docs/formats.md).

Undefined values are empty fields (read as NA by R and NaN by pandas);
numbers are written with full precision (shortest round-trip repr); booleans
as ``true``/``false``.
"""

from __future__ import annotations

import csv
from typing import Any, TextIO

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import csv_cell


def render(result: Any, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """``result.to_table()`` as CSV (every result type has one; no display option applies)."""
    columns, rows = result.to_table()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(columns)
    w.writerows([csv_cell(v) for v in row] for row in rows)
