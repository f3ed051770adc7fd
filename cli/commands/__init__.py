"""The command layer: each subcommand's one call, with its typed settings and its result.

``diagnose`` (:mod:`.diagnose`), ``sample`` with its Bayesian network and
Markov chain runs (:mod:`.sample`), ``compare`` of runs and of samplers
(:mod:`.compare`) and ``lda`` (:mod:`.lda`): each checks its outputs against
its inputs before any work, runs what ``core`` samples, judges it with
``diagnostics``, writes the files the command writes (through ``core``'s
writers) and returns one result object. It never parses options, prints or
exits, so it is tested as a library; the Typer modules beside this package
parse, call it and hand the result to :mod:`mcmc.cli.render`. Work in
progress is reported through one protocol, :class:`~.progress.Progress`.

Layers (``tests/test_layers.py``): ``core`` <- ``diagnostics`` <- this
package <- the Typer modules and renderers.
"""
