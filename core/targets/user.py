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
  (with both, ``log_density`` may be left out: it is their sum);
* optionally ``transform(x) -> (chains, n_reported)``, the map from the
  unconstrained sampling space to the values the chains file reports
  (``tau = exp(log_tau)``, as Stan reports a ``<lower=0>`` parameter), and
  ``variables``, ``[(name, shape), ...]`` grouping the reported values into
  the chains file's variables (``[("theta", (8,)), ("mu", ()), ("tau", ())]``);
  ``names`` are then those of :func:`~mcmc.core.targets.base.flat_names`.
* optionally Gibbs blocks, for ``hmc-gibbs`` (and ``gibbs`` when they cover
  every coordinate): ``conditional_blocks`` (a list of coordinate-index
  lists, or a function returning one) and ``draw_conditional(rng, x, block,
  noise)`` setting ``x[:, block]`` in place to a draw from its full
  conditional, with ``sweep_noise(rng)`` optional (the random numbers of one
  scan drawn up front, passed as ``noise``; else ``noise`` is ``None`` and
  ``draw_conditional`` draws from ``rng``). The target is then a
  :class:`UserConditionalsTarget` (:class:`~mcmc.core.targets.protocols.FullConditionals`).
* optionally the hooks of the samplers that draw independently or use the
  model's structure (each makes the target implement a protocol of
  :mod:`mcmc.core.targets.protocols`; docs/formats.md, "Target files"):

  - ``quantile(u)``, ``u (n,) -> (n,)``, for a one-dimensional target: its
    quantile function, which ``inverse-cdf`` draws through exactly
    (:class:`~mcmc.core.targets.protocols.Quantile`);
  - ``proposal_sample(rng) -> (rng.chains, dim)`` and
    ``proposal_log_density(x) -> (n,)``: a proposal ``q`` for ``importance``
    (:class:`~mcmc.core.targets.protocols.ProposalDistribution`), and with
    ``log_bound`` (a number, ``log k`` with ``exp(log_density) <= k q``
    everywhere) for exact ``rejection``
    (:class:`~mcmc.core.targets.protocols.EnvelopeBound`);
  - ``prior_cov`` (or its lower Cholesky factor ``prior_chol``), optionally
    ``prior_mean`` (default 0), with ``log_likelihood(x)``: the model's
    Gaussian prior, which ``elliptical-slice`` moves on
    (:class:`~mcmc.core.targets.protocols.GaussianPrior`); ``log_density``
    may then be left out (it is the prior's plus the likelihood).

A file written in JAX (``backend = "jax"``, or a file that imports ``jax``
and does not say ``backend = "numpy"``; ``docs/formats.md``, "JAX targets")
gives ``log_density(x)`` (and ``log_prior``, ``log_likelihood``,
``transform``) for **one point** ``x (dim,)`` in ``jax.numpy``, and no
gradient: :mod:`mcmc.core.jax` makes the batched forms and the gradient
(``jax.vmap``, ``jax.value_and_grad``, compiled in float64) and the compiled
HMC and NUTS paths. Its ``initial_point``, names, variables and Gibbs blocks
are as above. jax is imported (and set to float64) before the file runs,
only for such a file; a missing jax is one line naming the file. Loading the
same JAX file again in a process returns the target already built, with its
compiled programs.

The functions are probed once on two points: the log density must return
``(2,)`` floats that are finite or ``-inf``, the gradient ``(2, dim)`` finite
floats, and a prior and likelihood must add up to the log density. Any
failure is an :class:`~mcmc.core.errors.InputError` naming the file.

After the probe every call is still checked, since a function can work on two
chains and fail on four, or raise far into a run: an exception becomes
``model.py: log_density raised ValueError: ...``, a result of the wrong shape
``model.py: log_density returned shape (3,) for 4 chains; expected (4,)``
(the driver adds the iteration). The check is a shape comparison per call,
nothing per chain. Values are not judged after the probe: ``-inf`` is outside
the support, and a NaN log density or gradient is a rejected proposal or a
divergent trajectory for the sampler, not a crash.

After the probe, a NumPy file's functions (log density, gradient, prior,
likelihood) are evaluated at :data:`BATCH_CHECK_POINTS` points batched and
one point per call (:func:`_batch_dependent`). When the bits differ (BLAS
rounds a row of ``r @ x`` with the shape of the batch), every later call is
made one point per call, so a chain's values, and its bytes in the chains
file, do not depend on which chains are evaluated beside it
(``--first-chain``, ``--scheduler``; ``docs/scale-out.md``). ``transform``
is always called on one chain's draws at a time.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.errors import InputError, McmcError, UsageError
from mcmc.core.random import ChainRandom
from mcmc.core.targets.base import Target, flat_names
from mcmc.core.targets.protocols import block_indices


@dataclasses.dataclass(frozen=True, eq=False)
class UserConditionalsTarget(Target):
    """A user target with Gibbs blocks (implements :class:`~mcmc.core.targets.protocols.FullConditionals`).

    Every call of the user's functions is checked: an exception becomes an
    :class:`~mcmc.core.errors.InputError` naming the file, and a draw that
    changes coordinates outside its block is refused.
    """

    blocks: tuple[np.ndarray, ...] = ()
    draw_fn: Callable[..., Any] | None = None
    noise_fn: Callable[..., Any] | None = None
    source: str = ""
    discrete = False

    def conditional_blocks(self) -> tuple[np.ndarray, ...]:
        return self.blocks

    def sweep_noise(self, rng: ChainRandom) -> Any:
        if self.noise_fn is None:
            return None
        return _call_user(self.noise_fn, rng, self.source, "sweep_noise", as_array=False)

    def draw_conditional(self, rng: ChainRandom, x: np.ndarray, block: np.ndarray, noise: Any) -> None:
        before = x.copy()
        try:
            with np.errstate(all="ignore"):
                self.draw_fn(rng, x, block, noise)  # type: ignore[misc]
        except McmcError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code may raise anything
            raise InputError(self.source, f"draw_conditional raised {type(exc).__name__}: {exc}") from None
        outside = np.ones(x.shape[1], dtype=bool)
        outside[block] = False
        if not np.array_equal(x[:, outside], before[:, outside]):
            raise InputError(self.source, f"draw_conditional for block {block.tolist()} changed other coordinates")


@dataclasses.dataclass(frozen=True, eq=False)
class _QuantileHook:
    """``quantile(u)`` of a one-dimensional target file (:class:`~mcmc.core.targets.protocols.Quantile`)."""

    quantile_fn: Callable[..., Any] | None = None
    source: str = ""

    def quantile(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        out = _call_user(self.quantile_fn, u, self.source, "quantile")  # type: ignore[arg-type]
        if out.shape != u.shape:
            raise InputError(self.source, f"quantile returned shape {out.shape} for {u.size} values, not {u.shape}")
        return out


@dataclasses.dataclass(frozen=True, eq=False)
class _ProposalHook:
    """A target file's proposal (:class:`~mcmc.core.targets.protocols.ProposalDistribution`)."""

    proposal_sample_fn: Callable[..., Any] | None = None
    proposal_log_density_fn: Callable[..., Any] | None = None
    source: str = ""

    def proposal_sample(self, rng: Any) -> np.ndarray:
        out = _call_user(self.proposal_sample_fn, rng, self.source, "proposal_sample")  # type: ignore[arg-type]
        return _shaped(out, rng.chains, self.dim, True, self.source, "proposal_sample")  # type: ignore[attr-defined]

    def proposal_log_density(self, x: np.ndarray) -> np.ndarray:
        out = _call_user(self.proposal_log_density_fn, x, self.source, "proposal_log_density")  # type: ignore[arg-type]
        return _shaped(out, np.shape(x)[0], self.dim, False, self.source, "proposal_log_density")  # type: ignore[attr-defined]


@dataclasses.dataclass(frozen=True, eq=False)
class _BoundHook:
    """``log_bound`` of a target file with a proposal (:class:`~mcmc.core.targets.protocols.EnvelopeBound`)."""

    log_bound: float = 0.0


@dataclasses.dataclass(frozen=True, eq=False)
class _PriorHook:
    """A target file's Gaussian prior (:class:`~mcmc.core.targets.protocols.GaussianPrior`)."""

    prior_mean: Any = None
    prior_chol: Any = None


@lru_cache(maxsize=32)
def _user_class(hooks: tuple[type, ...], conditionals: bool) -> type:
    """The target class of a file with these hooks: a frozen dataclass over them and the base target."""
    base: type = UserConditionalsTarget if conditionals else Target
    if not hooks:
        return base
    name = "User" + "".join(h.__name__.strip("_").removesuffix("Hook") for h in hooks) + base.__name__
    return dataclasses.make_dataclass(name, [], bases=(*hooks, base), frozen=True, eq=False)


def cholesky(cov: np.ndarray) -> np.ndarray:
    """The lower Cholesky factor of a symmetric positive definite ``cov`` (Cholesky-Banachiewicz, row by row).

    Written out with elementwise products and sums, not LAPACK: the factor,
    and with it every draw of a prior, has the same bytes on every CPU.

    Raises
    ------
    ValueError
        ``cov`` is not positive definite.
    """
    a = np.asarray(cov, dtype=float)
    n = a.shape[0]
    chol = np.zeros_like(a)
    for i in range(n):
        row = chol[i, :i]
        # chol[i, j] for j < i, one column at a time: the products of rows i and j so far
        for j in range(i):
            chol[i, j] = (a[i, j] - np.sum(row[:j] * chol[j, :j])) / chol[j, j]
        d = a[i, i] - np.sum(chol[i, :i] * chol[i, :i])
        if not d > 0:
            raise ValueError(f"not positive definite (pivot {i} is {d:.3g})")
        chol[i, i] = np.sqrt(d)
    return chol


def _prior(obj: Any, dim: int, source: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(prior_mean, prior_chol)`` from the file's ``prior_cov`` or ``prior_chol`` and ``prior_mean``, or ``None``."""
    cov, chol, mean = (getattr(obj, k, None) for k in ("prior_cov", "prior_chol", "prior_mean"))
    if cov is None and chol is None:
        if mean is not None:
            raise InputError(source, "defines prior_mean but neither prior_cov nor prior_chol")
        return None
    if cov is not None and chol is not None:
        raise InputError(source, "defines both prior_cov and prior_chol; give one")
    what = "prior_cov" if cov is not None else "prior_chol"
    try:
        matrix = np.array(cov if cov is not None else chol, dtype=float)
        m = np.zeros(dim) if mean is None else np.broadcast_to(np.asarray(mean, dtype=float), (dim,)).copy()
    except (TypeError, ValueError):
        raise InputError(source, f"{what} and prior_mean must be numbers ({dim} x {dim}, and {dim})") from None
    if matrix.shape != (dim, dim) or not np.all(np.isfinite(matrix)) or not np.all(np.isfinite(m)):
        raise InputError(source, f"{what} must be a finite {dim} x {dim} matrix, got shape {matrix.shape}")
    if cov is not None:
        if not np.allclose(matrix, matrix.T, rtol=1e-12, atol=0):
            raise InputError(source, "prior_cov is not symmetric")
        try:
            matrix = cholesky(matrix)
        except ValueError as exc:
            raise InputError(source, f"prior_cov is {exc}") from None
    elif np.any(np.triu(matrix, 1) != 0) or not np.all(np.diag(matrix) > 0):
        raise InputError(source, "prior_chol must be lower-triangular with a positive diagonal")
    matrix.setflags(write=False)
    m.setflags(write=False)
    return m, matrix


def gaussian_log_density(x: np.ndarray, mean: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """``log N(x; mean, L L^T)`` at ``x (n, dim)`` by forward substitution (elementwise sums, no LAPACK)."""
    d = mean.size
    z = np.empty_like(np.asarray(x, dtype=float))
    r = np.asarray(x, dtype=float) - mean
    for i in range(d):
        z[:, i] = (r[:, i] - np.sum(z[:, :i] * chol[i, :i], axis=1)) / chol[i, i]
    return -0.5 * np.sum(z * z, axis=1) - np.sum(np.log(np.diag(chol))) - 0.5 * d * np.log(2.0 * np.pi)


def load_user_target(spec: str, text: str | None = None) -> Target:
    """Load ``path.py`` or ``path.py:name`` as a :class:`Target` (see the module docstring).

    With ``text``, the file's source is ``text`` and ``path.py`` is only its
    name (in errors, the target's name and ``__file__``): a Dask worker loads
    a user target shipped as source this way (:mod:`mcmc.core.scaleout`),
    through the same checks as a local run.
    """
    path_text, _, attr = spec.partition(":")
    path = Path(path_text)
    if text is None and not path.is_file():
        raise InputError(path_text, "no such file" if not path.exists() else "not a file")
    source_text = text if text is not None else _read(path)
    backend = _backend(source_text)
    key = (spec, hashlib.sha256((source_text or "").encode()).hexdigest())
    if backend == JAX:
        if key in _JAX_TARGETS:
            return _JAX_TARGETS[key]
        from mcmc.core.jax import setup

        setup(path_text)  # before the file runs: the arrays it makes at import are float64 then
    module = _import(path, path_text) if text is None else _import_text(text, path_text)
    if attr:
        if not hasattr(module, attr):
            raise InputError(path_text, f"defines no {attr!r}")
        obj: Any = getattr(module, attr)
    else:
        obj = module
    declared = _declared(obj, path_text)
    if declared is not None and declared != backend:  # set in a way the scan of the source did not read
        raise InputError(path_text, f"write the backend as a plain assignment, backend = {declared!r}, "
                         "so it is known before the file runs")  # fmt: skip
    if isinstance(obj, Target):
        target = obj
    else:
        target = _from_namespace(obj, spec, path_text, backend)
    rows = {"on": False}
    target = _guarded(target, path_text, rows)
    _probe(target, path_text)
    # A JAX file's functions are of one point already (vmapped inside XLA); a NumPy file's may round a point
    # with its batch (BLAS): then it is evaluated point by point, and a chain's bytes do not depend on its company.
    rows["on"] = backend != JAX and _batch_dependent(target, path_text)
    if backend == JAX:
        _JAX_TARGETS[key] = target
    return target


#: A target file's ``backend``: its log density is batched NumPy (or a numba point function) or one point in JAX.
NUMPY, JAX = "numpy", "jax"
#: JAX targets built in this process, by spec and source: ``mcmc sample`` builds its target twice (once to
#: check it, once in the run), and a second build would trace and compile every program again.
_JAX_TARGETS: dict[tuple[str, str], Target] = {}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # the import says what is wrong


def _backend(text: str | None) -> str:
    """The backend a target file's source declares (``backend = "jax"``) or implies (it imports jax)."""
    if not text:
        return NUMPY
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return NUMPY  # the import reports it
    imports_jax = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "backend" for t in node.targets):
            if isinstance(node.value, ast.Constant) and node.value.value in (NUMPY, JAX):
                return str(node.value.value)
        elif isinstance(node, ast.Import):
            imports_jax |= any(alias.name.split(".")[0] == "jax" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imports_jax |= node.module.split(".")[0] == "jax"
    return JAX if imports_jax else NUMPY


def _declared(obj: Any, source: str) -> str | None:
    value = getattr(obj, "backend", None)
    if value is None:
        return None
    if value not in (NUMPY, JAX):
        raise InputError(source, f"backend must be {NUMPY!r} or {JAX!r}, got {value!r}")
    return str(value)


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


def read_source(spec: str) -> str:
    """The source text of the user target file of ``spec`` (``path.py[:name]``), to ship to another machine."""
    path_text = spec.partition(":")[0]
    try:
        return Path(path_text).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path_text, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path_text, f"cannot be read: {exc}") from None


def _import_text(text: str, source: str) -> Any:
    digest = hashlib.sha1(f"{source}\0{text}".encode()).hexdigest()[:12]
    name = f"mcmc_user_target_{digest}"
    module = types.ModuleType(name)
    module.__file__ = source
    sys.modules[name] = module
    try:
        exec(compile(text, source, "exec"), module.__dict__)  # noqa: S102 - the user's own model, by design
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


#: A target file's compiled function of one point (docs/formats.md, "Compiled targets").
POINT = "point_log_density_and_grad"


def _from_namespace(obj: Any, spec: str, source: str, backend: str = NUMPY) -> Target:
    log_prior = _callable(obj, "log_prior", source, required=False)
    log_likelihood = _callable(obj, "log_likelihood", source, required=False)
    has_prior = getattr(obj, "prior_cov", None) is not None or getattr(obj, "prior_chol", None) is not None
    if has_prior and log_likelihood is None:
        raise InputError(source, "defines a Gaussian prior (prior_cov or prior_chol) but no log_likelihood(x)")
    if has_prior and log_prior is not None:
        raise InputError(source, "defines log_prior and a Gaussian prior (prior_cov or prior_chol): the prior is "
                         "the Gaussian's, leave log_prior out")  # fmt: skip
    if has_prior:
        # The prior is the Gaussian: log_prior is its log density (set below, once dim is known).
        log_prior = _placeholder
    if (log_prior is None) != (log_likelihood is None):
        given, missing = ("log_prior", "log_likelihood") if log_likelihood is None else ("log_likelihood", "log_prior")
        raise InputError(source, f"defines {given}(x) but not {missing}(x); two-stage needs both")
    if getattr(obj, "log_density", None) is None and log_prior is None and getattr(obj, POINT, None) is None and \
            all(hasattr(obj, name) for name in ("log_joint", "latent_dim")):
        raise InputError(source, "declares a latent-variable model (log_joint, latent_dim): find its "
                         "maximum-likelihood parameters with --mcem")
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
    prior = _prior(obj, dim, source)
    if prior is not None and log_prior is _placeholder and backend == JAX:
        from mcmc.core.jax.functions import gaussian_log_density as point_gaussian

        log_prior = point_gaussian(*prior)  # of one point, in jax.numpy, as the file's own functions
    elif prior is not None and log_prior is _placeholder:
        prior_mean, prior_chol = prior

        def log_prior(x: np.ndarray) -> np.ndarray:
            return gaussian_log_density(x, prior_mean, prior_chol)
    transform = _callable(obj, "transform", source, required=False)
    compiled_vg = compiled = None
    if backend == JAX:
        log_density, compiled_vg, compiled, log_prior, log_likelihood, transform = _jax_functions(
            obj, dim, source, log_prior, log_likelihood, transform
        )
        grad = None
    else:
        point = getattr(obj, POINT, None)
        if point is not None:
            from mcmc.core.compiled import compiled_paths, is_compiled, make_batch

            if not is_compiled(point):
                raise InputError(source, "point_log_density_and_grad must be compiled with @numba.njit (for plain "
                                 "Python or NumPy, define log_density(x) and grad_log_density(x) instead)")
            compiled_vg, compiled = make_batch(point), compiled_paths(point)
            compiled_vg.user_name = POINT  # type: ignore[attr-defined]  # what error messages call it
        log_density = _callable(obj, "log_density", source, required=log_prior is None and point is None)
        if log_density is None and compiled_vg is not None:
            batch = compiled_vg

            def log_density(x: np.ndarray) -> np.ndarray:
                return batch(x)[0]

            log_density.user_name = POINT  # type: ignore[attr-defined]  # what error messages call it
        elif log_density is None:  # prior x likelihood only

            def log_density(x: np.ndarray) -> np.ndarray:
                return np.asarray(log_prior(x), dtype=float) + np.asarray(log_likelihood(x), dtype=float)

        grad = _callable(obj, "grad_log_density", source, required=False)
    variables = _variables(getattr(obj, "variables", None), source)
    names = getattr(obj, "names", None)
    if variables is not None:
        if names is not None:
            raise InputError(source, "defines both names and variables; give one (names follow from variables)")
        names = flat_names(variables)
    elif names is not None:
        names = tuple(str(n) for n in names)
    if names is not None and transform is None and len(names) != dim:
        raise InputError(source, f"names has {len(names)} entries but dim is {dim}")
    if transform is not None and names is None:
        raise InputError(source, "defines transform(x) but neither names nor variables for its values")
    if variables is None and names is not None:
        variables = tuple((n, ()) for n in names)

    common: dict[str, Any] = {
        "name": spec, "dim": dim, "log_density": log_density, "grad_log_density": grad, "names": names or (),
        "variables": variables or (("x", (dim,)),), "initial_point": initial, "log_prior": log_prior,
        "log_likelihood": log_likelihood,
        "transform": None if transform is None else _batched(transform, dim, len(names or ()), source),
        "options": {}, "value_and_grad_fn": compiled_vg if grad is None else None, "compiled": compiled,
    }  # fmt: skip
    hooks, extra = _hooks(obj, dim, source, prior)
    draw = _callable(obj, "draw_conditional", source, required=False)
    blocks = getattr(obj, "conditional_blocks", None)
    if draw is None and blocks is None:
        return _user_class(hooks, False)(**common, **extra)  # type: ignore[no-any-return]
    if draw is None or blocks is None:
        raise InputError(source, "Gibbs blocks need both conditional_blocks and draw_conditional(rng, x, block, noise)")
    try:
        listed = blocks() if callable(blocks) else blocks
        parsed = tuple(block_indices(b, dim) for b in listed)
    except UsageError as exc:
        raise InputError(source, f"conditional_blocks: {exc}") from None
    except Exception as exc:  # noqa: BLE001
        raise InputError(source, f"conditional_blocks failed: {type(exc).__name__}: {exc}") from None
    if not parsed:
        raise InputError(source, "conditional_blocks is empty")
    noise = _callable(obj, "sweep_noise", source, required=False)
    cls = _user_class(hooks, True)
    return cls(**common, **extra, blocks=parsed, draw_fn=draw, noise_fn=noise, source=source)  # type: ignore[no-any-return]


def _placeholder(x: np.ndarray) -> np.ndarray:  # the Gaussian prior's log density, until dim is known
    raise AssertionError("replaced once the dimension is known")


def _hooks(
    obj: Any, dim: int, source: str, prior: tuple[np.ndarray, np.ndarray] | None
) -> tuple[tuple[type, ...], dict[str, Any]]:
    """The hook mixins a file's functions call for, and their field values (see the module docstring)."""
    hooks: list[type] = []
    extra: dict[str, Any] = {}
    quantile = _callable(obj, "quantile", source, required=False)
    if quantile is not None:
        if dim != 1:
            raise InputError(source, f"quantile(u) applies to a one-dimensional target; dim is {dim}")
        hooks.append(_QuantileHook)
        extra.update(quantile_fn=quantile, source=source)
    sample = _callable(obj, "proposal_sample", source, required=False)
    log_q = _callable(obj, "proposal_log_density", source, required=False)
    if (sample is None) != (log_q is None):
        raise InputError(source, "a proposal needs both proposal_sample(rng) and proposal_log_density(x)")
    bound = getattr(obj, "log_bound", None)
    if bound is not None and sample is None:
        raise InputError(source, "defines log_bound but no proposal (proposal_sample and proposal_log_density)")
    if sample is not None:
        hooks.append(_ProposalHook)
        extra.update(proposal_sample_fn=sample, proposal_log_density_fn=log_q, source=source)
    if bound is not None:
        if isinstance(bound, bool) or not isinstance(bound, (int, float, np.floating, np.integer)) or not np.isfinite(
            bound
        ):
            raise InputError(source, f"log_bound must be a finite number (log k, with p <= k q), got {bound!r}")
        hooks.append(_BoundHook)
        extra["log_bound"] = float(bound)
    if prior is not None:
        hooks.append(_PriorHook)
        extra.update(prior_mean=prior[0], prior_chol=prior[1])
    return tuple(hooks), extra


def _jax_functions(obj: Any, dim: int, source: str, log_prior: Any, log_likelihood: Any, transform: Any) -> tuple[Any, ...]:
    """A JAX file's point functions as a target's batched functions and compiled paths (:mod:`mcmc.core.jax`)."""
    for name in ("grad_log_density", POINT):
        if getattr(obj, name, None) is not None:
            raise InputError(source, f"defines {name}, but a JAX target's gradient is jax.grad's: remove it "
                             '(or, for a NumPy file, set backend = "numpy")')  # fmt: skip
    from mcmc.core.jax.functions import build, output_shape

    log_density = _callable(obj, "log_density", source, required=log_prior is None)
    if log_density is None:  # prior x likelihood only
        prior, likelihood = log_prior, log_likelihood

        def log_density(x: Any) -> Any:
            return prior(x) + likelihood(x)

    for fn, name in ((log_density, "log_density"), (log_prior, "log_prior"), (log_likelihood, "log_likelihood"),
                     (transform, "transform")):  # fmt: skip
        if fn is None:
            continue
        try:
            shape = output_shape(fn, dim)
        except McmcError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code may raise anything
            raise InputError(source, f"{name} raised {type(exc).__name__}: {_one_line(exc)} (in a JAX target it "
                             f"takes one point, x of shape ({dim},))") from None  # fmt: skip
        if name != "transform" and shape != ():
            raise InputError(source, f"{name}(x) returned shape {shape} for one point; expected a scalar")
        if name == "transform" and len(shape) != 1:
            raise InputError(source, f"transform(x) returned shape {shape} for one point; expected a vector")
    fns = build(log_density, dim, log_prior=log_prior, log_likelihood=log_likelihood, transform=transform)
    for fn in (fns.log_density, fns.value_and_grad, *(k for k in fns.compiled[:2] + fns.compiled[3:] if k)):
        fn.user_name = "log_density"  # type: ignore[attr-defined]  # what error messages call it
    return fns.log_density, fns.value_and_grad, fns.compiled, fns.log_prior, fns.log_likelihood, fns.transform


def _variables(value: Any, source: str) -> tuple[tuple[str, tuple[int, ...]], ...] | None:
    if value is None:
        return None
    try:
        out = tuple((str(name), tuple(int(n) for n in shape)) for name, shape in value)
    except (TypeError, ValueError):
        raise InputError(
            source, "variables must be a list of (name, shape) pairs, e.g. [('theta', (8,)), ('mu', ())]"
        ) from None
    if not out or any(n < 1 for _, shape in out for n in shape):
        raise InputError(source, "variables must be a non-empty list of (name, shape) with positive sizes")
    return out


def _batched(fn: Callable[..., Any], dim: int, reported: int, source: str) -> Callable[[np.ndarray], np.ndarray]:
    """The user's ``transform`` (written for ``(n, dim)``) applied to ``(..., dim)`` draws, shape-checked."""

    def points(flat: np.ndarray) -> np.ndarray:
        out = _call_user(fn, flat, source, "transform")
        if out.shape != (flat.shape[0], reported):
            raise InputError(source, f"transform returned shape {out.shape} for {flat.shape[0]} points; "
                             f"expected ({flat.shape[0]}, {reported})")  # fmt: skip
        return out

    def transform(x: np.ndarray) -> np.ndarray:
        lead = np.shape(x)[:-1]
        if len(lead) >= 2:
            # (chain, draw, dim): one chain's draws per call, the same block whichever chains ran beside it
            # (a transform through BLAS rounds a row with the batch it is in: docs/scale-out.md)
            per_chain = np.reshape(x, (-1, lead[-1], dim))
            out = np.concatenate([points(np.array(c, dtype=float, order="C")) for c in per_chain])
        else:
            out = points(np.reshape(x, (-1, dim)))
        return out.reshape(*lead, reported)

    return transform


def _guarded(target: Target, source: str, rows: dict[str, bool] | None = None) -> Target:
    """``target`` with every user function checked on every call (see the module docstring).

    ``rows["on"]``, once set (:func:`_batch_dependent`), makes every call of
    the file's batched functions one call per point.
    """
    dim = target.dim
    rows = {"on": False} if rows is None else rows

    def checked(fn: Callable[..., Any] | None, name: str, grad: bool) -> Callable[..., Any] | None:
        if fn is None:
            return None
        name = getattr(fn, "user_name", name)  # a function made from the file's compiled point function

        def one(x: np.ndarray) -> np.ndarray:
            return _shaped(_call_user(fn, x, source, name), np.shape(x)[0], dim, grad, source, name)

        def call(x: np.ndarray) -> np.ndarray:
            return _by_row(one, x) if rows["on"] else one(x)

        call.user_name = name  # type: ignore[attr-defined]
        return call

    fused = target.value_and_grad_fn
    fused_name = getattr(fused, "user_name", "value_and_grad")

    def fused_pair(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pair = _call_user(fused, x, source, fused_name, as_array=False)
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise InputError(source, f"{fused_name} must return a pair (log density, gradient)")
        n = np.shape(x)[0]
        lp, g = (np.asarray(v, dtype=float) for v in pair)
        return (_shaped(lp, n, dim, False, source, f"{fused_name} (log density)"),
                _shaped(g, n, dim, True, source, f"{fused_name} (gradient)"))  # fmt: skip

    def value_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not rows["on"] or np.shape(x)[0] <= 1:
            return fused_pair(x)
        pairs = [fused_pair(row) for row in _each_row(x)]
        return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])

    value_and_grad.user_name = fused_name  # type: ignore[attr-defined]

    def guarded(compiled: Callable[..., Any]) -> Callable[..., Any]:
        kernel_name = getattr(compiled, "user_name", POINT)

        def kernel(*args: Any, **kwargs: Any) -> Any:
            return _call_user(lambda _: compiled(*args, **kwargs), None, source, kernel_name, as_array=False)

        return kernel

    return dataclasses.replace(
        target,
        compiled=None if target.compiled is None else target.compiled.wrapped(guarded),
        log_density=checked(target.log_density, "log_density", False),
        grad_log_density=checked(target.grad_log_density, "grad_log_density", True),
        log_prior=checked(target.log_prior, "log_prior", False),
        log_likelihood=checked(target.log_likelihood, "log_likelihood", False),
        value_and_grad_fn=value_and_grad if fused is not None else None,
    )


def _each_row(x: np.ndarray) -> Iterator[np.ndarray]:
    """The points of ``x (n, dim)`` one at a time, each a fresh C-contiguous ``(1, dim)`` array.

    A fresh array, not a view: the point then has the same layout whichever
    chains it came with, so a BLAS kernel sums it in the same order.
    """
    for i in range(np.shape(x)[0]):
        yield np.array(x[i : i + 1], dtype=float, order="C")


def _by_row(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``fn`` (a file's batched function, shape-checked) evaluated one point at a time, stacked."""
    if np.shape(x)[0] <= 1:
        return fn(x)
    return np.concatenate([fn(row) for row in _each_row(x)])


#: Points the start-up check evaluates batched and one by one: enough that a BLAS product that rounds a row
#: with its batch shows (on a 3-term sum, 8 points miss it about once in 200; more terms, never seen).
BATCH_CHECK_POINTS = 8


def _batch_dependent(target: Target, source: str) -> bool:
    """Whether the file's functions give a point other bits in a batch than alone (see the module docstring).

    Evaluates the log density (and the gradient, prior, likelihood) at
    :data:`BATCH_CHECK_POINTS` points batched, then one point per call, and
    compares the bits. A function that fails here (say, one written for the
    probe's two points only) is left to fail where the run calls it, with
    the usual message.
    """
    rng = ChainRandom(0, chains=BATCH_CHECK_POINTS, stream=3)
    try:
        x = np.array(target.initial(rng, BATCH_CHECK_POINTS), dtype=float, order="C")
        functions: list[Callable[[np.ndarray], Any]] = [target.log_density]
        functions += [f for f in (target.log_prior, target.log_likelihood) if f is not None]
        if target.grad_log_density is not None or target.value_and_grad_fn is not None:
            functions.append(lambda p: target.value_and_grad(p)[1])
        for fn in functions:
            together = np.asarray(fn(x.copy()), dtype=float)
            alone = np.concatenate([np.asarray(fn(row), dtype=float) for row in _each_row(x)])
            if together.shape != alone.shape or not np.array_equal(together, alone, equal_nan=True):
                return True
    except McmcError:
        return False
    return False


def _call_user(fn: Callable[..., Any], x: np.ndarray, source: str, name: str, as_array: bool = True) -> Any:
    try:
        # log(0) = -inf outside the support is an answer, not a warning for the terminal
        with np.errstate(all="ignore"):
            out = fn(x)
            return np.asarray(out, dtype=float) if as_array else out
    except McmcError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's code may raise anything
        raise InputError(source, f"{name} raised {type(exc).__name__}: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line: its first informative line (numba's typing errors span pages,
    headed by the name of the compiler pass that failed)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("Failed in nopython mode pipeline")]
    return (useful or lines or [""])[0]


def _shaped(out: np.ndarray, n: int, dim: int, grad: bool, source: str, name: str) -> np.ndarray:
    expected = (n, dim) if grad else (n,)
    if out.shape != expected:
        chains = f"{n} chain{'s' if n != 1 else ''}" + (f" of dimension {dim}" if grad else "")
        raise InputError(source, f"{name} returned shape {out.shape} for {chains}; expected {expected}")
    return out


def _probe(target: Target, source: str) -> None:
    rng = ChainRandom(0, chains=2, stream=2)
    try:
        x = target.initial(rng, 2)
    except Exception as exc:  # noqa: BLE001
        raise InputError(source, f"initial_point failed: {type(exc).__name__}: {exc}") from None
    # shapes are checked by the guarded functions themselves; here the values
    lp = _call(target.log_density, x)
    if np.any(np.isnan(lp)) or np.any(lp == np.inf):
        name = getattr(target.log_density, "user_name", "log_density")
        raise InputError(source, f"{name} returned NaN or +inf at the probe points")
    if target.log_prior is not None and target.log_likelihood is not None:
        parts = _call(target.log_prior, x) + _call(target.log_likelihood, x)
        if not np.allclose(parts, lp, rtol=1e-8, atol=1e-8, equal_nan=True):
            raise InputError(source, "log_prior(x) + log_likelihood(x) differs from log_density(x) at the probe points")
    if target.transform is not None:
        target.report(x.copy())  # raises on a wrong shape
    _probe_hooks(target, rng, source)
    if target.grad_log_density is not None or target.value_and_grad_fn is not None:
        g = target.value_and_grad(x)[1]
        if not np.all(np.isfinite(g[np.isfinite(lp)])):
            name = getattr(target.value_and_grad_fn, "user_name", "grad_log_density")
            raise InputError(source, f"{name} returned NaN or infinite gradients at the probe points")


def _call(fn: Callable[[np.ndarray], Any], x: np.ndarray) -> np.ndarray:
    # fn is guarded (_guarded); a copy, so a function that writes into x harms nothing
    return np.asarray(fn(x.copy()), dtype=float)


def _probe_hooks(target: Target, rng: ChainRandom, source: str) -> None:
    """The hooks' values at the probe: quantiles finite and increasing, proposals finite with a finite density."""
    if isinstance(target, _QuantileHook):
        u = np.array([0.1, 0.5, 0.9])
        q = target.quantile(u)
        if not np.all(np.isfinite(q)) or not np.all(np.diff(q) >= 0):
            raise InputError(source, f"quantile(u) at u = 0.1, 0.5, 0.9 gave {q.tolist()}: not finite and increasing")
    if isinstance(target, _ProposalHook):
        x = target.proposal_sample(rng)
        if not np.all(np.isfinite(x)):
            raise InputError(source, "proposal_sample returned non-finite points at the probe")
        if not np.all(np.isfinite(target.proposal_log_density(x))):
            raise InputError(source, "proposal_log_density is not finite at the probe's own proposals")
