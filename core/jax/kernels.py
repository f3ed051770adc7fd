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
    return (jnp.sum(minv * p_a * rho, axis=-1) > 0) & (jnp.sum(minv * p_b * rho, axis=-1) > 0)


def _merge_ok(rho_a: Any, first_a: Any, last_a: Any, rho_b: Any, first_b: Any, last_b: Any, minv: Any) -> Any:
    """Stan's three checks on joining tree ``a`` and the tree ``b`` after it (``nuts._merge_ok``)."""
    ok = _no_u_turn(first_a, last_b, rho_a + rho_b, minv)
    ok = _no_u_turn(first_a, first_b, rho_a + first_b, minv) & ok
    return _no_u_turn(last_a, last_b, rho_b + last_a, minv) & ok


def _near(buffer: Any, pos: Any, size: int) -> tuple[Any, Any]:
    """The ``size`` values of ``buffer`` that hold ``buffer[pos:pos + size]`` (all of it if it is no longer), and
    ``pos`` within them: the slice starts at ``pos`` or, near the end, ``len - size`` (never clamped past what it
    must hold), so every index the caller reads from ``pos`` on, up to ``size`` of them, reads the same number.

    A loop body that indexes a buffer of megabytes (a loop's window of 2^15 exponentials per chain) makes XLA CPU
    run that body's operations as tasks on its thread pool, several microseconds a NUTS leaf spent queueing and
    waking threads; indexing a slice of a few kilobytes cut once per transition keeps the body sequential."""
    n = buffer.shape[0]
    if n <= size:
        return buffer, pos
    start = jnp.minimum(jnp.asarray(pos, jnp.int64), n - size)
    return _slicer(size)(buffer, start), pos - start


def _slicer(size: int) -> Callable[[Any, Any], Any]:
    """``buffer[start:start + size]`` by ``lax.dynamic_slice``, mapped over chains one row at a time.

    ``jax.vmap`` makes a batched slice a gather, which XLA CPU's cost model charges for the whole operand (a
    megabyte) and splits across the thread pool, once per transition; a row's ``dynamic_slice`` is charged for the
    kilobytes it copies, as it should, and runs in order."""
    from jax import custom_batching

    @custom_batching.custom_vmap
    def cut(buffer: Any, start: Any) -> Any:
        return lax.dynamic_slice(buffer, (start,), (size,))

    @cut.def_vmap
    def _rows(axis_size: int, batched: list[bool], buffer: Any, start: Any) -> tuple[Any, bool]:
        rows = []
        for c in range(axis_size):
            row = buffer[c] if batched[0] else buffer
            rows.append(lax.dynamic_slice(row, (start[c] if batched[1] else start,), (size,)))
        return jnp.stack(rows), True

    return cut


def tree(vg: PointVG, capacity: int) -> Callable[..., tuple[Any, ...]]:
    """One chain's NUTS transition, as the numba ``nuts`` kernel (:mod:`mcmc.core.compiled.kernels`).

    ``(x0, p0, lp0, g0, eps, minv, max_depth, max_err, uni, expo, up0, ep0)
    -> (x, lp, g, h, n_steps, sum_accept, diverging, depth, uniforms_used,
    exponentials_used)``. ``max_depth`` (at most ``capacity``, which sizes the
    stack of left siblings) is traced, so every depth up to ``capacity``
    shares one compilation; ``uni[up0:]`` and ``expo[ep0:]`` are the chain's
    next uniforms (one per doubling) and exponentials (one per leaf and one
    per valid subtree).

    Two loops, as BlackJAX's: one step of the outer ``while_loop`` is one
    doubling (its direction, the end it grows from, the subtree joined to the
    trajectory, the U-turn check across the whole trajectory); the inner one
    builds the subtree leaf by leaf. A leaf's work is only the leaf's: its
    step, its share of the progressive multinomial sampling, and the U-turn
    checks of the nodes it completes, done for every level of the stack of
    left siblings at once with a mask (no nested loop, no scatter or gather
    into the stack), the node sums added in the recursion's order.
    """
    cap = max(capacity, 1)

    def run(x0: Any, p0: Any, lp0: Any, g0: Any, eps: Any, minv: Any, max_depth: Any, max_err: Any,
            uni: Any, expo: Any, up0: Any, ep0: Any) -> tuple[Any, ...]:  # fmt: skip
        dim = x0.shape[0]
        # what this transition can read: a uniform per doubling, an exponential per leaf and per subtree
        uni, up0 = _near(uni, up0, cap)
        expo, ep0 = _near(expo, ep0, 2**cap - 1 + cap)
        h0 = -lp0 + _kinetic(p0, minv)
        i64, f64 = jnp.int64, x0.dtype
        zero_i, zero_f = jnp.zeros((), i64), jnp.zeros((), f64)
        levels = jnp.arange(cap, dtype=i64)

        def subtree(d: Any, e: Any, x: Any, p: Any, g: Any, lp: Any, acc: Any, ints: Any) -> tuple[Any, ...]:
            """Up to ``2**d`` leaves from ``(x, p, g, lp)`` with step ``e``; stops at a leaf that diverges or
            completes a node that turns. ``ints``: ``(k, ep, steps, ok, div)`` (``ok == 0``: nothing to build)."""
            half = 0.5 * e
            n = jnp.left_shift(jnp.ones((), i64), d)

            def more(c: tuple[Any, ...]) -> Any:
                return (c[2][0] < n) & (c[2][3] != 0)

            def leaf(c: tuple[Any, ...]) -> tuple[Any, ...]:
                vec, flo, ints, st = c
                x, p, g, cand_x, cand_g, first, sub_rho = (vec[i] for i in range(7))
                _, cand_lp, cand_h, sub_w, acc = (flo[i] for i in range(5))
                k, ep, steps = ints[0], ints[1], ints[2]
                start = k == 0
                p = p + half * g
                x = x + e * minv * p
                lp, g = vg(x)
                p = p + half * g
                h = -lp + _kinetic(p, minv)
                h = jnp.where(jnp.isnan(h), jnp.inf, h)
                delta = h0 - h
                acc = acc + jnp.exp(jnp.minimum(delta, 0.0))
                leaf_div = ~jnp.isfinite(h) | ~(h - h0 <= max_err)
                new_w = _logaddexp(sub_w, delta)
                log_u = -expo[ep]
                # progressive multinomial sampling within the subtree
                take = start | (log_u < delta - new_w)
                cand_x = jnp.where(take, x, cand_x)
                cand_g = jnp.where(take, g, cand_g)
                cand_lp = jnp.where(take, lp, cand_lp)
                cand_h = jnp.where(take, h, cand_h)
                first = jnp.where(start, p, first)
                # the nodes this leaf completes: levels 0 .. merges - 1 of the stack of left siblings (the trailing
                # ones of k), each checked against the node below it, every level at once
                merges = lax.population_count(~(k + 1) & k)
                st_rho, st_first, st_last = st[0], st[1], st[2]
                sums = [p]
                for level in range(cap - 1):
                    sums.append(st_rho[level] + sums[-1])
                node_rho = jnp.stack(sums)  # the node's momentum sum before merging each level
                node_first = jnp.concatenate([p[None], st_first[:-1]])
                ok = _merge_ok(st_rho, st_first, st_last, node_rho, node_first, p, minv)
                ok = ~leaf_div & jnp.all(ok | (levels >= merges))
                rho, head = node_rho[0], node_first[0]
                for level in range(1, cap):
                    rho = jnp.where(merges == level, node_rho[level], rho)
                    head = jnp.where(merges == level, node_first[level], head)
                push = merges < d
                row = ((levels == merges) & push)[:, None]
                st = jnp.stack([jnp.where(row, rho, st_rho), jnp.where(row, head, st_first),
                                jnp.where(row, p, st_last)])  # fmt: skip
                sub_rho = jnp.where(push, sub_rho, rho)
                vec = jnp.stack([x, p, g, cand_x, cand_g, first, sub_rho])
                flo = jnp.stack([lp, cand_lp, cand_h, new_w, acc])
                ints = jnp.stack([k + 1, ep + 1, steps + 1, ok.astype(i64), leaf_div.astype(i64)])
                return vec, flo, ints, st

            vec = jnp.stack([x, p, g, x, g, p, p])
            flo = jnp.stack([lp, lp, zero_f, jnp.asarray(-jnp.inf, f64), acc])
            return lax.while_loop(more, leaf, (vec, flo, ints, jnp.zeros((3, cap, dim), f64)))

        s0 = {
            "d": zero_i, "up": jnp.asarray(up0, i64), "ep": jnp.asarray(ep0, i64), "done": max_depth <= 0,
            "end_x": jnp.stack([x0, x0]), "end_p": jnp.stack([p0, p0]), "end_g": jnp.stack([g0, g0]),
            "end_lp": jnp.stack([lp0, lp0]), "rho": p0, "log_w": zero_f,
            "x_out": x0, "g_out": g0, "lp_out": lp0, "h_out": h0,
            "steps": zero_i, "acc": zero_f, "div": jnp.zeros((), bool), "depth": zero_i,
        }  # fmt: skip

        def doubling(s: dict[str, Any]) -> dict[str, Any]:
            s = dict(s)
            d = s["d"]
            # a new subtree: its direction, and the end of the trajectory it grows from
            right = uni[s["up"]] > 0.5
            s["up"] = s["up"] + 1
            end_x, end_p, end_g, end_lp = s["end_x"], s["end_p"], s["end_g"], s["end_lp"]
            e = jnp.where(right, eps, -eps)
            ints = jnp.stack([zero_i, s["ep"], s["steps"], (~s["done"]).astype(i64), zero_i])
            grow = [jnp.where(right, end[1], end[0]) for end in (end_x, end_p, end_g, end_lp)]
            vec, flo, ints, _ = subtree(d, e, *grow, s["acc"], ints)
            x, p, g, cand_x, cand_g, first, sub_rho = (vec[i] for i in range(7))
            lp, cand_lp, cand_h, new_w, s["acc"] = (flo[i] for i in range(5))
            k, ep, s["steps"], ok, leaf_div = (ints[i] for i in range(5))
            ok = ok != 0
            complete = ok & (k == jnp.left_shift(jnp.ones((), i64), d))
            # the subtree joins the trajectory: a's end next to b is the one integrated from
            near, far = jnp.where(right, end_p[1], end_p[0]), jnp.where(right, end_p[0], end_p[1])
            turn_ok = _merge_ok(s["rho"], far, near, sub_rho, first, p, minv)
            log_u = -expo[ep]
            # biased progressive sampling: the subtree's candidate w.p. min(1, W_subtree / W_old)
            move = complete & (log_u < new_w - s["log_w"])
            s["ep"] = ep + complete
            s["x_out"] = jnp.where(move, cand_x, s["x_out"])
            s["g_out"] = jnp.where(move, cand_g, s["g_out"])
            s["lp_out"] = jnp.where(move, cand_lp, s["lp_out"])
            s["h_out"] = jnp.where(move, cand_h, s["h_out"])
            s["log_w"] = jnp.where(complete, _logaddexp(s["log_w"], new_w), s["log_w"])
            s["rho"] = jnp.where(complete, s["rho"] + sub_rho, s["rho"])
            at = (jnp.arange(2) == right.astype(i64))[:, None] & complete
            s["end_x"] = jnp.where(at, x, end_x)
            s["end_p"] = jnp.where(at, p, end_p)
            s["end_g"] = jnp.where(at, g, end_g)
            s["end_lp"] = jnp.where(at[:, 0], lp, end_lp)
            s["depth"] = s["depth"] + complete
            s["d"] = d + complete
            s["div"] = leaf_div != 0
            s["done"] = ~ok | (complete & (~turn_ok | (d + 1 >= max_depth)))
            return s

        s = lax.while_loop(lambda s: ~s["done"], doubling, s0)
        return (s["x_out"], s["lp_out"], s["g_out"], s["h_out"], s["steps"], s["acc"], s["div"], s["depth"],
                s["up"] - up0, s["ep"] - ep0)  # fmt: skip

    return run


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
