"""MATLAB's ``trainingOptions``: the solver and every training setting, checked once.

``trainingOptions(solverName, Name=Value)`` returns a :class:`TrainingOptions` whose MATLAB
class name follows the solver (``TrainingOptionsSGDM``, ``TrainingOptionsADAM``,
``TrainingOptionsRMSProp``, ``TrainingOptionsLBFGS``, ``TrainingOptionsLM``). Each option is
declared once in :data:`_OPTIONS` (its default and its check); the solver-specific ones in
:data:`_SOLVER_OPTIONS` (L-BFGS's in :mod:`._lbfgs`, LM's in :mod:`._lm`, with the shared ones
they have no use for in ``_NOT_FOR``). The
defaults and the display order are MathWorks' (the ``trainingOptions`` page's display of
``trainingOptions("sgdm")``).
Every option MATLAB has is declared and acted on; what dlformat does not port (some schedule
objects) is a clear error, never silently ignored (docs/training.md).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._display import cell
from .._errors import DLFormatError
from ._lbfgs import LBFGS_EXCLUDED, LBFGS_OPTIONS
from ._lm import LM_EXCLUDED, LM_OPTIONS
from ._metrics import Metric, entries
from ._minibatchqueue import MiniBatchQueue
from ._progress_plot import PLOT_FILES, require_matplotlib
from ._schedules import LearnRateSchedule, check_schedule
from ._solvers import _decay
from ._sources import is_source

__all__ = ["TrainingOptions", "trainingOptions"]

SOLVERS = ("sgdm", "adam", "rmsprop", "lbfgs", "lm")
_CLASS_NAMES = {
    "sgdm": "TrainingOptionsSGDM",
    "adam": "TrainingOptionsADAM",
    "rmsprop": "TrainingOptionsRMSProp",
    "lbfgs": "TrainingOptionsLBFGS",
    "lm": "TrainingOptionsLM",
}

Check = Callable[[str, Any], Any]


def _positive_or_inf(name: str, value: object) -> float:
    """A positive number or ``Inf`` (GradientThreshold, ValidationPatience)."""
    if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool):
        if value == math.inf:
            return math.inf
    return _validate.positive(name, value)


def _patience(name: str, value: object) -> float | int:
    number = _positive_or_inf(name, value)
    return number if number == math.inf else _validate.positive_integer(name, value)


def _nonnegative(name: str, value: object) -> float:
    return _validate.factor(name, value)


def _logical(name: str, value: object) -> bool:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
        return bool(value)
    raise DLFormatError(f"{name} must be true or false (1 or 0); got {_validate.describe(value)}")


def _drop_factor(name: str, value: object) -> float:
    number = _validate.real(name, value)
    if not 0 <= number <= 1:
        raise DLFormatError(f"{name} must be a number in [0, 1]; got {_validate.describe(value)}")
    return number


def _choice(*allowed: str) -> Check:
    def check(name: str, value: object) -> str:
        return _validate.choice(name, value, allowed)

    return check


def _sequence_length(name: str, value: object) -> str | int:
    if isinstance(value, str):
        return _validate.choice(name, value, ("longest", "shortest"), also=", or a positive integer")
    return _validate.positive_integer(name, value)


def _padding_value(name: str, value: object) -> float:
    number = _validate._real_scalar(value)
    if number is None:
        raise DLFormatError(f"{name} must be a real scalar; got {_validate.describe(value)}")
    return float(number)


def _formats(name: str, value: object) -> str | tuple[str, ...]:
    if isinstance(value, str) and value.lower() == "auto":
        return "auto"
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Sequence) or not items or not all(isinstance(v, str) for v in items):
        raise DLFormatError(
            f'{name} must be "auto" or format strings such as "SSCB"; got {_validate.describe(value)}'
        )
    checked = []
    for fmt in items:
        if not fmt or any(label not in "SCBTU" for label in fmt.upper()) or fmt.upper().count("B") != 1:
            raise DLFormatError(
                f'{name}: "{fmt}" is not a data format with one "B" and labels from S, C, B, T, U'
            )
        checked.append(fmt.upper())
    return tuple(checked)


def _validation_data(name: str, value: object) -> Any:
    """A pair ``(XValidation, TValidation)`` (MATLAB's ``{X, T}``), or a data source as trainnet's
    data: a ``minibatchqueue``, a ``torch.utils.data.Dataset`` or a ``DataLoader``."""
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return None
    if is_source(value):
        return value
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise DLFormatError(
            f"{name} must be a pair (XValidation, TValidation), MATLAB's {{X, T}} cell array, or a "
            f"minibatchqueue, Dataset or DataLoader; got {_validate.describe(value)}"
        )
    return tuple(value)


def _metrics(name: str, value: object) -> tuple[Any, ...]:
    """Built-in metric names (lower case), metric objects and metric functions, in the order given."""
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return ()
    items = [value] if isinstance(value, (str, Metric)) or callable(value) else value
    if not isinstance(items, Sequence):
        raise DLFormatError(
            f'{name} must be a metric name such as "accuracy", a metric object, a metric function or a '
            f"list of them; got {_validate.describe(value)}"
        )
    return entries(name, items)


def _output_fcn(name: str, value: object) -> Any:
    """A function ``stop = f(info)`` or a list of them (MATLAB's function handle or cell array)."""
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return None
    functions = value if isinstance(value, (list, tuple)) else [value]
    if not all(callable(function) for function in functions):
        raise DLFormatError(
            f"{name} must be a function stop = f(info) or a list of them; got {_validate.describe(value)}"
        )
    return value if callable(value) else tuple(functions)


def _checkpoint_path(name: str, value: object) -> str:
    """An existing folder this process can write into, or ``''`` (no checkpoints)."""
    path = _validate.text(name, value)
    if path and not os.path.isdir(path):
        raise DLFormatError(f"{name}: {path!r} is not an existing folder; create it before training")
    if path and not os.access(path, os.W_OK | os.X_OK):
        raise DLFormatError(f"{name}: the folder {path!r} is not writable")
    return path


def _plots(name: str, value: object) -> str:
    """``"none"``, ``"training-progress"`` (a live figure) or an image file for the figure (dlformat's)."""
    plots = _validate.text(name, value)
    if plots.lower() in ("none", "training-progress"):
        plots = plots.lower()
    elif Path(plots).suffix.lower() not in PLOT_FILES:
        raise DLFormatError(
            f'{name} must be "none", "training-progress" or an image file path ending in '
            f"{', '.join(PLOT_FILES)} (dlformat's own: the training-progress figure written there); "
            f"got {_validate.describe(value)}"
        )
    elif not Path(plots).parent.is_dir():
        raise DLFormatError(f"{name}: the folder of {plots!r} does not exist; create it before training")
    if plots != "none":
        require_matplotlib(f"{name} {plots!r}")
    return plots


# MATLAB's legacy option for background preprocessing (PreprocessingEnvironment replaced it in
# R2024a): true is "background", false "serial"; it is read and set through PreprocessingEnvironment
_LEGACY_DISPATCH = "DispatchInBackground"


def _dispatch(value: object) -> str:
    return "background" if _logical(f"trainingOptions: {_LEGACY_DISPATCH}", value) else "serial"


def _worker_load(name: str, value: object) -> float | int | tuple[float, ...] | None:
    """``[]`` (every worker trains, equal shares), a fraction in (0, 1] of each machine's workers, a
    number of them, or one positive load per worker (worker ``i`` takes ``W(i)/sum(W)`` of each
    mini-batch): see training/_distributed.py."""
    if value is None:
        return None
    if isinstance(value, (torch.Tensor, np.ndarray)):
        value = value.tolist() if value.ndim else value.item()
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]  # MATLAB's [4] is the scalar 4 (four workers), not a one-worker load vector
    if isinstance(value, (list, tuple)):
        if len(value) == 0:
            return None
        numbers = [_validate._real_scalar(item) for item in value]
        if any(number is None or not 0 < number < math.inf for number in numbers):
            raise DLFormatError(
                f"{name} must be a vector of positive finite loads, one per worker (a worker with no load "
                f"is left out by starting fewer workers); got {_validate.describe(value)}"
            )
        return tuple(float(number) for number in numbers if number is not None)
    number = _validate._real_scalar(value)
    if number is None or isinstance(value, bool) or not 0 < number < math.inf:
        raise DLFormatError(
            f"{name} must be [], a fraction in (0, 1] of each machine's workers, a positive number of "
            f"workers, or a vector of loads, one per worker; got {_validate.describe(value)}"
        )
    if number <= 1:
        return float(number)
    if number != int(number):
        raise DLFormatError(
            f"{name}: a number of workers above 1 must be a whole number; got {_validate.describe(value)}"
        )
    return int(number)


def _execution(name: str, value: object) -> str:
    # "multi-gpu" and "parallel": data-parallel training, see training/_distributed.py
    return _validate.choice(name, value, ("auto", "cpu", "gpu", "multi-gpu", "parallel"))


# name -> (default, check), in MATLAB's display order (after the solver's own options)
_OPTIONS: dict[str, tuple[Any, Check]] = {
    "InitialLearnRate": (None, _validate.positive),  # None: the solver's default
    "MaxEpochs": (30, _validate.positive_integer),
    "LearnRateSchedule": ("none", check_schedule),
    "LearnRateDropFactor": (0.1, _drop_factor),
    "LearnRateDropPeriod": (10, _validate.positive_integer),
    "MiniBatchSize": (128, _validate.positive_integer),
    "Shuffle": ("once", _choice("once", "every-epoch", "never")),
    "CheckpointFrequency": (1, _validate.positive_integer),
    "CheckpointFrequencyUnit": ("epoch", _choice("epoch", "iteration")),
    "SequenceLength": ("longest", _sequence_length),
    # "background"/"parallel": mini-batches cut ahead in threads (training/_prefetch.py)
    "PreprocessingEnvironment": ("serial", _choice("serial", "background", "parallel")),
    "L2Regularization": (1e-4, _nonnegative),
    "GradientThresholdMethod": ("l2norm", _choice("l2norm", "global-l2norm", "absolute-value")),
    "GradientThreshold": (math.inf, _positive_or_inf),
    "Verbose": (True, _logical),
    "VerboseFrequency": (50, _validate.positive_integer),
    "ValidationData": (None, _validation_data),
    "ValidationFrequency": (50, _validate.positive_integer),
    "ValidationPatience": (math.inf, _patience),
    "ObjectiveMetricName": ("loss", _validate.text),  # "loss" or a Metrics name: checked by trainnet
    "CheckpointPath": ("", _checkpoint_path),
    "ExecutionEnvironment": ("auto", _execution),
    "WorkerLoad": (None, _worker_load),
    "OutputFcn": (None, _output_fcn),
    "Metrics": ((), _metrics),
    "Plots": ("none", _plots),
    "SequencePaddingValue": (0.0, _padding_value),
    "SequencePaddingDirection": ("right", _choice("right", "left")),
    "InputDataFormats": ("auto", _formats),
    "TargetDataFormats": ("auto", _formats),
    "ResetInputNormalization": (True, _logical),
    # "population": one more pass after training; "auto": that for trainNetwork, "moving" for trainnet
    "BatchNormalizationStatistics": ("auto", _choice("auto", "population", "moving")),
    "OutputNetwork": ("auto", _choice("auto", "last-iteration", "best-validation")),
    "Acceleration": ("auto", _choice("auto", "none")),
}

# the solver's own options, listed first in MATLAB's display, with the solver's defaults
_SOLVER_OPTIONS: dict[str, dict[str, tuple[Any, Check]]] = {
    "sgdm": {"Momentum": (0.9, _validate.unit_interval)},
    "adam": {
        "GradientDecayFactor": (0.9, _decay),
        "SquaredGradientDecayFactor": (0.999, _decay),
        "Epsilon": (1e-8, _validate.positive),
    },
    "rmsprop": {"SquaredGradientDecayFactor": (0.9, _decay), "Epsilon": (1e-8, _validate.positive)},
    "lbfgs": LBFGS_OPTIONS,
    "lm": LM_OPTIONS,
}
_INITIAL_LEARN_RATE = {"sgdm": 0.01, "adam": 0.001, "rmsprop": 0.001}
# the shared options a solver has no use for: L-BFGS and LM take the whole data set each iteration
_NOT_FOR = {"lbfgs": LBFGS_EXCLUDED, "lm": LM_EXCLUDED}


class TrainingOptions:
    """MATLAB's ``TrainingOptionsSGDM`` / ``ADAM`` / ``RMSProp`` / ``LBFGS`` / ``LM`` (by the solver).

    Made by :func:`trainingOptions`. Every option is an attribute with MATLAB's name; setting
    one checks it as the constructor does. ``get_config()`` / ``TrainingOptions.from_config``
    round-trip the options.
    """

    def __init__(self, solverName: str, **options: Any) -> None:
        solver = _validate.choice("trainingOptions: solverName", solverName, SOLVERS)
        object.__setattr__(self, "SolverName", solver)
        shared = {name: o for name, o in _OPTIONS.items() if name not in _NOT_FOR.get(solver, ())}
        object.__setattr__(self, "_declared", {**_SOLVER_OPTIONS[solver], **shared})
        for name, (default, _) in self._declared.items():
            object.__setattr__(self, name, default)
        if solver in _INITIAL_LEARN_RATE:
            object.__setattr__(self, "InitialLearnRate", _INITIAL_LEARN_RATE[solver])
        lowered = {name.lower(): name for name in self._declared}
        for key, value in options.items():
            if key.lower() == _LEGACY_DISPATCH.lower() and "PreprocessingEnvironment" in self._declared:
                key, value = "PreprocessingEnvironment", _dispatch(value)
            name = lowered.get(key.lower())
            if name is None:
                raise DLFormatError(
                    f"trainingOptions: '{key}' is not an option for solver '{solver}'; the options are: "
                    + ", ".join(self._declared)
                )
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        declared = self.__dict__.get("_declared", {})
        if name == _LEGACY_DISPATCH and "PreprocessingEnvironment" in declared:
            name, value = "PreprocessingEnvironment", _dispatch(value)
        if name == "SolverName" or name not in declared:
            raise DLFormatError(
                f"{self.matlab_class} has no property '{name}'; the options are: {', '.join(declared)}"
            )
        object.__setattr__(self, name, declared[name][1](f"trainingOptions: {name}", value))

    def __getattr__(self, name: str) -> Any:
        # the options are set in __init__ from the declarations; this only answers the rest
        if name == _LEGACY_DISPATCH and "PreprocessingEnvironment" in self._declared:
            return self.PreprocessingEnvironment != "serial"
        raise AttributeError(f"{type(self).__name__} has no option '{name}'")

    @property
    def matlab_class(self) -> str:
        return _CLASS_NAMES[self.SolverName]

    def get_config(self) -> dict[str, Any]:
        """The solver and every option, to rebuild the options with :meth:`from_config`."""
        return {"SolverName": self.SolverName, **{name: getattr(self, name) for name in self._declared}}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TrainingOptions:
        config = dict(config)
        return cls(config.pop("SolverName"), **config)

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt from the config: the declared checks are closures, which pickle cannot send to workers
        return (TrainingOptions.from_config, (self.get_config(),))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TrainingOptions) and repr(self) == repr(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        width = max(len(name) for name in self._declared)
        lines = [f"  {self.matlab_class} with properties:", ""]
        lines += [f"  {name:>{width + 2}}: {_shown(getattr(self, name))}" for name in self._declared]
        return "\n".join(lines)


def _shown(value: Any) -> str:
    """A value as MATLAB's property display writes it."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if value is None:
        return "[]"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, float):
        if math.isinf(value):
            return "Inf"
        if value == int(value) and abs(value) < 1e9:
            return str(int(value))
        if 1e-3 <= abs(value) < 1e3:
            return f"{value:.4f}"
        mantissa, exponent = f"{value:.4e}".split("e")
        return f"{mantissa}e{int(exponent):+03d}"
    if isinstance(value, tuple):
        if not value:
            return "[]"
        if all(isinstance(item, float) for item in value):  # WorkerLoad: a numeric row vector
            return "[" + " ".join(f"{item:g}" for item in value) + "]"
        return cell(value)  # names as {'a'  'b'}; ValidationData, MATLAB's {X, T}, as {1×2 cell}
    if isinstance(value, LearnRateSchedule):
        return f"[1×1 {type(value).__name__}]"
    if is_source(value):  # ValidationData
        return f"[1×1 {'minibatchqueue' if isinstance(value, MiniBatchQueue) else type(value).__name__}]"
    if isinstance(value, list):
        return f"{{1×{len(value)} cell}}"
    if callable(value):
        return f"@{getattr(value, '__name__', 'function')}"
    return str(value)


def trainingOptions(solverName: Any, *pairs: Any, **options: Any) -> TrainingOptions:
    """MATLAB's ``options = trainingOptions(solverName, Name=Value)``.

    ``solverName`` is ``"sgdm"``, ``"adam"``, ``"rmsprop"``, ``"lbfgs"`` (full-batch L-BFGS:
    ``MaxIterations``, ``LineSearchMethod``, ``GradientTolerance``, ... instead of the
    mini-batch and learning-rate options) or ``"lm"`` (full-batch Levenberg–Marquardt for
    regression: ``MaxIterations``, ``InitialDampingFactor``, ``MaxDampingFactor``, ...), or a
    training options object MATLAB saved (``dlformat.io.loadmat(path)["options"]``: its solver
    and values, the options given here replacing saved ones).
    Options take MATLAB's names (any case, or as ``'Name', value`` pairs) and defaults; see
    docs/training.md for each and for those not yet supported.

    Examples:
        >>> options = dlf.trainingOptions("sgdm", MaxEpochs=20, LearnRateSchedule="piecewise")
        >>> options.InitialLearnRate, options.Momentum, options.MiniBatchSize
        (0.01, 0.9, 128)
        >>> dlf.trainingOptions("adam", "InitialLearnRate", 0.01).SquaredGradientDecayFactor
        0.999
    """
    if len(pairs) % 2 or not all(isinstance(name, str) for name in pairs[::2]):
        raise DLFormatError(
            "trainingOptions takes options as Name=Value or as 'Name', value pairs after the solver name"
        )
    given = dict(zip(pairs[::2], pairs[1::2], strict=True))
    for key in options:
        if any(key.lower() == name.lower() for name in given):
            raise DLFormatError(f"trainingOptions got option '{key}' twice")
    if not isinstance(solverName, str):
        from ._saved_options import is_saved_options, saved_options  # it builds on this module

        if is_saved_options(solverName):
            return saved_options(solverName, {**given, **options})
    return TrainingOptions(solverName, **given, **options)
