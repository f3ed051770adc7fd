"""Checkpoints of a long run: where they go, when they are written, and the stop after a signal.

A run writing ``-o run.npz`` keeps its checkpoint in ``run.npz.checkpoint.npz``
beside it (:func:`checkpoint_path`), never in ``run.npz`` itself, whose old
content stays as it was until the run ends (``docs/errors.md``). A checkpoint
is a chains file of the draws so far with what the run needs to go on
(:mod:`mcmc.core.resume`), written atomically and at once, outside the
command's output transaction (:func:`mcmc.core.atomic.immediate`), so after
``kill -9`` at any moment the last one is whole, and Ctrl-C or SIGTERM, which
discard the command's outputs, leave it; ``mcmc sample --resume
run.npz.checkpoint.npz`` (or ``mcmc lda --resume``) goes on from it and
writes the bytes of the run that never stopped. Once the output is in place
(the transaction's commit) the checkpoint has served and is removed.

:class:`Checkpoints` is what the samplers' driver and the LDA fit poll after
every iteration (:class:`mcmc.core.samplers.driver.Checkpoint`): it writes one
every ``every`` seconds, and when ``stop()`` says a signal came (the command
line holds SIGINT and SIGTERM back while a checkpointed run samples) a last
one, then raises :class:`KeyboardInterrupt`, which the command line turns
into exit 130 or 143.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from mcmc.core.atomic import after_commit, immediate
from mcmc.core.chains import CHECKPOINT_SUFFIX, Chains, write_chains

__all__ = ["CHECKPOINT_SUFFIX", "Checkpoints", "checkpoint_path", "output_of", "resume_inputs", "same_file"]


def checkpoint_path(output: str) -> str | None:
    """The checkpoint of a run writing ``output``; ``None`` for standard output (``-``), which has no beside."""
    return None if output == "-" else output + CHECKPOINT_SUFFIX


def output_of(path: str) -> str:
    """The output a checkpoint was made for (``run.npz.checkpoint.npz`` -> ``run.npz``); else ``path`` itself."""
    return path[: -len(CHECKPOINT_SUFFIX)] if path.endswith(CHECKPOINT_SUFFIX) and len(path) > len(CHECKPOINT_SUFFIX) \
        else path  # fmt: skip


def same_file(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name one file (by inode when both exist, else by resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def resume_inputs(resume: str | None, output: str | None) -> list[str]:
    """The file a run goes on from, as an input no output may replace -- unless it is extended in place.

    ``--resume run.npz`` extends ``run.npz`` in place (written whole and
    atomically at the end, so an interrupted run leaves it as it was), and
    ``--resume run.npz.checkpoint.npz -o run.npz`` writes the output the
    checkpoint was made for; any other output must be another file.
    """
    if resume is None:
        return []
    if output is None:
        return [resume]
    if same_file(resume, output) or (resume.endswith(CHECKPOINT_SUFFIX) and same_file(output_of(resume), output)):
        return []
    return [resume]


@dataclass
class Checkpoints:
    """Writes a run's checkpoints to ``path``: every ``every`` seconds, and a last one when ``stop()`` is true.

    ``every`` ``None`` (or infinite) writes only the last one. ``written``
    is the number of iterations per chain the last checkpoint written holds
    (its resume header's ``done``), ``None`` before the first.
    """

    path: str
    every: float | None
    stop: Callable[[], bool]
    clock: Callable[[], float] = time.monotonic
    written: int | None = None

    def __post_init__(self) -> None:
        self._next = self.clock() + (math.inf if self.every is None else self.every)

    def poll(self, snapshot: Callable[[], Chains] | None) -> None:
        """After an iteration: write a checkpoint when one is due, then stop if a signal came."""
        stopping = self.stop()
        if snapshot is not None and (stopping or self.clock() >= self._next):
            self.write(snapshot())
        if stopping:
            raise KeyboardInterrupt  # the command line reports it as the signal that came

    def write(self, chains: Chains) -> None:
        with immediate():  # on disk now, and kept when the command's other outputs are discarded
            write_chains(chains, self.path)
        self.written = int(chains.resume.header["done"]) if chains.resume is not None else chains.n_draws
        self._next = self.clock() + (math.inf if self.every is None else self.every)

    def remove(self) -> None:
        """Remove the checkpoint once the output that holds everything it held is in place (the command's commit)."""
        after_commit(self._unlink)

    def _unlink(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
