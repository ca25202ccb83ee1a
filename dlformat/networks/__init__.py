"""Networks: MATLAB's ``dlnetwork``, the functions that build and run it, and ``analyzeNetwork``.

``_graph`` holds the network and its editing, ``_schedule`` the topological order it runs in,
``_analysis`` MATLAB's ``analyzeNetwork``. The functions here are MATLAB's free-function
forms; each network also has them as methods (``net.addLayers(...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _validate
from .._errors import DLFormatError
from ..layers import Layer
from ._analysis import NetworkAnalysis, analyzeNetwork
from ._graph import DLNetwork, LayerArray

__all__ = [
    "DLNetwork",
    "LayerArray",
    "NetworkAnalysis",
    "addLayers",
    "analyzeNetwork",
    "connectLayers",
    "disconnectLayers",
    "dlnetwork",
    "forward",
    "initialize",
    "predict",
    "predictAndUpdateState",
    "removeLayers",
    "replaceLayer",
    "resetState",
]


def _network(net: object, function: str) -> DLNetwork:
    if not isinstance(net, DLNetwork):
        raise DLFormatError(
            f"{function} needs a dlnetwork as its first argument; got {_validate.describe(net)}"
        )
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
        net.addLayers(layers)
        inputs = net._inputs()
        if Initialize and inputs and all(port[1] == "" for port in inputs):
            net.initialize()
    return net


def addLayers(net: DLNetwork, layers: Layer | Sequence[Layer]) -> DLNetwork:
    """MATLAB's ``net = addLayers(net, layers)``; see :meth:`DLNetwork.addLayers`. Returns ``net``."""
    return _network(net, "addLayers").addLayers(layers)


def connectLayers(net: DLNetwork, source: str, destination: str) -> DLNetwork:
    """MATLAB's ``net = connectLayers(net, "src", "dst/in2")``; see :meth:`DLNetwork.connectLayers`."""
    return _network(net, "connectLayers").connectLayers(source, destination)


def disconnectLayers(net: DLNetwork, source: str, destination: str) -> DLNetwork:
    """MATLAB's ``net = disconnectLayers(net, "src", "dst")``."""
    return _network(net, "disconnectLayers").disconnectLayers(source, destination)


def removeLayers(net: DLNetwork, names: str | Sequence[str]) -> DLNetwork:
    """MATLAB's ``net = removeLayers(net, names)``."""
    return _network(net, "removeLayers").removeLayers(names)


def replaceLayer(
    net: DLNetwork, layerName: str, larray: Layer | Sequence[Layer], *, ReconnectBy: str = "name"
) -> DLNetwork:
    """MATLAB's ``net = replaceLayer(net, layerName, larray)``; see :meth:`DLNetwork.replaceLayer`."""
    return _network(net, "replaceLayer").replaceLayer(layerName, larray, ReconnectBy=ReconnectBy)


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
    net: DLNetwork, *X: Any, Outputs: Sequence[str] | str | None = None, ReturnState: bool = False
) -> Any:
    """MATLAB's ``predict``: run ``net`` with inference behaviour (dropout off), this call only.

    Gradients are still recorded when enabled, as MATLAB's ``predict`` inside ``dlfeval``.
    ``ReturnState=True`` returns the updated State table after the outputs, MATLAB's
    ``[Y, state] = predict(net, X)``.
    """
    return _network(net, "predict")(*X, Outputs=Outputs, training=False, ReturnState=ReturnState)


def resetState(net: DLNetwork) -> DLNetwork:
    """MATLAB's ``net = resetState(net)``: every layer's state back to its initial value
    (each layer's ``resetState``). Returns ``net`` (changed in place)."""
    return _network(net, "resetState").resetState()


def predictAndUpdateState(net: DLNetwork, *X: Any, Outputs: Sequence[str] | str | None = None) -> Any:
    """MATLAB's legacy ``[net, Y] = predictAndUpdateState(net, X)``: predict, then assign the state
    the prediction computed to ``net`` (``net.State = state``). Returns the outputs.

    Examples:
        >>> net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)])
        >>> Y = dlf.predictAndUpdateState(net, dlf.dlarray(torch.randn(3, 4), "CB"))
        >>> tuple(Y.shape), len(net.State)
        ((2, 4), 0)
    """
    return _network(net, "predictAndUpdateState").predictAndUpdateState(*X, Outputs=Outputs)
