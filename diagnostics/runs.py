"""The run functions of the command line: sample (or fit) and judge in one call.

``core`` samples and never imports ``diagnostics``; a command that samples
and then reports whether the run converged needs both, so its one library call
lives here. :func:`sample_run` is ``mcmc sample``: it checks the outputs and
the starting point before any work, builds the target, runs the driver, writes
the chains file through :func:`mcmc.core.chains.write_chains` and returns the
chains, their timings and the :class:`~mcmc.diagnostics.summary.RunSummary`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mcmc.core.chains import CHAINS_SUFFIXES, Chains, write_chains
from mcmc.core.errors import UsageError
from mcmc.diagnostics.summary import RunSummary

__all__ = ["SampleResult", "SampleSpec", "sample_run"]


@dataclass(frozen=True)
class SampleSpec:
    """What to sample: ``mcmc sample``'s options, parsed.

    ``target_options`` are the target's keyword options (``dim``, ``rho``,
    ``data``, ...; ``None`` values count as not given); ``params`` the
    sampler's keyword tuning (``scale``, ``step_size``, ...); ``init`` a
    starting point for every chain, in the target's dimension.
    """

    target: str = "gaussian"
    sampler: str = "hmc"
    chains: int = 4
    first_chain: int = 0
    warmup: int = 1000
    draws: int = 1000
    thin: int = 1
    seed: int | None = None
    init: tuple[float, ...] | None = None
    target_options: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: Dask scheduler (``tcp://HOST:PORT`` or ``local:N``) to run blocks of chains on; ``None``: here.
    scheduler: str | None = None


@dataclass(frozen=True)
class SampleResult:
    """A finished ``mcmc sample`` run.

    Attributes
    ----------
    chains
        The draws ``(chain, draw, *shape)``, sampler statistics and attributes
        as written to ``output``.
    timings
        ``warmup_time_s``, ``sampling_time_s``, ``wall_time_s`` of the run and
        ``write_time_s`` of the chains file: never in the file (same seed,
        same bytes).
    summary
        Max R-hat, min ESS, acceptance, divergences; ``None`` when not asked for.
    seed_given
        False when the seed was drawn from OS entropy (shown so the run can be repeated).
    output
        Where the chains went (``-``: standard output).
    """

    chains: Chains
    timings: Mapping[str, float]
    summary: RunSummary | None
    seed_given: bool
    output: str

    @property
    def seconds(self) -> float:
        """Wall time of sampling and writing."""
        return self.timings.get("wall_time_s", 0.0) + self.timings.get("write_time_s", 0.0)


def sample_run(
    spec: SampleSpec,
    output: str,
    *,
    stdout: IO[bytes] | None = None,
    summarize: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
) -> SampleResult:
    """Sample ``spec``, write the chains to ``output`` and summarise the run.

    Parameters
    ----------
    spec
        The run.
    output
        A ``.npz`` or ``.nc`` path (written atomically), or ``-`` for npz on ``stdout``.
    summarize
        Compute the :class:`RunSummary` (``mcmc sample --quiet`` does not show it).
    progress
        Called as ``progress(label, done, total)`` during the run.

    Raises
    ------
    UsageError
        An output that is an input or that cannot be written, an output
        format other than npz or nc, an ``init`` of the wrong length, a
        target option the target does not take; with ``scheduler``, no
        scheduler answering or distributed not installed.
    ScaleOutError
        With ``scheduler``, workers that kept dying.

    With ``spec.scheduler`` the chains run as blocks on a Dask cluster
    (:mod:`mcmc.core.scaleout`) and the file is the same, byte for byte.
    """
    from mcmc.core import scaleout
    from mcmc.core.paths import check_paths
    from mcmc.core.samplers.driver import entropy_seed
    from mcmc.core.targets import get_target, is_user_target
    from mcmc.core.targets.user import read_source

    data = spec.target_options.get("data")
    user_file = spec.target.split(":", 1)[0] if is_user_target(spec.target) else None
    check_paths({"-o": output}, [data if isinstance(data, str) else None, user_file])
    if output != "-" and Path(output).suffix.lower() not in CHAINS_SUFFIXES:
        raise UsageError(
            f"{output}: unknown output format {Path(output).suffix or '(none)'!r}; use .npz or .nc (or - for stdout)"
        )
    ids = range(spec.first_chain, spec.first_chain + spec.chains)
    job = scaleout.ChainsJob(
        target=spec.target, sampler=spec.sampler, warmup=spec.warmup, draws=spec.draws, thin=spec.thin,
        # Every block of a run given no seed must share the one recorded in the file.
        seed=entropy_seed() if spec.seed is None and spec.scheduler is not None else spec.seed,  # type: ignore[arg-type]
        init=spec.init, target_options=dict(spec.target_options), params=dict(spec.params),
    )  # fmt: skip
    if spec.scheduler is None:
        chains, run_timings = scaleout.run_block(job, ids, progress)
    else:
        if user_file is not None:
            # Its source, not its path: the workers need not see this machine's files,
            # nor import it here (it may need what only the workers have).
            job = dataclasses.replace(job, target_text=read_source(spec.target))
        else:
            get_target(spec.target, **spec.target_options)  # a bad option fails here, before the cluster
        chains, run_timings = scaleout.run_blocks(job, ids, spec.scheduler, progress=progress)
    # Timings come beside the chains, never in the file (same seed, same bytes).
    timings = dict(run_timings._asdict())
    t0 = time.perf_counter()
    if output == "-":
        stream = _stdout(stdout)
        write_chains(chains, stream)
        stream.flush()
    else:
        write_chains(chains, output)
    timings["write_time_s"] = time.perf_counter() - t0
    summary = None
    if summarize:
        from mcmc.diagnostics.summary import summarize_run

        summary = summarize_run(chains)
    return SampleResult(chains, timings, summary, spec.seed is not None, output)


def _stdout(stream: IO[bytes] | None) -> IO[bytes]:
    if stream is None:
        raise UsageError("-o -: no standard output to write to")
    return stream


