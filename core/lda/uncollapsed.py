"""Uncollapsed (blocked) Gibbs sampling for LDA: phi | z and theta | z, then every z | theta, phi.

phi_k | z ~ Dirichlet(beta + n_k.) and theta_d | z ~ Dirichlet(alpha + n_d.),
then every token independently ``p(z_i = k) ∝ theta_dk phi_kw``
(:func:`mcmc.core.lda.kernels.uncollapsed.uncollapsed_sweep`); the Dirichlet
draws and the tokens are split over ``threads`` (theta and z per document,
phi per word chunk). The blocked sampler of Pritchard, Stephens & Donnelly
(2000) in LDA's notation.
"""

from __future__ import annotations

import numpy as np

from mcmc.core.lda.kernels.uncollapsed import uncollapsed_sweep
from mcmc.core.lda.sampler import PhiChain, PhiSampler, Problem, Task

NAME = "uncollapsed"


class UncollapsedChain(PhiChain):
    def __init__(self, problem: Problem, rng: np.random.Generator, blocks: list[tuple[int, int]],
                 word_blocks: list[tuple[int, int]]) -> None:
        super().__init__(problem, rng, blocks, word_blocks)
        self.theta = np.empty((problem.D, problem.K))  # theta | z, drawn by the kernel

    def sample_tasks(self, theta_key: np.uint64, key: np.uint64) -> list[Task]:
        p = self.p
        return [(uncollapsed_sweep, (p.doc_ptr, p.words, self.z, self.theta, self.g, p.alpha, theta_key, key, a, b))
                for a, b in self.blocks]


class UncollapsedSampler(PhiSampler):
    """Blocked Gibbs."""

    name = NAME
    chain_class = UncollapsedChain


#: The method's sampler (:data:`mcmc.core.lda.config.METHOD_MODULES`).
SAMPLER = UncollapsedSampler
