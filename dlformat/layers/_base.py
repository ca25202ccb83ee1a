"""``Layer``: the base of every dlformat layer, MATLAB's ``nnet.layer.Layer`` on ``nn.Module``.

A layer declares each MATLAB property once, as a class attribute:

- :class:`Property`: a value such as ``OutputSize``, with its check, default, read-only flag
  and display group;
- :class:`Learnable`: a learnable parameter such as ``Weights`` (an ``nn.Parameter``), with the
  property that holds its initializer;
- :class:`Factor`: a learn-rate or L2 factor property such as ``WeightL2Factor``.

From those declarations the class derives its constructor signature (positional properties
first, then keywords), the assignment of every argument, ``get_config``/``from_config`` and
MATLAB's property display. Users write custom layers on the same public surface:
``predict`` (and optionally ``forward``), :meth:`Layer.add_learnable`, :meth:`Layer.add_state`
and the port properties ``NumInputs``/``InputNames``/``NumOutputs``/``OutputNames``.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import threading
from collections.abc import Callable
from typing import Any, ClassVar, cast

import numpy as np
import torch
from torch import nn

from .. import _options, _validate
from .._display import cell
from .._dlarray import DLArray, working_dtype
from .._errors import DLFormatError
from . import _initializers
from ._call_state import CURRENT
from ._properties import (
    FACTOR_KINDS,
    LEARNABLE_GROUP,
    REQUIRED,
    STATE_GROUP,
    Factor,
    FactorValue,
    Learnable,
    Named,
    PerChannel,
    Property,
    StateParameter,
    matlab_shape,
)

__all__ = ["Layer", "matlab_constructor"]

# A learnable larger than this is a size mistake (2**62 rows), not a model: refused before allocating
MAX_LEARNABLE_BYTES = 1 << 44
TORCH_KEYWORDS = ("device", "dtype", "generator")

# First use of a lazy layer creates its learnables; two threads doing it at once must not
# both draw (one would compute with weights the other then replaces). Held only on first use.
_SETUP_LOCK = threading.RLock()


def _port_names(side: str, count: int) -> tuple[str, ...]:
    """MATLAB's default port names: ``in`` for one input, ``in1``, ``in2``, ... for several."""
    return (side,) if count == 1 else tuple(f"{side}{index}" for index in range(1, count + 1))


class _Ports(Named):
    """``NumInputs``/``InputNames`` (and the outputs'): settable while the layer is constructed,
    read-only after; setting a count names the ports MATLAB's way."""

    def __init__(self, side: str, count: bool) -> None:
        self.side = side
        self.count = count

    def __get__(self, layer: Layer | None, owner: type | None = None) -> Any:
        if layer is None:
            return self
        names = layer._ports[self.side]
        return len(names) if self.count else names

    def __set__(self, layer: Layer, value: Any) -> None:
        _refuse_after_construction(layer, self.name)
        if self.count:
            layer._ports[self.side] = _port_names(self.side, _validate.nonnegative_integer(self.name, value))
            return
        layer._ports[self.side] = checked_port_names(self.name, value)


def checked_port_names(label: str, value: Any) -> tuple[str, ...]:
    """``InputNames``/``OutputNames`` checked: unique, non-empty names without ``/`` (which
    separates layer and port in ``"add/in2"``); one string is one name."""
    names = (value,) if isinstance(value, str) else tuple(value)
    for name in names:
        _validate.text(label, name)
        if not name or "/" in name:
            raise DLFormatError(f"{label} must be non-empty names without '/'; got {name!r}")
    if len(set(names)) != len(names):
        raise DLFormatError(f"{label} must be unique; got {', '.join(names)}")
    return names


def _refuse_after_construction(layer: Layer, name: str) -> None:
    if layer.__dict__.get("_constructed"):
        raise DLFormatError(
            f"You cannot set the read-only property '{name}' of {type(layer).__name__} after it is "
            "constructed; set it in the layer's __init__"
        )


class _LayerType(type):
    """Finishes construction after ``__init__`` (however a subclass writes it) and accepts
    MATLAB's ``'Name', value`` pairs and any-case option names in every constructor call."""

    _options: _options.Options
    _declared_signature: inspect.Signature
    __signature__: inspect.Signature

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = _options.normalize(cls.__name__, cls._options, args, kwargs)
        layer = super().__call__(*args, **kwargs)
        if cls.__signature__ is not cls._declared_signature:
            # a custom layer's own __init__: its arguments are what rebuilds it (get_config)
            try:
                bound = cls.__signature__.bind(*args, **kwargs)
            except TypeError:
                pass
            else:
                bound.apply_defaults()
                layer.__dict__["_arguments"] = dict(bound.arguments)
        layer._finish_construction()
        return layer


class Layer(nn.Module, metaclass=_LayerType):
    """Base class of every dlformat layer, and of custom layers (MATLAB's ``nnet.layer.Layer``).

    A subclass computes in ``predict(self, *X)`` (inference behaviour) and, where training
    behaves differently (dropout, batch statistics), in ``forward(self, *X)``, MATLAB's training
    behaviour; inputs and outputs are formatted dlarrays (``Formattable = True``, MATLAB's
    ``nnet.layer.Formattable``, the default here) or, with ``Formattable = False``, unformatted
    dlarrays in the input's layout, relabelled with the first input's format afterwards.
    Calling the layer (``layer(X)``) runs ``forward`` in train mode and ``predict`` in eval mode,
    or as ``training=True/False`` asks for that call; a network passes the mode per call.

    Attributes:
        Name: the layer name (``""`` until named); networks find layers by it.
        Description: a one-line description (custom layers set it).
        NumInputs, InputNames, NumOutputs, OutputNames: the ports. Custom layers may set them in
            ``__init__`` (``NumInputs = 2`` names the inputs ``in1``, ``in2``); read-only after.
        Learnables, State: names of the learnable parameters and state values.

    Examples:
        >>> class ScaleLayer(dlf.Layer):
        ...     def __init__(self, Name=""):
        ...         super().__init__(Name=Name)
        ...         self.add_learnable("Scale", torch.ones(1))
        ...     def predict(self, X):
        ...         return X * self.Scale
        >>> layer = ScaleLayer(Name="scale")
        >>> Y = layer(dlf.dlarray(torch.ones(3, 2), "CB"))
        >>> dlf.dims(Y), layer.Learnables
        ('CB', ('Scale',))
    """

    default_name: ClassVar[str] = "layer"  # prefix of automatic names (fc, fc_1, ...)
    matlab_type: ClassVar[str] = ""  # the kind, as MATLAB's displays write it ("Fully Connected")
    lazy_size: ClassVar[str] = ""  # a size property that may be "auto", fixed by the first input
    Formattable: ClassVar[bool] = True
    # Whether state a layer assigns while a network runs stays in the network (batch
    # normalization's running statistics) or is put back after the call, MATLAB's dlnetwork rule
    # for recurrent state: it changes only when the caller assigns net.State.
    state_updates_persist: ClassVar[bool] = False
    _has_training_forward: ClassVar[bool] = False
    Description: str = ""
    default_inputs: ClassVar[int] = 1
    default_outputs: ClassVar[int] = 1

    # filled in per class by __init_subclass__
    _declared: ClassVar[dict[str, Property | Factor]] = {}
    _learnable_specs: ClassVar[dict[str, Learnable]] = {}
    _state_specs: ClassVar[dict[str, StateParameter]] = {}
    _per_channel: ClassVar[tuple[str, ...]] = ()  # the learnables and state shaped PerChannel
    _declared_signature: ClassVar[inspect.Signature]
    __signature__: ClassVar[inspect.Signature]  # the constructor's: the declared one, or a custom __init__'s
    config_keys: ClassVar[tuple[str, ...]] = ("Name",)
    _like: torch.Tensor  # a 0-element buffer: the module's dtype and device (see __init__)
    # per instance, set in __init__
    _properties: dict[str, Any]
    _factors: dict[str, dict[str, FactorValue]]
    _learnable_names: list[str]
    _state_names: list[str]
    _initial_state: dict[str, torch.Tensor]
    _layer_made: dict[str, torch.Tensor]
    _initial_made: dict[str, bool]
    _ports: dict[str, tuple[str, ...]]
    _given_dtype: torch.dtype | None

    Name = Property(_validate.text, default="", doc="The layer name, a string.")
    NumInputs = _Ports("in", count=True)
    InputNames = _Ports("in", count=False)
    NumOutputs = _Ports("out", count=True)
    OutputNames = _Ports("out", count=False)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "matlab_type" not in cls.__dict__:
            cls.matlab_type = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", cls.__name__.removesuffix("Layer"))
        if "forward" in cls.__dict__:  # MATLAB's forward: training behaviour, dispatched by Layer.forward
            cls._training_forward = cls.__dict__["forward"]  # type: ignore[method-assign]
            cls.forward = Layer.forward  # type: ignore[method-assign]
        cls._has_training_forward = cls._training_forward is not Layer._training_forward
        _declare(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            bound = type(self)._declared_signature.bind(*args, **kwargs)
        except TypeError as error:
            raise _ArgumentsError(type(self), str(error)) from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        super().__init__()
        # plain bookkeeping (never a parameter, buffer or module) goes straight into __dict__: the
        # checks of __setattr__ (this class's and nn.Module's) cost a measurable share of building
        # a small layer, as load_network does for every layer of a file
        attributes = self.__dict__
        attributes["_properties"] = {}
        attributes["_factors"] = {}
        attributes["_learnable_names"] = []
        attributes["_state_names"] = []
        attributes["_initial_state"] = {}  # what resetState puts back
        # the state values the layer made itself (start zeros or ones, by identity): see _state_in
        attributes["_layer_made"] = {}
        attributes["_initial_made"] = {}  # per initial value: made by the layer (not given)
        attributes["_ports"] = {
            "in": _port_names("in", self.default_inputs),
            "out": _port_names("out", self.default_outputs),
        }
        device, dtype, generator = (values.pop(key, None) for key in TORCH_KEYWORDS)
        if dtype is not None:
            dtype = _validate.floating_dtype("dtype", dtype)
        # moves with the module (.to, .double, .cuda): lazy learnables are created like it
        self.register_buffer("_like", _empty_on(device, dtype or torch.get_default_dtype()), persistent=False)
        attributes["_given_dtype"] = dtype
        given = {name: values.pop(name) for name in (*self._learnable_specs, *self._state_specs)}
        for name in self._learnable_specs:
            self._learnable_names.append(name)
            self._factors[name] = dict.fromkeys(FACTOR_KINDS, 1.0)
            self.register_parameter(name, None)
        for name in self._state_specs:
            self._state_names.append(name)
            self.register_buffer(name, None)
        for name, value in values.items():
            self._declared[name].initialize(self, value)
        self._check_properties()
        if self._learnable_specs or self._state_specs:
            self._init_learnables(given, generator)

    def _check_properties(self) -> None:
        """Checks across properties and derived values, once every property is assigned."""

    def _finish_construction(self) -> None:
        self.__dict__["_constructed"] = True

    # -- calling ------------------------------------------------------------------------------
    def predict(self, *X: Any, **options: Any) -> Any:
        """MATLAB's ``predict``: the layer's inference behaviour. Subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} must define predict(self, X, ...)")

    def _training_forward(self, *X: Any, **options: Any) -> Any:
        return self.predict(*X, **options)

    def forward(self, *X: Any, training: bool | None = None, **options: Any) -> Any:
        """Run the layer: MATLAB's ``forward`` (training behaviour) or ``predict``.

        ``training`` picks the behaviour for this call; by default the module's mode decides.
        A subclass's own ``forward`` is MATLAB's training behaviour, which this method calls.
        """
        trains = self.training if training is None else training
        # a layer without its own training behaviour predicts directly (one call less on the hot path)
        method = self._training_forward if trains and self._has_training_forward else self.predict
        if self.Formattable:
            return method(*X, **options)
        return self._call_unformatted(method, X, options)

    def _call_unformatted(
        self, method: Callable[..., Any], X: tuple[Any, ...], options: dict[str, Any]
    ) -> Any:
        """MATLAB's non-formattable layers: unformatted data in, the first input's format back."""
        fmt = next((x._fmt for x in X if isinstance(x, DLArray) and x._fmt), "")
        stripped = [
            DLArray._wrap(x._data if isinstance(x, DLArray) else x, "")
            if isinstance(x, (DLArray, torch.Tensor))
            else x
            for x in X
        ]
        result = method(*stripped, **options)
        if not fmt:
            if not any(isinstance(x, DLArray) for x in X):
                return result  # plain tensors in, whatever the layer returns out
            finish = _unformatted  # unformatted dlarrays in: dlarrays out, as with a format
        else:
            finish = functools.partial(_relabel, fmt=fmt, layer=self)
        if self.NumOutputs == 1:
            return finish(result)
        return tuple(finish(value) for value in result)

    # -- learnables and state -----------------------------------------------------------------
    @property
    def learnables(self) -> tuple[str, ...]:
        """The names of the learnable parameters, in MATLAB's order."""
        return tuple(self._learnable_names)

    @property
    def Learnables(self) -> tuple[str, ...]:
        return self.learnables

    @property
    def State(self) -> tuple[str, ...]:
        """The names of the state values (``add_state``)."""
        return tuple(self._state_names)

    def __getattr__(self, name: str) -> Any:
        # ``self.<state>`` inside a network call reads the call's value (see _call_state); every
        # other name, and every name outside a call, is nn.Module's lookup. Learnables first,
        # as nn.Module looks them up (they are read on every call: no second frame for them)
        parameters = self.__dict__["_parameters"]
        if name in parameters:
            return parameters[name]
        values = CURRENT.values
        if values is not None:
            own = values.get(self)
            if own is not None and name in own:
                return own[name]
        return super().__getattr__(name)

    def _state_value(self, name: str) -> torch.Tensor | None:
        """State ``name`` as the running network call has it (see ``_call_state``), or the layer's
        own value outside a call."""
        values = CURRENT.values
        if values is not None:
            own = values.get(self)
            if own is not None and name in own:
                return own[name]
        return self._buffers.get(name)

    def _store_state(self, name: str, value: torch.Tensor) -> None:
        """Assign state ``name`` (already checked): to the running network call's state, which
        other calls never see, or to the layer's own buffer outside a call."""
        values = CURRENT.values
        if values is None:
            self._buffers[name] = value
        else:
            values.setdefault(self, {})[name] = value

    def _state_in(self, name: str, data: torch.Tensor) -> torch.Tensor | None:
        """State ``name`` for a call on ``data``: a start value the layer made itself (zeros,
        ones) has no precision of its own, so it joins in the precision of the data and the
        learnables (float64 data through float64 learnables stays float64); a value given or
        computed keeps its own, and MATLAB's rule (single wins) counts it."""
        value = self._state_value(name)
        if value is not None and value.dtype != data.dtype and value is self._layer_made.get(name):
            # (a start value of the data's dtype changes nothing: skipped, as this runs every call)
            return value.to(self._with_learnables(data.dtype))
        return value

    def _with_learnables(self, dtype: torch.dtype) -> torch.dtype:
        """The precision ``dtype`` and the learnables compute in (MATLAB: single wins)."""
        return working_dtype(dtype, *(p.dtype for p in self._parameters.values() if p is not None))

    def _assigned_dtype(self, name: str, current: torch.Tensor, dtype: torch.dtype) -> torch.dtype:
        """The dtype a value of ``dtype`` assigned to declared state ``name`` (now ``current``) is
        kept in: the state's own (a statistic computed in float64 from double data stays float32
        in a float32 layer), or for a start value the layer made, which has no precision of its
        own, the precision of the value and the learnables."""
        return self._with_learnables(dtype) if current is self._layer_made.get(name) else current.dtype

    def _apply(self, fn: Any, recurse: bool = True) -> Any:
        # .to(), .double(), .cuda() replace the buffers: a start value stays one
        made = [name for name, value in self._layer_made.items() if self._buffers.get(name) is value]
        result = super()._apply(fn, recurse)
        for name in made:
            self._layer_made[name] = cast(torch.Tensor, self._buffers[name])
        return result

    def add_learnable(
        self, name: str, value: Any, *, LearnRateFactor: float = 1.0, L2Factor: float = 1.0
    ) -> nn.Parameter:
        """Add a learnable parameter (MATLAB's ``properties (Learnable)``) with its factors.

        ``value`` (a floating tensor or NumPy array) is copied into a new ``nn.Parameter``,
        reachable as ``self.<name>``; ``param_groups``, learnables files, ``Learnables`` tables
        and ``setLearnRateFactor`` see it.
        """
        self._check_new_name(name)
        factors: dict[str, FactorValue] = {
            "LearnRateFactor": _validate.factor("LearnRateFactor", LearnRateFactor),
            "L2Factor": _validate.factor("L2Factor", L2Factor),
        }
        parameter = nn.Parameter(_floating_tensor(f"{type(self).__name__} {name}", value))
        self.register_parameter(name, parameter)
        self._learnable_names.append(name)
        self._factors[name] = factors
        return parameter

    def add_state(self, name: str, value: Any) -> torch.Tensor:
        """Add a state value (MATLAB's ``properties (State)``): a buffer in ``state_dict``.

        Where MATLAB's ``forward`` returns updated state after its outputs, a layer here assigns
        it, ``self.<name> = value`` (a dlarray, tensor or NumPy array, stored detached: state
        takes no gradient); see docs/custom_layers.md.
        """
        self._check_new_name(name)
        tensor = _floating_tensor(f"{type(self).__name__} {name}", value)
        self.register_buffer(name, tensor)
        self._state_names.append(name)
        self._initial_state[name] = tensor.clone()
        return tensor

    def resetState(self) -> None:
        """MATLAB's ``resetState`` for this layer: every state value back to its initial value
        (the value given to ``add_state``, or a declared state's constructor value or start value),
        in the state's current dtype and device. Layers with another rule override it."""
        for name, initial in self._initial_state.items():
            current = self._buffers.get(name)
            like = initial if current is None else current
            value = self._buffers[name] = initial.to(device=like.device, dtype=like.dtype, copy=True)
            if self._initial_made.get(name, False):
                self._layer_made[name] = value

    def _state_size_rule(self, name: str, shape: tuple[int, ...]) -> str | None:
        """``None`` when a value of ``shape`` may replace state ``name`` (``net.State = state``),
        else what is allowed, in MATLAB's size notation. The rule here: the current size.
        Layers whose state follows the observations (recurrent layers) override it."""
        if name in self._per_channel:
            return None  # any documented size: _checked_state has checked and shaped it
        current = self._buffers[name]
        assert current is not None  # only called for state that exists
        return None if tuple(current.shape) == shape else _validate.matlab_size(tuple(current.shape))

    def _check_new_name(self, name: str) -> None:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise DLFormatError(
                f"a learnable or state name must be an identifier not starting with '_'; got {name!r}"
            )
        if name in self._learnable_names or name in self._state_names or hasattr(type(self), name):
            raise DLFormatError(f"{type(self).__name__} already has a property or parameter named {name!r}")

    def _learnable_shape(self, name: str) -> tuple[int, ...] | None:
        """The shape a declared learnable (or state value) must have, from its declaration's
        property names (``None``: any shape, as for learnables a custom layer adds)."""
        spec: Learnable | StateParameter | None = self._learnable_specs.get(name) or self._state_specs.get(
            name
        )
        if spec is None or not spec.shape:
            return None
        if isinstance(spec.shape, PerChannel):
            return self._per_channel_shape(name, spec.shape)
        return tuple(
            size
            if isinstance(size, int)
            else self._fixed_size(name)
            if size == self.lazy_size
            else getattr(self, size)
            for size in spec.shape
        )

    def _per_channel_shape(self, name: str, spec: PerChannel) -> tuple[int, ...]:
        """The size of a per-channel value: the input's size once the layer has had input (MathWorks'
        table, see :class:`PerChannel`); before, the size its value was given in (NumChannels×1 for
        one drawn)."""
        count = spec.count
        channels = self._fixed_size(name) if count == self.lazy_size else int(getattr(self, count))
        spatial = self.__dict__.get("_input_spatial")
        if spatial is None:
            current = self._declared_value(name)
            if current is not None and current.numel() == channels:
                return tuple(current.shape)
            spatial = 0
        return PerChannel.size(channels, spatial)

    def _declared_value(self, name: str) -> torch.Tensor | None:
        """The value of a declared learnable (its parameter) or state value (its buffer)."""
        return self._parameters.get(name) if name in self._learnable_specs else self._buffers.get(name)

    def _per_channel_value(self, name: str, label: str, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor`` as a per-channel value: of a documented size (any input kind's), in the size
        of the layer's input once it is known, else in its own."""
        spec = (self._learnable_specs.get(name) or self._state_specs[name]).shape
        assert isinstance(spec, PerChannel)
        channels = self._fixed_size(name) if spec.count == self.lazy_size else int(getattr(self, spec.count))
        shape = matlab_shape(tuple(tensor.shape))
        if tensor.ndim < 2 or shape not in PerChannel.sizes(channels):
            raise DLFormatError(
                f"{label} must have size {spec.allowed(channels)}; got {_validate.matlab_size(tensor.shape)}"
            )
        spatial = self.__dict__.get("_input_spatial")
        return tensor.reshape(shape if spatial is None else PerChannel.size(channels, spatial))

    def _settle_per_channel(self, X: Any) -> None:
        """The layer's first input fixes the size of its per-channel values (MathWorks' table, by
        the input's "S" dimensions): those that exist take it, in place (a parameter stays the same
        object). An input of another channel count changes nothing (its error comes next)."""
        with _SETUP_LOCK:
            if self.__dict__.get("_input_spatial") is not None:
                return
            channels = self._properties[self.lazy_size] if self.lazy_size else None
            if channels not in (None, "auto") and self._size_of(X) != channels:
                return
            spatial = X._fmt.count("S")
            for name in self._per_channel:
                value = self._declared_value(name)
                if value is None:
                    continue
                shape = PerChannel.size(value.numel(), spatial)
                if tuple(value.shape) == shape:
                    continue
                # in place: the same parameter (an optimizer's) and the same state tensor (which
                # a caller restoring state by reference, as initialize's example run, puts back)
                with torch.no_grad():
                    value.data = value.data.reshape(shape)
                    if value.grad is not None:
                        value.grad = value.grad.reshape(shape)
                if name in self._initial_state:
                    self._initial_state[name] = self._initial_state[name].reshape(shape)
            self.__dict__["_input_spatial"] = spatial

    def _initializer(self, name: str) -> tuple[str | Callable[..., object], int, int]:
        """``(initializer, num_in, num_out)`` for a declared learnable, as MATLAB's initializers take
        them: a ``rows × columns`` array has ``columns`` inputs and ``rows`` outputs (a per-channel
        value counts as its NumChannels×1 column, whatever the input's size of it)."""
        shape = self._learnable_shape(name) or (1, 1)
        if name in self._per_channel:
            shape = (math.prod(shape), 1)
        return getattr(self, self._learnable_specs[name].initializer), shape[-1], shape[0]

    @property
    def Initialized(self) -> bool:
        """Whether every learnable exists (layers whose sizes follow their input get them on first use)."""
        return all(self._parameters.get(name) is not None for name in self._learnable_names)

    # Lazy layers (``lazy_size`` set) get their learnables once that size is known: from given
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

    # the learnable, and its dimension, whose size fixes the lazy size when the learnable is given
    # at construction as a matrix (fullyConnectedLayer: ("Weights", 1), OutputSize × InputSize)
    lazy_size_from: ClassVar[tuple[str, int] | None] = None

    def _size_of(self, X: Any) -> int:
        """The lazy size that input ``X`` implies; by default its channel count (``C``)."""
        return int(X.shape[X._fmt.index("C")])

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        """The lazy size that learnables given at construction imply, as MATLAB infers it."""
        if self.lazy_size_from is None:
            return None
        name, dimension = self.lazy_size_from
        value = given.get(name)
        if value is None or not hasattr(value, "shape"):
            return None  # not given, or no array: the learnable's own check names it
        shape = tuple(value.shape)
        if len(shape) != 2:  # else "InputSize 'auto'" would be blamed for a vector given as a matrix
            wanted = self._lazy_shape_text(name, dimension) + self._shape_meaning(name)
            raise DLFormatError(
                f"{type(self).__name__} {name} must be a matrix of size {wanted}; "
                f"got a {len(shape)}-D array of size {_validate.matlab_size(shape)}"
            )
        return int(shape[dimension])

    def _lazy_shape_text(self, name: str, dimension: int) -> str:
        """``name``'s shape with the lazy size still unknown written by its name: ``4×InputSize``."""
        saved = self._properties[self.lazy_size]
        self._properties[self.lazy_size] = 1  # a stand-in, so that the other sizes can be read
        try:
            shape: list[int | str] = list(self._learnable_shape(name) or ())
        finally:
            self._properties[self.lazy_size] = saved
        shape[dimension] = self.lazy_size
        return _validate.matlab_size(shape)

    def _shape_meaning(self, name: str) -> str:
        """What a learnable's sizes are, for its shape errors (`` (InputSize×InputProjectorSize)``);
        nothing by default."""
        return ""

    lazy_meaning: ClassVar[str] = ""  # what the lazy size counts, for errors ("channels")

    def _fit_input(self, X: Any) -> None:
        """Create lazy learnables from ``X`` on first use; then ``X`` must fit them. The first
        input also sets the size of the per-channel values (:class:`PerChannel`)."""
        if self._per_channel and self.__dict__.get("_input_spatial") is None:
            self._settle_per_channel(X)
        self._ensure_sizes(X)
        got, expected = self._size_of(X), self._properties[self.lazy_size]
        if got != expected:
            raise DLFormatError(
                f'{self._caller()} has {self.lazy_size} {expected}; the "{X._fmt}" input of size '
                f"{_validate.matlab_size(tuple(X.shape))} has {got} {self.lazy_meaning}"
            )

    def _sizes_settled(self) -> bool:
        """Whether the lazy size is fixed and the learnables it sizes exist (no first input is
        awaited)."""
        return bool(self.__dict__.get("_lazy_ready", True))

    def _ensure_sizes(self, X: Any) -> None:
        """On first use, fix the lazy size from ``X`` and create the learnables (once, thread-safe).

        Other threads pass only once the flag is set, which happens after every learnable exists.
        """
        if self.__dict__.get("_lazy_ready", True):
            return
        with _SETUP_LOCK:
            if self.__dict__.get("_lazy_ready", True):
                return
            size = self._size_of(X)
            if size < 1:
                raise DLFormatError(
                    f"{self._caller()} cannot take its {self.lazy_size} from an input of size 0 there; "
                    "give it data with at least one element along that dimension"
                )
            saved = dict(self._properties)
            self._properties[self.lazy_size] = size
            try:
                self._sizes_from_input(X)
                learnables = self._draw_missing()
            except BaseException:
                self.__dict__["_properties"] = saved
                raise
            for name, value in learnables.items():
                self.register_parameter(name, value)
            self._start_state()
            self.__dict__["_lazy_ready"] = True

    def _sizes_from_input(self, X: Any) -> None:
        """A hook for layers with other sizes that follow the first input (set here, under the
        setup lock, before the learnables are drawn, so that no other thread sees them half set);
        ``lazy_size`` is already set."""

    def _init_learnables(self, given: dict[str, Any], generator: torch.Generator | None) -> None:
        """Register the declared learnables: given values (checked, copied), the rest drawn
        once sizes are known."""
        if not self._sizes_known():
            self._properties[self.lazy_size] = self._size_from_given(given) or "auto"
        checked = {
            name: self._checked_state(name, value)
            if name in self._state_specs
            else self._checked_learnable(name, value, self._like.device)
            for name, value in given.items()
            if value is not None
        }
        for name, value in checked.items():
            if self._given_dtype is not None:
                value = value.detach().to(self._given_dtype)
            if name in self._state_specs:
                self._buffers[name] = value
            else:
                self.register_parameter(name, nn.Parameter(value.detach()))
        if self._sizes_known():
            for name, value in self._draw_missing(generator).items():
                self.register_parameter(name, value)
            self._start_state()
        self.__dict__["_lazy_ready"] = self._sizes_known()

    def _start_state(self) -> None:
        """Give every declared state value without one its start value (zeros or ones), once sizes
        are known, and remember each one's initial value for ``resetState``."""
        for name, spec in self._state_specs.items():
            value = self._buffers.get(name)
            if value is None:
                shape = self._learnable_shape(name) or ()
                fill = torch.zeros if spec.initial == "zeros" else torch.ones
                value = self._buffers[name] = fill(shape, dtype=self._like.dtype, device=self._like.device)
                self._layer_made[name] = value
            self._remember_initial(name, value)

    def _remember_initial(self, name: str, value: torch.Tensor) -> None:
        """Keep ``value`` as what ``resetState`` puts back, and whether the layer made it."""
        self._initial_state[name] = value.clone()
        self._initial_made[name] = value is self._layer_made.get(name)

    def _draw_missing(self, generator: torch.Generator | None = None) -> dict[str, nn.Parameter]:
        """New parameters for every missing learnable; assigns nothing."""
        return {
            name: nn.Parameter(self._draw(name, self._like.device, self._like.dtype, generator))
            for name in self._learnable_names
            if self._parameters.get(name) is None
        }

    def _draw(
        self,
        name: str,
        device: torch.device | str | None,
        dtype: torch.dtype,
        generator: torch.Generator | None,
    ) -> torch.Tensor:
        initializer, num_in, num_out = self._initializer(name)
        shape = self._learnable_shape(name)
        if shape is None:
            raise DLFormatError(f"{type(self).__name__} cannot draw {name}: it has no declared shape")
        count = math.prod(shape)
        size = f"{type(self).__name__} {name} of size {_validate.matlab_size(shape)}"
        if count * torch.empty(0, dtype=dtype).element_size() > MAX_LEARNABLE_BYTES:
            raise DLFormatError(
                f"{size} would hold about 10^{len(str(count)) - 1} values, more than any machine has; "
                "check the sizes"
            )
        try:
            return _initializers.initialize(
                initializer,
                shape,
                num_in=num_in,
                num_out=num_out,
                dtype=dtype,
                device=device,
                generator=generator,
            )
        except MemoryError:
            raise DLFormatError(f"{size} ({count:,} values of {dtype}) does not fit in memory") from None

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Draw every declared learnable anew with its initializer (in place, same device and dtype)."""
        for name in self._learnable_specs:
            current = self._parameters.get(name)
            if current is not None:
                with torch.no_grad():
                    current.copy_(self._draw(name, current.device, current.dtype, generator))

    def _checked_learnable(self, name: str, value: object, device: torch.device | None) -> nn.Parameter:
        """Validate a value for learnable ``name`` and make it a new parameter (copied)."""
        label = f"{type(self).__name__} {name}"
        tensor = _floating_tensor(label, value)
        if name in self._per_channel:
            tensor = self._per_channel_value(name, label, tensor)
            return nn.Parameter(tensor.to(device) if device is not None else tensor)
        expected = self._learnable_shape(name) if name in self._learnable_specs else None
        if expected is not None and tuple(tensor.shape) != expected:
            raise DLFormatError(
                f"{label} must have shape {_validate.matlab_size(expected)}{self._shape_meaning(name)}; "
                f"got {_validate.matlab_size(tensor.shape)}"
            )
        return nn.Parameter(tensor.to(device) if device is not None else tensor)

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(getattr(type(self), name, None), property) and getattr(type(self), name).fset is None:
            raise DLFormatError(f"You cannot set the read-only property '{name}' of {type(self).__name__}")
        if name in self.__dict__.get("_learnable_names", ()):
            current = self._parameters[name]
            value = self._checked_learnable(name, value, None if current is None else current.device)
        elif name in self.__dict__.get("_state_names", ()):
            self._store_state(name, self._checked_state(name, value))
            return
        elif (
            name[:1].isupper()
            and self.__dict__.get("_constructed")
            and not hasattr(type(self), name)
            and name not in self.__dict__
            and name not in self._buffers
            and name not in self._modules
        ):
            raise DLFormatError(
                f"Unrecognized property '{name}' for class {type(self).__name__}; its properties are: "
                f"{', '.join(self._property_names())}"
            )
        super().__setattr__(name, value)

    def _checked_state(self, name: str, value: object) -> torch.Tensor:
        """A new value for state ``name``: a detached floating copy on the state's device, of the
        declared shape where the layer declares one (``StateParameter``)."""
        label = f"{type(self).__name__} {name}"
        tensor = _floating_tensor(label, value)
        current = self._state_value(name)
        if name in self._per_channel and self._sizes_known():
            tensor = self._per_channel_value(name, label, tensor)
        elif name in self._state_specs and self._sizes_known():
            expected = self._learnable_shape(name)
            if expected is not None and tuple(tensor.shape) != expected:
                vectors = _is_vector(tuple(tensor.shape)) and _is_vector(expected)
                if not vectors or tensor.numel() != math.prod(expected):
                    raise DLFormatError(
                        f"{label} must have shape {_validate.matlab_size(expected)}; "
                        f"got {_validate.matlab_size(tensor.shape)}"
                    )
                tensor = tensor.reshape(expected)  # one value per channel, in any vector shape (1×1×C)
        if current is None:
            return tensor.to(self._like.device)
        # a declared state keeps its dtype (_assigned_dtype); a custom layer's state takes what
        # it is given
        declared = name in self._state_specs
        return tensor.to(
            current.device, self._assigned_dtype(name, current, tensor.dtype) if declared else tensor.dtype
        )

    def _property_names(self) -> list[str]:
        return [*self._declared, *self._learnable_names, *self._state_names]

    def factors(self, parameter: str) -> dict[str, FactorValue]:
        """The learn-rate and L2 factors of a learnable parameter, by MATLAB name: each a float, or
        a tuple of one float per gate where a recurrent layer was given a per-gate vector."""
        if parameter not in self._factors:
            known = ", ".join(self._learnable_names) or "none"
            raise DLFormatError(
                f"{type(self).__name__} {self.Name!r} has no learnable parameter {parameter!r}; "
                f"its learnables are: {known}"
            )
        return self._factors[parameter]

    def set_factor(self, parameter: str, kind: str, value: object) -> None:
        self.factors(parameter)[kind] = _validate.factor(f"the {kind} of {parameter}", value)

    def factor_scale(self, parameter: str, kind: str, like: torch.Tensor) -> float | torch.Tensor:
        """The factor as an update applies it to ``parameter``, whose value is ``like``: a scalar,
        or where a layer takes one factor per block of rows (the recurrent layers' per-gate
        vectors) a ``rows × 1`` tensor of ``like``'s dtype and device, one value per row."""
        value = self.factors(parameter)[kind]
        if isinstance(value, tuple):  # only layers that override this method store vectors
            raise DLFormatError(f"{self._caller()} has a vector {kind} for {parameter}; it cannot apply one")
        return value

    def _caller(self) -> str:
        """How error messages name this layer: its class, and its Name when it has one."""
        return f"{type(self).__name__} '{self.Name}'" if self.Name else type(self).__name__

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> Any:
        """``nn.Module.load_state_dict``; a layer whose learnables do not exist yet refuses it."""
        if not self.Initialized:
            raise DLFormatError(
                f"cannot load a state_dict into {self._caller()}: its learnables do not exist yet (their "
                f"sizes follow the data); run it once on data, or set {self.lazy_size or 'its sizes'}, first"
            )
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """``nn.Module``'s, taking a per-channel value in any documented size (:class:`PerChannel`):
        in the layer's own once its input is known, else the saved one's is taken (a network saved
        after its input was known keeps MATLAB's size when rebuilt)."""
        spatial = self.__dict__.get("_input_spatial")
        for name in self._per_channel:
            key = prefix + name
            value = state_dict.get(key)
            current = self._declared_value(name)
            if not isinstance(value, torch.Tensor) or current is None or value.shape == current.shape:
                continue
            if value.ndim < 2 or matlab_shape(tuple(value.shape)) not in PerChannel.sizes(current.numel()):
                continue  # nn.Module reports the size mismatch
            if spatial is not None:
                state_dict[key] = value.reshape(current.shape)  # torch passes a copy of the dict
            else:
                with torch.no_grad():
                    current.data = current.data.reshape(value.shape)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    # -- config -------------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        """The constructor arguments that rebuild this layer (learnables excepted).

        A custom layer with its own ``__init__`` gives the arguments it was constructed with
        (``Name`` as it is now); other layers give their declared properties.
        """
        arguments = self.__dict__.get("_arguments")
        if arguments is None:
            return {key: getattr(self, key) for key in self.config_keys}
        parameters = type(self).__signature__.parameters
        config: dict[str, Any] = {}
        for name, value in arguments.items():
            if parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
                config.update(value)
            else:
                config[name] = value
        if "Name" in config:
            config["Name"] = self.Name
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        """Build a layer from :meth:`get_config`'s output."""
        if cls.__signature__ is cls._declared_signature:
            return cls(**config)
        parameters = cls.__signature__.parameters.values()
        takes_varargs = any(parameter.kind is parameter.VAR_POSITIONAL for parameter in parameters)
        args: list[Any] = []
        kwargs = dict(config)
        for parameter in parameters:
            if parameter.kind is parameter.VAR_POSITIONAL:
                args.extend(kwargs.pop(parameter.name, ()))
            elif parameter.name in kwargs and (
                parameter.kind is parameter.POSITIONAL_ONLY
                or (takes_varargs and parameter.kind is parameter.POSITIONAL_OR_KEYWORD)
            ):
                args.append(kwargs.pop(parameter.name))
        return cls(*args, **kwargs)

    # -- display ------------------------------------------------------------------------
    def _display_groups(self) -> list[tuple[str, list[str]]]:
        """``(heading, property names)`` in declaration order; the unheaded block first."""
        groups: dict[str, list[str]] = {"": []}
        for name, declaration in self._declared.items():
            groups.setdefault(declaration.group, []).append(name)
        if self._learnable_names:
            groups[LEARNABLE_GROUP] = list(self._learnable_names)
        if self._state_names:
            groups[STATE_GROUP] = list(self._state_names)
        order = ["", LEARNABLE_GROUP, STATE_GROUP]
        headings = [heading for heading in order if heading in groups]
        headings += [heading for heading in groups if heading not in order]
        return [(heading, groups[heading]) for heading in headings if groups[heading]]

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
        if _is_number_vector(value):  # a size, a stride, per-gate factors: MATLAB's row vector
            return "[" + " ".join(_shown_number(item) for item in value) + "]"
        if isinstance(value, tuple) and value and isinstance(value[0], str):  # names: a cell array
            return cell(value)
        return _shown_number(value) if isinstance(value, float) else str(value)

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
        return ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())


def _is_number_vector(value: Any) -> bool:
    return isinstance(value, tuple) and bool(value) and all(isinstance(item, (int, float)) for item in value)


def _shown_number(value: float) -> str:
    """A number as the display writes it: whole numbers without a decimal point, as MATLAB does."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _declare(cls: type[Layer]) -> None:
    """Collect a class's declarations (its bases' first) and derive its signature and config keys."""
    declared: dict[str, Property | Factor] = {}
    learnables: dict[str, Learnable] = {}
    states: dict[str, StateParameter] = {}
    for klass in reversed(cls.__mro__):
        learnables.update(klass.__dict__.get("_learnable_specs", {}))
        states.update(klass.__dict__.get("_state_specs", {}))
        for name, value in list(vars(klass).items()):
            if isinstance(value, (Property, Factor)):
                declared[name] = value
            elif isinstance(value, Learnable):
                learnables[name] = value
            elif isinstance(value, StateParameter):
                states[name] = value
    for name in (*learnables, *states):
        if name in vars(cls):  # the value lives in _parameters/_buffers; a class attribute would shadow it
            delattr(cls, name)
    cls._declared = declared
    cls._learnable_specs = learnables
    cls._state_specs = states
    cls._per_channel = tuple(
        name
        for specs in (learnables, states)
        for name, spec in specs.items()
        if isinstance(spec.shape, PerChannel)
    )
    cls.config_keys = tuple(declared)
    positional = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=_default(value))
        for name, value in declared.items()
        if value.positional
    ]
    keywords = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_default(value))
        for name, value in declared.items()
        if not value.positional and name != "Name"
    ]
    keywords += [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
        for name in (*learnables, *states)
    ]
    keywords.append(inspect.Parameter("Name", inspect.Parameter.KEYWORD_ONLY, default=""))
    if learnables or states:
        keywords += [
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=None) for key in TORCH_KEYWORDS
        ]
    cls._declared_signature = inspect.Signature(positional + keywords)
    own_init = next(
        (klass.__dict__["__init__"] for klass in cls.__mro__ if "__init__" in klass.__dict__), None
    )
    if own_init is not None and own_init is not Layer.__init__:
        signature = inspect.signature(own_init)
        cls.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])
        cls.config_keys = tuple(
            name
            for name, parameter in cls.__signature__.parameters.items()
            if parameter.kind is not inspect.Parameter.VAR_KEYWORD
        )
    else:
        cls.__signature__ = cls._declared_signature
    options = cls.__signature__
    parameters = list(options.parameters.values())
    if parameters and parameters[-1].kind is inspect.Parameter.VAR_KEYWORD:
        # an __init__ passing **options on to Layer.__init__ takes the declared options too (Name)
        named = set(options.parameters)
        extra = [
            parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for parameter in cls._declared_signature.parameters.values()
            if parameter.name not in named
        ]
        options = options.replace(parameters=parameters[:-1] + extra + parameters[-1:])
    cls._options = _options.Options(options)


def _empty_on(device: Any, dtype: torch.dtype) -> torch.Tensor:
    """An empty tensor on ``device``: a device torch cannot use is a clear error, not an AssertionError."""
    try:
        return torch.empty(0, dtype=dtype, device=device)
    except (RuntimeError, AssertionError, TypeError, ValueError) as error:
        raise DLFormatError(f"device {device!r} cannot be used here: {error}") from None


def _default(declaration: Property | Factor) -> Any:
    return inspect.Parameter.empty if declaration.default is REQUIRED else declaration.default


def _is_vector(shape: tuple[int, ...]) -> bool:
    """At most one dimension larger than 1: MATLAB's N×1, 1×N and 1×1×N hold the same values."""
    return sum(size != 1 for size in shape) <= 1


def _floating_tensor(label: str, value: object) -> torch.Tensor:
    """A copy of ``value`` as a floating tensor, refusing anything else with a clear error."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "f":
            raise DLFormatError(
                f"{label} must be a floating-point array (float32 or float64); got a NumPy "
                f"array of dtype {value.dtype}"
            )
        return torch.from_numpy(np.array(value, dtype=value.dtype.newbyteorder("="), order="C"))
    if isinstance(value, DLArray):
        value = value._data
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point():
            raise DLFormatError(
                f"{label} must be a floating-point tensor (float32 or float64); got dtype {value.dtype}"
            )
        return value.detach().clone()
    raise DLFormatError(f"{label} must be a NumPy array or torch tensor; got {_validate.describe(value)}")


def _unformatted(result: Any) -> Any:
    """A non-formattable layer's output for unformatted input: tensors become unformatted dlarrays."""
    return DLArray._wrap(result, "") if isinstance(result, torch.Tensor) else result


def _relabel(result: Any, fmt: str, layer: Layer) -> Any:
    """A non-formattable layer's output, given the input's format as MATLAB does."""
    data = result._data if isinstance(result, DLArray) else result
    if not isinstance(data, torch.Tensor):
        raise DLFormatError(
            f"{layer._caller()} must return dlarrays or tensors; got {_validate.describe(result)}"
        )
    if isinstance(result, DLArray) and result._fmt:
        return result
    if data.ndim > len(fmt):
        raise DLFormatError(
            f'{layer._caller()} returned {data.ndim} dimensions for a "{fmt}" input; a layer that is not '
            "Formattable must keep the input's dimensions (set Formattable = True and return a "
            "formatted dlarray)"
        )
    return DLArray(data, fmt)


class _ArgumentsError(DLFormatError):
    """Arguments a layer class's declared signature does not take (the error names the class;
    its MATLAB-named constructor renames it)."""

    def __init__(self, layer_class: type, detail: str) -> None:
        super().__init__(f"{layer_class.__name__}: {detail}")
        self.layer_class, self.detail = layer_class, detail


def matlab_constructor(cls: type[Layer], name: str) -> Callable[..., Layer]:
    """MATLAB's constructor function for a layer class (``fullyConnectedLayer`` for
    :class:`FullyConnectedLayer`): the same arguments, errors named after the function."""
    options = cls._options
    # the class's __init__ binds the arguments to this same signature first thing: one bind, its
    # error renamed after the function (binding here too cost a tenth of building a small layer)
    declared = cls.__signature__ is cls._declared_signature

    def construct(*args: Any, **name_value: Any) -> Layer:
        args, name_value = _options.normalize(name, options, args, name_value)
        if declared:
            try:
                return cls(*args, **name_value)
            except _ArgumentsError as error:
                if error.layer_class is not cls:
                    raise
                raise DLFormatError(f"{name}: {error.detail}") from None
        try:
            options_bound = inspect.signature(cls).bind(*args, **name_value)
        except TypeError as error:
            raise DLFormatError(f"{name}: {error}") from None
        return cls(*options_bound.args, **options_bound.kwargs)

    construct.__name__ = construct.__qualname__ = name
    construct.__signature__ = inspect.signature(cls)  # type: ignore[attr-defined]
    construct.__doc__ = (
        f"MATLAB's ``{name}``: builds :class:`{cls.__name__}` from the same arguments.\n\n"
        f"Name=Value options (or MATLAB's 'Name', value pairs) match case-insensitively, as in "
        f"MATLAB. See :class:`{cls.__module__}.{cls.__name__}` for every option.\n"
    )
    return construct


_declare(Layer)
