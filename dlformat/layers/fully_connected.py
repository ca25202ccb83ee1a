"""MATLAB's ``fullyConnectedLayer``: ``Weights * x + Bias`` over the flattened spatial and channel data."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import einops
import torch
import torch.nn.functional as F

from .. import _format, _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._tracing import constant_under_compile
from ..functional import _require_dimensions
from . import _initializers
from ._base import FactorProperty, Layer, Property, matlab_constructor

__all__ = ["FullyConnectedLayer", "fullyConnectedLayer"]


def auto_or_positive(name: str, value: object) -> int | str:
    """MATLAB's ``"auto"`` (fixed when the layer first sees data) or a positive integer."""
    if isinstance(value, str) and value.lower() == "auto":
        return "auto"
    return _validate.positive_integer(name, value)


@lru_cache(maxsize=256)
def _flatten_plan(fmt: str) -> tuple[str, str, str, int]:
    """(output format, pattern to (kept..., features), pattern back, number of S and C dimensions).

    Features are flattened as MATLAB does, column-major: the first S varies fastest, C slowest.
    """
    if "U" in fmt:
        raise DLFormatError(
            f'fullyConnectedLayer cannot take format "{fmt}": "U" dimensions have no meaning it could '
            f'flatten or keep; relabel them as "S" (flattened) or "B"/"T" (kept)'
        )
    names = _format.axis_names(fmt)
    features = [name for name in names if name[0] in "sc"]
    kept = [name for name in names if name[0] in "bt"]
    output = "C" + "".join(label for label in fmt if label in "BT")
    to_rows = f"{' '.join(names)} -> {' '.join(kept)} ({' '.join(reversed(features))})"
    back = f"{' '.join(kept)} c0 -> {' '.join(_format.axis_names(output))}"
    return output, to_rows, back, len(features)


_plan = constant_under_compile(_flatten_plan)


class FullyConnectedLayer(Layer):
    """A dense layer over each observation (and time step): ``Weights * x + Bias``.

    Every ``S`` dimension is flattened with ``C`` into the input vector, in MATLAB's
    column-major order (the first ``S`` fastest, ``C`` slowest); ``B`` and ``T`` are kept.
    ``"SSCB"`` in gives ``"CB"`` out, ``"CBT"`` gives ``"CBT"``.

    Args:
        OutputSize: output channels.
        InputSize: ``"auto"`` (fixed by the first input, or by ``initialize(net)``) or the
            flattened input size.
        WeightsInitializer: ``"glorot"`` (default), ``"he"``, ``"narrow-normal"``, ``"zeros"``,
            ``"ones"`` or a callable ``f(sz)``; ``BiasInitializer`` likewise, default ``"zeros"``.
        Weights: ``OutputSize × InputSize`` (fixes ``InputSize``); Bias: ``OutputSize × 1``.
        WeightLearnRateFactor, BiasLearnRateFactor, WeightL2Factor: default 1;
        BiasL2Factor: default 0, as in MATLAB.
        Name: the layer name.
        device, dtype: torch factory arguments for the learnables.

    Attributes:
        Weights, Bias: ``nn.Parameter``, or ``None`` until ``InputSize`` is known.
    """

    default_name = "fc"
    learnables = ("Weights", "Bias")
    lazy_size = "InputSize"
    config_keys = (
        "OutputSize",
        "InputSize",
        "WeightsInitializer",
        "BiasInitializer",
        "WeightLearnRateFactor",
        "BiasLearnRateFactor",
        "WeightL2Factor",
        "BiasL2Factor",
        "Name",
    )
    OutputSize = Property(_validate.positive_integer, read_only=True, doc="Output channels.")
    InputSize = Property(auto_or_positive, read_only=True, doc='"auto" or the flattened input size.')
    WeightsInitializer = Property(_initializers.check, doc="Initializer name or callable f(sz).")
    BiasInitializer = Property(_initializers.check, doc="Initializer name or callable f(sz).")
    WeightLearnRateFactor = FactorProperty("Weights", "LearnRateFactor")
    BiasLearnRateFactor = FactorProperty("Bias", "LearnRateFactor")
    WeightL2Factor = FactorProperty("Weights", "L2Factor")
    BiasL2Factor = FactorProperty("Bias", "L2Factor")

    def __init__(
        self,
        OutputSize: int,
        *,
        InputSize: int | str = "auto",
        WeightsInitializer: str | Callable[..., Any] = "glorot",
        BiasInitializer: str | Callable[..., Any] = "zeros",
        Weights: Any = None,
        Bias: Any = None,
        WeightLearnRateFactor: float = 1,
        BiasLearnRateFactor: float = 1,
        WeightL2Factor: float = 1,
        BiasL2Factor: float = 0,
        Name: str = "",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(Name)
        self._assign(
            OutputSize=OutputSize,
            InputSize=InputSize,
            WeightsInitializer=WeightsInitializer,
            BiasInitializer=BiasInitializer,
            WeightLearnRateFactor=WeightLearnRateFactor,
            BiasLearnRateFactor=BiasLearnRateFactor,
            WeightL2Factor=WeightL2Factor,
            BiasL2Factor=BiasL2Factor,
        )
        self._init_learnables({"Weights": Weights, "Bias": Bias}, device, dtype)

    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        return (self.OutputSize, 1) if name == "Bias" else (self.OutputSize, self._fixed_size(name))

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        initializer = self.WeightsInitializer if name == "Weights" else self.BiasInitializer
        return initializer, self._fixed_size(name), self.OutputSize

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        shape = getattr(given["Weights"], "shape", ())
        return int(shape[1]) if len(shape) == 2 else None

    def _size_of(self, X: DLArray) -> int:
        return math.prod(X.shape[: _plan(X._fmt)[3]])

    def forward(self, X: DLArray) -> DLArray:
        X = _require_dimensions(X, "C", self._caller)
        if not self._sizes_known():
            self._setup(X)
        output, to_rows, back, _ = _plan(X._fmt)
        rows = einops.rearrange(X._data, to_rows)
        if rows.shape[-1] != self.InputSize:
            raise DLFormatError(
                f'{self._caller()} has InputSize {self.InputSize}; the "{X._fmt}" input of size '
                f"{_validate.matlab_size(tuple(X.shape))} flattens to {rows.shape[-1]} features"
            )
        result = F.linear(rows, self.Weights, self.Bias[:, 0])
        return DLArray._wrap(einops.rearrange(result, back), output)

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        return [
            ("", ["Name", "InputSize", "OutputSize"]),
            ("Learnable Parameters", ["Weights", "Bias"]),
            ("Parameters and Initialization", ["WeightsInitializer", "BiasInitializer"]),
            (
                "Learning Rate and Regularization",
                ["WeightLearnRateFactor", "BiasLearnRateFactor", "WeightL2Factor", "BiasL2Factor"],
            ),
        ]


fullyConnectedLayer = matlab_constructor(FullyConnectedLayer, "fullyConnectedLayer")
