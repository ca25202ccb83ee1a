"""MATLAB's ``positionEmbeddingLayer``: a learned vector per sequence or spatial position."""

from __future__ import annotations

from typing import Any

from .. import _validate
from .._dlarray import DLArray
from ..functional._position import POSITION_DIMENSIONS, _embed, position_offset
from ._base import Layer, matlab_constructor
from ._properties import Learnable, Property, choice_property, factor_properties, initializer_property

__all__ = ["PositionEmbeddingLayer", "positionEmbeddingLayer"]


class PositionEmbeddingLayer(Layer):
    """A learned embedding of positions along the time or a spatial dimension.

    Every output vector along ``C`` at index ``i`` of the position dimension equals
    ``Weights[:, PositionOffset + i]``, for every index of every other dimension. The
    input's values are never read, only its format and sizes.

    Args:
        OutputSize: number of output channels (positive integer).
        MaxPosition: number of positions with an embedding (positive integer).
        PositionDimension: ``"auto"`` (``T`` if present, else the single ``S``),
            ``"temporal"`` or ``"spatial"``; case-insensitive.
        WeightsInitializer: ``"narrow-normal"`` (N(0, 0.01²)), ``"glorot"``, ``"he"``,
            ``"zeros"``, ``"ones"``, or a callable ``f(sz)`` returning an array of size
            ``sz == (OutputSize, MaxPosition)``.
        Weights: initial weights, ``OutputSize × MaxPosition`` (copied); when given, the
            initializer is not called.
        WeightLearnRateFactor, WeightL2Factor: finite factors ``>= 0`` (see
            :func:`dlformat.param_groups`).
        PositionOffset: the position of the first input element (integer ``>= 0``); a call
            may override it, ``layer(X, PositionOffset=n)`` with an int or a 0-d integer
            tensor, which ``torch.compile`` runs under one graph for every offset.
        Name: the layer name.
        device, dtype: torch factory arguments for ``Weights`` (default: the default
            device, ``torch.get_default_dtype()``).
        generator: a CPU ``torch.Generator`` for the initial draw.

    Shape:
        - Input: a formatted dlarray with a ``T`` dimension or one ``S`` dimension.
        - Output: the input's format with ``C`` added if missing; ``C`` has size
          ``OutputSize``, every other dimension keeps its size. The output is a
          broadcast view of ``Weights`` (stride 0 along all dimensions but ``C`` and the
          position dimension), so it costs ``O(OutputSize × positions)`` whatever the
          batch size; add it to another dlarray rather than writing into it.

    Attributes:
        Weights: the ``nn.Parameter`` (state_dict key ``"Weights"``); column ``p`` embeds
            0-based position ``p``. Assigning a NumPy array or tensor checks its shape and
            dtype and stores a copy as a new parameter.
        NumInputs, InputNames, NumOutputs, OutputNames: ``1``, ``("in",)``, ``1``, ``("out",)``.

    Examples:
        >>> import torch, dlformat as dlf
        >>> layer = dlf.positionEmbeddingLayer(64, 128, Name="posemb")
        >>> Y = layer(dlf.dlarray(torch.randn(1, 8, 20), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CBT', (64, 8, 20))
    """

    default_name = "posembedding"

    OutputSize = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Number of output channels."
    )
    MaxPosition = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Number of embedded positions."
    )
    PositionDimension = choice_property(POSITION_DIMENSIONS, "auto", '"auto", "temporal" or "spatial".')
    PositionOffset = Property(
        lambda name, value: position_offset(value, name),
        default=0,
        doc="Position of the first input element.",
    )
    Weights = Learnable(initializer="WeightsInitializer", shape=("OutputSize", "MaxPosition"))
    WeightsInitializer = initializer_property("narrow-normal")
    WeightLearnRateFactor, WeightL2Factor = factor_properties("Weights")

    def predict(self, X: DLArray, *, PositionOffset: Any = None) -> DLArray:
        offset = self.PositionOffset if PositionOffset is None else position_offset(PositionOffset)
        return _embed(X, self.Weights, self.PositionDimension, offset, self._caller)


positionEmbeddingLayer = matlab_constructor(PositionEmbeddingLayer, "positionEmbeddingLayer")
