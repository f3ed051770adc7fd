"""Runs split into blocks of chains, on this process or as tasks on a Dask cluster.

``mcmc sample --scheduler ADDRESS`` runs blocks of chain ids as tasks on the
workers of Dask's distributed scheduler (Rocklin 2015, "Dask: parallel
computation with blocked algorithms and task scheduling") and concatenates
them in chain order (:func:`mcmc.core.samplers.driver.concatenate`). Chain
``i`` depends only on the seed and ``i`` (:mod:`mcmc.core.random`), so the
chains file is byte for byte the one of the same command run locally, however
the chains are split and whichever worker runs a block.

Faults: a task whose worker dies is run again elsewhere by the scheduler
(``distributed.scheduler.allowed-failures`` times, 3 by default); it gives the
same result, since it starts from the same seed. Past that limit the run stops
with one line (:class:`~mcmc.core.errors.ScaleOutError`).

A user target file travels with the task as its source text (workers need not
see the client's files) and is loaded on the worker by the same loader as a
local run (:func:`mcmc.core.targets.user.load_user_target`), so its errors
are the usual one-line :class:`~mcmc.core.errors.InputError` naming the file.
A ``--data`` file of a built-in target is read by the workers at its path.

``ADDRESS`` is a scheduler's ``tcp://HOST:PORT`` (``dask scheduler``; see
``docs/scale-out.md``) or ``local:N``: a ``LocalCluster`` of N worker
processes on this machine, one thread each, bound to 127.0.0.1.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mcmc.core.errors import McmcError, ScaleOutError, UsageError

#: Seconds to wait for a scheduler to answer before giving up with one line.
CONNECT_TIMEOUT = 10.0
INSTALL_HINT = "--scheduler needs Dask's distributed scheduler: pip install 'mcmc[dask]' (or pip install distributed)"
#: A scheduler's address: ``[PROTOCOL://]HOST:PORT``, the host a name, an IPv4 address or a bracketed IPv6 one.
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
                      r":(?P<port>[0-9]{1,5})")


def local_workers_limit() -> int:
    """The most worker processes ``local:N`` may start: the cores this process may run on.

    More processes than cores gain nothing (each runs a single-threaded,
    vectorized block of chains) and cost a Python process each.
    """
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not on Linux
        return max(os.cpu_count() or 1, 1)


def check_scheduler(scheduler: str) -> None:
    """Refuse, before any work, a ``--scheduler`` value that no run could use.

    ``local:N`` needs a whole N from 1 to :func:`local_workers_limit`; any other
    value must read as a scheduler's address, ``[tcp://]HOST:PORT``. Whether a
    scheduler answers there is only known when connecting (:func:`connect`).

    Raises
    ------
    UsageError
        Naming the value and what is wrong.
    """
    if scheduler.startswith("local:"):
        n_text = scheduler.removeprefix("local:")
        if not n_text.isdigit() or int(n_text) < 1:
            raise UsageError(f"--scheduler {scheduler}: local:N needs a positive number of worker processes")
        limit = local_workers_limit()
        if int(n_text) > limit:
            raise UsageError(
                f"--scheduler {scheduler}: this machine runs {limit} worker process{'es' if limit != 1 else ''} at "
                f"most (one per core: more gain nothing); give local:{limit} or fewer, or a cluster's address"
            )
        return
    match = _ADDRESS.fullmatch(scheduler)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise UsageError(
            f"--scheduler {scheduler!r}: not a scheduler address; give tcp://HOST:PORT (as dask scheduler "
            "prints it) or local:N"
        )


@dataclass(frozen=True)
class ChainsJob:
    """What every block of chains of one ``mcmc sample`` run shares.

    ``target_text`` is the source of a user target file (``None`` for a
    built-in target); ``target_options`` the built-in target's options.
    ``seed`` must be set: blocks of a run given no seed still share one.
    """

    target: str
    #: ``None``: the target's default (:func:`mcmc.core.targets.default_sampler`), chosen once it is built.
    sampler: str | None
    seed: int
    warmup: int
    draws: int
    thin: int = 1
    init: tuple[float, ...] | None = None
    target_options: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    target_text: str | None = None
    keep_warmup: bool = False
    #: What defines the run (JSON): with it the chains carry what the run needs to go on (:mod:`mcmc.core.resume`).
    problem: Mapping[str, Any] | None = None


def run_block(
    job: ChainsJob,
    chain_ids: Sequence[int],
    progress: Callable[[str, int, int], None] | None = None,
    target: Any = None,
    *,
    resume: Any = None,
    checkpoint: Any = None,
) -> Any:
    """Run the chains ``chain_ids`` of ``job``; return the driver's ``Run`` (chains, timings).

    The one way a block runs, here or on a worker: the target is built (a user
    file from ``job.target_text`` when given), ``init`` checked against its
    dimension, then :func:`mcmc.core.samplers.driver.run`. A local run passes
    the ``target`` it has built already from ``job`` (a transition matrix's
    exact analysis takes seconds: not twice). ``resume`` and ``checkpoint``
    are the driver's (a run here only: going on from a file and checkpoints
    are not sent to workers).

    Raises
    ------
    UsageError
        An ``init`` of the wrong length, an option the target does not take.
    InputError
        A user target that cannot be loaded or fails.
    """
    from mcmc.core.samplers import check_applies, get_sampler
    from mcmc.core.samplers.driver import run
    from mcmc.core.targets import default_sampler, get_target

    tgt = target if target is not None else get_target(job.target, user_source=job.target_text, **job.target_options)
    sampler = job.sampler
    if sampler is None:  # the target's default: the same on every worker, the target being the same
        sampler = default_sampler(job.target, tgt)
        check_applies(sampler, job.params, chosen=f", the default for {tgt.name!r}")
    start = None
    if job.init is not None:
        start = np.asarray(job.init, dtype=float)
        if start.shape != (tgt.dim,):
            raise UsageError(f"--init has {start.size} values; target {tgt.name!r} has dimension {tgt.dim}")
    label = f"{sampler} on {tgt.name}"
    return run(
        get_sampler(sampler), tgt, chain_ids=chain_ids, warmup=job.warmup, draws=job.draws, thin=job.thin,
        seed=job.seed, init=start, params=dict(job.params),
        progress=None if progress is None else (lambda done, total: progress(label, done, total)),
        keep_warmup=job.keep_warmup, problem=job.problem, resume=resume, checkpoint=checkpoint,
    )  # fmt: skip


def blocks(chain_ids: Sequence[int], n_blocks: int) -> list[list[int]]:
    """``chain_ids`` in at most ``n_blocks`` contiguous blocks of nearly equal size, in order."""
    ids = list(chain_ids)
    cuts = np.linspace(0, len(ids), min(max(n_blocks, 1), len(ids)) + 1).round().astype(int)
    return [ids[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]


def run_blocks(
    job: ChainsJob,
    chain_ids: Sequence[int],
    scheduler: str,
    *,
    tasks_per_worker: int = 2,
    progress: Callable[[str, int, int], None] | None = None,
    timeout: float | None = None,
) -> Any:
    """Run ``job``'s chains ``chain_ids`` as blocks on the Dask cluster at ``scheduler``.

    Parameters
    ----------
    scheduler
        ``tcp://HOST:PORT`` or ``local:N`` (module docstring).
    tasks_per_worker
        Blocks per worker thread: more balance the load and update the
        progress more often, fewer keep more chains in one vectorized step.
    progress
        ``progress(label, chains_done, chains_total)`` as each block finishes.
    timeout
        Seconds to wait for the scheduler (default :data:`CONNECT_TIMEOUT`).

    Returns
    -------
    Run
        The concatenated chains (the same as one local ``run`` of ``chain_ids``)
        and timings: the longest block's warm-up and sampling, the wall time here.

    Raises
    ------
    UsageError
        distributed not installed, a bad address, no scheduler answering.
    ScaleOutError
        Workers kept dying on a block, or the cluster went away.
    InputError, UsageError
        As :func:`run_block`, raised on a worker.
    """
    from mcmc.core.samplers.driver import Run, Timings, concatenate

    t0 = time.perf_counter()
    with connect(scheduler, timeout) as client:
        from distributed import as_completed

        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()) or 1
        parts = blocks(chain_ids, tasks_per_worker * threads)
        label = f"{job.sampler or 'sampling'} on {job.target}"
        run_id = uuid.uuid4().hex[:12]
        # The job (with a user file's source) goes inside each task: a few kB, and a task
        # re-run after its worker died needs nothing that died with it.
        futures = {client.submit(run_block, job, part, key=f"mcmc-chains-{run_id}-{k}"): k
                   for k, part in enumerate(parts)}
        results: list[Any] = [None] * len(parts)
        done = 0
        if progress is not None:
            progress(label, 0, len(chain_ids))
        try:
            for future in as_completed(futures):
                k = futures[future]
                results[k] = _result(future, parts[k])
                done += len(parts[k])
                if progress is not None:
                    progress(label, done, len(chain_ids))
        finally:
            for future in futures:
                future.cancel()
    chains = concatenate([r.chains for r in results])
    wall = time.perf_counter() - t0
    timings = Timings(
        max(r.timings.warmup_time_s for r in results), max(r.timings.sampling_time_s for r in results), round(wall, 6),
        max(r.timings.compile_time_s for r in results),
    )  # fmt: skip
    return Run(chains, timings)


def _result(future: Any, what: Sequence[int]) -> Any:
    """The value of ``future``; a dead-worker or lost-scheduler failure becomes one line."""
    from distributed.scheduler import KilledWorker

    try:
        return future.result()
    except McmcError:
        raise
    except KilledWorker:
        raise ScaleOutError(
            f"the Dask workers running chain(s) {what[0]}..{what[-1]} died repeatedly (allowed-failures reached); "
            "see the workers' logs"
        ) from None
    except (OSError, TimeoutError) as exc:
        raise ScaleOutError(f"lost the Dask scheduler: {type(exc).__name__}: {exc}") from None


def fit_chains(
    corpus: Any,
    options: Mapping[str, Any],
    scheduler: str,
    *,
    callback: Callable[[int, int, float], None] | None = None,
    timeout: float | None = None,
) -> Any:
    """:func:`mcmc.core.lda.gibbs.fit` of ``corpus`` with every chain a task on the Dask cluster at ``scheduler``.

    The corpus is sent once to every worker (``scatter(broadcast=True)``); a
    task runs ``fit(corpus, chain_ids=[c], **options)`` and the fits are
    joined in chain order (:func:`mcmc.core.lda.gibbs.concatenate`): the
    same :class:`~mcmc.core.lda.gibbs.LdaFit`, so the same files, as one local
    ``fit(corpus, **options)``. ``callback(chain, last_iteration, log_joint_per_token)``
    is called as each chain finishes.
    """
    from mcmc.core.lda.gibbs import concatenate, fit

    n_chains = int(options.get("chains", 1))
    fit_options = {k: v for k, v in options.items() if k != "chains"}
    with connect(scheduler, timeout) as client:
        from distributed import as_completed

        run_id = uuid.uuid4().hex[:12]
        [shared] = client.scatter([corpus], broadcast=True, hash=False)
        futures = {client.submit(fit, shared, chain_ids=[c], key=f"mcmc-lda-{run_id}-{c}", **fit_options): c
                   for c in range(n_chains)}  # fmt: skip
        results: list[Any] = [None] * n_chains
        try:
            for future in as_completed(futures):
                c = futures[future]
                results[c] = _result(future, [c])
                if callback is not None:
                    last = results[c].iterations - 1
                    callback(c, last, float(results[c].log_joint_per_token[0, last]))
        finally:
            for future in futures:
                future.cancel()
    return concatenate(results)


def fit_sharded(
    corpus: Any,
    options: Mapping[str, Any],
    scheduler: str,
    *,
    shards: int | None = None,
    callback: Callable[[int, int, float], None] | None = None,
    timeout: float | None = None,
    traffic: dict[str, float] | None = None,
) -> Any:
    """:func:`mcmc.core.lda.gibbs.fit` of ``method="partial"`` with every chain's documents sharded across workers.

    Each shard of documents is sent once to a worker and stays there; every
    sweep phi is broadcast and each worker samples its shard's topics
    (:mod:`mcmc.core.lda.sharded`). The result is the local fit's, byte for
    byte, whatever ``shards`` is. ``callback`` is called after every
    iteration, as in a local fit. ``traffic``, when given, receives the bytes
    sent to one worker (``out_per_sweep``: phi) and gathered from all
    (``in_per_sweep``: topics) per sweep, and the number of ``shards``.

    Raises
    ------
    ScaleOutError
        A sweep that lost workers more than :data:`mcmc.core.lda.sharded.RETRIES` times.
    """
    from mcmc.core.lda.gibbs import fit
    from mcmc.core.lda.sharded import ShardCluster, ShardedPartialSampler

    doc_ptr = np.ascontiguousarray(corpus.doc_ptr, dtype=np.int64)
    words = np.ascontiguousarray(corpus.words, dtype=np.int32)
    with connect(scheduler, timeout) as client:
        cluster = ShardCluster(client, doc_ptr, words, int(options["n_topics"]), shards)
        result = fit(corpus, sampler=ShardedPartialSampler(cluster), callback=callback, **options)
    if traffic is not None:
        sweeps = max(cluster.sweeps, 1)
        traffic.update(out_per_sweep=cluster.bytes_out / sweeps, in_per_sweep=cluster.bytes_in / sweeps,
                       shards=len(cluster.shards))
    return result


@contextmanager
def connect(scheduler: str, timeout: float | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` of ``scheduler`` (``tcp://HOST:PORT`` or ``local:N``), closed on exit.

    Raises
    ------
    UsageError
        distributed not installed; a value :func:`check_scheduler` refuses;
        no scheduler answering at the address within ``timeout`` seconds.
    """
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    check_scheduler(scheduler)
    try:
        import distributed
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    if scheduler.startswith("local:"):
        n_text = scheduler.removeprefix("local:")
        # Loopback only (the HTTP endpoint too, on a free port: nothing listens beyond this machine), one thread per process:
        # the chains of a block are vectorized in one thread, blocks run side by side.
        with distributed.LocalCluster(
            n_workers=int(n_text), threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
        ) as cluster, distributed.Client(cluster) as client:  # fmt: skip
            yield client
        return
    try:
        client = distributed.Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError):
        raise UsageError(f"--scheduler {scheduler}: no Dask scheduler answered within {timeout:g} s") from None
    except ValueError as exc:
        raise UsageError(f"--scheduler {scheduler}: not a scheduler address ({exc})") from None
    try:
        yield client
    finally:
        client.close()
