"""Cached, pure planning functions that ``torch.compile`` folds into constants."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def constant_under_compile(plan: F) -> F:
    """Wrap a pure function of formats and sizes for use inside ``forward``.

    Dynamo calls the wrapper eagerly and folds its result into the graph as a constant,
    instead of tracing through ``functools.lru_cache`` (which it warns about). The
    function must depend on its arguments only.
    """

    def call(*args: Any) -> Any:
        return plan(*args)

    call.__name__ = getattr(plan, "__name__", "plan")
    call.__doc__ = plan.__doc__
    # What torch.compiler.assume_constant_result does, without importing torch._dynamo at
    # `import dlformat`: that import costs about a second, and on this machine it also made
    # later large first-touch allocations (a 200 MB load) twice as slow. tests/test_compile.py
    # fails if dynamo stops honouring the mark.
    call._dynamo_marked_constant = True  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]


def cached_plan(maxsize: int = 256) -> Callable[[F], F]:
    """Decorator: cache a pure planning function and make it a constant under ``torch.compile``.

    Examples:
        >>> @cached_plan()
        ... def channel_position(fmt):
        ...     return fmt.index("C")
        >>> channel_position("SSCB")
        2
    """

    def decorate(function: F) -> F:
        cached: Any = functools.lru_cache(maxsize=maxsize)(function)
        wrapped: Any = constant_under_compile(cached)
        wrapped.cache_info, wrapped.cache_clear = cached.cache_info, cached.cache_clear
        wrapped.__wrapped__ = function
        return wrapped  # type: ignore[no-any-return]

    return decorate
