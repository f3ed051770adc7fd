"""A Bayesian network run's chains file as the diagnostics read it: state codes become indicators.

A network's chains file stores integer state codes per unobserved node
(``docs/formats.md``, :func:`mcmc.core.samplers.network_driver.to_chains`).
Their means have no meaning; the indicators of the states do: the mean of
``NODE[STATE]`` is the marginal posterior probability ``p(NODE = STATE | e)``.
:func:`indicator_chains`, which :func:`~mcmc.diagnostics.readers.read_chains`
applies to every file it reads, turns such a file into one float variable per
node, ``(chain, draw, n_states)`` labelled by the state names, so ``diagnose``
and ``compare`` report ``NODE[STATE]`` with MCSE, R-hat and ESS as any scalar
(and ``--var NODE`` selects a node's states). The encoding itself (code ``k``
is the ``k``-th state; the name ``NODE[STATE]``) is the network code's, in
``core``; this module only applies it to a file, so reading a file needs no
comparison or command code.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import InputError

__all__ = ["indicator_chains", "is_network_run"]


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
        indicators (:func:`mcmc.core.samplers.network_driver.indicator_variables`),
        labelled by its states (``coords``), so its scalars are named
        ``NODE[STATE]``; statistics and attributes as they were.

    Raises
    ------
    InputError
        A weighted run when ``weighted_ok`` is false; codes outside a node's states.
    """
    if not is_network_run(chains):
        return chains
    # start-up: the network sampler's module loads numba (0.4 s), which no other file needs
    from mcmc.core.samplers.network_driver import indicator_name, indicator_variables

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
