"""The ``mcmc`` command line: parse, load, call, render. No math lives here."""
