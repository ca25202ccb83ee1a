"""dlformat's layers: ``nn.Module`` subclasses with MATLAB's names, properties and errors."""

from ._base import Layer
from .position_embedding import PositionEmbeddingLayer, positionEmbeddingLayer

__all__ = ["Layer", "PositionEmbeddingLayer", "positionEmbeddingLayer"]
