"""MATLAB's ``fullyConnectedLayer``: ``Weights * x + Bias`` over the flattened spatial and channel data."""

from __future__ import annotations

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional._common import floating_data
from ..functional._dense import flattened_size, layer_fullyconnect
from ._base import Layer, matlab_constructor
from ._properties import Learnable, Property, auto_size_property, factor_properties, initializer_property

ACCEPTED = '"CB", "SCB", "SSCB", "SSSCB", "CBT", "SCBT"'

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
    lazy_size_from = ("Weights", 1)
    lazy_meaning = "features (S and C flattened)"

    InputSize = auto_size_property('"auto" or the flattened input size.')
    OutputSize = Property(_validate.positive_integer, positional=True, read_only=True, doc="Output channels.")
    Weights = Learnable(initializer="WeightsInitializer", shape=("OutputSize", "InputSize"))
    Bias = Learnable(initializer="BiasInitializer", shape=("OutputSize", 1))
    WeightsInitializer = initializer_property("glorot")
    BiasInitializer = initializer_property("zeros")
    WeightLearnRateFactor, WeightL2Factor = factor_properties("Weights")
    BiasLearnRateFactor, BiasL2Factor = factor_properties("Bias", l2=0.0)

    def _size_of(self, X: DLArray) -> int:
        return flattened_size(X._fmt, tuple(X.shape))

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller, ACCEPTED)
        if "U" in X._fmt:  # said here so the error names the layer, not the function it calls
            raise DLFormatError(
                f'{self._caller()} cannot take format "{X._fmt}": "U" dimensions have no meaning it could '
                'flatten or keep; it takes a "C" dimension with any "S", "B", "T" '
                f"(formats such as {ACCEPTED})"
            )
        floating_data(X._data, self._caller())
        self._fit_input(X)
        # the weights and bias are tensors of the layer's checked shapes: no option scan nor conversion
        return layer_fullyconnect(X, self.Weights, self.Bias)


fullyConnectedLayer = matlab_constructor(FullyConnectedLayer, "fullyConnectedLayer")
