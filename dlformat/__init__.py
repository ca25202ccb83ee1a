"""dlformat: MATLAB Deep Learning Toolbox formats and layers on PyTorch.

A MATLAB ``dlarray`` carries dimension labels (``"SSCB"``, ``"CBT"``, ...) and layers act
on those labels; dlformat brings the same semantics, MATLAB's layer names, properties and
errors to ``torch``.
"""

from . import functional
from ._dlarray import DLArray, dims, dlarray, extractdata, finddim, stripdims
from ._errors import DLFormatError, LayerError
from ._factors import getL2Factor, getLearnRateFactor, param_groups, setL2Factor, setLearnRateFactor
from ._version import __version__
from .layers import (
    AdditionLayer,
    DropoutLayer,
    FeatureInputLayer,
    FullyConnectedLayer,
    FunctionLayer,
    GELULayer,
    Layer,
    LayerNormalizationLayer,
    PositionEmbeddingLayer,
    ReLULayer,
    RotaryEmbedding,
    SelfAttentionLayer,
    SequenceInputLayer,
    SinusoidalPositionEncodingLayer,
    SoftmaxLayer,
    WordEmbeddingLayer,
    additionLayer,
    dropoutLayer,
    featureInputLayer,
    fullyConnectedLayer,
    functionLayer,
    geluLayer,
    layerNormalizationLayer,
    positionEmbeddingLayer,
    reluLayer,
    selfAttentionLayer,
    sequenceInputLayer,
    sinusoidalPositionEncodingLayer,
    softmaxLayer,
    wordEmbeddingLayer,
)
from .networks import (
    DLNetwork,
    addLayers,
    analyzeNetwork,
    connectLayers,
    disconnectLayers,
    dlnetwork,
    forward,
    initialize,
    predict,
    removeLayers,
    replaceLayer,
)

__all__ = [
    "AdditionLayer",
    "DLArray",
    "DLFormatError",
    "DLNetwork",
    "DropoutLayer",
    "FeatureInputLayer",
    "FullyConnectedLayer",
    "FunctionLayer",
    "GELULayer",
    "Layer",
    "LayerError",
    "LayerNormalizationLayer",
    "PositionEmbeddingLayer",
    "ReLULayer",
    "RotaryEmbedding",
    "SelfAttentionLayer",
    "SequenceInputLayer",
    "SinusoidalPositionEncodingLayer",
    "SoftmaxLayer",
    "WordEmbeddingLayer",
    "__version__",
    "addLayers",
    "additionLayer",
    "analyzeNetwork",
    "connectLayers",
    "dims",
    "disconnectLayers",
    "dlarray",
    "dlnetwork",
    "dropoutLayer",
    "extractdata",
    "featureInputLayer",
    "finddim",
    "forward",
    "fullyConnectedLayer",
    "functionLayer",
    "functional",
    "geluLayer",
    "getL2Factor",
    "getLearnRateFactor",
    "initialize",
    "layerNormalizationLayer",
    "param_groups",
    "positionEmbeddingLayer",
    "predict",
    "reluLayer",
    "removeLayers",
    "replaceLayer",
    "selfAttentionLayer",
    "sequenceInputLayer",
    "setL2Factor",
    "setLearnRateFactor",
    "sinusoidalPositionEncodingLayer",
    "softmaxLayer",
    "stripdims",
    "wordEmbeddingLayer",
]


def __getattr__(name: str) -> object:
    # A MATLAB user's first try of a name dlformat lacks should say so, not suggest a
    # near-miss ("Did you mean 'FeatureInputLayer'?"): the error carries no name/obj, which
    # is what Python's suggestion machinery reads.
    if name.startswith("__"):
        raise AttributeError(f"module 'dlformat' has no attribute '{name}'")
    raise AttributeError(
        f"dlformat has no '{name}': if it is a MATLAB function or layer, dlformat does not port it yet. "
        "The ported MATLAB names are listed in docs/matlab_names.md (and in dlformat.__all__)"
    )
