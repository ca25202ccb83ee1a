"""NeoML's ``CPositionalEmbeddingLayer`` on dlarrays.

NeoML takes sequences along ``ListSize`` and objects along ``BatchWidth``; here those are ``T``
and ``B``. Its embedding vector spans every other dimension (height, width, depth, channels),
here every dimension but ``B`` and ``T``. Like NeoML, the parameters take their size from the
first input (they are lazy until then).
"""

from __future__ import annotations

from typing import Any

import einops
import torch
from torch import nn
from torch.nn.modules.lazy import LazyModuleMixin
from torch.nn.parameter import UninitializedParameter

from .. import _format, _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from .._tracing import cached_plan
from ..functional._position import _embed, sinusoid

__all__ = ["PositionalEmbedding"]

TYPES = ("learnable-addition", "learnable-mult-addition", "transformers")


@cached_plan()
def _plan(fmt: str) -> tuple[str, str]:
    """(the vector's labels, the einops pattern from (vector..., positions) to the input layout)."""
    names = _format.axis_names(fmt)
    vector = [name for name in names if name[0] not in "bt"]
    pattern = f"{' '.join(vector)} t0 -> {' '.join(names)}"
    return "".join(name[0].upper() for name in vector), pattern


def _vector_sizes(X: DLArray) -> tuple[int, ...]:
    """The sizes of every dimension but B and T: the embedding vector's shape."""
    return tuple(size for size, label in zip(X._data.shape, X._fmt, strict=True) if label not in "BT")


class PositionalEmbedding(LazyModuleMixin, nn.Module):
    """NeoML's positional embedding: a vector per position, added (and optionally multiplied).

    Args:
        type: ``"learnable-addition"`` (Y = X + B[:, p]), ``"learnable-mult-addition"``
            (Y = A[:, p] ⊙ X + B[:, p], with A starting at 1) or ``"transformers"``
            (Y = X + the interleaved sinusoid of positions from 0, over ``C``; no parameters).
        max_positions: the longest sequence along ``T``.
        generator: for the initial draw of B, uniform in ±0.02 as NeoML (and BERT) draw it.

    NeoML's documentation shows only sin for ``"transformers"``; its code alternates sin
    (even channels) and cos (odd channels), and that is what this port does.

    Attributes:
        embedding_type: the ``type`` argument, lower-case.
        addends: B, shape (vector sizes..., max_positions), after the first input.
        multipliers: A, same shape (``"learnable-mult-addition"`` only).
    """

    def __init__(
        self,
        type: str = "learnable-addition",
        max_positions: int = 512,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        # not `self.type`: that would hide nn.Module.type(dtype), and .type(torch.float64) would fail
        self.embedding_type = _validate.choice("type", type, TYPES)
        self.max_positions = _validate.positive_integer("max_positions", max_positions)
        self.generator = generator
        self.vector_format = ""
        if self.embedding_type != "transformers":
            self.addends = UninitializedParameter()
        if self.embedding_type == "learnable-mult-addition":
            self.multipliers = UninitializedParameter()

    def initialize_parameters(self, X: DLArray) -> None:
        self._check_input(X)
        if self.embedding_type == "transformers":
            return
        self.vector_format = _plan(X._fmt)[0]
        sizes = (*_vector_sizes(X), self.max_positions)
        with torch.no_grad():
            self.addends.materialize(sizes, device=X.device, dtype=X.dtype)
            values = torch.empty(sizes, dtype=torch.float32).uniform_(-0.02, 0.02, generator=self.generator)
            self.addends.copy_(values)
            if self.embedding_type == "learnable-mult-addition":
                self.multipliers.materialize(sizes, device=X.device, dtype=X.dtype)
                self.multipliers.fill_(1.0)

    def _check_input(self, X: Any) -> None:
        X = require_dimensions(X, "T", lambda: "neoml.PositionalEmbedding")
        length = X._data.shape[X._fmt.index("T")]
        if length > self.max_positions:
            raise DLFormatError(
                f'neoml.PositionalEmbedding: {length} positions along "T" exceed max_positions '
                f"{self.max_positions}"
            )

    def forward(self, X: DLArray) -> DLArray:
        self._check_input(X)
        if self.embedding_type == "transformers":
            if X._fmt.replace("B", "").replace("T", "") != "C":
                raise DLFormatError(
                    f'neoml.PositionalEmbedding "transformers" embeds channels only (NeoML requires '
                    f'height = width = depth = 1): the input may have only "C", "B" and "T"; got "{X._fmt}"'
                )
            channels = X._data.shape[X._fmt.index("C")]
            # NeoML computes its table in double precision and stores it as float
            positions = torch.arange(self.max_positions, dtype=torch.float64)
            table = sinusoid(positions, channels).T.to(device=X.device, dtype=X.dtype)
            return X + _embed(X, table, "temporal", 0, lambda: "neoml.PositionalEmbedding")
        vector, pattern = _plan(X._fmt)
        expected = tuple(self.addends.shape[:-1])
        got = _vector_sizes(X)
        if vector != self.vector_format or got != expected:
            raise DLFormatError(
                f'neoml.PositionalEmbedding was sized for vectors of format "{self.vector_format}" and sizes '
                f'{expected} by its first input; got "{vector}" with sizes {got}'
            )
        length = X._data.shape[X._fmt.index("T")]
        sizes = {"b0": X._data.shape[X._fmt.index("B")]} if "B" in X._fmt else {}
        addends = einops.repeat(self.addends[..., :length], pattern, **sizes)
        if self.embedding_type == "learnable-addition":
            return DLArray._wrap(X._data + addends, X._fmt)
        multipliers = einops.repeat(self.multipliers[..., :length], pattern, **sizes)
        return DLArray._wrap(torch.addcmul(addends, multipliers, X._data), X._fmt)

    def extra_repr(self) -> str:
        return f"type={self.embedding_type!r}, max_positions={self.max_positions}"
