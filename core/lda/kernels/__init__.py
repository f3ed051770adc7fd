"""Compiled kernels of the LDA samplers: one module per sampler, shared pieces beside them.

Every kernel is a plain ``@njit(cache=True, nogil=True)`` function over flat
integer arrays, so the samplers can run several of them at once from Python
threads (chains side by side, or blocks of documents of one chain for the
samplers whose documents are conditionally independent).

* :mod:`.rng`: counter-based uniforms (SplitMix64) and Gamma variates, so
  kernels hold no random state and a token's draw does not depend on threads;
  :func:`.rng.draw_key` takes a sweep's key from a chain's Generator.
* :mod:`.common`: counts, the collapsed log joint, running estimates, the
  phi | z Dirichlet draw shared by ``partial`` and ``uncollapsed``, the
  document topic lists and the prefetch hint.
* :mod:`.dense` and :mod:`.sparse`: the implementations of the collapsed
  conditional (all K terms per token; SparseLDA's buckets), one module each,
  registered in :data:`COLLAPSED_KERNELS` (below).
* :mod:`.partial`, :mod:`.uncollapsed`, :mod:`.dmm`: one sampler each.

No kernel uses ``fastmath``: every probability and sum is the plain IEEE
computation, so the draws are exact inverse-CDF draws up to float rounding.

numba's on-disk cache (``cache=True``) checks only the source file of the
function it loads: after editing :mod:`.rng` or :mod:`.common`, whose inlined
functions the sampler modules compile in, delete the stale cache
(``find core/lda/kernels -name '*.nb[ic]' -delete``) or touch the sampler
modules, or a run may use the old code.

Collapsed kernels
-----------------
The collapsed sampler (:mod:`mcmc.core.lda.collapsed`) draws every token from
the same full conditional whichever kernel runs the sweep; the kernels differ
in how they lay out the word-topic counts ``n_wk`` and walk them. Each is a
strategy object, its module's ``KERNEL``, with the methods of
:class:`CollapsedKernel`; the sampler calls them and never asks which kernel
it holds. :data:`COLLAPSED_KERNELS` registers them: ``--kernel``'s choices and
help (:data:`mcmc.core.lda.config.KERNELS`, :data:`~mcmc.core.lda.config.KERNEL_HELP`)
are read from it, and the tests walk it. A new kernel is one module (its numba
kernels and its ``KERNEL``) and one line there. This module imports nothing
heavy: the command line reads the registry while ``mcmc --help`` stays instant.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    import numpy as np

    from mcmc.core.lda.kernels.common import DocumentTally
    from mcmc.core.lda.sampler import Problem


class KernelEntry(NamedTuple):
    """A registered collapsed kernel: where its strategy lives and how ``--kernel``'s help names it."""

    module: str  # the module whose ``KERNEL`` is the strategy (imported on first use)
    help: str  # a few words: what the kernel does per token


#: The implementations of the collapsed conditional, name -> entry, in the order ``--kernel`` lists them.
COLLAPSED_KERNELS: dict[str, KernelEntry] = {
    "sparse": KernelEntry("mcmc.core.lda.kernels.sparse", "SparseLDA buckets"),
    "dense": KernelEntry("mcmc.core.lda.kernels.dense", "K terms per token"),
}
#: ``--kernel auto`` in the help's words; :func:`mcmc.core.lda.collapsed.choose_kernels` is the rule.
AUTO_HELP = "dense for small K"


def collapsed_kernel(name: str) -> CollapsedKernel:
    """The strategy registered as ``name`` in :data:`COLLAPSED_KERNELS` (its module imported now)."""
    return import_module(COLLAPSED_KERNELS[name].module).KERNEL


class CollapsedKernel(Protocol):
    """One implementation of the collapsed conditional and the layout of ``n_wk`` it reads.

    Stateless: a chain holds its own ``counts`` (``n_wk`` in the kernel's
    layout, made by :meth:`init`) and passes them to every call, so one
    strategy object serves every chain and thread. Every method gives the
    same numbers whichever kernel answers (the log joint and the phi sums to
    rounding, each kernel always with the same bytes), so a chain may change
    kernel between sweeps (:meth:`from_word_topic_counts`) without changing
    its law.

    Parameters shared by the methods
    --------------------------------
    problem : the corpus and the model (:class:`~mcmc.core.lda.sampler.Problem`).
    counts : the word-topic counts in this kernel's layout.
    z : int32 (N,) the token topics; nk : int32 (K,) tokens per topic.
    """

    name: str  # as registered, and as a fit reports it (``LdaFit.kernel``)

    def init(self, problem: Problem, z: np.ndarray) -> Any:
        """The counts of the assignments ``z``, built straight into this layout (no second V x K table)."""
        ...

    def from_word_topic_counts(self, problem: Problem, nwk: np.ndarray) -> Any:
        """The counts from word-major ``n_wk`` (V, >= K) int32, first K columns read: a chain changing kernel."""
        ...

    def word_topic_counts(self, problem: Problem, counts: Any) -> np.ndarray:
        """The counts as word-major ``n_wk`` (V, >= K) int32, first K columns: a view where the layout is one."""
        ...

    def sweep(self, problem: Problem, counts: Any, z: np.ndarray, nk: np.ndarray, alpha: np.ndarray, beta: float,
              key: np.uint64, tally: DocumentTally | None = None) -> None:
        """One systematic-scan sweep over all tokens: ``z``, ``nk`` and ``counts`` updated in place.

        ``alpha`` (K,) per topic (all equal unless learned); token ``i`` draws
        the uniform ``(key, i)`` (:func:`.rng.uniform`), so the chain's
        Generator gives one key per sweep whatever the kernel. ``tally``: the
        per-document sums to make as the sweep leaves each document
        (:class:`.common.DocumentTally`; they do not change the draws).
        """
        ...

    def log_joint(self, problem: Problem, counts: Any, z: np.ndarray, nk: np.ndarray,
                  doc_part: float | None = None) -> float:
        """Collapsed ``log p(w, z)`` with the problem's symmetric alpha and beta (``lgamma`` from its tables).

        ``doc_part``: its document half as a sweep's tally made it, or ``None``
        (read from ``z``); the same bits either way.
        """
        ...

    def log_joint_asymmetric(self, problem: Problem, counts: Any, z: np.ndarray, nk: np.ndarray, alpha: np.ndarray,
                             beta: float, lg_beta: np.ndarray) -> float:
        """Collapsed ``log p(w, z)`` with a chain's learned alpha (K,) and beta (``lg_beta``: its table)."""
        ...

    def word_topic_values(self, problem: Problem, counts: Any) -> np.ndarray:
        """The nonzero ``n_kw``, in the kernel's own (fixed) order: beta's M-step needs only these."""
        ...

    def accumulate_phi(self, problem: Problem, counts: Any, nk: np.ndarray, vbeta: float, nkw_scaled_sum: np.ndarray,
                       inv_sum: np.ndarray) -> None:
        """Add ``n_kw / (n_k + V beta)`` to phi's running sum (K, V) and ``1 / (n_k + V beta)`` to ``inv_sum``."""
        ...

    def topics_per_word(self, problem: Problem, counts: Any) -> float:
        """The token-weighted mean number of topics per word: how spread the words still are.

        ``kernel="auto"`` reads it after each dense sweep to tell when the
        sparse kernel has become the faster (:mod:`mcmc.core.lda.collapsed`).
        """
        ...
