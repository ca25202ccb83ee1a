"""MATLAB's ``layerNormalizationLayer``: normalize each observation, then scale and shift per channel."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._tracing import constant_under_compile
from ..functional import _require_dimensions
from . import _initializers
from ._base import FactorProperty, Layer, Property, matlab_constructor
from .fully_connected import auto_or_positive

__all__ = ["LayerNormalizationLayer", "layerNormalizationLayer"]

OPERATION_DIMENSIONS = ("auto", "channel-only", "spatial-channel", "batch-excluded")


@lru_cache(maxsize=256)
def _reduced_dimensions(fmt: str, operation: str) -> tuple[int, ...]:
    """The dimensions of ``fmt`` that one normalization group spans."""
    if operation == "auto":
        operation = "channel-only" if "T" in fmt or "S" not in fmt else "spatial-channel"
    labels = {"channel-only": "C", "spatial-channel": "SC", "batch-excluded": "SCTU"}[operation]
    return tuple(index for index, label in enumerate(fmt) if label in labels)


_reduced = constant_under_compile(_reduced_dimensions)


def _positive(name: str, value: object) -> float:
    number = _validate.factor(name, value)
    if number <= 0:
        raise DLFormatError(f"{name} must be a positive number; got {_validate.describe(value)}")
    return number


class LayerNormalizationLayer(Layer):
    """Normalizes each observation over its channels (and more, per ``OperationDimension``).

    ``Y = (X - mean) / sqrt(var + Epsilon) * Scale + Offset``, with mean and (biased) variance
    taken over the dimensions ``OperationDimension`` names, separately for every other index.

    Args:
        Epsilon: added to the variance (positive; default 1e-5).
        OperationDimension: ``"auto"`` (``C`` alone for data with ``T`` or without ``S``; ``S``
            and ``C`` otherwise), ``"channel-only"``, ``"spatial-channel"`` or
            ``"batch-excluded"`` (every dimension but ``B``).
        NumChannels: ``"auto"`` (from the first input) or the channel count.
        OffsetInitializer: default ``"zeros"``; ScaleInitializer: default ``"ones"``.
        Offset, Scale: initial ``NumChannels × 1`` values.
        OffsetLearnRateFactor, ScaleLearnRateFactor, OffsetL2Factor, ScaleL2Factor: default 1.
        Name: the layer name.
        device, dtype: torch factory arguments for the learnables.

    The statistics are computed in float32 for half-precision input.
    """

    default_name = "layernorm"
    learnables = ("Offset", "Scale")
    lazy_size = "NumChannels"
    config_keys = (
        "Epsilon",
        "OperationDimension",
        "NumChannels",
        "OffsetInitializer",
        "ScaleInitializer",
        "OffsetLearnRateFactor",
        "ScaleLearnRateFactor",
        "OffsetL2Factor",
        "ScaleL2Factor",
        "Name",
    )
    Epsilon = Property(_positive, doc="Added to the variance.")
    OperationDimension = Property(
        partial(_validate.choice, allowed=OPERATION_DIMENSIONS), read_only=True, doc="What one group spans."
    )
    NumChannels = Property(auto_or_positive, read_only=True, doc='"auto" or the channel count.')
    OffsetInitializer = Property(_initializers.check, doc="Initializer name or callable f(sz).")
    ScaleInitializer = Property(_initializers.check, doc="Initializer name or callable f(sz).")
    OffsetLearnRateFactor = FactorProperty("Offset", "LearnRateFactor")
    ScaleLearnRateFactor = FactorProperty("Scale", "LearnRateFactor")
    OffsetL2Factor = FactorProperty("Offset", "L2Factor")
    ScaleL2Factor = FactorProperty("Scale", "L2Factor")

    def __init__(
        self,
        *,
        Epsilon: float = 1e-5,
        OperationDimension: str = "auto",
        NumChannels: int | str = "auto",
        OffsetInitializer: str | Callable[..., Any] = "zeros",
        ScaleInitializer: str | Callable[..., Any] = "ones",
        Offset: Any = None,
        Scale: Any = None,
        OffsetLearnRateFactor: float = 1,
        ScaleLearnRateFactor: float = 1,
        OffsetL2Factor: float = 1,
        ScaleL2Factor: float = 1,
        Name: str = "",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(Name)
        self._assign(
            Epsilon=Epsilon,
            OperationDimension=OperationDimension,
            NumChannels=NumChannels,
            OffsetInitializer=OffsetInitializer,
            ScaleInitializer=ScaleInitializer,
            OffsetLearnRateFactor=OffsetLearnRateFactor,
            ScaleLearnRateFactor=ScaleLearnRateFactor,
            OffsetL2Factor=OffsetL2Factor,
            ScaleL2Factor=ScaleL2Factor,
        )
        self._init_learnables({"Offset": Offset, "Scale": Scale}, device, dtype)

    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        return (self._fixed_size(name), 1)

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        initializer = self.OffsetInitializer if name == "Offset" else self.ScaleInitializer
        return initializer, self._fixed_size(name), self._fixed_size(name)

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        shapes = [getattr(value, "shape", ()) for value in given.values() if value is not None]
        return next((int(shape[0]) for shape in shapes if len(shape) == 2), None)

    def _size_of(self, X: DLArray) -> int:
        return X.shape[X._fmt.index("C")]

    def forward(self, X: DLArray) -> DLArray:
        X = _require_dimensions(X, "C", self._caller)
        if not self._sizes_known():
            self._setup(X)
        channel = X._fmt.index("C")
        data = X._data
        if data.shape[channel] != self.NumChannels:
            raise DLFormatError(
                f'{self._caller()} has NumChannels {self.NumChannels}; the "{X._fmt}" input has '
                f"{data.shape[channel]} channels"
            )
        dimensions = _reduced(X._fmt, self.OperationDimension)
        working = data.float() if data.dtype in (torch.float16, torch.bfloat16) else data
        variance, mean = torch.var_mean(working, dim=dimensions, correction=0, keepdim=True)
        shape = [1] * data.ndim
        shape[channel] = -1
        scale, offset = self.Scale.view(shape), self.Offset.view(shape)
        normalized = (working - mean) * torch.rsqrt(variance + self.Epsilon) * scale + offset
        return DLArray._wrap(normalized.to(data.dtype), X._fmt)

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        return [
            ("", ["Name", "NumChannels", "Epsilon", "OperationDimension"]),
            ("Learnable Parameters", ["Offset", "Scale"]),
            ("Parameters and Initialization", ["OffsetInitializer", "ScaleInitializer"]),
            (
                "Learning Rate and Regularization",
                ["OffsetLearnRateFactor", "ScaleLearnRateFactor", "OffsetL2Factor", "ScaleL2Factor"],
            ),
        ]


layerNormalizationLayer = matlab_constructor(LayerNormalizationLayer, "layerNormalizationLayer")
