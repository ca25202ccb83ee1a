"""MATLAB's calling habits for Python callables: Name,Value pairs and case-insensitive names.

MATLAB writes options two ways, ``fullyConnectedLayer(10, Name="fc")`` and
``fullyConnectedLayer(10, 'Name', 'fc')``, and matches option names regardless of case.
:func:`normalize` turns either form into Python keywords against a callable's signature,
before the call, so every layer constructor and functional function accepts both. The
parsing looks at names and argument counts only, never at tensors.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from ._errors import DLFormatError

__all__ = ["Options", "matlab_function", "normalize"]

F = TypeVar("F", bound=Callable[..., Any])


class Options:
    """What :func:`normalize` needs to know of one signature, computed once."""

    __slots__ = ("exact", "lowered", "names", "positional", "required")

    def __init__(self, signature: inspect.Signature) -> None:
        parameters = list(signature.parameters.values())
        positional = [
            parameter
            for parameter in parameters
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
        ]
        self.positional = len(positional)
        # optional positional arguments may be left out and 'Name', value pairs take their place
        # (MATLAB's batchnorm(X, offset, scaleFactor, 'Epsilon', 1e-3))
        self.required = sum(parameter.default is parameter.empty for parameter in positional)
        keywords = [
            parameter.name
            for parameter in parameters
            if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
        ]
        self.exact = frozenset(keywords)
        self.lowered = {name.lower(): name for name in keywords}
        # the Name=Value options a MATLAB user would write: keyword-only, capitalized as MATLAB's
        self.names = tuple(
            parameter.name
            for parameter in parameters
            if parameter.kind is parameter.KEYWORD_ONLY and parameter.name[:1].isupper()
        )


def _option_name(options: Options, key: object) -> str | None:
    if isinstance(key, str):
        return options.lowered.get(key.lower())
    return None


def normalize(
    caller: str, options: Options, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``args`` and ``kwargs`` with trailing ``'Name', value`` pairs and any-case names made keywords.

    Pairs are read from the first positional string that names an option and leaves an
    even number of arguments; from there on every other argument must be an option name.
    An unknown or repeated name is a :class:`DLFormatError` naming
    ``caller`` and listing the options.
    """
    if all(key in options.exact for key in kwargs) and not any(
        isinstance(value, str) for value in args[options.required :]
    ):
        return args, kwargs  # the common case: no 'Name', value pair can start, nothing to translate
    start = next(
        (
            index
            for index in range(len(args))
            if _option_name(options, args[index]) is not None and (len(args) - index) % 2 == 0
        ),
        # past the required arguments, a string that leaves an even number of arguments starts the
        # pairs even if it names no option: it is then reported as an unknown option, not as "too
        # many positional arguments" or taken for an optional argument's value
        next(
            (
                index
                for index in range(options.required, len(args))
                if isinstance(args[index], str) and (len(args) - index) % 2 == 0
            ),
            len(args),
        ),
    )
    pairs = list(zip(args[start::2], args[start + 1 :: 2], strict=True))
    named: dict[str, Any] = {}
    for key, value in [*pairs, *kwargs.items()]:
        canonical = _option_name(options, key)
        if canonical is None:
            shown = f"'{key}'" if isinstance(key, str) else repr(key)
            raise DLFormatError(
                f"{caller} has no option {shown}; the options are: {', '.join(options.names) or 'none'}"
            )
        if canonical in named:
            raise DLFormatError(f"{caller} got option '{canonical}' twice")
        named[canonical] = value
    return args[:start], named


@overload
def matlab_function(function: F, /) -> F: ...
@overload
def matlab_function(*, shared: Mapping[str, Any]) -> Callable[[F], F]: ...
def matlab_function(function: F | None = None, /, *, shared: Mapping[str, Any] | None = None) -> Any:
    """Let ``function`` take MATLAB's ``'Name', value`` pairs and any-case option names.

    ``shared`` declares, once, options that a family of MATLAB functions has in common (the
    losses' ``Mask``, ``NormalizationFactor``, ``Reduction``...), name to default: the function
    takes them as ``**options``, filled with the defaults, and its signature (``help``,
    ``inspect.signature``) lists them as keyword-only options before its own.

    Examples:
        >>> @matlab_function
        ... def softmax(X, *, DataFormat=None):
        ...     return DataFormat
        >>> softmax(1, "dataformat", "CB")
        'CB'
        >>> @matlab_function(shared={"Reduction": "sum", "DataFormat": None})
        ... def loss(Y, **options):
        ...     return options
        >>> loss(1, "reduction", "none")
        {'Reduction': 'none', 'DataFormat': None}
        >>> inspect.signature(loss)
        <Signature (Y, *, Reduction='sum', DataFormat=None)>
    """
    if function is None:
        return functools.partial(_wrapped, shared=dict(shared or {}))
    return _wrapped(function, {})


def _wrapped(function: F, shared: dict[str, Any]) -> F:
    signature = inspect.signature(function)
    if shared:
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        # the family's options first, then the function's own
        first_own = next((i for i, p in enumerate(own) if p.kind is p.KEYWORD_ONLY), len(own))
        declared = [
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=value)
            for key, value in shared.items()
        ]
        signature = signature.replace(parameters=[*own[:first_own], *declared, *own[first_own:]])
    options = Options(signature)
    name = function.__name__

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = normalize(name, options, args, kwargs)
        if shared:
            kwargs = {**shared, **kwargs}
        return function(*args, **kwargs)

    call.__signature__ = signature  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]
