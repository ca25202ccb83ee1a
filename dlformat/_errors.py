"""The one error class dlformat raises for bad formats, shapes and values."""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["MESSAGE_LIMIT", "DLFormatError", "LayerError", "TensorMethodError", "cut", "reason", "shown"]

# The most characters of a value an error message quotes: a file or caller may hand over a
# 200 MiB string, which a message must not repeat (issue 24 item 8); and of another message (a
# reader's, a library's) that one quotes whole.
QUOTE_LIMIT = 200
MESSAGE_LIMIT = 2000


def cut(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` for an error message: at most ``limit`` characters, then how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters in all)"


def reason(error: BaseException) -> str:
    """Another error's message, quoted in one's own (a reader's, a library's): cut to
    ``MESSAGE_LIMIT`` characters."""
    return cut(str(error), MESSAGE_LIMIT)


class _Shown(reprlib.Repr):
    """``repr`` that never builds more than a bounded text: long strings, long containers and deep
    nesting are cut before they are converted (``reprlib``), NumPy arrays and tensors described."""

    def __init__(self) -> None:
        super().__init__()
        self.maxstring = self.maxother = self.maxlong = QUOTE_LIMIT
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = self.maxarray = 8
        self.maxlevel = 3

    def repr_instance(self, x: Any, level: int) -> str:
        shape = getattr(x, "shape", None)
        if shape is None or not hasattr(x, "dtype") or not hasattr(x, "reshape"):
            return cut(super().repr_instance(x, level))
        # a NumPy array or torch tensor: its class, size, dtype and first values only
        size = 1
        for length in shape:
            size *= int(length)
        items = x.reshape(-1)[:4].tolist() if size else []
        first = ", ".join(self.repr1(item, level - 1) for item in items)
        more = ", ..." if size > 4 else ""
        sizes = "×".join(str(int(length)) for length in shape) or "scalar"
        return f"{type(x).__name__} {sizes} {x.dtype} [{first}{more}]"


_SHOWN = _Shown()


def shown(value: Any) -> str:
    """``repr(value)`` for an error message quoting what a file or caller gave, cut to a bounded
    length without ever converting all of a huge value (the one helper every such message uses)."""
    return cut(_SHOWN.repr(value))


class DLFormatError(ValueError):
    """A format, shape, property or file that dlformat cannot accept.

    Every message names the offending value and says what is allowed instead.
    It subclasses :class:`ValueError`, so code that already catches bad values
    keeps working.
    """


class TensorMethodError(DLFormatError, AttributeError):
    """A torch tensor method asked of a dlarray (``X.sum()``, ``X.numpy()``): a DLFormatError that is
    also an AttributeError, so ``hasattr`` and ``getattr(X, name, default)`` keep working."""


class LayerError(DLFormatError):
    """A layer's failure inside a network: which layer, and where its inputs came from.

    Attributes:
        layer: the failing layer's name.
        inputs_from: where each of its inputs comes from (``"in1 from 'wordemb', in2 from 'posemb'"``).
        reason: the layer's own message.
    """

    def __init__(self, layer: str, inputs_from: str, reason: str) -> None:
        super().__init__(f"layer '{layer}' ({inputs_from}): {reason}")
        self.layer = layer
        self.inputs_from = inputs_from
        self.reason = reason

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        return type(self), (self.layer, self.inputs_from, self.reason)
