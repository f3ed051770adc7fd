"""Fitting LDA (and the one-topic-per-document mixture) by Gibbs sampling: the driver.

:func:`fit` runs ``chains`` independent chains of one of four exact samplers
and returns an :class:`LdaFit`: the collapsed log joint after every iteration
and Bayes estimates of theta and phi averaged over the post-burn-in states.
Each sampler is one module behind the protocol of :mod:`mcmc.core.lda.sampler`
(registered in :data:`mcmc.core.lda.config.METHOD_MODULES`); this module runs
their sweeps on a thread pool, times them, and stacks the chains. With at
least as many chains as threads, each thread takes its chains through all
their iterations with no barrier between threads (chains are independent, and
a barrier per sweep waits for the slowest chain every time); with fewer, the
chains' sweeps run phase by phase, a chain's document blocks shared out over
the threads (``partial``, ``uncollapsed``).

``method``
    ``"collapsed"``
        Collapsed Gibbs over the token topics (Griffiths & Steyvers 2004),
        systematic scan, with theta and phi integrated out; ``kernel`` picks
        the implementation (:mod:`mcmc.core.lda.collapsed`).
    ``"partial"``
        Partially collapsed Gibbs: phi | z ~ Dirichlet, then z | phi with theta
        integrated out, token by token within a document; blocks of documents
        of one chain run in parallel (:mod:`mcmc.core.lda.partial`).
    ``"uncollapsed"``
        Blocked Gibbs: phi | z and theta | z (Dirichlet), then every z | theta,
        phi independently, in parallel blocks (:mod:`mcmc.core.lda.uncollapsed`).
    ``"dmm"``
        Dirichlet-multinomial mixture, one topic per document (Nigam et al.
        2000; Yin & Wang 2014 "GSDMM"), collapsed Gibbs over document topics
        (:mod:`mcmc.core.lda.dmm`).

Every sampler is exact: each sweep leaves p(z | w) (for ``uncollapsed`` and
``partial`` p(z, phi[, theta] | w)) invariant; ``tests/core/test_lda_exact.py``
checks them against enumerated posteriors and by Geweke's (2004) test.

Randomness comes from one ``numpy.random.Generator`` per chain,
``mcmc.core.random.generator(seed, (chain,))``, i.e.
``Generator(PCG64(SeedSequence(seed, spawn_key=(chain,))))``: it draws the initial state and the
64-bit keys of every sweep (one for the tokens; for ``partial`` and
``uncollapsed`` also one for phi and one for theta), from which the compiled
kernels derive every uniform and Gamma variate by counter (see
:mod:`mcmc.core.lda.kernels`). So a chain depends only on the seed and its
index, and the same seed gives the same bytes whatever ``threads`` is.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.lda.config import KERNELS, sampler_class
from mcmc.core.lda.hyper import LearnedHyperparameters, update_sweeps
from mcmc.core.lda.sampler import LdaChain, Problem, Sampler, Task
from mcmc.core.memory import require_memory
from mcmc.core.random import generator


class CorpusLike(Protocol):
    doc_ptr: np.ndarray
    words: np.ndarray
    vocab: Sequence[str]


@dataclass(frozen=True)
class FitState:
    """What an LDA fit needs to go on after ``done`` sweeps of every chain (``mcmc lda --resume``).

    Attributes
    ----------
    done : sweeps made by every chain.
    log_joint : float (chains, done), the trace so far.
    trace_alpha, trace_beta : float (chains, U, K) and (chains, U), the hyperparameter updates made so far
        (``U`` of them; empty without ``optimize_interval``).
    chains : name -> (chains, ...), every chain's :meth:`~mcmc.core.lda.sampler.LdaChain.save`, stacked.
    """

    done: int
    log_joint: np.ndarray
    trace_alpha: np.ndarray
    trace_beta: np.ndarray
    chains: dict[str, np.ndarray]


class Checkpoint(Protocol):
    """Polled after every sweep with a function returning the fit so far (:class:`FitState`), or ``None``."""

    def poll(self, snapshot: Callable[[], FitState] | None) -> None: ...


@dataclass(frozen=True)
class LdaFit:
    """Result of :func:`fit`.

    Attributes
    ----------
    log_joint : float (chains, iterations)
        Collapsed ``log p(w, z)`` after every iteration (for ``dmm`` the
        mixture's own collapsed joint, see :mod:`mcmc.core.lda.likelihood`).
    log_joint_per_token : float (chains, iterations)
        ``log_joint / N``.
    theta : float (chains, D, K) or None
        Posterior mean estimate ``(n_dk + alpha) / (N_d + K alpha)`` averaged
        over the post-burn-in iterations of each chain. For ``dmm``: the
        probability that document d belongs to topic k, Rao-Blackwellised (the
        full conditionals used to draw z_d, averaged over post-burn-in sweeps).
        ``None`` when the fit was asked not to keep it (``keep_theta=False``).
    phi : float (chains, K, V)
        ``(n_kw + beta) / (n_k + V beta)`` averaged likewise.
    topic_shares : float (chains, K)
        Each topic's expected share of the tokens, ``sum_d N_d theta_dk / N``
        (known without theta: see :meth:`~mcmc.core.lda.sampler.TokenChain.shares_estimate`).
    z : int32 (chains, N)
        Final topic of every token (for ``dmm`` the topic of its document).
    sampling_seconds : float
        Wall-clock seconds spent in sweeps (all chains, excluding numba
        compilation, log joint and estimates).
    total_seconds : float
        Wall-clock seconds of the whole fit, excluding numba compilation.
    kernel : str
        Implementation actually used: ``"sparse"`` or ``"dense"`` for
        ``collapsed``, otherwise the method name.
    timings : dict
        Wall-clock seconds spent in ``sampling``, ``log_joint``, ``estimates``
        and ``total``, and ``sampling_cpu``: process CPU seconds of the sweeps
        (all threads), steadier than wall-clock time on a shared machine.
    z_doc : int32 (chains, D) or None
        For ``dmm``, the final topic of every document (also defined for empty
        documents, which ``z`` cannot show); ``None`` otherwise.
    learned : LearnedHyperparameters or None
        With ``optimize_interval``: every chain's alpha (per topic) and beta
        after each Monte Carlo EM update (``alpha`` and ``beta`` above are then
        the starting values).
    """

    log_joint: np.ndarray
    log_joint_per_token: np.ndarray
    theta: np.ndarray | None
    phi: np.ndarray
    topic_shares: np.ndarray
    z: np.ndarray
    n_topics: int
    alpha: float
    beta: float
    method: str
    iterations: int
    burn_in: int
    seed: int
    chains: int
    threads: int
    kernel: str
    n_tokens: int
    sampling_seconds: float
    total_seconds: float
    timings: dict[str, float] = field(default_factory=dict)
    z_doc: np.ndarray | None = None
    learned: LearnedHyperparameters | None = None
    #: With ``save_state``: what the fit needs to go on (taken before the estimates consumed the running sums).
    state: FitState | None = None

    @property
    def tokens_per_second(self) -> float:
        """Token updates per wall-clock second of sampling, all chains together."""
        updates = self.chains * self.iterations * self.n_tokens
        return updates / self.sampling_seconds if self.sampling_seconds > 0 else float("inf")


def _validate(corpus: CorpusLike, n_topics: int, alpha: float, beta: float, iterations: int, burn_in: int,
              chains: int, method: str, threads: int, kernel: str, optimize_interval: int = 0,
              optimize_burn_in: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    method_sampler = sampler_class(method)  # raises for an unknown method
    if optimize_interval < 0 or optimize_burn_in < 0:
        raise UsageError("optimize_interval and optimize_burn_in must be >= 0")
    if optimize_interval > 0:
        if not method_sampler.learns_hyperparameters:
            raise UsageError(f"--optimize-interval learns alpha and beta with --method collapsed; {method} keeps "
                             "them fixed")
        if optimize_burn_in + optimize_interval > iterations:
            raise UsageError(f"no hyperparameter update would happen: --optimize-burn-in {optimize_burn_in} + "
                             f"--optimize-interval {optimize_interval} > --iterations {iterations}")
    if kernel not in KERNELS:
        raise UsageError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNELS)}")
    if int(n_topics) != n_topics or n_topics < 1:
        raise UsageError(f"n_topics must be a positive integer, got {n_topics}")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not (np.isfinite(value) and value > 0):
            raise UsageError(f"{name} must be a positive finite number, got {value}")
    if iterations < 1:
        raise UsageError(f"iterations must be at least 1, got {iterations}")
    if not 0 <= burn_in < iterations:
        raise UsageError(f"burn_in must be in 0 .. iterations - 1 = {iterations - 1}, got {burn_in}")
    if chains < 1 or threads < 1:
        raise UsageError("chains and threads must be at least 1")
    doc_ptr = np.ascontiguousarray(corpus.doc_ptr, dtype=np.int64)
    words = np.ascontiguousarray(corpus.words, dtype=np.int32)
    vocab_size = len(corpus.vocab)
    if doc_ptr.ndim != 1 or doc_ptr.size < 1 or doc_ptr[0] != 0 or doc_ptr[-1] != words.size \
            or np.any(np.diff(doc_ptr) < 0):
        raise InputError(None, "corpus doc_ptr must rise from 0 to the number of tokens")
    if words.size == 0:
        raise InputError(None, "corpus has no tokens")
    if words.min() < 0 or words.max() >= vocab_size:
        raise InputError(None, f"corpus word ids must lie in 0 .. {vocab_size - 1}")
    n_docs, k = doc_ptr.size - 1, int(n_topics)
    # Per chain: counts and running sums of (D, K) and (K, V), a topic per token; a log joint per iteration.
    per_chain = 24 * k * (n_docs + vocab_size) + 4 * words.size + 8 * int(iterations)
    require_memory(
        int(chains) * per_chain, 1,
        f"{int(chains)} chain(s) of K = {k} topics over D = {n_docs} documents and V = {vocab_size} words", None,
    )  # fmt: skip
    return doc_ptr, words, vocab_size


def fit(
    corpus: CorpusLike,
    *,
    n_topics: int,
    alpha: float,
    beta: float,
    iterations: int,
    burn_in: int,
    chains: int = 1,
    seed: int = 0,
    method: str = "collapsed",
    threads: int = 1,
    callback: Callable[[int, int, float], None] | None = None,
    kernel: str = "auto",
    optimize_interval: int = 0,
    optimize_burn_in: int = 0,
    chain_ids: Sequence[int] | None = None,
    sampler: Sampler | None = None,
    keep_theta: bool = True,
    resume: FitState | None = None,
    checkpoint: Checkpoint | None = None,
    save_state: bool = False,
) -> LdaFit:
    """Fit LDA (or the Dirichlet-multinomial mixture) by Gibbs sampling.

    Parameters
    ----------
    corpus
        Has ``doc_ptr`` int (D + 1,), ``words`` int (N,) and ``vocab`` (V names).
    n_topics, alpha, beta
        K and the symmetric Dirichlet concentrations of theta (for ``dmm``: of
        the mixture weights) and phi.
    iterations, burn_in
        Sweeps per chain; the first ``burn_in`` are left out of theta and phi.
    chains, seed
        Independent chains; chain c draws from ``SeedSequence(seed, spawn_key=(c,))``.
    method
        ``"collapsed"``, ``"partial"``, ``"uncollapsed"`` or ``"dmm"`` (module docstring).
    threads
        Worker threads: chains run side by side, and for ``partial`` and
        ``uncollapsed`` blocks of documents of one chain too. Results do not
        depend on it.
    callback
        ``callback(chain, iteration, log_joint_per_token)`` after every
        iteration of every chain (called from the calling thread).
    kernel
        ``"auto"``, ``"sparse"`` or ``"dense"``: implementation of the
        collapsed conditional (ignored by the other methods). Both are exact;
        ``"auto"`` is dense up to ``collapsed.DENSE_MAX_TOPICS`` topics, sparse
        above (reported as ``"sparse"``), where it starts with dense sweeps
        until the words have concentrated on few topics
        (``collapsed.SPARSE_SWITCH_FRACTION``).
    optimize_interval, optimize_burn_in
        With ``optimize_interval`` N > 0 (``method="collapsed"`` only), every
        chain updates its own asymmetric alpha and symmetric beta by Monte
        Carlo EM (:mod:`mcmc.core.lda.hyper`) after sweeps
        ``optimize_burn_in + N``, ``+ 2N``, ...; ``alpha`` and ``beta`` are
        the starting values. The log joint is then ``log p(w, z | alpha_t, beta_t)``
        with the values in force during the sweep.
    chain_ids
        Global indices of the chains to run (default ``range(chains)``, and
        ``chains`` is then ignored): chain c reads its own stream, so fits of
        parts of the chains, joined by :func:`concatenate`, equal one fit of all.
    sampler
        The implementation of ``method`` to run, instead of the registered one
        (:func:`mcmc.core.lda.config.sampler_class`): e.g. :class:`mcmc.core.lda.sharded.ShardedPartialSampler`,
        which runs the same chains on a Dask cluster.
    keep_theta
        Whether to estimate theta: its running sums are a (D, K) float array
        per chain (75 MB at K = 500 on 20 Newsgroups). Without it
        ``LdaFit.theta`` is ``None``; everything else is the same, byte for byte.
    resume
        Go on from a fit's :class:`FitState` (same corpus, options and chains):
        every chain's topics, running sums, hyperparameters and stream are
        restored and the sweeps run from ``resume.done`` to ``iterations``;
        the result is, byte for byte, the fit that never stopped.
    checkpoint
        Polled after every sweep (:class:`Checkpoint`); with threads side by
        side, a snapshot waits for every chain to end the same sweep.
    save_state
        Keep the final :class:`FitState` in ``LdaFit.state`` (the chains file
        carries it so the fit can go on later).

    Returns
    -------
    LdaFit
    """
    ids = list(range(int(chains)) if chain_ids is None else map(int, chain_ids))
    chains = len(ids)
    doc_ptr, words, vocab_size = _validate(corpus, n_topics, alpha, beta, iterations, burn_in,
                                           chains, method, threads, kernel, optimize_interval, optimize_burn_in)
    n_topics, iterations, burn_in, chains, threads = map(int, (n_topics, iterations, burn_in, chains, threads))
    alpha, beta, seed = float(alpha), float(beta), int(seed)
    given = sampler is not None  # another scheduler's (a Dask cluster's): keep to the lockstep
    if sampler is None:
        sampler = sampler_class(method)(n_topics, kernel)
    elif sampler.name != method:
        raise UsageError(f"sampler {sampler.name!r} does not run method {method!r}")
    sampler.warm_up()
    t_start = time.perf_counter()
    learn = optimize_interval > 0
    problem = Problem.build(doc_ptr, words, n_topics, vocab_size, alpha, beta, threads, learn, bool(keep_theta))
    updates = update_sweeps(iterations, optimize_interval, optimize_burn_in) if learn else np.empty(0, np.int64)
    trace_alpha = np.empty((chains, updates.size, n_topics))
    trace_beta = np.empty((chains, updates.size))
    states = sampler.chains(problem, [generator(seed, (c,)) for c in ids])
    log_joint = np.empty((chains, iterations))
    n_tokens = words.size
    update_at = {int(sweep): j for j, sweep in enumerate(updates)}  # sweep number -> index of the update
    start = 0
    if resume is not None:
        start = _restore(resume, states, log_joint, trace_alpha, trace_beta, iterations)

    def snapshot(done: int) -> FitState:
        saved = [st.save() for st in states]
        made = int(np.searchsorted(updates, done, side="right"))
        return FitState(done, log_joint[:, :done].copy(), trace_alpha[:, :made].copy(), trace_beta[:, :made].copy(),
                        {k: np.stack([sv[k] for sv in saved]) for k in saved[0]})  # fmt: skip

    def after(c: int, it: int, clock: Clock) -> None:
        """Chain c's work after its sweep ``it``: log joint, running estimates, hyperparameters."""
        st = states[c]
        t1 = time.perf_counter()
        log_joint[c, it] = st.log_joint()
        t2 = time.perf_counter()
        clock.log_joint += t2 - t1
        if it >= burn_in:
            st.accumulate()
        j = update_at.get(it + 1)
        if j is not None:
            st.update_hyperparameters()  # type: ignore[attr-defined]
            trace_alpha[c, j], trace_beta[c, j] = st.hyperparameters()  # type: ignore[attr-defined]
        clock.estimates += time.perf_counter() - t2

    with ThreadPoolExecutor(max_workers=threads) as pool:
        if threads > 1 and chains >= threads and not given:
            clocks = _chains_side_by_side(pool, states, threads, iterations, burn_in, after, callback, n_tokens,
                                          log_joint, start, checkpoint, snapshot)  # fmt: skip
        else:
            clocks = [_chains_in_lockstep(pool, states, threads, iterations, burn_in, after, callback, n_tokens,
                                          log_joint, start, checkpoint, snapshot)]  # fmt: skip
    final_state = snapshot(iterations) if save_state else None
    sampling = max(c.sampling for c in clocks)
    sampling_cpu = sum(c.sampling_cpu for c in clocks)
    t_log_joint = max(c.log_joint for c in clocks)
    t_estimates = max(c.estimates for c in clocks)
    theta, phi, shares = _stacked_estimates(states)
    z = np.stack([st.z for st in states])
    total = time.perf_counter() - t_start
    return LdaFit(
        log_joint=log_joint, log_joint_per_token=log_joint / n_tokens, theta=theta, phi=phi,
        topic_shares=shares, z=z,
        n_topics=n_topics, alpha=alpha, beta=beta, method=method, iterations=iterations, burn_in=burn_in,
        seed=seed, chains=chains, threads=threads, kernel=sampler.kernel, n_tokens=n_tokens,
        sampling_seconds=sampling, total_seconds=total,
        timings={"sampling": sampling, "sampling_cpu": sampling_cpu, "log_joint": t_log_joint,
                 "estimates": t_estimates, "total": total},
        z_doc=np.stack([st.z_doc for st in states]) if states[0].z_doc is not None else None,
        learned=(LearnedHyperparameters(updates, trace_alpha, trace_beta, int(optimize_interval), int(optimize_burn_in))
                 if learn else None),
        state=final_state,
    )


def _restore(resume: FitState, states: Sequence[LdaChain], log_joint: np.ndarray, trace_alpha: np.ndarray,
             trace_beta: np.ndarray, iterations: int) -> int:  # fmt: skip
    """Put a saved fit back into ``states`` and the traces; the sweeps done."""
    done = int(resume.done)
    if not 0 <= done <= iterations or resume.log_joint.shape != (len(states), done):
        raise InputError(None, f"the fit to go on from has a trace of shape {resume.log_joint.shape}; expected "
                               f"({len(states)} chains, at most {iterations} sweeps)")  # fmt: skip
    made = resume.trace_alpha.shape[1]
    if resume.trace_alpha.shape[0] != len(states) or made > trace_alpha.shape[1] \
            or resume.trace_alpha.shape[2:] != trace_alpha.shape[2:]:  # fmt: skip
        raise InputError(None, "the fit to go on from has hyperparameter updates of another shape")
    for c, st in enumerate(states):
        try:
            st.restore({k: v[c] for k, v in resume.chains.items()})
        except (KeyError, ValueError, IndexError) as exc:
            raise InputError(None, f"the fit to go on from does not fit this corpus and model ({exc})") from None
    log_joint[:, :done] = resume.log_joint
    trace_alpha[:, :made] = resume.trace_alpha
    trace_beta[:, :made] = resume.trace_beta
    return done


@dataclass
class Clock:
    """Wall seconds in each part of the iterations (one thread's), and CPU seconds of the sweeps."""

    sampling: float = 0.0
    sampling_cpu: float = 0.0
    log_joint: float = 0.0
    estimates: float = 0.0


After = Callable[[int, int, Clock], None]


def _sweep(st: LdaChain, record: bool, clock: Clock, cpu: Callable[[], float],
           run: Callable[[list[Task]], None]) -> None:  # fmt: skip
    """One sweep of one chain, its phases' tasks handed to ``run``, timed on ``clock``."""
    t0, c0 = time.perf_counter(), cpu()
    for phase in st.sweep_phases(record):
        run(phase())
    st.after_sweep()
    clock.sampling += time.perf_counter() - t0
    clock.sampling_cpu += cpu() - c0


def _chains_in_lockstep(pool: ThreadPoolExecutor, states: Sequence[LdaChain], threads: int, iterations: int,
                        burn_in: int, after: After, callback: Callable[[int, int, float], None] | None,
                        n_tokens: int, log_joint: np.ndarray, start: int = 0, checkpoint: Checkpoint | None = None,
                        snapshot: Callable[[int], FitState] | None = None) -> Clock:  # fmt: skip
    """Every chain's sweep, phase by phase, its tasks (a chain's, or blocks of one chain) over the threads.

    For fewer chains than threads, or one chain whose documents are shared
    out in blocks (``partial``, ``uncollapsed``).
    """
    clock = Clock()
    per_chain = [Clock() for _ in states]  # after() runs on the pool: one clock per chain, no shared sums

    def run(tasks: list[Task]) -> None:
        if threads == 1 or len(tasks) == 1:
            for func, args in tasks:
                func(*args)
        else:
            for fut in [pool.submit(func, *args) for func, args in tasks]:
                fut.result()

    chains = len(states)
    for it in range(start, iterations):
        t0, c0 = time.perf_counter(), time.process_time()
        phases = [st.sweep_phases(it >= burn_in) for st in states]
        for p in range(len(phases[0])):
            run([task for chain_phases in phases for task in chain_phases[p]()])
        for st in states:
            st.after_sweep()
        clock.sampling += time.perf_counter() - t0
        clock.sampling_cpu += time.process_time() - c0
        # the chains' log joints, estimates and hyperparameters side by side too
        run([(after, (c, it, per_chain[c])) for c in range(chains)])
        if callback is not None:
            for c in range(chains):
                callback(c, it, log_joint[c, it] / n_tokens)
        if checkpoint is not None and snapshot is not None and it + 1 < iterations:
            checkpoint.poll(lambda done=it + 1: snapshot(done))
    clock.log_joint = max(c.log_joint for c in per_chain)
    clock.estimates = max(c.estimates for c in per_chain)
    return clock


def _chains_side_by_side(pool: ThreadPoolExecutor, states: Sequence[LdaChain], threads: int, iterations: int,
                         burn_in: int, after: After, callback: Callable[[int, int, float], None] | None,
                         n_tokens: int, log_joint: np.ndarray, start: int = 0, checkpoint: Checkpoint | None = None,
                         snapshot: Callable[[int], FitState] | None = None) -> list[Clock]:  # fmt: skip
    """Thread j runs chains j, j + threads, ... through all their iterations, with no barrier between threads.

    Chains are independent, so waiting at every sweep for the slowest chain
    (the lockstep) only loses time; the callback still sees every iteration of
    every chain, in order per chain, from the calling thread. A checkpoint
    (``checkpoint.poll`` after each event) asks the threads to stop before one
    sweep, the next one no thread has begun, takes the snapshot there, and
    lets them go on.
    """
    events: queue.Queue[tuple[int, int] | None] = queue.Queue()
    stop = threading.Event()
    clocks = [Clock() for _ in range(threads)]
    gate = threading.Condition()
    pause_at: list[int | None] = [None]  # the sweep before which every thread waits (a snapshot is taken)
    begun = [start - 1] * threads  # the last sweep each thread began
    waiting = [False] * threads  # paused at pause_at, or done

    def serial(tasks: list[Task]) -> None:
        for func, args in tasks:
            func(*args)

    def worker(j: int) -> None:
        try:
            for it in range(start, iterations):
                with gate:
                    while pause_at[0] is not None and it >= pause_at[0] and not stop.is_set():
                        waiting[j] = True
                        gate.notify_all()
                        gate.wait()
                    waiting[j] = False
                    begun[j] = it
                for c in range(j, len(states), threads):
                    if stop.is_set():
                        return
                    _sweep(states[c], it >= burn_in, clocks[j], time.thread_time, serial)
                    after(c, it, clocks[j])
                    events.put((c, it))
        except BaseException:
            stop.set()
            raise
        finally:
            with gate:
                waiting[j] = True  # done: never in the way of a snapshot
                gate.notify_all()
            events.put(None)

    def paused_snapshot() -> FitState:
        with gate:
            pause_at[0] = min(max(begun) + 1, iterations)
            gate.wait_for(lambda: all(waiting))
            at = pause_at[0]
        try:
            return snapshot(at)  # type: ignore[misc]
        finally:
            with gate:
                pause_at[0] = None
                gate.notify_all()

    futures = [pool.submit(worker, j) for j in range(threads)]
    try:
        running = len(futures)
        while running:
            try:
                item = events.get(timeout=0.1)
            except queue.Empty:
                item = ()  # type: ignore[assignment]
            if item is None:
                running -= 1
                continue
            if item and callback is not None:
                c, it = item
                callback(c, it, log_joint[c, it] / n_tokens)
            if checkpoint is not None and snapshot is not None:
                checkpoint.poll(paused_snapshot)
    except BaseException:  # an interrupt: the workers stop after their current sweep
        stop.set()
        with gate:
            gate.notify_all()
        raise
    for fut in futures:
        fut.result()  # a worker's exception
    return clocks


def _stacked_estimates(states: Sequence[LdaChain]) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Every chain's theta, phi and shares as ``(chains, D, K)``, ``(chains, K, V)``, ``(chains, K)``.

    One chain's copy alive at a time; one chain (the common case) needs no
    copy at all: a view with a chain axis. theta is ``None`` if not kept.
    """
    first = states[0].estimates()
    shares = np.empty((len(states), first.shares.size))
    shares[0] = first.shares
    if len(states) == 1:
        return None if first.theta is None else first.theta[None], first.phi[None], shares
    theta = None if first.theta is None else np.empty((len(states), *first.theta.shape))
    phi = np.empty((len(states), *first.phi.shape))
    if theta is not None:
        theta[0] = first.theta
    phi[0] = first.phi
    del first
    for c in range(1, len(states)):
        est = states[c].estimates()
        if theta is not None:
            theta[c] = est.theta
        phi[c], shares[c] = est.phi, est.shares
        del est
    return theta, phi, shares


def concatenate(parts: Sequence[LdaFit]) -> LdaFit:
    """Fits of parts of the chains of one run (``fit(..., chain_ids=part)``) as one fit, in the given order.

    Per-chain arrays are concatenated along the chain axis; the seconds are
    the longest part's (the parts ran side by side).
    """
    if len(parts) == 1:
        return parts[0]
    first = parts[0]

    def join(name: str) -> np.ndarray | None:
        if getattr(first, name) is None:
            return None
        return np.concatenate([getattr(p, name) for p in parts])

    learned = first.learned
    if learned is not None:
        learned = LearnedHyperparameters(learned.iterations, np.concatenate([p.learned.alpha for p in parts]),
                                         np.concatenate([p.learned.beta for p in parts]), learned.interval,
                                         learned.burn_in)  # type: ignore[union-attr]
    timings = {key: max(p.timings.get(key, 0.0) for p in parts) for key in first.timings}
    state = first.state
    if state is not None:
        states: list[FitState] = [p.state for p in parts]  # type: ignore[misc]
        state = FitState(state.done, *(np.concatenate([getattr(s, k) for s in states])
                                       for k in ("log_joint", "trace_alpha", "trace_beta")),
                         {k: np.concatenate([s.chains[k] for s in states]) for k in state.chains})
    return dataclasses.replace(
        first, log_joint=join("log_joint"), log_joint_per_token=join("log_joint_per_token"), theta=join("theta"),
        phi=join("phi"), topic_shares=join("topic_shares"), z=join("z"), z_doc=join("z_doc"), learned=learned,
        chains=sum(p.chains for p in parts), sampling_seconds=max(p.sampling_seconds for p in parts),
        total_seconds=max(p.total_seconds for p in parts), timings=timings, state=state,
    )  # fmt: skip
