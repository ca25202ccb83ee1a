"""What MATLAB's convolution and pooling layers share: the dimensionality, the properties sized
per slid dimension (``FilterSize``, ``PoolSize``, ``Stride``, ``DilationFactor``, ``Padding``) and
which dimensions of an input the window slides over.

MATLAB's 1-D, 2-D and 3-D layers slide over the input's ``S`` dimensions; an input with one ``S``
fewer and a ``T`` (1-D image sequences for 2-D layers, ``"CBT"`` sequences for 1-D ones) slides
over ``T`` as well (MathWorks, ``convolution1dLayer``, ``convolution2dLayer``,
``maxPooling2dLayer``: "The dimensions that the layer convolves over depends on the layer input").
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any, ClassVar

from .._errors import DLFormatError
from .._tracing import cached_plan
from ..functional import _sliding
from ._base import Layer
from ._properties import REQUIRED, Property

__all__ = [
    "PaddedLayer",
    "WindowLayer",
    "padding_property",
    "padding_views",
    "sizes_property",
    "slid_labels",
]

# How the d-D variants' docstrings say what they slide over and how their window size is given
_SLIDES = {
    1: '``T`` of ``"CBT"`` sequences, or ``S`` of ``"SCB"`` and ``"SCBT"`` data',
    2: 'the two ``S`` of ``"SSCB"`` and ``"SSCBT"`` data, or ``S`` and ``T`` of ``"SCBT"``',
    3: 'the three ``S`` of ``"SSSCB"`` and ``"SSSCBT"`` data, or two ``S`` and ``T`` of ``"SSCBT"``',
}
_SIZES = {
    1: "a positive integer, the {window} length",
    2: "``[h w]``, or one integer for both",
    3: "``[h w d]``, or one integer for all three",
}


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


def padding_views(name: str, modes: str) -> tuple[property, property]:
    """MATLAB's read-only ``<name>Mode`` (``modes``: the words besides ``"manual"``) and
    ``<name>Size`` views of a padding-like property."""
    mode = property(lambda layer: layer._mode(name), doc=f'``"manual"``{modes}.')
    size = property(
        lambda layer: layer._size(name),
        doc=f'The explicit {name.lower()} as MATLAB shows it (``None`` for ``"same"``).',
    )
    return mode, size


class WindowLayer(Layer):
    """Base of the convolution and pooling layers: ``dims`` slid dimensions.

    Subclasses name their per-dimension properties in ``sized`` and their padding-like ones in
    ``padded`` (with the words each accepts); both are normalized once, at construction, with the
    functional core's own checks, so that every call passes ready values.

    A family of layers (max pooling, convolution) is one subclass; its 1-D, 2-D and 3-D variants are
    ``class MaxPooling2DLayer(_MaxPooling, dims=2): ...``, each with MATLAB's kind ``"2-D "`` and the
    family's ``_kind``, and a docstring made of the family's ``_doc_template`` (filled in with
    :meth:`_doc_facts`), MATLAB's read-only views of each ``padded`` property, and the variant's
    own docstring: its Examples section.
    """

    dims: ClassVar[int] = 2
    sized: ClassVar[tuple[str, ...]] = ("Stride",)
    padded: ClassVar[dict[str, tuple[str, ...]]] = {}
    _kind: ClassVar[str] = ""  # MATLAB's kind of the family's variants, after "d-D " ("Max Pooling")
    _matlab_names: ClassVar[str] = ""  # the variants' MATLAB constructors: "maxPooling{dims}dLayer"
    _window: ClassVar[str] = "region"  # what the docstrings call the window: "filter", "region"
    _doc_template: ClassVar[str] = ""
    # more _doc_template fields: a text, or a text per dimensions
    _doc_fields: ClassVar[dict[str, str | dict[int, str]]] = {}

    def __init_subclass__(cls, dims: int = 0, **kwargs: Any) -> None:
        if dims:
            cls.dims = dims
            cls.matlab_type = f"{dims}-D {cls._kind}"
            cls.__doc__ = cls._variant_doc(cls.__doc__ or "")
        super().__init_subclass__(**kwargs)

    @classmethod
    def _variant_doc(cls, examples: str) -> str:
        """The variant's docstring: the family's, then its own ``examples``."""
        doc = cls._doc_template.format(cls=cls, **cls._doc_facts())
        views = "".join(
            f"\n        {name}Mode, {name}Size: MATLAB's read-only views of ``{name}``."
            for name in cls.padded
        )
        if views:
            doc += f"\n    Attributes:{views}\n"
        return f"{doc}\n{textwrap.indent(inspect.cleandoc(examples), '    ')}\n" if examples else doc

    @classmethod
    def _doc_facts(cls) -> dict[str, str]:
        """The fields of ``_doc_template`` besides ``{cls.…}``: the variant's dimensions, MATLAB
        constructor and kind, what it slides over, its window size, and ``_doc_fields``."""
        dims = cls.dims
        return {
            "dims": f"{dims}-D",
            "name": cls._matlab_names.format(dims=dims),
            "kind": cls._kind.lower(),
            "slides": _SLIDES[dims],
            "size": _SIZES[dims].format(window=cls._window),
            **{name: text if isinstance(text, str) else text[dims] for name, text in cls._doc_fields.items()},
        }

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

    PaddingMode, PaddingSize = padding_views("Padding", ', ``"same"`` or (1-D convolution) ``"causal"``')
