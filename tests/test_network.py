"""dlnetwork: building graphs MATLAB's way, running them, errors that name the layers."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import load_learnables, save_learnables

from .conftest import DEVICES


def doc_example(**attention):
    """The example of MATLAB's positionEmbeddingLayer page, in the same words."""
    layers = [
        dlf.sequenceInputLayer(1, Name="input"),
        dlf.wordEmbeddingLayer(64, 128, Name="wordemb"),
        dlf.positionEmbeddingLayer(64, 128, Name="posemb"),
        dlf.additionLayer(2, Name="add"),
        dlf.selfAttentionLayer(4, 256, AttentionMask="causal", **attention),
        dlf.fullyConnectedLayer(128),
        dlf.softmaxLayer(),
    ]
    net = dlf.dlnetwork()
    net = dlf.addLayers(net, layers)
    return dlf.connectLayers(net, "wordemb", "add/in2")


def tokens(batch=8, length=20, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return dlf.dlarray(torch.randint(1, 129, (1, batch, length), generator=generator).float(), "CBT")


def test_the_doc_example_reads_like_matlab_and_has_matlabs_graph():
    net = doc_example()
    assert [layer.Name for layer in net.Layers] == [
        "input",
        "wordemb",
        "posemb",
        "add",
        "selfattention",
        "fc",
        "softmax",
    ]
    assert list(net.Connections) == [
        ("input", "wordemb"), ("wordemb", "posemb"), ("posemb", "add/in1"), ("add", "selfattention"),
        ("selfattention", "fc"), ("fc", "softmax"), ("wordemb", "add/in2"),
    ]  # fmt: skip
    assert net.Connections.Source[-1] == "wordemb" and net.Connections.Destination[-1] == "add/in2"
    assert (net.InputNames, net.OutputNames) == (("input",), ("softmax",))
    assert not net.Initialized
    dlf.initialize(net)
    assert net.Initialized
    assert [(row[0], row[1], tuple(row[2].shape)) for row in net.Learnables][:3] == [
        ("wordemb", "Weights", (64, 128)), ("posemb", "Weights", (64, 128)), ("selfattention", "QueryWeights", (256, 64)),
    ]  # fmt: skip
    assert len(net.Learnables) == 12


@pytest.mark.parametrize("device", DEVICES)
def test_forward_and_backward_carry_formats_and_reach_every_learnable(device):
    torch.manual_seed(0)
    net = dlf.initialize(doc_example()).to(device)
    X = tokens().to(device)
    Y = dlf.forward(net, X)
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (128, 8, 20) and Y.device.type == device
    torch.testing.assert_close(dlf.stripdims(Y).sum(0), torch.ones(8, 20, device=device))
    dlf.stripdims(Y)[3].log().sum().backward()
    for layer, parameter, value in net.Learnables:
        assert value.grad is not None and value.grad.abs().sum() > 0, (layer, parameter)


def test_the_network_computes_what_its_layers_compute_in_order():
    torch.manual_seed(0)
    net = dlf.initialize(doc_example())
    X = tokens(batch=2, length=5)
    layers = {layer.Name: layer for layer in net.Layers}
    net.eval()
    embedded = layers["wordemb"](layers["input"](X))
    expected = layers["softmax"](
        layers["fc"](layers["selfattention"](layers["add"](layers["posemb"](embedded), embedded)))
    )
    torch.testing.assert_close(dlf.stripdims(dlf.predict(net, X)), dlf.stripdims(expected), rtol=0, atol=0)


def test_forward_trains_predict_infers_and_the_mode_is_restored():
    net = dlf.dlnetwork([dlf.featureInputLayer(50), dlf.dropoutLayer(0.5)])
    X = dlf.dlarray(torch.ones(50, 40), "CB")
    assert torch.equal(dlf.stripdims(dlf.predict(net, X)), torch.ones(50, 40))
    assert (dlf.stripdims(dlf.forward(net, X)) == 0).any()
    net.eval()
    dlf.forward(net, X)
    assert not net.training


def test_automatic_names_follow_matlabs_pattern():
    net = dlf.dlnetwork(
        [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(4), dlf.reluLayer(), dlf.fullyConnectedLayer(2)]
    )
    # MATLAB: one unnamed layer of a kind keeps the bare prefix; several are all numbered _1 .. _N
    assert [layer.Name for layer in net.Layers] == ["featureinput", "fc_1", "relu", "fc_2"]
    dlf.addLayers(net, dlf.fullyConnectedLayer(2))
    dlf.addLayers(net, dlf.fullyConnectedLayer(2))  # "fc" is now taken: the next free number
    assert [layer.Name for layer in net.Layers] == ["featureinput", "fc_1", "relu", "fc_2", "fc", "fc_3"]
    assert net.OutputNames == ("fc_2", "fc", "fc_3") and net.InputNames == ("featureinput", "fc", "fc_3")


def test_named_layers_do_not_count_in_automatic_numbering():
    # pac48_imagecontrolBC_dlnet.mat (MATLAB R2022b): a conv named "LayersIn" and four unnamed convs
    # became conv_1 .. conv_4
    layers = [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(3, Name="LayersIn")]
    layers += [dlf.fullyConnectedLayer(3) for _ in range(4)]
    net = dlf.dlnetwork(layers)
    assert [layer.Name for layer in net.Layers][1:] == ["LayersIn", "fc_1", "fc_2", "fc_3", "fc_4"]


def test_repeated_given_names_are_made_unique_with_a_warning():
    # MathWorks' diffusion example builds one array with several layers named "flatten"
    with pytest.warns(UserWarning, match=r"layer name\(s\) 'flatten' repeat among the added layers"):
        net = dlf.dlnetwork(
            [dlf.featureInputLayer(3), dlf.reluLayer(Name="flatten"), dlf.reluLayer(Name="flatten")]
        )
    assert net.OutputNames == ("flatten_2",) and net.Layers[1].Name == "flatten_1"


def test_multiple_inputs_and_outputs_by_name():
    net = dlf.dlnetwork(Initialize=False)
    dlf.addLayers(net, [dlf.featureInputLayer(3, Name="a"), dlf.fullyConnectedLayer(2, Name="fa")])
    dlf.addLayers(
        net, [dlf.featureInputLayer(2, Name="b"), dlf.additionLayer(2, Name="add"), dlf.reluLayer(Name="r")]
    )
    dlf.connectLayers(net, "fa", "add/in2")
    assert net.InputNames == ("a", "b") and net.OutputNames == ("r",)
    dlf.initialize(net)
    A, B = dlf.dlarray(torch.randn(3, 4), "CB"), dlf.dlarray(torch.randn(2, 4), "CB")
    both = dlf.predict(net, A, B, Outputs=["fa", "r"])
    fc = net.Layers[1]
    expected_fa = fc.Weights @ dlf.stripdims(A) + fc.Bias
    torch.testing.assert_close(dlf.stripdims(both[0]), expected_fa)
    torch.testing.assert_close(dlf.stripdims(both[1]), torch.relu(dlf.stripdims(B) + expected_fa))
    assert dlf.dims(dlf.predict(net, A, B, Outputs="fa")) == "CB"


def test_unconnected_inputs_become_network_inputs():
    net = dlf.dlnetwork([dlf.additionLayer(2, Name="add"), dlf.reluLayer(Name="r")])
    assert net.InputNames == ("add/in1", "add/in2")
    X = dlf.dlarray(-torch.ones(2, 3), "CB")
    assert torch.equal(dlf.stripdims(dlf.predict(net, X, X * -3)), torch.full((2, 3), 2.0))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda net: dlf.connectLayers(net, "nope", "add/in2"),
            r"the network has no layer 'nope'; its layers are: 'input', 'wordemb'",
        ),
        (
            lambda net: dlf.connectLayers(net, "wordemb", "add/in3"),
            r"layer 'add' has no input 'in3'; its inputs are: in1, in2",
        ),
        (
            lambda net: dlf.connectLayers(net, "wordemb", "add"),
            r"layer 'add' has several inputs; name one of 'add/in1', 'add/in2'",
        ),
        (
            lambda net: dlf.connectLayers(net, "input", "add/in2"),
            r"input 'add/in2' is already connected to 'wordemb'",
        ),
        (
            lambda net: dlf.connectLayers(net, "softmax", "input"),
            r"layer 'input' \(SequenceInputLayer\) has no inputs to connect to",
        ),
        (
            lambda net: dlf.disconnectLayers(net, "posemb", "add/in2"),
            r"the network has no connection from 'posemb' to 'add/in2'",
        ),
        (lambda net: dlf.removeLayers(net, ["fc", "gone"]), r"the network has no layer 'gone'"),
        (
            lambda net: dlf.addLayers(net, dlf.reluLayer(Name="fc")),
            r"layer name 'fc' is already in the network; names must be unique",
        ),
        (
            lambda net: dlf.addLayers(net, dlf.reluLayer(Name="a/b")),
            r"layer name 'a/b' cannot contain '/' \(it separates layer and port",
        ),
        (
            lambda net: dlf.addLayers(net, [dlf.reluLayer(), dlf.featureInputLayer(2)]),
            r"is an input layer and cannot follow 'relu'",
        ),
        (
            lambda net: dlf.addLayers(net, [torch.nn.ReLU()]),
            r"layers must be a dlformat layer or a non-empty list of them",
        ),
    ],
)
def test_graph_errors_name_the_layers_and_change_nothing(build, message):
    net = doc_example()
    before = (list(net.Connections), [layer.Name for layer in net.Layers])
    with pytest.raises(DLFormatError, match=message):
        build(net)
    assert (list(net.Connections), [layer.Name for layer in net.Layers]) == before


def test_a_connection_that_closes_a_cycle_is_refused_naming_it():
    net = dlf.dlnetwork([dlf.additionLayer(2, Name="add"), dlf.reluLayer(Name="a"), dlf.reluLayer(Name="b")])
    with pytest.raises(
        DLFormatError, match=r"connecting 'b' to 'add/in2' would close the cycle 'add' -> 'a' -> 'b' -> 'add'"
    ):
        dlf.connectLayers(net, "b", "add/in2")


def test_removing_a_layer_removes_its_connections():
    net = doc_example()
    dlf.removeLayers(net, "posemb")
    assert ("wordemb", "posemb") not in list(net.Connections)
    assert net.InputNames == ("input", "add/in1")


def test_a_dangling_input_is_named_when_running_or_initializing():
    net = doc_example()
    dlf.disconnectLayers(net, "wordemb", "add/in2")
    with pytest.raises(
        DLFormatError, match=r"input 'add/in2' has no input layer to give its size; pass example data"
    ):
        dlf.initialize(net)
    with pytest.raises(DLFormatError, match=r"the network has 2 input\(s\) \(input, add/in2\); got 1"):
        dlf.forward(net, tokens())


def test_mismatched_formats_at_an_addition_name_both_source_layers():
    net = dlf.dlnetwork(Initialize=False)
    dlf.addLayers(net, [dlf.sequenceInputLayer(3, Name="seq"), dlf.additionLayer(2, Name="add")])
    dlf.addLayers(net, dlf.featureInputLayer(3, Name="feat"))
    dlf.connectLayers(net, "feat", "add/in2")
    with pytest.raises(
        DLFormatError,
        match=r"layer 'add' \(in1 from 'seq', in2 from 'feat'\): AdditionLayer 'add' needs inputs of one format; got in1 \"CBT\", in2 \"CB\"",
    ):
        dlf.initialize(net)


def test_learnables_round_trip_through_a_mat_file(tmp_path):
    torch.manual_seed(0)
    net = dlf.initialize(doc_example())
    save_learnables(net, tmp_path / "net.mat")
    torch.manual_seed(1)
    fresh = dlf.initialize(doc_example())
    X = tokens()
    assert not torch.equal(dlf.stripdims(dlf.predict(fresh, X)), dlf.stripdims(dlf.predict(net, X)))
    result = load_learnables(fresh, tmp_path / "net.mat")
    assert not result.missing and not result.unexpected
    torch.testing.assert_close(
        dlf.stripdims(dlf.predict(fresh, X)), dlf.stripdims(dlf.predict(net, X)), rtol=0, atol=0
    )


@pytest.mark.parametrize("action", ["save", "load"])
def test_learnables_files_need_an_initialized_network(tmp_path, action):
    path = tmp_path / "net.mat"
    save_learnables(dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2, Name="fc")]), path)
    lazy = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2, Name="fc")], Initialize=False)
    run = {
        "save": lambda: save_learnables(lazy, tmp_path / "other.mat"),
        "load": lambda: load_learnables(lazy, path),
    }
    with pytest.raises(
        DLFormatError,
        match=rf"cannot {action} learnables: layer\(s\) 'fc' have no learnables yet .* dlf.initialize\(net\)",
    ):
        run[action]()
    assert lazy.Layers[1].Weights is None and not (tmp_path / "other.mat").exists()


def test_state_dict_keys_are_layer_and_parameter_names():
    net = dlf.initialize(doc_example())
    assert (
        "layers.posemb.Weights" in net.state_dict() and "layers.selfattention.OutputBias" in net.state_dict()
    )
    fresh = dlf.initialize(doc_example())
    fresh.load_state_dict(net.state_dict())
    for (_, _, a), (_, _, b) in zip(net.Learnables, fresh.Learnables, strict=True):
        assert torch.equal(a, b)


def test_param_groups_honour_every_layers_factors():
    net = dlf.initialize(doc_example())
    dlf.setLearnRateFactor(net, "posemb", "Weights", 0)
    groups = dlf.param_groups(net, lr=0.1, l2=0.01)
    by_parameter = {id(p): group for group in groups for p in group["params"]}
    layers = {layer.Name: layer for layer in net.Layers}
    assert id(layers["posemb"].Weights) not in by_parameter  # a learn-rate factor of 0 freezes it
    assert by_parameter[id(layers["wordemb"].Weights)]["lr"] == pytest.approx(0.1)
    assert by_parameter[id(layers["fc"].Bias)]["weight_decay"] == 0  # BiasL2Factor is 0 by default
    assert by_parameter[id(layers["fc"].Weights)]["weight_decay"] == pytest.approx(0.01)
    assert sum(len(group["params"]) for group in groups) == len(net.Learnables) - 1


def test_print_shows_matlabs_summary():
    text = repr(dlf.initialize(doc_example()))
    assert text.startswith("dlnetwork with properties:")
    assert "Learnables: [12×3 table]" in text and "InputNames: {'input'}" in text and "Initialized: 1" in text
    assert (
        "5  selfattention  Self-Attention      QueryWeights 256×64, KeyWeights 256×64, … (8 arrays)  66,368"
        in text
    )
    assert "Total learnables: 91,072" in text


def test_analyze_network_reports_formats_layer_by_layer(capsys):
    net = dlf.initialize(doc_example())
    analysis = dlf.analyzeNetwork(net, tokens())
    printed = capsys.readouterr().out
    assert [row.Activations for row in analysis.rows] == [
        "1(C) × 8(B) × 20(T)", "64(C) × 8(B) × 20(T)", "64(C) × 8(B) × 20(T)", "64(C) × 8(B) × 20(T)",
        "64(C) × 8(B) × 20(T)", "128(C) × 8(B) × 20(T)", "128(C) × 8(B) × 20(T)",
    ]  # fmt: skip
    assert analysis.rows[1].Learnables == "Weights 64×128" and analysis.rows[1].Count == 64 * 128
    expected_total = sum(value.numel() for _, _, value in net.Learnables)
    assert analysis.total == expected_total and f"Total learnables: {expected_total:,}" in printed
    assert analysis.error is None and "128(C) × 8(B) × 20(T)" in printed


def test_analyze_network_names_the_first_layer_where_formats_stop():
    net = dlf.dlnetwork(
        [
            dlf.sequenceInputLayer(4, Name="in"),
            dlf.fullyConnectedLayer(3, Name="fc"),
            dlf.wordEmbeddingLayer(2, 5, Name="emb"),
            dlf.reluLayer(Name="r"),
        ],
        Initialize=False,
    )
    analysis = dlf.analyzeNetwork(net, show=False)
    assert analysis.failed_layer == "emb"
    assert 'reads one word index per element, so the input\'s "C" must have size 1' in analysis.error
    assert [row.Activations for row in analysis.rows] == ["4(C) × 1(B) × 1(T)", "3(C) × 1(B) × 1(T)", "", ""]
    assert "Formats stop flowing at layer 'emb'" in str(analysis)


@given(st.data())
@settings(max_examples=40, deadline=None)
def test_random_acyclic_graphs_compute_what_their_connections_say(data):
    """Layers added in any order run in an order that respects every connection."""
    count = data.draw(st.integers(1, 6))
    plan = []  # (name, kind, sources) with sources among earlier names: acyclic by construction
    for index in range(count):
        earlier = ["in"] + [name for name, _, _ in plan]
        kind = data.draw(st.sampled_from(["relu", "add"]))
        sources = [data.draw(st.sampled_from(earlier)) for _ in range(2 if kind == "add" else 1)]
        plan.append((f"l{index}", kind, sources))
    order = data.draw(st.permutations(plan))
    net = dlf.dlnetwork(dlf.featureInputLayer(3, Name="in"), Initialize=False)
    for name, kind, _ in order:
        dlf.addLayers(net, dlf.reluLayer(Name=name) if kind == "relu" else dlf.additionLayer(2, Name=name))
    for name, kind, sources in plan:
        for port, source in enumerate(sources, 1):
            dlf.connectLayers(net, source, f"{name}/in{port}" if kind == "add" else name)
    X = torch.randn(3, 4, dtype=torch.float64)
    values = {"in": X}
    for name, kind, sources in plan:  # the reference: evaluate in plan order
        inputs = [values[source] for source in sources]
        values[name] = torch.relu(inputs[0]) if kind == "relu" else inputs[0] + inputs[1]
    used = {source for _, _, sources in plan for source in sources}
    expected_outputs = [name for name in ["in"] + [n for n, _, _ in order] if name not in used]
    assert list(net.OutputNames) == sorted(expected_outputs, key=[layer.Name for layer in net.Layers].index)
    results = dlf.predict(net, dlf.dlarray(X, "CB"))
    results = results if isinstance(results, tuple) else (results,)
    for name, result in zip(net.OutputNames, results, strict=True):
        torch.testing.assert_close(dlf.stripdims(result), values[name], rtol=0, atol=0)
