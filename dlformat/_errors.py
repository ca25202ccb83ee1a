"""The one error class dlformat raises for bad formats, shapes and values."""

from __future__ import annotations

__all__ = ["DLFormatError", "LayerError", "TensorMethodError"]


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
