"""layerGraph, dlnetwork's refusal of output layers, assembleNetwork (SeriesNetwork, DAGNetwork),
predict and classify against NumPy."""

from __future__ import annotations

import builtins
from pathlib import Path

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

W = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]])
B = np.array([[0.1], [-0.3]])


def classifier(**classes):
    fc = dlf.fullyConnectedLayer(2, Weights=torch.tensor(W), Bias=torch.tensor(B), dtype=torch.float64)
    return [dlf.featureInputLayer(3), fc, dlf.softmaxLayer(), dlf.classificationLayer(**classes)]


def numpy_scores(x):
    z = W @ x + B
    e = np.exp(z - z.max(axis=0))
    return e / e.sum(axis=0)


X = np.array([[0.5, -1.0, 2.0, 0.0], [1.0, 0.0, -1.0, 3.0], [0.0, 2.0, 1.0, -1.0]])


# -- layerGraph -----------------------------------------------------------------------------------
def test_layer_graph_names_connects_and_lists_its_ports():
    lgraph = dlf.layerGraph(classifier())
    assert [layer.Name for layer in lgraph.Layers] == ["featureinput", "fc", "softmax", "classoutput"]
    assert list(lgraph.Connections.Source) == ["featureinput", "fc", "softmax"]
    assert list(lgraph.Connections.Destination) == ["fc", "softmax", "classoutput"]
    assert (lgraph.InputNames, lgraph.OutputNames) == (("featureinput",), ("classoutput",))
    assert repr(lgraph).splitlines() == [
        "  LayerGraph with properties:",
        "",
        "         Layers: [4×1 nnet.cnn.layer.Layer]",
        "    Connections: [3×2 table]",
        "     InputNames: {'featureinput'}",
        "    OutputNames: {'classoutput'}",
    ]
    assert repr(dlf.layerGraph()).splitlines()[-1] == "    OutputNames: {}"


def test_layer_graph_editing_as_functions_and_methods():
    lgraph = dlf.layerGraph([dlf.featureInputLayer(4, Name="in"), dlf.reluLayer(Name="relu")])
    assert dlf.addLayers(lgraph, [dlf.additionLayer(2, Name="add"), dlf.regressionLayer()]) is lgraph
    dlf.connectLayers(lgraph, "relu", "add/in1")
    lgraph.connectLayers("in", "add/in2")
    assert lgraph.OutputNames == ("regressionoutput",)
    assert list(lgraph.Connections.Destination) == ["relu", "regressionoutput", "add/in1", "add/in2"]
    dlf.disconnectLayers(lgraph, "in", "add/in2")
    assert lgraph.InputNames == ("in", "add/in2")
    lgraph.replaceLayer("relu", [dlf.geluLayer(Name="gelu")])
    assert [layer.Name for layer in lgraph.Layers] == ["in", "gelu", "add", "regressionoutput"]
    dlf.removeLayers(lgraph, "add")
    assert lgraph.OutputNames == ("gelu", "regressionoutput")
    assert lgraph.InputNames == ("in", "regressionoutput")  # the output layer's input is now open
    with pytest.raises(DLFormatError, match=r"addLayers needs a dlnetwork or a layerGraph"):
        dlf.addLayers([dlf.reluLayer()], dlf.reluLayer())


def test_layer_graph_of_a_network_copies_its_layers():
    net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)])
    lgraph = dlf.layerGraph(net)
    assert [layer.Name for layer in lgraph.Layers] == ["featureinput", "fc"]
    assert lgraph.Layers["fc"] is not net.Layers["fc"]
    assert torch.equal(lgraph.Layers["fc"].Weights, net.Layers["fc"].Weights)


def test_plot_draws_every_layer_or_says_matplotlib_is_missing(monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    axes = dlf.layerGraph(classifier()).plot()
    names = sorted(text.get_text() for text in axes.texts if text.get_text())
    assert names == ["classoutput", "fc", "featureinput", "softmax"]
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(DLFormatError, match=r"plot\(lgraph\) draws with matplotlib, which is not installed"):
        dlf.layerGraph(classifier()).plot()


# -- dlnetwork refuses output layers ------------------------------------------------------------
REFUSAL = r"Layer 'classoutput': Detected output layer\. The network must not have output layers"


@pytest.mark.parametrize(
    "build",
    [
        lambda: dlf.dlnetwork(classifier()),
        lambda: dlf.dlnetwork(dlf.layerGraph(classifier())),
        lambda: dlf.addLayers(dlf.dlnetwork(), dlf.classificationLayer()),
        lambda: dlf.dlnetwork(classifier()[:3]).replaceLayer("softmax", dlf.classificationLayer()),
    ],
    ids=["layers", "layerGraph", "addLayers", "replaceLayer"],
)
def test_dlnetwork_refuses_output_layers_with_matlabs_message_and_advice(build):
    with pytest.raises(DLFormatError, match=REFUSAL) as error:
        build()
    assert 'removeLayers(lgraph, "classoutput")' in str(error.value) and "trainnet" in str(error.value)


def test_dlnetwork_of_a_layer_graph_without_output_layers_copies_it():
    lgraph = dlf.layerGraph(classifier())
    lgraph.removeLayers("classoutput")
    net = dlf.dlnetwork(lgraph)
    assert net.Initialized and net.OutputNames == ("softmax",)
    assert net.Layers["fc"] is not lgraph.Layers["fc"]
    Y = net.predict(dlf.dlarray(torch.tensor(X), "CB"))
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), numpy_scores(X), rtol=1e-12)


# -- assembleNetwork, predict, classify --------------------------------------------------------
def test_series_network_predicts_scores_and_classifies_against_numpy():
    net = dlf.assembleNetwork(classifier(Classes=["left", "right"]))
    assert isinstance(net, dlf.SeriesNetwork)
    scores = dlf.predict(net, dlf.dlarray(torch.tensor(X), "CB"))
    assert dlf.dims(scores) == "CB" and scores.dtype == torch.float64
    np.testing.assert_allclose(dlf.extractdata(scores).numpy(), numpy_scores(X), rtol=1e-12)
    labels, same = dlf.classify(net, dlf.dlarray(torch.tensor(X), "CB"))
    expected = np.array(["left", "right"], dtype=object)[numpy_scores(X).argmax(axis=0)]
    assert labels.tolist() == expected.tolist()
    assert torch.equal(dlf.extractdata(same), dlf.extractdata(scores))
    assert repr(net).splitlines() == [
        "  SeriesNetwork with properties:",
        "",
        "         Layers: [4×1 nnet.cnn.layer.Layer]",
        "     InputNames: {'featureinput'}",
        "    OutputNames: {'classoutput'}",
    ]


def test_dag_network_from_a_graph_with_two_inputs():
    layers = classifier(Classes=["a", "b"])
    lgraph = dlf.layerGraph(layers)
    lgraph.addLayers([dlf.featureInputLayer(3, Name="bias"), dlf.additionLayer(2, Name="add")])
    lgraph.disconnectLayers("featureinput", "fc")
    lgraph.connectLayers("featureinput", "add/in2")
    lgraph.connectLayers("add", "fc")
    net = dlf.assembleNetwork(lgraph)
    assert isinstance(net, dlf.DAGNetwork) and net.InputNames == ("featureinput", "bias")
    assert list(net.Connections.Destination) == ["softmax", "classoutput", "add/in1", "add/in2", "fc"]
    assert repr(net).splitlines()[3] == "    Connections: [5×2 table]"
    shift = np.ones((3, 4))
    scores = net.predict(dlf.dlarray(torch.tensor(X), "CB"), dlf.dlarray(torch.tensor(shift), "CB"))
    np.testing.assert_allclose(dlf.extractdata(scores).numpy(), numpy_scores(X + shift), rtol=1e-12)


def test_classify_labels_every_time_step():
    fc = dlf.fullyConnectedLayer(2, Weights=torch.tensor(W), Bias=torch.tensor(B), dtype=torch.float64)
    layers = [dlf.sequenceInputLayer(3), fc, dlf.softmaxLayer(), dlf.classificationLayer(Classes=["x", "y"])]
    net = dlf.assembleNetwork(layers)
    data = np.stack([X, -X], axis=2)  # C × B × T
    labels, _ = dlf.classify(net, dlf.dlarray(torch.tensor(data), "CBT"))
    expected = np.stack([numpy_scores(X).argmax(0), numpy_scores(-X).argmax(0)], axis=1)
    assert labels.shape == (4, 2) and labels.tolist() == np.array(["x", "y"], dtype=object)[expected].tolist()


def test_regression_network_predicts_what_reaches_its_output_layer():
    fc = dlf.fullyConnectedLayer(2, Weights=torch.tensor(W), Bias=torch.tensor(B), dtype=torch.float64)
    net = dlf.assembleNetwork([dlf.featureInputLayer(3), fc, dlf.regressionLayer()])
    Y = dlf.predict(net, dlf.dlarray(torch.tensor(X), "CB"))
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), W @ X + B, rtol=1e-12)
    with pytest.raises(DLFormatError, match=r"classify needs a network with one classification output layer"):
        dlf.classify(net, dlf.dlarray(torch.tensor(X), "CB"))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: dlf.assembleNetwork(classifier()[:3]), r"the network needs an output layer"),
        (
            lambda: dlf.assembleNetwork(
                [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2), dlf.regressionLayer()]
            ),
            r"layer\(s\) 'fc' have no learnables yet",
        ),
        (lambda: dlf.classify(dlf.assembleNetwork(classifier()), torch.zeros(3, 1)), r'has Classes "auto"'),
        (lambda: dlf.assembleNetwork(dlf.dlnetwork()), r"a dlnetwork has no output layers to assemble"),
        (
            lambda: dlf.classify(dlf.dlnetwork(), torch.zeros(3, 1)),
            r"classify needs a SeriesNetwork or DAGNetwork",
        ),
        (
            lambda: dlf.classify(
                dlf.assembleNetwork(classifier(Classes=["a", "b", "c"])), dlf.dlarray(torch.zeros(3, 1), "CB")
            ),
            r'the scores have 2 channels \("C"\); the classification layer \'classoutput\' has 3 classes',
        ),
    ],
)
def test_assemble_and_classify_errors(build, message):
    with pytest.raises(DLFormatError, match=message):
        build()


def test_an_unconnected_output_layer_is_refused():
    lgraph = dlf.layerGraph(classifier(Classes=["a", "b"]))
    lgraph.disconnectLayers("softmax", "classoutput")
    with pytest.raises(DLFormatError, match=r"output layer 'classoutput' is not connected to any layer"):
        dlf.assembleNetwork(lgraph)


# -- automatic names --------------------------------------------------------------------------------
def test_output_layers_take_matlabs_automatic_names():
    lgraph = dlf.layerGraph(
        [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2, InputSize=3), dlf.regressionLayer()]
    )
    lgraph.addLayers(dlf.classificationLayer())
    lgraph.addLayers(dlf.pixelClassificationLayer())  # MATLAB gives it the classification prefix too
    names = [layer.Name for layer in lgraph.Layers]
    assert names == ["featureinput", "fc", "regressionoutput", "classoutput", "classoutput_1"]
    two = dlf.layerGraph([dlf.featureInputLayer(3), dlf.classificationLayer()])
    two.addLayers([dlf.reluLayer(), dlf.reluLayer()])
    assert [layer.Name for layer in two.Layers][2:] == ["relu_1", "relu_2"]


def prefix_table():
    """docs/networks.md's table of automatic name prefixes: dlformat constructor -> prefix."""
    text = (Path(__file__).parents[2] / "docs" / "networks.md").read_text(encoding="utf-8")
    section = text[text.index("## Automatic name prefixes") :]
    section = section[: section.index("\n## ", 1)]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[3].startswith("`") and cells[3].endswith("Layer`"):
            rows[cells[3].strip("`")] = cells[1].split()[0].strip("`")
    return rows


def test_every_documented_prefix_is_the_layers_default_name():
    rows = prefix_table()
    assert len(rows) >= 10
    assert {
        "classificationLayer",
        "pixelClassificationLayer",
        "regressionLayer",
        "fullyConnectedLayer",
    } <= set(rows)
    for constructor, prefix in rows.items():
        assert type(_example(constructor)).default_name == prefix, constructor


def _example(constructor):
    needs = {
        "fullyConnectedLayer": (2,), "selfAttentionLayer": (1, 2), "additionLayer": (2,),
        "positionEmbeddingLayer": (2, 3), "sequenceInputLayer": (2,), "functionLayer": (lambda X: X,),
    }  # fmt: skip
    return getattr(dlf, constructor)(*needs.get(constructor, ()))
