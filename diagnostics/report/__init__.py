"""Judging draws: from statistics to checks, verdicts and the result objects every command shows.

One concern per module, from the bottom: the limits (:mod:`.thresholds`) and
choosing parameters (:mod:`.selection`); one judged parameter and the
worst-first order (:mod:`.parameters`); the sampler's facts (:mod:`.sampler`);
the checks in words with their advice (:mod:`.verdict`); the data behind the
plots (:mod:`.plots`) and the compact classic rows (:mod:`.classic_rows`);
the diagnose report (:mod:`.report`) and the one judge that makes it,
:func:`~.check.check`; the run summary every command that writes draws shows
(:mod:`.summary`). Above those, each kind of run judged: draws against draws
(:mod:`.compare`), samplers head to head (:mod:`.samplers`), Bayesian network
indicators (:mod:`.network`), a finite Markov chain (:mod:`.markov`), a
Bayesian neural network's predictive (:mod:`.predictive`), a topic model
(:mod:`.lda`, :mod:`.lda_gate`). Nothing here samples, prints or writes a file.
"""
