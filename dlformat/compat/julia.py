"""PositionalEmbeddings.jl's ``AbsolutePE`` and ``RoPE`` on dlarrays.

Julia arrays are column-major with features first: ``AbsolutePE`` takes (seq_len, features,
batch), format ``"TCB"``, and ``RoPE`` takes (head_size, seq_len, nheads·batch), format ``"CTB"``.
"""

from __future__ import annotations

import torch
from torch import nn

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional._position import _base, _embed, sinusoid
from ..layers.rotary import RotaryEmbedding

__all__ = ["AbsolutePE", "RoPE"]


class AbsolutePE(nn.Module):
    """Adds Vaswani et al.'s interleaved sinusoid (sin in odd 1-based channels) to the input.

    Args:
        embedding_size: the size of ``C``.
        max_length: the longest sequence along ``T``.
        base: the wavelengths' geometric base.
    """

    embeddings: torch.Tensor  # a buffer: (embedding_size, max_length)

    def __init__(self, embedding_size: int, max_length: int, base: float = 10000) -> None:
        super().__init__()
        self.embedding_size = _validate.positive_integer("embedding_size", embedding_size)
        if self.embedding_size % 2:
            # PositionalEmbeddings.jl fills sin and cos from one frequency vector of ceil(size/2)
            raise DLFormatError(
                f"embedding_size must be even, as PositionalEmbeddings.jl needs; got {self.embedding_size}"
            )
        self.max_length = _validate.positive_integer("max_length", max_length)
        self.base = _base(base)
        table = sinusoid(self.max_length, self.embedding_size, self.base).T
        self.register_buffer("embeddings", table.contiguous(), persistent=False)

    def forward(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "CT", lambda: "julia.AbsolutePE")
        channels = X._data.shape[X._fmt.index("C")]
        if channels != self.embedding_size:
            raise DLFormatError(
                f"julia.AbsolutePE: channel dimension {channels} must match embedding_size "
                f"{self.embedding_size}"
            )
        table = self.embeddings.to(dtype=X.dtype) if X.dtype != self.embeddings.dtype else self.embeddings
        return X + _embed(X, table, "temporal", 0, lambda: "julia.AbsolutePE")

    def extra_repr(self) -> str:
        return f"embedding_size={self.embedding_size}, max_length={self.max_length}, base={self.base}"


class RoPE(RotaryEmbedding):
    """PositionalEmbeddings.jl's ``RoPE(head_size, seq_len; base, scale)``: half-split pairs.

    The output is multiplied by ``scale``, as that package's code does.
    """

    def __init__(self, head_size: int, seq_len: int, base: float = 10000, scale: float = 1.0) -> None:
        super().__init__(head_size, seq_len, base=base, scale=scale, pairing="half")
