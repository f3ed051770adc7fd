"""Metropolis-Hastings on finitely many states: the weights file, the exact transition matrix, the simulation."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import InputError, UsageError
from mcmc.core.samplers import markov, mh, rwm
from mcmc.core.samplers.driver import run
from mcmc.core.targets import CSV_SAMPLERS, csv_kind, default_sampler, get_target
from mcmc.core.targets.finite import mh_transition_matrix, read_weights, uniform_proposal
from mcmc.core.targets.markov_chain import analyse
from mcmc.core.targets.protocols import FiniteStates
from mcmc.diagnostics.report.markov import markov_report

DATA = Path(__file__).parents[1] / "data" / "markov"
WEIGHTS = DATA / "weights.csv"
PROPOSAL = DATA / "proposal.csv"
LECTURE = DATA / "lecture.csv"
B = [1, 2, 3, 4, 5]


def write(tmp_path: Path, text: str, name: str = "w.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- the file -------------------------------------------------------------------


def test_the_three_layouts_of_a_weights_file(tmp_path) -> None:
    named = read_weights(WEIGHTS)
    assert named.states == ("A", "B", "C", "D", "E")
    np.testing.assert_array_equal(named.weights, B)
    for text in ("weight\n1\n2\n3\n", "1\n2\n3\n", "# comment\n\n1\n2\n3\n"):
        plain = read_weights(write(tmp_path, text))
        assert plain.states == ("0", "1", "2")
        np.testing.assert_array_equal(plain.weights, [1, 2, 3])
    np.testing.assert_allclose(named.law, np.array(B) / 15, rtol=0, atol=1e-16)


def test_weights_files_are_told_from_transition_matrices_and_graphs(tmp_path) -> None:
    assert csv_kind(str(WEIGHTS)) == "weights"
    assert csv_kind(str(LECTURE)) == "transition"
    assert csv_kind(str(PROPOSAL)) == "transition"
    assert csv_kind(str(write(tmp_path, "5\n7\n"))) == "weights"
    assert csv_kind(str(write(tmp_path, "0.5,0.5\n0.2,0.8\n"))) == "transition"
    assert csv_kind(str(write(tmp_path, "i,j,beta\n0,1,0.5\n"))) == "graph"
    assert csv_kind(str(tmp_path / "missing.csv")) == "transition"  # its reader says what is wrong
    assert default_sampler(str(WEIGHTS)) == "mh" == CSV_SAMPLERS["weights"]
    assert default_sampler(str(LECTURE)) == "markov"


BAD = {
    "negative": ("state,weight\na,1\nb,-2\n", "line 3, column 2: weight -2 must be a finite number >= 0"),
    "not a number": ("weight\n1\nlots\n", "line 3, column 1: weight 'lots' is not a number"),
    "all zero": ("0\n0\n", "every weight is zero"),
    "header only": ("state,weight\n", "a header but no weights"),
    "empty": ("# nothing\n", "the file is empty"),
    "duplicate names": ("state,weight\na,1\na,2\n", "state names must be distinct"),
    "short line": ("state,weight\na,1\n2\n", "line 3: 1 entries; expected NAME,WEIGHT"),
    "infinite": ("1\ninf\n", "line 2, column 1: weight inf must be a finite number >= 0"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_weights_are_one_line_naming_the_file(tmp_path, case) -> None:
    text, expected = BAD[case]
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_weights(path)
    assert err.value.source == str(path)
    assert expected in err.value.message


def test_the_target_is_the_state_code_with_log_b_and_exact_moments() -> None:
    t = get_target(str(WEIGHTS))
    assert isinstance(t, FiniteStates) and t.dim == 1 and t.names == ("state",)
    np.testing.assert_allclose(t.log_density(np.arange(5.0)[:, None]), np.log(B), rtol=0, atol=0)
    assert np.all(t.log_density(np.array([[0.5], [-1.0], [5.0]])) == -np.inf)
    law = np.array(B) / 15
    codes = np.arange(5)
    assert t.mean[0] == pytest.approx(law @ codes, abs=1e-14)
    assert t.sd[0] == pytest.approx(np.sqrt(law @ (codes - law @ codes) ** 2), abs=1e-14)
    with pytest.raises(UsageError, match="do not apply to a weights file"):
        get_target(str(WEIGHTS), init="0.5,0.5")
    with pytest.raises(UsageError, match="not a state of"):
        get_target(str(WEIGHTS), start="Z")


def test_a_start_of_weight_zero_is_refused_and_starts_avoid_such_states(tmp_path) -> None:
    path = write(tmp_path, "state,weight\na,0\nb,1\nc,1\n")
    with pytest.raises(UsageError, match="weight zero"):
        get_target(str(path), start="a")
    chains = run(mh, get_target(str(path)), chains=6, warmup=0, draws=50, seed=3).chains
    assert np.all(chains.posterior["state"] != 0)


# --- the exact transition matrix ----------------------------------------------------


def _exact_mh(b: list[Fraction], q: list[list[Fraction]]) -> list[list[Fraction]]:
    """The Metropolis-Hastings matrix in exact rational arithmetic, written from the definition."""
    n = len(b)
    p = [[Fraction(0)] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if j != i and q[i][j] > 0:
                p[i][j] = q[i][j] * min(Fraction(1), b[j] * q[j][i] / (b[i] * q[i][j]))
        p[i][i] = 1 - sum(p[i][j] for j in range(n) if j != i)
    return p


@pytest.mark.parametrize("proposal", [None, str(PROPOSAL)], ids=["uniform", "cycle with drift"])
def test_transition_matrix_is_the_exact_one_in_detailed_balance_with_b(proposal) -> None:
    t = get_target(str(WEIGHTS))
    got = mh.transition_matrix(t, proposal)
    assert got.states == ("A", "B", "C", "D", "E")
    b = [Fraction(x) for x in B]
    q = [[Fraction(1, 4) if i != j else Fraction(0) for j in range(5)] for i in range(5)] if proposal is None else [
        [Fraction(str(v)) for v in row] for row in np.loadtxt(PROPOSAL, delimiter=",", skiprows=3)
    ]
    exact = np.array([[float(v) for v in row] for row in _exact_mh(b, q)])
    np.testing.assert_allclose(got.matrix, exact, rtol=0, atol=1e-15)
    flow = (np.array(B) / 15)[:, None] * got.matrix
    np.testing.assert_allclose(flow, flow.T, rtol=0, atol=1e-16)  # detailed balance
    analysis = analyse(got)
    assert analysis.reversible and analysis.irreducible and analysis.aperiodic
    np.testing.assert_allclose(analysis.stationary, np.array(B) / 15, rtol=0, atol=1e-14)


def test_the_mh_matrix_of_a_rescaled_b_is_the_same_and_a_state_of_weight_zero_is_left_at_once() -> None:
    q = uniform_proposal(3)
    p = mh_transition_matrix(np.array([0.0, 1.0, 3.0]), q)
    np.testing.assert_allclose(p, mh_transition_matrix(np.array([0.0, 10.0, 30.0]), q), rtol=0, atol=1e-16)
    np.testing.assert_allclose(p[0], [0.0, 0.5, 0.5], rtol=0, atol=0)  # every proposal from a zero state accepted
    assert p[1, 0] == p[2, 0] == 0.0
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-15)


def test_a_proposal_file_of_other_states_or_size_is_refused(tmp_path) -> None:
    t = get_target(str(WEIGHTS))
    with pytest.raises(InputError, match="not the weights'"):
        mh.transition_matrix(t, str(LECTURE))
    with pytest.raises(InputError, match="a 2 x 2 proposal matrix for 5 states"):
        mh.transition_matrix(t, str(write(tmp_path, "0.5,0.5\n0.5,0.5\n", "q2.csv")))


# --- the simulation -------------------------------------------------------------------


@pytest.mark.parametrize("proposal", [None, str(PROPOSAL)], ids=["uniform", "cycle with drift"])
def test_simulated_frequencies_match_b_over_its_sum(proposal) -> None:
    t = get_target(str(WEIGHTS))
    params = {"proposal_matrix": proposal} if proposal else None
    chains = run(mh, t, chains=4, warmup=200, draws=4000, seed=11, params=params).chains
    report = markov_report(chains, analyse(mh.transition_matrix(t, proposal)))
    np.testing.assert_allclose(report.analysis.stationary, np.array(B) / 15, rtol=0, atol=1e-14)
    assert np.max(np.abs(report.z)) < 4, report.z
    assert 0.3 < float(np.mean(chains.sample_stats["acceptance_rate"])) < 1.0


def test_the_chain_moves_as_its_transition_matrix_says() -> None:
    """Transition counts i -> j over many chains estimate P_ij within binomial error: the sampler is P."""
    t = get_target(str(WEIGHTS))
    chains = run(mh, t, chains=200, warmup=0, draws=400, seed=5, params={"proposal_matrix": str(PROPOSAL)}).chains
    x = chains.posterior["state"].astype(int)
    counts = np.zeros((5, 5))
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    visits = counts.sum(axis=1, keepdims=True)
    p = mh.transition_matrix(t, str(PROPOSAL)).matrix
    se = np.sqrt(p * (1 - p) / visits)
    z = np.where(se > 0, (counts / visits - p) / np.where(se > 0, se, 1), 0.0)
    assert np.max(np.abs(z)) < 4.5, z
    assert np.all(counts[p == 0] == 0)


def test_same_seed_same_draws_and_chain_i_depends_only_on_i() -> None:
    t = get_target(str(WEIGHTS))
    both = run(mh, t, chains=4, warmup=20, draws=50, seed=9).chains.posterior["state"]
    part = run(mh, t, chain_ids=[2, 3], warmup=20, draws=50, seed=9).chains.posterior["state"]
    np.testing.assert_array_equal(both[2:], part)


def test_only_mh_samples_a_weights_file_and_mh_only_a_finite_law() -> None:
    t = get_target(str(WEIGHTS))
    with pytest.raises(UsageError, match="law on finitely many states: sample it with mh"):
        run(rwm, t, chains=2, warmup=1, draws=1, seed=1)
    with pytest.raises(UsageError, match="sample it with mh"):
        run(markov, t, chains=2, warmup=1, draws=1, seed=1)
    with pytest.raises(UsageError, match="needs a law on finitely many states"):
        run(mh, get_target("gaussian", dim=1), chains=2, warmup=1, draws=1, seed=1)
