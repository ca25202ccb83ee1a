"""MATLAB's ``maxpool`` and ``avgpool``: pooling over the ``S`` dimensions (or ``T``) of formatted
dlarrays, with MATLAB's padding.

Padding follows :mod:`._sliding` (``"same"``: the extra element at the bottom/right). Padded
positions never win a maximum (max pooling pads with ``-inf``). Average pooling follows MATLAB's
``PaddingValue`` (MathWorks, ``averagePooling2dLayer``, "PaddingValue"): ``0`` pads with zeros that
count in the average (every window divides by its full size); ``"mean"`` pads with the mean of the
window, which is the same as leaving the padding out of the average (each window divides by the
number of input elements it covers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from .._tracing import cached_plan
from . import _sliding
from ._common import as_data, floating_data, formatted_input

__all__ = ["avgpool", "maxpool", "maxunpool"]

_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVERAGE = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


@cached_plan()
def _pooled(fmt: str, pool_format: str | None, caller: str) -> _sliding.Window:
    """The window of a pooling of ``fmt``: its ``S`` dimensions, or those ``PoolFormat`` names."""
    if pool_format is None:
        return _sliding.window_plan(
            fmt, fmt.count("S"), False, caller, 'the default PoolFormat ("S" per "S" dimension)'
        )
    if not pool_format or any(label not in "ST" for label in pool_format) or pool_format.count("T") > 1:
        raise DLFormatError(
            f'{caller}: PoolFormat labels the pooled dimensions with "S" and "T" (as "SS", "T"); '
            f'got "{pool_format}"'
        )
    return _sliding.window_plan(
        fmt, pool_format.count("S"), "T" in pool_format, caller, f'PoolFormat "{pool_format}"'
    )


# the options both pooling functions take, with MATLAB's defaults
POOLING_OPTIONS = {"Stride": 1, "Padding": 0, "PoolFormat": None, "DataFormat": None}


def _read(
    caller: str, X: Any, poolsize: Any, options: dict[str, Any]
) -> tuple[
    DLArray,
    Callable[[DLArray], DLArray],
    _sliding.Window,
    tuple[int, ...] | None,
    tuple[int, ...],
    _sliding.Edges,
]:
    """The input, its restorer, the window, the pool size (``None`` for ``"global"``), the strides
    and the padding of a pooling call."""
    X, restore = formatted_input(X, options["DataFormat"], caller)
    X = DLArray._wrap(floating_data(X._data, caller), X._fmt)
    PoolFormat = options["PoolFormat"]
    pool_format = None if PoolFormat is None else _validate.text(f"{caller}: PoolFormat", PoolFormat)
    window = _pooled(X._fmt, pool_format, caller)
    count = len(window.slid)
    strides = _sliding.sizes(caller, "Stride", options["Stride"], count)
    spec = _sliding.padding_spec(caller, "Padding", options["Padding"], count, ("same",))
    if isinstance(poolsize, (str, bytes)):
        _validate.choice(f"{caller}: poolsize", poolsize, ("global",), also=", or positive integers")
        if any(stride != 1 for stride in strides) or spec != ((0, 0),) * count:
            raise DLFormatError(
                f'{caller}: "global" pooling takes the whole pooled dimensions: it has no Stride or Padding'
            )
        return X, restore, window, None, strides, ((0, 0),) * count
    size = _sliding.sizes(caller, "poolsize", poolsize, count)
    inputs = tuple(X._data.shape[index] for index in window.slid)
    padding = _sliding.edges(spec, inputs, size, strides)
    for (before, after), extent in zip(padding, size, strict=True):
        if max(before, after) >= extent:
            raise DLFormatError(
                f"{caller}: the padding ({before} before, {after} after) must be smaller than the pooling "
                f"region ({extent}) along each dimension, as MATLAB requires"
            )
    _sliding.check_fits(caller, inputs, padding, size)
    return X, restore, window, size, strides, padding


def _fortran_positions(shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """MATLAB's 1-based linear index of every element of an array of ``shape`` (column-major:
    the first dimension fastest), as doubles, which hold them exactly."""
    count = math.prod(shape)
    positions = torch.arange(1, count + 1, dtype=torch.float64, device=device)
    return positions.reshape(shape[::-1]).permute(tuple(range(len(shape) - 1, -1, -1)))


def _linear_indices(X: Any, DataFormat: Any, caller: str) -> tuple[torch.Tensor, tuple[int, ...]]:
    """The linear index of each element of the input ``X`` as given (unformatted data in its
    stored order), moved to the formatted order the pooling works in; and ``size(X)``."""
    data = as_data(X, f"{caller} input")
    shape = tuple(data.shape)
    fmt = X._fmt if isinstance(X, DLArray) else ""
    positions = DLArray._wrap(_fortran_positions(shape, data.device), fmt)
    formatted, _ = formatted_input(positions, None if fmt else DataFormat, caller)
    return formatted._data, shape


def _pool_indices(
    X: DLArray,
    positions: torch.Tensor,
    window: _sliding.Window,
    size: tuple[int, ...],
    strides: tuple[int, ...],
    padding: _sliding.Edges,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Max pooling that also gives, per region, the linear index of its maximum in the input."""
    data, lead = _sliding.to_torch(X._data, window)
    where, _ = _sliding.to_torch(positions, window)
    equal = _sliding.symmetric(padding, [extent // 2 for extent in size])
    if equal is None:  # torch's indices then count in the padded data: pad the positions alike
        data, equal = _sliding.pad(data, padding, -torch.inf), (0,) * len(size)
        where = _sliding.pad(where, padding, 0.0)
    result, found = _MAX[len(size)](data, size, strides, equal, return_indices=True)
    picked = where.flatten(2).gather(2, found.flatten(2)).reshape(found.shape)
    return _sliding.from_torch(result, window, lead), _sliding.from_torch(picked, window, lead)


@matlab_function(shared=POOLING_OPTIONS)
def maxpool(X: Any, poolsize: Any, *, ReturnIndices: Any = False, **options: Any) -> Any:
    """MATLAB's ``Y = maxpool(X, poolsize)`` and ``maxpool(X, "global")``: the maximum of each
    pooling region.

    Args:
        X: a formatted dlarray (pooled over its ``S`` dimensions, up to three), or unformatted
            data with ``DataFormat``. Every other dimension (``C``, ``B``, ``T``, ``U``) is kept.
        poolsize: a positive integer, one per pooled dimension, or ``"global"`` (the whole
            pooled dimensions, each of size 1 afterwards).
        Stride: a positive integer, or one per pooled dimension (default 1).
        Padding: ``0`` (default), ``"same"`` (output ``ceil(n/Stride)``, the extra element at the
            bottom/right), or explicit as for :func:`dlconv`; padding must be smaller than the
            pooling region. Padded positions never win.
        PoolFormat: the labels of the pooled dimensions (``"T"`` pools over time; default one
            ``"S"`` per ``S`` dimension of ``X``).
        DataFormat: the format of unformatted ``X``; the result is then unformatted.

        ReturnIndices: ``True`` for MATLAB's ``[Y, indx, inputSize] = maxpool(...)``: also the
            1-based linear index (column-major) into ``X`` of each region's maximum, a dlarray of
            doubles formatted as ``Y``, and ``size(X)`` as a tuple; :func:`maxunpool` takes them.

    Examples:
        >>> X = dlf.dlarray(torch.randn(6, 6, 3, 2), "SSCB")
        >>> tuple(F.maxpool(X, 2, Stride=2).shape), tuple(F.maxpool(X, "global").shape)
        ((3, 3, 3, 2), (1, 1, 3, 2))
    """
    returning = _validate.flag("maxpool: ReturnIndices", ReturnIndices)
    given = X
    X, restore, window, size, strides, padding = _read("maxpool", X, poolsize, options)
    if returning:
        positions, input_size = _linear_indices(given, options["DataFormat"], "maxpool")
        if size is None:  # one region spanning the pooled dimensions
            size = tuple(X._data.shape[index] for index in window.slid)
        result, indices = _pool_indices(X, positions, window, size, strides, padding)
        return restore(DLArray._wrap(result, X._fmt)), restore(DLArray._wrap(indices, X._fmt)), input_size
    if size is None:
        return restore(DLArray._wrap(X._data.amax(dim=window.slid, keepdim=True), X._fmt))
    data, lead = _sliding.to_torch(X._data, window)
    equal = _sliding.symmetric(padding, [extent // 2 for extent in size])
    if equal is None:
        data, equal = _sliding.pad(data, padding, -torch.inf), (0,) * len(size)
    result = _MAX[len(size)](data, size, strides, equal)
    return restore(DLArray._wrap(_sliding.from_torch(result, window, lead), X._fmt))


@matlab_function(shared=POOLING_OPTIONS)
def avgpool(X: Any, poolsize: Any, *, PaddingValue: Any = 0, **options: Any) -> DLArray:
    """MATLAB's ``Y = avgpool(X, poolsize)`` and ``avgpool(X, "global")``: the mean of each pooling
    region.

    Args:
        X, poolsize, Stride, Padding, PoolFormat, DataFormat: as for :func:`maxpool`.
        PaddingValue: ``0`` (default: padded zeros count in the average, every region divides by
            its full size) or ``"mean"`` (the padding is left out: a region divides by the number
            of input elements it covers).

    Examples:
        >>> X = dlf.dlarray(torch.ones(3, 3, 1, 1), "SSCB")
        >>> dlf.extractdata(F.avgpool(X, 2, Padding="same"))[:, :, 0, 0].tolist()[2]
        [0.5, 0.5, 0.25]
        >>> dlf.extractdata(F.avgpool(X, 2, Padding="same", PaddingValue="mean"))[:, :, 0, 0].tolist()[2]
        [1.0, 1.0, 1.0]
    """
    X, restore, window, size, strides, padding = _read("avgpool", X, poolsize, options)
    exclude = _sliding.average_padding_value("avgpool: PaddingValue", PaddingValue) == "mean"
    if size is None:
        return restore(DLArray._wrap(X._data.mean(dim=window.slid, keepdim=True), X._fmt))
    data, lead = _sliding.to_torch(X._data, window)
    pool = _AVERAGE[len(size)]
    dtype = data.dtype
    if len(size) == 3 and data.device.type == "cpu" and dtype in (torch.float16, torch.bfloat16):
        data = data.float()  # torch's CPU 3-D average pooling has no half-precision kernel
    equal = _sliding.symmetric(padding, [extent // 2 for extent in size])
    if equal is not None:
        result = pool(data, size, strides, equal, False, not exclude)
    else:
        result = pool(_sliding.pad(data, padding, 0.0), size, strides, 0)
        if exclude:  # each region's share of input elements, from a padded mask of ones
            ones = data.new_ones((1, 1, *data.shape[2:]))
            result = result / pool(_sliding.pad(ones, padding, 0.0), size, strides, 0)
    return restore(DLArray._wrap(_sliding.from_torch(result.to(dtype), window, lead), X._fmt))


@matlab_function
def maxunpool(X: Any, indx: Any, outputSize: Any, *, DataFormat: Any = None) -> DLArray:
    """MATLAB's ``Y = maxunpool(X, indx, outputSize)``: zeros of size ``outputSize`` with each
    element of ``X`` at its linear index ``indx`` (from ``maxpool(..., ReturnIndices=True)``).

    ``X`` is formatted, or unformatted with ``DataFormat`` (the result is then unformatted);
    ``indx`` has ``X``'s size and holds 1-based column-major linear indices into an array of
    size ``outputSize``. Where several regions picked the same element (overlapping regions),
    it gets that one value. Gradients flow to ``X``.

    Examples:
        >>> X = dlf.dlarray(torch.tensor([[1.0, 5.0], [4.0, 2.0]]).reshape(2, 2, 1, 1), "SSCB")
        >>> Y, indx, inputSize = F.maxpool(X, 2, ReturnIndices=True)
        >>> dlf.extractdata(indx).flatten().tolist(), inputSize
        ([3.0], (2, 2, 1, 1))
        >>> dlf.extractdata(F.maxunpool(Y, indx, inputSize))[:, :, 0, 0].tolist()
        [[0.0, 5.0], [0.0, 0.0]]
    """
    formatted_input(X, DataFormat, "maxunpool")  # X formatted, or DataFormat labelling it
    # X in its given (stored) order, as indx counts in it
    stored = floating_data(as_data(X, "maxunpool input"), "maxunpool")
    positions = as_data(indx, "maxunpool indx").to(stored.device)
    if tuple(positions.shape) != tuple(stored.shape):
        raise DLFormatError(
            f"maxunpool: indx must have the size of X ({_validate.matlab_size(stored.shape)}); got "
            f"{_validate.matlab_size(positions.shape)}"
        )
    shape = _output_size(outputSize, stored.ndim)
    count = math.prod(shape)
    flat = positions.reshape(-1)
    whole = flat.round()
    if flat.numel() and (not torch.equal(whole, flat) or whole.min() < 1 or whole.max() > count):
        raise DLFormatError(
            f"maxunpool: indx must hold integer linear indices from 1 to {count} (numel of outputSize "
            f"{_validate.matlab_size(shape)})"
        )
    target = stored.new_zeros(count).index_put((whole.long() - 1,), stored.reshape(-1))
    result = target.reshape(shape[::-1]).permute(tuple(range(len(shape) - 1, -1, -1)))
    return DLArray._wrap(result, X._fmt if isinstance(X, DLArray) else "")


def _output_size(outputSize: Any, ndims: int) -> tuple[int, ...]:
    """``outputSize`` as sizes for ``ndims`` dimensions (MATLAB's trailing singletons may be left off)."""
    if isinstance(outputSize, torch.Tensor):
        outputSize = outputSize.tolist()
    elif hasattr(outputSize, "tolist"):
        outputSize = outputSize.tolist()
    if not isinstance(outputSize, (list, tuple)) or not outputSize:
        raise DLFormatError(
            f"maxunpool: outputSize must be a vector of sizes (maxpool's inputSize); got "
            f"{_validate.describe(outputSize)}"
        )
    sizes = [_validate.positive_integer("maxunpool: outputSize", value) for value in outputSize]
    if len(sizes) > ndims and any(size != 1 for size in sizes[ndims:]):
        raise DLFormatError(
            f"maxunpool: outputSize {_validate.matlab_size(sizes)} has more dimensions than X ({ndims})"
        )
    sizes = sizes[:ndims] + [1] * (ndims - len(sizes))
    return tuple(sizes)
