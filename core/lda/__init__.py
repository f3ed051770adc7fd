"""Latent Dirichlet Allocation and its relatives by Gibbs sampling."""
