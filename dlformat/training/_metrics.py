"""The ``Metrics`` of ``trainnet``: MATLAB's metric objects, names, functions and custom metrics.

- the metric objects (``accuracyMetric``, ``fScoreMetric``, ``precisionMetric``,
  ``recallMetric``, ``aucMetric``, ``rmseMetric``, ``mapeMetric``, ``rSquaredMetric``), each
  property declared once on its class;
- the built-in names (``"accuracy"``, ``"fscore"``, ...): the same objects with their defaults;
- metric functions ``value = f(Y, T)`` (:class:`FunctionMetric`);
- custom metric objects: subclasses of :class:`Metric`, MATLAB's ``deep.Metric``, with MATLAB's
  ``initialize`` (optional), ``reset``, ``update``, ``aggregate`` and ``evaluate`` methods.

``trainnet`` drives every kind the same way, through :class:`Tracked` (docs/training.md cites the
sources and lists what is dlformat's reading):

- it works on copies of the given object, one for training and one for validation, so the given
  object is left as it was (MATLAB's metrics are values: ``metric = update(metric, Y, T)``);
- ``initialize(Y, T)`` once, with the first mini-batch a copy sees;
- every iteration: ``reset()``, ``update(Y, T)`` with the iteration's mini-batch, ``evaluate()``;
  in data-parallel training each worker updates its copy with its share of the mini-batch and
  the copies are combined with ``aggregate`` before ``evaluate``;
- every validation: ``reset()``, ``update(Y, T)`` for each validation mini-batch, ``evaluate()``,
  so that a validation value is that of the whole validation set (an F-score or AUC of all its
  observations, not a mean of per-batch values).

A method may change the object and return nothing, or return the updated object as MATLAB's do.
The built-in objects keep sufficient statistics (per-class counts, sums; the AUC its rows) as
float64 tensors where the data are. Each observation (each time step, each pixel) counts once:
outputs and targets are laid out as rows, one per observation, one column per channel.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.stats
import torch

from .. import _options, _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from ._data import as_arguments

__all__ = [
    "AUCMetric",
    "AccuracyMetric",
    "FScoreMetric",
    "FunctionMetric",
    "MAPEMetric",
    "Metric",
    "PrecisionMetric",
    "RMSEMetric",
    "RSquaredMetric",
    "RecallMetric",
    "Tracked",
    "accuracyMetric",
    "aucMetric",
    "built_in",
    "entries",
    "fScoreMetric",
    "mapeMetric",
    "metric_of",
    "precisionMetric",
    "rSquaredMetric",
    "recallMetric",
    "rmseMetric",
    "tracked",
]

# columns trainnet's histories already have: a metric of that name would hide one of them
_RESERVED = ("Iteration", "Loss", "Epoch", "LearnRate", "GradientNorm", "StepNorm")


class Metric:
    """MATLAB's ``deep.Metric``: the base class of custom metric objects.

    A subclass sets ``Name`` (its column in ``TrainingHistory`` and the verbose table),
    optionally ``NetworkOutput`` (the output it sees, one of the network's ``OutputNames``; ``None``,
    MATLAB's ``[]``, for all of them) and ``Maximize`` (``True`` if larger is better, ``False`` if
    smaller is; needed for ``ObjectiveMetricName``), and defines ``reset``, ``update(Y, T)``,
    ``evaluate`` and, for data-parallel training, ``aggregate(other)``; ``initialize(Y, T)`` is
    optional. With several network outputs and no ``NetworkOutput``, ``update`` and
    ``initialize`` take ``(Y1, ..., Yn, T1, ..., Tn)``. ``evaluate`` returns one number.

    Examples:
        >>> class MeanError(dlf.Metric):
        ...     def __init__(self, Name="MeanError"):
        ...         self.Name, self.Maximize = Name, False
        ...     def reset(self):
        ...         self.total, self.count = 0.0, 0
        ...     def update(self, Y, T):
        ...         self.total += float(dlf.extractdata(abs(Y - T)).sum())
        ...         self.count += dlf.extractdata(T).numel()
        ...     def aggregate(self, other):
        ...         self.total, self.count = self.total + other.total, self.count + other.count
        ...     def evaluate(self):
        ...         return self.total / self.count
        >>> MeanError().Name
        'MeanError'
    """

    Name: str = ""
    NetworkOutput: str | None = None
    Maximize: bool | None = None

    def initialize(self, *data: DLArray) -> Any:
        """Prepare for the first mini-batch ``data`` (optional; does nothing unless overridden)."""
        return self

    def reset(self) -> Any:
        """Clear what ``update`` accumulated: called before each iteration and each validation."""
        raise _missing(self, "reset")

    def update(self, *data: DLArray) -> Any:
        """Accumulate one mini-batch: the outputs, then the targets."""
        raise _missing(self, "update")

    def aggregate(self, other: Metric) -> Any:
        """Combine another worker's copy into this one (data-parallel training)."""
        raise _missing(self, "aggregate")

    def evaluate(self) -> Any:
        """The metric's value from what was accumulated."""
        raise _missing(self, "evaluate")

    def _shown(self) -> list[tuple[str, Any]]:
        """``(property, value)`` pairs, in MATLAB's display order."""
        own = [(k, v) for k, v in vars(self).items() if not k.startswith("_") and k not in _FIRST]
        return [(name, getattr(self, name)) for name in _FIRST] + own

    def __repr__(self) -> str:
        pairs = self._shown()
        width = max(len(name) for name, _ in pairs)
        lines = [f"  {type(self).__name__} with properties:", ""]
        return "\n".join(lines + [f"  {name:>{width + 2}}: {_display(value)}" for name, value in pairs])


_FIRST = ("Name", "NetworkOutput", "Maximize")


def _missing(metric: Metric, method: str) -> DLFormatError:
    return DLFormatError(
        f"the metric {type(metric).__name__} ({metric.Name!r}) has no {method} method; a custom metric "
        "defines reset, update, evaluate (and aggregate for data-parallel training), as MATLAB's deep.Metric"
    )


def _display(value: Any) -> str:
    if value is None:
        return "[]"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value) if not isinstance(value, torch.Tensor) else f"[{tuple(value.shape)} tensor]"


class _Option:
    """One property of a built-in metric object, declared once: its check and default."""

    def __init__(self, check: Callable[[str, Any], Any], default: Any, doc: str) -> None:
        self.check, self.default, self.__doc__ = check, default, doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, metric: Any, owner: type | None = None) -> Any:
        return self if metric is None else metric._values[self.name]

    def __set__(self, metric: Any, value: Any) -> None:
        values = metric._values
        before = dict(values)
        values[self.name] = self.check(f"{type(metric).__name__}: {self.name}", value)
        if len(values) == len(before):  # set after construction: the combination is checked again
            try:
                metric._check()
            except DLFormatError:
                metric._values = before  # the refused value is not kept
                raise


class _NotPorted:
    """An option MATLAB's object has whose values could not be read: giving it is an error."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


def _network_output(name: str, value: Any) -> str | None:
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return None  # MATLAB's []: the metric sees every output (a built-in: the only one)
    return _validate.text(name, value)


def _name(name: str, value: Any) -> str:
    text = _validate.text(name, value)
    if not text:
        raise DLFormatError(f"{name} must be a nonempty name: it heads the metric's column")
    return text


def _choice(allowed: tuple[str, ...]) -> Callable[[str, Any], str]:
    return lambda name, value: _validate.choice(name, value, allowed)


AVERAGE_TYPES = ("micro", "macro", "weighted")
CLASSIFICATION_MODES = ("single-label", "multilabel")


class _BuiltIn(Metric):
    """A built-in metric object: its properties declared once as class attributes."""

    function: ClassVar[str]  # MATLAB's constructor name
    maximize: ClassVar[bool]
    _declared: ClassVar[dict[str, _Option | _NotPorted]]
    _statistics: Any = None  # what update accumulated: tensors summed, or a list of row blocks

    Name = _Option(_name, "", "the metric's name: its column in TrainingHistory and the verbose table")
    NetworkOutput = _Option(
        _network_output, None, "the network output the metric sees, one of OutputNames (None: the only one)"
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared: dict[str, _Option | _NotPorted] = {}
        for klass in reversed(cls.__mro__):
            declared.update((k, v) for k, v in vars(klass).items() if isinstance(v, (_Option, _NotPorted)))
        cls._declared = declared

    def __init__(self, *args: Any, **options: Any) -> None:
        signature = inspect.Signature(
            [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in self._declared]
        )
        args, options = _options.normalize(self.function, _options.Options(signature), args, options)
        if args:
            raise DLFormatError(
                f"{self.function} takes Name=Value options ({', '.join(self._declared)}); got "
                f"{len(args)} positional argument(s)"
            )
        self._values: dict[str, Any] = {}
        for name, declaration in self._declared.items():
            if isinstance(declaration, _NotPorted):
                if name in options:
                    raise DLFormatError(f"{self.function}: {name} is not supported: {declaration.reason}")
                continue
            setattr(self, name, options.get(name, declaration.default))
        self._check()
        self.reset()

    def _check(self) -> None:
        """Combinations of properties this port refuses (each class says why)."""

    @property
    def Maximize(self) -> bool:  # type: ignore[override]
        """Whether a larger value is better (``ObjectiveMetricName``); fixed for a built-in metric."""
        return self.maximize

    def _shown(self) -> list[tuple[str, Any]]:
        names = [name for name, d in self._declared.items() if isinstance(d, _Option)]
        return [(name, getattr(self, name)) for name in names] + [("Maximize", self.Maximize)]

    def aggregate(self, other: Metric) -> None:
        """Add another worker's statistics to this one's."""
        if not isinstance(other, type(self)):
            raise DLFormatError(f"{type(self).__name__}.aggregate: got {_validate.describe(other)}")
        self._statistics = self._combined(self._statistics, other._statistics)

    def reset(self) -> None:
        self._statistics = None

    def update(self, *data: DLArray) -> None:
        if len(data) != 2:
            raise DLFormatError(
                f"{self.function} ({self.Name!r}) compares one network output with its targets; the "
                f"network has {len(data) // 2} outputs: set NetworkOutput to one of them"
            )
        y, t = _device_rows(*data)
        self._statistics = self._combined(self._statistics, self._batch(y, t))

    def _batch(self, y: torch.Tensor, t: torch.Tensor) -> Any:
        """One mini-batch's statistics (rows ``y``, ``t``), combined over mini-batches and workers."""
        raise NotImplementedError

    def _combined(self, total: Any, part: Any) -> Any:
        """Two sets of statistics as one: summed (tensors) or put together (lists of rows)."""
        if total is None or part is None:
            return part if total is None else total
        return _added(total, part)

    def evaluate(self) -> float:
        if self._statistics is None:
            return math.nan
        return self._value(self._statistics)

    def _value(self, statistics: Any) -> float:
        raise NotImplementedError


def _added(total: Any, part: Any) -> Any:
    """Statistics summed (tensors) or put together (lists of rows)."""
    if total is None:
        return part
    if isinstance(total, list):
        return total + [p.to(total[0].device) for p in part]
    return tuple(a + b.to(a.device) for a, b in zip(total, part, strict=True))


def _device_rows(Y: DLArray, T: DLArray) -> tuple[torch.Tensor, torch.Tensor]:
    """``Y`` and ``T`` as float64 ``(rows, channels)`` tensors where they are, the channel last."""
    for what, value in (("Y", Y), ("T", T)):
        if not isinstance(value, DLArray):
            raise DLFormatError(f"a metric compares dlarrays; {what} is {_validate.describe(value)}")
    y, t = Y._data.detach(), T._data.detach()
    if "C" in Y._fmt:
        channel = Y._fmt.index("C")
        y, t = y.movedim(channel, -1), t.movedim(channel, -1)
    width = y.shape[-1] if "C" in Y._fmt else 1
    return y.reshape(-1, width).double(), t.reshape(-1, width).double()


class _Classification(_BuiltIn):
    """Counts per class (true positives, false positives, false negatives) of the predictions."""

    AverageType = _Option(
        _choice(AVERAGE_TYPES), "micro", 'how the classes are averaged: "micro", "macro" or "weighted"'
    )
    ClassificationMode = _Option(
        _choice(CLASSIFICATION_MODES),
        "single-label",
        '"single-label" (the class of the largest score) or "multilabel" (each score against Threshold)',
    )
    Threshold = _Option(_validate.unit_interval, 0.5, "multilabel: a score at or above it predicts the label")
    kind: ClassVar[str]

    def _batch(self, y: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if self.ClassificationMode == "multilabel":
            predicted, actual = y >= self.Threshold, t > 0.5
            pairs = ((predicted, actual), (predicted, ~actual), (~predicted, actual))  # TP, FP, FN
            return tuple((a & b).sum(0).double() for a, b in pairs)
        labelled = t.sum(1) > 0  # all-zero targets (a label image's undefined pixels) are no observation
        predicted, actual = y.argmax(1)[labelled], t.argmax(1)[labelled]
        classes = y.shape[1]
        tp = torch.bincount(predicted[predicted == actual], minlength=classes).double()
        fp = torch.bincount(predicted, minlength=classes).double() - tp
        fn = torch.bincount(actual, minlength=classes).double() - tp
        return tp, fp, fn

    def _value(self, statistics: tuple[torch.Tensor, ...]) -> float:
        return averaged(self.kind, self.AverageType, *(s.cpu().numpy() for s in statistics))


def _ratio(numerator: Any, denominator: Any) -> Any:
    """``numerator / denominator``, 0 where the denominator is 0 (no predictions of a class)."""
    numerator, denominator = np.asarray(numerator, float), np.asarray(denominator, float)
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)


def averaged(kind: str, average: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> float:
    """Precision, recall or F1 from per-class counts: ``"micro"`` from the counts summed over the
    classes, ``"macro"`` the mean of the per-class values, ``"weighted"`` their mean weighted by
    each class's true observations (``TP + FN``)."""
    if average == "micro":
        tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    value = {"precision": precision, "recall": recall}.get(kind)
    if value is None:
        value = _ratio(2 * precision * recall, precision + recall)
    if average == "weighted":
        support = tp + fn
        return float(_ratio((value * support).sum(), support.sum()))
    return float(np.mean(value))


class AccuracyMetric(_Classification):
    """MATLAB's ``AccuracyMetric`` (``accuracyMetric``): the percent of observations whose
    predicted class (largest score) is the true class; rows with all-zero targets left out.

    Examples:
        >>> dlf.accuracyMetric().Name
        'Accuracy'
    """

    function, maximize, kind = "accuracyMetric", True, "accuracy"
    Name = _Option(_name, "Accuracy", "the metric's name: its column")
    Threshold = _NotPorted("accuracy's multilabel mode is not ported")

    def _check(self) -> None:
        if self.AverageType != "micro" or self.ClassificationMode != "single-label":
            raise DLFormatError(
                f'{self.function}: only AverageType "micro" with ClassificationMode "single-label" is '
                "ported; how MATLAB averages accuracy over classes or labels could not be read "
                f'(got AverageType "{self.AverageType}", ClassificationMode "{self.ClassificationMode}")'
            )

    def _value(self, statistics: tuple[torch.Tensor, ...]) -> float:
        tp, _, fn = statistics
        labelled = float((tp + fn).sum())
        return 100 * float(tp.sum()) / labelled if labelled else math.nan


class FScoreMetric(_Classification):
    """MATLAB's ``FScoreMetric`` (``fScoreMetric``): F1, ``2·P·R / (P + R)``, averaged by
    ``AverageType``. MATLAB's has no β: an F-β score is a custom metric (MathWorks' "Define
    Custom F-Beta Score Metric Object").

    Examples:
        >>> dlf.fScoreMetric(AverageType="macro").AverageType
        'macro'
    """

    function, maximize, kind = "fScoreMetric", True, "fscore"
    Name = _Option(_name, "FScore", "the metric's name: its column")
    Beta = _NotPorted(
        "MATLAB's fScoreMetric is F1; define a custom metric (a dlf.Metric subclass) for F-beta"
    )


class PrecisionMetric(_Classification):
    """MATLAB's ``PrecisionMetric`` (``precisionMetric``): ``TP / (TP + FP)``, averaged by
    ``AverageType``.

    Examples:
        >>> dlf.precisionMetric().Name
        'Precision'
    """

    function, maximize, kind = "precisionMetric", True, "precision"
    Name = _Option(_name, "Precision", "the metric's name: its column")


class RecallMetric(_Classification):
    """MATLAB's ``RecallMetric`` (``recallMetric``): ``TP / (TP + FN)``, averaged by
    ``AverageType``.

    Examples:
        >>> dlf.recallMetric(ClassificationMode="multilabel").ClassificationMode
        'multilabel'
    """

    function, maximize, kind = "recallMetric", True, "recall"
    Name = _Option(_name, "Recall", "the metric's name: its column")


class AUCMetric(_BuiltIn):
    """MATLAB's ``AUCMetric`` (``aucMetric``): the area under the ROC curve of each class against
    the rest (single-label classification), tied scores counting half. ``"macro"``: the mean over
    the classes with both positive and negative observations; ``"weighted"``: that mean weighted
    by each class's observations; ``"micro"``: one curve of every (score, class) pair.

    Examples:
        >>> dlf.aucMetric().AverageType
        'macro'
    """

    function, maximize = "aucMetric", True
    Name = _Option(_name, "AUC", "the metric's name: its column")
    AverageType = _Option(
        _choice(AVERAGE_TYPES), "macro", 'how the classes are averaged: "micro", "macro" or "weighted"'
    )

    def _batch(self, y: torch.Tensor, t: torch.Tensor) -> list[torch.Tensor]:
        labelled = t.sum(1) > 0
        actual = torch.nn.functional.one_hot(t.argmax(1), y.shape[1]).double()
        return [torch.cat([y, actual], 1)[labelled]]  # the AUC needs every row: they are kept

    def _value(self, statistics: list[torch.Tensor]) -> float:
        rows = torch.cat(statistics).cpu().numpy()
        classes = rows.shape[1] // 2
        return auc(rows[:, :classes], rows[:, classes:], self.AverageType)


def _area(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """The Mann-Whitney statistic: tied scores share their average rank; ``None`` without both
    positive and negative rows."""
    count_pos = int(positive.sum())
    count_neg = positive.size - count_pos
    if count_pos == 0 or count_neg == 0:
        return None
    ranks = scipy.stats.rankdata(scores, method="average")
    return float((ranks[positive].sum() - count_pos * (count_pos + 1) / 2) / (count_pos * count_neg))


def auc(y: np.ndarray, actual: np.ndarray, average: str) -> float:
    """Area under the ROC curve of scores ``y`` against one-hot ``actual`` rows; NaN if none."""
    positive = actual > 0.5
    if average == "micro":
        area = _area(y.reshape(-1), positive.reshape(-1))
        return math.nan if area is None else area
    areas, supports = [], []
    for k in range(y.shape[1]):
        area = _area(y[:, k], positive[:, k])
        if area is not None:
            areas.append(area)
            supports.append(positive[:, k].sum())
    if not areas:
        return math.nan
    return float(np.average(areas, weights=supports if average == "weighted" else None))


def _count(rows: torch.Tensor) -> torch.Tensor:
    """The number of elements, as a statistic summed with the others where they are."""
    return torch.tensor(float(rows.numel()), dtype=torch.float64, device=rows.device)


_NORMALIZATION = "the values of NormalizationFactor could not be read from MathWorks' page"


class RMSEMetric(_BuiltIn):
    """MATLAB's ``RMSEMetric`` (``rmseMetric``): ``sqrt(mean((Y − T)²))`` over all elements.

    Examples:
        >>> dlf.rmseMetric(Name="error").Name
        'error'
    """

    function, maximize = "rmseMetric", False
    Name = _Option(_name, "RMSE", "the metric's name: its column")
    NormalizationFactor = _NotPorted(_NORMALIZATION)

    def _batch(self, y: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (y - t).square().sum(), _count(y)

    def _value(self, statistics: tuple[torch.Tensor, ...]) -> float:
        total, count = statistics
        return float((total / count).sqrt())


class MAPEMetric(_BuiltIn):
    """MATLAB's ``MAPEMetric`` (``mapeMetric``): ``100 · mean(|(T − Y) / T|)`` over all elements,
    in percent.

    Examples:
        >>> dlf.mapeMetric().Maximize
        False
    """

    function, maximize = "mapeMetric", False
    Name = _Option(_name, "MAPE", "the metric's name: its column")
    NormalizationFactor = _NotPorted(_NORMALIZATION)

    def _batch(self, y: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (t - y).div(t).abs().sum(), _count(y)

    def _value(self, statistics: tuple[torch.Tensor, ...]) -> float:
        total, count = statistics
        return 100 * float(total / count)


class RSquaredMetric(_BuiltIn):
    """MATLAB's ``RSquaredMetric`` (``rSquaredMetric``): the coefficient of determination
    ``1 − Σ(T − Y)² / Σ(T − mean(T))²`` of a network with one response channel.

    Examples:
        >>> dlf.rSquaredMetric().Maximize
        True
    """

    function, maximize = "rSquaredMetric", True
    Name = _Option(_name, "RSquared", "the metric's name: its column")

    def _batch(self, y: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if y.shape[1] != 1:
            raise DLFormatError(
                f"{self.function}: the output has {y.shape[1]} channels; how MATLAB combines the R² of "
                "several responses could not be read, so only one response channel is supported"
            )
        count = _count(t)
        mean = t.sum() / count
        return (t - y).square().sum(), count, mean, (t - mean).square().sum()

    def _combined(self, total: Any, part: Any) -> Any:
        # the targets' count, mean and sum of squared deviations, joined as Chan et al.'s pairwise
        # update does: no Σt² − (Σt)²/n, which cancels catastrophically for responses far from 0
        if total is None or part is None:
            return part if total is None else total
        residual, count, mean, spread = total
        more_residual, more_count, more_mean, more_spread = (value.to(residual.device) for value in part)
        joined = count + more_count
        delta = more_mean - mean
        return (
            residual + more_residual,
            joined,
            mean + delta * more_count / joined,
            spread + more_spread + delta * delta * count * more_count / joined,
        )

    def _value(self, statistics: tuple[torch.Tensor, ...]) -> float:
        residual, _, _, spread = (float(s) for s in statistics)
        return 1 - residual / spread if spread else math.nan


def _constructor(cls: type[_BuiltIn]) -> Callable[..., _BuiltIn]:
    def construct(*args: Any, **options: Any) -> _BuiltIn:
        return cls(*args, **options)

    construct.__name__ = construct.__qualname__ = cls.function
    construct.__doc__ = (
        f"MATLAB's ``{cls.function}``: a :class:`{cls.__name__}` from Name=Value options (or "
        f"'Name', value pairs), matched case-insensitively: {', '.join(cls._declared)}."
    )
    return construct


accuracyMetric = _constructor(AccuracyMetric)
fScoreMetric = _constructor(FScoreMetric)
precisionMetric = _constructor(PrecisionMetric)
recallMetric = _constructor(RecallMetric)
aucMetric = _constructor(AUCMetric)
rmseMetric = _constructor(RMSEMetric)
mapeMetric = _constructor(MAPEMetric)
rSquaredMetric = _constructor(RSquaredMetric)

# MATLAB's metric names: each the object of that kind with its defaults
NAMES: dict[str, type[_BuiltIn]] = {
    "accuracy": AccuracyMetric,
    "rmse": RMSEMetric,
    "fscore": FScoreMetric,
    "precision": PrecisionMetric,
    "recall": RecallMetric,
    "auc": AUCMetric,
    "mape": MAPEMetric,
    "rsquared": RSquaredMetric,
}


def built_in(name: str) -> _BuiltIn:
    """The object a metric name stands for (``"fscore"``: ``fScoreMetric()``)."""
    return NAMES[name]()


class FunctionMetric(Metric):
    """A metric function ``value = f(Y, T)`` (MATLAB's function-handle metric), called with the
    output and target dlarrays (several outputs: ``f(Y1, ..., Yn, T1, ..., Tn)``). Its column is
    the function's name; over the validation data, the mean of its per-mini-batch values weighted
    by their numbers of observations. It cannot be the ``ObjectiveMetricName``: MATLAB asks for a
    custom metric object for that."""

    def __init__(self, function: Callable[..., Any]) -> None:
        name = getattr(function, "__name__", "")
        if not name.isidentifier():
            raise DLFormatError(
                "Metrics: a metric function needs a name (a def, not a lambda) to head its column"
            )
        self.Name, self.function = name, function
        self.reset()

    def reset(self) -> None:
        self._total, self._count = 0.0, 0

    def update(self, *data: DLArray) -> None:
        value = number(f"the metric function {self.Name}", self.function(*data))
        count = _observations(data[-1])
        self._total, self._count = self._total + value * count, self._count + count

    def aggregate(self, other: Metric) -> None:
        assert isinstance(other, FunctionMetric)
        self._total, self._count = self._total + other._total, self._count + other._count

    def evaluate(self) -> float:
        return self._total / self._count if self._count else math.nan


def _observations(value: Any) -> int:
    if isinstance(value, DLArray) and "B" in value._fmt:
        return int(value._data.shape[value._fmt.index("B")])
    return 1


def number(what: str, value: Any) -> float:
    """A metric value as a float; anything but one number is an error naming ``what``."""
    data = value._data if isinstance(value, DLArray) else value
    try:
        array = np.asarray(data.detach().cpu() if hasattr(data, "detach") else data, dtype=np.float64)
    except (TypeError, ValueError):
        array = np.empty(0)  # not numeric: refused below
    if array.size != 1:
        raise DLFormatError(f"Metrics: {what} must return one number; got {_validate.describe(value)}")
    return float(array.reshape(()))


def metric_of(name: str, value: Any) -> Metric:
    """The metric a ``Metrics`` entry gives: a metric object (built-in or custom, as given), a
    built-in name (its object with the defaults) or a function ``f(Y, T)``."""
    if isinstance(value, Metric):
        if not isinstance(value.Name, str) or not value.Name:
            raise DLFormatError(f"{name}: the metric object {type(value).__name__} needs a nonempty Name")
        metric = value
    elif isinstance(value, str):
        metric = built_in(_canonical(name, value))
    elif callable(value):
        metric = FunctionMetric(value)
    else:
        raise DLFormatError(
            f"{name} must be metric names ({', '.join(repr(m) for m in NAMES)}), metric objects "
            f"(accuracyMetric(), ..., dlf.Metric subclasses) or functions value = f(Y, T); got "
            f"{_validate.describe(value)}"
        )
    # ignoring case, as ObjectiveMetricName matches: a metric "loss" could never be the objective
    if metric.Name.lower() in (reserved.lower() for reserved in _RESERVED):
        raise DLFormatError(
            f"{name}: a metric cannot be named {metric.Name!r}: TrainingHistory has that column (names "
            "compared ignoring case)"
        )
    return metric


def entries(name: str, items: Sequence[Any]) -> tuple[Any, ...]:
    """The ``Metrics`` option's entries as ``trainingOptions`` keeps them: names in lower case,
    objects and functions as given; two metrics with one column name are an error."""
    metrics = [metric_of(name, item) for item in items]
    columns = [metric.Name for metric in metrics]
    # ignoring case: a built-in name ("accuracy") is its record key, and ObjectiveMetricName
    # matches names ignoring case, so "Accuracy" and "accuracy" would overwrite each other
    if len({column.lower() for column in columns}) != len(columns):
        raise DLFormatError(
            f"{name} names a metric twice (names compared ignoring case): {', '.join(columns)}"
        )
    return tuple(_canonical(name, item) if isinstance(item, str) else item for item in items)


def _canonical(name: str, value: str) -> str:
    return _validate.choice(name, value, tuple(NAMES))


class Tracked:
    """One of ``Metrics`` as ``trainnet`` drives it: working copies of the metric (training,
    validation), the network output it sees, its record key (``name``: the metric name as given,
    or the object's ``Name``), its ``column`` (``Name``) and whether larger is better (``larger``,
    ``None`` if the metric does not say)."""

    def __init__(self, metric: Metric, name: str, output: int | None) -> None:
        self.metric, self.name, self.column, self.output = metric, name, metric.Name, output
        self.larger = metric.Maximize
        self.function = isinstance(metric, FunctionMetric)
        self._copies: dict[str, Metric] = {}

    def __repr__(self) -> str:
        return f"Tracked({self.column!r})"

    def _arguments(self, Y: Any, T: Any) -> tuple[DLArray, ...]:
        ys, ts = as_arguments(Y), as_arguments(T)
        return (*ys, *ts) if self.output is None else (ys[self.output], ts[self.output])

    def _fed(self, which: str, data: tuple[DLArray, ...], reset: bool) -> Metric:
        """The working copy ``which``, initialized with its first mini-batch, reset if asked, then
        updated with ``data``."""
        work = self._copies.get(which)
        if work is None:
            work = copy.deepcopy(self.metric)
            work = _returned(work, work.initialize(*data))
        if reset:
            work = _returned(work, work.reset())
        work = _returned(work, work.update(*data))
        self._copies[which] = work
        return work

    def __call__(self, Y: Any, T: Any, group: Any = None) -> float:
        """The value over one training mini-batch; in data-parallel training (``group`` of
        several ranks), every worker's copy aggregated."""
        work = self._fed("training", self._arguments(Y, T), reset=True)
        if group is not None and group.size > 1:
            parts = group.gathered(work)
            work = copy.deepcopy(parts[0])
            for part in parts[1:]:
                work = _returned(work, work.aggregate(part))
        return number(f"the metric {self.column}'s evaluate", work.evaluate())

    def validate(self, Y: Any, T: Any, first: bool) -> None:
        """A validation mini-batch: the validation copy reset before the ``first``, then updated."""
        self._fed("validation", self._arguments(Y, T), reset=first)

    def validated(self) -> float:
        """The value over the validation mini-batches given since the first."""
        work = self._copies.get("validation")
        return math.nan if work is None else number(f"the metric {self.column}'s evaluate", work.evaluate())


def _returned(metric: Metric, result: Any) -> Metric:
    """MATLAB's methods return the updated metric; Python's may change it in place instead."""
    return result if isinstance(result, Metric) else metric


def tracked(caller: str, entries: Sequence[Any], outputs: Sequence[str]) -> list[Tracked]:
    """The ``Metrics`` option's entries for a network with ``outputs`` (its ``OutputNames``):
    ``NetworkOutput`` picks the output a metric sees; without it, a built-in metric needs a network
    with one output, and a custom metric or function sees all of them."""
    result = []
    for entry in entries:
        metric = metric_of(f"{caller}: Metrics", entry)
        name = entry if isinstance(entry, str) else metric.Name
        chosen = metric.NetworkOutput
        if chosen is not None:
            if chosen not in outputs:
                raise DLFormatError(
                    f'{caller}: the metric {metric.Name}\'s NetworkOutput "{chosen}" is not an output of the '
                    f"network; its OutputNames are: {', '.join(outputs)}"
                )
            output: int | None = list(outputs).index(chosen)
        elif isinstance(metric, _BuiltIn):
            if len(outputs) > 1:
                raise DLFormatError(
                    f"{caller}: the network has {len(outputs)} outputs ({', '.join(outputs)}); give the "
                    f"metric {metric.Name} a NetworkOutput ({metric.function}(NetworkOutput=...)): which "
                    "output MATLAB compares without one could not be read"
                )
            output = 0
        else:
            output = None  # MATLAB's NetworkOutput []: the function or custom metric sees every output
        result.append(Tracked(metric, name, output))
    return result
