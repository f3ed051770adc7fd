"""The lecture notes' algorithms from the command line (issue 31): what each prints, in the table and in -f json.

The libraries are tested against exact answers in ``tests/core``; here the
commands around them: the Metropolis-Hastings matrix and its Markov chain
report, the law after T steps, the exact moments beside the estimates, the
weights of importance sampling (in ``sample`` and ``diagnose`` alike), two
scans of Gibbs in ``compare``, and the refusals, each one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.samplers import mh
from mcmc.core.targets import get_target

DATA = Path(__file__).parents[1] / "data"
WEIGHTS = str(DATA / "markov" / "weights.csv")
PROPOSAL = str(DATA / "markov" / "proposal.csv")
LECTURE = str(DATA / "markov" / "lecture.csv")
CUBE = str(DATA / "graphs" / "cube.csv")
SAMPLE = DATA / "sample"


def one_line(stderr: str) -> str:
    (line,) = stderr.strip().splitlines()
    assert line.startswith("mcmc: error:")
    return line


def test_mh_on_a_weights_file_prints_its_matrix_and_the_markov_report_beside_b(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "mh.npz"
    r = mcmc("sample", "-t", WEIGHTS, "-P", f"mh:proposal-matrix={PROPOSAL}", "--seed", "2", "--draws", "3000",
             "-o", str(out))  # fmt: skip
    assert r.code == 0, r.stderr
    assert "mh on" in r.stderr and "Metropolis-Hastings transition matrix" in r.stderr
    assert "detailed balance holds" in r.stderr and "b / sum(b)" in r.stderr
    # the printed matrix is the exact one, row by row
    exact = mh.transition_matrix(get_target(WEIGHTS), PROPOSAL).matrix
    lines = r.stderr.splitlines()
    at = next(i for i, line in enumerate(lines) if "transition matrix" in line)
    assert lines[at + 1].split() == ["A", "B", "C", "D", "E"]
    matrix = np.array([[float(v) for v in line.split()[1:]] for line in lines[at + 2 : at + 7]])
    np.testing.assert_allclose(matrix, exact, rtol=0, atol=5e-5)
    j = mcmc("sample", "-t", WEIGHTS, "-P", f"mh:proposal-matrix={PROPOSAL}", "--seed", "2", "--draws", "3000",
             "-o", str(tmp_path / "mh2.npz"), "-f", "json")  # fmt: skip
    doc = json.loads(j.out)
    m = doc["markov"]
    np.testing.assert_allclose(m["target"]["transition"], exact, rtol=0, atol=0)
    np.testing.assert_allclose(m["target"]["law"], np.arange(1, 6) / 15, rtol=0, atol=1e-15)
    np.testing.assert_allclose(m["stationary"], np.arange(1, 6) / 15, rtol=0, atol=1e-14)
    assert m["reversible"] is True and m["target"]["max_difference"] < 1e-14
    assert np.max(np.abs(m["z"])) < 4
    assert doc["schema"] == "mcmc.sample/1" and doc["attrs"]["sampler"] == "mh"


def test_the_notes_spelling_proposal_csv_is_mhs_proposal_matrix(mcmc, tmp_path: Path) -> None:
    args = ("sample", "-t", WEIGHTS, "--seed", "2", "--draws", "200", "--warmup", "20", "-q", "--no-check")
    mcmc(*args, "-P", f"mh:proposal-matrix={PROPOSAL}", "-o", str(tmp_path / "a.npz"))
    r = mcmc(*args, "--proposal", PROPOSAL, "-o", str(tmp_path / "b.npz"))
    assert r.code == 0, r.stderr
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    mcmc(*args, "-o", str(tmp_path / "c.npz"))  # the default, uniform over the other states: another chain
    assert (tmp_path / "c.npz").read_bytes() != (tmp_path / "b.npz").read_bytes()


def test_the_law_after_t_steps_from_the_lectures_initial_law(mcmc, tmp_path: Path) -> None:
    args = ("sample", "-t", LECTURE, "-T", "init=0.21,0.68,0.11", "-T", "steps=10", "--seed", "3")
    r = mcmc(*args, "--warmup", "0", "--chains", "2000", "--draws", "10", "--no-check", "-o", str(tmp_path / "a.npz"))
    assert r.code == 0, r.stderr
    assert "law after 10 steps from the initial law (0.21, 0.68, 0.11)" in r.stderr
    j = mcmc(*args, "--warmup", "0", "--chains", "2000", "--draws", "10", "--no-check", "-o", str(tmp_path / "b.npz"),
             "-f", "json")  # fmt: skip
    at = json.loads(j.out)["markov"]["at_step"]
    np.testing.assert_allclose(at["exact"], get_target(LECTURE, init="0.21,0.68,0.11", steps=10).law_at_steps,
                               rtol=0, atol=0)  # fmt: skip
    assert at["steps"] == 10 and at["chains"] == 2000 and np.max(np.abs(at["z"])) < 4
    # the default warm-up throws step 10 away: refused before any work, saying what to give
    w = mcmc(*args, "-o", str(tmp_path / "c.npz"))
    assert w.code == 2 and "--warmup 9 or less" in one_line(w.stderr)
    assert not (tmp_path / "c.npz").exists()


def test_dirichlet_prints_the_exact_mean_and_variance_beside_the_draws(mcmc, tmp_path: Path) -> None:
    r = mcmc("sample", "-t", "dirichlet", "-T", "counts=4,1,3,1,1", "-T", "eta=1", "--seed", "1",
             "-o", str(tmp_path / "d.npz"), "-f", "json")  # fmt: skip
    assert r.code == 0
    rows = {row["name"]: row for row in json.loads(r.out)["exact"]["rows"]}
    alpha = np.array([5, 2, 4, 2, 2.0])
    for k in range(5):
        row = rows[f"theta[{k}]"]
        assert row["exact_mean"] == pytest.approx(alpha[k] / 15, abs=1e-15)
        assert row["exact_var"] == pytest.approx(alpha[k] * (15 - alpha[k]) / (15**2 * 16), rel=1e-12)
        assert abs(row["z_mean"]) < 4 and abs(row["z_var"]) < 4
    t = mcmc("sample", "-t", "dirichlet", "-T", "counts=4,1,3,1,1", "--seed", "1", "-o", str(tmp_path / "e.npz"))
    assert "exact moments: largest |z|" in t.stderr and "theta[4]" in t.stderr and "variance" in t.stderr


def test_importance_draws_are_judged_by_their_weights_in_sample_and_diagnose_alike(mcmc, tmp_path: Path) -> None:
    out = tmp_path / "imp.npz"
    r = mcmc("sample", "-t", "gaussian", "--dim", "2", "--rho", "0.5", "-s", "importance", "--seed", "4",
             "-o", str(out), "-f", "json")  # fmt: skip
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)
    assert doc["attrs"]["weighted"] is True and {c["name"] for c in doc["checks"]} == {"ess", "pareto-k"}
    assert doc["weights"]["pareto_k"] < 0.5 and doc["weights"]["k_threshold"] == 0.7
    assert max(abs(row["z_mean"]) for row in doc["exact"]["rows"]) < 4
    d = mcmc("diagnose", str(out), "-f", "json")
    assert d.code == 0
    report = json.loads(d.out)
    assert report["verdict"] == doc["verdict"].split(" (the draws")[0]  # one judge, one verdict
    assert report["weights"] == doc["weights"]
    table = mcmc("diagnose", str(out))
    assert "Kish ESS" in table.out and "Pareto k" in table.out and "R-hat " not in table.out.split("note:")[0]


def test_a_proposal_too_narrow_fails_on_its_pareto_k(mcmc, tmp_path: Path) -> None:
    """Neal's funnel under a t fitted to its bulk: the weights' tail is too heavy (k >= 0.7), whatever the draws."""
    r = mcmc("sample", "-t", "funnel", "--dim", "3", "-s", "importance", "--seed", "1", "-o", str(tmp_path / "f.npz"),
             "-f", "json")  # fmt: skip
    assert r.code == 1
    checks = {c["name"]: c for c in json.loads(r.out)["checks"]}
    assert not checks["pareto-k"]["passed"] and checks["pareto-k"]["severity"] == "error"


def test_compare_sets_two_scans_of_gibbs_side_by_side_with_their_autocorrelation(mcmc) -> None:
    r = mcmc("compare", "-t", "gaussian", "--dim", "2", "-T", "rho=0.9", "-s", "gibbs,gibbs:scan=random",
             "--seed", "1", "--draws", "4000", "-f", "json", "--no-check")  # fmt: skip
    assert r.code == 0, r.stderr
    doc = json.loads(r.out)
    rows = {row["sampler"]: row for row in doc["samplers"]}
    assert set(rows) == {"gibbs", "gibbs:scan=random"}
    assert doc["params"]["gibbs:scan=random"] == {"scan": "random"}
    # a systematic sweep is AR(1) in rho^2 = 0.81: IAT (1 + 0.81) / (1 - 0.81) = 9.5; random scan is slower
    assert rows["gibbs"]["iat_max"] == pytest.approx(9.5, rel=0.2)
    assert rows["gibbs:scan=random"]["iat_max"] > 1.3 * rows["gibbs"]["iat_max"]
    assert doc["best"]["iat_max"] == ["gibbs"]
    t = mcmc("compare", "-t", "gaussian", "--dim", "2", "-s", "gibbs,gibbs:scan=random", "--seed", "1", "--no-check")
    assert "max autocorrelation time" in t.out and "gibbs:scan=random" in t.out
    bad = mcmc("compare", "-t", "gaussian", "-s", "gibbs,gibbs:scan=sideways", "--seed", "1")
    assert bad.code == 2 and "must be one of systematic, random" in one_line(bad.stderr)


def test_graph_potts_inverse_cdf_and_exact_from_the_command_line(mcmc, tmp_path: Path) -> None:
    g = mcmc("sample", "-t", CUBE, "-T", "q=3", "--seed", "1", "-o", str(tmp_path / "g.npz"), "-f", "json")
    assert g.code == 0 and json.loads(g.out)["attrs"]["sampler"] == "gibbs"  # a graph's default
    assert max(abs(row["z_mean"]) for row in json.loads(g.out)["exact"]["rows"]) < 4
    i = mcmc("sample", "-t", str(SAMPLE / "gumbel_density.py"), "-s", "inverse-cdf", "--seed", "1",
             "-o", str(tmp_path / "i.npz"), "-f", "json")  # fmt: skip
    assert i.code == 0 and json.loads(i.out)["attrs"]["inverse_cdf"]["method"] == "numerical"
    error = json.loads(i.out)["attrs"]["inverse_cdf"]["error"]
    assert 0 <= error <= 1e-10
    t = mcmc("sample", "-t", str(SAMPLE / "gumbel_density.py"), "-s", "inverse-cdf", "--seed", "1",
             "-o", str(tmp_path / "t.npz"))  # fmt: skip
    assert "F^-1(u): the CDF by adaptive 5-point Gauss-Legendre quadrature" in t.stderr
    assert f"estimated CDF error {error:.1e}" in t.stderr  # the accuracy stated
    q = mcmc("sample", "-t", "gamma", "-T", "shape=3", "-s", "inverse-cdf", "--seed", "1",
             "-o", str(tmp_path / "q.npz"))  # fmt: skip
    assert "F^-1(u): the target's own quantile function" in q.stderr
    e = mcmc("sample", "-t", "gaussian", "--dim", "3", "-s", "exact", "-P", "method=polar", "--seed", "1",
             "-o", str(tmp_path / "e.npz"))  # fmt: skip
    assert e.code == 0, e.stderr


REFUSED = {
    "euler": (("-t", "gaussian", "-s", "hmc", "-P", "hmc:integrator=euler"),
              "integrator=euler is refused: Euler's method is neither time-reversible nor volume-preserving"),
    "json on stdout twice": (("-t", "gaussian", "-o", "-", "-f", "json"), "would both write to stdout"),
    "a bad envelope": (("-t", str(SAMPLE / "cauchy.py"), "-s", "inverse-cdf"), "too heavy a tail"),
    "mh off a weights file": (("-t", "gaussian", "-s", "mh"), "needs a law on finitely many states"),
    "markov on a weights file": (("-t", WEIGHTS, "-s", "markov"), "sample it with mh"),
    "a proposal of other states": (("-t", WEIGHTS, "-P", f"proposal-matrix={LECTURE}"), "not the weights'"),
    "exact off the gaussian": (("-t", "banana", "-s", "exact"), "exact sampler of its own"),
    "mh's proposal is a matrix": (("-t", WEIGHTS, "--proposal", "rw"), "--proposal with -s mh is its proposal matrix"),
}  # fmt: skip


@pytest.mark.parametrize("case", REFUSED, ids=list(REFUSED))
def test_refusals_are_one_line_and_exit_2(mcmc, tmp_path: Path, monkeypatch, case) -> None:
    monkeypatch.chdir(tmp_path)
    args, message = REFUSED[case]
    r = mcmc("sample", *args, "--seed", "1", "--warmup", "20", "--draws", "20")
    assert r.code == 2, r.stderr
    assert message in one_line(r.stderr)
