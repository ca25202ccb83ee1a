"""MATLAB's ``wordEmbeddingLayer``: 1-based word indices to learned vectors."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from ..functional import _per_element
from . import _initializers
from ._base import FactorProperty, Layer, Property, matlab_constructor

__all__ = ["WordEmbeddingLayer", "wordEmbeddingLayer"]

OOV_MODES = ("map-to-last", "error")


class WordEmbeddingLayer(Layer):
    """Maps word indices to ``Dimension``-channel vectors: index ``k`` gives ``Weights[:, k-1]``.

    Indices are 1-based, as MATLAB's are. An index that is not an integer in 1 .. NumWords is
    out of vocabulary: ``OOVMode="map-to-last"`` (default) maps it to the last column,
    ``"error"`` raises a :class:`DLFormatError` naming it.

    Args:
        Dimension: channels of each embedding vector.
        NumWords: vocabulary size (columns of ``Weights``).
        OOVMode: ``"map-to-last"`` or ``"error"``.
        WeightsInitializer: ``"narrow-normal"`` (default), ``"glorot"``, ``"he"``, ``"zeros"``,
            ``"ones"`` or a callable ``f(sz)``.
        Weights: initial ``Dimension × NumWords`` weights (copied).
        WeightLearnRateFactor, WeightL2Factor: factors ``>= 0``.
        Name: the layer name.
        device, dtype: torch factory arguments for ``Weights``.

    Shape:
        - Input: a formatted dlarray of indices whose ``C`` has size 1 or is absent (``"CBT"``,
          ``"BT"``, ...); any real or integer dtype.
        - Output: the input's format with ``C`` of size ``Dimension``; dtype of ``Weights``.
    """

    default_name = "wordembedding"
    learnables = ("Weights",)
    config_keys = (
        "Dimension",
        "NumWords",
        "OOVMode",
        "WeightsInitializer",
        "WeightLearnRateFactor",
        "WeightL2Factor",
        "Name",
    )
    Dimension = Property(_validate.positive_integer, read_only=True, doc="Channels per word vector.")
    NumWords = Property(_validate.positive_integer, read_only=True, doc="Vocabulary size.")
    OOVMode = Property(
        partial(_validate.choice, allowed=OOV_MODES), read_only=True, doc='"map-to-last" or "error".'
    )
    WeightsInitializer = Property(_initializers.check, doc="Initializer name or callable f(sz).")
    WeightLearnRateFactor = FactorProperty("Weights", "LearnRateFactor")
    WeightL2Factor = FactorProperty("Weights", "L2Factor")

    Weights: nn.Parameter

    def __init__(
        self,
        Dimension: int,
        NumWords: int,
        *,
        OOVMode: str = "map-to-last",
        WeightsInitializer: str | Callable[..., Any] = "narrow-normal",
        Weights: Any = None,
        WeightLearnRateFactor: float = 1,
        WeightL2Factor: float = 1,
        Name: str = "",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(Name)
        self._assign(
            Dimension=Dimension,
            NumWords=NumWords,
            OOVMode=OOVMode,
            WeightsInitializer=WeightsInitializer,
            WeightLearnRateFactor=WeightLearnRateFactor,
            WeightL2Factor=WeightL2Factor,
        )
        self._init_learnables({"Weights": Weights}, device, dtype)

    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        return (self.Dimension, self.NumWords)

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        return self.WeightsInitializer, self.NumWords, self.Dimension

    def forward(self, X: DLArray) -> DLArray:
        indices, place = _per_element(X, "word index", self._caller)
        return place(F.embedding(self._rows(indices.detach()), self.Weights.t()))

    def _rows(self, indices: torch.Tensor) -> torch.Tensor:
        """0-based rows for 1-based word indices, out-of-vocabulary ones mapped or refused."""
        rounded = indices.round() if indices.is_floating_point() else indices
        valid = (rounded == indices) & (rounded >= 1) & (rounded <= self.NumWords)
        if self.OOVMode == "error" and not bool(valid.all()):
            bad = indices[~valid].reshape(-1)[0].item()
            raise DLFormatError(
                f'{self._caller()} with OOVMode "error" got word index {bad:g}, outside the vocabulary '
                f'1 .. {self.NumWords} (indices are 1-based); use OOVMode "map-to-last" to map such '
                f"words to the last vector"
            )
        return torch.where(valid, rounded.long(), self.NumWords) - 1

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        return [
            ("", ["Name", "Dimension", "NumWords", "OOVMode"]),
            ("Learnable Parameters", ["Weights"]),
            ("Parameters and Initialization", ["WeightsInitializer"]),
            ("Learning Rate and Regularization", ["WeightLearnRateFactor", "WeightL2Factor"]),
        ]


wordEmbeddingLayer = matlab_constructor(WordEmbeddingLayer, "wordEmbeddingLayer")
