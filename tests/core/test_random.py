"""ChainRandom: per-chain streams that do not depend on the batch."""

from __future__ import annotations

import numpy as np
import pytest

from mcmc.core.random import ChainRandom


def test_streams_are_the_spawned_children_of_the_seed() -> None:
    children = np.random.SeedSequence(42).spawn(5)
    rng = ChainRandom(42, [1, 4])
    for row, i in enumerate((1, 4)):
        ref = np.random.Generator(np.random.PCG64(children[i])).standard_normal(3)
        assert rng.generators[row].standard_normal(3).tobytes() == ref.tobytes()


def _session(rng: ChainRandom, steps: int) -> list[np.ndarray]:
    """A mixed request sequence; masks depend on the values, as in slice sampling."""
    out = []
    for t in range(steps):
        u = rng.uniform()
        out.append(u)
        out.append(rng.normal((3,)))
        mask = u > 0.5
        out.append(rng.exponential((2,), mask=mask))
        if t % 50 == 0:
            out.append(rng.normal((5000,)))  # a request larger than a buffer block
    return out


def test_batch_invariance_with_masks_and_large_requests() -> None:
    whole = _session(ChainRandom(7, chains=4), 300)
    part = _session(ChainRandom(7, [2, 3]), 300)
    # Compare the rows of chains 2 and 3; masked draws are compared by chain.
    w_iter, p_iter = iter(whole), iter(part)
    for t in range(300):
        uw, up = next(w_iter), next(p_iter)
        assert uw[2:].tobytes() == up.tobytes()
        assert next(w_iter)[2:].tobytes() == next(p_iter).tobytes()
        ew, ep = next(w_iter), next(p_iter)
        # Rows of ew are the masked chains of {0..3}; keep those that are 2 or 3.
        rows = np.flatnonzero(uw > 0.5)
        assert ew[rows >= 2].tobytes() == ep.tobytes()
        if t % 50 == 0:
            assert next(w_iter)[2:].tobytes() == next(p_iter).tobytes()


def test_shapes_and_distributions() -> None:
    rng = ChainRandom(1, chains=3)
    assert rng.normal().shape == (3,)
    assert rng.normal((2, 4)).shape == (3, 2, 4)
    assert rng.uniform(5, mask=np.array([True, False, True])).shape == (2, 5)
    assert rng.exponential((0,)).shape == (3, 0)
    u = rng.uniform((20_000,))
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    z = rng.normal((20_000,))
    assert abs(z.std() - 1) < 0.02
    e = rng.exponential((20_000,))
    assert abs(e.mean() - 1) < 0.03 and (rng.log_uniform() <= 0).all()


def test_streams_differ_between_chains_seeds_and_purposes() -> None:
    a = ChainRandom(1, chains=2).normal((4,))
    assert a[0].tobytes() != a[1].tobytes()
    assert ChainRandom(2, chains=2).normal((4,)).tobytes() != a.tobytes()
    assert ChainRandom(1, chains=2, stream=1).normal((4,)).tobytes() != a.tobytes()


def test_bad_chain_ids() -> None:
    with pytest.raises(ValueError):
        ChainRandom(1, [0, 0])
    with pytest.raises(ValueError):
        ChainRandom(1)


def test_values_read_in_place_are_the_values_served() -> None:
    # Compiled code (the NUTS tree) reads reserved values in place and reports
    # how many each chain read: the chains must see the same sequence as when
    # the same numbers are drawn one request at a time, before and after.
    def reads(in_place: bool) -> list[np.ndarray]:
        rng = ChainRandom(11, chains=3)
        out = [rng.exponential(mask=np.array([True, False, True]))]
        for t in range(40):
            used = np.array([t % 5, (3 * t) % 7, 0]) * 100  # uneven, some requests cross a block
            if in_place:
                data, pos = rng.reserve("exponential", 700)
                out += [data[c, pos[c] : pos[c] + used[c]].copy() for c in range(3)]
                rng.advance("exponential", used)
            else:
                out += [rng.exponential((int(used[c]),), mask=np.array([c])).ravel() for c in range(3)]
            out.append(rng.exponential())
        return out

    a, b = reads(True), reads(False)
    assert len(a) == len(b) and all(x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))


def test_reading_beyond_what_was_reserved_is_refused() -> None:
    rng = ChainRandom(1, chains=2)
    _, pos = rng.reserve("uniform", 10)
    with pytest.raises(ValueError, match="beyond"):
        rng.advance("uniform", np.array([5, 10**6]))
