"""MATLAB's ``dlconv`` and ``dltranspconv``: 1-D, 2-D and 3-D (grouped, channel-wise) convolution
and transposed convolution of formatted dlarrays, with MATLAB's weight layouts and padding.

Weights are laid out as MATLAB lays them out (MathWorks, ``dlconv`` and ``dltranspconv``, input
argument ``weights``): ``filterSize × numChannels × numFilters`` for convolution and
``filterSize × numFilters × numChannels`` for transposed convolution, with ``… × numGroups`` after
per-group sizes for grouped (and channel-wise) convolution. Their default format is ``"S"`` once
per spatial dimension of the input, then ``"CU"`` (``"CUU"`` grouped); ``WeightsFormat`` (or
formatted weights) labels them otherwise, ``"TCU"`` to convolve over ``T``. The operation is
MATLAB's (and torch's) cross-correlation: the filters are not flipped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F

from .. import _format, _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from .._options import matlab_function
from .._tracing import cached_plan
from . import _sliding
from ._common import _keep, as_data, formatted_input, working_dtype

__all__ = ["dlconv", "dltranspconv"]

_CONVOLUTION = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_TRANSPOSED = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
# the options both convolutions take, with MATLAB's defaults
CONVOLUTION_OPTIONS = {"Stride": 1, "DilationFactor": 1, "WeightsFormat": None, "DataFormat": None}


class _Layout(NamedTuple):
    """Where the parts of canonical weights are: filter dimensions (``S``... then ``T``), ``C``,
    and the ``U`` dimensions (per-group filters or channels, then groups; absent ones are 1)."""

    filter: tuple[int, ...]
    channel: int
    unspecified: tuple[int, ...]
    spatial: int
    time: bool


@cached_plan()
def _layout(fmt: str, caller: str) -> _Layout:
    if "B" in fmt or "C" not in fmt or fmt.count("U") > 2 or ("S" not in fmt and "T" not in fmt):
        raise DLFormatError(
            f'{caller} weights must have filter dimensions ("S", or "T"), one "C" and up to two "U" '
            f'(as "SSCU", "SSCUU", "TCU"); got format "{fmt}"'
        )
    filter_positions = tuple(index for index, label in enumerate(fmt) if label in "ST")
    unspecified = tuple(index for index, label in enumerate(fmt) if label == "U")
    return _Layout(filter_positions, fmt.index("C"), unspecified, fmt.count("S"), "T" in fmt)


def _weights(caller: str, weights: Any, WeightsFormat: Any, spatial: int) -> tuple[torch.Tensor, str]:
    """The weights in canonical order, and their canonical format."""
    if isinstance(weights, DLArray) and weights._fmt:
        if WeightsFormat is not None:
            raise DLFormatError(
                f"{caller}: WeightsFormat is only for unformatted weights; the weights already have "
                f'format "{weights._fmt}"'
            )
        return weights._data, weights._fmt
    data = as_data(weights, f"{caller} weights")
    if WeightsFormat is None:
        if not spatial:
            raise DLFormatError(
                f'{caller}: the input has no "S" dimension, so the weights need a format: give WeightsFormat '
                f'(for example WeightsFormat="TCU" to convolve over "T") or formatted weights'
            )
        grouped = data.ndim > spatial + 2
        if data.ndim > spatial + 3:
            raise DLFormatError(
                f"{caller} weights for {spatial} spatial dimension(s) have at most {spatial + 3} dimensions "
                f"(filterSize, channels, filters, groups); got {_validate.matlab_size(tuple(data.shape))}"
            )
        WeightsFormat = "S" * spatial + ("CUU" if grouped else "CU")
    labelled = dlarray(data, _format.check_format(_validate.text(f"{caller}: WeightsFormat", WeightsFormat)))
    return labelled._data, labelled._fmt


def _parts(data: torch.Tensor, layout: _Layout) -> tuple[torch.Tensor, tuple[int, int, int], tuple[int, ...]]:
    """``data`` in torch's layout, ``(groups · first U) × C × filter...``; the sizes ``(groups,
    first U, C)`` (absent ``U`` dimensions count 1); and the filter size."""
    if len(layout.unspecified) == 1:  # ungrouped: one permutation (one autograd node, not three)
        matrix = data.permute(layout.unspecified[0], layout.channel, *layout.filter)
        return matrix, (1, matrix.shape[0], matrix.shape[1]), tuple(matrix.shape[2:])
    missing = 2 - len(layout.unspecified)
    expanded = data.reshape(*data.shape, *(1,) * missing)
    unspecified = layout.unspecified + tuple(range(data.ndim, data.ndim + missing))
    arranged = expanded.permute(unspecified[1], unspecified[0], layout.channel, *layout.filter)
    groups, first, channels = arranged.shape[:3]
    matrix = arranged.reshape(groups * first, channels, *arranged.shape[3:])
    return matrix, (groups, first, channels), tuple(arranged.shape[3:])


def _bias(caller: str, bias: Any, count: int) -> torch.Tensor:
    """One bias per output channel, from a scalar or ``count`` values in MATLAB's column-major order
    (a ``numFiltersPerGroup × numGroups`` bias runs through the filters of group 1 first)."""
    data = as_data(bias, f"{caller} bias")
    if data.numel() not in (1, count):
        raise DLFormatError(
            f"{caller} bias must be a scalar or have {count} elements (one per output channel); got "
            f"{_validate.matlab_size(tuple(data.shape))}"
        )
    if data.numel() == count and sum(size > 1 for size in data.shape) <= 1:
        return data.reshape(-1)  # one non-singleton dimension: column-major order is storage order
    return data.permute(tuple(reversed(range(data.ndim)))).reshape(-1).expand(count)


class _Convolution(NamedTuple):
    """What both convolutions read: the input and its restorer, the weights in torch's layout
    (``(groups · U) × C × filter...``) with their sizes ``(groups, U, C)`` and groups, the window
    and the input in torch's layout, and the geometry."""

    X: DLArray
    restore: Callable[[DLArray], DLArray]
    matrix: torch.Tensor
    parts: tuple[int, int, int]
    groups: int
    window: _sliding.Window
    data: torch.Tensor
    lead: torch.Size
    slid: int  # how many dimensions the filters slide over
    strides: tuple[int, ...]
    dilation: tuple[int, ...]
    reach: tuple[int, ...]  # the dilated filter size


def _convolution(caller: str, X: Any, weights: Any, options: dict[str, Any]) -> _Convolution:
    """The checked input, weights and geometry of ``dlconv`` or ``dltranspconv``."""
    X, restore = formatted_input(X, options["DataFormat"], caller, needs="C")
    weights, fmt = _weights(caller, weights, options["WeightsFormat"], X._fmt.count("S"))
    return _geometry(caller, X, restore, weights, fmt, options["Stride"], options["DilationFactor"])


def _geometry(
    caller: str,
    X: DLArray,
    restore: Callable[[DLArray], DLArray],
    weights: torch.Tensor,
    fmt: str,
    stride: Any,
    dilation_factor: Any,
) -> _Convolution:
    """The geometry of a convolution of formatted ``X`` (with ``C``) by ``weights`` in canonical
    order, labelled ``fmt``: the checks that depend on the input, and the sizes per slid dimension."""
    layout = _layout(fmt, caller)
    window = _sliding.window_plan(
        X._fmt, layout.spatial, layout.time, caller, f'the weights of format "{fmt}"'
    )
    matrix, parts, filter_size = _parts(weights, layout)
    data, lead = _sliding.to_torch(X._data, window)
    # filters × channels per group for convolution; the transposed layout swaps them
    transposed = caller == "dltranspconv"
    groups, per_group = parts[0], parts[1 if transposed else 2]
    channels = data.shape[1]
    if channels != per_group * groups:
        shown = "numFilters × numChannels" if transposed else "numChannels × numFilters"
        raise DLFormatError(
            f"{caller}: the input has {channels} channels; the weights take {per_group * groups} "
            f"({per_group} per group × {groups} group(s): weights are filterSize × {shown} [× numGroups])"
        )
    count = len(window.slid)
    strides = _sliding.sizes(caller, "Stride", stride, count)
    dilation = _sliding.sizes(caller, "DilationFactor", dilation_factor, count)
    reach = tuple((size - 1) * rate + 1 for size, rate in zip(filter_size, dilation, strict=True))
    return _Convolution(
        X, restore, matrix, parts, groups, window, data, lead, count, strides, dilation, reach
    )


@matlab_function(shared=CONVOLUTION_OPTIONS)
def dlconv(
    X: Any, weights: Any, bias: Any, *, Padding: Any = 0, PaddingValue: Any = 0, **options: Any
) -> DLArray:
    """MATLAB's ``Y = dlconv(X, weights, bias)``: convolution over the ``S`` dimensions (or ``T``).

    ``Y`` at each output position is the sum over the filter window and the group's channels of
    ``weights · X`` (cross-correlation, filters not flipped), plus the bias, for every filter; the
    window moves by ``Stride`` and its taps are ``DilationFactor`` apart.

    Args:
        X: a formatted dlarray with ``C`` and up to three ``S`` (``"SSCB"``, ``"SCBT"``,
            ``"SSSCB"``), or unformatted data with ``DataFormat``. Dimensions the filters do not
            slide over (``B``, ``U``, a ``T`` without a ``T`` in the weights) are kept.
        weights: ``filterSize × numChannels × numFilters``, or for grouped convolution
            ``filterSize × numChannelsPerGroup × numFiltersPerGroup × numGroups`` (channel-wise:
            ``filterSize × 1 × channelMultiplier × numChannels``), as MATLAB lays them out.
        bias: a scalar, or one value per output channel (``numFilters``, or
            ``numFiltersPerGroup × numGroups``).
        Stride, DilationFactor: a positive integer, or one per slid dimension (default 1).
        Padding: ``0`` (default), ``"same"`` (output ``ceil(n/Stride)``; odd padding puts the extra
            element at the bottom/right), ``"causal"`` (1-D: ``(filterSize−1)·DilationFactor``
            before), a nonnegative integer, one per dimension, ``[t b l r]`` (before and after each
            dimension), or a ``2 × d`` matrix ``[before; after]``.
        PaddingValue: a number (default 0), ``"symmetric-include-edge"``,
            ``"symmetric-exclude-edge"`` or ``"replicate"``.
        WeightsFormat: the format of unformatted weights (default ``"S"`` per spatial dimension
            of ``X``, then ``"CU"``, or ``"CUU"`` for weights with a groups dimension).
        DataFormat: the format of unformatted ``X``; the result is then unformatted.

    Returns:
        A dlarray of ``X``'s format: ``C`` holds ``numFilters · numGroups`` channels and each slid
        dimension ``floor((n + padding − (filterSize−1)·DilationFactor − 1)/Stride) + 1``
        elements. Computed in MATLAB's precision (float32 when float32 and float64 meet).

    Examples:
        >>> X = dlf.dlarray(torch.randn(28, 28, 3, 2), "SSCB")
        >>> Y = F.dlconv(X, torch.randn(4, 4, 3, 8), torch.zeros(8), Padding="same", Stride=2)
        >>> dlf.dims(Y), tuple(Y.shape)
        ('SSCB', (14, 14, 8, 2))
    """
    conv = _convolution("dlconv", X, weights, options)
    words = ("same", "causal") if conv.slid == 1 else ("same",)
    spec = _sliding.padding_spec("dlconv", "Padding", Padding, conv.slid, words)
    return _dlconv(conv, bias, spec, _sliding.padding_value("dlconv: PaddingValue", PaddingValue))


def layer_dlconv(X: DLArray, weights: torch.Tensor, fmt: str, bias: Any, options: dict[str, Any]) -> DLArray:
    """:func:`dlconv` as a convolution layer calls it, without what the layer already guarantees:
    ``X`` formatted with ``C`` and floating data, ``weights`` a tensor already in the canonical
    order of ``fmt`` (filter ``S`` dimensions, then ``C`` and ``U``), and ``Stride``,
    ``DilationFactor``, ``Padding`` and ``PaddingValue`` as the layer's properties store them
    (checked at construction). The checks that depend on the input (its format against the
    weights, its channels, the window fitting) are the same as :func:`dlconv`'s."""
    conv = _geometry("dlconv", X, _keep, weights, fmt, options["Stride"], options["DilationFactor"])
    words = ("same", "causal") if conv.slid == 1 else ("same",)
    spec = _sliding.padding_spec("dlconv", "Padding", options["Padding"], conv.slid, words)
    return _dlconv(conv, bias, spec, options["PaddingValue"])


def _dlconv(conv: _Convolution, bias: Any, spec: _sliding.Spec, value: Any) -> DLArray:
    """What :func:`dlconv` and :func:`layer_dlconv` share once the options are checked."""
    data, count, reach, strides = conv.data, conv.slid, conv.reach, conv.strides
    groups, filters, _ = conv.parts
    padding = _sliding.edges(spec, tuple(data.shape[2:]), reach, strides)
    _sliding.check_fits("dlconv", tuple(data.shape[2:]), padding, reach)
    offsets = _bias("dlconv", bias, groups * filters)
    dtype = working_dtype(data.dtype, conv.matrix.dtype, offsets.dtype)
    data, matrix, offsets = (_sliding.as_dtype(value, dtype) for value in (data, conv.matrix, offsets))
    equal = _sliding.symmetric(padding) if value == 0 else None
    if equal is None:
        data, equal = _sliding.pad(data, padding, value), (0,) * count
    result = _CONVOLUTION[count](data, matrix, offsets, strides, equal, conv.dilation, groups)
    return conv.restore(DLArray._wrap(_sliding.from_torch(result, conv.window, conv.lead), conv.X._fmt))


def _cropping(
    spec: _sliding.Spec, inputs: tuple[int, ...], reach: tuple[int, ...], strides: tuple[int, ...]
) -> tuple[tuple[int, int], ...]:
    """The ``(before, after)`` cropping of the full transposed convolution, ``(n−1)·stride + reach``
    long: ``"same"`` leaves ``n·stride`` with an odd extra element cropped before (MATLAB: "trims an
    extra row from the top", "an extra column from the left")."""
    if spec != "same":
        assert not isinstance(spec, str)
        return spec
    result = []
    for size, extent, stride in zip(inputs, reach, strides, strict=True):
        total = extent - stride
        if total < 0:
            raise DLFormatError(
                f'dltranspconv: Cropping "same" needs a filter reach ({extent}) at least as large as the '
                f"stride ({stride}): the full output is {(size - 1) * stride + extent} long and "
                f"{size * stride} are asked for"
            )
        result.append((total - total // 2, total // 2))
    return tuple(result)


@matlab_function(shared=CONVOLUTION_OPTIONS)
def dltranspconv(X: Any, weights: Any, bias: Any, *, Cropping: Any = 0, **options: Any) -> DLArray:
    """MATLAB's ``Y = dltranspconv(X, weights, bias)``: transposed convolution (upsampling), the
    adjoint of :func:`dlconv`'s weights.

    Every input element adds ``weights · x`` into a filter-sized window of the output, windows
    ``Stride`` apart; the full output ``(n − 1)·Stride + (filterSize − 1)·DilationFactor + 1`` long
    is then cropped.

    Args:
        X: a formatted dlarray with ``C`` and up to three ``S``, or unformatted data with
            ``DataFormat``.
        weights: ``filterSize × numFilters × numChannels``, or grouped
            ``filterSize × numFiltersPerGroup × numChannelsPerGroup × numGroups``, as MATLAB lays
            them out (the format's ``C`` labels the filters).
        bias: a scalar, or one value per output channel.
        Stride, DilationFactor: a positive integer, or one per slid dimension (default 1).
        Cropping: ``0`` (default), ``"same"`` (output ``n·Stride``; an odd amount crops the extra
            element at the top/left), a nonnegative integer, one per dimension, ``[t b l r]``, or a
            ``2 × d`` matrix ``[before; after]``.
        WeightsFormat, DataFormat: as for :func:`dlconv`.

    Examples:
        >>> X = dlf.dlarray(torch.randn(7, 7, 8, 2), "SSCB")
        >>> Y = F.dltranspconv(X, torch.randn(4, 4, 3, 8), 0, Stride=2, Cropping="same")
        >>> dlf.dims(Y), tuple(Y.shape)
        ('SSCB', (14, 14, 3, 2))
    """
    conv = _convolution("dltranspconv", X, weights, options)
    data, count, reach, strides = conv.data, conv.slid, conv.reach, conv.strides
    groups, _, filters = conv.parts
    inputs = tuple(data.shape[2:])
    cropping = _cropping(
        _sliding.padding_spec("dltranspconv", "Cropping", Cropping, count, ("same",)), inputs, reach, strides
    )
    full = tuple(
        (size - 1) * stride + extent for size, stride, extent in zip(inputs, strides, reach, strict=True)
    )
    if any(before + after >= length for (before, after), length in zip(cropping, full, strict=True)):
        raise DLFormatError(
            f"dltranspconv: Cropping {[list(pair) for pair in cropping]} leaves nothing of the full output "
            f"of size {_validate.matlab_size(full)}"
        )
    offsets = _bias("dltranspconv", bias, groups * filters)
    dtype = working_dtype(data.dtype, conv.matrix.dtype, offsets.dtype)
    matrix = conv.matrix.to(dtype)
    # torch crops both edges alike, up to the filter's reach; the rest is sliced off
    both = tuple(
        min(before, after, extent - 1) for (before, after), extent in zip(cropping, reach, strict=True)
    )
    result = _TRANSPOSED[count](
        data.to(dtype), matrix, offsets.to(dtype), strides, both, 0, groups, conv.dilation
    )
    index = (
        slice(None),
        slice(None),
        *(
            slice(before - kept, result.shape[2 + axis] - (after - kept))
            for axis, ((before, after), kept) in enumerate(zip(cropping, both, strict=True))
        ),
    )
    return conv.restore(
        DLArray._wrap(_sliding.from_torch(result[index], conv.window, conv.lead), conv.X._fmt)
    )
