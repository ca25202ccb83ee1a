"""Layers that act element by element (activations, dropout) or along C (softmax).

Every activation layer is an :class:`_ActivationLayer`: it takes any format, keeps it, and
computes through the functional core (:mod:`dlformat.functional._activations`).
"""

from __future__ import annotations

from typing import Any

import torch

from .. import _validate, functional
from .._dlarray import DLArray, require_dimensions, require_formatted
from .._errors import DLFormatError
from ..functional import _activations
from ..functional._activations import APPROXIMATIONS
from ..functional._common import floating_data, working_dtype
from ._base import Layer, matlab_constructor
from ._properties import Learnable, Property, choice_property

__all__ = [
    "ClippedReLULayer",
    "DropoutLayer",
    "ELULayer",
    "GELULayer",
    "IdentityLayer",
    "LeakyReLULayer",
    "MishLayer",
    "PReLULayer",
    "ReLULayer",
    "SigmoidLayer",
    "SoftmaxLayer",
    "SoftplusLayer",
    "SpatialDropoutLayer",
    "SwishLayer",
    "TanhLayer",
    "clippedReluLayer",
    "dropoutLayer",
    "eluLayer",
    "geluLayer",
    "identityLayer",
    "leakyReluLayer",
    "mishLayer",
    "preluLayer",
    "reluLayer",
    "sigmoidLayer",
    "softmaxLayer",
    "softplusLayer",
    "spatialDropoutLayer",
    "swishLayer",
    "tanhLayer",
]


class _ActivationLayer(Layer):
    """An activation: any format in, the same format out, floating data (logical as single)."""

    def activate(self, X: DLArray) -> DLArray:
        """The activation of formatted floating ``X``."""
        raise NotImplementedError

    def predict(self, X: DLArray) -> DLArray:
        X = require_formatted(X, self._caller)
        return self.activate(DLArray._wrap(floating_data(X._data, self._caller()), X._fmt))


def _on_data(function: Any, X: DLArray, *arguments: Any) -> DLArray:
    return DLArray._wrap(function(X._data, *arguments), X._fmt)


class ReLULayer(_ActivationLayer):
    """MATLAB's ``reluLayer``: ``max(x, 0)``; any format, kept. See :func:`dlformat.functional.relu`.

    Examples:
        >>> Y = dlf.reluLayer()(dlf.dlarray(torch.randn(4, 2, 5), "CBT"))
        >>> dlf.dims(Y)
        'CBT'
    """

    default_name = "relu"
    matlab_type = "ReLU"

    def activate(self, X: DLArray) -> DLArray:
        return _on_data(torch.relu, X)  # what functional.relu computes, without its argument handling


class LeakyReLULayer(_ActivationLayer):
    """MATLAB's ``leakyReluLayer``: ``x`` where ``x >= 0``, ``Scale * x`` elsewhere; any format,
    kept. See :func:`dlformat.functional.leakyrelu`.

    Args:
        Scale: the factor for negative inputs (a real scalar; default 0.01).

    Examples:
        >>> Y = dlf.leakyReluLayer(0.1)(dlf.dlarray(torch.tensor([[-2.0, 3.0]]), "CB"))
        >>> dlf.extractdata(Y).tolist()
        [[-0.20000000298023224, 3.0]]
    """

    default_name = "leakyrelu"
    matlab_type = "Leaky ReLU"
    Scale = Property(_validate.real, default=0.01, positional=True, read_only=True, doc="Negative slope.")

    def activate(self, X: DLArray) -> DLArray:
        return functional.leakyrelu(X, self.Scale)


class ClippedReLULayer(_ActivationLayer):
    """MATLAB's ``clippedReluLayer``: ``min(max(x, 0), Ceiling)``; any format, kept.

    Args:
        Ceiling: the clipping ceiling (a positive scalar; required).

    Examples:
        >>> Y = dlf.clippedReluLayer(6)(dlf.dlarray(torch.tensor([[-1.0, 3.0, 9.0]]), "CB"))
        >>> dlf.extractdata(Y).tolist()
        [[0.0, 3.0, 6.0]]
    """

    default_name = "clippedrelu"
    matlab_type = "Clipped ReLU"
    Ceiling = Property(_validate.positive, positional=True, read_only=True, doc="Clipping ceiling (> 0).")

    def activate(self, X: DLArray) -> DLArray:
        return _on_data(_activations.clipped_relu, X, self.Ceiling)


class ELULayer(_ActivationLayer):
    """MATLAB's ``eluLayer``: ``x`` where ``x >= 0``, ``Alpha * (exp(x) - 1)`` elsewhere; any
    format, kept.

    Args:
        Alpha: the nonlinearity parameter (a finite real scalar; default 1).

    Examples:
        >>> Y = dlf.eluLayer()(dlf.dlarray(torch.tensor([[0.0, 2.0]]), "CB"))
        >>> dlf.extractdata(Y).tolist()
        [[0.0, 2.0]]
    """

    default_name = "elu"
    Alpha = Property(
        _validate.real, default=1.0, positional=True, read_only=True, doc="Nonlinearity parameter."
    )

    def activate(self, X: DLArray) -> DLArray:
        return _on_data(_activations.elu, X, self.Alpha)


class TanhLayer(_ActivationLayer):
    """MATLAB's ``tanhLayer``: the hyperbolic tangent; any format, kept.

    Examples:
        >>> dlf.dims(dlf.tanhLayer()(dlf.dlarray(torch.randn(3, 2), "CB")))
        'CB'
    """

    default_name = "tanh"

    def activate(self, X: DLArray) -> DLArray:
        return _on_data(torch.tanh, X)


class SigmoidLayer(_ActivationLayer):
    """MATLAB's ``sigmoidLayer``: ``1 / (1 + exp(-x))``; any format, kept. See
    :func:`dlformat.functional.sigmoid`.

    Examples:
        >>> dlf.extractdata(dlf.sigmoidLayer()(dlf.dlarray(torch.zeros(1, 2), "CB"))).tolist()
        [[0.5, 0.5]]
    """

    default_name = "sigmoid"

    def activate(self, X: DLArray) -> DLArray:
        return _on_data(torch.sigmoid, X)  # what functional.sigmoid computes


class SwishLayer(_ActivationLayer):
    """MATLAB's ``swishLayer``: ``x / (1 + exp(-x))``; any format, kept.

    Examples:
        >>> dlf.extractdata(dlf.swishLayer()(dlf.dlarray(torch.zeros(1, 2), "CB"))).tolist()
        [[0.0, 0.0]]
    """

    default_name = "swish"

    def activate(self, X: DLArray) -> DLArray:
        return _on_data(_activations.swish, X)


class MishLayer(_ActivationLayer):
    """MATLAB's ``mishLayer``: ``x · tanh(log(1 + exp(x)))``; any format, kept.

    The formula is the one MathWorks' Deep Learning HDL Toolbox page of ``dlhdl.layer.mishLayer``
    (R2024a) gives, ``f(x) = x tanh(ln(1 + eˣ))``; the Deep Learning Toolbox page of
    ``mishLayer`` was not in the stored copies read for this port. No properties beyond the name.

    Examples:
        >>> Y = dlf.mishLayer()(dlf.dlarray(torch.tensor([[0.0, 1.0]], dtype=torch.float64), "CB"))
        >>> [round(v, 6) for v in dlf.extractdata(Y)[0].tolist()]
        [0.0, 0.865098]
    """

    default_name = "mish"

    def activate(self, X: DLArray) -> DLArray:
        return _on_data(_activations.mish, X)


class SoftplusLayer(_ActivationLayer):
    """MATLAB's ``softplusLayer`` (Deep Learning Toolbox): ``log(1 + exp(x))``; any format, kept.

    Examples:
        >>> Y = dlf.softplusLayer()(dlf.dlarray(torch.zeros(1, 1, dtype=torch.float64), "CB"))
        >>> round(dlf.extractdata(Y).item(), 12)
        0.69314718056
    """

    default_name = "softplus"

    def activate(self, X: DLArray) -> DLArray:
        return _on_data(_activations.softplus, X)


class PReLULayer(_ActivationLayer):
    """MATLAB's ``preluLayer``: ``x`` where ``x > 0``, ``Alpha * x`` elsewhere, with a learnable
    ``Alpha``; any format, kept.

    ``Alpha`` starts as the 1×1 value 0.25 (MATLAB's display of a new layer); given at
    construction it may be any array MATLAB can expand against the input (``C×1`` for one
    value per channel of ``"CB"`` data, ``1×1×C`` for ``"SSCB"``): it lines up with the input's
    dimensions in MATLAB's order, from the first.

    Args:
        Alpha: initial value (scalar or array).
        Name: the layer name.
        device, dtype: torch factory arguments for ``Alpha``.

    Examples:
        >>> layer = dlf.preluLayer(Name="prelu1")
        >>> Y = layer(dlf.dlarray(torch.tensor([[-4.0, 2.0]]), "CB"))
        >>> layer.Alpha.tolist(), dlf.extractdata(Y).tolist()
        ([[0.25]], [[-1.0, 2.0]])
    """

    default_name = "prelu"
    matlab_type = "PReLU"
    Alpha = Learnable(initializer="", doc="Slope for negative inputs.")

    def _draw(self, name: str, device: Any, dtype: torch.dtype, generator: Any) -> torch.Tensor:
        # no initializer property on MATLAB's page: a new layer's Alpha is the 1×1 value 0.25
        return torch.full((1, 1), 0.25, device=device, dtype=dtype)

    def activate(self, X: DLArray) -> DLArray:
        alpha = self.Alpha
        extra = alpha.shape[X.ndim :]
        if any(size != 1 for size in extra) or any(
            a not in (1, x) for a, x in zip(alpha.shape, X.shape, strict=False)
        ):
            raise DLFormatError(
                f"{self._caller()} Alpha of size {_validate.matlab_size(tuple(alpha.shape))} does not "
                f'expand against the "{X._fmt}" input of size {_validate.matlab_size(tuple(X.shape))}'
            )
        alpha = alpha.reshape(*alpha.shape[: X.ndim], *([1] * (X.ndim - alpha.ndim)))
        dtype = working_dtype(X.dtype, alpha.dtype)
        return DLArray._wrap(_activations.prelu(X._data.to(dtype), alpha.to(dtype)), X._fmt)


class GELULayer(_ActivationLayer):
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

    def activate(self, X: DLArray) -> DLArray:
        return functional.gelu(X, Approximation=self.Approximation)


class IdentityLayer(Layer):
    """MATLAB's ``identityLayer`` (R2024b): a layer whose output is identical to its input.

    MATLAB uses it for skip connections; the input passes on as it is (the same dlarray, any
    format, any dtype).

    Examples:
        >>> X = dlf.dlarray(torch.randn(4, 3, 2), "CBT")
        >>> dlf.identityLayer(Name="skip")(X) is X
        True
    """

    default_name = "identity"

    def predict(self, X: Any) -> Any:
        return X


def _probability(positional: bool) -> Property:
    return Property(
        _validate.probability,
        default=0.5,
        positional=positional,
        read_only=True,
        doc="Dropout probability, in [0, 1).",
    )


class _DropoutLayer(Layer):
    """A dropout layer: the identity in inference; in training, zeros drawn per ``mask_shape``
    and the rest scaled by ``1 / (1 - Probability)``."""

    Probability: Any
    needs = ""  # labels the data must have

    def predict(self, X: DLArray) -> DLArray:
        X = require_formatted(X, self._caller)
        return require_dimensions(X, self.needs, self._caller) if self.needs else X

    def _mask_shape(self, X: DLArray) -> tuple[int, ...]:
        return tuple(X.shape)

    def forward(self, X: DLArray) -> DLArray:  # type: ignore[override]  # MATLAB's forward, see Layer
        X = self.predict(X)
        data = floating_data(X._data, self._caller())
        # MATLAB drops where rand(mask size) < Probability
        keep = torch.rand(self._mask_shape(X), device=data.device) >= self.Probability
        return DLArray._wrap(data * keep.to(data.dtype) / (1 - self.Probability), X._fmt)


class DropoutLayer(_DropoutLayer):
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
    Probability = _probability(positional=True)


class SpatialDropoutLayer(_DropoutLayer):
    """MATLAB's ``spatialDropoutLayer``: in training (``forward``), zero whole channels, each
    channel of each observation with probability ``Probability``, and scale the rest by
    ``1 / (1 - Probability)``; in inference, the identity.

    The mask has the sizes of ``C`` and ``B`` and size 1 elsewhere, as MathWorks' page draws
    it: every ``S`` and ``T`` element of a dropped channel is zeroed together. Data needs ``C``.

    Args:
        Probability: in [0, 1); default 0.5; a Name=Value option only, as in MATLAB.

    Examples:
        >>> layer = dlf.spatialDropoutLayer(Probability=0.5)
        >>> Y = layer(dlf.dlarray(torch.ones(4, 4, 3, 2), "SSCB"), training=True)
        >>> sorted(set(dlf.extractdata(Y).amax(dim=(0, 1)).flatten().tolist()) - {0.0, 2.0})
        []
    """

    default_name = "spatialdropout"
    needs = "C"
    Probability = _probability(positional=False)

    def _mask_shape(self, X: DLArray) -> tuple[int, ...]:
        return tuple(size if label in "CB" else 1 for label, size in zip(X._fmt, X.shape, strict=True))


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
        data = floating_data(X._data, self._caller())
        # functional.softmax's computation, without its argument handling (the layer checked X)
        return DLArray._wrap(_activations._softmax(data, X._fmt.index("C")), X._fmt)


reluLayer = matlab_constructor(ReLULayer, "reluLayer")
leakyReluLayer = matlab_constructor(LeakyReLULayer, "leakyReluLayer")
clippedReluLayer = matlab_constructor(ClippedReLULayer, "clippedReluLayer")
eluLayer = matlab_constructor(ELULayer, "eluLayer")
tanhLayer = matlab_constructor(TanhLayer, "tanhLayer")
sigmoidLayer = matlab_constructor(SigmoidLayer, "sigmoidLayer")
swishLayer = matlab_constructor(SwishLayer, "swishLayer")
mishLayer = matlab_constructor(MishLayer, "mishLayer")
identityLayer = matlab_constructor(IdentityLayer, "identityLayer")
softplusLayer = matlab_constructor(SoftplusLayer, "softplusLayer")
preluLayer = matlab_constructor(PReLULayer, "preluLayer")
geluLayer = matlab_constructor(GELULayer, "geluLayer")
dropoutLayer = matlab_constructor(DropoutLayer, "dropoutLayer")
spatialDropoutLayer = matlab_constructor(SpatialDropoutLayer, "spatialDropoutLayer")
softmaxLayer = matlab_constructor(SoftmaxLayer, "softmaxLayer")
