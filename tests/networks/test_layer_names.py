"""MATLAB's layer names are data (issue 24, item 3): names that are torch attributes (``double``,
``train``, ``to``, ...), names with ``.``, unicode and names of network properties work in every
path, and every path keeps the name as it is.

MathWorks' layer pages give ``Name`` as text ("character vector or string scalar"); ``groupLayers``
(R2024a) names layers ``"subnet:fc"``, with ``:`` or any other delimiter. torch's ``ModuleDict``
refused the first ten below with a raw ``KeyError`` ("attribute 'double' already exists").
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat.io import load_learnables, load_network, loadmat, save_learnables
from dlformat.io._network import build
from dlformat.io._network_file import write_network_file

NAMES = [
    "double",
    "float",
    "half",
    "train",
    "eval",
    "forward",
    "cuda",
    "to",
    "type",
    "apply",
    "a.b",
    "conv.1.weight",
    "subnet:fc",
    "ñandú λ",
    "Layers",
    "State",
    "layers",
    "_modules",
    "__class__",
]


def layers_named(name: str) -> list[dlf.Layer]:
    """A network whose fully connected, batch normalization and addition layers carry ``name``
    (as prefix: one name per layer), with a second input into the addition by port."""
    torch.manual_seed(0)
    return [
        dlf.featureInputLayer(3, Name="in"),
        dlf.fullyConnectedLayer(3, InputSize=3, Name=name),
        dlf.batchNormalizationLayer(NumChannels=3, Name=f"{name}_bn"),
        dlf.additionLayer(2, Name=f"{name}_add"),
        dlf.fullyConnectedLayer(2, InputSize=3, Name=f"{name}.out"),
    ]


def network(name: str) -> dlf.DLNetwork:
    return dlf.connectLayers(dlf.dlnetwork(layers_named(name)), "in", f"{name}_add/in2")


def data(batch: int = 4) -> dlf.DLArray:
    return dlf.dlarray(torch.from_numpy(np.random.default_rng(0).standard_normal((3, batch))).float(), "CB")


def reference(net: dlf.DLNetwork, X: dlf.DLArray) -> np.ndarray:
    """The network's output in float64 NumPy from its own learnables: fc, batchnorm (trained
    statistics, epsilon 1e-5), addition of the input, fc."""

    def value(layer: dlf.Layer, parameter: str) -> np.ndarray:
        return getattr(layer, parameter).detach().double().numpy()

    fc, bn, _, out = net.Layers[1:]
    x = dlf.extractdata(X).double().numpy()
    y = value(fc, "Weights") @ x + value(fc, "Bias")
    y = (y - value(bn, "TrainedMean")) / np.sqrt(value(bn, "TrainedVariance") + 1e-5)
    y = y * value(bn, "Scale") + value(bn, "Offset") + x
    return value(out, "Weights") @ y + value(out, "Bias")


@pytest.mark.parametrize("name", NAMES)
def test_dlnetwork_keeps_the_name_in_layers_state_dict_and_tables(name):
    net = network(name)
    assert [layer.Name for layer in net.Layers] == ["in", name, f"{name}_bn", f"{name}_add", f"{name}.out"]
    assert net.Layers[name] is net.Layers[1]
    assert list(net.state_dict())[:2] == [f"layers.{name}.Weights", f"layers.{name}.Bias"]
    assert net.Learnables.Layer[:2] == (name, name)
    assert set(net.State.Layer) == {f"{name}_bn"}
    assert f"{name}_add/in2" in net.Connections.Destination
    X = data()
    np.testing.assert_allclose(
        dlf.extractdata(net.predict(X)).numpy(), reference(net, X), rtol=1e-5, atol=1e-6
    )
    assert callable(net.layers.double) and net.layers[name] is net.Layers[1]  # torch's own attributes intact


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_and_state_round_trip_by_the_name(name):
    net, twin = network(name), network(name)
    dlf.forward(net, data(6))  # batch statistics into the State
    result = twin.load_state_dict(net.state_dict())
    assert not result.missing_keys and not result.unexpected_keys
    twin.State = net.State
    X = data()
    assert torch.equal(dlf.extractdata(twin.predict(X)), dlf.extractdata(net.predict(X)))


def test_a_name_that_extends_another_by_a_dot_loads_strictly():
    """torch finds a key's module by its first ``.``: beside ``a``, the keys of ``a.b`` are ``a.b``'s."""
    torch.manual_seed(0)
    make = lambda: dlf.dlnetwork(  # noqa: E731
        [
            dlf.featureInputLayer(2, Name="in"),
            dlf.fullyConnectedLayer(2, Name="a"),
            dlf.fullyConnectedLayer(2, Name="a.b"),
        ]
    )
    net, twin = make(), make()
    twin.load_state_dict(net.state_dict())
    assert torch.equal(twin.Layers["a.b"].Weights, net.Layers["a.b"].Weights)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\) in state_dict: 'layers.a.c.Weights'"):
        twin.load_state_dict({**net.state_dict(), "layers.a.c.Weights": torch.zeros(2, 2)})
    with pytest.raises(RuntimeError, match=r"Missing key\(s\) in state_dict: 'layers.a.b.Bias'"):
        twin.load_state_dict(
            {key: value for key, value in net.state_dict().items() if key != "layers.a.b.Bias"}
        )


def classifier(name: str) -> list[dlf.Layer]:
    return [
        *layers_named(name)[:3],
        dlf.softmaxLayer(Name=f"{name}_softmax"),
        dlf.classificationLayer(Classes=["x", "y", "z"], Name=name.upper() or "out"),
    ]


@pytest.mark.parametrize("name", NAMES)
def test_assemble_network_series_and_dag(name):
    series = dlf.assembleNetwork(classifier(name))
    labels, _ = dlf.classify(series, data())
    assert labels.shape == (4,) and [layer.Name for layer in series.Layers][1] == name
    lgraph = dlf.layerGraph([*layers_named(name)[:4], dlf.regressionLayer(Name=f"{name}_out")])
    dag = dlf.assembleNetwork(dlf.connectLayers(lgraph, "in", f"{name}_add/in2"))
    assert dlf.dims(dlf.predict(dag, data())) == "CB" and dag.Layers[name].Name == name


@pytest.mark.parametrize("name", NAMES)
def test_learnables_file_and_network_file_keep_the_name(name, tmp_path):
    net = network(name)
    save_learnables(net, tmp_path / "learnables.mat")
    saved = loadmat(tmp_path / "learnables.mat")
    assert name in [str(item) for item in np.asarray(saved["Layer"], dtype=object).ravel()]
    twin = network(name)
    with torch.no_grad():
        twin.Layers[name].Weights.zero_()
    assert load_learnables(twin, tmp_path / "learnables.mat") == ([], [])
    assert torch.equal(twin.Layers[name].Weights, net.Layers[name].Weights)

    series = dlf.assembleNetwork(classifier(name))
    write_network_file(series, tmp_path / "net.pt")  # what `dlformat convert` writes
    loaded = load_network(tmp_path / "net.pt")
    assert [layer.Name for layer in loaded.Layers] == [layer.Name for layer in series.Layers]
    X = data()
    assert torch.equal(dlf.extractdata(dlf.predict(loaded, X)), dlf.extractdata(dlf.predict(series, X)))


@pytest.mark.parametrize("name", ["double", "train", "to", "a.b", "Layers", "ñandú λ"])
def test_trainnet_trains_a_network_with_the_name(name):
    X = torch.from_numpy(np.random.default_rng(1).standard_normal((16, 3))).float()
    T = X @ torch.tensor([[1.0], [-2.0], [0.5]])
    layers = [
        dlf.featureInputLayer(3, Name="in"),
        dlf.fullyConnectedLayer(4, Name=name),
        dlf.reluLayer(Name=f"{name}.relu"),
        dlf.fullyConnectedLayer(1, Name="train" if name != "train" else "eval"),
    ]
    options = dlf.trainingOptions("adam", MaxEpochs=2, MiniBatchSize=8, Verbose=False)
    net, info = dlf.trainnet(X, T, layers, "mse", options)
    assert net.Layers[name].Name == name and np.isfinite(info.TrainingHistory.Loss[-1])
    assert f"layers.{name}.Weights" in net.state_dict()


def _renamed(saved, renames: dict[str, str]):
    """A saved network with layers renamed everywhere the file names them."""

    def port(text: str) -> str:
        layer, slash, rest = text.partition("/")
        return renames.get(layer, layer) + slash + rest

    layers = tuple(
        dataclasses.replace(layer, name=renames.get(layer.name, layer.name)) for layer in saved.layers
    )
    return dataclasses.replace(
        saved,
        layers=layers,
        connections=tuple((port(source), port(destination)) for source, destination in saved.connections),
        input_names=tuple(port(name) for name in saved.input_names),
        output_names=tuple(port(name) for name in saved.output_names),
        classes={renames.get(name, name): value for name, value in saved.classes.items()},
    )


@pytest.mark.parametrize(
    ("file", "variable"),
    [("agoro_gru_ph_model.mat", "GRUPHNet"), ("mdl_tf__transformer_demo.mat", "net")],
    ids=["SeriesNetwork", "DAGNetwork"],
)
def test_load_network_of_a_saved_network_with_such_names(networks: Path, file, variable):
    pytest.importorskip("matio")
    saved = loadmat(networks / file, [variable])[variable]
    names = [layer.name for layer in saved.layers]
    renames = dict(
        zip(names, ["double", "a.b", "to", "train", "Layers", "forward", "ñ", "apply", "eval"], strict=False)
    )
    original, renamed = build(saved), build(_renamed(saved, renames))
    assert [layer.Name for layer in renamed.Layers] == [renames.get(name, name) for name in names]
    size = renamed.Layers[0].InputSize
    X = dlf.dlarray(
        torch.randn(int(np.ravel(size)[0]), 2, 6, generator=torch.Generator().manual_seed(0)), "CBT"
    )
    assert torch.equal(dlf.extractdata(dlf.predict(renamed, X)), dlf.extractdata(dlf.predict(original, X)))
