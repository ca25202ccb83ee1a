"""The one error class dlformat raises for bad formats, shapes and values."""

from __future__ import annotations

__all__ = ["DLFormatError"]


class DLFormatError(ValueError):
    """A format, shape, property or file that dlformat cannot accept.

    Every message names the offending value and says what is allowed instead.
    It subclasses :class:`ValueError`, so code that already catches bad values
    keeps working.
    """
