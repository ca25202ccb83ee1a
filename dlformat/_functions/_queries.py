"""MATLAB's questions about a dlarray: its type (``isfloat``, ``islogical``, ``isnumeric``,
``isreal``), its shape (``isscalar``, ``isvector``, ``ismatrix``, ``isrow``, ``iscolumn``,
``isempty``, ``length``) and equality (``isequal``, ``isequaln``).

Each answers with a Python ``bool`` (MATLAB's logical scalar) or ``int``. The shape questions read
MATLAB's ``size(X)``: one entry per label of a formatted dlarray, singletons included, at least two
(:func:`dlformat.size`), so a ``"CBT"`` array is never a matrix, whatever its sizes. Anything that is
not a dlarray is taken as an unformatted one.
"""

from __future__ import annotations

from typing import Any

import torch

from .. import _categorical
from .._categorical import Categorical
from .._dlarray import DLArray, as_dlarray
from .._errors import DLFormatError
from ._shape import numel, size

__all__ = [
    "iscolumn",
    "isempty",
    "isequal",
    "isequaln",
    "isfloat",
    "islogical",
    "ismatrix",
    "isnumeric",
    "isreal",
    "isrow",
    "isscalar",
    "isvector",
    "length",
]


def isfloat(X: Any) -> bool:
    """MATLAB's ``isfloat``: whether the data is floating point (``"single"``, ``"double"``, ...);
    false for a categorical array."""
    return not isinstance(X, Categorical) and as_dlarray(X)._data.is_floating_point()


def islogical(X: Any) -> bool:
    """MATLAB's ``islogical``: whether the data is logical (torch's ``bool``); false for a categorical."""
    return not isinstance(X, Categorical) and as_dlarray(X)._data.dtype == torch.bool


def isnumeric(X: Any) -> bool:
    """MATLAB's ``isnumeric``: whether the data is numeric, floating or integer (logical is not);
    false for a categorical array."""
    return not isinstance(X, Categorical) and as_dlarray(X)._data.dtype != torch.bool


def isreal(X: Any) -> bool:
    """MATLAB's ``isreal``: whether the data has no complex storage; one answer for the array (torch's
    ``isreal`` answers elementwise)."""
    return not as_dlarray(X)._data.is_complex()


def isscalar(X: Any) -> bool:
    """MATLAB's ``isscalar``: whether ``X`` has one element."""
    return numel(X) == 1


def isvector(X: Any) -> bool:
    """MATLAB's ``isvector``: whether ``size(X)`` is ``1×n`` or ``n×1``: two dimensions (labels), one
    of them 1.

    Examples:
        >>> dlf.isvector(dlf.dlarray(torch.ones(5, 1), "CB"))
        True
        >>> dlf.isvector(dlf.dlarray(torch.ones(5, 1, 1), "CBT"))  # three labels: no vector
        False
    """
    sizes = size(X)
    return len(sizes) == 2 and 1 in sizes


def ismatrix(X: Any) -> bool:
    """MATLAB's ``ismatrix``: whether ``size(X)`` has two entries (two labels of a formatted array)."""
    return len(size(X)) == 2


def isrow(X: Any) -> bool:
    """MATLAB's ``isrow``: whether ``size(X)`` is ``1×n``."""
    sizes = size(X)
    return len(sizes) == 2 and sizes[0] == 1


def iscolumn(X: Any) -> bool:
    """MATLAB's ``iscolumn``: whether ``size(X)`` is ``n×1`` (a 1-D tensor is a column, as elsewhere)."""
    sizes = size(X)
    return len(sizes) == 2 and sizes[1] == 1


def isempty(X: Any) -> bool:
    """MATLAB's ``isempty``: whether ``X`` has no elements (some size is 0)."""
    return numel(X) == 0


def length(X: Any) -> int:
    """MATLAB's ``length``: the largest entry of ``size(X)``, 0 for an empty array."""
    return 0 if isempty(X) else max(size(X))


def isequal(A: Any, B: Any, *more: Any) -> bool:
    """MATLAB's ``isequal(A, B, ...)``: the same size, the same values (NaN is unequal to itself, as in
    MATLAB) and the same format; the data types may differ, as in MATLAB (``single(1)`` equals ``1``).

    As in MATLAB, any values may be compared and the answer is never an error: a value that is no
    array (a ``str``, ``None``, a dict, a ragged list, ...) is unequal to every array, and two such
    values are equal when Python finds them equal (two strings holding the same characters).

    Examples:
        >>> X = dlf.dlarray(torch.tensor([[1.0, 2.0]]), "CB")
        >>> dlf.isequal(X, dlf.double(X)), dlf.isequal(X, dlf.stripdims(X)), dlf.isequal(X, "abc")
        (True, False, False)
    """
    return _equal((A, B, *more), nan_equal=False)


def isequaln(A: Any, B: Any, *more: Any) -> bool:
    """MATLAB's ``isequaln``: as :func:`isequal`, with NaN equal to NaN."""
    return _equal((A, B, *more), nan_equal=True)


def _equal(values: tuple[Any, ...], nan_equal: bool) -> bool:
    if any(isinstance(value, Categorical) for value in values):  # compared by category name
        return _categorical.equal(values, nan_equal)
    first, *others = (_comparable(value) for value in values)
    return all(_pair_equal(first, other, nan_equal) for other in others)


class _NoArray:
    """A compared value that makes no array: MATLAB's isequal still answers for it (false against
    any array), so it is kept aside rather than refused."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def equals(self, other: Any) -> bool:
        if not isinstance(other, _NoArray) or type(self.value) is not type(other.value):
            return False
        try:
            return bool(self.value == other.value)
        except Exception:  # an == that answers no single truth value (nested arrays): unequal
            return False


def _comparable(value: Any) -> DLArray | _NoArray:
    try:
        return as_dlarray(value)
    except (DLFormatError, TypeError, ValueError):
        return _NoArray(value)


def _pair_equal(A: DLArray | _NoArray, B: DLArray | _NoArray, nan_equal: bool) -> bool:
    if isinstance(A, _NoArray) or isinstance(B, _NoArray):
        return A.equals(B) if isinstance(A, _NoArray) else False
    sizes = size(A)
    if A._fmt != B._fmt or sizes != size(B):
        return False
    common = torch.promote_types(A._data.dtype, B._data.dtype)
    # a 1-D tensor and a column hold the same values: compare them as MATLAB's sizes
    a = A._data.detach().to(common).reshape(sizes)
    b = B._data.detach().to(device=a.device, dtype=common).reshape(sizes)
    same = a == b
    if nan_equal and common.is_floating_point:
        same = same | (torch.isnan(a) & torch.isnan(b))
    return bool(same.all())
