"""One partially collapsed chain with its documents sharded across the workers of a Dask cluster.

Given phi, the documents of LDA are independent (theta integrated out), so the
token sweep of :mod:`mcmc.core.lda.partial` can run on any split of the corpus
(Magnusson, Jonsson, Villani & Broman 2018, "Sparse partially collapsed MCMC
for parallel inference in topic models"). Here the split is over machines:

* once, each shard of documents (contiguous, of about equal tokens) is sent to
  one worker and stays there;
* every sweep, the client draws phi | z exactly as a local run does (same
  Generator, same counter-based Gamma variates) and broadcasts it; each worker
  samples its shard's topics given phi and keeps them for the next sweep; the
  client gathers the new topics in the smallest integer type that holds K
  (one byte per token up to 256 topics) and carries on with its local code:
  the counts, the log joint and the running estimates.

Why the topics come back rather than each shard's topic-word counts: a
token's uniform is keyed by (sweep key, corpus position), so the shard draws
exactly what the whole corpus would; with the topics on the client every
float the run computes (log joint, estimates) is summed in the local order,
so the result is the local run's byte for byte whatever the number of
shards, and a shard lost with its worker is rebuilt from the client's copy
of its topics and re-run on another worker with the same phi and key. The
topics are also the smaller message: N bytes in all against a sparse K x V
table per shard; the broadcast of phi (8 V K bytes per worker) dominates
either way (``docs/scale-out.md`` has the figures and where it stops scaling).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcmc.core.errors import ScaleOutError
from mcmc.core.lda.kernels import common
from mcmc.core.lda.kernels.partial import partial_sweep
from mcmc.core.lda.partial import PartialChain, PartialSampler
from mcmc.core.lda.sampler import LdaChain, Problem, Task, doc_blocks, even_blocks

#: Times a sweep is run again after losing a worker before the run stops.
RETRIES = 3


@dataclass(frozen=True, eq=False)
class Shard:
    """Documents ``d0 .. d1 - 1`` of the corpus, as a worker holds them.

    ``doc_ptr`` int64 (n_docs + 1,) starts at 0; ``words`` int32 (n_tokens,);
    ``offset`` is the corpus position of ``words[0]``.
    """

    doc_ptr: np.ndarray
    words: np.ndarray
    offset: int
    d0: int
    d1: int

    @classmethod
    def cut(cls, doc_ptr: np.ndarray, words: np.ndarray, d0: int, d1: int) -> Shard:
        a, b = int(doc_ptr[d0]), int(doc_ptr[d1])
        return cls(np.ascontiguousarray(doc_ptr[d0:d1 + 1] - a), np.ascontiguousarray(words[a:b]), a, d0, d1)

    @property
    def tokens(self) -> slice:
        return slice(self.offset, self.offset + self.words.size)


def topic_dtype(n_topics: int) -> np.dtype:
    """The smallest unsigned integer type that holds topics 0 .. n_topics - 1."""
    return np.dtype(np.min_scalar_type(max(n_topics - 1, 0)))


def sample_shard(shard: Shard, z: np.ndarray, phi_wk: np.ndarray, alpha: float, key: np.uint64) -> np.ndarray:
    """One sweep of the shard's tokens given phi (V, K); returns the new topics in ``z``'s (compact) dtype.

    Runs on a worker. ``cphi`` is recomputed here from phi (a running sum
    along topics, in the order the client's :func:`~mcmc.core.lda.kernels.common.phi_normalize_chunks`
    adds them), so only phi travels.
    """
    cphi = np.cumsum(phi_wk, axis=1)
    z32 = z.astype(np.int32)
    partial_sweep(shard.doc_ptr, shard.words, z32, phi_wk, cphi, alpha, key, 0, shard.doc_ptr.size - 1, False,
                  shard.offset)
    return z32.astype(z.dtype)


class ShardedPartialChain(PartialChain):
    """A :class:`~mcmc.core.lda.partial.PartialChain` whose token sweep runs on the shards' workers."""

    def __init__(self, problem: Problem, rng: np.random.Generator, word_blocks: list[tuple[int, int]],
                 cluster: ShardCluster) -> None:
        super().__init__(problem, rng, [], word_blocks)
        self.cluster = cluster
        self.remote: list[Any] = [None] * len(cluster.shards)  # each shard's topics on its worker

    def sample_tasks(self, theta_key: np.uint64, key: np.uint64) -> list[Task]:
        return [(self._sample_remote, (key,))]

    def _sample_remote(self, key: np.uint64) -> None:
        self.remote = self.cluster.sweep(self.remote, self.z, self.g, self.p.alpha, key)


class ShardCluster:
    """The shards of a corpus placed on the workers of a ``distributed.Client``, and one sweep over them.

    Parameters
    ----------
    client
        A connected ``distributed.Client``.
    doc_ptr, words
        The corpus (as :class:`~mcmc.core.lda.sampler.Problem` holds it).
    n_topics
        K: the topics travel back as :func:`topic_dtype` (K).
    n_shards
        Shards (default: one per worker thread); each lives on one worker,
        assigned round robin.
    """

    def __init__(self, client: Any, doc_ptr: np.ndarray, words: np.ndarray, n_topics: int,
                 n_shards: int | None = None) -> None:
        self.client = client
        workers = sorted(client.scheduler_info()["workers"])
        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()) or 1
        n = int(n_shards) if n_shards else threads
        self.shards = [Shard.cut(doc_ptr, words, a, b) for a, b in doc_blocks(doc_ptr, n)]
        self.dtype = topic_dtype(n_topics)
        self.sweeps = 0
        self.bytes_out = 0  # phi broadcast and resent shards, per worker
        self.bytes_in = 0  # topics gathered
        # shard i lives on homes[i]; None once its worker died: then wherever the scheduler put it again
        self.homes: list[str | None] = [workers[i % len(workers)] for i in range(len(self.shards))]
        self.data = [client.scatter(s, workers=[w], hash=False) for s, w in zip(self.shards, self.homes, strict=True)]

    def sweep(self, remote: Sequence[Any], z: np.ndarray, phi_wk: np.ndarray, alpha: float,
              key: np.uint64) -> list[Any]:
        """Sample every shard's tokens given ``phi_wk``; write the new topics into ``z`` (N,) in place.

        ``remote`` holds each shard's topics from the last sweep on its worker
        (``None`` at the start). Returns the futures of the new topics, for the
        next sweep. ``z`` is written only once every shard has answered, so a
        worker lost anywhere in the sweep (while phi is broadcast, a shard
        sent, or a shard sampled) is met by sending every shard and its topics
        again from the client and running the whole sweep again with the same
        phi and key: the same result.
        """
        lost = _lost_worker_errors()
        for attempt in range(RETRIES + 1):
            try:
                if attempt:
                    remote = [None] * len(self.shards)
                    for i in range(len(self.shards)):
                        self._rehome(i)
                return self._sweep_once(remote, z, phi_wk, alpha, key)
            except lost as exc:
                if attempt == RETRIES:
                    raise ScaleOutError(
                        f"a sweep lost Dask workers {attempt + 1} times ({type(exc).__name__}); see the workers' logs"
                    ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _sweep_once(self, remote: Sequence[Any], z: np.ndarray, phi_wk: np.ndarray, alpha: float,
                    key: np.uint64) -> list[Any]:
        [phi] = self.client.scatter([phi_wk], broadcast=True, hash=False)
        self.bytes_out += phi_wk.nbytes
        futures = [self._submit(i, remote[i], z, phi, alpha, key) for i in range(len(self.shards))]
        new = [f.result() for f in futures]
        for shard, topics in zip(self.shards, new, strict=True):
            z[shard.tokens] = topics
            self.bytes_in += topics.nbytes
        self.sweeps += 1
        return futures

    def _submit(self, i: int, remote: Any, z: np.ndarray, phi: Any, alpha: float, key: np.uint64) -> Any:
        shard = self.shards[i]
        if remote is None:  # first sweep, or the worker holding the shard's topics died
            [remote] = self.client.scatter([z[shard.tokens].astype(self.dtype)], hash=False,
                                            **({} if self.homes[i] is None else {"workers": [self.homes[i]]}))
            self.bytes_out += shard.words.size * self.dtype.itemsize
        # pure=False: a fresh key per call (chains may sweep side by side on the same shards)
        where = {} if self.homes[i] is None else {"workers": [self.homes[i]], "allow_other_workers": True}
        return self.client.submit(sample_shard, self.data[i], remote, phi, alpha, key, pure=False, **where)

    def _rehome(self, i: int) -> None:
        """Send shard ``i`` again, to whichever live worker the scheduler picks.

        Not to a named worker: the scheduler may still list the dead one for a
        moment, and data pinned to it would wait for it.
        """
        if not self.client.scheduler_info()["workers"]:
            raise ScaleOutError("no Dask worker is left to take the lost shard")
        self.homes[i] = None
        self.data[i] = self.client.scatter(self.shards[i], hash=False)
        self.bytes_out += self.shards[i].words.nbytes + self.shards[i].doc_ptr.nbytes


def _lost_worker_errors() -> tuple[type[BaseException], ...]:
    """What ``Future.result()`` raises when a worker (and what it held) is gone."""
    from concurrent.futures import CancelledError

    from distributed.scheduler import KilledWorker

    return (KilledWorker, CancelledError, OSError, TimeoutError)


class ShardedPartialSampler(PartialSampler):
    """The ``partial`` method with every chain's token sweep on a :class:`ShardCluster`."""

    chain_class = ShardedPartialChain

    def __init__(self, cluster: ShardCluster) -> None:
        super().__init__()
        self.cluster = cluster

    def warm_up(self) -> None:
        PartialSampler().warm_up()  # the client's phi draw; workers compile (or load) the sweep on first use

    def chains(self, problem: Problem, rngs: list[np.random.Generator]) -> list[LdaChain]:
        word_blocks = even_blocks(common.n_word_chunks(problem.V), problem.threads)
        return [ShardedPartialChain(problem, rng, word_blocks, self.cluster) for rng in rngs]
