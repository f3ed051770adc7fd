"""The HMC trajectory and the NUTS transition of one chain in JAX, around a point function ``vg(x) -> (lp, grad)``.

Each is the numba kernel of :mod:`mcmc.core.compiled.kernels` written again
with ``lax.while_loop``: the same leapfrog step (operation for operation),
the same divergence rule, and for NUTS the same tree, doubled leaf by leaf
with the U-turn checks of Stan's recursion done as a binary counter, the same
multinomial and biased progressive sampling, reading the same random
numbers in the same order. :mod:`mcmc.core.jax.functions` maps them over
chains with ``jax.vmap`` and compiles them; a batched ``while_loop`` runs
until every chain has stopped, a stopped chain's state held by a select, as
BlackJAX's vmapped NUTS does.

Random numbers come in, they are never made here: the NUTS transition reads
row ``c`` of the uniform and exponential windows its caller cut from chain
``c``'s :class:`~mcmc.core.random.ChainRandom` buffers, and returns how many
of each it read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
from jax import lax

PointVG = Callable[[Any], tuple[Any, Any]]
LOG2 = 0.6931471805599453


def _kinetic(p: Any, minv: Any) -> Any:
    return 0.5 * jnp.sum(minv * p * p)


def trajectory(vg: PointVG, conditioned: bool) -> Callable[..., tuple[Any, ...]]:
    """One chain's leapfrog path: ``(full, idx, x0, p0, lp0, g0, eps, n, minv, max_err) -> (x, p, lp, g, k, bad)``.

    As :func:`mcmc.core.samplers.leapfrog.integrate` for one chain: ``n``
    steps of size ``eps``, stopping at the first step whose energy error
    exceeds ``max_err`` or is not finite (``bad``). ``conditioned``: ``x0``
    holds the coordinates ``idx`` of the point ``full``, whose other
    coordinates stay (HMC within Gibbs); else ``full`` and ``idx`` are unused.
    """

    def run(full: Any, idx: Any, x0: Any, p0: Any, lp0: Any, g0: Any, eps: Any, n: Any, minv: Any,
            max_err: Any) -> tuple[Any, ...]:  # fmt: skip
        half = 0.5 * eps
        em = eps * minv
        h0 = -lp0 + _kinetic(p0, minv)

        def cond(s: tuple[Any, ...]) -> Any:
            return (s[0] < n) & ~s[5]

        def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
            k, x, p, _, g, _ = s
            p = p + half * g
            x = x + em * p
            if conditioned:
                lp, g_full = vg(full.at[idx].set(x))
                g = g_full[idx]
            else:
                lp, g = vg(x)
            p = p + half * g
            h = -lp + _kinetic(p, minv)
            bad = ~jnp.isfinite(lp) | ~(h - h0 <= max_err)
            return k + 1, x, p, lp, g, bad

        start = (jnp.zeros((), jnp.int64), x0, p0, lp0, g0, jnp.zeros((), bool))
        k, x, p, lp, g, bad = lax.while_loop(cond, body, start)
        return x, p, lp, g, k, bad

    return run


def _logaddexp(a: Any, b: Any) -> Any:
    """NumPy's ``npy_logaddexp`` case for case (the NumPy NUTS uses ``np.logaddexp``)."""
    t = a - b
    return jnp.where(a == b, a + LOG2,
                     jnp.where(t > 0, a + jnp.log1p(jnp.exp(-t)),
                               jnp.where(t <= 0, b + jnp.log1p(jnp.exp(t)), a + b)))  # fmt: skip


def _no_u_turn(p_a: Any, p_b: Any, rho: Any, minv: Any) -> Any:
    return (jnp.sum(minv * p_a * rho) > 0) & (jnp.sum(minv * p_b * rho) > 0)


def _merge_ok(rho_a: Any, first_a: Any, last_a: Any, rho_b: Any, first_b: Any, last_b: Any, minv: Any) -> Any:
    """Stan's three checks on joining tree ``a`` and the tree ``b`` after it (``nuts._merge_ok``)."""
    ok = _no_u_turn(first_a, last_b, rho_a + rho_b, minv)
    ok = _no_u_turn(first_a, first_b, rho_a + first_b, minv) & ok
    return _no_u_turn(last_a, last_b, rho_b + last_a, minv) & ok


def tree(vg: PointVG, capacity: int) -> Callable[..., tuple[Any, ...]]:
    """One chain's NUTS transition, as the numba ``nuts`` kernel (:mod:`mcmc.core.compiled.kernels`).

    ``(x0, p0, lp0, g0, eps, minv, max_depth, max_err, uni, expo, up0, ep0)
    -> (x, lp, g, h, n_steps, sum_accept, diverging, depth, uniforms_used,
    exponentials_used)``. ``max_depth`` (at most ``capacity``, which sizes the
    stack of left siblings) is traced, so every depth up to ``capacity``
    shares one compilation; ``uni[up0:]`` and ``expo[ep0:]`` are the chain's
    next uniforms (one per doubling) and exponentials (one per leaf and one
    per valid subtree).

    One ``while_loop`` step is one leaf: a step at leaf 0 of a subtree first
    draws its direction and starts from that end of the trajectory; a leaf
    that completes the subtree joins it to the trajectory.
    """

    def run(x0: Any, p0: Any, lp0: Any, g0: Any, eps: Any, minv: Any, max_depth: Any, max_err: Any,
            uni: Any, expo: Any, up0: Any, ep0: Any) -> tuple[Any, ...]:  # fmt: skip
        dim = x0.shape[0]
        h0 = -lp0 + _kinetic(p0, minv)
        i64, f64 = jnp.int64, x0.dtype
        zero_i, zero_f, false = jnp.zeros((), i64), jnp.zeros((), f64), jnp.zeros((), bool)
        s0 = {
            "d": zero_i, "k": zero_i, "side": zero_i, "up": jnp.asarray(up0, i64), "ep": jnp.asarray(ep0, i64),
            "done": max_depth <= 0,
            "end_x": jnp.stack([x0, x0]), "end_p": jnp.stack([p0, p0]), "end_g": jnp.stack([g0, g0]),
            "end_lp": jnp.stack([lp0, lp0]), "rho": p0, "log_w": zero_f,
            "x": x0, "p": p0, "g": g0, "lp": lp0,
            "cand_x": x0, "cand_g": g0, "cand_lp": lp0, "cand_h": zero_f, "sub_w": zero_f, "first": p0,
            "sub_rho": p0, "stack": jnp.zeros((max(capacity, 1), 3, dim), f64),
            "x_out": x0, "g_out": g0, "lp_out": lp0, "h_out": h0,
            "steps": zero_i, "acc": zero_f, "div": false, "depth": zero_i,
        }  # fmt: skip

        def body(s: dict[str, Any]) -> dict[str, Any]:
            s = dict(s)
            start = s["k"] == 0
            # a new subtree: its direction, and the end of the trajectory it grows from
            side = jnp.where(start, (uni[s["up"]] > 0.5).astype(i64), s["side"])
            s["up"] = s["up"] + start
            x = jnp.where(start, s["end_x"][side], s["x"])
            p = jnp.where(start, s["end_p"][side], s["p"])
            g = jnp.where(start, s["end_g"][side], s["g"])
            sub_w = jnp.where(start, -jnp.inf, s["sub_w"])
            e = jnp.where(side == 1, eps, -eps)
            half = 0.5 * e
            # one leaf
            p = p + half * g
            x = x + e * minv * p
            lp, g = vg(x)
            p = p + half * g
            h = -lp + _kinetic(p, minv)
            h = jnp.where(jnp.isnan(h), jnp.inf, h)
            delta = h0 - h
            s["steps"] = s["steps"] + 1
            s["acc"] = s["acc"] + jnp.exp(jnp.minimum(delta, 0.0))
            leaf_div = ~jnp.isfinite(h) | ~(h - h0 <= max_err)
            new_w = _logaddexp(sub_w, delta)
            log_u = -expo[s["ep"]]
            s["ep"] = s["ep"] + 1
            # progressive multinomial sampling within the subtree
            take = start | (log_u < delta - new_w)
            s["cand_x"] = jnp.where(take, x, s["cand_x"])
            s["cand_g"] = jnp.where(take, g, s["cand_g"])
            s["cand_lp"] = jnp.where(take, lp, s["cand_lp"])
            s["cand_h"] = jnp.where(take, h, s["cand_h"])
            s["first"] = jnp.where(start, p, s["first"])
            first = s["first"]
            k = s["k"]

            # the nodes this leaf completes, merged with their left siblings on the stack (a binary counter)
            def more(m: tuple[Any, ...]) -> Any:
                level = m[0]
                return (k + 1) % (jnp.left_shift(jnp.ones((), i64), level + 1)) == 0

            def merge(m: tuple[Any, ...]) -> tuple[Any, ...]:
                level, ok, node_rho, node_first = m
                a = s["stack"][level]
                ok = _merge_ok(a[0], a[1], a[2], node_rho, node_first, p, minv) & ok
                return level + 1, ok, a[0] + node_rho, a[1]

            level, ok, node_rho, node_first = lax.while_loop(more, merge, (zero_i, ~leaf_div, p, p))
            d = s["d"]
            s["stack"] = jnp.where(level < d, s["stack"].at[level].set(jnp.stack([node_rho, node_first, p])),
                                   s["stack"])  # fmt: skip
            s["sub_rho"] = jnp.where(level < d, s["sub_rho"], node_rho)
            k = k + 1
            complete = ok & (k == jnp.left_shift(jnp.ones((), i64), d))
            # the subtree joins the trajectory: a's end next to b is the one integrated from
            end_p = s["end_p"]
            turn_ok = _merge_ok(s["rho"], end_p[1 - side], end_p[side], s["sub_rho"], first, p, minv)
            log_u = -expo[s["ep"]]
            # biased progressive sampling: the subtree's candidate w.p. min(1, W_subtree / W_old)
            move = complete & (log_u < new_w - s["log_w"])
            s["ep"] = s["ep"] + complete
            s["x_out"] = jnp.where(move, s["cand_x"], s["x_out"])
            s["g_out"] = jnp.where(move, s["cand_g"], s["g_out"])
            s["lp_out"] = jnp.where(move, s["cand_lp"], s["lp_out"])
            s["h_out"] = jnp.where(move, s["cand_h"], s["h_out"])
            s["log_w"] = jnp.where(complete, _logaddexp(s["log_w"], new_w), s["log_w"])
            s["rho"] = jnp.where(complete, s["rho"] + s["sub_rho"], s["rho"])
            s["end_x"] = jnp.where(complete, s["end_x"].at[side].set(x), s["end_x"])
            s["end_p"] = jnp.where(complete, end_p.at[side].set(p), end_p)
            s["end_g"] = jnp.where(complete, s["end_g"].at[side].set(g), s["end_g"])
            s["end_lp"] = jnp.where(complete, s["end_lp"].at[side].set(lp), s["end_lp"])
            s["depth"] = s["depth"] + complete
            s["d"] = d + complete
            s["k"] = jnp.where(complete, 0, k)
            s["div"] = leaf_div
            s["done"] = ~ok | (complete & (~turn_ok | (d + 1 >= max_depth)))
            s.update(side=side, x=x, p=p, g=g, lp=lp, sub_w=new_w)
            return s

        packed = lax.while_loop(lambda c: c[2][_INTS.index("done")] == 0, lambda c: _pack(body(_unpack(c))),
                                _pack(s0))  # fmt: skip
        s = _unpack(packed)
        return (s["x_out"], s["lp_out"], s["g_out"], s["h_out"], s["steps"], s["acc"], s["div"], s["depth"],
                s["up"] - up0, s["ep"] - ep0)  # fmt: skip

    return run


# The tree's state travels through its loop packed in four arrays: under vmap every array of a while loop's state is
# selected anew each step (for the chains that have stopped), and thirty small ones cost more than the leaf.
_PAIRS = ("end_x", "end_p", "end_g")
_VECTORS = ("rho", "x", "p", "g", "cand_x", "cand_g", "first", "sub_rho", "x_out", "g_out")
_FLOATS = ("log_w", "lp", "cand_lp", "cand_h", "sub_w", "lp_out", "h_out", "acc")
_INTS = ("d", "k", "side", "up", "ep", "steps", "depth", "done", "div")
_BOOLS = ("done", "div")


def _pack(s: dict[str, Any]) -> tuple[Any, ...]:
    vectors = jnp.concatenate([s[n] for n in _PAIRS] + [jnp.stack([s[n] for n in _VECTORS])])
    floats = jnp.concatenate([s["end_lp"], jnp.stack([s[n] for n in _FLOATS])])
    ints = jnp.stack([jnp.asarray(s[n]).astype(jnp.int64) for n in _INTS])
    return vectors, floats, ints, s["stack"]


def _unpack(c: tuple[Any, ...]) -> dict[str, Any]:
    vectors, floats, ints, stack = c
    s: dict[str, Any] = {n: vectors[2 * i : 2 * i + 2] for i, n in enumerate(_PAIRS)}
    s.update((n, vectors[2 * len(_PAIRS) + i]) for i, n in enumerate(_VECTORS))
    s["end_lp"] = floats[:2]
    s.update((n, floats[2 + i]) for i, n in enumerate(_FLOATS))
    s.update((n, ints[i] != 0 if n in _BOOLS else ints[i]) for i, n in enumerate(_INTS))
    s["stack"] = stack
    return s


def hmc_transition(vg: PointVG) -> Callable[..., tuple[Any, ...]]:
    """One chain's HMC transition, :func:`mcmc.core.samplers.hmc.step` operation for operation.

    ``(x, lp, g, z, eps, length, minv, noise (dim,), u, e, jitter, max_steps,
    persistence, max_err) -> (x, lp, g, z, acceptance_rate, accepted,
    diverging, energy, n_steps, reached_max_steps)``: ``noise`` the chain's
    next ``dim`` normals, ``u`` its next uniform (the path length's jitter),
    ``e`` its next exponential (``-e`` is the log of the accept uniform).
    """
    path = trajectory(vg, conditioned=False)
    nothing = jnp.zeros(0, jnp.int64)

    def run(x: Any, lp: Any, g: Any, z: Any, eps: Any, length: Any, minv: Any, noise: Any, u: Any, e: Any,
            jitter: Any, max_steps: Any, a: Any, max_err: Any) -> tuple[Any, ...]:  # fmt: skip
        z = jnp.where(a > 0, a * z + jnp.sqrt(1.0 - a * a) * noise, noise)
        p0 = z / jnp.sqrt(minv)
        wanted = jnp.ceil(length * (1.0 + jitter * (2.0 * u - 1.0)) / eps)
        n = jnp.clip(wanted, 1, max_steps).astype(jnp.int64)
        x1, p1, lp1, g1, k, bad = path(x, nothing, x, p0, lp, g, eps, n, minv, max_err)
        h0 = -lp + _kinetic(p0, minv)
        h1 = -lp1 + _kinetic(p1, minv)
        dh = h1 - h0
        diverging = bad | ~jnp.isfinite(dh)
        log_alpha = jnp.where(diverging, -jnp.inf, -dh)
        accepted = -e < log_alpha
        rate = jnp.exp(jnp.minimum(log_alpha, 0.0))
        # after the flip: forward momentum if accepted, reversed if rejected
        z_new = jnp.where(accepted, p1 * jnp.sqrt(minv), -z)
        return (jnp.where(accepted, x1, x), jnp.where(accepted, lp1, lp), jnp.where(accepted, g1, g), z_new, rate,
                accepted, diverging, jnp.where(accepted, h1, h0), k, wanted > max_steps)  # fmt: skip

    return run


def nuts_transition(vg: PointVG, capacity: int) -> Callable[..., tuple[Any, ...]]:
    """One chain's NUTS transition, :func:`mcmc.core.samplers.nuts.step` with its tree compiled.

    ``(x, lp, g, eps, minv, noise (dim,), max_depth, max_err, uni, expo, up,
    ep) -> (x, lp, g, energy, n_steps, sum_accept, diverging, depth,
    uniforms_used, exponentials_used)``: the momentum ``noise / sqrt(minv)``,
    then :func:`tree` reading ``uni[up:]`` and ``expo[ep:]``.
    """
    build = tree(vg, capacity)

    def run(x: Any, lp: Any, g: Any, eps: Any, minv: Any, noise: Any, max_depth: Any, max_err: Any, uni: Any,
            expo: Any, up: Any, ep: Any) -> tuple[Any, ...]:  # fmt: skip
        return build(x, noise / jnp.sqrt(minv), lp, g, eps, minv, max_depth, max_err, uni, expo, up, ep)

    return run


def dual_averaging(mu: Any, log_step: Any, log_step_bar: Any, h_bar: Any, counter: Any, accept: Any,
                   target_accept: Any, gamma: Any, t0: Any, kappa: Any) -> tuple[Any, ...]:  # fmt: skip
    """One step of :meth:`mcmc.core.samplers.hmc_adapt.DualAveraging.update`, operation for operation."""
    counter = counter + 1
    t = counter.astype(mu.dtype)
    a = jnp.minimum(1.0, jnp.nan_to_num(accept, nan=0.0))
    eta = 1.0 / (t + t0)
    h_bar = (1.0 - eta) * h_bar + eta * (target_accept - a)
    log_step = mu - jnp.sqrt(t) / gamma * h_bar
    w = t ** (-kappa)
    log_step_bar = w * log_step + (1.0 - w) * log_step_bar
    return log_step, log_step_bar, h_bar, counter


def welford(n: Any, mean: Any, m2: Any, x: Any) -> tuple[Any, ...]:
    """:meth:`mcmc.core.samplers.adapt.Welford.add`: one draw per chain added to the running mean and ``m2``."""
    n = n + 1
    delta = x - mean
    mean = mean + delta / n
    return n, mean, m2 + delta * (x - mean)
