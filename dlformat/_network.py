"""MATLAB's ``dlnetwork``: named layers joined by named connections, run in topological order.

The graph lives in plain Python data (layer names, ``(layer, port)`` pairs) and is compiled
once per change into a schedule, a list of ``(name, layer, sources)``; ``forward`` walks the
schedule and does nothing else, so ``torch.compile`` sees a straight line of layer calls.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import torch
from torch import nn

from . import _validate
from ._dlarray import DLArray, dlarray
from ._errors import DLFormatError
from .layers import Layer
from .layers.input import FeatureInputLayer, SequenceInputLayer

__all__ = [
    "DLNetwork",
    "Table",
    "addLayers",
    "connectLayers",
    "disconnectLayers",
    "dlnetwork",
    "forward",
    "initialize",
    "predict",
    "removeLayers",
]

Port = tuple[str, str]  # (layer name, port name)


def text_table(
    columns: Sequence[str], rows: Iterable[Sequence[str]], rule: str = "-", gap: int = 2
) -> list[str]:
    """Left-aligned text columns with a rule under the header (for MATLAB-like displays)."""
    cells = [tuple(columns), *(tuple(row) for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = [
        (" " * gap).join(f"{c:<{w}}" for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, (" " * gap).join(rule * width for width in widths))
    return lines


def learnables_summary(layer: Layer) -> tuple[str, int]:
    """``("Weights 64×128, Bias 64×1", count)`` for a layer's existing learnables."""
    values = [(name, getattr(layer, name)) for name in layer.learnables if getattr(layer, name) is not None]
    shown = [f"{name} {_validate.matlab_size(tuple(value.shape))}" for name, value in values]
    if len(shown) > 3:  # selfAttentionLayer's eight arrays would swamp a table
        shown = [*shown[:2], f"… ({len(shown)} arrays)"]
    return ", ".join(shown), sum(value.numel() for _, value in values)


class Table:
    """A small read-only table, like MATLAB's: ``table.Source`` is a column, ``table[0]`` a row."""

    def __init__(self, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        self.columns = tuple(columns)
        self.rows = [tuple(row) for row in rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        return self.rows[index]

    def __getattr__(self, column: str) -> tuple[Any, ...]:
        if column.startswith("_") or column not in self.__dict__.get("columns", ()):
            raise AttributeError(column)
        position = self.columns.index(column)
        return tuple(row[position] for row in self.rows)

    def __repr__(self) -> str:
        def show(value: Any) -> str:
            if isinstance(value, torch.Tensor):
                return (
                    f"{_validate.matlab_size(tuple(value.shape))} {str(value.dtype).removeprefix('torch.')}"
                )
            return str(value)

        lines = text_table(self.columns, ([show(value) for value in row] for row in self.rows), "_", 4)
        return f"{len(self.rows)}×{len(self.columns)} table\n\n" + "\n".join("    " + line for line in lines)


class _Schedule(NamedTuple):
    steps: list[_Step]
    input_names: tuple[str, ...]
    outputs: tuple[Port, ...]  # the default outputs, net.OutputNames resolved


class _Step(NamedTuple):
    name: str
    layer: Layer
    sources: tuple[Port | int, ...]  # a layer output, or the index of a network input
    inputs_from: str  # for error messages: "in1 from 'wordemb', in2 from 'posemb'"


class DLNetwork(nn.Module):
    """MATLAB's ``dlnetwork``: a graph of named dlformat layers, an ``nn.Module``.

    Build it with :func:`dlnetwork`, :func:`addLayers` and :func:`connectLayers`; run it with
    :func:`forward` (training behaviour), :func:`predict` (inference behaviour), or by
    calling it (the module's current ``train``/``eval`` mode).

    Attributes:
        Layers: the layers, in the order they were added.
        Connections: a :class:`Table` with columns ``Source`` and ``Destination`` (MATLAB's
            spelling: ``"wordemb"``, ``"add/in2"``).
        InputNames: input layers, and unconnected inputs of other layers (``"add/in2"``).
        OutputNames: layers (or ``"layer/port"``) whose output feeds nothing.
        Learnables: a :class:`Table` with columns ``Layer``, ``Parameter``, ``Value``.
        Initialized: whether every layer has its learnables.

    ``state_dict`` keys are ``layers.<Name>.<Parameter>``, e.g. ``layers.posemb.Weights``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleDict()
        self._links: dict[Port, Port] = {}  # destination port -> source port
        self._schedule: _Schedule | None = None

    # -- MATLAB properties --------------------------------------------------------------------
    @property
    def Layers(self) -> tuple[Layer, ...]:
        return tuple(self.layers.values())  # type: ignore[arg-type]

    @property
    def Connections(self) -> Table:
        rows = [
            (self._port_name(source, "out"), self._port_name(destination, "in"))
            for destination, source in self._links.items()
        ]
        return Table(("Source", "Destination"), rows)

    @property
    def InputNames(self) -> tuple[str, ...]:
        return tuple(self._port_name(port, "in") if port[1] else port[0] for port in self._inputs())

    @property
    def OutputNames(self) -> tuple[str, ...]:
        used = set(self._links.values())
        return tuple(
            self._port_name((name, port), "out")
            for name, layer in self.layers.items()
            for port in layer.OutputNames
            if (name, port) not in used
        )

    @property
    def Learnables(self) -> Table:
        rows = [
            (name, parameter, getattr(layer, parameter))
            for name, layer in self.layers.items()
            for parameter in layer.learnables
            if getattr(layer, parameter) is not None
        ]
        return Table(("Layer", "Parameter", "Value"), rows)

    @property
    def Initialized(self) -> bool:
        return all(layer.Initialized for layer in self.layers.values())

    # -- graph bookkeeping -----------------------------------------------------------------
    def _port_name(self, port: Port, side: str) -> str:
        name, port_name = port
        ports = self.layers[name].InputNames if side == "in" else self.layers[name].OutputNames
        return name if len(ports) == 1 else f"{name}/{port_name}"

    def _inputs(self) -> list[Port]:
        """Network inputs in order: ``(name, "")`` for input layers, unconnected ports otherwise."""
        inputs: list[Port] = []
        for name, layer in self.layers.items():
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
        if name not in self.layers:
            known = ", ".join(f"'{known}'" for known in self.layers) or "none"
            raise DLFormatError(f"the network has no layer '{name}'; its layers are: {known}")
        layer = self.layers[name]
        ports = layer.InputNames if side == "in" else layer.OutputNames
        if not ports:
            raise DLFormatError(f"layer '{name}' ({type(layer).__name__}) has no inputs to connect to")
        if not port:
            if len(ports) > 1:
                listed = ", ".join(f"'{name}/{p}'" for p in ports)
                raise DLFormatError(f"layer '{name}' has several {side}puts; name one of {listed}")
            port = ports[0]
        elif port not in ports:
            listed = ", ".join(ports)
            raise DLFormatError(f"layer '{name}' has no {side}put '{port}'; its {side}puts are: {listed}")
        return name, port

    def _changed(self) -> None:
        self._schedule = None

    def _compiled_schedule(self) -> _Schedule:
        if self._schedule is None:
            outputs = tuple(self._resolve(name, "out") for name in self.OutputNames)
            self._schedule = _Schedule(self._build_schedule(), self.InputNames, outputs)
        return self._schedule

    def _build_schedule(self) -> list[_Step]:
        inputs = {port: index for index, port in enumerate(self._inputs())}
        waiting = {
            name: {source[0] for (target, _), source in self._links.items() if target == name}
            for name in self.layers
        }
        order: list[str] = []
        ready = [name for name, sources in waiting.items() if not sources]
        while ready:
            name = ready.pop(0)
            order.append(name)
            for other, sources in waiting.items():
                if name in sources:
                    sources.discard(name)
                    if not sources and other not in order and other not in ready:
                        ready.append(other)
        if len(order) < len(self.layers):
            stuck = ", ".join(f"'{name}'" for name in self.layers if name not in order)
            raise DLFormatError(
                f"the network has a cycle through layers {stuck}; a dlnetwork must be acyclic"
            )
        steps = []
        for name in order:
            layer = self.layers[name]
            if layer.NumInputs == 0:
                sources: tuple[Port | int, ...] = (inputs[(name, "")],)
                described = "the network input"
            else:
                sources = tuple(
                    self._links.get((name, port), inputs.get((name, port))) for port in layer.InputNames
                )
                described = ", ".join(
                    f"{port} from "
                    + (
                        f"'{self._port_name(self._links[(name, port)], 'out')}'"
                        if (name, port) in self._links
                        else "the network input"
                    )
                    for port in layer.InputNames
                )
            steps.append(_Step(name, layer, sources, described))  # type: ignore[arg-type]
        return steps

    # -- running ---------------------------------------------------------------------------
    def forward(self, *inputs: Any, Outputs: Sequence[str] | str | None = None) -> Any:
        """Run the network in its current train/eval mode; see :func:`forward` and :func:`predict`."""
        steps, names, outputs = self._compiled_schedule()
        if len(inputs) != len(names):
            raise DLFormatError(
                f"the network has {len(names)} input(s) ({', '.join(names) or 'none'}); got {len(inputs)}. "
                "Connect unconnected inputs with connectLayers, or pass one value per input"
            )
        values: dict[Port | int, Any] = dict(enumerate(inputs))
        for step in steps:
            arguments = [values[source] for source in step.sources]
            try:
                result = step.layer(*arguments)
            except DLFormatError as error:
                raise DLFormatError(f"layer '{step.name}' ({step.inputs_from}): {error}") from None
            if step.layer.NumOutputs == 1:
                values[(step.name, step.layer.OutputNames[0])] = result
            else:
                values.update(
                    zip(((step.name, port) for port in step.layer.OutputNames), result, strict=True)
                )
        if Outputs is not None:
            outputs = tuple(
                self._resolve(name, "out") for name in ((Outputs,) if isinstance(Outputs, str) else Outputs)
            )
        results = tuple(values[port] for port in outputs)
        return results[0] if len(results) == 1 else results

    def example_inputs(self, device: torch.device | str | None = None) -> tuple[DLArray, ...]:
        """One small example per network input, from its input layer's sizes (batch 1, shortest length)."""
        examples = []
        for port in self._inputs():
            layer = self.layers[port[0]]
            if isinstance(layer, SequenceInputLayer):
                shape: tuple[int, ...] = (*layer._spatial, layer._channels, 1, layer.MinLength)
            elif isinstance(layer, FeatureInputLayer):
                shape = (layer.NumFeatures, 1)
            else:
                raise DLFormatError(
                    f"input '{self._port_name(port, 'in') if port[1] else port[0]}' has no input layer to "
                    "give its size; pass example data, e.g. initialize(net, X), or add an input layer"
                )
            examples.append(dlarray(torch.ones(shape, device=device), layer.InputFormat))
        return tuple(examples)

    def run_example(self, examples: tuple[Any, ...] = ()) -> Any:
        """Run ``examples`` (default: :meth:`example_inputs`) once: inference mode, no gradients.

        Lazy layers create their learnables on the way, which is what ``initialize`` relies on.
        """
        if not examples:
            examples = self.example_inputs(next((parameter.device for parameter in self.parameters()), None))
        was_training = self.training
        self.eval()
        try:
            with torch.no_grad():
                return self(*examples)
        finally:
            self.train(was_training)

    # -- display ---------------------------------------------------------------------------
    def __repr__(self) -> str:
        names = ", ".join(f"'{name}'" for name in self.InputNames)
        outputs = ", ".join(f"'{name}'" for name in self.OutputNames)
        lines = [
            "dlnetwork with properties:",
            "",
            f"         Layers: [{len(self.layers)}×1 Layer]",
            f"    Connections: [{len(self._links)}×2 table]",
            f"     Learnables: [{len(self.Learnables)}×3 table]",
            f"     InputNames: {{{names}}}",
            f"    OutputNames: {{{outputs}}}",
            f"    Initialized: {int(self.Initialized)}",
            "",
        ]
        rows, total = [], 0
        for index, (name, layer) in enumerate(self.layers.items(), 1):
            shown, count = learnables_summary(layer)
            rows.append((str(index), name, layer.matlab_type, shown or "—", f"{count:,}"))
            total += count
        lines += ["  " + line for line in text_table(("#", "Name", "Type", "Learnables", "Count"), rows)]
        lines.append(f"  Total learnables: {total:,}")
        return "\n".join(lines)


def _as_layers(layers: object) -> list[Layer]:
    items = (
        [layers] if isinstance(layers, Layer) else list(layers) if isinstance(layers, (list, tuple)) else None
    )
    if items is None or not all(isinstance(layer, Layer) for layer in items):
        bad = next((layer for layer in items or [layers] if not isinstance(layer, Layer)), layers)
        raise DLFormatError(
            f"layers must be a dlformat layer or a list of them, e.g. [dlf.sequenceInputLayer(1), ...]; "
            f"got {_validate.describe(bad)}"
        )
    return items


def _check_name(name: str) -> None:
    if "/" in name or "." in name:
        raise DLFormatError(
            f"layer name '{name}' cannot contain '/' (it separates layer and port, 'add/in2') or '.' "
            "(torch uses it in state_dict keys); rename the layer"
        )


def addLayers(net: DLNetwork, layers: Layer | Sequence[Layer]) -> DLNetwork:
    """Add layers to ``net``; a list is connected in sequence (each output to the next's first input).

    Unnamed layers get MATLAB-style names from their type (``fc``, ``fc_1``, ...), written into
    their ``Name``. Nothing is added when a name is taken or a layer cannot be connected.
    Returns ``net`` (changed in place).
    """
    items = _as_layers(layers)
    taken = set(net.layers)
    names = []
    for index, layer in enumerate(items):
        name = layer.Name
        if not name:
            base, count = layer.default_name, 0
            name = base
            while name in taken:
                count += 1
                name = f"{base}_{count}"
        elif name in taken:
            where = "the network" if name in net.layers else "the layers being added"
            raise DLFormatError(
                f"layer name '{name}' is used twice (already in {where}); names must be unique"
            )
        _check_name(name)
        if index and layer.NumInputs == 0:
            raise DLFormatError(
                f"layer '{name}' ({type(layer).__name__}) is an input layer and cannot follow "
                f"'{names[-1]}' in a layer array; add it separately"
            )
        if any(layer is other for other in net.layers.values()) or any(
            layer is other for other in items[:index]
        ):
            raise DLFormatError(f"layer '{name}' is added twice; each layer object can appear once")
        taken.add(name)
        names.append(name)
    for name, layer in zip(names, items, strict=True):
        layer.Name = name
        net.layers[name] = layer
    for previous, name in itertools.pairwise(names):
        net._links[(name, net.layers[name].InputNames[0])] = (previous, net.layers[previous].OutputNames[0])
    net._changed()
    return net


def _reaches(net: DLNetwork, start: str, goal: str) -> list[str] | None:
    """A path of layer names from ``start`` to ``goal`` along connections, if there is one."""
    followers: dict[str, set[str]] = {}
    for (target, _), (source, _) in net._links.items():
        followers.setdefault(source, set()).add(target)
    paths = [[start]]
    seen = {start}
    while paths:
        path = paths.pop(0)
        if path[-1] == goal:
            return path
        for name in sorted(followers.get(path[-1], ())):
            if name not in seen:
                seen.add(name)
                paths.append([*path, name])
    return None


def connectLayers(net: DLNetwork, source: str, destination: str) -> DLNetwork:
    """Connect ``source`` (``"name"`` or ``"name/out"``) to ``destination`` (``"name"`` or ``"add/in2"``).

    Errors name the layers: an unknown layer or port, an input already connected, or a
    connection that would close a cycle. Returns ``net``.
    """
    destination_port = net._resolve(destination, "in")
    source_port = net._resolve(source, "out")
    if destination_port in net._links:
        current = net._port_name(net._links[destination_port], "out")
        raise DLFormatError(
            f"input '{net._port_name(destination_port, 'in')}' is already connected to '{current}'; "
            "disconnect it first (disconnectLayers)"
        )
    cycle = _reaches(net, destination_port[0], source_port[0])
    if cycle is not None or source_port[0] == destination_port[0]:
        loop = " -> ".join(f"'{name}'" for name in [*(cycle or [destination_port[0]]), destination_port[0]])
        raise DLFormatError(f"connecting '{source}' to '{destination}' would close the cycle {loop}")
    net._links[destination_port] = source_port
    net._changed()
    return net


def disconnectLayers(net: DLNetwork, source: str, destination: str) -> DLNetwork:
    """Remove the connection from ``source`` to ``destination``. Returns ``net``."""
    destination_port, source_port = net._resolve(destination, "in"), net._resolve(source, "out")
    if net._links.get(destination_port) != source_port:
        raise DLFormatError(f"the network has no connection from '{source}' to '{destination}'")
    del net._links[destination_port]
    net._changed()
    return net


def removeLayers(net: DLNetwork, names: str | Sequence[str]) -> DLNetwork:
    """Remove layers and every connection to or from them. Returns ``net``."""
    names = [names] if isinstance(names, str) else list(names)
    missing = [name for name in names if name not in net.layers]
    if missing:
        known = ", ".join(f"'{name}'" for name in net.layers) or "none"
        raise DLFormatError(
            f"the network has no layer {', '.join(repr(m) for m in missing)}; its layers are: {known}"
        )
    for name in names:
        del net.layers[name]
    net._links = {
        destination: source
        for destination, source in net._links.items()
        if destination[0] not in names and source[0] not in names
    }
    net._changed()
    return net


def initialize(net: DLNetwork, *examples: Any) -> DLNetwork:
    """Create every learnable whose size follows the data (MATLAB's ``initialize``).

    Without examples, each network input must come from an input layer, whose sizes make a
    small example; otherwise pass one example per input (``net.InputNames`` order). The
    examples are run once in inference mode without gradients. Returns ``net``.
    """
    net.run_example(examples)
    return net


def dlnetwork(layers: Layer | Sequence[Layer] | None = None, *, Initialize: bool = True) -> DLNetwork:
    """MATLAB's ``dlnetwork``: an empty network, or ``layers`` connected in sequence.

    With ``Initialize=True`` (default) the network is initialized when every input comes from
    an input layer, as MATLAB does.

    Examples:
        >>> net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)])
        >>> net.InputNames, net.OutputNames
        (('featureinput',), ('fc',))
    """
    net = DLNetwork()
    if layers is not None:
        addLayers(net, layers)
        if Initialize and all(port[1] == "" for port in net._inputs()) and net._inputs():
            initialize(net)
    return net


def _run(net: DLNetwork, training: bool, inputs: tuple[Any, ...], outputs: Any) -> Any:
    if not isinstance(net, DLNetwork):
        raise DLFormatError(f"the first argument must be a dlnetwork; got {_validate.describe(net)}")
    was_training = net.training
    net.train(training)
    try:
        return net(*inputs, Outputs=outputs)
    finally:
        net.train(was_training)


def forward(net: DLNetwork, *X: Any, Outputs: Sequence[str] | str | None = None) -> Any:
    """Run ``net`` with training behaviour (dropout active), as MATLAB's ``forward``.

    Inputs follow ``net.InputNames``; ``Outputs`` picks outputs by name (default
    ``net.OutputNames``). One output is returned as is, several as a tuple.
    """
    return _run(net, True, X, Outputs)


def predict(net: DLNetwork, *X: Any, Outputs: Sequence[str] | str | None = None) -> Any:
    """Run ``net`` with inference behaviour (dropout off), as MATLAB's ``predict``.

    Gradients are still recorded when enabled, as MATLAB's ``predict`` inside ``dlfeval``.
    """
    return _run(net, False, X, Outputs)
