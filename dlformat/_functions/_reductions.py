"""MATLAB's reductions on dlarrays: ``sum``, ``mean``, ``prod``, ``max``, ``min``, ``norm``,
``vecnorm``, ``cumsum``, ``any``, ``all``.

MATLAB's rule: the output has the input's format, the reduced dimensions kept as singletons
(``sum(X, 3)`` of a 8×4×10 ``"CBT"`` array is 8×4×1 ``"CBT"``). The dimension is MATLAB's
argument: a number from 1, a list of numbers, ``"all"``, or here also a label (``"T"``, or ``"S"``
for every spatial dimension); without one, MATLAB's default, the first dimension whose size is not 1.
A trailing singleton ``U`` dimension after the second is dropped, as ``dlarray`` drops it.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch

from .._dlarray import DLArray, _elementwise, as_dlarray, dlarray, settled
from .._errors import DLFormatError
from ..functional._common import floating_data
from . import _dims

__all__ = ["all", "any", "cumsum", "max", "mean", "min", "norm", "prod", "sum", "vecnorm"]


def _reduced(caller: str, X: DLArray, dim: Any) -> tuple[int, ...]:
    if dim is None:
        return (_dims.first_nonsingleton(tuple(X._data.shape)),)
    return _dims.positions(caller, X._fmt, X._data.ndim, dim)


def _counting(data: torch.Tensor) -> torch.Tensor:
    """Logical data sums and multiplies as single (torch's default dtype), as MATLAB's sum of a
    logical is numeric; integer data keeps torch's integer arithmetic."""
    return data.to(torch.get_default_dtype()) if data.dtype == torch.bool else data


def sum(X: Any, dim: Any = None) -> DLArray:
    """MATLAB's ``sum(X)``, ``sum(X, dim)``, ``sum(X, vecdim)``, ``sum(X, "all")``; ``dim`` may be a label.

    The format is kept and the summed dimensions become singletons.

    Examples:
        >>> X = dlf.dlarray(torch.ones(8, 4, 10), "CBT")
        >>> S = dlf.sum(X, "T")  # MATLAB: sum(X, 3), or sum(X, finddim(X, "T"))
        >>> dlf.dims(S), tuple(S.shape)
        ('CBT', (8, 4, 1))
    """
    X = as_dlarray(X)
    dims = _reduced("sum", X, dim)
    return settled(torch.sum(_counting(X._data), dim=dims, keepdim=True), X._fmt)


def prod(X: Any, dim: Any = None) -> DLArray:
    """MATLAB's ``prod``: the product over ``dim`` (as for :func:`sum`), the format kept."""
    X = as_dlarray(X)
    data = _counting(X._data)
    for position in sorted(_reduced("prod", X, dim), reverse=True):
        data = torch.prod(data, dim=position, keepdim=True)
    return settled(data, X._fmt)


def mean(X: Any, dim: Any = None) -> DLArray:
    """MATLAB's ``mean``: the average over ``dim`` (as for :func:`sum`), the format kept."""
    X = as_dlarray(X)
    data = floating_data(X._data, "mean")
    return settled(torch.mean(data, dim=_reduced("mean", X, dim), keepdim=True), X._fmt)


def cumsum(X: Any, dim: Any = None, direction: str = "forward") -> DLArray:
    """MATLAB's ``cumsum(X, dim, direction)``: running sums along one dimension (``"forward"`` or
    ``"reverse"``); the format and the size are kept."""
    X = as_dlarray(X)
    if not isinstance(direction, str) or direction.lower() not in ("forward", "reverse"):
        raise DLFormatError(f'cumsum: direction must be "forward" or "reverse"; got {direction!r}')
    if isinstance(dim, str) and dim.lower() in ("forward", "reverse"):
        dim, direction = None, dim  # cumsum(X, "reverse")
    if dim is None:
        position = _dims.first_nonsingleton(tuple(X._data.shape))
    else:
        position = _dims.dimension("cumsum", X._fmt, X._data.ndim, dim)
    data = _counting(X._data)
    if direction.lower() == "reverse":
        return DLArray._wrap(torch.cumsum(data.flip(position), position).flip(position), X._fmt)
    return DLArray._wrap(torch.cumsum(data, position), X._fmt)


def any(X: Any, dim: Any = None) -> DLArray:
    """MATLAB's ``any``: true where some element along ``dim`` is nonzero (NaN is ignored, as in
    MATLAB); a logical dlarray with the format, the reduced dimensions singletons."""
    X = as_dlarray(X)
    data = X._data
    true = (data != 0) & ~torch.isnan(data) if data.is_floating_point() else data != 0
    return settled(torch.amax(true, dim=_reduced("any", X, dim), keepdim=True), X._fmt)


def all(X: Any, dim: Any = None) -> DLArray:
    """MATLAB's ``all``: true where every element along ``dim`` is nonzero; a logical dlarray with
    the format, the reduced dimensions singletons."""
    X = as_dlarray(X)
    return settled(torch.amin(X._data != 0, dim=_reduced("all", X, dim), keepdim=True), X._fmt)


def _extremum(name: str, X: Any, Y: Any, dim: Any, nargout: int) -> Any:
    if nargout not in (1, 2):
        raise DLFormatError(f"{name}: nargout must be 1 (the values) or 2 (the values and their indices)")
    if not _is_empty(Y):
        if dim is not None or nargout != 1:
            raise DLFormatError(
                f"{name}(A, B) compares two arrays elementwise and takes no dimension and no index output; "
                f"for the {name} along a dimension write {name}(X, [], dim)"
            )
        return _two_inputs(name, X, Y)
    X = as_dlarray(X)
    data = X._data
    if data.dtype == torch.bool:
        data = data.to(torch.get_default_dtype())
    reduced = _reduced(name, X, dim)
    # MATLAB omits NaN: the extremum of the other elements, NaN only where all are NaN
    fill = -math.inf if name == "max" else math.inf
    nan = torch.isnan(data) if data.is_floating_point() else None
    filled = data.masked_fill(nan, fill) if nan is not None else data
    if nargout == 2:
        if len(reduced) != 1:
            raise DLFormatError(
                f"{name}: the index output is given along one dimension; {len(reduced)} were named (MATLAB's "
                "linear indices over several dimensions are not ported)"
            )
        values, indices = (torch.max if name == "max" else torch.min)(filled, dim=reduced[0], keepdim=True)
    else:
        values = (torch.amax if name == "max" else torch.amin)(filled, dim=reduced, keepdim=True)
    if nan is not None:
        values = torch.where(torch.all(nan, dim=reduced, keepdim=True), torch.nan, values)
    M = settled(values, X._fmt)
    if nargout == 1:
        return M
    return M, DLArray._wrap(indices + 1, M._fmt)  # MATLAB's 1-based indices, the first of ties


def _is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, (list, tuple)) and len(value) == 0:
        return True
    return False


def _two_inputs(name: str, A: Any, B: Any) -> DLArray:
    # MATLAB's max(A, B) omits NaN too: torch.fmax / fmin
    function = torch.fmax if name == "max" else torch.fmin

    def op(a: Any, b: Any) -> torch.Tensor:
        a = a if isinstance(a, torch.Tensor) else torch.as_tensor(a, device=b.device)
        b = b if isinstance(b, torch.Tensor) else torch.as_tensor(b, device=a.device)
        return function(a, b)

    if not isinstance(A, DLArray) and not isinstance(B, DLArray):
        A = dlarray(A)
    return _elementwise(op, A, B)


def max(X: Any, Y: Any = None, dim: Any = None, *, nargout: int = 1) -> Any:
    """MATLAB's ``max``: ``max(X)``, ``max(X, [], dim)``, ``max(X, [], "all")``, or ``max(A, B)``.

    Along a dimension, the format is kept and the reduced dimensions become singletons; NaN is
    ignored unless all are NaN, as in MATLAB. ``max(A, B)`` is elementwise, label-aligned.
    ``nargout=2`` also returns MATLAB's second output, the 1-based indices of the maxima (the first of
    ties) as an int64 dlarray with the format: MATLAB's ``[M, I] = max(X, [], dim)``.

    Examples:
        >>> X = dlf.dlarray(torch.tensor([[1.0, 5.0], [7.0, 2.0]]), "CB")
        >>> M, I = dlf.max(X, [], "C", nargout=2)
        >>> dlf.extractdata(M), dlf.extractdata(I)
        (tensor([[7., 5.]]), tensor([[2, 1]]))
    """
    return _extremum("max", X, Y, dim, nargout)


def min(X: Any, Y: Any = None, dim: Any = None, *, nargout: int = 1) -> Any:
    """MATLAB's ``min``: as :func:`max`, for the minima."""
    return _extremum("min", X, Y, dim, nargout)


def _p(caller: str, p: Any, *, fro: bool) -> float | str:
    """MATLAB's ``p`` of ``norm`` (``fro``: also "fro" and -Inf) and ``vecnorm`` (positive or Inf)."""
    if isinstance(p, str) and fro and p.lower() == "fro":
        return "fro"
    if isinstance(p, str) and p.lower() in ("inf", "-inf"):
        p = math.inf if p.lower() == "inf" else -math.inf
    if isinstance(p, numbers.Real) and not isinstance(p, bool):
        number = float(p)
        if number > 0 or (fro and number == -math.inf):
            return number
    allowed = 'a positive number, Inf, -Inf or "fro"' if fro else "a positive number or Inf"
    raise DLFormatError(f"{caller}: p must be {allowed}; got {p!r}")


def vecnorm(X: Any, p: Any = 2, dim: Any = None) -> DLArray:
    """MATLAB's ``vecnorm(X, p, dim)``: the ``p``-norm of the vectors along ``dim`` (default 2 and the
    first dimension whose size is not 1); the format is kept, the reduced dimensions singletons."""
    X = as_dlarray(X)
    order = _p("vecnorm", p, fro=False)
    data = floating_data(X._data, "vecnorm")
    reduced = _reduced("vecnorm", X, dim)
    return settled(torch.linalg.vector_norm(data, ord=order, dim=reduced, keepdim=True), X._fmt)


def norm(X: Any, p: Any = 2) -> DLArray:
    """MATLAB's ``norm(X, p)``: a vector's ``p``-norm when ``X`` has one non-singleton dimension; a
    matrix's 1-, 2- (largest singular value), Inf- or Frobenius norm when it has two dimensions; the
    Frobenius norm (``"fro"``) for any array. One number, with the format of ``X`` (all singletons)."""
    X = as_dlarray(X)
    order = _p("norm", p, fro=True)
    data = floating_data(X._data, "norm")
    everything = tuple(range(data.ndim))
    if order == "fro":
        value = torch.linalg.vector_norm(data, ord=2, dim=everything, keepdim=True)
    elif _non_singletons(data) <= 1:
        value = torch.linalg.vector_norm(data, ord=order, dim=everything, keepdim=True)
    elif data.ndim == 2 and order in (1.0, 2.0, math.inf):
        value = torch.linalg.matrix_norm(data, ord=order, keepdim=True)
    else:
        raise DLFormatError(
            f"norm: p = {p!r} needs a vector or a matrix (2-D); X has size {tuple(data.shape)}. For an N-D "
            'array use norm(X, "fro"), or vecnorm along a dimension'
        )
    return settled(value, X._fmt)


def _non_singletons(data: torch.Tensor) -> int:
    return len([size for size in data.shape if size != 1])
