"""MATLAB's arithmetic where it differs from torch's, on plain tensors (no formats here).

``round`` rounds halves away from zero (torch rounds them to even); ``mod`` keeps the sign of the
divisor and ``mod(a, 0)`` is ``a``; ``rem`` keeps the sign of the dividend and ``rem(a, 0)`` is NaN;
converting to logical refuses NaN, as MATLAB's ``logical`` does.
"""

from __future__ import annotations

from typing import Any

import torch

from .._errors import DLFormatError

__all__ = ["fix", "ldivide", "logical", "mod", "rem", "round_half_away"]


def round_half_away(data: torch.Tensor, digits: int = 0) -> torch.Tensor:
    """MATLAB's ``round(X)`` / ``round(X, N)``: to the nearest integer, halves away from zero."""
    if not data.is_floating_point():
        return data
    scale = 10.0**digits if digits else None
    scaled = data * scale if scale is not None else data
    truncated = torch.trunc(scaled)
    half = (scaled - truncated).abs() == 0.5
    rounded = torch.where(half, truncated + torch.sign(scaled), torch.round(scaled))
    return rounded / scale if scale is not None else rounded


def fix(data: torch.Tensor) -> torch.Tensor:
    """MATLAB's ``fix``: round toward zero."""
    return torch.trunc(data) if data.is_floating_point() else data


def mod(a: Any, b: Any) -> torch.Tensor:
    """MATLAB's ``mod``: ``a - floor(a./b).*b``, the sign of ``b``; ``mod(a, 0)`` is ``a``."""
    result = torch.remainder(a, b)
    zero = torch.eq(b, 0) if isinstance(b, torch.Tensor) else b == 0
    if isinstance(zero, bool):
        if not zero:
            return result
        return torch.as_tensor(a).to(result.dtype).expand_as(result)
    return torch.where(zero, torch.as_tensor(a, dtype=result.dtype, device=result.device), result)


def rem(a: Any, b: Any) -> torch.Tensor:
    """MATLAB's ``rem``: ``a - fix(a./b).*b``, the sign of ``a``; ``rem(a, 0)`` is NaN."""
    return torch.fmod(a, b)


def ldivide(a: Any, b: Any) -> Any:
    """MATLAB's ``ldivide`` (``a .\\ b``): ``b`` divided by ``a``."""
    return b / a


def logical(data: torch.Tensor, caller: str) -> torch.Tensor:
    """Nonzero as true, as MATLAB's ``logical``; NaN cannot be converted, as in MATLAB."""
    if data.dtype == torch.bool:
        return data
    if data.is_floating_point() and bool(torch.isnan(data).any()):
        raise DLFormatError(f"{caller}: NaN values cannot be converted to logicals (as in MATLAB)")
    return data != 0
