"""The helpers every renderer shares: JSON cleaning, number formatting, the console, the verdict line.

One copy of each, for every command and output format (``docs/architecture.md``).
Nothing here computes a statistic or judges a threshold.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console  # start-up: rich's console only when a renderer draws


def clean(value: Any) -> Any:
    """JSON-ready: tuples to lists, NaN and infinities to ``None`` (strict JSON has neither)."""
    if isinstance(value, float):
        return value if value - value == 0 else None  # NaN and +-inf fail x - x == 0
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def csv_cell(value: Any) -> str:
    """A CSV field: full precision (shortest round-trip repr), empty when undefined, ``true``/``false``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        return "" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return str(value)


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def num(value: float | None, digits: int = 4) -> str:
    """``digits`` significant digits; ``"-"`` when undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}g}"


def fixed(value: float, sig: int) -> str:
    """``value`` to ``sig`` significant figures in positional notation (``92600``, not ``9.26e+04``).

    Scientific notation only beyond 1e15, where positional digits stop being readable.
    """
    if not finite(value):
        return num(value)
    if value == 0:
        return "0"
    if abs(value) >= 1e15:
        return f"{value:.{sig}g}"
    decimals = sig - 1 - math.floor(math.log10(abs(value)))
    return _decimals(value, decimals)


def _decimals(value: float, decimals: int) -> str:
    """``value`` rounded to ``decimals`` places (negative: to tens, hundreds, ...), positional; ``-0`` as ``0``."""
    decimals = min(decimals, 15)
    text = f"{value:.{decimals}f}" if decimals >= 0 else f"{round(value, decimals):.0f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def estimate(value: float | None, se: float | None, sig_figs: int | None = None) -> str:
    """An estimate with the digits its Monte Carlo standard error ``se`` supports, as ArviZ's ``summary``.

    The last digit shown is at the decade of ``2 * se`` (ArviZ 1.x,
    ``get_decimal_places_from_se``), so ``4.318`` with an MCSE of 0.056 is
    ``4.3``; whole numbers where the MCSE is 5 or more (``-92600``, never
    ``-9.26e+04``). ``sig_figs`` overrides with that many significant figures
    (stansummary's ``--sig_figs``). Without a usable MCSE (a constant
    parameter, too few draws) 4 significant figures.
    """
    if not finite(value):
        return num(value)
    if sig_figs is not None:
        return fixed(value, sig_figs)
    if finite(se) and se > 0:
        if abs(value) >= 1e15:
            return f"{value:.4g}"
        return _decimals(value, -math.floor(math.log10(2 * se)))
    text = f"{value:.4g}"  # no trailing zeros: a constant 3 shows as 3
    return fixed(value, 4) if "e" in text and abs(value) < 1e15 else text


def mcse(value: float | None, sig_figs: int | None = None) -> str:
    """A Monte Carlo standard error to 2 significant figures (ArviZ), or ``sig_figs``."""
    return fixed(value, sig_figs or 2) if finite(value) else num(value)


def count(value: float | None, digits: int = 3) -> str:
    """A rate or count: ``digits`` significant digits below ``10**digits``, whole above (``12345``, not ``1.23e+04``)."""
    if not finite(value):
        return num(value)
    return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:.0f}"


def ess(value: float | None) -> str:
    """ESS as a whole number of draws (ArviZ rounds down too)."""
    return str(int(math.floor(value))) if finite(value) else num(value)


def rhat(value: float | None) -> str:
    """R-hat to 3 decimals: 1.01 vs 1.005 is the distinction that matters."""
    return f"{value:.3f}" if finite(value) else num(value)


def z(value: float | None) -> str:
    """A signed z-score to 2 decimals; ``undefined`` for NaN."""
    if value is None or math.isnan(value):
        return "undefined"
    return f"{value:+.2f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 chain``, ``4 chains``: a count and its noun, singular for one (``many`` when not ``word + "s"``)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


#: Chains listed one by one in a report's sampler table; beyond it (an ensemble's 32 walkers), only the flagged.
CHAIN_ROWS = 8


def chains_shown(report: Any) -> list[int]:
    """The chains a sampler table lists: every one up to :data:`CHAIN_ROWS`, else those a check flagged."""
    if report.n_chains <= CHAIN_ROWS:
        return list(range(report.n_chains))
    flagged = {c for check in report.checks if not check.passed for c in check.chains}
    per_chain = report.sampler.divergences_per_chain or ()
    flagged |= {c for c, n in enumerate(per_chain) if n}
    return sorted(flagged)[:CHAIN_ROWS]


def names(items: Sequence[str], cap: int = 8) -> str:
    """``a, b, c and 5 more``."""
    return ", ".join(items[:cap]) + (f" and {len(items) - cap} more" if len(items) > cap else "")


#: The legend line of the tail ESS in every report: which quantiles, and the ArviZ call that gives the same figure.
TAIL_ESS_LEGEND = (
    "ESS tail: the smaller ESS of the 5% and 95% quantiles (Vehtari et al. 2021, as R posterior and CmdStan); "
    "arviz_stats.summary uses 11%/89% (its ci_prob) and so shows another number, which may be larger or "
    "smaller; arviz_stats.ess(data, method=\"tail\", prob=(0.05, 0.95)) gives this one"
)

#: The width of text written to a file or pipe when ``COLUMNS`` does not say: a CI log's, a pager's.
PIPE_WIDTH = 100


class _Unpadded:
    """A text stream that drops the trailing spaces of every line (rich pads table and panel lines)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._line = ""
        self.encoding = getattr(out, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        *lines, self._line = (self._line + text).split("\n")
        if lines:
            self._out.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def isatty(self) -> bool:
        return False


def console(out: TextIO) -> Console:
    """A rich console writing to ``out``: the terminal's width on a terminal, else ``COLUMNS`` or 100.

    A file or pipe (a CI log, ``| less``) gets ``$COLUMNS`` or
    :data:`PIPE_WIDTH` columns and lines without trailing spaces; tables
    too wide for it leave out their least important columns and say so.
    """
    from mcmc.cli.console import VerbatimConsole  # start-up: rich's console only when a renderer draws

    if hasattr(out, "isatty") and out.isatty():
        return VerbatimConsole(file=out)
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH
    return VerbatimConsole(file=_Unpadded(out), width=width)  # type: ignore[arg-type]


def coloured(con: Console) -> bool:
    """Whether ``con`` shows colour: where it does not, a renderer marks with a character what colour would."""
    return con.color_system is not None and not con.no_color


def print_verdict(verdict: str, passed: bool, notes: Iterable[str] = ()) -> None:
    """The one verdict line on stderr (``PASS:`` green, ``FAIL:`` red, other heads bold), then notes, dimmed.

    Printed as rich ``Text``, never markup, control characters visible
    (:func:`mcmc.cli.text.printable`): parameter and file names such as
    ``b[lo]`` print verbatim, on one line.
    """
    from rich.text import Text  # start-up: rich only when the verdict is printed

    from mcmc.cli.console import err_console  # start-up: the console module, once a verdict is printed

    from mcmc.cli.text import printable  # start-up: as above

    head, _, rest = printable(verdict).partition(":")
    style = "bold green" if passed and head == "PASS" else ("bold" if passed else "bold red")
    err_console.print(Text.assemble((head + ":", style), rest), highlight=False, soft_wrap=True)
    for note in notes:
        err_console.print(Text(f"note: {printable(note)}", style="dim"), highlight=False, soft_wrap=True)
