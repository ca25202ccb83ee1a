"""MATLAB's recurrent layers: ``lstmLayer``, ``bilstmLayer``, ``gruLayer`` and their projected
forms ``lstmProjectedLayer`` and ``gruProjectedLayer``.

One base, :class:`RecurrentLayer`, declares what they share (sizes, output mode, state
ports, activations, the three learnables with their initializers and factors, the state);
each layer adds its gate count, directions and the call into the functional core
(:func:`dlformat.functional.lstm`, :func:`dlformat.functional.gru`). The projected layers add
two projector matrices and run the same core on the weights they stand for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, cast

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional._common import floating_data
from ..functional._dense import flattened_size
from ..functional._recurrent import (
    GATE_ACTIVATIONS,
    GRU_GATES,
    LSTM_GATES,
    RESET_GATE_MODES,
    STATE_ACTIVATIONS,
    RecurrentInputs,
    layer_gru,
    layer_lstm,
    run_gru,
    run_lstm,
)
from . import _initializers
from ._base import Layer, matlab_constructor
from ._initializers import RECURRENT_NAMES
from ._properties import (
    INITIALIZER_GROUP,
    STATE_GROUP,
    Factor,
    FactorValue,
    Learnable,
    Property,
    auto_size_property,
    choice_property,
    factor_properties,
    initializer_property,
)

__all__ = [
    "BiLSTMLayer",
    "GRULayer",
    "GRUProjectedLayer",
    "LSTMLayer",
    "LSTMProjectedLayer",
    "bilstmLayer",
    "gruLayer",
    "gruProjectedLayer",
    "lstmLayer",
    "lstmProjectedLayer",
]

OUTPUT_MODES = ("sequence", "last")
LSTM_BIAS_INITIALIZERS = ("unit-forget-gate", "narrow-normal", "ones", "zeros")
GRU_BIAS_INITIALIZERS = ("zeros", "narrow-normal", "ones")
FORGET_GATE = 1  # MATLAB's LSTM gate blocks: input, forget, cell candidate, output


_flag = _validate.flag  # layers here and elsewhere import it by this name


def _state_value(name: str, value: object) -> Any:
    """An initial state as given (checked against NumHiddenUnits once that is known); ``None``: zeros."""
    if value is None or isinstance(value, (torch.Tensor, np.ndarray, DLArray)):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str):
        return np.asarray(value, dtype=np.float64)
    raise DLFormatError(f"{name} must be a NumHiddenUnits × 1 vector; got {_validate.describe(value)}")


GATED = ("InputWeights", "RecurrentWeights", "Bias")  # the learnables whose rows are gate blocks


def _gate_factor(layer: RecurrentLayer, name: str, value: Any) -> FactorValue:
    """A factor of a gated learnable: a scalar, or MATLAB's vector of one value per gate block
    (LSTM 4, BiLSTM 8: forward gates then backward, GRU 3), which MATLAB's ``LSTMLayer`` and
    ``BiLSTMLayer`` classes expand to one value per row (``repelem(factor, NumHiddenUnits)``)."""
    if not isinstance(value, (Sequence, np.ndarray, torch.Tensor)) or isinstance(value, str):
        return _validate.factor(name, value)
    array = value.detach().cpu() if isinstance(value, torch.Tensor) else np.asarray(value)
    items = array.reshape(-1).tolist()
    if len(items) == 1:
        return _validate.factor(name, items[0])
    blocks = layer.gates * layer.directions
    if len(items) != blocks:
        raise DLFormatError(
            f"{name} must be a scalar or a vector of {blocks} values, one per gate block of "
            f"{type(layer).__name__}; got {_validate.describe(value)}"
        )
    return tuple(_validate.factor(f"each value of {name}", item) for item in items)


class _GateFactor(Factor):
    """A learn-rate or L2 factor of a gated learnable: a scalar or one value per gate."""

    def __set__(self, layer: Layer, value: Any) -> None:
        for parameter in self.parameters:
            layer._factors[parameter][self.kind] = _gate_factor(cast(RecurrentLayer, layer), self.name, value)


def _gate_factors(parameters: str, *, l2: float = 1.0) -> tuple[Factor, Factor]:
    return _GateFactor(parameters, "LearnRateFactor"), _GateFactor(parameters, "L2Factor", default=l2)


class RecurrentLayer(Layer):
    """What MATLAB's LSTM, BiLSTM and GRU layers share; see :class:`LSTMLayer`, :class:`GRULayer`.

    State: ``HiddenState`` (and ``CellState``) is the initial state of the next call: a
    ``NumHiddenUnits × 1`` column is used for every observation, as MATLAB broadcasts it. Each
    call assigns the final state of every observation (``NumHiddenUnits × NumObservations``),
    so the next call carries on from there with the same number of observations (a call with
    another number is an error until the state is reset or assigned). Inside a network the
    network decides whether that update persists (MATLAB's rule: ``predict`` and ``forward``
    leave the state as it was; only the returned ``State`` carries it); a layer used on its own
    keeps it. Assign ``layer.HiddenState = torch.zeros(n, 1)`` to reset it.
    """

    gates: ClassVar[int] = LSTM_GATES
    operation: ClassVar[Callable[..., tuple[Any, ...]]]  # the functional core's run_lstm or run_gru
    # its path for the layer's own tensors (layer_lstm or layer_gru): None where it does not apply
    layer_operation: ClassVar[Callable[..., tuple[Any, ...] | None]]
    directions: ClassVar[int] = 1
    state_names: ClassVar[tuple[str, ...]] = ("HiddenState",)
    state_updates_persist: ClassVar[bool] = False
    lazy_size = "InputSize"
    lazy_size_from: ClassVar[tuple[str, int] | None] = ("InputWeights", 1)
    lazy_meaning = "features (S and C flattened)"

    NumHiddenUnits = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Hidden units (the hidden size)."
    )
    InputSize = auto_size_property('"auto" or the input features.')
    OutputMode = choice_property(OUTPUT_MODES, "sequence", '"sequence" or "last" (the last time step only).')
    HasStateInputs = Property(_flag, default=False, read_only=True, doc="Extra state inputs.")
    HasStateOutputs = Property(_flag, default=False, read_only=True, doc="Extra state outputs.")
    StateActivationFunction = choice_property(STATE_ACTIVATIONS, "tanh", '"tanh" or "softsign".')
    GateActivationFunction = choice_property(GATE_ACTIVATIONS, "sigmoid", '"sigmoid" or "hard-sigmoid".')
    InputWeights = Learnable(initializer="InputWeightsInitializer")
    RecurrentWeights = Learnable(initializer="RecurrentWeightsInitializer")
    Bias = Learnable(initializer="BiasInitializer")
    InputWeightsInitializer = initializer_property("glorot", names=RECURRENT_NAMES)
    RecurrentWeightsInitializer = initializer_property("orthogonal", names=RECURRENT_NAMES)
    InputWeightsLearnRateFactor, InputWeightsL2Factor = _gate_factors("InputWeights")
    RecurrentWeightsLearnRateFactor, RecurrentWeightsL2Factor = _gate_factors("RecurrentWeights")
    BiasLearnRateFactor, BiasL2Factor = _gate_factors("Bias", l2=0.0)
    HiddenState = Property(
        _state_value, default=None, buffer=True, group=STATE_GROUP, doc="Hidden state of the next call."
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the state is not construction configuration (as learnables are not)
        cls.config_keys = tuple(key for key in cls.config_keys if key not in cls.state_names)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.state_names and self.__dict__.get("_constructed") and name not in self._state_names:
            raise DLFormatError(
                f"{type(self).__name__} has HasStateInputs true: its state comes from the inputs, and "
                f"{name} cannot be set"
            )
        super().__setattr__(name, value)

    @property
    def _state_size(self) -> int:
        return self.directions * int(self.NumHiddenUnits)

    def _check_properties(self) -> None:
        if self.HasStateInputs:
            given = [name for name in self.state_names if self._buffers.get(name) is not None]
            if given:
                raise DLFormatError(
                    f"{type(self).__name__}: with HasStateInputs true the state comes from the inputs; "
                    f"do not set {' or '.join(given)}"
                )
        else:
            for name in self.state_names:
                initial = self._buffers.get(name)
                value = self._buffers[name] = self._starting_state(name, initial)
                if initial is None:  # zeros the layer made: no precision of their own (Layer._state_in)
                    self._layer_made[name] = value
                self._state_names.append(name)
                self._remember_initial(name, value)  # what resetState puts back
        # the options of the functional core's path for the layer's own tensors (layer_operation),
        # or None where the layer's options rule it out: fixed here, as these options are
        # read-only (the core still checks everything that depends on the call's input)
        fused = self.StateActivationFunction == "tanh" and self.GateActivationFunction == "sigmoid"
        self.__dict__["_layer_options"] = (
            {
                "last": self.OutputMode == "last",
                "state_gradients": self.HasStateOutputs,
                **self._operation_options(),
            }
            if fused and not self.HasStateInputs
            else None
        )
        ports = tuple(name.removesuffix("State").lower() for name in self.state_names)  # hidden, cell
        self._ports = {
            "in": ("in", *ports) if self.HasStateInputs else ("in",),
            "out": ("out", *ports) if self.HasStateOutputs else ("out",),
        }

    def set_factor(self, parameter: str, kind: str, value: object) -> None:
        if parameter in GATED:
            self.factors(parameter)[kind] = _gate_factor(self, f"the {kind} of {parameter}", value)
        else:
            super().set_factor(parameter, kind, value)

    def factor_scale(self, parameter: str, kind: str, like: torch.Tensor) -> float | torch.Tensor:
        value = self.factors(parameter)[kind]
        if not isinstance(value, tuple):
            return value
        hidden = int(self.NumHiddenUnits)
        if like.shape[0] != len(value) * hidden:
            raise DLFormatError(
                f"{self._caller()}: a per-gate {kind} of {parameter} needs {len(value)}*NumHiddenUnits rows; "
                f"{parameter} has {like.shape[0]} (GRU's recurrent-bias mode doubles the bias, and how "
                "MATLAB spreads a per-gate vector over it could not be sourced)"
            )
        rows = torch.tensor(value, dtype=like.dtype, device=like.device).repeat_interleave(hidden)
        return rows.reshape(-1, *(1,) * (like.ndim - 1))

    def _state_size_rule(self, name: str, shape: tuple[int, ...]) -> str | None:
        """State follows the observations: a column for all (``n×1``) or one per observation
        (``n×N``, what a call assigns and ``[Y, state] = predict(net, X)`` returns)."""
        rows = self._state_size
        if len(shape) == 2 and shape[0] == rows and shape[1] >= 1:
            return None
        return f"{rows}×1 or {rows}×N (one column per observation)"

    def _starting_state(self, name: str, value: Any) -> torch.Tensor:
        if value is None:
            return torch.zeros(self._state_size, 1, dtype=self._like.dtype, device=self._like.device)
        tensor = torch.as_tensor(value._data if isinstance(value, DLArray) else value)
        if tensor.numel() != self._state_size or not tensor.is_floating_point():
            raise DLFormatError(
                f"{type(self).__name__} {name} must be a floating {self._state_size} × 1 vector; got "
                f"{_validate.matlab_size(tuple(tensor.shape)) or 'a scalar'} of {tensor.dtype}"
            )
        return tensor.detach().clone().reshape(self._state_size, 1).to(self._like.device)

    def _rows(self) -> int:
        return self.gates * self.directions * int(self.NumHiddenUnits)

    def _bias_rows(self) -> int:
        return self._rows()

    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        columns = {"InputWeights": None, "RecurrentWeights": self.NumHiddenUnits, "Bias": 1}[name]
        if name == "Bias":
            return (self._bias_rows(), 1)
        return (self._rows(), self._fixed_size(name) if columns is None else columns)

    def _size_of(self, X: DLArray) -> int:
        return flattened_size(X._fmt, tuple(X.shape))

    def predict(self, X: DLArray, *states: Any) -> Any:
        X = require_dimensions(X, "C", self._caller)
        if not X._data.is_floating_point():
            floating_data(X._data, self._caller())  # refuses integers (the caller's name built only then)
        self._fit_input(X)
        has_outputs = self.HasStateOutputs
        if self.HasStateInputs:
            Y, *final = self._run(X, states, tuple(f"{name} input" for name in self.InputNames[1:]))
        else:
            data = X._data
            states = tuple([self._state_in(name, data) for name in self.state_names])
            Y, *final = self._run(X, states, self.state_names)
            for name, value in zip(self.state_names, final, strict=True):
                # the operation's own result: floating, on the state's device, of a shape the
                # state rule accepts, so the checked assignment (setattr) would only copy it;
                # stored as that detached copy directly (this runs on every call; without state
                # outputs the operation returned it detached already), in the running network
                # call's state when there is one (see _call_state)
                self._store_state(name, (value.detach() if has_outputs else value).clone())
        if not has_outputs:
            return Y
        return (Y, *(DLArray._wrap(value, "CB") for value in final))

    def _weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The input and recurrent weights the operation runs on."""
        return self.InputWeights, self.RecurrentWeights

    def _run(self, X: DLArray, states: tuple[Any, ...], labels: tuple[str, ...]) -> tuple[Any, ...]:
        options = self.__dict__.get("_layer_options")
        if options is not None:
            result = self.layer_operation(X, states, *self._weights(), self.Bias, **options)
            if result is not None:
                return result
        inputs = RecurrentInputs(
            self._caller(),
            X,
            tuple(zip(labels, states, strict=True)),
            *self._weights(),
            self.Bias,
            self.StateActivationFunction,
            self.GateActivationFunction,
            self.HasStateOutputs,  # without state outputs the final states are only stored
        )
        return self.operation(inputs, last=self.OutputMode == "last", **self._operation_options())

    def _operation_options(self) -> dict[str, Any]:
        """The options of this layer's operation beyond those all three share."""
        raise NotImplementedError


class LSTMLayer(RecurrentLayer):
    """Long short-term memory over the ``T`` dimension, as MATLAB's ``lstmLayer`` computes it.

    Per time step: ``[i; f; g; o] = InputWeights x + RecurrentWeights h + Bias`` (gate blocks
    in MATLAB's order: input, forget, cell candidate, output), ``c = σ(f)·c + σ(i)·tanh(g)``,
    ``h = σ(o)·tanh(c)``, with ``σ`` the ``GateActivationFunction`` and ``tanh`` the
    ``StateActivationFunction``; see :func:`dlformat.functional.lstm`. The default activations
    run on torch's fused LSTM kernel (cuDNN on a GPU); ``"softsign"`` or ``"hard-sigmoid"`` loop
    over the time steps.

    Args:
        NumHiddenUnits: the hidden size; the output has ``NumHiddenUnits`` channels.
        OutputMode: ``"sequence"`` (every time step) or ``"last"`` (the last one; ``T`` dropped).
        HasStateInputs: inputs ``"hidden"`` and ``"cell"`` (``"CB"``) give the initial state
            (``HiddenState``/``CellState`` are then unset). HasStateOutputs: outputs
            ``"hidden"`` and ``"cell"`` return the final state (``"CB"``).
        StateActivationFunction: ``"tanh"`` or ``"softsign"``. GateActivationFunction:
            ``"sigmoid"`` or ``"hard-sigmoid"``.
        InputSize: ``"auto"`` (from the first input) or the input features (``S`` and ``C`` flattened).
        InputWeights: ``4*NumHiddenUnits × InputSize``; RecurrentWeights:
            ``4*NumHiddenUnits × NumHiddenUnits``; Bias: ``4*NumHiddenUnits × 1``.
        InputWeightsInitializer: ``"glorot"`` (default), ``"he"``, ``"orthogonal"``,
            ``"narrow-normal"``, ``"zeros"``, ``"ones"`` or a callable ``f(sz)``;
            RecurrentWeightsInitializer likewise, default ``"orthogonal"``; BiasInitializer:
            ``"unit-forget-gate"`` (default: ones for the forget gate, zeros elsewhere),
            ``"narrow-normal"``, ``"ones"``, ``"zeros"`` or a callable.
        InputWeightsLearnRateFactor, RecurrentWeightsLearnRateFactor, BiasLearnRateFactor,
            InputWeightsL2Factor, RecurrentWeightsL2Factor: default 1; BiasL2Factor: default 0.
            Each a scalar, or one value per gate (4 values in the gate order; the solvers and
            ``trainnet`` scale each gate's rows by its own value).
        HiddenState, CellState: initial state, ``NumHiddenUnits × 1`` (default zeros).
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.

    Shape:
        - Input: a dlarray with ``C`` (``"CBT"``, ``"CT"``, ``"CB"``: one time step; ``S``
          dimensions are flattened into the features).
        - Output: ``"CBT"`` for ``"CBT"`` (``"CB"`` with ``OutputMode="last"``), ``C`` of size
          ``NumHiddenUnits``.

    Examples:
        >>> layer = dlf.lstmLayer(32)
        >>> Y = layer(dlf.dlarray(torch.randn(16, 4, 10), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.InputWeights.shape), tuple(layer.HiddenState.shape)
        ('CBT', (32, 4, 10), (128, 16), (32, 4))
    """

    default_name = "lstm"
    matlab_type = "LSTM"
    operation = staticmethod(run_lstm)
    layer_operation = staticmethod(layer_lstm)
    state_names = ("HiddenState", "CellState")

    BiasInitializer = initializer_property("unit-forget-gate", names=LSTM_BIAS_INITIALIZERS)
    CellState = Property(
        _state_value, default=None, buffer=True, group=STATE_GROUP, doc="Cell state of the next call."
    )

    def _initializer(self, name: str) -> tuple[str | Callable[..., object], int, int]:
        initializer, num_in, num_out = super()._initializer(name)
        if initializer == "unit-forget-gate":
            return self._unit_forget_gate, num_in, num_out
        return initializer, num_in, num_out

    def _unit_forget_gate(self, size: tuple[int, ...]) -> torch.Tensor:
        """MATLAB's "unit-forget-gate": ones for the forget gate's bias, zeros elsewhere."""
        bias = torch.zeros(self.directions, self.gates, int(self.NumHiddenUnits))
        bias[:, FORGET_GATE] = 1.0
        return bias.reshape(size)

    def _operation_options(self) -> dict[str, Any]:
        return {"directions": self.directions}


class BiLSTMLayer(LSTMLayer):
    """Bidirectional LSTM, MATLAB's ``bilstmLayer``: one LSTM forward in time and one backward.

    Every matrix stacks the forward direction's rows over the backward's (``InputWeights``
    ``8*NumHiddenUnits × InputSize``, ``RecurrentWeights`` ``8*NumHiddenUnits ×
    NumHiddenUnits``, ``Bias`` ``8*NumHiddenUnits × 1``, each half in the LSTM gate order), and
    the output concatenates the forward then the backward hidden state along ``C``
    (``2*NumHiddenUnits`` channels); ``HiddenState``/``CellState`` are ``2*NumHiddenUnits × 1``
    likewise. ``OutputMode="last"`` gives the last time step of that output: the forward
    direction's final state and the backward direction's state after its first step (the last
    input). Options as for :class:`LSTMLayer`.

    Examples:
        >>> layer = dlf.bilstmLayer(8, OutputMode="last")
        >>> Y = layer(dlf.dlarray(torch.randn(5, 3, 7), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.InputWeights.shape)
        ('CB', (16, 3), (64, 5))
    """

    default_name = "bilstm"
    matlab_type = "BiLSTM"
    directions = 2


class GRULayer(RecurrentLayer):
    """Gated recurrent unit over the ``T`` dimension, as MATLAB's ``gruLayer`` computes it.

    Gate blocks in MATLAB's order reset, update, candidate; ``ResetGateMode`` places the reset
    gate (see :func:`dlformat.functional.gru`): ``"after-multiplication"`` (default),
    ``"before-multiplication"`` or ``"recurrent-bias-after-multiplication"`` (``Bias`` then
    ``6*NumHiddenUnits × 1``: the input biases, then the recurrent ones). The after-modes with
    the default activations run on torch's fused GRU kernel; the rest loop over time steps.

    Args:
        NumHiddenUnits, OutputMode, StateActivationFunction, GateActivationFunction, InputSize:
            as for :class:`LSTMLayer`.
        HasStateInputs, HasStateOutputs: an extra ``"hidden"`` input / output (``"CB"``).
        ResetGateMode: see above.
        InputWeights: ``3*NumHiddenUnits × InputSize``; RecurrentWeights: ``3*NumHiddenUnits ×
            NumHiddenUnits``; Bias: ``3*NumHiddenUnits × 1`` (``6*`` in the recurrent-bias mode).
        InputWeightsInitializer (``"glorot"``), RecurrentWeightsInitializer (``"orthogonal"``):
            as for :class:`LSTMLayer`; BiasInitializer: ``"zeros"`` (default), ``"narrow-normal"``,
            ``"ones"`` or a callable.
        The factors: as for :class:`LSTMLayer`.
        HiddenState: initial hidden state, ``NumHiddenUnits × 1`` (default zeros).
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.

    Examples:
        >>> layer = dlf.gruLayer(6, ResetGateMode="recurrent-bias-after-multiplication")
        >>> Y = layer(dlf.dlarray(torch.randn(4, 2, 9), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.Bias.shape)
        ('CBT', (6, 2, 9), (36, 1))
    """

    default_name = "gru"
    matlab_type = "GRU"
    operation = staticmethod(run_gru)
    layer_operation = staticmethod(layer_gru)
    gates = GRU_GATES

    ResetGateMode = choice_property(RESET_GATE_MODES, "after-multiplication", "Where the reset gate acts.")
    BiasInitializer = initializer_property("zeros", names=GRU_BIAS_INITIALIZERS)

    def _bias_rows(self) -> int:
        return self._rows() * (2 if self.ResetGateMode == "recurrent-bias-after-multiplication" else 1)

    def _operation_options(self) -> dict[str, Any]:
        return {"reset_gate_mode": self.ResetGateMode}


def _projector_initializer(name: str, value: object) -> str | Callable[..., object] | None:
    # None: not given; MathWorks' pages as stored here do not show the default (see _Projected)
    return None if value is None else _initializers.check(name, value, names=RECURRENT_NAMES)


def _projectors() -> tuple[Learnable, Learnable]:
    """The ``InputProjector`` and ``OutputProjector`` learnables (declared in each projected class:
    a learnable's declaration must not stay on a shared base, where it would shadow the value)."""
    return (
        Learnable(initializer="InputProjectorInitializer"),
        Learnable(initializer="OutputProjectorInitializer"),
    )


class _Projected:
    """What ``lstmProjectedLayer`` and ``gruProjectedLayer`` add to their recurrent layer.

    MATLAB stores each weight matrix ``W`` as ``W' = W Q`` with a projector ``Q`` and applies
    ``W' Qᵀ``: ``InputWeights`` (``gates*NumHiddenUnits × InputProjectorSize``) times
    ``InputProjectorᵀ`` (``InputProjector`` is ``InputSize × InputProjectorSize``) stands for
    the input weights, ``RecurrentWeights`` (``gates*NumHiddenUnits × OutputProjectorSize``)
    times ``OutputProjectorᵀ`` (``OutputProjector`` is ``NumHiddenUnits ×
    OutputProjectorSize``) for the recurrent ones; the state and the output keep
    ``NumHiddenUnits`` channels. MathWorks' TensorFlow exporter exports these layers as the
    plain layer with exactly those two products, and so does this: the operation runs on
    torch's fused kernels with the two products formed per call (gradients reach every factor).
    torch's ``proj_size`` is not this layer: it outputs the projected state.

    The projectors' initializer defaults are not settled from MathWorks' pages as stored here,
    so a layer needs ``InputProjectorInitializer``/``OutputProjectorInitializer`` (or the
    ``InputProjector``/``OutputProjector`` values) given; without them construction fails,
    naming the property.
    """

    lazy_size_from: ClassVar[tuple[str, int] | None] = ("InputProjector", 0)

    OutputProjectorSize = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Columns of OutputProjector."
    )
    InputProjectorSize = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Columns of InputProjector."
    )
    InputProjectorInitializer = Property(
        _projector_initializer, default=None, group=INITIALIZER_GROUP, doc="Required: see the class."
    )
    OutputProjectorInitializer = Property(
        _projector_initializer, default=None, group=INITIALIZER_GROUP, doc="Required: see the class."
    )
    InputProjectorLearnRateFactor, InputProjectorL2Factor = factor_properties("InputProjector")
    OutputProjectorLearnRateFactor, OutputProjectorL2Factor = factor_properties("OutputProjector")

    def _shape_meaning(self: Any, name: str) -> str:
        sizes = {
            "InputProjector": "InputSize×InputProjectorSize",
            "OutputProjector": "NumHiddenUnits×OutputProjectorSize",
        }
        return f" ({sizes[name]})" if name in sizes else ""

    def _learnable_shape(self: Any, name: str) -> tuple[int, ...]:
        rows = self._rows()
        shapes = {
            "InputWeights": lambda: (rows, self.InputProjectorSize),
            "RecurrentWeights": lambda: (rows, self.OutputProjectorSize),
            "InputProjector": lambda: (self._fixed_size(name), self.InputProjectorSize),
            "OutputProjector": lambda: (self.NumHiddenUnits, self.OutputProjectorSize),
        }
        return shapes[name]() if name in shapes else RecurrentLayer._learnable_shape(self, name)

    def _init_learnables(self: Any, given: dict[str, Any], generator: torch.Generator | None) -> None:
        for projector in ("InputProjector", "OutputProjector"):
            if given.get(projector) is None:
                _Projected._projector_initializer(self, projector)
        Layer._init_learnables(self, given, generator)

    def _projector_initializer(self: Any, projector: str) -> str | Callable[..., object]:
        """The projector's initializer; an error naming it while it is unset (no sourced default)."""
        initializer: str | Callable[..., object] | None = self._properties[f"{projector}Initializer"]
        if initializer is None:
            raise DLFormatError(
                f"{type(self).__name__}: give {projector}Initializer (or {projector}): MATLAB's default "
                "for it is not settled from MathWorks' documentation, so dlformat does not guess it"
            )
        return initializer

    def _initializer(self: Any, name: str) -> tuple[str | Callable[..., object], int, int]:
        if name in ("InputProjector", "OutputProjector"):
            _Projected._projector_initializer(self, name)  # reset_parameters with given projectors
        # the next class in the layer's MRO (LSTMLayer's unit-forget-gate, or Layer's)
        result: tuple[str | Callable[..., object], int, int] = super()._initializer(name)  # type: ignore[misc]
        return result

    def _weights(self: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return self.InputWeights @ self.InputProjector.T, self.RecurrentWeights @ self.OutputProjector.T


class LSTMProjectedLayer(_Projected, LSTMLayer):
    """LSTM with projected weights, MATLAB's ``lstmProjectedLayer`` (R2022b).

    The LSTM of :class:`LSTMLayer` with ``InputWeights @ InputProjector.T`` as its input weights
    and ``RecurrentWeights @ OutputProjector.T`` as its recurrent weights (see
    :class:`dlformat.layers.recurrent._Projected`): fewer stored values, the same output size
    (``NumHiddenUnits`` channels).

    Args:
        NumHiddenUnits, OutputProjectorSize, InputProjectorSize: the sizes (positional, in
            MATLAB's order).
        InputProjectorInitializer, OutputProjectorInitializer: required (no sourced default):
            ``"orthogonal"``, ``"glorot"``, ``"he"``, ``"narrow-normal"``, ``"zeros"``,
            ``"ones"`` or a callable ``f(sz)``; or give ``InputProjector`` (``InputSize ×
            InputProjectorSize``) and ``OutputProjector`` (``NumHiddenUnits × OutputProjectorSize``).
        InputProjectorLearnRateFactor, InputProjectorL2Factor, OutputProjectorLearnRateFactor,
            OutputProjectorL2Factor: default 1.
        InputWeights: ``4*NumHiddenUnits × InputProjectorSize``; RecurrentWeights:
            ``4*NumHiddenUnits × OutputProjectorSize``; Bias: ``4*NumHiddenUnits × 1``.
        Everything else: as for :class:`LSTMLayer`.

    Examples:
        >>> layer = dlf.lstmProjectedLayer(
        ...     32, 8, 4, InputProjectorInitializer="orthogonal", OutputProjectorInitializer="orthogonal"
        ... )
        >>> Y = layer(dlf.dlarray(torch.randn(16, 2, 10), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.InputProjector.shape), tuple(layer.Bias.shape)
        ('CBT', (32, 2, 10), (16, 4), (128, 1))
    """

    default_name = "lstmp"
    matlab_type = "LSTM Projected"

    InputProjector, OutputProjector = _projectors()


class GRUProjectedLayer(_Projected, GRULayer):
    """GRU with projected weights, MATLAB's ``gruProjectedLayer`` (R2023b).

    The GRU of :class:`GRULayer` (every ``ResetGateMode``) with ``InputWeights @
    InputProjector.T`` and ``RecurrentWeights @ OutputProjector.T`` as its weights; options as
    for :class:`LSTMProjectedLayer` with ``3*NumHiddenUnits`` weight rows.

    Examples:
        >>> Q = torch.linalg.qr(torch.randn(5, 3)).Q  # InputSize 5 × InputProjectorSize 3
        >>> layer = dlf.gruProjectedLayer(6, 2, 3, InputProjector=Q, OutputProjectorInitializer="glorot")
        >>> layer.InputSize, tuple(layer(dlf.dlarray(torch.randn(5, 2, 9), "CBT")).shape)
        (5, (6, 2, 9))
    """

    default_name = "grup"
    matlab_type = "GRU Projected"

    InputProjector, OutputProjector = _projectors()


lstmLayer = matlab_constructor(LSTMLayer, "lstmLayer")
bilstmLayer = matlab_constructor(BiLSTMLayer, "bilstmLayer")
gruLayer = matlab_constructor(GRULayer, "gruLayer")
lstmProjectedLayer = matlab_constructor(LSTMProjectedLayer, "lstmProjectedLayer")
gruProjectedLayer = matlab_constructor(GRUProjectedLayer, "gruProjectedLayer")
