"""dlformat: MATLAB Deep Learning Toolbox formats and layers on PyTorch.

A MATLAB ``dlarray`` carries dimension labels (``"SSCB"``, ``"CBT"``, ...) and layers act
on those labels; dlformat brings the same semantics, MATLAB's layer names, properties and
errors to ``torch``.
"""

from ._dlarray import DLArray, dims, dlarray, extractdata, finddim, stripdims
from ._errors import DLFormatError
from ._factors import getL2Factor, getLearnRateFactor, param_groups, setL2Factor, setLearnRateFactor
from ._version import __version__
from .layers import (
    PositionEmbeddingLayer,
    RotaryEmbedding,
    SinusoidalPositionEncodingLayer,
    positionEmbeddingLayer,
    sinusoidalPositionEncodingLayer,
)

__all__ = [
    "DLArray",
    "DLFormatError",
    "PositionEmbeddingLayer",
    "RotaryEmbedding",
    "SinusoidalPositionEncodingLayer",
    "__version__",
    "dims",
    "dlarray",
    "extractdata",
    "finddim",
    "getL2Factor",
    "getLearnRateFactor",
    "param_groups",
    "positionEmbeddingLayer",
    "setL2Factor",
    "setLearnRateFactor",
    "sinusoidalPositionEncodingLayer",
    "stripdims",
]
