"""Latent-variable models for Monte Carlo EM: ``log_joint(z, theta)`` and which block is latent.

A model for ``mcmc sample --target model.py --mcem`` (:mod:`mcmc.core.mcem`)
is a user file, or a built-in (:data:`mcmc.core.targets.LATENT_MODELS`, each a
module written in this protocol), that declares the
complete-data likelihood of observed data ``y`` (held by the file), latent
variables ``z`` and parameters ``theta``, and which of them is latent:

* ``latent_dim``: the number of latent coordinates, ``z`` is ``(n, latent_dim)``;
* ``parameters``: the names of theta's coordinates (its length is ``p``);
* ``theta0``: where EM starts, ``p`` numbers;
* ``log_joint(z, theta)``: ``z (n, latent_dim)`` and ``theta (p,)`` ->
  ``(n,)``, the complete-data log likelihood ``log p(y, z | theta)``, for
  ``n`` values of ``z`` at one theta; ``-inf`` where ``z`` is impossible.
  Constants free of both ``z`` and theta may be dropped.
* optionally ``grad_log_joint(z, theta) -> (n, latent_dim)``, its gradient in
  ``z`` (HMC and NUTS need it for the E-step);
* optionally ``grad_theta(z, theta) -> (n, p)``, its gradient in theta, per
  ``z`` (the M-step and its Monte Carlo error use finite differences without it);
* optionally ``initial_latent(rng, chains) -> (chains, latent_dim)``, where the
  first E-step starts (``rng`` a :class:`~mcmc.core.random.ChainRandom`;
  default ``Uniform(-2, 2)``, redrawn where ``log_joint`` is ``-inf``);
* optionally Gibbs blocks for the E-step: ``conditional_blocks`` (lists of latent
  coordinates, or a function returning them) and ``draw_conditional(rng, z,
  block, noise, theta)`` setting ``z[:, block]`` in place to a draw from
  ``p(z_block | z_rest, y, theta)``, with ``sweep_noise(rng)`` optional: the
  protocol of a target file's Gibbs blocks (:mod:`mcmc.core.targets.user`)
  with theta as a fifth argument.

The parameters should be unconstrained (``log_sigma``, not ``sigma``): the
M-step is an unconstrained maximisation. Every call of the user's functions
is checked as a target file's are: an exception or a result of the wrong
shape is an :class:`~mcmc.core.errors.InputError` naming the file.

:meth:`LatentModel.conditional` is the E-step's target, ``z | y, theta``,
which every sampler draws from; :meth:`LatentModel.complete` and
:meth:`LatentModel.scores` are what the M-step maximises and differentiates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.targets import LATENT_MODELS
from mcmc.core.targets.base import Target
from mcmc.core.targets.protocols import block_indices
from mcmc.core.targets.user import UserConditionalsTarget, _call_user, _callable, _import, _shaped

#: What a file must define to be a latent-variable model (how a command tells one from a target file).
REQUIRED = ("latent_dim", "parameters", "theta0", "log_joint")


@dataclasses.dataclass(frozen=True, eq=False)
class LatentModel:
    """A complete-data likelihood ``log p(y, z | theta)`` with ``z`` latent (see the module docstring).

    Attributes
    ----------
    name : the built-in's name or the file.
    latent_dim : coordinates of ``z``.
    parameters : names of theta's ``p`` coordinates.
    theta0 : float (p,), where EM starts.
    log_joint, grad_z, grad_theta, initial_latent : the file's functions (checked on every call).
    blocks, draw, noise : Gibbs blocks over ``z``, and their draw and noise functions, or empty/``None``.
    """

    name: str
    latent_dim: int
    parameters: tuple[str, ...]
    theta0: np.ndarray
    log_joint: Callable[[np.ndarray, np.ndarray], Any]
    grad_z: Callable[[np.ndarray, np.ndarray], Any] | None = None
    grad_theta: Callable[[np.ndarray, np.ndarray], Any] | None = None
    initial_latent: Callable[..., Any] | None = None
    blocks: tuple[np.ndarray, ...] = ()
    draw: Callable[..., Any] | None = None
    noise: Callable[..., Any] | None = None

    @property
    def p(self) -> int:
        """Number of parameters."""
        return len(self.parameters)

    @property
    def has_conditionals(self) -> bool:
        """Whether its Gibbs blocks cover every latent coordinate (so ``gibbs`` can run the E-step)."""
        if not self.blocks:
            return False
        covered = np.zeros(self.latent_dim, dtype=bool)
        for block in self.blocks:
            covered[block] = True
        return bool(covered.all())

    def complete(self, z: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """``log p(y, z_j | theta)`` for each row of ``z (n, latent_dim)``: float (n,)."""
        z = np.asarray(z, dtype=np.float64)
        out = _call_user(lambda zz: self.log_joint(zz, np.array(theta, dtype=np.float64)), z, self.name, "log_joint")
        return _shaped(out, z.shape[0], self.latent_dim, False, self.name, "log_joint")

    def scores(self, z: np.ndarray, theta: np.ndarray, step: np.ndarray | None = None) -> np.ndarray:
        """The gradient in theta of ``log p(y, z_j | theta)`` per row of ``z``: float (n, p).

        ``grad_theta`` when the model has it, else central differences with
        steps ``step`` (p,) (default ``1e-5 max(1, |theta|)``).
        """
        z = np.asarray(z, dtype=np.float64)
        theta = np.asarray(theta, dtype=np.float64)
        if self.grad_theta is not None:
            out = _call_user(lambda zz: self.grad_theta(zz, theta.copy()), z, self.name, "grad_theta")  # type: ignore[misc]
            if out.shape != (z.shape[0], self.p):
                raise InputError(self.name, f"grad_theta returned shape {out.shape} for {z.shape[0]} values of z; "
                                 f"expected ({z.shape[0]}, {self.p})")  # fmt: skip
            return out
        h = fd_steps(theta) if step is None else step
        out = np.empty((z.shape[0], self.p))
        for k in range(self.p):
            e = np.zeros(self.p)
            e[k] = h[k]
            out[:, k] = (self.complete(z, theta + e) - self.complete(z, theta - e)) / (2.0 * h[k])
        return out

    def conditional(self, theta: np.ndarray) -> Target:
        """The E-step's target: ``z | y, theta``, log density ``log_joint(z, theta)`` over ``z``.

        With Gibbs blocks it implements
        :class:`~mcmc.core.targets.protocols.FullConditionals`, drawing each
        block with ``draw_conditional(rng, z, block, noise, theta)``.
        """
        theta = np.array(theta, dtype=np.float64)
        log_joint, grad_z = self.log_joint, self.grad_z
        dim, source = self.latent_dim, self.name

        def log_density(z: np.ndarray) -> np.ndarray:
            out = _call_user(lambda zz: log_joint(zz, theta.copy()), z, source, "log_joint")
            return _shaped(out, np.shape(z)[0], dim, False, source, "log_joint")

        def grad_log_density(z: np.ndarray) -> np.ndarray:
            out = _call_user(lambda zz: grad_z(zz, theta.copy()), z, source, "grad_log_joint")  # type: ignore[misc]
            return _shaped(out, np.shape(z)[0], dim, True, source, "grad_log_joint")

        common: dict[str, Any] = {
            "name": f"{self.name} (z | y, theta)", "dim": dim, "log_density": log_density,
            "grad_log_density": grad_log_density if grad_z is not None else None,
            "variables": (("z", (dim,)),), "initial_point": self.initial_latent,
        }  # fmt: skip
        if not self.blocks:
            return Target(**common)
        draw = self.draw

        def draw_fn(rng: Any, z: np.ndarray, block: np.ndarray, noise: Any) -> None:
            draw(rng, z, block, noise, theta.copy())  # type: ignore[misc]

        return UserConditionalsTarget(**common, blocks=self.blocks, draw_fn=draw_fn, noise_fn=self.noise, source=source)


def fd_steps(theta: np.ndarray) -> np.ndarray:
    """Central-difference steps for the gradient in theta: ``1e-5 max(1, |theta|)`` (about eps^(1/3))."""
    return 1e-5 * np.maximum(1.0, np.abs(np.asarray(theta, dtype=np.float64)))


def load_latent_model(spec: str) -> LatentModel:
    """The built-in model ``spec`` or the one a file ``path.py`` (``path.py:name``) declares, checked.

    Raises
    ------
    UsageError
        ``spec`` is neither a built-in model nor a ``.py`` file.
    InputError
        The file cannot be imported, lacks part of the protocol, or its
        functions fail on a probe (``theta0`` and two starting latents).
    """
    if spec in LATENT_MODELS:
        obj: Any = import_module(LATENT_MODELS[spec])
        source = spec
    else:
        path_text, _, attr = spec.partition(":")
        if not path_text.endswith(".py"):
            raise UsageError(f"--mcem needs a latent-variable model: a file model.py declaring "
                             f"{', '.join(REQUIRED)}, or a built-in ({', '.join(LATENT_MODELS)}); got {spec!r}")
        path = Path(path_text)
        if not path.is_file():
            raise InputError(path_text, "no such file" if not path.exists() else "not a file")
        obj = _import(path, path_text)
        source = path_text
        if attr:
            if not hasattr(obj, attr):
                raise InputError(path_text, f"defines no {attr!r}")
            obj = getattr(obj, attr)
    model = _from_namespace(obj, source)
    _probe(model)
    return model


def _from_namespace(obj: Any, source: str) -> LatentModel:
    missing = [name for name in REQUIRED if not hasattr(obj, name)]
    if missing:
        raise InputError(source, f"a latent-variable model for --mcem defines {', '.join(REQUIRED)}; "
                         f"missing {', '.join(missing)} (docs/formats.md, 'Monte Carlo EM')")  # fmt: skip
    dim = obj.latent_dim
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise InputError(source, f"latent_dim must be a positive integer, got {dim!r}")
    try:
        parameters = tuple(str(n) for n in obj.parameters)
        theta0 = np.array(obj.theta0, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(source, "parameters must be a list of names and theta0 a list of numbers") from None
    if not parameters or len(set(parameters)) != len(parameters):
        raise InputError(source, "parameters must be a non-empty list of distinct names")
    if theta0.shape != (len(parameters),) or not np.all(np.isfinite(theta0)):
        raise InputError(source, f"theta0 must be {len(parameters)} finite numbers, one per parameter; "
                         f"got {np.asarray(obj.theta0).tolist()!r}")  # fmt: skip
    log_joint = _callable(obj, "log_joint", source, required=True)
    draw = _callable(obj, "draw_conditional", source, required=False)
    blocks = getattr(obj, "conditional_blocks", None)
    parsed: tuple[np.ndarray, ...] = ()
    if (draw is None) != (blocks is None):
        raise InputError(source, "Gibbs blocks need both conditional_blocks and "
                         "draw_conditional(rng, z, block, noise, theta)")
    if blocks is not None:
        try:
            listed = blocks() if callable(blocks) else blocks
            parsed = tuple(block_indices(b, int(dim)) for b in listed)
        except UsageError as exc:
            raise InputError(source, f"conditional_blocks: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the user's code may raise anything
            raise InputError(source, f"conditional_blocks failed: {type(exc).__name__}: {exc}") from None
        if not parsed:
            raise InputError(source, "conditional_blocks is empty")
    return LatentModel(
        name=source, latent_dim=int(dim), parameters=parameters, theta0=theta0, log_joint=log_joint,  # type: ignore[arg-type]
        grad_z=_callable(obj, "grad_log_joint", source, required=False),
        grad_theta=_callable(obj, "grad_theta", source, required=False),
        initial_latent=_callable(obj, "initial_latent", source, required=False), blocks=parsed, draw=draw,
        noise=_callable(obj, "sweep_noise", source, required=False),
    )  # fmt: skip


def _probe(model: LatentModel) -> None:
    """Call the functions once at ``theta0`` on two starting latents: shapes and values, one line if wrong."""
    from mcmc.core.random import ChainRandom

    target = model.conditional(model.theta0)
    try:
        z = target.initial(ChainRandom(0, chains=2, stream=2), 2)
    except Exception as exc:  # noqa: BLE001 - the user's code may raise anything
        raise InputError(model.name, f"initial_latent failed: {type(exc).__name__}: {exc}") from None
    lp = model.complete(z, model.theta0)
    if np.any(np.isnan(lp)) or np.any(lp == np.inf):
        raise InputError(model.name, "log_joint returned NaN or +inf at theta0")
    ok = np.isfinite(lp)
    if ok.any():
        scores = model.scores(z[ok], model.theta0)
        if not np.all(np.isfinite(scores)):
            raise InputError(model.name, "the gradient in theta of log_joint is not finite at theta0")
        if target.grad_log_density is not None:
            target.grad_log_density(z[ok])
