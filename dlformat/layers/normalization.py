"""MATLAB's ``layerNormalizationLayer``: normalize each observation, then scale and shift per channel."""

from __future__ import annotations

from typing import Any

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from ..functional import layernorm
from ..functional._common import floating_data
from ..functional._normalization import OPERATION_DIMENSIONS
from ._base import Layer, matlab_constructor
from ._properties import Learnable, Property, choice_property, factor_properties, initializer_property

__all__ = ["LayerNormalizationLayer", "layerNormalizationLayer"]


class LayerNormalizationLayer(Layer):
    """Normalizes each observation over its channels (and more, per ``OperationDimension``).

    ``Y = (X - mean) / sqrt(var + Epsilon) * Scale + Offset``, with mean and (biased) variance
    taken over the dimensions ``OperationDimension`` names, separately for every other index;
    see :func:`dlformat.functional.layernorm`.

    Args:
        Epsilon: added to the variance (positive; default 1e-5).
        OperationDimension: ``"auto"`` (``C`` alone for data with ``T`` or without ``S``; ``S``
            and ``C`` otherwise), ``"channel-only"``, ``"spatial-channel"`` or
            ``"batch-excluded"`` (every dimension but ``B``).
        NumChannels: ``"auto"`` (from the first input) or the channel count.
        OffsetInitializer: default ``"zeros"``; ScaleInitializer: default ``"ones"``.
        Offset, Scale: initial ``NumChannels × 1`` values.
        OffsetLearnRateFactor, ScaleLearnRateFactor, OffsetL2Factor, ScaleL2Factor: default 1.
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.

    Examples:
        >>> layer = dlf.layerNormalizationLayer(Epsilon=1e-6)
        >>> Y = layer(dlf.dlarray(torch.randn(4, 2, 5), "CBT"))
        >>> tuple(layer.Scale.shape)
        (4, 1)
    """

    default_name = "layernorm"
    lazy_size = "NumChannels"
    lazy_meaning = "channels"

    NumChannels = Property(
        _validate.auto_or_positive, default="auto", read_only=True, doc='"auto" or the channel count.'
    )
    Epsilon = Property(_validate.positive, default=1e-5, doc="Added to the variance.")
    OperationDimension = choice_property(OPERATION_DIMENSIONS, "auto", "What one group spans.")
    Offset = Learnable(initializer="OffsetInitializer", shape=("NumChannels", 1))
    Scale = Learnable(initializer="ScaleInitializer", shape=("NumChannels", 1))
    OffsetInitializer = initializer_property("zeros")
    ScaleInitializer = initializer_property("ones")
    OffsetLearnRateFactor, OffsetL2Factor = factor_properties("Offset")
    ScaleLearnRateFactor, ScaleL2Factor = factor_properties("Scale")

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        shapes = [tuple(getattr(value, "shape", ())) for value in given.values() if value is not None]
        return next((int(shape[0]) for shape in shapes if len(shape) == 2), None)

    def _size_of(self, X: DLArray) -> int:
        return X.shape[X._fmt.index("C")]

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller, '"CB", "SCB", "SSCB", "CBT", "CT"')
        floating_data(X._data, self._caller())
        self._fit_input(X)
        return layernorm(
            X, self.Offset, self.Scale, Epsilon=self.Epsilon, OperationDimension=self.OperationDimension
        )


layerNormalizationLayer = matlab_constructor(LayerNormalizationLayer, "layerNormalizationLayer")
