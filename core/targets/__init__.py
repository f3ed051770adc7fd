"""Targets: log densities the samplers draw from, built in or loaded from a user file.

:func:`get_target` resolves a name (``gaussian``, ``banana``, ...), a user
file (``model.py`` or ``model.py:name``) or a CSV file to a
:class:`~mcmc.core.targets.base.Target`. A CSV file is one of three
(:func:`~mcmc.core.targets.finite.csv_kind` tells them apart by the first
line): a transition matrix (``P.csv``, :mod:`~mcmc.core.targets.markov_chain`),
the weights of a law on finitely many states (``weights.csv``,
:mod:`~mcmc.core.targets.finite`) or the edges of a Potts model on a graph
(``graph.csv``, :mod:`~mcmc.core.targets.graph`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from importlib import import_module
from typing import Any, NamedTuple

from mcmc.core.errors import UsageError


class Entry(NamedTuple):
    """A built-in target as the registry knows it.

    ``options`` are the keywords its factory takes (held to the factory's
    signature by ``tests/core/test_targets.py``): ``--dim``, ``--rho``,
    ``--scales``, ``--data`` or ``-T KEY=VALUE``; ``example`` is a
    ``-T`` example for ``mcmc sample --help``. Help lists are read from here,
    so a new target shows up in them without an edit to ``cli/``.
    """

    module: str
    factory: str
    options: tuple[str, ...] = ()
    example: str = ""


_BUILTIN, _MODELS = "mcmc.core.targets.builtin", "mcmc.core.targets.models"
#: Name -> entry; factories take the target's options as keywords.
TARGETS: dict[str, Entry] = {
    "gaussian": Entry(_BUILTIN, "gaussian", ("dim", "rho", "scales")),
    "bimodal": Entry(_BUILTIN, "bimodal", ("dim",)),
    "banana": Entry(_BUILTIN, "banana", ("dim", "b"), "b=0.1"),
    "funnel": Entry(_BUILTIN, "funnel", ("dim",)),
    "gamma": Entry(_BUILTIN, "gamma", ("dim", "shape", "rate"), "shape=0.5 rate=2"),
    "logistic": Entry(_MODELS, "logistic", ("data", "prior_sd"), "prior_sd=1"),
    "beta-bernoulli": Entry(_MODELS, "beta_bernoulli", ("data", "successes", "trials", "a", "b"),
                            "successes=3 trials=10 a=1 b=1"),
    "dirichlet": Entry("mcmc.core.targets.dirichlet", "dirichlet", ("counts", "eta"), "counts=4,1,3,1,1 eta=1"),
    "eight-schools": Entry(_MODELS, "eight_schools"),
    "ising": Entry("mcmc.core.targets.ising", "ising", ("size", "beta"), "size=32 beta=0.3"),
    "potts": Entry("mcmc.core.targets.potts", "potts", ("size", "q", "beta"), "size=32 q=4 beta=1.1"),
    "bnn": Entry("mcmc.core.targets.bnn", "bnn", ("data", "hidden"), "hidden=16"),
}  # fmt: skip


def targets_taking(option: str) -> list[str]:
    """The built-in targets whose factory takes ``option`` (``"data"``, ``"dim"``), for help."""
    return [name for name, entry in TARGETS.items() if option in entry.options]


def option_examples() -> str:
    """``banana b=0.1, gamma shape=0.5 rate=2, ...``: a ``-T`` example of every target that has one, for help."""
    return ", ".join(f"{name} {entry.example}" for name, entry in TARGETS.items() if entry.example)


#: Built-in latent-variable models, run by Monte Carlo EM (``--mcem``), not sampled: name -> module
#: (:mod:`mcmc.core.targets.latent` reads it; kept here, NumPy-free, so a wrong use is told apart from a typo).
LATENT_MODELS: dict[str, str] = {"censored-normal": "mcmc.core.targets.censored_normal"}


#: Targets with a sampler of their own, the one that uses their structure: bnn Gibbs for the
#: hyperparameters and HMC for the weights, the spin lattices cluster flips (no gradient; single-site
#: Gibbs slows down near the critical point). ``mcmc sample`` uses it when no ``--sampler`` is given.
TARGET_SAMPLERS: dict[str, str] = {"bnn": "hmc-gibbs", "ising": "swendsen-wang", "potts": "swendsen-wang"}
#: The default of every other target: HMC when it has a gradient, else slice sampling (density only).
GRADIENT_SAMPLER, DENSITY_SAMPLER = "hmc", "slice"
#: The sampler of each kind of CSV target (:func:`csv_kind`).
CSV_SAMPLERS: dict[str, str] = {"transition": "markov", "weights": "mh", "graph": "gibbs"}
#: The options each kind of CSV target takes.
CSV_OPTIONS: dict[str, tuple[str, ...]] = {
    "transition": ("start", "init", "steps"), "weights": ("start",), "graph": ("q", "beta"),
}
#: The targets that are files of another kind, in the words of the help: a network, and each kind of CSV.
FILE_TARGETS: dict[str, str] = {
    "network": "a network NET.bif", "transition": "a transition matrix P.csv", "weights": "weights.csv",
    "graph": "graph.csv",
}


def default_sampler(name: str, target: Any = None) -> str | None:
    """The sampler ``mcmc sample`` uses on target ``name`` when none is given: one that works for it.

    The target's own (:data:`TARGET_SAMPLERS`; gibbs for a network file, a
    CSV file its kind's, :data:`CSV_SAMPLERS`), else :data:`GRADIENT_SAMPLER`
    when the target has a gradient, else :data:`DENSITY_SAMPLER`. ``target`` is the
    built target, which decides for a user file; without it a user file gives
    ``None`` (its file decides: a gradient or not), and a built-in its
    sampler (every built-in without one of its own has a gradient).
    """
    if is_network_target(name):
        return "gibbs"
    if is_transition_matrix(name):
        return CSV_SAMPLERS[csv_kind(name)]
    if name in TARGET_SAMPLERS:
        return TARGET_SAMPLERS[name]
    if target is not None:
        return GRADIENT_SAMPLER if target.has_grad else DENSITY_SAMPLER
    return None if is_user_target(name) else GRADIENT_SAMPLER


def default_sampler_help() -> str:
    """How the default sampler is chosen, in words for ``--sampler``'s help (read from the tables above)."""
    own: dict[str, list[str]] = {}
    for target, sampler in TARGET_SAMPLERS.items():
        own.setdefault(sampler, []).append(target)
    for kind, sampler in {"network": "gibbs", **CSV_SAMPLERS}.items():
        own.setdefault(sampler, []).append(FILE_TARGETS[kind])
    words = [f"{s} for {' and '.join(ts) if len(ts) < 3 else ', '.join(ts[:-1]) + ' and ' + ts[-1]}"
             for s, ts in own.items()]  # fmt: skip
    return (
        f"the target's own ({', '.join(words)}), else {GRADIENT_SAMPLER} when the target has a gradient "
        f"(grad_log_density), else {DENSITY_SAMPLER}"
    )


#: A target name ending so is a Bayesian network file (BIF), sampled by :mod:`mcmc.core.networks.driver`.
NETWORK_SUFFIX = ".bif"


def is_network_target(name: str) -> bool:
    """True for a Bayesian network file ``NET.bif`` (any case), which is not a density target."""
    return name.lower().endswith(NETWORK_SUFFIX)


def is_transition_matrix(name: str) -> bool:
    """True for ``path.csv``: a CSV target, a transition matrix or one of its siblings (:func:`csv_kind`)."""
    return name.lower().endswith(".csv")


def csv_kind(name: str) -> str:
    """``"transition"``, ``"weights"`` or ``"graph"``: which CSV target ``name`` is (read from its first line)."""
    from mcmc.core.targets.finite import csv_kind as kind  # reads the file: only for a CSV target

    return kind(name)


def is_user_target(name: str) -> bool:
    """True for ``path.py`` or ``path.py:attr`` (a user file), false for registry names and data files."""
    if is_transition_matrix(name) or is_network_target(name):
        return False
    return name.split(":", 1)[0].endswith(".py") or "/" in name


def get_target(name: str, *, user_source: str | None = None, **options: Any) -> Any:
    """Build the target ``name`` with ``options`` (only those it accepts).

    Options set to ``None`` count as not given. A user file takes no options;
    ``user_source`` is its text when it was read elsewhere (a Dask worker runs
    a file shipped from the client, :mod:`mcmc.core.scaleout`).
    a transition matrix ``P.csv`` takes ``start`` (a state name or index).

    Raises
    ------
    UsageError
        Unknown target name, or an option the target does not take.
    InputError
        A user file that cannot be loaded or does not define a usable target,
        or a transition matrix file that is not row-stochastic.
    """
    given = {k: v for k, v in options.items() if v is not None}
    if is_transition_matrix(name):
        kind = csv_kind(name)
        extra = sorted(set(given) - set(CSV_OPTIONS[kind]))
        if extra:
            what = {"transition": "a transition matrix", "weights": "a weights file", "graph": "a graph file"}[kind]
            raise UsageError(f"option(s) {', '.join(_flag(k) for k in extra)} do not apply to {what}")
        if kind == "weights":
            from mcmc.core.targets.finite import finite_target

            return finite_target(name, **given)
        if kind == "graph":
            from mcmc.core.targets.graph import graph_potts

            return graph_potts(name, **given)
        from mcmc.core.targets.markov_chain import markov_chain

        return markov_chain(name, **given)
    if is_user_target(name):
        from mcmc.core.targets.user import load_user_target

        if given:
            raise UsageError(f"option(s) {', '.join(_flag(k) for k in given)} do not apply to a user target file")
        return load_user_target(name, user_source)
    if name not in TARGETS:
        if name in LATENT_MODELS:
            raise UsageError(f"{name} is a latent-variable model: find its maximum-likelihood parameters with --mcem")
        raise UsageError(f"unknown target {name!r}; choose from {', '.join(TARGETS)} or give a file model.py[:name]")
    module, attr = TARGETS[name].module, TARGETS[name].factory
    factory: Callable[..., Any] = getattr(import_module(module), attr)
    parameters = inspect.signature(factory).parameters
    extra = sorted(set(given) - set(parameters))
    if extra:
        raise UsageError(f"option(s) {', '.join(_flag(k) for k in extra)} do not apply to target {name!r}")
    for key, value in given.items():
        default = parameters[key].default
        # an option whose default is a number takes a number (text from --target-option KEY=VALUE did not parse)
        if isinstance(default, (int, float)) and not isinstance(default, bool) and isinstance(value, str):
            raise UsageError(f"{_flag(key)} of target {name!r} must be a number, got {value!r}")
    return factory(**given)


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-") if option in ("dim", "rho", "scales", "data") else option
