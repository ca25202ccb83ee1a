"""MATLAB's deep-learning functions on dlarrays, under MATLAB's names (like ``torch.nn.functional``).

Every layer's computation lives here and the layers are thin calls into it:
``fullyConnectedLayer`` → :func:`fullyconnect`, ``selfAttentionLayer`` → :func:`attention`,
``layerNormalizationLayer`` → :func:`layernorm`, ``wordEmbeddingLayer`` → :func:`embed`.
Each function takes MATLAB's arguments and options (``'Name', value`` pairs too), reads the
format of a formatted dlarray or takes ``DataFormat`` for unformatted data, and computes in
MATLAB's precision (float32 when float32 and float64 meet). One module per concept:
``_dense``, ``_attention``, ``_normalization``, ``_embedding``, ``_activations``, ``_recurrent``,
"""

from ._activations import gelu, leakyrelu, relu, sigmoid, softmax
from ._attention import attention
from ._convolution import dlconv, dltranspconv
from ._ctc import ctc
from ._dense import fullyconnect
from ._embedding import embed
from ._losses import crossentropy, generalizedDice, huber, indexcrossentropy, l1loss, l2loss, mse
from ._normalization import batchnorm, crosschannelnorm, groupnorm, instancenorm, layernorm
from ._pooling import avgpool, maxpool, maxunpool
from ._position import position_embedding, rotary, sinusoid, timing_signal_1d
from ._recurrent import gru, lstm

__all__ = [
    "attention",
    "avgpool",
    "batchnorm",
    "crosschannelnorm",
    "crossentropy",
    "ctc",
    "dlconv",
    "dltranspconv",
    "embed",
    "fullyconnect",
    "gelu",
    "generalizedDice",
    "groupnorm",
    "gru",
    "huber",
    "indexcrossentropy",
    "instancenorm",
    "l1loss",
    "l2loss",
    "layernorm",
    "leakyrelu",
    "lstm",
    "maxpool",
    "maxunpool",
    "mse",
    "position_embedding",
    "relu",
    "rotary",
    "sigmoid",
    "sinusoid",
    "softmax",
    "timing_signal_1d",
]
