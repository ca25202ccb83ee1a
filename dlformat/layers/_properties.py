"""Declaring a layer's MATLAB properties: each once, as a class attribute.

- :class:`Property`: a value such as ``OutputSize``, with its check, default, read-only flag
  and display group;
- :class:`Learnable`: a learnable parameter such as ``Weights`` (an ``nn.Parameter``), with the
  property that holds its initializer;
- :class:`Factor`: a learn-rate or L2 factor property such as ``WeightL2Factor``;
- :class:`PerChannel`: the shape of a per-channel learnable or state value (``Offset``,
  ``TrainedMean``), whose size MATLAB sets by the layer's input.

:class:`dlformat.layers._base.Layer` derives the constructor signature, assignment, config and
display from these declarations.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import torch

from .. import _validate
from .._errors import DLFormatError
from . import _initializers

if TYPE_CHECKING:
    from ._base import Layer

__all__ = [
    "REQUIRED",
    "Factor",
    "Learnable",
    "Named",
    "PerChannel",
    "Property",
    "StateParameter",
    "choice_property",
    "factor_properties",
    "initializer_property",
]

FACTOR_KINDS = ("LearnRateFactor", "L2Factor")
# a factor's value: a scalar, or one per gate where a recurrent layer takes a vector
FactorValue = float | tuple[float, ...]
LEARNABLE_GROUP = "Learnable Parameters"
STATE_GROUP = "State Parameters"
FACTOR_GROUP = "Learning Rate and Regularization"
INITIALIZER_GROUP = "Parameters and Initialization"


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()  # the default of a property the constructor must be given


class Named:
    """A class-attribute declaration that knows the name it is assigned to."""

    name: str

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


class Property(Named):
    """One MATLAB property of a layer, declared once.

    Args:
        check: ``check(name, value) -> canonical value``, raising :class:`DLFormatError`;
            ``None`` accepts any value.
        default: the constructor default; :data:`REQUIRED` makes the argument required.
        positional: the constructor takes it positionally, in declaration order, as MATLAB's
            constructor does (``fullyConnectedLayer(outputSize)``); otherwise it is a keyword.
        read_only: set only by the constructor, as MATLAB's read-only properties.
        group: the heading it is displayed under (``""``: the top block).
        buffer: the value is a tensor (or ``None``) kept as a module buffer, so that ``.to()``
            moves it and ``state_dict`` carries it (an input layer's ``Mean``).
        doc: the property's docstring.
    """

    def __init__(
        self,
        check: Callable[[str, Any], Any] | None = None,
        *,
        default: Any = REQUIRED,
        positional: bool = False,
        read_only: bool = False,
        group: str = "",
        buffer: bool = False,
        doc: str = "",
    ) -> None:
        self.check = check
        self.buffer = buffer
        self.default = default
        self.positional = positional
        self.read_only = read_only
        self.group = group
        self.__doc__ = doc

    def __get__(self, layer: Layer | None, owner: type | None = None) -> Any:
        if layer is None:
            return self
        if self.buffer:  # a state value reads as the running network call has it (see _call_state)
            return layer._state_value(self.name)
        return layer._properties[self.name]

    def __set__(self, layer: Layer, value: Any) -> None:
        if self.read_only and layer.__dict__.get("_constructed"):
            raise DLFormatError(
                f"You cannot set the read-only property '{self.name}' of {type(layer).__name__}; "
                f"create a new layer with {self.name}={value!r} instead"
            )
        self.initialize(layer, value)

    def initialize(self, layer: Layer, value: Any) -> None:
        """Set the value from the constructor, read-only or not."""
        value = value if self.check is None else self.check(self.name, value)
        if self.buffer:
            layer._buffers[self.name] = value  # register_buffer would refuse: the class attribute exists
        else:
            layer._properties[self.name] = value


def initializer_property(
    default: str,
    doc: str = "Initializer name or callable f(sz).",
    names: tuple[str, ...] = _initializers.NAMES,
) -> Property:
    """A ``WeightsInitializer``-style property: one of MATLAB's initializer ``names`` or a callable."""
    check = _initializers.check if names == _initializers.NAMES else partial(_initializers.check, names=names)
    return Property(check, default=default, group=INITIALIZER_GROUP, doc=doc)


def matlab_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` as MATLAB's ``size`` gives it: trailing singleton dimensions after the second
    dropped (a 1×1×1 array is 1×1; a 3×1×1 array is 3×1)."""
    while len(shape) > 2 and shape[-1] == 1:
        shape = shape[:-1]
    return shape


# the input kinds of MathWorks' size tables, by their number of spatial ("S") dimensions
_KINDS = ("feature or sequence", "1-D image", "2-D image", "3-D image")


class PerChannel:
    """The shape of a per-channel vector (``Offset``, ``Scale``, ``TrainedMean``, ...): one value
    per channel, their number held by the property named ``count`` (``"NumChannels"``).

    MathWorks' layer pages give its size by the layer's input ("Depending on the type of layer
    input, the trainnet and dlnetwork functions automatically reshape this property"):
    ``NumChannels×1`` for feature and (vector) sequence input, ``1×NumChannels`` for 1-D image
    (sequence) input, ``1×1×NumChannels`` for 2-D and ``1×1×1×NumChannels`` for 3-D image
    (sequence) input. Every one of these sizes is accepted; until the layer's input is known a
    value keeps the size it was given in, and the layer's first input sets its size.
    """

    def __init__(self, count: str) -> None:
        self.count = count

    @staticmethod
    def size(channels: int, spatial: int) -> tuple[int, ...]:
        """The size for input with ``spatial`` "S" dimensions (0 to 3): MathWorks' table."""
        return matlab_shape((*(1,) * spatial, channels)) if spatial else (channels, 1)

    @classmethod
    def sizes(cls, channels: int) -> tuple[tuple[int, ...], ...]:
        """Every documented size of ``channels`` values, one per input kind (once each)."""
        return tuple(dict.fromkeys(cls.size(channels, spatial) for spatial in range(len(_KINDS))))

    def allowed(self, channels: int) -> str:
        """The documented sizes in words, for errors."""
        sizes = [_validate.matlab_size(size) for size in self.sizes(channels)]
        listed = sizes[0] if len(sizes) == 1 else f"{', '.join(sizes[:-1])} or {sizes[-1]}"
        named: list[tuple[int | str, ...]] = [(self.count, 1)]
        named += [(*(1,) * spatial, self.count) for spatial in range(1, len(_KINDS))]
        rule = ", ".join(
            f"{_validate.matlab_size(size)} for {kind}" for size, kind in zip(named, _KINDS, strict=True)
        )
        return f"{listed} (one value per channel: {rule} input)"


class Learnable(Named):
    """A learnable parameter declared on a layer class (``Weights = Learnable(...)``).

    The constructor takes it as a keyword (initial values, copied and checked against
    ``_learnable_shape``); otherwise it is drawn with the initializer held by the property
    named ``initializer`` once its size is known. The declaration leaves the class at
    creation: the value lives in the module's ``_parameters``, as for any ``nn.Module``.
    """

    def __init__(
        self, *, initializer: str, shape: tuple[str | int, ...] | PerChannel = (), doc: str = ""
    ) -> None:
        self.initializer = initializer
        self.shape = shape  # property names (or sizes): ("OutputSize", "InputSize"); or PerChannel
        self.__doc__ = doc

    if TYPE_CHECKING:  # the declaration leaves the class; the attribute is then the module's parameter

        def __get__(self, layer: Layer | None, owner: type | None = None) -> torch.Tensor: ...


class StateParameter(Named):
    """A state value declared on a layer class (``TrainedMean = StateParameter(...)``), MATLAB's
    ``properties (State)``: a buffer, listed in the layer's ``State`` and the network's ``State``.

    The constructor takes it as a keyword (initial values, copied and checked against
    ``shape``); otherwise it starts as ``initial`` (``"zeros"`` or ``"ones"``) once its size
    is known. Like :class:`Learnable`, the declaration leaves the class: the value lives in
    the module's ``_buffers``.
    """

    def __init__(self, *, initial: str, shape: tuple[str | int, ...] | PerChannel, doc: str = "") -> None:
        if initial not in ("zeros", "ones"):
            raise ValueError(f"initial must be 'zeros' or 'ones'; got {initial!r}")
        self.initial = initial
        self.shape = shape
        self.__doc__ = doc

    if TYPE_CHECKING:  # the declaration leaves the class; the attribute is then the module's buffer

        def __get__(self, layer: Layer | None, owner: type | None = None) -> torch.Tensor: ...


class Factor(Named):
    """A MATLAB factor property such as ``WeightLearnRateFactor``, declared once.

    It sets one factor of one or more learnables (``selfAttentionLayer``'s
    ``WeightLearnRateFactor`` covers all four weight matrices); reading it gives the common
    value, or a tuple when ``setLearnRateFactor`` has made them differ.
    """

    group = FACTOR_GROUP
    positional = False
    read_only = False

    def __init__(self, parameters: str | tuple[str, ...], kind: str, *, default: float = 1.0) -> None:
        self.parameters = (parameters,) if isinstance(parameters, str) else parameters
        self.kind = kind
        self.default = default
        self.__doc__ = f"The {kind} of {', '.join(self.parameters)} (finite, >= 0; default {default:g})."

    def __get__(self, layer: Layer | None, owner: type | None = None) -> Any:
        if layer is None:
            return self
        values = tuple(layer._factors[parameter][self.kind] for parameter in self.parameters)
        return values[0] if len(set(values)) == 1 else values

    def __set__(self, layer: Layer, value: Any) -> None:
        value = _validate.factor(self.name, value)
        for parameter in self.parameters:
            layer._factors[parameter][self.kind] = value

    def initialize(self, layer: Layer, value: Any) -> None:
        self.__set__(layer, value)


def factor_properties(parameters: str | tuple[str, ...], *, l2: float = 1.0) -> tuple[Factor, Factor]:
    """The ``LearnRateFactor`` (default 1) and ``L2Factor`` (default ``l2``) properties of learnables:
    ``WeightLearnRateFactor, WeightL2Factor = factor_properties("Weights")``."""
    return Factor(parameters, "LearnRateFactor"), Factor(parameters, "L2Factor", default=l2)


def choice_property(allowed: tuple[str, ...], default: str, doc: str, *, group: str = "") -> Property:
    """A read-only property holding one of ``allowed`` (matched case-insensitively, as MATLAB does)."""
    check = partial(_validate.choice, allowed=allowed)
    return Property(check, default=default, read_only=True, group=group, doc=doc)


def auto_size_property(doc: str) -> Property:
    """A read-only size that is ``"auto"`` (fixed by the first input, or by ``initialize``) or a
    positive integer: ``InputSize``, ``NumChannels``, ``NumValueChannels``, ..."""
    return Property(_validate.auto_or_positive, default="auto", read_only=True, doc=doc)
