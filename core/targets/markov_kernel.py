"""The stationary law of an irreducible finite chain by GTH state reduction, compiled.

Grassmann, Taksar & Heyman (1985), "Regenerative analysis and steady state
distributions for Markov chains", *Operations Research* 33(5): eliminate the
states one by one, last first. Removing state ``k`` from the chain on
``0 .. k`` leaves the chain *censored* to ``0 .. k-1`` (watched only while it
is there), whose transition probabilities are

    P'_ij = P_ij + P_ik P_kj / s_k,    s_k = sum_{j < k} P_kj  (= 1 - P_kk, written without the subtraction)

and whose stationary law is that of the larger chain restricted and
renormalized. Back from the single state 0: ``pi_k = sum_{i < k} pi_i P_ik / s_k``
(the flow into k from below equals the flow out), then ``pi / sum(pi)``.

Why this and not the left eigenvector of ``P`` for eigenvalue 1: every
operation is a sum, product or quotient of non-negative numbers, so there is
no cancellation (the relative error is a small multiple of the rounding unit
whatever the conditioning; Grassmann et al., O'Cinneide 1993), and every sum
runs left to right in plain IEEE arithmetic (no ``fastmath``, no BLAS), so the
bytes do not depend on the CPU. LAPACK's ``geev`` goes through BLAS kernels
that OpenBLAS picks for the CPU at run time, and its eigenvector differs in
the last bits between them, which the ``markov`` sampler's ``lp`` (``log pi``)
then wrote into the chains file.

Cost: ``n^3 / 3`` multiply-adds and ``n^2`` memory for ``n`` states, less
when ``P`` is sparse (a zero ``P_ik`` skips its row of the update). Measured
on one core of an AMD EPYC for a dense ``P``: 0.07 s at ``n = 1000``, 1.1 s at
``n = 2000`` (0.1 s for a sparse one); ``numpy.linalg.eigvals``, which the
analysis runs for the spectral gap, took 9 s and 18 s there.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def gth_stationary(p):  # noqa: ANN001, ANN201
    """The stationary law ``(n,)`` of the irreducible row-stochastic ``p (n, n)`` (``p`` is not modified).

    Only the off-diagonal entries are read (a row's diagonal is one minus the
    rest), so rows need not sum to 1 exactly. An irreducible chain keeps every
    ``s_k > 0``; a reducible one gives a division by zero (inf or NaN entries):
    the caller passes one closed communicating class.
    """
    n = p.shape[0]
    a = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            a[i, j] = p[i, j]
    for k in range(n - 1, 0, -1):
        s = 0.0
        for j in range(k):
            s += a[k, j]
        for i in range(k):
            f = a[i, k] / s
            a[i, k] = f
            if f != 0.0:  # adds nothing (entries are non-negative): skipping it keeps sparse chains cheap
                for j in range(k):
                    a[i, j] += f * a[k, j]
    pi = np.empty(n)
    pi[0] = 1.0
    total = 1.0
    for k in range(1, n):
        t = 0.0
        for i in range(k):
            t += pi[i] * a[i, k]
        pi[k] = t
        total += t
    for k in range(n):
        pi[k] /= total
    return pi
