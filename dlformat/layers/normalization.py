"""MATLAB's normalization layers: layer, batch, group, instance and cross-channel normalization.

The first four normalize with a mean and variance over their own set of dimensions, then scale
and shift each channel by the learnables ``Scale`` and ``Offset``; they share those
declarations (:class:`_ChannelNormalization`) and differ in what one mean spans (see
``dlformat.functional``). ``Offset``, ``Scale`` and batch normalization's ``TrainedMean`` and
``TrainedVariance`` hold one value per channel in MATLAB's sizes: any of them is accepted, and
the first input gives them its kind's (``NumChannels×1`` for feature and sequence input,
``1×1×NumChannels`` for 2-D images, ...; see :class:`~dlformat.layers._properties.PerChannel`).
``crossChannelNormalizationLayer`` is local response normalization, without learnables.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional import crosschannelnorm, groupnorm, instancenorm, layernorm
from ..functional._common import floating_data
from ..functional._normalization import GROUPINGS, OPERATION_DIMENSIONS, layer_batchnorm
from ._base import Layer, matlab_constructor
from ._properties import (
    Learnable,
    PerChannel,
    Property,
    StateParameter,
    auto_size_property,
    choice_property,
    factor_properties,
    initializer_property,
)

__all__ = [
    "BatchNormalizationLayer",
    "CrossChannelNormalizationLayer",
    "GroupNormalizationLayer",
    "InstanceNormalizationLayer",
    "LayerNormalizationLayer",
    "batchNormalizationLayer",
    "crossChannelNormalizationLayer",
    "groupNormalizationLayer",
    "instanceNormalizationLayer",
    "layerNormalizationLayer",
]

STATISTICS = ("TrainedMean", "TrainedVariance")  # batch normalization's state, in MATLAB's order
EPSILON_DOC = "Added to the variance (positive; default 1e-5)."


class _ChannelNormalization(Layer):
    """What the normalization layers with ``Offset`` and ``Scale`` share.

    Args:
        Epsilon: added to the variance (positive; default 1e-5).
        NumChannels: ``"auto"`` (from the first input) or the channel count.
        OffsetInitializer: default ``"zeros"``; ScaleInitializer: default ``"ones"``.
        Offset, Scale: initial values, one per channel, in any of MATLAB's sizes
            (``NumChannels×1``, ``1×NumChannels``, ``1×1×NumChannels``, ``1×1×1×NumChannels``);
            the first input gives them the size MathWorks' pages give its kind (see
            :class:`~dlformat.layers._properties.PerChannel`).
        OffsetLearnRateFactor, ScaleLearnRateFactor, OffsetL2Factor, ScaleL2Factor: default 1.
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.
    """

    lazy_size = "NumChannels"
    lazy_meaning = "channels"

    NumChannels = auto_size_property('"auto" or the channel count.')
    Epsilon = Property(_validate.positive, default=1e-5, doc=EPSILON_DOC)
    Offset = Learnable(initializer="OffsetInitializer", shape=PerChannel("NumChannels"))
    Scale = Learnable(initializer="ScaleInitializer", shape=PerChannel("NumChannels"))
    OffsetInitializer = initializer_property("zeros")
    ScaleInitializer = initializer_property("ones")
    OffsetLearnRateFactor, OffsetL2Factor = factor_properties("Offset")
    ScaleLearnRateFactor, ScaleL2Factor = factor_properties("Scale")

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        """The channel count from any per-channel value given at construction (its element count:
        MATLAB's values are NumChannels×1, or 1×1×NumChannels for 2-D images, ...)."""
        sizes = [math.prod(getattr(value, "shape", ())) for value in given.values() if value is not None]
        return sizes[0] if sizes else None

    def _checked_input(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller, '"CB", "SCB", "SSCB", "SSSCB", "CBT", "CT"')
        floating_data(X._data, self._caller())
        self._fit_input(X)
        return X


class LayerNormalizationLayer(_ChannelNormalization):
    """Normalizes each observation over its channels (and more, per ``OperationDimension``).

    ``Y = (X - mean) / sqrt(var + Epsilon) * Scale + Offset``, with mean and (biased) variance
    taken over the dimensions ``OperationDimension`` names, separately for every other index;
    see :func:`dlformat.functional.layernorm`.

    Args:
        Epsilon: added to the variance (positive; default 1e-5).
        OperationDimension: ``"auto"`` (``C`` alone for data with ``T`` or without ``S``; ``S``
            and ``C`` otherwise), ``"channel-only"``, ``"spatial-channel"`` or
            ``"batch-excluded"`` (every dimension but ``B``).
        NumChannels, Offset, Scale, their initializers and factors, Name, device, dtype,
            generator: as every channel normalization layer takes them (see the module's
            ``_ChannelNormalization``).

    Examples:
        >>> layer = dlf.layerNormalizationLayer(Epsilon=1e-6)
        >>> Y = layer(dlf.dlarray(torch.randn(4, 2, 5), "CBT"))
        >>> tuple(layer.Scale.shape)
        (4, 1)
    """

    default_name = "layernorm"

    OperationDimension = choice_property(OPERATION_DIMENSIONS, "auto", "What one group spans.")

    def predict(self, X: DLArray) -> DLArray:
        X = self._checked_input(X)
        return layernorm(
            X, self.Offset, self.Scale, Epsilon=self.Epsilon, OperationDimension=self.OperationDimension
        )


class BatchNormalizationLayer(_ChannelNormalization):
    """Normalizes each channel over the batch (and ``S``, ``T``, ``U``), MATLAB's ``batchNormalizationLayer``.

    Training behaviour (``forward``, ``dlf.forward(net, X)``) normalizes by the mini-batch's own
    mean and (biased) variance per channel and updates the running statistics
    ``TrainedMean``/``TrainedVariance`` by MathWorks' rule
    ``trained = decay · batch statistic + (1 − decay) · trained``; inference (``predict``) normalizes
    by ``TrainedMean`` and ``TrainedVariance``. Then ``· Scale + Offset`` per channel. The running
    statistics are the layer's State; they stay in a network after ``forward``
    (``state_updates_persist``). See :func:`dlformat.functional.batchnorm`.

    Args:
        TrainedMean, TrainedVariance: initial statistics, one value per channel (default zeros and
            ones once ``NumChannels`` is known), in MATLAB's sizes as ``Offset`` and ``Scale``.
        MeanDecay, VarianceDecay: the decay of the running statistics, in [0, 1] (default 0.1).
        Epsilon, NumChannels, Offset, Scale, their initializers and factors, Name, device,
            dtype, generator: as every channel normalization layer takes them (see the module's
            ``_ChannelNormalization``).

    Examples:
        >>> layer = dlf.batchNormalizationLayer(Name="bn")
        >>> X = dlf.dlarray(torch.randn(5, 5, 3, 8), "SSCB")
        >>> Y = layer(X, training=True)  # batch statistics; the running ones move towards them
        >>> layer.State, tuple(layer.TrainedMean.shape)  # MATLAB's size for 2-D image input
        (('TrainedMean', 'TrainedVariance'), (1, 1, 3))
        >>> Z = layer(X, training=False)  # inference: the trained statistics
    """

    default_name = "batchnorm"
    state_updates_persist = True

    TrainedMean = StateParameter(
        initial="zeros", shape=PerChannel("NumChannels"), doc="Running mean per channel."
    )
    TrainedVariance = StateParameter(
        initial="ones", shape=PerChannel("NumChannels"), doc="Running variance per channel."
    )
    MeanDecay = Property(_validate.unit_interval, default=0.1, doc="Decay of the running mean, in [0, 1].")
    VarianceDecay = Property(
        _validate.unit_interval, default=0.1, doc="Decay of the running variance, in [0, 1]."
    )

    def predict(self, X: DLArray) -> DLArray:
        X = self._checked_input(X)
        return layer_batchnorm(X, self.Offset, self.Scale, *self._statistics(X), self.Epsilon, None)[0]

    def forward(self, X: DLArray) -> DLArray:  # type: ignore[override]  # MATLAB's forward, see Layer
        X = self._checked_input(X)
        statistics = self._statistics(X)
        Y, mean, variance = layer_batchnorm(
            X, self.Offset, self.Scale, *statistics, self.Epsilon, (self.MeanDecay, self.VarianceDecay)
        )
        assert mean is not None and variance is not None  # training: the updated statistics
        # updated from the layer's own statistics, so already of their shape and device: stored
        # without the checks an assignment by the user gets (they cost more than the kernel at
        # batch 1), in the dtype the statistics had in this call as an assignment would keep it
        # (a start value the layer made takes the call's precision, see Layer._state_in)
        for name, value, used in zip(STATISTICS, (mean, variance), statistics, strict=True):
            self._store_state(name, value.to(used.dtype))
        return Y

    def _statistics(self, X: DLArray) -> tuple[torch.Tensor, torch.Tensor]:
        """``TrainedMean`` and ``TrainedVariance`` as this call uses them (see ``Layer._state_in``)."""
        mean, variance = (self._state_in(name, X._data) for name in STATISTICS)
        assert mean is not None and variance is not None  # the first input created them
        return mean, variance


def _group_count(name: str, value: Any) -> int | str:
    """``NumGroups``: a positive integer, ``"all-channels"`` or ``"channel-wise"``."""
    if isinstance(value, str):
        return _validate.choice(name, value, GROUPINGS, also=", or a positive integer")
    return _validate.positive_integer(name, value)


class GroupNormalizationLayer(_ChannelNormalization):
    """Normalizes each group of channels of each observation, MATLAB's ``groupNormalizationLayer``.

    The channels split into ``NumGroups`` consecutive groups; one mean and (biased) variance span
    a group's channels and the ``S``, ``T`` and ``U`` dimensions of one observation. Then
    ``· Scale + Offset`` per channel. See :func:`dlformat.functional.groupnorm`.

    Args:
        NumGroups: a positive integer dividing the channel count, ``"all-channels"`` (one group)
            or ``"channel-wise"`` (one group per channel).
        Epsilon, NumChannels, Offset, Scale, their initializers and factors, Name, device,
            dtype, generator: as every channel normalization layer takes them (see the module's
            ``_ChannelNormalization``).

    Examples:
        >>> layer = dlf.groupNormalizationLayer(2)
        >>> Y = layer(dlf.dlarray(torch.randn(4, 4, 6, 3), "SSCB"))
        >>> dlf.dims(Y), tuple(layer.Offset.shape)
        ('SSCB', (1, 1, 6))
    """

    default_name = "groupnorm"

    NumGroups = Property(_group_count, positional=True, read_only=True, doc="Groups of channels.")

    def _check_properties(self) -> None:
        channels, groups = self._properties["NumChannels"], self.NumGroups
        if isinstance(groups, int) and channels != "auto" and channels % groups:
            raise DLFormatError(
                f"GroupNormalizationLayer: NumGroups ({groups}) must divide NumChannels ({channels})"
            )

    def predict(self, X: DLArray) -> DLArray:
        X = self._checked_input(X)
        return groupnorm(X, self.NumGroups, self.Offset, self.Scale, Epsilon=self.Epsilon)


class InstanceNormalizationLayer(_ChannelNormalization):
    """Normalizes each channel of each observation over ``S``, ``T`` and ``U``, MATLAB's
    ``instanceNormalizationLayer``; then ``· Scale + Offset`` per channel.
    See :func:`dlformat.functional.instancenorm`.

    Args:
        Epsilon, NumChannels, Offset, Scale, their initializers and factors, Name, device,
            dtype, generator: as every channel normalization layer takes them (see the module's
            ``_ChannelNormalization``).

    Examples:
        >>> layer = dlf.instanceNormalizationLayer()
        >>> Y = layer(dlf.dlarray(torch.randn(4, 4, 3, 2), "SSCB"))
        >>> round(float(dlf.extractdata(Y)[:, :, 0, 0].mean()), 5) == 0
        True
    """

    default_name = "instancenorm"

    def predict(self, X: DLArray) -> DLArray:
        X = self._checked_input(X)
        return instancenorm(X, self.Offset, self.Scale, Epsilon=self.Epsilon)


def _window_size(name: str, value: Any) -> int:
    """``WindowChannelSize``: a positive integer, at most 16 as MathWorks' current page states."""
    size = _validate.positive_integer(name, value)
    if size > 16:
        raise DLFormatError(f"{name} must be a positive integer at most 16; got {size}")
    return size


class CrossChannelNormalizationLayer(Layer):
    """Local response normalization across channels, MATLAB's ``crossChannelNormalizationLayer``.

    Each element is divided by ``(K + Alpha · ss / WindowChannelSize)^Beta``, ``ss`` the sum of
    squares over a window of channels at the same position: ``floor((w − 1)/2)`` channels before,
    ``floor(w/2)`` after. See :func:`dlformat.functional.crosschannelnorm`.

    Args:
        WindowChannelSize: the number of channels in the window (a positive integer, at most 16).
        Alpha: the multiplier (default 1e-4). Beta: the exponent (default 0.75).
        K: the additive constant (default 2).
        Name: the layer name.

    Examples:
        >>> layer = dlf.crossChannelNormalizationLayer(5, K=1)
        >>> Y = layer(dlf.dlarray(torch.rand(4, 4, 8, 2), "SSCB"))
        >>> dlf.dims(Y), layer.Alpha, layer.Beta
        ('SSCB', 0.0001, 0.75)
    """

    default_name = "crossnorm"
    matlab_type = "Cross Channel Normalization"

    WindowChannelSize = Property(
        _window_size, positional=True, read_only=True, doc="Channels in the window (at most 16)."
    )
    Alpha = Property(_validate.real, default=1e-4, doc="The multiplier of the windowed mean square.")
    Beta = Property(_validate.real, default=0.75, doc="The exponent.")
    K = Property(_validate.real, default=2.0, doc="The additive constant.")

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller)
        return crosschannelnorm(X, self.WindowChannelSize, Alpha=self.Alpha, Beta=self.Beta, K=self.K)


layerNormalizationLayer = matlab_constructor(LayerNormalizationLayer, "layerNormalizationLayer")
batchNormalizationLayer = matlab_constructor(BatchNormalizationLayer, "batchNormalizationLayer")
groupNormalizationLayer = matlab_constructor(GroupNormalizationLayer, "groupNormalizationLayer")
instanceNormalizationLayer = matlab_constructor(InstanceNormalizationLayer, "instanceNormalizationLayer")
crossChannelNormalizationLayer = matlab_constructor(
    CrossChannelNormalizationLayer, "crossChannelNormalizationLayer"
)
