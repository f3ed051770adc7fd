"""BlackJAX NUTS on one posteriordb posterior: the peer process of ``bench/posteriordb.py``.

JAX versions of the six models of ``bench/posteriordb/`` (same sampling space,
same transforms and Jacobians, the same data files), because BlackJAX needs a
JAX-traceable log density and cannot call the NumPy ones. ``--check`` compares
each with the NumPy target at random points (log densities equal up to a
constant) and exits.

One run: ``blackjax.window_adaptation`` (Stan's schedule, target acceptance
0.8) then NUTS, one chain per ``vmap`` lane, ``jit``-compiled, float64. Writes
``--out FILE.npz`` with ``x (chains, draws, dim)`` (sampling space),
``n_steps_warmup`` and ``n_steps`` (leapfrog steps = gradient evaluations)
``divergent``, and ``seconds_compile``/``seconds_run``: the jit compilation
(done ahead, ``lower().compile()``) and the compiled run alone. The caller
times the whole process (import and compile included).

    .venv/bin/python bench/posteriordb_blackjax.py eight_schools_noncentered --seed 1 --out /tmp/es.npz
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MCMC_POSTERIORDB_DATA", ROOT / "tests/data/posteriordb"))


def _data(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def models():  # noqa: ANN201
    """Model name -> ``(dim, logdensity(x (dim,)))`` in JAX."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.linalg import cholesky

    def eight_schools_noncentered():  # noqa: ANN202
        d = _data("eight_schools.json")
        y, sigma, J = jnp.asarray(d["y"], float), jnp.asarray(d["sigma"], float), int(d["J"])

        def lp(x):  # noqa: ANN001, ANN202
            tt, mu, u = x[:J], x[J], x[J + 1]
            tau = jnp.exp(u)
            theta = tt * tau + mu
            return (-0.5 * jnp.sum(tt**2) - 0.5 * jnp.sum(((y - theta) / sigma) ** 2) - 0.5 * (mu / 5.0) ** 2
                    - jnp.log1p((tau / 5.0) ** 2) + u)  # fmt: skip

        return J + 2, lp

    def kidiq_kidscore_momiq():  # noqa: ANN202
        d = _data("kidiq.json")
        score, iq = jnp.asarray(d["kid_score"], float), jnp.asarray(d["mom_iq"], float)

        def lp(x):  # noqa: ANN001, ANN202
            sigma = jnp.exp(x[2])
            r = score - x[0] - x[1] * iq
            return -score.size * x[2] - 0.5 * jnp.sum(r**2) / sigma**2 - jnp.log1p((sigma / 2.5) ** 2) + x[2]

        return 3, lp

    def arK():  # noqa: ANN202, N802
        d = _data("arK.json")
        K, T = int(d["K"]), int(d["T"])
        y = np.asarray(d["y"], float)
        Z = jnp.asarray(np.column_stack([np.ones(T - K)] + [y[K - k : T - k] for k in range(1, K + 1)]))
        obs = jnp.asarray(y[K:])

        def lp(x):  # noqa: ANN001, ANN202
            coef, u = x[: K + 1], x[K + 1]
            sigma = jnp.exp(u)
            r = obs - Z @ coef
            return (-0.5 * jnp.sum(coef**2) / 100.0 - obs.size * u - 0.5 * jnp.sum(r**2) / sigma**2
                    - jnp.log1p((sigma / 2.5) ** 2) + u)  # fmt: skip

        return K + 2, lp

    def garch11():  # noqa: ANN202
        d = _data("garch.json")
        y, v0 = jnp.asarray(d["y"], float), float(d["sigma1"]) ** 2

        def lp(x):  # noqa: ANN001, ANN202
            mu, u0, u1, u2 = x
            a0, s1, s2 = jnp.exp(u0), jax.nn.sigmoid(u1), jax.nn.sigmoid(u2)
            a1, b1 = s1, (1.0 - s1) * s2
            e = y - mu

            def body(v, e_prev):  # noqa: ANN001, ANN202
                v = a0 + a1 * e_prev**2 + b1 * v
                return v, v

            _, rest = jax.lax.scan(body, v0, e[:-1])
            v = jnp.concatenate([jnp.array([v0]), rest])
            log_jac = (u0 - jnp.logaddexp(0.0, -u1) - 2.0 * jnp.logaddexp(0.0, u1) - jnp.logaddexp(0.0, -u2)
                       - jnp.logaddexp(0.0, u2))  # fmt: skip
            return -0.5 * jnp.sum(jnp.log(v) + e**2 / v) + log_jac

        return 4, lp

    def low_dim_gauss_mix():  # noqa: ANN202
        y = jnp.asarray(_data("low_dim_gauss_mix.json")["y"], float)

        def lp(x):  # noqa: ANN001, ANN202
            m1 = x[0]
            m2 = m1 + jnp.exp(x[1])
            s1, s2 = jnp.exp(x[2]), jnp.exp(x[3])
            log_t, log_1mt = -jnp.logaddexp(0.0, -x[4]), -jnp.logaddexp(0.0, x[4])
            a = log_t - x[2] - 0.5 * ((y - m1) / s1) ** 2
            b = log_1mt - x[3] - 0.5 * ((y - m2) / s2) ** 2
            prior = (-0.5 * (m1**2 + m2**2) / 4.0 - 0.5 * (s1**2 + s2**2) / 4.0 + 4.0 * (log_t + log_1mt)
                     + x[1] + x[2] + x[3] + log_t + log_1mt)  # fmt: skip
            return jnp.sum(jnp.logaddexp(a, b)) + prior

        return 5, lp

    def gp_pois_regr():  # noqa: ANN202
        d = _data("gp_pois_regr.json")
        xs, k = jnp.asarray(d["x"], float), jnp.asarray(d["k"], float)
        N = xs.size
        sq = (xs[:, None] - xs[None, :]) ** 2

        def lp(x):  # noqa: ANN001, ANN202
            rho, alpha, ft = jnp.exp(x[0]), jnp.exp(x[1]), x[2:]
            K = alpha**2 * jnp.exp(-sq / (2.0 * rho**2)) + 1e-10 * jnp.eye(N)
            f = cholesky(K, lower=True) @ ft
            out = (24.0 * x[0] - 4.0 * rho - alpha**2 / 8.0 - 0.5 * jnp.sum(ft**2) + jnp.sum(k * f - jnp.exp(f))
                   + x[0] + x[1])  # fmt: skip
            return jnp.where(jnp.isnan(out), -jnp.inf, out)

        return N + 2, lp

    return {f.__name__: f for f in (eight_schools_noncentered, kidiq_kidscore_momiq, arK, garch11,
                                    low_dim_gauss_mix, gp_pois_regr)}  # fmt: skip


def check() -> int:
    """Each JAX model against the NumPy target: equal log densities up to a constant."""
    import jax

    from mcmc.core.targets.user import load_user_target

    worst = 0.0
    for name, make in models().items():
        dim, lp = make()
        t = load_user_target(str(ROOT / "bench" / "posteriordb" / f"{name}.py"))
        x = np.random.default_rng(0).uniform(-2.0, 2.0, size=(5, dim))
        ours = t.log_density(x)
        theirs = np.asarray(jax.vmap(lp)(x))
        diff = (theirs - ours) - (theirs - ours)[0]
        err = float(np.max(np.abs(diff)) / (1.0 + np.max(np.abs(ours))))
        worst = max(worst, err)
        print(f"{name}: dim {dim} (ours {t.dim}), max relative difference {err:.2e}")
    return 0 if worst < 1e-9 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--out")
    parser.add_argument("--check", action="store_true", help="compare the JAX models with the NumPy targets")
    args = parser.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    if args.check:
        return check()
    import blackjax
    import jax.numpy as jnp

    dim, logdensity = models()[args.model]()
    adaptation = blackjax.window_adaptation(blackjax.nuts, logdensity, target_acceptance_rate=0.8)

    def one_chain(key, x0):  # noqa: ANN001, ANN202
        k_warm, k_draw = jax.random.split(key)
        (state, params), warm_info = adaptation.run(k_warm, x0, num_steps=args.warmup)
        kernel = blackjax.nuts(logdensity, **params).step

        def body(state, key):  # noqa: ANN001, ANN202
            state, info = kernel(key, state)
            return state, (state.position, info.num_integration_steps, info.is_divergent)

        _, out = jax.lax.scan(body, state, jax.random.split(k_draw, args.draws))
        return out, warm_info.info.num_integration_steps

    run = jax.jit(jax.vmap(one_chain))
    keys = jax.random.split(jax.random.key(args.seed), args.chains)
    # Stan's default initialisation: uniform(-2, 2) in the sampling space.
    x0 = jnp.asarray(np.random.default_rng(args.seed).uniform(-2.0, 2.0, size=(args.chains, dim)))
    # Compiled ahead of the run, so the run alone can be timed: ESS per second of the compiled run is the
    # figure issue 15 asks ours to be within 3x of (the caller times the whole process besides).
    t0 = time.perf_counter()
    compiled = run.lower(keys, x0).compile()
    t1 = time.perf_counter()
    (x, n_steps, divergent), warm_steps = jax.block_until_ready(compiled(keys, x0))
    t2 = time.perf_counter()
    np.savez(args.out, x=np.asarray(x), n_steps=np.asarray(n_steps), n_steps_warmup=np.asarray(warm_steps),
             divergent=np.asarray(divergent), seconds_compile=t1 - t0, seconds_run=t2 - t1)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
