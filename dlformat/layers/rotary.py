"""Rotary position embedding (RoFormer) for dlarrays: C is the head size, T the positions."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .. import _validate
from .._dlarray import DLArray, dlarray, require_dimensions, stripdims
from .._errors import DLFormatError
from .._tracing import cached_plan
from ..functional._position import ROTARY_PAIRINGS, _base, position_offset, rotary

__all__ = ["RotaryEmbedding"]


@cached_plan()
def _plan(fmt: str) -> tuple[str, int]:
    """The format with C moved last, and where T sits in it."""
    order = fmt.replace("C", "") + "C"
    return order, order.index("T")


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
        position_offset: the position of the first element along ``T`` (cached decoding); a
            call may override it, ``rope(X, position_offset=n)`` with an int or a 0-d integer
            tensor, which ``torch.compile`` runs under one graph for every offset.

    Shape:
        Input and output: a dlarray with ``C`` of size ``head_size`` and a ``T`` dimension; the
        output has the input's format, shape and dtype (computed in float32 or wider).

    Examples:
        >>> rope = dlf.RotaryEmbedding(8, 128)
        >>> Q = dlf.dlarray(torch.randn(8, 5, 2), "CTB")
        >>> Y = rope(Q, position_offset=10)  # a decoding step at positions 10 .. 14
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CBT', (8, 2, 5))
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
        self.position_offset = position_offset

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "position_offset":  # checked on every assignment, not only at construction
            value = _validate.nonnegative_integer(name, value)
        super().__setattr__(name, value)

    def forward(self, X: DLArray, position_offset: Any = None) -> DLArray:
        X = require_dimensions(X, "CT", lambda: "RotaryEmbedding")
        offset = self.position_offset if position_offset is None else _offset(position_offset)
        shape = X._data.shape
        channels, length = shape[X._fmt.index("C")], shape[X._fmt.index("T")]
        if channels != self.head_size:
            raise DLFormatError(f'RotaryEmbedding: "C" has size {channels}; head_size is {self.head_size}')
        if not isinstance(offset, torch.Tensor) and offset + length > self.max_position:
            raise DLFormatError(
                f'RotaryEmbedding: position_offset {offset} plus {length} positions along "T" '
                f"reach position {offset + length}, beyond max_position {self.max_position}"
            )
        order, time_axis = _plan(X._fmt)
        data = stripdims(X, order)
        view = [1] * (data.ndim - 1)
        view[time_axis] = length
        positions = offset + torch.arange(length, device=data.device)
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


def _offset(value: Any) -> Any:
    return position_offset(value, "position_offset")
