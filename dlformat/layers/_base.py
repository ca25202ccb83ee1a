"""The base every dlformat layer shares: MATLAB properties, learnables, factors, config.

A layer is an ``nn.Module`` first. Its MATLAB face is a set of properties with MATLAB's
names, declared with :class:`Property` (validated on every assignment, read-only where
MATLAB's are) and learnable parameters registered under MATLAB's names (``Weights``),
each with a learn-rate factor and an L2 factor.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from .. import _validate
from .._errors import DLFormatError
from . import _initializers

FACTOR_KINDS = ("LearnRateFactor", "L2Factor")


class Property:
    """A MATLAB property on a layer: validated on assignment, optionally read-only.

    Args:
        check: ``check(name, value) -> canonical value``; raises :class:`DLFormatError`.
        read_only: MATLAB's read-only properties are set only by the constructor.
        doc: the property's docstring.
    """

    def __init__(self, check: Callable[[str, Any], Any], *, read_only: bool = False, doc: str = "") -> None:
        self.check = check
        self.read_only = read_only
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, layer: Layer | None, owner: type | None = None) -> Any:
        if layer is None:
            return self
        return layer._properties[self.name]

    def __set__(self, layer: Layer, value: Any) -> None:
        if self.read_only:
            raise DLFormatError(
                f"You cannot set the read-only property '{self.name}' of {type(layer).__name__}; "
                f"create a new layer with {self.name}={value!r} instead"
            )
        layer._properties[self.name] = self.check(self.name, value)

    def initialize(self, layer: Layer, value: Any) -> None:
        """Set the value from the constructor, read-only or not."""
        layer._properties[self.name] = self.check(self.name, value)


class FactorProperty:
    """A MATLAB factor property such as ``WeightLearnRateFactor``.

    It sets one factor of one or more learnables (``selfAttentionLayer``'s
    ``WeightLearnRateFactor`` covers all four weight matrices); reading it gives the common
    value, or a tuple when ``setLearnRateFactor`` has made them differ.
    """

    def __init__(self, parameters: str | tuple[str, ...], kind: str) -> None:
        self.parameters = (parameters,) if isinstance(parameters, str) else parameters
        self.kind = kind
        self.__doc__ = f"The {kind} of {', '.join(self.parameters)} (finite, >= 0)."

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, layer: Layer | None, owner: type | None = None) -> Any:
        if layer is None:
            return self
        values = tuple(layer._factors[parameter][self.kind] for parameter in self.parameters)
        return values[0] if len(set(values)) == 1 else values

    def __set__(self, layer: Layer, value: Any) -> None:
        value = _validate.factor(self.name, value)
        for parameter in self.parameters:
            layer._factors[parameter][self.kind] = value


class Layer(nn.Module):
    """Base class of dlformat layers.

    Subclasses declare ``learnables`` (MATLAB parameter names), ``config_keys`` (the
    constructor arguments that :meth:`get_config` returns), their :class:`Property`
    descriptors, and ``_learnable_shape``.

    Attributes:
        Name: the layer name (``""`` until named); ``dlformat`` functions find layers by it.
        NumInputs, InputNames, NumOutputs, OutputNames: MATLAB's read-only port facts.
    """

    default_name: ClassVar[str] = "layer"  # MATLAB-style prefix for automatic names (fc, fc_1, ...)
    matlab_type: ClassVar[str] = ""  # the kind, as MATLAB's displays write it ("Fully Connected")
    learnables: ClassVar[tuple[str, ...]] = ()
    lazy_size: ClassVar[str] = ""  # a size property that may be "auto", fixed by the first input
    config_keys: ClassVar[tuple[str, ...]] = ()
    NumInputs: ClassVar[int] = 1
    InputNames: ClassVar[tuple[str, ...]] = ("in",)
    NumOutputs: ClassVar[int] = 1
    OutputNames: ClassVar[tuple[str, ...]] = ("out",)

    Name = Property(_validate.text, doc="The layer name, a string.")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "matlab_type" not in cls.__dict__:
            cls.matlab_type = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", cls.__name__.removesuffix("Layer"))

    def __init__(self, Name: str = "") -> None:
        super().__init__()
        self._properties: dict[str, Any] = {}
        self._factors = {name: dict.fromkeys(FACTOR_KINDS, 1.0) for name in self.learnables}
        type(self).Name.initialize(self, Name)

    def _assign(self, **values: Any) -> None:
        """Set properties from the constructor, in order: read-only ones too, factors included."""
        cls = type(self)
        for name, value in values.items():
            descriptor = getattr(cls, name)
            if isinstance(descriptor, Property):
                descriptor.initialize(self, value)
            else:
                setattr(self, name, value)

    # -- learnables ---------------------------------------------------------------------
    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def Initialized(self) -> bool:
        """Whether every learnable exists (layers whose sizes follow their input get them on first use)."""
        return all(self._parameters.get(name) is not None for name in self.learnables)

    # Lazy layers (``lazy_size`` set) get their learnables when that size is known: from given
    # values at construction, or from the first input (``initialize(net)`` runs one).
    def _sizes_known(self) -> bool:
        return not self.lazy_size or self._properties[self.lazy_size] != "auto"

    def _fixed_size(self, learnable: str) -> int:
        """The lazy size, for ``learnable``'s shape; an error while it is still ``"auto"``."""
        size = self._properties[self.lazy_size]
        if size == "auto":
            raise DLFormatError(
                f'{self._caller()} has {self.lazy_size} "auto": its {learnable} gets its size from the first '
                f"input (or initialize(net)); set {self.lazy_size} to assign it earlier"
            )
        return int(size)

    def _size_of(self, X: Any) -> int:
        """The lazy size that input ``X`` implies."""
        raise NotImplementedError

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        """The lazy size that learnables given at construction imply, as MATLAB infers it."""
        return None

    def _setup(self, X: Any) -> None:
        """Fix the lazy size from the first input and create the learnables."""
        self._properties[self.lazy_size] = self._size_of(X)
        self._device = self._device or X.device
        self._create_missing()

    def _initializer(self, name: str) -> tuple[str | Callable[..., object], int, int]:
        """``(initializer, num_in, num_out)`` for learnable ``name``, as MATLAB's initializers take them."""
        raise NotImplementedError

    def _init_learnables(
        self,
        given: dict[str, Any],
        device: torch.device | str | None,
        dtype: torch.dtype | None,
        generator: torch.Generator | None = None,
    ) -> None:
        """Register the learnables: given values (checked, copied), the rest drawn once sizes are known."""
        self._device = device
        self._dtype = None if dtype is None else _validate.floating_dtype("dtype", dtype)
        if not self._sizes_known():
            self._properties[self.lazy_size] = self._size_from_given(given) or "auto"
        checked = {
            name: self._checked_learnable(name, value, torch.device(device) if device else None)
            for name, value in given.items()
            if value is not None
        }
        for name in self.learnables:
            value = checked.get(name)
            if value is not None and self._dtype is not None:
                value = nn.Parameter(value.detach().to(self._dtype))
            self.register_parameter(name, value)
        if self._sizes_known():
            self._create_missing(generator)

    def _create_missing(self, generator: torch.Generator | None = None) -> None:
        for name in self.learnables:
            if self._parameters.get(name) is None:
                values = self._draw(name, self._device, self._dtype or torch.get_default_dtype(), generator)
                self.register_parameter(name, nn.Parameter(values))

    def _draw(
        self,
        name: str,
        device: torch.device | str | None,
        dtype: torch.dtype,
        generator: torch.Generator | None,
    ) -> torch.Tensor:
        initializer, num_in, num_out = self._initializer(name)
        shape = self._learnable_shape(name)
        return _initializers.initialize(
            initializer,
            shape,
            num_in=num_in,
            num_out=num_out,
            dtype=dtype,
            device=device,
            generator=generator,
        )

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Draw every existing learnable anew with its initializer (in place, same device and dtype)."""
        for name in self.learnables:
            current = self._parameters.get(name)
            if current is not None:
                with torch.no_grad():
                    current.copy_(self._draw(name, current.device, current.dtype, generator))

    def _checked_learnable(self, name: str, value: object, device: torch.device | None) -> nn.Parameter:
        """Validate a value for learnable ``name`` and make it a new parameter (copied)."""
        label = f"{type(self).__name__} {name}"
        if isinstance(value, np.ndarray):
            if value.dtype.kind != "f":
                raise DLFormatError(
                    f"{label} must be a floating-point array (float32 or float64); got a NumPy "
                    f"array of dtype {value.dtype}"
                )
            tensor = torch.from_numpy(np.array(value, dtype=value.dtype.newbyteorder("="), order="C"))
        elif isinstance(value, torch.Tensor):
            if not value.is_floating_point():
                raise DLFormatError(
                    f"{label} must be a floating-point tensor (float32 or float64); got dtype {value.dtype}"
                )
            tensor = value.detach().clone()
        else:
            raise DLFormatError(
                f"{label} must be a NumPy array or torch tensor; got {_validate.describe(value)}"
            )
        expected = self._learnable_shape(name)
        if tuple(tensor.shape) != expected:
            raise DLFormatError(
                f"{label} must have shape {_validate.matlab_size(expected)}; "
                f"got {_validate.matlab_size(tensor.shape)}"
            )
        return nn.Parameter(tensor.to(device) if device is not None else tensor)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.learnables and name in self.__dict__.get("_parameters", ()):
            current = self._parameters[name]
            value = self._checked_learnable(name, value, None if current is None else current.device)
        super().__setattr__(name, value)

    def factors(self, parameter: str) -> dict[str, float]:
        """The learn-rate and L2 factors of a learnable parameter, by MATLAB name."""
        if parameter not in self._factors:
            known = ", ".join(self.learnables) or "none"
            raise DLFormatError(
                f"{type(self).__name__} {self.Name!r} has no learnable parameter {parameter!r}; "
                f"its learnables are: {known}"
            )
        return self._factors[parameter]

    def set_factor(self, parameter: str, kind: str, value: object) -> None:
        self.factors(parameter)[kind] = _validate.factor(f"the {kind} of {parameter}", value)

    def _caller(self) -> str:
        """How error messages name this layer: its class, and its Name when it has one."""
        return f"{type(self).__name__} '{self.Name}'" if self.Name else type(self).__name__

    # -- config -------------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        """The constructor arguments that rebuild this layer (weights excepted)."""
        return {key: getattr(self, key) for key in self.config_keys}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        """Build a layer from :meth:`get_config`'s output."""
        return cls(**config)

    # -- display ------------------------------------------------------------------------
    def _display_groups(self) -> list[tuple[str, list[str]]]:
        """``(heading, property names)`` groups for MATLAB's display; heading ``""`` comes first."""
        return [("", ["Name"])]

    def _display_value(self, name: str) -> str:
        value = getattr(self, name)
        if value is None:
            return "[]"
        if isinstance(value, torch.Tensor):
            dtype = str(value.dtype).removeprefix("torch.")
            return f"[{_validate.matlab_size(tuple(value.shape))} {dtype}]"
        if isinstance(value, str):
            return f"'{value}'"
        if callable(value):
            return f"@{getattr(value, '__name__', type(value).__name__)}"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)

    def __repr__(self) -> str:
        groups = self._display_groups()
        width = max(len(name) for _, names in groups for name in names)
        lines = [f"{type(self).__name__} with properties:", ""]
        for heading, names in groups:
            if heading:
                lines += ["", f"   {heading}"]
            lines += [f"  {name:>{width + 2}}: {self._display_value(name)}" for name in names]
        return "\n".join(lines)

    def extra_repr(self) -> str:
        return ", ".join(f"{key}={getattr(self, key)!r}" for key in self.config_keys)


def matlab_constructor(cls: type[Layer], name: str) -> Callable[..., Layer]:
    """Make MATLAB's constructor function for a layer class.

    Name=Value arguments match the class's keyword names case-insensitively, as
    MATLAB's do; an unknown or repeated name is a :class:`DLFormatError` that lists
    the accepted names.
    """
    signature = inspect.signature(cls)
    accepted = {parameter.lower(): parameter for parameter in signature.parameters}

    def construct(*args: Any, **name_value: Any) -> Layer:
        keywords: dict[str, Any] = {}
        for key, value in name_value.items():
            canonical = accepted.get(key.lower())
            if canonical is None:
                names = ", ".join(p for p in signature.parameters if p[0].isupper())
                raise DLFormatError(f"{name} has no option {key!r}; the options are: {names}")
            if canonical in keywords:
                raise DLFormatError(f"{name} got option {canonical!r} twice")
            keywords[canonical] = value
        try:
            signature.bind(*args, **keywords)
        except TypeError as error:
            raise DLFormatError(f"{name}: {error}") from None
        return cls(*args, **keywords)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (
        f"MATLAB's ``{name}``: builds :class:`{cls.__name__}` from the same arguments.\n\n"
        f"Name=Value options match case-insensitively, as in MATLAB. See "
        f":class:`{cls.__module__}.{cls.__name__}` for every option.\n"
    )
    return construct
