"""Bayesian network runs judged: the statistics of indicator draws, the sample summary.

A network's chains file stores integer state codes per unobserved node; the
indicators ``NODE[STATE]`` of their states (the network code's encoding,
:mod:`mcmc.core.networks.indicators`, which the readers of ``diagnose``
apply) are what is judged: the mean of one is the marginal posterior
probability ``p(NODE = STATE | e)``. This module holds only their statistics:

* :func:`estimate_indicators` gives every indicator's estimate, MCSE and ESS,
  for a Markov chain (gibbs) or independent draws (rejection) from the
  ordinary statistics of :mod:`mcmc.diagnostics.stats`; for the weighted
  draws of likelihood weighting the self-normalised mean with its
  delta-method MCSE (Owen 2013, ch. 9) and Kish's ESS of the weights, with no
  R-hat (a weighted sample is not a chain).
* :class:`NetworkSummary` is what ``mcmc sample --target NET.bif`` shows:
  the asked-for marginals, exact values beside them on request (and how they
  were computed), gibbs's blocks, the warnings and the sampler's own figures.

References
----------
Owen, A. B. (2013). *Monte Carlo theory, methods and examples*, ch. 9
(importance sampling; the self-normalised estimator and its delta-method variance).
Kish, L. (1965). *Survey Sampling*. Wiley (the effective sample size of weights).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.networks.evidence import format_evidence
from mcmc.core.networks.indicators import indicator_chains, indicator_name
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.report import Report
from mcmc.diagnostics.report.selection import select
from mcmc.diagnostics.report.summary import RunSummary
from mcmc.diagnostics.report.thresholds import Thresholds

__all__ = [
    "IndicatorEstimates", "NetworkBlock", "NetworkSummary", "NodeMarginals", "StateMarginal", "estimate_indicators",
    "failing_nodes", "network_advice", "network_summary",
]  # fmt: skip

#: The name under which a weighted run's ESS is reported: it is the weights', not a parameter's.
WEIGHTS_ESS = "the weights (Kish)"


@dataclass(frozen=True)
class IndicatorEstimates:
    """Estimates of every state indicator of a network run, in the file's node order.

    Attributes
    ----------
    nodes, states
        The node and state of each indicator ``(n,)``; its name is ``NODE[STATE]``.
    mean, mcse
        ``(n,)``: the marginal probability estimate and its Monte Carlo standard
        error (0 for an indicator constant over every draw).
    ess
        ``(n,)``: bulk ESS; for a weighted run the Kish ESS of the weights, the
        same for every indicator.
    rhat
        ``(n,)``: rank-normalized split R-hat; NaN for a weighted run.
    exact
        ``(n,)`` exact marginals when asked for (NaN for a node without one), else ``None``.
    summary
        The run summary over all indicators (worst R-hat, smallest ESS); for a
        weighted run no R-hat and the Kish ESS as both ESS.
    weighted
        Likelihood weighting's self-normalised estimates.
    report
        The diagnose report of the indicators (the one verdict of the run).
    n_draws
        Draws of all chains together.
    """

    nodes: tuple[str, ...]
    states: tuple[str, ...]
    mean: np.ndarray
    mcse: np.ndarray
    ess: np.ndarray
    rhat: np.ndarray
    exact: np.ndarray | None
    summary: RunSummary
    weighted: bool
    report: Report | None = None
    n_draws: int = 0

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(indicator_name(n, s) for n, s in zip(self.nodes, self.states, strict=True))

    @property
    def z(self) -> np.ndarray | None:
        """``|mean - exact| / MCSE`` per indicator (0 where both agree exactly; ``None`` without exact values).

        A state drawn in no draw (or in every one) has no MCSE from the
        draws; its estimate counts as right (``z = 0``) when its exact
        probability (or its complement) is too small to have been seen, a
        chance of at least 1e-4 of no sighting in ``n_draws`` independent
        draws (``p < 9.2 / n_draws``), and as off (``z = inf``) otherwise.
        """
        if self.exact is None:
            return None
        diff = np.abs(self.mean - self.exact)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(diff == 0, 0.0, diff / self.mcse)
        unseen = (self.mcse == 0) & (diff > 0)
        if self.n_draws and unseen.any():
            z[unseen] = np.where(diff[unseen] < -np.log(1e-4) / self.n_draws, 0.0, np.inf)
        return z


def estimate_indicators(
    chains: Chains,
    exact: Sequence[np.ndarray] | Mapping[str, np.ndarray] | None = None,
    *,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen
    strict: bool = False,
    source: Sequence[str] = (),
) -> IndicatorEstimates:
    """Marginal estimates, MCSE, ESS and R-hat of every state indicator of a network run, and its report.

    The indicators are judged once, by :func:`mcmc.diagnostics.report.check.check`
    (the report ``mcmc diagnose`` makes of the same file), and the estimates
    are read off that report; weighted draws by its
    :func:`~mcmc.diagnostics.report.check.check_weighted`, which ``check`` hands them to.

    Parameters
    ----------
    chains
        A network run in its chains-file form (:func:`mcmc.core.networks.driver.to_chains`).
    exact
        Exact marginals ``{node: (n_states,)}`` of some of the stored nodes (the others are not judged), or ``None``.
    thresholds, strict
        The limits of the checks (``diagnose``'s defaults) and whether warnings fail.
    source
        The chains file, recorded in the report.
    """
    ind = indicator_chains(chains, weighted_ok=True)
    selection = select(ind)
    nodes = selection.variables
    states = tuple(ind.coords[v][0][i] for v, idx in selection.items for i in idx)
    truth = None
    if exact is not None:
        # a node without an exact value (variable elimination of the shown nodes only) gets NaN: not judged
        truth = np.array([float(exact[v][i]) if v in exact else np.nan for v, idx in selection.items for i in idx])
    weighted = bool(chains.attrs.get("weighted"))
    n = len(nodes)
    if weighted:
        # The one judge of weighted draws (check dispatches to check_weighted): Kish ESS and Pareto k, and the
        # self-normalised estimates with their delta-method MCSE, read off its parameters.
        report = check(ind, thresholds=thresholds, source=source, strict=strict)
        params = report.parameters
        mean = np.array([p.mean for p in params])
        mcse = np.array([0.0 if p.sd == 0 else p.mcse_mean for p in params])
        kish = report.weights.kish_ess if report.weights is not None else float("nan")
        ess, rhat = np.full(n, kish), np.full(n, np.nan)
        summary = RunSummary.from_report(report, ind)
        summary = replace(summary, ess_bulk_min=kish, ess_bulk_argmin=WEIGHTS_ESS, ess_tail_min=kish,
                          ess_tail_argmin=WEIGHTS_ESS, ess_bulk_ok=report.passed)  # fmt: skip
    else:
        report = check(ind, thresholds=thresholds, source=source, strict=strict)
        params = report.parameters
        mean = np.array([p.mean for p in params])
        # a state seen in every draw, or never, has no Monte Carlo spread
        mcse = np.array([0.0 if p.sd == 0 else p.mcse_mean for p in params])
        ess = np.array([p.ess_bulk for p in params])
        rhat = np.array([p.rhat for p in params])
        summary = RunSummary.from_report(report, ind)
        rates = chains.attrs.get("acceptance_rate")
        if rates is not None:  # rejection: accepted / proposed, per chain
            by_chain = tuple(float(r) for r in rates)
            summary = replace(summary, acceptance=float(np.mean(by_chain)), acceptance_by_chain=by_chain)
    return IndicatorEstimates(
        tuple(nodes), states, np.asarray(mean, dtype=float), np.asarray(mcse, dtype=float),
        np.asarray(ess, dtype=float), np.asarray(rhat, dtype=float), truth, summary, weighted, report,
        chains.n_chains * chains.n_draws,
    )  # fmt: skip


def failing_nodes(report: Report) -> tuple[str, ...]:
    """The nodes whose indicators fail ``report``'s checks, the worst first (each node once)."""
    return tuple(dict.fromkeys(p.variable for p in report.failing()))


def network_advice(report: Report, attrs: Mapping[str, Any]) -> str:
    """What to do when a network run's draws fail the checks: the nodes, and the remedies that fit the run.

    ``attrs`` are the run's (its chains file's): a Gibbs run records its
    blocks and clique budget there, so the advice can say which failing
    nodes were updated singly and what the budget was.
    """
    if report.kind == "weighted":
        return report.checks[0].advice
    nodes = failing_nodes(report)
    if not nodes:
        return ""

    def shown(names: Sequence[str]) -> str:
        return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")

    apart = tuple(dict.fromkeys(p.variable for p in report.failing() if p.status == "rhat"))
    if apart and "block_budget" in attrs:  # Gibbs: chains apart may be trapped where nodes move one at a time
        blocked = {n for b in attrs.get("blocks", ()) for n in b["nodes"]}
        single = [n for n in apart if n not in blocked]
        where = f" ({shown(single)} updated singly)" if single else ""
        budget = attrs["block_budget"]
        grown = attrs.get("grown_block_budget", budget)
        now = f"now {budget} entries" if grown == budget else f"now {budget} entries, {grown} for grown blocks"
        return (f"the chains have not mixed on {shown(apart)}{where}: run longer (--draws, --warmup); nodes that "
                "near-deterministic tables tie together mix when drawn in one block: raise the clique budget "
                f"(-P gibbs:budget=N, {now}) or name the blocks "
                "(-P gibbs:blocks=A+B+C;D+E); -s likelihood-weighting gives independent weighted draws "
                "instead")  # fmt: skip
    if apart:
        return f"the chains disagree on {shown(apart)}: draw more (--draws)"
    return f"too few effective draws for {shown(nodes)}: draw more (--draws)"


# --------------------------------------------------------------------------- the sample summary


@dataclass(frozen=True)
class StateMarginal:
    """One state of a shown node: ``p(NODE = STATE | e)`` estimated, its MCSE, ESS, R-hat and the exact value.

    ``rhat`` is ``None`` for a weighted run; ``exact`` and ``z`` (``|estimate
    - exact| / mcse``) are ``None`` unless exact values were asked for.
    """

    state: str
    estimate: float
    mcse: float
    ess: float
    rhat: float | None
    exact: float | None = None
    z: float | None = None


@dataclass(frozen=True)
class NodeMarginals:
    """The marginal of one node, state by state."""

    node: str
    states: tuple[StateMarginal, ...]


@dataclass(frozen=True)
class NetworkBlock:
    """One block of a Gibbs run: nodes drawn together, exactly, through their junction tree.

    Attributes
    ----------
    nodes
        The block's nodes, in topological order.
    largest_clique, largest_clique_nodes
        Entries of its junction tree's largest clique table, and that clique's nodes.
    cliques
        Cliques of its junction tree.
    boundary
        Unobserved nodes outside the block its conditional depends on.
    exact
        No boundary: every draw of the block is an independent draw of its posterior.
    """

    nodes: tuple[str, ...]
    largest_clique: int
    largest_clique_nodes: tuple[str, ...]
    cliques: int
    boundary: int
    exact: bool

    @classmethod
    def from_attr(cls, entry: Mapping[str, Any]) -> NetworkBlock:
        """From one entry of the chains file's ``attrs["blocks"]``."""
        return cls(
            tuple(entry["nodes"]), int(entry["largest_clique"]), tuple(entry["largest_clique_nodes"]),
            int(entry["cliques"]), int(entry["boundary"]), bool(entry["exact"]),
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": list(self.nodes), "largest_clique": self.largest_clique,
                "largest_clique_nodes": list(self.largest_clique_nodes), "cliques": self.cliques,
                "boundary": self.boundary, "exact": self.exact}  # fmt: skip


@dataclass(frozen=True)
class NetworkSummary:
    """What ``mcmc sample --target NET.bif`` shows about the network beside the run summary.

    Attributes
    ----------
    network, sampler, evidence
        The network's file, the sampler and the evidence as ``NODE=STATE,...``.
    log_evidence
        ``log p(e)``, exact; ``None`` when the network is too wide for exact inference.
    n_nodes, n_unobserved
        Nodes of the network and nodes sampled.
    marginals
        The shown nodes (``--query``; every unobserved node when there are few).
    queried
        The nodes were asked for; otherwise chosen by default (and ``marginals``
        may be empty, with ``n_unobserved`` too many to show).
    exact
        Exact values were asked for (``--exact``): each state carries one.
    z_max, z_argmax
        The largest ``|estimate - exact| / MCSE`` over the shown states and
        where (``None`` without exact values); ``z_ok`` is ``z_max <= max_z``.
    weighted
        Likelihood weighting: estimates are self-normalised and ``ess_weights``
        (pooled) and ``ess_weights_by_chain`` are Kish's ESS of the weights.
    acceptance, acceptance_by_chain
        Rejection: accepted / proposed overall and per chain.
    warnings
        Messages for stderr: deterministic tables that can freeze single-site
        Gibbs where no block holds them.
    blocks
        Gibbs: the blocks drawn through their junction trees (empty: every
        node updated singly); the nodes of no block were updated singly.
    block_choice, block_budget, grown_block_budget
        Gibbs: how the blocks were chosen (``auto``, ``single``, ``custom``)
        and the largest clique table a block could have (one of every node,
        or named; and one grown from a near-deterministic group); ``None``
        otherwise.
    scan
        Gibbs: ``systematic`` (the units in turn) or ``random`` (each update
        a unit picked at random); ``None`` otherwise.
    exact_method, exact_largest_clique, exact_note
        With exact values: ``"junction tree"`` or ``"variable elimination"``,
        the junction tree's largest clique table (entries; the one too wide
        for variable elimination), and why the tree was not used.
    """

    network: str
    sampler: str
    evidence: str
    log_evidence: float | None
    n_nodes: int
    n_unobserved: int
    marginals: tuple[NodeMarginals, ...]
    queried: bool
    exact: bool
    z_max: float | None
    z_argmax: str | None
    z_ok: bool | None
    max_z: float
    weighted: bool
    ess_weights: float | None
    ess_weights_by_chain: tuple[float, ...] | None
    acceptance: float | None
    acceptance_by_chain: tuple[float, ...] | None
    warnings: tuple[str, ...]
    blocks: tuple[NetworkBlock, ...]
    block_choice: str | None = None
    block_budget: int | None = None
    grown_block_budget: int | None = None
    scan: str | None = None
    exact_method: str | None = None
    exact_largest_clique: int | None = None
    exact_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (``network`` in ``mcmc sample``'s JSON document)."""
        return {
            "network": self.network, "sampler": self.sampler, "evidence": self.evidence,
            "log_evidence": self.log_evidence, "n_nodes": self.n_nodes, "n_unobserved": self.n_unobserved,
            "queried": self.queried, "exact": self.exact, "z_max": self.z_max, "z_argmax": self.z_argmax,
            "z_ok": self.z_ok, "max_z": self.max_z, "weighted": self.weighted, "ess_weights": self.ess_weights,
            "ess_weights_by_chain": None if self.ess_weights_by_chain is None else list(self.ess_weights_by_chain),
            "acceptance": self.acceptance,
            "acceptance_by_chain": None if self.acceptance_by_chain is None else list(self.acceptance_by_chain),
            "warnings": list(self.warnings), "blocks": [b.to_dict() for b in self.blocks],
            "block_choice": self.block_choice, "block_budget": self.block_budget,
            "grown_block_budget": self.grown_block_budget, "scan": self.scan,
            "exact_method": self.exact_method, "exact_largest_clique": self.exact_largest_clique,
            "exact_note": self.exact_note,
            "marginals": {
                m.node: {
                    s.state: {"estimate": s.estimate, "mcse": s.mcse, "ess": s.ess, "rhat": s.rhat,
                              "exact": s.exact, "z": s.z}
                    for s in m.states
                }
                for m in self.marginals
            },
        }  # fmt: skip


def network_summary(
    run: Any,
    estimates: IndicatorEstimates,
    shown: Sequence[str],
    *,
    queried: bool,
    max_z: float = 4.0,
    exact: Any = None,
) -> NetworkSummary:
    """The :class:`NetworkSummary` of a :class:`~mcmc.core.networks.driver.NetworkRun`.

    ``shown`` are the nodes whose marginals are listed (:func:`mcmc.core.networks.evidence.query_nodes`);
    ``max_z`` judges ``|estimate - exact| / MCSE`` when exact values were computed; ``exact`` is the
    :class:`~mcmc.core.networks.exact.ExactMarginals` they came from (how, and the largest clique).
    """
    net, a = run.network, run.attrs
    z = estimates.z
    by_node: dict[str, list[StateMarginal]] = {}
    for k, (node, state) in enumerate(zip(estimates.nodes, estimates.states, strict=True)):
        if node not in shown:
            continue
        rhat = float(estimates.rhat[k])
        by_node.setdefault(node, []).append(
            StateMarginal(
                state, float(estimates.mean[k]), float(estimates.mcse[k]), float(estimates.ess[k]),
                None if estimates.weighted or np.isnan(rhat) else rhat,
                None if estimates.exact is None else float(estimates.exact[k]),
                None if z is None else float(z[k]),
            )  # fmt: skip
        )
    marginals = tuple(NodeMarginals(node, tuple(by_node[node])) for node in shown)
    z_max = z_arg = None
    shown_z = [(s.z, f"{m.node}[{s.state}]") for m in marginals for s in m.states if s.z is not None]
    if shown_z:
        finite = [(v if np.isfinite(v) else np.inf, name) for v, name in shown_z]  # NaN (0/0 cannot occur)
        z_max, z_arg = max(finite, key=lambda t: t[0])
    ess_w = a.get("ess_weights")
    rates = a.get("acceptance_rate")
    return NetworkSummary(
        network=str(a.get("target", net.source or net.name)), sampler=str(a["sampler"]),
        evidence=format_evidence(net, run.evidence),
        log_evidence=None if a.get("log_evidence") is None else float(a["log_evidence"]),
        n_nodes=net.n_nodes, n_unobserved=len(run.nodes), marginals=marginals, queried=queried,
        exact=estimates.exact is not None, z_max=None if z_max is None else float(z_max), z_argmax=z_arg,
        z_ok=None if z_max is None else bool(z_max <= max_z), max_z=float(max_z), weighted=estimates.weighted,
        ess_weights=None if ess_w is None else float(a["ess_weights_total"]),
        ess_weights_by_chain=None if ess_w is None else tuple(float(v) for v in ess_w),
        acceptance=None if rates is None else float(np.mean(rates)),
        acceptance_by_chain=None if rates is None else tuple(float(r) for r in rates),
        warnings=tuple(run.warnings), blocks=tuple(NetworkBlock.from_attr(b) for b in a.get("blocks", ())),
        block_choice=a.get("block_choice"), block_budget=a.get("block_budget"),
        grown_block_budget=a.get("grown_block_budget"), scan=a.get("scan"),
        exact_method=None if exact is None else exact.method,
        exact_largest_clique=None if exact is None else exact.largest_clique,
        exact_note=None if exact is None else exact.why_not_tree,
    )  # fmt: skip
