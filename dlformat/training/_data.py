"""Training data as MATLAB passes it to ``trainnet`` / ``trainNetwork``, cut into mini-batches.

Predictors: a formatted dlarray (batched along ``B``); an array with ``InputDataFormats`` or,
left ``"auto"``, the layout MATLAB documents for the network's input layer (``N×C`` for
``featureInputLayer``, ``H×W×C×N`` for ``imageInputLayer``, ``H×W×D×C×N`` for
``image3dInputLayer``); or a list of sequences (MATLAB's cell array of ``C×T`` arrays, time
last), padded per mini-batch with :func:`dlformat.padsequences`. Targets: an ``N×R`` array
(``N`` responses as a vector), class labels (a categorical vector, or a NumPy array or list of
names, one-hot encoded with the classes), or a list of ``R×T`` sequences; ``TargetDataFormats``
for other arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._batching import padsequences
from .._categorical import Categorical
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from .._functions._labels import onehotencode
from ..layers.input import STATISTICS_OF as NORMALIZATION_STATISTICS
from ..layers.input import FeatureInputLayer, Image3DInputLayer, ImageInputLayer

__all__ = [
    "Column",
    "Columns",
    "Data",
    "as_arguments",
    "input_format",
    "is_labels",
    "target_format",
    "with_input_statistics",
]

_SEQUENCE_FORMATS = {2: "CTB", 3: "SCTB", 4: "SSCTB", 5: "SSSCTB"}


def is_labels(value: Any) -> bool:
    """Class labels: a categorical vector, strings in a NumPy array (kind U/O) or a list of strings."""
    if isinstance(value, Categorical):  # N, N×1 or 1×N: MATLAB's categorical vector of responses
        return value.ndim <= 1 or (value.ndim == 2 and 1 in value.shape)
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or value.dtype.kind not in "UO":
            return False
        return value.dtype.kind == "U" or all(isinstance(item, str) for item in value)
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(item, str) for item in value)


class Column:
    """One data argument (predictors or targets): its observation count and its mini-batches."""

    def __init__(
        self,
        caller: str,
        what: str,
        value: Any,
        fmt: str | None,
        options: Any,
        classes: Sequence[str] | None = None,
        indices: bool = False,
    ) -> None:
        self.caller, self.what, self.options = caller, what, options
        self.sequences: list[torch.Tensor] | None = None
        self.data: torch.Tensor | None = None
        self.fmt = ""
        if is_labels(value):
            labels = np.asarray(value, dtype=object).reshape(-1)  # a categorical's names, None undefined
            if isinstance(value, Categorical) and (value.codes < 0).any():
                raise DLFormatError(
                    f"{caller}: {what} holds undefined labels (<undefined>, element "
                    f"{int(np.flatnonzero(value.codes.reshape(-1) < 0)[0]) + 1}); every observation needs "
                    "a class"
                )
            if classes is None:
                raise DLFormatError(
                    f"{caller}: {what} are class labels, but the network's classes are not known"
                )
            unknown = sorted({str(label) for label in labels} - set(classes))
            if unknown:
                raise DLFormatError(f"{caller}: {what} hold labels of no class: {', '.join(unknown[:5])}")
            if indices:  # MATLAB's 1-based class indices, for "index-crossentropy"
                position = {name: index + 1 for index, name in enumerate(classes)}
                self.data = torch.tensor([[position[str(label)]] for label in labels], dtype=torch.float32)
            else:
                self.data = onehotencode(labels, 2, "single", ClassNames=list(classes))
            self.fmt = "BC"
        elif isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.dtype.kind == "O"):
            value = list(value)  # MATLAB's cell array: a list, or a NumPy object array, of sequences
            if not value:
                raise DLFormatError(f"{caller}: {what} is an empty list")
            self.sequences = [torch.as_tensor(_validate_numeric(caller, what, item)) for item in value]
            rank = self.sequences[0].ndim
            if rank not in _SEQUENCE_FORMATS or any(s.ndim != rank for s in self.sequences):
                raise DLFormatError(
                    f"{caller}: {what} must be a list of C×T sequences (or S×...×C×T), all of one rank; "
                    f"got ranks {sorted({s.ndim for s in self.sequences})}"
                )
            self.fmt = _SEQUENCE_FORMATS[rank]
        elif isinstance(value, DLArray):
            if not value._fmt or "B" not in value._fmt:
                raise DLFormatError(
                    f'{caller}: {what} as a dlarray needs a format with "B" (the observations)'
                )
            self.data, self.fmt = value._data, value._fmt
        else:
            data = torch.as_tensor(_validate_numeric(caller, what, value))
            if data.ndim == 1:
                data = data.reshape(-1, 1)
            if fmt is None:
                raise DLFormatError(
                    f"{caller}: give {'InputDataFormats' if what == 'X' else 'TargetDataFormats'} for {what} "
                    f"of size {_validate.matlab_size(data.shape)}: its layout could not be inferred"
                )
            if len(fmt) != data.ndim and not (len(fmt) > data.ndim and fmt.endswith("B")):
                raise DLFormatError(
                    f'{caller}: {what} has {data.ndim} dimensions; its format "{fmt}" has {len(fmt)} labels'
                )
            self.data, self.fmt = data.reshape(*data.shape, *(1,) * (len(fmt) - data.ndim)), fmt
        if self.data is not None and not self.data.is_floating_point():
            self.data = self.data.float()

    def __len__(self) -> int:
        if self.sequences is not None:
            return len(self.sequences)
        assert self.data is not None  # one of the two is set by the constructor
        return int(self.data.shape[self.fmt.index("B")])

    def element_sizes(self) -> tuple[int, ...]:
        """The sizes of one observation's ``S...`` and ``C`` dimensions (one time step of a
        sequence), in canonical order: what an input layer's ``InputSize`` must match."""
        if self.sequences is not None:
            first = self.sequences[0]
            labels, shape = "S" * (first.ndim - 2) + "CT", tuple(first.shape)
        else:
            assert self.data is not None
            labels, shape = self.fmt, tuple(self.data.shape)
        return tuple(size for label in "SC" for d, size in enumerate(shape) if labels[d] == label)

    def statistic_values(self, over: str) -> tuple[torch.Tensor, tuple[int, ...]]:
        """Every value of the data as a K×M float64 matrix (padding excluded), one row per value
        a statistic covers: per channel (``over="channel"``), per element (``"element"``: each
        spatial position of each channel, ``S...×C`` in canonical order) or one row (``"all"``);
        also the sizes of those rows' dimensions (``(C,)``, ``(h, w, C)``, ``()``)."""
        keep = {"channel": "C", "element": "SC", "all": ""}[over]
        if self.sequences is not None:  # each S...×C×T: time is the last dimension
            first = self.sequences[0]
            labels = "S" * (first.ndim - 2) + "CT"
            parts = [_rows(s, labels, keep) for s in self.sequences]
            return torch.cat([rows for rows, _ in parts], 1), parts[0][1]
        assert self.data is not None
        X = dlarray(self.data, self.fmt)  # canonical order: S..., C, B, T, U
        return _rows(X._data, X._fmt, keep)

    def batch(self, indices: torch.Tensor, device: torch.device, dtype: torch.dtype) -> DLArray:
        if self.sequences is not None:
            chosen = [self.sequences[int(i)] for i in indices]
            rank = chosen[0].ndim
            padded = padsequences(
                chosen,
                rank,
                Length=self.options.SequenceLength,
                Direction=self.options.SequencePaddingDirection,
                PaddingValue=self.options.SequencePaddingValue,
            )
            return dlarray(torch.as_tensor(padded).to(device=device, dtype=dtype), self.fmt)
        assert self.data is not None
        picked = _selected(self.data, self.fmt.index("B"), indices.to(self.data.device))
        return dlarray(picked.to(device=device, dtype=dtype), self.fmt)


class Columns:
    """Several data arguments of one observation count (the predictors of a network with several
    inputs, or the targets of one with several outputs): their mini-batches come as a tuple."""

    def __init__(self, caller: str, what: str, columns: Sequence[Column]) -> None:
        counts = [len(column) for column in columns]
        if len(set(counts)) != 1:
            raise DLFormatError(
                f"{caller}: the {what} must all have one number of observations; they have {counts}"
            )
        self.columns = list(columns)

    def __len__(self) -> int:
        return len(self.columns[0])

    def batch(self, indices: torch.Tensor, device: torch.device, dtype: torch.dtype) -> tuple[DLArray, ...]:
        return tuple(column.batch(indices, device, dtype) for column in self.columns)


Data = Column | Columns  # the predictors, or the targets, of a training run


def as_arguments(batch: DLArray | tuple[DLArray, ...]) -> tuple[DLArray, ...]:
    """A mini-batch of one or several data arguments as the tuple a network or loss takes."""
    return batch if isinstance(batch, tuple) else (batch,)


def _rows(data: torch.Tensor, labels: str, keep: str) -> tuple[torch.Tensor, tuple[int, ...]]:
    """``data`` (labelled ``labels``) as a float64 matrix: the dimensions labelled in ``keep``
    (in their order) make the rows, every other one the columns; and the rows' sizes."""
    kept = [d for d, label in enumerate(labels) if label in keep]
    rest = [d for d in range(data.ndim) if d not in kept]
    sizes = tuple(data.shape[d] for d in kept)
    return data.permute(*kept, *rest).reshape(math.prod(sizes), -1).double(), sizes


def _selected(data: torch.Tensor, dimension: int, indices: torch.Tensor) -> torch.Tensor:
    """``data.index_select(dimension, indices)``, selecting in the data's memory order: a dlarray
    labelled over batch-first memory (``"BCSS"`` → ``"SSCB"``) keeps its batch-first memory, so
    the layers get the layout torch's kernels read fastest, and the copy reads whole rows."""
    strides = data.stride()
    order = sorted(range(data.ndim), key=lambda d: -strides[d])  # outermost dimension first
    physical = data.permute(order)
    if order == list(range(data.ndim)) or not physical.is_contiguous():
        return data.index_select(dimension, indices)
    picked = physical.index_select(order.index(dimension), indices)
    return picked.permute(sorted(range(data.ndim), key=order.__getitem__))


def _validate_numeric(caller: str, what: str, value: Any) -> Any:
    if isinstance(value, DLArray):
        return value._data
    if isinstance(value, (torch.Tensor, np.ndarray)) and (
        not isinstance(value, np.ndarray) or value.dtype.kind in "iufb"
    ):
        return value
    raise DLFormatError(
        f"{caller}: {what} must be numeric (tensors or NumPy arrays), a dlarray, or a list of sequences; "
        f"got {_validate.describe(value)}"
    )


def input_format(
    caller: str, layer: Any, given: str | tuple[str, ...], value: Any, index: int = 0, count: int = 1
) -> str | None:
    """The format of the predictors of network input ``index`` (of ``count``): InputDataFormats
    (one format per input), or MATLAB's layout for the input layer."""
    if given != "auto":
        if len(given) != count:
            raise DLFormatError(
                f"{caller}: InputDataFormats has {len(given)} format(s); the network has {count} input(s)"
            )
        return given[index]
    if isinstance(value, (DLArray, list, tuple)):
        return None
    if isinstance(layer, FeatureInputLayer):
        return "BC"
    if isinstance(layer, Image3DInputLayer):
        return "SSSCB"
    if isinstance(layer, ImageInputLayer):
        return "SSCB"
    return None


def target_format(given: str | tuple[str, ...], value: Any, index: int = 0) -> str | None:
    """The format of the targets of network output ``index``: TargetDataFormats (one format per
    output), or the layout MATLAB documents for its rank."""
    if given != "auto":
        return given[index]
    if isinstance(value, (DLArray, list, tuple)) or is_labels(value):
        return None
    rank = np.ndim(value) if not isinstance(value, torch.Tensor) else value.ndim
    return {1: "BC", 2: "BC", 4: "SSCB", 5: "SSSCB"}.get(rank)


def with_input_statistics(layer: Any, X: Column, reset: bool) -> Any:
    """The input layer with its normalization statistics computed from the training data, as
    MATLAB's training does (``ResetInputNormalization``: recomputed when true, otherwise only when
    missing), over what ``NormalizationDimension`` names: per channel (``"auto"``,
    ``"channel"``), per element (``"element"``) or one value (``"all"``). The layer itself when
    its normalization needs none."""
    how = getattr(layer, "Normalization", None)  # a network may start with a layer that is no input layer
    names = NORMALIZATION_STATISTICS.get(how) if isinstance(how, str) else None
    if not names or (not reset and all(getattr(layer, name) is not None for name in names)):
        return layer
    wanted, sizes = (*layer._spatial, layer._channels), X.element_sizes()
    if sizes != wanted:  # refused here, before the statistics are computed over the wrong dimensions
        raise DLFormatError(
            f"{X.caller}: {layer._caller()} needs {_validate.matlab_size(wanted)} "
            f"({'spatial × ' * len(layer._spatial)}channels) per observation to compute its normalization "
            f"statistics; {X.what} has {_validate.matlab_size(sizes) or 'no channels'} per observation"
        )
    dimension = layer.NormalizationDimension
    over = "channel" if dimension == "auto" else dimension
    values, sizes = X.statistic_values(over)
    computed = {
        "Mean": lambda: values.mean(1),
        "StandardDeviation": lambda: values.std(1),  # MATLAB's std: normalized by M - 1
        "Min": lambda: values.amin(1),
        "Max": lambda: values.amax(1),
    }
    # in the shape MATLAB gives such statistics: per channel 1×C for features, C×1 for vector
    # sequences, 1×1×C for images; per element the input's h×w×C (C×1 for vector sequences);
    # one value 1×1
    shape: tuple[int, ...]
    if over == "all":
        shape = (1, 1)
    elif over == "element":
        shape = sizes if len(sizes) > 1 else (*sizes, 1)
    elif isinstance(layer, FeatureInputLayer):
        shape = (1, layer.NumFeatures)
    elif isinstance(layer.InputSize, int):
        shape = (layer.InputSize, 1)
    else:
        shape = (*(1,) * (len(layer.InputSize) - 1), layer.InputSize[-1])
    config = layer.get_config()
    sample = X.data if X.sequences is None else X.sequences[0]
    dtype = sample.dtype if sample is not None and sample.is_floating_point() else torch.float32
    for name in names:
        config[name] = computed[name]().reshape(shape).to(dtype)
    return type(layer).from_config(config)
