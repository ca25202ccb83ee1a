"""Layers that hold a network: MATLAB's ``networkLayer`` (R2024a) and ``neuralODELayer`` (R2023b).

Both keep the network they are given (a copy: MATLAB's networks are values) as their ``Network``
property, a submodule, so that ``.to()``, ``state_dict`` and torch's ``parameters()`` reach its
layers. Their learnables are the nested layers' learnables, named ``"<layer>/<parameter>"``
(``"fc/Weights"``; ``"block/fc/Weights"`` one level deeper): ``net.Learnables``, the solvers,
``dlgradient``, the factors and ``save_learnables`` see them through the ordinary layer surface
(``learnables``, ``getattr``, ``factors``).

They live here, above the layers, because they hold networks.
"""

from __future__ import annotations

import copy
import itertools
import math
from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray, require_formatted
from .._errors import DLFormatError
from ..functional._common import working_dtype
from ..functional._ode import adjoint_solution, integrate
from ..layers import Layer
from ..layers._base import matlab_constructor
from ..layers._properties import FactorValue, Property, choice_property
from ._graph import DLNetwork

__all__ = ["NetworkLayer", "NeuralODELayer", "networkLayer", "neuralODELayer"]


def _network(name: str, value: object) -> DLNetwork:
    """A copy of a dlnetwork, or a dlnetwork of a layer array (not initialized: its sizes follow
    the data reaching the layer)."""
    if isinstance(value, DLNetwork):
        return copy.deepcopy(value)
    if isinstance(value, Layer) or (
        isinstance(value, (list, tuple)) and value and all(isinstance(item, Layer) for item in value)
    ):
        layers = copy.deepcopy(list(value) if isinstance(value, (list, tuple)) else [value])
        return DLNetwork().addLayers(layers)
    raise DLFormatError(f"{name} must be a dlnetwork or a layer array; got {_validate.describe(value)}")


class _NestedNetworkLayer(Layer):
    """What both layers share: the ``Network`` submodule and its learnables as the layer's own."""

    Network: Any  # declared by each subclass (its position in the constructor differs)

    def _check_properties(self) -> None:
        net = self._properties["Network"]
        self._modules["Network"] = net  # a submodule: .to(), state_dict and parameters() reach it

    @property
    def Layers(self) -> Any:
        """The nested network's layers (MATLAB's ``layer.Layers``)."""
        return self.Network.Layers

    # -- the nested learnables, named "<layer>/<parameter>" ----------------------------------
    def _nested(self, name: str) -> tuple[Layer, str]:
        layer_name, _, parameter = name.partition("/")
        layers = self.Network._by_name
        if not parameter or layer_name not in layers:
            known = ", ".join(self.learnables) or "none"
            raise DLFormatError(
                f"{self._caller()} has no learnable parameter {name!r}; its learnables are: {known}"
            )
        return layers[layer_name], parameter

    @property
    def learnables(self) -> tuple[str, ...]:
        return tuple(
            f"{name}/{parameter}"
            for name, layer in self.Network._by_name.items()
            for parameter in layer.learnables
        )

    def __getattr__(self, name: str) -> Any:
        if "/" in name:
            layer, parameter = self._nested(name)
            return getattr(layer, parameter)
        return super().__getattr__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if "/" in name:  # net.Learnables = ...; a solver assigning a nested value
            layer, parameter = self._nested(name)
            setattr(layer, parameter, value)
            return
        super().__setattr__(name, value)

    def factors(self, parameter: str) -> dict[str, FactorValue]:
        layer, inner = self._nested(parameter)
        return layer.factors(inner)

    def factor_scale(self, parameter: str, kind: str, like: torch.Tensor) -> float | torch.Tensor:
        layer, inner = self._nested(parameter)
        return layer.factor_scale(inner, kind, like)

    def set_factor(self, parameter: str, kind: str, value: object) -> None:
        layer, inner = self._nested(parameter)
        layer.set_factor(inner, kind, value)

    @property
    def Initialized(self) -> bool:
        return bool(self.Network.Initialized)

    def _sizes_settled(self) -> bool:
        return bool(self.Network._settled())

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        for layer in self.Network._by_name.values():
            layer.reset_parameters(generator)

    def _display_value(self, name: str) -> str:
        if name == "Network":
            return f"[1×1 dlnetwork] ({len(self.Network.layers)} layers)"
        return super()._display_value(name)


class NetworkLayer(_NestedNetworkLayer):
    """MATLAB's ``networkLayer`` (R2024a): a layer containing a network, which it behaves as
    identically in training and inference (MathWorks' page).

    Args:
        Network: a dlnetwork (copied) or a layer array (made a dlnetwork, not initialized: its
            learnables take their sizes from the data reaching the layer).
        Name: the layer name (automatic names ``network``, ``network_1``, ...).

    Ports: the nested network's inputs and outputs. Its unconnected inputs are the layer's inputs,
    named as the nested network names them (``"fc"``, ``"add/in2"``), so that a port of a network
    layer ``block`` is ``"block/add/in2"``, as MATLAB's ``InputNames`` of nested networks read
    (``'bert_encoder/bert_model/input_ids'``); a nested network whose one input is an input layer
    makes the network layer an input layer itself. Its outputs are the nested ``OutputNames``.

    Learnables are the nested layers', named ``"<layer>/<parameter>"``; the nested network's
    State (batch normalization's statistics, recurrent states) stays in the nested network:
    training updates it there, and ``layer.Network.State`` shows it (the outer ``net.State`` does
    not list it).

    Examples:
        >>> block = dlf.networkLayer([dlf.fullyConnectedLayer(4, Name="fc"), dlf.reluLayer(Name="relu")],
        ...                          Name="block")
        >>> net = dlf.dlnetwork([dlf.featureInputLayer(3), block, dlf.fullyConnectedLayer(2)])
        >>> [row[:2] for row in net.Learnables][:2]
        [('block', 'fc/Weights'), ('block', 'fc/Bias')]
        >>> tuple(net.predict(torch.randn(3, 5)).shape)
        (2, 5)
    """

    default_name = "network"
    matlab_type = "Network"

    Network = Property(_network, positional=True, read_only=True, doc="The nested dlnetwork.")

    def _check_properties(self) -> None:
        super()._check_properties()
        net = self.Network
        inputs = net._inputs()
        if len(inputs) == 1 and inputs[0][1] == "":  # one input layer inside: the layer is an input
            self._ports["in"] = ()
        else:
            self._ports["in"] = tuple(net._port_name(port, "in") for port in inputs)
        self._ports["out"] = tuple(net.OutputNames)

    def example_input(
        self, device: torch.device | str | None = None, dtype: torch.dtype | None = None
    ) -> DLArray:
        """The nested input layer's example input (a network layer holding an input layer)."""
        (port,) = self.Network._inputs()
        result: DLArray = self.Network._by_name[port[0]].example_input(device, dtype)
        return result

    def predict(self, *X: Any) -> Any:
        return self.Network(*X, training=False)

    def forward(self, *X: Any) -> Any:  # type: ignore[override]  # MATLAB's forward, see Layer
        return self.Network(*X, training=True)


GRADIENT_MODES = ("direct", "adjoint")


def _time_interval(name: str, value: object) -> tuple[float, ...]:
    data = value._data if isinstance(value, DLArray) else value
    try:
        times = tuple(float(t) for t in torch.as_tensor(data, dtype=torch.float64).reshape(-1))
    except (TypeError, ValueError, RuntimeError):
        raise DLFormatError(
            f"{name} must be a numeric vector of times; got {_validate.describe(value)}"
        ) from None
    steps = [b - a for a, b in itertools.pairwise(times)]
    if len(times) < 2 or not all(math.isfinite(t) for t in times):
        raise DLFormatError(f"{name} must hold two or more finite times; got {list(times)}")
    if not (all(d > 0 for d in steps) or all(d < 0 for d in steps)):
        raise DLFormatError(f"{name} must be all increasing or all decreasing; got {list(times)}")
    return times


def _tolerance(name: str, value: object) -> float:
    number = _validate.positive(name, value)
    if not math.isfinite(number):
        raise DLFormatError(f"{name} must be finite; got {number}")
    return number


class NeuralODELayer(_NestedNetworkLayer):
    """MATLAB's ``neuralODELayer`` (R2023b): the solution of the ODE ``y' = Network(y)`` at the
    end of ``TimeInterval``, from the initial conditions ``y(TimeInterval(1))`` = the input.

    The solver is ``dlode45``'s: the Dormand–Prince pair with ``ode45``'s step-size control
    (:mod:`dlformat.functional._ode`), in the input's precision.

    Args:
        Network: the dlnetwork (copied) defining the ODE; one input, whose format and size its
            output keeps (MathWorks' page: "The network size and format of the network inputs
            and outputs must match").
        TimeInterval: two or more times, all increasing or all decreasing.
        GradientMode: ``"direct"`` (default: backpropagate through the solver's steps) or
            ``"adjoint"`` (solve the adjoint ODE backwards; the network may hold no State).
        RelativeTolerance: default 1e-3; AbsoluteTolerance: default 1e-6.
        Solver: ``"ode45"`` (default; ``"ode1"``, R2025a's Euler solver, is not ported).
        Name: the layer name (automatic names ``neuralode``, ``neuralode_1``, ...).

    Not ported (a clear error when met): a ``TimeInterval`` of more than two times (the page
    returns the solutions at the later times; their format in the layer's output is not given by
    the stored page), a network with two inputs (``predict(net, T, Y)``, whose ``T`` format the
    page does not give).

    Examples:
        >>> ode = dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(2, Name="fc")])
        >>> layer = dlf.neuralODELayer(ode, [0, 1], Name="ode")
        >>> Y = layer(dlf.dlarray(torch.randn(2, 3), "CB"))
        >>> dlf.dims(Y), tuple(Y.shape), layer.learnables
        ('CB', (2, 3), ('fc/Weights', 'fc/Bias'))
    """

    default_name = "neuralode"
    matlab_type = "Neural ODE"

    Network = Property(_network, positional=True, read_only=True, doc="The ODE's network.")
    TimeInterval = Property(_time_interval, positional=True, read_only=True, doc="Times, 2 or more.")
    GradientMode = choice_property(GRADIENT_MODES, "direct", '"direct" or "adjoint".')
    RelativeTolerance = Property(_tolerance, default=1e-3, read_only=True, doc="Relative tolerance.")
    AbsoluteTolerance = Property(_tolerance, default=1e-6, read_only=True, doc="Absolute tolerance.")
    Solver = choice_property(("ode45",), "ode45", '"ode45" (the only solver ported).')

    def _check_properties(self) -> None:
        super()._check_properties()
        net = self.Network
        if len(net.InputNames) != 1 or len(net.OutputNames) != 1:
            raise DLFormatError(
                f"neuralODELayer: the network must have one input and one output (predict(net, Y)); it has "
                f"{len(net.InputNames)} input(s) and {len(net.OutputNames)} output(s). A network with two "
                "inputs (predict(net, T, Y)) is not ported: the format of T is not settled"
            )
        if self.GradientMode == "adjoint" and net.State:
            raise DLFormatError(
                'neuralODELayer: GradientMode "adjoint" needs a network with an empty State (MathWorks\' '
                'page); this network has state. Use GradientMode="direct"'
            )

    def _run(self, X: Any, training: bool) -> DLArray:
        X = require_formatted(X, self._caller)
        if len(self.TimeInterval) > 2:
            raise DLFormatError(
                f"{self._caller()}: a TimeInterval of {len(self.TimeInterval)} times is not ported (the "
                "format of the solutions at the intermediate times is not settled); give [t0 tf]"
            )
        if not X._data.is_floating_point():
            raise DLFormatError(f"{self._caller()}: the input must be floating data; got {X.dtype}")
        fmt = X._fmt
        net = self.Network
        # MATLAB's precision rule: single learnables make the solution single (single wins)
        dtype = working_dtype(X.dtype, *(p.dtype for p in net.parameters()))

        def f(t: float, y: torch.Tensor) -> torch.Tensor:
            slope = net(DLArray._wrap(y, fmt), training=training)
            out = slope._data if isinstance(slope, DLArray) else slope
            if (
                not isinstance(slope, DLArray)
                or (slope._fmt and slope._fmt != fmt)
                or tuple(out.shape) != tuple(y.shape)
            ):
                raise DLFormatError(
                    f"{self._caller()}: the network's output must have its input's format and size "
                    f'("{fmt}", {_validate.matlab_size(tuple(y.shape))}); got '
                    + (
                        f'"{slope._fmt}", {_validate.matlab_size(tuple(out.shape))}'
                        if isinstance(slope, DLArray)
                        else _validate.describe(slope)
                    )
                )
            return out.to(y.dtype)

        times = list(self.TimeInterval)
        caller = self._caller()
        absolute, relative = self.AbsoluteTolerance, self.RelativeTolerance
        if self.GradientMode == "adjoint":
            learnables = [p for p in net.parameters() if p.requires_grad and torch.is_grad_enabled()]
            start = X._data.to(dtype)
            solution = adjoint_solution(f, times, start, learnables, absolute, relative, caller)[..., -1]
        else:
            solution = integrate(f, times, X._data.to(dtype), absolute, relative, caller)[-1]
        return DLArray._wrap(solution, fmt)

    def predict(self, X: Any) -> DLArray:
        return self._run(X, training=False)

    def forward(self, X: Any) -> DLArray:  # type: ignore[override]  # MATLAB's forward, see Layer
        return self._run(X, training=True)


networkLayer = matlab_constructor(NetworkLayer, "networkLayer")
neuralODELayer = matlab_constructor(NeuralODELayer, "neuralODELayer")
