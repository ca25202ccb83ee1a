"""MATLAB's elementwise functions on dlarrays: each keeps its input's format.

MATLAB's rule (List of Functions with dlarray Support): a unary elementwise function returns a
dlarray with its input's format; a binary one aligns two formatted inputs by label (implicit
expansion with data formats) and returns the combination of both formats, as ``+ - * /`` do.
Logical results (``isnan``, ``==``, ``&`` ...) are logical dlarrays with the format.

The functions take what MATLAB's dlarray holds: floating or logical data (logical computes as
single, torch's default dtype); the transcendental ones refuse integer data, naming the function.
Anything that is not a dlarray (a tensor, a NumPy array, a number) is taken as an unformatted
dlarray, and the result is one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

from .._categorical import Categorical
from .._dlarray import DLArray, _elementwise, _keep_types, _numeric, as_dlarray, dlarray, logical_xor
from .._errors import DLFormatError
from ..functional._activations import relu, sigmoid  # the functional core's, exported here too
from ..functional._common import floating_data
from . import _math

__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "cos",
    "cosh",
    "cot",
    "csc",
    "eq",
    "erf",
    "exp",
    "fix",
    "floor",
    "ge",
    "gt",
    "isfinite",
    "isinf",
    "isnan",
    "ldivide",
    "le",
    "log",
    "lt",
    "minus",
    "mod",
    "ne",
    "plus",
    "power",
    "rdivide",
    "relu",
    "rem",
    "round",
    "sec",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "times",
    "uminus",
    "uplus",
    "xor",
]


def _unary(
    name: str, function: Callable[[torch.Tensor], torch.Tensor], what: str, *, floating: bool = True
) -> Callable[[Any], DLArray]:
    """MATLAB's elementwise ``name``: ``function`` on the data, the format kept."""

    def apply(X: Any) -> DLArray:
        X = as_dlarray(X)
        data = floating_data(X._data, name) if floating else _numeric(X._data)
        return DLArray._wrap(function(data), X._fmt)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (
        f"MATLAB's ``{name}``: {what}, elementwise; the result keeps the format of ``X``.\n\n"
        f"Examples:\n"
        f'    >>> dlf.dims(dlf.{name}(dlf.dlarray(torch.rand(3, 2) / 2, "CB")))\n'
        f"    'CB'\n"
    )
    return apply


def _logical_test(
    name: str, function: Callable[[torch.Tensor], torch.Tensor], what: str
) -> Callable[[Any], DLArray]:
    def apply(X: Any) -> DLArray:
        X = as_dlarray(X)
        return DLArray._wrap(function(X._data), X._fmt)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (
        f"MATLAB's ``{name}``: true where ``X`` {what}; a logical dlarray with the format of ``X``."
    )
    return apply


def _sec(data: torch.Tensor) -> torch.Tensor:
    return 1 / torch.cos(data)


def _csc(data: torch.Tensor) -> torch.Tensor:
    return 1 / torch.sin(data)


def _cot(data: torch.Tensor) -> torch.Tensor:
    return 1 / torch.tan(data)


def _sign(data: torch.Tensor) -> torch.Tensor:
    # MATLAB's sign(NaN) is NaN; torch.sign gives 0
    return (
        torch.where(torch.isnan(data), data, torch.sign(data))
        if data.is_floating_point()
        else torch.sign(data)
    )


exp = _unary("exp", torch.exp, "the exponential e^x")
log = _unary(
    "log", torch.log, "the natural logarithm (NaN for negative x, where MATLAB gives complex values)"
)
sqrt = _unary("sqrt", torch.sqrt, "the square root (NaN for negative x, where MATLAB gives complex values)")
sin = _unary("sin", torch.sin, "the sine, in radians")
cos = _unary("cos", torch.cos, "the cosine, in radians")
tan = _unary("tan", torch.tan, "the tangent, in radians")
sec = _unary("sec", _sec, "the secant 1/cos(x)")
csc = _unary("csc", _csc, "the cosecant 1/sin(x)")
cot = _unary("cot", _cot, "the cotangent 1/tan(x)")
asin = _unary("asin", torch.asin, "the inverse sine")
acos = _unary("acos", torch.acos, "the inverse cosine")
atan = _unary("atan", torch.atan, "the inverse tangent")
sinh = _unary("sinh", torch.sinh, "the hyperbolic sine")
cosh = _unary("cosh", torch.cosh, "the hyperbolic cosine")
tanh = _unary("tanh", torch.tanh, "the hyperbolic tangent")
asinh = _unary("asinh", torch.asinh, "the inverse hyperbolic sine")
acosh = _unary("acosh", torch.acosh, "the inverse hyperbolic cosine")
atanh = _unary("atanh", torch.atanh, "the inverse hyperbolic tangent")
erf = _unary("erf", torch.erf, "the error function")
abs = _unary("abs", torch.abs, "the absolute value", floating=False)
sign = _unary("sign", _sign, "the sign (-1, 0 or 1; NaN for NaN)", floating=False)
floor = _unary("floor", torch.floor, "rounding toward minus infinity", floating=False)
ceil = _unary("ceil", torch.ceil, "rounding toward plus infinity", floating=False)
fix = _unary("fix", _math.fix, "rounding toward zero", floating=False)
uminus = _unary("uminus", torch.neg, "the negation -x", floating=False)
isnan = _logical_test("isnan", torch.isnan, "is NaN")
isinf = _logical_test("isinf", torch.isinf, "is infinite")
isfinite = _logical_test("isfinite", torch.isfinite, "is finite")


def round(X: Any, N: int = 0) -> DLArray:
    """MATLAB's ``round(X)`` and ``round(X, N)``: to the nearest integer (or ``N`` decimal digits),
    halves away from zero as MATLAB rounds them (torch rounds halves to even); the format is kept.

    Examples:
        >>> dlf.extractdata(dlf.round(dlf.dlarray(torch.tensor([0.5, 1.5, -2.5]), "C")))
        tensor([ 1.,  2., -3.])
    """
    X = as_dlarray(X)
    if isinstance(N, bool) or not isinstance(N, int):
        raise DLFormatError(f"round: the number of digits N must be an integer; got {N!r}")
    return DLArray._wrap(_math.round_half_away(_numeric(X._data), N), X._fmt)


def uplus(X: Any) -> DLArray:
    """MATLAB's ``uplus`` (``+X``): ``X`` itself."""
    return as_dlarray(X)


def _pair(name: str, op: Callable[[Any, Any], Any], exact: bool = False) -> Callable[[Any, Any], DLArray]:
    """MATLAB's binary elementwise ``name``: label-aligned as ``+ - * /`` are; the relational ones
    (``exact``) compare categorical arrays as MATLAB's do (a NumPy ``bool`` array)."""

    def apply(A: Any, B: Any) -> DLArray:
        if exact and (isinstance(A, Categorical) or isinstance(B, Categorical)):
            return op(A, B)  # type: ignore[no-any-return]  # Categorical's own comparison
        if not isinstance(A, DLArray) and not isinstance(B, DLArray):
            A = dlarray(A)
        if exact:
            return _elementwise(op, A, B, _keep_types)
        return _elementwise(op, A, B)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (
        f"MATLAB's ``{name}(A, B)``: elementwise; two formatted inputs align by label and the result has "
        "both their labels (docs/formats.md#arithmetic); otherwise the formatted input's format is kept."
    )
    return apply


plus = _pair("plus", operator.add)
minus = _pair("minus", operator.sub)
times = _pair("times", operator.mul)
rdivide = _pair("rdivide", operator.truediv)
ldivide = _pair("ldivide", _math.ldivide)
power = _pair("power", operator.pow)
mod = _pair("mod", _math.mod)
rem = _pair("rem", _math.rem)
atan2 = _pair("atan2", torch.atan2)
eq = _pair("eq", operator.eq, exact=True)
ne = _pair("ne", operator.ne, exact=True)
lt = _pair("lt", operator.lt, exact=True)
le = _pair("le", operator.le, exact=True)
gt = _pair("gt", operator.gt, exact=True)
ge = _pair("ge", operator.ge, exact=True)
xor = _pair("xor", logical_xor)

mod.__doc__ = (
    "MATLAB's ``mod(A, B)`` (Python's ``A % B``): ``A - floor(A./B).*B``, with the sign of ``B``; "
    "``mod(A, 0)`` is ``A``. Label-aligned as ``+ - * /`` are."
)
rem.__doc__ = (
    "MATLAB's ``rem(A, B)``: ``A - fix(A./B).*B``, with the sign of ``A``; ``rem(A, 0)`` is NaN. "
    "Label-aligned as ``+ - * /`` are."
)
xor.__doc__ = "MATLAB's ``xor(A, B)``: true where exactly one is nonzero; a logical dlarray, label-aligned."
ldivide.__doc__ = (
    "MATLAB's ``ldivide(A, B)`` (``A .\\ B``): ``B ./ A``, elementwise; label-aligned as ``+ - * /`` are."
)
atan2.__doc__ = "MATLAB's ``atan2(Y, X)``: the four-quadrant inverse tangent, label-aligned."
