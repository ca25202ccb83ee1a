"""MATLAB's legacy networks: ``layerGraph``, ``assembleNetwork``, ``SeriesNetwork``, ``DAGNetwork``.

A ``LayerGraph`` is the graph alone (MATLAB's container for ``trainNetwork``): the same editing
as ``dlnetwork`` (:class:`~dlformat.networks._graph.LayerGraphBase`), output layers allowed,
nothing runs. ``assembleNetwork`` turns a layer array or a graph whose layers all have their
learnables into a ``SeriesNetwork`` or ``DAGNetwork``: a :class:`DLNetwork` of the layers before
the output layers, plus the output layers, each fed by one port of it. ``predict`` returns what
reaches the output layers (the scores); ``classify`` turns scores into the classification
layer's class names.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar, cast

import numpy as np
import torch

from .. import _validate
from .._categorical import Categorical
from .._display import Table, cell
from .._dlarray import DLArray
from .._errors import DLFormatError
from ..layers import Layer
from ..layers.output import ClassificationLayer, OutputLayer, class_names
from ._graph import DLNetwork, LayerArray, LayerGraphBase, _as_layers
from ._minibatch import predict_sequences

__all__ = [
    "DAGNetwork",
    "LayerGraph",
    "LegacyNetwork",
    "SeriesNetwork",
    "assembleNetwork",
    "classify",
    "classifyAndUpdateState",
    "layerGraph",
]


class LayerGraph(LayerGraphBase):
    """MATLAB's ``layerGraph``: layers and connections, edited but not run.

    Build it with :func:`dlformat.layerGraph` and edit it with ``addLayers``,
    ``connectLayers``, ``disconnectLayers``, ``removeLayers`` and ``replaceLayer`` (free
    functions or methods). Output layers (``classificationLayer``, ...) may end it;
    ``dlf.assembleNetwork(lgraph)`` makes a network of it, and ``dlf.dlnetwork(lgraph)`` one of a
    graph without output layers. ``OutputNames`` lists the output layers (and any output that
    feeds nothing).

    Examples:
        >>> lgraph = dlf.layerGraph([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2), dlf.softmaxLayer(),
        ...                          dlf.classificationLayer()])
        >>> lgraph.InputNames, lgraph.OutputNames
        (('featureinput',), ('classoutput',))
    """

    def plot(self) -> Any:
        """MATLAB's ``plot(lgraph)``: the layers top to bottom in run order, arrows for connections.

        Needs matplotlib (``pip install dlformat[plot]``). Returns the matplotlib axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise DLFormatError(
                "plot(lgraph) draws with matplotlib, which is not installed; pip install matplotlib "
                '(or pip install "dlformat[plot]")'
            ) from None
        order = _layer_order(self)
        depth: dict[str, int] = {}
        for name in order:
            sources = [source[0] for (target, _), source in self._links.items() if target == name]
            depth[name] = max((depth[source] + 1 for source in sources), default=0)
        column: dict[int, int] = {}
        place: dict[str, tuple[float, float]] = {}
        for name in order:
            place[name] = (float(column.get(depth[name], 0)), -float(depth[name]))
            column[depth[name]] = column.get(depth[name], 0) + 1
        _, axes = plt.subplots(figsize=(2 + 2 * max(column.values(), default=1), 1 + 0.8 * len(column)))
        for (target, _), (source, _) in self._links.items():
            axes.annotate(
                "", xy=place[target], xytext=place[source], arrowprops={"arrowstyle": "->", "color": "0.4"}
            )
        for name, (x, y) in place.items():
            axes.text(x, y, name, ha="center", va="center", bbox={"boxstyle": "round", "fc": "white"})
        axes.set_xlim(-1, max(column.values(), default=1))
        axes.set_ylim(-len(column), 1)
        axes.set_axis_off()
        return axes

    def __repr__(self) -> str:
        return _display(
            "LayerGraph",
            [
                ("Layers", f"[{len(self.layers)}×1 nnet.cnn.layer.Layer]"),
                ("Connections", f"[{len(self._links)}×2 table]"),
                ("InputNames", cell(self.InputNames)),
                ("OutputNames", cell(self.OutputNames)),
            ],
        )


def layerGraph(layers: Layer | Sequence[Layer] | LayerGraphBase | LegacyNetwork | None = None) -> LayerGraph:
    """MATLAB's ``lgraph = layerGraph`` (empty), ``layerGraph(layers)`` (connected in sequence,
    unnamed layers named MATLAB's way) or ``layerGraph(net)`` (a network's layers and connections).

    The graph takes copies of a network's layers, as MATLAB's value objects are copied; a layer
    array's layers are taken as they are.
    """
    lgraph = LayerGraph()
    if isinstance(layers, LegacyNetwork):
        layers = layers._graph
    if isinstance(layers, LayerGraphBase):
        for name, layer in layers._by_name.items():
            lgraph.layers[name] = copy.deepcopy(layer)
        lgraph._links = dict(layers._links)
    elif layers is not None:
        lgraph.addLayers(layers)
    return lgraph


class LegacyNetwork:
    """What ``SeriesNetwork`` and ``DAGNetwork`` share: the layers before the output layers run
    as a :class:`DLNetwork` (``body``); each output layer takes one of its outputs."""

    matlab_class: ClassVar[str] = ""

    def __init__(self, graph: LayerGraph) -> None:
        self._graph = graph
        outputs = [name for name, layer in graph._by_name.items() if isinstance(layer, OutputLayer)]
        if not outputs:
            raise DLFormatError(
                f"assembleNetwork: the network needs an output layer (classificationLayer, regressionLayer, "
                f"...) at its end; its layers are {', '.join(graph.layers)}. For a network without one, "
                "use dlf.dlnetwork"
            )
        lazy = [name for name, layer in graph._by_name.items() if not layer.Initialized]
        if lazy:
            raise DLFormatError(
                f"assembleNetwork: layer(s) {', '.join(repr(name) for name in lazy)} have no learnables yet "
                '(sizes left "auto"); assembleNetwork takes trained layers: give their sizes or weights, '
                "e.g. fullyConnectedLayer(10, InputSize=64) or Weights=..., Bias=..."
            )
        self._sources: dict[str, str] = {}  # output layer -> the port feeding it, as "name" or "name/out"
        for name in outputs:
            source = graph._links.get((name, graph._by_name[name].InputNames[0]))
            if source is None:
                raise DLFormatError(f"assembleNetwork: output layer '{name}' is not connected to any layer")
            self._sources[name] = graph._port_name(source, "out")
        body = DLNetwork()
        for name, layer in graph._by_name.items():
            if name not in self._sources:
                body.layers[name] = layer
        body._links = {dest: src for dest, src in graph._links.items() if dest[0] not in self._sources}
        body.eval()
        self.body = body

    # -- MATLAB properties --------------------------------------------------------------------
    @property
    def Layers(self) -> LayerArray:
        return self._graph.Layers

    @property
    def Connections(self) -> Table:
        return self._graph.Connections

    @property
    def InputNames(self) -> tuple[str, ...]:
        return self._graph.InputNames

    @property
    def OutputNames(self) -> tuple[str, ...]:
        return tuple(self._sources)

    # -- running ---------------------------------------------------------------------------
    def predict(self, *X: Any, **options: Any) -> Any:
        """MATLAB's ``predict(net, X)``: what reaches each output layer (a classification network's
        scores), as formatted dlarrays; one output is returned as is, several as a tuple.

        ``X`` may also be a list of ``c×s`` sequences (MATLAB's cell array), with MATLAB's
        options ``MiniBatchSize``, ``SequenceLength`` (``"longest"``, ``"shortest"`` or a number:
        chunks of that many steps, the state carried over), ``SequencePaddingValue`` and
        ``SequencePaddingDirection``: sequence outputs then come back as a list, one per
        observation without the padding; see :func:`dlformat.networks._minibatch.predict_sequences`."""
        outputs = list(self._sources.values())
        if len(X) == 1 and isinstance(X[0], list):
            return predict_sequences(self.body, outputs, X[0], caller="predict", **options)
        if options:
            raise DLFormatError(
                f"predict: {', '.join(options)} apply to a cell array (list) of sequences; X is "
                f"{_validate.describe(X[0]) if X else 'missing'}"
            )
        with torch.no_grad():
            return self.body(*X, Outputs=outputs, training=False)

    def predictAndUpdateState(self, *X: Any) -> Any:
        """MATLAB's ``[net, Y] = predictAndUpdateState(net, X)``: :meth:`predict`, and the network
        keeps the state the prediction computed (changed in place). Returns the outputs."""
        self._require_recurrent("predictAndUpdateState")
        with torch.no_grad():
            return self.body.predictAndUpdateState(*X, Outputs=list(self._sources.values()))

    def classify(self, *X: Any) -> tuple[np.ndarray, DLArray]:
        """MATLAB's ``[labels, scores] = classify(net, X)``: see :func:`classify`."""
        return self._classified(self.predict, "classify", X)

    def classifyAndUpdateState(self, *X: Any) -> tuple[np.ndarray, DLArray]:
        """MATLAB's ``[net, labels, scores] = classifyAndUpdateState(net, X)``: :meth:`classify`,
        and the network keeps the state the prediction computed (changed in place)."""
        self._require_recurrent("classifyAndUpdateState")
        return self._classified(self.predictAndUpdateState, "classifyAndUpdateState", X)

    def _require_recurrent(self, function: str) -> None:
        """MATLAB's rule: the ``...AndUpdateState`` functions need a layer with state that a call
        updates (a recurrent layer, or a custom layer with state)."""
        if not any(not layer.state_updates_persist for layer in self.body._stateful_layers()):
            raise DLFormatError(
                f"{function} supports recurrent neural networks only: the network needs a layer with "
                "state, such as lstmLayer or gruLayer"
            )

    def _classified(self, run: Any, function: str, X: tuple[Any, ...]) -> tuple[Any, DLArray]:
        """Labels and scores from the scores ``run(*X)`` gives: see :func:`classify`."""
        (name,) = self._classification_output(function)
        layer = cast("ClassificationLayer", self._graph._by_name[name])
        if isinstance(layer.Classes, str):  # "auto"
            raise DLFormatError(
                f"{function}: the classification layer '{name}' has Classes \"auto\", which MATLAB sets in "
                f"training; no class names are known. Build it with Classes=[...] (one name per class)"
            )
        scores = run(*X)
        if isinstance(scores, tuple):
            scores = scores[list(self._sources).index(name)]
        channel = scores._fmt.index("C")
        if scores.shape[channel] != len(layer.Classes):
            raise DLFormatError(
                f'{function}: the scores have {scores.shape[channel]} channels ("C"); the classification '
                f"layer '{name}' has {len(layer.Classes)} classes"
            )
        indices = scores._data.argmax(channel).cpu().numpy()
        return Categorical(indices + 1, class_names(layer.Classes)), scores  # MATLAB's categorical labels

    def _classification_output(self, function: str) -> list[str]:
        names = [
            name for name in self._sources if isinstance(self._graph._by_name[name], ClassificationLayer)
        ]
        if len(names) != 1:
            raise DLFormatError(
                f"{function} needs a network with one classification output layer; this one has "
                f"{len(names) or 'none'} ({', '.join(self._sources)} are its output layers)"
            )
        return names

    def __repr__(self) -> str:
        rows = [("Layers", f"[{len(self._graph.layers)}×1 nnet.cnn.layer.Layer]")]
        if isinstance(self, DAGNetwork):
            rows.append(("Connections", f"[{len(self._graph._links)}×2 table]"))
        rows += [("InputNames", cell(self.InputNames)), ("OutputNames", cell(self.OutputNames))]
        return _display(self.matlab_class, rows)


class SeriesNetwork(LegacyNetwork):
    """MATLAB's ``SeriesNetwork``: layers in one chain, ending in an output layer.

    Made by :func:`assembleNetwork` from a layer array. See :class:`LegacyNetwork`.
    """

    matlab_class = "SeriesNetwork"


class DAGNetwork(LegacyNetwork):
    """MATLAB's ``DAGNetwork``: a graph of layers ending in output layers.

    Made by :func:`assembleNetwork` from a ``layerGraph``. See :class:`LegacyNetwork`.
    """

    matlab_class = "DAGNetwork"


def assembleNetwork(layers: Layer | Sequence[Layer] | LayerGraph) -> SeriesNetwork | DAGNetwork:
    """MATLAB's ``net = assembleNetwork(layers)``: a network of trained layers, without training.

    A layer array (connected in sequence) gives a :class:`SeriesNetwork`, a ``layerGraph`` a
    :class:`DAGNetwork`. Every layer must have its learnables (no size left ``"auto"``) and the
    network must end in output layers. The network holds the graph's layers themselves (no copy).

    Examples:
        >>> fc = dlf.fullyConnectedLayer(2, Weights=torch.eye(2), Bias=torch.zeros(2, 1))
        >>> net = dlf.assembleNetwork([dlf.featureInputLayer(2), fc, dlf.softmaxLayer(),
        ...                            dlf.classificationLayer(Classes=["no", "yes"])])
        >>> labels, scores = dlf.classify(net, dlf.dlarray(torch.tensor([[0.0, 3.0], [1.0, 0.0]]), "CB"))
        >>> labels.tolist(), dlf.dims(scores)
        (['yes', 'no'], 'CB')
    """
    if isinstance(layers, LayerGraph):
        return DAGNetwork(layers)
    if isinstance(layers, LayerGraphBase):
        raise DLFormatError(
            "assembleNetwork takes a layer array or a layerGraph; a dlnetwork has no output layers to "
            "assemble. Use it as it is (predict(net, X))"
        )
    graph = LayerGraph()
    graph.addLayers(_as_layers(layers))
    return SeriesNetwork(graph)


def classify(net: LegacyNetwork, *X: Any) -> tuple[np.ndarray, DLArray]:
    """MATLAB's ``[labels, scores] = classify(net, X)`` for a ``SeriesNetwork`` or ``DAGNetwork``.

    ``scores`` is what reaches the classification layer (a formatted dlarray); ``labels`` holds,
    for every observation (and time step, or pixel), the name in the layer's ``Classes`` of the
    highest score: a categorical array (:class:`dlformat.Categorical`, MATLAB's) of the scores' shape
    without ``C``, in the scores' canonical dimension order, whose categories are the layer's
    ``Classes`` in order. A layer with ``Classes="auto"`` (no names known before MATLAB's training)
    is an error.
    """
    return _legacy_network(net, "classify").classify(*X)


def classifyAndUpdateState(net: LegacyNetwork, *X: Any) -> tuple[np.ndarray, DLArray]:
    """MATLAB's legacy ``[net, labels, scores] = classifyAndUpdateState(net, X)`` for a
    ``SeriesNetwork`` or ``DAGNetwork`` with a recurrent layer: :func:`classify`, then the network
    keeps the state the prediction computed (changed in place, as :func:`predictAndUpdateState`).
    Returns ``(labels, scores)``.

    Examples:
        >>> lstm = dlf.lstmLayer(4, InputSize=2, OutputMode="last")
        >>> fc = dlf.fullyConnectedLayer(2, InputSize=4)
        >>> net = dlf.assembleNetwork([dlf.sequenceInputLayer(2), lstm, fc, dlf.softmaxLayer(),
        ...                            dlf.classificationLayer(Classes=["a", "b"])])
        >>> labels, scores = dlf.classifyAndUpdateState(net, dlf.dlarray(torch.randn(2, 3, 5), "CBT"))
        >>> labels.shape, dlf.dims(scores), tuple(net.body.State.Value[0].shape)
        ((3,), 'CB', (4, 3))
    """
    return _legacy_network(net, "classifyAndUpdateState").classifyAndUpdateState(*X)


def _legacy_network(net: object, function: str) -> LegacyNetwork:
    return _validate.first_argument(
        function, net, LegacyNetwork, "a SeriesNetwork or DAGNetwork (dlf.assembleNetwork)"
    )


def _layer_order(graph: LayerGraphBase) -> list[str]:
    """Layer names in an order where every connection runs forward (ties in insertion order)."""
    remaining = list(graph.layers)
    order: list[str] = []
    while remaining:
        ready = next(
            name
            for name in remaining
            if all(src[0] in order for (dst, _), src in graph._links.items() if dst == name)
        )
        order.append(ready)
        remaining.remove(ready)
    return order


def _display(title: str, rows: list[tuple[str, str]]) -> str:
    width = max(len(name) for name, _ in rows)
    return "\n".join([f"  {title} with properties:", "", *(f"  {n:>{width + 2}}: {v}" for n, v in rows)])
