"""Batching: dlarrays meet along ``B`` as ``DataLoader`` batches tensors, and sequences of
unequal length are padded to one, as MATLAB's ``padsequences`` does.

MATLAB's ``minibatchqueue`` concatenates observations along the batch dimension; a dlarray
without ``B`` gains one. Registering :func:`collate_dlarrays` with torch's default collate
makes a plain ``DataLoader`` over a dataset of dlarrays (or of tuples and dicts holding them)
return dlarrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data._utils.collate import collate as _collate
from torch.utils.data._utils.collate import default_collate_fn_map

from . import _validate
from ._dlarray import DLArray, dlarray
from ._errors import DLFormatError
from ._options import matlab_function

__all__ = ["collate", "collate_dlarrays", "padsequences"]

DIRECTIONS = ("right", "left")
LENGTHS = ("longest", "shortest")


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


def _as_matlab_array(value: Any, index: int) -> torch.Tensor:
    """One sequence of a cell array as a tensor of at least two dimensions (MATLAB has no 1-D
    arrays: a vector is a column)."""
    if isinstance(value, DLArray):
        value = value._data
    try:
        tensor = value if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value))
    except (TypeError, ValueError, RuntimeError):
        raise DLFormatError(
            f"padsequences: sequence {index + 1} must be a numeric or logical array; "
            f"got {_validate.describe(value)}"
        ) from None
    if tensor.dtype.is_complex or not (tensor.dtype.is_floating_point or tensor.dtype in _INTEGRAL):
        raise DLFormatError(
            f"padsequences: sequence {index + 1} must hold real numbers or logicals; got {tensor.dtype}"
        )
    return tensor.reshape(-1, 1) if tensor.ndim < 2 else tensor


_INTEGRAL = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


@matlab_function
def padsequences(
    X: Sequence[Any],
    paddingDim: int,
    *,
    Length: int | str = "longest",
    Direction: str = "right",
    PaddingValue: float = 0,
    UniformOutput: bool = True,
    ReturnMask: bool = False,
) -> Any:
    """MATLAB's ``XPad = padsequences(X, paddingDim)``: pad (or truncate) sequences to one length.

    ``X`` is MATLAB's cell array of sequences, here a list of arrays (tensors, NumPy arrays,
    dlarrays' data) equal in every dimension but ``paddingDim``, MATLAB's 1-based dimension
    that holds the time steps (``2`` for MATLAB's ``C×T`` sequences). Each is padded with
    ``PaddingValue`` or cut to the target length at its end (``Direction="right"``, the default)
    or its start (``"left"``); the target is ``Length``: ``"longest"`` (default), ``"shortest"``
    or a number. With ``UniformOutput`` (default) the padded sequences are concatenated along a
    new dimension after their last one (``C×T`` sequences give ``C×T×N``, ready for
    ``dlarray(XPad, "CTB")``); otherwise a list of padded arrays is returned. ``ReturnMask=True``
    also returns MATLAB's second output, ``mask``: ``True`` where ``XPad`` holds original data
    (of ``XPad``'s size, or a list like it). The result is a tensor, or NumPy when the first
    sequence is NumPy (or a list). MathWorks' ``padsequences`` page (since R2021a).

    Examples:
        >>> X = [torch.ones(3, 5), torch.ones(3, 2)]
        >>> XPad, mask = dlf.padsequences(X, 2, ReturnMask=True)
        >>> tuple(XPad.shape), mask[0, :, 1].tolist()
        ((3, 5, 2), [True, True, False, False, False])
        >>> tuple(dlf.padsequences(X, 2, Length="shortest", Direction="left").shape)
        (3, 2, 2)
    """
    if isinstance(X, (torch.Tensor, np.ndarray, DLArray, str, bytes)) or not isinstance(X, Sequence) or not X:
        raise DLFormatError(
            "padsequences: X must be a non-empty list of sequences (MATLAB's cell array); "
            f"got {_validate.describe(X)}"
        )
    dim = _validate.dimension_number("padsequences: paddingDim", paddingDim) - 1
    direction = _validate.choice("padsequences: Direction", Direction, DIRECTIONS)
    value = _validate.real("padsequences: PaddingValue", PaddingValue)
    sequences = [_as_matlab_array(value, index) for index, value in enumerate(X)]
    rank = max(dim + 1, *(sequence.ndim for sequence in sequences))
    # trailing singleton dimensions, as MATLAB's arrays have them
    sequences = [s.reshape(*s.shape, *(1,) * (rank - s.ndim)) for s in sequences]
    lengths = [sequence.shape[dim] for sequence in sequences]
    if isinstance(Length, (str, bytes)):
        which = _validate.choice("padsequences: Length", Length, LENGTHS, also=", or a positive integer")
        target = max(lengths) if which == "longest" else min(lengths)
    else:
        target = _validate.positive_integer("padsequences: Length", Length)
    others = {s.shape[:dim] + s.shape[dim + 1 :] for s in sequences}
    if len(others) > 1:
        shown = ", ".join(_validate.matlab_size(tuple(s.shape)) for s in sequences[:4])
        raise DLFormatError(
            f"padsequences: the sequences must have equal sizes in every dimension but paddingDim "
            f"({dim + 1}); got {shown}{', ...' if len(sequences) > 4 else ''}"
        )
    dtype = torch.result_type(torch.empty(0, dtype=sequences[0].dtype), value) if value % 1 else None
    padded, masks = [], []
    for sequence, length in zip(sequences, lengths, strict=True):
        kept = min(length, target)
        part = sequence.narrow(dim, length - kept if direction == "left" else 0, kept)
        shape = list(part.shape)
        shape[dim] = target - kept
        filler = torch.full(shape, value, dtype=dtype or part.dtype, device=part.device)
        part = part.to(filler.dtype)
        pieces = (filler, part) if direction == "left" else (part, filler)
        padded.append(torch.cat(pieces, dim))
        mask = torch.zeros(padded[-1].shape, dtype=torch.bool, device=part.device)
        mask.narrow(dim, target - kept if direction == "left" else 0, kept).fill_(True)
        masks.append(mask)
    as_numpy = not isinstance(X[0], (torch.Tensor, DLArray))
    if UniformOutput:
        outputs: list[Any] = [torch.stack(padded, dim=rank), torch.stack(masks, dim=rank)]
    else:
        outputs = [padded, masks]
    if as_numpy:
        outputs = [
            output.numpy() if isinstance(output, torch.Tensor) else [item.numpy() for item in output]
            for output in outputs
        ]
    return tuple(outputs) if ReturnMask else outputs[0]
