"""MATLAB's ``embeddingConcatenationLayer``: a learnable embedding vector (a vision transformer's
class token) put before the first element of the sequence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional._attention import sequence_plan
from ..functional._common import floating_data
from ._base import Layer, matlab_constructor
from ._properties import Learnable, auto_size_property, factor_properties, initializer_property

__all__ = ["EmbeddingConcatenationLayer", "embeddingConcatenationLayer"]


class EmbeddingConcatenationLayer(Layer):
    """Prepends the learnable ``Weights`` (one value per channel) to every observation's
    sequence: along ``T``, or along the single ``S`` when there is no ``T``. The output has one
    element more along that dimension than the input.

    Args:
        WeightsInitializer: ``"narrow-normal"`` (default: normal, standard deviation 0.01),
            ``"glorot"``, ``"he"`` (both count the input's channels as inputs and outputs),
            ``"zeros"``, ``"ones"`` or a callable ``f(sz)``.
        Weights: a ``numChannels × 1`` column vector (fixes ``InputSize``).
        InputSize: ``"auto"`` (from the first input) or the input's channels.
        WeightLearnRateFactor, WeightL2Factor: default 1.
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.

    Shape:
        - Input: ``C`` with ``T`` (``"CBT"``, ``"CT"``), or ``C`` with one ``S`` and no ``T``
          (``"SCB"``).
        - Output: the input's format, one more element along ``T`` (or ``S``).

    Examples:
        >>> layer = dlf.embeddingConcatenationLayer(Weights=torch.ones(3, 1))
        >>> Y = layer(dlf.dlarray(torch.zeros(4, 3, 2), "SCB"))
        >>> dlf.dims(Y), tuple(Y.shape), dlf.stripdims(Y)[0, :, 0].tolist()
        ('SCB', (5, 3, 2), [1.0, 1.0, 1.0])
    """

    default_name = "embedconcat"
    matlab_type = "Embedding Concatenation"
    lazy_size = "InputSize"
    lazy_size_from = ("Weights", 0)
    lazy_meaning = "channels"

    InputSize = auto_size_property('"auto" or input channels.')
    Weights = Learnable(initializer="WeightsInitializer", shape=("InputSize", 1))
    WeightsInitializer = initializer_property("narrow-normal")
    WeightLearnRateFactor, WeightL2Factor = factor_properties("Weights")

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        # MATLAB's page: glorot's and he's numIn and numOut are both the input's channels
        channels = self._fixed_size(name)
        return self.WeightsInitializer, channels, channels

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller)
        floating_data(X._data, self._caller())
        try:
            sequence_plan(X._fmt)
        except DLFormatError:
            raise DLFormatError(
                f'{self._caller()} prepends along "T", or along a single "S" when there is no "T"; it '
                f'takes formats such as "CBT", "CT", "SCB"; got "{X._fmt}"'
            ) from None
        self._fit_input(X)
        data, fmt = X._data, X._fmt
        axis = fmt.index("T" if "T" in fmt else "S")
        shape = [1] * data.ndim
        shape[fmt.index("C")] = -1
        sizes = list(data.shape)
        sizes[axis] = 1
        embedding = self.Weights.to(data.dtype).reshape(shape).expand(sizes)
        return DLArray._wrap(torch.cat([embedding, data], dim=axis), fmt)


embeddingConcatenationLayer = matlab_constructor(EmbeddingConcatenationLayer, "embeddingConcatenationLayer")
