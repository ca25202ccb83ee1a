"""Layers without learnables that act element by element or along C: activations, dropout, softmax."""

from __future__ import annotations

import torch.nn.functional as F

from .. import _validate, functional
from .._dlarray import DLArray, require_dimensions, require_formatted
from ..functional._activations import APPROXIMATIONS
from ..functional._common import floating_data
from ._base import Layer, matlab_constructor
from ._properties import Property, choice_property

__all__ = [
    "DropoutLayer",
    "GELULayer",
    "ReLULayer",
    "SoftmaxLayer",
    "dropoutLayer",
    "geluLayer",
    "reluLayer",
    "softmaxLayer",
]


class ReLULayer(Layer):
    """MATLAB's ``reluLayer``: ``max(x, 0)``; any format, kept. See :func:`dlformat.functional.relu`.

    Examples:
        >>> Y = dlf.reluLayer()(dlf.dlarray(torch.randn(4, 2, 5), "CBT"))
        >>> dlf.dims(Y)
        'CBT'
    """

    default_name = "relu"
    matlab_type = "ReLU"

    def predict(self, X: DLArray) -> DLArray:
        X = require_formatted(X, self._caller)
        return functional.relu(DLArray._wrap(floating_data(X._data, self._caller()), X._fmt))


class GELULayer(Layer):
    """MATLAB's ``geluLayer``: the Gaussian error linear unit; any format, kept.

    Args:
        Approximation: ``"none"`` (x·Φ(x), exact) or ``"tanh"`` (the tanh approximation).

    Examples:
        >>> Y = dlf.geluLayer(Approximation="tanh")(dlf.dlarray(torch.randn(4, 2), "CB"))
        >>> tuple(Y.shape)
        (4, 2)
    """

    default_name = "gelu"
    Approximation = choice_property(APPROXIMATIONS, "none", '"none" or "tanh".')

    def predict(self, X: DLArray) -> DLArray:
        X = require_formatted(X, self._caller)
        data = floating_data(X._data, self._caller())
        return functional.gelu(DLArray._wrap(data, X._fmt), Approximation=self.Approximation)


class DropoutLayer(Layer):
    """MATLAB's ``dropoutLayer``: in training (``forward``), zero each element with probability
    ``Probability`` and scale the rest by ``1 / (1 - Probability)``; in inference, the identity.

    Args:
        Probability: in [0, 1); default 0.5.

    Examples:
        >>> layer = dlf.dropoutLayer(0.2)
        >>> X = dlf.dlarray(torch.ones(4, 3), "CB")
        >>> torch.equal(dlf.extractdata(layer(X, training=False)), torch.ones(4, 3))
        True
    """

    default_name = "dropout"
    Probability = Property(
        _validate.probability,
        default=0.5,
        positional=True,
        read_only=True,
        doc="Dropout probability, in [0, 1).",
    )

    def predict(self, X: DLArray) -> DLArray:
        return require_formatted(X, self._caller)

    def forward(self, X: DLArray) -> DLArray:  # type: ignore[override]  # MATLAB's forward, see Layer
        X = require_formatted(X, self._caller)
        data = floating_data(X._data, self._caller())
        return DLArray._wrap(F.dropout(data, self.Probability, True), X._fmt)


class SoftmaxLayer(Layer):
    """MATLAB's ``softmaxLayer``: softmax over the channel dimension ``C``; format kept.

    Computed in float32 or wider for half-precision input, returned in the input's dtype.

    Examples:
        >>> Y = dlf.softmaxLayer()(dlf.dlarray(torch.randn(3, 2), "CB"))
        >>> tuple(Y.shape)
        (3, 2)
    """

    default_name = "softmax"

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller, '"CB", "SSCB", "CBT", "CT"')
        return functional.softmax(DLArray._wrap(floating_data(X._data, self._caller()), X._fmt))


reluLayer = matlab_constructor(ReLULayer, "reluLayer")
geluLayer = matlab_constructor(GELULayer, "geluLayer")
dropoutLayer = matlab_constructor(DropoutLayer, "dropoutLayer")
softmaxLayer = matlab_constructor(SoftmaxLayer, "softmaxLayer")
