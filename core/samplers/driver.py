"""The one loop every sampler runs in: starts, warm-up, draws, chains file.

:func:`run` draws starting points, runs warm-up with the sampler's adapter
(:mod:`mcmc.core.samplers.adapt`), stepping with the adapter's warm-up
kernel, then the sampling iterations, keeping every
``thin``-th (CmdStan's convention: ``draws`` counts iterations, so
``ceil(draws / thin)`` are kept). Per-iteration ``Info`` fields become
``(chain, draw)`` sampler statistics under their ArviZ names, plus ``lp`` (the
log density in the sampling space, Jacobian included, as Stan reports it).

A sampler with ``run_iterations`` (HMC, NUTS) on a target with compiled
loops (a JAX target, :mod:`mcmc.core.jax`) runs many iterations per call:
in warm-up the stretches between the adapter's events (``quiet``, ``absorb``:
the loop does dual averaging and the window sums itself), each event
iteration alone with the adapter's own update; in sampling ``BATCH`` at a
time. The same random numbers as iteration by iteration, so the same draws
to rounding.

Reproducibility: all randomness comes from :class:`~mcmc.core.random.ChainRandom`
streams keyed by the global chain index, and adaptation is per chain, so
``run(..., chain_ids=[0, 1])`` and ``run(..., chain_ids=[2, 3])`` give,
concatenated, exactly the arrays of ``run(..., chains=4)``.

Long runs: given a ``problem``, the chains carry what the run needs to go on
(:mod:`mcmc.core.resume`: the last state, the tuned parameters, each chain's
place in its stream); ``run(..., resume=...)`` goes on from them after the
iterations done, without starts or warm-up, and writes the bytes of the run
that never stopped. A :class:`Checkpoint` is polled after every iteration (or
compiled batch: batches end on multiples of ``BATCH`` wherever a run went on)
and may ask for the run so far; ``keep_warmup`` keeps the warm-up draws.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple, Protocol

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError, UsageError
from mcmc.core.memory import require_memory
from mcmc.core.random import ChainRandom, entropy_seed
from mcmc.core.resume import SamplerResume, join_sections, sampler_section
from mcmc.core.samplers import SamplingAlgorithm
from mcmc.core.samplers.adapt import FixedParams
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import FiniteStates, JudgedVariables, SpinLattice, TransitionKernel

INIT_ATTEMPTS = 100  # as Stan: redraw a start with non-finite log density up to this many times


class Timings(NamedTuple):
    """Seconds spent by one :func:`run`: they change from run to run of the same seed, so they
    travel beside the chains, never in them (the chains file is a function of the command line)."""

    warmup_time_s: float
    sampling_time_s: float
    wall_time_s: float  # starts, warm-up and sampling
    #: Of those, compiling the target's programs at their first calls (a JAX target's, :mod:`mcmc.core.jax`:
    #: ``CompiledPaths.compile_seconds``); 0 for a target that compiles nothing during a run.
    compile_time_s: float = 0.0


class Run(NamedTuple):
    """What :func:`run` returns: the chains and, beside them, the timings."""

    chains: Chains
    timings: Timings


class Counter:
    """Counts log-density and gradient evaluations (one per chain row evaluated)."""

    def __init__(self) -> None:
        self.density = 0
        self.gradient = 0
        self.likelihood = 0
        self.warmup = (0, 0, 0)

    def restore(self, attrs: Mapping[str, Any]) -> None:
        """Go on from the counts a chains file records (warm-up's, then the total so far)."""
        try:
            self.warmup = tuple(int(attrs[f"n_{kind}_evals_warmup"]) for kind in ("density", "gradient", "likelihood"))
            self.density, self.gradient, self.likelihood = (
                w + int(attrs[f"n_{kind}_evals"]) for w, kind in zip(self.warmup, ("density", "gradient", "likelihood"))
            )
        except (KeyError, TypeError, ValueError):
            raise InputError(None, "the chains file to go on from has no evaluation counts") from None

    def wrap(self, target: Target) -> Target:
        """A copy of ``target`` whose functions count their evaluations here."""

        def counted(fn: Callable[..., Any] | None, dens: int, grad: int, lik: int = 0) -> Callable[..., Any] | None:
            if fn is None:
                return None

            def wrapper(x: np.ndarray) -> Any:
                n = np.shape(x)[0] if np.ndim(x) else 1
                self.density += dens * n
                self.gradient += grad * n
                self.likelihood += lik * n
                return fn(x)

            # The function itself, for work done once per process rather than per chain (inverse-cdf's
            # table), which would make the counts of blocks of chains not add up to those of one run.
            wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
            return wrapper

        return dataclasses.replace(
            target,
            log_density=counted(target.log_density, 1, 0),
            grad_log_density=counted(target.grad_log_density, 0, 1),
            value_and_grad_fn=counted(target.value_and_grad_fn, 1, 1),
            # Two-stage MH evaluates the factors separately: the likelihood is
            # the expensive one, prior evaluations are not counted.
            log_likelihood=counted(target.log_likelihood, 0, 0, 1),
            compiled=None if target.compiled is None else target.compiled.wrapped(self._counted_compiled),
        )

    def _counted_compiled(self, kernel: Callable[..., Any]) -> Callable[..., Any]:
        """A compiled trajectory or NUTS tree counts one density and gradient evaluation per leapfrog step taken."""

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            out = kernel(*args, **kwargs)
            steps = int(np.sum(out.n_steps))
            self.density += steps
            self.gradient += steps
            return out

        return wrapper


class Checkpoint(Protocol):
    """Told after every iteration whether the run can be saved; decides when to save it.

    ``poll(snapshot)``: ``snapshot`` is ``None`` during warm-up (a checkpoint
    begins with the draws) and afterwards a function returning the run so far
    as :class:`~mcmc.core.chains.Chains` (draws, statistics, attributes and
    the resume section), built only when called. The command that runs the
    sampler writes it (:mod:`mcmc.cli.commands.checkpoints`) and stops the run
    there after a signal.
    """

    def poll(self, snapshot: Callable[[], Chains] | None) -> None: ...


def run(
    sampler: SamplingAlgorithm,
    target: Target,
    *,
    chains: int = 4,
    warmup: int = 1000,
    draws: int = 1000,
    thin: int = 1,
    seed: int | None = None,
    chain_ids: Sequence[int] | None = None,
    init: np.ndarray | None = None,
    params: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    keep_warmup: bool = False,
    problem: Mapping[str, Any] | None = None,
    resume: tuple[SamplerResume, Chains] | None = None,
    checkpoint: Checkpoint | None = None,
) -> Run:
    """Run ``sampler`` on ``target``; return the chains and the timings.

    Parameters
    ----------
    sampler
        A sampler module or object (see :mod:`mcmc.core.samplers`).
    target
        The distribution to sample.
    chains
        Number of chains (ignored when ``chain_ids`` is given).
    warmup, draws
        Iterations of warm-up (adaptation; discarded) and of sampling.
    thin
        Keep every ``thin``-th sampling iteration.
    seed
        Non-negative integer; ``None`` picks one from OS entropy (recorded in
        ``attrs["seed"]``, so the run can be repeated).
    chain_ids
        Global indices of the chains to run (default ``range(chains)``); the
        ``i``-th chain's draws depend only on ``seed`` and ``i``.
    init
        Starting points ``(dim,)`` (shared) or ``(chains, dim)``; default
        ``target.initial``, redrawn while the log density is not finite.
    params
        Keyword parameters of the sampler (initial values of tuned ones).
    progress
        Called as ``progress(done, total)`` about a hundred times per run.
    keep_warmup
        Keep the warm-up draws and their statistics (``Chains.warmup_posterior``,
        ``Chains.warmup_sample_stats``: ``lp`` and the fields every warm-up
        iteration reported).
    problem
        What defines the run (JSON, built by the command): with it the chains
        carry a resume section (:mod:`mcmc.core.resume`) from which the run
        can go on.
    resume
        Go on from a run read back (its resume section and its chains, of the
        same chains): no starts and no warm-up; the state, tuned parameters,
        random streams and evaluation counts are the saved ones, and the
        sampling iterations run from ``resume.done`` to ``draws``. The result
        is, byte for byte, the run that never stopped.
    checkpoint
        Polled after every iteration (:class:`Checkpoint`).

    Returns
    -------
    Run
        ``chains``: ``posterior`` from ``target.to_variables`` (reported
        space), ``sample_stats`` from the sampler's ``Info`` plus ``lp``, and
        ``attrs``: sampler, target, target options, seed, chains, chain ids,
        warmup, draws, thin, the parameters used after warm-up (per chain)
        and evaluation counts; ``timings``: :class:`Timings`.
    """
    if warmup < 0 or draws < 1 or thin < 1:
        raise UsageError(f"need warmup >= 0, draws >= 1 and thin >= 1 (got {warmup}, {draws}, {thin})")
    if seed is None:
        seed = entropy_seed()
    if seed < 0:
        raise UsageError(f"seed must be non-negative, got {seed}")
    n_chains = chains if chain_ids is None else len(chain_ids)
    if n_chains < 1:
        raise UsageError("need at least one chain")
    kept = -(-draws // thin)
    # The draws are stored in full (sampling space and reported values): refuse before starting.
    require_memory(
        n_chains * (kept * (target.dim + target.n_reported) + 8 * target.dim), 8,
        f"{n_chains} chains x {kept} draws x {target.dim} coordinates", "--chains, --draws",
    )  # fmt: skip
    ids = tuple(range(chains)) if chain_ids is None else tuple(int(i) for i in chain_ids)
    params = dict(params or {})
    if isinstance(target, SpinLattice) and not getattr(sampler, "LATTICE", False):
        raise UsageError(
            f"target {target.name!r} is a spin lattice: sample it with gibbs or swendsen-wang, not {sampler.NAME}"
        )
    if isinstance(target, TransitionKernel) and not getattr(sampler, "SIMULATES_CHAIN", False):
        raise UsageError(f"target {target.name!r} is a Markov chain's transition matrix: simulate it with markov")
    if isinstance(target, FiniteStates) and not getattr(sampler, "FINITE_STATES", False):
        raise UsageError(f"target {target.name!r} is a law on finitely many states: sample it with mh")

    counter = Counter()
    counted = counter.wrap(target)
    rng = ChainRandom(seed, ids)
    compiling = _compile_seconds(target)
    compiled_before = compiling()
    t0 = time.perf_counter()
    total = warmup + draws
    every = max(1, total // 100)
    # Many transitions in one compiled loop, where the sampler and the target can (HMC and NUTS on a JAX target):
    # in warm-up, the stretches between the adapter's events (metric updates, checks) with their updates, and each
    # event iteration alone, updated by the adapter (one compiled program for every transition of the run).
    loop = getattr(sampler, "run_iterations", None)
    warm = _WarmupRecord(keep_warmup and resume is None, n_chains, warmup, target.dim)
    if resume is None:
        with _where("at the starting points"):
            position = _starting_points(counted, seed, ids, init)
            state = sampler.init(position, counted)
        make_adapter = getattr(sampler, "make_adapter", None)
        adapter = (make_adapter(warmup, state, counted, rng, **params) if make_adapter is not None
                   else FixedParams(**params))  # fmt: skip
        quiet = getattr(adapter, "quiet", None)
        done = 0
        while done < warmup:
            if loop is not None and quiet is not None and adapter.warmup_kernel() is None:
                n, adaptation = quiet()
                with _where(f"iteration {done + 1}"):
                    batch = loop(rng, state, counted, max(n, 1), adaptation if n > 0 else None, **adapter.params())
                if batch is not None:
                    state = batch.state
                    if n > 0:
                        adapter.absorb(n, batch.adaptation)
                    else:
                        adapter.update(state, type(batch.info)(*(None if v is None else v[0] for v in batch.info)))
                    warm.add_batch(batch)
                    done = _advanced(progress, done, max(n, 1), every, total)
                    if checkpoint is not None:
                        checkpoint.poll(None)
                    continue
                loop = None  # the target has no loop
            kernel = adapter.warmup_kernel() or sampler.step
            with _where(f"iteration {done + 1}"):
                state, info = kernel(rng, state, counted, **adapter.params())
            adapter.update(state, info)
            warm.add(state, info)
            done += 1
            if progress is not None and done % every == 0:
                progress(done, total)
            if checkpoint is not None:
                checkpoint.poll(None)
        final = adapter.final()
        previous = None
    else:
        saved, previous = resume
        if previous.n_chains != n_chains or saved.done > draws:
            raise UsageError(f"{saved.source}: {previous.n_chains} chains with {saved.done} draws done cannot go on "
                             f"as {n_chains} chains to {draws} draws")  # fmt: skip
        state = saved.state(sampler.init(_saved_position(saved, target), target))
        final = saved.params()
        saved.restore_rng(rng)
        counter.restore(previous.attrs)
        done = warmup + saved.done
        if progress is not None:
            progress(done, total)
    t1 = time.perf_counter()
    evals_warmup = counter.warmup if resume is not None else (counter.density, counter.gradient, counter.likelihood)

    first = 0 if resume is None else resume[0].done
    first_kept = -(-first // thin)
    positions = np.empty((n_chains, kept - first_kept, target.dim))
    stats: dict[str, list[np.ndarray]] = {}
    k = 0

    def chains_so_far(iterations: int) -> Chains:
        """The run after ``iterations`` sampling iterations, with what it needs to go on."""
        n = -(-iterations // thin) - first_kept
        sample_stats = {name: np.stack(values[:n], axis=1) for name, values in stats.items()}
        attrs = _attrs(sampler, target, seed, ids, warmup, iterations, thin, final, evals_warmup, counter, state)
        out = Chains(target.to_variables(positions[:, :n]), sample_stats, attrs)
        if previous is not None:
            out = _joined(previous, out)
        elif warm.keep:
            out.warmup_posterior, out.warmup_sample_stats = warm.chains(target)
        if problem is not None:
            out.resume = sampler_section(problem, draws, iterations, state, final, rng)
        return out

    i = first
    while i < draws:
        if loop is not None:
            # batches end on multiples of BATCH, as in a run that never stopped, wherever this one went on
            n = min(draws - i, BATCH - i % BATCH)
            with _where(f"iteration {done + 1}"):
                batch = loop(rng, state, counted, n, None, **final)
            if batch is not None:
                state = batch.state
                for j in range(-i % thin, n, thin):
                    positions[:, k] = batch.draws[j]
                    for name, value in batch.info._asdict().items():
                        if value is not None:
                            stats.setdefault(name, []).append(value[j])
                    k += 1
                i += n
                done = _advanced(progress, done, n, every, total)
                if checkpoint is not None and i < draws:
                    checkpoint.poll(lambda n=i: chains_so_far(n))
                continue
            loop = None
        with _where(f"iteration {done + 1}"):
            state, info = sampler.step(rng, state, counted, **final)
        if i % thin == 0:
            positions[:, k] = state.position
            for name, value in info._asdict().items():
                if value is not None:
                    stats.setdefault(name, []).append(np.asarray(value))
            if "lp" not in info._fields:
                stats.setdefault("lp", []).append(np.asarray(state.log_density, dtype=float))
            k += 1
        i += 1
        done += 1
        if progress is not None and (done % every == 0 or done == total):
            progress(done, total)
        if checkpoint is not None and i < draws:
            checkpoint.poll(lambda n=i: chains_so_far(n))
    t2 = time.perf_counter()
    timings = Timings(round(t1 - t0, 6), round(t2 - t1, 6), round(t2 - t0, 6), round(compiling() - compiled_before, 6))
    return Run(chains_so_far(draws), timings)


def _attrs(sampler: SamplingAlgorithm, target: Target, seed: int, ids: tuple[int, ...], warmup: int, draws: int,
           thin: int, final: dict[str, Any], evals_warmup: tuple[int, int, int], counter: Counter,
           state: Any) -> dict[str, Any]:  # fmt: skip
    attrs: dict[str, Any] = {
        "sampler": getattr(sampler, "NAME", getattr(sampler, "__name__", "unknown")),
        "target": target.name,
        "target_options": dict(target.options),
        "seed": int(seed),
        "chains": len(ids),
        "chain_ids": list(ids),
        "warmup": warmup,
        "draws": draws,
        "thin": thin,
        "params": {name: _jsonable(value) for name, value in final.items()},
        "n_density_evals_warmup": evals_warmup[0],
        "n_gradient_evals_warmup": evals_warmup[1],
        "n_density_evals": counter.density - evals_warmup[0],
        "n_gradient_evals": counter.gradient - evals_warmup[1],
        "n_likelihood_evals_warmup": evals_warmup[2],
        "n_likelihood_evals": counter.likelihood - evals_warmup[2],
    }
    extra = getattr(sampler, "run_attrs", None)
    if extra is not None:
        attrs.update(extra(state, final))
    if isinstance(target, JudgedVariables):
        attrs["judge"] = list(target.judged_variables)
        attrs["judge_reason"] = target.judged_reason
    return attrs


def _saved_position(saved: SamplerResume, target: Target) -> np.ndarray:
    """The saved chains' positions, to build a template of the sampler's ``State`` (its values are replaced)."""
    x = saved.arrays.get("state__position")
    if x is None or x.ndim != 2 or x.shape[1] != target.dim:
        raise InputError(saved.source, f"resume section: no positions of dimension {target.dim} for the target")
    return np.array(x, dtype=float)


def _joined(previous: Chains, new: Chains) -> Chains:
    """The draws of ``previous`` followed by ``new`` (same chains), with ``new``'s attributes."""
    if set(previous.posterior) != set(new.posterior) or set(previous.sample_stats) != set(new.sample_stats):
        raise InputError(None, "the chains file to go on from has other variables than this run makes")
    return Chains(
        {n: np.concatenate([previous.posterior[n], a], axis=1) for n, a in new.posterior.items()},
        {n: np.concatenate([previous.sample_stats[n], a], axis=1) for n, a in new.sample_stats.items()},
        new.attrs, dict(new.coords), new.index_sep, dict(previous.warmup_posterior), dict(previous.warmup_sample_stats),
    )  # fmt: skip


class _WarmupRecord:
    """The warm-up draws and statistics, when kept (``keep_warmup``)."""

    def __init__(self, keep: bool, chains: int, warmup: int, dim: int) -> None:
        self.keep = keep and warmup > 0
        self.positions = np.empty((chains, warmup, dim)) if self.keep else None
        self.stats: dict[str, list[np.ndarray]] = {}
        self.t = 0

    def add(self, state: Any, info: Any) -> None:
        if not self.keep:
            return
        self.positions[:, self.t] = state.position  # type: ignore[index]
        fields = {name: value for name, value in info._asdict().items() if value is not None}
        fields.setdefault("lp", np.asarray(state.log_density, dtype=float))
        for name, value in fields.items():
            self.stats.setdefault(name, []).append(np.asarray(value))
        self.t += 1

    def add_batch(self, batch: Any) -> None:
        """The iterations of one compiled loop (``run_iterations``): their draws and statistics, iteration first."""
        if not self.keep:
            return
        for j in range(len(batch.draws)):
            self.positions[:, self.t] = batch.draws[j]  # type: ignore[index]
            for name, value in batch.info._asdict().items():
                if value is not None:
                    self.stats.setdefault(name, []).append(np.asarray(value[j]))
            self.t += 1

    def chains(self, target: Target) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Variables and the statistics every warm-up iteration reported (a warm-up kernel may change midway)."""
        stats = {n: np.stack(v, axis=1) for n, v in self.stats.items()
                 if len(v) == self.t and len({np.shape(x) for x in v}) == 1}  # fmt: skip
        return target.to_variables(self.positions), stats


#: Attributes that count evaluations: the run's total is the sum over blocks of chains.
_COUNTS = tuple(f"n_{kind}_evals{phase}" for kind in ("density", "gradient", "likelihood")
                for phase in ("_warmup", ""))


def concatenate(parts: Sequence[Chains]) -> Chains:
    """Chains of blocks of one run (``run(..., chain_ids=block)``) as one run, in the given order.

    Every array is concatenated along the chain axis; ``chains`` and the
    evaluation counts add up, ``chain_ids`` and every per-chain entry of
    ``params`` (a list with one item per chain of its block) concatenate; any
    other attribute must agree between the blocks. Blocks covering ``0 .. n-1``
    in order give exactly the :class:`Chains` of ``run(..., chains=n)``, and so
    the same chains file, byte for byte.

    Raises
    ------
    ValueError
        Blocks of different runs (an attribute other than those differs).
    """
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    attrs: dict[str, Any] = {}
    for key, value in first.attrs.items():
        values = [p.attrs.get(key) for p in parts]
        if key == "chains" or key in _COUNTS:
            attrs[key] = sum(values)
        elif key == "chain_ids":
            attrs[key] = [i for v in values for i in v]
        elif key == "params":
            attrs[key] = {name: _join_param(name, [v[name] for v in values], [p.n_chains for p in parts])
                          for name in value}
        elif any(v != value for v in values):
            raise ValueError(f"blocks of chains differ in attribute {key!r}: {values}")
        else:
            attrs[key] = value
    return Chains(
        {name: np.concatenate([p.posterior[name] for p in parts]) for name in first.posterior},
        {name: np.concatenate([p.sample_stats[name] for p in parts]) for name in first.sample_stats},
        attrs, dict(first.coords), first.index_sep,
        {name: np.concatenate([p.warmup_posterior[name] for p in parts]) for name in first.warmup_posterior},
        {name: np.concatenate([p.warmup_sample_stats[name] for p in parts]) for name in first.warmup_sample_stats},
        None if first.resume is None else join_sections([p.resume for p in parts]),  # type: ignore[misc]
    )  # fmt: skip


def _join_param(name: str, values: list[Any], sizes: list[int]) -> Any:
    # The adapter's final parameters are either shared (a number, a string, a flag)
    # or one entry per chain: a list as long as the block, in every block.
    if all(isinstance(v, list) and len(v) == n for v, n in zip(values, sizes, strict=True)):
        return [item for v in values for item in v]
    if any(v != values[0] for v in values):
        raise ValueError(f"blocks of chains differ in parameter {name!r}: {values}")
    return values[0]


#: Sampling iterations per call of a sampler's ``run_iterations`` (its loop returns their draws and statistics).
BATCH = 256


def _advanced(progress: Callable[[int, int], None] | None, done: int, n: int, every: int, total: int) -> int:
    """``done + n``, reporting progress when a multiple of ``every`` (or the end) was passed."""
    after = done + n
    if progress is not None and (after // every > done // every or after == total):
        progress(after, total)
    return after


def _compile_seconds(target: Target) -> Callable[[], float]:
    """The target's seconds of compiling so far, as a function (always 0 for a target that reports none)."""
    seconds = None if target.compiled is None else target.compiled.compile_seconds
    return seconds if seconds is not None else (lambda: 0.0)


@contextmanager
def _where(place: str) -> Iterator[None]:
    """Add ``place`` (``"iteration 12"``, 1-based, warm-up included) to a bad-input error.

    Past the start-up probe such errors come from a user's target (a function
    that raises or returns the wrong shape at another chain count or far into
    the run, :mod:`mcmc.core.targets.user`): this says where.
    """
    try:
        yield
    except InputError as exc:
        raise InputError(exc.source, f"{exc.message} ({place})") from None


def _starting_points(target: Target, seed: int, ids: tuple[int, ...], init: np.ndarray | None) -> np.ndarray:
    n = len(ids)
    if init is not None:
        x = np.asarray(init, dtype=float)
        if x.shape == (target.dim,):
            x = np.broadcast_to(x, (n, target.dim)).copy()
        if x.shape != (n, target.dim):
            raise InputError(
                "--init", f"initial point has shape {x.shape}; expected ({target.dim},) or ({n}, {target.dim})"
            )
        lp = np.asarray(target.log_density(x))
        if not np.all(np.isfinite(lp)):
            raise InputError("--init", "the log density is not finite at the initial point")
        return x
    # A separate stream family for starts, so redrawing a bad start for one
    # chain never shifts the numbers its sampler sees.
    init_rng = ChainRandom(seed, ids, stream=1)
    x = target.initial(init_rng, n)
    ok = np.isfinite(np.asarray(target.log_density(x)))
    for _ in range(INIT_ATTEMPTS - 1):
        if ok.all():
            break
        candidate = target.initial(init_rng, n)
        # Only chains still looking take a new candidate: chain i's start is the
        # first finite one in its own stream.
        bad = ~ok
        x[bad] = candidate[bad]
        ok[bad] = np.isfinite(np.asarray(target.log_density(candidate[bad])))
    if not ok.all():
        raise InputError(
            None,
            f"no starting point with finite log density after {INIT_ATTEMPTS} tries "
            f"(chains {[ids[i] for i in np.flatnonzero(~ok)]}); give one with --init",
        )
    return x


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
