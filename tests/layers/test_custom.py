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


# -- the custom-layer surface -----------------------------------------------------------------


class ScaleLayer(dlf.Layer):
    """A formattable layer with one learnable, given factors at creation."""

    def __init__(self, Name="", LearnRateFactor=1.0, L2Factor=1.0):
        super().__init__(Name=Name)
        self.add_learnable(
            "Scale", torch.tensor([[1.0], [2.0], [3.0]]), LearnRateFactor=LearnRateFactor, L2Factor=L2Factor
        )

    def predict(self, X):
        return X * dlf.dlarray(self.Scale)  # the unformatted dlarray broadcasts against X's canonical shape


class NoisyLayer(dlf.Layer):
    """Training behaviour (forward) differs from inference (predict), as dropout's does; it counts
    its training calls in state that stays in a network, as batch normalization's statistics do."""

    state_updates_persist = True

    def __init__(self, Name=""):
        super().__init__(Name=Name)
        self.add_state("Calls", torch.zeros(1))

    def predict(self, X):
        return X + 1

    def forward(self, X):
        self.Calls = self.Calls + 1
        return X + 100


class SplitLayer(dlf.Layer):
    """Two inputs, two outputs, set in __init__ as MATLAB's constructor sets them."""

    def __init__(self, Name=""):
        super().__init__(Name=Name)
        self.NumInputs = 2
        self.NumOutputs = 2

    def predict(self, A, B):
        return A + B, A - B


class Recorder(dlf.Layer):
    """Not formattable: records what it receives."""

    Formattable = False

    def __init__(self, Name="", grow=False):
        super().__init__(Name=Name)
        self.grow = grow
        self.seen = []

    def predict(self, X):
        self.seen.append(X)
        data = dlf.stripdims(X)
        return data.unsqueeze(-1) if self.grow else data * 2


class OffsetLayer(dlf.Layer):
    """Formattable, one learnable, a Name-only constructor (a row of the shared layer contract)."""

    def __init__(self, Name=""):
        super().__init__(Name=Name)
        self.add_learnable("Offset", torch.linspace(-1, 1, 3).reshape(3, 1))  # C×1, as MATLAB keeps it

    def predict(self, X):
        return X + dlf.dlarray(self.Offset, "CB")  # labelled, it aligns with X by label, whatever X's format


class ChannelPReLU(dlf.Layer):
    """Not formattable: MATLAB's documented PReLU example, Alpha shaped for "CBT" data (C×1×1)."""

    Formattable = False

    def __init__(self, Name=""):
        super().__init__(Name=Name)
        self.add_learnable("Alpha", torch.full((3, 1, 1), 0.25))

    def predict(self, X):
        data = dlf.stripdims(X)
        return data.clamp(min=0) + self.Alpha * data.clamp(max=0)


def scale_net(**factors):
    return dlf.dlnetwork(
        [dlf.featureInputLayer(3), ScaleLayer(Name="scale", **factors), dlf.fullyConnectedLayer(2, Name="fc")]
    )


@pytest.mark.parametrize(
    ("factors", "expected"),
    [
        # fullyConnectedLayer's BiasL2Factor is 0 by default, as MATLAB's
        ({}, {(1.0, 1.0): ["scale/Scale", "fc/Weights"], (1.0, 0.0): ["fc/Bias"]}),
        (
            {"LearnRateFactor": 2, "L2Factor": 0.5},
            {(2.0, 0.5): ["scale/Scale"], (1.0, 1.0): ["fc/Weights"], (1.0, 0.0): ["fc/Bias"]},
        ),
        (
            {"LearnRateFactor": 0},
            {(1.0, 1.0): ["fc/Weights"], (1.0, 0.0): ["fc/Bias"]},
        ),  # 0: frozen, left out
        ({"L2Factor": 0}, {(1.0, 0.0): ["scale/Scale", "fc/Bias"], (1.0, 1.0): ["fc/Weights"]}),
    ],
    ids=["default", "both", "frozen", "no-l2"],
)
def test_param_groups_scale_lr_and_weight_decay_by_a_custom_learnables_factors(factors, expected):
    net = scale_net(**factors)
    names = {id(getattr(layer, p)): f"{layer.Name}/{p}" for layer in net.Layers for p in layer.Learnables}
    groups = dlf.param_groups(net, lr=0.1, l2=0.01)
    got = {(g["learn_rate_factor"], g["l2_factor"]): [names[id(p)] for p in g["params"]] for g in groups}
    assert got == expected
    for group in groups:
        assert group["lr"] == pytest.approx(0.1 * group["learn_rate_factor"])
        assert group["weight_decay"] == pytest.approx(0.01 * group["l2_factor"])


@pytest.mark.parametrize(
    ("setter", "getter", "kind"),
    [
        (dlf.setLearnRateFactor, dlf.getLearnRateFactor, "LearnRateFactor"),
        (dlf.setL2Factor, dlf.getL2Factor, "L2Factor"),
    ],
)
def test_set_and_get_factor_reach_a_custom_learnable_by_layer_and_by_network(setter, getter, kind):
    net = scale_net(**{kind: 3})
    layer = net.Layers["scale"]
    assert getter(layer, "Scale") == 3.0 and getter(net, "scale", "Scale") == 3.0
    assert setter(net, "scale", "Scale", 0.25) is net
    assert getter(layer, "Scale") == 0.25 and layer.factors("Scale")[kind] == 0.25
    assert setter(layer, "Scale", 4) is layer and getter(net, "scale", "Scale") == 4.0
    with pytest.raises(
        dlf.DLFormatError,
        match=r"^ScaleLayer 'scale' has no learnable parameter 'Bias'; its learnables are: Scale$",
    ):
        getter(layer, "Bias")


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("LearnRateFactor", -1, "LearnRateFactor"), ("L2Factor", float("inf"), "L2Factor")],
)
def test_add_learnable_checks_its_factors(option, value, message):
    with pytest.raises(dlf.DLFormatError, match=f"^{message} "):
        ScaleLayer(**{option: value})


def test_the_networks_learnables_table_lists_custom_learnables():
    net = scale_net()
    table = net.Learnables
    assert [(row[0], row[1]) for row in table.rows] == [("scale", "Scale"), ("fc", "Weights"), ("fc", "Bias")]
    assert table.rows[0][2] is net.Layers["scale"].Scale
    assert net.Layers["scale"].Learnables == ("Scale",) and net.Layers["scale"].State == ()


def test_learnables_round_trip_through_a_mat_file_with_a_custom_layer(tmp_path):
    from dlformat.io import load_learnables, loadmat, save_learnables

    net, fresh = scale_net(), scale_net()
    with torch.no_grad():
        net.Layers["scale"].Scale.copy_(torch.tensor([[7.0], [8.0], [9.0]]))
    save_learnables(net, tmp_path / "learnables.mat")
    table = loadmat(tmp_path / "learnables.mat")
    assert table["Layer"].ravel().tolist() == ["scale", "fc", "fc"]
    assert table["Parameter"].ravel().tolist() == ["Scale", "Weights", "Bias"]
    result = load_learnables(fresh, tmp_path / "learnables.mat")
    assert result.missing == [] and result.unexpected == []
    for layer, twin in zip(net.Layers, fresh.Layers, strict=True):
        for name in layer.Learnables:
            assert torch.equal(getattr(twin, name), getattr(layer, name)), f"{layer.Name}/{name}"


def test_a_one_dimensional_custom_learnable_round_trips_through_a_mat_file(tmp_path):
    from dlformat.io import load_learnables, save_learnables

    class Vector(dlf.Layer):
        def __init__(self, Name="v"):
            super().__init__(Name=Name)
            self.add_learnable("Weights", torch.arange(3.0))

        def predict(self, X):
            return X

    save_learnables(Vector(), tmp_path / "vector.mat")
    fresh = Vector()
    with torch.no_grad():
        fresh.Weights.zero_()
    load_learnables(fresh, tmp_path / "vector.mat")
    assert torch.equal(fresh.Weights, torch.arange(3.0))


def test_analyze_network_reports_a_custom_layer(capsys):
    net = scale_net()
    net.addLayers(SplitLayer(Name="split"))
    net.connectLayers("fc", "split/in1")
    net.connectLayers("fc", "split/in2")
    analysis = dlf.analyzeNetwork(net)
    rows = {row.Name: row for row in analysis.rows}
    assert (rows["scale"].Type, rows["scale"].Activations) == ("Scale", "3(C) × 1(B)")
    assert (rows["scale"].Learnables, rows["scale"].Count) == ("Scale 3×1", 3)
    assert rows["split"].Type == "Split" and rows["split"].Count == 0
    assert analysis.total == 3 + 2 * 3 + 2 and analysis.error is None
    assert "Total learnables: 11" in capsys.readouterr().out


@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.usefixtures("fresh_dynamo")
@pytest.mark.parametrize("training", [False, True], ids=["predict", "forward"])
def test_a_network_with_custom_and_function_layers_compiles_fullgraph_to_the_eager_result(training):
    torch.manual_seed(0)
    net = dlf.dlnetwork(
        [
            dlf.featureInputLayer(3),
            ScaleLayer(Name="scale"),
            NoisyLayer(Name="noisy"),
            Sine(Name="sine"),
            dlf.functionLayer(lambda X: X * 2 + 1, Name="affine"),
            dlf.functionLayer(lambda X: F.relu(X), Formattable=True, Name="relu"),
            dlf.fullyConnectedLayer(2),
        ]
    )
    X = dlf.dlarray(torch.randn(3, 5), "CB")
    compiled = torch.compile(net, fullgraph=True, backend="eager")
    got, expected = compiled(X, training=training), net(X, training=training)
    assert dlf.dims(got) == "CB"
    torch.testing.assert_close(dlf.stripdims(got), dlf.stripdims(expected), rtol=0, atol=0)
    assert net.Layers["noisy"].Calls.item() == (2.0 if training else 0.0)  # state updated in both runs


@pytest.mark.usefixtures("fresh_dynamo")
@pytest.mark.parametrize(
    "product", [lambda X, W: X * W, lambda X, W: W * X, lambda X, W: X - W], ids=["X*W", "W*X", "X-W"]
)
def test_a_dlarray_times_a_plain_parameter_compiles_fullgraph(product):
    """Dynamo sends a dlarray-and-tensor operator to DLArray.__torch_function__ (issue 12), which keeps
    the operand order and the format."""
    weights = torch.nn.Parameter(torch.arange(3.0).reshape(3, 1))
    X = dlf.dlarray(torch.randn(3, 2), "CB")
    compiled = torch.compile(lambda X: product(X, weights), fullgraph=True, backend="eager")
    got, expected = compiled(X), product(X, weights)
    assert dlf.dims(got) == "CB"
    torch.testing.assert_close(dlf.stripdims(got), dlf.stripdims(expected), rtol=0, atol=0)


@pytest.mark.parametrize(
    ("run", "offset", "calls"),
    [
        (lambda net, X: dlf.forward(net, X), 100.0, 1.0),
        (lambda net, X: dlf.predict(net, X), 1.0, 0.0),
        (lambda net, X: net.Layers["noisy"](X, training=False), 1.0, 0.0),
        (lambda net, X: net.Layers["noisy"](X, training=True), 100.0, 1.0),
        (lambda net, X: net.Layers["noisy"].eval()(X), 1.0, 0.0),
        (lambda net, X: net.Layers["noisy"].train()(X), 100.0, 1.0),
        (lambda net, X: net.eval()(X), 1.0, 0.0),
        (lambda net, X: net.train()(X), 100.0, 1.0),
    ],
    ids=[
        "dlf.forward",
        "dlf.predict",
        "training=False",
        "training=True",
        "eval",
        "train",
        "net-eval",
        "net-train",
    ],
)
def test_forward_is_training_behaviour_and_predict_inference(run, offset, calls):
    net = dlf.dlnetwork([dlf.featureInputLayer(3), NoisyLayer(Name="noisy")])
    X = dlf.dlarray(torch.zeros(3, 2), "CB")
    Y = run(net, X)
    assert dlf.dims(Y) == "CB"
    torch.testing.assert_close(dlf.extractdata(Y), torch.full((3, 2), offset))
    assert net.Layers["noisy"].Calls.item() == calls


def test_state_values_are_in_the_state_dict_and_load_back():
    net = dlf.dlnetwork([dlf.featureInputLayer(3), NoisyLayer(Name="noisy"), ScaleLayer(Name="scale")])
    assert list(net.state_dict()) == ["layers.noisy.Calls", "layers.scale.Scale"]
    dlf.forward(net, dlf.dlarray(torch.zeros(3, 1), "CB"))
    fresh = dlf.dlnetwork([dlf.featureInputLayer(3), NoisyLayer(Name="noisy"), ScaleLayer(Name="scale")])
    fresh.load_state_dict(net.state_dict())
    assert fresh.Layers["noisy"].Calls.item() == 1.0 and fresh.Layers["noisy"].State == ("Calls",)
    assert "State Parameters" in repr(fresh.Layers["noisy"]) and "Calls: [1 float32]" in repr(
        fresh.Layers["noisy"]
    )


def test_two_inputs_and_two_outputs_are_named_and_connectable():
    layer = SplitLayer(Name="split")
    assert (layer.NumInputs, layer.InputNames) == (2, ("in1", "in2"))
    assert (layer.NumOutputs, layer.OutputNames) == (2, ("out1", "out2"))
    net = dlf.dlnetwork([dlf.featureInputLayer(3, Name="a"), layer], Initialize=False)
    assert net.InputNames == ("a", "split/in2") and net.OutputNames == ("split/out1", "split/out2")
    net.addLayers(dlf.featureInputLayer(3, Name="b"))
    net.connectLayers("b", "split/in2")
    net.addLayers(dlf.additionLayer(2, Name="add"))
    net.connectLayers("split/out1", "add/in1")
    assert net.OutputNames == ("split/out2", "add") and net.InputNames == ("a", "b", "add/in2")
    net.connectLayers("split/out2", "add/in2")
    assert net.OutputNames == ("add",) and net.InputNames == ("a", "b")
    A, B = dlf.dlarray(torch.full((3, 2), 5.0), "CB"), dlf.dlarray(torch.full((3, 2), 2.0), "CB")
    difference, total = dlf.predict(net, A, B, Outputs=["split/out2", "split/out1"])
    torch.testing.assert_close(dlf.extractdata(total), torch.full((3, 2), 7.0))
    torch.testing.assert_close(dlf.extractdata(difference), torch.full((3, 2), 3.0))
    with pytest.raises(
        dlf.DLFormatError,
        match=r"^layer 'split' has several outputs; name one of 'split/out1', 'split/out2'$",
    ):
        net.connectLayers("split", "add/in2")


@pytest.mark.parametrize(
    ("prop", "value"),
    [("NumInputs", 3), ("InputNames", ["x", "y"]), ("NumOutputs", 1), ("OutputNames", ["y"])],
)
def test_ports_are_read_only_after_construction(prop, value):
    layer = SplitLayer(Name="split")
    message = f"^You cannot set the read-only property '{prop}' of SplitLayer after it is constructed; set it in the layer's __init__$"
    with pytest.raises(dlf.DLFormatError, match=message):
        setattr(layer, prop, value)
    assert (layer.InputNames, layer.OutputNames) == (("in1", "in2"), ("out1", "out2"))


def test_a_misspelt_property_is_unrecognized():
    layer = ScaleLayer(Name="s")
    with pytest.raises(
        dlf.DLFormatError,
        match=r"^Unrecognized property 'Scal' for class ScaleLayer; its properties are: Name, Scale$",
    ):
        layer.Scal = 3
    assert not hasattr(layer, "Scal")
    layer.Name = "renamed"  # known properties, learnables and lower-case Python attributes stay settable
    layer.Scale = torch.zeros(3, 1)
    layer.note = "free"
    assert (layer.Name, layer.Scale.sum().item(), layer.note) == ("renamed", 0.0, "free")


@pytest.mark.parametrize(
    ("given", "fmt", "canonical_shape"),
    [("TCB", "CBT", (3, 4, 2)), ("BC", "CB", (3, 2)), ("SCBS", "SSCB", (2, 5, 3, 4))],
)
def test_a_non_formattable_layer_gets_unformatted_data_in_canonical_order_and_its_output_the_format(
    given, fmt, canonical_shape
):
    sizes = {"TCB": (2, 3, 4), "BC": (2, 3), "SCBS": (2, 3, 4, 5)}[given]
    X = dlf.dlarray(torch.randn(sizes), given)
    layer = Recorder()
    Y = layer(X)
    (received,) = layer.seen
    assert (
        type(received) is dlf.DLArray
        and dlf.dims(received) == ""
        and tuple(received.shape) == canonical_shape
    )
    assert torch.equal(dlf.stripdims(received), dlf.stripdims(X))
    assert dlf.dims(Y) == fmt and torch.equal(dlf.stripdims(Y), dlf.stripdims(X) * 2)


def test_a_non_formattable_layer_cannot_add_dimensions():
    with pytest.raises(
        dlf.DLFormatError,
        match=r'^Recorder returned 3 dimensions for a "CB" input; a layer that is not Formattable must keep',
    ):
        Recorder(grow=True)(dlf.dlarray(torch.ones(3, 2), "CB"))


def test_a_non_formattable_layer_with_two_inputs_gives_both_outputs_the_first_inputs_format():
    class Pair(dlf.Layer):
        Formattable = False

        def __init__(self):
            super().__init__()
            self.NumInputs = 2
            self.NumOutputs = 2

        def predict(self, A, B):
            assert dlf.dims(A) == dlf.dims(B) == ""
            return dlf.stripdims(A) + 1, dlf.stripdims(B) + 2

    A = dlf.dlarray(torch.zeros(2, 3), "CB")
    B = dlf.dlarray(torch.zeros(2, 3), "CT")
    first, second = Pair()(A, B)
    assert (dlf.dims(first), dlf.dims(second)) == ("CB", "CB")
    torch.testing.assert_close(dlf.extractdata(second), torch.full((2, 3), 2.0))


# -- functionLayer ----------------------------------------------------------------------------


def three(a, b, c=0):
    return a + b + c


@pytest.mark.parametrize(
    ("fun", "inputs"),
    [
        (lambda X: X, ("in",)),
        (lambda a, b: a + b, ("in1", "in2")),
        (three, ("in1", "in2", "in3")),  # MATLAB's nargin counts optional inputs too
        (lambda X, *, scale=2: X * scale, ("in",)),  # keyword-only parameters are options, not inputs
    ],
    ids=["one", "two", "defaulted", "keyword-only"],
)
def test_function_layer_num_inputs_defaults_to_the_positional_parameters(fun, inputs):
    layer = dlf.functionLayer(fun)
    assert (layer.NumInputs, layer.InputNames) == (len(inputs), inputs)
    assert (layer.NumOutputs, layer.OutputNames, layer.Formattable, layer.Name) == (1, ("out",), False, "")


@pytest.mark.parametrize(
    ("fun", "options", "message"),
    [
        (lambda *X: X[0], {}, "functionLayer: <lambda> takes any number of inputs (*args); give NumInputs"),
        (lambda: 0, {}, "functionLayer: <lambda> takes no inputs; a layer needs at least one"),
        (torch.sin, {}, "functionLayer cannot read how many inputs sin takes; give NumInputs"),
        (
            lambda a: a,
            {"NumInputs": 2, "InputNames": ["x"]},
            "functionLayer InputNames names 1 ports; NumInputs is 2",
        ),
        (3, {}, "PredictFcn must be a function (a callable); got 3 (int)"),
    ],
    ids=["varargs", "no-inputs", "no-signature", "names-count", "not-callable"],
)
def test_function_layer_errors(fun, options, message):
    with pytest.raises(dlf.DLFormatError, match=f"^{re.escape(message)}$"):
        dlf.functionLayer(fun, **options)


def test_function_layer_with_varargs_takes_num_inputs():
    layer = dlf.functionLayer(lambda *X: X[0] + X[1] + X[2], NumInputs=3)
    assert layer.InputNames == ("in1", "in2", "in3")
    ones = dlf.dlarray(torch.ones(2, 1), "CB")
    torch.testing.assert_close(dlf.extractdata(layer(ones, ones, ones)), torch.full((2, 1), 3.0))


def test_function_layer_with_two_outputs_returns_a_tuple_and_names_its_outputs():
    layer = dlf.functionLayer(lambda X: (X * 2, X * 3), NumOutputs=2, Name="two")
    assert layer.OutputNames == ("out1", "out2")
    X = dlf.dlarray(torch.ones(2, 3, 4), "CBT")
    doubled, tripled = layer(X)
    assert (dlf.dims(doubled), dlf.dims(tripled)) == ("CBT", "CBT")
    torch.testing.assert_close(dlf.extractdata(tripled), torch.full((2, 3, 4), 3.0))
    with pytest.raises(
        dlf.DLFormatError,
        match=r"^FunctionLayer 'one' has NumOutputs 2; its function must return a tuple of 2 values",
    ):
        dlf.functionLayer(lambda X: X, NumOutputs=2, Name="one")(X)


@pytest.mark.parametrize(("formattable", "received"), [(True, "CBT"), (False, "")])
def test_function_layer_formattable_passes_formatted_dlarrays(formattable, received):
    seen = []
    layer = dlf.functionLayer(lambda X: seen.append(X) or X, Formattable=formattable)
    Y = layer(dlf.dlarray(torch.randn(2, 3, 4), "TCB"))
    assert [dlf.dims(X) for X in seen] == [received] and type(seen[0]) is dlf.DLArray
    assert tuple(seen[0].shape) == (3, 4, 2) and dlf.dims(Y) == "CBT"


def test_function_layer_takes_matlabs_name_value_pairs():
    layer = dlf.functionLayer(lambda a, b: a + b, "Name", "g", "NumInputs", 2, "formattable", True)
    assert (layer.Name, layer.NumInputs, layer.Formattable) == ("g", 2, True)
    with pytest.raises(dlf.DLFormatError, match=r"^functionLayer has no option 'Inputs'; the options are: "):
        dlf.functionLayer(lambda a: a, Inputs=2)


@pytest.mark.parametrize(
    "make",
    [
        lambda: dlf.functionLayer(lambda X: X + 1, Name="plus1"),
        lambda: dlf.functionLayer(
            lambda *X: X, NumInputs=2, NumOutputs=2, OutputNames=["p", "q"], Formattable=True
        ),
        lambda: dlf.functionLayer(three, Description="sum of three", Acceleratable=True),
    ],
    ids=["plain", "ports", "description"],
)
def test_function_layer_config_round_trips(make):
    layer = make()
    rebuilt = type(layer).from_config(layer.get_config())
    assert type(rebuilt) is dlf.FunctionLayer and rebuilt.get_config() == layer.get_config()
    assert rebuilt.PredictFcn is layer.PredictFcn
    assert (rebuilt.InputNames, rebuilt.OutputNames) == (layer.InputNames, layer.OutputNames)


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
