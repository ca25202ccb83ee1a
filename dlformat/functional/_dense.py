"""MATLAB's ``fullyconnect``: ``weights * x + bias`` over the flattened spatial and channel data."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from einops import rearrange

from .. import _format, _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from .._tracing import cached_plan
from ._common import as_data, formatted_input, working_dtype
from ._sliding import as_dtype

__all__ = ["fullyconnect"]


@cached_plan()
def _flatten_plan(
    fmt: str, caller: str = "fullyconnect", keep_unspecified: bool = False
) -> tuple[str, str, str, int, str]:
    """(output format, pattern to (kept..., features), pattern back, number of S and C dimensions,
    pattern to the flattened layout (features, kept...)).

    Features are flattened as MATLAB does, column-major: the first S varies fastest, C slowest.
    ``keep_unspecified``: ``U`` dimensions are kept as ``B`` and ``T`` are (flattenLayer), and
    data with neither ``B``, ``T`` nor ``U`` gets a trailing ``U`` of size 1, as flattenLayer's
    table maps ``"SSC"`` to ``"CU"``.
    """
    if "U" in fmt and not keep_unspecified:
        raise DLFormatError(
            f'{caller} cannot take format "{fmt}": "U" dimensions have no meaning it could '
            f'flatten or keep; relabel them as "S" (flattened) or "B"/"T" (kept)'
        )
    if "C" not in fmt:
        raise DLFormatError(f'{caller} needs data with a "C" dimension; got format "{fmt}"')
    names = _format.axis_names(fmt)
    features = [name for name in names if name[0] in "sc"]
    kept = [name for name in names if name[0] in "btu"]
    output = "C" + "".join(label for label in fmt if label in "BTU")
    if keep_unspecified and output == "C":
        output = "CU"  # the trailing U of size 1 is added by flatten_features
    flat = f"({' '.join(reversed(features))})"
    to_rows = f"{' '.join(names)} -> {' '.join(kept)} {flat}"
    back = f"{' '.join(kept)} c0 -> {' '.join(_format.axis_names(output))}"
    to_columns = f"{' '.join(names)} -> {flat} {' '.join(kept)}"
    return output, to_rows, back, len(features), to_columns


def flatten_features(X: DLArray, caller: str) -> DLArray:
    """``X`` with its ``S`` and ``C`` dimensions flattened into one ``C``, column-major as MATLAB
    flattens (the first ``S`` fastest, ``C`` slowest), ``B``, ``T`` and ``U`` kept: what
    ``flattenLayer`` returns (the vectors ``fullyconnect`` multiplies, in the same order)."""
    output, _, _, _, to_columns = _flatten_plan(X._fmt, caller, True)
    data = rearrange(X._data, to_columns)
    return DLArray._wrap(data if data.ndim == len(output) else data.unsqueeze(-1), output)


def flattened_size(fmt: str, shape: tuple[int, ...]) -> int:
    """The number of input features of data of this format and shape (S and C flattened)."""
    count = _flatten_plan(fmt)[3]
    size = 1
    for extent in shape[:count]:
        size *= extent
    return size


def _matrix(weights: torch.Tensor) -> torch.Tensor:
    """``weights`` as an OutputSize × InputSize matrix: MATLAB flattens an
    OutputSize × h × w × c array column-major, so the first input dimension varies fastest."""
    if weights.ndim == 2:
        return weights
    if weights.ndim < 2:
        raise DLFormatError(
            f"fullyconnect weights must be OutputSize × InputSize (or OutputSize × h × w × c); got "
            f"{_validate.matlab_size(weights.shape) or 'a scalar'}"
        )
    return weights.permute(0, *range(weights.ndim - 1, 0, -1)).reshape(weights.shape[0], -1)


@matlab_function
def fullyconnect(X: Any, weights: Any, bias: Any, *, DataFormat: str | None = None) -> DLArray:
    """MATLAB's ``Y = fullyconnect(X, weights, bias)``: ``weights * x + bias`` per observation.

    Every ``S`` dimension is flattened with ``C`` into one feature vector, in MATLAB's
    column-major order (the first ``S`` fastest, ``C`` slowest); ``B`` and ``T`` are kept.

    Args:
        X: a formatted dlarray with ``C`` (``"SSCB"``, ``"CBT"``, ...), or unformatted data with
            ``DataFormat``.
        weights: ``OutputSize × InputSize`` (or ``OutputSize × h × w × c``, flattened
            column-major as MATLAB does); a tensor, NumPy array or unformatted dlarray.
        bias: ``OutputSize`` values (any shape), or a scalar.
        DataFormat: the format of unformatted ``X``; the result is then unformatted.

    Returns:
        A dlarray of format ``"C"`` plus ``X``'s ``B`` and ``T`` (``"CB"``, ``"CBT"``), ``C`` of
        size ``OutputSize``. Computed in MATLAB's precision: float32 when float32 and float64 meet.

    Shape:
        ``4(S) × 4(S) × 3(C) × 2(B)`` with ``10 × 48`` weights gives ``10(C) × 2(B)``.

    Examples:
        >>> X = dlf.dlarray(torch.randn(4, 4, 3, 2), "SSCB")
        >>> Y = F.fullyconnect(X, torch.randn(10, 48), torch.zeros(10))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CB', (10, 2))
    """
    X, restore = formatted_input(X, DataFormat, "fullyconnect")
    matrix = _matrix(as_data(weights, "fullyconnect weights"))
    return restore(layer_fullyconnect(X, matrix, as_data(bias, "fullyconnect bias")))


def _memory_order(
    data: torch.Tensor, fmt: str, matrix: torch.Tensor, to_rows: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """The input as rows of features, and the weights with their columns in the same order.

    MATLAB flattens the features column-major (the first ``S`` fastest, ``C`` slowest). Where the
    data is stored otherwise (batch-first ``"BCSS"`` memory, as torch's images are: the last ``S``
    fastest), those rows are a copy of the whole input, and the gradient comes back in that
    order, so every layer before reads it with strides. Ordering the weights' columns by the
    data's memory instead makes the rows a view and copies only the weights (when there are
    fewer outputs than observations); each output sums the same products, in another order."""
    kept = [index for index, label in enumerate(fmt) if label in "BTU"]
    features = [index for index, label in enumerate(fmt) if label in "SC"]
    strides = data.stride()
    order = sorted(features, key=lambda index: -strides[index])  # slowest first: row-major reading
    sizes = [data.shape[index] for index in features]
    observations = data.numel() // max(matrix.shape[1], 1)
    if (
        order == features[::-1]
        or math.prod(sizes) != matrix.shape[1]  # an error the caller reports
        or matrix.shape[0] >= observations
    ):
        return rearrange(data, to_rows), matrix  # MATLAB's order is the memory order (or a copy is cheaper)
    permuted = data.permute(*kept, *order)
    try:
        rows = permuted.view(*permuted.shape[: len(kept)], -1)
    except RuntimeError:  # the features are not one block of memory: MATLAB's order, copied
        return rearrange(data, to_rows), matrix
    # the weights' columns as an array of the features' sizes in MATLAB's order (C ... S2 S1 as
    # row-major axes), put into the data's memory order
    axes = features[::-1]
    columns = matrix.reshape(matrix.shape[0], *(sizes[features.index(index)] for index in axes))
    columns = columns.permute(0, *(1 + axes.index(index) for index in order))
    return rows, columns.reshape(matrix.shape[0], -1)


def layer_fullyconnect(X: DLArray, matrix: torch.Tensor, offsets: torch.Tensor) -> DLArray:
    """:func:`fullyconnect` of formatted ``X`` by an ``OutputSize × InputSize`` tensor and a bias
    tensor, as fullyConnectedLayer calls it (its weights and bias are tensors already): the
    checks that depend on the input are :func:`fullyconnect`'s own, which ends here."""
    output, to_rows, back, _, _ = _flatten_plan(X._fmt)
    # "CB" data is features × observations already: one addmm, W x + b, with no permutes there
    # and back (the autograd graph of a recurrent network's last step into its classifier)
    columns = X._fmt == "CB"
    if columns:
        rows = X._data
    else:
        rows, matrix = _memory_order(X._data, X._fmt, matrix, to_rows)
    features = rows.shape[0] if columns else rows.shape[-1]
    if features != matrix.shape[1]:
        raise DLFormatError(
            f'fullyconnect: the "{X._fmt}" input of size {_validate.matlab_size(tuple(X.shape))} flattens '
            f"to {features} features; the weights take {matrix.shape[1]} "
            f"({_validate.matlab_size(tuple(matrix.shape))})"
        )
    if offsets.numel() not in (1, matrix.shape[0]):
        raise DLFormatError(
            f"fullyconnect bias must have {matrix.shape[0]} elements (OutputSize) or 1; got {offsets.numel()}"
        )
    dtype = working_dtype(rows.dtype, matrix.dtype, offsets.dtype)
    if columns:
        # an OutputSize × 1 bias (the layer's) broadcasts over the observations as it is; a
        # scalar one as a 1 × 1
        column = offsets if offsets.ndim == 2 and offsets.shape[1] == 1 else offsets.reshape(-1, 1)
        rows, matrix, column = (as_dtype(value, dtype) for value in (rows, matrix, column))
        return DLArray._wrap(torch.addmm(column, matrix, rows), output)
    # a scalar bias is spread over the outputs; .to is skipped when it would change nothing (per-call cost)
    offsets = offsets.reshape(-1) if offsets.numel() > 1 else offsets.reshape(-1).expand(matrix.shape[0])
    rows, matrix, offsets = (as_dtype(value, dtype) for value in (rows, matrix, offsets))
    result = F.linear(rows, matrix, offsets)
    return DLArray._wrap(rearrange(result, back), output)
