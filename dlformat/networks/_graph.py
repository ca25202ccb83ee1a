"""MATLAB's ``dlnetwork``: named layers joined by named connections, and the functions that edit it.

The graph lives in plain Python data (layer names, ``(layer, port)`` pairs); every edit
checks first and changes nothing on error. MATLAB's free functions (``addLayers(net, ...)``)
and method forms (``net.addLayers(...)``) are the same code.
"""

from __future__ import annotations

import itertools
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

import torch
from torch import nn

from .. import _validate
from .._display import Table, cell, learnables_summary, text_table
from .._dlarray import DLArray
from .._errors import DLFormatError, LayerError
from ..layers import Layer
from ..layers._call_state import CURRENT, STATE_LOCK, CallValues
from ..layers.input import sizes_only
from . import _schedule
from ._schedule import Port

__all__ = ["DLNetwork", "LayerArray", "LayerDict", "LayerGraphBase", "refuse_output_layers"]

Graph = TypeVar("Graph", bound="LayerGraphBase")  # an edit returns the graph it was called on
# a run's plan (DLNetwork._plan): output ports, what each step releases, each step's result ports
RunPlan = tuple[tuple[Port, ...], tuple[tuple[Port | int, ...], ...], tuple[tuple[Port, ...], ...]]


class LayerArray(tuple[Layer, ...]):
    """MATLAB's ``Layer`` array: a tuple of layers that also indexes by name, displayed as MATLAB does.

    Examples:
        >>> net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)])
        >>> net.Layers["fc"] is net.Layers[1]
        True
    """

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for layer in self:
                if layer.Name == key:
                    return layer
            known = ", ".join(f"'{layer.Name}'" for layer in self) or "none"
            raise KeyError(f"no layer named '{key}'; the layers are: {known}")
        result = super().__getitem__(key)
        return LayerArray(result) if isinstance(key, slice) else result

    def __repr__(self) -> str:
        rows = [
            (
                str(index),
                f"'{layer.Name}'",
                layer.matlab_type,
                layer.Description or learnables_summary(layer)[0],
            )
            for index, layer in enumerate(self, 1)
        ]
        lines = [f"  {len(self)}×1 Layer array with layers:", ""]
        lines += ["     " + line for line in text_table(("", "", "", ""), rows, rule="", gap=3)[1:]]
        return "\n".join(lines)


class LayerDict(nn.ModuleDict):
    """A network's layers by MATLAB name: an ``nn.ModuleDict`` whose keys are data.

    torch's ``ModuleDict`` refuses keys that name an attribute of a module (``double``, ``train``,
    ``to``, ``forward``, ...) or hold a ``.``; MATLAB names layers with any text but ``/``. The
    layers go into ``_modules`` under their names as they are, reached by key (``layers["to"]``),
    never as attributes, so every name is safe, and ``state_dict`` keys are
    ``layers.<Name>.<Parameter>`` with the name as it is.
    """

    def __setitem__(self, key: str, module: nn.Module) -> None:
        if not isinstance(key, str) or not isinstance(module, nn.Module):
            raise DLFormatError(
                f"a network holds modules by name; got {_validate.describe(key)} -> {type(module).__name__}"
            )
        self._modules[key] = module

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
        # torch's check splits a key at its first "." to find the child: a layer named "a.b"
        # would make "layers.a.b.Weights" unexpected here; each layer checks its own keys
        counted = len(unexpected_keys)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        unexpected_keys[counted:] = [
            key
            for key in unexpected_keys[counted:]
            if not any(key.startswith(f"{prefix}{name}.") for name in self._modules)
        ]


class LayerGraphBase(nn.Module):
    """Named layers joined by named connections, and MATLAB's functions that edit them.

    The graph that :class:`DLNetwork` runs and MATLAB's legacy ``layerGraph``
    (:class:`dlformat.networks.LayerGraph`) shares: ``Layers``, ``Connections``, ``InputNames``,
    ``OutputNames`` and ``addLayers``, ``connectLayers``, ``disconnectLayers``, ``removeLayers``,
    ``replaceLayer``. Each edit checks first and changes nothing on error.
    """

    def __init__(self) -> None:
        super().__init__()
        self.layers = LayerDict()
        self._links: dict[Port, Port] = {}  # destination port -> source port
        self._schedule: _schedule.Schedule | None = None
        self._stateful: tuple[Layer, ...] | None = None  # the layers with state, cached per graph
        # per requested outputs (None: the default ones), cached per graph: the output ports,
        # what each step releases (_schedule.releases) and the ports of each step's results
        self._plans: dict[tuple[str, ...] | None, RunPlan] = {}

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> Any:
        """``nn.Module.load_state_dict`` with the keys checked whole: torch finds a key's layer by
        its first ``.``, so beside a layer ``a`` the keys of a layer named ``a.b`` would be taken
        for ``a``'s and called unexpected (``LayerDict``)."""
        result = super().load_state_dict(state_dict, strict=False, assign=assign)
        own = self.state_dict(keep_vars=True)
        missing = [key for key in own if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own]
        if strict and (missing or unexpected):
            errors = [
                f"{kind} key(s) in state_dict: {', '.join(repr(key) for key in keys)}. "
                for kind, keys in (("Missing", missing), ("Unexpected", unexpected))
                if keys
            ]
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors)
            )
        return type(result)(missing, unexpected)

    @property
    def _by_name(self) -> Mapping[str, Layer]:
        """The layers by name, typed as layers (a :class:`LayerDict` holds modules)."""
        return cast("Mapping[str, Layer]", self.layers)

    # -- MATLAB properties --------------------------------------------------------------------
    @property
    def Layers(self) -> LayerArray:
        return LayerArray(self._by_name.values())

    @property
    def Connections(self) -> Table:
        rows = [
            (self._port_name(source, "out"), self._port_name(destination, "in"))
            for destination, source in self._links.items()
        ]
        return Table(("Source", "Destination"), rows)

    @property
    def InputNames(self) -> tuple[str, ...]:
        """The input layers, and each unconnected input (``layer/port`` of a layer with several),
        in ``_inputs`` order. Each layer's port count is read once: ``additionLayer(10^6)``'s
        million names come in a fraction of a second (were seconds, a lookup per port)."""
        links, names = self._links, []
        for name, layer in self._by_name.items():
            count = layer.NumInputs
            if count == 0:
                names.append(name)
                continue
            free = [port for port in layer.InputNames if (name, port) not in links]
            names += [name] if count == 1 and free else [f"{name}/{port}" for port in free]
        return tuple(names)

    @property
    def OutputNames(self) -> tuple[str, ...]:
        """Every layer output that feeds nothing, and every output layer (which has no outputs)."""
        used = set(self._links.values())
        names: list[str] = []
        for name, layer in self._by_name.items():
            if not layer.NumOutputs and layer.NumInputs:
                names.append(name)
            names += [self._port_name((name, p), "out") for p in layer.OutputNames if (name, p) not in used]
        return tuple(names)

    # -- graph bookkeeping -----------------------------------------------------------------
    def _port_name(self, port: Port, side: str) -> str:
        name, port_name = port
        layer = self._by_name[name]
        count = layer.NumInputs if side == "in" else layer.NumOutputs
        return name if count == 1 else f"{name}/{port_name}"

    def _inputs(self) -> list[Port]:
        """Network inputs in order: ``(name, "")`` for input layers, unconnected ports otherwise."""
        inputs: list[Port] = []
        for name, layer in self._by_name.items():
            if layer.NumInputs == 0:
                inputs.append((name, ""))
            inputs += [(name, port) for port in layer.InputNames if (name, port) not in self._links]
        return inputs

    def _resolve(self, spec: object, side: str) -> Port:
        """``"name"`` or ``"name/port"`` as a (layer, port) pair, checked against the layer's ports."""
        if not isinstance(spec, str) or not spec:
            raise DLFormatError(
                f'a {"source" if side == "out" else "destination"} must be a layer name or "name/port"; '
                f"got {_validate.describe(spec)}"
            )
        name, _, port = spec.partition("/")
        layer = self._layer(name)
        ports = layer.InputNames if side == "in" else layer.OutputNames
        if not ports:
            raise DLFormatError(f"layer '{name}' ({type(layer).__name__}) has no inputs to connect to")
        if not port:
            if len(ports) > 1:
                listed = ", ".join(f"'{name}/{p}'" for p in ports[:10]) + (", ..." if len(ports) > 10 else "")
                raise DLFormatError(f"layer '{name}' has several {side}puts; name one of {listed}")
            port = ports[0]
        elif port not in ports:
            raise DLFormatError(
                f"layer '{name}' has no {side}put '{port}'; its {side}puts are: {', '.join(ports)}"
            )
        return name, port

    def _layer(self, name: str) -> Layer:
        if name not in self.layers:
            known = ", ".join(f"'{known}'" for known in self.layers) or "none"
            raise DLFormatError(f"the network has no layer '{name}'; its layers are: {known}")
        return self._by_name[name]

    def _changed(self) -> None:
        self._schedule = None
        self._stateful = None
        self._plans = {}

    # -- editing (MATLAB's functions, as methods) -----------------------------------------------
    def _admit(self, names: Sequence[str], items: Sequence[Layer]) -> None:
        """A hook: refuse layers this kind of graph cannot hold (``DLNetwork``: output layers)."""

    def addLayers(self: Graph, layers: Layer | Sequence[Layer]) -> Graph:
        """Add layers; a list is connected in sequence (each output to the next's first input).

        Unnamed layers get MATLAB's automatic names from their type (``fc``; ``fc_1``, ``fc_2``
        when the added layers hold several), and names repeated among the added layers are
        made unique the same way, with a warning. A name already in the network is an error.
        Nothing is added when any check fails. Returns the network (changed in place).
        """
        items = _as_layers(layers)
        names = _unique_names(items, set(self.layers))
        self._admit(names, items)
        for index, (name, layer) in enumerate(zip(names, items, strict=True)):
            _check_name(name)
            if index and layer.NumInputs == 0:
                raise DLFormatError(
                    f"layer '{name}' ({type(layer).__name__}) is an input layer and cannot follow "
                    f"'{names[index - 1]}' in a layer array; add it separately"
                )
            if any(layer is other for other in self._by_name.values()) or any(
                layer is other for other in items[:index]
            ):
                raise DLFormatError(f"layer '{name}' is added twice; each layer object can appear once")
        for name, layer in zip(names, items, strict=True):
            layer.Name = name
            self.layers[name] = layer
        for previous, name in itertools.pairwise(names):
            self._links[(name, self._by_name[name].InputNames[0])] = (
                previous,
                self._by_name[previous].OutputNames[0],
            )
        self._changed()
        return self

    def connectLayers(self: Graph, source: str, destination: str) -> Graph:
        """Connect ``source`` (``"name"``, ``"name/out"``) to ``destination`` (``"name"``, ``"add/in2"``)."""
        destination_port = self._resolve(destination, "in")
        source_port = self._resolve(source, "out")
        if destination_port in self._links:
            current = self._port_name(self._links[destination_port], "out")
            raise DLFormatError(
                f"input '{self._port_name(destination_port, 'in')}' is already connected to '{current}'; "
                "disconnect it first (disconnectLayers)"
            )
        cycle = _path(self._links, destination_port[0], source_port[0])
        if cycle is not None:
            loop = " -> ".join(f"'{name}'" for name in [*cycle, destination_port[0]])
            raise DLFormatError(f"connecting '{source}' to '{destination}' would close the cycle {loop}")
        self._links[destination_port] = source_port
        self._changed()
        return self

    def disconnectLayers(self: Graph, source: str, destination: str) -> Graph:
        """Remove the connection from ``source`` to ``destination``."""
        destination_port, source_port = self._resolve(destination, "in"), self._resolve(source, "out")
        if self._links.get(destination_port) != source_port:
            raise DLFormatError(f"the network has no connection from '{source}' to '{destination}'")
        del self._links[destination_port]
        self._changed()
        return self

    def removeLayers(self: Graph, names: str | Sequence[str]) -> Graph:
        """Remove layers and every connection to or from them."""
        names = [names] if isinstance(names, str) else list(names)
        for name in names:
            self._layer(name)
        for name in names:
            del self.layers[name]
        self._links = {
            destination: source
            for destination, source in self._links.items()
            if destination[0] not in names and source[0] not in names
        }
        self._changed()
        return self

    def replaceLayer(
        self: Graph, layerName: str, larray: Layer | Sequence[Layer], *, ReconnectBy: str = "name"
    ) -> Graph:
        """MATLAB's ``replaceLayer``: put ``larray`` (connected in sequence) where layer ``layerName`` was.

        The old layer's inputs feed the first new layer and its outputs come from the last;
        ``ReconnectBy="name"`` (default) matches ports by name, ``"order"`` by position.
        """
        old = self._layer(layerName)
        mode = _validate.choice("ReconnectBy", ReconnectBy, ("name", "order"))
        items = _as_layers(larray)
        self._admit([layer.Name or layer.default_name for layer in items], items)
        first, last = items[0], items[-1]

        def port_map(old_ports: tuple[str, ...], new_ports: tuple[str, ...], side: str) -> dict[str, str]:
            if mode == "order":
                if len(new_ports) < len(old_ports):
                    raise DLFormatError(
                        f"replaceLayer: '{layerName}' has {len(old_ports)} {side}puts; "
                        f"the replacement has {len(new_ports)}"
                    )
                return dict(zip(old_ports, new_ports, strict=False))
            missing = [port for port in old_ports if port not in new_ports]
            if missing:
                raise DLFormatError(
                    f"replaceLayer: the replacement has no {side}put named {', '.join(missing)} "
                    f'(ReconnectBy "name"); its {side}puts are {", ".join(new_ports) or "none"}; '
                    'use ReconnectBy="order"'
                )
            return {port: port for port in old_ports}

        inputs = port_map(old.InputNames, first.InputNames, "in")
        outputs = port_map(old.OutputNames, last.OutputNames, "out")
        incoming = {
            port: self._links[(layerName, port)]
            for port in old.InputNames
            if (layerName, port) in self._links
        }
        outgoing = {dest: src[1] for dest, src in self._links.items() if src[0] == layerName}
        position = list(self.layers).index(layerName)
        trial = LayerGraphBase()
        for name, layer in self._by_name.items():
            if name != layerName:
                trial.layers[name] = layer
        trial.addLayers(items)  # names and checks; changes nothing of self on error
        new_names = [layer.Name for layer in items]
        links = {
            dest: src for dest, src in self._links.items() if dest[0] != layerName and src[0] != layerName
        }
        links.update(trial._links)
        for port, source in incoming.items():
            links[(new_names[0], inputs[port])] = source
        for destination, port in outgoing.items():
            links[destination] = (new_names[-1], outputs[port])
        ordered = list(trial.layers.items())
        kept, added = ordered[: len(ordered) - len(items)], ordered[len(ordered) - len(items) :]
        self.layers = LayerDict(dict(kept[:position] + added + kept[position:]))
        # connections listed in layer order, each layer's inputs in port order
        rank = {name: index for index, name in enumerate(self.layers)}
        self._links = dict(
            sorted(
                links.items(),
                key=lambda item: (rank[item[0][0]], self._by_name[item[0][0]].InputNames.index(item[0][1])),
            )
        )
        self._changed()
        return self


class DLNetwork(LayerGraphBase):
    """MATLAB's ``dlnetwork``: a graph of named dlformat layers, an ``nn.Module``.

    Build it with :func:`dlformat.dlnetwork`, ``addLayers`` and ``connectLayers`` (as free
    functions or methods); run it with :func:`dlformat.forward` (training behaviour),
    :func:`dlformat.predict` (inference behaviour), or by calling it (the module's
    ``train``/``eval`` mode decides, or ``training=True/False`` for that call). Output layers
    (``classificationLayer``, ...) are refused, as MATLAB refuses them: the loss is computed
    outside the network.

    Attributes:
        Layers: a :class:`LayerArray`, in the order the layers were added.
        Connections: a :class:`~dlformat._display.Table` with columns ``Source`` and ``Destination``.
        InputNames: input layers, and unconnected inputs of other layers (``"add/in2"``).
        OutputNames: layers (or ``"layer/port"``) whose output feeds nothing.
        Learnables: a table with columns ``Layer``, ``Parameter``, ``Value``.
        State: the layers' state values (batch normalization's ``TrainedMean``, ...) as a table
            with the same columns; assigning a table (``net.State = state``) sets them.
        Initialized: whether every layer has its learnables.

    ``state_dict`` keys are ``layers.<Name>.<Parameter>``, e.g. ``layers.posemb.Weights``.

    Examples:
        >>> net = dlf.dlnetwork([dlf.sequenceInputLayer(3, Name="in"), dlf.fullyConnectedLayer(2, Name="fc")])
        >>> Y = net.predict(dlf.dlarray(torch.randn(3, 4, 10), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape), list(net.state_dict())
        ('CBT', (2, 4, 10), ['layers.fc.Weights', 'layers.fc.Bias'])
    """

    @property
    def Learnables(self) -> Table:
        rows = [
            (name, parameter, getattr(layer, parameter))
            for name, layer in self._by_name.items()
            for parameter in layer.learnables
            if getattr(layer, parameter) is not None
        ]
        return Table(("Layer", "Parameter", "Value"), rows)

    @property
    def Initialized(self) -> bool:
        return all(layer.Initialized for layer in self._by_name.values())

    @property
    def State(self) -> Table:
        """MATLAB's ``net.State``: one row per state value, ``Layer``, ``Parameter``, ``Value``."""
        with STATE_LOCK:  # a whole State, never half of a call's update
            return _state_table(
                (layer.Name, {name: layer._buffers.get(name) for name in layer.State})
                for layer in self._stateful_layers()
            )

    @State.setter
    def State(self, table: Any) -> None:
        self._assign_state(table)

    def _assign_state(self, table: Any) -> None:
        """Set every state value from a State table; all rows are checked before any is set."""
        rows = _state_rows(table)
        expected = {(row[0], row[1]) for row in self.State}
        updates: list[tuple[Layer, str, torch.Tensor]] = []
        seen: set[tuple[str, str]] = set()
        for name, parameter, value in rows:
            if name not in self.layers:
                known = ", ".join(f"'{known}'" for known in self.layers) or "none"
                raise DLFormatError(f"State: the network has no layer '{name}'; its layers are: {known}")
            layer = self._by_name[name]
            if (name, parameter) not in expected:
                listed = ", ".join(layer.State) or "none"
                raise DLFormatError(
                    f"State: layer '{name}' has no state parameter '{parameter}'; its state parameters "
                    f"are: {listed}"
                )
            if (name, parameter) in seen:
                raise DLFormatError(f"State: {name}/{parameter} appears twice")
            seen.add((name, parameter))
            current = layer._buffers[parameter]
            assert current is not None  # listed in self.State
            tensor = layer._checked_state(parameter, value)
            allowed = layer._state_size_rule(parameter, tuple(tensor.shape))
            if allowed is not None:
                raise DLFormatError(
                    f"State: layer '{name}' parameter '{parameter}' must have size {allowed}; got "
                    f"{_validate.matlab_size(tuple(tensor.shape))}"
                )
            updates.append(
                (layer, parameter, tensor.to(layer._assigned_dtype(parameter, current, tensor.dtype)))
            )
        missing = sorted(expected - seen)
        if missing:
            raise DLFormatError(
                "State: the table has no row for "
                + ", ".join(f"{name}/{parameter}" for name, parameter in missing)
                + "; give every row of net.State"
            )
        with STATE_LOCK:  # calls starting meanwhile see the whole new State or none of it
            _assign(updates)

    def resetState(self) -> DLNetwork:
        """MATLAB's ``net = resetState(net)``: every layer's state back to its initial value."""
        with STATE_LOCK:
            for layer in self._stateful_layers():
                layer.resetState()
        return self

    def predictAndUpdateState(self, *X: Any, Outputs: Sequence[str] | str | None = None) -> Any:
        """MATLAB's legacy ``[net, Y] = predictAndUpdateState(net, X)``: predict, then keep the state
        the prediction computed (``net.State = state``). Returns the outputs."""
        *outputs, state = self(*X, Outputs=Outputs, training=False, ReturnState=True)
        self.State = state
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _stateful_layers(self) -> tuple[Layer, ...]:
        if self._stateful is None:
            self._stateful = tuple(layer for layer in self._by_name.values() if layer.State)
        return self._stateful

    def _compiled_schedule(self) -> _schedule.Schedule:
        if self._schedule is None:
            outputs = tuple(self._resolve(name, "out") for name in self.OutputNames)
            self._schedule = _schedule.build(
                self._by_name, self._links, self._inputs(), self._port_name, self.InputNames, outputs
            )
        return self._schedule

    def _admit(self, names: Sequence[str], items: Sequence[Layer]) -> None:
        refuse_output_layers(names, items)

    def _settled(self) -> bool:
        """Whether every layer has its sizes fixed and its learnables: a first input would
        create nothing (what ``initialize`` is for)."""
        return all(layer.Initialized and layer._sizes_settled() for layer in self._by_name.values())

    def initialize(self, *X: Any) -> DLNetwork:
        """MATLAB's ``initialize``: create every learnable whose size follows the data.

        Without examples, each network input must come from an input layer, whose sizes make a
        small example; otherwise pass one example per input (``InputNames`` order). The examples
        run once in inference mode without gradients.
        """
        self.run_example(X)
        return self

    def predict(self, *X: Any, Outputs: Sequence[str] | str | None = None, ReturnState: bool = False) -> Any:
        """MATLAB's ``predict``: inference behaviour (dropout off), this call only.

        ``ReturnState=True`` also returns the updated State table last, MATLAB's
        ``[Y, state] = predict(net, X)``."""
        return self(*X, Outputs=Outputs, training=False, ReturnState=ReturnState)

    # -- running ---------------------------------------------------------------------------
    def forward(
        self,
        *X: Any,
        Outputs: Sequence[str] | str | None = None,
        training: bool | None = None,
        ReturnState: bool = False,
    ) -> Any:
        """Run the network: ``training`` picks the behaviour for this call (default: the module's mode).

        The mode is passed to each layer with the call, never set on shared state, so a
        ``predict`` in one thread and a ``forward`` in another do not mix. MATLAB's
        ``forward(net, X)`` is :func:`dlformat.forward` (always training behaviour).

        State, MATLAB's way: the state values layers assign during the call stay in the network
        only for layers whose class sets ``state_updates_persist`` (batch normalization's
        running statistics); every other layer's new state is dropped (recurrent state changes
        only when the caller assigns ``net.State``). ``ReturnState=True`` also returns the State
        table with every value the call computed, after the outputs.

        Threads: the call's state is local to the call (see ``layers/_call_state``): it starts
        from the network's State as the call begins, layers read and assign it there, and only
        the kept updates reach the network, at the end, all at once. So ``predict`` from any
        number of threads gives each the values it gives alone; concurrent ``forward`` calls in
        training mode each keep their own batch normalization update, the last to end winning.
        """
        stateful = self._stateful_layers()
        if not stateful:  # the plain path: no state to hold (and no graph break under compile)
            results = self._run(X, Outputs, training)
            if ReturnState:
                return (*results, _state_table(()))
            return results[0] if len(results) == 1 else results
        results, before, values = self._call(X, Outputs, training)
        _keep(before, values)
        if ReturnState:
            return (*results, _state_table((layer.Name, _call_state_of(layer, values)) for layer in stateful))
        return results[0] if len(results) == 1 else results

    def _call(
        self,
        X: tuple[Any, ...],
        Outputs: Sequence[str] | str | None,
        training: bool | None,
        start: CallValues | None = None,
    ) -> tuple[tuple[Any, ...], CallValues, CallValues]:
        """One run with its own call state (see ``layers/_call_state``), changing no state of the
        network: the outputs, the state the call started from and the state as the call left it
        (``_keep`` decides what the network keeps). ``start``: begin from another call's end
        state (the legacy networks' chunked sequences) instead of the network's State."""
        if start is not None:
            before = {layer: dict(values) for layer, values in start.items()}
        elif torch.compiler.is_compiling():  # dynamo cannot trace the lock (see _call_state)
            before = _snapshot(self._stateful_layers())
        else:
            with STATE_LOCK:
                before = _snapshot(self._stateful_layers())
        values = {layer: dict(own) for layer, own in before.items()}
        outer = CURRENT.values
        CURRENT.values = values
        try:
            results = self._run(X, Outputs, training)
        finally:
            CURRENT.values = outer
        return results, before, values

    def _run(
        self, X: tuple[Any, ...], Outputs: Sequence[str] | str | None, training: bool | None
    ) -> tuple[Any, ...]:
        """The outputs of one run through the schedule, as a tuple."""
        training = self.training if training is None else training
        steps, names, _ = self._compiled_schedule()
        planned = self._plan(Outputs)
        # outputs that do not resolve are reported after the run, as the layers' errors come first
        outputs, releases, produced = planned or ((), ((),) * len(steps), _produced(steps))
        if len(X) != len(names):
            raise DLFormatError(
                f"the network has {len(names)} input(s) ({', '.join(names) or 'none'}); got {len(X)}. "
                "Connect unconnected inputs with connectLayers, or pass one value per input"
            )
        values: dict[Port | int, Any] = dict(enumerate(X))
        for step, released, ports in zip(steps, releases, produced, strict=True):
            arguments = [values[source] for source in step.sources]
            for source in released:
                del values[source]
            try:
                result = step.layer(*arguments, training=training)
            except LayerError:
                raise
            except DLFormatError as error:
                raise LayerError(step.name, step.inputs_from, str(error)) from None
            if len(ports) == 1:
                values[ports[0]] = result
            else:
                values.update(zip(ports, result, strict=True))
            del arguments, result  # the step's inputs are freed as soon as nothing else holds them
        if planned is None:
            outputs = self._resolved(Outputs)  # raises
        return tuple(values[port] for port in outputs)

    def _resolved(self, Outputs: Any) -> tuple[Port, ...]:
        return tuple(
            self._resolve(name, "out") for name in ((Outputs,) if isinstance(Outputs, str) else Outputs)
        )

    def _plan(self, Outputs: Any) -> RunPlan | None:
        """The output ports a run returns, what each step releases and the ports each step's
        results go to, planned once per graph and requested outputs; ``None`` where ``Outputs``
        does not resolve (an error after the run)."""
        key: tuple[str, ...] | None = None
        if Outputs is not None:
            key = (Outputs,) if isinstance(Outputs, str) else _names_key(Outputs)
            if key is None:
                return None
        plan = self._plans.get(key)
        if plan is None:
            steps, _, outputs = self._compiled_schedule()
            if key is not None:
                try:
                    outputs = self._resolved(key)
                except DLFormatError:
                    return None
            plan = self._plans[key] = (outputs, _schedule.releases(steps, outputs), _produced(steps))
        return plan

    def example_inputs(self) -> tuple[DLArray, ...]:
        """One small example per network input, from its input layer (batch 1, shortest length),
        on the network's device and in its dtype."""
        like = next(
            (buffer for name, buffer in self.named_buffers() if name.endswith("_like")), torch.empty(0)
        )
        examples = []
        for port in self._inputs():
            layer = self._by_name[port[0]]
            make = getattr(layer, "example_input", None)
            if port[1] or make is None:
                raise DLFormatError(
                    f"input '{self._port_name(port, 'in') if port[1] else port[0]}' has no input layer to "
                    "give its size; pass example data, e.g. initialize(net, X), or add an input layer"
                )
            examples.append(make(like.device, like.dtype))
        return tuple(examples)

    def run_example(self, examples: tuple[Any, ...] = ()) -> Any:
        """Run ``examples`` (default: :meth:`example_inputs`) once: inference behaviour, no gradients.

        Lazy layers create their learnables (and state) on the way, which is what ``initialize``
        relies on; state the example run assigns is not kept, even where updates persist. The run
        only finds sizes: an input layer whose normalization statistics are still empty (MATLAB
        builds such networks; trainnet computes them) passes its data on unnormalized.
        """
        with torch.no_grad(), sizes_only():
            results = self._call(examples or self.example_inputs(), None, False)[0]
        return results[0] if len(results) == 1 else results

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> Any:
        """``nn.Module.load_state_dict``; a network whose lazy layers have no learnables yet refuses it."""
        _refuse_uninitialized(self, "load a state_dict into")
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    # -- display ---------------------------------------------------------------------------
    def __repr__(self) -> str:
        lines = [
            "dlnetwork with properties:",
            "",
            f"         Layers: [{len(self.layers)}×1 Layer]",
            f"    Connections: [{len(self._links)}×2 table]",
            f"     Learnables: [{len(self.Learnables)}×3 table]",
            f"          State: [{len(self.State)}×3 table]",
            f"     InputNames: {cell(self.InputNames)}",
            f"    OutputNames: {cell(self.OutputNames)}",
            f"    Initialized: {int(self.Initialized)}",
            "",
        ]
        rows, total = [], 0
        for index, (name, layer) in enumerate(self._by_name.items(), 1):
            shown, count = learnables_summary(layer)
            rows.append((str(index), name, layer.matlab_type, shown or "—", f"{count:,}"))
            total += count
        lines += ["  " + line for line in text_table(("#", "Name", "Type", "Learnables", "Count"), rows)]
        lines.append(f"  Total learnables: {total:,}")
        return "\n".join(lines)


def _names_key(Outputs: Any) -> tuple[str, ...] | None:
    """A list or tuple of names as a cache key; ``None`` for anything else."""
    if isinstance(Outputs, (list, tuple)) and all(isinstance(name, str) for name in Outputs):
        return tuple(Outputs)
    return None


def refuse_output_layers(names: Sequence[str], items: Sequence[Layer]) -> None:
    """A dlnetwork holds no output layers: MATLAB refuses them, and the loss goes elsewhere."""
    for name, layer in zip(names, items, strict=True):
        if not layer.NumOutputs and layer.NumInputs:
            raise DLFormatError(
                f"Layer '{name}': Detected output layer. The network must not have output layers "
                f"({type(layer).__name__}; a dlnetwork computes no loss). Remove it "
                f'(removeLayers(lgraph, "{name}"), or leave it out of the layer array) and compute the '
                "loss outside the network: trainnet's loss, or crossentropy / mse in a custom training "
                "loop. dlf.assembleNetwork keeps output layers"
            )


STATE_COLUMNS = ("Layer", "Parameter", "Value")


def _produced(steps: list[_schedule.Step]) -> tuple[tuple[Port, ...], ...]:
    """The ports each step's results go to, in its layer's output order (fixed once the layer
    is constructed: read on every run otherwise)."""
    return tuple(tuple((step.name, port) for port in step.layer.OutputNames) for step in steps)


def _snapshot(layers: tuple[Layer, ...]) -> CallValues:
    """References to every state value of ``layers`` (as a running outer call has them): cheap, as
    layers replace state tensors rather than change them in place. State not created yet (a lazy
    layer's, before its first input) is left out: the layer creates it on the layer itself, as
    creating it is not an update."""
    outer = CURRENT.values is not None  # else the layers' own buffers (every call's case)
    snapshot: CallValues = {}
    for layer in layers:
        own = snapshot[layer] = {}
        buffers = layer._buffers
        for name in layer._state_names:
            value = layer._state_value(name) if outer else buffers.get(name)
            if value is not None:
                own[name] = value
    return snapshot


def _call_state_of(layer: Layer, values: CallValues) -> dict[str, torch.Tensor | None]:
    """``layer``'s state as a call left it (``values``), for the State table it returns."""
    own = values.get(layer, {})
    return {name: own[name] if name in own else layer._state_value(name) for name in layer._state_names}


def _keep(before: CallValues, values: CallValues) -> None:
    """Keep a call's updates of layers whose updates persist (batch normalization's statistics):
    on the layers, all at once under the lock, or, for a network called inside another network's
    call, in that call's state, whose end decides. Other layers' updates are dropped."""
    kept = [
        (layer, name, value)
        for layer, own in values.items()
        if layer.state_updates_persist
        for name, value in own.items()
        if value is not before.get(layer, {}).get(name)
    ]
    if not kept:
        return
    outer = CURRENT.values
    if outer is not None:
        for layer, name, value in kept:
            outer.setdefault(layer, {})[name] = value
    elif torch.compiler.is_compiling():
        _assign(kept)
    else:
        with STATE_LOCK:
            _assign(kept)


def _assign(updates: Sequence[tuple[Layer, str, torch.Tensor]]) -> None:
    for layer, name, value in updates:
        layer._buffers[name] = value


def _state_table(layers: Any) -> Table:
    """A State table from ``(layer name, {parameter: value})`` pairs; values not yet created
    (a lazy layer before its first input) are left out, as MATLAB lists none."""
    return Table(
        STATE_COLUMNS,
        [
            (name, parameter, value)
            for name, values in layers
            for parameter, value in values.items()
            if value is not None
        ],
    )


def _state_rows(table: Any) -> list[tuple[Any, Any, Any]]:
    """The rows of a State table given to ``net.State``: a :class:`Table` with columns ``Layer``,
    ``Parameter``, ``Value``, or a sequence of such triples."""
    if isinstance(table, Table):
        if table.columns != STATE_COLUMNS:
            raise DLFormatError(
                f"State must be a table with columns Layer, Parameter, Value; got columns "
                f"{', '.join(table.columns)}"
            )
        return list(table)
    if isinstance(table, (list, tuple)) and all(
        isinstance(row, (list, tuple)) and len(row) == 3 for row in table
    ):
        return [(row[0], row[1], row[2]) for row in table]
    raise DLFormatError(
        "State must be a table with columns Layer, Parameter, Value (as net.State or "
        f"forward(net, X, ReturnState=True) gives it); got {_validate.describe(table)}"
    )


def _refuse_uninitialized(net: DLNetwork, action: str) -> None:
    lazy = [name for name, layer in net._by_name.items() if not layer.Initialized]
    if lazy:
        raise DLFormatError(
            f"cannot {action} the network: layer(s) {', '.join(repr(n) for n in lazy)} have no learnables "
            "yet (their sizes follow the data); run dlf.initialize(net) (or one forward pass) first"
        )


def _as_layers(layers: object) -> list[Layer]:
    items = (
        [layers] if isinstance(layers, Layer) else list(layers) if isinstance(layers, (list, tuple)) else None
    )
    if not items or not all(isinstance(layer, Layer) for layer in items):
        bad = next((layer for layer in items or [layers] if not isinstance(layer, Layer)), layers)
        raise DLFormatError(
            "layers must be a dlformat layer or a non-empty list of them, "
            "e.g. [dlf.sequenceInputLayer(1), ...]; "
            f"got {_validate.describe(bad)}"
        )
    return items


def _unique_names(items: list[Layer], taken: set[str]) -> list[str]:
    """MATLAB's naming of added layers.

    An unnamed layer takes its type's name (``fc``); a name that occurs more than once among
    the added layers becomes ``name_1``, ``name_2``, ... in order (MATLAB's
    ``makeUniqueStrings``), skipping names the network already has. A given name that the
    network already has is an error, as MATLAB's ``addLayers`` documents.
    """
    wanted = [layer.Name or layer.default_name for layer in items]
    for layer in items:
        if layer.Name and layer.Name in taken:
            raise DLFormatError(f"layer name '{layer.Name}' is already in the network; names must be unique")
    counts = Counter(wanted)
    repeated_given = sorted({layer.Name for layer in items if layer.Name and counts[layer.Name] > 1})
    if repeated_given:
        warnings.warn(
            f"layer name(s) {', '.join(repr(n) for n in repeated_given)} repeat among the added layers; "
            "they are made unique with _1, _2, ... as MATLAB does",
            stacklevel=3,
        )
    used = set(taken)
    names = []
    numbers: Counter[str] = Counter()
    for name in wanted:
        if counts[name] > 1 or name in taken:
            while True:
                numbers[name] += 1
                candidate = f"{name}_{numbers[name]}"
                if candidate not in used and candidate not in counts:
                    break
            name = candidate
        used.add(name)
        names.append(name)
    return names


def _check_name(name: str) -> None:
    if "/" in name:
        raise DLFormatError(
            f"layer name '{name}' cannot contain '/' (it separates layer and port, 'add/in2'); "
            "rename the layer"
        )


def _path(links: Mapping[Port, Port], start: str, goal: str) -> list[str] | None:
    """A path of layer names from ``start`` to ``goal`` along connections, if there is one."""
    if start == goal:
        return [start]
    followers: dict[str, set[str]] = {}
    for (target, _), (source, _) in links.items():
        followers.setdefault(source, set()).add(target)
    paths = [[start]]
    seen = {start}
    while paths:
        path = paths.pop(0)
        for name in sorted(followers.get(path[-1], ())):
            if name == goal:
                return [*path, name]
            if name not in seen:
                seen.add(name)
                paths.append([*path, name])
    return None
