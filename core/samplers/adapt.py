"""Warm-up adaptation: the adapter protocol, Robbins-Monro scale tuning, running moments.

The driver asks a sampler for an adapter at the start of warm-up,
``adapter = sampler.make_adapter(warmup, state, target, rng, **params)``, then
on every warm-up iteration steps with the adapter's kernel,
``(adapter.warmup_kernel() or sampler.step)(rng, state, target, **adapter.params())``,
and reports back with ``adapter.update(state, info)``; after warm-up it
samples with ``sampler.step`` and ``adapter.final()``. So warm-up is the
adapter's business, as BlackJAX's window adaptation drives its kernel: an
adapter may run another kernel to learn what the sampler needs (elliptical
slice, rejection and i-SIR run slice sampling first), and a sampler's
``step`` implements its own algorithm only. Parameters are per chain (arrays
``(chains,)``): chains never pool information, so a chain's draws do not
depend on which other chains ran beside it.

:class:`RobbinsMonroScale` tunes a proposal scale ``s`` on the log scale,
``log s_{t+1} = log s_t + gamma_t (alpha_t - alpha*)`` with gain
``gamma_t = (t + 1)^(-0.6)`` and ``alpha_t`` the acceptance probability of
iteration ``t`` (Robbins & Monro 1951; Andrieu & Thoms 2008, "A tutorial on
adaptive MCMC", Algorithm 4). The scale used after warm-up is the
Polyak-Ruppert average of ``log s`` over the second half of warm-up, which is
far less noisy than the last iterate. Targets: 0.234 for ``dim > 1`` (Roberts,
Gelman & Gilks 1997), 0.44 in one dimension (Gelman, Roberts & Gilks 1996).

Given an initial ``metric`` it also learns a diagonal proposal shape, as the
adaptive Metropolis of Haario, Saksman & Tamminen (2001) learns a covariance,
but per chain and frozen after warm-up: warm-up is cut into windows ending at
10%, 20%, 40% and 80% of it; at each window end the chain's draws in that
window give a variance per coordinate (regularised as Stan regularises its
mass matrix, ``(n / (n + 5)) var + 1e-3 (5 / (n + 5))``), the proposal becomes
``s * sqrt(var) * z`` and the scale adaptation restarts from
``2.38 / sqrt(dim)``. The scale used after warm-up is averaged over the last
tenth of warm-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

#: A transition ``step(rng, state, target, **params) -> (state, info)`` (see :mod:`mcmc.core.samplers`).
Step = Callable[..., tuple[Any, Any]]

# Ends of the metric-learning windows, as fractions of warm-up: each window's
# draws (taken with the shape learnt from the one before) give the next shape;
# doubling lengths, as Stan's slow windows, let a badly scaled start recover
# geometrically. The last fifth of warm-up tunes the scale alone.
METRIC_WINDOW_ENDS = (0.1, 0.2, 0.4, 0.8)


class Adapter(Protocol):
    """Warm-up tuner of a kernel's parameters (per chain), and the kernel warm-up runs.

    Subclass it to inherit :meth:`warmup_kernel` (the sampler's own step).
    """

    def warmup_kernel(self) -> Step | None:
        """The transition for the next warm-up iteration, called with :meth:`params`.

        ``None`` (the default) means the sampler's own ``step``; an adapter
        that learns from another kernel's draws returns that kernel's step.
        """
        return None

    def params(self) -> dict[str, Any]:
        """Keyword parameters for the next warm-up transition."""
        ...

    def update(self, state: Any, info: Any) -> None:
        """Learn from the iteration just done."""
        ...

    def final(self) -> dict[str, Any]:
        """Keyword parameters for the sampling phase."""
        ...


class FixedParams(Adapter):
    """The adapter of a kernel with nothing to tune: always ``params``."""

    def __init__(self, **params: Any) -> None:
        self._params = params

    def params(self) -> dict[str, Any]:
        return self._params

    def update(self, state: Any, info: Any) -> None:
        pass

    def final(self) -> dict[str, Any]:
        return self._params


def default_scale(dim: int) -> float:
    """``2.38 / sqrt(dim)``: the optimal random-walk scale for a standard Gaussian target (Gelman et al. 1996)."""
    return 2.38 / np.sqrt(dim)


def per_chain_scale(scale: Any, chains: int, dim: int) -> np.ndarray:
    """A proposal scale as ``(chains,)``: scalar or per chain, ``None`` for :func:`default_scale`."""
    return np.broadcast_to(np.asarray(default_scale(dim) if scale is None else scale, dtype=float), (chains,))


class Welford:
    """Running per-chain mean and sum of squared deviations (Welford 1962).

    Welford, B. P. (1962). Note on a method for calculating corrected sums of
    squares and products. *Technometrics* 4, 419-420.

    Parameters
    ----------
    shape
        ``(chains, dim)``: one running mean and ``m2`` per chain and coordinate;
        ``n`` is shared because every chain adds one draw at a time.
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.n = 0
        self.mean = np.zeros(shape)
        self.m2 = np.zeros(shape)

    def add(self, x: np.ndarray) -> None:
        """Add one draw per chain, ``x (chains, dim)``."""
        self.n += 1
        delta = x - self.mean
        self.mean = self.mean + delta / self.n
        self.m2 = self.m2 + delta * (x - self.mean)

    def sd(self) -> np.ndarray:
        """Sample standard deviation ``sqrt(m2 / (n - 1))``, shape ``(chains, dim)`` (needs ``n >= 2``)."""
        return np.sqrt(self.m2 / (self.n - 1))

    def regularized_variance(self, *, scale_first: bool = False) -> np.ndarray:
        """Stan's shrunk variance ``n/(n+5) var + 1e-3 * 5/(n+5)``, shape ``(chains, dim)``.

        The shrinkage towards 1e-3 keeps a short window (or a chain that barely
        moved) from producing a zero or wildly small variance. ``scale_first``
        computes ``(n/(n+5) m2) / (n-1)`` instead of ``n/(n+5) (m2 / (n-1))``:
        equal up to rounding, kept for :class:`RobbinsMonroScale`, which has
        always rounded that way (same seed, same bytes).
        """
        n = float(self.n)
        shrink, floor = n / (n + 5.0), 1e-3 * (5.0 / (n + 5.0))
        if n < 2:
            return np.full_like(self.m2, floor)
        if scale_first:
            return shrink * self.m2 / (n - 1.0) + floor
        return shrink * (self.m2 / (n - 1.0)) + floor


def optimal_acceptance(dim: int) -> float:
    """0.44 in one dimension, 0.234 above (optimal random-walk scaling)."""
    return 0.44 if dim == 1 else 0.234


class RobbinsMonroScale(Adapter):
    """Per-chain Robbins-Monro tuning of the proposal scale toward an acceptance rate.

    Parameters
    ----------
    warmup
        Number of warm-up iterations.
    shape
        ``(chains, dim)``, the shape of the chains' positions.
    scale
        Initial scale, scalar or ``(chains,)``; default :func:`default_scale`.
    target_accept
        Acceptance probability to reach; default :func:`optimal_acceptance`.
    metric
        Initial diagonal proposal shape, ``(dim,)`` or ``(chains, dim)``, to be
        learnt (see the module docstring).
    adapt_metric
        Without a ``metric``, learn one from ones when ``dim > 1``; else tune
        the scale only.
    name
        Keyword under which the scale is passed to ``step`` (``"scale"``).
    extra
        Other keyword parameters passed through unchanged.
    """

    def __init__(
        self,
        warmup: int,
        shape: tuple[int, int],
        scale: float | np.ndarray | None = None,
        target_accept: float | None = None,
        *,
        metric: Any = None,
        adapt_metric: bool = False,
        name: str = "scale",
        **extra: Any,
    ) -> None:
        chains, dim = shape
        if scale is None:
            scale = default_scale(dim)
        if target_accept is None:
            target_accept = optimal_acceptance(dim)
        if metric is not None:
            metric = np.broadcast_to(np.asarray(metric, dtype=float), shape).copy()
        elif adapt_metric and dim > 1:
            metric = np.ones(shape)
        self.warmup = warmup
        self.target_accept = target_accept
        self.name = name
        self.extra = extra
        self.log_scale = np.broadcast_to(np.log(np.asarray(scale, dtype=float)), (chains,)).copy()
        self.t = 0  # iterations since the (last) start of scale adaptation
        self.done = 0  # warm-up iterations so far
        self._sum = np.zeros(chains)
        self._n = 0
        # Diagonal shape: learnt when an initial metric (chains, dim) is given.
        self.metric = metric
        learn = metric is not None and warmup >= 40
        self._ends = sorted({int(f * warmup) for f in METRIC_WINDOW_ENDS}) if learn else []
        self._window: Welford | None = None

    def params(self) -> dict[str, Any]:
        out = {**self.extra, self.name: np.exp(self.log_scale)}
        if self.metric is not None:
            out["metric"] = self.metric
        return out

    def update(self, state: Any, info: Any) -> None:
        rate = np.asarray(info.acceptance_rate, dtype=float)
        self.log_scale += (self.t + 1.0) ** -0.6 * (rate - self.target_accept)
        # Keep runaway chains (stuck at -inf, say) from over/underflowing.
        np.clip(self.log_scale, -30.0, 30.0, out=self.log_scale)
        self.t += 1
        self.done += 1
        if self._ends:
            self._learn_metric(np.asarray(state.position, dtype=float))
        last = self._ends[-1] if self._ends else 0
        if self.done > last + (self.warmup - last) // 2:
            self._sum += self.log_scale
            self._n += 1

    def _learn_metric(self, x: np.ndarray) -> None:
        if self.done > self._ends[-1]:
            return
        if self._window is None:
            self._window = Welford(x.shape)
        self._window.add(x)
        if self.done in self._ends:
            if self._window.n > 1:
                self.metric = np.sqrt(self._window.regularized_variance(scale_first=True))
                # A new shape changes the best scale: restart its adaptation.
                self.log_scale[:] = np.log(default_scale(x.shape[1]))
                self.t = 0
            self._window = None

    def final(self) -> dict[str, Any]:
        log_scale = self._sum / self._n if self._n else self.log_scale
        out = {**self.extra, self.name: np.exp(log_scale)}
        if self.metric is not None:
            out["metric"] = self.metric
        return out
