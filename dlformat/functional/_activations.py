"""MATLAB's activation functions on dlarrays: ``relu``, ``leakyrelu``, ``gelu``, ``sigmoid``, ``softmax``.

Each keeps its input's format. Unformatted input is allowed where MATLAB allows it (the
element-wise ones); ``softmax`` works along ``C`` and needs a format, or ``DataFormat``.

The activations of MATLAB's layers that have no dlarray function of their own
(``clippedReluLayer``, ``eluLayer``, ``swishLayer``, ``softplusLayer``, ``preluLayer``) are here
too, as tensor functions without MATLAB names (not exported): the layers call them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from .. import _validate
from .._dlarray import DLArray, dlarray
from .._options import matlab_function
from ._common import floating_data, formatted_input

__all__ = ["gelu", "leakyrelu", "relu", "sigmoid", "softmax"]

APPROXIMATIONS = ("none", "tanh")


def _elementwise(name: str, X: Any, function: Callable[[torch.Tensor], torch.Tensor]) -> DLArray:
    """``function`` on the data of ``X`` (any dlarray, tensor or array), format kept."""
    X = X if isinstance(X, DLArray) else dlarray(X)
    return DLArray._wrap(function(floating_data(X._data, name)), X._fmt)


@matlab_function
def relu(X: Any) -> DLArray:
    """MATLAB's ``relu``: ``max(X, 0)``, format kept.

    Examples:
        >>> F.relu(dlf.dlarray(torch.tensor([[-1.0, 2.0]]), "CB")).shape
        torch.Size([1, 2])
    """
    return _elementwise("relu", X, torch.relu)


@matlab_function
def leakyrelu(X: Any, scaleFactor: float = 0.01) -> DLArray:
    """MATLAB's ``leakyrelu(X, scaleFactor)``: ``X`` where positive, ``scaleFactor * X`` elsewhere.

    ``scaleFactor`` defaults to 0.01, as in MATLAB.
    """
    scale = _validate.real("scaleFactor", scaleFactor)
    return _elementwise("leakyrelu", X, lambda data: F.leaky_relu(data, scale))


@matlab_function
def gelu(X: Any, *, Approximation: str = "none") -> DLArray:
    """MATLAB's ``gelu(X, Approximation=...)``: ``x·Φ(x)`` (``"none"``) or its tanh approximation."""
    approximate = _validate.choice("Approximation", Approximation, APPROXIMATIONS)
    return _elementwise("gelu", X, lambda data: F.gelu(data, approximate=approximate))


@matlab_function
def sigmoid(X: Any) -> DLArray:
    """MATLAB's ``sigmoid``: ``1 / (1 + exp(-X))``, format kept."""
    return _elementwise("sigmoid", X, torch.sigmoid)


@matlab_function
def softmax(X: Any, *, DataFormat: str | None = None) -> DLArray:
    """MATLAB's ``softmax``: exponentials normalized to sum 1 along ``C``, for every other index.

    Half-precision data is computed in float32 and returned in its own dtype.

    Examples:
        >>> Y = F.softmax(dlf.dlarray(torch.randn(3, 2), "CB"))
        >>> torch.allclose(dlf.extractdata(Y).sum(0), torch.ones(2))
        True
    """
    X, restore = formatted_input(X, DataFormat, "softmax", needs="C")
    result = _elementwise("softmax", X, lambda data: _softmax(data, X._fmt.index("C")))
    return restore(result)


def _softmax(data: torch.Tensor, dim: int) -> torch.Tensor:
    working = torch.float32 if data.dtype in (torch.float16, torch.bfloat16) else None
    return F.softmax(data, dim, dtype=working).to(data.dtype)


# -- the activations of layers without a MATLAB function (tensor in, tensor out) ------------------
def clipped_relu(data: torch.Tensor, ceiling: float) -> torch.Tensor:
    """clippedReluLayer: ``min(max(x, 0), ceiling)``."""
    return torch.clamp(data, min=0.0, max=ceiling)


def elu(data: torch.Tensor, alpha: float) -> torch.Tensor:
    """eluLayer: ``x`` for ``x >= 0``, ``alpha * (exp(x) - 1)`` below."""
    return F.elu(data, alpha)


def swish(data: torch.Tensor) -> torch.Tensor:
    """swishLayer: ``x / (1 + exp(-x))``."""
    return F.silu(data)


def softplus(data: torch.Tensor) -> torch.Tensor:
    """softplusLayer: ``log(1 + exp(x))``, exactly for every x (torch's ``softplus`` switches to
    ``x`` above a threshold)."""
    return torch.logaddexp(data, torch.zeros((), dtype=data.dtype, device=data.device))


def mish(data: torch.Tensor) -> torch.Tensor:
    """mishLayer: ``x · tanh(log(1 + exp(x)))``, with :func:`softplus` exact for every x."""
    return data * torch.tanh(softplus(data))


def prelu(data: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """preluLayer: ``x`` for ``x > 0``, ``alpha * x`` elsewhere, ``alpha`` expanded against the data
    as MATLAB expands arrays (aligned from the first dimension)."""
    return torch.where(data > 0, data, alpha * data)
