"""The ``PositionalEmbedding`` layer of Keras's transformer examples, on dlarrays of token ids."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .. import _validate
from .._dlarray import DLArray, dlarray, stripdims
from .._errors import DLFormatError

__all__ = ["PositionalEmbedding"]


class PositionalEmbedding(nn.Module):
    """Token embedding plus a learned embedding of the position, as in Keras's examples.

    ``call(ids) = token_embeddings(ids) + position_embeddings(range(T))``, both Keras
    ``Embedding`` layers (uniform ±0.05 initial weights, Keras's default).

    Args:
        sequence_length: the longest sequence (rows of the position embedding).
        input_dim: the vocabulary size (token ids 0 .. input_dim - 1; 0 is padding for the mask).
        output_dim: the embedding size.
        generator: for the initial draws.

    Shape:
        - Input: integer-valued token ids, a ``"BT"`` dlarray or ``"CBT"`` with ``C`` of size 1.
        - Output: ``"CBT"`` with ``C`` of size ``output_dim``.
    """

    def __init__(
        self,
        sequence_length: int,
        input_dim: int,
        output_dim: int,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.sequence_length = _validate.positive_integer("sequence_length", sequence_length)
        self.input_dim = _validate.positive_integer("input_dim", input_dim)
        self.output_dim = _validate.positive_integer("output_dim", output_dim)
        self.token_embeddings = nn.Embedding(self.input_dim, self.output_dim)
        self.position_embeddings = nn.Embedding(self.sequence_length, self.output_dim)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        with torch.no_grad():
            for table in (self.token_embeddings.weight, self.position_embeddings.weight):
                table.copy_(torch.empty(table.shape).uniform_(-0.05, 0.05, generator=generator))

    def _ids(self, X: Any) -> torch.Tensor:
        if isinstance(X, DLArray) and X._fmt == "BT":
            ids = stripdims(X)
        elif isinstance(X, DLArray) and X._fmt == "CBT" and X._data.shape[0] == 1:
            ids = stripdims(X)[0]
        else:
            got = (
                f'format "{X._fmt}" of shape {tuple(X._data.shape)}'
                if isinstance(X, DLArray)
                else type(X).__name__
            )
            raise DLFormatError(
                'keras.PositionalEmbedding takes token ids as a "BT" dlarray, or "CBT" with C of size 1; '
                f"got {got}"
            )
        if ids.is_floating_point() and not torch.equal(ids, ids.round()):
            raise DLFormatError("keras.PositionalEmbedding: token ids must be whole numbers")
        ids = ids.long()
        if ids.numel() and (ids.min() < 0 or ids.max() >= self.input_dim):
            raise DLFormatError(
                f"keras.PositionalEmbedding: token ids must lie in 0 .. {self.input_dim - 1}; "
                f"got {int(ids.min())} .. {int(ids.max())}"
            )
        if ids.shape[1] > self.sequence_length:
            raise DLFormatError(
                f"keras.PositionalEmbedding: {ids.shape[1]} positions exceed sequence_length "
                f"{self.sequence_length}"
            )
        return ids

    def forward(self, X: DLArray) -> DLArray:
        ids = self._ids(X)
        positions = torch.arange(ids.shape[1], device=ids.device)
        return dlarray(self.token_embeddings(ids) + self.position_embeddings(positions), "BTC")

    def compute_mask(self, X: DLArray) -> DLArray:
        """True where the token id is not 0 (Keras's padding), as a ``"BT"`` dlarray."""
        return dlarray(self._ids(X) != 0, "BT")

    def get_config(self) -> dict[str, Any]:
        return {
            "sequence_length": self.sequence_length,
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> PositionalEmbedding:
        return cls(**config)

    def extra_repr(self) -> str:
        return ", ".join(f"{key}={value}" for key, value in self.get_config().items())
