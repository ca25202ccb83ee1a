"""Resizing the ``S`` dimensions of a dlarray, as ``resize2dLayer`` and ``resize3dLayer`` do.

Each output element ``i`` (from 0) along a spatial dimension of input size ``n`` and output size
``m`` reads the input at ``x = (i + 0.5)·n/m − 0.5`` (``GeometricTransformMode="half-pixel"``)
or ``x = i·n/m`` (``"asymmetric"``). Nearest-neighbour resizing takes the element at ``round(x)``
(MATLAB's ``round``, halves away from zero) or ``floor(x)``; linear resizing weighs the two
elements around ``x``. Positions beyond the first or last element take that element (the
indices are clamped), as torch's and ONNX's resizes do. The dimensions are resized one after the
other, which for (bi/tri)linear interpolation is the same as the product weights.

Not exported: MATLAB's ``dlresize`` has more options than these layers need.
"""

from __future__ import annotations

import torch

__all__ = ["GEOMETRIC_MODES", "ROUNDING_MODES", "resize_spatial"]

GEOMETRIC_MODES = ("half-pixel", "asymmetric")
ROUNDING_MODES = ("round", "floor", "onnx-10")


def _source(size_in: int, size_out: int, geometry: str, device: torch.device) -> torch.Tensor:
    """The input coordinate (from 0, float64) each output element reads."""
    i = torch.arange(size_out, dtype=torch.float64, device=device)
    ratio = size_in / size_out
    return (i + 0.5) * ratio - 0.5 if geometry == "half-pixel" else i * ratio


def _along(data: torch.Tensor, axis: int, index: torch.Tensor) -> torch.Tensor:
    return data.index_select(axis, index)


def resize_spatial(
    data: torch.Tensor, sizes: tuple[int, ...], method: str, geometry: str, rounding: str
) -> torch.Tensor:
    """``data`` with its first ``len(sizes)`` dimensions (the ``S`` ones) resized to ``sizes``;
    ``rounding`` is ``"round"`` or ``"floor"`` (the layers refuse ``"onnx-10"``)."""
    for axis, size_out in enumerate(sizes):
        size_in = data.shape[axis]
        x = _source(size_in, size_out, geometry, data.device)
        if method == "nearest":
            picked = torch.floor(x) if rounding == "floor" else torch.sign(x) * torch.floor(x.abs() + 0.5)
            data = _along(data, axis, picked.clamp(0, size_in - 1).long())
            continue
        x = x.clamp(0, size_in - 1)
        low = torch.floor(x)
        weight = (x - low).to(data.dtype).reshape(-1, *([1] * (data.ndim - axis - 1)))
        low_index = low.long()
        high_index = (low_index + 1).clamp(max=size_in - 1)
        data = _along(data, axis, low_index) * (1 - weight) + _along(data, axis, high_index) * weight
    return data
