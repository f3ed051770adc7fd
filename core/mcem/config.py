"""The settings of a Monte Carlo EM run (:class:`McemSettings`) and their defaults.

Kept free of NumPy so the command line can read the defaults for its help
while ``mcmc --help`` stays instant; :mod:`mcmc.core.mcem.em` runs them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class McemSettings:
    """The settings of a Monte Carlo EM run.

    Attributes
    ----------
    iterations
        EM iterations (E-step and M-step), ``>= 1``.
    draws, growth
        Draws of the latents in the first E-step (all chains together), and
        the factor by which they grow each iteration: ``m_t = ceil(draws growth^t)``
        (the defaults give 100 draws at first and about 20,000 by iteration 30).
    chains, warmup
        Chains of each E-step, and the sampler's warm-up iterations before
        every E-step's draws (each E-step starts where the last one stopped,
        so a short warm-up suffices to re-tune an adaptive sampler).
    sampler
        The E-step's sampler (a registered name); ``None``: :func:`mcmc.core.mcem.em.default_sampler`.
    params
        The sampler's settings (``{"step_size": 0.1}``).
    seed
        The run's seed; ``None``: one from OS entropy, recorded in the result.
    """

    iterations: int = 30
    draws: int = 100
    growth: float = 1.2
    chains: int = 4
    warmup: int = 100
    sampler: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = 1

    def schedule(self) -> tuple[int, ...]:
        """The draws of each E-step, ``ceil(draws growth^t)`` for ``t = 0 .. iterations - 1``."""
        # the tolerance keeps an exact product (100 x 1.2^0) from rounding up past an integer
        return tuple(math.ceil(self.draws * self.growth**t - 1e-9) for t in range(self.iterations))
