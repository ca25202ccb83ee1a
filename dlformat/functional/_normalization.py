"""MATLAB's ``layernorm``: normalize each observation, then scale and shift per channel.

The batch-, group- and instance-normalization functions of MATLAB's image layers
(``batchnorm``, ``groupnorm``, ``instancenorm``) belong here too, with the same pattern:
a formatted input (or ``DataFormat``), per-channel learnables, MATLAB's option names.
"""

from __future__ import annotations

from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from .._tracing import cached_plan
from ._common import as_data, formatted_input, working_dtype

__all__ = ["layernorm"]

OPERATION_DIMENSIONS = ("auto", "channel-only", "spatial-channel", "batch-excluded")


@cached_plan()
def _reduced_dimensions(fmt: str, operation: str) -> tuple[int, ...]:
    """The dimensions of ``fmt`` that one normalization group spans."""
    if operation == "auto":
        operation = "channel-only" if "T" in fmt or "S" not in fmt else "spatial-channel"
    labels = {"channel-only": "C", "spatial-channel": "SC", "batch-excluded": "SCTU"}[operation]
    return tuple(index for index, label in enumerate(fmt) if label in labels)


def _per_channel(name: str, value: Any, channels: int) -> torch.Tensor:
    data = as_data(value, f"layernorm {name}")
    if data.numel() != channels:
        raise DLFormatError(
            f"layernorm {name} must have one value per channel ({channels}); got "
            f"{_validate.matlab_size(tuple(data.shape)) or 'a scalar'}"
        )
    return data.reshape(-1)


@matlab_function
def layernorm(
    X: Any,
    offset: Any,
    scaleFactor: Any,
    *,
    Epsilon: float = 1e-5,
    OperationDimension: str = "auto",
    DataFormat: str | None = None,
) -> DLArray:
    """MATLAB's ``Y = layernorm(X, offset, scaleFactor)``.

    ``Y = (X - mean) / sqrt(var + Epsilon) * scaleFactor + offset``, with the mean and the
    biased variance taken over the dimensions ``OperationDimension`` names, separately for
    every other index; ``offset`` and ``scaleFactor`` hold one value per channel.

    Args:
        X: a formatted dlarray with ``C``, or unformatted data with ``DataFormat``.
        offset, scaleFactor: one value per channel (``NumChannels × 1``, any shape).
        Epsilon: added to the variance (positive; default 1e-5).
        OperationDimension: ``"auto"`` (``C`` alone for data with ``T`` or without ``S``;
            ``S`` and ``C`` otherwise), ``"channel-only"``, ``"spatial-channel"`` or
            ``"batch-excluded"`` (every dimension but ``B``).

    Half-precision data is normalized in float32 and returned in its own dtype.

    Examples:
        >>> X = dlf.dlarray(torch.randn(4, 2, 5), "CBT")
        >>> Y = F.layernorm(X, torch.zeros(4), torch.ones(4))
        >>> dlf.dims(Y)
        'CBT'
    """
    X, restore = formatted_input(X, DataFormat, "layernorm", needs="C")
    epsilon = _validate.positive("Epsilon", Epsilon)
    operation = _validate.choice("OperationDimension", OperationDimension, OPERATION_DIMENSIONS)
    data = X._data
    channel = X._fmt.index("C")
    channels = data.shape[channel]
    shift = _per_channel("offset", offset, channels)
    scale = _per_channel("scaleFactor", scaleFactor, channels)
    dtype = working_dtype(data.dtype, shift.dtype, scale.dtype)
    working = data.to(torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype)
    variance, mean = torch.var_mean(
        working, dim=_reduced_dimensions(X._fmt, operation), correction=0, keepdim=True
    )
    shape = [1] * data.ndim
    shape[channel] = -1
    normalized = (working - mean) * torch.rsqrt(variance + epsilon)
    normalized = normalized * scale.to(working.dtype).view(shape) + shift.to(working.dtype).view(shape)
    return restore(DLArray._wrap(normalized.to(dtype), X._fmt))
