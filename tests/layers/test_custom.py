"""Custom layers: the public ``dlformat.Layer`` base (MATLAB's ``nnet.layer.Layer``) and
``functionLayer``, as a MATLAB user porting a custom layer meets them."""

from __future__ import annotations

import re

import pytest
import torch

import dlformat as dlf
from dlformat import functional as F


def test_the_porting_walkthrough_runs_as_written():
    X = dlf.dlarray(torch.randn(4, 4, 3, 2), "SSCB")
    W, b = torch.randn(10, 48), torch.randn(10, 1)
    Y = F.fullyconnect(X, W, b)  # MATLAB: Y = fullyconnect(X, W, b)
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (10, 2)

    class ScaleLayer(dlf.Layer):  # MATLAB: classdef ScaleLayer < nnet.layer.Layer & nnet.layer.Formattable
        def __init__(self, Name=""):
            super().__init__(Name=Name)
            self.add_learnable("Scale", torch.ones(1))

        def predict(self, X):
            return X * self.Scale

    net = dlf.dlnetwork(
        [
            dlf.featureInputLayer(3),
            ScaleLayer(Name="s"),
            dlf.functionLayer(lambda X: X + 1, Name="plus1"),
            dlf.fullyConnectedLayer(2),
        ]
    )
    net.addLayers(dlf.reluLayer(Name="r"))  # MATLAB's method form: net = addLayers(net, ...)
    net.connectLayers("fc", "r")
    Z = dlf.predict(
        net, dlf.dlarray(torch.randn(3, 5, dtype=torch.float64), "CB")
    )  # double data, single learnables
    assert Z.dtype == torch.float32  # MATLAB: single wins over double
    assert dlf.dims(Z) == "CB" and tuple(Z.shape) == (2, 5) and bool((dlf.extractdata(Z) >= 0).all())
    assert net.OutputNames == ("r",) and net.Layers["s"].Learnables == ("Scale",)
    Y = dlf.positionEmbeddingLayer(8, 64)(dlf.dlarray(torch.randn(8, 2, 4), "CBT"), PositionOffset=10)
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (8, 2, 4)
    layer = dlf.positionEmbeddingLayer(64, 128, "Name", "posemb")  # MATLAB's positional Name,Value pairs
    assert layer.Name == "posemb"


# -- regressions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "names", "message"),
    [
        ("InputNames", ["x/1", "y"], "InputNames must be non-empty names without '/'; got 'x/1'"),
        ("InputNames", ["x", "x"], "InputNames must be unique; got x, x"),
        ("OutputNames", ["", "y"], "OutputNames must be non-empty names without '/'; got ''"),
    ],
)
def test_function_layer_port_names_are_checked_as_a_custom_layers_are(option, names, message):
    """A '/' in a port name made "layer/port" ambiguous, and repeated names made ports unreachable:
    functionLayer accepted both while custom layers refused them."""
    with pytest.raises(dlf.DLFormatError, match=f"^{re.escape(message)}$"):
        dlf.functionLayer(lambda a, b: (a, b), NumOutputs=2, **{option: names})
