"""Replacements for the layers of two real MATLAB-saved networks that a file cannot give.

``load_network`` maps every built-in MATLAB layer, but a ``FunctionLayer`` saves only MATLAB
source text and a user classdef layer only its properties, so it lists such layers and asks for a
``custom_layers`` factory for each (docs/loading_networks.md, "Layers that cannot be mapped").
These are the factories for the two files of that kind in the project's set of real networks:

- ``pac48_imagecontrolBC_dlnet.mat``: two FunctionLayers, ``@(W)W.^2./(sum(W.^2,1)+.01)`` and
  ``@(W)[XFlat*W;YFlat*W]``, whose grids ``XFlat``/``YFlat`` the file saves in the function's
  workspace; ported as ``functionLayer``s over those saved grids.
- ``mimo__trainedNet.mat``: a user ``sigmoidLayer`` and ``sigmoidClassificationLayer``; ported as
  dlformat's ``sigmoidLayer`` and, since the network is only run, a ``regressionLayer`` that
  passes its input on.

From Python: ``load_network("pac48_imagecontrolBC_dlnet.mat", custom_layers=PAC48)``. From the
command line: ``dlformat inspect pac48_imagecontrolBC_dlnet.mat --custom-layers
examples/saved_network_replacements.py:PAC48``. The tests, the CLI tests and
``benchmarks/bench_networks.py`` use these same factories.
"""

from __future__ import annotations

from typing import Any

import torch

import dlformat as dlf


def _normalize(properties: dict[str, Any]) -> dlf.Layer:
    return dlf.functionLayer(lambda W: W**2 / (dlf.sum(W**2, 1) + 0.01), Name=properties["Name"])


def _project(properties: dict[str, Any]) -> dlf.Layer:
    # the grids the FunctionLayer captured, from its saved workspace
    captured = properties["PredictFcn"].workspace.properties["any"]
    grids = next(item for item in captured.ravel() if isinstance(item, dict) and item)
    x = dlf.dlarray(torch.as_tensor(grids["XFlat"], dtype=torch.float32))
    y = dlf.dlarray(torch.as_tensor(grids["YFlat"], dtype=torch.float32))
    return dlf.functionLayer(
        lambda W: dlf.vertcat(dlf.mtimes(x, W), dlf.mtimes(y, W)), Name=properties["Name"]
    )


PAC48 = {"layer_2": _normalize, "layer_3": _project}

MIMO = {
    "sigmoidLayer": lambda properties: dlf.sigmoidLayer(Name=properties["Name"]),
    "sigmoidClassificationLayer": lambda properties: dlf.regressionLayer(Name=properties["Name"]),
}
