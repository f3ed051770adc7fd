"""User-given names as the terminal, a log or a report shows them: exactly the name, control characters visible.

A file name, a parameter name, a corpus word or a node name is the user's:
it may hold an escape sequence (``a\\x1b[2Jb.npz`` would clear the screen), a
newline (which would forge a second ``mcmc: error:`` line), a carriage
return, a bidirectional override. :func:`printable` shows each such character
as its Python escape (``\\x1b``, ``\\n``, ``\\u202e``) and leaves every other
character alone, so what the user sees is the name. Every message and every
renderer prints names through it; rich prints them without markup or emoji
shortcodes (``run:100:.npz`` stays ``run:100:.npz``, :mod:`mcmc.cli.console`).
Markdown, JUnit XML and HTML add their own escaping on top, in their
renderers. Standard library only: every
command imports it.
"""

from __future__ import annotations

import re

__all__ = ["printable", "visible_controls"]

# C0 and C1 controls and DEL; the Unicode line and paragraph separators; the marks and
# overrides that reorder text (bidi: LRM, RLM, ALM, LRE..RLO, LRI..PDI); the BOM.
_OTHER = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff"
_ALL = re.compile(f"[\x00-\x1f{_OTHER}]")
_NOT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f{_OTHER}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    code = ord(c)
    return _NAMED.get(c) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: object) -> str:
    """``text`` with every control character shown as its escape (``\\n``, ``\\x1b``, ``\\u202e``).

    Everything else, backslashes and brackets included, is left as it is.
    """
    return _ALL.sub(_escape, str(text))


def visible_controls(text: str) -> str:
    """As :func:`printable`, but line breaks stay: for text already laid out in lines (a rendered table)."""
    return _NOT_NEWLINE.sub(_escape, text)

