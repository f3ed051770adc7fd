"""What a target may do beyond its log density: small protocols that particular samplers need.

Every :class:`~mcmc.core.targets.base.Target` has a log density (and maybe a
gradient, a prior/likelihood split). Some samplers need more, and a target
says it offers that by implementing one of these protocols (a subclass of
``Target`` with the methods), never by a field on every target:

* :class:`FullConditionals`, for ``gibbs`` and ``hmc-gibbs``: draw blocks of
  coordinates from their full conditionals (the Ising model's heat bath, a
  Gaussian's conditional normals, a network's precision hyperparameters).
* :class:`CoordinateConditionals`, for ``gibbs -P scan=random``: draw one
  coordinate per chain, each chain at its own, from its full conditional
  (a Gaussian's coordinates, a lattice's sites).
* :class:`SpinLattice`, for ``swendsen-wang``: ``+-1`` spins coupled along
  the edges of a graph (the Ising model), and its refinement
  :class:`PottsLattice`, ``q``-state spins (the Potts model). A target
  implementing either is discrete, so the driver runs only samplers that
  declare ``LATTICE = True`` on it.
* :class:`WeightedBonds`, for ``swendsen-wang`` on a graph: a coupling per
  pair instead of one ``beta``.
* :class:`Quantile`, for ``inverse-cdf``: a one-dimensional target's
  quantile function (without it, inverse-cdf inverts the CDF numerically).
* :class:`ExactDraws`, for ``exact``: a target's own exact sampler (the
  normal's Box-Muller transform, basic and polar).
* :class:`ProposalDistribution` and its refinement :class:`EnvelopeBound`,
  for ``importance`` and ``rejection``: a proposal the target file gives
  (and the bound ``log k`` with ``p <= k q``, which makes rejection exact).
* :class:`GaussianPrior`, for ``elliptical-slice``: the model's own Gaussian
  prior and its likelihood, ``pi(x) ∝ N(x; mu, Sigma) L(x)``.
* :class:`TransitionKernel`, for ``markov``: a finite Markov chain given by
  its transition matrix, simulated rather than targeted; the driver runs
  only samplers that declare ``SIMULATES_CHAIN = True`` on it.
* :class:`FiniteStates`, for ``mh``: a law on finitely many states known by
  its weights only (the normaliser unknown); the driver runs only samplers
  that declare ``FINITE_STATES = True`` on it.

Samplers ask for one with :func:`require` (the protocols are runtime
checkable), which raises :class:`~mcmc.core.errors.UsageError` when a target
lacks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from mcmc.core.errors import UsageError

if TYPE_CHECKING:
    from mcmc.core.random import ChainRandom


@runtime_checkable
class FullConditionals(Protocol):
    """A target whose coordinates split into blocks it can draw from their full conditionals.

    The ``gibbs`` sampler runs one systematic scan per iteration, for every
    chain at once::

        noise = target.sweep_noise(rng)
        for block in target.conditional_blocks():
            target.draw_conditional(rng, x, block, noise)   # x[:, block] ~ p(x_block | x_rest)

    Each update leaves ``pi`` invariant, so the sweep does (a deterministic-
    scan Gibbs sampler, Geman & Geman 1984). ``x`` is ``(chains, dim)``,
    updated in place, so a block sees the blocks before it already updated.

    Randomness: ``sweep_noise`` draws, up front and from each chain's own
    stream, what the sweep's draws need in fixed shapes (the Ising model: one
    uniform per site; a Gaussian: one normal per coordinate), so a chain's
    path depends only on the seed and its index. A block whose draw needs a
    varying amount of randomness uses ``rng`` in ``draw_conditional``
    instead, drawing for every chain (unmasked) or masking by its own state.

    What is meant to fit here:

    * the Ising model (blocks: the colour classes of the lattice; the spins
      of a class are conditionally independent given the others, so a block
      is one vectorized heat-bath update) and a Gaussian ``N(mu, Q^-1)``
      (blocks: the coordinates, each a conditional normal);
    * a Bayesian network with discrete nodes: blocks are the nodes (or the
      colour classes of its moral graph), each drawn from ``p(node | Markov
      blanket)`` by inverse CDF on one pre-drawn uniform per node;
    * a Bayesian neural network (:mod:`mcmc.core.targets.bnn`): blocks are
      the precision hyperparameters only (conjugate gamma conditionals);
      the ``hmc-gibbs`` sampler moves every coordinate in no block (the
      weights) by HMC on their conditional given the blocks (any kernel
      invariant for a block's conditional keeps the scan valid:
      Metropolis-within-Gibbs).

    Blocks that cover only part of the coordinates: ``gibbs`` refuses such a
    target (it would never move the rest); ``hmc-gibbs`` needs it, with
    blocks given as coordinate indices (an int, a sequence of ints or an
    integer array; :func:`block_indices`), and moves the rest by HMC.

    Attributes
    ----------
    discrete
        True when the coordinates take finitely many values; ``gibbs`` then
        reports ``flip_rate``, the fraction of coordinates changed by the sweep.
    """

    discrete: bool

    def conditional_blocks(self) -> Sequence[Any]:
        """The blocks in scan order, each something :meth:`draw_conditional` understands (index arrays, ints)."""
        ...

    def sweep_noise(self, rng: ChainRandom) -> Any:
        """The random numbers of one sweep, drawn up front: arrays with a leading chain axis (or ``None``)."""
        ...

    def draw_conditional(self, rng: ChainRandom, x: np.ndarray, block: Any, noise: Any) -> None:
        """Set ``x[:, block]`` (``x`` is ``(chains, dim)``, in place) to a draw from its full conditional."""
        ...


@runtime_checkable
class CoordinateConditionals(Protocol):
    """Full conditionals of single coordinates, each chain at a coordinate of its own: random-scan Gibbs.

    A random-scan Gibbs sampler (``gibbs -P scan=random``) picks, at every
    update and for every chain independently, a coordinate ``i`` uniformly at
    random and draws it from ``p(x_i | x_-i)``; it leaves ``pi`` invariant,
    each update does (Liu, Wong & Kong 1995; Roberts & Sahu 1997). Chains at
    different coordinates cannot share a block, so this is one vectorized
    draw of ``x[c, index[c]]`` for every chain ``c``::

        noise = target.coordinate_noise(rng, k)           # (chains, k), k updates' worth
        for t in range(k):
            target.draw_coordinates(x, index[:, t], noise[:, t])

    A :class:`FullConditionals` target without it gets random scan over its
    blocks instead (each chain picks one of them per update), at the cost of
    drawing every block for every chain per update.
    """

    def coordinate_noise(self, rng: ChainRandom, updates: int) -> np.ndarray:
        """The random numbers of ``updates`` single-coordinate draws, ``(chains, updates)``, from each chain's own."""
        ...

    def draw_coordinates(self, x: np.ndarray, index: np.ndarray, noise: np.ndarray) -> None:
        """Set ``x[c, index[c]]`` (in place) for every chain ``c`` to a draw from its full conditional.

        ``index`` and ``noise`` are ``(chains,)``: each chain's coordinate and its random number.
        """
        ...


@runtime_checkable
class SpinLattice(Protocol):
    """Spins ``+-1`` (stored as floats) coupled along edges: ``pi(s) ∝ exp(beta sum_<ij> s_i s_j)``.

    What Swendsen-Wang cluster updates need (Swendsen & Wang 1987): the pairs
    that can carry a bond and the coupling. ``dim`` is the number of spins.

    Attributes
    ----------
    beta
        Inverse temperature (coupling), ``>= 0``.
    """

    beta: float

    def bonds(self) -> tuple[np.ndarray, np.ndarray]:
        """``first, second``: ``(n_pairs,)`` the two sites of each coupled pair, each pair once, ``first`` sorted."""
        ...


def block_indices(block: Any, dim: int) -> np.ndarray:
    """The coordinates ``(k,)`` a block covers: an int, a sequence of ints or an integer array.

    Raises
    ------
    UsageError
        Anything else (a slice, a float, names), or an index outside ``[0, dim)``.
    """
    idx = np.atleast_1d(np.asarray(block))
    if idx.dtype.kind not in "iu" or idx.ndim != 1:
        raise UsageError(f"a Gibbs block must be coordinate indices (int or list of ints), got {block!r}")
    if idx.size and (idx.min() < 0 or idx.max() >= dim):
        raise UsageError(f"Gibbs block {idx.tolist()} is outside the coordinates 0..{dim - 1}")
    return idx.astype(np.int64)


@runtime_checkable
class PottsLattice(SpinLattice, Protocol):
    """States ``0 .. q-1`` (stored as floats) coupled along edges: ``pi(s) ∝ exp(beta sum_<ij> delta(s_i, s_j))``.

    A :class:`SpinLattice` (so the driver keeps non-lattice samplers off it)
    whose sites take ``q`` values and whose ``beta`` is the Potts coupling
    ``beta J``: Swendsen-Wang bonds equal neighbours with probability
    ``1 - exp(-beta)`` and gives each cluster a uniformly random state. (The
    Ising model at ``beta_I`` is the ``q = 2`` case at ``beta = 2 beta_I``,
    kept in its own ``+-1`` encoding.)

    Attributes
    ----------
    q
        Number of states per site, ``>= 2``.
    """

    q: int


@runtime_checkable
class WeightedBonds(Protocol):
    """A :class:`SpinLattice` whose pairs have couplings of their own (a Potts model on a graph, ``graph.csv``).

    Swendsen-Wang then bonds equal neighbours ``i, j`` with probability
    ``1 - exp(-beta_ij)`` (Potts) instead of one probability for all pairs;
    it needs every ``beta_ij >= 0``.
    """

    def couplings(self) -> np.ndarray:
        """``(n_pairs,)`` the coupling of each pair of ``bonds()``, in that order."""
        ...


@runtime_checkable
class Quantile(Protocol):
    """A one-dimensional target with its quantile function (in the sampling space): ``x = F^-1(u)``.

    ``inverse-cdf`` draws ``x = F^-1(u)``, ``u ~ U(0, 1)``: an exact,
    independent draw (Robert & Casella 2004, lemma 2.4).
    """

    def quantile(self, u: np.ndarray) -> np.ndarray:
        """``(n,)`` the quantiles at ``u (n,)`` in ``(0, 1)``."""
        ...


@runtime_checkable
class ExactDraws(Protocol):
    """A target that draws exactly from itself by a method of its own (the ``exact`` sampler).

    Attributes
    ----------
    exact_methods
        The names of its methods (``("box-muller", "polar")``), the first the default.
    """

    exact_methods: tuple[str, ...]

    def exact_draws(self, rng: ChainRandom, method: str) -> np.ndarray:
        """``(chains, dim)`` independent exact draws, one per chain, from each chain's own stream."""
        ...


@runtime_checkable
class ProposalDistribution(Protocol):
    """A proposal ``q`` the target gives: draws and their log density (``importance``, ``rejection``)."""

    def proposal_sample(self, rng: Any) -> np.ndarray:
        """``(rng.chains, dim)`` one draw of ``q`` per chain of ``rng`` (a ChainRandom or a subset of one)."""
        ...

    def proposal_log_density(self, x: np.ndarray) -> np.ndarray:
        """``(n,)`` ``log q(x)`` at ``x (n, dim)``."""
        ...


@runtime_checkable
class EnvelopeBound(ProposalDistribution, Protocol):
    """A proposal with an envelope: ``exp(log_density(x)) <= exp(log_bound) q(x)`` everywhere.

    Rejection sampling is then exact (von Neumann 1951; Robert & Casella
    2004, section 2.3): accept ``x ~ q`` with probability ``p(x) / (k q(x))``.

    Attributes
    ----------
    log_bound
        ``log k``.
    """

    log_bound: float


@runtime_checkable
class GaussianPrior(Protocol):
    """A posterior ``pi(x) ∝ N(x; prior_mean, L L^T) exp(log_likelihood(x))``: the model's own Gaussian prior.

    Elliptical slice sampling (Murray, Adams & MacKay 2010) moves on
    ellipses of this prior and evaluates only the likelihood.

    Attributes
    ----------
    prior_mean
        ``(dim,)``.
    prior_chol
        ``(dim, dim)`` lower-triangular ``L`` with ``Sigma = L L^T``.
    """

    prior_mean: np.ndarray
    prior_chol: np.ndarray

    def log_likelihood(self, x: np.ndarray) -> np.ndarray:
        """``(n,)`` the log likelihood at ``x (n, dim)``."""
        ...


@runtime_checkable
class TransitionKernel(Protocol):
    """A finite Markov chain on states ``0 .. n-1`` (stored as floats), given by its transition matrix.

    The ``markov`` sampler draws ``x_{t+1}`` from row ``x_t`` of the matrix;
    the target's point is the state code (``dim = 1``).
    """

    @property
    def transition(self) -> np.ndarray:
        """``(n, n)`` row-stochastic: ``P[i, j] = p(x_{t+1} = j | x_t = i)``."""
        ...


@runtime_checkable
class FiniteStates(Protocol):
    """A law on states ``0 .. n-1`` (stored as floats) known up to its normaliser: ``pi_j ∝ b_j``.

    The ``mh`` sampler proposes ``j ~ Q[i, :]`` and accepts with probability
    ``min(1, b_j Q_ji / (b_i Q_ij))``; the target's point is the state code
    (``dim = 1``).
    """

    @property
    def log_weights(self) -> np.ndarray:
        """``(n,)`` ``log b_j`` (``-inf`` for a weight of zero); their normaliser is never needed."""
        ...

    @property
    def states(self) -> tuple[str, ...]:
        """The ``n`` state names."""
        ...


@runtime_checkable
class JudgedVariables(Protocol):
    """A target only some of whose variables can show convergence, and which says which.

    A neural network's weights are not identifiable (hidden units can be
    permuted, and a unit's weights can flip sign together), so chains that
    have converged in distribution disagree on every single weight and their
    R-hat means nothing; its hyperparameters are identified. The driver
    records these names in the chains file (``attrs["judge"]``, with
    ``attrs["judge_reason"]``), and every command's checks, ``mcmc diagnose``'s
    too, judge those variables unless told otherwise (``--var``).
    """

    judged_variables: tuple[str, ...]
    judged_reason: str


P = TypeVar("P")


def require(target: Any, protocol: type[P], sampler: str, needs: str) -> P:
    """``target`` itself, once checked to implement ``protocol``.

    Raises
    ------
    UsageError
        ``sampler 'NAME' needs NEEDS, not 'TARGET'`` when it does not.
    """
    if not isinstance(target, protocol):
        raise UsageError(f"sampler {sampler!r} needs {needs}, not {target.name!r}")
    return target
