"""What a Bayesian neural network run is judged by: hyperparameters, ``lp`` and predictions.

The weights of a network are not identifiable (hidden units can be
permuted, and a unit's incoming and outgoing weights can flip sign
together), so their R-hat says nothing about convergence.
:func:`predictive_report` gathers instead the R-hat and ESS of the
hyperparameters, of ``lp`` and of the network's output at the prediction
points (per draw), the posterior predictive itself
(:func:`mcmc.core.targets.bnn.predict`) and, given an outcome, the test RMSE
and mean log predictive density. ``mcmc sample`` calls it for
``--predict/--predictions/--plot`` and writes the predictions file itself
(:func:`mcmc.cli.commands.sample.sample_run`): this library writes no file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mcmc.core.chains import Chains
from mcmc.core.errors import UsageError
from mcmc.diagnostics import stats

if TYPE_CHECKING:  # start-up: the target's type only; the run that is judged has loaded it
    from mcmc.core.targets.base import Target

GRID = 200  # points of the curve drawn for a 1-D input


@dataclass(frozen=True)
class Quantity:
    """R-hat and bulk/tail ESS of one quantity (for the predictions: the worst over the points)."""

    name: str
    rhat: float
    ess_bulk: float
    ess_tail: float


@dataclass(frozen=True)
class PredictiveReport:
    """See :func:`predictive_report`.

    Attributes
    ----------
    quantities
        Hyperparameters, ``lp``, then ``prediction`` (worst over the points).
    test
        The predictive at the test inputs (:class:`mcmc.core.targets.bnn.Predictive`), or ``None``.
    predictions_path
        Where the command wrote the predictions, or ``None`` (this module writes none).
    curve
        For a 1-D input when asked: the predictive on a grid over the training range, else ``None``.
    train_x, train_y
        ``(n, p)`` and ``(n,)`` training data (original scale), for a plot.
    names
        Predictor names then the outcome's.
    """

    quantities: tuple[Quantity, ...]
    test: object | None
    predictions_path: str | None
    curve: object | None
    train_x: np.ndarray
    train_y: np.ndarray
    names: tuple[str, ...]


def _quantity(name: str, x: np.ndarray) -> Quantity:
    x = x.reshape(x.shape[0], x.shape[1], -1)
    with np.errstate(all="ignore"):
        r, b, t = stats.rhat(x), stats.ess_bulk(x), stats.ess_tail(x)
    return Quantity(name, float(np.nanmax(r)), float(np.nanmin(b)), float(np.nanmin(t)))


def predictive_report(
    chains: Chains,
    target: Target,
    *,
    test: str | None = None,
    predictions: bool = False,
    curve: bool = False,
) -> PredictiveReport | None:
    """Judge a network run and predict with it; ``None`` for a target without a predictive.

    Parameters
    ----------
    chains
        The run (variables ``(chain, draw, ...)`` and ``lp``).
    target
        The target it sampled.
    test
        CSV of test inputs (same predictors as the training data, optionally the outcome last).
    predictions
        The caller will write the predictions at ``test`` to a file (which needs ``test``).
    curve
        Also compute the predictive on a grid (1-D inputs only), for a plot.

    Raises
    ------
    UsageError
        Prediction options for a target that is not a network; ``predictions``
        without ``test``; ``curve`` with more than one predictor.
    InputError
        A bad test file (naming it).
    """
    # start-up: the network target's module (a few ms) only when a sample run reports
    from mcmc.core.targets.bnn import HYPERPARAMETERS, BnnTarget, predict, read_test

    if not isinstance(target, BnnTarget):
        if test or predictions or curve:
            raise UsageError(f"--predict, --predictions and --plot apply to the bnn target, not {target.name!r}")
        return None
    if predictions and not test:
        raise UsageError("--predictions needs --predict TEST.csv (the inputs to predict at)")
    data = target.data
    if curve and data.x.shape[1] != 1:
        raise UsageError(f"--plot draws the predictive for one predictor; the data has {data.x.shape[1]}")
    posterior = chains.posterior
    quantities = [_quantity(n, np.asarray(posterior[n])) for n in HYPERPARAMETERS]
    quantities.append(_quantity("lp", np.asarray(chains.sample_stats["lp"])))
    pred = None
    if test:
        x, y = read_test(test, data)
        pred = predict(target, posterior, x, y)
        points = pred.draws_mean
    else:
        points = predict(target, posterior, data.x).draws_mean
    quantities.append(_quantity("prediction", points))
    grid = None
    if curve:
        lo, hi = data.x[:, 0].min(), data.x[:, 0].max()
        pad = 0.05 * (hi - lo)
        grid = predict(target, posterior, np.linspace(lo - pad, hi + pad, GRID)[:, None])
    return PredictiveReport(tuple(quantities), pred, None, grid, data.x, data.y, data.names)
