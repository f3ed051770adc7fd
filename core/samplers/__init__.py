"""Samplers: one module per algorithm, each with ``State``, ``Info``, ``init`` and ``step``.

The protocol (BlackJAX style, vectorized over a leading chain axis)
-------------------------------------------------------------------
A sampler is a module (or any object) with

``DECLARATION``, ``NAME: str``
    Its entry in :mod:`~mcmc.core.samplers.registry`, and the name recorded
    in the chains file (``"rwm"``), taken from it.
``LATTICE: bool`` (optional)
    True for the samplers that may run on a spin lattice (a target
    implementing :class:`~mcmc.core.targets.protocols.SpinLattice`), the only
    ones the driver runs on such a target.
``SIMULATES_CHAIN: bool`` (optional)
    True for the sampler that simulates a finite Markov chain given by its
    transition matrix (:class:`~mcmc.core.targets.protocols.TransitionKernel`),
    the only one the driver runs on such a target.
``FINITE_STATES: bool`` (optional)
    True for the sampler of a law on finitely many states known by its
    weights (:class:`~mcmc.core.targets.protocols.FiniteStates`), the only
    one the driver runs on such a target.
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
``prepare(target, **params) -> None``
    Optional: read and check, before any work, what the settings name (mh's
    ``proposal_matrix`` file), so that a bad one is refused before a run, or
    a comparison's first sampler, starts.
``make_adapter(warmup, state, target, rng, **params) -> Adapter``
    Optional: the warm-up tuner (see :mod:`mcmc.core.samplers.adapt`), which
    also chooses the kernel warm-up runs (by default ``step``). Without it the
    driver runs warm-up with ``step`` and ``params`` unchanged.
``run_attrs(state, params) -> dict``
    Optional: extra JSON-serialisable attributes for the chains file, from
    the last state and the parameters used after warm-up.

The registry
------------
:mod:`~mcmc.core.samplers.registry` declares every sampler once (name,
module, summary, settings with their help and ranges; see there why a module
of its own). Here it is read as two tables by target kind,
:data:`SAMPLERS` (density targets, run by the driver) and
:data:`NETWORK_SAMPLERS` (Bayesian networks), name -> declaration; a
module is imported only when :func:`get_sampler` asks for it, so importing
this package costs no NumPy (``mcmc --help`` reads the registry).
:func:`sampler_names` is every name once (the ``--sampler`` choices),
:func:`find` the declaration a name has on a kind of target and
:func:`setting_named` a setting by its name.

Shared pieces live beside the algorithms: :mod:`~mcmc.core.samplers.base`
(:class:`~mcmc.core.samplers.base.DensityState`, the state and ``init`` of
every sampler that needs only the position and its log density; the one
Metropolis ``accept_reject``), :mod:`~mcmc.core.samplers.adapt` (the adapter
protocol, Robbins-Monro scale, running moments),
:mod:`~mcmc.core.samplers.proposals` (the t and log-normal proposals),
:mod:`~mcmc.core.samplers.leapfrog` and :mod:`~mcmc.core.samplers.hmc_adapt`
(HMC's integrator and step-size/mass adaptation), and
:mod:`~mcmc.core.samplers.driver` (the loop).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

from mcmc.core.errors import UsageError
from mcmc.core.samplers.registry import DECLARATIONS, DENSITY, NETWORK, Declaration, Setting

if TYPE_CHECKING:
    import numpy as np

    from mcmc.core.random import ChainRandom
    from mcmc.core.targets.base import Target

#: Samplers of a density target (a :class:`~mcmc.core.targets.base.Target`), run by the driver: name -> declaration.
SAMPLERS: dict[str, Declaration] = {d.name: d for d in DECLARATIONS if d.kind == DENSITY}
#: The samplers of a Bayesian network target (``NET.bif``), run by
#: :func:`mcmc.core.networks.driver.sample_network` rather than the
#: driver: gibbs through each node's Markov blanket, rejection (logic sampling),
#: likelihood weighting. Names shared with :data:`SAMPLERS` mean the same algorithm.
NETWORK_SAMPLERS: dict[str, Declaration] = {d.name: d for d in DECLARATIONS if d.kind == NETWORK}
_BY_KIND = {DENSITY: SAMPLERS, NETWORK: NETWORK_SAMPLERS}


class SamplingAlgorithm(Protocol):
    """What the driver needs from a sampler module (see the module docstring).

    (Named as BlackJAX names it; ``Sampler`` in the diagnostics' report is
    the sampler-level facts of a diagnosis, another thing.)
    """

    NAME: str

    def init(self, position: np.ndarray, target: Target) -> Any: ...

    def step(self, rng: ChainRandom, state: Any, target: Target, **params: Any) -> tuple[Any, Any]: ...


def get_sampler(name: str, kind: str = DENSITY) -> SamplingAlgorithm:
    """The module of the sampler registered under ``name`` (``rwm``, ``slice``, ``hmc``, ...) for ``kind`` targets.

    Raises
    ------
    KeyError
        For an unknown name (the command line validates names first).
    """
    return import_module(_BY_KIND[kind][name].module)  # type: ignore[return-value]


def sampler_names() -> list[str]:
    """Every registered name once, in the registry's order (the ``--sampler`` choices)."""
    return list(dict.fromkeys(d.name for d in DECLARATIONS))


def find(name: str, kind: str = DENSITY) -> Declaration | None:
    """The declaration of ``name`` for ``kind`` targets, else for the other kind, else ``None``.

    The command line checks settings with it before it knows whether the
    sampler suits the target: a sampler of the other kind is refused later,
    by the run, with its own message.
    """
    for table in (_BY_KIND[kind], *(t for k, t in _BY_KIND.items() if k != kind)):
        if name in table:
            return table[name]
    return None


def setting_named(name: str) -> Setting | None:
    """The setting ``name`` (``step_size``) as the first sampler taking it declares it, or ``None``.

    Its help, type, range and choices are the same for every sampler that
    takes it (only the default shown differs).
    """
    return next((x for d in DECLARATIONS for x in d.settings if x.name == name), None)


def check_applies(name: str, params: Any, kind: str = DENSITY, chosen: str = "") -> None:
    """Refuse tuning ``params`` (kernel keywords) that sampler ``name`` does not take.

    The command line checks them when ``--sampler`` is given; a run whose
    sampler is the target's default (chosen once the target is built: a user
    file with or without a gradient) checks them here. ``chosen`` says how the
    sampler was chosen, for the message.

    Raises
    ------
    UsageError
        ``--width does not apply to --sampler hmc (the default for ...)``.
    """
    declaration = find(name, kind)
    for key in params:
        if declaration is None or declaration.setting(key) is None:
            setting = setting_named(key)
            flag = setting.flag if setting is not None else f"-P {key.replace('_', '-')}"
            raise UsageError(f"{flag} does not apply to --sampler {name}{chosen}")
