"""load_network's mapping of every layer class dlformat implements, from the form MATLAB saves it in.

Twenty-six classes have been seen in MATLAB-written files (../shared/matlab-networks; their
tests are in test_load_network.py). For every class, this file builds the saved struct from the
layer's public properties, as MATLAB's saveobj writes them in every file seen: each public
property under its own name, learnables as ``{Version, Value, LearnRateFactor, L2Factor}``
structs, ``[]`` for a size left to the data, and the renamings the real files show for the 2-D
classes (``Padding`` saved as ``PaddingMode`` + ``PaddingSize``, ``Cropping`` as ``CroppingMode``
+ ``CroppingSize``, ``OutputMode`` as ``ReturnSequence``, a recurrent state as ``{Value,
Remember}``, the normalization as ``{Version, Type, <statistics>}``, class names as a
categorical, a position embedding's weights as a plain array), assumed for their 1-D and 3-D
siblings. The struct is decoded as a file's would be (``_mcos._layer``), mapped, and the mapped
layer must compute what the original computes, with the same learnables and factors.
docs/loading_networks.md says which classes are verified on a real file and which are not.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import _mcos, _network
from dlformat.layers import Layer

from ..layers.test_contract import LAYERS, call, make_input

pytest.importorskip("matio")


def _matlab(value):
    """A public property value in the form mat-io decodes MATLAB's saved value into."""
    if value is None or (isinstance(value, str) and value == "auto"):
        return np.zeros((0, 0))
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return np.array([[value]])
    if isinstance(value, (int, float)):
        return np.array([[float(value)]])
    if isinstance(value, torch.Tensor):
        return value.detach().numpy().copy()
    if isinstance(value, (tuple, list)):
        array = np.asarray(value, dtype=float)
        return array.reshape(1, -1) if array.ndim == 1 else array
    raise TypeError(f"no MATLAB form for {value!r}")


def _learnable(layer, name):
    factors = layer._factors.get(name, {"LearnRateFactor": 1.0, "L2Factor": 1.0})
    return {
        "Version": np.array([[2.0]]),
        "Value": getattr(layer, name).detach().numpy().copy(),
        "LearnRateFactor": np.array([[factors["LearnRateFactor"]]]),
        "L2Factor": np.array([[factors["L2Factor"]]]),
        "Initializer": {},
    }


_SKIPPED = ("Initializer", "LearnRateFactor", "L2Factor")


def saved_struct(layer: Layer) -> dict:
    """The saveobj struct of ``layer`` (see the module's docstring), as mat-io decodes it."""
    struct = {"Version": np.array([[1.0]]), "Name": layer.Name}
    for key in layer.config_keys:
        if key != "Name" and not key.endswith(_SKIPPED):
            struct[key] = getattr(layer, key)
    if isinstance(layer, dlf.layers.FeatureInputLayer):  # MATLAB's InputSize: the features
        struct["InputSize"] = struct.pop("NumFeatures")
    if "Normalization" in struct:  # a struct array of one transform, its statistics in it
        kind = struct.pop("Normalization")
        statistics = {name: struct.pop(name) for name in ("Mean", "StandardDeviation", "Min", "Max")}
        if kind == "none":
            struct["Normalization"] = np.zeros((0, 0))
        elif callable(kind):
            struct["Normalization"] = _mcos.FunctionHandle("@(X)X*2", "anonymous", "")
        else:
            struct["Normalization"] = {
                "Version": np.array([[1.0]]),
                "Type": kind,
                **{name: value for name, value in statistics.items() if value is not None},
            }
    for padded in ("Padding", "Cropping"):
        if padded in struct:
            struct.pop(padded)
            struct[f"{padded}Mode"] = getattr(layer, f"{padded}Mode")
            struct[f"{padded}Size"] = getattr(layer, f"{padded}Size")
    if "OutputMode" in struct:
        struct["ReturnSequence"] = struct.pop("OutputMode") == "sequence"
    if "Classes" in struct:
        classes = struct.pop("Classes")
        struct["Categories"] = pd.Categorical([] if isinstance(classes, str) else list(classes))
        weights = struct.pop("ClassWeights", "none")
        struct["ClassWeights"] = np.zeros((0, 0)) if isinstance(weights, str) else weights
    if "ResponseNames" in struct:
        struct["ResponseNames"] = np.array([[*struct["ResponseNames"]]], dtype=object)
    for name in layer.State:
        value = getattr(layer, name).detach().numpy().copy()
        recurrent = isinstance(layer, dlf.layers.recurrent.RecurrentLayer)
        struct[name] = {"Value": value, "Remember": np.array([[True]])} if recurrent else value
    if isinstance(layer, dlf.layers.PositionEmbeddingLayer):  # version 1: plain weights, factors beside
        struct["Weights"] = layer.Weights.detach().numpy().copy()
        struct["WeightLearnRateFactor"] = layer.WeightLearnRateFactor
        struct["WeightL2Factor"] = layer.WeightL2Factor
    else:
        struct.update({name: _learnable(layer, name) for name in layer.learnables})
    kept = (dict, np.ndarray, str, pd.Categorical, _mcos.FunctionHandle)
    return {key: value if isinstance(value, kept) else _matlab(value) for key, value in struct.items()}


def saved_layer(layer: Layer) -> _mcos.SavedLayer:
    """``layer`` as load_network finds it in a file: its saveobj struct, decoded."""
    struct = saved_struct(layer)
    obj = _mcos.MatlabObject(f"nnet.cnn.layer.{type(layer).__name__}", {"any": struct})
    return _mcos._layer(obj, "layers(1)")


def _built_in(factory) -> bool:
    layer = factory()
    return getattr(dlf.layers, type(layer).__name__, None) is type(layer)


MAPPED_ROWS = [
    row
    for row in LAYERS
    if _built_in(row.values[0]) and type(row.values[0]()).__name__ not in _network.NOT_MAPPED
]


def _ready(factory, fmt, sizes):
    """The layer with every size fixed (run once, as a trained network's layers are)."""
    layer = factory().eval()
    X = make_input(fmt, sizes)
    if not isinstance(layer, dlf.layers.recurrent.RecurrentLayer):  # their sizes are given, their
        torch.manual_seed(0)  # states would become the run's final states, one per observation
        call(layer, X)
    return layer, X


@pytest.mark.parametrize(("factory", "fmt", "sizes"), MAPPED_ROWS)
def test_the_saved_form_maps_back_to_the_same_layer(factory, fmt, sizes):
    layer, X = _ready(factory, fmt, sizes)
    if callable(getattr(layer, "Normalization", None)):  # a function handle: MATLAB code, never run
        with pytest.raises(
            DLFormatError, match=r"field 'Normalization': the saved normalization is the MATLAB"
        ):
            _network.mapped(saved_layer(layer))
        return
    made = _network.mapped(saved_layer(layer)).eval()
    assert type(made) is type(layer) and made.Name == layer.Name
    for name in layer.learnables:
        torch.testing.assert_close(getattr(made, name), getattr(layer, name), rtol=0, atol=0)
    assert made._factors == layer._factors
    for name in layer.State:
        torch.testing.assert_close(getattr(made, name), getattr(layer, name), rtol=0, atol=0)
    ignored = {key for key in layer.config_keys if key.endswith("Initializer")}
    ours = {key: value for key, value in made.get_config().items() if key not in ignored}
    theirs = {key: value for key, value in layer.get_config().items() if key not in ignored}
    assert ours.keys() == theirs.keys()
    for key, value in theirs.items():
        if isinstance(value, torch.Tensor):
            torch.testing.assert_close(ours[key], value, rtol=0, atol=0)
        else:
            assert ours[key] == value, key
    torch.manual_seed(1)
    expected = call(layer, X)
    torch.manual_seed(1)
    got = call(made, X)
    if isinstance(expected, dlf.DLArray):
        assert dlf.dims(got) == dlf.dims(expected)
        torch.testing.assert_close(dlf.stripdims(got), dlf.stripdims(expected), rtol=0, atol=0)


def _layer_classes() -> list[str]:
    """Every layer class dlformat implements (its public classes in dlformat.layers and dlformat:
    networkLayer's class lives with the networks)."""
    return sorted(
        name
        for name, value in {**vars(dlf.layers), **vars(dlf)}.items()
        if inspect.isclass(value)
        and issubclass(value, Layer)
        and value is not Layer
        and not name.startswith("_")
    )


@pytest.mark.parametrize("name", _layer_classes())
def test_every_layer_class_is_mapped_or_has_a_documented_reason(name):
    from pathlib import Path

    key = f"nnet.cnn.layer.{name}"
    docs = (Path(__file__).resolve().parents[2] / "docs" / "loading_networks.md").read_text()
    if name in _network.NOT_MAPPED:
        assert f"| `{name}` | {_network.NOT_MAPPED[name]} |" in docs
        if key in _network._MAPPERS:  # a mapper that refuses, with the way around
            saved = _mcos._layer(
                _mcos.MatlabObject(key, {"any": {"Version": np.array([[1.0]]), "Name": "x"}}), "x"
            )
            with pytest.raises(DLFormatError, match=r"layer 'x' \(class "):
                _network.mapped(saved)
        return
    assert key in _network._MAPPERS, (
        f"{name}: add a mapper to dlformat/io/_network.py or a reason to NOT_MAPPED"
    )
    assert f"`{name}`" in docs.split("### Supported classes and saveobj versions")[1].split("###")[0]
    rows = [row for row in MAPPED_ROWS if type(row.values[0]()).__name__ == name]
    assert rows, f"{name}: tests/layers/test_contract.py has no row to build its saved form from"
