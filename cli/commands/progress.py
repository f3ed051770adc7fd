"""The one progress protocol of the command layer: ``progress(label, done, total, **fields)``.

Every long call of :mod:`mcmc.cli.commands` takes an optional
:class:`Progress` and calls it as work advances: ``label`` names one line of
work (``"chain 0 of 1 ..."``, ``"hmc on gaussian"``, ``"chain 1"``), ``done``
of ``total`` steps are finished, and keyword ``fields`` carry what the step
found, worth showing while the rest runs: an LDA chain's
``log_joint_per_token`` after each sweep, the corpus ``lda_run`` has read
(``corpus=``, a :class:`~mcmc.diagnostics.report.lda.CorpusFacts`) before
the first. The command line draws it (:func:`mcmc.cli.console.progress_bar`)
and stops the run from it after a signal; the library only reports. The
callbacks of ``core`` (the driver's ``(done, total)``, an LDA fit's
``(chain, iteration, log_joint_per_token)``) are adapted here, so no command
speaks another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Progress", "for_label", "lda_sweeps"]


class Progress(Protocol):
    """``progress(label, done, total, **fields)``: ``done`` of ``total`` steps of the work called ``label``."""

    def __call__(self, label: str, done: int, total: int, /, **fields: Any) -> None: ...


def for_label(progress: Progress | None, label: str) -> Callable[[int, int], None] | None:
    """The driver's ``(done, total)`` callback reporting to ``progress`` under ``label``."""
    if progress is None:
        return None
    return lambda done, total: progress(label, done, total)


def lda_sweeps(progress: Progress | None, iterations: int) -> Callable[[int, int, float], None] | None:
    """An LDA fit's ``(chain, iteration, log_joint_per_token)`` callback reporting each chain as one line."""
    if progress is None:
        return None
    return lambda chain, iteration, ll: progress(f"chain {chain}", iteration + 1, iterations, log_joint_per_token=ll)
