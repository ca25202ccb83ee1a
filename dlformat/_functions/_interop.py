"""What a torch function called on a dlarray does: ``DLArray.__torch_function__``'s table.

A torch function with a MATLAB counterpart that dlformat ports keeps the labels by that
counterpart's format rule: the elementwise ones keep the format of their input, the binary ones
align two formatted inputs by label (as ``+ - * /`` do), ``matmul``/``mm``/``@`` follow MATLAB's
``mtimes``. The torch function still computes what torch computes (``torch.round`` rounds halves
to even, ``dlf.round`` as MATLAB does). Every other torch function called on a dlarray is a
DLFormatError naming it, pointing to ``stripdims``/``extractdata`` and, where there is one, to the
MATLAB function that does its work (``torch.sum`` → ``dlf.sum``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch

from .._dlarray import (
    TORCH_FUNCTIONS,
    TORCH_HINTS,
    DLArray,
    _elementwise,
    _keep_types,
    _single_wins,
    logical_and,
    logical_or,
    logical_xor,
    mtimes,
)
from .._errors import DLFormatError
from . import _math
from ._queries import isfloat
from ._shape import numel

__all__ = ["install"]


# torch functions (and their Tensor methods, by the same name) applied elementwise to one dlarray:
# format kept. torch.nn.functional's relu, gelu, leaky_relu, sigmoid and tanh have these names too.
_UNARY = (
    "exp", "log", "sqrt", "abs", "absolute", "neg", "negative", "sin", "cos", "tan", "asin", "arcsin",
    "acos", "arccos", "atan", "arctan", "sinh", "cosh", "tanh", "asinh", "arcsinh", "acosh", "arccosh",
    "atanh", "arctanh", "erf", "sign", "floor", "ceil", "trunc", "fix", "round", "square", "sigmoid",
    "relu", "gelu", "leaky_relu", "isnan", "isinf", "isfinite", "logical_not", "clone", "detach",
    "__neg__", "__abs__", "__invert__",
)  # fmt: skip

# torch functions of two arrays, label-aligned: name → (operation, compares)
_BINARY: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {
    "add": (operator.add, False),
    "sub": (operator.sub, False),
    "subtract": (operator.sub, False),
    "mul": (operator.mul, False),
    "multiply": (operator.mul, False),
    "div": (operator.truediv, False),
    "divide": (operator.truediv, False),
    "true_divide": (operator.truediv, False),
    "pow": (operator.pow, False),
    "remainder": (_math.mod, False),
    "fmod": (_math.rem, False),
    "atan2": (torch.atan2, False),
    "arctan2": (torch.atan2, False),
    "maximum": (torch.maximum, False),
    "minimum": (torch.minimum, False),
    "fmax": (torch.fmax, False),
    "fmin": (torch.fmin, False),
    "eq": (operator.eq, True),
    "ne": (operator.ne, True),
    "not_equal": (operator.ne, True),
    "lt": (operator.lt, True),
    "less": (operator.lt, True),
    "le": (operator.le, True),
    "less_equal": (operator.le, True),
    "gt": (operator.gt, True),
    "greater": (operator.gt, True),
    "ge": (operator.ge, True),
    "greater_equal": (operator.ge, True),
    "logical_and": (logical_and, False),
    "logical_or": (logical_or, False),
    "logical_xor": (logical_xor, False),
    "bitwise_and": (logical_and, False),  # dynamo's reflected &
    "bitwise_or": (logical_or, False),
}
# Tensor's operators: name → the binary entry; the reflected ones (__rsub__) swap the operands back
_DUNDERS = {
    "__add__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__truediv__": "div",
    "__div__": "div",
    "__pow__": "pow",
    "__mod__": "remainder",
    "__eq__": "eq",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__and__": "logical_and",
    "__or__": "logical_or",
}

# an unported torch function's name → the MATLAB function that does its work
_HINTS = {
    "sum": "dlformat.sum (MATLAB's sum: dimensions from 1, or labels)",
    "nansum": "dlformat.sum",
    "mean": "dlformat.mean",
    "prod": "dlformat.prod",
    "max": "dlformat.max",
    "amax": "dlformat.max(X, [], dim)",
    "min": "dlformat.min",
    "amin": "dlformat.min(X, [], dim)",
    "argmax": "dlformat.max(X, [], dim, nargout=2) (1-based indices)",
    "argmin": "dlformat.min(X, [], dim, nargout=2) (1-based indices)",
    "cumsum": "dlformat.cumsum",
    "any": "dlformat.any",
    "all": "dlformat.all",
    "norm": "dlformat.norm or dlformat.vecnorm",
    "vector_norm": "dlformat.vecnorm",
    "cat": 'dlformat.cat (by label: cat("T", A, B))',
    "concat": "dlformat.cat",
    "concatenate": "dlformat.cat",
    "stack": "dlformat.cat along a singleton label",
    "reshape": "dlformat.reshape (MATLAB's: column-major, unformatted result)",
    "view": "dlformat.reshape",
    "flatten": "dlformat.reshape",
    "permute": "stripdims(X, fmt) for another order",
    "transpose": "stripdims(X, fmt) for another order",
    "t": "dlformat.transpose",
    "squeeze": "dlformat.squeeze",
    "unsqueeze": "dlarray(X, fmt) with an added label",
    "flip": "dlformat.flip",
    "roll": "dlformat.circshift",
    "tile": "dlformat.repmat",
    "repeat": "dlformat.repmat",
    "bmm": "dlformat.pagemtimes",
    "softmax": "dlformat.functional.softmax",
    "log_softmax": "dlformat.functional.softmax",
    "linear": "dlformat.functional.fullyconnect",
    "layer_norm": "dlformat.functional.layernorm",
    "embedding": "dlformat.functional.embed",
    "scaled_dot_product_attention": "dlformat.functional.attention",
    "where": "logical masks: X .* mask, or X[mask] = value",
    "equal": "dlformat.isequal (sizes, values and formats)",
    "isreal": "dlformat.isreal (MATLAB's: one answer for the array)",
    "is_complex": "not dlformat.isreal(X)",
    "normalize": 'dlformat.normalize(X, dim, "norm", p)',
    "std": "dlformat.normalize(X, dim) for a z-score (MATLAB's std itself is not ported)",
}


def _keep_format(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    X, *rest = args
    if not isinstance(X, DLArray) or any(isinstance(value, DLArray) for value in (*rest, *kwargs.values())):
        raise _misplaced(func)
    return DLArray._wrap(func(X._data, *rest, **kwargs), X._fmt)


def _aligned(
    name: str, op: Callable[[Any, Any], Any], exact: bool, reflected: bool = False
) -> Callable[..., Any]:
    def handler(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len(args) != 2 or kwargs:
            raise DLFormatError(
                f"torch {name} with further arguments ({', '.join(map(str, kwargs)) or 'positional'}) has no "
                "dlarray rule in dlformat; use the operator (X + Y, X * Y, ...) or stripdims"
            )
        left, right = (args[1], args[0]) if reflected else args
        return _elementwise(op, left, right, _keep_types if exact else _single_wins)

    return handler


def _misplaced(function: Any) -> DLFormatError:
    name = torch.overrides.resolve_name(function) or getattr(function, "__name__", repr(function))
    return DLFormatError(
        f"{name} takes a dlarray as its data argument only (the first); use stripdims on the others"
    )


def _matmul(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> DLArray:
    if len(args) != 2 or kwargs:
        raise DLFormatError("torch matmul with further arguments has no dlarray rule; use A @ B or stripdims")
    if func is torch.Tensor.matmul and torch.compiler.is_compiling() and _one_plain_matrix(*args):
        # dynamo hands both A @ W and W @ A (a dlarray A, a tensor W) over as Tensor.matmul(W, A): the
        # order is lost, and a product must not silently come out transposed
        raise DLFormatError(
            "under torch.compile, A @ B between a dlarray and a plain tensor cannot be traced in the right "
            "order; write dlformat.mtimes(A, B)"
        )
    return mtimes(*args)


def _one_plain_matrix(a: Any, b: Any) -> bool:
    """One operand a dlarray and the other a plain tensor, neither a scalar (scalar products commute)."""
    if isinstance(a, DLArray) == isinstance(b, DLArray):
        return False
    return all((value._data if isinstance(value, DLArray) else value).numel() != 1 for value in (a, b))


def _numel(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    return numel(*args)


def _is_floating_point(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return isfloat(*args, **kwargs)


def install() -> None:
    """Fill dlformat._dlarray's tables (once, at import)."""
    for name in _UNARY:
        TORCH_FUNCTIONS[name] = _keep_format
    for name, (op, exact) in _BINARY.items():
        TORCH_FUNCTIONS[name] = _aligned(name, op, exact)
    for dunder, name in _DUNDERS.items():
        op, exact = _BINARY[name]
        TORCH_FUNCTIONS[dunder] = _aligned(dunder, op, exact)
        TORCH_FUNCTIONS["__r" + dunder[2:]] = _aligned("__r" + dunder[2:], op, exact, reflected=True)
    for name in ("matmul", "mm", "__matmul__"):
        TORCH_FUNCTIONS[name] = _matmul
    TORCH_FUNCTIONS["__rmatmul__"] = lambda func, args, kwargs: _matmul(func, args[::-1], kwargs)
    TORCH_FUNCTIONS["numel"] = _numel
    TORCH_FUNCTIONS["is_floating_point"] = _is_floating_point
    TORCH_HINTS.update(_HINTS)


install()
