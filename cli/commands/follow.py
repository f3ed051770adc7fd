"""``mcmc diagnose --follow``: judge chains files while another program writes them.

:func:`follow` looks at the files every ``poll`` seconds; when any has grown
(or appeared) it reads the draws so far
(:func:`mcmc.diagnostics.readers.read_growing`: a partly written last line is
skipped, the chains cut to the draws every chain has), judges them with the
one judge (:func:`mcmc.diagnostics.report.check.check`, the checks of
``diagnose``) and tells ``on_look``, which the command line draws: the table
redrawn in place on a terminal, a line per look on a pipe. It stops when
every check passes (``until_pass``) or when the files have not grown for
``idle`` seconds, and returns the last look. It never prints.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mcmc.cli.commands.diagnose import DiagnoseSettings
from mcmc.core.chains import CHECKPOINT_SUFFIX
from mcmc.core.errors import InputError
from mcmc.core.paths import expand_pattern
from mcmc.diagnostics.readers import Growing, read_growing
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.report import Report
from mcmc.diagnostics.report.thresholds import Thresholds

__all__ = ["FollowLook", "FollowResult", "follow"]


@dataclass(frozen=True)
class FollowLook:
    """One look at the files: the report of the draws so far, or why there is none yet.

    ``seconds``: since following began; ``chains``, ``draws``: the draws
    judged (per chain); ``report``: the one judge's report, ``None`` while
    ``waiting`` says which file has no draws yet.
    """

    seconds: float
    chains: int
    draws: int
    report: Report | None
    waiting: str | None = None


@dataclass(frozen=True)
class FollowResult:
    """How following ended: ``"passed"`` (every check, ``until_pass``) or ``"idle"`` (the files stopped growing)."""

    reason: str
    last: FollowLook | None
    idle_seconds: float
    looks: int

    @property
    def passed(self) -> bool:
        return self.last is not None and self.last.report is not None and self.last.report.passed


def follow(
    files: Sequence[str],
    settings: DiagnoseSettings | None = None,
    *,
    poll: float = 2.0,
    idle: float = 60.0,
    until_pass: bool = False,
    include_warmup: bool = False,
    on_look: Callable[[FollowLook], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> FollowResult:
    """Judge ``files`` (paths or quoted globs) each time they grow, until they pass or stop growing.

    Parameters
    ----------
    files
        CmdStan CSV files (one per chain), draws tables, ``mcmc``'s chains
        files and checkpoints: what ``diagnose`` reads, as they are written.
    settings
        The thresholds and selection of the checks (``diagnose``'s).
    poll, idle
        Seconds between looks at the files' sizes, and without growth before
        following stops.
    until_pass
        Stop as soon as every check passes.
    include_warmup
        Judge the warm-up draws a file keeps too.
    on_look
        Told each look (:class:`FollowLook`).

    Raises
    ------
    InputError
        The files stopped growing without a complete draw to judge.
    """
    settings = settings or DiagnoseSettings()
    start = clock()
    seen: tuple[tuple[str, int, int], ...] | None = None
    changed = start
    last: FollowLook | None = None
    looks = 0
    while True:
        now = clock()
        files = [_finished(name) for name in files]
        state = _sizes(files)
        if state != seen:
            seen, changed = state, now
            last = _look(files, settings, now - start, include_warmup)
            looks += 1
            if on_look is not None:
                on_look(last)
            if until_pass and last.report is not None and last.report.passed:
                return FollowResult("passed", last, now - changed, looks)
        elif now - changed >= idle:
            if last is None or last.report is None:
                why = last.waiting if last is not None else "no file"
                raise InputError(", ".join(files), f"stopped growing without draws to judge ({why})")
            return FollowResult("idle", last, now - changed, looks)
        sleep(poll)


def _finished(name: str) -> str:
    """A checkpoint that is gone because its run wrote its output: follow the output (the same chains, all draws)."""
    if name.endswith(CHECKPOINT_SUFFIX) and not os.path.exists(name):
        output = name[: -len(CHECKPOINT_SUFFIX)]
        if os.path.isfile(output):
            return output
    return name


def _sizes(files: Sequence[str]) -> tuple[tuple[str, int, int], ...]:
    """Each file's size and modification time: a change means it grew (or was replaced, as a checkpoint is)."""
    out = []
    for pattern in files:
        for name in expand_pattern(pattern):
            try:
                st = os.stat(name)
            except OSError:
                continue
            out.append((name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def _look(files: Sequence[str], settings: DiagnoseSettings, seconds: float, include_warmup: bool) -> FollowLook:
    try:
        chains = read_growing(files, include_warmup=include_warmup)
    except Growing as exc:
        return FollowLook(seconds, 0, 0, None, str(exc))
    try:
        report = check(chains, var=settings.var, thresholds=settings.thresholds or Thresholds(), strict=settings.strict,
                       source=list(dict.fromkeys(chains.attrs.get("source_files") or files)))  # fmt: skip
    except InputError as exc:  # too few draws yet to judge, say
        return FollowLook(seconds, chains.n_chains, chains.n_draws, None, str(exc))
    return FollowLook(seconds, chains.n_chains, chains.n_draws, report)
