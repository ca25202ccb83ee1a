"""Rotary position embedding (RoFormer) for dlarrays: C is the head size, T the positions."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import torch
from torch import nn

from .. import _validate
from .._dlarray import DLArray, dlarray, stripdims
from .._errors import DLFormatError
from .._tracing import constant_under_compile
from ..functional import ROTARY_PAIRINGS, _base, _require_dimensions, rotary

__all__ = ["RotaryEmbedding"]


@lru_cache(maxsize=256)
def _features_last(fmt: str) -> tuple[str, int]:
    """The format with C moved last, and where T sits in it."""
    order = fmt.replace("C", "") + "C"
    return order, order.index("T")


_plan = constant_under_compile(_features_last)


class RotaryEmbedding(nn.Module):
    """Rotates every head vector along ``C`` by its position along ``T`` (RoFormer, Su et al. 2021).

    Feature pair k of the vector at position p turns by p · base^(-2k/head_size); dot products
    of rotated queries and keys then depend on positions only through their difference. Every
    dimension but ``C`` and ``T`` is broadcast, so heads and batch may share one dimension
    (PositionalEmbeddings.jl's (head_size, seq_len, nheads·batch) is format ``"CTB"``).

    Args:
        head_size: the size of ``C``, even.
        max_position: positions run up to ``max_position - 1``.
        base: the wavelengths' geometric base (> 1).
        scale: multiplies the result, as PositionalEmbeddings.jl's ``scale`` does.
        pairing: ``"half"`` (feature k with k + head_size/2, as LLaMA and
            PositionalEmbeddings.jl) or ``"interleaved"`` (2k with 2k+1, as the RoFormer paper).
        position_offset: the position of the first element along ``T`` (cached decoding).

    Shape:
        Input and output: a dlarray with ``C`` of size ``head_size`` and a ``T`` dimension; the
        output has the input's format, shape and dtype (computed in float32 or wider).
    """

    def __init__(
        self,
        head_size: int,
        max_position: int,
        base: float = 10000,
        scale: float = 1.0,
        pairing: str = "half",
        position_offset: int = 0,
    ) -> None:
        super().__init__()
        self.head_size = _validate.positive_integer("head_size", head_size)
        if self.head_size % 2:
            raise DLFormatError(f"head_size must be even (features rotate in pairs); got {self.head_size}")
        self.max_position = _validate.positive_integer("max_position", max_position)
        self.base = _base(base)
        self.scale = _validate.factor("scale", scale)
        self.pairing = _validate.choice("pairing", pairing, ROTARY_PAIRINGS)
        self.position_offset = _validate.nonnegative_integer("position_offset", position_offset)

    def forward(self, X: DLArray) -> DLArray:
        X = _require_dimensions(X, "CT", lambda: "RotaryEmbedding")
        shape = X._data.shape
        channels, length = shape[X._fmt.index("C")], shape[X._fmt.index("T")]
        if channels != self.head_size:
            raise DLFormatError(f'RotaryEmbedding: "C" has size {channels}; head_size is {self.head_size}')
        if self.position_offset + length > self.max_position:
            raise DLFormatError(
                f'RotaryEmbedding: position_offset {self.position_offset} plus {length} positions along "T" '
                f"reach position {self.position_offset + length}, beyond max_position {self.max_position}"
            )
        order, time_axis = _plan(X._fmt)
        data = stripdims(X, order)
        view = [1] * (data.ndim - 1)
        view[time_axis] = length
        positions = torch.arange(self.position_offset, self.position_offset + length, device=data.device)
        rotated = rotary(data, positions.view(view), self.base, self.scale, self.pairing)
        return dlarray(rotated, order)

    def get_config(self) -> dict[str, Any]:
        keys = ("head_size", "max_position", "base", "scale", "pairing", "position_offset")
        return {key: getattr(self, key) for key in keys}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> RotaryEmbedding:
        return cls(**config)

    def extra_repr(self) -> str:
        return ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
