"""MATLAB's ``positionEmbeddingLayer``: a learned vector per sequence or spatial position."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch
from torch import nn

from .. import _validate
from .._dlarray import DLArray
from ..functional import POSITION_DIMENSIONS, _embed
from . import _initializers
from ._base import FactorProperty, Layer, Property, matlab_constructor

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
        PositionOffset: the position of the first input element (integer ``>= 0``).
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
    learnables = ("Weights",)
    config_keys = (
        "OutputSize",
        "MaxPosition",
        "PositionDimension",
        "WeightsInitializer",
        "WeightLearnRateFactor",
        "WeightL2Factor",
        "PositionOffset",
        "Name",
    )

    OutputSize = Property(_validate.positive_integer, read_only=True, doc="Number of output channels.")
    MaxPosition = Property(_validate.positive_integer, read_only=True, doc="Number of embedded positions.")
    PositionDimension = Property(
        partial(_validate.choice, allowed=POSITION_DIMENSIONS),
        read_only=True,
        doc='"auto", "temporal" or "spatial".',
    )
    WeightsInitializer = Property(_initializers.check, doc="Initializer name or callable f(sz).")
    PositionOffset = Property(_validate.nonnegative_integer, doc="Position of the first input element.")
    WeightLearnRateFactor = FactorProperty("Weights", "LearnRateFactor")
    WeightL2Factor = FactorProperty("Weights", "L2Factor")

    Weights: nn.Parameter

    def __init__(
        self,
        OutputSize: int,
        MaxPosition: int,
        *,
        PositionDimension: str = "auto",
        WeightsInitializer: str | Callable[..., Any] = "narrow-normal",
        Weights: Any = None,
        WeightLearnRateFactor: float = 1,
        WeightL2Factor: float = 1,
        PositionOffset: int = 0,
        Name: str = "",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(Name)
        self._assign(
            OutputSize=OutputSize,
            MaxPosition=MaxPosition,
            PositionDimension=PositionDimension,
            WeightsInitializer=WeightsInitializer,
            PositionOffset=PositionOffset,
            WeightLearnRateFactor=WeightLearnRateFactor,
            WeightL2Factor=WeightL2Factor,
        )
        self._init_learnables({"Weights": Weights}, device, dtype, generator)

    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        return (self.OutputSize, self.MaxPosition)

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        return self.WeightsInitializer, self.MaxPosition, self.OutputSize

    def forward(self, X: DLArray) -> DLArray:
        return _embed(X, self.Weights, self.PositionDimension, self.PositionOffset, self._caller)

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        return [
            ("", ["Name", "OutputSize", "MaxPosition", "PositionDimension", "PositionOffset"]),
            ("Learnable Parameters", ["Weights"]),
            ("Parameters and Initialization", ["WeightsInitializer"]),
            ("Learning Rate and Regularization", ["WeightLearnRateFactor", "WeightL2Factor"]),
        ]


positionEmbeddingLayer = matlab_constructor(PositionEmbeddingLayer, "positionEmbeddingLayer")
