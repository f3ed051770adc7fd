"""Evidence and queries by name: ``NODE=STATE`` items read against a network, and the nodes to show.

Everything else in :mod:`mcmc.core.networks` speaks in node indices and
state codes (:class:`~mcmc.core.networks.network.BayesianNetwork`); the
user speaks in the names of the BIF file. This module translates:

* :func:`parse_evidence` / :func:`format_evidence`: ``"JohnCalls=True,MaryCalls=True"``
  to ``{node index: state code}`` and back;
* :func:`observed_attr`: the evidence as the chains file records it
  (``attrs["observed"] = {node: state}``);
* :func:`require_unobserved`: evidence that fixes every node refused before any work;
* :func:`query_nodes`: the nodes whose marginals a run shows (``--query``,
  or every unobserved node of a small network).

Whether evidence is *possible* (``p(e) > 0``) is exact inference's question:
:func:`~mcmc.core.networks.variable_elimination.check_evidence`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from mcmc.core.errors import InputError, UsageError
from mcmc.core.networks.network import BayesianNetwork, Evidence

__all__ = ["DEFAULT_QUERY_MAX", "format_evidence", "impossible", "observed_attr", "parse_evidence", "query_nodes",
           "require_unobserved"]

#: Without ``--query``, a run shows every unobserved node when there are at most this many.
DEFAULT_QUERY_MAX = 8


def parse_evidence(
    network: BayesianNetwork, spec: str | Mapping[str, str] | Iterable[str] | None
) -> dict[int, int]:
    """Evidence ``NODE=STATE,NODE=STATE`` (names as in the file) as ``{node index: state code}``.

    Parameters
    ----------
    network
        The network the names refer to.
    spec
        A comma-separated string ``"JohnCalls=True,MaryCalls=True"``, an
        iterable of ``"NODE=STATE"`` items (a repeated command-line option),
        a mapping ``{node: state}``, or ``None``/``""`` for no evidence.

    Returns
    -------
    dict
        Node index to state code, in topological order. Checks names only;
        whether the evidence is possible is :func:`~mcmc.core.networks.variable_elimination.check_evidence`'s job.

    Raises
    ------
    InputError
        An item without ``=``, an unknown node or state (the message lists
        the valid ones, naming ``network.source``), or a node given two
        different states.
    """
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        pairs = [(str(k), str(v)) for k, v in spec.items()]
    else:
        items = spec.split(",") if isinstance(spec, str) else [p for s in spec for p in str(s).split(",")]
        pairs = []
        for item in items:
            item = item.strip()
            if not item:
                continue
            node, sep, state = item.partition("=")
            if not sep or not node.strip() or not state.strip():
                raise InputError(network.source, f"evidence {item!r}: expected NODE=STATE")
            pairs.append((node.strip(), state.strip()))
    out: dict[int, int] = {}
    for node, state in pairs:
        i = network.index(node)
        code = network.state_code(i, state)
        if out.get(i, code) != code:
            raise InputError(network.source, f"evidence gives node {node!r} two different states")
        out[i] = code
    return dict(sorted(out.items()))


def format_evidence(network: BayesianNetwork, evidence: Evidence) -> str:
    """``"NODE=STATE,..."`` for ``evidence`` (the inverse of :func:`parse_evidence`)."""
    return ",".join(f"{network.nodes[i]}={network.states[i][s]}" for i, s in sorted(evidence.items()))


def impossible(network: BayesianNetwork, evidence: Evidence) -> InputError:
    """The error of evidence of probability zero, naming the network's file and the evidence (raise it)."""
    return InputError(
        network.source, f"the evidence {format_evidence(network, evidence)} has probability zero under the network"
    )


def observed_attr(network: BayesianNetwork, evidence: Evidence) -> dict[str, str]:
    """The evidence as ``{node name: state name}`` (the chains file's ``attrs["observed"]``)."""
    return {network.nodes[i]: network.states[i][s] for i, s in sorted(evidence.items())}


def query_nodes(
    network: BayesianNetwork, evidence: Evidence, query: Sequence[str]
) -> tuple[tuple[str, ...], bool]:
    """The nodes a run's summary shows, and whether the user chose them.

    ``query`` items may be comma lists (``--query A,B --query C``). Without
    any, every unobserved node when there are at most :data:`DEFAULT_QUERY_MAX`.

    Raises
    ------
    InputError
        An unknown node (the message lists the nodes), or an observed one.
    """
    names = [p.strip() for q in query for p in str(q).split(",") if p.strip()]
    if not names:
        free = [network.nodes[v] for v in range(network.n_nodes) if v not in evidence]
        return (tuple(free) if len(free) <= DEFAULT_QUERY_MAX else ()), False
    for name in names:
        i = network.index(name)  # unknown: InputError listing the nodes
        if i in evidence:
            raise InputError(
                network.source,
                f"--query {name}: the node is observed ({name}={network.states[i][evidence[i]]}); "
                "query unobserved nodes",
            )
    return tuple(dict.fromkeys(names)), True


def require_unobserved(network: BayesianNetwork, evidence: Evidence) -> None:
    """Refuse evidence that fixes every node: a sampler would have nothing to draw.

    Called before any work by every command that samples a network (and by
    the driver), so such a run writes nothing (``docs/errors.md``).

    Raises
    ------
    UsageError
        Naming the network's file.
    """
    if len(evidence) >= network.n_nodes:
        where = f"{network.source}: " if network.source else ""
        raise UsageError(
            f"{where}--observe gives all {network.n_nodes} nodes a state: nothing is left to sample; "
            "leave at least one node unobserved"
        )
