"""The indicator encoding of a network run: state codes as ``NODE[STATE]`` indicators.

A network's chains file stores one integer variable ``(chain, draw)`` of
state codes per unobserved node (``docs/formats.md``,
:func:`mcmc.core.networks.driver.to_chains`), with the state names in
``attrs["state_names"]``. Codes have no meaningful mean; the indicators of
the states do: the mean of ``NODE[STATE]`` (1 where the node is in that
state, else 0) is the marginal posterior probability ``p(NODE = STATE | e)``.
Every statistic the diagnostics compute on a network run (estimate, MCSE,
ESS, R-hat) is a statistic of these indicators.

* :func:`indicator_name`: the parameter name ``NODE[STATE]``;
* :func:`indicator_variables`: one flat indicator per state;
* :func:`indicator_chains`: a whole chains file in indicator form (one float
  variable ``(chain, draw, n_states)`` per node, labelled by its states), as
  the readers of ``diagnose`` and ``compare`` hand it on;
* :func:`indicator_draws`: a :class:`~mcmc.core.networks.driver.NetworkRun`'s
  indicators as one array, for tests and benchmarks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError

if TYPE_CHECKING:
    from mcmc.core.networks.driver import NetworkRun

__all__ = ["indicator_chains", "indicator_draws", "indicator_name", "indicator_variables", "is_network_run"]


def indicator_name(node: str, state: str) -> str:
    """``NODE[STATE]``: the scalar parameter whose mean is ``p(NODE = STATE | e)``."""
    return f"{node}[{state}]"


def indicator_variables(
    posterior: Mapping[str, np.ndarray], state_names: Mapping[str, Sequence[str]]
) -> dict[str, np.ndarray]:
    """Indicator parameters ``NODE[STATE]`` (float 0/1, ``(chain, draw)``) of integer-coded nodes.

    Parameters
    ----------
    posterior
        ``{node: (chain, draw) codes}`` (a chains file's variables).
    state_names
        ``attrs["state_names"]``: the states of each node. Variables not in it
        are left out.

    Returns
    -------
    dict
        ``{"NODE[STATE]": (chain, draw) float}`` for every state of every
        node, in the order of ``state_names``; the mean of one is the
        marginal posterior probability of that state.
    """
    out: dict[str, np.ndarray] = {}
    for node, states in state_names.items():
        if node not in posterior:
            continue
        codes = np.asarray(posterior[node])
        for k, state in enumerate(states):
            out[indicator_name(node, state)] = (codes == k).astype(float)
    return out


def is_network_run(chains: Chains) -> bool:
    """True for a chains file of a Bayesian network run (it carries ``attrs["state_names"]``)."""
    names = chains.attrs.get("state_names")
    return isinstance(names, Mapping) and any(v in chains.posterior for v in names)


def indicator_chains(chains: Chains, source: str | None = None, *, weighted_ok: bool = False) -> Chains:
    """A network run's state codes as indicator variables ``NODE[STATE]``; other files unchanged.

    Parameters
    ----------
    chains
        As read from a chains file. A network run (:func:`is_network_run`) has
        one integer variable ``(chain, draw)`` per unobserved node.
    source
        The file, named in errors.
    weighted_ok
        Accept a likelihood-weighting run (``attrs["weighted"]``). The readers
        of ``diagnose`` and ``compare`` do not: their R-hat, ESS and MCSE
        assume equally weighted draws.

    Returns
    -------
    Chains
        Each node a float variable ``(chain, draw, n_states)`` of 0/1
        indicators (:func:`indicator_variables`), labelled by its states
        (``coords``), so its scalars are named ``NODE[STATE]``; statistics and
        attributes as they were.

    Raises
    ------
    InputError
        A weighted run when ``weighted_ok`` is false; codes outside a node's states.
    """
    if not is_network_run(chains):
        return chains
    if chains.attrs.get("weighted") and not weighted_ok:
        raise InputError(
            source,
            "a likelihood-weighting run holds weighted draws, not a Markov chain: R-hat, ESS and MCSE from its "
            "draws would ignore the weights, so diagnose and compare refuse it (mcmc sample prints its weighted "
            "marginals, their delta-method MCSE and the Kish ESS of the weights)",
        )
    state_names = {str(k): [str(s) for s in v] for k, v in chains.attrs["state_names"].items()}
    flat = indicator_variables(chains.posterior, state_names)
    posterior: dict[str, np.ndarray] = {}
    coords: dict[str, tuple[tuple[str, ...], ...]] = {}
    for node, array in chains.posterior.items():
        states = state_names.get(node)
        if states is None:
            posterior[node] = array
            continue
        codes = np.asarray(array)
        if codes.size and (codes.min() < 0 or codes.max() >= len(states)):
            raise InputError(source, f"node {node!r} has state codes outside 0..{len(states) - 1}")
        posterior[node] = np.stack([flat[indicator_name(node, s)] for s in states], axis=2)
        coords[node] = (tuple(states),)
    coords.update({k: v for k, v in chains.coords.items() if k not in coords})
    return Chains(posterior, dict(chains.sample_stats), dict(chains.attrs), coords, chains.index_sep)


def indicator_draws(run: NetworkRun) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """All state indicators of the unobserved nodes of ``run`` as one array.

    Returns
    -------
    x
        ``(chain, draw, n_indicators)`` float 0/1.
    index
        ``(node, state code)`` of each indicator, in order.
    """
    card = run.network.cardinality
    index = [(int(v), k) for v in run.nodes for k in range(card[v])]
    cols = [run.codes[:, :, j] == k for j, v in enumerate(run.nodes) for k in range(card[v])]
    x = np.stack(cols, axis=2).astype(float) if cols else np.zeros((*run.codes.shape[:2], 0))
    return x, index
