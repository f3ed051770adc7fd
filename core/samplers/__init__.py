"""Samplers: one module per algorithm, each with ``State``, ``Info``, ``init`` and ``step``.

The protocol (BlackJAX style, vectorized over a leading chain axis)
-------------------------------------------------------------------
A sampler is a module (or any object) with

``NAME: str``
    The name recorded in the chains file (``"rwm"``).
``LATTICE: bool`` (optional)
    True for the samplers that may run on a spin lattice (a target
    implementing :class:`~mcmc.core.targets.protocols.SpinLattice`), the only
    ones the driver runs on such a target.
``SIMULATES_CHAIN: bool`` (optional)
    True for the sampler that simulates a finite Markov chain given by its
    transition matrix (:class:`~mcmc.core.targets.protocols.TransitionKernel`),
    the only one the driver runs on such a target.
``State``
    A NamedTuple whose first two fields are ``position (chains, dim)`` and
    ``log_density (chains,)``; gradient-based samplers add ``grad``.
``Info``
    A NamedTuple of per-chain arrays ``(chains,)`` named as ArviZ names sampler
    statistics (``acceptance_rate``, ``accepted``, ``diverging``, ``energy``,
    ``n_steps``, ``step_size``, ``n_evals``...). A field set to ``None`` is
    left out of the chains file.
``init(position, target) -> State``
    Evaluate what the kernel needs at ``position (chains, dim)``.
``step(rng, state, target, **params) -> (State, Info)``
    One transition for every chain; ``rng`` is a
    :class:`~mcmc.core.random.ChainRandom`. Parameters may be scalars or
    per-chain arrays ``(chains,)``.
``make_adapter(warmup, state, target, rng, **params) -> Adapter``
    Optional: the warm-up tuner (see :mod:`mcmc.core.samplers.adapt`), which
    also chooses the kernel warm-up runs (by default ``step``). Without it the
    driver runs warm-up with ``step`` and ``params`` unchanged.
``run_attrs(state, params) -> dict``
    Optional: extra JSON-serialisable attributes for the chains file, from
    the last state and the parameters used after warm-up.

Shared pieces live beside the algorithms: :mod:`~mcmc.core.samplers.base`
(:class:`~mcmc.core.samplers.base.DensityState`, the state and ``init`` of
every sampler that needs only the position and its log density; the one
Metropolis ``accept_reject``), :mod:`~mcmc.core.samplers.adapt` (the adapter
protocol, Robbins-Monro scale, running moments),
:mod:`~mcmc.core.samplers.proposals` (the t and log-normal proposals),
:mod:`~mcmc.core.samplers.leapfrog` and :mod:`~mcmc.core.samplers.hmc_adapt`
(HMC's integrator and step-size/mass adaptation), and
:mod:`~mcmc.core.samplers.driver` (the loop). :func:`get_sampler` resolves
the command-line names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from mcmc.core.random import ChainRandom
    from mcmc.core.targets.base import Target

# Command-line name -> the module of the algorithm (one per file).
SAMPLERS: dict[str, str] = {
    "rwm": "mcmc.core.samplers.rwm",
    "mh-independence": "mcmc.core.samplers.mh_independence",
    "mh-lognormal": "mcmc.core.samplers.mh_lognormal",
    "two-stage": "mcmc.core.samplers.two_stage",
    "slice": "mcmc.core.samplers.slice",
    "elliptical-slice": "mcmc.core.samplers.elliptical",
    "rejection": "mcmc.core.samplers.rejection",
    "isir": "mcmc.core.samplers.isir",
    "gibbs": "mcmc.core.samplers.gibbs",
    "swendsen-wang": "mcmc.core.samplers.swendsen_wang",
    "hmc": "mcmc.core.samplers.hmc",
    "hmc-gibbs": "mcmc.core.samplers.hmc_within_gibbs",
    "markov": "mcmc.core.samplers.markov",
    "nuts": "mcmc.core.samplers.nuts",
}
#: The samplers of a Bayesian network target (``NET.bif``), run by
#: :func:`mcmc.core.samplers.network_driver.sample_network` rather than the
#: driver: gibbs through each node's Markov blanket, rejection (logic sampling),
#: likelihood weighting. Names shared with :data:`SAMPLERS` mean the same algorithm.
NETWORK_SAMPLERS: tuple[str, ...] = ("gibbs", "rejection", "likelihood-weighting")


class SamplingAlgorithm(Protocol):
    """What the driver needs from a sampler module (see the module docstring).

    (Named as BlackJAX names it; ``Sampler`` in the diagnostics' report is
    the sampler-level facts of a diagnosis, another thing.)
    """

    NAME: str

    def init(self, position: np.ndarray, target: Target) -> Any: ...

    def step(self, rng: ChainRandom, state: Any, target: Target, **params: Any) -> tuple[Any, Any]: ...


def get_sampler(name: str) -> SamplingAlgorithm:
    """The sampler registered under ``name`` (``rwm``, ``slice``, ``hmc``, ...).

    Raises
    ------
    KeyError
        For an unknown name (the command line validates names first).
    """
    return import_module(SAMPLERS[name])  # type: ignore[return-value]
