"""dlformat's layers: ``nn.Module`` subclasses with MATLAB's names, properties and errors."""

from ._base import Layer
from .addition import (
    AdditionLayer,
    ConcatenationLayer,
    DepthConcatenationLayer,
    MultiplicationLayer,
    additionLayer,
    concatenationLayer,
    depthConcatenationLayer,
    multiplicationLayer,
)
from .attention import SelfAttentionLayer, selfAttentionLayer
from .elementwise import (
    DropoutLayer,
    GELULayer,
    ReLULayer,
    SoftmaxLayer,
    dropoutLayer,
    geluLayer,
    reluLayer,
    softmaxLayer,
)
from .flatten import FlattenLayer, flattenLayer
from .fully_connected import FullyConnectedLayer, fullyConnectedLayer
from .function import FunctionLayer, functionLayer
from .input import (
    FeatureInputLayer,
    Image3DInputLayer,
    ImageInputLayer,
    SequenceInputLayer,
    featureInputLayer,
    image3dInputLayer,
    imageInputLayer,
    sequenceInputLayer,
)
from .normalization import LayerNormalizationLayer, layerNormalizationLayer
from .position_embedding import PositionEmbeddingLayer, positionEmbeddingLayer
from .rotary import RotaryEmbedding
from .sinusoidal import SinusoidalPositionEncodingLayer, sinusoidalPositionEncodingLayer
from .word_embedding import WordEmbeddingLayer, wordEmbeddingLayer

__all__ = [
    "AdditionLayer",
    "ConcatenationLayer",
    "DepthConcatenationLayer",
    "DropoutLayer",
    "FeatureInputLayer",
    "FlattenLayer",
    "FullyConnectedLayer",
    "FunctionLayer",
    "GELULayer",
    "Image3DInputLayer",
    "ImageInputLayer",
    "Layer",
    "LayerNormalizationLayer",
    "MultiplicationLayer",
    "PositionEmbeddingLayer",
    "ReLULayer",
    "RotaryEmbedding",
    "SelfAttentionLayer",
    "SequenceInputLayer",
    "SinusoidalPositionEncodingLayer",
    "SoftmaxLayer",
    "WordEmbeddingLayer",
    "additionLayer",
    "concatenationLayer",
    "depthConcatenationLayer",
    "dropoutLayer",
    "featureInputLayer",
    "flattenLayer",
    "fullyConnectedLayer",
    "functionLayer",
    "geluLayer",
    "image3dInputLayer",
    "imageInputLayer",
    "layerNormalizationLayer",
    "multiplicationLayer",
    "positionEmbeddingLayer",
    "reluLayer",
    "selfAttentionLayer",
    "sequenceInputLayer",
    "sinusoidalPositionEncodingLayer",
    "softmaxLayer",
    "wordEmbeddingLayer",
]
