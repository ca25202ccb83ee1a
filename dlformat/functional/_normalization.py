"""MATLAB's normalization functions: ``layernorm``, ``batchnorm``, ``groupnorm``, ``instancenorm``,
and ``crosschannelnorm`` (local response normalization, a different kind: see its docstring).

Each takes a formatted input with ``C`` (or ``DataFormat``), subtracts the mean and divides by
``sqrt(variance + Epsilon)`` over its own set of dimensions (the variance is the biased one,
divided by the number of elements), then scales and shifts each channel by ``scaleFactor`` and
``offset``. They differ in what one mean spans (MathWorks, each function's page):

- ``layernorm``: each observation (the dimensions ``OperationDimension`` names);
- ``batchnorm``: each channel, over ``S``, ``B``, ``T`` and ``U``;
- ``groupnorm``: each group of channels of each observation, over ``S``, ``T`` and ``U`` too;
- ``instancenorm``: each channel of each observation, over ``S``, ``T`` and ``U``.

Half-precision data is normalized in float32 and returned in its own dtype.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from .._tracing import cached_plan
from ._common import as_data, formatted_input, working_dtype

__all__ = ["batchnorm", "crosschannelnorm", "groupnorm", "instancenorm", "layernorm"]

OPERATION_DIMENSIONS = ("auto", "channel-only", "spatial-channel", "batch-excluded")


@cached_plan()
def _reduced_dimensions(fmt: str, operation: str) -> tuple[int, ...]:
    """The dimensions of ``fmt`` that one normalization group spans."""
    if operation == "auto":
        operation = "channel-only" if "T" in fmt or "S" not in fmt else "spatial-channel"
    labels = {"channel-only": "C", "spatial-channel": "SC", "batch-excluded": "SCTU"}[operation]
    return tuple(index for index, label in enumerate(fmt) if label in labels)


def _per_channel(caller: str, name: str, value: Any, channels: int) -> torch.Tensor:
    data = as_data(value, f"{caller} {name}")
    if data.numel() != channels:
        raise DLFormatError(
            f"{caller} {name} must have one value per channel ({channels}); got "
            f"{_validate.matlab_size(tuple(data.shape)) or 'a scalar'}"
        )
    return data.reshape(-1)


def _computing(dtype: torch.dtype) -> torch.dtype:
    """The dtype a normalization computes in: float32 for half-precision data."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _scale_shift(
    normalized: torch.Tensor, channel: int, scale: torch.Tensor, shift: torch.Tensor
) -> torch.Tensor:
    """``normalized · scaleFactor + offset``, one value of each per channel."""
    shape = [1] * normalized.ndim
    shape[channel] = -1
    return normalized * scale.to(normalized.dtype).view(shape) + shift.to(normalized.dtype).view(shape)


def _moments(data: torch.Tensor, dims: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """The biased variance and the mean over ``dims`` (kept as singletons). Over no dimension at
    all (``instancenorm`` of ``"CB"`` data) each element is its own mean, with variance 0; torch
    would read an empty ``dim`` as every dimension."""
    if not dims:
        return torch.zeros_like(data), data
    return torch.var_mean(data, dim=dims, correction=0, keepdim=True)


def _standardized(data: torch.Tensor, dims: tuple[int, ...], epsilon: float) -> torch.Tensor:
    """``(data − mean)/sqrt(var + epsilon)``, mean and biased variance over ``dims``."""
    variance, mean = _moments(data, dims)
    return (data - mean) * torch.rsqrt(variance + epsilon)


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
    shift = _per_channel("layernorm", "offset", offset, channels)
    scale = _per_channel("layernorm", "scaleFactor", scaleFactor, channels)
    dtype = working_dtype(data.dtype, shift.dtype, scale.dtype)
    normalized = _standardized(data.to(_computing(dtype)), _reduced_dimensions(X._fmt, operation), epsilon)
    return restore(DLArray._wrap(_scale_shift(normalized, channel, scale, shift).to(dtype), X._fmt))


@cached_plan()
def _all_but(fmt: str, kept: str) -> tuple[int, ...]:
    """The positions of ``fmt`` whose labels are not in ``kept``."""
    return tuple(index for index, label in enumerate(fmt) if label not in kept)


def _statistic(values: torch.Tensor, like: Any, dtype: torch.dtype) -> DLArray:
    """A per-channel statistic as an unformatted dlarray shaped like ``like`` (the given running
    value, or the offset), detached: statistics are state, not learnables."""
    shape = as_data(like, "batchnorm statistic").shape
    return DLArray._wrap(values.detach().reshape(shape).to(dtype), "")


@matlab_function
def batchnorm(
    X: Any,
    offset: Any,
    scaleFactor: Any,
    mu: Any = None,
    sigmaSq: Any = None,
    *,
    Epsilon: float = 1e-5,
    MeanDecay: float = 0.1,
    VarianceDecay: float = 0.1,
    DataFormat: str | None = None,
    ReturnStatistics: bool = False,
) -> Any:
    """MATLAB's ``batchnorm``: normalize each channel over ``S``, ``B``, ``T`` and ``U``.

    ``Y = (X − μ)/sqrt(σ² + Epsilon) · scaleFactor + offset`` per channel. MATLAB chooses what
    ``μ`` and ``σ²`` are by the number of outputs asked for; Python asks with
    ``ReturnStatistics=True`` for MATLAB's ``[Y, mu, sigmaSq] = ...``:

    - ``Y = batchnorm(X, offset, scale)`` → ``F.batchnorm(X, offset, scale)``
    - ``[Y, mu, sigmaSq] = batchnorm(X, offset, scale)`` →
      ``F.batchnorm(X, offset, scale, ReturnStatistics=True)``
    - ``Y = batchnorm(X, offset, scale, trainedMu, trainedSigmaSq)`` →
      ``F.batchnorm(X, offset, scale, trainedMu, trainedSigmaSq)``
    - ``[Y, mu, sigmaSq] = batchnorm(X, offset, scale, mu, sigmaSq)`` →
      ``F.batchnorm(X, offset, scale, mu, sigmaSq, ReturnStatistics=True)``

    - Without statistics, ``X`` is normalized by its own mean and (biased) variance per channel,
      which ``ReturnStatistics=True`` also returns.
    - With statistics and one output (inference), ``X`` is normalized by the given
      (trained) mean and variance.
    - With statistics and ``ReturnStatistics=True`` (training), ``X`` is normalized by its own
      statistics, and the given running statistics come back updated, MathWorks' formula
      ``s_n = φ·s_x + (1 − φ)·s_(n−1)``: ``φ`` is ``MeanDecay`` (for the mean) or
      ``VarianceDecay`` (for the variance), ``s_x`` the input's statistic (the same biased
      variance it is normalized by), ``s_(n−1)`` the given one. (torch's ``BatchNorm`` updates its
      running variance with the unbiased one instead.)

    Args:
        X: a formatted dlarray with ``C``, or unformatted data with ``DataFormat``.
        offset, scaleFactor: one value per channel (any shape).
        mu, sigmaSq: trained or running mean and variance, one value per channel; both or neither.
        Epsilon: added to the variance (positive; default 1e-5).
        MeanDecay, VarianceDecay: the decay ``φ`` of the running statistics, in [0, 1] (default 0.1).
        ReturnStatistics: also return the statistics (MATLAB's second and third outputs).

    Returns:
        ``Y`` of ``X``'s format, or ``(Y, mu, sigmaSq)``. The statistics are unformatted dlarrays
        shaped like the given ones (or like ``offset``), detached from autograd.

    Examples:
        >>> X = dlf.dlarray(torch.randn(4, 4, 3, 8), "SSCB")
        >>> Y, mu, sigmaSq = F.batchnorm(X, torch.zeros(3), torch.ones(3), ReturnStatistics=True)
        >>> offset, scale = torch.zeros(3), torch.ones(3)
        >>> _, mu, sigmaSq = F.batchnorm(X, offset, scale, mu, sigmaSq, ReturnStatistics=True)
        >>> Y = F.batchnorm(X, offset, scale, mu, sigmaSq)  # inference
        >>> dlf.dims(Y), tuple(mu.shape)
        ('SSCB', (3,))
    """
    X, restore = formatted_input(X, DataFormat, "batchnorm", needs="C")
    epsilon = _validate.positive("Epsilon", Epsilon)
    mean_decay = _validate.unit_interval("batchnorm: MeanDecay", MeanDecay)
    variance_decay = _validate.unit_interval("batchnorm: VarianceDecay", VarianceDecay)
    if (mu is None) != (sigmaSq is None):
        raise DLFormatError(
            "batchnorm takes a mean and a variance (trained or running statistics) together, or neither; "
            f"got only the {'mean' if sigmaSq is None else 'variance'}"
        )
    data = X._data
    channel = X._fmt.index("C")
    channels = data.shape[channel]
    shift = _per_channel("batchnorm", "offset", offset, channels)
    scale = _per_channel("batchnorm", "scaleFactor", scaleFactor, channels)
    given = (
        ()
        if mu is None
        else (
            _per_channel("batchnorm", "mean", mu, channels),
            _per_channel("batchnorm", "variance", sigmaSq, channels),
        )
    )
    dtype = working_dtype(data.dtype, shift.dtype, scale.dtype, *(value.dtype for value in given))
    working = data.to(_computing(dtype))
    shape = [1] * data.ndim
    shape[channel] = -1
    if given and not ReturnStatistics:
        mean, variance = (value.to(working.dtype).view(shape) for value in given)
    else:
        variance, mean = _moments(working, _all_but(X._fmt, "C"))
    normalized = (working - mean) * torch.rsqrt(variance + epsilon)
    Y = restore(DLArray._wrap(_scale_shift(normalized, channel, scale, shift).to(dtype), X._fmt))
    if not ReturnStatistics:
        return Y
    if not given:
        return Y, _statistic(mean, offset, dtype), _statistic(variance, offset, dtype)
    running_mean, running_variance = (value.to(working.dtype) for value in given)
    return (
        Y,
        _statistic(mean_decay * mean.reshape(-1) + (1 - mean_decay) * running_mean, mu, dtype),
        _statistic(
            variance_decay * variance.reshape(-1) + (1 - variance_decay) * running_variance, sigmaSq, dtype
        ),
    )


GROUPINGS = ("all-channels", "channel-wise")


@matlab_function
def groupnorm(
    X: Any,
    numGroups: Any,
    offset: Any,
    scaleFactor: Any,
    *,
    Epsilon: float = 1e-5,
    DataFormat: str | None = None,
) -> DLArray:
    """MATLAB's ``Y = groupnorm(X, numGroups, offset, scaleFactor)``: normalize each group of
    channels of each observation.

    The channels are split into ``numGroups`` consecutive groups; one mean and (biased) variance
    spans a group's channels and the ``S``, ``T`` and ``U`` dimensions, separately for each
    observation (``B``). Then ``· scaleFactor + offset`` per channel.

    Args:
        X: a formatted dlarray with ``C``, or unformatted data with ``DataFormat``.
        numGroups: a positive integer dividing the number of channels, ``"all-channels"`` (one
            group) or ``"channel-wise"`` (one group per channel).
        offset, scaleFactor: one value per channel.
        Epsilon: added to the variance (positive; default 1e-5).

    Examples:
        >>> X = dlf.dlarray(torch.randn(4, 4, 6, 2), "SSCB")
        >>> tuple(F.groupnorm(X, 3, torch.zeros(6), torch.ones(6)).shape)
        (4, 4, 6, 2)
    """
    X, restore = formatted_input(X, DataFormat, "groupnorm", needs="C")
    epsilon = _validate.positive("Epsilon", Epsilon)
    data = X._data
    channel = X._fmt.index("C")
    channels = data.shape[channel]
    if isinstance(numGroups, (str, bytes)):
        grouping = _validate.choice(
            "groupnorm: numGroups", numGroups, GROUPINGS, also=", or a positive integer"
        )
        groups = 1 if grouping == "all-channels" else channels
    else:
        groups = _validate.positive_integer("groupnorm: numGroups", numGroups)
        if channels % groups:
            raise DLFormatError(
                f"groupnorm: numGroups ({groups}) must divide the number of channels ({channels})"
            )
    shift = _per_channel("groupnorm", "offset", offset, channels)
    scale = _per_channel("groupnorm", "scaleFactor", scaleFactor, channels)
    dtype = working_dtype(data.dtype, shift.dtype, scale.dtype)
    grouped = data.to(_computing(dtype)).unflatten(channel, (groups, channels // groups))
    # "C" splits into a group label ("B": kept) and the channels within the group ("S": spanned)
    split = X._fmt[:channel] + "BS" + X._fmt[channel + 1 :]
    normalized = _standardized(grouped, _all_but(split, "B"), epsilon).flatten(channel, channel + 1)
    return restore(DLArray._wrap(_scale_shift(normalized, channel, scale, shift).to(dtype), X._fmt))


@matlab_function
def instancenorm(
    X: Any,
    offset: Any,
    scaleFactor: Any,
    *,
    Epsilon: float = 1e-5,
    DataFormat: str | None = None,
) -> DLArray:
    """MATLAB's ``Y = instancenorm(X, offset, scaleFactor)``: normalize each channel of each
    observation over ``S``, ``T`` and ``U``, then ``· scaleFactor + offset`` per channel.

    Args:
        X: a formatted dlarray with ``C``, or unformatted data with ``DataFormat``.
        offset, scaleFactor: one value per channel.
        Epsilon: added to the variance (positive; default 1e-5).

    Examples:
        >>> X = dlf.dlarray(torch.randn(4, 4, 3, 2), "SSCB")
        >>> Y = F.instancenorm(X, torch.zeros(3), torch.ones(3))
        >>> round(float(dlf.extractdata(Y)[:, :, 0, 0].mean()), 6) == 0
        True
    """
    X, restore = formatted_input(X, DataFormat, "instancenorm", needs="C")
    epsilon = _validate.positive("Epsilon", Epsilon)
    data = X._data
    channel = X._fmt.index("C")
    channels = data.shape[channel]
    shift = _per_channel("instancenorm", "offset", offset, channels)
    scale = _per_channel("instancenorm", "scaleFactor", scaleFactor, channels)
    dtype = working_dtype(data.dtype, shift.dtype, scale.dtype)
    normalized = _standardized(data.to(_computing(dtype)), _all_but(X._fmt, "CB"), epsilon)
    return restore(DLArray._wrap(_scale_shift(normalized, channel, scale, shift).to(dtype), X._fmt))


@matlab_function
def crosschannelnorm(
    X: Any,
    windowSize: Any,
    *,
    Alpha: float = 1e-4,
    Beta: float = 0.75,
    K: float = 2.0,
    DataFormat: str | None = None,
) -> DLArray:
    """MATLAB's ``Y = crosschannelnorm(X, windowSize)``: local response normalization across channels.

    Each element is divided by ``(K + Alpha · ss / windowSize)^Beta``, where ``ss`` is the sum of
    squares of the elements at the same position in a window of ``windowSize`` channels: the
    ``floor((windowSize − 1)/2)`` channels before it, itself, and the ``floor(windowSize/2)``
    after it (MathWorks, ``crosschannelnorm`` and ``crossChannelNormalizationLayer``); channels
    past either end count as zeros. For an even window this is the mirror image of torch's
    ``local_response_norm``, which looks further back than forward.

    Args:
        X: a formatted dlarray with ``C``, or unformatted data with ``DataFormat``.
        windowSize: the number of channels in the window, a positive integer.
        Alpha, Beta, K: the hyperparameters (defaults 1e-4, 0.75, 2).

    Half-precision data is computed in float32 and returned in its own dtype.

    Examples:
        >>> X = dlf.dlarray(torch.ones(2, 2, 3, 1), "SSCB")
        >>> Y = F.crosschannelnorm(X, 3, Alpha=1, Beta=1, K=0)
        >>> dlf.extractdata(Y)[0, 0, :, 0].tolist()  # edge channels see 2 ones, the middle one 3
        [1.5, 1.0, 1.5]
    """
    X, restore = formatted_input(X, DataFormat, "crosschannelnorm", needs="C")
    window = _validate.positive_integer("crosschannelnorm: windowSize", windowSize)
    alpha = _validate.real("crosschannelnorm: Alpha", Alpha)
    beta = _validate.real("crosschannelnorm: Beta", Beta)
    k = _validate.real("crosschannelnorm: K", K)
    data = X._data
    dtype = data.dtype
    channel = X._fmt.index("C")
    working = data.to(_computing(dtype))
    # the squares with channels last, as (positions, 1, channels): one pooling sums every window
    squares = working.square().movedim(channel, -1)
    rows = squares.reshape(-1, 1, squares.shape[-1])
    padded = F.pad(rows, ((window - 1) // 2, window // 2))
    mean_square = F.avg_pool1d(padded, window, stride=1).reshape(squares.shape).movedim(-1, channel)
    Y = working / (k + alpha * mean_square).pow(beta)
    return restore(DLArray._wrap(Y.to(dtype), X._fmt))
