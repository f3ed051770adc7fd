"""Single-site Gibbs sampling of a discrete Bayesian network given evidence, compiled with numba.

Geman & Geman (1984); for Bayesian networks Pearl (1987), "Evidential
reasoning using stochastic simulation of causal models": each unobserved
node is redrawn from its full conditional, which involves only its Markov
blanket (parents, children and the children's other parents):

    p(x_i | x_-i, e) ∝ p(x_i | pa_i) prod_{c in ch(i)} p(x_c | pa_c).

One iteration is a systematic scan over the unobserved nodes in
topological order; every update leaves the posterior invariant, hence so
does the sweep. Single-site moves cannot cross the zeros of a
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

Randomness: one uniform per unit per sweep, ``(chains, sweeps, units)``,
drawn from each chain's own :class:`~mcmc.core.random.ChainRandom` stream
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
from mcmc.core.networks.tables import NetworkTables, compile_network
from mcmc.core.random import ChainRandom

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
        Node indices of each update unit, in scan order.
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


def build(
    network: BayesianNetwork, evidence: Evidence | None = None, tables: NetworkTables | None = None
) -> Plan:
    """Compile ``network`` with ``evidence`` for single-site Gibbs sampling.

    Parameters
    ----------
    network, evidence
        The network and ``{node: code}`` evidence (assumed possible: see
        :func:`~mcmc.core.networks.variable_elimination.check_evidence`).
    tables
        ``compile_network(network, evidence)`` when the caller has it already.
    """
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
    )  # fmt: skip


@nb.njit(cache=True, nogil=True)
def _log_joint(x, cpt, cpt_offset, par_ptr, par, par_stride):
    lp = 0.0
    for i in range(x.size):
        base = cpt_offset[i] + x[i]
        for k in range(par_ptr[i], par_ptr[i + 1]):
            base += x[par[k]] * par_stride[k]
        lp += np.log(cpt[base])
    return lp


@nb.njit(cache=True, nogil=True)
def _sweeps(
    codes, u, record, thin, kept0, out, lp_out, change_out, unobserved,
    unit_ptr, unit_nodes, unit_size, dec_ptr, dec,
    uf_ptr, uf_base, uf_var_ptr, uf_vars, uf_strides, uf_off_ptr, uf_off,
    cpt, cpt_offset, par_ptr, par, par_stride,
):  # fmt: skip
    """Run ``u.shape[1]`` sweeps on every chain of ``codes (chains, n_nodes)`` in place.

    ``u (chains, sweeps, units)`` uniforms. With ``record``, sweep ``s`` with
    ``s % thin == 0`` writes the unobserved codes to ``out[c, kept0 + k]`` (its
    ``k``-th kept sweep), the log
    joint to ``lp_out`` and the fraction of changed nodes to ``change_out``.
    """
    n_chains, n_sweeps, n_units = u.shape
    max_k = 1
    for un in range(n_units):
        max_k = max(max_k, unit_size[un])
    p = np.empty(max_k)
    n_free = max(unobserved.size, 1)
    for c in range(n_chains):
        x = codes[c]
        kept = kept0
        for s in range(n_sweeps):
            changed = 0
            for un in range(n_units):
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
                r = u[c, s, un] * total
                pick = size - 1
                acc = 0.0
                for k in range(size - 1):
                    acc += p[k]
                    if r < acc:
                        pick = k
                        break
                m = unit_ptr[un + 1] - unit_ptr[un]
                d = dec_ptr[un] + pick * m
                for j in range(m):
                    v = unit_nodes[unit_ptr[un] + j]
                    if x[v] != dec[d + j]:
                        changed += 1
                        x[v] = dec[d + j]
            if record and s % thin == 0:
                for j in range(unobserved.size):
                    out[c, kept, j] = x[unobserved[j]]
                lp_out[c, kept] = _log_joint(x, cpt, cpt_offset, par_ptr, par, par_stride)
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
    codes = np.array(position, dtype=np.int64, copy=True)
    t = plan.tables
    for i, s in t.evidence.items():
        codes[:, i] = s
    lp = log_joint(plan, codes)
    if not np.all(np.isfinite(lp)):
        raise ValueError("a starting configuration has probability zero given the evidence")
    return State(codes, lp)


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
        u = np.ascontiguousarray(rng.uniform((n, len(plan.units))))
        _sweeps(
            codes, u, True, thin, start // thin, out, lp, change, t.unobserved,
            plan.unit_ptr, plan.unit_nodes, plan.unit_size, plan.dec_ptr, plan.dec,
            plan.uf_ptr, plan.uf_base, plan.uf_var_ptr, plan.uf_vars, plan.uf_strides, plan.uf_off_ptr, plan.uf_off,
            t.cpt, t.cpt_offset, t.par_ptr, t.par, t.par_stride,
        )  # fmt: skip
    last = lp[:, -1].copy() if kept and (draws - 1) % thin == 0 else log_joint(plan, codes)
    return State(codes, last), out, {"lp": lp, "change_rate": change}


def step(rng: ChainRandom, state: State, plan: Plan) -> tuple[State, Info]:
    """One systematic-scan sweep for every chain (see :func:`sample` for many at once)."""
    new, _, stats = sample(rng, state, plan, 1)
    return new, Info(stats["change_rate"][:, 0])
