"""Exact marginals of every network here by pgmpy's VariableElimination (run once; tests read the JSON).

    pip install pgmpy==0.1.26
    python tests/data/networks/make_reference.py

Writes reference_marginals.json: for each network and each evidence case of
tests/core/test_networks.py (none; the last node of the file's topological
order in its first state plus the middle one in its first state), the
marginal posterior of every node, states in file order.
"""

import json
import sys
from importlib.metadata import version
from pathlib import Path

from pgmpy.inference import VariableElimination
from pgmpy.readwrite import BIFReader

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[2]))


def cases(nodes):
    """Evidence cases by node name (first state): the same rule as the tests."""
    return {"none": [], "evidence": [nodes[-1], nodes[len(nodes) // 2]]}


def main() -> None:
    from mcmc.core.networks.bif import read_bif  # the topological order the tests use

    out = {"pgmpy": version("pgmpy"), "networks": {}}
    for path in sorted(HERE.glob("*.bif")):
        ours = read_bif(path)
        model = BIFReader(str(path)).get_model()
        infer = VariableElimination(model)
        entry = {}
        for label, names in cases(ours.nodes).items():
            evidence = {n: ours.states[ours.index(n)][0] for n in names}
            margs = {}
            for node in ours.nodes:
                if node in evidence:
                    continue
                f = infer.query([node], evidence=evidence or None, show_progress=False)
                states = f.state_names[node]
                margs[node] = [float(f.values[states.index(s)]) for s in ours.states[ours.index(node)]]
            entry[label] = {"evidence": evidence, "marginals": margs}
        out["networks"][path.stem] = entry
    (HERE / "reference_marginals.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
