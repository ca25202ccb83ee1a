"""networkLayer and neuralODELayer: layers holding a network.

networkLayer behaves as its nested network (MathWorks' page): values against float64 NumPy
references of the nested layers, ports named as MATLAB names nested inputs
(``"block/add/in2"``), learnables named ``"<layer>/<parameter>"`` that training updates.
neuralODELayer gives the solution of ``y' = Network(y)`` at the end of ``TimeInterval``: against the
matrix exponential for a linear network and SciPy's DOP853 (tight tolerances) for a nonlinear
one, and equal to ``dlode45`` (the same Dormand–Prince solver) at the default tolerances."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import torch

import dlformat as dlf
from dlformat import DLFormatError


def fc(rows, columns, seed, name="fc"):
    rng = np.random.default_rng(seed)
    W, b = rng.standard_normal((rows, columns)) / 2, rng.standard_normal((rows, 1)) / 2
    layer = dlf.fullyConnectedLayer(rows, Weights=torch.from_numpy(W), Bias=torch.from_numpy(b), Name=name)
    return layer, W, b


# -- networkLayer ---------------------------------------------------------------------------------


def test_a_network_layer_computes_as_its_nested_layers():
    inner, W1, b1 = fc(4, 3, 0)
    block = dlf.networkLayer([inner, dlf.reluLayer(Name="relu")], Name="block")
    outer, W2, b2 = fc(2, 4, 1, name="out")
    net = dlf.dlnetwork([dlf.featureInputLayer(3), block, outer])
    x = np.random.default_rng(2).standard_normal((3, 5))
    Y = net.predict(torch.from_numpy(x))
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), W2 @ np.maximum(W1 @ x + b1, 0) + b2, rtol=1e-13)
    assert [row[:2] for row in net.Learnables] == [
        ("block", "fc/Weights"),
        ("block", "fc/Bias"),
        ("out", "Weights"),
        ("out", "Bias"),
    ]
    assert block.Layers[0].Name == "fc" and block.NumInputs == 1 and block.OutputNames == ("relu",)


def test_the_nested_network_is_a_copy_and_a_layer_array_is_initialized_by_the_data():
    inner, W, _ = fc(4, 3, 0)
    nested = dlf.dlnetwork([dlf.featureInputLayer(3), inner])
    block = dlf.networkLayer(nested)
    with torch.no_grad():
        nested.Layers[1].Weights.add_(1)  # MATLAB's networks are values: the layer keeps its copy
    np.testing.assert_array_equal(block.Network.Layers[1].Weights.detach().numpy(), W)
    lazy = dlf.networkLayer([dlf.fullyConnectedLayer(6), dlf.reluLayer()], Name="lazy")
    assert not lazy.Initialized
    net = dlf.dlnetwork([dlf.featureInputLayer(5), lazy])
    assert net.Initialized and tuple(lazy.Network.Layers[0].Weights.shape) == (6, 5)


def test_nested_inputs_are_named_by_their_path():
    """MATLAB: a network layer 'bert_encoder' around one with unconnected inputs shows the network
    input 'bert_encoder/bert_model/input_ids' (a public MATLAB session's display)."""
    nested = dlf.dlnetwork(Initialize=False)
    nested.addLayers([dlf.fullyConnectedLayer(3, InputSize=3, Name="fc"), dlf.additionLayer(2, Name="add")])
    block = dlf.networkLayer(nested, Name="block")
    assert block.InputNames == ("fc", "add/in2") and block.NumInputs == 2
    net = dlf.dlnetwork(block, Initialize=False)
    assert net.InputNames == ("block/fc", "block/add/in2")
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    W, bias = nested.Layers[0].Weights.detach(), nested.Layers[0].Bias.detach()
    torch.testing.assert_close(
        dlf.extractdata(net.predict(dlf.dlarray(a, "CB"), dlf.dlarray(b, "CB"))), W @ a + bias + b
    )


def test_a_nested_input_layer_makes_the_network_layer_an_input():
    block = dlf.networkLayer(
        dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)]), Name="enc"
    )
    assert block.NumInputs == 0
    net = dlf.dlnetwork([block, dlf.reluLayer()])
    assert net.InputNames == ("enc",) and net.Initialized
    assert tuple(net.predict(torch.randn(3, 7)).shape) == (2, 7)


def test_training_updates_the_nested_learnables_and_state():
    torch.manual_seed(0)
    block = dlf.networkLayer(
        [dlf.fullyConnectedLayer(8, Name="fc"), dlf.batchNormalizationLayer(Name="bn"), dlf.reluLayer()],
        Name="block",
    )
    X = torch.randn(64, 3)
    net, info = dlf.trainnet(
        X,
        X.sum(1, keepdim=True),
        [dlf.featureInputLayer(3), block, dlf.fullyConnectedLayer(1)],
        "mse",
        dlf.trainingOptions("adam", MaxEpochs=10, MiniBatchSize=16, Verbose=False),
    )
    losses = list(info.TrainingHistory.Loss)
    assert losses[-1] < losses[0]
    trained = net.Layers[1]
    assert float(trained.Network.Layers[1].TrainedMean.abs().sum()) > 0  # statistics kept in training
    before = trained.Network.Layers[1].TrainedMean.clone()
    net.predict(torch.randn(3, 10))
    assert torch.equal(trained.Network.Layers[1].TrainedMean, before)  # predict changes no state


def test_dlgradient_and_factors_reach_nested_learnables():
    inner, W, b = fc(2, 3, 4)
    net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.networkLayer([inner], Name="block")])
    x = torch.from_numpy(np.random.default_rng(5).standard_normal((3, 4)))

    def loss(net, x):
        Y = dlf.forward(net, x)
        return dlf.sum(Y * Y, "all"), dlf.dlgradient(dlf.sum(Y * Y, "all"), net.Learnables)

    _, gradients = dlf.dlfeval(loss, net, dlf.dlarray(x, "CB"))
    y = W @ x.numpy() + b
    rows = {(layer, name): value for layer, name, value in gradients}
    np.testing.assert_allclose(
        rows[("block", "fc/Weights")].detach().numpy(), 2 * y @ x.numpy().T, rtol=1e-12
    )
    block = net.Layers[1]
    block.set_factor("fc/Weights", "LearnRateFactor", 0.5)
    assert (
        block.factors("fc/Weights")["LearnRateFactor"]
        == 0.5
        == inner.factors("Weights")["LearnRateFactor"] * 0 + 0.5
    )
    with pytest.raises(DLFormatError, match=r"has no learnable parameter 'nothere/Weights'"):
        block.factors("nothere/Weights")


@pytest.mark.parametrize("value", [5, "net", [1, 2]])
def test_network_layer_needs_a_network_or_a_layer_array(value):
    with pytest.raises(DLFormatError, match="Network must be a dlnetwork or a layer array"):
        dlf.networkLayer(value)


# -- neuralODELayer -------------------------------------------------------------------------------


def ode_network(seed, activation=None):
    layer, W, b = fc(2, 2, seed)
    layers = [dlf.featureInputLayer(2), layer] + ([activation] if activation is not None else [])
    return dlf.dlnetwork(layers), W, b


@pytest.mark.parametrize("interval", [(0.0, 1.0), (0.5, 2.0), (1.0, -0.5)])
def test_a_linear_ode_matches_the_matrix_exponential(interval):
    """y' = W y + b: y(tf) = e^{W Δ} y0 + W⁻¹ (e^{W Δ} − I) b, Δ = tf − t0."""
    net, W, b = ode_network(0)
    layer = dlf.neuralODELayer(net, list(interval), RelativeTolerance=1e-10, AbsoluteTolerance=1e-12)
    x = np.random.default_rng(1).standard_normal((2, 3))
    Y = layer(dlf.dlarray(torch.from_numpy(x), "CB"))
    E = scipy.linalg.expm(W * (interval[1] - interval[0]))
    expected = E @ x + np.linalg.solve(W, (E - np.eye(2)) @ b)
    assert dlf.dims(Y) == "CB" and Y.dtype == torch.float64
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-8, atol=1e-10)


def test_a_nonlinear_ode_matches_scipy():
    net, W, b = ode_network(3, dlf.tanhLayer())
    layer = dlf.neuralODELayer(net, [0, 1.5], RelativeTolerance=1e-10, AbsoluteTolerance=1e-12)
    x = np.random.default_rng(4).standard_normal((2, 3))
    Y = dlf.extractdata(layer(dlf.dlarray(torch.from_numpy(x), "CB"))).numpy()
    for n in range(3):
        solved = scipy.integrate.solve_ivp(
            lambda t, y: np.tanh(W @ y + b[:, 0]), (0, 1.5), x[:, n], method="DOP853", rtol=1e-13, atol=1e-14
        )
        np.testing.assert_allclose(Y[:, n], solved.y[:, -1], rtol=1e-8, atol=1e-10)


def test_the_default_tolerances_solve_as_dlode45_does():
    net, W, b = ode_network(5, dlf.tanhLayer())
    layer = dlf.neuralODELayer(net, [0, 1])
    assert (layer.GradientMode, layer.RelativeTolerance, layer.AbsoluteTolerance, layer.Solver) == (
        "direct",
        1e-3,
        1e-6,
        "ode45",
    )
    X = dlf.dlarray(torch.from_numpy(np.random.default_rng(6).standard_normal((2, 4))), "CB")
    Y = layer(X)
    Z = dlf.dlode45(lambda t, y, theta: theta.predict(y), [0, 1], X, layer.Network)
    torch.testing.assert_close(dlf.extractdata(Y), dlf.extractdata(Z)[..., 0], rtol=0, atol=0)
    reference = scipy.integrate.solve_ivp(
        lambda t, y: np.tanh(W @ y + b[:, 0]), (0, 1), X._data[:, 0].numpy(), rtol=1e-12, atol=1e-14
    ).y[:, -1]
    np.testing.assert_allclose(dlf.extractdata(Y)[:, 0].numpy(), reference, rtol=5e-3, atol=1e-5)


def test_adjoint_gradients_equal_direct_gradients():
    gradients = {}
    for mode in ("direct", "adjoint"):
        net, _, _ = ode_network(7, dlf.tanhLayer())
        layer = dlf.neuralODELayer(
            net, [0, 1], GradientMode=mode, RelativeTolerance=1e-10, AbsoluteTolerance=1e-12
        )
        x = torch.from_numpy(np.random.default_rng(8).standard_normal((2, 3))).requires_grad_()
        dlf.stripdims(layer(dlf.dlarray(x, "CB"))).square().sum().backward()
        gradients[mode] = (x.grad, layer.Network.Layers[1].Weights.grad)
    for direct, adjoint in zip(gradients["direct"], gradients["adjoint"], strict=True):
        torch.testing.assert_close(adjoint, direct, rtol=1e-6, atol=1e-8)


def test_in_a_network_its_learnables_are_the_ode_networks():
    net, _, _ = ode_network(9)
    outer = dlf.dlnetwork(
        [dlf.featureInputLayer(2), dlf.neuralODELayer(net, [0, 1]), dlf.fullyConnectedLayer(1)]
    )
    assert [row[:2] for row in outer.Learnables][:2] == [
        ("neuralode", "fc/Weights"),
        ("neuralode", "fc/Bias"),
    ]
    assert outer.Layers[1].matlab_type == "Neural ODE"
    assert "TimeInterval: [0 1]" in repr(outer.Layers[1])


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda net: dlf.neuralODELayer(net, [0]), r"TimeInterval must hold two or more finite times"),
        (lambda net: dlf.neuralODELayer(net, [0, 1, 0.5]), r"all increasing or all decreasing"),
        (lambda net: dlf.neuralODELayer(net, [0, 1], GradientMode="exact"), r"GradientMode must be one of"),
        (lambda net: dlf.neuralODELayer(net, [0, 1], Solver="ode1"), r"Solver must be one of"),
        (lambda net: dlf.neuralODELayer(net, [0, 1], RelativeTolerance=0), r"RelativeTolerance must be"),
        (
            lambda net: dlf.neuralODELayer(
                dlf.dlnetwork([dlf.featureInputLayer(2), dlf.batchNormalizationLayer()]),
                [0, 1],
                GradientMode="adjoint",
            ),
            r'GradientMode "adjoint" needs a network with an empty State',
        ),
        (
            lambda net: dlf.neuralODELayer(
                dlf.dlnetwork([dlf.additionLayer(2, Name="add")], Initialize=False), [0, 1]
            ),
            r"one input and one output .* has 2 input\(s\)",
        ),
    ],
)
def test_bad_construction_is_refused(build, message):
    net, _, _ = ode_network(0)
    with pytest.raises(DLFormatError, match=message):
        build(net)


def test_unported_calls_are_clear_errors():
    net, _, _ = ode_network(0)
    X = dlf.dlarray(torch.randn(2, 3, dtype=torch.float64), "CB")
    with pytest.raises(DLFormatError, match=r"a TimeInterval of 3 times is not ported"):
        dlf.neuralODELayer(net, [0, 0.5, 1])(X)
    wrong = dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(3)])
    with pytest.raises(DLFormatError, match=r"the network's output must have its input's format and size"):
        dlf.neuralODELayer(wrong, [0, 1], Name="ode")(X)
