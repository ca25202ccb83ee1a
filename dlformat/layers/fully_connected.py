"""MATLAB's ``fullyConnectedLayer``: ``Weights * x + Bias`` over the flattened spatial and channel data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional import fullyconnect
from ..functional._dense import flattened_size
from ._base import Factor, Layer, Learnable, Property, initializer_property, matlab_constructor

__all__ = ["FullyConnectedLayer", "fullyConnectedLayer"]


class FullyConnectedLayer(Layer):
    """A dense layer over each observation (and time step): ``Weights * x + Bias``.

    Every ``S`` dimension is flattened with ``C`` into the input vector, in MATLAB's
    column-major order (the first ``S`` fastest, ``C`` slowest); ``B`` and ``T`` are kept.
    ``"SSCB"`` in gives ``"CB"`` out, ``"CBT"`` gives ``"CBT"``. See :func:`dlformat.functional.fullyconnect`.

    Args:
        OutputSize: output channels.
        InputSize: ``"auto"`` (fixed by the first input, or by ``initialize(net)``) or the
            flattened input size.
        WeightsInitializer: ``"glorot"`` (default), ``"he"``, ``"narrow-normal"``, ``"zeros"``,
            ``"ones"`` or a callable ``f(sz)``; ``BiasInitializer`` likewise, default ``"zeros"``.
        Weights: ``OutputSize × InputSize`` (fixes ``InputSize``); Bias: ``OutputSize × 1``.
        WeightLearnRateFactor, BiasLearnRateFactor, WeightL2Factor: default 1;
        BiasL2Factor: default 0, as in MATLAB.
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.

    Attributes:
        Weights, Bias: ``nn.Parameter``, or ``None`` until ``InputSize`` is known.

    Examples:
        >>> layer = dlf.fullyConnectedLayer(10, Name="fc")
        >>> Y = layer(dlf.dlarray(torch.randn(4, 4, 3, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.Weights.shape)
        ('CB', (10, 2), (10, 48))
    """

    default_name = "fc"
    lazy_size = "InputSize"

    InputSize = Property(
        _validate.auto_or_positive, default="auto", read_only=True, doc='"auto" or the flattened input size.'
    )
    OutputSize = Property(_validate.positive_integer, positional=True, read_only=True, doc="Output channels.")
    Weights = Learnable(initializer="WeightsInitializer")
    Bias = Learnable(initializer="BiasInitializer")
    WeightsInitializer = initializer_property("glorot")
    BiasInitializer = initializer_property("zeros")
    WeightLearnRateFactor = Factor("Weights", "LearnRateFactor")
    BiasLearnRateFactor = Factor("Bias", "LearnRateFactor")
    WeightL2Factor = Factor("Weights", "L2Factor")
    BiasL2Factor = Factor("Bias", "L2Factor", default=0.0)

    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        return (self.OutputSize, 1) if name == "Bias" else (self.OutputSize, self._fixed_size(name))

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        initializer = self.WeightsInitializer if name == "Weights" else self.BiasInitializer
        return initializer, self._fixed_size(name), self.OutputSize

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        shape = getattr(given["Weights"], "shape", ())
        return int(shape[1]) if len(shape) == 2 else None

    def _size_of(self, X: DLArray) -> int:
        return flattened_size(X._fmt, tuple(X.shape))

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller)
        self._ensure_sizes(X)
        if self._size_of(X) != self.InputSize:
            raise DLFormatError(
                f'{self._caller()} has InputSize {self.InputSize}; the "{X._fmt}" input of size '
                f"{_validate.matlab_size(tuple(X.shape))} flattens to {self._size_of(X)} features"
            )
        return fullyconnect(X, self.Weights, self.Bias)


fullyConnectedLayer = matlab_constructor(FullyConnectedLayer, "fullyConnectedLayer")
