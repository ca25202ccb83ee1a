"""``X[...]`` and ``X[...] = value`` on dlarray data, with MATLAB's rules (tensors and formats only).

MATLAB's subscripts never drop a dimension: ``X(:,1,:)`` of a 3-D array is 3-D, and a formatted
dlarray keeps its format under indexing. So here an integer subscript keeps its dimension as a
singleton (Python's ``X[:, 0, :]`` is MATLAB's ``X(:,1,:)``), and index lists and logical vectors
select along their own dimension only, each independently of the others (MATLAB's subscripts form
an outer product; torch's advanced indices would pair up and move dimensions). One logical array of
the array's own size selects elements, as MATLAB's ``X(mask)``: the result is a vector in MATLAB's
column-major (linear index) order, which no labels describe, so it is unformatted. Positions are
Python's: 0-based, negative from the end, slices clipped to the dimension.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import torch

from .._errors import DLFormatError

__all__ = ["Subscripts", "assign", "select", "subscripts"]

Subscript = slice | torch.Tensor
Subscripts = tuple[str, Any]  # ("mask", bool tensor) or ("each", tuple of one Subscript per dimension)

_EVERYTHING = slice(None)


def _describe(key: object) -> str:
    text = repr(key)
    return text if len(text) <= 60 else text[:57] + "..."


def _where(position: int, fmt: str) -> str:
    return f'dimension {position} ("{fmt[position]}")' if fmt else f"dimension {position}"


def _is_logical_array(item: object) -> bool:
    if isinstance(item, torch.Tensor):
        return item.dtype == torch.bool and item.ndim > 0
    if isinstance(item, np.ndarray):
        return item.dtype == np.bool_ and item.ndim > 0
    return False


def _scalar_index(item: object) -> int | None:
    """The integer of an integer subscript, or None when ``item`` is not one (bools are not)."""
    if isinstance(item, (bool, np.bool_)):
        return None
    if isinstance(item, torch.Tensor):
        if (
            item.ndim == 0
            and not item.is_floating_point()
            and not item.is_complex()
            and item.dtype != torch.bool
        ):
            return int(item.item())
        return None
    try:
        return operator.index(item)  # type: ignore[arg-type]
    except TypeError:
        return None


def subscripts(shape: tuple[int, ...], fmt: str, key: object, mask_fmt: str | None = None) -> Subscripts:
    """Read ``key`` against an array of ``shape`` and ``fmt``: a logical mask, or one subscript per
    dimension (a positive-step slice or a 1-D index tensor, both 0-based)."""
    items = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    if len(items) == 1 and _is_logical_array(items[0]) and ndim >= 2:
        mask = torch.as_tensor(items[0])
        if mask.ndim >= 2:
            if tuple(mask.shape) != shape:
                raise DLFormatError(
                    f"indexing: a logical mask of size {tuple(mask.shape)} does not match the array's size "
                    f"{shape}; a mask selects elements of an array of its own size"
                )
            if mask_fmt and fmt and mask_fmt != fmt:
                raise DLFormatError(
                    f'indexing: a logical mask of format "{mask_fmt}" cannot index a "{fmt}" dlarray; '
                    "the mask must have the array's format (or none)"
                )
            return "mask", mask
    if sum(item is Ellipsis for item in items) > 1:
        raise DLFormatError(f"indexing: at most one ... (Ellipsis) is allowed; got {_describe(key)}")
    if any(item is None for item in items):
        raise DLFormatError(
            "indexing cannot add a dimension (None / np.newaxis): a new dimension would have no label. "
            'Add a singleton label with dlarray(X, fmt) instead, e.g. dlarray(X, "CBT") for a "CB" X'
        )
    if Ellipsis in items:
        at = next(index for index, item in enumerate(items) if item is Ellipsis)
        fill = (_EVERYTHING,) * max(ndim - (len(items) - 1), 0)
        items = items[:at] + fill + items[at + 1 :]
    if len(items) > ndim:
        labels = f' "{fmt}"' if fmt else ""
        raise DLFormatError(
            f"indexing: {len(items)} subscripts for a{labels} dlarray with {ndim} dimensions; give at most "
            f"{ndim} (one per dimension, in the stored order{labels})"
        )
    items = items + (_EVERYTHING,) * (ndim - len(items))
    return "each", tuple(
        _subscript(item, position, shape[position], fmt) for position, item in enumerate(items)
    )


def _subscript(item: object, position: int, size: int, fmt: str) -> Subscript:
    if isinstance(item, slice):
        return _slice(item, position, size, fmt)
    number = _scalar_index(item)
    if number is not None:
        if not -size <= number < size:
            raise DLFormatError(
                f"indexing: index {number} is out of range for {_where(position, fmt)} of size {size}; "
                f"allowed are {-size} to {size - 1} (0-based, negative from the end)"
            )
        number %= size
        return slice(number, number + 1)  # MATLAB keeps the dimension, as a singleton
    if isinstance(item, (bool, np.bool_)):
        raise DLFormatError(
            f"indexing: a single logical {item} is not a subscript for {_where(position, fmt)}; "
            "give a logical vector of the dimension's length, an index, a list of indices or a slice"
        )
    return _index_vector(item, position, size, fmt)


def _slice(item: slice, position: int, size: int, fmt: str) -> Subscript:
    for part in (item.start, item.stop, item.step):
        if part is not None and _scalar_index(part) is None:
            raise DLFormatError(
                f"indexing: slice {_describe(item)} for {_where(position, fmt)} must hold integers; "
                f"got {_describe(part)}"
            )
    start, stop, step = (
        None if part is None else _scalar_index(part) for part in (item.start, item.stop, item.step)
    )
    if step == 0:
        raise DLFormatError(
            f"indexing: slice step cannot be zero ({_describe(item)} for {_where(position, fmt)})"
        )
    if step is None or step > 0:
        return slice(start, stop, step)
    # torch slices take no negative step: the positions, as Python's slice gives them (maybe none)
    return torch.tensor(list(range(*slice(start, stop, step).indices(size))), dtype=torch.long)


def _index_vector(item: object, position: int, size: int, fmt: str) -> torch.Tensor:
    try:
        index = (
            torch.as_tensor(item)
            if not isinstance(item, range)
            else torch.tensor(list(item), dtype=torch.long)
        )
    except (TypeError, ValueError, RuntimeError):
        index = None
    allowed = "an integer, a slice, a list or 1-D array of integers, or a logical vector"
    if index is None or index.ndim > 1 or index.is_floating_point() or index.is_complex():
        raise DLFormatError(
            f"indexing: {_describe(item)} is not a subscript for {_where(position, fmt)}; give {allowed} "
            "(Python's 0-based positions)"
        )
    if index.dtype == torch.bool:
        if index.numel() != size:
            raise DLFormatError(
                f"indexing: a logical vector of length {index.numel()} for {_where(position, fmt)} of size "
                f"{size}; its length must be the dimension's size"
            )
        return index.reshape(-1).nonzero().reshape(-1)
    index = index.reshape(-1).long()
    if index.numel():
        low, high = int(index.min()), int(index.max())
        if low < -size or high >= size:
            bad = low if low < -size else high
            raise DLFormatError(
                f"indexing: index {bad} is out of range for {_where(position, fmt)} of size {size}; "
                f"allowed are {-size} to {size - 1} (0-based, negative from the end)"
            )
        if low < 0:
            index = torch.where(index < 0, index + size, index)
    return index


def select(data: torch.Tensor, plan: Subscripts) -> torch.Tensor:
    """The indexed data: a vector for a mask, else every dimension kept."""
    kind, what = plan
    if kind == "mask":
        return _column_major(data)[_column_major(what.to(data.device))]
    basic = tuple(item if isinstance(item, slice) else _EVERYTHING for item in what)
    out = data[basic] if any(item != _EVERYTHING for item in basic) else data
    for position, item in enumerate(what):
        if isinstance(item, torch.Tensor):
            out = out.index_select(position, item.to(out.device))
    return out


def assign(data: torch.Tensor, plan: Subscripts, value: torch.Tensor) -> torch.Tensor:
    """A copy of ``data`` with the indexed elements set from ``value`` (broadcast to them), the
    result of MATLAB's ``X(idx) = value``; autograd flows to both."""
    region = tuple(select(data.detach(), plan).shape)
    value = value.to(dtype=data.dtype, device=data.device)
    kind, what = plan
    if kind == "mask":
        count = region[0]
        if value.numel() not in (1, count):
            raise DLFormatError(
                f"indexed assignment: the mask selects {count} elements; the value must be a scalar or hold "
                f"{count} elements, it holds {value.numel()}"
            )
        result = data.clone()
        # a view of result in MATLAB's linear order: the values go in as MATLAB's X(mask) = v puts them
        _column_major(result)[_column_major(what.to(data.device))] = value.reshape(-1)
        return result
    try:
        if torch.broadcast_shapes(tuple(value.shape), region) != region:
            raise RuntimeError
    except RuntimeError:
        raise DLFormatError(
            f"indexed assignment: a value of size {tuple(value.shape)} does not fit the indexed region "
            f"of size {region}; its sizes must match the region's or be 1 (labels align a formatted "
            "value)"
        ) from None
    result = data.clone()
    result[_assignment_index(data, what)] = value
    return result


def _column_major(data: torch.Tensor) -> torch.Tensor:
    """A view whose row-major order is ``data``'s column-major (MATLAB's linear) order."""
    return data.permute(*reversed(range(data.ndim)))


def _assignment_index(data: torch.Tensor, what: tuple[Subscript, ...]) -> tuple[Any, ...]:
    vectors = [position for position, item in enumerate(what) if isinstance(item, torch.Tensor)]
    if len(vectors) <= 1:
        # one index vector among slices stays in its place, as MATLAB's subscripts do
        return tuple(item.to(data.device) if isinstance(item, torch.Tensor) else item for item in what)
    # several: an open mesh (MATLAB's outer product of subscripts), slices made index vectors too
    ndim = data.ndim
    mesh = []
    for position, item in enumerate(what):
        vector = item if isinstance(item, torch.Tensor) else torch.arange(data.shape[position])[item]
        shape = [1] * ndim
        shape[position] = -1
        mesh.append(vector.to(data.device).reshape(shape))
    return tuple(mesh)
