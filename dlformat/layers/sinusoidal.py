"""MATLAB's ``sinusoidalPositionEncodingLayer``: fixed sin/cos vectors for positions."""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from ..functional import (
    _broadcast,
    _channels_fastest,
    _per_element,
    _position_plan_of,
    sinusoid,
)
from ._base import Layer, Property, matlab_constructor

__all__ = ["SinusoidalPositionEncodingLayer", "sinusoidalPositionEncodingLayer"]

POSITIONS = ("auto", "temporal-indices", "spatial-indices", "data-values")


def _even_positive(name: str, value: object) -> int:
    number = _validate.positive_integer(name, value)
    if number % 2:
        raise DLFormatError(f"{name} must be an even positive integer; got {number}")
    return number


@lru_cache(maxsize=32)
def _table(
    end: int, dim: int, device: torch.device, dtype: torch.dtype, channels_fastest: bool
) -> torch.Tensor:
    """Encodings of positions 0 .. end-1 as a (dim, end) table, computed in float32 or wider.

    Stored with channels or positions fastest, to match the input's memory order.
    """
    table = sinusoid(end, dim).to(device=device, dtype=dtype).T
    return table if channels_fastest else table.contiguous()


class SinusoidalPositionEncodingLayer(Layer):
    """Fixed sinusoidal encodings of positions, added as channels (MATLAB, since R2023b).

    Channel 2k is sin(p / 10000^(2k/d)) and channel 2k+1 is cos(p / 10000^(2k/d)), for
    0-based k and d = OutputSize, where p is the 0-based index plus ``PositionOffset``, or the
    input value itself under ``"data-values"``. MATLAB's documentation does not state its
    formula; this one follows Vaswani et al. (2017) and is not verified against MATLAB output.

    Args:
        OutputSize: number of output channels, even and positive.
        Positions: ``"auto"`` (the ``T`` indices if present, else those of a single ``S``,
            else the input values), ``"temporal-indices"``, ``"spatial-indices"`` or
            ``"data-values"``; case-insensitive.
        PositionOffset: added to indices (integer ``>= 0``); not to data values.
        Name: the layer name.

    Shape:
        - Input: a formatted dlarray. For data values, its ``C`` must have size 1 (or be absent).
        - Output: the input's format with ``C`` of size ``OutputSize`` (added if missing), every
          other dimension kept. For indices it is a broadcast view of a cached table (stride 0
          along the other dimensions): add it to something, never write into it in place.
        - dtype: the input's floating dtype (float32 for other inputs); computed in float32 or
          wider and cast at the end.

    Examples:
        >>> layer = dlf.sinusoidalPositionEncodingLayer(64)
        >>> Y = layer(dlf.dlarray(torch.randn(64, 8, 20), "CBT"))   # 64(C) × 8(B) × 20(T)
    """

    default_name = "sinusoidalposenc"
    config_keys = ("OutputSize", "Positions", "PositionOffset", "Name")

    OutputSize = Property(_even_positive, read_only=True, doc="Number of output channels (even).")
    Positions = Property(
        partial(_validate.choice, allowed=POSITIONS), read_only=True, doc="Where positions come from."
    )
    PositionOffset = Property(_validate.nonnegative_integer, doc="Added to the 0-based indices.")

    def __init__(
        self, OutputSize: int, *, Positions: str = "auto", PositionOffset: int = 0, Name: str = ""
    ) -> None:
        super().__init__(Name)
        self._assign(OutputSize=OutputSize, Positions=Positions, PositionOffset=PositionOffset)

    def forward(self, X: DLArray) -> DLArray:
        mode = self._mode(X)
        if mode == "data-values":
            return self._encode_values(X)
        plan, length = _position_plan_of(
            X, "temporal" if mode == "temporal-indices" else "spatial", self._caller
        )
        data = X._data
        dtype = data.dtype if data.is_floating_point() else torch.float32
        end = self.PositionOffset + length
        if torch.compiler.is_compiling():  # no cache inside a graph: the table is cheap to build
            table = sinusoid(end, self.OutputSize).to(device=data.device, dtype=dtype).T
        else:
            table = _table(end, self.OutputSize, data.device, dtype, _channels_fastest(plan, data))
        return _broadcast(table, self.PositionOffset, plan, data)

    def _mode(self, X: Any) -> str:
        if self.Positions != "auto" or not isinstance(X, DLArray):
            return self.Positions
        if "T" in X._fmt:
            return "temporal-indices"
        return "spatial-indices" if X._fmt.count("S") == 1 else "data-values"

    def _encode_values(self, X: Any) -> DLArray:
        values, place = _per_element(X, "position", lambda: f'{self._caller()} with Positions "data-values"')
        dtype = values.dtype if values.is_floating_point() else torch.float32
        return place(sinusoid(values, self.OutputSize).to(dtype))

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        return [("", ["Name", "OutputSize", "Positions", "PositionOffset"])]


sinusoidalPositionEncodingLayer = matlab_constructor(
    SinusoidalPositionEncodingLayer, "sinusoidalPositionEncodingLayer"
)
