"""`mcmc sample` on the Potts model and on a transition matrix: the command line around the tested library."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

DATA = Path(__file__).parents[1] / "data"


def test_transition_matrix_summary_shows_the_exact_law_beside_the_simulation(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "m.npz"
    r = mcmc("sample", "--target", str(DATA / "markov" / "lecture.csv"), "--seed", "1", "--draws", "4000", "-o", str(out))
    assert r.code == 0, r.stderr
    assert "irreducible, aperiodic" in r.stderr and "detailed balance fails" in r.stderr
    rows = {m[0]: (float(m[1]), float(m[2]), float(m[3]), float(m[4]))
            for m in re.findall(r"(Sunny|Cloudy|Rainy)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+) \+- ([\d.]+)", r.stderr)}
    # the lecture: (0.286, 0.489, 0.225), both ways, and the simulation within 4 MCSE of it
    for state, pi in (("Sunny", 0.2865), ("Cloudy", 0.4885), ("Rainy", 0.2250)):
        eig, power, freq, mcse = rows[state]
        assert abs(eig - pi) < 6e-4 and abs(power - pi) < 6e-4
        assert abs(freq - eig) / mcse < 4
    with np.load(out) as f:
        assert set(np.unique(f["state"])) <= {0.0, 1.0, 2.0}


def test_transition_matrix_that_is_not_stochastic_is_one_line(mcmc, tmp_path: Path) -> None:
    bad = tmp_path / "p.csv"
    bad.write_text("0.5,0.6\n0.5,0.5\n")
    r = mcmc("sample", "--target", str(bad), "-o", str(tmp_path / "x.npz"))
    assert r.code == 2
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("mcmc: error:") and str(bad) in line


def test_potts_runs_with_both_lattice_samplers_and_refuses_hmc(mcmc, tmp_path: Path) -> None:
    for sampler in ("gibbs", "swendsen-wang"):
        out = tmp_path / f"{sampler}.npz"
        r = mcmc("sample", "-t", "potts", "-T", "size=4", "-T", "q=3", "-s", sampler, "--warmup", "20", "--draws", "50",
                 "--seed", "1", "-q", "--no-check", "-o", str(out))
        assert r.code == 0, r.stderr
        with np.load(out) as f:
            assert {"energy", "m"} <= set(f.files)
    r = mcmc("sample", "-t", "potts", "-s", "hmc", "-o", str(tmp_path / "x.npz"))
    assert r.code == 2 and "lattice" in r.stderr
