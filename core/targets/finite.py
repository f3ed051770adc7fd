"""A law on finitely many states known up to its normaliser, and the Metropolis-Hastings chain that targets it.

``pi_j = b_j / sum_k b_k`` on states ``0 .. n-1``, given by the weights
``b_j >= 0`` alone (the normaliser ``sum_k b_k`` is what Metropolis-Hastings
never needs): read from a weights file (``weights.csv``, one weight per
state, :func:`read_weights`) and sampled by the ``mh`` sampler
(:mod:`mcmc.core.samplers.mh`) with a proposal matrix ``Q``
(``Q_ij = q(j | i)``, rows summing to 1; default uniform over the other
states). The chain it simulates has the transition matrix

    P_ij = Q_ij min(1, b_j Q_ji / (b_i Q_ij))   (j != i),     P_ii = 1 - sum_{j != i} P_ij,

(:func:`mh_transition_matrix`; Metropolis et al. 1953, Hastings 1970;
Robert & Casella 2004, *Monte Carlo Statistical Methods*, 2nd ed., section
7.3), whose flow ``b_i P_ij = min(b_i Q_ij, b_j Q_ji)`` is symmetric in ``i``
and ``j``: detailed balance, so ``b / sum(b)`` is stationary. The exact
analysis of ``P`` (:func:`mcmc.core.targets.markov_chain.analyse`: the
stationary law by state reduction, detailed balance, the spectral gap) is
what the run's report sets beside the simulated frequencies.

The target (:class:`FiniteTarget`, protocol
:class:`~mcmc.core.targets.protocols.FiniteStates`) has one coordinate, the
state code (a float ``0.0 .. n-1``), reported as the variable ``state``, as
the chain of a transition matrix has; ``log_density`` is ``log b`` (the
normaliser left out on purpose), the exact mean and sd of the code under
``b / sum(b)`` are known, and the starting states are drawn uniformly among
the states of positive weight (or one state, ``-T start=STATE``).

How a weights file is told from the other CSV targets: :func:`csv_kind`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target
from mcmc.core.targets.markov_chain import content_rows, read_transition_matrix, state_code

#: The header of a weights file with state names (:func:`read_weights`), lower case.
WEIGHTS_HEADER = ("state", "weight")
#: The header of a weights file without state names.
WEIGHT_ONLY_HEADER = ("weight",)
#: The first two header cells of a graph file (:mod:`mcmc.core.targets.graph`), lower case.
GRAPH_HEADER = ("i", "j")

TRANSITION, WEIGHTS, GRAPH = "transition", "weights", "graph"


def csv_kind(path: str | Path) -> str:
    """Which CSV target ``path`` holds, from its first line: :data:`WEIGHTS`, :data:`GRAPH` or :data:`TRANSITION`.

    * a weights file (:func:`read_weights`) starts with the header
      ``state,weight`` or ``weight``, or has one column (one weight per line);
    * a graph file (:func:`mcmc.core.targets.graph.read_graph`) starts with
      the header ``i,j,beta`` (or ``i,j``);
    * anything else is a transition matrix
      (:func:`mcmc.core.targets.markov_chain.read_transition_matrix`), whose
      rows have as many numbers as there are states.

    A file that cannot be read counts as a transition matrix: its reader
    then says what is wrong with it.
    """
    try:
        rows = content_rows(path)
    except InputError:
        return TRANSITION
    if not rows:
        return TRANSITION
    head = tuple(c.lower() for c in rows[0][1])
    if head in (WEIGHTS_HEADER, WEIGHT_ONLY_HEADER) or all(len(cells) == 1 for _, cells in rows):
        return WEIGHTS
    if head[:2] == GRAPH_HEADER:
        return GRAPH
    return TRANSITION


@dataclass(frozen=True)
class Weights:
    """Validated weights of a law on finitely many states.

    Attributes
    ----------
    weights
        ``(n,)`` float, non-negative, finite, with a positive sum (read-only).
    states
        ``n`` state names: the file's first column, or ``"0" .. "n-1"``.
    source
        The file it was read from (for messages).
    """

    weights: np.ndarray
    states: tuple[str, ...]
    source: str | None = None

    @property
    def law(self) -> np.ndarray:
        """``b / sum(b)``, ``(n,)``: what Metropolis-Hastings never computes, the report does."""
        return self.weights / np.sum(self.weights)


def read_weights(path: str | Path) -> Weights:
    """Read the weights ``b`` of a law ``pi_j ∝ b_j`` from a CSV file.

    Format: a header line ``state,weight`` then one ``NAME,WEIGHT`` line per
    state; or a header ``weight`` (or none) then one weight per line, the
    states then named ``0 .. n-1``. Blank lines and lines starting with ``#``
    are skipped. Weights are non-negative finite numbers, not all zero; they
    need not sum to 1 (that is the point).

    Raises
    ------
    InputError
        One line naming the file: missing or unreadable, no weights, a line
        with the wrong number of cells, a weight that is not a number, negative
        or not finite, all weights zero, duplicate or empty state names.
    """
    source = str(path)
    rows = content_rows(path)
    if not rows:
        raise InputError(source, "no weights: the file is empty")
    head = tuple(c.lower() for c in rows[0][1])
    named = head == WEIGHTS_HEADER
    if head in (WEIGHTS_HEADER, WEIGHT_ONLY_HEADER):
        rows = rows[1:]
    if not rows:
        raise InputError(source, "a header but no weights")
    width = 2 if named else 1
    names, values = [], []
    for lineno, cells in rows:
        if len(cells) != width:
            layout = "NAME,WEIGHT (the header is state,weight)" if named else "one weight"
            raise InputError(source, f"line {lineno}: {len(cells)} entries; expected {layout}")
        text = cells[-1]
        try:
            value = float(text)
        except ValueError:
            raise InputError(source, f"line {lineno}, column {width}: weight {text!r} is not a number") from None
        if not np.isfinite(value) or value < 0:
            raise InputError(source, f"line {lineno}, column {width}: weight {text} must be a finite number >= 0")
        names.append(cells[0] if named else str(len(names)))
        values.append(value)
    if len(set(names)) != len(names) or not all(names):
        raise InputError(source, "state names must be distinct and non-empty")
    weights = np.array(values)
    if not weights.sum() > 0:
        raise InputError(source, "every weight is zero: no law to sample")
    weights.setflags(write=False)
    return Weights(weights, tuple(names), source)


def uniform_proposal(n: int) -> np.ndarray:
    """``(n, n)`` ``Q_ij = 1 / (n - 1)`` for ``j != i``, 0 on the diagonal (for ``n = 1``: ``[[1]]``)."""
    if n == 1:
        return np.ones((1, 1))
    q = np.full((n, n), 1.0 / (n - 1))
    np.fill_diagonal(q, 0.0)
    return q


def read_proposal(path: str | Path, states: tuple[str, ...]) -> np.ndarray:
    """The proposal matrix ``Q`` in ``path`` (a transition-matrix CSV), its states put in the order of ``states``.

    With a header of state names, those must be the weights' states (in any
    order); without one, the matrix must have one row per state.

    Raises
    ------
    InputError
        A bad matrix (:func:`~mcmc.core.targets.markov_chain.read_transition_matrix`),
        or states that do not match the weights'.
    """
    q = read_transition_matrix(path)
    n = len(states)
    default_names = tuple(str(i) for i in range(len(q.states)))
    if q.states == default_names:
        if len(q.states) != n:
            raise InputError(str(path), f"a {len(q.states)} x {len(q.states)} proposal matrix for {n} states")
        return np.array(q.matrix)
    if set(q.states) != set(states) or len(q.states) != n:
        raise InputError(str(path), f"the proposal's states ({', '.join(q.states)}) are not the weights' "
                         f"({', '.join(states)})")  # fmt: skip
    order = [q.states.index(s) for s in states]
    return np.array(q.matrix[np.ix_(order, order)])


def mh_transition_matrix(weights: np.ndarray, proposal: np.ndarray) -> np.ndarray:
    """The Metropolis-Hastings transition matrix of the law ``∝ weights`` under the proposal ``Q``.

    ``P_ij = Q_ij min(1, b_j Q_ji / (b_i Q_ij))`` for ``j != i`` (0 where
    ``Q_ij = 0``), and the self-transition ``P_ii = 1 - sum_{j != i} P_ij``:
    the probability that the chain stays, proposing itself or being
    rejected. From a state of weight zero every proposal is accepted.
    Elementwise arithmetic only (no BLAS), so the same bytes on every CPU.

    Parameters
    ----------
    weights
        ``b``, ``(n,)``, non-negative.
    proposal
        ``Q``, ``(n, n)``, row-stochastic.

    Returns
    -------
    ndarray, shape (n, n)
        Row-stochastic; ``b_i P_ij = b_j P_ji`` (detailed balance).
    """
    b = np.asarray(weights, dtype=float)
    q = np.asarray(proposal, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (b[None, :] * q.T) / (b[:, None] * q)
    accept = np.where(q > 0, np.minimum(1.0, np.where(np.isnan(ratio), 1.0, ratio)), 0.0)
    p = q * accept
    np.fill_diagonal(p, 0.0)
    np.fill_diagonal(p, np.maximum(1.0 - p.sum(axis=1), 0.0))
    return p


# --- the target ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FiniteTarget(Target):
    """A law ``∝ b`` on finitely many states as a target: one coordinate, the state code.

    Implements :class:`~mcmc.core.targets.protocols.FiniteStates`.

    Parameters
    ----------
    table
        The weights and state names.
    """

    table: Weights | None = None

    @property
    def log_weights(self) -> np.ndarray:
        """``log b``, ``(n,)`` (``-inf`` for a weight of zero)."""
        assert self.table is not None
        with np.errstate(divide="ignore"):
            return np.log(self.table.weights)

    @property
    def states(self) -> tuple[str, ...]:
        """The state names, code ``k`` is ``states[k]``."""
        assert self.table is not None
        return self.table.states


def finite_target(path: str | Path, start: str | int | None = None) -> FiniteTarget:
    """The law ``∝ b`` of the weights file ``path`` (see :func:`read_weights`).

    Parameters
    ----------
    path
        The weights file.
    start
        Starting state of every chain, by name or 0-based index; default:
        each chain's start drawn uniformly among the states of positive weight.

    Returns
    -------
    FiniteTarget
        ``dim = 1`` (the state code), reported variable ``state``, the exact
        mean and sd of the code under ``b / sum(b)``.

    Raises
    ------
    InputError
        A bad file.
    UsageError
        An unknown ``start``, or one of weight zero.
    """
    table = read_weights(path)
    n = len(table.states)
    law = table.law
    positive = table.weights > 0
    initial = positive / positive.sum()
    if start is not None:
        code = state_code(table.states, start, table.source)
        if not positive[code]:
            raise UsageError(f"start={start!r} has weight zero in {table.source}: the chain can never be there")
        initial = np.zeros(n)
        initial[code] = 1.0
    codes = np.arange(n, dtype=float)
    m = float(np.sum(law * codes))
    sd = float(np.sqrt(max(np.sum(law * (codes - m) ** 2), 0.0)))
    with np.errstate(divide="ignore"):
        log_b = np.log(table.weights)
    cdf = np.cumsum(initial)

    def log_density(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)[..., 0]
        valid = (x == np.floor(x)) & (x >= 0) & (x < n)
        return np.where(valid, log_b[np.where(valid, x, 0).astype(np.int64)], -np.inf)

    def initial_point(rng: ChainRandom, chains: int) -> np.ndarray:
        u = rng.uniform(())
        return np.sum(cdf[None, :-1] <= u[:, None], axis=1).astype(float)[:, None]

    return FiniteTarget(
        name=str(path), dim=1, log_density=log_density, names=("state",), variables=(("state", ()),),
        mean=np.array([m]), sd=np.array([sd]), initial_point=initial_point,
        options={} if start is None else {"start": start}, table=table,
    )  # fmt: skip
