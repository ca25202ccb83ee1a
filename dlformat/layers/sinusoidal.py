"""MATLAB's ``sinusoidalPositionEncodingLayer``: fixed sin/cos vectors for positions."""

from __future__ import annotations

from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from ..functional._position import (
    _broadcast,
    _channels_fastest,
    _per_element,
    _position_plan_of,
    position_offset,
    sinusoid,
)
from ._base import _SETUP_LOCK, Layer, matlab_constructor
from ._properties import Property, choice_property

__all__ = ["SinusoidalPositionEncodingLayer", "sinusoidalPositionEncodingLayer"]

POSITIONS = ("auto", "temporal-indices", "spatial-indices", "data-values")
# A layer's cached table grows (doubling) to the largest position seen, up to this many
# positions; windows beyond it are computed directly, so a step at offset 10**7 costs what a
# step at offset 0 costs instead of a 10**7-column table.
TABLE_POSITIONS = 16384


def _even_positive(name: str, value: object) -> int:
    number = _validate.positive_integer(name, value)
    if number % 2:
        raise DLFormatError(f"{name} must be an even positive integer; got {number}")
    return number


def _position_dtype(dtype: torch.dtype) -> torch.dtype:
    """Positions and angles in float64 for float64 output, float32 otherwise (never half precision)."""
    return torch.float64 if dtype == torch.float64 else torch.float32


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
        PositionOffset: added to indices (integer ``>= 0``); not to data values. A call may
            override it, ``layer(X, PositionOffset=n)`` (an int or a 0-d integer tensor).
        Name: the layer name.

    Shape:
        - Input: a formatted dlarray. For data values, its ``C`` must have size 1 (or be absent).
        - Output: the input's format with ``C`` of size ``OutputSize`` (added if missing), every
          other dimension kept. For indices it is a broadcast view of a table the layer keeps
          (stride 0 along the other dimensions): add it to something, never write into it.
        - dtype: the input's floating dtype (float32 for other inputs); computed in float32 or
          wider and cast at the end.

    Examples:
        >>> layer = dlf.sinusoidalPositionEncodingLayer(64)
        >>> Y = layer(dlf.dlarray(torch.randn(64, 8, 20), "CBT"))   # 64(C) × 8(B) × 20(T)
        >>> tuple(Y.shape)
        (64, 8, 20)
    """

    default_name = "sinusoidalposenc"

    OutputSize = Property(
        _even_positive, positional=True, read_only=True, doc="Number of output channels (even)."
    )
    Positions = choice_property(POSITIONS, "auto", "Where positions come from.")
    PositionOffset = Property(
        lambda name, value: position_offset(value, name), default=0, doc="Added to the 0-based indices."
    )

    def _check_properties(self) -> None:
        # (device, dtype, channels fastest) -> (channels, positions) table of positions 0 .. n-1
        self._tables: dict[tuple[torch.device, torch.dtype, bool], torch.Tensor] = {}

    def predict(self, X: DLArray, *, PositionOffset: Any = None) -> DLArray:
        mode = self._mode(X)
        if mode == "data-values":
            return self._encode_values(X)
        offset = self.PositionOffset if PositionOffset is None else position_offset(PositionOffset)
        plan, length = _position_plan_of(
            X, "temporal" if mode == "temporal-indices" else "spatial", self._caller
        )
        data = X._data
        dtype = data.dtype if data.is_floating_point() else torch.float32
        if torch.compiler.is_compiling() or not isinstance(offset, int) or offset + length > TABLE_POSITIONS:
            # the window alone, O(length): under compile (no Python-side cache), or beyond the table
            positions = offset + torch.arange(length, device=data.device, dtype=_position_dtype(dtype))
            return _broadcast(sinusoid(positions, self.OutputSize).to(dtype).T, 0, plan, data)
        table = self._table(offset + length, data.device, dtype, _channels_fastest(plan, data))
        return _broadcast(table, offset, plan, data)

    def _table(
        self, end: int, device: torch.device, dtype: torch.dtype, channels_fastest: bool
    ) -> torch.Tensor:
        """The table for this device, dtype and layout, grown (doubling) to cover ``end`` positions."""
        key = (device, dtype, channels_fastest)
        table = self._tables.get(key)
        if table is None or table.shape[1] < end:
            with _SETUP_LOCK:
                table = self._tables.get(key)
                if table is None or table.shape[1] < end:
                    size = min(TABLE_POSITIONS, max(end, 2 * (0 if table is None else table.shape[1]), 64))
                    positions = torch.arange(size, device=device, dtype=_position_dtype(dtype))
                    table = sinusoid(positions, self.OutputSize).to(dtype).T
                    table = table if channels_fastest else table.contiguous()
                    self._tables[key] = table
        return table

    def _mode(self, X: Any) -> str:
        if self.Positions != "auto" or not isinstance(X, DLArray):
            return str(self.Positions)
        if "T" in X._fmt:
            return "temporal-indices"
        return "spatial-indices" if X._fmt.count("S") == 1 else "data-values"

    def _encode_values(self, X: Any) -> DLArray:
        values, place = _per_element(X, "position", lambda: f'{self._caller()} with Positions "data-values"')
        dtype = values.dtype if values.is_floating_point() else torch.float32
        return place(sinusoid(values, self.OutputSize).to(dtype))


sinusoidalPositionEncodingLayer = matlab_constructor(
    SinusoidalPositionEncodingLayer, "sinusoidalPositionEncodingLayer"
)
