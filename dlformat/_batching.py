"""Batching dlarrays, as ``DataLoader`` does for tensors: observations meet along ``B``.

MATLAB's ``minibatchqueue`` concatenates observations along the batch dimension; a dlarray
without ``B`` gains one. Registering :func:`collate_dlarrays` with torch's default collate
makes a plain ``DataLoader`` over a dataset of dlarrays (or of tuples and dicts holding them)
return dlarrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils.data._utils.collate import collate as _collate
from torch.utils.data._utils.collate import default_collate_fn_map

from ._dlarray import DLArray, dlarray
from ._errors import DLFormatError

__all__ = ["collate", "collate_dlarrays"]


def collate_dlarrays(
    batch: Sequence[DLArray], *, collate_fn_map: dict[Any, Callable[..., Any]] | None = None
) -> DLArray:
    """One dlarray from observations of one format: concatenated along ``B`` if they have it,
    else stacked along a new ``B`` (``"CT"`` observations make a ``"CBT"`` batch)."""
    formats = {X._fmt for X in batch}
    if len(formats) != 1:
        raise DLFormatError(
            f"cannot batch dlarrays of different formats: {', '.join(sorted(repr(f) for f in formats))}"
        )
    (fmt,) = formats
    datas = [X._data for X in batch]
    try:
        if "B" in fmt:
            return DLArray._wrap(torch.cat(datas, dim=fmt.index("B")), fmt)
        return dlarray(torch.stack(datas, dim=-1), fmt + "B" if fmt else "")
    except RuntimeError:
        sizes = sorted({tuple(data.shape) for data in datas})
        raise DLFormatError(
            f'cannot batch "{fmt}" dlarrays of different sizes {sizes}; pad them to one size first'
        ) from None


def collate(batch: Sequence[Any]) -> Any:
    """``DataLoader``'s ``collate_fn`` for dlarrays: torch's default collate, dlarrays batched along ``B``.

    Examples:
        >>> from torch.utils.data import DataLoader
        >>> data = [dlf.dlarray(torch.randn(3, 5), "CT") for _ in range(4)]
        >>> X = next(iter(DataLoader(data, batch_size=2)))
        >>> dlf.dims(X), tuple(X.shape)
        ('CBT', (3, 2, 5))
    """
    return _collate(batch, collate_fn_map=default_collate_fn_map)


# the default collate (DataLoader without collate_fn) batches dlarrays too
default_collate_fn_map[DLArray] = collate_dlarrays
