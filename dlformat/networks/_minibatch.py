"""MATLAB's ``minibatchpredict`` (R2024a): predictions over mini-batches of in-memory data, with
MATLAB's sequence options for sequences of unequal length.

Each network input takes a list of observations (MATLAB's cell array, padded per mini-batch by
:func:`dlformat.padsequences`) or one array with a ``B`` dimension (cut into mini-batches).
Outputs are concatenated along ``B`` (``UniformOutput=True``) or returned one observation per
list element with the padding removed (``UniformOutput=False``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._batching import DIRECTIONS, padsequences
from .._dlarray import DLArray, dlarray, stripdims
from .._errors import DLFormatError
from .._format import check_format
from ..layers._call_state import CallValues
from ..layers.input import FeatureInputLayer, SequenceInputLayer, _ImageInputLayer
from ._graph import DLNetwork

__all__ = ["minibatchpredict"]

CALLER = "minibatchpredict"
LENGTHS = ("longest", "shortest")  # R2024a's minibatchpredict takes no number
MASK_PORT = "mask"  # the input port of layers with HasPaddingMaskInput


@dataclass
class _Batch:
    """One network input's share of a mini-batch: the data, and per observation the number of
    time steps it holds (``None``: an array cut along ``B``, nothing padded)."""

    X: DLArray
    lengths: list[int] | None = None


class _Input:
    """One network input's observations: a list of per-observation arrays, or one array with ``B``."""

    def __init__(self, name: str, value: Any, fmt: str | None, padding: float) -> None:
        self.name = name
        self.padding = padding
        self.is_list = isinstance(value, (list, tuple))
        if self.is_list:
            if not value:
                raise DLFormatError(
                    f"{CALLER}: input '{name}' is an empty list; give at least one observation"
                )
            self.items, self.observation_format = self._observations(value, fmt)
            self.count = len(self.items)
        else:
            self.array = self._batched(value, fmt)
            self.count = int(self.array.shape[self.array._fmt.index("B")])

    def _observations(self, items: Sequence[Any], fmt: str | None) -> tuple[list[torch.Tensor], str]:
        """The observations as tensors in the order of one per-observation format (``fmt`` less ``B``)."""
        formats = {item._fmt for item in items if isinstance(item, DLArray) and item._fmt}
        if formats:
            if len(formats) > 1 or not all(isinstance(item, DLArray) for item in items):
                raise DLFormatError(
                    f"{CALLER}: the observations of input '{self.name}' must all be dlarrays of one "
                    f"format or all plain arrays; got formats {', '.join(sorted(formats))}"
                )
            (own,) = formats
            if "B" in own:
                raise DLFormatError(
                    f"{CALLER}: each observation of input '{self.name}' is one observation, without \"B\"; "
                    f'got format "{own}"'
                )
            return [item._data for item in items], own
        if fmt is None:
            raise DLFormatError(
                f"{CALLER}: input '{self.name}' has no input layer to give its format; pass "
                'InputDataFormats (one format per input, with "B") or formatted dlarrays'
            )
        tensors = [
            torch.as_tensor(np.asarray(item)) if not isinstance(item, torch.Tensor) else item
            for item in items
        ]
        tensors = [item._data if isinstance(item, DLArray) else item for item in tensors]
        return tensors, fmt.replace("B", "")

    def _batched(self, value: Any, fmt: str | None) -> DLArray:
        if isinstance(value, DLArray) and value._fmt:
            if "B" not in value._fmt:
                raise DLFormatError(
                    f"{CALLER}: input '{self.name}' must have a \"B\" dimension to cut into mini-batches; "
                    f'got format "{value._fmt}" (a list of observations is padded instead)'
                )
            return value
        if fmt is None:
            raise DLFormatError(
                f"{CALLER}: input '{self.name}' has no input layer to give its format; pass "
                'InputDataFormats (one format per input, with "B"), a formatted dlarray, or a list of '
                "sequences"
            )
        data = value._data if isinstance(value, DLArray) else value
        return dlarray(data, fmt)

    def batch(self, start: int, stop: int, length: str, direction: str) -> _Batch:
        if not self.is_list:
            axis = self.array._fmt.index("B")
            return _Batch(DLArray._wrap(self.array._data.narrow(axis, start, stop - start), self.array._fmt))
        items = self.items[start:stop]
        fmt = self.observation_format
        if "T" not in fmt:
            padded = padsequences(items, len(fmt) + 1)  # equal sizes: stacked along a new last dimension
            return _Batch(dlarray(padded, fmt + "B"))
        time = fmt.index("T")
        padded = padsequences(items, time + 1, Length=length, Direction=direction, PaddingValue=self.padding)
        target = padded.shape[time]
        lengths = [min(int(item.shape[time]) if item.ndim > time else 1, target) for item in items]
        return _Batch(dlarray(padded, fmt + "B"), lengths)


def _auto_format(net: DLNetwork, port: tuple[str, str]) -> str | None:
    """MATLAB's ``"auto"`` InputDataFormats for an input: vector sequences ``s×c`` per observation
    (``"TCB"``), image sequences ``h×w×c×s`` (``"SSCTB"``), features ``N×c`` (``"BC"``), images
    ``h×w×c×N`` (``"SSCB"``); ``None`` for an input without an input layer."""
    if port[1]:
        return None
    layer = net._by_name[port[0]]
    spatial = "S" * len(getattr(layer, "_spatial", ()))
    if isinstance(layer, SequenceInputLayer):
        return (spatial + "CTB") if spatial else "TCB"
    if isinstance(layer, FeatureInputLayer):
        return "BC"
    if isinstance(layer, _ImageInputLayer):
        return spatial + "CB"
    return None


def _check_auto_layout(net: DLNetwork, port: tuple[str, str], data: _Input) -> None:
    """MATLAB's ``"auto"`` layout of a vector sequence is ``s×c``; a ``c×s`` list says how to pass it."""
    layer = net._by_name[port[0]]
    if not data.is_list or data.observation_format != "TC" or not isinstance(layer, SequenceInputLayer):
        return
    channels = layer._channels
    for number, item in enumerate(data.items, 1):
        shape = tuple(item.shape)
        if len(shape) == 2 and shape[1] != channels:
            hint = (
                '; it looks like c×s: pass InputDataFormats="CTB" (or dlarrays with format "CT")'
                if shape[0] == channels
                else ""
            )
            raise DLFormatError(
                f"{CALLER}: sequence {number} of input '{data.name}' is {_validate.matlab_size(shape)}; "
                f'MATLAB\'s "auto" layout is s×c (time steps × {channels} channels, "TCB"){hint}'
            )


def _formats(option: Any, count: int, name: str) -> list[str | None]:
    """``"auto"``, one format, or one per input (``"auto"`` allowed per input); each with ``B``."""
    items = [option] * count if isinstance(option, str) else list(option)
    if len(items) != count:
        raise DLFormatError(f"{CALLER}: {name} must give one format per input ({count}); got {len(items)}")
    formats: list[str | None] = []
    for item in items:
        if item == "auto":
            formats.append(None)
            continue
        fmt = check_format(item)
        if "B" not in fmt:
            raise DLFormatError(f'{CALLER}: each of {name} must have a "B" dimension; got "{fmt}"')
        formats.append(fmt)
    return formats


def _padding_mask(source: _Batch, direction: str) -> DLArray:
    """Ones where ``source`` holds data, zeros where padding: its format, size 1 but for ``B`` and ``T``."""
    X = source.X
    lengths = torch.tensor(source.lengths, device=X.device)
    steps = X.shape[X._fmt.index("T")]
    position = torch.arange(steps, device=X.device)
    first = steps - lengths if direction == "left" else torch.zeros_like(lengths)
    valid = (position[None, :] >= first[:, None]) & (position[None, :] < (first + lengths)[:, None])
    shape = [size if label in "BT" else 1 for label, size in zip(X._fmt, X.shape, strict=True)]
    return DLArray._wrap(valid.to(X.dtype).reshape(shape), X._fmt)


def _unpadded(Y: DLArray, index: int, batch: _Batch | None, direction: str, fmt: str | None) -> Any:
    """Observation ``index`` of ``Y`` without ``B``; a sequence output as long as the padded input
    loses the padding (its own time steps only)."""
    axis = Y._fmt.index("B")
    data = Y._data.select(axis, index)
    out = Y._fmt.replace("B", "")
    if batch is not None and batch.lengths is not None and "T" in out:
        time = out.index("T")
        padded_steps = batch.X.shape[batch.X._fmt.index("T")]
        if data.shape[time] == padded_steps:
            kept = batch.lengths[index]
            data = data.narrow(time, padded_steps - kept if direction == "left" else 0, kept)
    item = DLArray._wrap(data, out)
    return item if fmt is None else stripdims(item, fmt.replace("B", ""))


def _uniform(pieces: list[DLArray], fmt: str | None, name: str) -> Any:
    """The mini-batches' outputs concatenated along ``B``."""
    sizes = {tuple(size for label, size in zip(Y._fmt, Y.shape, strict=True) if label != "B") for Y in pieces}
    if len(sizes) > 1:
        raise DLFormatError(
            f"{CALLER}: output '{name}' has different sizes in different mini-batches "
            f"({', '.join(sorted(_validate.matlab_size(s) for s in sizes))}), as sequences padded per "
            "mini-batch do; pass UniformOutput=False (one output per observation, padding removed), "
            "or a MiniBatchSize of at least the number of observations"
        )
    Y = DLArray._wrap(
        torch.cat([piece._data for piece in pieces], dim=pieces[0]._fmt.index("B")), pieces[0]._fmt
    )
    return Y if fmt is None else stripdims(Y, fmt)


def minibatchpredict(
    net: DLNetwork,
    *X: Any,
    MiniBatchSize: int = 128,
    Outputs: Sequence[str] | str | None = None,
    SequenceLength: str = "longest",
    SequencePaddingValue: float = 0,
    SequencePaddingDirection: str = "right",
    InputDataFormats: str | Sequence[str] = "auto",
    OutputDataFormats: str | Sequence[str] = "auto",
    UniformOutput: bool = True,
) -> Any:
    """MATLAB's ``[Y1,...,YM] = minibatchpredict(net, X1,...,XN)``: predict over mini-batches.

    Each input (``net.InputNames`` order) is a list of observations (MATLAB's cell array) or an
    array with a ``B`` dimension. List elements are arrays in the layout of ``InputDataFormats``
    less ``"B"`` (MATLAB's ``"auto"``: ``s×c`` per vector sequence, ``"TCB"``; ``h×w×c×s`` per
    image sequence; pass ``InputDataFormats="CTB"`` for ``c×s`` arrays), or formatted dlarrays
    (``"CT"``), which say their layout themselves. Arrays take ``"auto"`` ``"BC"`` (features
    ``N×c``) or ``"SSCB"`` (images), or a formatted dlarray.

    Each mini-batch of ``MiniBatchSize`` (default 128) observations is padded on its own:
    ``SequenceLength`` ``"longest"`` (pad to the longest sequence of the mini-batch, default) or
    ``"shortest"`` (truncate to the shortest), with ``SequencePaddingValue`` (default 0) at the
    end (``SequencePaddingDirection="right"``, default) or the start (``"left"``). Network
    inputs that are a layer's ``"mask"`` port (``HasPaddingMaskInput``) may be left out: each then
    gets the padding mask of the (single) sequence input, ones for data and zeros for padding.

    Returns the outputs (``Outputs``, default ``net.OutputNames``): with ``UniformOutput=True``
    (default) each concatenated along ``B``, a formatted dlarray, or a plain tensor in the layout
    of ``OutputDataFormats``; with ``UniformOutput=False`` a list with one element per
    observation (``B`` removed), where a sequence output as long as the padded input loses the
    padding. One output is returned as is, several as a tuple. The network runs in inference
    mode without gradients; its state is left as it was.

    Examples:
        >>> net = dlf.dlnetwork([dlf.sequenceInputLayer(3), dlf.lstmLayer(4, OutputMode="last")])
        >>> X = [torch.randn(5, 3), torch.randn(2, 3)]  # MATLAB's cell array of s-by-c sequences
        >>> Y = dlf.minibatchpredict(net, X, SequencePaddingDirection="left")
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CB', (4, 2))
        >>> Y = dlf.minibatchpredict(net, [x.T for x in X], InputDataFormats="CTB", UniformOutput=False)
        >>> len(Y), dlf.dims(Y[0])
        (2, 'C')
    """
    if not isinstance(net, DLNetwork) or not net.Initialized:
        raise DLFormatError(
            f"{CALLER} needs an initialized dlnetwork as its first argument; got "
            + (
                _validate.describe(net)
                if not isinstance(net, DLNetwork)
                else "a dlnetwork not yet initialized"
            )
        )
    size = _validate.positive_integer(f"{CALLER}: MiniBatchSize", MiniBatchSize)
    if not isinstance(SequenceLength, str):
        raise DLFormatError(
            f'{CALLER}: SequenceLength must be "longest" or "shortest"; got '
            f"{_validate.describe(SequenceLength)}. "
            "MATLAB's minibatchpredict takes no number; pad or truncate to a fixed length with "
            "dlf.padsequences(X, dim, Length=n) first"
        )
    length = _validate.choice(f"{CALLER}: SequenceLength", SequenceLength, LENGTHS)
    direction = _validate.choice(f"{CALLER}: SequencePaddingDirection", SequencePaddingDirection, DIRECTIONS)
    padding = _validate.real(f"{CALLER}: SequencePaddingValue", SequencePaddingValue)
    uniform = _validate.flag(f"{CALLER}: UniformOutput", UniformOutput)

    ports = net._inputs()
    masks = [index for index, port in enumerate(ports) if port[1] == MASK_PORT]
    given = list(range(len(ports)))
    if len(X) != len(ports):
        if not masks or len(X) != len(ports) - len(masks):
            names = ", ".join(net.InputNames)
            raise DLFormatError(
                f"{CALLER}: the network has {len(ports)} input(s) ({names}); got {len(X)}"
                + (" (padding-mask inputs may be left out)" if masks else "")
            )
        given = [index for index in range(len(ports)) if index not in masks]
    formats = _formats(InputDataFormats, len(given), "InputDataFormats")
    inputs: dict[int, _Input] = {}
    # data inputs first: a mask given with "auto" takes the format of the data it marks
    ordered = sorted(zip(given, X, formats, strict=True), key=lambda item: item[0] in masks)
    for index, value, fmt in ordered:
        if index in masks:
            marked = [data for data in inputs.values() if data.is_list and "T" in data.observation_format]
            auto = marked[0].observation_format + "B" if len(marked) == 1 else None
        else:
            auto = _auto_format(net, ports[index])
        inputs[index] = _Input(
            net.InputNames[index],
            value,
            fmt or auto,
            0.0 if index in masks else padding,  # a mask is padded with zeros: padding is not data
        )
        if fmt is None:
            _check_auto_layout(net, ports[index], inputs[index])
    counts = {data.count for data in inputs.values()}
    if len(counts) > 1:
        raise DLFormatError(
            f"{CALLER}: every input must hold the same number of observations; got "
            + ", ".join(f"{data.name}: {data.count}" for data in inputs.values())
        )
    (count,) = counts
    missing = [index for index in masks if index not in inputs]
    sequence_inputs = [
        index
        for index, data in inputs.items()
        if data.is_list and "T" in data.observation_format and index not in masks
    ]
    if missing and len(sequence_inputs) != 1:
        raise DLFormatError(
            f"{CALLER}: the padding-mask input(s) {', '.join(net.InputNames[i] for i in missing)} are left "
            "out, "
            f"and the network has {len(sequence_inputs)} list-of-sequences inputs to take a mask from (one "
            "is needed); pass the masks as inputs"
        )
    output_names = (
        net.OutputNames if Outputs is None else ((Outputs,) if isinstance(Outputs, str) else tuple(Outputs))
    )
    out_formats = _formats(OutputDataFormats, len(output_names), "OutputDataFormats")

    results: list[list[Any]] = [[] for _ in output_names]
    like = next(net.parameters(), None)  # data takes the learnables' dtype and device, as MATLAB's single
    for start in range(0, count, size):
        stop = min(start + size, count)
        batches = {index: data.batch(start, stop, length, direction) for index, data in inputs.items()}
        for index in missing:
            batches[index] = _Batch(_padding_mask(batches[sequence_inputs[0]], direction))
        arguments = []
        for index in range(len(ports)):
            batch_X = batches[index].X
            if like is not None and batch_X._data.is_floating_point():
                batch_X = batch_X.to(like.device, like.dtype)
            arguments.append(batch_X)
        with torch.no_grad():
            Y = net(*arguments, Outputs=list(output_names), training=False)
        Y = Y if isinstance(Y, tuple) else (Y,)
        source = batches[sequence_inputs[0]] if len(sequence_inputs) == 1 else None
        for collected, value, fmt in zip(results, Y, out_formats, strict=True):
            if uniform:
                collected.append(value)
            else:
                collected += [
                    _unpadded(value, i, source, direction, fmt)
                    for i in range(value.shape[value._fmt.index("B")])
                ]
    final = [
        _uniform(pieces, fmt, name) if uniform else pieces
        for pieces, fmt, name in zip(results, out_formats, output_names, strict=True)
    ]
    return final[0] if len(final) == 1 else tuple(final)


def predict_sequences(
    net: DLNetwork,
    outputs: Sequence[str],
    X: Sequence[Any],
    *,
    caller: str,
    MiniBatchSize: int = 128,
    SequenceLength: int | str = "longest",
    SequencePaddingValue: float = 0,
    SequencePaddingDirection: str = "right",
) -> Any:
    """MATLAB's legacy ``predict(net, sequences, ...)`` of a ``SeriesNetwork``/``DAGNetwork`` on a
    cell array of ``c×s`` sequences: mini-batches padded as :func:`minibatchpredict` pads them,
    and ``SequenceLength`` may also be a number: each mini-batch, padded to its longest, is then
    split into chunks of that many time steps, run one after another with the recurrent state
    carried from chunk to chunk. Sequence outputs come back one per observation without the
    padding (MATLAB's cell array), the others concatenated along ``B``. The state is left as it was.
    """
    size = _validate.positive_integer(f"{caller}: MiniBatchSize", MiniBatchSize)
    chunk: int | None = None
    if isinstance(SequenceLength, str):
        length = _validate.choice(
            f"{caller}: SequenceLength", SequenceLength, LENGTHS, also=", or a positive integer"
        )
    else:
        chunk, length = _validate.positive_integer(f"{caller}: SequenceLength", SequenceLength), "longest"
    direction = _validate.choice(f"{caller}: SequencePaddingDirection", SequencePaddingDirection, DIRECTIONS)
    padding = _validate.real(f"{caller}: SequencePaddingValue", SequencePaddingValue)
    if len(net.InputNames) != 1:
        raise DLFormatError(f"{caller}: a cell array of sequences is for networks with one input")
    data = _Input(net.InputNames[0], list(X), "CTB", padding)  # MATLAB's legacy layout: c×s
    results: list[list[Any]] = [[] for _ in outputs]
    for start in range(0, data.count, size):
        batch = data.batch(start, min(start + size, data.count), length, direction)
        pieces = _chunked(net, outputs, batch.X, chunk)
        for collected, Y in zip(results, pieces, strict=True):
            if "T" in Y._fmt:
                count = Y.shape[Y._fmt.index("B")]
                collected += [_unpadded(Y, i, batch, direction, None) for i in range(count)]
            else:
                collected.append(Y)
    final = [
        items if items and "B" not in items[0]._fmt else _uniform(items, None, name)
        for items, name in zip(results, outputs, strict=True)
    ]
    return final[0] if len(final) == 1 else tuple(final)


def _chunked(net: DLNetwork, outputs: Sequence[str], X: DLArray, chunk: int | None) -> list[DLArray]:
    """The outputs for ``X``, run in chunks of ``chunk`` time steps with the state carried over
    (whole when ``chunk`` is ``None``): sequence outputs joined along ``T``, others from the last chunk.

    The first chunk starts from the network's State, each next one from the state the previous
    one left, carried from call to call and never assigned to the network (so that other
    threads' calls meanwhile see the network's State)."""
    time = X._fmt.index("T")
    steps = X.shape[time]
    starts = [0] if chunk is None else list(range(0, steps, chunk))
    pieces: list[list[DLArray]] = [[] for _ in outputs]
    state: CallValues | None = None
    for start in starts:
        part = (
            X
            if chunk is None
            else DLArray._wrap(X._data.narrow(time, start, min(chunk, steps - start)), X._fmt)
        )
        with torch.no_grad():
            Y, _, state = net._call((part,), list(outputs), False, start=state)
        for collected, value in zip(pieces, Y, strict=True):
            collected.append(value)
    joined = []
    for values in pieces:
        if "T" in values[0]._fmt:
            axis = values[0]._fmt.index("T")
            joined.append(
                DLArray._wrap(torch.cat([value._data for value in values], dim=axis), values[0]._fmt)
            )
        else:
            joined.append(values[-1])
    return joined
