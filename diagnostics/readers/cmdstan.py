"""CSV chains: CmdStan output files and plain draws tables.

CmdStan writes one CSV file per chain (Stan Development Team, *CmdStan User's
Guide*, appendix "Stan CSV File Format"): ``#`` comment lines with the run
configuration, a header row, the warmup draws when ``save_warmup`` is on, the
adaptation result as comments (``# Adaptation terminated``, step size,
inverse metric), the draws, and timing comments. Columns ending in ``__`` are
sampler statistics; the others are the model's variables flattened one
element per column, ``theta.1``, ``theta.2.3`` (``theta[1]``, ``theta[2,3]``
in R's ``posterior`` package and CmdStanPy), 1-based, in column-major order.

A plain draws table (R ``posterior::as_draws_df`` written with ``write.csv``,
or any tool's long format) has one row per draw, ``chain`` and ``draw``
columns (``.chain``, ``.iteration``, ``.draw`` in ``posterior``) and one
column per scalar element.

Both are parsed with :func:`numpy.loadtxt` on the data lines (C speed for the
1000 x 1000 tables Stan produces); only when that fails does a Python pass
over the cells run, to read R's ``NA`` and to name the bad line and column.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError
from mcmc.diagnostics.readers.base import Format

#: CmdStan sampler-statistic columns and their ArviZ names.
STAT_NAMES = {
    "lp__": "lp",
    "accept_stat__": "acceptance_rate",
    "stepsize__": "step_size",
    "treedepth__": "tree_depth",
    "n_leapfrog__": "n_steps",
    "divergent__": "diverging",
    "energy__": "energy",
}
_INTEGER_STATS = ("tree_depth", "n_steps")

#: Columns that index rows of a plain draws table rather than hold draws.
# posterior's as_draws_df writes .chain/.iteration/.draw; CmdStanPy's draws_pd chain__/iter__/draw__.
CHAIN_COLUMNS = ("chain", ".chain", "chain__")
DRAW_COLUMNS = (".iteration", "iteration", "iter__", "draw", ".draw", "draw__")  # first present orders

# R writes missing values as NA; Stan writes NaN, inf, +inf, -inf (float() reads those).
_MISSING = frozenset({"NA", "na", "N/A", ""})

# CmdStan methods whose CSV rows are not MCMC draws: R-hat or ESS of them mean nothing.
_NOT_MCMC = frozenset({"optimize", "variational", "pathfinder", "laplace", "log_prob"})

_DOT_INDEX = re.compile(r"^(?P<base>.+?)(?P<index>(?:\.\d+)+)(?P<part>\.real|\.imag)?$")
_BRACKET_INDEX = re.compile(r"^(?P<base>[^\[\]]+)\[(?P<index>\s*\d+(?:\s*,\s*\d+)*\s*)\](?P<part>\.real|\.imag)?$")
_CONFIG_LINE = re.compile(r"^#\s*(?P<key>[A-Za-z_][\w ]*?)\s*=\s*(?P<value>.*?)\s*(?:\(Default\))?\s*$")


@dataclass
class Table:
    """A CSV file split into header, numeric cells and comments.

    Attributes
    ----------
    columns
        Header names, quotes and surrounding spaces removed.
    values
        Cells, shape ``(row, column)``, float64 (NaN and infinities kept).
    line_numbers
        1-based line number in the file of each row, shape ``(row,)``.
    comments
        ``(line number, text)`` of every ``#`` line, text including the ``#``.
    header_line
        1-based line number of the header.
    """

    columns: list[str]
    values: np.ndarray
    line_numbers: np.ndarray
    comments: list[tuple[int, str]]
    header_line: int


def parse_table(text: str, source: str) -> Table:
    """Split CSV ``text`` into header, numeric rows and ``#`` comments.

    Raises
    ------
    InputError
        No header, a row with the wrong number of fields, or a non-numeric
        cell (the message names the line and the column).
    """
    lines = text.lstrip("\ufeff").splitlines()
    comments: list[tuple[int, str]] = []
    rows: list[str] = []
    numbers: list[int] = []
    header: str | None = None
    header_line = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            comments.append((number, stripped))
        elif header is None:
            header, header_line = stripped, number
        else:
            rows.append(stripped)
            numbers.append(number)
    if header is None:
        raise InputError(source, "no header line (the file is empty or only comments)")
    # csv for the header only: R quotes names like "theta[1,2]" whose commas are not separators.
    columns = [name.strip() for name in next(csv.reader([header], skipinitialspace=True))]
    seen: set[str] = set()
    for name in columns:
        if name in seen and name:
            raise InputError(source, f"line {header_line}: column {name!r} appears twice in the header")
        seen.add(name)
    line_numbers = np.asarray(numbers, dtype=np.int64)
    if not rows:
        return Table(columns, np.empty((0, len(columns))), line_numbers, comments, header_line)
    try:
        values = np.loadtxt(rows, delimiter=",", dtype=np.float64, ndmin=2, comments=None, quotechar='"')
    except ValueError:
        values = _parse_cells_slowly(rows, numbers, columns, source)
    if values.shape[1] != len(columns):
        raise InputError(
            source, f"line {numbers[0]}: {values.shape[1]} fields but the header has {len(columns)} columns"
        )
    return Table(columns, values, line_numbers, comments, header_line)


def _parse_cells_slowly(rows: list[str], numbers: list[int], columns: list[str], source: str) -> np.ndarray:
    """Cell-by-cell fallback: reads ``NA`` as NaN and names the first bad cell."""
    out = np.empty((len(rows), len(columns)))
    for i, (cells, number) in enumerate(zip(csv.reader(rows), numbers, strict=True)):
        if len(cells) != len(columns):
            raise InputError(
                source, f"line {number}: {len(cells)} fields but the header has {len(columns)} columns"
            )
        for j, cell in enumerate(cells):
            cell = cell.strip()
            if cell in _MISSING:
                out[i, j] = math.nan
                continue
            try:
                out[i, j] = float(cell)
            except ValueError:
                shown = cell if len(cell) <= 30 else cell[:27] + "..."
                raise InputError(
                    source, f"line {number}, column {columns[j]!r}: {shown!r} is not a number"
                ) from None
    return out


#: How CmdStan's stansummary and R's posterior print a multi-index: ``y[1,2]``.
STAN_INDEX_SEP = ","


def group_columns(
    columns: list[str], values: np.ndarray
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, tuple[tuple[str, ...], ...]]]:
    """Turn flat columns into variables and sampler statistics.

    Parameters
    ----------
    columns
        Column names, one per entry of the last axis of ``values``.
    values
        Draws of shape ``(chain, draw, column)``.

    Returns
    -------
    posterior, sample_stats, coords
        Variables of shape ``(chain, draw, *shape)``: ``theta.1 ... theta.8``
        (or ``theta[1]``) become one ``theta`` of shape ``(chain, draw, 8)``,
        ``theta.2.3`` goes to position ``[1, 2]``. Columns whose indices do not
        fill a whole array (a gap, a clash with a scalar of the same name)
        stay separate scalars under their column names, so no draw is lost or
        put in the wrong place. Statistics (names ending in ``__``) of shape
        ``(chain, draw)`` under ArviZ's names. ``coords`` gives each array
        its 1-based labels (:attr:`Chains.coords`), so ``theta.1`` is still
        called ``theta[1]``, as CmdStan's own ``diagnose`` and ``stansummary``
        call it.
    """
    stats: dict[str, np.ndarray] = {}
    scalars: dict[str, int] = {}
    indexed: dict[str, list[tuple[tuple[int, ...], int, str]]] = {}
    order: list[str] = []  # variables in order of first column, as Stan declares them
    for j, name in enumerate(columns):
        if name.endswith("__") and len(name) > 2:
            stat = STAT_NAMES.get(name, name.strip("_"))
            stats[stat] = _stat_array(stat, values[:, :, j])
            continue
        match = _DOT_INDEX.match(name) or _BRACKET_INDEX.match(name)
        if match is None:
            scalars[name] = j
            order.append(name)
            continue
        base = match["base"] + (match["part"] or "")
        index = tuple(int(i) for i in re.split(r"[.,]", match["index"].strip(".")))
        if base not in indexed:
            indexed[base] = []
            order.append(base)
        indexed[base].append((index, j, name))

    posterior: dict[str, np.ndarray] = {}
    coords: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name in order:
        if name in posterior:
            continue
        if name in scalars:
            posterior[name] = values[:, :, scalars[name]].copy()
        entries = indexed.get(name, [])
        array = _fill_array(entries, values) if entries and name not in scalars else None
        if array is not None:
            posterior[name] = array
            coords[name] = tuple(tuple(str(i + 1) for i in range(n)) for n in array.shape[2:])
        else:
            for _, j, column in entries:
                posterior[column] = values[:, :, j].copy()
    return posterior, stats, coords


def _fill_array(entries: list[tuple[tuple[int, ...], int, str]], values: np.ndarray) -> np.ndarray | None:
    """Place indexed columns at their 0-based positions; None if they are not a full array."""
    if len({len(index) for index, _, _ in entries}) != 1:
        return None
    index = np.array([index for index, _, _ in entries], dtype=np.int64) - 1
    if index.min() < 0:
        return None
    shape = tuple(int(n) for n in index.max(axis=0) + 1)
    if math.prod(shape) != len(entries) or len({tuple(i) for i in index.tolist()}) != len(entries):
        return None
    cols = [j for _, j, _ in entries]
    array = np.empty(values.shape[:2] + shape, dtype=values.dtype)
    array[(slice(None), slice(None), *index.T)] = values[:, :, cols]
    return array


def _stat_array(name: str, column: np.ndarray) -> np.ndarray:
    column = np.ascontiguousarray(column)
    finite = bool(np.isfinite(column).all())
    if name == "diverging" and finite:
        return column != 0
    if name in _INTEGER_STATS and finite and bool((column == np.round(column)).all()):
        return column.astype(np.int64)
    return column


# --- CmdStan ---------------------------------------------------------------


def is_cmdstan(text: str) -> bool:
    """Whether CSV ``text`` looks like CmdStan output rather than a draws table."""
    header = _first_data_line(text)
    names = {name.strip() for name in next(csv.reader([header or ""]), [])}
    if names & set(CHAIN_COLUMNS):
        return False
    return text.lstrip("\ufeff \t\r\n").startswith("#") or "lp__" in names


def _first_data_line(text: str) -> str | None:
    for line in text.lstrip("\ufeff").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return None


def read_cmdstan(text: str, source: str) -> Chains:
    """Read one CmdStan output CSV (one chain) into :class:`Chains` of one chain.

    Warmup draws stored by ``save_warmup=1`` are dropped: the first
    ``ceil(num_warmup / thin)`` rows, as the config comments say. The config
    (Stan version, model, algorithm, engine, ``max_depth`` as
    ``max_treedepth``, ``num_warmup``, ``num_samples``, ``thin``,
    ``adapt delta``, seed, chain id) and the adapted step size go to ``attrs``.

    Raises
    ------
    InputError
        Bad cells, a non-MCMC method (optimize, variational, pathfinder,
        laplace), fewer rows than the saved warmup, or zero draws.
    """
    table = parse_table(text, source)
    config = _parse_config(table)
    method = str(config.get("method", "sample"))
    if method in _NOT_MCMC:
        raise InputError(source, f"CmdStan method {method!r} does not produce MCMC draws")
    warmup_rows = _saved_warmup_rows(config)
    if table.values.shape[0] < warmup_rows:
        raise InputError(
            source,
            f"{table.values.shape[0]} rows but save_warmup=1 with num_warmup={config.get('num_warmup')} "
            f"means the first {warmup_rows} are warmup (an interrupted run?)",
        )
    draws = table.values[warmup_rows:]
    if draws.shape[0] == 0:
        raise InputError(source, "zero draws (header but no rows after warmup)")
    posterior, stats, coords = group_columns(table.columns, draws[np.newaxis])
    return Chains(posterior, stats, _cmdstan_attrs(config, table), coords, STAN_INDEX_SEP).validate(source)


def _parse_config(table: Table) -> dict[str, Any]:
    """Leaf ``key = value`` pairs of the comments above the header (first occurrence wins)."""
    config: dict[str, Any] = {}
    for number, text in table.comments:
        if number > table.header_line:
            break
        match = _CONFIG_LINE.match(text)
        if match is None:
            continue
        key, value = match["key"].strip(), _config_value(match["value"])
        if key == "save_warmup":
            # Stan 1.x has it twice (sample and output): either one stores warmup.
            config[key] = bool(config.get(key)) or bool(value)
        else:
            config.setdefault(key, value)
    return config


def _config_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _saved_warmup_rows(config: dict[str, Any]) -> int:
    # fixed_param runs no warmup whatever num_warmup says.
    if not config.get("save_warmup") or config.get("algorithm") == "fixed_param":
        return 0
    num_warmup, thin = config.get("num_warmup", 0), config.get("thin", 1)
    if not isinstance(num_warmup, int) or not isinstance(thin, int) or thin < 1:
        return 0
    return -(-num_warmup // thin)


def _cmdstan_attrs(config: dict[str, Any], table: Table) -> dict[str, Any]:
    attrs: dict[str, Any] = {"inference_library": "cmdstan"}
    version = [config.get(f"stan_version_{part}") for part in ("major", "minor", "patch")]
    if all(isinstance(v, int) for v in version):
        attrs["stan_version"] = ".".join(str(v) for v in version)
    algorithm = config.get("algorithm")
    engine = config.get("engine") if algorithm == "hmc" else None
    if algorithm is not None:
        attrs["sampler"] = engine or algorithm
    renames = {
        "model": "model",
        "method": "method",
        "algorithm": "algorithm",
        "engine": "engine",
        "metric": "metric",
        "max_depth": "max_treedepth",
        "num_samples": "num_samples",
        "num_warmup": "num_warmup",
        "save_warmup": "save_warmup",
        "thin": "thin",
        "delta": "adapt_delta",
        "engaged": "adapt_engaged",
        "seed": "seed",
        "id": "chain_id",
    }
    for key, name in renames.items():
        if key in config:
            value = config[key]
            attrs[name] = bool(value) if key in ("save_warmup", "engaged") else value
    for _, text in table.comments:
        match = re.match(r"^#\s*Step size\s*=\s*(\S+)\s*$", text)
        if match:
            try:
                attrs["step_size_adapted"] = float(match[1])
            except ValueError:
                pass
            break
    return attrs


# --- plain draws tables -------------------------------------------------------


def read_draws_table(text: str, source: str) -> Chains:
    """Read a CSV with one row per draw and ``chain``/``draw`` columns.

    Rows may come in any order: they are sorted by chain, then by the first of
    ``.iteration``, ``iteration``, ``iter__``, ``draw``, ``.draw``, ``draw__``
    present (file order when none is). Chains are numbered in the sorted order of their labels. Columns
    ending in ``__`` are sampler statistics as in CmdStan; an unnamed first
    column (R's row names) is ignored.

    Raises
    ------
    InputError
        No chain column, chains with different numbers of draws, a draw
        index repeated within a chain, bad cells, zero draws.
    """
    table = parse_table(text, source)
    columns = table.columns
    chain_col = next((c for c in CHAIN_COLUMNS if c in columns), None)
    if chain_col is None:
        raise InputError(
            source,
            "no 'chain' column: a draws CSV needs 'chain' and 'draw' columns "
            "(or '.chain'/'.draw'/'.iteration'); a CmdStan CSV has 'lp__' or '#' comments",
        )
    if table.values.shape[0] == 0:
        raise InputError(source, "zero draws (header but no rows)")
    values = table.values
    chain = values[:, columns.index(chain_col)]
    draw_col = next((c for c in DRAW_COLUMNS if c in columns), None)
    draw = values[:, columns.index(draw_col)] if draw_col else np.arange(len(chain), dtype=np.float64)
    for name, column in ((chain_col, chain), (draw_col, draw)):
        bad = ~np.isfinite(column) | (column != np.round(column))
        if name is not None and bad.any():
            row = int(np.argmax(bad))
            raise InputError(
                source, f"line {table.line_numbers[row]}, column {name!r}: {column[row]!r} is not an integer"
            )
    order = np.lexsort((draw, chain))
    chain, draw, values, lines = chain[order], draw[order], values[order], table.line_numbers[order]
    labels, counts = np.unique(chain, return_counts=True)
    if (counts != counts[0]).any():
        listed = ", ".join(f"chain {int(c)} has {n}" for c, n in zip(labels, counts, strict=True))
        raise InputError(source, f"ragged chains: {listed} draws")
    repeated = (chain[1:] == chain[:-1]) & (draw[1:] == draw[:-1])
    if draw_col is not None and repeated.any():
        row = int(np.argmax(repeated)) + 1
        raise InputError(
            source,
            f"line {lines[row]}: chain {int(chain[row])} {draw_col} {int(draw[row])} appears twice "
            f"(also line {lines[row - 1]})",
        )
    meta = set(CHAIN_COLUMNS) | set(DRAW_COLUMNS) | {""}
    keep = [j for j, name in enumerate(columns) if name not in meta]
    cube = values[:, keep].reshape(len(labels), int(counts[0]), len(keep))
    posterior, stats, coords = group_columns([columns[j] for j in keep], cube)
    return Chains(posterior, stats, {}, coords, STAN_INDEX_SEP).validate(source)


def is_draws_table(text: str) -> bool:
    """Whether ``text`` may be a draws table: its first non-blank line has a comma (the reader checks the rest)."""
    return "," in next((line for line in text.splitlines() if line.strip()), "")


CMDSTAN = Format(
    "cmdstan", "CmdStan CSV", "text", lambda text, label, bare: read_cmdstan(text, label),
    extensions=(".csv", ".txt"), sniff=is_cmdstan,
)  # fmt: skip
#: Listed last of the text formats: the reader of last resort for a ``.csv`` that is nothing else, whose
#: message then says what a draws table lacks.
DRAWS_TABLE = Format(
    "draws-csv", "CSV with chain and draw columns", "text", lambda text, label, bare: read_draws_table(text, label),
    extensions=(".csv", ".txt"), sniff=is_draws_table,
)  # fmt: skip
