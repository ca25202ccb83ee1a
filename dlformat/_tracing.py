"""Make cached, pure planning functions transparent to ``torch.compile``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

F = TypeVar("F", bound=Callable[..., object])


def constant_under_compile(plan: F) -> F:
    """Wrap a pure, cached function of formats and sizes for use inside ``forward``.

    Dynamo calls the wrapper eagerly and folds its result into the graph as a constant,
    instead of tracing through ``functools.lru_cache`` (which it warns about). The
    function must depend on its arguments only.
    """

    def call(*args: object) -> object:
        return plan(*args)

    call.__name__ = getattr(plan, "__name__", "plan")
    call.__doc__ = plan.__doc__
    # What torch.compiler.assume_constant_result does, without importing torch._dynamo at
    # `import dlformat`: that import costs about a second, and on this machine it also made
    # later large first-touch allocations (a 200 MB load) twice as slow. tests/test_compile.py
    # fails if dynamo stops honouring the mark.
    call._dynamo_marked_constant = True  # type: ignore[attr-defined]  # a function attribute dynamo reads
    return cast(F, call)  # it takes and returns what plan does
