"""The ``.pt`` file ``dlformat convert`` writes: a loaded network as plain data for ``torch.save``.

The file is a dict of plain values only (strings, numbers, lists, tensors), so that
``torch.load(path, weights_only=True)`` reads it without unpickling any class, and
``load_network("net.pt")`` rebuilds the network without mat-io:

- ``"format"``: ``"dlformat-network"``, ``"version"``: 1;
- ``"kind"``: ``"SeriesNetwork"``, ``"DAGNetwork"`` or ``"dlnetwork"``; ``"initialized"``;
- ``"layers"``: one ``{"class": dlformat layer class name, "config": constructor arguments}`` per
  layer, in order (``Layer.get_config`` plus the learnables, so that every size is fixed);
- ``"connections"``: ``[source, destination]`` pairs (none for a SeriesNetwork);
- ``"state_dict"``: the torch module's ``state_dict`` (learnables and state: batch-norm statistics,
  recurrent states), loaded strictly after the rebuild.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from .._errors import DLFormatError, reason, shown
from ._mcos import NETWORK_CLASSES

__all__ = ["read_network_file", "write_network_file"]

FORMAT = "dlformat-network"
VERSION = 1
_PLAIN = (str, int, float, bool, type(None), torch.Tensor)


def _module(net: Any) -> torch.nn.Module:
    """The torch module holding a network's learnables and state (a legacy network's ``body``)."""
    module: torch.nn.Module = net.body if hasattr(net, "body") else net
    return module


def _plain(value: Any, where: str) -> Any:
    """``value`` if it is made of plain data only; a function or object cannot be written."""
    if isinstance(value, (list, tuple)):
        return [_plain(item, where) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item, where) for key, item in value.items()}
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, _PLAIN):
        return value
    raise DLFormatError(
        f"{where} is a {type(value).__name__}, which a network file cannot hold as plain data "
        "(a functionLayer's Python function, a custom layer's object); keep such networks in Python"
    )


def write_network_file(net: Any, path: str | os.PathLike[str]) -> None:
    """Write ``net`` (what :func:`~dlformat.io.load_network` returned) as a plain-data ``.pt`` file:
    a ``SeriesNetwork``, ``DAGNetwork`` or ``dlnetwork`` (a layer graph or layer array is not a
    network: assemble one first)."""
    from .. import layers as layer_classes

    require_network(net, "a network file")
    kind = net.matlab_class if hasattr(net, "body") else "dlnetwork"
    entries = []
    for layer in net.Layers:
        name = type(layer).__name__
        if getattr(layer_classes, name, None) is not type(layer):
            raise DLFormatError(
                f"layer '{layer.Name}' is a {name}, not one of dlformat's layer classes; a network file "
                "rebuilds dlformat's layers only"
            )
        config = layer.get_config()
        config.update({key: getattr(layer, key) for key in layer.learnables})
        entries.append({"class": name, "config": _plain(config, f"layer '{layer.Name}'")})
    connections = [] if kind == "SeriesNetwork" else [list(row) for row in net.Connections]
    initialized = bool(getattr(net, "Initialized", True))
    torch.save(
        {
            "format": FORMAT,
            "version": VERSION,
            "kind": kind,
            "initialized": initialized,
            "layers": entries,
            "connections": connections,
            "state_dict": dict(_module(net).state_dict()),
        },
        Path(path),
    )


def require_network(net: Any, needed_by: str) -> None:
    """A DLFormatError unless ``net`` is a network (what a saved layer graph or layer array gives is
    not: the list of layers, the layerGraph)."""
    from ..networks import DLNetwork
    from ..networks._legacy import LegacyNetwork

    if not isinstance(net, (DLNetwork, LegacyNetwork)):
        what = "a list of layers (a saved Layer array)" if isinstance(net, list) else type(net).__name__
        raise DLFormatError(
            f"{needed_by} needs a network (SeriesNetwork, DAGNetwork or dlnetwork); got {what}: assemble "
            "one first, as MATLAB does (dlf.dlnetwork(layers), dlf.assembleNetwork(lgraph))"
        )


def read_network_file(path: str | os.PathLike[str]) -> Any:
    """The network of a file :func:`write_network_file` wrote (no classes are unpickled). Every
    refusal names the path once and quotes the file's content cut to a bounded length."""
    try:
        data = torch.load(Path(path), weights_only=True, map_location="cpu")
    except Exception as error:  # torch raises many kinds for a file it cannot read
        raise DLFormatError(f"cannot read {path}: {reason(error)}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DLFormatError(f"{path} is not a network file written by dlformat convert")
    if data.get("version") != VERSION or data.get("kind") not in NETWORK_CLASSES:
        raise DLFormatError(
            f"{path}: network file version {shown(data.get('version'))}, kind {shown(data.get('kind'))}; "
            f"this dlformat reads version {VERSION} of kinds {', '.join(NETWORK_CLASSES)}"
        )
    try:
        return _rebuilt(data)
    # a damaged or edited file: missing entries, arguments a constructor refuses, other sizes
    # (DLFormatError is a ValueError: the rebuild's own refusals get the path here, once)
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        raise DLFormatError(f"{path} is a damaged network file: {_problem(error)}") from None


def _rebuilt(data: dict[str, Any]) -> Any:
    """The network a network file's data describes (its errors name no path: the caller adds it)."""
    from .. import layers as layer_classes
    from ..layers import Layer
    from ._network import assemble

    made = []
    for entry in data["layers"]:
        name = entry["class"]
        cls = getattr(layer_classes, name, None) if isinstance(name, str) else None
        if not (isinstance(cls, type) and issubclass(cls, Layer)):
            raise DLFormatError(f"{shown(name)} is not one of dlformat's layer classes")
        made.append(cls.from_config(dict(entry["config"])))
    connections = [tuple(pair) for pair in data["connections"]]
    net = assemble(data["kind"], made, connections, bool(data["initialized"]))
    _module(net).load_state_dict(data["state_dict"], strict=True)
    return net


def _problem(error: BaseException) -> str:
    """What went wrong, bounded: a KeyError's key may be anything the file holds."""
    if isinstance(error, KeyError) and error.args:
        return f"it has no entry {shown(error.args[0])}"
    return reason(error)
