"""Convergence diagnostics of `mcmc`, a library in three packages by job.

* :mod:`.readers`: chains files of every common format into one
  :class:`~mcmc.core.chains.Chains` (one :class:`~.readers.base.Format` record
  per format, one registry);
* :mod:`.stats`: statistics of draws ``(chain, draw, n)``, batched over
  parameters (the default report's and the classic ones);
* :mod:`.report`: statistics judged into checks, verdicts and the result
  objects the commands show.

Imports point down: ``report`` uses ``stats`` and ``readers``' indicator
encoding, never the reverse, and nothing here imports :mod:`mcmc.cli`. Nothing
here prints, exits, runs a sampler or writes a file: the command layer
(:mod:`mcmc.cli.commands`) does, and the command line renders the results.
"""
