"""MATLAB's ``minibatchqueue``: mini-batches of in-memory data for a custom training loop.

MATLAB's ``minibatchqueue`` reads a datastore; dlformat's reads what Python code holds: tensors
and NumPy arrays, lists of observations (MATLAB's cell arrays, e.g. sequences of different
lengths), a ``torch.utils.data.Dataset``, or several of them side by side (MATLAB's ``combine``).
Each mini-batch is preprocessed by ``MiniBatchFcn``, cast by ``OutputCast``, moved by
``OutputEnvironment`` and labelled by ``MiniBatchFormat`` as MATLAB does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Sized
from typing import Any, cast

import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset

from .. import _format, _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from .._options import matlab_function

__all__ = ["MiniBatchQueue", "minibatchqueue"]

CASTS = {
    "single": torch.float32,
    "double": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "logical": torch.bool,
}
ENVIRONMENTS = ("auto", "gpu", "cpu")
PARTIAL = ("return", "discard")


class _Source:
    """One data argument: ``count`` observations of ``width`` variables."""

    def __init__(self, position: int, data: Any) -> None:
        self.position = position
        self.data = data
        if isinstance(data, DLArray):
            raise DLFormatError(
                f"minibatchqueue: data argument {position} is a dlarray; pass its data (dlf.stripdims(X)) "
                "and label the mini-batches with MiniBatchFormat"
            )
        if isinstance(data, np.ndarray):
            self.data = dlarray(data)._data
        if isinstance(self.data, torch.Tensor):
            if self.data.ndim == 0:
                raise DLFormatError(
                    f"minibatchqueue: data argument {position} is a scalar; it holds no observations"
                )
            self.kind, self.width = "array", 1
        elif isinstance(data, (list, tuple)):
            self.kind, self.width = "list", 1
        elif isinstance(data, IterableDataset) or not isinstance(data, Dataset):
            raise DLFormatError(
                f"minibatchqueue: data argument {position} must be a tensor, a NumPy array, a list of "
                "observations (MATLAB's cell array) or a map-style torch Dataset (with len); got "
                f"{_validate.describe(data)}"
            )
        else:
            self.kind = "dataset"
            if len(cast(Sized, data)) == 0:
                self.width = 1
            else:
                first = data[0]
                self.width = len(first) if isinstance(first, (tuple, list)) else 1

    def count(self, dimension: int) -> int:
        if self.kind == "array":
            return int(self.data.shape[dimension])
        return len(self.data)

    def take(self, indices: torch.Tensor, dimension: int) -> list[Any]:
        """The observations at ``indices``, one entry per variable (arrays sliced, others listed)."""
        if self.kind == "array":
            return [self.data.index_select(dimension, indices.to(self.data.device))]
        if self.kind == "list":
            return [[self.data[index] for index in indices.tolist()]]
        items = [self.data[index] for index in indices.tolist()]
        if self.width == 1 and not (items and isinstance(items[0], (tuple, list))):
            return [items]
        return [[item[variable] for item in items] for variable in range(self.width)]


class MiniBatchQueue:
    """MATLAB's ``minibatchqueue`` object; create it with :func:`minibatchqueue`.

    Methods (MATLAB's functions on it): ``hasdata()``, ``next()`` (also Python's ``next(mbq)``),
    ``shuffle()``, ``reset()``; iterating (``for X, T in mbq``) resets the queue and yields every
    mini-batch of one pass, in the current order.
    """

    def __init__(
        self,
        data: tuple[Any, ...],
        numOutputs: int | None,
        MiniBatchSize: int,
        MiniBatchFcn: Any,
        MiniBatchFormat: Any,
        PartialMiniBatch: str,
        OutputCast: Any,
        OutputEnvironment: Any,
        OutputAsDlarray: Any,
    ) -> None:
        if not data:
            raise DLFormatError(
                "minibatchqueue needs data: a tensor, NumPy array, list or Dataset (or several)"
            )
        self._sources = [_Source(position, value) for position, value in enumerate(data, 1)]
        variables = sum(source.width for source in self._sources)
        self._function = _validate.choice_or_callable(
            "minibatchqueue MiniBatchFcn", MiniBatchFcn, ("collate",)
        )
        if numOutputs is None:
            numOutputs = variables
        self._outputs = _validate.positive_integer("minibatchqueue numOutputs", numOutputs)
        if self._function == "collate" and self._outputs != variables:
            raise DLFormatError(
                f"minibatchqueue: the data has {variables} variable(s) and numOutputs is {self._outputs}; "
                "without MiniBatchFcn each variable is one output"
            )
        self.MiniBatchSize = _validate.positive_integer("minibatchqueue MiniBatchSize", MiniBatchSize)
        self.PartialMiniBatch = _validate.choice("minibatchqueue PartialMiniBatch", PartialMiniBatch, PARTIAL)
        count = self._outputs
        self.MiniBatchFormat = tuple(
            _validate.text("minibatchqueue MiniBatchFormat", fmt)
            for fmt in _per_output("MiniBatchFormat", MiniBatchFormat, count)
        )
        for fmt in self.MiniBatchFormat:
            if fmt:
                _format.check_format(fmt)
        self.OutputCast = tuple(
            _validate.choice("minibatchqueue OutputCast", cast, tuple(CASTS))
            for cast in _per_output("OutputCast", OutputCast, count)
        )
        self.OutputEnvironment = tuple(
            _validate.choice("minibatchqueue OutputEnvironment", place, ENVIRONMENTS)
            for place in _per_output("OutputEnvironment", OutputEnvironment, count)
        )
        for place in self.OutputEnvironment:
            if place == "gpu" and not torch.cuda.is_available():
                raise DLFormatError(
                    'minibatchqueue: OutputEnvironment "gpu" needs a CUDA device; none is available'
                )
        self.OutputAsDlarray = tuple(
            _flag(flag) for flag in _per_output("OutputAsDlarray", OutputAsDlarray, count)
        )
        # the dimension each array variable holds its observations in
        self._dimensions = []
        variable = 0
        for source in self._sources:
            for _ in range(source.width):
                if source.kind == "array":
                    self._dimensions.append(self._observation_dimension(variable, source.data.ndim))
                else:
                    self._dimensions.append(0)
                variable += 1
        counts = []
        variable = 0
        for source in self._sources:
            counts.append(source.count(self._dimensions[variable]))
            variable += source.width
        if len(set(counts)) > 1:
            shown = ", ".join(
                f"argument {source.position}: {n}" for source, n in zip(self._sources, counts, strict=True)
            )
            raise DLFormatError(
                f"minibatchqueue: the data arguments hold different numbers of observations ({shown})"
            )
        self.NumObservations = counts[0]
        self._order = torch.arange(self.NumObservations)
        self._position = 0

    # -- MATLAB's properties --------------------------------------------------------------------
    @property
    def NumOutputs(self) -> int:
        return self._outputs

    @property
    def MiniBatchFcn(self) -> str | Callable[..., Any]:
        return self._function

    def _batch_position(self, variable: int) -> int | None:
        """Where ``MiniBatchFormat`` puts ``B`` for this variable, if it gives one and the variable is
        an output as it is (no ``MiniBatchFcn``: the formats then describe the function's outputs)."""
        if self._function != "collate":
            return None
        if variable < len(self.MiniBatchFormat) and "B" in self.MiniBatchFormat[variable]:
            return self.MiniBatchFormat[variable].index("B")
        return None

    def _observation_dimension(self, variable: int, ndim: int) -> int:
        position = self._batch_position(variable)
        return position if position is not None and position < ndim else ndim - 1

    # -- MATLAB's functions ---------------------------------------------------------------------
    def hasdata(self) -> bool:
        """MATLAB's ``hasdata(mbq)``: whether ``next`` has a mini-batch to return."""
        left = self.NumObservations - self._position
        return left >= self.MiniBatchSize if self.PartialMiniBatch == "discard" else left > 0

    def reset(self) -> MiniBatchQueue:
        """MATLAB's ``reset(mbq)``: start again from the first mini-batch, in the same order."""
        self._position = 0
        return self

    def shuffle(self) -> MiniBatchQueue:
        """MATLAB's ``shuffle(mbq)``: a new random order of the observations (torch's global
        generator, as MATLAB's ``rng``), and a reset."""
        self._order = torch.randperm(self.NumObservations)
        return self.reset()

    def next(self) -> Any:
        """MATLAB's ``[X1, ..., Xn] = next(mbq)``: the next mini-batch, one value per output (a tuple
        for several)."""
        if not self.hasdata():
            raise DLFormatError(
                "minibatchqueue next: the queue has no more data; check hasdata() first, and call reset() or "
                "shuffle() to start a new pass"
            )
        indices = self._order[self._position : self._position + self.MiniBatchSize]
        self._position += len(indices)
        raw: list[Any] = []
        variable = 0
        for source in self._sources:
            dimension = self._dimensions[variable]
            raw += source.take(indices, dimension)
            variable += source.width
        if self._function == "collate":
            outputs = [self._collate(variable, value) for variable, value in enumerate(raw)]
        else:
            result = cast("Callable[..., Any]", self._function)(*raw)
            outputs = list(result) if isinstance(result, tuple) else [result]
            if len(outputs) != self._outputs:
                raise DLFormatError(
                    f"minibatchqueue: MiniBatchFcn returned {len(outputs)} output(s); the queue has "
                    f"{self._outputs} (give numOutputs, e.g. minibatchqueue(X, T, 2, MiniBatchFcn=f))"
                )
        finished = tuple(self._finish(index, value) for index, value in enumerate(outputs))
        return finished[0] if len(finished) == 1 else finished

    def __next__(self) -> Any:
        return self.next()

    def __iter__(self) -> Iterator[Any]:
        self.reset()
        while self.hasdata():
            yield self.next()

    # -- mini-batch assembly --------------------------------------------------------------------
    def _collate(self, variable: int, value: Any) -> Any:
        """MATLAB's ``"collate"``: an array's slice as it is; a list's observations stacked along the
        ``B`` position of the variable's format (a new last dimension without one)."""
        position = self._batch_position(variable)
        if isinstance(value, torch.Tensor):
            dimension = self._dimensions[variable]
            if position is not None and position > dimension:  # a vector of observations, laid along B
                shape = list(value.shape)
                value = value.reshape(shape[:dimension] + [1] * (position - dimension) + shape[dimension:])
            return value
        items = [_observation(variable, item) for item in value]
        shapes = {tuple(item.shape) for item in items}
        if len(shapes) > 1:
            shown = ", ".join(_validate.matlab_size(shape) or "scalar" for shape in sorted(shapes)[:4])
            raise DLFormatError(
                f"minibatchqueue: the observations of variable {variable + 1} have different sizes "
                f"({shown}); give MiniBatchFcn to combine them, e.g. padding sequences to one length"
            )
        ndim = items[0].ndim
        at = ndim if position is None else min(position, ndim)
        stacked = torch.stack(items, at)
        if position is not None and position > ndim:
            shape = list(stacked.shape)
            stacked = stacked.reshape(shape[:at] + [1] * (position - ndim) + shape[at:])
        return stacked

    def _finish(self, index: int, value: Any) -> Any:
        """OutputCast, OutputEnvironment and OutputAsDlarray/MiniBatchFormat on one output."""
        fmt = self.MiniBatchFormat[index]
        if isinstance(value, DLArray):
            data, given = value._data, value._fmt
        elif isinstance(value, (torch.Tensor, np.ndarray, np.generic, int, float, bool)):
            data, given = _observation(index, value), ""
        else:
            return value  # not numeric (a list, strings): returned as MiniBatchFcn made it
        data = data.to(device=self._device(index), dtype=CASTS[self.OutputCast[index]])
        if not self.OutputAsDlarray[index]:
            return data
        if given:
            if fmt and fmt != given:
                raise DLFormatError(
                    f'minibatchqueue: output {index + 1} is a "{given}" dlarray; MiniBatchFormat says "{fmt}"'
                )
            return DLArray._wrap(data, given)
        if len(fmt) < data.ndim and fmt:
            raise DLFormatError(
                f'minibatchqueue: MiniBatchFormat "{fmt}" of output {index + 1} labels {len(fmt)} '
                f"dimensions; the mini-batch has {data.ndim} (size {_validate.matlab_size(data.shape)})"
            )
        return dlarray(data, fmt or None)

    def _device(self, index: int) -> torch.device:
        place = self.OutputEnvironment[index]
        if place == "gpu" or (place == "auto" and torch.cuda.is_available()):
            return torch.device("cuda")
        return torch.device("cpu")

    def __repr__(self) -> str:
        def cells(values: Sequence[Any]) -> str:
            return "{" + "  ".join(f"'{value}'" for value in values) + "}"

        function = (
            "'collate'" if self._function == "collate" else getattr(self._function, "__name__", "function")
        )
        rows = [
            f"minibatchqueue with {self._outputs} output{'s' if self._outputs > 1 else ''} and properties:",
            "",
            "   Mini-batch creation:",
            f"           MiniBatchSize: {self.MiniBatchSize}",
            f"        PartialMiniBatch: '{self.PartialMiniBatch}'",
            f"            MiniBatchFcn: {function}",
            "",
            "   Outputs:",
            f"              OutputCast: {cells(self.OutputCast)}",
            f"         OutputAsDlarray: [{' '.join(str(int(flag)) for flag in self.OutputAsDlarray)}]",
            f"         MiniBatchFormat: {cells(self.MiniBatchFormat)}",
            f"       OutputEnvironment: {cells(self.OutputEnvironment)}",
        ]
        return "\n".join(rows)


def _observation(variable: int, item: Any) -> torch.Tensor:
    if isinstance(item, DLArray):
        return item._data
    if isinstance(item, torch.Tensor):
        return item
    try:
        return dlarray(item)._data
    except DLFormatError:
        raise DLFormatError(
            f"minibatchqueue: an observation of variable {variable + 1} is not numeric: "
            f"{_validate.describe(item)}; give MiniBatchFcn to turn such observations into arrays, and "
            "OutputAsDlarray=False for outputs that stay non-numeric"
        ) from None


def _per_output(name: str, value: Any, count: int) -> list[Any]:
    """One value per output: a single value applies to every output, a list gives one each."""
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise DLFormatError(
                f"minibatchqueue {name} has {len(value)} entries; the queue has {count} output(s) (give one "
                "value for all, or one per output)"
            )
        return list(value)
    return [value] * count


def _flag(value: object) -> bool:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise DLFormatError(
        f"minibatchqueue OutputAsDlarray must be true or false; got {_validate.describe(value)}"
    )


@matlab_function
def minibatchqueue(
    *data: Any,
    MiniBatchSize: int = 128,
    MiniBatchFcn: Any = "collate",
    MiniBatchFormat: Any = "",
    PartialMiniBatch: str = "return",
    OutputCast: Any = "single",
    OutputEnvironment: Any = "auto",
    OutputAsDlarray: Any = True,
) -> MiniBatchQueue:
    """MATLAB's ``mbq = minibatchqueue(ds, numOutputs, Name=Value)`` over in-memory data.

    Each positional argument is one data source: a tensor or NumPy array (observations along the
    dimension where its output's ``MiniBatchFormat`` puts ``B`` when there is no ``MiniBatchFcn``,
    else along the last dimension, as MATLAB arrays hold observations: ``X(:,:,:,n)``, ``X(:,n)``),
    a list of observations (MATLAB's cell array; stacked along ``B``, or ``MiniBatchFcn`` combines
    them, e.g. padding sequences of different lengths), or a map-style torch ``Dataset`` (each item
    one observation, a tuple for several variables). A trailing integer is ``numOutputs``, for a
    ``MiniBatchFcn`` that returns a different number of outputs than there are variables.

    Options (MATLAB's, with MATLAB's defaults): ``MiniBatchSize`` (128); ``MiniBatchFcn``
    (``"collate"``, or a function taking one argument per variable: arrays as slices, other
    variables as lists of observations); ``MiniBatchFormat`` (``""``; one per output, e.g.
    ``("BTC", "CBT")``); ``PartialMiniBatch`` (``"return"`` or ``"discard"``); ``OutputCast``
    (``"single"``, ``"double"``, integer types, ``"logical"``); ``OutputEnvironment``
    (``"auto"``: the GPU when there is one, ``"gpu"``, ``"cpu"``); ``OutputAsDlarray`` (true).

    Examples:
        >>> mbq = dlf.minibatchqueue(torch.randn(3, 10), MiniBatchSize=4, MiniBatchFormat="CB")
        >>> X = mbq.next()
        >>> dlf.dims(X), tuple(X.shape)
        ('CB', (3, 4))
        >>> [tuple(X.shape) for X in mbq]  # one pass: 10 observations in 4, 4 and 2
        [(3, 4), (3, 4), (3, 2)]
    """
    numOutputs = None
    if data and isinstance(data[-1], (int, np.integer)) and not isinstance(data[-1], bool):
        numOutputs, data = int(data[-1]), data[:-1]
    return MiniBatchQueue(
        data,
        numOutputs,
        MiniBatchSize,
        MiniBatchFcn,
        MiniBatchFormat,
        PartialMiniBatch,
        OutputCast,
        OutputEnvironment,
        OutputAsDlarray,
    )
