"""MATLAB's sizes of per-channel learnables and state (issue 23 item 2), table-driven over
layer × property × input kind.

MathWorks' pages (batchNormalizationLayer's TrainedMean table; Offset, Scale, TrainedVariance
and the group, instance and layer normalization layers' Offset and Scale alike) give one size
per kind of layer input: NumChannels×1 for feature and vector sequence input, 1×NumChannels for
1-D images (and 1-D image sequences), 1×1×NumChannels for 2-D images, 1×1×1×NumChannels for 3-D
images; every MATLAB-saved batch normalization layer in the real files stores 1×1×C. Every one
of these sizes is accepted for every such property, and once the input is known the value has
its input's size. Outputs are checked against float64 NumPy references of each layer's formula
(MathWorks' pages), independent of the code under test."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

C = 3
EPSILON = 1e-5

# the size each input kind gives a per-channel value (MathWorks' tables), by data format
INPUT_KINDS = {
    "CB": (C, 1),  # feature input
    "CBT": (C, 1),  # vector sequence input
    "SCB": (1, C),  # 1-D image input
    "SCBT": (1, C),  # 1-D image sequence input
    "SSCB": (1, 1, C),  # 2-D image input
    "SSCBT": (1, 1, C),  # 2-D image sequence input
    "SSSCB": (1, 1, 1, C),  # 3-D image input
    "SSSCBT": (1, 1, 1, C),  # 3-D image sequence input
}
DATA_SIZES = {"S": 4, "C": C, "B": 2, "T": 3}

# the documented sizes a value may be given in, and two more spellings of them: MATLAB drops
# trailing singleton dimensions, so 1×1×C×1 is 1×1×C and C×1×1 is C×1
GIVEN = [(C, 1), (1, C), (1, 1, C), (1, 1, 1, C), (1, 1, C, 1), (C, 1, 1)]
MATLAB_SIZE = {(1, 1, C, 1): (1, 1, C), (C, 1, 1): (C, 1)}

LAYERS = {
    "batchnorm": (dlf.batchNormalizationLayer, ("Offset", "Scale", "TrainedMean", "TrainedVariance")),
    "groupnorm": (lambda **kw: dlf.groupNormalizationLayer("all-channels", **kw), ("Offset", "Scale")),
    "instancenorm": (dlf.instanceNormalizationLayer, ("Offset", "Scale")),
    "layernorm": (dlf.layerNormalizationLayer, ("Offset", "Scale")),
}
CASES = [(layer, name) for layer, (_, names) in LAYERS.items() for name in names]


def values(name: str) -> np.ndarray:
    """One value per channel (positive, for the variance)."""
    base = {"Offset": [0.5, -1.0, 2.0], "Scale": [1.5, 0.25, -2.0], "TrainedMean": [0.1, -0.2, 0.3]}
    return np.array(base.get(name, [0.5, 2.0, 1.25]))


def data(fmt: str) -> np.ndarray:
    rng = np.random.default_rng(len(fmt))
    return rng.normal(1.0, 2.0, size=[DATA_SIZES[label] for label in fmt])


def reference(kind: str, x: np.ndarray, fmt: str, given: dict[str, np.ndarray]) -> np.ndarray:
    """Each layer's formula (inference), per channel, in float64."""
    shape = [1] * x.ndim
    shape[fmt.index("C")] = -1

    def per_channel(name: str) -> np.ndarray:
        return given[name].reshape(shape)

    if kind == "batchnorm":  # predict: the trained statistics
        normalized = (x - per_channel("TrainedMean")) / np.sqrt(per_channel("TrainedVariance") + EPSILON)
    else:
        kept = {
            "groupnorm": "B",  # one group: every channel (and S, T) of an observation
            "instancenorm": "CB",
            # "auto": the channels alone for data with T or without S, S and C otherwise
            "layernorm": "SBT" if "T" in fmt or "S" not in fmt else "BT",
        }[kind]
        axes = tuple(i for i, label in enumerate(fmt) if label not in kept)
        mean = x.mean(axis=axes, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        normalized = (x - mean) / np.sqrt(variance + EPSILON)
    return normalized * per_channel("Scale") + per_channel("Offset")


def build(kind: str, sizes: dict[str, tuple[int, ...]]) -> dlf.Layer:
    make, names = LAYERS[kind]
    given = {name: torch.tensor(values(name).reshape(sizes.get(name, (C, 1)))) for name in names}
    return make(**given, dtype=torch.float64)


@pytest.mark.parametrize(("kind", "name"), CASES)
@pytest.mark.parametrize("given", GIVEN, ids=lambda size: "x".join(map(str, size)))
@pytest.mark.parametrize("fmt", list(INPUT_KINDS))
def test_every_documented_size_is_accepted_and_takes_the_inputs_size(kind, name, given, fmt):
    layer = build(kind, {name: given})
    # before any input: the size it was given in (MATLAB's size of it)
    assert tuple(getattr(layer, name).shape) == MATLAB_SIZE.get(given, given)
    x = data(fmt)
    Y = layer(dlf.dlarray(torch.from_numpy(x), fmt), training=False)
    _, names = LAYERS[kind]
    for each in names:  # every per-channel value of the layer now has the input's size
        assert tuple(getattr(layer, each).shape) == INPUT_KINDS[fmt], each
        np.testing.assert_array_equal(getattr(layer, each).detach().numpy().reshape(-1), values(each))
    expected = reference(kind, x, fmt, {each: values(each) for each in names})
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("kind", "name"), CASES)
@pytest.mark.parametrize("fmt", ["CB", "SCB", "SSCB", "SSSCBT"])
@pytest.mark.parametrize(
    "assigned", [(C, 1), (1, 1, C), (1, 1, 1, C)], ids=lambda size: "x".join(map(str, size))
)
def test_a_value_assigned_after_the_input_takes_the_inputs_size(kind, name, fmt, assigned):
    layer = build(kind, {})
    layer(dlf.dlarray(torch.from_numpy(data(fmt)), fmt))
    setattr(layer, name, values(name).reshape(assigned) * 2)
    value = getattr(layer, name)
    assert tuple(value.shape) == INPUT_KINDS[fmt]
    np.testing.assert_array_equal(value.detach().numpy().reshape(-1), values(name) * 2)
    if name in layer.Learnables:
        assert isinstance(value, torch.nn.Parameter)


@pytest.mark.parametrize(("kind", "name"), CASES)
@pytest.mark.parametrize(
    "bad",
    [(C, C), (C,), (2, 1, C), (1, C, 2), (1, 1, 1, 1, C), (C + 1, 1)],
    ids=lambda size: "x".join(map(str, size)),
)
def test_other_sizes_are_refused_naming_the_documented_ones(kind, name, bad):
    layer = build(kind, {})
    before = getattr(layer, name).clone()
    message = (
        rf"{type(layer).__name__} {name} must have size 3×1, 1×3, 1×1×3 or 1×1×1×3 \(one value per "
        r"channel: NumChannels×1 for feature or sequence, 1×NumChannels for 1-D image, "
        r"1×1×NumChannels for 2-D image, 1×1×1×NumChannels for 3-D image input\); "
        rf"got {'×'.join(map(str, bad))}$"
    )
    with pytest.raises(DLFormatError, match=message):
        setattr(layer, name, np.ones(bad))
    torch.testing.assert_close(getattr(layer, name), before, rtol=0, atol=0)  # changes nothing
    make, _ = LAYERS[kind]
    with pytest.raises(DLFormatError, match=message):
        make(NumChannels=C, **{name: np.ones(bad)})


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_one_channel_has_the_one_size_1x1(kind, name):
    make, _ = LAYERS[kind]
    layer = make(**{name: np.full((1, 1, 1), 2.0)})  # 1×1×1 is MATLAB's 1×1
    assert layer.NumChannels == 1 and tuple(getattr(layer, name).shape) == (1, 1)
    layer(dlf.dlarray(torch.randn(4, 4, 1, 2), "SSCB"))
    assert tuple(getattr(layer, name).shape) == (1, 1)


@pytest.mark.parametrize(
    ("input_layer", "size"),
    [
        (lambda: dlf.featureInputLayer(C), (C, 1)),
        (lambda: dlf.sequenceInputLayer(C), (C, 1)),
        (lambda: dlf.sequenceInputLayer([5, C]), (1, C)),  # 1-D image sequences
        (lambda: dlf.imageInputLayer([5, 5, C], Normalization="none"), (1, 1, C)),
        (lambda: dlf.image3dInputLayer([4, 4, 4, C], Normalization="none"), (1, 1, 1, C)),
    ],
)
@pytest.mark.parametrize("kind", list(LAYERS))
def test_dlnetwork_initialization_gives_matlabs_sizes(input_layer, size, kind):
    """As the pages say trainnet and dlnetwork reshape the properties: the network's Learnables
    and State tables show MATLAB's sizes."""
    make, names = LAYERS[kind]
    net = dlf.dlnetwork([input_layer(), make(Name="norm")])
    tables = [*net.Learnables, *net.State]
    shown = {row[1]: tuple(row[2].shape) for row in tables if row[0] == "norm"}
    assert shown == dict.fromkeys(names, size)


def test_state_table_rows_take_any_documented_size():
    net = dlf.dlnetwork([dlf.imageInputLayer([4, 4, C], Normalization="none"), dlf.batchNormalizationLayer()])
    rows = [(layer, parameter, torch.full((C, 1), 2.0)) for layer, parameter, _ in net.State]
    net.State = rows  # C×1 into a network of 2-D image input: stored 1×1×C
    assert [tuple(value.shape) for value in net.State.Value] == [(1, 1, C), (1, 1, C)]
    torch.testing.assert_close(net.State.Value[0], torch.full((1, 1, C), 2.0))


def test_state_dict_round_trip_keeps_the_size():
    """A layer rebuilt from its config (its input not known yet) takes the saved size; a layer
    whose input is known keeps its own, taking the values."""
    layer = build("batchnorm", {})
    layer(dlf.dlarray(torch.randn(4, 4, C, 2, dtype=torch.float64), "SSCB"))
    saved = layer.state_dict()
    rebuilt = type(layer).from_config(layer.get_config())
    assert tuple(rebuilt.Offset.shape) == (C, 1)
    offset = rebuilt.Offset
    rebuilt.load_state_dict(saved)
    assert rebuilt.Offset is offset  # the same parameter, reshaped
    assert {name: tuple(getattr(rebuilt, name).shape) for name in LAYERS["batchnorm"][1]} == dict.fromkeys(
        LAYERS["batchnorm"][1], (1, 1, C)
    )
    features = build("batchnorm", {})
    features(dlf.dlarray(torch.randn(C, 2, dtype=torch.float64), "CB"))
    features.load_state_dict(saved)  # 1×1×C values into a layer of feature input
    assert tuple(features.TrainedMean.shape) == (C, 1)
    np.testing.assert_array_equal(features.TrainedMean.numpy().reshape(-1), saved["TrainedMean"].reshape(-1))


def test_initializers_are_called_with_the_inputs_size():
    """A lazy layer draws its values once the input is known: a function initializer gets that
    size (MATLAB's sz), and the value keeps it."""
    sizes = []

    def ones(sz):
        sizes.append(tuple(sz))
        return np.ones(sz)

    layer = dlf.layerNormalizationLayer(ScaleInitializer=ones)
    layer(dlf.dlarray(torch.randn(4, 4, C, 2), "SSCB"))
    assert sizes == [(1, 1, C)] and tuple(layer.Scale.shape) == (1, 1, C)


NETWORKS = os.environ.get("DLFORMAT_MATLAB_NETWORKS")


@pytest.mark.skipif(not NETWORKS, reason="DLFORMAT_MATLAB_NETWORKS is not set")
@pytest.mark.parametrize(
    "file", ["ccn__net.mat", "fuma28_speech_trainedNet.mat", "traffic__trainedNetwork.mat"]
)
def test_saved_batch_normalization_keeps_matlabs_1x1xC(file):
    """MATLAB saved every batch normalization layer of these files (2-D image and image sequence
    input) with 1×1×C Offset, Scale, TrainedMean and TrainedVariance; loaded, they report it."""
    from dlformat.io import load_network

    net = load_network(Path(NETWORKS) / file)  # type: ignore[arg-type]
    layers = [layer for layer in net.Layers if isinstance(layer, dlf.BatchNormalizationLayer)]
    assert layers
    for layer in layers:
        for name in LAYERS["batchnorm"][1]:
            assert tuple(getattr(layer, name).shape) == (1, 1, layer.NumChannels), (layer.Name, name)
