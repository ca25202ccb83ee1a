"""dlformat's layers: ``nn.Module`` subclasses with MATLAB's names, properties and errors."""

from ._base import Layer
from .position_embedding import PositionEmbeddingLayer, positionEmbeddingLayer
from .rotary import RotaryEmbedding
from .sinusoidal import SinusoidalPositionEncodingLayer, sinusoidalPositionEncodingLayer

__all__ = [
    "Layer",
    "PositionEmbeddingLayer",
    "RotaryEmbedding",
    "SinusoidalPositionEncodingLayer",
    "positionEmbeddingLayer",
    "sinusoidalPositionEncodingLayer",
]
