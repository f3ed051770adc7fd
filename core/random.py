"""Per-chain random streams: one seed, one independent Generator per chain.

Chain ``i`` of a run seeded with ``seed`` draws from
``Generator(PCG64(SeedSequence(seed, spawn_key=(i,))))``, which is exactly the
``i``-th child of ``SeedSequence(seed).spawn(n)`` for any ``n > i``. A chain's
numbers therefore depend only on the seed and its own index, never on how many
other chains run beside it: running chains 0-3 in one call gives the same bytes
as running chains 0-1 and 2-3 in two calls (the driver's ``chain_ids``). Every
sampler keeps that property by drawing all its randomness from a
:class:`ChainRandom` and adapting per chain.

Looping over ``chains`` Generators on every step would dominate the cost of a
cheap kernel, so each chain keeps a buffer per distribution (standard normal,
uniform, standard exponential) refilled in blocks from its own Generator. A
refill happens when *that chain's* buffer runs short, so what a chain receives
is still a function of its own request sequence only.

A run that stops and goes on later (``mcmc sample --resume``, checkpoints)
carries each chain's position in its stream as plain arrays
(:meth:`ChainRandom.get_state`, :meth:`ChainRandom.set_state`): the bit
generator's state and the unread values of every buffer. Restored, a chain
serves the same numbers it would have served had the run never stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

import numpy as np

_BLOCK = 4096  # values per refill per chain and distribution (at least 16 requests' worth)
KINDS = ("normal", "uniform", "exponential")  # the buffered distributions, in the order their state is stored
_MASK64 = (1 << 64) - 1


def entropy_seed() -> int:
    """A seed from OS entropy, for a run given none (recorded in its output so it can be repeated).

    The one place a seed is drawn rather than given: a non-negative integer
    below ``2**63`` (it fits a signed 64-bit attribute and a JSON number).
    """
    return int(np.random.SeedSequence().entropy % (2**63))  # type: ignore[operator]


def generator_state(gen: np.random.Generator) -> np.ndarray:
    """The state of a PCG64 ``gen`` as six unsigned 64-bit words (no pickles, no 128-bit JSON numbers).

    ``[state >> 64, state & mask, inc >> 64, inc & mask, has_uint32, uinteger]``;
    :func:`set_generator_state` puts it back.
    """
    st = gen.bit_generator.state
    if st.get("bit_generator") != "PCG64":
        raise ValueError(f"cannot store the state of a {st.get('bit_generator')} bit generator")
    s, inc = int(st["state"]["state"]), int(st["state"]["inc"])
    return np.array([s >> 64, s & _MASK64, inc >> 64, inc & _MASK64, int(st["has_uint32"]),
                     int(st["uinteger"])], dtype=np.uint64)  # fmt: skip


def set_generator_state(gen: np.random.Generator, words: np.ndarray) -> None:
    """Put back a state saved by :func:`generator_state` into the PCG64 ``gen``."""
    w = [int(v) for v in np.asarray(words, dtype=np.uint64).reshape(6)]
    gen.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
        "has_uint32": w[4],
        "uinteger": w[5],
    }


def generator(seed: int, key: tuple[int, ...]) -> np.random.Generator:
    """The Generator of stream ``key`` of a run seeded with ``seed``.

    ``Generator(PCG64(SeedSequence(seed, spawn_key=key)))``: chain ``i`` reads
    stream ``(i,)``, its second family of streams ``(i, stream)``. A sampler
    that wants one plain Generator per chain (the LDA samplers draw 64-bit keys
    for compiled kernels, not batches of variates) takes ``generator(seed, (i,))``,
    the same stream :class:`ChainRandom` serves chain ``i`` from.
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=key)))


class ChainRandom:
    """Independent random streams for a batch of chains, served as arrays.

    Parameters
    ----------
    seed
        The run's seed (a non-negative integer).
    chain_ids
        Global indices of the chains in this batch (default ``range(chains)``).
    chains
        Number of chains when ``chain_ids`` is not given.
    stream
        Optional extra key for a second, independent family of streams from the
        same seed (the driver draws starting points from ``stream=1`` so that
        retrying a bad start never shifts the sampling stream).

    Every method returns an array whose leading axis is the chain (or the
    chains selected by ``mask``), e.g. ``normal((dim,))`` has shape
    ``(chains, dim)``. Values come from each chain's own stream, in order.
    """

    def __init__(
        self,
        seed: int,
        chain_ids: Sequence[int] | None = None,
        *,
        chains: int | None = None,
        stream: int | None = None,
    ) -> None:
        if chain_ids is None:
            if chains is None:
                raise ValueError("give chain_ids or chains")
            chain_ids = range(chains)
        self.seed = int(seed)
        self.chain_ids = tuple(int(i) for i in chain_ids)
        if len(set(self.chain_ids)) != len(self.chain_ids) or any(i < 0 for i in self.chain_ids):
            raise ValueError(f"chain ids must be distinct non-negative integers, got {self.chain_ids}")
        self.generators = [
            generator(self.seed, (i,) if stream is None else (i, stream)) for i in self.chain_ids
        ]
        self._buffers: dict[str, _Buffer] = {}

    @property
    def chains(self) -> int:
        """Number of chains in this batch."""
        return len(self.chain_ids)

    def normal(self, size: int | tuple[int, ...] = (), mask: np.ndarray | None = None) -> np.ndarray:
        """Standard normal draws of shape ``(chains, *size)`` (or ``(mask.sum(), *size)``)."""
        return self._draw("normal", size, mask)

    def uniform(self, size: int | tuple[int, ...] = (), mask: np.ndarray | None = None) -> np.ndarray:
        """Uniform draws on [0, 1), shape ``(chains, *size)`` (or ``(mask.sum(), *size)``)."""
        return self._draw("uniform", size, mask)

    def exponential(self, size: int | tuple[int, ...] = (), mask: np.ndarray | None = None) -> np.ndarray:
        """Standard exponential draws, shape ``(chains, *size)`` (or ``(mask.sum(), *size)``)."""
        return self._draw("exponential", size, mask)

    def log_uniform(self, mask: np.ndarray | None = None) -> np.ndarray:
        """``log(u)`` for one uniform per chain, as ``-Exponential(1)`` (never ``-inf``)."""
        return -self._draw("exponential", (), mask)

    def reserve(self, kind: str, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """At least ``k`` unread values of ``kind`` for every chain (or those of ``mask``), for reading in place.

        ``kind`` is ``"normal"``, ``"uniform"`` or ``"exponential"``. Returns
        ``(data (chains, L), pos (chains,))``: chain ``c``'s next values are
        ``data[c, pos[c]:]``, the same values, in the same order, that the
        methods above would serve it. Report what each chain read with
        :meth:`advance` before drawing again (a chain outside ``mask`` reads none).
        """
        b = self._buffer(kind)
        rows = np.arange(self.chains) if mask is None else np.flatnonzero(np.asarray(mask, dtype=bool))
        self._refill(kind, b, rows, int(k))
        return b.data, b.pos.copy()

    def available(self, kind: str) -> np.ndarray:
        """Values of ``kind`` each chain has reserved and not read, ``(chains,)`` (after :meth:`reserve`).

        Compiled code that reads past them would read what no refill put there:
        a loop of transitions (:mod:`mcmc.core.jax`) stops before any chain's
        next transition could, and the transition's own :meth:`reserve` (a
        refill exactly when the chain runs short, as a draw would) goes first.
        """
        b = self._buffer(kind)
        return b.end - b.pos

    def advance(self, kind: str, used: np.ndarray) -> None:
        """Mark ``used[c]`` values of ``kind`` read by chain ``c`` (after :meth:`reserve`)."""
        b = self._buffer(kind)
        used = np.asarray(used, dtype=np.int64)
        if np.any(used < 0) or np.any(b.pos + used > b.end):
            raise ValueError(f"advance: {kind} reads beyond the reserved values")
        b.pos += used
        if used.size and np.any(used != used[0]):
            b.synced = False

    def subset(self, rows: np.ndarray) -> ChainSubset:
        """The streams of the chains ``rows`` (indices into this batch), as an object with this class's methods.

        What a user's function that draws for "every chain" (a proposal,
        ``proposal_sample(rng)``) is given when only some chains need a
        draw (those still looking in rejection sampling): each of them
        draws from its own stream, and the others' streams are left alone.
        """
        return ChainSubset(self, np.asarray(rows, dtype=np.int64))

    def get_state(self) -> dict[str, np.ndarray]:
        """Every chain's position in its stream, as plain arrays (see :meth:`set_state`).

        ``bit_generator`` ``(chains, 6)`` uint64 (:func:`generator_state`);
        for each kind in :data:`KINDS`, ``KIND`` ``(chains, L)`` float64, row
        ``c`` holding chain ``c``'s unread values first (zeros after), and
        ``KIND_unread`` ``(chains,)`` int64, how many. Values already served
        are not kept.

        A batch that has drawn uniforms only (the Bayesian network samplers)
        is stored with its generators moved back over the unread uniforms and
        empty buffers: the same numbers to come, in one form whatever the
        sizes of the blocks read so far (each uniform is one 64-bit output of
        the generator), so a run that stopped and went on stores what the
        run that never stopped does.
        """
        uniform_only = set(self._buffers) <= {"uniform"}
        if uniform_only and "uniform" in self._buffers:
            b = self._buffers["uniform"]
            for g, unread in zip(self.generators, b.end - b.pos, strict=True):
                if unread:
                    g.bit_generator.advance((1 << 128) - int(unread))  # back: PCG64's state cycles with period 2^128
            self._buffers = {}
        out = {"bit_generator": np.stack([generator_state(g) for g in self.generators])}
        for kind in KINDS:
            b = self._buffers.get(kind)
            unread = np.zeros(self.chains, dtype=np.int64) if b is None else b.end - b.pos
            data = np.zeros((self.chains, int(unread.max(initial=0))))
            if b is not None:
                for c in range(self.chains):
                    data[c, : unread[c]] = b.data[c, b.pos[c] : b.end[c]]
            out[kind] = data
            out[f"{kind}_unread"] = unread
        return out

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """Continue every chain from a state :meth:`get_state` returned (of a batch of as many chains).

        Raises
        ------
        ValueError
            Arrays missing or of the wrong shape.
        """
        words = np.asarray(state["bit_generator"])
        if words.shape != (self.chains, 6):
            raise ValueError(f"random state for {words.shape[0]} chains, expected {self.chains}")
        for g, w in zip(self.generators, words, strict=True):
            set_generator_state(g, w)
        self._buffers = {}
        for kind in KINDS:
            data, unread = np.asarray(state[kind], dtype=float), np.asarray(state[f"{kind}_unread"], dtype=np.int64)
            if data.ndim != 2 or data.shape[0] != self.chains or unread.shape != (self.chains,) \
                    or np.any(unread < 0) or np.any(unread > data.shape[1]):  # fmt: skip
                raise ValueError(f"random state: the {kind} buffer does not fit {self.chains} chains")
            if not unread.any():
                continue
            b = self._buffer(kind)
            for c in range(self.chains):
                b.put(c, data[c, : unread[c]])
            b.synced = bool(np.all(b.end == b.end[0]))

    # -- internals ---------------------------------------------------------

    def _buffer(self, kind: str) -> _Buffer:
        b = self._buffers.get(kind)
        if b is None:
            b = self._buffers[kind] = _Buffer(self.chains)
        return b

    def _refill(self, kind: str, b: _Buffer, rows: np.ndarray, k: int) -> None:
        """Make sure the chains ``rows`` have ``k`` unread values each."""
        short = rows[b.pos[rows] + k > b.end[rows]]
        for c in short:
            # The chain's unread values, then a fresh block of its own stream
            # whose length depends only on this request: the chain's sequence
            # of values never depends on what the other chains asked for.
            rest = b.data[c, b.pos[c] : b.end[c]].copy()
            # Small requests: blocks of 16 requests' worth; big ones (a deep NUTS tree): twice the request.
            fresh = self._fill(kind, self.generators[c], max(_BLOCK, 16 * k if k <= _BLOCK else 2 * k))
            b.put(c, np.concatenate([rest, fresh]))
        if short.size and short.size == self.chains:
            b.synced = bool(np.all(b.end == b.end[0]))
        elif short.size:
            b.synced = False

    def _fill(self, kind: str, gen: np.random.Generator, n: int) -> np.ndarray:
        if kind == "normal":
            return gen.standard_normal(n)
        if kind == "uniform":
            return gen.random(n)
        return gen.standard_exponential(n)

    def _draw(self, kind: str, size: int | tuple[int, ...], mask: np.ndarray | None) -> np.ndarray:
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        k = prod(shape)
        b = self._buffer(kind)
        if mask is None:
            if k == 0:
                return np.zeros((self.chains, *shape))
            if b.synced and b.pos[0] + k <= b.end[0]:
                # Fast path: every chain has read equally far, so a slice serves all.
                p = int(b.pos[0])
                b.pos += k
                return b.data[:, p : p + k].reshape(self.chains, *shape)
            rows = np.arange(self.chains)
        else:
            mask = np.asarray(mask)
            rows = np.flatnonzero(mask) if mask.dtype == bool else mask.astype(np.int64)
            if k == 0 or rows.size == 0:
                return np.zeros((rows.size, *shape))
            if rows.size < self.chains:
                b.synced = False
        self._refill(kind, b, rows, k)
        idx = b.pos[rows][:, None] + np.arange(k)
        out = b.data[rows[:, None], idx]
        b.pos[rows] += k
        return out.reshape(rows.size, *shape)


class ChainSubset:
    """Some chains of a :class:`ChainRandom` (see :meth:`ChainRandom.subset`): the same methods, for them only."""

    def __init__(self, parent: ChainRandom, rows: np.ndarray) -> None:
        self.parent, self.rows = parent, rows

    @property
    def chains(self) -> int:
        """Number of chains in the subset."""
        return int(self.rows.size)

    def normal(self, size: int | tuple[int, ...] = ()) -> np.ndarray:
        """Standard normal draws ``(subset chains, *size)``."""
        return self.parent.normal(size, mask=self.rows)

    def uniform(self, size: int | tuple[int, ...] = ()) -> np.ndarray:
        """Uniform draws on [0, 1), ``(subset chains, *size)``."""
        return self.parent.uniform(size, mask=self.rows)

    def exponential(self, size: int | tuple[int, ...] = ()) -> np.ndarray:
        """Standard exponential draws, ``(subset chains, *size)``."""
        return self.parent.exponential(size, mask=self.rows)

    def log_uniform(self) -> np.ndarray:
        """``log(u)`` for one uniform per chain of the subset."""
        return self.parent.log_uniform(mask=self.rows)


class _Buffer:
    """Pre-drawn values of one distribution: row ``c`` holds ``data[c, pos[c]:end[c]]`` unread."""

    def __init__(self, chains: int) -> None:
        self.data = np.empty((chains, 0))
        self.pos = np.zeros(chains, dtype=np.int64)
        self.end = np.zeros(chains, dtype=np.int64)
        # True while every chain has read the same amount from identically
        # long rows (no masked request since the last common refill).
        self.synced = True

    def put(self, c: int, values: np.ndarray) -> None:
        if values.size > self.data.shape[1]:
            wider = np.empty((self.data.shape[0], values.size))
            wider[:, : self.data.shape[1]] = self.data
            self.data = wider
        self.data[c, : values.size] = values
        self.pos[c] = 0
        self.end[c] = values.size
