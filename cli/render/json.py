"""JSON output of any result object: its ``to_dict()``, strict JSON (see docs/formats.md for each schema).

Undefined and infinite values are ``null``. The document is indented, except
that each record of a top-level list of records (a report's parameters, a
comparison's samplers) is one compact line: readable and diff-friendly, and
fast, because ``indent`` forces the pure-Python encoder, which would dominate
the run time for thousands of parameters.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import clean


def render(result: Any, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """``result.to_dict()`` as strict JSON (every result type has one; no display option applies)."""
    write_document(clean(result.to_dict()), out)


def write_document(doc: dict[str, Any], out: TextIO) -> None:
    """Write ``doc`` (already clean) as indented JSON with one line per record of a top-level list."""
    out.write("{")
    for i, (key, value) in enumerate(doc.items()):
        out.write(("," if i else "") + "\n " + json.dumps(key) + ": ")
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out.write("[" + ",".join("\n  " + json.dumps(v, allow_nan=False) for v in value) + "\n ]")
        else:
            out.write(json.dumps(value, indent=1, allow_nan=False).replace("\n", "\n "))
    out.write("\n}\n")
