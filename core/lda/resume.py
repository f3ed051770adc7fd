"""An LDA fit's resume section: what ``mcmc lda --resume`` needs to go on (format ``mcmc.resume``, kind ``lda``).

The chains file of ``mcmc lda -o fit.npz`` (and its checkpoints) carries,
beside the post-burn-in trace, the fit's :class:`~mcmc.core.lda.gibbs.FitState`
as plain arrays: ``log_joint`` ``(chain, done)`` (the whole trace so far,
burn-in included), ``trace_alpha`` and ``trace_beta`` (the hyperparameter
updates made so far), and ``chain__NAME`` ``(chain, ...)`` for every array of
each chain's :meth:`~mcmc.core.lda.sampler.LdaChain.save`: the topic of every
token (``z``; the topic of every document, ``z_doc``, for ``dmm``), the
running sums behind theta and phi, the learned alpha and beta, which kernel
sweeps, and the chain's stream (``rng``). The counts are made again from the
topics. A fit gone on from it writes the bytes of the fit that never stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mcmc.core.chains import Resume
from mcmc.core.errors import InputError
from mcmc.core.lda.gibbs import FitState
from mcmc.core.resume import check_header, header

CHAIN_PREFIX = "chain__"


def lda_section(problem: Mapping[str, Any], goal: int, state: FitState) -> Resume:
    """The resume section of a fit that asked for ``goal`` sweeps and made ``state.done``."""
    arrays = {"log_joint": state.log_joint, "trace_alpha": state.trace_alpha, "trace_beta": state.trace_beta}
    arrays.update({CHAIN_PREFIX + k: v for k, v in state.chains.items()})
    return Resume(header("lda", problem, goal, state.done), arrays)


def fit_state(resume: Resume | None, source: str) -> tuple[dict[str, Any], FitState]:
    """The header and :class:`FitState` of an LDA chains file's resume section (checked; see :func:`check_header`)."""
    h = check_header(resume, source, "lda")
    arrays = resume.arrays  # type: ignore[union-attr]
    try:
        state = FitState(
            int(h["done"]), np.asarray(arrays["log_joint"], dtype=float), np.asarray(arrays["trace_alpha"]),
            np.asarray(arrays["trace_beta"]),
            {k[len(CHAIN_PREFIX):]: v for k, v in arrays.items() if k.startswith(CHAIN_PREFIX)},
        )  # fmt: skip
    except KeyError as exc:
        raise InputError(source, f"resume section lacks {exc.args[0]!r}") from None
    if state.log_joint.ndim != 2 or state.log_joint.shape[1] != state.done or not state.chains:
        raise InputError(source, "resume section: the trace does not match the sweeps done")
    return h, state
