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

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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

    def to_dict(self) -> dict[str, Any]:
        """What the run is judged by and the test scores, as a JSON document's part (the predictions are a file)."""
        test = self.test
        return {
            "quantities": [dataclasses.asdict(q) for q in self.quantities],
            "test_points": None if test is None else int(test.x.shape[0]),  # type: ignore[attr-defined]
            "rmse": None if test is None else test.rmse,  # type: ignore[attr-defined]
            "mlpd": None if test is None else test.mlpd,  # type: ignore[attr-defined]
            "predictions": self.predictions_path,
        }


def _quantity(name: str, x: np.ndarray) -> Quantity:
    x = x.reshape(x.shape[0], x.shape[1], -1)
    with np.errstate(all="ignore"):
        r, b, t = stats.rhat(x), stats.ess_bulk(x), stats.ess_tail(x)
    return Quantity(name, float(np.nanmax(r)), float(np.nanmin(b)), float(np.nanmin(t)))


@dataclass(frozen=True)
class PredictiveRequest:
    """What a run will be asked to predict, checked and read before it samples (:func:`predictive_request`).

    Attributes
    ----------
    test
        The test file's name, or ``None``.
    x, y
        Its inputs ``(m, p)`` and outcome ``(m,)`` (``None`` without one), read and validated.
    predictions, curve
        The caller will write the predictions at ``x``; a curve on a grid is wanted (for a plot).
    """

    test: str | None = None
    x: np.ndarray | None = None
    y: np.ndarray | None = None
    predictions: bool = False
    curve: bool = False


def predictive_request(
    target: Target, *, test: str | None = None, predictions: bool = False, curve: bool = False
) -> PredictiveRequest | None:
    """Check the prediction options against ``target`` and read the test inputs: before any sampling.

    A run that fails on its test file after sampling would have written its
    chains file over the previous one for nothing (``docs/errors.md``: every
    input is read and validated before any work).

    Returns
    -------
    PredictiveRequest or None
        ``None`` for a target without a posterior predictive (asked for nothing).

    Raises
    ------
    UsageError
        Prediction options for a target that is not a network; ``predictions``
        without ``test``; ``curve`` with more than one predictor.
    InputError
        A bad test file (naming it): unreadable, a text cell, NaN, only a
        header, a column count that is neither the training data's
        predictors nor those and the outcome.
    """
    # start-up: the network target's module (a few ms) only when a sample run reports
    from mcmc.core.targets.bnn import BnnTarget, read_test

    if not isinstance(target, BnnTarget):
        if test or predictions or curve:
            raise UsageError(f"--predict, --predictions and --plot apply to the bnn target, not {target.name!r}")
        return None
    if predictions and not test:
        raise UsageError("--predictions needs --predict TEST.csv (the inputs to predict at)")
    if curve and target.data.x.shape[1] != 1:
        raise UsageError(f"--plot draws the predictive for one predictor; the data has {target.data.x.shape[1]}")
    x = y = None
    if test:
        x, y = read_test(test, target.data)
    return PredictiveRequest(test, x, y, predictions, curve)


def predictive_report(
    chains: Chains,
    target: Target,
    *,
    test: str | None = None,
    predictions: bool = False,
    curve: bool = False,
    request: PredictiveRequest | None = None,
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
    request
        The three above, already checked and read by :func:`predictive_request`
        before the run (they are then not given).

    Raises
    ------
    UsageError, InputError
        As :func:`predictive_request`, when no ``request`` is given.
    """
    # start-up: the network target's module (a few ms) only when a sample run reports
    from mcmc.core.targets.bnn import HYPERPARAMETERS, predict

    if request is None:
        request = predictive_request(target, test=test, predictions=predictions, curve=curve)
    if request is None:
        return None
    data = target.data  # a BnnTarget: predictive_request said so
    posterior = chains.posterior
    quantities = [_quantity(n, np.asarray(posterior[n])) for n in HYPERPARAMETERS]
    quantities.append(_quantity("lp", np.asarray(chains.sample_stats["lp"])))
    pred = None
    if request.x is not None:
        pred = predict(target, posterior, request.x, request.y)
        points = pred.draws_mean
    else:
        points = predict(target, posterior, data.x).draws_mean
    quantities.append(_quantity("prediction", points))
    grid = None
    if request.curve:
        lo, hi = data.x[:, 0].min(), data.x[:, 0].max()
        pad = 0.05 * (hi - lo)
        grid = predict(target, posterior, np.linspace(lo - pad, hi + pad, GRID)[:, None])
    return PredictiveReport(tuple(quantities), pred, None, grid, data.x, data.y, data.names)
