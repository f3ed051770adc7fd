"""Finite Markov chains: the transition-matrix reader, the exact analysis, the markov sampler and its report."""

from __future__ import annotations

from math import gcd
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcmc.core.errors import InputError, UsageError
from mcmc.core.samplers import gibbs, markov, rwm
from mcmc.core.samplers.driver import run
from mcmc.core.targets import get_target
from mcmc.core.targets.markov_chain import (
    ROW_SUM_TOL,
    TransitionMatrix,
    analyse,
    communicating_classes,
    period,
    read_transition_matrix,
)
from mcmc.core.targets.protocols import TransitionKernel
from mcmc.diagnostics.report.markov import markov_report
from tests.core.harness import evaluate

LECTURE = Path(__file__).parents[1] / "data" / "markov" / "lecture.csv"
LECTURE_P = np.array([[0.65, 0.28, 0.07], [0.15, 0.67, 0.18], [0.12, 0.36, 0.52]])


def write(tmp_path: Path, text: str, name: str = "P.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def matrix(rows, states=None) -> TransitionMatrix:
    p = np.asarray(rows, dtype=float)
    return TransitionMatrix(p, tuple(states or (str(i) for i in range(len(p)))))


# --- reading ---------------------------------------------------------------------


def test_reads_the_lecture_matrix_with_its_state_names() -> None:
    chain = read_transition_matrix(LECTURE)
    assert chain.states == ("Sunny", "Cloudy", "Rainy")
    np.testing.assert_allclose(chain.matrix, LECTURE_P, rtol=0, atol=1e-15)


def test_header_is_optional_comments_and_blank_lines_skipped_rows_rescaled(tmp_path) -> None:
    path = write(tmp_path, "# a comment\n0.333333,0.666667\n\n0.5,0.5\n")
    chain = read_transition_matrix(path)
    assert chain.states == ("0", "1")
    np.testing.assert_allclose(chain.matrix.sum(axis=1), 1.0, rtol=0, atol=1e-15)


BAD_FILES = {
    "rows not summing to 1": ("a,b\n0.5,0.4\n0.5,0.5\n", "line 2: row 1 sums to 0.9, not 1"),
    "barely off": (f"0.5,{0.5 + 3 * ROW_SUM_TOL}\n0.5,0.5\n", "line 1: row 1 sums to"),
    "negative entry": ("1.2,-0.2\n0.5,0.5\n", "line 1, column 2: negative probability -0.2"),
    "not square": ("0.5,0.5\n0.5,0.5\n1,0\n", "not square: 3 rows of 2 entries"),
    "ragged": ("0.5,0.5\n1\n", "line 2: 1 entries; expected 2"),
    "non-numeric": ("0.5,0.5\n0.5,half\n", "line 2, column 2: 'half' is not a number"),
    "nan": ("0.5,nan\n0.5,0.5\n", "line 1, column 2: 'nan' is not a finite probability"),
    "empty": ("\n# nothing\n", "the file is empty"),
    "header only": ("a,b\n", "no matrix rows"),
    "duplicate names": ("a,a\n0.5,0.5\n0.5,0.5\n", "line 1: state names must be distinct"),
    "header too long": ("a,b,c\n0.5,0.5\n0.5,0.5\n", "line 2: 2 entries; expected 3"),
}


@pytest.mark.parametrize("case", BAD_FILES, ids=list(BAD_FILES))
def test_bad_files_are_one_line_naming_the_file(tmp_path, case) -> None:
    text, expected = BAD_FILES[case]
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_transition_matrix(path)
    assert err.value.source == str(path)
    assert expected in err.value.message, err.value.message
    assert "\n" not in str(err.value)


def test_missing_file_and_directory(tmp_path) -> None:
    for path, expected in ((tmp_path / "none.csv", "no such file"), (tmp_path, "directory")):
        with pytest.raises(InputError, match=expected):
            read_transition_matrix(path)


# --- exact analysis ---------------------------------------------------------------


def test_lecture_example_reaches_its_stationary_law_both_ways() -> None:
    a = analyse(read_transition_matrix(LECTURE))
    # pi (P - I) = 0 with sum(pi) = 1, solved directly
    system = np.vstack([(LECTURE_P - np.eye(3)).T[:2], np.ones(3)])
    np.testing.assert_allclose(a.stationary, np.linalg.solve(system, [0, 0, 1]), rtol=1e-12)
    # the lecture's (0.286, 0.489, 0.225): its three decimals (0.2865 cut, not rounded)
    np.testing.assert_allclose(a.stationary, [0.286, 0.489, 0.225], atol=6e-4)
    np.testing.assert_allclose(a.stationary @ LECTURE_P, a.stationary, atol=1e-14)
    np.testing.assert_allclose(a.stationary_power, a.stationary, atol=1e-12)
    assert a.power_converged and 10 < a.power_iterations < 200
    assert a.irreducible and a.aperiodic and a.periods == (1,)
    # not reversible: pi_S P_SR = 0.0201 but pi_R P_RS = 0.0270
    assert a.reversible is False and a.balance_violation > 1e-3
    second = sorted(np.abs(np.linalg.eigvals(LECTURE_P)))[-2]
    assert a.spectral_gap == pytest.approx(1 - second, abs=1e-12)
    assert abs(a.eigenvalues[0] - 1) < 1e-12


def test_a_periodic_chain() -> None:
    cycle = matrix([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    a = analyse(cycle, initial=np.array([1.0, 0.0, 0.0]))
    assert a.irreducible and not a.aperiodic and a.periods == (3,)
    np.testing.assert_allclose(a.stationary, [1 / 3] * 3, atol=1e-14)
    assert not a.power_converged  # mu P^t cycles through the three point masses
    assert a.spectral_gap == pytest.approx(0.0, abs=1e-12)  # cube roots of unity
    # a lazy step removes the periodicity
    lazy = analyse(matrix(0.5 * np.eye(3) + 0.5 * cycle.matrix))
    assert lazy.aperiodic and lazy.power_converged and lazy.spectral_gap > 0.1
    # random walk on a 4-cycle: bipartite, period 2, and reversible
    walk = analyse(matrix([[0, 0.5, 0, 0.5], [0.5, 0, 0.5, 0], [0, 0.5, 0, 0.5], [0.5, 0, 0.5, 0]]))
    assert walk.periods == (2,) and walk.reversible


def test_reducible_chains() -> None:
    # two absorbing states: two closed classes, pi not unique, the limit depends on the start
    a = analyse(matrix([[1, 0, 0], [0.25, 0.5, 0.25], [0, 0, 1]]), initial=np.array([0, 1.0, 0]))
    assert not a.irreducible and a.classes == ((0,), (1,), (2,))
    assert a.closed.tolist() == [True, False, True]
    assert a.stationary is None and a.reversible is None
    np.testing.assert_allclose(a.stationary_power, [0.5, 0, 0.5], atol=1e-10)
    assert a.spectral_gap == pytest.approx(0.0, abs=1e-12)
    # a transient state and one closed class: pi unique, zero on the transient state
    b = analyse(matrix([[0.5, 0.25, 0.25], [0, 0.5, 0.5], [0, 0.5, 0.5]]))
    assert not b.irreducible and b.closed.tolist() == [False, True]
    np.testing.assert_allclose(b.stationary, [0, 0.5, 0.5], atol=1e-14)
    assert b.aperiodic


def test_detailed_balance_of_a_metropolis_chain() -> None:
    # Metropolis on {0, 1, 2} for pi = (0.2, 0.3, 0.5) with a uniform proposal: reversible by construction
    pi = np.array([0.2, 0.3, 0.5])
    p = np.minimum(1.0, pi[None, :] / pi[:, None]) / 3
    np.fill_diagonal(p, 0)
    np.fill_diagonal(p, 1 - p.sum(axis=1))
    a = analyse(matrix(p))
    np.testing.assert_allclose(a.stationary, pi, atol=1e-14)
    assert a.reversible and a.balance_violation < 1e-15


def _reachable(p: np.ndarray) -> np.ndarray:
    n = len(p)
    r = np.eye(n, dtype=bool) | (p > 0)
    for _ in range(n):
        r = r | ((r.astype(int) @ r.astype(int)) > 0)
    return r


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda n: st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=n, max_size=n)
    )
)
def test_classes_and_periods_agree_with_matrix_powers(edges) -> None:
    e = np.array(edges)
    e[~e.any(axis=1), 0] = True  # every row needs somewhere to go
    p = e / e.sum(axis=1, keepdims=True)
    n = len(p)
    r = _reachable(p)
    classes, closed = communicating_classes(p)
    for members in classes:
        for i in members:
            assert {j for j in range(n) if r[i, j] and r[j, i]} == set(members)
        # closed: everything reachable from the class stays in it
        assert closed[classes.index(members)] == set(np.flatnonzero(r[members[0]])).issubset(members)
        # period: gcd of the return times t <= 3n with (P^t)_ii > 0
        i = members[0]
        q, returns = np.eye(n), []
        for t in range(1, 3 * n + 1):
            q = q @ p
            if q[i, i] > 0:
                returns.append(t)
        expected = 0
        for t in returns:
            expected = gcd(expected, t)
        assert period(p, members) == expected


# --- the target and the sampler ----------------------------------------------------


def test_target_from_a_csv_name_with_a_start_state() -> None:
    t = get_target(str(LECTURE))
    assert isinstance(t, TransitionKernel) and t.dim == 1 and t.names == ("state",)
    assert t.states == ("Sunny", "Cloudy", "Rainy") and t.options == {}
    pi = t.analysis.stationary
    assert t.mean[0] == pytest.approx(pi @ [0, 1, 2])
    np.testing.assert_allclose(
        t.log_density(np.array([[0.0], [2.0], [3.0], [0.5]])), [*np.log(pi[[0, 2]]), -np.inf, -np.inf]
    )
    for start in ("Rainy", 2, "2"):
        s = get_target(str(LECTURE), start=start)
        np.testing.assert_array_equal(s.initial_law, [0, 0, 1])
        from mcmc.core.random import ChainRandom

        assert (s.initial(ChainRandom(1, chains=5), 5) == 2.0).all()
    for bad in ("Snowy", 3, -1, "1.5"):
        with pytest.raises(UsageError, match="Sunny, Cloudy, Rainy"):
            get_target(str(LECTURE), start=bad)
    with pytest.raises(UsageError, match="do not apply"):
        get_target(str(LECTURE), beta=1.0)


def test_simulated_frequencies_match_the_stationary_law() -> None:
    target = get_target(str(LECTURE))
    chains = run(markov, target, chains=4, warmup=100, draws=4000, seed=20261124).chains
    report = markov_report(chains, target.analysis)
    assert np.abs(report.z).max() < 4, report.z
    assert (report.mcse > 0).all() and report.draws == 4000
    assert not evaluate(chains, target).failures  # mean and sd of the state code, R-hat
    # the chain moves when it leaves the diagonal: P(move) = sum_i pi_i (1 - P_ii)
    expected_moves = target.analysis.stationary @ (1 - np.diag(LECTURE_P))
    assert abs(chains.sample_stats["moved"].mean() - expected_moves) < 0.02


def test_a_wrong_kernel_is_caught(monkeypatch) -> None:
    # rows read as columns: the chain of P^T (not stochastic by rows) has other frequencies
    monkeypatch.setattr(markov, "_cumulative", lambda p: np.cumsum(p.T, axis=1)[:, :-1])
    target = get_target(str(LECTURE))
    chains = run(markov, target, chains=4, warmup=100, draws=4000, seed=20261124).chains
    assert np.abs(markov_report(chains, target.analysis).z).max() > 4


def test_a_periodic_chain_cycles_deterministically(tmp_path) -> None:
    path = write(tmp_path, "a,b,c\n0,1,0\n0,0,1\n1,0,0\n")
    chains = run(markov, get_target(str(path), start="a"), chains=2, warmup=0, draws=7, seed=1).chains
    np.testing.assert_array_equal(chains.posterior["state"], [[1, 2, 0, 1, 2, 0, 1]] * 2)
    assert chains.sample_stats["moved"].all()


def test_a_reducible_chain_stays_where_it_is_absorbed(tmp_path) -> None:
    path = write(tmp_path, "1,0,0\n0.25,0.5,0.25\n0,0,1\n")
    target = get_target(str(path), start=1)
    assert target.mean is None  # no unique stationary law
    chains = run(markov, target, chains=40, warmup=50, draws=10, seed=3).chains
    final = chains.posterior["state"][:, -1]
    assert set(final.tolist()) == {0.0, 2.0}  # both absorbing states reached by some chains
    assert (chains.posterior["state"] == final[:, None]).all()
    assert markov_report(chains, target.analysis).z is None


def test_samplers_and_targets_keep_to_their_own() -> None:
    with pytest.raises(UsageError, match="simulate it with markov"):
        run(rwm, get_target(str(LECTURE)), chains=1, warmup=1, draws=1, seed=1)
    with pytest.raises(UsageError, match="transition matrix"):
        run(markov, get_target("gaussian", dim=1), chains=1, warmup=1, draws=1, seed=1)
    with pytest.raises(UsageError):
        run(gibbs, get_target(str(LECTURE)), chains=1, warmup=1, draws=1, seed=1)


def test_same_seed_same_bytes_and_chains_split_across_calls() -> None:
    target = get_target(str(LECTURE))
    kw = {"warmup": 5, "draws": 50, "seed": 9}
    a = run(markov, target, chains=4, **kw).chains
    parts = [run(markov, target, chain_ids=ids, **kw).chains for ids in ([0, 1], [2, 3])]
    np.testing.assert_array_equal(np.concatenate([p.posterior["state"] for p in parts]), a.posterior["state"])
    assert (
        a.posterior["state"] != run(markov, target, chains=4, warmup=5, draws=50, seed=10).chains.posterior["state"]
    ).any()


# --- the law after T steps (issue 31, item 5) ------------------------------------------

LECTURE_INIT = "0.21,0.68,0.11"


def _exact_law_after(p: np.ndarray, initial: list[str], steps: int) -> list:
    """``pi_0 P^T`` in rational arithmetic, from the decimals as written."""
    from fractions import Fraction

    rows = [[Fraction(str(v)) for v in row] for row in p]
    law = [Fraction(v) for v in initial]
    for _ in range(steps):
        law = [sum(law[i] * rows[i][j] for i in range(len(law))) for j in range(len(law))]
    return law


@pytest.mark.parametrize("steps", [1, 2, 10])
def test_the_lecture_law_after_t_steps_from_its_initial_law_is_exact(steps) -> None:
    t = get_target(str(LECTURE), init=LECTURE_INIT, steps=steps)
    exact = [float(v) for v in _exact_law_after(LECTURE_P, LECTURE_INIT.split(","), steps)]
    np.testing.assert_allclose(t.law_at_steps, exact, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.initial_law, [0.21, 0.68, 0.11], rtol=0, atol=1e-16)
    assert t.options == {"init": LECTURE_INIT, "steps": steps}
    if steps == 1:  # the notes' first step, by hand: (0.21, 0.68, 0.11) P
        np.testing.assert_allclose(t.law_at_steps, [0.2517, 0.554, 0.1943], rtol=0, atol=1e-15)


def test_chains_started_from_the_initial_law_are_distributed_as_pi_t_at_step_t() -> None:
    steps, n = 10, 2000  # chains: each buffers 4096 random numbers per kind (32 KB), so not more
    t = get_target(str(LECTURE), init=LECTURE_INIT, steps=steps)
    x = run(markov, t, chains=n, warmup=0, draws=steps, seed=31).chains.posterior["state"]
    for at, law in ((1, get_target(str(LECTURE), init=LECTURE_INIT, steps=1).law_at_steps), (steps, t.law_at_steps)):
        freq = np.bincount(x[:, at - 1].astype(int), minlength=3) / n  # draw k is step k + 1 with --warmup 0
        z = (freq - law) / np.sqrt(law * (1 - law) / n)
        assert np.max(np.abs(z)) < 4, (at, freq, law, z)


BAD_LAWS = {
    "too few": ("0.5,0.5", "2 probabilities for the 3 states"),
    "not a sum of 1": ("0.5,0.5,0.5", "sum to 1.5, not 1"),
    "negative": ("1.2,-0.1,-0.1", "must be finite and >= 0"),
    "a word": ("0.5,half,0.5", "one probability per state"),
}


@pytest.mark.parametrize("case", BAD_LAWS, ids=list(BAD_LAWS))
def test_bad_initial_laws_and_steps_are_refused(case) -> None:
    text, expected = BAD_LAWS[case]
    with pytest.raises(UsageError, match=expected):
        get_target(str(LECTURE), init=text)


def test_steps_must_be_a_positive_whole_number_and_start_excludes_init() -> None:
    for bad in (0, -3, 2.5, "ten"):
        with pytest.raises(UsageError, match="steps must be a whole number >= 1"):
            get_target(str(LECTURE), steps=bad)
    with pytest.raises(UsageError, match="not both"):
        get_target(str(LECTURE), start="Rainy", init=LECTURE_INIT)
