"""The metrics ``trainnet`` and ``trainNetwork`` record: MATLAB's built-in metric names.

Each metric is computed from the network output ``Y`` and the targets ``T`` laid out as rows:
one row per observation (and per time step or pixel), one column per channel. A mini-batch's
rows give the training value of each iteration; the rows of all validation mini-batches, put
together, give the validation value (so that F-score or AUC over the validation data is that of
the whole set, not an average of per-batch values).

Classification metrics take the predicted class as the channel of the largest score and the
true class as the channel of the largest target (single-label classification, one-hot
targets). Precision, recall and F-score are micro-averaged over the classes (MATLAB's metric
objects' default ``AverageType``); ``macro`` averaging is here for the metric objects that are
not ported yet. See docs/training.md for the sources and what is unsettled.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.stats
import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError

__all__ = ["BUILT_IN", "FunctionMetric", "Metric", "metric_of", "rows"]


def _device_rows(Y: DLArray, T: DLArray) -> tuple[torch.Tensor, torch.Tensor]:
    """``Y`` and ``T`` as float64 ``(rows, channels)`` tensors where they are, the channel last."""
    y, t = Y._data.detach(), T._data.detach()
    if "C" in Y._fmt:
        channel = Y._fmt.index("C")
        y, t = y.movedim(channel, -1), t.movedim(channel, -1)
    width = y.shape[-1] if "C" in Y._fmt else 1
    return y.reshape(-1, width).double(), t.reshape(-1, width).double()


def rows(Y: DLArray, T: DLArray) -> tuple[np.ndarray, np.ndarray]:
    """``Y`` and ``T`` as float64 ``(rows, channels)`` NumPy arrays, the channel dimension last."""
    y, t = _device_rows(Y, T)
    return y.cpu().numpy(), t.cpu().numpy()


def _confusion(y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-class true positives, false positives and false negatives of single-label predictions."""
    classes = y.shape[1]
    predicted, actual = y.argmax(1), t.argmax(1)
    tp = np.bincount(predicted[predicted == actual], minlength=classes).astype(np.float64)
    fp = np.bincount(predicted, minlength=classes) - tp
    fn = np.bincount(actual, minlength=classes) - tp
    return tp, fp, fn


def _ratio(numerator: np.ndarray | float, denominator: np.ndarray | float) -> Any:
    """``numerator / denominator``, 0 where the denominator is 0 (no predictions of a class)."""
    numerator, denominator = np.asarray(numerator, float), np.asarray(denominator, float)
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)


def _averaged(kind: str, average: str) -> Callable[[np.ndarray, np.ndarray], float]:
    def compute(y: np.ndarray, t: np.ndarray) -> float:
        tp, fp, fn = _confusion(y, t)
        if average == "micro":
            tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
        precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
        if kind == "precision":
            value = precision
        elif kind == "recall":
            value = recall
        else:
            value = _ratio(2 * precision * recall, precision + recall)
        return float(np.mean(value))

    return compute


def _accuracy(y: np.ndarray, t: np.ndarray) -> float:
    """Percent of rows whose largest score is the target class; rows without a class (all-zero
    targets: the undefined pixels of label images) are left out."""
    labelled = t.sum(1) > 0
    return float((y.argmax(1) == t.argmax(1))[labelled].mean() * 100) if labelled.any() else math.nan


def _device_accuracy(y: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """:func:`_accuracy` where the data are."""
    labelled = t.sum(1) > 0
    return (y.argmax(1) == t.argmax(1))[labelled].double().mean() * 100


def _rmse(y: np.ndarray, t: np.ndarray) -> float:
    return float(np.sqrt(np.mean((y - t) ** 2)))


def _mape(y: np.ndarray, t: np.ndarray) -> float:
    """Mean absolute percentage error, in percent: ``100 · mean(|(T − Y) / T|)``."""
    return float(np.mean(np.abs((t - y) / t)) * 100)


def _auc(y: np.ndarray, t: np.ndarray) -> float:
    """Area under the ROC curve, one class against the rest, averaged over the classes that have
    both positive and negative rows (with two classes both give the same area); NaN if none."""
    actual = t.argmax(1)
    areas = []
    for k in range(y.shape[1]):
        positive = actual == k
        count_pos, count_neg = int(positive.sum()), int((~positive).sum())
        if count_pos == 0 or count_neg == 0:
            continue
        # the Mann-Whitney statistic with tied scores sharing their average rank
        ranks = scipy.stats.rankdata(y[:, k], method="average")
        areas.append((ranks[positive].sum() - count_pos * (count_pos + 1) / 2) / (count_pos * count_neg))
    return float(np.mean(areas)) if areas else float("nan")


class Metric:
    """One metric: its name in ``Metrics``, its column name (``TrainingHistory``, the verbose
    table's ``Training<Column>``), how it is computed from rows, and whether larger is better."""

    by_rows = True  # validation: computed once over the rows of all validation mini-batches

    def __init__(
        self,
        name: str,
        column: str,
        compute: Callable[[np.ndarray, np.ndarray], float],
        larger: bool,
        on_device: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        self.name, self.column, self.compute, self.larger = name, column, compute, larger
        self.on_device = on_device  # the same value computed where the data are (no copy to the CPU)

    def __call__(self, Y: DLArray, T: DLArray) -> float:
        if self.on_device is not None:
            y, t = _device_rows(Y, T)
            return float(self.on_device(y, t))
        return self.compute(*rows(Y, T))

    def __repr__(self) -> str:
        return f"Metric({self.name!r})"

    def __reduce__(self) -> Any:
        # a built-in metric travels to data-parallel workers by name (its functions are closures)
        return (_built_in, (self.name,))


class FunctionMetric(Metric):
    """A metric function ``value = f(Y, T)`` on dlarrays (MATLAB's function-handle metric). Its
    column is the function's name; over the validation data, the mean of its per-mini-batch
    values weighted by their sizes; smaller is taken as better (a function cannot say)."""

    by_rows = False

    def __init__(self, function: Callable[..., Any]) -> None:
        name = getattr(function, "__name__", "")
        if not name.isidentifier():
            raise DLFormatError(
                "Metrics: a metric function needs a name (a def, not a lambda) to head its column"
            )
        super().__init__(name, name, _unused, False)
        self.function = function

    def __reduce__(self) -> Any:
        return (FunctionMetric, (self.function,))  # the user's function, pickled as itself

    def __call__(self, Y: DLArray, T: DLArray) -> float:
        value = self.function(Y, T)
        data = value._data if isinstance(value, DLArray) else value
        try:
            array = np.asarray(data.detach().cpu() if hasattr(data, "detach") else data, dtype=np.float64)
        except (TypeError, ValueError):
            array = np.empty(0)  # not numeric: refused below
        if array.size != 1:
            raise DLFormatError(
                f"Metrics: the metric function {self.name} must return one number; got "
                f"{_validate.describe(value)}"
            )
        return float(array.reshape(()))


def _unused(y: np.ndarray, t: np.ndarray) -> float:
    raise DLFormatError("a metric function is computed on dlarrays, not on rows")


# MATLAB's built-in metric names (docs/training.md cites where each was read)
BUILT_IN: dict[str, Metric] = {
    "accuracy": Metric(
        "accuracy",
        "Accuracy",
        _accuracy,
        True,
        _device_accuracy,
    ),
    "rmse": Metric("rmse", "RMSE", _rmse, False, lambda y, t: ((y - t) ** 2).mean().sqrt()),
    "fscore": Metric("fscore", "FScore", _averaged("fscore", "micro"), True),
    "precision": Metric("precision", "Precision", _averaged("precision", "micro"), True),
    "recall": Metric("recall", "Recall", _averaged("recall", "micro"), True),
    "auc": Metric("auc", "AUC", _auc, True),
    "mape": Metric("mape", "MAPE", _mape, False),
}


def _built_in(name: str) -> Metric:
    return BUILT_IN[name]


def metric_of(name: str, value: Any) -> Metric:
    """The metric a ``Metrics`` entry names: a built-in name or a function ``f(Y, T)``."""
    if isinstance(value, Metric):
        return value
    if isinstance(value, str):
        return BUILT_IN[_validate.choice(name, value, tuple(BUILT_IN))]
    if callable(value):
        return FunctionMetric(value)
    raise DLFormatError(
        f"{name} must be metric names ({', '.join(repr(m) for m in BUILT_IN)}) or functions "
        f"value = f(Y, T); got {_validate.describe(value)}. MATLAB's metric objects (accuracyMetric, "
        "fScoreMetric, ...) are not yet ported"
    )
