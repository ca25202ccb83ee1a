"""Layers without learnables that act element by element or along C: activations, dropout, softmax."""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from ..functional import _require_dimensions, _require_formatted
from ._base import Layer, Property, matlab_constructor

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
    """MATLAB's ``reluLayer``: ``max(x, 0)``; any format, kept.

    Examples:
        >>> Y = dlf.reluLayer()(dlf.dlarray(torch.randn(4, 2, 5), "CBT"))
    """

    default_name = "relu"
    matlab_type = "ReLU"
    config_keys = ("Name",)

    def forward(self, X: DLArray) -> DLArray:
        X = _require_formatted(X, self._caller)
        return DLArray._wrap(F.relu(X._data), X._fmt)


class GELULayer(Layer):
    """MATLAB's ``geluLayer``: the Gaussian error linear unit; any format, kept.

    Args:
        Approximation: ``"none"`` (x·Φ(x), exact) or ``"tanh"`` (the tanh approximation).
    """

    default_name = "gelu"
    config_keys = ("Approximation", "Name")
    Approximation = Property(
        partial(_validate.choice, allowed=("none", "tanh")), read_only=True, doc='"none" or "tanh".'
    )

    def __init__(self, *, Approximation: str = "none", Name: str = "") -> None:
        super().__init__(Name)
        type(self).Approximation.initialize(self, Approximation)

    def forward(self, X: DLArray) -> DLArray:
        X = _require_formatted(X, self._caller)
        return DLArray._wrap(F.gelu(X._data, approximate=self.Approximation), X._fmt)

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        return [("", ["Name", "Approximation"])]


def _probability(name: str, value: object) -> float:
    number = _validate.factor(name, value)
    if not 0 <= number < 1:
        raise DLFormatError(f"{name} must be a number in [0, 1); got {_validate.describe(value)}")
    return number


class DropoutLayer(Layer):
    """MATLAB's ``dropoutLayer``: in training (``forward``), zero each element with probability
    ``Probability`` and scale the rest by ``1 / (1 - Probability)``; in inference, the identity.

    Args:
        Probability: in [0, 1); default 0.5.
    """

    default_name = "dropout"
    config_keys = ("Probability", "Name")
    Probability = Property(_probability, read_only=True, doc="Dropout probability, in [0, 1).")

    def __init__(self, Probability: float = 0.5, *, Name: str = "") -> None:
        super().__init__(Name)
        type(self).Probability.initialize(self, Probability)

    def forward(self, X: DLArray) -> DLArray:
        X = _require_formatted(X, self._caller)
        return DLArray._wrap(F.dropout(X._data, self.Probability, self.training), X._fmt)

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        return [("", ["Name", "Probability"])]


class SoftmaxLayer(Layer):
    """MATLAB's ``softmaxLayer``: softmax over the channel dimension ``C``; format kept.

    Computed in float32 or wider for half-precision input, returned in the input's dtype.
    """

    default_name = "softmax"
    config_keys = ("Name",)

    def forward(self, X: DLArray) -> DLArray:
        X = _require_dimensions(X, "C", self._caller)
        data = X._data
        working = torch.float32 if data.dtype in (torch.float16, torch.bfloat16) else None
        return DLArray._wrap(F.softmax(data, X._fmt.index("C"), dtype=working).to(data.dtype), X._fmt)


reluLayer = matlab_constructor(ReLULayer, "reluLayer")
geluLayer = matlab_constructor(GELULayer, "geluLayer")
dropoutLayer = matlab_constructor(DropoutLayer, "dropoutLayer")
softmaxLayer = matlab_constructor(SoftmaxLayer, "softmaxLayer")
