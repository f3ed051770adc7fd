"""Write reference_moments.json: posteriordb reference-posterior means and sds, our names.

The reference draws (10 chains x 1000 thinned Stan draws per posterior, 0.5 to
2.3 MB each) are too large to keep here; their mean, sd and the MCSE of both
(``mcmc.diagnostics.stats``) are enough to judge a run against them. Names
become ours (0-based: Stan's ``theta[1]`` is ``theta[0]``).

Run once from the repository root, where the posteriordb copies live in
``REFERENCE_DIR`` (default ``/work/shared/reference-posteriors``)::

    .venv/bin/python tests/data/posteriordb/make_reference.py [REFERENCE_DIR]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

from mcmc.diagnostics import stats

POSTERIORS = [
    "eight_schools-eight_schools_noncentered",
    "kidiq-kidscore_momiq",
    "arK-arK",
    "garch-garch11",
    "low_dim_gauss_mix-low_dim_gauss_mix",
    "gp_pois_regr-gp_pois_regr",
]


def our_name(stan_name: str) -> str:
    """``theta[3]`` (Stan, 1-based) -> ``theta[2]``; ``L[1,2]`` -> ``L[0, 1]``."""
    m = re.fullmatch(r"(\w+)\[([\d,\s]+)\]", stan_name)
    if not m:
        return stan_name
    idx = [int(i) - 1 for i in m.group(2).split(",")]
    return f"{m.group(1)}[{', '.join(map(str, idx))}]"


def main(root: Path) -> None:
    out = {}
    for post in POSTERIORS:
        chains = json.loads((root / post / f"{post}.json").read_text())
        names = list(chains[0])
        x = np.stack([np.column_stack([c[n] for n in names]) for c in chains])  # (chain, draw, param)
        out[post] = {
            our_name(n): {
                "mean": float(x[..., i].mean()),
                "sd": float(x[..., i].std(ddof=1)),
                "mcse_mean": float(stats.mcse_mean(x[..., i : i + 1])[0]),
                "mcse_sd": float(stats.mcse_sd(x[..., i : i + 1])[0]),
            }
            for i, n in enumerate(names)
        }
    target = Path(__file__).with_name("reference_moments.json")
    target.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/reference-posteriors"))
