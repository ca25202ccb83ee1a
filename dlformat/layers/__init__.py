"""dlformat's layers: ``nn.Module`` subclasses with MATLAB's names, properties and errors."""

from ._base import Layer
from .addition import AdditionLayer, additionLayer
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
from .fully_connected import FullyConnectedLayer, fullyConnectedLayer
from .function import FunctionLayer, functionLayer
from .indexing import Indexing1DLayer, indexing1dLayer
from .input import FeatureInputLayer, SequenceInputLayer, featureInputLayer, sequenceInputLayer
from .normalization import (
    BatchNormalizationLayer,
    CrossChannelNormalizationLayer,
    GroupNormalizationLayer,
    InstanceNormalizationLayer,
    LayerNormalizationLayer,
    batchNormalizationLayer,
    crossChannelNormalizationLayer,
    groupNormalizationLayer,
    instanceNormalizationLayer,
    layerNormalizationLayer,
)
from .output import (
    ClassificationOutputLayer,
    PixelClassificationLayer,
    RegressionOutputLayer,
    classificationLayer,
    pixelClassificationLayer,
    regressionLayer,
)
from .position_embedding import PositionEmbeddingLayer, positionEmbeddingLayer
from .recurrent import BiLSTMLayer, GRULayer, LSTMLayer, bilstmLayer, gruLayer, lstmLayer
from .rotary import RotaryEmbedding
from .sinusoidal import SinusoidalPositionEncodingLayer, sinusoidalPositionEncodingLayer
from .word_embedding import WordEmbeddingLayer, wordEmbeddingLayer

__all__ = [
    "AdditionLayer",
    "BatchNormalizationLayer",
    "BiLSTMLayer",
    "ClassificationOutputLayer",
    "CrossChannelNormalizationLayer",
    "DropoutLayer",
    "FeatureInputLayer",
    "FullyConnectedLayer",
    "FunctionLayer",
    "GELULayer",
    "GRULayer",
    "GroupNormalizationLayer",
    "Indexing1DLayer",
    "InstanceNormalizationLayer",
    "LSTMLayer",
    "Layer",
    "LayerNormalizationLayer",
    "PixelClassificationLayer",
    "PositionEmbeddingLayer",
    "ReLULayer",
    "RegressionOutputLayer",
    "RotaryEmbedding",
    "SelfAttentionLayer",
    "SequenceInputLayer",
    "SinusoidalPositionEncodingLayer",
    "SoftmaxLayer",
    "WordEmbeddingLayer",
    "additionLayer",
    "batchNormalizationLayer",
    "bilstmLayer",
    "classificationLayer",
    "crossChannelNormalizationLayer",
    "dropoutLayer",
    "featureInputLayer",
    "fullyConnectedLayer",
    "functionLayer",
    "geluLayer",
    "groupNormalizationLayer",
    "gruLayer",
    "indexing1dLayer",
    "instanceNormalizationLayer",
    "layerNormalizationLayer",
    "lstmLayer",
    "pixelClassificationLayer",
    "positionEmbeddingLayer",
    "regressionLayer",
    "reluLayer",
    "selfAttentionLayer",
    "sequenceInputLayer",
    "sinusoidalPositionEncodingLayer",
    "softmaxLayer",
    "wordEmbeddingLayer",
]
