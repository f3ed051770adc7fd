"""The cost of one NUTS leaf, our JAX tree against BlackJAX's, on one posteriordb JAX file (issue 32).

Both run ``--transitions`` NUTS transitions of 4 chains inside one compiled
``lax.scan`` (``jit(vmap)``, float64) at the same fixed step size and
diagonal inverse mass (BlackJAX's ``window_adaptation`` from key 0, 500
steps, run once and reused), maximum depth 10; each compiled call is timed
alone (after ``lower().compile()``), ours and BlackJAX's interleaved,
``--reps`` times. Printed: CPU and wall microseconds per leaf (per gradient)
and leaves per transition. Ours is :func:`mcmc.core.jax.kernels.nuts_transition`
reading uniforms and exponentials from buffers a NumPy ``Generator`` filled
(as the sampler's loop does); BlackJAX's draws its own from keys. On a shared
machine compare the CPU columns; wall time includes waiting for a core.

    .venv/bin/python bench/jax_nuts_leaf.py kidiq_kidscore_momiq
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from posteriordb_blackjax import MODELS, model  # noqa: E402

CHAINS, DEPTH = 4, 10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("posterior", choices=MODELS)
    parser.add_argument("--transitions", type=int, default=300)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    import blackjax
    import jax.numpy as jnp
    from jax import lax

    from mcmc.core.jax.kernels import nuts_transition

    dim, log_density = model(args.posterior)
    n = args.transitions
    adapt = blackjax.window_adaptation(blackjax.nuts, log_density)
    (state, params), _ = adapt.run(jax.random.key(0), jnp.full(dim, 0.1), num_steps=500)
    eps, minv = float(params["step_size"]), jnp.asarray(params["inverse_mass_matrix"])
    x0 = jnp.tile(state.position, (CHAINS, 1))
    lp0, g0 = jax.vmap(jax.value_and_grad(log_density))(x0)
    rng = np.random.default_rng(1)
    unis = jnp.asarray(rng.random((CHAINS, n * DEPTH)))
    expos = jnp.asarray(rng.exponential(size=(CHAINS, n * (2**DEPTH + DEPTH))))
    normals = jnp.asarray(rng.standard_normal((n, CHAINS, dim)))

    step = jax.vmap(nuts_transition(jax.value_and_grad(log_density), DEPTH),
                    in_axes=(0, 0, 0, None, None, 0, None, None, 0, 0, 0, 0))  # fmt: skip

    def ours(x: jax.Array, lp: jax.Array, g: jax.Array) -> jax.Array:
        def body(c: tuple[jax.Array, ...], noise: jax.Array) -> tuple[tuple[jax.Array, ...], None]:
            x, lp, g, up, ep, leaves = c
            x, lp, g, _, k, _, _, _, u_used, e_used = step(x, lp, g, eps, minv, noise, DEPTH, 1000.0, unis, expos,
                                                           up, ep)  # fmt: skip
            return (x, lp, g, up + u_used, ep + e_used, leaves + k), None

        zeros = jnp.zeros(CHAINS, jnp.int64)
        return lax.scan(body, (x, lp, g, zeros, zeros, zeros), normals)[0][5]

    nuts = blackjax.nuts(log_density, eps, minv, max_num_doublings=DEPTH)

    def theirs(x: jax.Array, key: jax.Array) -> jax.Array:
        def body(c: tuple[object, jax.Array], k: jax.Array) -> tuple[tuple[object, jax.Array], None]:
            st, leaves = c
            st, info = jax.vmap(nuts.step)(jax.random.split(k, CHAINS), st)
            return (st, leaves + info.num_integration_steps), None

        return lax.scan(body, (jax.vmap(nuts.init)(x), jnp.zeros(CHAINS, jnp.int64)), jax.random.split(key, n))[0][1]

    ours_c = jax.jit(ours).lower(x0, lp0, g0).compile()
    theirs_c = jax.jit(theirs).lower(x0, jax.random.key(1)).compile()
    print(f"# {args.posterior}: dim {dim}, step size {eps:.4g}, {CHAINS} chains x {n} transitions, max depth {DEPTH}")
    print(f"{'rep':>3} {'ours cpu us':>11} {'wall us':>8} {'leaves':>6} {'blackjax cpu us':>15} {'wall us':>8} "
          f"{'leaves':>6} {'cpu ratio':>9}")  # fmt: skip
    ratios = []
    for rep in range(args.reps):
        row = []
        for fn, arg in ((ours_c, (x0, lp0, g0)), (theirs_c, (x0, jax.random.key(rep + 1)))):
            cpu, wall = time.process_time(), time.perf_counter()
            leaves = int(jax.block_until_ready(fn(*arg)).sum())
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            row += [cpu / leaves * 1e6, wall / leaves * 1e6, leaves / (n * CHAINS)]
        ratios.append(row[0] / row[3])
        print(f"{rep:>3} {row[0]:>11.2f} {row[1]:>8.2f} {row[2]:>6.1f} {row[3]:>15.2f} {row[4]:>8.2f} {row[5]:>6.1f} "
              f"{ratios[-1]:>9.2f}")  # fmt: skip
    print(f"median CPU per leaf, ours over BlackJAX's: {np.median(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
