"""Single-site Gibbs sampling of a discrete Bayesian network given evidence, compiled with numba.

Geman & Geman (1984); for Bayesian networks Pearl (1987), "Evidential
reasoning using stochastic simulation of causal models": each unobserved
node is redrawn from its full conditional, which involves only its Markov
blanket (parents, children and the children's other parents):

    p(x_i | x_-i, e) ∝ p(x_i | pa_i) prod_{c in ch(i)} p(x_c | pa_c).

One iteration is a systematic scan over the unobserved nodes in
topological order, or (``scan="random"``) as many updates as there are
nodes, each of a node picked uniformly at random, with replacement (the
random-scan Gibbs sampler; Liu, Wong & Kong 1995; Roberts & Sahu 1997);
every update leaves the posterior invariant, hence so does the sweep. Single-site moves cannot cross the zeros of a
deterministic table (:func:`~mcmc.core.networks.tables.reducibility`):
``gibbs`` on a network is blocked Gibbs
(:mod:`~mcmc.core.networks.blocked_gibbs`), which draws such nodes together
and uses this kernel only when its plan has no block (a network too wide
for one block and with nothing to block, or ``blocks=single``).

What is precomputed (:func:`build`): per node (an update *unit*; the arrays
would take units of several nodes, their joint states enumerated), the
CPTs it touches (its own and its children's) and, for each, the CPT's flat
base index as a sum ``code[v] * stride`` over the nodes outside the unit
plus a table of offsets over the unit's states. An update is then a few
multiply-adds per touched table and state, in a numba kernel over chains x
sweeps x units; nothing in Python runs per node or per sweep.

Randomness: one uniform per unit per sweep, ``(chains, sweeps, units)``
(a random scan: two per update, the pick and the draw), drawn from each
chain's own :class:`~mcmc.core.random.ChainRandom` stream
before the kernel runs, so chain ``i`` depends only on the seed and ``i``,
and :func:`sample` over many sweeps gives the same bytes as as many
:func:`step` calls.

Statistics: ``lp`` (``log p(x, e)``, the log joint with the evidence, i.e.
the unnormalised log posterior) and ``change_rate`` (fraction of the
unobserved nodes whose state changed in the sweep). No warm-up adaptation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numba as nb
import numpy as np

from mcmc.core.networks.network import BayesianNetwork, Evidence
from mcmc.core.networks.tables import NetworkTables, clamped_start, compile_network, point_log_joint
from mcmc.core.random import ChainRandom
from mcmc.core.samplers import registry

SWEEP_CHUNK = 256  # sweeps per compiled call: bounds the uniforms held, (chains, chunk, units)


class State(NamedTuple):
    position: np.ndarray  # (chains, n_nodes) int64 state codes, evidence included
    log_density: np.ndarray  # (chains,) log p(x, e)


class Info(NamedTuple):
    change_rate: np.ndarray  # (chains,) fraction of unobserved nodes that changed in the sweep


@dataclass(frozen=True, eq=False)
class Plan:
    """A network with evidence, its update units and their precomputed index arithmetic.

    Attributes
    ----------
    tables
        The compiled network (:class:`~mcmc.core.networks.tables.NetworkTables`).
    units
        Node indices of each update unit, in systematic-scan order.
    scan
        ``"systematic"`` or ``"random"`` (:func:`build`).
    Other fields are CSR arrays read by the kernel: ``unit_ptr``/``unit_nodes``
    (nodes of each unit), ``unit_size`` (joint states), ``dec_ptr``/``dec``
    (the codes of each joint state, row-major over the unit's nodes),
    ``uf_ptr`` (touched tables of each unit), and per touched table
    ``uf_base`` (its CPT offset), ``uf_var_ptr``/``uf_vars``/``uf_strides``
    (nodes outside the unit and their strides) and ``uf_off_ptr``/``uf_off``
    (offset of each joint state of the unit).
    """

    tables: NetworkTables
    units: tuple[tuple[int, ...], ...]
    unit_ptr: np.ndarray
    unit_nodes: np.ndarray
    unit_size: np.ndarray
    dec_ptr: np.ndarray
    dec: np.ndarray
    uf_ptr: np.ndarray
    uf_base: np.ndarray
    uf_var_ptr: np.ndarray
    uf_vars: np.ndarray
    uf_strides: np.ndarray
    uf_off_ptr: np.ndarray
    uf_off: np.ndarray
    scan: str = "systematic"


def build(
    network: BayesianNetwork,
    evidence: Evidence | None = None,
    tables: NetworkTables | None = None,
    scan: str = "systematic",
) -> Plan:
    """Compile ``network`` with ``evidence`` for single-site Gibbs sampling.

    Parameters
    ----------
    network, evidence
        The network and ``{node: code}`` evidence (assumed possible: see
        :func:`~mcmc.core.networks.variable_elimination.check_evidence`).
    tables
        ``compile_network(network, evidence)`` when the caller has it already.
    scan
        ``"systematic"`` (the nodes in topological order) or ``"random"``
        (each update a node picked at random).

    Raises
    ------
    UsageError
        An unknown ``scan``.
    """
    registry.SCAN.check(scan, "the scan")
    tables = compile_network(network, evidence) if tables is None else tables
    units = tuple((int(v),) for v in tables.unobserved)
    card = network.cardinality
    unit_ptr, unit_nodes, unit_size, dec_ptr, dec = [0], [], [], [0], []
    uf_ptr, uf_base, uf_var_ptr, uf_vars, uf_strides, uf_off_ptr, uf_off = [0], [], [0], [], [], [0], []
    for unit in units:
        shape = tuple(card[v] for v in unit)
        size = math.prod(shape)
        digits = np.array(list(np.ndindex(*shape)), dtype=np.int64).reshape(size, len(unit))
        unit_nodes.extend(unit)
        unit_ptr.append(len(unit_nodes))
        unit_size.append(size)
        dec.extend(digits.ravel())
        dec_ptr.append(len(dec))
        touched = sorted({j for v in unit for j in (v, *network.children[v])})
        for j in touched:
            scope, strides = tables.scope_strides(j)
            uf_base.append(int(tables.cpt_offset[j]))
            off = np.zeros(size, dtype=np.int64)
            for v, st in zip(scope, strides, strict=True):
                if v in unit:
                    off += digits[:, unit.index(v)] * st
                else:
                    uf_vars.append(v)
                    uf_strides.append(st)
            uf_var_ptr.append(len(uf_vars))
            uf_off.extend(off)
            uf_off_ptr.append(len(uf_off))
        uf_ptr.append(len(uf_base))

    def arr(x: list[int]) -> np.ndarray:
        return np.array(x, dtype=np.int64)

    return Plan(
        tables, units, arr(unit_ptr), arr(unit_nodes), arr(unit_size), arr(dec_ptr), arr(dec),
        arr(uf_ptr), arr(uf_base), arr(uf_var_ptr), arr(uf_vars), arr(uf_strides), arr(uf_off_ptr), arr(uf_off),
        scan,
    )  # fmt: skip


@nb.njit(cache=True, nogil=True)
def _update(
    un, x, r, p, unit_ptr, unit_nodes, unit_size, dec_ptr, dec,
    uf_ptr, uf_base, uf_var_ptr, uf_vars, uf_strides, uf_off_ptr, uf_off, cpt,
):  # fmt: skip
    """Draw unit ``un`` of ``x`` from its full conditional by inversion of the uniform ``r``; returns the nodes changed.

    ``p`` is scratch of at least ``unit_size[un]`` entries.
    """
    size = unit_size[un]
    for k in range(size):
        p[k] = 1.0
    for e in range(uf_ptr[un], uf_ptr[un + 1]):
        base = uf_base[e]
        for q in range(uf_var_ptr[e], uf_var_ptr[e + 1]):
            base += x[uf_vars[q]] * uf_strides[q]
        o = uf_off_ptr[e]
        for k in range(size):
            p[k] *= cpt[base + uf_off[o + k]]
    total = 0.0
    for k in range(size):
        total += p[k]
    r = r * total
    pick = size - 1
    acc = 0.0
    for k in range(size - 1):
        acc += p[k]
        if r < acc:
            pick = k
            break
    m = unit_ptr[un + 1] - unit_ptr[un]
    d = dec_ptr[un] + pick * m
    changed = 0
    for j in range(m):
        v = unit_nodes[unit_ptr[un] + j]
        if x[v] != dec[d + j]:
            changed += 1
            x[v] = dec[d + j]
    return changed


@nb.njit(cache=True, nogil=True)
def _sweeps(
    codes, u, record, thin, kept0, out, lp_out, change_out, unobserved, random_scan,
    unit_ptr, unit_nodes, unit_size, dec_ptr, dec,
    uf_ptr, uf_base, uf_var_ptr, uf_vars, uf_strides, uf_off_ptr, uf_off,
    cpt, cpt_offset, par_ptr, par, par_stride,
):  # fmt: skip
    """Run ``u.shape[1]`` sweeps on every chain of ``codes (chains, n_nodes)`` in place.

    ``u (chains, sweeps, units)`` uniforms for a systematic scan (unit ``un``
    reads ``u[c, s, un]``); ``u (chains, sweeps, 2 * units)`` for a random
    scan (``random_scan``), whose ``t``-th update picks the unit
    ``floor(units * u[c, s, 2t])`` and draws it with ``u[c, s, 2t + 1]``.
    With ``record``, sweep ``s`` with ``s % thin == 0`` writes the unobserved
    codes to ``out[c, kept0 + k]`` (its ``k``-th kept sweep), the log joint to
    ``lp_out`` and the fraction of the unobserved nodes that changed in the
    sweep to ``change_out``.
    """
    n_chains, n_sweeps, _ = u.shape
    n_units = unit_size.size
    max_k = 1
    for un in range(n_units):
        max_k = max(max_k, unit_size[un])
    p = np.empty(max_k)
    before = np.empty(unobserved.size, dtype=np.int64)
    n_free = max(unobserved.size, 1)
    for c in range(n_chains):
        x = codes[c]
        kept = kept0
        for s in range(n_sweeps):
            changed = 0
            if random_scan:
                for j in range(unobserved.size):
                    before[j] = x[unobserved[j]]
                for t in range(n_units):
                    un = min(int(u[c, s, 2 * t] * n_units), n_units - 1)
                    _update(un, x, u[c, s, 2 * t + 1], p, unit_ptr, unit_nodes, unit_size, dec_ptr, dec,
                            uf_ptr, uf_base, uf_var_ptr, uf_vars, uf_strides, uf_off_ptr, uf_off, cpt)  # fmt: skip
                for j in range(unobserved.size):  # a node drawn twice counts once
                    if x[unobserved[j]] != before[j]:
                        changed += 1
            else:
                for un in range(n_units):
                    changed += _update(un, x, u[c, s, un], p, unit_ptr, unit_nodes, unit_size, dec_ptr, dec,
                                       uf_ptr, uf_base, uf_var_ptr, uf_vars, uf_strides, uf_off_ptr, uf_off, cpt)
            if record and s % thin == 0:
                for j in range(unobserved.size):
                    out[c, kept, j] = x[unobserved[j]]
                lp_out[c, kept] = point_log_joint(x, cpt, cpt_offset, par_ptr, par, par_stride)
                change_out[c, kept] = changed / n_free
                kept += 1


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
    t = plan.tables
    chains = state.position.shape[0]
    kept = -(-draws // thin) if draws > 0 else 0
    out = np.empty((chains, kept, t.n_unobserved), dtype=t.code_dtype)
    lp = np.empty((chains, kept))
    change = np.empty((chains, kept))
    codes = np.array(state.position, dtype=np.int64, copy=True)
    # Sweeps in chunks (a multiple of thin) bound the memory of the uniforms;
    # a chain's uniforms are the same whatever the chunking (ChainRandom).
    chunk = thin * max(1, SWEEP_CHUNK // thin)
    for start in range(0, draws, chunk):
        n = min(chunk, draws - start)
        per_sweep = len(plan.units) * (2 if plan.scan == "random" else 1)
        u = np.ascontiguousarray(rng.uniform((n, per_sweep)))
        _sweeps(
            codes, u, True, thin, start // thin, out, lp, change, t.unobserved, plan.scan == "random",
            plan.unit_ptr, plan.unit_nodes, plan.unit_size, plan.dec_ptr, plan.dec,
            plan.uf_ptr, plan.uf_base, plan.uf_var_ptr, plan.uf_vars, plan.uf_strides, plan.uf_off_ptr, plan.uf_off,
            t.cpt, t.cpt_offset, t.par_ptr, t.par, t.par_stride,
        )  # fmt: skip
    last = lp[:, -1].copy() if kept and (draws - 1) % thin == 0 else log_joint(plan, codes)
    return State(codes, last), out, {"lp": lp, "change_rate": change}


def step(rng: ChainRandom, state: State, plan: Plan) -> tuple[State, Info]:
    """One sweep for every chain, in the plan's scan (see :func:`sample` for many at once)."""
    new, _, stats = sample(rng, state, plan, 1)
    return new, Info(stats["change_rate"][:, 0])
