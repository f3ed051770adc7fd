"""Blocked Gibbs sampling of a Bayesian network (``gibbs``): blocks drawn by forward filtering, backward sampling.

Jensen, Kong & Kjaerulff (1995), "Blocking Gibbs sampling in very large
probabilistic expert systems", Int. J. Human-Computer Studies 42. One sweep
updates each unit in turn (a block of nodes, or a single node), drawing it
from its exact conditional given the current values of every other node:

    p(x_B | x_-B, e) ∝ prod_{j : scope(j) meets B} p(x_j | x_pa(j)),

so every unit update leaves the posterior invariant, hence so does the
sweep, and a block that holds a near-deterministic table crosses the
regions single-site moves cannot leave (see
:mod:`~mcmc.core.networks.blocks` for how the units are chosen).

A block's draw is exact and costs in proportion to its largest clique
table: the block's junction tree (:mod:`~mcmc.core.networks.junction_tree`,
built once) gets its potentials with the block's boundary clamped at the
chain's current values, is calibrated towards the root by one collect pass
(forward filtering), and is then sampled backwards: the root clique from its
collected table, each other clique from its collected table restricted to
the separator values its parent drew (Dawid 1992, "Applications of a general
propagation algorithm for probabilistic expert systems", Statistics and
Computing 2; Lauritzen & Spiegelhalter 1988 for the propagation). A single
node is a one-clique tree: its Markov-blanket conditional.

What is precomputed (:func:`build`), as flat arrays a numba kernel reads
(:class:`Kernel`): for every clique, its nodes, strides and table offset;
the map of each of its states to its separator state and to its parent's;
its states grouped by separator state (backward sampling scans only the
states that agree with the parent); the product of its *fixed* factors
(those whose clamped nodes are all observed); and for its *moving* factors
(those that read a boundary node) the CPT offset of each clique state plus
the boundary nodes and strides that move the base index. A clique with no
moving factor in its subtree is *clean*: its collected table never changes,
so it is collected once at build time (its message folded into its
parent's fixed part) and cumulated along each separator group, and a sweep
draws it by bisection. Only the *dirty* cliques, on the paths from the
moving factors to the root, are recomputed each sweep. A block whose
boundary is the evidence only (e.g. one block of every unobserved node) is
all clean: each sweep is an exact independent draw at the cost of a few
bisections per clique.

Random scan (``scan="random"``): a sweep is as many updates as there are
units, each of a unit picked uniformly at random, with replacement; each
update leaves the posterior invariant, hence so does the sweep (the
random-scan Gibbs sampler; Liu, Wong & Kong 1995, JRSS B 57; Roberts &
Sahu 1997, JRSS B 59), whatever the units are.

Randomness: one uniform per clique per sweep, ``(chains, sweeps, cliques)``,
drawn from each chain's own :class:`~mcmc.core.random.ChainRandom` stream
before the kernel runs, so chain ``i`` depends only on the seed and ``i``,
and :func:`sample` over many sweeps gives the same bytes as as many
:func:`step` calls. A random scan reads, per update, one uniform for the
pick and then one per clique of the unit picked: a number that varies by
chain, so the kernel reads each chain's stream in place
(:meth:`~mcmc.core.random.ChainRandom.reserve`) and reports how far it read.
A plan without blocks delegates to the single-site
sampler :mod:`~mcmc.core.networks.single_site`, the fastest when nothing
needs blocking.

Statistics: ``lp`` (``log p(x, e)``, the log joint with the evidence: the
unnormalised log posterior) and ``change_rate`` (fraction of the unobserved
nodes whose state changed in the sweep). No warm-up adaptation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numba as nb
import numpy as np

from mcmc.core.networks import junction_tree as jt
from mcmc.core.networks import single_site
from mcmc.core.networks.blocks import Block, BlockPlan, BlockSpec, choose_blocks
from mcmc.core.networks.network import BayesianNetwork, Evidence
from mcmc.core.networks.tables import NEAR_ZERO, NetworkTables, clamped_start, compile_network, point_log_joint
from mcmc.core.random import ChainRandom
from mcmc.core.ranges import check_setting
from mcmc.core.samplers import registry

DECLARATION = registry.NETWORK_GIBBS
NAME = DECLARATION.name
MARKOV = True  # a Markov chain: warm-up and thinning apply
SWEEP_CHUNK = 256  # sweeps per compiled call: bounds the uniforms held, (chains, chunk, cliques)
RANDOM_RESERVE = 1 << 16  # a random scan's uniforms reserved per chain per compiled call (at least one sweep's)


class State(NamedTuple):
    position: np.ndarray  # (chains, n_nodes) int64 state codes, evidence included
    log_density: np.ndarray  # (chains,) log p(x, e)


class Info(NamedTuple):
    change_rate: np.ndarray  # (chains,) fraction of unobserved nodes that changed in the sweep


class Kernel(NamedTuple):
    """The flat arrays of every unit's junction tree (int64 but ``clq_dirty``, ``fixed`` and ``cdf``).

    Cliques are numbered globally, each unit's in its tree's pre-order
    (root first), units in scan order; ``u[c, s, g]`` is clique ``g``'s
    uniform in sweep ``s`` of chain ``c``.
    """

    unit_clq_ptr: np.ndarray  # (units + 1,) cliques of each unit
    clq_parent: np.ndarray  # (cliques,) global index of the parent, -1 for a root
    clq_size: np.ndarray  # (cliques,) table entries
    clq_dirty: np.ndarray  # (cliques,) bool: its collected table moves with the boundary (moving factor at/below it)
    clq_off: np.ndarray  # (cliques,) offset of its table in fixed/work, and of its sep_c and grp_order rows
    clq_var_ptr: np.ndarray  # (cliques + 1,) into clq_vars/clq_card/clq_stride
    clq_vars: np.ndarray  # node of each clique axis
    clq_card: np.ndarray  # its states
    clq_stride: np.ndarray  # its row-major stride in the clique table
    sep_size: np.ndarray  # (cliques,) separator states (1 for a root or an empty separator)
    sep_c: np.ndarray  # separator state of each clique state (offsets clq_off)
    sep_p_off: np.ndarray  # (cliques,) offset into sep_p of the parent's row (-1 for a root)
    sep_p: np.ndarray  # separator state of each of the parent's states
    grp_ptr_off: np.ndarray  # (cliques,) offset into grp_ptr of its sep_size + 1 bounds
    grp_ptr: np.ndarray  # states with separator state s: grp_order[clq_off + grp_ptr[s] : ... + grp_ptr[s + 1]]
    grp_order: np.ndarray  # clique states sorted by separator state (offsets clq_off)
    fac_ptr: np.ndarray  # (cliques + 1,) moving factors of each clique
    fac_base: np.ndarray  # CPT offset with the observed nodes folded in
    fac_var_ptr: np.ndarray  # (factors + 1,) into fac_vars/fac_strides
    fac_vars: np.ndarray  # unobserved nodes outside the unit (the boundary) the factor reads
    fac_strides: np.ndarray  # their strides in the flat CPT
    fac_off_ptr: np.ndarray  # (factors,) offset into fac_off
    fac_off: np.ndarray  # CPT offset of each clique state
    fixed: np.ndarray  # float64 (total entries,): a clean clique's collected table; a dirty one's fixed part
    cdf: np.ndarray  # float64 (total entries,): a clean clique's table cumulated along each group (grp_order), to 1


@dataclass(frozen=True, eq=False)
class Plan:
    """A network with evidence, its update units and their junction trees compiled for the kernel.

    Attributes
    ----------
    tables
        The compiled network (:class:`~mcmc.core.networks.tables.NetworkTables`).
    block_plan
        The units and the blocks chosen (:class:`~mcmc.core.networks.blocks.BlockPlan`;
        ``block_plan.summary()`` describes them for the user).
    trees
        The junction tree of each unit, in scan order (``()`` when delegating).
    kernel
        The arrays the compiled sweep reads, or ``None`` when delegating.
    gibbs
        The single-site plan that does the work when there is no block, else ``None``.
    scan
        ``"systematic"`` (the units in turn) or ``"random"`` (each update a unit picked at random).
    """

    tables: NetworkTables
    block_plan: BlockPlan
    trees: tuple[jt.JunctionTree, ...]
    kernel: Kernel | None
    gibbs: single_site.Plan | None
    scan: str = "systematic"

    @property
    def units(self) -> tuple[tuple[int, ...], ...]:
        """Each unit's nodes, in scan order."""
        return self.block_plan.units

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The units of more than one node (empty: single-site Gibbs)."""
        return self.block_plan.blocks

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.block_plan.warnings

    @property
    def n_cliques(self) -> int:
        """Uniforms one systematic sweep reads per chain (a random scan's vary: see :func:`_random_sweeps`)."""
        return 0 if self.kernel is None else int(self.kernel.clq_size.size)


class _Flat:
    """Arrays built piece by piece: small fields as lists of ints, large ones as lists of arrays, joined once."""

    def __init__(self) -> None:
        self.parts: dict[str, list] = {name: [] for name in Kernel._fields}
        self.length: dict[str, int] = dict.fromkeys(Kernel._fields, 0)

    def add(self, name: str, values: list[int] | np.ndarray) -> None:
        self.parts[name].append(np.asarray(values, dtype=np.int64).reshape(-1))
        self.length[name] += len(self.parts[name][-1])

    def one(self, name: str, value: int) -> None:
        self.add(name, [value])

    def array(self, name: str) -> np.ndarray:
        parts = self.parts[name]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _digit(size: int, shape: list[int], axis: int) -> np.ndarray:
    """The code of axis ``axis`` in each state of a row-major table of ``shape`` (``size`` states)."""
    stride = math.prod(shape[axis + 1 :])
    # repeat and tile copy memory; the integer division and modulo they replace cost 10x on a 10^6-entry clique
    return np.tile(np.repeat(np.arange(shape[axis], dtype=np.int64), stride), size // (stride * shape[axis]))


@nb.njit(cache=True, nogil=True)
def _group_cdf(w, bounds, out):
    """``out[lo:hi] = cumsum(w[lo:hi]) / sum(w[lo:hi])`` for each group ``[lo, hi)`` of ``bounds`` with mass.

    Sequential sums, as ``np.cumsum``'s, so the tables are the same bytes as
    cumulating each group with NumPy (a group without mass is left at 0).
    """
    for g in range(bounds.size - 1):
        lo = bounds[g]
        hi = bounds[g + 1]
        if hi <= lo:
            continue
        acc = 0.0
        for i in range(lo, hi):
            acc += w[i]
            out[i] = acc
        if acc > 0.0:
            for i in range(lo, hi):
                out[i] = out[i] / acc
        else:
            for i in range(lo, hi):
                out[i] = 0.0


def _compile(network: BayesianNetwork, tables: NetworkTables, trees: tuple[jt.JunctionTree, ...]) -> Kernel:
    """Flatten the trees of the units into a :class:`Kernel` (see its fields)."""
    ev = tables.evidence
    card = network.cardinality
    a = _Flat()
    for name in ("unit_clq_ptr", "clq_var_ptr", "fac_ptr", "fac_var_ptr"):
        a.one(name, 0)
    off = 0
    fixed: list[np.ndarray] = []
    dirty_all: list[bool] = []
    for tree in trees:
        first = a.length["clq_size"]
        free = set(tree.free)
        moving_here = [False] * len(tree.cliques)
        for q, clique in enumerate(tree.cliques):
            shape = [card[v] for v in clique]
            size = math.prod(shape)
            p = tree.parent[q]
            a.one("clq_parent", first + p if p >= 0 else -1)
            a.one("clq_size", size)
            a.one("clq_off", off)
            a.add("clq_vars", list(clique))
            a.add("clq_card", shape)
            a.add("clq_stride", [math.prod(shape[k + 1 :]) for k in range(len(shape))])
            a.one("clq_var_ptr", a.length["clq_vars"])
            sep = tree.separator(q)
            sep_shape = [card[v] for v in sep]
            n_sep = math.prod(sep_shape)
            if sep:
                sc = np.ravel_multi_index(tuple(_digit(size, shape, clique.index(v)) for v in sep), sep_shape)
                up = tree.cliques[p]
                up_shape = [card[v] for v in up]
                sp = np.ravel_multi_index(
                    tuple(_digit(tree.sizes[p], up_shape, up.index(v)) for v in sep), sep_shape
                )
            else:
                sc = np.zeros(size, dtype=np.int64)
                sp = np.zeros(tree.sizes[p] if p >= 0 else 0, dtype=np.int64)
            a.one("sep_size", n_sep)
            a.add("sep_c", sc)
            a.one("sep_p_off", a.length["sep_p"] if p >= 0 else -1)
            a.add("sep_p", sp)
            a.one("grp_ptr_off", a.length["grp_ptr"])
            a.add("grp_ptr", np.concatenate([[0], np.cumsum(np.bincount(sc, minlength=n_sep))]))
            a.add("grp_order", np.argsort(sc, kind="stable"))
            table = np.ones(size)
            for j, home in zip(tree.factors, tree.home, strict=True):
                if home != q:
                    continue
                scope, strides = tables.scope_strides(j)
                base = int(tables.cpt_offset[j])
                at = np.zeros(size, dtype=np.int64)
                moving: list[tuple[int, int]] = []
                for v, st in zip(scope, strides, strict=True):
                    if v in free:
                        at += _digit(size, shape, clique.index(v)) * st
                    elif v in ev:
                        base += ev[v] * st  # observed: folded into the base once and for all
                    else:
                        moving.append((v, st))
                if not moving:
                    table *= tables.cpt[base + at]
                    continue
                moving_here[q] = True
                a.one("fac_base", base)
                a.add("fac_vars", [v for v, _ in moving])
                a.add("fac_strides", [st for _, st in moving])
                a.one("fac_var_ptr", a.length["fac_vars"])
                a.one("fac_off_ptr", a.length["fac_off"])
                a.add("fac_off", at)
            a.one("fac_ptr", a.length["fac_base"])
            fixed.append(table)
            off += size
        # Dirty: a moving factor in the clique or below it (pre-order reversed: children first).
        dirty = list(moving_here)
        for q in range(len(tree.cliques) - 1, 0, -1):
            dirty[tree.parent[q]] |= dirty[q]
        dirty_all.extend(dirty)
        a.one("unit_clq_ptr", a.length["clq_size"])
    arrays = {name: a.array(name) for name in Kernel._fields if name not in ("clq_dirty", "fixed", "cdf")}
    k = Kernel(
        **arrays,
        clq_dirty=np.array(dirty_all, dtype=np.bool_),
        fixed=np.concatenate(fixed) if fixed else np.zeros(0),
        cdf=np.zeros(off),
    )
    # A clean clique's subtree never sees the boundary: its messages are
    # collected once here, into its parent's fixed part, so a sweep
    # recomputes only the dirty cliques (the paths from the boundary's
    # factors to the root). A clean clique is then drawn by bisection of its
    # table cumulated along each separator group: it costs the log of its
    # group, not the group (the root of one block of a whole network can
    # hold 10^4 entries).
    for g in range(k.clq_size.size - 1, -1, -1):
        if k.clq_dirty[g]:
            continue
        o, size = k.clq_off[g], k.clq_size[g]
        p = k.clq_parent[g]
        if p >= 0:
            msg = np.bincount(k.sep_c[o : o + size], weights=k.fixed[o : o + size], minlength=k.sep_size[g])
            if msg.sum() > 0:
                msg /= msg.sum()
            po, sp = k.clq_off[p], k.sep_p_off[g]
            k.fixed[po : po + k.clq_size[p]] *= msg[k.sep_p[sp : sp + k.clq_size[p]]]
        bounds = k.grp_ptr[k.grp_ptr_off[g] : k.grp_ptr_off[g] + k.sep_size[g] + 1]
        w = k.fixed[o + k.grp_order[o : o + size]]
        _group_cdf(w, bounds, k.cdf[o : o + size])
    return k


def build(
    network: BayesianNetwork,
    evidence: Evidence | None = None,
    blocks: str | BlockSpec | None = "auto",
    budget: int | None = None,
    near_zero: float = NEAR_ZERO,
    scan: str = "systematic",
) -> Plan:
    """Choose the blocks and compile ``network`` with ``evidence`` for blocked Gibbs.

    Parameters
    ----------
    network, evidence
        The network and ``{node: code}`` evidence (assumed possible: see
        :func:`~mcmc.core.networks.variable_elimination.check_evidence`).
    blocks
        ``"auto"``, ``"single"``, ``"A+B+C;D+E"`` or blocks of node indices
        (:func:`~mcmc.core.networks.blocks.choose_blocks`).
    budget
        Largest clique table of a block, in entries; ``None``: ``10**6`` for
        one block of every free node and named blocks, ``10**4`` for blocks
        grown from near-deterministic groups
        (:func:`~mcmc.core.networks.blocks.choose_blocks`).
    near_zero
        Table entries below this count as zeros when looking for the groups
        that trap single-site moves.
    scan
        ``"systematic"``: each sweep updates the units in turn; ``"random"``:
        each of its updates picks a unit at random.

    Raises
    ------
    UsageError
        A bad block specification (:func:`~mcmc.core.networks.blocks.parse_blocks`),
        budget or scan.
    CliqueBudgetError
        A named block too wide for ``budget``.
    """
    if budget is not None:
        check_setting("budget", budget, "the clique budget")
    registry.SCAN.check(scan, "the scan")
    tables = compile_network(network, evidence)
    plan = choose_blocks(network, tables.evidence, blocks, budget, near_zero)
    if not plan.blocks:
        return Plan(tables, plan, (), None, single_site.build(network, tables.evidence, tables, scan), scan)
    by_first = {b.nodes[0]: b.tree for b in plan.blocks}
    trees = tuple(by_first[u[0]] if len(u) > 1 else jt.build(network, u) for u in plan.units)
    return Plan(tables, plan, trees, _compile(network, tables, trees), None, scan)


# -- the compiled kernel -------------------------------------------------------------------------


@nb.njit(cache=True, nogil=True)
def _collect(un, x, work, msg, k, cpt):
    """Forward filtering: unit ``un``'s dirty clique tables at the boundary values in ``x``, collected to the root.

    Writes ``work`` for the dirty cliques only: each one's fixed part (with
    its clean children's messages folded in at build time) times its moving
    factors and the messages of its dirty children (each message rescaled to
    sum to one: only ratios matter). The clean cliques' tables stay in
    ``k.fixed``.
    """
    first = k.unit_clq_ptr[un]
    last = k.unit_clq_ptr[un + 1]
    for g in range(first, last):
        if not k.clq_dirty[g]:
            continue
        o = k.clq_off[g]
        size = k.clq_size[g]
        for t in range(size):
            work[o + t] = k.fixed[o + t]
        for f in range(k.fac_ptr[g], k.fac_ptr[g + 1]):
            base = k.fac_base[f]
            for q in range(k.fac_var_ptr[f], k.fac_var_ptr[f + 1]):
                base += x[k.fac_vars[q]] * k.fac_strides[q]
            fo = k.fac_off_ptr[f]
            for t in range(size):
                work[o + t] *= cpt[base + k.fac_off[fo + t]]
    for g in range(last - 1, first, -1):  # pre-order reversed: children before parents
        if not k.clq_dirty[g]:
            continue  # (a dirty clique's parent is dirty)
        o = k.clq_off[g]
        n_sep = k.sep_size[g]
        for s in range(n_sep):
            msg[s] = 0.0
        for t in range(k.clq_size[g]):
            msg[k.sep_c[o + t]] += work[o + t]
        total = 0.0
        for s in range(n_sep):
            total += msg[s]
        if total > 0.0:
            for s in range(n_sep):
                msg[s] /= total
        p = k.clq_parent[g]
        po = k.clq_off[p]
        sp = k.sep_p_off[g]
        for t in range(k.clq_size[p]):
            work[po + t] *= msg[k.sep_p[sp + t]]


@nb.njit(cache=True, nogil=True)
def _draw(un, x, work, u_row, u0, chosen, k):
    """Backward sampling of unit ``un``; writes ``x``, returns the number of nodes changed.

    Clique ``g`` reads the uniform ``u_row[u0 + g]`` and draws, by inversion, one
    of its states that agree with the separator state its parent drew (the
    root: any state), with probability proportional to its collected table:
    a dirty clique's in ``work`` (:func:`_collect`) by a linear scan, a
    clean clique's by bisection of its cumulated table ``k.cdf``. Both pick
    the first state whose cumulated mass exceeds the uniform's share.
    """
    first = k.unit_clq_ptr[un]
    changed = 0
    for g in range(first, k.unit_clq_ptr[un + 1]):
        o = k.clq_off[g]
        s = 0
        if g != first:
            s = k.sep_p[k.sep_p_off[g] + chosen[k.clq_parent[g] - first]]
        gp = k.grp_ptr_off[g]
        lo = k.grp_ptr[gp + s]
        hi = k.grp_ptr[gp + s + 1]
        if k.clq_dirty[g]:
            total = 0.0
            for i in range(lo, hi):
                total += work[o + k.grp_order[o + i]]
            r = u_row[u0 + g] * total
            pick = -1
            acc = 0.0
            for i in range(lo, hi):
                t = k.grp_order[o + i]
                w = work[o + t]
                if w > 0.0:  # a state of probability zero is never drawn, even by rounding
                    acc += w
                    pick = t
                    if r < acc:
                        break
            if pick < 0:  # no mass (the chain's state had probability zero): stay
                pick = 0
                for j in range(k.clq_var_ptr[g], k.clq_var_ptr[g + 1]):
                    pick += x[k.clq_vars[j]] * k.clq_stride[j]
        else:
            # The first i with cdf > u: never a state of probability zero
            # (its cdf equals its predecessor's); the last is 1 > u.
            r = u_row[u0 + g]
            hi -= 1
            while lo < hi:
                mid = (lo + hi) // 2
                if k.cdf[o + mid] > r:
                    hi = mid
                else:
                    lo = mid + 1
            pick = k.grp_order[o + lo]
        chosen[g - first] = pick
        for j in range(k.clq_var_ptr[g], k.clq_var_ptr[g + 1]):
            code = (pick // k.clq_stride[j]) % k.clq_card[j]
            v = k.clq_vars[j]
            if x[v] != code:  # a separator node is written again by the child, unchanged
                x[v] = code
                changed += 1
    return changed


@nb.njit(cache=True, nogil=True)
def _sweeps(
    codes, u, record, thin, kept0, out, lp_out, change_out, unobserved, k,
    cpt, cpt_offset, par_ptr, par, par_stride,
):  # fmt: skip
    """Run ``u.shape[1]`` sweeps on every chain of ``codes (chains, n_nodes)`` in place.

    ``u (chains, sweeps, cliques)`` uniforms. With ``record``, sweep ``s``
    with ``s % thin == 0`` writes the unobserved codes to ``out[c, kept0 +
    j]`` (its ``j``-th kept sweep), the log joint to ``lp_out`` and the
    fraction of changed nodes to ``change_out``.
    """
    n_chains, n_sweeps, _ = u.shape
    n_units = k.unit_clq_ptr.size - 1
    work = np.empty(k.fixed.size)
    n_msg = 1
    most = 1
    for un in range(n_units):
        most = max(most, k.unit_clq_ptr[un + 1] - k.unit_clq_ptr[un])
    for g in range(k.sep_size.size):
        n_msg = max(n_msg, k.sep_size[g])
    msg = np.empty(n_msg)
    chosen = np.empty(most, dtype=np.int64)
    n_free = max(unobserved.size, 1)
    for c in range(n_chains):
        x = codes[c]
        kept = kept0
        for s in range(n_sweeps):
            changed = 0
            for un in range(n_units):
                _collect(un, x, work, msg, k, cpt)
                changed += _draw(un, x, work, u[c, s], 0, chosen, k)
            if record and s % thin == 0:
                for j in range(unobserved.size):
                    out[c, kept, j] = x[unobserved[j]]
                lp_out[c, kept] = point_log_joint(x, cpt, cpt_offset, par_ptr, par, par_stride)
                change_out[c, kept] = changed / n_free
                kept += 1


@nb.njit(cache=True, nogil=True)
def _random_sweeps(
    codes, data, pos, n_sweeps, thin, kept0, out, lp_out, change_out, unobserved, k,
    cpt, cpt_offset, par_ptr, par, par_stride,
):  # fmt: skip
    """Run ``n_sweeps`` random-scan sweeps on every chain of ``codes (chains, n_nodes)`` in place.

    Chain ``c`` reads its uniforms in order from ``data[c, pos[c]:]``: for
    each update, one to pick the unit (``floor(units * u)``), then one per
    clique of that unit for its backward sampling. Records as
    :func:`_sweeps` does (``change_out``: the fraction of the unobserved
    nodes that differ from the sweep's start). Returns ``(chains,)`` the
    uniforms each chain read.
    """
    n_chains = codes.shape[0]
    n_units = k.unit_clq_ptr.size - 1
    work = np.empty(k.fixed.size)
    n_msg = 1
    most = 1
    for un in range(n_units):
        most = max(most, k.unit_clq_ptr[un + 1] - k.unit_clq_ptr[un])
    for g in range(k.sep_size.size):
        n_msg = max(n_msg, k.sep_size[g])
    msg = np.empty(n_msg)
    chosen = np.empty(most, dtype=np.int64)
    before = np.empty(unobserved.size, dtype=np.int64)
    n_free = max(unobserved.size, 1)
    used = np.zeros(n_chains, dtype=np.int64)
    for c in range(n_chains):
        x = codes[c]
        row = data[c]
        q = pos[c]
        kept = kept0
        for s in range(n_sweeps):
            for j in range(unobserved.size):
                before[j] = x[unobserved[j]]
            for _ in range(n_units):
                un = min(int(row[q] * n_units), n_units - 1)
                first = k.unit_clq_ptr[un]
                _collect(un, x, work, msg, k, cpt)
                _draw(un, x, work, row, q + 1 - first, chosen, k)
                q += 1 + k.unit_clq_ptr[un + 1] - first
            if s % thin == 0:
                changed = 0
                for j in range(unobserved.size):
                    if x[unobserved[j]] != before[j]:
                        changed += 1
                for j in range(unobserved.size):
                    out[c, kept, j] = x[unobserved[j]]
                lp_out[c, kept] = point_log_joint(x, cpt, cpt_offset, par_ptr, par, par_stride)
                change_out[c, kept] = changed / n_free
                kept += 1
        used[c] = q - pos[c]
    return used


# -- the sampler protocol ------------------------------------------------------------------------


def log_joint(plan: Plan, codes: np.ndarray) -> np.ndarray:
    """``log p(x, e)`` of full configurations ``codes (chains, n_nodes)``; returns ``(chains,)``."""
    return plan.tables.network.log_joint(codes)


def init(position: np.ndarray, plan: Plan) -> State:
    """State at full configurations ``position (chains, n_nodes)`` (evidence nodes are set to the evidence).

    Raises
    ------
    ValueError
        A configuration has probability zero (Gibbs could not move from it).
    """
    return State(*clamped_start(position, plan.tables))


def sample(
    rng: ChainRandom, state: State, plan: Plan, draws: int, thin: int = 1
) -> tuple[State, np.ndarray, dict[str, np.ndarray]]:
    """``draws`` sweeps for every chain in one compiled call, keeping every ``thin``-th.

    Returns
    -------
    state
        The state after the last sweep.
    codes
        ``(chains, ceil(draws / thin), n_unobserved)`` state codes of the
        unobserved nodes (``plan.tables.unobserved`` order), in the network's
        code dtype.
    stats
        ``lp`` and ``change_rate``, each ``(chains, ceil(draws / thin))``.
    """
    if plan.kernel is None:
        assert plan.gibbs is not None
        new, out, stats = single_site.sample(rng, single_site.State(*state), plan.gibbs, draws, thin)
        return State(*new), out, stats
    t = plan.tables
    chains = state.position.shape[0]
    kept = -(-draws // thin) if draws > 0 else 0
    out = np.empty((chains, kept, t.n_unobserved), dtype=t.code_dtype)
    lp = np.empty((chains, kept))
    change = np.empty((chains, kept))
    codes = np.array(state.position, dtype=np.int64, copy=True)
    if plan.scan == "random":
        _random_sample(rng, codes, plan, draws, thin, out, lp, change)
        last = lp[:, -1].copy() if kept and (draws - 1) % thin == 0 else log_joint(plan, codes)
        return State(codes, last), out, {"lp": lp, "change_rate": change}
    # Sweeps in chunks (a multiple of thin) bound the memory of the uniforms;
    # a chain's uniforms are the same whatever the chunking (ChainRandom).
    chunk = thin * max(1, SWEEP_CHUNK // thin)
    for start in range(0, draws, chunk):
        n = min(chunk, draws - start)
        u = np.ascontiguousarray(rng.uniform((n, plan.n_cliques)))
        _sweeps(
            codes, u, True, thin, start // thin, out, lp, change, t.unobserved, plan.kernel,
            t.cpt, t.cpt_offset, t.par_ptr, t.par, t.par_stride,
        )  # fmt: skip
    last = lp[:, -1].copy() if kept and (draws - 1) % thin == 0 else log_joint(plan, codes)
    return State(codes, last), out, {"lp": lp, "change_rate": change}


def _random_sample(rng, codes, plan, draws, thin, out, lp, change) -> None:
    """:func:`sample`'s random scan: sweeps in chunks whose uniforms fit :data:`RANDOM_RESERVE`, read in place."""
    k = plan.kernel
    t = plan.tables
    n_units = k.unit_clq_ptr.size - 1
    most = int(np.diff(k.unit_clq_ptr).max())
    per_sweep = n_units * (1 + most)  # the most a sweep can read: every update picks the widest unit
    chunk = thin * max(1, min(SWEEP_CHUNK, RANDOM_RESERVE // per_sweep) // thin)
    for start in range(0, draws, chunk):
        n = min(chunk, draws - start)
        data, pos = rng.reserve("uniform", n * per_sweep)
        used = _random_sweeps(
            codes, data, pos, n, thin, start // thin, out, lp, change, t.unobserved, k,
            t.cpt, t.cpt_offset, t.par_ptr, t.par, t.par_stride,
        )  # fmt: skip
        rng.advance("uniform", used)


def step(rng: ChainRandom, state: State, plan: Plan) -> tuple[State, Info]:
    """One sweep over the units for every chain, in the plan's scan (see :func:`sample` for many at once)."""
    new, _, stats = sample(rng, state, plan, 1)
    return new, Info(stats["change_rate"][:, 0])


def unit_conditional(plan: Plan, unit: int, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The law the kernel draws unit ``unit`` from at the full configuration ``position``.

    Runs the kernel's own forward filtering and reads backward sampling's
    factorisation off its tables: ``p(x_B) = prod_q tab_q(x_Cq) / sum_{y :
    y_Sq = x_Sq} tab_q(y)``. For tests and diagnostics (a Python loop over
    the unit's joint states: small units only).

    Returns
    -------
    states
        ``(K, len(unit nodes))`` every joint state of the unit's nodes
        (``plan.units[unit]`` order), row-major.
    probs
        ``(K,)`` their probabilities.
    """
    k = plan.kernel
    if k is None:
        raise ValueError("the plan has no blocks: its units are single_site's single sites")
    x = np.array(position, dtype=np.int64, copy=True)
    work = np.zeros_like(k.fixed)
    _collect(unit, x, work, np.empty(max(1, int(k.sep_size.max()))), k, plan.tables.cpt)
    tab = np.where(np.repeat(k.clq_dirty, k.clq_size), work, k.fixed)  # each clique's collected table
    nodes = plan.units[unit]
    card = plan.tables.network.cardinality
    states = np.array(list(np.ndindex(*(card[v] for v in nodes))), dtype=np.int64)
    probs = np.ones(len(states))
    for g in range(k.unit_clq_ptr[unit], k.unit_clq_ptr[unit + 1]):
        o, size = k.clq_off[g], k.clq_size[g]
        cv = slice(k.clq_var_ptr[g], k.clq_var_ptr[g + 1])
        pos = [nodes.index(v) for v in k.clq_vars[cv]]
        t = states[:, pos] @ k.clq_stride[cv]
        sep = k.sep_c[o : o + size]
        mass = np.bincount(sep, weights=tab[o : o + size], minlength=k.sep_size[g])
        with np.errstate(invalid="ignore", divide="ignore"):
            probs *= np.where(tab[o + t] > 0, tab[o + t] / mass[sep[t]], 0.0)
    return states, probs


def run_attrs(plan: Plan, stats: dict[str, np.ndarray]) -> dict[str, Any]:
    """The chains file's attributes of a run: the blocks used and how they were chosen.

    ``blocks``: one entry per block (:meth:`~mcmc.core.networks.blocks.BlockPlan.summary`:
    its nodes, its largest clique's table entries and nodes, its number of
    cliques and boundary nodes, and whether its draws are exact); the nodes
    of no block are updated singly. ``block_choice``: ``auto``, ``single``
    or ``custom``; ``block_budget`` and ``grown_block_budget``: the largest
    clique table a block may have, in entries (the second for a block grown
    from a near-deterministic group). ``scan``: ``systematic`` or ``random``.
    """
    bp = plan.block_plan
    return {"blocks": bp.summary(), "block_choice": bp.spec, "block_budget": bp.budget,
            "grown_block_budget": bp.grown_budget, "scan": plan.scan}  # fmt: skip
