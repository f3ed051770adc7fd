"""Exact answers for a run: the posterior marginals ``--exact`` shows, and ``log p(e)``.

:func:`posterior_marginals` is what ``mcmc sample --exact`` and ``mcmc
compare -t NET.bif`` ask for:

1. the junction tree of the unobserved nodes, calibrated once
   (:func:`~mcmc.core.networks.junction_tree.exact_marginals`; Lauritzen &
   Spiegelhalter 1988): every node's marginal and ``log p(e)`` for a few
   passes over the clique tables, however many nodes, as long as the
   largest clique table fits the budget (``10**6`` entries by default);
2. where the tree is too wide, variable elimination of the nodes asked for
   (:func:`~mcmc.core.networks.variable_elimination.node_marginals`; Zhang &
   Poole 1994), each elimination pruned to the ancestors of its node and of
   the evidence, so a few queried nodes may still be within reach;
3. when both are too wide,
   :class:`~mcmc.core.networks.junction_tree.CliqueBudgetError` naming the
   largest clique the tree would need, and what to do.

:func:`log_evidence` is the driver's exact check of the evidence: variable
elimination over the ancestors of the evidence (usually the smaller
problem), then the junction tree's collect pass; ``None`` when both are too
wide (the evidence is then only checked by forward sampling finding a start).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mcmc.core.networks import junction_tree as jt
from mcmc.core.networks import variable_elimination as ve
from mcmc.core.networks.evidence import impossible
from mcmc.core.networks.junction_tree import DEFAULT_BUDGET, CliqueBudgetError
from mcmc.core.networks.network import BayesianNetwork, Evidence

__all__ = ["ExactMarginals", "log_evidence", "posterior_marginals"]


@dataclass(frozen=True, eq=False)
class ExactMarginals:
    """Exact posterior marginals and how they were computed.

    Attributes
    ----------
    marginals
        ``{node name: p(x_node | e)}``, each ``(card,)`` summing to one: every
        node from the junction tree, the nodes asked for from variable elimination.
    method
        ``"junction tree"`` or ``"variable elimination"``.
    largest_clique
        Entries of the junction tree's largest clique table (for variable
        elimination: the one that was too wide).
    why_not_tree
        Why variable elimination was used (the tree's budget error), else ``None``.
    """

    marginals: dict[str, np.ndarray]
    method: str
    largest_clique: int
    why_not_tree: str | None = None


def posterior_marginals(
    network: BayesianNetwork,
    evidence: Evidence | None = None,
    nodes: Sequence[str] | None = None,
    budget: float = DEFAULT_BUDGET,
) -> ExactMarginals:
    """``p(x_i | e)`` of every node by the junction tree, else of ``nodes`` by variable elimination.

    Parameters
    ----------
    network, evidence
        The network and ``{node index: state code}``.
    nodes
        The names of the nodes needed when the tree is too wide (``None``: all).
    budget
        Largest clique table of the junction tree, in entries.

    Raises
    ------
    InputError
        The evidence has probability zero.
    CliqueBudgetError
        Both the tree and the eliminations are too wide; the message names the
        tree's largest clique.
    """
    try:
        found = jt.exact_marginals(network, evidence, budget)
    except CliqueBudgetError as wide:
        targets = range(network.n_nodes) if nodes is None else [network.index(n) for n in nodes]
        try:
            by_node = ve.node_marginals(network, evidence, targets)
        except CliqueBudgetError as also:
            asked = "every node" if nodes is None else f"the {len(targets)} nodes asked for"
            # The user asked for exact marginals of this file: say which file.
            what = f"{network.source}: {wide.what}" if network.source else wide.what
            raise CliqueBudgetError(
                wide.entries, wide.nodes, wide.budget, what,
                f"variable elimination of {asked} needs a factor of {also.entries} entries too (limit "
                f"{also.budget}): ask for fewer nodes (--query), or leave out --exact",
            ) from None  # fmt: skip
        return ExactMarginals(
            {network.nodes[q]: p for q, p in by_node.items()}, "variable elimination", wide.entries, str(wide)
        )
    return ExactMarginals(dict(zip(network.nodes, found.marginals, strict=True)), "junction tree", found.tree.largest)


def log_evidence(network: BayesianNetwork, evidence: Evidence, budget: float = DEFAULT_BUDGET) -> float | None:
    """``log p(e)``, exactly, refusing evidence of probability zero; ``None`` when no exact method is within reach.

    Raises
    ------
    InputError
        ``p(e) = 0``, naming the network's file and the evidence.
    """
    try:
        return ve.check_evidence(network, evidence)
    except CliqueBudgetError:
        pass
    try:
        value = jt.log_evidence(network, evidence, budget)
    except CliqueBudgetError:
        return None
    if value == -np.inf:
        raise impossible(network, evidence)
    return value
