"""Compiled kernels of the LDA samplers: one module per sampler, shared pieces beside them.

Every kernel is a plain ``@njit(cache=True, nogil=True)`` function over flat
integer arrays, so the samplers can run several of them at once from Python
threads (chains side by side, or blocks of documents of one chain for the
samplers whose documents are conditionally independent).

* :mod:`.rng`: counter-based uniforms (SplitMix64) and Gamma variates, so
  kernels hold no random state and a token's draw does not depend on threads;
  :func:`.rng.draw_key` takes a sweep's key from a chain's Generator.
* :mod:`.common`: counts, the collapsed log joint, running estimates, the
  phi | z Dirichlet draw shared by ``partial`` and ``uncollapsed``, the
  document topic lists and the prefetch hint.
* :mod:`.dense` and :mod:`.sparse`: the two implementations of the collapsed
  conditional (all K terms per token; SparseLDA's buckets), one module each.
* :mod:`.partial`, :mod:`.uncollapsed`, :mod:`.dmm`: one sampler each.

No kernel uses ``fastmath``: every probability and sum is the plain IEEE
computation, so the draws are exact inverse-CDF draws up to float rounding.

numba's on-disk cache (``cache=True``) checks only the source file of the
function it loads: after editing :mod:`.rng` or :mod:`.common`, whose inlined
functions the sampler modules compile in, delete the stale cache
(``find core/lda/kernels -name '*.nb[ic]' -delete``) or touch the sampler
modules, or a run may use the old code.
"""
