"""Networks: MATLAB's ``dlnetwork``, the functions that build and run it, and ``analyzeNetwork``;
MATLAB's legacy ``layerGraph``, ``assembleNetwork``, ``SeriesNetwork`` and ``DAGNetwork``.

``_graph`` holds the graph, its editing and the network, ``_schedule`` the topological order it
runs in, ``_analysis`` MATLAB's ``analyzeNetwork``, ``_legacy`` the legacy containers. The
functions here are MATLAB's free-function forms; each graph also has them as methods
(``net.addLayers(...)``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, TypeVar

from .. import _validate
from .._errors import DLFormatError
from ..layers import Layer
from ._analysis import NetworkAnalysis, analyzeNetwork
from ._graph import DLNetwork, LayerArray, LayerGraphBase, refuse_output_layers
from ._legacy import (
    DAGNetwork,
    LayerGraph,
    LegacyNetwork,
    SeriesNetwork,
    assembleNetwork,
    classify,
    classifyAndUpdateState,
    layerGraph,
)
from ._minibatch import minibatchpredict
from ._nested import NetworkLayer, NeuralODELayer, networkLayer, neuralODELayer

__all__ = [
    "DAGNetwork",
    "DLNetwork",
    "LayerArray",
    "LayerGraph",
    "NetworkAnalysis",
    "NetworkLayer",
    "NeuralODELayer",
    "SeriesNetwork",
    "addLayers",
    "analyzeNetwork",
    "assembleNetwork",
    "classify",
    "classifyAndUpdateState",
    "connectLayers",
    "disconnectLayers",
    "dlnetwork",
    "forward",
    "initialize",
    "layerGraph",
    "minibatchpredict",
    "networkLayer",
    "neuralODELayer",
    "predict",
    "predictAndUpdateState",
    "removeLayers",
    "replaceLayer",
    "resetState",
]

Graph = TypeVar("Graph", bound=LayerGraphBase)


def _network(net: object, function: str) -> DLNetwork:
    return _validate.first_argument(function, net, DLNetwork, "a dlnetwork")


def _graph(net: Graph, function: str) -> Graph:
    """The editing functions take a dlnetwork or a layerGraph."""
    _validate.first_argument(function, net, LayerGraphBase, "a dlnetwork or a layerGraph")
    return net


def dlnetwork(
    layers: Layer | Sequence[Layer] | LayerGraph | None = None, *, Initialize: bool = True
) -> DLNetwork:
    """MATLAB's ``dlnetwork``: an empty network, ``layers`` connected in sequence, or a ``layerGraph``.

    With ``Initialize=True`` (default) the network is initialized when every input comes from
    an input layer, as MATLAB does. Output layers (``classificationLayer``, ...) are refused
    with MATLAB's error: remove them and compute the loss outside the network. A layerGraph's
    layers are copied (MATLAB's layers are values), its connections kept.

    Examples:
        >>> net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)])
        >>> net.InputNames, net.OutputNames
        (('featureinput',), ('fc',))
    """
    net = DLNetwork()
    if isinstance(layers, LayerGraphBase):
        refuse_output_layers(list(layers.layers), list(layers._by_name.values()))
        for name, layer in layers._by_name.items():
            net.layers[name] = copy.deepcopy(layer)
        net._links = dict(layers._links)
    elif layers is not None:
        net.addLayers(layers)
    if layers is not None:
        inputs = net._inputs()
        if Initialize and inputs and all(port[1] == "" for port in inputs):
            net.initialize()
    return net


def addLayers(net: Graph, layers: Layer | Sequence[Layer]) -> Graph:
    """MATLAB's ``net = addLayers(net, layers)``; see :meth:`DLNetwork.addLayers`. Returns ``net``."""
    return _graph(net, "addLayers").addLayers(layers)


def connectLayers(net: Graph, source: str, destination: str) -> Graph:
    """MATLAB's ``net = connectLayers(net, "src", "dst/in2")``; see :meth:`DLNetwork.connectLayers`."""
    return _graph(net, "connectLayers").connectLayers(source, destination)


def disconnectLayers(net: Graph, source: str, destination: str) -> Graph:
    """MATLAB's ``net = disconnectLayers(net, "src", "dst")``."""
    return _graph(net, "disconnectLayers").disconnectLayers(source, destination)


def removeLayers(net: Graph, names: str | Sequence[str]) -> Graph:
    """MATLAB's ``net = removeLayers(net, names)``."""
    return _graph(net, "removeLayers").removeLayers(names)


def replaceLayer(
    net: Graph, layerName: str, larray: Layer | Sequence[Layer], *, ReconnectBy: str = "name"
) -> Graph:
    """MATLAB's ``net = replaceLayer(net, layerName, larray)``; see :meth:`DLNetwork.replaceLayer`."""
    return _graph(net, "replaceLayer").replaceLayer(layerName, larray, ReconnectBy=ReconnectBy)


def initialize(net: DLNetwork, *X: Any) -> DLNetwork:
    """MATLAB's ``net = initialize(net)`` / ``initialize(net, X)``: learnables whose sizes follow the data."""
    return _network(net, "initialize").initialize(*X)


def forward(
    net: DLNetwork, *X: Any, Outputs: Sequence[str] | str | None = None, ReturnState: bool = False
) -> Any:
    """MATLAB's ``forward``: run ``net`` with training behaviour (dropout active), this call only.

    Inputs follow ``net.InputNames``; ``Outputs`` picks outputs by name (default
    ``net.OutputNames``). One output is returned as is, several as a tuple.
    ``ReturnState=True`` returns the updated State table after the outputs, MATLAB's
    ``[Y, state] = forward(net, X)``; see :meth:`DLNetwork.forward` for which state stays in
    the network.
    """
    return _network(net, "forward")(*X, Outputs=Outputs, training=True, ReturnState=ReturnState)


def predict(
    net: DLNetwork | LegacyNetwork,
    *X: Any,
    Outputs: Sequence[str] | str | None = None,
    ReturnState: bool = False,
    **options: Any,
) -> Any:
    """MATLAB's ``predict``: run ``net`` with inference behaviour (dropout off), this call only.

    Gradients are still recorded when enabled, as MATLAB's ``predict`` inside ``dlfeval``.
    ``ReturnState=True`` returns the updated State table after the outputs, MATLAB's
    ``[Y, state] = predict(net, X)``. For a ``SeriesNetwork`` or ``DAGNetwork``
    (``assembleNetwork``), what reaches its output layers; it also takes a list of ``c×s``
    sequences with MATLAB's ``MiniBatchSize``, ``SequenceLength``, ``SequencePaddingValue`` and
    ``SequencePaddingDirection`` (see ``SeriesNetwork.predict``; for a dlnetwork, use
    :func:`dlformat.minibatchpredict`).
    """
    if isinstance(net, LegacyNetwork):
        if Outputs is not None or ReturnState:
            raise DLFormatError(
                "predict: Outputs and ReturnState are for dlnetwork objects; a SeriesNetwork or "
                "DAGNetwork returns what reaches each output layer"
            )
        return net.predict(*X, **options)
    if options:
        raise DLFormatError(
            f"predict of a dlnetwork takes no {', '.join(options)} (MATLAB's dlnetwork predict takes "
            "dlarrays); for a list of sequences use dlf.minibatchpredict(net, X, ...)"
        )
    return _network(net, "predict")(*X, Outputs=Outputs, training=False, ReturnState=ReturnState)


def resetState(net: DLNetwork | LegacyNetwork) -> Any:
    """MATLAB's ``net = resetState(net)``: every layer's state back to its initial value
    (each layer's ``resetState``). Returns ``net`` (changed in place); a ``SeriesNetwork`` or
    ``DAGNetwork`` too."""
    if isinstance(net, LegacyNetwork):
        net.body.resetState()
        return net
    return _network(net, "resetState").resetState()


def predictAndUpdateState(
    net: DLNetwork | LegacyNetwork, *X: Any, Outputs: Sequence[str] | str | None = None
) -> Any:
    """MATLAB's legacy ``[net, Y] = predictAndUpdateState(net, X)``: predict, then assign the state
    the prediction computed to ``net`` (``net.State = state``). Returns the outputs.

    Stepping a network one time step per call gives what one call over the whole sequence
    gives (the state carries over); ``resetState(net)`` starts again. A ``SeriesNetwork`` or
    ``DAGNetwork`` needs a recurrent layer, as MATLAB's function does, and returns what
    reaches its output layers (``Outputs`` is for dlnetwork objects).

    Examples:
        >>> net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)])
        >>> Y = dlf.predictAndUpdateState(net, dlf.dlarray(torch.randn(3, 4), "CB"))
        >>> tuple(Y.shape), len(net.State)
        ((2, 4), 0)
    """
    if isinstance(net, LegacyNetwork):
        if Outputs is not None:
            raise DLFormatError(
                "predictAndUpdateState: Outputs is for dlnetwork objects; a SeriesNetwork or DAGNetwork "
                "returns what reaches each output layer"
            )
        return net.predictAndUpdateState(*X)
    return _network(net, "predictAndUpdateState").predictAndUpdateState(*X, Outputs=Outputs)
