"""Targets defined in a user's Python file (``--target model.py`` or ``model.py:name``).

The file is imported with :mod:`importlib` from its path; this runs the
user's own code, by design. It (or, with ``:name``, the module attribute
``name``: a class, instance, ``SimpleNamespace`` or a ready
:class:`~mcmc.core.targets.base.Target`) must provide

* ``log_density(x)``: ``x (chains, dim) -> (chains,)``, vectorized over the
  leading axis, ``-inf`` outside the support;
* ``dim`` (an int), or ``initial_point(rng, chains) -> (chains, dim)`` from
  which the dimension is read (``rng`` is a :class:`~mcmc.core.random.ChainRandom`:
  ``rng.normal((dim,))`` has shape ``(chains, dim)``);
* optionally ``grad_log_density(x) -> (chains, dim)`` (needed by HMC),
  ``names`` (one per coordinate), and ``log_prior(x)`` with
  ``log_likelihood(x)``, both ``(chains,)``, for two-stage Metropolis-Hastings
  (with both, ``log_density`` may be left out: it is their sum).

The functions are probed once on two points: the log density must return
``(2,)`` floats that are finite or ``-inf``, the gradient ``(2, dim)`` finite
floats, and a prior and likelihood must add up to the log density. Any
failure is an :class:`~mcmc.core.errors.InputError` naming the file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.errors import InputError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target


def load_user_target(spec: str) -> Target:
    """Load ``path.py`` or ``path.py:name`` as a :class:`Target` (see the module docstring)."""
    path_text, _, attr = spec.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise InputError(path_text, "no such file" if not path.exists() else "not a file")
    module = _import(path, path_text)
    if attr:
        if not hasattr(module, attr):
            raise InputError(path_text, f"defines no {attr!r}")
        obj: Any = getattr(module, attr)
    else:
        obj = module
    if isinstance(obj, Target):
        target = obj
    else:
        target = _from_namespace(obj, spec, path_text)
    _probe(target, path_text)
    return target


def _import(path: Path, source: str) -> Any:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"mcmc_user_target_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(source, "cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's code may raise anything
        sys.modules.pop(name, None)
        raise InputError(source, f"failed to import: {type(exc).__name__}: {exc}") from None
    return module


def _callable(obj: Any, name: str, source: str, required: bool) -> Callable[..., Any] | None:
    fn = getattr(obj, name, None)
    if fn is None:
        if required:
            raise InputError(source, f"defines no function {name}(x)")
        return None
    if not callable(fn):
        raise InputError(source, f"{name} is not a function")
    return fn  # type: ignore[no-any-return]


def _from_namespace(obj: Any, spec: str, source: str) -> Target:
    log_prior = _callable(obj, "log_prior", source, required=False)
    log_likelihood = _callable(obj, "log_likelihood", source, required=False)
    if (log_prior is None) != (log_likelihood is None):
        given, missing = ("log_prior", "log_likelihood") if log_likelihood is None else ("log_likelihood", "log_prior")
        raise InputError(source, f"defines {given}(x) but not {missing}(x); two-stage needs both")
    log_density = _callable(obj, "log_density", source, required=log_prior is None)
    if log_density is None:  # prior x likelihood only
        prior, likelihood = log_prior, log_likelihood

        def log_density(x: np.ndarray) -> np.ndarray:
            return np.asarray(prior(x), dtype=float) + np.asarray(likelihood(x), dtype=float)

    grad = _callable(obj, "grad_log_density", source, required=False)
    initial = _callable(obj, "initial_point", source, required=False)
    dim = getattr(obj, "dim", None)
    if dim is None:
        if initial is None:
            raise InputError(source, "defines neither dim nor initial_point(rng, chains)")
        try:
            dim = np.shape(initial(ChainRandom(0, chains=2), 2))[-1]
        except Exception as exc:  # noqa: BLE001
            raise InputError(source, f"initial_point failed: {type(exc).__name__}: {exc}") from None
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise InputError(source, f"dim must be a positive integer, got {dim!r}")
    dim = int(dim)
    names = getattr(obj, "names", None)
    if names is not None:
        names = tuple(str(n) for n in names)
        if len(names) != dim:
            raise InputError(source, f"names has {len(names)} entries but dim is {dim}")

    def as_float(fn: Callable[..., Any]) -> Callable[[np.ndarray], np.ndarray]:
        return lambda x: np.asarray(fn(x), dtype=float)

    return Target(
        name=spec,
        dim=dim,
        log_density=as_float(log_density),
        grad_log_density=as_float(grad) if grad is not None else None,
        names=names or (),
        variables=(("x", (dim,)),) if names is None else tuple((n, ()) for n in names),
        initial_point=initial,
        log_prior=as_float(log_prior) if log_prior is not None else None,
        log_likelihood=as_float(log_likelihood) if log_likelihood is not None else None,
        options={},
    )


def _probe(target: Target, source: str) -> None:
    rng = ChainRandom(0, chains=2, stream=2)
    try:
        x = target.initial(rng, 2)
    except Exception as exc:  # noqa: BLE001
        raise InputError(source, f"initial_point failed: {type(exc).__name__}: {exc}") from None
    lp = _call(target.log_density, x, source, "log_density")
    if lp.shape != (2,):
        raise InputError(
            source, f"log_density returned shape {lp.shape} for x of shape (2, {target.dim}); expected (2,)"
        )
    if np.any(np.isnan(lp)) or np.any(lp == np.inf):
        raise InputError(source, "log_density returned NaN or +inf at the probe points")
    if target.log_prior is not None and target.log_likelihood is not None:
        parts = _call(target.log_prior, x, source, "log_prior") + _call(
            target.log_likelihood, x, source, "log_likelihood"
        )
        if parts.shape != (2,) or not np.allclose(parts, lp, rtol=1e-8, atol=1e-8, equal_nan=True):
            raise InputError(source, "log_prior(x) + log_likelihood(x) differs from log_density(x) at the probe points")
    if target.grad_log_density is not None:
        g = _call(target.grad_log_density, x, source, "grad_log_density")
        if g.shape != (2, target.dim):
            raise InputError(source, f"grad_log_density returned shape {g.shape}; expected (2, {target.dim})")
        if not np.all(np.isfinite(g[np.isfinite(lp)])):
            raise InputError(source, "grad_log_density returned NaN or infinite values at the probe points")


def _call(fn: Callable[[np.ndarray], Any], x: np.ndarray, source: str, name: str) -> np.ndarray:
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(x.copy()), dtype=float)
    except Exception as exc:  # noqa: BLE001
        raise InputError(source, f"{name} failed on x of shape {x.shape}: {type(exc).__name__}: {exc}") from None
