"""MATLAB's ``dlfeval``: evaluate a model-loss function with automatic differentiation on.

MATLAB traces every dlarray passed to ``dlfeval`` so that ``dlgradient`` can differentiate with
respect to it. Here ``dlfeval`` turns autograd on, passes each floating dlarray argument (also
inside tuples, lists, dicts and Learnables tables) as a traced alias of the same data
(``requires_grad``, no copy), and marks the call so ``dlgradient`` can tell it runs inside one.
Network learnables are ``nn.Parameter``s, traced already.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from .._display import Table
from .._dlarray import DLArray
from .._errors import DLFormatError

__all__ = ["dlfeval", "inside_dlfeval"]

_state = threading.local()


def inside_dlfeval() -> bool:
    """Whether the calling thread runs inside a ``dlfeval`` call."""
    return getattr(_state, "depth", 0) > 0


@contextmanager
def _evaluating() -> Iterator[None]:
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        with torch.enable_grad():
            yield
    finally:
        _state.depth -= 1


def _traced(value: Any) -> Any:
    """``value`` with every floating dlarray in it traced (an alias that requires grad)."""
    if isinstance(value, DLArray):
        data = value._data
        if data.requires_grad or not (data.is_floating_point() or data.is_complex()):
            return value
        return DLArray._wrap(data.detach().requires_grad_(), value._fmt)
    if isinstance(value, tuple):
        return tuple(_traced(item) for item in value)
    if isinstance(value, list):
        return [_traced(item) for item in value]
    if isinstance(value, dict):
        return {key: _traced(item) for key, item in value.items()}
    if isinstance(value, Table):
        return Table(value.columns, [tuple(_traced(cell) for cell in row) for row in value.rows])
    return value


def dlfeval(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """MATLAB's ``[y1, ..., yk] = dlfeval(fun, x1, ..., xn)``: ``fun(x1, ..., xn)`` with autograd on.

    Every floating dlarray argument is traced, so ``dlgradient`` inside ``fun`` can differentiate
    with respect to it; a network's learnables are traced as parameters. Returns what ``fun``
    returns (a tuple for several outputs). Keyword arguments are passed on as they are.

    Examples:
        >>> def f(x):
        ...     y = x * x * 3
        ...     return dlf.dlgradient(dlf.dlarray(dlf.stripdims(y).sum()), x)
        >>> g = dlf.dlfeval(f, dlf.dlarray(torch.tensor([1.0, 2.0]), "C"))
        >>> dlf.dims(g), dlf.extractdata(g).tolist()
        ('C', [6.0, 12.0])
    """
    if not callable(fun):
        raise DLFormatError(
            f"dlfeval needs a function to evaluate (MATLAB's function handle @modelLoss) as its first "
            f"argument; got {type(fun).__name__}"
        )
    traced = [_traced(value) for value in args]
    with _evaluating():
        return fun(*traced, **kwargs)
