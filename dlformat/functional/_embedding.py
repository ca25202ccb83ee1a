"""MATLAB's ``embed``: 1-based indices to columns of a weight matrix, placed along ``C``."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from ._common import as_data, formatted_input
from ._position import _per_element

__all__ = ["embed"]


def word_rows(indices: torch.Tensor, num_words: int, map_to_last: bool, refusal: str) -> torch.Tensor:
    """0-based rows for MATLAB's 1-based ``indices``; an index that is not an integer in
    1 .. num_words maps to the last row, or is an error: ``refusal`` formatted with the index
    (``{bad}``) and ``num_words`` (``{n}``)."""
    rounded = indices.round() if indices.is_floating_point() else indices
    valid = (rounded == indices) & (rounded >= 1) & (rounded <= num_words)
    if not map_to_last and not bool(valid.all()):
        bad = indices[~valid].reshape(-1)[0].item()
        raise DLFormatError(refusal.format(bad=f"{bad:g}", n=num_words))
    return torch.where(valid, rounded.long(), num_words) - 1


@matlab_function
def embed(X: Any, weights: Any, *, DataFormat: str | None = None) -> DLArray:
    """MATLAB's ``Y = embed(X, weights)``: index ``k`` of ``X`` becomes ``weights[:, k-1]``.

    Args:
        X: 1-based indices, a formatted dlarray whose ``C`` has size 1 or is absent
            (``"CBT"``, ``"BT"``, ...), or unformatted data with ``DataFormat``. An index
            outside ``1 .. NumWords`` is an error (``wordEmbeddingLayer``'s OOVMode maps them).
        weights: ``Dimension × NumWords``.

    Returns:
        ``X``'s format with ``C`` of size ``Dimension``, in the weights' dtype.

    Examples:
        >>> words = dlf.dlarray(torch.tensor([[1.0, 3.0]]), "BT")
        >>> Y = F.embed(words, torch.eye(3))
        >>> dlf.dims(Y), dlf.extractdata(Y)[:, 0, 1].tolist()
        ('CBT', [0.0, 0.0, 1.0])
    """
    X, restore = formatted_input(X, DataFormat, "embed", indices=True)
    table = as_data(weights, "embed weights")
    if table.ndim != 2:
        raise DLFormatError(
            f"embed weights must be a Dimension × NumWords matrix; got {table.ndim} dimensions"
        )
    indices, place = _per_element(X, "index", lambda: "embed")
    refusal = (
        "embed got index {bad}, outside 1 .. {n} (the weights' columns; indices are 1-based, as in MATLAB)"
    )
    rows = word_rows(indices.detach(), table.shape[1], False, refusal)
    return restore(place(F.embedding(rows, table.t())))
