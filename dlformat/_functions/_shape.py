"""MATLAB's size and arrangement functions on dlarrays, each with its format rule.

``cat``/``horzcat``/``vertcat`` join arrays of one format along a dimension (a number from 1 or a
label); ``reshape`` returns an unformatted dlarray (MATLAB's rule) and reshapes in MATLAB's
column-major element order; ``squeeze`` drops singleton dimensions with their labels; ``repmat``,
``flip`` and ``circshift`` keep the format; ``permute`` and ``transpose`` of a formatted dlarray
may only exchange dimensions that carry the same label (anything else would put labels out of
MATLAB's canonical order; dlformat refuses it rather than guess); ``mtimes``/``@`` and
``pagemtimes`` multiply unformatted data; ``size``, ``numel`` and ``ndims`` report MATLAB's sizes.
Dimension numbers are MATLAB's, from 1 (see :mod:`dlformat._functions._dims`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .. import _categorical, _validate
from .._categorical import Categorical
from .._dlarray import (  # mtimes: MATLAB's A*B
    DLArray,
    _formatted,
    as_dlarray,
    mtimes,
    settled,
    working_dtype,
)
from .._errors import DLFormatError
from . import _dims

__all__ = [
    "cat",
    "circshift",
    "ctranspose",
    "flip",
    "horzcat",
    "ipermute",
    "mtimes",
    "ndims",
    "numel",
    "pagemtimes",
    "permute",
    "repmat",
    "reshape",
    "size",
    "squeeze",
    "transpose",
    "vertcat",
]


def _describe(value: object) -> str:
    return _validate.describe(value)


# -- concatenation ---------------------------------------------------------------------------------
def cat(dim: Any, *arrays: Any) -> DLArray:
    """MATLAB's ``cat(dim, A, B, ...)``: join arrays along ``dim`` (a number from 1, or a label).

    Formatted inputs must share one format, and the result has it; unformatted inputs (dlarrays,
    tensors, arrays) join as MATLAB's arrays do, a number past their dimensions adding one. Mixing
    formatted and unformatted inputs is an error: label them first. Single and double give single.

    Examples:
        >>> A, B = dlf.dlarray(torch.ones(3, 2, 5), "CBT"), dlf.dlarray(torch.zeros(3, 2, 4), "CBT")
        >>> tuple(dlf.cat("T", A, B).shape)
        (3, 2, 9)
    """
    if not arrays:
        raise DLFormatError("cat needs at least one array to concatenate: cat(dim, A, B, ...)")
    if any(isinstance(array, Categorical) for array in arrays):  # MATLAB's categorical rules
        return _categorical.concatenate(dim, arrays)  # type: ignore[return-value]
    inputs = [as_dlarray(array) for array in arrays]
    formats = {X._fmt for X in inputs}
    if len(formats) > 1:
        shown = ", ".join(f'"{fmt}"' if fmt else "unformatted" for fmt in sorted(formats))
        raise DLFormatError(
            f"cat: the arrays must share one format; got {shown}. Relabel them with dlarray(X, fmt) (an "
            "unformatted one too) before concatenating"
        )
    (fmt,) = formats
    ndim = max(X._data.ndim for X in inputs)
    if fmt:
        position = _dims.dimension("cat", fmt, ndim, dim)
    else:
        number = _dims.single_number(dim)
        if number is None or number < 1:
            absent = f" ({_validate.ABSENT_LABEL})" if isinstance(dim, (list, tuple)) and not dim else ""
            raise DLFormatError(
                f"cat: dimension {_describe(dim)} is not allowed{absent}; give a dimension number from 1 (an "
                "unformatted array has no labels)"
            )
        position = number - 1
        ndim = max(ndim, number)
    datas = [X._data.reshape(tuple(X._data.shape) + (1,) * (ndim - X._data.ndim)) for X in inputs]
    for index, data in enumerate(datas[1:], start=2):
        for other in range(ndim):
            if other != position and data.shape[other] != datas[0].shape[other]:
                where = f' ("{fmt[other]}")' if fmt else ""
                raise DLFormatError(
                    f"cat: array {index} has size {data.shape[other]} in dimension {other + 1}{where} and "
                    f"array 1 has {datas[0].shape[other]}; all dimensions but the one joined must match"
                )
    floating = [data.dtype for data in datas if data.is_floating_point()]
    if floating or len({data.dtype for data in datas}) > 1:
        dtype = working_dtype(*(data.dtype for data in datas))
        datas = [data.to(dtype) for data in datas]
    return DLArray._wrap(torch.cat(datas, dim=position), fmt)


def horzcat(*arrays: Any) -> DLArray:
    """MATLAB's ``horzcat(A, B, ...)`` (``[A, B]``): :func:`cat` along dimension 2."""
    return cat(2, *arrays)


def vertcat(*arrays: Any) -> DLArray:
    """MATLAB's ``vertcat(A, B, ...)`` (``[A; B]``): :func:`cat` along dimension 1."""
    return cat(1, *arrays)


# -- reshape and squeeze -----------------------------------------------------------------------------
def _sizes(caller: str, sizes: tuple[Any, ...]) -> list[int | None]:
    """``reshape(X, [a b c])`` or ``reshape(X, a, b, c)`` (one may be ``[]``/None): the sizes."""
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple, torch.Size)) and len(sizes[0]) > 0:
        sizes = tuple(sizes[0])
    if len(sizes) < 2:
        raise DLFormatError(f"{caller} needs at least two sizes, as MATLAB's does: {caller}(X, m, n, ...)")
    result: list[int | None] = []
    for value in sizes:
        if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
            result.append(None)
        else:
            result.append(_validate.nonnegative_integer(f"{caller} size", value))
    if result.count(None) > 1:
        raise DLFormatError(f"{caller}: at most one size may be [] (computed from the others)")
    return result


def reshape(X: Any, *sizes: Any) -> DLArray:
    """MATLAB's ``reshape(X, sz)`` / ``reshape(X, m, n, ...)``: the elements in MATLAB's column-major
    order, rearranged to the new sizes (one may be ``[]`` or ``None``, computed from the others).

    MATLAB's rule: the output is unformatted, even if ``X`` is formatted. Relabel it with
    ``dlarray(Y, fmt)``.

    Examples:
        >>> Y = dlf.reshape(dlf.dlarray(torch.arange(6.0), "C"), 2, 3)
        >>> dlf.dims(Y), dlf.extractdata(Y)
        ('', tensor([[0., 2., 4.],
                [1., 3., 5.]]))
    """
    X = as_dlarray(X)
    wanted = _sizes("reshape", sizes)
    count = X._data.numel()
    known = math.prod(size for size in wanted if size is not None)
    if None in wanted:
        if known == 0 or count % known:
            raise DLFormatError(
                f"reshape: {count} elements cannot be split into sizes {_shown(wanted)}; the [] size must "
                "come out whole"
            )
        wanted = [count // known if size is None else size for size in wanted]
        known = count
    if known != count:
        raise DLFormatError(
            f"reshape: sizes {_shown(wanted)} hold {known} elements and X has {count}; the number of "
            "elements must not change"
        )
    return DLArray._wrap(
        _column_major_reshape(X._data, [int(size) for size in wanted if size is not None]), ""
    )


def _shown(sizes: Sequence[int | None]) -> str:
    return "[" + " ".join("[]" if size is None else str(size) for size in sizes) + "]"


def _column_major_reshape(data: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    """MATLAB's reshape: elements keep their column-major (first index fastest) order."""
    reverse = data.permute(*reversed(range(data.ndim))) if data.ndim > 1 else data
    return reverse.reshape(list(reversed(sizes))).permute(*reversed(range(len(sizes))))


def squeeze(X: Any) -> DLArray:
    """MATLAB's ``squeeze``: drop singleton dimensions, and with them their labels.

    As in MATLAB, an array of two dimensions or fewer is returned unchanged. An unformatted result
    keeps at least two dimensions (MATLAB's column vector); a formatted one keeps its non-singleton
    dimensions, or its first two when all are singletons.
    """
    X = as_dlarray(X)
    shape = tuple(X._data.shape)
    if len(shape) <= 2:
        return DLArray._wrap(X._data, X._fmt)
    keep = [position for position, size in enumerate(shape) if size != 1]
    if X._fmt:
        keep = keep or [0, 1]
        fmt = "".join(X._fmt[position] for position in keep)
        return DLArray._wrap(X._data.reshape([shape[position] for position in keep]), fmt)
    sizes = [shape[position] for position in keep]
    sizes += [1] * (2 - len(sizes))
    return DLArray._wrap(X._data.reshape(sizes), "")


# -- permute and transpose ---------------------------------------------------------------------------
def _order(caller: str, order: Any, ndim: int) -> list[int]:
    values = list(order) if isinstance(order, (list, tuple, range)) else None
    if values is None and isinstance(order, torch.Tensor):
        values = order.tolist() if order.ndim == 1 else None
    found = [_dims._number(value) for value in values] if values is not None else []
    numbers = [number for number in found if number is not None]
    if (
        not numbers
        or len(numbers) != len(found)
        or sorted(numbers) != list(range(1, len(numbers) + 1))
        or len(numbers) < ndim
    ):
        raise DLFormatError(
            f"{caller}: the order must be a permutation of 1..n with n at least the {ndim} dimensions of X "
            f"(MATLAB's 1-based numbers); got {_describe(order)}"
        )
    return [number - 1 for number in numbers]


def permute(X: Any, order: Any) -> DLArray:
    """MATLAB's ``permute(X, order)`` (``order`` 1-based, as in MATLAB).

    On an unformatted dlarray, any permutation. On a formatted one, MATLAB keeps the labels in
    canonical order, so a permutation may only exchange dimensions with the same label (two ``S``
    dimensions of ``"SSCB"``); anything else is an error pointing to ``stripdims(X, fmt)``, which
    hands the data over in any order.
    """
    X = as_dlarray(X)
    ndim = X._data.ndim
    positions = _order("permute", order, ndim)
    if X._fmt:
        _same_labels("permute", X._fmt, positions, order)
        return DLArray._wrap(X._data.permute(positions), X._fmt)
    data = X._data.reshape(tuple(X._data.shape) + (1,) * (len(positions) - ndim))
    return DLArray._wrap(data.permute(positions), "")


def ipermute(X: Any, order: Any) -> DLArray:
    """MATLAB's ``ipermute(X, order)``: undoes ``permute(X, order)``; the same format rule."""
    X = as_dlarray(X)
    positions = _order("ipermute", order, X._data.ndim)
    inverse = [0] * len(positions)
    for target, source in enumerate(positions):
        inverse[source] = target
    return permute(X, [position + 1 for position in inverse])


def _same_labels(caller: str, fmt: str, positions: list[int], given: Any) -> None:
    if len(positions) != len(fmt) or any(
        fmt[source] != fmt[target] for target, source in enumerate(positions)
    ):
        raise DLFormatError(
            f'{caller}: a formatted dlarray ("{fmt}") keeps its labels in MATLAB\'s order S, C, B, T, U, so '
            f"{caller} may only exchange dimensions with the same label; {_describe(given)} moves labels. "
            "Use stripdims(X, fmt) for the data in another order, or stripdims(X) then permute"
        )


def transpose(X: Any) -> DLArray:
    """MATLAB's ``transpose`` (``X.'``) of a matrix. A formatted dlarray can only be transposed when
    both its dimensions carry the same label (``"SS"``, ``"UU"``); otherwise see :func:`permute`."""
    return _transposed("transpose", X, conjugate=False)


def ctranspose(X: Any) -> DLArray:
    """MATLAB's ``ctranspose`` (``X'``): :func:`transpose` with complex conjugation."""
    return _transposed("ctranspose", X, conjugate=True)


def _transposed(caller: str, X: Any, conjugate: bool) -> DLArray:
    X = as_dlarray(X)
    data = X._data
    if data.ndim > 2:
        raise DLFormatError(
            f"{caller} is defined for matrices; X has {data.ndim} dimensions {tuple(data.shape)}. Use permute"
        )
    if X._fmt:
        if len(X._fmt) != 2 or X._fmt[0] != X._fmt[1]:
            raise DLFormatError(
                f'{caller}: a formatted dlarray ("{X._fmt}") keeps its labels in MATLAB\'s order S, C, B, T, '
                'U, so only a matrix whose two dimensions carry the same label ("SS", "UU") can be '
                "transposed. Use stripdims(X, fmt) for the data in another order, or stripdims(X) then "
                "transpose"
            )
    else:
        data = data.reshape(-1, 1) if data.ndim < 2 else data
    result = data.mT
    if conjugate and result.is_complex():
        result = result.conj()
    return DLArray._wrap(result, X._fmt)


# -- repmat, flip, circshift -------------------------------------------------------------------------
def repmat(X: Any, *counts: Any) -> DLArray:
    """MATLAB's ``repmat(X, n)``, ``repmat(X, r1, r2, ...)``, ``repmat(X, [r1 r2 ...])``: tile ``X``.

    A formatted dlarray keeps its format; its counts beyond its dimensions must be 1 (a new dimension
    would have no label).
    """
    X = as_dlarray(X)
    if len(counts) == 1 and isinstance(counts[0], (list, tuple)):
        counts = tuple(counts[0])
    if not counts:
        raise DLFormatError("repmat needs the repetition counts: repmat(X, n) or repmat(X, r1, r2, ...)")
    reps = [_validate.nonnegative_integer("repmat count", count) for count in counts]
    if len(reps) == 1:
        reps = reps * 2  # MATLAB: repmat(X, n) is repmat(X, n, n)
    ndim = X._data.ndim
    if X._fmt and any(count != 1 for count in reps[ndim:]):
        raise DLFormatError(
            f'repmat: a "{X._fmt}" dlarray has {ndim} dimensions; counts beyond them must be 1 (a new '
            "dimension would have no label); got " + _shown(reps)
        )
    reps = reps[:ndim] if X._fmt else reps
    data = X._data.reshape(tuple(X._data.shape) + (1,) * (len(reps) - ndim))
    full = reps + [1] * (data.ndim - len(reps))
    return settled(data.repeat(full), X._fmt)


def flip(X: Any, dim: Any = None) -> DLArray:
    """MATLAB's ``flip(X, dim)``: reverse the order along ``dim`` (a number from 1 or a label; by default
    the first dimension whose size is not 1). The format is kept."""
    X = as_dlarray(X)
    if dim is None:
        positions: tuple[int, ...] = (_dims.first_nonsingleton(tuple(X._data.shape)),)
    else:
        positions = _dims.positions("flip", X._fmt, X._data.ndim, dim, all_=False)
    return DLArray._wrap(X._data.flip(positions), X._fmt)


def circshift(X: Any, K: Any, dim: Any = None) -> DLArray:
    """MATLAB's ``circshift(X, K)`` / ``circshift(X, K, dim)``: shift circularly by ``K`` along ``dim``.

    Without ``dim``, a scalar ``K`` shifts along the first dimension whose size is not 1 and a vector
    ``K`` shifts dimension ``i`` by ``K(i)``, as in MATLAB. The format is kept.
    """
    X = as_dlarray(X)
    shifts = list(K) if isinstance(K, (list, tuple)) else [K]
    amounts = [_validate.integer("circshift K", shift, minimum=-(2**53)) for shift in shifts]
    if dim is not None:
        if len(amounts) != 1:
            raise DLFormatError("circshift(X, K, dim): K must be one integer when dim is given")
        positions: tuple[int, ...] = (_dims.dimension("circshift", X._fmt, X._data.ndim, dim),)
    elif len(amounts) == 1:
        positions = (_dims.first_nonsingleton(tuple(X._data.shape)),)
    else:
        if len(amounts) > X._data.ndim:
            raise DLFormatError(
                f"circshift: K has {len(amounts)} shifts and X has {X._data.ndim} dimensions; give at most "
                "one per dimension"
            )
        positions = tuple(range(len(amounts)))
    return DLArray._wrap(torch.roll(X._data, amounts, positions), X._fmt)


# -- products -------------------------------------------------------------------------------------
_TRANSPOSES = ("none", "transpose", "ctranspose")


def pagemtimes(X: Any, *args: Any) -> DLArray:
    """MATLAB's ``pagemtimes(X, Y)`` and ``pagemtimes(X, transpX, Y, transpY)``: the matrix product of
    every page (dimensions 3 onward, implicitly expanded) of unformatted data.

    ``transpX``/``transpY`` are ``"none"``, ``"transpose"`` or ``"ctranspose"``. Formatted inputs are
    refused: use ``stripdims`` (dlformat's safer choice where MATLAB's rule for formats is not settled).
    """
    if len(args) == 1:
        Y, transp_x, transp_y = args[0], "none", "none"
    elif len(args) == 3:
        transp_x, Y, transp_y = args
    else:
        raise DLFormatError("pagemtimes takes (X, Y) or (X, transpX, Y, transpY)")
    for name, value in (("transpX", transp_x), ("transpY", transp_y)):
        if not isinstance(value, str) or value.lower() not in _TRANSPOSES:
            raise DLFormatError(
                f'pagemtimes: {name} must be "none", "transpose" or "ctranspose"; got {value!r}'
            )
    formatted = _formatted(X)
    if formatted is None:
        formatted = _formatted(Y)
    if formatted is not None:
        raise DLFormatError(
            f'pagemtimes cannot take a formatted dlarray ("{formatted._fmt}"); dlformat refuses formats here '
            "rather than guess their rule. Use stripdims on both inputs (and dlarray(Z, fmt) on the result)"
        )
    a, b = (as_dlarray(value)._data for value in (X, Y))
    a = a.reshape(-1, 1) if a.ndim < 2 else a
    b = b.reshape(-1, 1) if b.ndim < 2 else b
    ndim = max(a.ndim, b.ndim)
    a = a.reshape(tuple(a.shape) + (1,) * (ndim - a.ndim))
    b = b.reshape(tuple(b.shape) + (1,) * (ndim - b.ndim))
    # MATLAB's pages are the trailing dimensions; torch's batch dimensions lead
    order = [*range(2, ndim), 0, 1]
    back = [ndim - 2, ndim - 1, *range(ndim - 2)]
    a, b = a.permute(order), b.permute(order)
    if transp_x.lower() != "none":
        a = a.mT.conj() if transp_x.lower() == "ctranspose" and a.is_complex() else a.mT
    if transp_y.lower() != "none":
        b = b.mT.conj() if transp_y.lower() == "ctranspose" and b.is_complex() else b.mT
    if a.shape[-1] != b.shape[-2]:
        raise DLFormatError(
            f"pagemtimes: inner sizes must agree; the pages are {a.shape[-2]}×{a.shape[-1]} and "
            f"{b.shape[-2]}×{b.shape[-1]}"
        )
    dtype = working_dtype(a.dtype, b.dtype)
    try:
        product = torch.matmul(a.to(dtype), b.to(dtype))
    except RuntimeError:
        raise DLFormatError(
            f"pagemtimes: the page dimensions {tuple(a.shape[:-2])} and {tuple(b.shape[:-2])} must match "
            "or be 1"
        ) from None
    return DLArray._wrap(product.permute(back), "")


# -- sizes -----------------------------------------------------------------------------------------
def size(X: Any, dim: Any = None) -> Any:
    """MATLAB's ``size(X)`` and ``size(X, dim)``.

    ``size(X)`` is a tuple with one entry per dimension (per label of a formatted dlarray, singletons
    included), at least two as in MATLAB. ``size(X, d)`` is an int: dimension ``d`` counted from 1 (1
    beyond the last, as in MATLAB), or a label (a tuple for several ``S``); a list of several numbers
    gives a tuple, a list of one an int (MATLAB's ``[3]`` is the scalar 3), so
    ``size(X, finddim(X, "S"))`` is MATLAB's, as on MathWorks' finddim page. A categorical array
    (or a list of names, MATLAB's cell array) has MATLAB's size of its elements, a 1-D one ``N×1``.
    """
    if isinstance(X, Categorical):
        shape, fmt = _categorical.matlab_size(X), ""
    elif _is_cell(X):
        shape, fmt = tuple(np.shape(_cell(X))), ""
    else:
        X = as_dlarray(X)
        shape, fmt = tuple(X._data.shape), X._fmt
    if dim is None:
        return shape + (1,) * (2 - len(shape))
    if isinstance(dim, str):
        found = _dims.positions("size", fmt, len(shape), dim, all_=False)
        sizes = tuple(shape[position] for position in found)
        return sizes[0] if len(sizes) == 1 and fmt.count(dim) == 1 else sizes
    single = _dims.single_number(dim)
    numbers = [single] if single is not None else list(dim) if isinstance(dim, (list, tuple)) else None
    checked = [_dims._number(value) for value in numbers] if numbers else None
    if checked is None or any(value is None or value < 1 for value in checked):
        absent = f" ({_validate.ABSENT_LABEL})" if numbers == [] else ""
        raise DLFormatError(
            f"size: dimension {_describe(dim)} is not allowed{absent}; give a dimension number from 1, a "
            "list of them, or a label"
        )
    sizes = tuple(shape[value - 1] if value is not None and value <= len(shape) else 1 for value in checked)
    return sizes[0] if single is not None else sizes


def numel(X: Any) -> int:
    """MATLAB's ``numel``: the number of elements (of a categorical array; of a list of names, MATLAB's
    cell array, as ``numel(categories(labels))`` counts the classes)."""
    if isinstance(X, Categorical):
        return math.prod(X.shape)
    if _is_cell(X):
        return int(_cell(X).size)
    return as_dlarray(X)._data.numel()


def ndims(X: Any) -> int:
    """MATLAB's ``ndims``: the number of dimensions (of labels, for a formatted dlarray), at least 2."""
    if isinstance(X, Categorical) or _is_cell(X):
        return len(size(X))
    return max(as_dlarray(X)._data.ndim, 2)


def _is_cell(X: Any) -> bool:
    """A list (or NumPy object array) holding text: MATLAB's cell array of names, which no dlarray holds."""
    if isinstance(X, np.ndarray):
        return X.dtype.kind == "U" or (
            X.dtype.kind == "O" and any(isinstance(item, str) for item in X.ravel())
        )
    return isinstance(X, (list, tuple)) and any(isinstance(item, str) for item in _cell(X).ravel())


def _cell(X: Any) -> np.ndarray:
    try:
        return np.asarray(X, dtype=object)
    except ValueError:  # ragged nesting: one cell per item
        cells = np.empty(len(X), dtype=object)
        cells[:] = list(X)
        return cells
