"""load_network: the real networks MATLAB saved (../shared/matlab-networks), as dlformat networks.

The expectations come from the files themselves (what MATLAB saved: vikas's classify result and
image, the weights as stored) and from docs/loading_networks.md (the saved forms per class and
version). Reference values are computed with NumPy from the saved arrays, never with the code
under test.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import load_network, loadmat

from . import numpy_reference as ref

pytest.importorskip("matio")

# file, variable, the dlformat network kind
LOADABLE = [
    ("vikas_net.mat", "net", dlf.SeriesNetwork),
    ("harkirat__convnet.mat", "convnet", dlf.SeriesNetwork),
    ("ccn__net.mat", "net", dlf.SeriesNetwork),
    ("objid__trainedNet.mat", "net", dlf.SeriesNetwork),
    ("gender__trainedNetwork_1.mat", "trainedNetwork_1", dlf.DAGNetwork),
    ("mdl_tf__transformer_demo.mat", "net", dlf.DAGNetwork),
    ("fuma28_speech_trainedNet.mat", "trainedNet", dlf.DLNetwork),
    ("agoro_gru_ph_model.mat", "GRUPHNet", dlf.SeriesNetwork),
    ("mdl_anom__Results_TrainedNetwork.mat", "net", dlf.SeriesNetwork),
    ("traffic__trainedNetwork.mat", "trainedNetwork", dlf.DLNetwork),
]


# -- the replacements the two files with unmappable layers need (custom_layers) ------------------
def _replacements():
    """examples/saved_network_replacements.py, which the CLI tests and the benchmark use too."""
    path = Path(__file__).resolve().parents[2] / "examples" / "saved_network_replacements.py"
    spec = importlib.util.spec_from_file_location("saved_network_replacements", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CUSTOM_LAYERS = {
    "pac48_imagecontrolBC_dlnet.mat": _replacements().PAC48,
    # a functionLayer for mimo's sigmoid here: a network file must refuse to hold its Python code
    "mimo__trainedNet.mat": {
        "sigmoidLayer": lambda p: dlf.functionLayer(lambda X: dlf.sigmoid(X), Name=p["Name"]),
        "sigmoidClassificationLayer": lambda p: dlf.regressionLayer(Name=p["Name"]),
    },
}


def _saved(networks: Path, file: str, variable: str):
    return loadmat(networks / file, [variable])[variable]


def _example(net, generator: torch.Generator) -> list[dlf.DLArray]:
    """One input per input layer, of its size and format, batch 2 (sequences of 5 steps)."""
    layers = {layer.Name: layer for layer in net.Layers}
    inputs = []
    for name in net.InputNames:
        layer = layers[name]
        steps = max(5, int(getattr(layer, "MinLength", 1)))
        size = [int(item) for item in np.atleast_1d(np.asarray(layer.InputSize)).ravel()]
        if isinstance(layer, dlf.layers.ImageInputLayer):
            inputs.append(dlf.dlarray(torch.rand(*size, 2, generator=generator) * 255, "SSCB"))
        elif len(size) == 1:
            inputs.append(dlf.dlarray(torch.randn(size[0], 2, steps, generator=generator), "CBT"))
        else:
            inputs.append(dlf.dlarray(torch.randn(*size, 2, steps, generator=generator), "SSCBT"))
    return inputs


@functools.cache
def _loaded(networks: Path, file: str):
    """A file loaded once for the tests that only read the network."""
    return load_network(networks / file)


def _module(net) -> torch.nn.Module:
    """The torch module that holds a network's parameters and buffers."""
    return net if isinstance(net, dlf.DLNetwork) else net.body


def _array(value) -> np.ndarray:
    """A learnable or state value (Parameter, tensor or dlarray) as a NumPy array."""
    return np.asarray(dlf.extractdata(value) if isinstance(value, dlf.DLArray) else value.detach())


def _predict(net, inputs):
    output = net.predict(*inputs)
    return output if isinstance(output, tuple) else (output,)


# -- the headline -----------------------------------------------------------------------


def test_vikas_classifies_as_matlab_did(networks):
    net = _loaded(networks, "vikas_net.mat")
    ws = loadmat(networks / "vikas_net.mat", ["I", "test_probs", "test_Pred"])
    image = dlf.dlarray(torch.as_tensor(ws["I"]).float(), "SSCB")
    labels, scores = dlf.classify(net, image)
    assert (
        list(labels) == ["apple_red_yellow_1"] == [str(item) for item in np.asarray(ws["test_Pred"]).ravel()]
    )
    assert dlf.dims(scores) == "CB"
    np.testing.assert_allclose(dlf.extractdata(scores).numpy().ravel(), ws["test_probs"].ravel(), atol=1e-3)
    assert list(net.Layers[-1].Classes) == ["apple_red_delicios_1", "apple_red_yellow_1", "apple_rotten_1"]
    assert "SeriesNetwork" in repr(net)


def test_vikas_public_properties(networks):
    """MATLAB's public values from the saved forms: FC weights as OutputSize×InputSize (the saved
    80×80×32×3 array flattened column-major), zerocenter Mean, batch-norm statistics, factors."""
    saved = _saved(networks, "vikas_net.mat", "net")
    net = _loaded(networks, "vikas_net.mat")
    layers = {layer.Name: layer for layer in net.Layers}
    assert [layer.Name for layer in net.Layers] == [layer.name for layer in saved.layers]
    stored = {layer.name: layer for layer in saved.layers}
    fc = stored["fc"].learnables["Weights"].value
    assert fc.shape == (80, 80, 32, 3)
    expected = np.stack([fc[..., k].flatten(order="F") for k in range(3)])  # row k: output k
    np.testing.assert_array_equal(_array(layers["fc"].Weights), expected)
    assert tuple(layers["fc"].Weights.shape) == (3, 204800)
    conv = stored["conv_1"]
    np.testing.assert_array_equal(_array(layers["conv_1"].Weights), conv.learnables["Weights"].value)
    assert layers["conv_1"].BiasL2Factor == 0 and layers["conv_1"].WeightLearnRateFactor == 1
    assert layers["conv_1"].PaddingMode == "same"
    bn = stored["batchnorm_2"]
    np.testing.assert_array_equal(
        _array(layers["batchnorm_2"].TrainedVariance).ravel(), bn.state["TrainedVariance"].ravel()
    )
    assert layers["imageinput"].Normalization == "zerocenter"
    np.testing.assert_allclose(
        _array(layers["imageinput"].Mean).ravel(),
        [151.1475, 111.42862, 99.24808],
        rtol=1e-6,
    )


def test_vikas_fc_weights_equal_matlabs_tensorflow_export(networks):
    """The dense kernel MATLAB's TensorFlow exporter wrote (inputs flattened channels-last,
    row-major) is the public OutputSize×InputSize matrix with its columns reordered."""
    h5py = pytest.importorskip("h5py")
    net = _loaded(networks, "vikas_net.mat")
    weights = _array(
        next(layer for layer in net.Layers if layer.Name == "fc").Weights
    )  # 3 × (80·80·32), H fastest
    with h5py.File(networks / "vikas_tf_export_weights.h5", "r") as file:
        dense = file["fc_/kernel"][()].reshape(204800, 3)  # stored flat, Keras's inputs × outputs
    # Keras: index ((h·80 + w)·32 + c); MATLAB: index (h + 80·w + 6400·c)
    reordered = weights.reshape(3, 32, 80, 80).transpose(0, 3, 2, 1).reshape(3, -1)
    np.testing.assert_array_equal(reordered.T, dense)


# -- every file ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("file", "variable", "kind"), LOADABLE, ids=[row[0] for row in LOADABLE])
def test_every_file_loads_and_predicts(networks, file, variable, kind):
    saved = _saved(networks, file, variable)
    net = _loaded(networks, file)
    assert type(net) is kind
    assert [layer.Name for layer in net.Layers] == [layer.name for layer in saved.layers]
    assert tuple(net.InputNames) == saved.input_names
    for layer in net.Layers:  # learnables as saved (up to MATLAB's dropped trailing singletons)
        (stored,) = [item for item in saved.layers if item.name == layer.Name]
        for field, learnable in stored.learnables.items():
            if field == "Weights" and stored.matlab_class.endswith("FullyConnectedLayer"):
                continue  # reshaped: test_vikas_public_properties
            np.testing.assert_array_equal(
                _array(getattr(layer, field)).ravel(order="F"), learnable.value.ravel(order="F")
            )
    outputs = _predict(net, _example(net, torch.Generator().manual_seed(0)))
    for output in outputs:
        assert isinstance(output, dlf.DLArray)
        assert torch.isfinite(dlf.extractdata(output)).all()


@pytest.mark.parametrize(("file", "variable", "kind"), LOADABLE, ids=[row[0] for row in LOADABLE])
def test_state_dict_round_trip(networks, file, variable, kind):
    """load_network → torch.save(state_dict) → a fresh load (its values changed first, so that
    only the saved ones can make it agree) takes it → identical outputs."""
    net = _loaded(networks, file)
    buffer = io.BytesIO()
    torch.save(_module(net).state_dict(), buffer)
    fresh = load_network(networks / file)
    _module(fresh).load_state_dict(
        {
            key: value * 0.5 if value.is_floating_point() else value
            for key, value in _module(fresh).state_dict().items()
        }
    )
    buffer.seek(0)
    _module(fresh).load_state_dict(torch.load(buffer, weights_only=True))
    inputs = _example(net, torch.Generator().manual_seed(1))
    for ours, theirs in zip(_predict(net, inputs), _predict(fresh, inputs), strict=True):
        torch.testing.assert_close(dlf.extractdata(ours), dlf.extractdata(theirs), rtol=0, atol=0)


@pytest.mark.parametrize("file", [row[0] for row in LOADABLE] + list(CUSTOM_LAYERS))
def test_save_learnables_round_trip(networks, file, tmp_path):
    """save_learnables of a loaded network (a SeriesNetwork or DAGNetwork as it is, output layers
    included) → load_learnables into a fresh load whose learnables and State were changed first →
    identical learnables, State and outputs; no row missing or unexpected."""
    from dlformat.io import load_learnables, save_learnables

    custom = CUSTOM_LAYERS.get(file)
    net = load_network(networks / file, custom_layers=custom)
    save_learnables(net, tmp_path / "learnables.mat")
    fresh = load_network(networks / file, custom_layers=custom)
    values = [getattr(layer, name) for layer in fresh.Layers for name in (*layer.learnables, *layer.State)]
    assert values  # every real network has learnables
    with torch.no_grad():
        for value in values:
            (dlf.extractdata(value) if isinstance(value, dlf.DLArray) else value).add_(1.0)
    assert load_learnables(fresh, tmp_path / "learnables.mat") == ([], [])
    for ours, theirs in zip(net.Layers, fresh.Layers, strict=True):
        for name in (*ours.learnables, *ours.State):
            np.testing.assert_array_equal(_array(getattr(theirs, name)), _array(getattr(ours, name)))
    inputs = _example(net, torch.Generator().manual_seed(5))
    for ours, theirs in zip(_predict(net, inputs), _predict(fresh, inputs), strict=True):
        torch.testing.assert_close(dlf.extractdata(ours), dlf.extractdata(theirs), rtol=0, atol=0)


@pytest.mark.parametrize(("file", "variable", "kind"), LOADABLE, ids=[row[0] for row in LOADABLE])
def test_network_file_round_trip(networks, file, variable, kind, tmp_path):
    """`dlformat convert`'s file: plain data (weights_only), rebuilt by load_network without mat-io
    into the same kind, layer classes, names and connections, with identical outputs."""
    from dlformat.io._network_file import write_network_file

    net = _loaded(networks, file)
    write_network_file(net, tmp_path / "net.pt")
    data = torch.load(tmp_path / "net.pt", weights_only=True)
    assert data["format"] == "dlformat-network" and data["kind"] in (kind.__name__, "dlnetwork")
    back = load_network(tmp_path / "net.pt")
    assert type(back) is kind
    assert [(type(a), a.Name) for a in back.Layers] == [(type(b), b.Name) for b in net.Layers]
    assert list(back.Connections) == list(net.Connections)
    inputs = _example(net, torch.Generator().manual_seed(4))
    for ours, theirs in zip(_predict(net, inputs), _predict(back, inputs), strict=True):
        assert dlf.dims(ours) == dlf.dims(theirs)
        torch.testing.assert_close(dlf.extractdata(ours), dlf.extractdata(theirs), rtol=0, atol=0)


@pytest.fixture
def vikas_file(networks, tmp_path) -> Path:
    """vikas_net.mat's network written as a network file (before mat-io is taken away)."""
    from dlformat.io._network_file import write_network_file

    write_network_file(_loaded(networks, "vikas_net.mat"), tmp_path / "net.pt")
    return tmp_path / "net.pt"


def test_network_file_loads_without_matio(networks, vikas_file, without_matio):
    back = load_network(vikas_file)
    assert list(back.Layers[-1].Classes) == list(_loaded(networks, "vikas_net.mat").Layers[-1].Classes)


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"not torch", r"cannot read .*net\.pt"), (None, r"is not a network file written by dlformat convert")],
)
def test_network_file_errors(tmp_path, content, message):
    if content is None:
        torch.save({"format": "something else"}, tmp_path / "net.pt")
    else:
        (tmp_path / "net.pt").write_bytes(content)
    with pytest.raises(DLFormatError, match=message):
        load_network(tmp_path / "net.pt")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda data: data["layers"][1]["config"].update(Bogus=1),
            r"damaged network file: Convolution2DLayer has no option 'Bogus'",
        ),
        (lambda data: data["state_dict"].popitem(), r"damaged network file: .*state_dict"),
        (
            lambda data: data["layers"][0].update({"class": "os"}),
            r"'os' is not one of dlformat's layer classes",
        ),
    ],
)
def test_an_edited_network_file_is_refused(vikas_file, edit, message):
    data = torch.load(vikas_file, weights_only=True)
    edit(data)
    torch.save(data, vikas_file)
    with pytest.raises(DLFormatError, match=message):
        load_network(vikas_file)


HUGE = (
    "x" * 10**7
)  # issue 24 item 8: a 200 MiB string gave a 200 MiB message; the bound does not depend on it


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda data: data["layers"][0].update({"class": HUGE}),
            r"'x+\.\.\.x+' is not one of dlformat's layer classes",
        ),
        (
            lambda data: data["layers"][0]["config"].update(Name=HUGE),
            r"(?s)damaged network file: .*characters in all",
        ),
        (lambda data: data.update(version=HUGE), r"network file version 'x+\.\.\.x+', kind"),
        (
            lambda data: data["layers"][0].update({"class": "os"}),
            r"'os' is not one of dlformat's layer classes",
        ),
        (lambda data: data["layers"][0].pop("config"), r"damaged network file: it has no entry 'config'"),
    ],
    ids=["huge class", "huge name", "huge version", "not a layer class", "missing entry"],
)
def test_network_file_errors_name_the_path_once_and_are_bounded(vikas_file, edit, message):
    data = torch.load(vikas_file, weights_only=True)
    edit(data)
    torch.save(data, vikas_file)
    with pytest.raises(DLFormatError, match=message) as raised:
        load_network(vikas_file)
    text = str(raised.value)
    assert len(text) < 3000 and text.count(str(vikas_file)) == 1


def test_network_file_refuses_python_functions(networks, tmp_path):
    from dlformat.io._network_file import write_network_file

    net = load_network(networks / "mimo__trainedNet.mat", custom_layers=CUSTOM_LAYERS["mimo__trainedNet.mat"])
    with pytest.raises(DLFormatError, match=r"layer 'layer' is a function, which a network file cannot hold"):
        write_network_file(net, tmp_path / "net.pt")


# -- what cannot be mapped ----------------------------------------------------------------------


def test_function_layers_are_listed_then_replaced(networks):
    path = networks / "pac48_imagecontrolBC_dlnet.mat"
    with pytest.raises(
        DLFormatError,
        match=r"(?s)2 layer\(s\).*'layer_2' \(class nnet\.cnn\.layer\.FunctionLayer\)"
        r".*@\(W\)W\.\^2\./\(sum\(W\.\^2,1\)\+\.01\).*'layer_3'.*@\(W\)\[XFlat\*W;YFlat\*W\]"
        r".*custom_layers=\{'FunctionLayer': factory\}",
    ):
        load_network(path)

    net = load_network(path, custom_layers=CUSTOM_LAYERS[path.name])
    assert isinstance(net, dlf.DLNetwork) and net.Initialized
    (output,) = _predict(net, _example(net, torch.Generator().manual_seed(2)))
    assert dlf.dims(output) == "CB" and tuple(output.shape) == (2, 2)


def test_user_classdef_layers_are_listed_then_replaced(networks):
    path = networks / "mimo__trainedNet.mat"
    with pytest.raises(
        DLFormatError,
        match=r"(?s)'layer' \(class sigmoidLayer\).*'regressionoutput' "
        r"\(class sigmoidClassificationLayer\).*ResponseNames",
    ):
        load_network(path)
    given = {}

    def sigmoid(properties):
        given.update(properties)
        return dlf.functionLayer(lambda X: dlf.sigmoid(X), Name=properties["Name"])

    net = load_network(
        path,
        custom_layers={
            "sigmoidLayer": sigmoid,
            "sigmoidClassificationLayer": lambda p: dlf.regressionLayer(Name=p["Name"]),
        },
    )
    assert given["Name"] == "layer"
    (output,) = _predict(net, _example(net, torch.Generator().manual_seed(3)))
    values = dlf.extractdata(output)
    assert ((values > 0) & (values < 1)).all()  # after the sigmoid


def test_a_factory_must_return_a_layer(networks):
    with pytest.raises(
        DLFormatError, match=r"custom_layers\['sigmoidLayer'\] returned int for layer 'layer'"
    ):
        load_network(networks / "mimo__trainedNet.mat", custom_layers={"sigmoidLayer": lambda p: 3})


# -- choosing the variable ----------------------------------------------------------------------


def test_variable_picks_and_other_variables_are_not_networks(networks):
    net = load_network(networks / "vikas_net.mat", variable="net")
    assert isinstance(net, dlf.SeriesNetwork)  # the layer array and options beside it do not count
    with pytest.raises(DLFormatError, match=r"variable 'I' .* is not a network"):
        load_network(networks / "vikas_net.mat", variable="I")


def test_several_networks_need_a_variable(networks, tmp_path, monkeypatch):
    from dlformat.io import _network, _scan

    variables = [
        _scan.Variable("a", "SeriesNetwork", (1, 1), True),
        _scan.Variable("b", "dlnetwork", (1, 1), True),
    ]
    monkeypatch.setattr("dlformat.io._open", lambda path: (path, _scan.Scan(5, variables), 0))
    with pytest.raises(
        DLFormatError, match=r"saves 2 networks: a \(SeriesNetwork\), b \(dlnetwork\); pick one"
    ):
        _network.load_network(tmp_path / "two.mat")


def test_a_file_without_a_network(tmp_path):
    from dlformat.io import savemat

    savemat(tmp_path / "plain.mat", {"x": np.ones((2, 2))})
    with pytest.raises(
        DLFormatError,
        match=r"saves no SeriesNetwork, DAGNetwork, dlnetwork, LayerGraph or Layer array; "
        r"its variables: x \(double\)",
    ):
        load_network(tmp_path / "plain.mat")


# -- unhandled saved values are errors naming layer, class and field ----------------------------


def test_unhandled_values_name_layer_class_and_field(networks):
    from dataclasses import replace

    from dlformat.io import _network

    saved = _saved(networks, "vikas_net.mat", "net")
    conv = saved.layers[1]
    odd = replace(conv, properties={**conv.properties, "PaddingMode": "causal"})
    with pytest.raises(
        DLFormatError,
        match=r"layer 'conv_1' \(class nnet\.cnn\.layer\.Convolution2DLayer, saveobj "
        r"version 8\), field 'PaddingMode': the value 'causal' is not handled",
    ):
        _network.build(replace(saved, layers=(saved.layers[0], odd, *saved.layers[2:])))
    unknown = replace(conv, matlab_class="nnet.cnn.layer.SomethingNewLayer")
    with pytest.raises(DLFormatError, match=r"'conv_1' \(class nnet\.cnn\.layer\.SomethingNewLayer\)"):
        _network.build(replace(saved, layers=(saved.layers[0], unknown, *saved.layers[2:])))
    missing = replace(conv, properties={k: v for k, v in conv.properties.items() if k != "Stride"})
    with pytest.raises(DLFormatError, match=r"layer 'conv_1' .*field 'Stride': the file does not save it"):
        _network.build(replace(saved, layers=(saved.layers[0], missing, *saved.layers[2:])))


def test_without_matio_says_how_to_install(networks, without_matio):
    with pytest.raises(DLFormatError, match=r"mat-io.*pip install"):
        load_network(networks / "vikas_net.mat")


# -- an independent float64 NumPy forward pass from the saved arrays ----------------------------


def _float64(layer, field: str) -> np.ndarray:
    """A saved learnable (or state) as float64, as the file holds it."""
    value = layer.learnables[field].value if field in layer.learnables else layer.state[field]
    return np.asarray(value, dtype=np.float64)


def test_harkirat_2017_forms_match_a_numpy_forward_pass(networks):
    """The 2017 forms (per-pixel zerocenter Mean, version 2 Padding [2 2], FC weights stored
    12×10×3×40) against a float64 NumPy forward pass of the saved arrays."""
    saved = {layer.name: layer for layer in _saved(networks, "harkirat__convnet.mat", "convnet").layers}
    net = _loaded(networks, "harkirat__convnet.mat")
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, size=(112, 92, 1, 2))
    mean = saved["imageinput"].properties["Normalization"]["AverageImage"].astype(np.float64)
    conv = saved["conv"]
    y = ref.conv2d(
        x - mean.reshape(112, 92, 1, 1),
        _float64(conv, "Weights"),
        _float64(conv, "Bias"),
        stride=(3, 3),
        padding=(2, 2, 2, 2),
    )
    y = ref.maxpool2d(ref.relu(y), (3, 3), (3, 3))  # 12×10×3×N
    fc = saved["fc"]
    scores = ref.softmax(ref.fully_connected(y, _float64(fc, "Weights"), _float64(fc, "Bias")))
    ours = net.predict(dlf.dlarray(torch.as_tensor(x, dtype=torch.float32), "SSCB"))
    assert dlf.dims(ours) == "CB"
    np.testing.assert_allclose(dlf.extractdata(ours).numpy(), scores, atol=1e-5)


def _sequence_output(net, x: np.ndarray) -> np.ndarray:
    ours = net.predict(dlf.dlarray(torch.as_tensor(x, dtype=torch.float32), "CBT"))
    assert dlf.dims(ours) == "CBT"
    return dlf.extractdata(ours).numpy()


def test_gru_network_matches_a_numpy_forward_pass(networks):
    """agoro (2025): four GRU layers (after-multiplication reset gate, 3*H bias) with dropout
    between (nothing at prediction), a fully connected layer per time step."""
    layers = _saved(networks, "agoro_gru_ph_model.mat", "GRUPHNet").layers
    x = np.random.default_rng(1).standard_normal((1, 3, 20))
    y = x
    for layer in layers:
        kind = _network_class(layer)
        if kind == "GRULayer":
            mode = layer.properties["ResetGateMode"]
            W, R, b = (_float64(layer, field) for field in ("InputWeights", "RecurrentWeights", "Bias"))
            y = ref.gru(y, _float64(layer, "HiddenState"), W, R, b, mode)
        elif kind == "FullyConnectedLayer":
            y = ref.fully_connected(y, _float64(layer, "Weights"), _float64(layer, "Bias"))
    assert y.shape == (1, 3, 20)
    np.testing.assert_allclose(_sequence_output(_loaded(networks, "agoro_gru_ph_model.mat"), x), y, atol=1e-4)


def test_bilstm_network_matches_a_numpy_forward_pass(networks):
    """mdl_anom (MathWorks example, 2021): three BiLSTM layers, each followed by a ReLU, and a
    fully connected layer per time step."""
    layers = _saved(networks, "mdl_anom__Results_TrainedNetwork.mat", "net").layers
    x = np.random.default_rng(2).standard_normal((1, 3, 16))
    y = x
    for layer in layers:
        kind = _network_class(layer)
        if kind == "BiLSTMLayer":
            W, R, b = (_float64(layer, field) for field in ("InputWeights", "RecurrentWeights", "Bias"))
            y = ref.bilstm(y, _float64(layer, "HiddenState"), _float64(layer, "CellState"), W, R, b)
        elif kind == "ReLULayer":
            y = ref.relu(y)
        elif kind == "FullyConnectedLayer":
            y = ref.fully_connected(y, _float64(layer, "Weights"), _float64(layer, "Bias"))
    assert y.shape == (1, 3, 16)
    net = _loaded(networks, "mdl_anom__Results_TrainedNetwork.mat")
    np.testing.assert_allclose(_sequence_output(net, x), y, atol=1e-4)


def test_dlnetwork_cnn_matches_a_numpy_forward_pass(networks):
    """fuma28 (dlnetwork, 2024): zerocenter input, five convolutions with batch normalization,
    'same' max pooling with the saved asymmetric PaddingSize, a 13×1 pooling, dropout (nothing at
    prediction), FC weights stored 1×4×48×8, softmax; the saved layers run in their saved order,
    which is this network's order (every connection joins a layer to the next)."""
    saved = _saved(networks, "fuma28_speech_trainedNet.mat", "trainedNet")
    names = [layer.name for layer in saved.layers]
    assert sorted(saved.connections) == sorted(itertools.pairwise(names))
    x = np.random.default_rng(3).standard_normal((98, 32, 1, 2)) * 4
    y = x
    for layer in saved.layers:
        kind, p = _network_class(layer), layer.properties
        if kind == "ImageInputLayer":
            assert p["Normalization"]["Type"] == "zerocenter"
            y = y - np.asarray(p["Normalization"]["AverageImage"], dtype=np.float64).reshape(1, 1, -1, 1)
        elif kind == "Convolution2DLayer":
            assert np.asarray(p["DilationFactor"]).ravel().tolist() == [1, 1]
            y = ref.conv2d(
                y,
                _float64(layer, "Weights"),
                _float64(layer, "Bias"),
                _ints(p["Stride"]),
                _ints(p["PaddingSize"]),
            )
        elif kind == "BatchNormalizationLayer":
            y = ref.batchnorm(
                y,
                _float64(layer, "TrainedMean"),
                _float64(layer, "TrainedVariance"),
                _float64(layer, "Scale"),
                _float64(layer, "Offset"),
                float(np.asarray(p["Epsilon"]).ravel()[0]),
            )
        elif kind == "ReLULayer":
            y = ref.relu(y)
        elif kind == "MaxPooling2DLayer":
            y = ref.maxpool2d(y, _ints(p["PoolSize"]), _ints(p["Stride"]), _ints(p["PaddingSize"]))
        elif kind == "FullyConnectedLayer":
            y = ref.fully_connected(y, _float64(layer, "Weights"), _float64(layer, "Bias"))
        elif kind == "SoftmaxLayer":
            y = ref.softmax(y)
        else:
            assert kind == "DropoutLayer"
    assert y.shape == (8, 2)
    net = _loaded(networks, "fuma28_speech_trainedNet.mat")
    ours = net.predict(dlf.dlarray(torch.as_tensor(x, dtype=torch.float32), "SSCB"))
    assert dlf.dims(ours) == "CB"
    np.testing.assert_allclose(dlf.extractdata(ours).numpy(), y, atol=1e-4)


@pytest.mark.parametrize(
    ("file", "variable", "name"),
    [
        ("mdl_anom__Results_TrainedNetwork.mat", "net", "bilstm2"),  # BiLSTMLayer saveobj version 3
        ("traffic__trainedNetwork.mat", "trainedNetwork", "bilstm1"),  # version 4 (HasStateInputs/Outputs)
    ],
)
def test_lstm_mapper_on_a_constructed_saved_form(networks, file, variable, name):
    """No real file saves an lstmLayer. Its saveobj struct is assumed to be the BiLSTM one with
    one direction (4*H rows, H×1 states): the recurrent classes' saved fields are MATLAB's public
    property names (ReturnSequence for OutputMode), and GRULayer v2 and BiLSTMLayer v3/v4 save the
    same set apart from their own properties (ResetGateMode; CellState); lstmLayer's public
    properties are bilstmLayer's. The struct is built from a real BiLSTM's saved struct (its
    forward half), decoded as a file's would be (_mcos), mapped, and run against NumPy."""
    from dlformat.io import _mcos
    from dlformat.io._network import mapped

    (saved,) = [layer for layer in _saved(networks, file, variable).layers if layer.name == name]
    H = int(np.asarray(saved.properties["NumHiddenUnits"]).ravel()[0])
    struct = {"Version": np.array([[saved.version]], dtype=np.float64)}
    for field, value in saved.properties.items():
        if isinstance(value, _mcos.SavedLearnable):
            struct[field] = {
                "Value": value.value[: 4 * H],
                "LearnRateFactor": value.learn_rate_factor,
                "L2Factor": value.l2_factor,
                "Initializer": value.initializer,
            }
        elif field in ("HiddenState", "CellState"):
            struct[field] = {**value, "Value": np.asarray(value["Value"])[:H]}
        elif field in ("InitialHiddenState", "InitialCellState"):
            struct[field] = np.asarray(value)[:H]
        else:
            struct[field] = value
    layer = _mcos._layer(_mcos.MatlabObject("nnet.cnn.layer.LSTMLayer", {"any": struct}), "constructed")
    assert layer.version == saved.version and set(layer.state) == {"HiddenState", "CellState"}
    lstm = mapped(layer)
    assert isinstance(lstm, dlf.layers.LSTMLayer) and lstm.Name == name
    C = int(np.asarray(saved.properties["InputSize"]).ravel()[0])
    assert (lstm.NumHiddenUnits, lstm.OutputMode, lstm.InputSize) == (H, "sequence", C)
    x = np.random.default_rng(6).standard_normal((C, 2, 7))
    W, R, b = (_float64(layer, field) for field in ("InputWeights", "RecurrentWeights", "Bias"))
    expected = ref.lstm(x, _float64(layer, "HiddenState"), _float64(layer, "CellState"), W, R, b)
    ours = lstm(dlf.dlarray(torch.as_tensor(x, dtype=torch.float32), "CBT"))
    np.testing.assert_allclose(dlf.extractdata(ours).detach().numpy(), expected, atol=1e-5)
    assert lstm.InputWeightsLearnRateFactor == float(
        np.asarray(struct["InputWeights"]["LearnRateFactor"]).ravel()[0]
    )


def _network_class(layer) -> str:
    return layer.matlab_class.rsplit(".", 1)[-1]


def _ints(value) -> list[int]:
    return [int(item) for item in np.asarray(value).ravel()]


@pytest.mark.parametrize(("name", "size"), [("maxpool_1", (98, 32, 4)), ("maxpool_2", (49, 16, 4))])
def test_same_padding_resolves_to_the_saved_sizes(networks, name, size):
    """fuma28 saves PaddingMode 'same' with the sizes MATLAB resolved for its input ([0 1 0 1],
    [1 1 0 1]); the loaded layer's "same" pads the same way on that input."""
    saved = next(
        layer
        for layer in _saved(networks, "fuma28_speech_trainedNet.mat", "trainedNet").layers
        if layer.name == name
    )
    top, bottom, left, right = (int(item) for item in saved.properties["PaddingSize"].ravel())
    net = _loaded(networks, "fuma28_speech_trainedNet.mat")
    layer = next(layer for layer in net.Layers if layer.Name == name)
    x = np.random.default_rng(1).standard_normal((*size, 2))
    padded = np.pad(x, ((top, bottom), (left, right), (0, 0), (0, 0)), constant_values=-np.inf)
    expected = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(0, 1))[::2, ::2].max(
        axis=(-2, -1)
    )
    ours = layer.predict(dlf.dlarray(torch.as_tensor(x, dtype=torch.float32), "SSCB"))
    np.testing.assert_allclose(dlf.extractdata(ours).numpy(), expected, rtol=1e-6)


def test_an_unhandled_sequence_normalization_is_named(networks):
    from dataclasses import replace

    from dlformat.io import _network

    saved = _saved(networks, "agoro_gru_ph_model.mat", "GRUPHNet")
    first = saved.layers[0]
    odd = replace(first, properties={**first.properties, "Normalization": np.ones((2, 2))})
    with pytest.raises(
        DLFormatError,
        match=r"layer 'InputLayer' \(class nnet\.cnn\.layer\.SequenceInputLayer, "
        r"saveobj version 5\), field 'Normalization': the saved normalization",
    ):
        _network.build(replace(saved, layers=(odd, *saved.layers[1:])))
