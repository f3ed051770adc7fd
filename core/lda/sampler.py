"""What an LDA sampler provides to the driver (:func:`mcmc.core.lda.gibbs.fit`), and the parts samplers share.

A sampler (one module per method: :mod:`.collapsed`, :mod:`.partial`,
:mod:`.uncollapsed`, :mod:`.dmm`) is a :class:`Sampler`: it names the
implementation it runs, compiles its kernels before the clock starts
(:meth:`Sampler.warm_up`) and makes one :class:`LdaChain` per chain from the
:class:`Problem` (corpus and model, shared and read-only) and the chain's own
``numpy.random.Generator``.

A chain's sweep is a list of *phases*; a phase returns ``(function, args)``
tasks that may run concurrently with each other and with the tasks of the
same phase of the other chains; phases run one after the other. A collapsed
sweep is one phase of one task; the samplers that draw phi split their sweep
into word chunks and document blocks that run on several threads
(:class:`PhiChain`). After the sweep the driver asks every chain for its log
joint and, after burn-in, has it add its state to its running estimates.

:class:`TokenChain` holds what every sampler keeps (token topics, counts, the
running sums behind theta and phi); :class:`PhiChain` the phi | z draw that
the partially collapsed and uncollapsed samplers share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from mcmc.core.lda.kernels import common
from mcmc.core.lda.kernels.rng import draw_key
from mcmc.core.random import generator, generator_state, set_generator_state

Task = tuple[Callable[..., Any], tuple]
Phase = Callable[[], list[Task]]


@dataclass(frozen=True, eq=False)
class Problem:
    """The corpus and the model, shared read-only by every chain.

    Attributes
    ----------
    doc_ptr : int64 (D + 1,); words : int32 (N,)
        Tokens of document d are ``words[doc_ptr[d]:doc_ptr[d + 1]]``.
    K, V : topics and vocabulary size.
    alpha, beta : symmetric Dirichlet concentrations of theta and phi.
    threads : worker threads the chains' tasks are shared out over.
    lg_alpha, lg_beta : ``lgamma(j + alpha)`` for j up to the longest document,
        ``lgamma(j + beta)`` for j up to the most frequent word.
    word_freq : int64 (V,) tokens per word.
    lengths : int64 (G,) the distinct document lengths, ascending;
        length_group : int64 (D,) the index in ``lengths`` of document d's length;
        length_docs : int64 (G,) documents of each length. The topic shares
        need theta only summed over the documents of one length.
    learn : whether the chains learn alpha (per topic) and beta by Monte Carlo
        EM (:mod:`mcmc.core.lda.hyper`); then ``alpha`` and ``beta`` are their
        starting values and each chain keeps its own.
    keep_theta : whether the chains keep the (D, K) running sums behind theta
        (``D * K * 8`` bytes a chain: 75 MB at K = 500 on 20 Newsgroups); without
        them :meth:`LdaChain.estimates` gives no theta, and the topic shares
        come from the per-length sums.
    """

    doc_ptr: np.ndarray
    words: np.ndarray
    K: int
    V: int
    alpha: float
    beta: float
    threads: int
    lg_alpha: np.ndarray
    lg_beta: np.ndarray
    word_freq: np.ndarray
    lengths: np.ndarray
    length_group: np.ndarray
    length_docs: np.ndarray
    learn: bool = False
    keep_theta: bool = True

    @classmethod
    def build(cls, doc_ptr: np.ndarray, words: np.ndarray, n_topics: int, vocab_size: int, alpha: float,
              beta: float, threads: int, learn: bool = False, keep_theta: bool = True) -> Problem:
        doc_lengths = np.diff(doc_ptr)
        word_freq = np.bincount(words, minlength=vocab_size)
        lengths, length_group, length_docs = np.unique(doc_lengths, return_inverse=True, return_counts=True)
        return cls(doc_ptr, words, n_topics, vocab_size, alpha, beta, threads,
                   common.lgamma_table(alpha, int(max(doc_lengths.max(), 1))),
                   common.lgamma_table(beta, int(word_freq.max())), word_freq,
                   lengths.astype(np.int64), length_group.astype(np.int64), length_docs.astype(np.int64),
                   learn, keep_theta)

    @property
    def D(self) -> int:
        return self.doc_ptr.size - 1

    @property
    def N(self) -> int:
        return self.words.size


class Estimates(NamedTuple):
    """A chain's estimates, averaged over its kept states.

    theta : float (D, K), or ``None`` when the problem does not keep it
    (``Problem.keep_theta``); phi : float (K, V); shares : float (K,), each
    topic's expected share of the tokens, ``sum_d N_d theta_dk / N``.
    """

    theta: np.ndarray | None
    phi: np.ndarray
    shares: np.ndarray


class LdaChain(Protocol):
    """One chain: its state, a sweep in phases, its log joint, its running estimates."""

    z: np.ndarray  # int32 (N,): topic of every token (for dmm, once :meth:`estimates` has run)
    z_doc: np.ndarray | None  # int32 (D,): topic of every document (dmm only)

    def sweep_phases(self, record: bool) -> list[Phase]:
        """The phases of the next sweep; ``record`` is true after burn-in."""
        ...

    def after_sweep(self) -> None:
        """Adjust the implementation between sweeps (never the chain's law)."""
        ...

    def log_joint(self) -> float:
        """Collapsed ``log p(w, z)`` of the current state."""
        ...

    def accumulate(self) -> None:
        """Add the current state to the running estimates."""
        ...

    def estimates(self) -> Estimates:
        """theta (D, K), phi (K, V) and the topic shares, averaged over the accumulated states.

        Called once, at the end: the running sums may become the estimates in
        place (at K = 500 on 20 Newsgroups they are 180 MB a chain).
        """
        ...

    def save(self) -> dict[str, np.ndarray]:
        """Everything the chain needs to go on, as plain arrays (copies): its state, running sums and stream.

        Counts and other layouts derived from the state are not saved:
        :meth:`restore` makes them again.
        """
        ...

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        """Go on from what :meth:`save` returned (of a chain of the same problem)."""
        ...


class Sampler(Protocol):
    """One method of fitting: the implementation it runs, its chains, and what the method can do.

    The class declares the method's abilities, which the pipeline and the
    report ask instead of testing the method's name:

    ``learns_hyperparameters``
        It accepts ``Problem.learn``: its chains then also have
        ``update_hyperparameters()`` (one Monte Carlo EM M-step from the
        current state) and ``hyperparameters() -> (alpha (K,), beta)``.
    ``shards_documents``
        On a Dask cluster one chain's documents can be sharded across the
        workers (:mod:`mcmc.core.lda.sharded`, :func:`mcmc.core.scaleout.fit_sharded`);
        otherwise whole chains are the cluster's tasks.
    ``one_topic_per_document``
        The Dirichlet-multinomial mixture rather than LDA: theta is each
        document's membership, and held-out documents are scored by
        :func:`mcmc.core.lda.evaluate.dmm_document_completion`, which needs
        theta.
    """

    name: str  # the method, e.g. "collapsed"
    kernel: str  # implementation actually run (a registered collapsed kernel for collapsed, else the name)
    learns_hyperparameters: bool
    shards_documents: bool
    one_topic_per_document: bool

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernels this sampler runs."""
        ...

    def chains(self, problem: Problem, rngs: list[np.random.Generator]) -> list[LdaChain]:
        """One chain per Generator; each draws its initial state from its own Generator."""
        ...


def run_toy(sampler: Sampler) -> None:
    """Run every step of ``sampler`` once on a three-token corpus: compiles exactly the kernels a fit calls.

    Called before the clock starts, so timings exclude compilation; only the
    kernels of the requested method are touched (a cold compile of all of them
    takes ~15 s, loading them from the cache ~0.5 s).
    """
    doc_ptr = np.array([0, 2, 3], dtype=np.int64)
    words = np.array([0, 1, 1], dtype=np.int32)
    (chain,) = sampler.chains(Problem.build(doc_ptr, words, 2, 2, 0.1, 0.1, 1), [generator(0, (0,))])
    for phase in chain.sweep_phases(True):
        for func, args in phase():
            func(*args)
    chain.after_sweep()
    chain.log_joint()
    chain.accumulate()
    chain.estimates()


class OneKernelSampler:
    """Base of the samplers with a single implementation, whose ``kernel`` is their name.

    Takes the driver's ``(n_topics, kernel)`` like every sampler; only the
    collapsed sampler has kernels to choose from.
    """

    name: str
    learns_hyperparameters = False
    shards_documents = False
    one_topic_per_document = False

    def __init__(self, n_topics: int = 1, kernel: str = "auto") -> None:
        self.kernel = self.name

    def warm_up(self) -> None:
        run_toy(self)


class TokenChain:
    """State every sampler keeps: topics ``z``, counts ``n_wk``/``n_k``, running sums for theta and phi.

    Subclasses set ``z`` (from the chain's Generator) before calling
    ``TokenChain.__init__``; the defaults of :meth:`log_joint`,
    :meth:`accumulate` and :meth:`estimates` suit every sampler whose state is
    token topics with dense counts.
    """

    z_doc: np.ndarray | None = None

    def __init__(self, problem: Problem, rng: np.random.Generator, z: np.ndarray,
                 theta_sums: bool | None = None, word_counts: bool = True) -> None:
        p = self.p = problem
        self.rng = rng
        self.z = z
        # word_counts=False: the subclass keeps n_wk in a layout of its own (the collapsed kernels')
        self.nwk = common.word_topic_counts(p.words, z, p.K, p.V) if word_counts else None
        self.nk = common.topic_counts(z, p.K)
        # theta's running sums only when asked (``theta_sums``, default the problem's
        # keep_theta); the per-length sums behind the topic shares always
        keep = p.keep_theta if theta_sums is None else theta_sums
        self.ndk_sum = np.zeros((p.D if keep else 0, p.K))
        self.length_topic_sum = np.zeros((p.lengths.size, p.K))
        self.nkw_scaled_sum = np.zeros((p.K, p.V))
        self.inv_sum = np.zeros(p.K)
        self.kept = 0

    def after_sweep(self) -> None:
        pass

    #: The running sums :meth:`save` keeps, besides ``z``, ``kept`` and the stream (subclasses add theirs).
    SAVED = ("ndk_sum", "length_topic_sum", "nkw_scaled_sum", "inv_sum")

    def save(self) -> dict[str, np.ndarray]:
        out = {"z": self.z.copy(), "kept": np.array(self.kept, dtype=np.int64), "rng": generator_state(self.rng)}
        for name in self.SAVED:
            out[name] = np.array(getattr(self, name))
        return out

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        for name in self.SAVED:
            current = getattr(self, name)
            value = np.array(arrays[name], dtype=current.dtype)
            if value.shape != current.shape:
                raise ValueError(f"{name} has shape {value.shape}, expected {current.shape}")
            setattr(self, name, value)
        z = np.asarray(arrays["z"], dtype=np.int32)
        if z.shape != self.z.shape or (z.size and (z.min() < 0 or z.max() >= self.p.K)):
            raise ValueError(f"z has shape {z.shape} or topics outside 0 .. {self.p.K - 1}")
        self.z[...] = z
        self.kept = int(arrays["kept"])
        set_generator_state(self.rng, arrays["rng"])
        self.recount()

    def recount(self) -> None:
        """The counts of the current ``z`` (after :meth:`restore`)."""
        p = self.p
        if self.nwk is not None:
            self.nwk = common.word_topic_counts(p.words, self.z, p.K, p.V)
        self.nk = common.topic_counts(self.z, p.K)

    def log_joint(self) -> float:
        p = self.p
        return float(common.log_joint_from_counts(p.doc_ptr, self.z, self.nwk, self.nk, p.alpha, p.beta,
                                                  p.lg_alpha, p.lg_beta))

    def accumulate(self) -> None:
        p = self.p
        common.accumulate_doc_sums(p.doc_ptr, self.z, self.ndk_sum, p.length_group, self.length_topic_sum)
        self.accumulate_phi(p.V * p.beta, self.inv_sum)
        self.kept += 1

    def accumulate_phi(self, vbeta: float, inv_sum: np.ndarray) -> None:
        """Add ``n_kw / (n_k + V beta)`` to phi's running sum and ``1 / (n_k + V beta)`` to ``inv_sum``."""
        common.accumulate_phi_sums(self.nwk, self.nk, vbeta, self.nkw_scaled_sum, inv_sum)

    def estimates(self) -> Estimates:
        p = self.p
        return Estimates(self.theta_estimate(p.alpha, p.K * p.alpha), self.phi_estimate(),
                         self.shares_estimate(np.full(p.K, p.alpha), p.K * p.alpha))

    def theta_estimate(self, alpha: float | np.ndarray, alpha_total: float) -> np.ndarray | None:
        """theta (D, K): ``(ndk_sum / T + alpha) / (N_d + alpha_total)``, in the sums' own buffer; ``None`` if not kept.

        Made in place from the running sum (once, at the end): the same
        operations in the same order, so the same bytes.
        """
        if self.ndk_sum is None or self.ndk_sum.shape[0] != self.p.D:  # not kept
            self.ndk_sum = None
            return None
        lengths = np.diff(self.p.doc_ptr).astype(float)
        theta, self.ndk_sum = self.ndk_sum, None
        theta /= max(self.kept, 1)
        theta += alpha
        theta /= (lengths + alpha_total)[:, None]
        return theta

    def shares_estimate(self, alpha: np.ndarray, alpha_total: float) -> np.ndarray:
        """The topic shares ``sum_d N_d theta_dk / N`` from the per-length sums, theta (D, K) never formed.

        With ``L_g`` the distinct lengths, ``n_g`` the documents of each and
        ``S_gk`` the summed counts: ``sum_g L_g / (L_g + alpha_total) (S_gk / T
        + n_g alpha_k) / N``.
        """
        p = self.p
        lengths = p.lengths.astype(float)
        weight = lengths / (lengths + alpha_total)
        shares = weight @ self.length_topic_sum / max(self.kept, 1) + alpha * (weight @ p.length_docs)
        return shares / p.N

    def phi_estimate(self) -> np.ndarray:
        """phi (K, V): the average of ``(n_kw + beta) / (n_k + V beta)`` over the accumulated states.

        Made in place from the running sum (once, at the end, as :meth:`estimates`).
        """
        phi, self.nkw_scaled_sum = self.nkw_scaled_sum, None
        phi += self.p.beta * self.inv_sum[:, None]
        phi /= max(self.kept, 1)
        return phi


def doc_blocks(doc_ptr: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """Split documents into ``parts`` contiguous blocks of about equal tokens."""
    n_docs = doc_ptr.size - 1
    targets = np.linspace(0, doc_ptr[-1], parts + 1)[1:-1]
    cuts = [0, *np.searchsorted(doc_ptr, targets).tolist(), n_docs]
    cuts = sorted(set(min(max(c, 0), n_docs) for c in cuts))
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]


def even_blocks(n: int, parts: int) -> list[tuple[int, int]]:
    """Split 0 .. n - 1 into at most ``parts`` contiguous ranges of about equal size."""
    cuts = np.linspace(0, n, min(parts, n) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]


class PhiChain(TokenChain):
    """A chain that draws phi | z ~ Dirichlet each sweep, then its tokens given phi, in parallel blocks.

    The sweep: Gamma variates of fixed word chunks (parallel), their
    normalisation (parallel; the chunk sums are added in a fixed order, so the
    same bytes for any number of threads), :meth:`sample_tasks` over blocks of
    documents (parallel: given phi the documents are independent), then the
    counts of the new ``z``. Every sweep takes three keys from the chain's
    Generator, phi's, theta's and the tokens', even where theta is not drawn,
    so that every such sampler reads its stream the same way.
    """

    def __init__(self, problem: Problem, rng: np.random.Generator, blocks: list[tuple[int, int]],
                 word_blocks: list[tuple[int, int]]) -> None:
        super().__init__(problem, rng, rng.integers(0, problem.K, size=problem.N).astype(np.int32))
        self.blocks = blocks
        self.word_blocks = word_blocks
        self.g: np.ndarray | None = None  # phi draw buffers, allocated on first use

    def sample_tasks(self, theta_key: np.uint64, key: np.uint64) -> list[Task]:
        """Tasks drawing the tokens given phi (``self.g``, word-major, and its row sums ``self.cphi``)."""
        raise NotImplementedError

    def sweep_phases(self, record: bool) -> list[Phase]:
        p = self.p
        phi_key, theta_key, key = draw_key(self.rng), draw_key(self.rng), draw_key(self.rng)
        if self.g is None:
            self.g = np.empty((p.V, p.K))
            self.cphi = np.empty((p.V, p.K))
            self.sums = np.empty((common.n_word_chunks(p.V), p.K))

        def gammas() -> list[Task]:
            return [(common.phi_gamma_chunks, (self.nwk, p.beta, phi_key, a, b, self.g, self.sums))
                    for a, b in self.word_blocks]

        def normalize() -> list[Task]:
            inv_sum = 1.0 / self.sums.sum(axis=0)  # fixed chunk order: same bytes for any threads
            return [(common.phi_normalize_chunks, (self.g, inv_sum, a, b, self.cphi)) for a, b in self.word_blocks]

        def sample() -> list[Task]:
            return self.sample_tasks(theta_key, key)

        def recount() -> list[Task]:
            return [(self._recount, ())]

        return [gammas, normalize, sample, recount]

    def _recount(self) -> None:
        self.nwk = common.word_topic_counts(self.p.words, self.z, self.p.K, self.p.V)
        self.nk = common.topic_counts(self.z, self.p.K)


class PhiSampler(OneKernelSampler):
    """Base of the samplers whose chains are :class:`PhiChain`: blocks of documents and word chunks per thread."""

    chain_class: type[PhiChain]

    def chains(self, problem: Problem, rngs: list[np.random.Generator]) -> list[LdaChain]:
        blocks = doc_blocks(problem.doc_ptr, problem.threads)
        word_blocks = even_blocks(common.n_word_chunks(problem.V), problem.threads)
        return [self.chain_class(problem, rng, blocks, word_blocks) for rng in rngs]
