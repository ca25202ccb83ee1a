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
from ._common import floating_data, formatted_input

__all__ = ["avgpool", "maxpool"]

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


@matlab_function(shared=POOLING_OPTIONS)
def maxpool(X: Any, poolsize: Any, **options: Any) -> DLArray:
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

    The indices output of MATLAB's ``[Y, indx, inputSize] = maxpool(...)`` (for ``maxunpool``)
    is not ported.

    Examples:
        >>> X = dlf.dlarray(torch.randn(6, 6, 3, 2), "SSCB")
        >>> tuple(F.maxpool(X, 2, Stride=2).shape), tuple(F.maxpool(X, "global").shape)
        ((3, 3, 3, 2), (1, 1, 3, 2))
    """
    X, restore, window, size, strides, padding = _read("maxpool", X, poolsize, options)
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
