"""Training data that comes as a data source, and trainnet's layout of vector sequences.

``trainnet(mbq, net, lossFcn, options)`` (MATLAB's form for a ``minibatchqueue``) and, for Python
code, ``trainnet(dataset, net, lossFcn, options)`` with a ``torch.utils.data.Dataset`` or
``DataLoader``; ``trainNetwork(source, layers, options)`` likewise. The source is read once,
before training, in its own order: the mini-batches of one pass are joined along the observations,
and training then cuts its own mini-batches (``MiniBatchSize``, ``Shuffle``) as for in-memory
arrays. So the source must fit in memory.

- ``minibatchqueue``: its outputs are the predictors, then the targets (two outputs; for a
  network with several inputs or outputs, one per input in ``InputNames`` order, then one per
  output in ``OutputNames`` order), each a formatted dlarray (its ``MiniBatchFormat`` must hold
  ``"B"``). A ``Dataset``'s items are tuples in the same order.
- ``Dataset`` / ``DataLoader``: each item a pair ``(x, t)``; a ``Dataset`` is read through a
  ``DataLoader`` with torch's default collation, so mini-batches are batch-first (torch's layout):
  ``N×C`` features, ``N×C×H×W`` images (``"BCSS"``), ``N×C×H×W×D`` 3-D images; other layouts
  need ``InputDataFormats`` written for the batch-first data (e.g. ``"BCT"``). Targets: strings
  are class names; a vector of integers is torch's 0-based class indices (class names ``"0"``,
  ``"1"``, ... in that order); floating values are responses (``N`` or ``N×R``); other layouts
  need ``TargetDataFormats``. Reading leaves torch's random state as it was.

trainnet's vector sequences (MathWorks' trainnet page, via MathWorks staff answers): ``s×c``
matrices, time first, where ``trainNetwork`` takes ``c×s``. :func:`oriented` reads a list (or a
NumPy object array) of matrices as ``s×c`` when every one has the input layer's ``c`` columns,
and as dlformat's ``c×s`` when every one has ``c`` rows and not ``c`` columns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from .. import _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from ..layers.input import FeatureInputLayer, Image3DInputLayer, ImageInputLayer, SequenceInputLayer
from ._minibatchqueue import MiniBatchQueue

__all__ = ["is_source", "oriented", "read_source"]

# torch's batch-first layouts for the input layers whose layout is fixed
_BATCH_FIRST = {FeatureInputLayer: "BC", ImageInputLayer: "BCSS", Image3DInputLayer: "BCSSS"}
_READ_BATCH = 256


def is_source(value: Any) -> bool:
    """A ``minibatchqueue``, a ``torch.utils.data.Dataset`` or a ``DataLoader``."""
    return isinstance(value, (MiniBatchQueue, Dataset, DataLoader))


def read_source(
    caller: str, source: Any, layers: Any, options: Any, outputs: int = 1
) -> tuple[Any, Any, list[list[str] | None]]:
    """One pass over ``source``: the predictors and the targets joined along the observations, and
    the class names of each output whose targets are class indices (None for the others).

    ``layers``: the network's input layer, or its input layers in ``InputNames`` order; with
    several inputs (``outputs`` outputs) the predictors (targets) come as a tuple, one per input
    (output), from a source whose items (a queue's outputs) are the predictors, then the targets.
    """
    layers = list(layers) if isinstance(layers, (list, tuple)) else [layers]
    width = len(layers) + outputs
    if isinstance(source, MiniBatchQueue):
        parts = _read_queue(caller, source, width)
    else:
        parts = _read_dataset(caller, source, width)
    X = [
        _joined(caller, "X", part, _input_format(caller, layer, options.InputDataFormats, i))
        for i, (layer, part) in enumerate(zip(layers, parts, strict=False))
    ]
    targets = [
        _targets(caller, part, options.TargetDataFormats, i) for i, part in enumerate(parts[len(layers) :])
    ]
    T, classes = [t for t, _ in targets], [named for _, named in targets]
    return (X[0] if len(X) == 1 else tuple(X)), (T[0] if len(T) == 1 else tuple(T)), classes


def _read_dataset(caller: str, source: Any, width: int) -> list[list[Any]]:
    """The items of a Dataset / DataLoader (tuples of ``width`` values), column by column."""
    loader = source if isinstance(source, DataLoader) else DataLoader(source, batch_size=_READ_BATCH)
    parts: list[list[Any]] = [[] for _ in range(width)]
    random = torch.get_rng_state()  # a DataLoader draws its seeds from torch's generator
    try:
        for item in loader:
            if not isinstance(item, (tuple, list)) or len(item) != width:
                wanted = (
                    "a pair (x, t)"
                    if width == 2
                    else f"a tuple of {width} (the predictors, then the targets)"
                )
                raise DLFormatError(
                    f"{caller}: each item of the Dataset / DataLoader must be {wanted}; got "
                    f"{_validate.describe(item)}"
                )
            for part, value in zip(parts, item, strict=True):
                part.append(value)
    finally:  # reading the data leaves the random state (initialization, shuffling) as it was
        torch.set_rng_state(random)
    if not parts[0]:
        raise DLFormatError(f"{caller}: the Dataset / DataLoader holds no observations")
    return parts


def _targets(caller: str, batches: list[Any], given: Any, index: int) -> tuple[Any, list[str] | None]:
    """One output's targets from a Dataset / DataLoader (or a queue): class names, torch's 0-based
    class indices (with their class names), or responses; and the class names of indices."""
    if all(isinstance(batch, (list, tuple)) and all(isinstance(t, str) for t in batch) for batch in batches):
        return np.array([label for batch in batches for label in batch]), None  # class names
    targets = _joined(caller, "T", batches, None)
    if isinstance(targets, DLArray):
        return targets, None
    if given != "auto":
        return dlarray(targets, given[index]), None
    if not targets.is_floating_point() and targets.ndim == 1:  # torch's 0-based class indices
        if int(targets.min()) < 0:  # Python's negative indexing would name a class silently
            raise DLFormatError(
                f"{caller}: integer targets are 0-based class indices; got {int(targets.min())}"
            )
        classes = [str(k) for k in range(int(targets.max()) + 1)]
        return np.array([classes[int(k)] for k in targets]), classes
    if targets.ndim <= 2:
        return dlarray(targets.reshape(len(targets), -1).float(), "BC"), None
    raise DLFormatError(
        f"{caller}: give TargetDataFormats for targets of size {_validate.matlab_size(targets.shape)} "
        '(batch-first, e.g. "BCT")'
    )


def _read_queue(caller: str, queue: MiniBatchQueue, width: int) -> list[list[Any]]:
    """A minibatchqueue's outputs (``width``: the predictors, then the targets), output by output."""
    if queue.NumOutputs != width:
        what = "two outputs, the predictors and the targets" if width == 2 else f"{width} outputs"
        raise DLFormatError(
            f"{caller}: the minibatchqueue must have {what} (one per network input, then one per network "
            f"output); it has {queue.NumOutputs}"
        )
    outputs: list[list[Any]] = [[] for _ in range(width)]
    for batch in queue:
        for part, value in zip(outputs, batch, strict=True):
            part.append(value)
    if not outputs[0]:
        raise DLFormatError(f"{caller}: the minibatchqueue returns no mini-batch")
    for index, part in enumerate(outputs):
        if not all(isinstance(value, DLArray) and "B" in value._fmt for value in part):
            raise DLFormatError(
                f'{caller}: the minibatchqueue\'s output {index + 1} needs a format with "B" '
                "(MiniBatchFormat, with OutputAsDlarray true)"
            )
    return outputs


def _input_format(caller: str, layer: Any, given: Any, index: int) -> str | None:
    if given != "auto":
        return str(given[index])
    return next((fmt for kind, fmt in _BATCH_FIRST.items() if isinstance(layer, kind)), None)


def _joined(caller: str, what: str, batches: list[Any], fmt: str | None) -> Any:
    """Mini-batches joined along their observations: dlarrays along ``B``, tensors along their first
    (batch) dimension, then labelled ``fmt`` when given."""
    if all(isinstance(b, DLArray) for b in batches):
        formats = {b._fmt for b in batches}
        if len(formats) != 1 or "B" not in next(iter(formats)):
            raise DLFormatError(
                f'{caller}: the mini-batches of {what} must share one format with "B"; got {sorted(formats)}'
            )
        label = formats.pop()
        return dlarray(_concatenated(caller, what, [b._data for b in batches], label.index("B")), label)
    tensors = [torch.as_tensor(np.asarray(b) if not isinstance(b, torch.Tensor) else b) for b in batches]
    data = _concatenated(caller, what, tensors, 0)
    if what == "T":
        return data
    if fmt is None:
        raise DLFormatError(
            f"{caller}: give InputDataFormats for predictors of size {_validate.matlab_size(data.shape)} "
            'from a Dataset / DataLoader, written for the batch-first data (e.g. "BCT")'
        )
    if len(fmt) != data.ndim:
        raise DLFormatError(
            f'{caller}: X has {data.ndim} dimensions; its format "{fmt}" has {len(fmt)} labels'
        )
    return dlarray(data if data.is_floating_point() else data.float(), fmt)


def _concatenated(caller: str, what: str, parts: list[torch.Tensor], dimension: int) -> torch.Tensor:
    sizes = {tuple(s for d, s in enumerate(p.shape) if d != dimension) for p in parts}
    if len(sizes) > 1:
        raise DLFormatError(
            f"{caller}: the mini-batches of {what} differ in size apart from their observations (sequences "
            "padded per mini-batch?); give the sequences as a list, which training pads per mini-batch"
        )
    return torch.cat(parts, dimension)


def _is_matrix_list(value: Any) -> bool:
    """A list (or a NumPy object array, MATLAB's cell array) of matrices."""
    return (
        (isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.dtype.kind == "O"))
        and len(value) > 0
        and all(isinstance(item, (torch.Tensor, np.ndarray)) and item.ndim == 2 for item in value)
    )


def _transposed(items: Any) -> list[Any]:
    return [item.T for item in list(items)]


def oriented(caller: str, layer: Any, X: Any, T: Any) -> tuple[Any, Any]:
    """trainnet's vector sequences as dlformat's ``C×T`` lists: a list of ``s×c`` matrices (every one
    with the input layer's ``c`` columns, MATLAB's trainnet layout, taken also when ``s = c``)
    transposed, with its list of ``s×r`` target sequences; a list of ``c×s`` matrices as it is."""
    if (
        not isinstance(layer, SequenceInputLayer)
        or not isinstance(layer.InputSize, int)
        or not _is_matrix_list(X)
    ):
        return X, T
    channels = layer.InputSize
    if all(item.shape[1] == channels for item in X):
        return _transposed(X), _transposed(T) if _is_matrix_list(T) else T
    if all(item.shape[0] == channels for item in X):
        return X, T
    raise DLFormatError(
        f"{caller}: the sequences must all be s×{channels} matrices (trainnet's layout, time first) or all "
        f"{channels}×s (channels first), for the {channels} channels of the input layer"
    )
