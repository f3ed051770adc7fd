"""Finite Markov chains from a transition matrix file: the target, its reader and its exact analysis.

A chain on states ``0 .. n-1`` with row-stochastic transition matrix ``P``
(``P[i, j] = p(x_{t+1} = j | x_t = i)``), read from a CSV file by
:func:`read_transition_matrix` and simulated by the ``markov`` sampler
(:mod:`mcmc.core.samplers.markov`). Theory (as the lecture presents it;
Levin, Peres & Wilmer 2017, *Markov Chains and Mixing Times*, ch. 1, 4, 12):

* a distribution ``pi`` is *stationary* when ``pi P = pi``: a left
  eigenvector of ``P`` for eigenvalue 1, and the limit of ``mu P^t`` from an
  initial law ``mu`` when the chain is irreducible and aperiodic (power
  iteration; :func:`analyse` computes both, but ``pi`` itself by GTH state
  reduction, :mod:`mcmc.core.targets.markov_kernel`, whose bytes do not
  depend on the CPU as LAPACK's eigenvectors do);
* *irreducible*: every state reaches every other (the directed graph
  ``i -> j`` for ``P[i, j] > 0`` is strongly connected). The multiplicity of
  eigenvalue 1 is the number of *closed* communicating classes, so ``pi`` is
  unique exactly when there is one;
* *period* of a class: the gcd of its cycle lengths, from the levels ``l`` of
  a breadth-first search as ``gcd(l_i + 1 - l_j)`` over the class's edges
  ``i -> j``; *aperiodic* when every closed class has period 1;
* *detailed balance* (reversibility): ``pi_i P_ij = pi_j P_ji`` for all
  ``i, j``, which implies stationarity and is what Metropolis-Hastings
  builds in;
* *spectral gap* ``1 - |lambda_2|``, ``lambda_2`` the eigenvalue of second
  largest modulus: the distance to stationarity shrinks like ``|lambda_2|^t``
  (0 for a periodic or reducible chain).

The target (:class:`MarkovChainTarget`, protocol
:class:`~mcmc.core.targets.protocols.TransitionKernel`) has one coordinate,
the state code (a float ``0.0 .. n-1``), reported as the variable ``state``;
``log_density`` is ``log pi`` of the unique stationary law (``-inf`` off the
states), the exact mean and sd of the code under ``pi`` are known, and the
starting states are drawn from the initial law (uniform, or one state).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import reduce
from math import gcd
from pathlib import Path

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target

#: |sum_j P_ij - 1| allowed, at least: 6 written decimals (1/3 as 0.333333) pass, then rows are rescaled
ROW_SUM_TOL = 1e-6
DECIMALS_TOL = 5e-7  # and per entry: each of n entries written to six decimals is off by at most half a millionth
BALANCE_TOL = 1e-10  # |pi_i P_ij - pi_j P_ji| allowed for detailed balance
POWER_TOL = 1e-12  # power iteration stops when ||mu P^(t+1) - mu P^t||_1 falls below this
POWER_MAX_ITERATIONS = 100_000
POWER_MAX_WORK = 10**10  # multiply-adds of the power iteration (n^2 per step): about ten seconds at most
#: The most states a transition matrix may have: its exact analysis (eigenvalues, GTH reduction) costs n^3,
#: about half a minute at 2000 states on a laptop core; a larger matrix is refused before it is read.
MAX_STATES = 2000


@dataclass(frozen=True)
class TransitionMatrix:
    """A validated row-stochastic matrix and the names of its states.

    Attributes
    ----------
    matrix
        ``(n, n)`` float, non-negative, rows summing to 1 (rescaled exactly).
    states
        ``n`` state names: the CSV header, or ``"0" .. "n-1"`` without one.
    source
        The file it was read from (for messages).
    """

    matrix: np.ndarray
    states: tuple[str, ...]
    source: str | None = None


def read_transition_matrix(path: str | Path) -> TransitionMatrix:
    """Read a row-stochastic transition matrix from a CSV file.

    Format: ``n`` rows of ``n`` numbers, comma-separated; optionally a first
    line of ``n`` state names (recognised by not being all numbers). Blank
    lines and lines starting with ``#`` are skipped. Each row must sum to 1
    within :data:`ROW_SUM_TOL`, or half a millionth per entry on a wider row
    (:data:`DECIMALS_TOL`: entries written to six decimals always pass), and
    is then divided by its sum. A UTF-8 byte-order mark is skipped.

    Returns
    -------
    TransitionMatrix

    Raises
    ------
    InputError
        One line naming the file: missing or unreadable, a non-numeric cell
        (line and column), a row of the wrong length, a matrix that is not
        square, a negative or non-finite entry, a row not summing to 1,
        duplicate state names.
    """
    source = str(path)
    # A matrix too large for the exact analysis is refused at its first line, before the rest is read.
    lines = content_rows(path, max_cells=MAX_STATES, too_many=(
        "states; the exact analysis of a chain (eigenvalues and the stationary law, n^3 operations) takes at most "
        f"{MAX_STATES}"
    ))
    if not lines:
        raise InputError(source, "no transition matrix: the file is empty")
    cells = [row for _, row in lines]
    states: tuple[str, ...] | None = None
    if not all(_is_number(c) for c in cells[0]):
        states = tuple(cells[0])
        if len(set(states)) != len(states) or not all(states):
            raise InputError(source, f"line {lines[0][0]}: state names must be distinct and non-empty")
        lines, cells = lines[1:], cells[1:]
    n = len(cells)
    if n == 0:
        raise InputError(source, "a header of state names but no matrix rows")
    width = len(states) if states is not None else len(cells[0])
    rows = []
    for (lineno, _), row in zip(lines, cells, strict=True):
        if len(row) != width:
            raise InputError(source, f"line {lineno}: {len(row)} entries; expected {width}")
        values = []
        for col, c in enumerate(row, start=1):
            try:
                values.append(float(c))
            except ValueError:
                raise InputError(source, f"line {lineno}, column {col}: {c!r} is not a number") from None
        rows.append(values)
    if width != n:
        raise InputError(source, f"the matrix is not square: {n} rows of {width} entries")
    matrix = np.array(rows)
    # Six written decimals always pass: 0.333333 x 3 is 1e-6 off, 0.166667 x 6 is 2e-6 off; the float sum of
    # decimal fractions adds a few ulps, hence the relative slack.
    tolerance = max(ROW_SUM_TOL, DECIMALS_TOL * n) * (1 + 1e-6)
    for i in range(n):
        lineno = lines[i][0]
        if not np.all(np.isfinite(matrix[i])):
            j = int(np.flatnonzero(~np.isfinite(matrix[i]))[0])
            raise InputError(source, f"line {lineno}, column {j + 1}: {cells[i][j]!r} is not a finite probability")
        if np.any(matrix[i] < 0):
            j = int(np.flatnonzero(matrix[i] < 0)[0])
            raise InputError(source, f"line {lineno}, column {j + 1}: negative probability {matrix[i, j]:g}")
        total = float(matrix[i].sum())
        if abs(total - 1.0) > tolerance:
            raise InputError(
                source, f"line {lineno}: row {i + 1} sums to {total:.10g}, not 1 (tolerance {tolerance:.3g})"
            )
    matrix /= matrix.sum(axis=1, keepdims=True)
    matrix.setflags(write=False)
    return TransitionMatrix(matrix, states if states is not None else tuple(str(i) for i in range(n)), source)


def content_rows(
    path: str | Path, *, max_cells: int | None = None, too_many: str = ""
) -> list[tuple[int, list[str]]]:
    """The content lines of a CSV file as ``(line number, stripped cells)``: blank and ``#`` lines skipped.

    Shared by the readers of every CSV target (transition matrices, weights,
    graphs). A UTF-8 byte-order mark (as spreadsheet programs write) is not
    part of the first cell.

    Parameters
    ----------
    max_cells, too_many
        A first content line of more than ``max_cells`` cells is refused at
        once, with ``too_many`` after the count (the rest is not read).

    Raises
    ------
    InputError
        Missing, a directory, or unreadable (naming the file); a first line
        over ``max_cells``.
    """
    source = str(path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            lines: list[tuple[int, list[str]]] = []
            for k, row in enumerate(csv.reader(fh), start=1):
                if not _content(row):
                    continue
                if not lines and max_cells is not None and len(row) > max_cells:
                    raise InputError(source, f"line {k}: {len(row)} {too_many}")
                lines.append((k, [c.strip() for c in row]))
            return lines
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except IsADirectoryError:
        raise InputError(source, "is a directory, not a CSV file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(source, f"cannot read: {exc}") from None


def _content(row: list[str]) -> bool:
    return bool(row) and any(c.strip() for c in row) and not row[0].lstrip().startswith("#")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --- exact analysis --------------------------------------------------------------


@dataclass(frozen=True)
class ChainAnalysis:
    """What linear algebra and graph search say about a finite chain (see the module docstring).

    Attributes
    ----------
    states
        State names, ``(n,)``.
    initial
        ``(n,)`` the initial law the power iteration starts from.
    stationary
        ``(n,)`` the stationary law (:func:`stationary_law`): GTH state
        reduction on the closed class, 0 on the transient states; ``None``
        when it is not unique (several closed classes).
    stationary_power
        ``(n,)`` ``mu P^t`` at the last power iteration.
    power_iterations
        ``t``: iterations until ``||mu P^(t+1) - mu P^t||_1 < POWER_TOL``
        (or the cap).
    power_converged
        False when the cap was reached (a periodic chain oscillates).
    eigenvalues
        ``(n,)`` complex, by decreasing modulus.
    spectral_gap
        ``1 - |lambda_2|`` (1 for a single state).
    classes
        The communicating classes (strongly connected components), each a
        tuple of state indices, in increasing order of their smallest state.
    closed
        ``(len(classes),)`` bool: no transition leaves the class (recurrent).
    periods
        Period of each class (0 for a single state without a self-loop).
    irreducible, aperiodic
        One class; every closed class has period 1.
    reversible
        Detailed balance holds within :data:`BALANCE_TOL` (``None`` when
        ``pi`` is not unique).
    balance_violation
        ``max_ij |pi_i P_ij - pi_j P_ji|`` (``None`` when ``pi`` is not unique).
    """

    states: tuple[str, ...]
    initial: np.ndarray
    stationary: np.ndarray | None
    stationary_power: np.ndarray
    power_iterations: int
    power_converged: bool
    eigenvalues: np.ndarray
    spectral_gap: float
    classes: tuple[tuple[int, ...], ...]
    closed: np.ndarray
    periods: tuple[int, ...]
    irreducible: bool
    aperiodic: bool
    reversible: bool | None
    balance_violation: float | None


def communicating_classes(matrix: np.ndarray) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
    """Strongly connected components of ``i -> j`` for ``P[i, j] > 0``, and which of them are closed.

    Returns
    -------
    classes
        Tuples of state indices, ordered by their smallest state.
    closed
        ``(len(classes),)`` bool.
    """
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(csr_array(matrix > 0), directed=True, connection="strong")
    order = {lab: k for k, lab in enumerate(dict.fromkeys(labels.tolist()))}
    n_classes = len(order)
    members: list[list[int]] = [[] for _ in range(n_classes)]
    for state, lab in enumerate(labels.tolist()):
        members[order[lab]].append(state)
    relabel = np.array([order[lab] for lab in labels.tolist()])
    src, dst = np.nonzero(matrix > 0)
    leaves = np.zeros(n_classes, dtype=bool)
    leaves[relabel[src[relabel[src] != relabel[dst]]]] = True
    return tuple(tuple(m) for m in members), ~leaves


def period(matrix: np.ndarray, members: tuple[int, ...]) -> int:
    """Period of a communicating class: ``gcd(level_i + 1 - level_j)`` over its edges ``i -> j`` (BFS levels).

    Returns 0 for a class with no edge inside it (a single state without a self-loop).
    """
    inside = np.zeros(matrix.shape[0], dtype=bool)
    inside[list(members)] = True
    level = {members[0]: 0}
    frontier = [members[0]]
    while frontier:
        nxt = []
        for i in frontier:
            for j in np.flatnonzero((matrix[i] > 0) & inside).tolist():
                if j not in level:
                    level[j] = level[i] + 1
                    nxt.append(j)
        frontier = nxt
    diffs = [abs(level[i] + 1 - level[j]) for i in members for j in np.flatnonzero((matrix[i] > 0) & inside).tolist()]
    return reduce(gcd, diffs, 0)


def power_iteration(matrix: np.ndarray, initial: np.ndarray) -> tuple[np.ndarray, int, bool]:
    """``mu P^t`` from ``mu = initial`` until successive laws differ by less than :data:`POWER_TOL` in L1.

    Returns
    -------
    law
        ``(n,)`` the last ``mu P^t``.
    iterations
        ``t``.
    converged
        False when :data:`POWER_MAX_ITERATIONS` (or, for a large chain, :data:`POWER_MAX_WORK`
        multiply-adds) was reached.
    """
    mu = np.asarray(initial, dtype=float)
    # At most POWER_MAX_WORK multiply-adds: 100,000 steps of a 2000-state chain would take minutes.
    steps = max(1, min(POWER_MAX_ITERATIONS, POWER_MAX_WORK // max(matrix.size, 1)))
    for t in range(1, steps + 1):
        nxt = mu @ matrix
        if np.abs(nxt - mu).sum() < POWER_TOL:
            return nxt, t, True
        mu = nxt
    return mu, steps, False


def stationary_law(matrix: np.ndarray, classes: tuple[tuple[int, ...], ...], closed: np.ndarray) -> np.ndarray | None:
    """The unique stationary law ``(n,)``, or ``None`` when there are several closed classes.

    With one closed class ``C`` the law is carried by ``C`` (the other states
    are transient) and is that of ``P`` restricted to ``C``, an irreducible
    stochastic matrix, by :func:`~mcmc.core.targets.markov_kernel.gth_stationary`:
    exactly 0 on the transient states, and the same bytes on every CPU (the
    ``markov`` sampler writes ``log pi`` as ``lp``). Cost ``|C|^3 / 3``
    multiply-adds (about 1 s at 2000 states).

    Parameters
    ----------
    matrix
        ``(n, n)`` row-stochastic.
    classes, closed
        From :func:`communicating_classes`.
    """
    if int(np.sum(closed)) != 1:
        return None
    from mcmc.core.targets.markov_kernel import gth_stationary  # numba: imported only when a law is computed

    members = np.array(classes[int(np.flatnonzero(closed)[0])], dtype=np.int64)
    pi = np.zeros(matrix.shape[0])
    pi[members] = gth_stationary(np.ascontiguousarray(matrix[np.ix_(members, members)], dtype=np.float64))
    return pi


def analyse(chain: TransitionMatrix, initial: np.ndarray | None = None) -> ChainAnalysis:
    """Stationary law (GTH state reduction and power iteration), classes, periods, detailed balance, spectral gap.

    Parameters
    ----------
    chain
        The transition matrix.
    initial
        ``(n,)`` initial law of the power iteration; default uniform.

    Returns
    -------
    ChainAnalysis
    """
    p = chain.matrix
    n = p.shape[0]
    mu = np.full(n, 1.0 / n) if initial is None else np.asarray(initial, dtype=float)
    classes, closed = communicating_classes(p)
    periods = tuple(period(p, members) for members in classes)
    # The spectrum is only reported (spectral gap); LAPACK's last bits may vary with the CPU there.
    values = np.linalg.eigvals(p.T)
    values = values[np.argsort(-np.abs(values), kind="stable")]
    stationary = stationary_law(p, classes, closed)
    balance = reversible = None
    if stationary is not None:
        flow = stationary[:, None] * p
        balance = float(np.abs(flow - flow.T).max())
        reversible = balance <= BALANCE_TOL
    law, iterations, converged = power_iteration(p, mu)
    gap = 1.0 - float(np.abs(values[1])) if n > 1 else 1.0
    return ChainAnalysis(
        states=chain.states,
        initial=mu,
        stationary=stationary,
        stationary_power=law,
        power_iterations=iterations,
        power_converged=converged,
        eigenvalues=values,
        spectral_gap=max(gap, 0.0),
        classes=classes,
        closed=closed,
        periods=periods,
        irreducible=len(classes) == 1,
        aperiodic=all(d == 1 for d, c in zip(periods, closed, strict=True) if c),
        reversible=reversible,
        balance_violation=balance,
    )


# --- the target -----------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class MarkovChainTarget(Target):
    """A finite Markov chain as a target: one coordinate, the state code.

    Implements :class:`~mcmc.core.targets.protocols.TransitionKernel`.

    Parameters
    ----------
    chain
        The transition matrix and state names.
    initial_law
        ``(n,)`` the law of the starting state.
    analysis
        :func:`analyse` of the matrix, power iteration from ``initial_law``.
    steps
        ``T``: the step at which the run's report sets the exact law
        ``pi_T = pi_0 P^T`` (:attr:`law_at_steps`) beside the chains' states;
        ``None``: not asked.
    law_at_steps
        ``(n,)`` :func:`law_after` ``T`` steps from ``initial_law`` (``None`` without ``steps``).
    """

    chain: TransitionMatrix | None = None
    initial_law: np.ndarray | None = None
    analysis: ChainAnalysis | None = None
    steps: int | None = None
    law_at_steps: np.ndarray | None = None

    @property
    def transition(self) -> np.ndarray:
        """``(n, n)`` the row-stochastic matrix."""
        assert self.chain is not None
        return self.chain.matrix

    @property
    def states(self) -> tuple[str, ...]:
        """The state names, code ``k`` is ``states[k]``."""
        assert self.chain is not None
        return self.chain.states


def law_after(matrix: np.ndarray, initial: np.ndarray, steps: int) -> np.ndarray:
    """``pi_T = pi_0 P^T``: the law of the chain after ``steps`` transitions from the initial law ``pi_0``.

    ``T`` products of a row vector with ``P``, each written out elementwise
    (``sum_i pi_i P_ij``, no BLAS: the same bytes on every CPU), as long as
    that is within :data:`POWER_MAX_ITERATIONS` steps and
    :data:`POWER_MAX_WORK` multiply-adds; beyond, ``P^T`` by repeated squaring
    (``np.einsum``'s own loops, not BLAS), when that is within the work.

    Raises
    ------
    UsageError
        ``T`` too large for either within :data:`POWER_MAX_WORK` (a large
        chain and a large ``T``: ``-T steps`` is named).

    Parameters
    ----------
    matrix
        ``P``, ``(n, n)`` row-stochastic.
    initial
        ``pi_0``, ``(n,)``.
    steps
        ``T >= 0``.

    Returns
    -------
    ndarray, shape (n,)
    """
    law = np.asarray(initial, dtype=float)
    steps = int(steps)
    n = len(law)
    if steps <= POWER_MAX_ITERATIONS and steps * n * n <= POWER_MAX_WORK:
        for _ in range(steps):
            law = np.sum(law[:, None] * matrix, axis=0)
        return law
    squarings = steps.bit_length()
    if 2 * squarings * n**3 > POWER_MAX_WORK:
        raise UsageError(
            f"-T steps={steps}: the law after {steps} steps of a {n}-state chain is beyond reach "
            f"({POWER_MAX_WORK:.0e} multiply-adds); give fewer steps"
        )
    power = np.asarray(matrix, dtype=float)
    while steps:  # pi_0 P^T with P^T = prod of P^(2^k) over the bits of T: 10^12 steps in 40 squarings
        if steps & 1:
            law = np.sum(law[:, None] * power, axis=0)
        steps >>= 1
        if steps:
            power = np.einsum("ij,jk->ik", power, power)
            # Rows back to sums of 1: a squaring doubles a row's rounding error, 40 of them would show it
            power /= np.sum(power, axis=1, keepdims=True)
    return law


def parse_law(text: str | float | int, states: tuple[str, ...], source: str | None) -> np.ndarray:
    """An initial law given as ``"0.21,0.68,0.11"`` (one probability per state, in the file's order).

    The probabilities must be non-negative and sum to 1 within
    :data:`ROW_SUM_TOL` (then they are rescaled to sum exactly to 1).

    Raises
    ------
    UsageError
        Not one number per state, a negative number, or a sum other than 1.
    """
    parts = [p.strip() for p in str(text).split(",")]
    where = f"-T init={text}"
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        raise UsageError(f"{where}: give one probability per state, comma-separated ({', '.join(states)})") from None
    if values.size != len(states):
        raise UsageError(f"{where}: {values.size} probabilities for the {len(states)} states of {source} "
                         f"({', '.join(states)})")  # fmt: skip
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise UsageError(f"{where}: probabilities must be finite and >= 0")
    total = float(values.sum())
    if abs(total - 1.0) > ROW_SUM_TOL:
        raise UsageError(f"{where}: the probabilities sum to {total:.10g}, not 1")
    return values / total


def markov_chain(
    path: str | Path, start: str | int | None = None, init: str | None = None, steps: int | None = None
) -> MarkovChainTarget:
    """The finite Markov chain of the transition matrix in ``path`` (see :func:`read_transition_matrix`).

    Parameters
    ----------
    path
        CSV file of the matrix.
    start
        Starting state of every chain, by name (as in the header) or by
        0-based index; default: each chain's start drawn uniformly.
    init
        The initial law ``pi_0`` instead, one probability per state
        (``"0.21,0.68,0.11"``, :func:`parse_law`); each chain's start is drawn from it.
    steps
        ``T >= 1``: the target carries ``pi_T = pi_0 P^T`` (:func:`law_after`),
        which the run's report sets beside the chains' states at step ``T``.

    Returns
    -------
    MarkovChainTarget
        ``dim = 1`` (the state code), reported variable ``state``;
        ``log_density``, ``mean`` and ``sd`` from the stationary law when it
        is unique (else ``log_density`` is 0 on every state and no moments).

    Raises
    ------
    InputError
        A bad file.
    UsageError
        An unknown ``start``, a bad ``init`` law, both of them, or ``steps`` not a whole number >= 1.
    """
    chain = read_transition_matrix(path)
    n = len(chain.states)
    initial = np.full(n, 1.0 / n)
    if start is not None and init is not None:
        raise UsageError("give the start as -T start=STATE or as a law -T init=P,P,..., not both")
    if start is not None:
        code = state_code(chain.states, start, chain.source)
        initial = np.zeros(n)
        initial[code] = 1.0
    if init is not None:
        initial = parse_law(init, chain.states, chain.source)
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise UsageError(f"-T steps must be a whole number >= 1, got {steps!r}")
    exact = analyse(chain, initial)
    pi = exact.stationary
    codes = np.arange(n, dtype=float)
    mean = sd = None
    if pi is not None:
        m = float(np.sum(pi * codes))  # not @ (BLAS): the same bytes on every CPU, as pi itself
        mean, sd = np.array([m]), np.array([float(np.sqrt(max(np.sum(pi * (codes - m) ** 2), 0.0)))])
    with np.errstate(divide="ignore"):
        log_pi = np.log(pi) if pi is not None else np.zeros(n)
    cdf = np.cumsum(initial)

    def log_density(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)[..., 0]
        valid = (x == np.floor(x)) & (x >= 0) & (x < n)
        return np.where(valid, log_pi[np.where(valid, x, 0).astype(np.int64)], -np.inf)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        u = rng.uniform(())
        return np.sum(cdf[None, :-1] <= u[:, None], axis=1).astype(float)[:, None]

    return MarkovChainTarget(
        name=str(path),
        dim=1,
        log_density=log_density,
        names=("state",),
        variables=(("state", ()),),
        mean=mean,
        sd=sd,
        initial_point=initial_point,
        options={k: v for k, v in (("start", start), ("init", init), ("steps", steps)) if v is not None},
        chain=chain,
        initial_law=initial,
        analysis=exact,
        steps=steps,
        law_at_steps=None if steps is None else law_after(chain.matrix, initial, steps),
    )


def state_code(states: tuple[str, ...], start: str | int, source: str | None) -> int:
    """The code of state ``start`` among ``states``, given by name or by 0-based index.

    Raises
    ------
    UsageError
        Neither a state name nor an index in range (the message lists the states).
    """
    if isinstance(start, str) and start in states:
        return states.index(start)
    try:
        code = int(start)
    except (TypeError, ValueError):
        code = -1
    if str(start).strip() != str(code) or not 0 <= code < len(states):
        raise UsageError(
            f"start={start!r} is not a state of {source}; the states are {', '.join(states)}"
            f" (or an index 0..{len(states) - 1})"
        )
    return code
