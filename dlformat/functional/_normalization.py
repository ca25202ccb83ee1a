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

from collections.abc import Callable
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


# the options every normalization function takes, with MATLAB's defaults
NORMALIZATION_OPTIONS = {"Epsilon": 1e-5, "DataFormat": None}


class _Normalization:
    """One normalization call's checked input, ``Epsilon``, per-channel offset and scale, and the
    working dtype (MATLAB's: single wins over double)."""

    def __init__(self, caller: str, X: Any, offset: Any, scaleFactor: Any, options: dict[str, Any]) -> None:
        self.X, self.restore = formatted_input(X, options["DataFormat"], caller, needs="C")
        self.epsilon = _validate.positive("Epsilon", options["Epsilon"])
        self.channel = self.X._fmt.index("C")
        self.channels = self.X.shape[self.channel]
        self.shift = _per_channel(caller, "offset", offset, self.channels)
        self.scale = _per_channel(caller, "scaleFactor", scaleFactor, self.channels)
        self.dtype = working_dtype(self.X.dtype, self.shift.dtype, self.scale.dtype)

    def working(self) -> torch.Tensor:
        """The data in the precision the statistics are computed in."""
        return self.X._data.to(_computing(self.dtype))

    def result(self, normalized: torch.Tensor) -> DLArray:
        """``normalized · scaleFactor + offset`` per channel, in the input's format (or unformatted)."""
        return self.wrap(_scale_shift(normalized, self.channel, self.scale, self.shift))

    def wrap(self, scaled: torch.Tensor) -> DLArray:
        """Already scaled and shifted data in the working dtype as the result."""
        return self.restore(DLArray._wrap(scaled.to(self.dtype), self.X._fmt))


@matlab_function(shared=NORMALIZATION_OPTIONS)
def layernorm(
    X: Any,
    offset: Any,
    scaleFactor: Any,
    *,
    OperationDimension: str = "auto",
    **options: Any,
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
    norm = _Normalization("layernorm", X, offset, scaleFactor, options)
    operation = _validate.choice("OperationDimension", OperationDimension, OPERATION_DIMENSIONS)
    dimensions = _reduced_dimensions(norm.X._fmt, operation)
    return _fused_layernorm(norm, norm.working(), dimensions)


def _fused_layernorm(norm: _Normalization, working: torch.Tensor, dimensions: tuple[int, ...]) -> DLArray:
    """``layernorm`` on torch's fused kernel, which normalizes trailing dimensions: the spanned
    ones are moved last, each group in its memory order (a contiguous tensor stays one), and the
    per-channel scale and offset are spread over them as the kernel's weight and bias."""
    kept = sorted((index for index in range(working.ndim) if index not in dimensions), key=working.stride)
    spanned = sorted(dimensions, key=working.stride)
    order = (*reversed(kept), *reversed(spanned))
    data = working.permute(order)
    trailing = data.shape[len(kept) :]
    weight, bias = _fused_affine(norm, working)
    if len(spanned) > 1:  # the channel's values repeat along the other spanned dimensions
        shape = [1] * len(trailing)
        shape[order[len(kept) :].index(norm.channel)] = -1
        weight, bias = (value.view(shape).expand(trailing) for value in (weight, bias))
    normalized = F.layer_norm(data, trailing, weight, bias, norm.epsilon)
    inverse = tuple(sorted(range(len(order)), key=order.__getitem__))
    return norm.wrap(normalized.permute(inverse))


@cached_plan()
def _all_but(fmt: str, kept: str) -> tuple[int, ...]:
    """The positions of ``fmt`` whose labels are not in ``kept``."""
    return tuple(index for index, label in enumerate(fmt) if label not in kept)


def _statistic(values: torch.Tensor, like: Any, dtype: torch.dtype) -> DLArray:
    """A per-channel statistic as an unformatted dlarray shaped like ``like`` (the given running
    value, or the offset), detached: statistics are state, not learnables."""
    shape = as_data(like, "batchnorm statistic").shape
    return DLArray._wrap(values.detach().reshape(shape).to(dtype), "")


@matlab_function(shared=NORMALIZATION_OPTIONS)
def batchnorm(
    X: Any,
    offset: Any,
    scaleFactor: Any,
    mu: Any = None,
    sigmaSq: Any = None,
    *,
    MeanDecay: float = 0.1,
    VarianceDecay: float = 0.1,
    ReturnStatistics: bool = False,
    **options: Any,
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
    norm = _Normalization("batchnorm", X, offset, scaleFactor, options)
    channels = norm.channels
    mean_decay = _validate.unit_interval("batchnorm: MeanDecay", MeanDecay)
    variance_decay = _validate.unit_interval("batchnorm: VarianceDecay", VarianceDecay)
    if (mu is None) != (sigmaSq is None):
        raise DLFormatError(
            "batchnorm takes a mean and a variance (trained or running statistics) together, or neither; "
            f"got only the {'mean' if sigmaSq is None else 'variance'}"
        )
    given = (
        ()
        if mu is None
        else (
            _per_channel("batchnorm", "mean", mu, channels),
            _per_channel("batchnorm", "variance", sigmaSq, channels),
        )
    )
    dtype = norm.dtype = working_dtype(norm.dtype, *(value.dtype for value in given))
    working = norm.working()
    if not given:
        Y, mean, variance = _batch_statistics_norm(norm, working)
        if ReturnStatistics:
            return Y, _statistic(mean, offset, dtype), _statistic(variance, offset, dtype)
        return Y
    running_mean, running_variance = (value.to(working.dtype) for value in given)
    if not ReturnStatistics:
        return _trained_statistics_norm(norm, working, running_mean, running_variance)
    Y, mean, variance = _batch_statistics_norm(norm, working)
    return (
        Y,
        # φ·s_x + (1 − φ)·s_(n−1) as one kernel: s_(n−1) + φ·(s_x − s_(n−1))
        _statistic(torch.lerp(running_mean, mean, mean_decay), mu, dtype),
        _statistic(torch.lerp(running_variance, variance, variance_decay), sigmaSq, dtype),
    )


def layer_batchnorm(
    X: DLArray,
    offset: torch.Tensor,
    scale: torch.Tensor,
    mean: torch.Tensor,
    variance: torch.Tensor,
    epsilon: float,
    decays: tuple[float, float] | None,
) -> tuple[DLArray, torch.Tensor | None, torch.Tensor | None]:
    """:func:`batchnorm` as batchNormalizationLayer calls it with its own tensors and checked
    properties: inference by the trained statistics (``decays`` None), or training by the batch's
    statistics, with the running ones updated by ``decays`` (mean, variance). Returns ``Y`` and
    the updated statistics shaped like the given ones (None for inference).

    The common case (float32 or float64 data, offset, scale and statistics of the data's dtype,
    one value of each per channel, statistics outside autograd, at least two values per channel)
    runs the same kernels as :func:`batchnorm` without its option checks and dtype conversions,
    which cost more than the kernel on small inputs; anything else goes through
    :func:`batchnorm` itself."""
    data = X._data
    channel = X._fmt.index("C")
    channels = data.shape[channel]
    plain = (
        data.dtype in (torch.float32, torch.float64)
        and all(
            value.dtype == data.dtype and value.numel() == channels and not value.requires_grad
            for value in (mean, variance)
        )
        and all(value.dtype == data.dtype and value.numel() == channels for value in (offset, scale))
    )
    if plain and channels and data.numel() >= 2 * channels:
        batched, back = _channels_second(data, channel)
        weight, bias = scale.reshape(-1), offset.reshape(-1)
        if decays is None:
            normalized = F.batch_norm(
                batched, mean.reshape(-1), variance.reshape(-1), weight, bias, False, 0.0, epsilon
            )
            return DLArray._wrap(back(normalized), X._fmt), None, None
        # the batch's mean and unbiased variance, as _batch_statistics_norm has the kernel leave them
        batch_mean, batch_variance = data.new_zeros(channels), data.new_zeros(channels)
        normalized = F.batch_norm(batched, batch_mean, batch_variance, weight, bias, True, 1.0, epsilon)
        count = batched.numel() // channels
        batch_variance = batch_variance * ((count - 1) / count)
        return (
            DLArray._wrap(back(normalized), X._fmt),
            torch.lerp(mean.reshape(-1), batch_mean, decays[0]).reshape(mean.shape),
            torch.lerp(variance.reshape(-1), batch_variance, decays[1]).reshape(variance.shape),
        )
    if decays is None:
        return batchnorm(X, offset, scale, mean, variance, Epsilon=epsilon), None, None
    Y, new_mean, new_variance = batchnorm(
        X, offset, scale, mean, variance, Epsilon=epsilon, MeanDecay=decays[0], VarianceDecay=decays[1],
        ReturnStatistics=True,
    )  # fmt: skip
    return Y, new_mean._data, new_variance._data


def _channels_second(
    data: torch.Tensor, channel: int
) -> tuple[torch.Tensor, Callable[[torch.Tensor], torch.Tensor]]:
    """``data`` permuted to ``(N, C, ...)`` as torch's batch normalization takes it, and the
    permutation that undoes it. The dimensions stored outside the channel (larger strides) go
    before it, those stored inside it after, each in memory order: a dense tensor stays
    contiguous, and so does the kernel's result put back. With none outside, a leading dimension
    of size 1 is added."""
    order, inverse, outer = _channel_order(data.stride(), channel)
    permuted = data.permute(order)
    if outer == 1:  # already (N, C, ...): no reshapes (each would be one more autograd node)
        return permuted, lambda result: result.permute(inverse)
    sizes = permuted.shape[:outer]
    # the outer dimensions as one N (a view for a dense tensor), or a new one of size 1
    batched = permuted.flatten(0, outer - 1) if outer else permuted.unsqueeze(0)
    return batched, lambda result: result.unflatten(0, sizes or (1,)).reshape(permuted.shape).permute(inverse)


@cached_plan()
def _channel_order(strides: tuple[int, ...], channel: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """:func:`_channels_second`'s permutation for a memory layout, its inverse, and how many
    dimensions go before the channel (planned once per layout: sorting by stride on every call
    cost a batch-1 call more than torch's kernel did)."""
    others = sorted(
        (index for index in range(len(strides)) if index != channel), key=strides.__getitem__, reverse=True
    )
    outer = [index for index in others if strides[index] > strides[channel]]
    inner = [index for index in others if strides[index] <= strides[channel]]
    order = (*outer, channel, *inner)
    return order, tuple(sorted(range(len(order)), key=order.__getitem__)), len(outer)


def _fused_affine(norm: _Normalization, working: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``scaleFactor`` and ``offset`` as the fused kernels' weight and bias."""
    return norm.scale.to(working.dtype), norm.shift.to(working.dtype)


def _batch_statistics_norm(
    norm: _Normalization, working: torch.Tensor
) -> tuple[DLArray, torch.Tensor, torch.Tensor]:
    """``Y`` normalized by the batch's own statistics, and those statistics per channel (the mean
    and the biased variance, detached), on torch's fused kernel.

    The kernel's running statistics are where it leaves the batch's: started at zero with
    momentum 1 they *are* the batch mean and the unbiased variance, which ``(n − 1)/n`` turns
    into the biased one MATLAB's update uses. With one value per channel (variance 0, every
    value its own mean) torch refuses; that case is computed by hand."""
    data, back = _channels_second(working, norm.channel)
    count = data.numel() // max(norm.channels, 1)
    if count < 2:
        variance, mean = _moments(working, _all_but(norm.X._fmt, "C"))
        Y = norm.result((working - mean) * torch.rsqrt(variance + norm.epsilon))
        return Y, mean.reshape(-1).detach(), variance.reshape(-1).detach()
    mean = working.new_zeros(norm.channels)
    variance = working.new_zeros(norm.channels)
    weight, bias = _fused_affine(norm, working)
    normalized = F.batch_norm(data, mean, variance, weight, bias, True, 1.0, norm.epsilon)
    variance = variance * ((count - 1) / count)
    return norm.wrap(back(normalized)), mean, variance


def _trained_statistics_norm(
    norm: _Normalization, working: torch.Tensor, mean: torch.Tensor, variance: torch.Tensor
) -> DLArray:
    """``Y`` normalized by given (trained) statistics: torch's fused kernel in inference mode,
    unless a statistic takes part in autograd (the kernel gives no gradient for them)."""
    if mean.requires_grad or variance.requires_grad:
        shape = [1] * working.ndim
        shape[norm.channel] = -1
        return norm.result((working - mean.view(shape)) * torch.rsqrt(variance.view(shape) + norm.epsilon))
    data, back = _channels_second(working, norm.channel)
    weight, bias = _fused_affine(norm, working)
    normalized = F.batch_norm(data, mean, variance, weight, bias, False, 0.0, norm.epsilon)
    return norm.wrap(back(normalized))


GROUPINGS = ("all-channels", "channel-wise")


@matlab_function(shared=NORMALIZATION_OPTIONS)
def groupnorm(X: Any, numGroups: Any, offset: Any, scaleFactor: Any, **options: Any) -> DLArray:
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
    norm = _Normalization("groupnorm", X, offset, scaleFactor, options)
    channel, channels = norm.channel, norm.channels
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
    grouped = norm.working().unflatten(channel, (groups, channels // groups))
    # "C" splits into a group label ("B": kept) and the channels within the group ("S": spanned)
    split = norm.X._fmt[:channel] + "BS" + norm.X._fmt[channel + 1 :]
    normalized = _standardized(grouped, _all_but(split, "B"), norm.epsilon).flatten(channel, channel + 1)
    return norm.result(normalized)


@matlab_function(shared=NORMALIZATION_OPTIONS)
def instancenorm(X: Any, offset: Any, scaleFactor: Any, **options: Any) -> DLArray:
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
    norm = _Normalization("instancenorm", X, offset, scaleFactor, options)
    return norm.result(_standardized(norm.working(), _all_but(norm.X._fmt, "CB"), norm.epsilon))


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
