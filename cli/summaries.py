"""Each subcommand's one-line summary: the first line of its help, and what ``mcmc --help`` lists.

Kept apart from the subcommand modules so that ``mcmc --help`` (and ``mcmc``
alone) can list the commands without importing and building them (about 40 ms
of Typer's work on every option of every command); each module's ``HELP``
starts with its line here, and ``tests/cli/test_startup_imports.py`` checks
that the listing is the one the full build would show.
"""

SUMMARIES = {
    "sample": "Draw MCMC chains from a target distribution and write them to a chains file.",
    "lda": "Fit latent Dirichlet allocation (Blei, Ng & Jordan 2003) by Gibbs sampling and show the topics.",
    "diagnose": "Diagnose convergence of MCMC draws: R-hat, ESS, MCSE, autocorrelation, SSIF, acceptance.",
    "compare": "Compare MCMC runs: samplers head to head, one run against another, a run against reference draws.",
}
