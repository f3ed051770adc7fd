"""The options of an LDA fit (:class:`LdaConfig`) and the names they take.

Kept free of NumPy so the command line can import it while ``mcmc --help``
stays instant; :mod:`mcmc.core.lda.pipeline` runs a configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from mcmc.core.errors import UsageError
from mcmc.core.lda.kernels import AUTO_HELP, COLLAPSED_KERNELS

if TYPE_CHECKING:
    from mcmc.core.lda.sampler import Sampler

#: The fitting methods, name -> the module of its sampler, whose ``SAMPLER`` (a
#: :class:`~mcmc.core.lda.sampler.Sampler` class) runs the method and declares what it
#: can do. The one list of methods: a new method is one module and one line here.
METHOD_MODULES: dict[str, str] = {
    "collapsed": "mcmc.core.lda.collapsed",
    "uncollapsed": "mcmc.core.lda.uncollapsed",
    "partial": "mcmc.core.lda.partial",
    "dmm": "mcmc.core.lda.dmm",
}
#: Method names, as ``--method`` offers them.
METHODS = tuple(METHOD_MODULES)
#: Implementations of the collapsed conditional: the registered kernels and ``auto``
#: (:func:`mcmc.core.lda.collapsed.choose_kernels`).
KERNELS = ("auto", *COLLAPSED_KERNELS)
#: ``--kernel``'s help, every registered kernel in its own words.
KERNEL_HELP = (
    "Implementation of the collapsed conditional: "
    + ", ".join(f"{name} ({entry.help})" for name, entry in COLLAPSED_KERNELS.items())
    + f", or auto ({AUTO_HELP}). Same distribution either way."
)
#: The common choice for sparse topic mixtures (tomotopy's and the lda package's default).
DEFAULT_ALPHA = 0.1


def sampler_class(method: str) -> type[Sampler]:
    """The sampler class of ``method``; its module (and NumPy, numba) imported only now.

    Raises
    ------
    UsageError
        ``method`` is not in :data:`METHOD_MODULES`.
    """
    if method not in METHOD_MODULES:
        raise UsageError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    return import_module(METHOD_MODULES[method]).SAMPLER


def default_burn_in(iterations: int) -> int:
    """Sweeps left out when none are given: the first half, so any ``iterations`` >= 2 works alone."""
    return iterations // 2


def default_optimize_burn_in(iterations: int) -> int:
    """Sweeps before the first hyperparameter update: a quarter, half the default burn-in.

    The assignments of a random start say nothing about alpha (every document
    looks evenly mixed), so updates wait until the topics have formed, as
    Mallet's ``--optimize-burn-in`` does; they then have the rest of the
    burn-in to settle before theta and phi are averaged.
    """
    return iterations // 4


@dataclass(frozen=True)
class LdaConfig:
    """Everything a fit needs besides the corpus.

    Attributes
    ----------
    n_topics, alpha, beta
        K and the symmetric Dirichlet concentrations of theta and phi.
    iterations, burn_in
        Sweeps per chain; the first ``burn_in`` are left out of the estimates
        and of the chains file.
    chains, seed
        Independent chains; chain c draws from ``SeedSequence(seed, spawn_key=(c,))``.
    method, kernel, threads
        Sampler (:data:`METHODS`), implementation of the collapsed conditional
        (:data:`KERNELS`), worker threads (results do not depend on them).
    holdout
        Fraction of documents held out for document-completion perplexity (0: none).
    coherence
        Whether to score UMass and NPMI coherence of the top words.
    n_top
        Top words kept per topic.
    optimize_interval, optimize_burn_in
        Learn alpha (per topic) and beta by Monte Carlo EM every
        ``optimize_interval`` sweeps after the first ``optimize_burn_in``
        (0: keep them fixed); ``alpha`` and ``beta`` are then starting values.
    keep_theta
        Whether to estimate theta (document-topic proportions): its running
        sums are D x K floats per chain. ``mcmc lda`` keeps it only when the
        estimates file is asked for; the topic shares do not need it.
    """

    n_topics: int = 10
    alpha: float = DEFAULT_ALPHA
    beta: float = 0.01
    iterations: int = 1000
    burn_in: int = 100
    chains: int = 2
    seed: int = 1
    method: str = "collapsed"
    kernel: str = "auto"
    threads: int = 1
    holdout: float = 0.0
    coherence: bool = False
    n_top: int = 10
    optimize_interval: int = 0
    optimize_burn_in: int = 0
    keep_theta: bool = True
