"""Monte Carlo EM for latent-variable models: the settings (:mod:`.config`) and the algorithm (:mod:`.em`).

The settings' module is free of NumPy (the command line reads its defaults
for ``mcmc sample --help``); the algorithm's module runs a
:class:`~mcmc.core.targets.latent.LatentModel` with any of the samplers
(Wei & Tanner 1990; Dempster, Laird & Rubin 1977). Nothing is imported here,
so ``import mcmc.core.mcem.config`` loads no NumPy.
"""
