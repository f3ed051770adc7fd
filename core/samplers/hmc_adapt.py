"""Warm-up adaptation for HMC: dual averaging of the step size and Stan's windowed
diagonal mass matrix, per chain.

Step size: the dual-averaging scheme of Hoffman & Gelman (2014, section 3.2),
with Stan's defaults ``gamma = 0.05``, ``t0 = 10``, ``kappa = 0.75`` and
``mu = log(10 eps0)``, drives the mean acceptance statistic towards
``target_accept`` (0.8). During warm-up the sampler uses the noisy iterate
``eps_t``; afterwards the averaged ``eps_bar``.

Mass matrix: Stan's three-stage schedule (Stan Reference Manual, "HMC
algorithm parameters", section "Automatic parameter tuning"): an initial fast
interval (75 iterations) where only the step size adapts, a series of slow
windows (25, 50, 100, ... iterations; the last one stretched to reach the
terminal interval) at the end of each of which the diagonal inverse mass matrix
is set to the regularized sample variance of the window's draws
(:class:`mcmc.core.samplers.adapt.Welford`),

    var_reg = n / (n + 5) * var + 1e-3 * 5 / (n + 5),

and a terminal fast interval (50 iterations) for the final step size. When the
warm-up is shorter than 75 + 25 + 50 iterations the three stages take 15%, 75%
and 10% of it, as Stan does. After every slow window the step size is searched
again (the heuristic of Hoffman & Gelman 2014, Algorithm 4) and dual averaging
restarts with ``mu = log(10 eps)``.

Everything is per chain: no information is pooled across chains, so a chain's
draws do not depend on which other chains run beside it.

References
----------
Hoffman, M. D. & Gelman, A. (2014). The No-U-Turn sampler: adaptively setting
path lengths in Hamiltonian Monte Carlo. *JMLR* 15, 1593-1623.
Nesterov, Y. (2009). Primal-dual subgradient methods for convex problems.
*Mathematical Programming* 120, 221-259.
Stan Development Team. *Stan Reference Manual*, "MCMC Sampling: HMC algorithm
parameters" (adaptation windows); ``stan/mcmc/windowed_adaptation.hpp``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class DualAveraging:
    """Per-chain dual-averaging state (Hoffman & Gelman 2014, eq. 6).

    Attributes
    ----------
    mu
        Shape ``(chains,)``: the shrinkage point ``log(10 eps0)``.
    log_step, log_step_bar, h_bar
        Shape ``(chains,)``: the iterate ``x_t``, its weighted average, and the
        running mean of ``target_accept - accept_stat``.
    counter
        Number of updates since the last restart (the same for every chain).
    """

    mu: np.ndarray
    log_step: np.ndarray
    log_step_bar: np.ndarray
    h_bar: np.ndarray
    counter: int = 0
    target_accept: float = 0.8
    gamma: float = 0.05
    t0: float = 10.0
    kappa: float = 0.75

    @classmethod
    def start(cls, step_size: np.ndarray, target_accept: float = 0.8, **kw: float) -> DualAveraging:
        """Start (or restart) at step size ``step_size (chains,)``: ``mu = log(10 step_size)``."""
        log_eps = np.log(np.asarray(step_size, dtype=float))
        zeros = np.zeros_like(log_eps)
        return cls(log_eps + np.log(10.0), log_eps.copy(), zeros.copy(), zeros.copy(), 0, target_accept, **kw)

    def update(self, accept_stat: np.ndarray) -> None:
        """One dual-averaging step from the acceptance statistics ``(chains,)`` of the last transition."""
        self.counter += 1
        t = float(self.counter)
        # A NaN statistic (should not happen: divergences report 0) would poison
        # the averages for good; count it as a rejection.
        a = np.minimum(1.0, np.nan_to_num(np.asarray(accept_stat, dtype=float), nan=0.0))
        eta = 1.0 / (t + self.t0)
        self.h_bar = (1.0 - eta) * self.h_bar + eta * (self.target_accept - a)
        self.log_step = self.mu - np.sqrt(t) / self.gamma * self.h_bar
        w = t ** (-self.kappa)
        self.log_step_bar = w * self.log_step + (1.0 - w) * self.log_step_bar

    @property
    def step_size(self) -> np.ndarray:
        """The current iterate ``exp(x_t)``, used during warm-up."""
        return np.exp(self.log_step)

    @property
    def final_step_size(self) -> np.ndarray:
        """The averaged ``exp(x_bar_t)``, used after warm-up (the iterate if no update yet)."""
        return np.exp(self.log_step_bar if self.counter > 0 else self.log_step)


def window_ends(
    num_warmup: int, init_buffer: int = 75, term_buffer: int = 50, base_window: int = 25
) -> tuple[int, list[int]]:
    """Stan's slow adaptation windows for ``num_warmup`` iterations.

    Returns
    -------
    start, ends
        Draws of iterations ``start .. num_warmup - term_buffer - 1`` (0-based)
        feed the variance estimate; the mass matrix is updated at the end of
        iteration ``e`` for each ``e`` in ``ends`` (the last of a slow window).
        ``ends`` is empty when ``num_warmup < 20`` (too short to estimate a
        variance: only the step size adapts, as in Stan).

    Notes
    -----
    Follows ``stan::mcmc::windowed_adaptation``: windows double in size, and a
    window is stretched to the terminal buffer when the next one would not fit
    twice (so the last slow window is the longest).
    """
    if num_warmup < 20:
        return num_warmup, []
    if init_buffer + base_window + term_buffer > num_warmup:
        init_buffer = int(0.15 * num_warmup)
        term_buffer = int(0.1 * num_warmup)
        base_window = num_warmup - (init_buffer + term_buffer)
    last = num_warmup - term_buffer - 1
    ends: list[int] = []
    size = base_window
    end = init_buffer + size - 1
    while True:
        ends.append(end)
        if end == last:
            break
        size *= 2
        end = end + size
        if end != last and end + 2 * size >= num_warmup - term_buffer:
            end = last
    return init_buffer, ends
