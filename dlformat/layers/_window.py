"""What MATLAB's convolution and pooling layers share: the dimensionality, the properties sized
per slid dimension (``FilterSize``, ``PoolSize``, ``Stride``, ``DilationFactor``, ``Padding``) and
which dimensions of an input the window slides over.

MATLAB's 1-D, 2-D and 3-D layers slide over the input's ``S`` dimensions; an input with one ``S``
fewer and a ``T`` (1-D image sequences for 2-D layers, ``"CBT"`` sequences for 1-D ones) slides
over ``T`` as well (MathWorks, ``convolution1dLayer``, ``convolution2dLayer``,
``maxPooling2dLayer``: "The dimensions that the layer convolves over depends on the layer input").
"""

from __future__ import annotations

from typing import Any, ClassVar

from .._errors import DLFormatError
from .._tracing import cached_plan
from ..functional import _sliding
from ._base import Layer
from ._properties import REQUIRED, Property

__all__ = ["PaddedLayer", "WindowLayer", "padding_property", "sizes_property", "slid_labels"]


@cached_plan()
def slid_labels(fmt: str, dims: int, caller: str, with_time: bool = True) -> str:
    """The labels a ``dims``-D layer slides over in an input of format ``fmt`` (``"SS"``, ``"ST"``,
    ``"T"``); an error naming the accepted formats otherwise. ``with_time=False`` refuses the form
    where ``T`` stands in for the last ``S``."""
    spatial = fmt.count("S")
    if "C" in fmt and set(fmt) <= set("SCBT") and fmt.count("C") == 1 and fmt.count("T") <= 1:
        if spatial == dims:
            return "S" * dims
        if with_time and spatial == dims - 1 and "T" in fmt:
            return "S" * spatial + "T"
    accepted = ["S" * dims + "CB", "S" * dims + "CBT"]
    if with_time:
        accepted.insert(1, "S" * (dims - 1) + "CBT")
    listed = ", ".join(f'"{form}"' for form in accepted)
    raise DLFormatError(
        f'{caller} takes input of format {listed} ("B" may be absent, as inside a dlnetwork); got "{fmt}"'
    )


def sizes_property(doc: str, *, default: Any = 1, positional: bool = False) -> Property:
    """A size per slid dimension (``Stride``, ``FilterSize``): a positive integer, or one per
    dimension; :meth:`WindowLayer._check_properties` fixes its length to the layer's."""
    return Property(
        default=REQUIRED if positional else default, positional=positional, read_only=True, doc=doc
    )


def padding_property(doc: str) -> Property:
    """MATLAB's ``Padding`` (or ``Cropping``): a word (``"same"``, ``"causal"``) or sizes, checked
    and stored as MATLAB's ``[t b l r]`` order by :meth:`WindowLayer._check_properties`."""
    return Property(default=0, read_only=True, doc=doc)


class WindowLayer(Layer):
    """Base of the convolution and pooling layers: ``dims`` slid dimensions.

    Subclasses name their per-dimension properties in ``sized`` and their padding-like ones in
    ``padded`` (with the words each accepts); both are normalized once, at construction, with the
    functional core's own checks, so that every call passes ready values.
    """

    dims: ClassVar[int] = 2
    sized: ClassVar[tuple[str, ...]] = ("Stride",)
    padded: ClassVar[dict[str, tuple[str, ...]]] = {}

    def _check_properties(self) -> None:
        caller = self._caller()
        for name in self.sized:
            numbers = _sliding.sizes(caller, name, self._properties[name], self.dims)
            self._properties[name] = numbers[0] if self.dims == 1 else numbers
        for name, words in self.padded.items():
            spec = _sliding.padding_spec(caller, name, self._properties[name], self.dims, words)
            flat = spec if isinstance(spec, str) else tuple(amount for pair in spec for amount in pair)
            self._properties[name] = flat

    def _slid(self, fmt: str) -> str:
        return slid_labels(fmt, self.dims, self._caller())

    def _mode(self, name: str) -> str:
        value = self._properties[name]
        return value if isinstance(value, str) else "manual"

    def _size(self, name: str) -> Any:
        """A padding-like property as MATLAB shows it: ``[l r]``, ``[t b l r]``, or for 3-D the
        ``2×3`` matrix ``[t l f; b r k]`` (``None`` while ``"same"`` is computed per input)."""
        value = self._properties[name]
        if isinstance(value, str):
            return None if value == "same" else value
        if self.dims < 3:
            return value
        return (value[0::2], value[1::2])

    def _check_size_limit(self, name: str, limit: str) -> None:
        """Padding smaller than the window along each dimension (MATLAB's pooling rule)."""
        value, window = self._properties[name], self._properties[limit]
        if isinstance(value, str):
            return
        extents = (window,) if self.dims == 1 else window
        for axis, extent in enumerate(extents):
            if max(value[2 * axis : 2 * axis + 2]) >= extent:
                raise DLFormatError(
                    f"{self._caller()}: {name} {list(value)} must be smaller than {limit} "
                    f"{list(extents)} along each dimension, as MATLAB requires"
                )


class PaddedLayer(WindowLayer):
    """A layer with MATLAB's ``Padding`` option, and MATLAB's read-only views of it."""

    @property
    def PaddingMode(self) -> str:
        """``"manual"``, ``"same"`` or (1-D convolution) ``"causal"``."""
        return self._mode("Padding")

    @property
    def PaddingSize(self) -> Any:
        """The explicit padding as MATLAB shows it (``None`` for ``"same"``)."""
        return self._size("Padding")
