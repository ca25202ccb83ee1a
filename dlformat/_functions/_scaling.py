"""MATLAB's ``rescale`` and ``normalize`` on dlarrays: the size and the format of the input are kept.

Both are arithmetic on the dlarray (``-``, ``./``, ``.*``) with statistics from :mod:`._reductions`
(reduced dimensions kept as singletons), so bounds and statistics broadcast as MATLAB's implicit
expansion does, by label for formatted operands (docs/formats.md#arithmetic).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch

from .._dlarray import DLArray, as_dlarray
from .._errors import DLFormatError
from .._options import matlab_function
from ..functional._common import floating_data
from . import _dims
from ._reductions import max, min

__all__ = ["normalize", "rescale"]


def _floating(X: Any, caller: str) -> DLArray:
    X = as_dlarray(X)
    return DLArray._wrap(floating_data(X._data, caller), X._fmt)


def _real(caller: str, name: str, value: Any) -> Any:
    """A number, or an array (dlarray, tensor, NumPy) used as MATLAB's implicit expansion uses it."""
    if isinstance(value, bool) or isinstance(value, str) or value is None:
        raise DLFormatError(f"{caller}: {name} must be a number or an array of numbers; got {value!r}")
    return value


@matlab_function
def rescale(A: Any, lower: Any = 0, upper: Any = 1, *, InputMin: Any = None, InputMax: Any = None) -> DLArray:
    """MATLAB's ``rescale(A)``, ``rescale(A, l, u)``, ``rescale(..., "InputMin", m, "InputMax", M)``.

    ``l + (A - m) ./ (M - m) .* (u - l)`` (MATLAB's ``l`` and ``u`` are ``lower`` and ``upper``),
    with ``A`` first clipped to ``[m, M]``; ``m`` and ``M`` are by default the smallest and largest
    element of all of ``A``. Bounds may be arrays (expanded as ``+ - * /`` expand them). The format
    and the size of ``A`` are kept. An input range of zero width (a constant ``A``) is an error:
    MATLAB's result there is not settled in dlformat's sources.

    Examples:
        >>> R = dlf.rescale(dlf.dlarray(torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), "T"), -1, 1)
        >>> dlf.dims(R), dlf.extractdata(R)
        ('T', tensor([-1.0000, -0.5000,  0.0000,  0.5000,  1.0000]))
    """
    A = _floating(A, "rescale")
    lower, upper = _real("rescale", "l", lower), _real("rescale", "u", upper)
    # the extremes of all of A as plain numbers (0-d), which combine with any format
    low = min(A, [], "all")._data.reshape(()) if InputMin is None else _real("rescale", "InputMin", InputMin)
    high = max(A, [], "all")._data.reshape(()) if InputMax is None else _real("rescale", "InputMax", InputMax)
    if not _all(upper - lower, lambda span: span >= 0):
        raise DLFormatError("rescale: the lower bound l must not exceed the upper bound u (as in MATLAB)")
    width = high - low
    if not _all(width, lambda span: span > 0):
        raise DLFormatError(
            "rescale: the input range is empty (InputMax equals InputMin, or A is constant); dlformat "
            "refuses it, as MATLAB's result for it is not settled in its sources. Give InputMin < InputMax"
        )
    clipped = min(max(A, low), high) if InputMin is not None or InputMax is not None else A
    return as_dlarray(lower + (clipped - low) / width * (upper - lower))


def _all(value: Any, test: Any) -> bool:
    """Whether ``test`` holds for every element of a number or an array."""
    data = value._data if isinstance(value, DLArray) else torch.as_tensor(value)
    return bool(torch.all(test(data)))


# -- normalize -------------------------------------------------------------------------------------
_METHODS = ("zscore", "norm", "scale", "range", "center")
_NOT_PORTED = {
    "medianiqr": "its median and interquartile range",
    "robust": "its median and median absolute deviation",
    "median": "MATLAB's median",
    "mad": "the median absolute deviation",
    "iqr": "the interquartile range",
}


def normalize(X: Any, *args: Any) -> DLArray:
    """MATLAB's ``normalize``: ``normalize(X)``, ``normalize(X, dim)``, ``normalize(..., method)``,
    ``normalize(..., method, methodtype)``, ``normalize(..., "center", c, "scale", s)``.

    Along ``dim`` (a number from 1 or a label; default the first dimension whose size is not 1):
    ``"zscore"`` (the default: ``(X - mean) ./ std``, the standard deviation with ``n - 1``),
    ``"norm"`` (``X ./ vecnorm(X, p)``, ``p`` 2 by default, or ``Inf``), ``"scale"`` (by ``"std"``,
    the default, ``"first"`` (the first element), or a number or array ``s``), ``"range"``
    (to ``[a b]``, ``[0 1]`` by default), ``"center"`` (by ``"mean"``, the default, or a number or
    array ``c``); ``"center"`` and ``"scale"`` together. The result keeps the size and the format of
    ``X``. A divisor of 0 (a constant vector; a zero one for ``"norm"``; a zero first element or
    scale for ``"scale"``) is an error: MATLAB's result there is not settled in dlformat's
    sources. NaN elements are left out of the statistics (the mean, the standard deviation, the
    norm, the smallest and largest element) and stay NaN in the result; a vector of NaN only gives
    NaN; ``"first"`` is the first element, NaN or not. The median-based types (``"robust"``,
    ``"median"``, ``"mad"``, ``"iqr"``, ``"medianiqr"``) are not ported: an error says so.

    Examples:
        >>> N = dlf.normalize(dlf.dlarray(torch.tensor([[1.0, 2.0, 3.0]]), "CB"), "B")
        >>> dlf.dims(N), dlf.extractdata(N)
        ('CB', tensor([[-1.,  0.,  1.]]))
    """
    X = _floating(X, "normalize")
    rest = list(args)
    position = _dims.first_nonsingleton(tuple(X._data.shape))
    if rest and not isinstance(rest[0], str):
        position = _dims.dimension("normalize", X._fmt, X._data.ndim, rest.pop(0))
    elif rest and isinstance(rest[0], str) and rest[0].lower() not in (*_METHODS, *_NOT_PORTED):
        position = _dims.dimension("normalize", X._fmt, X._data.ndim, rest.pop(0))  # a label
    dim = position + 1
    steps = _methods(rest)
    Y: DLArray = X
    for method, kind in steps:
        Y = _apply(method, kind, Y, X, dim)
    return Y


def _methods(rest: list[Any]) -> list[tuple[str, Any]]:
    """``[(method, methodtype or None), ...]`` from the arguments after ``dim``."""
    if not rest:
        return [("zscore", None)]
    steps: list[tuple[str, Any]] = []
    while rest:
        method = rest.pop(0)
        if not isinstance(method, str) or method.lower() not in _METHODS:
            if isinstance(method, str) and method.lower() in _NOT_PORTED:
                raise _not_ported(method)
            raise DLFormatError(
                f"normalize: method {method!r} is not one of {', '.join(map(repr, _METHODS))} (the "
                "median-based methods are not ported)"
            )
        method = method.lower()
        kind = None
        if rest and not (isinstance(rest[0], str) and rest[0].lower() in _METHODS):
            kind = rest.pop(0)
        steps.append((method, kind))
    names = [method for method, _ in steps]
    if len(steps) > 1 and sorted(names) != ["center", "scale"]:
        raise DLFormatError(
            f"normalize: only 'center' and 'scale' can be used together (as in MATLAB); got {names}"
        )
    return sorted(steps)  # center before scale, as MATLAB applies them


def _not_ported(kind: Any) -> DLFormatError:
    return DLFormatError(
        f"normalize: {kind!r} needs {_NOT_PORTED[str(kind).lower()]}, which dlformat does not port; "
        "use 'zscore', 'norm', 'scale', 'range' or 'center'"
    )


def _apply(method: str, kind: Any, Y: DLArray, X: DLArray, dim: int) -> DLArray:
    if isinstance(kind, str) and kind.lower() in _NOT_PORTED:
        raise _not_ported(kind)
    if method == "zscore":
        if kind is not None and not (isinstance(kind, str) and kind.lower() == "std"):
            raise DLFormatError(
                f"normalize: 'zscore' takes the type 'std' (or 'robust', not ported); got {kind!r}"
            )
        return as_dlarray((Y - _mean(X, dim)) / _spread(_std(X, dim), method))
    if method == "norm":
        p = 2 if kind is None else kind
        if isinstance(p, str) and p.lower() == "inf":
            p = math.inf
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not float(p) > 0:
            raise DLFormatError(f"normalize: 'norm' takes a positive p or Inf; got {kind!r}")
        return as_dlarray(Y / _spread(_norm(X, dim, float(p)), method))
    if method == "range":
        low, high = _interval(kind)
        smallest, largest = _along(min, X, dim, []), _along(max, X, dim, [])
        return as_dlarray(low + (Y - smallest) / _spread(largest - smallest, method) * (high - low))
    if method == "center":
        if kind is None or (isinstance(kind, str) and kind.lower() == "mean"):
            return as_dlarray(Y - _mean(X, dim))
        return as_dlarray(Y - _real("normalize", "the center", kind))
    # scale
    if kind is None or (isinstance(kind, str) and kind.lower() == "std"):
        return as_dlarray(Y / _spread(_std(X, dim), method))
    if isinstance(kind, str) and kind.lower() == "first":
        first = DLArray._wrap(X._data.narrow(dim - 1, 0, 1), X._fmt)
        return as_dlarray(Y / _spread(first, method, "a first element of 0"))
    return as_dlarray(Y / _spread(_real("normalize", "the scale", kind), method, "a scale of 0"))


def _along(statistic: Any, X: DLArray, dim: int, *args: Any) -> DLArray:
    """``statistic(X, *args, dim)`` with the reduced dimension kept as a singleton of ``X``'s format:
    the reductions drop a trailing singleton ``U`` (dlarray's rule), which ``X`` still has."""
    result = statistic(X, *args, dim)
    shape = list(X._data.shape)
    shape[dim - 1] = 1
    return DLArray._wrap(result._data.reshape(shape), X._fmt)


def _spread(divisor: Any, method: str, cause: str | None = None) -> Any:
    """``divisor``, refused where it is 0 (a constant vector, a zero one for ``"norm"``, or the
    ``cause`` given): the formula gives NaN or Inf there, and MATLAB's result is not settled in
    dlformat's sources. NaN data passes."""
    if not _all(divisor, lambda value: value != 0):
        cause = cause or ("a zero vector" if method == "norm" else "a constant vector")
        raise DLFormatError(
            f"normalize: '{method}' divides by 0 along the dimension ({cause}); dlformat refuses it, "
            "as MATLAB's result there is not settled in its sources"
        )
    return divisor


# normalize's statistics leave NaN out, as "omitnan" does (MATLAB's min and max, which "range" uses,
# do so by default); a vector with no other element gives NaN, as min and max do
def _mean(X: DLArray, dim: int) -> DLArray:
    """``mean(X, dim, "omitnan")``, the reduced dimension kept as a singleton."""
    return DLArray._wrap(torch.nanmean(X._data, dim=dim - 1, keepdim=True), X._fmt)


def _std(X: DLArray, dim: int) -> DLArray:
    """``std(X, 0, dim, "omitnan")``: the ``n - 1`` standard deviation of the ``n`` elements that are
    not NaN (0 where ``n`` is 1, as MATLAB's ``std`` of one element)."""
    data, axis = X._data, dim - 1
    present = ~torch.isnan(data)
    count = present.sum(dim=axis, keepdim=True)
    deviations = torch.where(present, data - torch.nanmean(data, dim=axis, keepdim=True), 0.0)
    variance = deviations.square().sum(dim=axis, keepdim=True) / (count - 1).clamp(min=1)
    return DLArray._wrap(_none_left(variance.sqrt(), count), X._fmt)


def _norm(X: DLArray, dim: int, p: float) -> DLArray:
    """``vecnorm(X, p, dim)`` of the elements that are not NaN."""
    data, axis = X._data, dim - 1
    present = ~torch.isnan(data)
    norms = torch.linalg.vector_norm(torch.where(present, data, 0.0), ord=p, dim=axis, keepdim=True)
    return DLArray._wrap(_none_left(norms, present.sum(dim=axis, keepdim=True)), X._fmt)


def _none_left(statistic: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """NaN where every element along the dimension was NaN (``count`` 0)."""
    return torch.where(count == 0, torch.nan, statistic)


def _interval(kind: Any) -> tuple[float, float]:
    if kind is None:
        return 0.0, 1.0
    values = kind.tolist() if hasattr(kind, "tolist") else kind
    if (
        isinstance(values, (list, tuple))
        and len(values) == 2
        and all(isinstance(value, numbers.Real) and not isinstance(value, bool) for value in values)
        and values[0] <= values[1]
    ):
        return float(values[0]), float(values[1])
    raise DLFormatError(f"normalize: 'range' takes an interval [a b] with a <= b; got {kind!r}")
