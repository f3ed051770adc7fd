"""Learning LDA's Dirichlet hyperparameters by Monte Carlo EM: Minka's fixed point from count histograms.

Monte Carlo EM (Wei & Tanner 1990) replaces the E-step by samples of the latent
variables; for LDA the M-step maximizes the collapsed likelihood ``p(z | alpha)
p(w | z, beta)``, a product of Dirichlet-multinomial (Polya) terms, over
alpha and beta given the current topic assignments. Wallach, Mimno &
McCallum (2009), "Rethinking LDA: why priors matter" (NIPS), showed that an
asymmetric alpha (one concentration per topic) with a symmetric beta learned
this way fits better and makes the fit robust to K; Mallet
(``--optimize-interval``) and tomotopy (``optim_interval``) do it every few
sweeps. The M-step is Minka's (2000) fixed-point iteration, "Estimating a
Dirichlet distribution", eq. (55) for the Polya distribution:

    alpha_k <- alpha_k sum_d [psi(n_dk + alpha_k) - psi(alpha_k)] / sum_d [psi(N_d + A) - psi(A)],   A = sum_k alpha_k
    beta    <- beta sum_{k,w} [psi(n_kw + beta) - psi(beta)] / (V sum_k [psi(n_k + V beta) - psi(V beta)])

computed, as Mallet does (Wallach 2008, ch. 2), from histograms: documents
with ``n_dk = n`` per topic and n, and word-topic cells with ``n_kw = n``, so a
fixed-point step costs the number of distinct counts, not D K or V K. Each
M-step iterates to convergence (the fixed point is the maximum: the Polya
likelihood is concave in log alpha along the iteration, Minka 2000). Without a
prior a topic no document uses drives its alpha towards 0; it is floored at
:data:`MIN_CONCENTRATION` so the sampler's arithmetic stays finite (such a
topic is as good as dead, which is what the likelihood says).

The sums over the histograms are NumPy's pairwise sums of elementwise
products, never ``@``: a BLAS dot product's order of summation and its use of
fused multiply-adds depend on the kernel OpenBLAS picks for the CPU at run time
(AVX-512, AVX2, ...), so the learned alpha and beta, and the phi and theta made
from them, would differ in the last bits from one machine to another. The
pairwise sum's order is fixed by the array's length alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Floor of a learned concentration (see the module docstring).
MIN_CONCENTRATION = 1e-10
#: Fixed-point steps per M-step at most, and the relative change that counts as converged.
MAX_STEPS, TOLERANCE = 2000, 1e-10


def optimize_alpha(alpha: np.ndarray, topic_doc_hist: np.ndarray, doc_lengths: np.ndarray) -> np.ndarray:
    """The asymmetric alpha maximizing ``prod_d Polya(n_d. | alpha)`` (Minka's fixed point).

    Parameters
    ----------
    alpha : float (K,)
        Starting point (the current value).
    topic_doc_hist : int (K, L + 1)
        ``[k, n]`` = documents in which topic k has n tokens, n >= 1 (column 0 is ignored).
    doc_lengths : int (D,)
        Tokens per document.

    Returns
    -------
    float (K,)
    """
    from scipy.special import digamma  # here, not at the top: scipy costs ~0.2 s on every `mcmc lda` start

    a = np.asarray(alpha, dtype=np.float64).copy()
    hist = np.asarray(topic_doc_hist)
    k_idx, n_idx = np.nonzero(hist[:, 1:])
    n_idx = n_idx + 1
    cnt = hist[k_idx, n_idx].astype(np.float64)
    lengths = np.asarray(doc_lengths)
    lens, lcount = np.unique(lengths[lengths > 0], return_counts=True)
    for _ in range(MAX_STEPS):
        a0 = a.sum()
        den = np.sum(lcount * (digamma(lens + a0) - digamma(a0)))  # not @: see the module docstring
        num = np.bincount(k_idx, cnt * (digamma(n_idx + a[k_idx]) - digamma(a[k_idx])), minlength=a.size)
        new = np.maximum(a * num / den, MIN_CONCENTRATION)
        done = np.max(np.abs(new - a) / a) < TOLERANCE
        a = new
        if done:
            break
    return a


def optimize_beta(beta: float, word_topic_counts: np.ndarray, topic_counts: np.ndarray, vocab_size: int) -> float:
    """The symmetric beta maximizing ``prod_k Polya(n_k. | beta)`` (Minka's fixed point).

    Parameters
    ----------
    beta : the current value.
    word_topic_counts : int (M,)
        The nonzero ``n_kw`` (zeros add nothing).
    topic_counts : int (K,)
        ``n_k``.
    vocab_size : V.
    """
    from scipy.special import digamma

    vals, cnts = np.unique(np.asarray(word_topic_counts), return_counts=True)
    nk = np.asarray(topic_counts, dtype=np.float64)
    b = float(beta)
    for _ in range(MAX_STEPS):
        num = np.sum(cnts * (digamma(vals + b) - digamma(b)))  # not @: see the module docstring
        den = vocab_size * np.sum(digamma(nk + vocab_size * b) - digamma(vocab_size * b))
        new = max(b * num / den, MIN_CONCENTRATION)
        done = abs(new - b) / b < TOLERANCE
        b = new
        if done:
            break
    return float(b)


@dataclass(frozen=True, eq=False)
class LearnedHyperparameters:
    """The Monte Carlo EM updates of a fit, per chain.

    Attributes
    ----------
    iterations : int (U,)
        The sweep count after which each update was made (1-based: 10 = after the tenth sweep).
    alpha : float (chains, U, K)
        alpha after each update; topic labels are those of the chain.
    beta : float (chains, U)
        beta after each update.
    interval, burn_in : the update schedule (:func:`update_sweeps`).
    """

    iterations: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    interval: int
    burn_in: int

    @property
    def final_alpha(self) -> np.ndarray:
        """float (chains, K): alpha after the last update."""
        return self.alpha[:, -1]

    @property
    def final_beta(self) -> np.ndarray:
        """float (chains,): beta after the last update."""
        return self.beta[:, -1]


def update_sweeps(iterations: int, interval: int, burn_in: int) -> np.ndarray:
    """The sweep counts after which hyperparameters are updated: ``burn_in + interval``, ``+ 2 interval``, ..."""
    return np.arange(burn_in + interval, iterations + 1, interval, dtype=np.int64)
