"""Partially collapsed Gibbs sampling for LDA: phi | z, then z | phi with theta integrated out.

phi | z ~ Dirichlet(beta + n_k.), then token by token within a document
``p(z_i = k | z_-i, phi) ∝ (n_dk^-i + alpha) phi_kw``
(:func:`mcmc.core.lda.kernels.partial.partial_sweep`). Given phi the documents
are independent, so blocks of documents of one chain run in parallel on
``threads`` threads and the sampler stays exact (van Dyk & Park 2008 on
partially collapsed Gibbs samplers; the parallel LDA form is that of
Magnusson, Jonsson, Villani & Broman 2018).
"""

from __future__ import annotations

import numpy as np

from mcmc.core.lda.kernels.partial import partial_sweep
from mcmc.core.lda.sampler import PhiChain, PhiSampler, Task

NAME = "partial"


class PartialChain(PhiChain):
    def sample_tasks(self, theta_key: np.uint64, key: np.uint64) -> list[Task]:
        # theta_key is not used: theta is integrated out (see PhiChain)
        p = self.p
        return [(partial_sweep, (p.doc_ptr, p.words, self.z, self.g, self.cphi, p.alpha, key, a, b))
                for a, b in self.blocks]


class PartialSampler(PhiSampler):
    """Partially collapsed Gibbs."""

    name = NAME
    chain_class = PartialChain
    shards_documents = True  # given phi the documents are independent: any split of them gives the same draws


#: The method's sampler (:data:`mcmc.core.lda.config.METHOD_MODULES`).
SAMPLER = PartialSampler
