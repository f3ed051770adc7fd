"""The words of the program that wrote the draws, for advice in its own terms.

Advice such as "draw more" or "raise the target acceptance" is only useful in
the words of the program that will run again: ``mcmc sample``'s ``--draws``,
CmdStan's ``iter_sampling``, PyMC's ``draws``, NumPyro's ``num_samples``;
emcee has no warm-up at all, and ``mcmc lda`` counts ``--iterations``. The
readers record who wrote a file (ArviZ's ``inference_library`` attribute for
PyMC, NumPyro and emcee netCDF, ``inference_library = "cmdstan"`` for CmdStan
CSV, ``emcee_version`` for emcee's HDF5 backend, our own run attributes for
``mcmc sample`` and ``mcmc lda``); :func:`words_of` reads them and
:data:`VOCABULARY` holds each program's words, one table, used by the advice
of :mod:`~mcmc.diagnostics.report.verdict`. A file of unknown origin gets
plain words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class Words(NamedTuple):
    """How one program names the settings the advice asks to change (``None``: it has no such setting).

    ``warmup_note`` replaces the warm-up advice of a program without one.
    """

    program: str
    draws: str
    warmup: str | None
    target_accept: str | None
    max_treedepth: str | None
    warmup_note: str = ""


#: Program (as :func:`words_of` names it) -> its words.
VOCABULARY: dict[str, Words] = {
    "mcmc": Words("mcmc sample", "--draws", "--warmup", "--target-accept", "-P max-tree-depth=N"),
    "mcmc lda": Words("mcmc lda", "--iterations", "--burn-in", None, None),
    "cmdstan": Words("CmdStan", "iter_sampling", "iter_warmup", "adapt_delta", "max_treedepth"),
    "pymc": Words("PyMC", "draws", "tune", "target_accept", "max_treedepth"),
    "numpyro": Words("NumPyro", "num_samples", "num_warmup", "target_accept_prob", "max_tree_depth"),
    "emcee": Words(
        "emcee", "run_mcmc's nsteps", None, None, None,
        "discard more of the start as burn-in (emcee has no warm-up: get_chain(discard=N), or mcmc diagnose "
        "--discard N) and run more steps (run_mcmc's nsteps)",
    ),  # fmt: skip
}
#: A file whose writer is not known: plain words (the target acceptance's common spellings in the advice).
UNKNOWN = Words("", "", "", None, "")


def ensemble_of(attrs: Mapping[str, Any]) -> str | None:
    """The ensemble sampler whose walkers a file's chains are (``"emcee"``), or ``None`` for chains.

    emcee's files (its HDF5 backend, ArviZ netCDF with ``inference_library =
    "emcee"``) and a bare array read as ``get_chain()`` saves it (``--layout
    draw,chain``) hold the walkers of one ensemble: they move together, each
    proposal built from the others, so they are not independent chains.
    """
    if words_of(attrs).program == "emcee":  # its files, and an array laid out as its get_chain() saves it
        return "emcee"
    return None


def words_of(attrs: Mapping[str, Any]) -> Words:
    """The words of the program that wrote a file with these attributes (:data:`UNKNOWN` when none says)."""
    library = str(attrs.get("inference_library", "")).lower()
    if library in VOCABULARY:
        return VOCABULARY[library]
    if "emcee_version" in attrs or attrs.get("sampler") == "emcee" or attrs.get("layout") == "draw,chain":
        return VOCABULARY["emcee"]
    if attrs.get("target") == "lda":
        return VOCABULARY["mcmc lda"]
    if "sampler" in attrs and "warmup" in attrs and "seed" in attrs:  # mcmc sample's chains file
        return VOCABULARY["mcmc"]
    return UNKNOWN
