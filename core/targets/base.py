"""The target distribution every sampler draws from.

A :class:`Target` is a log density on an unconstrained space ``R^dim``,
vectorized over a leading chain axis, plus what the samplers and the chains
file need around it: coordinate names, how coordinates group into the
variables of the chains file, exact moments where they are known, overdispersed
starting points, and for two-stage Metropolis-Hastings the prior and
likelihood factors of the log density. What only some samplers need (full
conditionals, a spin lattice) is not here: a target offers it by
implementing a protocol of :mod:`mcmc.core.targets.protocols`.

Sampling space and reported space
---------------------------------
Samplers move in the unconstrained sampling space (``log_density`` includes
any Jacobian). ``transform`` maps a sampling-space point to the reported values
(``tau = exp(log_tau)``, ``theta = expit(logit_theta)``, the centred
parameters of a non-centred model), which is what the chains file holds.
``names``, ``variables``, ``mean`` and ``sd`` all describe the *reported*
values, flattened in ``names`` order (row-major within a variable). Without a
``transform`` the two spaces coincide.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np

from mcmc.core.chains import scalar_names

if TYPE_CHECKING:
    from mcmc.core.compiled import CompiledPaths
    from mcmc.core.random import ChainRandom

Array = np.ndarray
VectorFn = Callable[[Array], Array]


@dataclass(frozen=True, eq=False)
class Target:
    """A log density vectorized over chains, with the metadata around it.

    Parameters
    ----------
    name
        Registry name (``"gaussian"``) or the user file (``"model.py:target"``).
    dim
        Dimension of the sampling space.
    log_density
        ``x (chains, dim) -> (chains,)``: log density up to a constant, ``-inf``
        outside the support; includes the Jacobian of any transform.
    grad_log_density
        Optional ``x (chains, dim) -> (chains, dim)``.
    names
        One name per *reported* coordinate (``"theta[0]"``); defaults to
        ``x[0] .. x[dim-1]``.
    variables
        ``((name, shape), ...)`` grouping the reported coordinates, in order,
        into the variables of the chains file; defaults to one variable ``x``
        of shape ``(dim,)``.
    mean, sd
        Exact posterior mean and standard deviation of each reported
        coordinate (``(len(names),)``), or ``None`` where unknown.
    initial_point
        ``(rng: ChainRandom, chains) -> (chains, dim)`` overdispersed starts in
        the sampling space; defaults to ``Uniform(-2, 2)`` per coordinate, as
        Stan does.
    log_prior, log_likelihood
        Optional split ``log_density = log_prior + log_likelihood`` (each
        ``(chains, dim) -> (chains,)``; the Jacobian belongs to the prior) used
        by two-stage Metropolis-Hastings.
    transform
        Optional ``x (..., dim) -> (..., len(names))`` from sampling space to
        reported values.
    value_and_grad_fn
        Optional fused ``x -> (log_density, grad)`` when computing both at
        once is cheaper; :meth:`value_and_grad` falls back to two calls.
    compiled
        Optional :class:`~mcmc.core.compiled.CompiledPaths`: kernels
        compiled around the target's numba point function (a leapfrog path
        with the signature and result of
        :func:`mcmc.core.samplers.leapfrog.integrate` less its first argument,
        and a NUTS transition); HMC, HMC within Gibbs and NUTS use them when present.
    options
        The keyword options the target was built with, recorded in the chains
        file so that ``get_target(name, **options)`` rebuilds the same target.
    """

    name: str
    dim: int
    log_density: VectorFn
    grad_log_density: VectorFn | None = None
    names: tuple[str, ...] = ()
    variables: tuple[tuple[str, tuple[int, ...]], ...] = ()
    mean: Array | None = None
    sd: Array | None = None
    initial_point: Callable[[ChainRandom, int], Array] | None = None
    log_prior: VectorFn | None = None
    log_likelihood: VectorFn | None = None
    transform: VectorFn | None = None
    value_and_grad_fn: Callable[[Array], tuple[Array, Array]] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    compiled: CompiledPaths | None = None

    def __post_init__(self) -> None:
        if not self.names:
            object.__setattr__(self, "names", tuple(f"x[{i}]" for i in range(self.dim)))
        if not self.variables:
            object.__setattr__(self, "variables", (("x", (len(self.names),)),))
        size = sum(prod(shape) for _, shape in self.variables)
        if size != len(self.names):
            raise ValueError(f"variables cover {size} coordinates but there are {len(self.names)} names")
        for attr in ("mean", "sd"):
            value = getattr(self, attr)
            if value is not None:
                value = np.asarray(value, dtype=float)
                if value.shape != (len(self.names),):
                    raise ValueError(f"{attr} has shape {value.shape}; expected ({len(self.names)},)")
                object.__setattr__(self, attr, value)

    @property
    def has_grad(self) -> bool:
        return self.grad_log_density is not None or self.value_and_grad_fn is not None

    @property
    def n_reported(self) -> int:
        """Number of reported coordinates (``len(names)``)."""
        return len(self.names)

    def value_and_grad(self, x: Array) -> tuple[Array, Array]:
        """Log density ``(chains,)`` and its gradient ``(chains, dim)`` at ``x (chains, dim)``."""
        if self.value_and_grad_fn is not None:
            return self.value_and_grad_fn(x)
        if self.grad_log_density is None:
            raise ValueError(f"target {self.name!r} has no gradient")
        return self.log_density(x), self.grad_log_density(x)

    def initial(self, rng: ChainRandom, chains: int) -> Array:
        """Starting points ``(chains, dim)``: ``initial_point`` or Stan's ``Uniform(-2, 2)``."""
        if self.initial_point is not None:
            return np.asarray(self.initial_point(rng, chains), dtype=float).reshape(chains, self.dim)
        return 4.0 * rng.uniform((self.dim,)) - 2.0

    def report(self, x: Array) -> Array:
        """Reported values ``(..., len(names))`` of sampling-space points ``x (..., dim)``."""
        return x if self.transform is None else np.asarray(self.transform(x))

    def to_variables(self, draws: Array) -> dict[str, Array]:
        """Split draws ``(chain, draw, dim)`` (sampling space) into chains-file variables.

        Returns ``{name: (chain, draw, *shape)}`` of reported values; a scalar
        variable (shape ``()``) becomes ``(chain, draw)``.
        """
        values = self.report(np.asarray(draws, dtype=float))
        out: dict[str, Array] = {}
        start = 0
        for vname, shape in self.variables:
            n = prod(shape)
            out[vname] = np.ascontiguousarray(values[..., start : start + n].reshape(*values.shape[:-1], *shape))
            start += n
        return out


def flat_names(variables: tuple[tuple[str, tuple[int, ...]], ...]) -> tuple[str, ...]:
    """Coordinate names ``mu, theta[0], theta[1], ..., L[0, 1]`` for ``variables`` (:func:`scalar_names`)."""
    return tuple(name for vname, shape in variables for name in scalar_names(vname, shape))
