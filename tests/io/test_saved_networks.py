"""load_network on saved forms beyond the trained networks of ../shared/matlab-networks.

Each case starts from a real file of that folder and changes what a case needs, in the decoded
SavedNetwork (as tests/io/test_load_network.py's unhandled-value cases do): saved normalizations
with their statistics, a fully connected layer of one output, a layer graph and layer arrays
saved on their own, the two saved forms of averagePooling2dLayer, and hostile field values. The
expected values come from the saved arrays and MathWorks' formulas, computed with NumPy.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import _mcos, _network, load_network, loadmat

from . import numpy_reference as ref

pytest.importorskip("matio")


def _saved(networks, file: str, variable: str) -> _mcos.SavedNetwork:
    return loadmat(networks / file, [variable])[variable]


def _with(saved: _mcos.SavedNetwork, name: str, **fields) -> _mcos.SavedNetwork:
    """``saved`` with the fields of layer ``name`` replaced (None removes one)."""
    layers = []
    for layer in saved.layers:
        if layer.name == name:
            properties = {**layer.properties, **fields}
            properties = {key: value for key, value in properties.items() if value is not None}
            learnables = {
                key: value for key, value in properties.items() if isinstance(value, _mcos.SavedLearnable)
            }
            state = {key: layer.state[key] for key in layer.state if key in properties}
            layer = dataclasses.replace(layer, properties=properties, learnables=learnables, state=state)
        layers.append(layer)
    return dataclasses.replace(saved, layers=tuple(layers))


def _layer(saved: _mcos.SavedNetwork, name: str) -> _mcos.SavedLayer:
    return next(layer for layer in saved.layers if layer.name == name)


def _output(net, x: np.ndarray, fmt: str) -> np.ndarray:
    return dlf.extractdata(net.predict(dlf.dlarray(torch.as_tensor(x, dtype=torch.float32), fmt))).numpy()


# -- saved normalizations (issue 23 item 1) -----------------------------------------------------
# MathWorks, imageInputLayer / sequenceInputLayer / featureInputLayer, "Normalization": zscore
# subtracts Mean and divides by StandardDeviation; rescale-symmetric maps [Min, Max] to [-1, 1],
# rescale-zero-one to [0, 1].
NORMALIZED = {
    "zscore": (("Mean", "StandardDeviation"), lambda x, s: (x - s["Mean"]) / s["StandardDeviation"]),
    "rescale-symmetric": (("Min", "Max"), lambda x, s: 2 * (x - s["Min"]) / (s["Max"] - s["Min"]) - 1),
    "rescale-zero-one": (("Min", "Max"), lambda x, s: (x - s["Min"]) / (s["Max"] - s["Min"])),
    "zerocenter": (("AverageImage",), lambda x, s: x - s["AverageImage"]),
}


def _statistics(names, channels: int, shape) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    low = rng.uniform(-3, -1, channels)
    values = {
        "Mean": rng.uniform(-1, 1, channels),
        "AverageImage": rng.uniform(-1, 1, channels),
        "StandardDeviation": rng.uniform(0.5, 2, channels),
        "Min": low,
        "Max": low + rng.uniform(1, 4, channels),
    }
    return {name: values[name].astype(np.float32).reshape(shape) for name in names}


@pytest.mark.parametrize("kind", NORMALIZED)
def test_a_saved_sequence_normalization_is_applied_with_its_statistics(networks, kind):
    """agoro's real SequenceInputLayer (version 5, saved Normalization []), its Normalization saved
    as MATLAB saves a transform: {Version, Type, <statistics>}. The loaded network on x equals the
    original network on the normalized x (computed with NumPy)."""
    saved = _saved(networks, "agoro_gru_ph_model.mat", "GRUPHNet")
    names, formula = NORMALIZED[kind]
    statistics = _statistics(names, 1, (1, 1))
    normalization = {"Version": np.array([[1.0]]), "Type": kind, **statistics}
    net = _network.build(_with(saved, "InputLayer", Normalization=normalization))
    assert net.Layers[0].Normalization == kind
    x = np.random.default_rng(1).standard_normal((1, 3, 20))
    normalized = formula(
        x, {name: value.astype(np.float64).reshape(-1, 1, 1) for name, value in statistics.items()}
    )
    expected = _output(_network.build(saved), normalized, "CBT")
    np.testing.assert_allclose(_output(net, x, "CBT"), expected, atol=1e-5)


@pytest.mark.parametrize("kind", NORMALIZED)
def test_a_saved_image_normalization_is_applied_with_its_statistics(networks, kind):
    """fuma28's real ImageInputLayer (version 5, zerocenter): each normalization with per-channel
    (1×1×C) statistics and NormalizationDimension "channel"; the input layer's output against
    NumPy."""
    saved = _saved(networks, "fuma28_speech_trainedNet.mat", "trainedNet")
    name = saved.layers[0].name
    names, formula = NORMALIZED[kind]
    statistics = _statistics(names, 1, (1, 1, 1))
    normalization = {
        "Version": np.array([[2.0]]),
        "Type": kind,
        "ImageSize": np.array([[98.0, 32.0, 1.0]]),
        **statistics,
    }
    changed = _with(saved, name, Normalization=normalization, NormalizationDimension="channel")
    layer = _network.mapped(_layer(changed, name))
    assert (layer.Normalization, layer.NormalizationDimension) == (kind, "channel")
    x = np.random.default_rng(2).standard_normal((98, 32, 1, 2)) * 4
    expected = formula(x, {key: value.astype(np.float64) for key, value in statistics.items()})
    ours = layer(dlf.dlarray(torch.as_tensor(x), "SSCB"))
    np.testing.assert_allclose(dlf.extractdata(ours).numpy(), expected, rtol=1e-6)


def test_a_saved_feature_input_layer_with_zscore(networks):
    """No real file saves a featureInputLayer: its struct is built from MATLAB's public properties
    (InputSize: the number of features) in the form agoro's SequenceInputLayer shows."""
    sequence = _layer(_saved(networks, "agoro_gru_ph_model.mat", "GRUPHNet"), "InputLayer")
    statistics = _statistics(("Mean", "StandardDeviation"), 4, (4, 1))
    struct = {
        "Version": np.array([[1.0]]),
        "Name": "features",
        "InputSize": np.array([[4.0]]),
        "Normalization": {"Version": np.array([[1.0]]), "Type": "zscore", **statistics},
        "NormalizationDimension": sequence.properties["NormalizationDimension"],
        "SplitComplexInputs": np.array([[False]]),
    }
    layer = _network.mapped(
        _mcos._layer(_mcos.MatlabObject("nnet.cnn.layer.FeatureInputLayer", {"any": struct}), "x")
    )
    assert isinstance(layer, dlf.layers.FeatureInputLayer) and layer.NumFeatures == 4
    x = np.random.default_rng(3).standard_normal((4, 5))
    expected = (x - statistics["Mean"]) / statistics["StandardDeviation"]
    np.testing.assert_allclose(
        dlf.extractdata(layer(dlf.dlarray(torch.as_tensor(x), "CB"))).numpy(), expected, rtol=1e-6
    )


def test_statistics_saved_empty_are_left_unset(networks):
    """vikas_net.mat's layer array, saved before training: zerocenter with AverageImage []."""
    layers = load_network(networks / "vikas_net.mat", variable="layers")
    assert layers[0].Normalization == "zerocenter" and layers[0].Mean is None


@pytest.mark.parametrize(
    ("normalization", "message"),
    [
        (
            _mcos.FunctionHandle("@(X)X/255", "anonymous", ""),
            r"field 'Normalization': the saved normalization is the MATLAB function @\(X\)X/255, which "
            r"load_network does not run .*custom_layers=\{'InputLayer': factory\}",
        ),
        (
            {
                "Version": np.array([[1.0]]),
                "Type": "zscore",
                "Average": np.ones((1, 1)),
                "Std": np.ones((1, 1)),
            },
            r"field 'Normalization.Type': the saved 'zscore' normalization holds no Mean \(looked for: "
            r"AverageImage, Mean; it saves: Version, Type, Average, Std\)",
        ),
        (
            {"Version": np.array([[1.0]]), "Type": "whiten"},
            r"field 'Normalization.Type': the value 'whiten' is not handled",
        ),
        ([{"Type": "zscore"}, {"Type": "none"}], r"field 'Normalization': the file saves 2 normalizations"),
    ],
    ids=["function handle", "unknown fields", "unknown type", "two transforms"],
)
def test_a_saved_normalization_that_cannot_be_mapped_is_named(networks, normalization, message):
    saved = _saved(networks, "agoro_gru_ph_model.mat", "GRUPHNet")
    with pytest.raises(
        DLFormatError,
        match=r"layer 'InputLayer' \(class nnet\.cnn\.layer\.SequenceInputLayer, saveobj version 5\), "
        + message,
    ):
        _network.build(_with(saved, "InputLayer", Normalization=normalization))


# -- a fully connected layer of one output (issue 23 item 6) -------------------------------------


@pytest.mark.parametrize(
    ("file", "variable", "name"),
    [
        ("vikas_net.mat", "net", "fc"),  # SeriesNetwork: InputSize [80 80 32], OutputSize [1 1 3]
        ("fuma28_speech_trainedNet.mat", "trainedNet", "fc"),  # dlnetwork: InputSize [], OutputSize 8
    ],
)
def test_a_fully_connected_layer_of_one_output_after_an_image(networks, file, variable, name):
    """MATLAB drops the trailing singleton of H×W×C×1 weights: one output's weights are saved
    H×W×C. The real layer cut to its first output, saved as MATLAB would save it; the layer must
    read OutputSize, not the array's rank (it once read the C channels as outputs)."""
    saved = _saved(networks, file, variable)
    fc = _layer(saved, name)
    weights, bias = fc.learnables["Weights"].value, fc.learnables["Bias"].value
    one = np.ascontiguousarray(weights[..., :1]).reshape(weights.shape[:-1], order="F")  # H×W×C
    output_size = (
        np.array([[1.0, 1.0, 1.0]])
        if np.asarray(fc.properties["OutputSize"]).size == 3
        else np.array([[1.0]])
    )
    changed = _with(
        saved,
        name,
        OutputSize=output_size,
        Weights=dataclasses.replace(fc.learnables["Weights"], value=one),
        Bias=dataclasses.replace(fc.learnables["Bias"], value=bias.reshape(-1)[:1].reshape(1, 1)),
    )
    layer = _network.mapped(_layer(changed, name))
    h, w, c = weights.shape[:3]
    assert (layer.OutputSize, layer.InputSize) == (1, h * w * c)
    np.testing.assert_array_equal(layer.Weights.detach().numpy(), one.reshape(1, -1, order="F"))
    x = np.random.default_rng(4).standard_normal((h, w, c, 2))
    expected = ref.fully_connected(x, one.astype(np.float64), bias.reshape(-1)[:1].astype(np.float64))
    ours = layer(dlf.dlarray(torch.as_tensor(x, dtype=torch.float32), "SSCB"))
    np.testing.assert_allclose(dlf.extractdata(ours).numpy(), expected, rtol=1e-5, atol=1e-4)


def test_fully_connected_sizes_that_disagree_with_the_weights_are_named(networks):
    saved = _saved(networks, "vikas_net.mat", "net")
    with pytest.raises(
        DLFormatError,
        match=r"layer 'fc' .*field 'InputSize': the file saves \[80, 80, 16\] \(102400 inputs\), its weights hold 204800",
    ):
        _network.build(_with(saved, "fc", InputSize=np.array([[80.0, 80.0, 16.0]])))
    with pytest.raises(
        DLFormatError, match=r"field 'Weights': the saved array is 80×80×32×3, which holds no 7 outputs"
    ):
        _network.build(_with(saved, "fc", OutputSize=np.array([[1.0, 1.0, 7.0]])))


# -- layer graphs and layer arrays saved on their own (issue 23 item 6) --------------------------


def test_a_saved_layer_graph_loads_as_a_layer_graph(networks):
    """A LayerGraph saves the struct a dlnetwork's own LayerGraph saves (fuma28, traffic, pac48:
    Version, Layers, Connections); fuma28's, saved on its own, becomes a layerGraph whose dlnetwork
    predicts what the file's dlnetwork predicts."""
    saved = _saved(networks, "fuma28_speech_trainedNet.mat", "trainedNet")
    table = pd.DataFrame(
        {"Source": [s for s, _ in saved.connections], "Destination": [d for _, d in saved.connections]}
    )
    struct = {
        "Version": np.array([[1.0]]),
        "Layers": np.array(saved.layers, dtype=object).reshape(-1, 1),
        "Connections": table,
    }
    graph = _mcos.MatlabObject("nnet.cnn.LayerGraph", {"any": struct})
    described = _network.saved_network(graph, "lgraph", "nnet.cnn.LayerGraph")
    assert described.kind == "LayerGraph" and described.input_names == (saved.layers[0].name,)
    lgraph = _network.build(described)
    assert isinstance(lgraph, dlf.LayerGraph)
    assert [layer.Name for layer in lgraph.Layers] == [layer.name for layer in saved.layers]
    x = np.random.default_rng(5).standard_normal((98, 32, 1, 2))
    np.testing.assert_array_equal(
        _output(dlf.dlnetwork(lgraph), x, "SSCB"), _output(_network.build(saved), x, "SSCB")
    )


def test_a_saved_layer_array_loads_as_a_list_of_layers(networks):
    """vikas_net.mat saves the layer array its network was trained from (untrained: [] sizes, no
    learnable values, no class names); load_network picks the network unless asked for it."""
    assert isinstance(load_network(networks / "vikas_net.mat"), dlf.SeriesNetwork)
    layers = load_network(networks / "vikas_net.mat", variable="layers")
    net = load_network(networks / "vikas_net.mat")
    assert [type(layer) for layer in layers] == [type(layer) for layer in net.Layers]
    assert {layer.Name for layer in layers} == {""}  # MATLAB names them when a network is made
    conv = layers[1]
    assert (conv.NumChannels, conv.NumFilters, conv.PaddingMode) == ("auto", 8, "same")
    assert conv.Weights is None and conv.BiasL2Factor == 0  # the factors as saved
    assert layers[-1].Classes == "auto" and layers[12].OutputSize == 3 and layers[12].InputSize == "auto"


def test_a_trained_layer_array_keeps_its_learnables(networks):
    """A Layer array holding trained layers (net.Layers saved on its own) keeps every saved value."""
    saved = _saved(networks, "vikas_net.mat", "net")
    array = np.array(saved.layers, dtype=object).reshape(-1, 1)
    layers = _network.build(_network.saved_network(array, "layers", "nnet.cnn.layer.Layer"))
    for ours, theirs in zip(layers, _network.build(saved).Layers, strict=True):
        assert type(ours) is type(theirs) and ours.Name == theirs.Name
        for name in theirs.learnables:
            torch.testing.assert_close(getattr(ours, name), getattr(theirs, name), rtol=0, atol=0)


# -- averagePooling2dLayer's saved forms (issue 23 item 6) ---------------------------------------
# MATLAB's AveragePooling2DLayer.saveobj (R2017): version 2 saves Name, PoolSize, Stride,
# PaddingMode, PaddingSize; version 1 saved Padding [top/bottom left/right] (upgraded on load).


@pytest.mark.parametrize(
    ("fields", "padding"),
    [
        ({"Version": 1.0, "Padding": [1.0, 0.0]}, (1, 1, 0, 0)),
        ({"Version": 2.0, "PaddingMode": "manual", "PaddingSize": [1.0, 0.0, 0.0, 1.0]}, (1, 0, 0, 1)),
        ({"Version": 2.0, "PaddingMode": "same", "PaddingSize": [0.0, 1.0, 0.0, 1.0]}, "same"),
    ],
    ids=["version 1", "version 2", "version 2 same"],
)
def test_average_pooling_saved_forms(fields, padding):
    struct = {"Name": "avgpool", "PoolSize": np.array([[2.0, 2.0]]), "Stride": np.array([[2.0, 2.0]])}
    struct.update(
        {key: np.array([value]) if isinstance(value, list) else value for key, value in fields.items()}
    )
    struct["Version"] = np.array([[fields["Version"]]])
    layer = _network.mapped(
        _mcos._layer(_mcos.MatlabObject("nnet.cnn.layer.AveragePooling2DLayer", {"any": struct}), "x")
    )
    expected = dlf.averagePooling2dLayer(2, Stride=2, Padding=padding, Name="avgpool")
    assert layer.get_config() == expected.get_config()


# -- hostile field values: one reader names layer, class, field and value (issue 24 item 6) ------


def _learnable(saved, name, field, **changes):
    return dataclasses.replace(_layer(saved, name).learnables[field], **changes)


HOSTILE = [
    # (layer, field changes, expected message after "layer '<name>' (class ..., saveobj version N)")
    (
        "conv_1",
        {"NumFilters": np.array([[np.nan]])},
        r", field 'NumFilters': expected finite numbers, the file saves ndarray 1×1 float64 \[nan\]",
    ),
    (
        "conv_1",
        {"FilterSize": np.array([[3.0, np.inf]])},
        r", field 'FilterSize': expected finite numbers, the file saves .*inf",
    ),
    (
        "imageinput",
        {"InputSize": np.array([[1e300, 320.0, 3.0]])},
        r", field 'InputSize': expected whole numbers, the file saves \[1e\+300, 320.0, 3.0\]",
    ),
    (
        "conv_1",
        {"NumChannels": np.array([[2.5]])},
        r", field 'NumChannels': expected whole numbers, the file saves \[2.5\]",
    ),
    ("batchnorm_1", {"Epsilon": np.array([[np.nan]])}, r", field 'Epsilon': expected finite numbers"),
    ("conv_1", {"Stride": "one"}, r", field 'Stride': expected numbers, the file saves 'one'"),
    (
        "conv_1",
        {"PaddingMode": np.array([["sa"], ["me"]])},
        r", field 'PaddingMode': expected text, the file saves ndarray 2×1 <U2",
    ),
    (
        "conv_1",
        {"FilterSize": np.array([[-3.0, 3.0]])},
        r", field 'FilterSize': expected positive whole numbers, the file saves \[-3, 3\]",
    ),
    ("batchnorm_1", {"Epsilon": np.array([[-1.0]])}, r": .*Epsilon.*-1"),  # the constructor's refusal
    ("fc", {"OutputSize": np.array([[1.0, 1.0, np.nan]])}, r", field 'OutputSize': expected finite numbers"),
]


@pytest.mark.parametrize(("name", "fields", "message"), HOSTILE)
def test_a_hostile_saved_value_is_named_with_layer_class_and_field(networks, name, fields, message):
    saved = _saved(networks, "vikas_net.mat", "net")
    where = rf"layer '{name}' \(class nnet\.cnn\.layer\.[A-Za-z0-9]+, saveobj version \d\)"
    with pytest.raises(DLFormatError, match=where + message):
        _network.build(_with(saved, name, **fields))


def test_a_char_matrix_as_normalization_type_is_named(networks):
    """A char array of two rows decodes as a NumPy array: once a raw "truth value is ambiguous"."""
    saved = _saved(networks, "vikas_net.mat", "net")
    normalization = {
        **_layer(saved, "imageinput").properties["Normalization"],
        "Type": np.array(["zero", "cent"]),
    }
    with pytest.raises(
        DLFormatError,
        match=r"layer 'imageinput' .*field 'Normalization.Type': expected text, the file saves ndarray 2 <U4",
    ):
        _network.build(_with(saved, "imageinput", Normalization=normalization))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"learn_rate_factor": np.array([[np.inf]])},
            r"field 'Weights.LearnRateFactor': expected one finite factor",
        ),
        ({"l2_factor": "one"}, r"field 'Weights.L2Factor': expected one finite factor, the file saves 'one'"),
        (
            {"value": np.array([["a", "b"]])},
            r"field 'Weights': expected a numeric array, the file saves ndarray 1×2 <U1",
        ),
    ],
)
def test_a_hostile_learnable_is_named(networks, change, message):
    saved = _saved(networks, "vikas_net.mat", "net")
    with pytest.raises(DLFormatError, match=r"layer 'conv_1' .*" + message):
        _network.build(_with(saved, "conv_1", Weights=_learnable(saved, "conv_1", "Weights", **change)))


def test_a_huge_saved_value_is_quoted_in_bounded_length(networks):
    saved = _saved(networks, "vikas_net.mat", "net")
    with pytest.raises(DLFormatError) as raised:
        _network.build(_with(saved, "conv_1", PaddingMode="x" * 10**7))
    assert len(str(raised.value)) < 1000 and "not handled by load_network" in str(raised.value)
