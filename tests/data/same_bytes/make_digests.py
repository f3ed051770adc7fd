"""Write digests.json: the arrays every case in cases.py writes, as SHA-256 digests.

Run from the repository root: ``.venv/bin/python tests/data/same_bytes/make_digests.py``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cases import ALL_CASES, digests  # noqa: E402

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        table = {name: digests(name, Path(tmp)) for name in ALL_CASES}
    out = Path(__file__).with_name("digests.json")
    out.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}: {len(table)} cases")
