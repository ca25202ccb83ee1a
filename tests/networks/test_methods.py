"""MATLAB's method forms on a dlnetwork, replaceLayer, the Layers array, LayerError and per-call modes."""

from __future__ import annotations

import threading

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError, LayerError


def small_net(**kwargs):
    return dlf.dlnetwork(
        [
            dlf.featureInputLayer(3, Name="in"),
            dlf.fullyConnectedLayer(4, Name="fc"),
            dlf.reluLayer(Name="relu"),
        ],
        **kwargs,
    )


def test_method_forms_do_what_the_functions_do():
    net = dlf.dlnetwork(Initialize=False)
    assert net.addLayers([dlf.featureInputLayer(3, Name="a"), dlf.fullyConnectedLayer(2, Name="fa")]) is net
    net.addLayers([dlf.featureInputLayer(2, Name="b"), dlf.additionLayer(2, Name="add")])
    net.connectLayers("fa", "add/in2")
    net.disconnectLayers("fa", "add/in2")
    assert net.InputNames == ("a", "b", "add/in2")
    net.connectLayers("fa", "add/in2")
    net.initialize()
    A, B = dlf.dlarray(torch.randn(3, 5), "CB"), dlf.dlarray(torch.randn(2, 5), "CB")
    assert torch.equal(dlf.extractdata(net.predict(A, B)), dlf.extractdata(dlf.predict(net, A, B)))
    net.removeLayers("add")
    assert [layer.Name for layer in net.Layers] == ["a", "fa", "b"]


def test_replace_layer_reconnects_by_name_and_keeps_position():
    net = small_net()
    fc = net.Layers["fc"]
    dlf.replaceLayer(net, "relu", [dlf.geluLayer(Name="gelu"), dlf.dropoutLayer(0.1, Name="drop")])
    assert [layer.Name for layer in net.Layers] == ["in", "fc", "gelu", "drop"]
    assert list(net.Connections.Destination) == ["fc", "gelu", "drop"] and net.OutputNames == ("drop",)
    net.replaceLayer("fc", dlf.fullyConnectedLayer(4, Name="fc2"))
    assert net.Layers[1].Name == "fc2" and net.Layers[1] is not fc
    assert dlf.dims(dlf.predict(net, dlf.dlarray(torch.randn(3, 2), "CB"))) == "CB"


def test_replace_layer_by_order_and_its_errors_change_nothing():
    net = dlf.dlnetwork(
        [dlf.featureInputLayer(3, Name="a"), dlf.additionLayer(2, Name="add")], Initialize=False
    )
    net.addLayers(dlf.featureInputLayer(3, Name="b"))
    net.connectLayers("b", "add/in2")
    before = (list(net.layers), dict(net._links))
    with pytest.raises(DLFormatError, match=r"replaceLayer: the replacement has no input named in1, in2"):
        net.replaceLayer("add", dlf.reluLayer(Name="r"))
    with pytest.raises(DLFormatError, match=r"replaceLayer: 'add' has 2 inputs; the replacement has 1"):
        net.replaceLayer("add", dlf.reluLayer(Name="r"), ReconnectBy="order")
    with pytest.raises(DLFormatError, match=r"layer name 'a' is already in the network"):
        net.replaceLayer("add", dlf.additionLayer(2, Name="a"))
    assert (list(net.layers), dict(net._links)) == before
    net.replaceLayer("add", dlf.additionLayer(2, Name="sum"), ReconnectBy="order")
    assert set(net.Connections.Destination) == {"sum/in1", "sum/in2"}


def test_layers_index_by_position_or_name_and_display_as_matlab():
    net = small_net()
    assert net.Layers["fc"] is net.Layers[1] and net.Layers[-1].Name == "relu"
    assert [layer.Name for layer in net.Layers[1:]] == ["fc", "relu"]
    text = repr(net.Layers)
    assert text.splitlines()[0] == "  3×1 Layer array with layers:"
    assert "'fc'" in text and "Fully Connected" in text and "Weights 4×3, Bias 4×1" in text
    with pytest.raises(KeyError, match=r"no layer named 'nope'; the layers are: 'in', 'fc', 'relu'"):
        net.Layers["nope"]


def test_a_layer_failure_is_a_layer_error_naming_the_layer_and_its_sources():
    net = dlf.dlnetwork(
        [dlf.sequenceInputLayer(3, Name="seq"), dlf.additionLayer(2, Name="add")], Initialize=False
    )
    net.addLayers(dlf.featureInputLayer(3, Name="feat"))
    net.connectLayers("feat", "add/in2")
    with pytest.raises(LayerError) as caught:
        dlf.predict(net, dlf.dlarray(torch.randn(3, 2, 4), "CBT"), dlf.dlarray(torch.randn(3, 2), "CB"))
    error = caught.value
    assert isinstance(error, DLFormatError)
    assert error.layer == "add" and error.inputs_from == "in1 from 'seq', in2 from 'feat'"
    assert "needs inputs of one format" in error.reason
    analysis = dlf.analyzeNetwork(
        net, dlf.dlarray(torch.randn(3, 2, 4), "CBT"), dlf.dlarray(torch.randn(3, 2), "CB"), show=False
    )
    assert analysis.failed_layer == "add" and analysis.error == error.reason


def test_forward_and_predict_never_touch_the_networks_mode():
    net = dlf.dlnetwork([dlf.featureInputLayer(50), dlf.dropoutLayer(0.5)])
    X = dlf.dlarray(torch.ones(50, 4), "CB")
    net.eval()
    assert (dlf.extractdata(dlf.forward(net, X)) == 0).any() and not net.training
    net.train()
    assert torch.equal(dlf.extractdata(dlf.predict(net, X)), torch.ones(50, 4)) and net.training
    assert torch.equal(dlf.extractdata(net(X, training=False)), torch.ones(50, 4))


def test_predict_in_one_thread_never_sees_dropout_from_a_forward_in_another():
    net = dlf.dlnetwork([dlf.featureInputLayer(64), dlf.dropoutLayer(0.5)])
    X = dlf.dlarray(torch.ones(64, 8), "CB")
    stop, wrong = threading.Event(), []

    def train():
        while not stop.is_set():
            dlf.forward(net, X)

    worker = threading.Thread(target=train)
    worker.start()
    try:
        for _ in range(300):
            if not torch.equal(dlf.extractdata(dlf.predict(net, X)), torch.ones(64, 8)):
                wrong.append(1)
    finally:
        stop.set()
        worker.join()
    assert not wrong


def test_a_network_with_lazy_layers_refuses_a_state_dict_until_initialized():
    trained = small_net()
    lazy = small_net(Initialize=False)
    with pytest.raises(
        DLFormatError, match=r"layer\(s\) 'fc' have no learnables yet .* dlf.initialize\(net\)"
    ):
        lazy.load_state_dict(trained.state_dict())
    dlf.initialize(lazy).load_state_dict(trained.state_dict())
    assert torch.equal(lazy.Layers[1].Weights, trained.Layers[1].Weights)


def test_input_layers_make_their_own_examples():
    example = dlf.sequenceInputLayer([5, 2], MinLength=3).example_input(dtype=torch.float64)
    assert (
        dlf.dims(example) == "SCBT"
        and tuple(example.shape) == (5, 2, 1, 3)
        and example.dtype == torch.float64
    )
    assert tuple(dlf.featureInputLayer(4).example_input().shape) == (4, 1)


def test_analyze_network_flags_non_finite_learnables():
    net = small_net()
    with torch.no_grad():
        net.Layers[1].Weights[0, 0] = float("nan")
    analysis = dlf.analyzeNetwork(net, show=False)
    assert "non-finite: Weights" in analysis.rows[1].Learnables
    assert "non-finite" not in analysis.rows[2].Learnables
