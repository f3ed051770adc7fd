"""Discrete Bayesian networks: the network, evidence, exact inference and the network samplers.

Everything about a Bayesian network target (``mcmc sample --target NET.bif``)
lives here, below the diagnostics:

* the network: :mod:`~mcmc.core.networks.network` (:class:`BayesianNetwork`,
  nodes in topological order, CPTs as arrays), read from BIF by
  :mod:`~mcmc.core.networks.bif`;
* evidence and queries by name: :mod:`~mcmc.core.networks.evidence`
  (``NODE=STATE`` parsed and formatted, the nodes a run shows);
* exact inference: :mod:`~mcmc.core.networks.junction_tree` (every node's
  marginal and ``log p(e)`` from one calibration of the junction tree;
  Lauritzen & Spiegelhalter 1988) and
  :mod:`~mcmc.core.networks.variable_elimination` (per-node elimination, the
  exact check of evidence and the cross-check of the tree);
* the compiled network the samplers read: :mod:`~mcmc.core.networks.tables`
  (flat CPTs, forward sampling, starting states, the near-deterministic
  groups that trap single-site moves);
* the samplers, one module each: :mod:`~mcmc.core.networks.blocked_gibbs`
  (``gibbs``: blocks drawn exactly through their junction trees, Jensen,
  Kong & Kjaerulff 1995; Dawid 1992), with the block choice in
  :mod:`~mcmc.core.networks.blocks` and the single-site kernel it falls back
  to in :mod:`~mcmc.core.networks.single_site`;
  :mod:`~mcmc.core.networks.logic_sampling` (``rejection``) and
  :mod:`~mcmc.core.networks.likelihood_weighting`;
* the one driver: :mod:`~mcmc.core.networks.driver` (``sample_network``,
  the chains file's form of a run);
* the indicator encoding: :mod:`~mcmc.core.networks.indicators` (state
  codes as ``NODE[STATE]`` indicators, what the readers of ``diagnose``
  hand on); the diagnostics keep only the statistics of those indicators.

The network sampler protocol
----------------------------
The samplers' protocol (:mod:`mcmc.core.samplers`), where it fits a network.
A network sampler is a module registered by name in
:data:`mcmc.core.samplers.NETWORK_SAMPLERS`, with

``NAME: str``
    The name recorded in the chains file.
``MARKOV: bool``
    True for a Markov chain (warm-up, thinning and starting states apply);
    False for independent draws.
``build(network, evidence, **settings) -> Plan``
    What the sampler needs, compiled once (its settings are keywords:
    gibbs's ``blocks``, ``budget`` and ``scan``). A plan has ``tables`` (the
    :class:`~mcmc.core.networks.tables.NetworkTables`) and ``warnings``
    (messages for the user).
``State``, ``Info``
    NamedTuples: ``position (chains, n_nodes)`` state codes and
    ``log_density (chains,)`` (``log p(x, e)``); per-chain statistics of a
    step.
``init(position, plan) -> State``
    The state at ``position`` (``None`` for independent draws).
``step(rng, state, plan) -> (State, Info)``
    One sweep (or one draw) for every chain; ``rng`` a
    :class:`~mcmc.core.random.ChainRandom`.
``sample(rng, state, plan, draws, thin=1) -> (State, codes, stats)``
    Many steps in one compiled call: codes ``(chains, kept, n_unobserved)``
    and statistics ``(chains, kept)`` (``lp`` always). Each chain reads its
    stream in the same order however the draws are split into calls (each a
    multiple of ``thin``): the driver calls it in blocks, polling a
    checkpoint between them, and goes on from a saved run to the same bytes.
``run_attrs(plan, stats) -> dict``
    The sampler's JSON attributes for the chains file.
``check_cost(network, evidence, log_evidence, chains, draws)`` (optional)
    Refuse, before any work, a run beyond reach (rejection sampling:
    ``chains x draws / p(e)`` proposals).
"""
