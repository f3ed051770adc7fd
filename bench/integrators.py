"""Leapfrog against Euler: the energy error of one trajectory over step sizes (the lecture's figure).

On a 10-D standard Gaussian (``H = |x|^2 / 2 + |p|^2 / 2``), 2000 trajectories
started from the stationary law, each of integration time 2 (``L = 2 / eps``
steps), with the integrator HMC uses (:func:`mcmc.core.samplers.leapfrog.integrate`)
and with explicit Euler (:func:`mcmc.core.samplers.leapfrog.euler`): the mean
``|H(end) - H(start)|`` for each step size, the order fitted as the slope of
its logarithm against ``log eps`` (2 for the leapfrog, 1 for Euler), and, at
``eps = 0.1``, how the error grows with the number of steps (bounded for the
leapfrog, without bound for Euler). ``tests/core/test_integrators.py`` checks
the same numbers.

Run from the repository root::

    .venv/bin/python bench/integrators.py              # the table
    .venv/bin/python bench/integrators.py --plot e.png # and the figure (log-log)
"""

from __future__ import annotations

import argparse

import numpy as np

from mcmc.core.samplers.leapfrog import euler, integrate, kinetic_energy

STEP_SIZES = (0.4, 0.2, 0.1, 0.05, 0.025, 0.0125)
TIME = 2.0


def _gaussian(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return -0.5 * (x * x).sum(axis=1), -x


def energy_error(kind: str, eps: float, steps: int, n: int = 2000, d: int = 10) -> float:
    rng = np.random.default_rng(0)
    x, p, m = rng.standard_normal((n, d)), rng.standard_normal((n, d)), np.ones((n, d))
    h0 = 0.5 * (x * x).sum(axis=1) + kinetic_energy(p, m)
    end = integrate(_gaussian, x, p, *_gaussian(x), eps, steps, m) if kind == "leapfrog" else euler(
        _gaussian, x, p, eps, steps, m)
    return float(np.mean(np.abs(-end.log_density + kinetic_energy(end.momentum, m) - h0)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", help="write the log-log figure to this file (.png, .svg, .pdf)")
    args = parser.parse_args()
    table = {kind: [energy_error(kind, eps, int(round(TIME / eps))) for eps in STEP_SIZES]
             for kind in ("leapfrog", "euler")}
    print(f"mean |energy error| of one trajectory of time {TIME:g} (10-D standard Gaussian, 2000 starts)")
    print(f"{'eps':>8} {'steps':>6} {'leapfrog':>12} {'euler':>12}")
    for k, eps in enumerate(STEP_SIZES):
        print(f"{eps:>8g} {int(round(TIME / eps)):>6} {table['leapfrog'][k]:>12.3e} {table['euler'][k]:>12.3e}")
    for kind, errors in table.items():
        order = np.polyfit(np.log(STEP_SIZES), np.log(errors), 1)[0]
        print(f"fitted order of the {kind}: {order:.2f}")
    print("at eps = 0.1, by the number of steps:")
    for steps in (10, 100, 1000):
        print(f"  {steps:>5} steps: leapfrog {energy_error('leapfrog', 0.1, steps):.3e}   "
              f"euler {energy_error('euler', 0.1, steps):.3e}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 4))
        for kind, errors in table.items():
            ax.loglog(STEP_SIZES, errors, "o-", label=kind)
        ax.set_xlabel("step size eps")
        ax.set_ylabel(f"mean |H(end) - H(start)|, time {TIME:g}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot)
        print(f"-> {args.plot}")


if __name__ == "__main__":
    main()
