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


class WeightedAddition(dlf.Layer):
    """MATLAB's documented weighted addition layer: NumInputs set in the constructor."""

    def __init__(self, numInputs, Name=""):
        super().__init__(Name=Name)
        self.NumInputs = numInputs
        self.Description = f"Weighted addition of {numInputs} inputs"
        self.add_learnable("Weights", torch.rand(numInputs))

    def predict(self, *X):
        Z = X[0] * dlf.dlarray(self.Weights[0])
        for index in range(1, self.NumInputs):
            Z = Z + X[index] * dlf.dlarray(self.Weights[index])
        return Z


class Star(dlf.Layer):
    def __init__(self, first, *rest, Name=""):
        super().__init__(Name=Name)
        self.values = (first, *rest)

    def predict(self, X):
        return X


class Passthrough(dlf.Layer):
    def __init__(self, factor, **options):
        super().__init__(**options)
        self.factor = factor

    def predict(self, X):
        return X * self.factor


@pytest.mark.parametrize(
    ("make", "config"),
    [
        (lambda: WeightedAddition(3, Name="wa"), {"numInputs": 3, "Name": "wa"}),
        (lambda: WeightedAddition(2, "Name", "wa"), {"numInputs": 2, "Name": "wa"}),
        (lambda: Star(1, 2, 3, Name="st"), {"first": 1, "rest": (2, 3), "Name": "st"}),
        (lambda: Passthrough(2.5, Name="p"), {"factor": 2.5, "Name": "p"}),
        (lambda: Passthrough(2.5, "name", "p"), {"factor": 2.5, "Name": "p"}),
    ],
    ids=["positional", "pairs", "varargs", "kwargs", "kwargs-pairs"],
)
def test_a_custom_layers_config_holds_its_constructor_arguments_and_rebuilds_it(make, config):
    """get_config gave only Name for a custom layer, so from_config failed for any constructor
    taking more (WeightedAddition(numInputs)): TypeError, missing 'numInputs'. A constructor
    passing **options on to Layer refused Name: "has no option 'Name'"."""
    layer = make()
    assert layer.get_config() == config
    rebuilt = type(layer).from_config(layer.get_config())
    assert type(rebuilt) is type(layer) and rebuilt.get_config() == config
    assert rebuilt.NumInputs == layer.NumInputs and rebuilt.Name == layer.Name


def test_a_custom_layers_config_follows_its_name_given_by_a_network():
    layer = WeightedAddition(2)
    dlf.dlnetwork(layer, Initialize=False)
    assert layer.Name == "layer" and layer.get_config() == {"numInputs": 2, "Name": "layer"}
    assert layer.extra_repr() == "numInputs=2, Name='layer'"


class RunningMean(dlf.Layer):
    """State as MATLAB's batch normalization keeps it: updated in forward, used by predict."""

    def __init__(self, Name=""):
        super().__init__(Name=Name)
        self.add_state("Mean", torch.zeros(3, 1))

    def predict(self, X):
        return X - dlf.dlarray(self.Mean)

    def forward(self, X):
        batch_mean = dlf.dlarray(dlf.stripdims(X).mean(1, keepdim=True))
        self.Mean = batch_mean * 0.5 + dlf.dlarray(self.Mean) * 0.5  # MATLAB returns it; here it is assigned
        return X - batch_mean


def test_forward_updates_state_by_assignment_detached_and_predict_reads_it():
    """Assigning a dlarray to a state value raised torch's TypeError ("cannot assign ... as buffer")."""
    layer = RunningMean(Name="rm")
    X = dlf.dlarray(torch.tensor([[1.0, 3.0], [2.0, 2.0], [0.0, 4.0]], requires_grad=True), "CB")
    Y = layer(X, training=True)
    torch.testing.assert_close(dlf.extractdata(Y), torch.tensor([[-1.0, 1.0], [0.0, 0.0], [-2.0, 2.0]]))
    assert type(layer.Mean) is torch.Tensor and not layer.Mean.requires_grad
    torch.testing.assert_close(layer.state_dict()["Mean"], torch.tensor([[1.0], [1.0], [1.0]]))
    Z = layer(X, training=False)  # inference reads the state and leaves it
    torch.testing.assert_close(dlf.extractdata(Z), torch.tensor([[0.0, 2.0], [1.0, 1.0], [-1.0, 3.0]]))
    torch.testing.assert_close(layer.Mean, torch.tensor([[1.0], [1.0], [1.0]]))


def test_a_state_value_must_stay_floating():
    layer = RunningMean()
    with pytest.raises(
        dlf.DLFormatError, match=r"^RunningMean Mean must be a floating-point tensor .*torch\.int64$"
    ):
        layer.Mean = torch.tensor([1, 2])


class Sine(dlf.Layer):
    Formattable = False

    def predict(self, X):
        return torch.sin(dlf.stripdims(X))


def test_a_non_formattable_layer_given_unformatted_dlarrays_returns_a_dlarray():
    """With no format to give back, a tensor result came back as a plain torch.Tensor."""
    X = torch.tensor([[0.0, 1.0]])
    Y = Sine()(dlf.dlarray(X))
    assert type(Y) is dlf.DLArray and dlf.dims(Y) == ""
    torch.testing.assert_close(dlf.extractdata(Y), torch.sin(X))
    assert type(Sine()(X)) is torch.Tensor  # plain tensors in: the layer's own result
