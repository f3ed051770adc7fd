"""The shared guard against requests for absurd amounts of memory."""

from __future__ import annotations

import pytest

from mcmc.core import memory
from mcmc.core.errors import InputError


def test_limit_is_a_share_of_physical_memory(machine_16gib: None) -> None:
    assert memory.memory_limit() == int(0.8 * 16 * 2**30)
    memory.require_memory(10**9, 8, "a billion floats", "x.npy")  # 7.45 GiB: fits
    with pytest.raises(InputError) as info:
        memory.require_memory(10**10, 8, "shape (10000000000,) float64", "x.npy")
    assert info.value.source == "x.npy"
    assert info.value.message == (
        "shape (10000000000,) float64 needs 74.5 GiB, more than this machine can hold "
        "(limit 12.8 GiB, 80% of its memory)"
    )


def test_products_of_hostile_sizes_do_not_overflow(machine_16gib: None) -> None:
    with pytest.raises(InputError, match="needs 7.11e\\+15 PiB"):
        memory.require_memory(10**30, 8, "a header", None)


def test_physical_memory_is_known_here() -> None:
    assert memory.physical_memory() >= 2**28  # any machine that runs the suite has 256 MiB


@pytest.mark.parametrize(
    ("n", "text"), [(0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (1.5 * 2**30, "1.5 GiB"), (2**50, "1 PiB")]
)
def test_format_bytes(n: float, text: str) -> None:
    assert memory.format_bytes(n) == text
