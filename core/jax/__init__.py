"""Targets written in JAX: the log density of one point, its gradient by ``jax.grad``, every path compiled by XLA.

A target file whose ``log_density(x)`` takes one point ``x (dim,)`` and is
written with ``jax.numpy`` (``docs/formats.md``, "JAX targets") becomes a
:class:`~mcmc.core.targets.base.Target` like any other: its batched log
density and gradient are ``jax.jit(jax.vmap(jax.value_and_grad(f)))`` in
float64 (:mod:`mcmc.core.jax.functions`), so every sampler that needs a
density or a gradient takes it, and it carries
:class:`~mcmc.core.compiled.CompiledPaths` whose HMC trajectory and NUTS
transition run whole inside JAX (``lax.while_loop``,
:mod:`mcmc.core.jax.kernels`), and whose loops run many transitions per
call, warm-up's dual averaging and metric sums included: the same
integrator, divergence rule and trees as the NumPy samplers, reading the
same random numbers from each chain's :class:`~mcmc.core.random.ChainRandom`
buffers as the numba kernels do, so a chain's draws depend only on the seed
and its index, and the NumPy and JAX versions of one model give the same
draws to rounding.

Where it sits: beside :mod:`mcmc.core.compiled`, below targets and
samplers, importing neither. ``jax`` is an optional extra
(``pip install 'mcmc[jax]'``); it is imported only here, only when a JAX
target is loaded (:func:`setup`), so no other command pays its import.

Compilation is timed (:attr:`mcmc.core.jax.functions.Compiler.seconds`, the
run summary shows it) and cached across runs by JAX's persistent
compilation cache, in ``$MCMC_CACHE_DIR/jax`` (default
``~/.cache/mcmc/compiled/jax``) unless JAX's own
``jax_compilation_cache_dir`` is set. Tracing and lowering are still paid in
every process; XLA's compilation, the larger part, only on the first run.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from mcmc.core.errors import InputError

#: What to install when jax is missing (the one line a user sees).
INSTALL = "pip install 'mcmc[jax]'"


def setup(source: str | None) -> ModuleType:
    """``jax``, imported and set up for mcmc: float64 everywhere, the persistent compilation cache.

    Call it before the user's file runs: arrays that file makes at import
    time (its data) are float64 only if ``jax_enable_x64`` is on by then.

    Raises
    ------
    InputError
        Naming ``source`` when jax is not installed (one line: what to install).
    """
    try:
        import jax
    except ImportError:
        raise InputError(source, f"a JAX target needs jax, which is not installed: {INSTALL}") from None
    jax.config.update("jax_enable_x64", True)
    _persistent_cache(jax)
    return jax


def _persistent_cache(jax: Any) -> None:
    """Keep every compiled executable on disk (JAX's default keeps only those that took over a second)."""
    if jax.config.jax_compilation_cache_dir:  # the user's own choice (JAX_COMPILATION_CACHE_DIR) stands
        return
    from mcmc.core.compiled.kernels import cache_dir

    folder = cache_dir() / "jax"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:  # an unwritable cache folder: compile in every process
        return
    jax.config.update("jax_compilation_cache_dir", str(folder))
    # a small model's kernels compile in a fraction of a second each, but there are several, every run
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
