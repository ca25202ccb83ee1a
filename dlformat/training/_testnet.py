"""MATLAB's ``testnet`` (R2024b): a trained network's metrics over test data.

``testnet`` evaluates the network in inference mode (``training=False``, no gradients, its
``State`` untouched) over the test data in mini-batches of ``MiniBatchSize`` and returns one value
per metric, in the order given. It reuses what ``trainnet`` has, so nothing is done twice:

- the data: the same arrays, dlarrays, class labels, lists of sequences (trainnet's ``s×c``
  layout) and sources (``minibatchqueue``, ``Dataset``, ``DataLoader``) as trainnet, prepared by
  trainnet's ``_prepared`` with the input layers' statistics kept (``ResetInputNormalization``
  false) and the options checked by ``trainingOptions``' own checks;
- the metrics: trainnet's metric machinery (:mod:`._metrics`) as its validation drives it, so each
  metric is reset, updated with every mini-batch and evaluated once over the whole test set (an
  F-score or AUC of all the observations, a loss or metric function as the mean of its
  mini-batch values weighted by their numbers of observations);
- the loss names (``"crossentropy"``, ``"mse"``, ...): trainnet's losses with their
  normalizations. docs/training.md cites the sources and says what is dlformat's reading.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from ..networks import DLNetwork
from ._metrics import FunctionMetric, Tracked, tracked
from ._options import TrainingOptions, trainingOptions
from ._sources import is_source, read_source
from ._trainer import (
    _ALIASES,
    _NAMED_LOSSES,
    _device,
    _input_layers,
    _output_names,
    _prepared,
    _validate_net,
)

__all__ = ["testnet"]

# testnet's name-value arguments, checked as trainingOptions checks them, with its defaults
_OPTIONS = (
    "MiniBatchSize",
    "InputDataFormats",
    "TargetDataFormats",
    "SequenceLength",
    "SequencePaddingValue",
    "SequencePaddingDirection",
    "ExecutionEnvironment",
    "Acceleration",
)
_LOSSES = (*_NAMED_LOSSES, *_ALIASES)


class _LossMetric(FunctionMetric):
    """A loss name as a metric: trainnet's loss of that name, its mini-batch values averaged with
    their numbers of observations as weights (as trainnet's validation loss is)."""

    def __init__(self, name: str) -> None:
        self.Name, self.function = name, _NAMED_LOSSES[_ALIASES.get(name, name)]
        if name == "index-crossentropy":
            self.function = _indexed
        self.reset()


def _indexed(Y: DLArray, T: DLArray) -> Any:
    """``"index-crossentropy"`` with one-hot targets (class labels, as the other metrics need
    them) taken as MATLAB's 1-based class indices; index targets as they are."""
    channel = T._fmt.index("C") if "C" in T._fmt else -1
    if channel >= 0 and T.shape[channel] > 1:
        T = dlarray(T._data.argmax(channel, keepdim=True).to(T._data.dtype) + 1, T._fmt)
    return _NAMED_LOSSES["index-crossentropy"](Y, T)


def _options(given: dict[str, Any]) -> TrainingOptions:
    """The name-value arguments, checked by trainingOptions' checks (an error there names the option)."""
    unknown = [name for name in given if name.lower() not in {o.lower() for o in _OPTIONS}]
    if unknown:
        raise DLFormatError(f"testnet: unknown option '{unknown[0]}'; the options are: {', '.join(_OPTIONS)}")
    for name, value in given.items():
        if name.lower() == "executionenvironment":  # testnet runs in this process
            _validate.choice("testnet: ExecutionEnvironment", value, ("auto", "cpu", "gpu"))
    try:
        return trainingOptions("sgdm", ResetInputNormalization=False, Verbose=False, **given)
    except DLFormatError as error:
        raise DLFormatError(str(error).replace("trainingOptions", "testnet", 1)) from None


def _arguments(args: tuple[Any, ...]) -> tuple[Any, Any, Any, dict[str, Any]]:
    """``(data, metrics)`` or ``(X, T, metrics)``, then MATLAB's ``'Name', value`` pairs: the
    predictors (or the data source), the targets (None with a source), the metrics, the options."""
    names = {o.lower() for o in _OPTIONS}
    cut = next(
        (i for i in range(2, len(args)) if isinstance(args[i], str) and args[i].lower() in names),
        len(args),
    )
    positional, pairs = args[:cut], args[cut:]
    if len(pairs) % 2:
        raise DLFormatError("testnet: options come as Name=Value or as 'Name', value pairs")
    options = dict(zip(pairs[::2], pairs[1::2], strict=True))
    if len(positional) == 2:
        data, metrics = positional
        if not is_source(data):
            raise DLFormatError(
                "testnet(net, data, metrics) takes a data source that holds the targets (a minibatchqueue, "
                f"a Dataset or a DataLoader); got {_validate.describe(data)}. Give arrays as "
                "testnet(net, X, T, metrics)"
            )
        return data, None, metrics, options
    if len(positional) == 3:
        return (*positional, options)
    raise DLFormatError(
        "testnet takes testnet(net, data, metrics) or testnet(net, X, T, metrics), then options; "
        f"got {len(positional) + 1} positional arguments"
    )


def _metrics(given: Any, outputs: Sequence[str]) -> list[Tracked]:
    """The metrics in the order given: loss names as :class:`_LossMetric`, the rest as
    trainnet's ``Metrics`` (names, metric objects, functions)."""
    entries = list(given) if isinstance(given, (list, tuple)) else [given]
    if isinstance(given, np.ndarray):
        entries = [str(item) for item in given.ravel()]
    if not entries:
        raise DLFormatError("testnet: give at least one metric")
    result = []
    for entry in entries:
        if isinstance(entry, (str, np.str_)) and str(entry).lower() in _LOSSES:
            if len(outputs) > 1:
                raise DLFormatError(
                    f'testnet: the loss "{entry}" needs a network with one output; this one has '
                    f"{len(outputs)} ({', '.join(outputs)}): give a metric function "
                    "f(Y1, ..., Yn, T1, ..., Tn)"
                )
            result.append(Tracked(_LossMetric(str(entry).lower()), str(entry), 0))
        else:
            result.extend(tracked("testnet", [entry], outputs))
    return result


def _class_count_check(Y: Any, T: Any) -> float:
    """Called with every mini-batch in the loss's place of trainnet's validation: class labels
    become one-hot targets over the classes the test labels hold, which must be the network's."""
    for y, t in zip(*(v if isinstance(v, tuple) else (v,) for v in (Y, T)), strict=True):
        if "C" not in t._fmt or "C" not in y._fmt:
            continue
        classes, channels = t.shape[t._fmt.index("C")], y.shape[y._fmt.index("C")]
        if classes != channels:
            raise DLFormatError(
                f"testnet: the targets have {classes} classes (the distinct test labels) but the "
                f"network output has {channels} channels; when the test labels do not "
                "hold every class, give one-hot targets: dlf.onehotencode(labels, 2, ClassNames=classes)"
            )
    return 0.0


def testnet(net: Any, *args: Any, **options: Any) -> np.ndarray:
    """MATLAB's ``metricValues = testnet(net, X, T, metrics)`` or ``testnet(net, data, metrics)``
    with a ``minibatchqueue``, ``Dataset`` or ``DataLoader`` holding predictors and targets.

    ``net`` is an initialized ``dlnetwork``, left unchanged. The data take the layouts
    :func:`trainnet` takes. ``metrics`` is one metric or a list of them: loss names
    (``"crossentropy"``, ``"index-crossentropy"``, ``"binary-crossentropy"``, ``"mse"``
    (``"mean-squared-error"``, ``"l2loss"``), ``"l1loss"`` (``"mae"``, ``"mean-absolute-error"``),
    ``"huber"``, normalized as trainnet normalizes them), metric names (``"accuracy"``,
    ``"fscore"``, ``"precision"``, ``"recall"``, ``"auc"``, ``"rmse"``, ``"mape"``, ``"rsquared"``),
    metric objects (``accuracyMetric(...)``, custom ``dlf.Metric`` subclasses) or functions
    ``value = f(Y, T)``. Options: ``MiniBatchSize`` (128), ``InputDataFormats``,
    ``TargetDataFormats``, ``SequenceLength``, ``SequencePaddingValue``,
    ``SequencePaddingDirection``, ``ExecutionEnvironment`` (``"auto"``, ``"cpu"``, ``"gpu"``),
    ``Acceleration``. Returns a float64 vector, one value per metric in the order given: each
    over the whole test set (see docs/training.md).

    Examples:
        >>> torch.manual_seed(0) and None
        >>> net = dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)])
        >>> X = torch.randn(10, 2)
        >>> values = dlf.testnet(net, X, 2 * X[:, :1], ["mse", "rmse"], MiniBatchSize=4)
        >>> values.shape
        (2,)
    """
    if not isinstance(net, DLNetwork):
        raise DLFormatError(f"testnet: net must be a dlnetwork; got {_validate.describe(net)}")
    if not net.Initialized:
        raise DLFormatError("testnet: net must be an initialized dlnetwork (see initialize)")
    X, T, metrics_given, pairs = _arguments(args)
    settings = _options({**pairs, **options})
    outputs = _output_names(net)
    metrics = _metrics(metrics_given, outputs)
    named = None
    if T is None:  # a data source: read once, as trainnet reads one
        X, T, named = read_source("testnet", X, _input_layers(net), settings, len(outputs))
    prepared, Xc, Tc, _ = _prepared("testnet", net, X, T, settings, named)
    if prepared is not net:  # only an input layer without its normalization statistics gets new ones
        raise DLFormatError(
            "testnet: an input layer of net normalizes its input but has no normalization statistics; "
            "set them (Mean, StandardDeviation, Min, Max) or train the network first"
        )
    device = _device(settings)
    home = next((value.device for _, _, value in net.Learnables), torch.device("cpu"))
    work = net if home == device else copy.deepcopy(net).to(device)
    dtype = next((value.dtype for _, _, value in net.Learnables), torch.float32)
    batch = min(settings.MiniBatchSize, len(Xc))
    _validate_net(work, (Xc, Tc), _class_count_check, metrics, batch, device, dtype)
    return np.array([metric.validated() for metric in metrics], dtype=np.float64)


# MATLAB's name starts with "test": a user's test module that imports it must not have pytest
# (or another runner) collect it as a test
testnet.__test__ = False  # type: ignore[attr-defined]
