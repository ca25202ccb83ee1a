"""The layer base: declarations give the constructor, checks, read-only properties, dtype and device."""

from __future__ import annotations

import inspect
import threading

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def test_the_constructor_signature_comes_from_the_declarations():
    signature = inspect.signature(dlf.FullyConnectedLayer)
    positional = [p.name for p in signature.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert positional == ["OutputSize"]
    assert signature.parameters["BiasL2Factor"].default == 0.0
    assert signature.parameters["WeightsInitializer"].default == "glorot"
    assert {"Weights", "Bias", "Name", "device", "dtype", "generator"} <= set(signature.parameters)
    assert inspect.signature(dlf.fullyConnectedLayer) == signature
    assert dlf.FullyConnectedLayer.config_keys[0] == "Name"


@pytest.mark.parametrize(
    ("make", "name", "value"),
    [
        (lambda: dlf.fullyConnectedLayer(3), "OutputSize", 4),
        (lambda: dlf.fullyConnectedLayer(3), "NumInputs", 2),
        (lambda: dlf.fullyConnectedLayer(3), "InputNames", ("a",)),
        (lambda: dlf.additionLayer(2), "NumInputs", 3),
        (lambda: dlf.reluLayer(), "OutputNames", ("y",)),
    ],
)
def test_read_only_properties_refuse_assignment(make, name, value):
    layer = make()
    before = getattr(layer, name)
    with pytest.raises(DLFormatError, match=rf"You cannot set the read-only property '{name}'"):
        setattr(layer, name, value)
    assert getattr(layer, name) == before


def test_a_misspelled_property_is_refused_as_matlab_does():
    layer = dlf.positionEmbeddingLayer(4, 8)
    with pytest.raises(
        DLFormatError, match=r"Unrecognized property 'PositionOfset' for class PositionEmbeddingLayer"
    ):
        layer.PositionOfset = 5
    layer.PositionOffset = 5
    layer.note = "lower-case attributes stay free, as on any nn.Module"
    assert layer.PositionOffset == 5


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_lazy_layers_take_the_modules_dtype_not_the_inputs(dtype):
    layer = dlf.fullyConnectedLayer(2).to(dtype)
    layer(dlf.dlarray(torch.randn(3, 4), "CB"))  # float32 data
    assert layer.Weights.dtype == dtype and layer.Bias.dtype == dtype


def test_a_network_moved_before_initialize_creates_learnables_of_that_dtype():
    net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)], Initialize=False).double()
    dlf.initialize(net)
    assert net.Layers[1].Weights.dtype == torch.float64
    Y = dlf.predict(net, dlf.dlarray(torch.randn(3, 5), "CB"))  # single data, double learnables
    assert Y.dtype == torch.float32  # MATLAB: single wins over double


def test_double_data_flows_through_a_default_network_in_single():
    layers = [
        dlf.sequenceInputLayer(4),
        dlf.selfAttentionLayer(2, 4),
        dlf.layerNormalizationLayer(),
        dlf.fullyConnectedLayer(3),
        dlf.geluLayer(),
        dlf.softmaxLayer(),
    ]
    net = dlf.dlnetwork(layers)
    Y = dlf.predict(net, dlf.dlarray(torch.randn(4, 2, 5, dtype=torch.float64), "CBT"))
    assert Y.dtype == torch.float32 and dlf.dims(Y) == "CBT"


def test_lazy_first_use_from_many_threads_draws_once():
    for _ in range(20):
        layer = dlf.fullyConnectedLayer(3)
        X = dlf.dlarray(torch.randn(5, 2), "CB")
        results, errors = [], []

        def run(layer=layer, X=X, results=results, errors=errors):
            try:
                results.append(dlf.extractdata(layer(X, training=False)).clone())
            except Exception as error:  # pragma: no cover - the failure being tested for
                errors.append(error)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        expected = dlf.extractdata(layer(X, training=False))
        assert all(torch.equal(result, expected) for result in results)


def test_a_lazy_layer_refuses_a_state_dict_until_its_learnables_exist():
    trained = dlf.fullyConnectedLayer(2, InputSize=3)
    with pytest.raises(
        DLFormatError,
        match=r"cannot load a state_dict into FullyConnectedLayer: its learnables do not exist yet",
    ):
        dlf.fullyConnectedLayer(2).load_state_dict(trained.state_dict())


def test_a_zero_size_input_does_not_fix_a_lazy_size():
    layer = dlf.layerNormalizationLayer()
    with pytest.raises(DLFormatError, match=r"cannot take its NumChannels from an input of size 0"):
        layer(dlf.dlarray(torch.randn(0, 2), "CB"))
    assert layer.NumChannels == "auto"


def test_the_mode_is_per_call():
    layer = dlf.dropoutLayer(0.5)
    X = dlf.dlarray(torch.ones(200, 4), "CB")
    assert torch.equal(dlf.extractdata(layer(X, training=False)), torch.ones(200, 4))
    assert layer.training  # untouched
    assert (dlf.extractdata(layer(X)) == 0).any()  # train mode by default, as any nn.Module
    layer.eval()
    assert torch.equal(dlf.extractdata(layer(X)), torch.ones(200, 4))
    assert (dlf.extractdata(layer(X, training=True)) == 0).any()
