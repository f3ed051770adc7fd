"""MAP estimates of theta and phi: the modes of their Dirichlet posteriors given one state's counts.

Given the topic of every token, theta and phi are independent Dirichlets
(Blei, Ng & Jordan 2003; Griffiths & Steyvers 2004)::

    theta_d | z     ~ Dir(n_d1 + alpha_1, ..., n_dK + alpha_K)
    phi_k   | z, w  ~ Dir(n_k1 + beta,    ..., n_kV + beta)

so the mode of ``p(theta, phi | z, w)`` is the pair of their modes. The Bayes
estimates ``mcmc lda`` writes are the means, ``(n + eta) / (N + V eta)``; the
MAP estimates are the modes, ``(n + eta - 1) / (N + V eta - V)`` when every
``n + eta > 1``, and with the clipping below otherwise.

The mode of a Dirichlet, and why eta < 1 needs clipping
--------------------------------------------------------
On the simplex ``log Dir(x | a) = sum_i c_i log x_i + const`` with
``c_i = a_i - 1``.

* Every ``c_i > 0``: the function is strictly concave and Lagrange's condition
  ``c_i / x_i = lambda`` gives the interior maximiser ``x_i = c_i / sum_j c_j``,
  the textbook formula.
* Some ``c_i <= 0`` (a count of 0 under ``eta < 1``; with ``eta = 1``, ``c_i = 0``):
  a ``c_i < 0`` makes the density grow without bound as ``x_i -> 0``, so the
  density has no maximiser, and the textbook formula gives a negative
  "probability". The mode is then the limit, as ``eps -> 0``, of the maximiser
  on the truncated simplex ``{x : x_i >= eps}``. There, moving mass away from
  a component with ``c_i <= 0`` to one with ``c_j > 0`` raises (or keeps) every
  term, so each ``c_i <= 0`` sits at ``eps``; the others solve the concave
  problem on the remaining mass ``1 - m eps``, ``x_j = c_j (1 - m eps) / C+``
  with ``C+ = sum_{c_j > 0} c_j``. As ``eps -> 0``: **components with
  ``n + eta - 1 <= 0`` go to zero and the rest renormalise**,
  ``x_i = max(c_i, 0) / sum_j max(c_j, 0)``. With integer counts and
  ``eta <= 1`` those are exactly the words (topics) with a count of zero,
  so the MAP estimate is sparse where the Bayes estimate is not.
* No ``c_i > 0`` (an empty document under ``alpha <= 1``, a topic without
  tokens under ``beta <= 1``): ``sum_i c_i log x_i`` is convex, so the
  truncated maximiser is a vertex, the one of the largest ``c_i``; as
  ``eps -> 0`` the mode is that corner (a learned asymmetric alpha), and
  where the largest ``c_i`` is shared (a symmetric prior: every corner, or
  with ``eta = 1`` every point, is as good) there is no unique mode and the
  row is NaN.

``tests/core/test_lda_map.py`` checks all three against a brute-force
maximisation of the density on the truncated simplex.

Whose counts
------------
Each chain's **last state**. The posterior mean is linear in the counts, so
averaging ``E[theta | z]`` over the kept states estimates ``E[theta | w]``
(Rao-Blackwellisation), which is what the Bayes estimates do. A mode is not
linear: neither the average of the per-state modes nor the mode at the
averaged counts is the mode of anything (the averaged counts are not counts
of any state, and their fractional values would move the clipping line), and
the mode of the marginal ``p(theta | w)`` is out of reach of a Gibbs sampler.
The mode given one state is an exact, well-defined quantity -- the
conditional MAP ``argmax p(theta, phi | z, w)`` at the state the chain
ended in, as Griffiths & Steyvers (2004) read theta and phi off single
samples -- it keeps the zeros that make MAP estimates sparse, and it is
reproducible from ``z`` alone. With learned hyperparameters the last alpha
and beta of the chain are used.
"""

from __future__ import annotations

import numpy as np

from mcmc.core.lda.kernels import common


def dirichlet_mode(concentration: np.ndarray) -> np.ndarray:
    """The mode of ``Dir(concentration)`` along the last axis, clipped as the module docstring derives.

    Parameters
    ----------
    concentration : float (..., K)
        Positive Dirichlet parameters (posterior counts plus prior).

    Returns
    -------
    float (..., K)
        ``max(a - 1, 0) / sum max(a - 1, 0)``; where no ``a > 1``, the
        corner of the unique largest ``a``, or NaN when it is shared.
    """
    c = np.asarray(concentration, dtype=np.float64) - 1.0
    positive = np.maximum(c, 0.0)
    total = positive.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mode = positive / total
    none = total[..., 0] == 0
    if np.any(none):
        rest = c[none]
        top = rest == rest.max(axis=-1, keepdims=True)
        unique = top.sum(axis=-1, keepdims=True) == 1
        mode[none] = np.where(unique, top.astype(np.float64), np.nan)
    return mode


def map_theta(doc_ptr: np.ndarray, z: np.ndarray, n_topics: int, alpha: float | np.ndarray) -> np.ndarray:
    """theta's MAP estimate given one state: ``dirichlet_mode(n_dk + alpha_k)``.

    Parameters
    ----------
    doc_ptr : int (D + 1,); z : int (N,) the topic of every token.
    alpha : a symmetric concentration, or one per topic (K,).

    Returns
    -------
    float (D, K)
    """
    ndk = common.doc_topic_counts(np.ascontiguousarray(doc_ptr, dtype=np.int64),
                                  np.ascontiguousarray(z, dtype=np.int32), n_topics)
    return dirichlet_mode(ndk + np.asarray(alpha, dtype=np.float64))


def map_phi(words: np.ndarray, z: np.ndarray, n_topics: int, vocab_size: int, beta: float) -> np.ndarray:
    """phi's MAP estimate given one state: ``dirichlet_mode(n_kw + beta)``, float (K, V)."""
    nwk = common.word_topic_counts(np.ascontiguousarray(words, dtype=np.int32),
                                   np.ascontiguousarray(z, dtype=np.int32), n_topics, vocab_size)
    return dirichlet_mode(nwk.T + float(beta))
