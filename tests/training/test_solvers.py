"""adamupdate, sgdmupdate and rmspropupdate against float64 NumPy transcriptions of MathWorks'
update formulas, over several steps, with values where MATLAB and torch.optim differ.

- adamupdate (MathWorks, adamupdate): m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g²,
  w ← w − α·√(1−β₂ᵗ)/(1−β₁ᵗ)·m/(√v + ε).
- sgdmupdate (MathWorks, sgdmupdate): v ← γv − α·g, w ← w + v.
- rmspropupdate (MathWorks, rmspropupdate): v ← β₂v + (1−β₂)g², w ← w − α·g/(√v + ε).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.training import _solvers


def gradients(steps, shape, seed=0):
    return [np.random.default_rng(seed + step).standard_normal(shape) for step in range(steps)]


def numpy_adam(w, grads, alpha, beta1=0.9, beta2=0.999, eps=1e-8):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        w = w - alpha * np.sqrt(1 - beta2**t) / (1 - beta1**t) * m / (np.sqrt(v) + eps)
    return w, m, v


def numpy_sgdm(w, grads, rates, gamma=0.9):
    v = np.zeros_like(w)
    for g, alpha in zip(grads, rates, strict=True):
        v = gamma * v - alpha * g
        w = w + v
    return w, v


def numpy_rmsprop(w, grads, alpha, beta2=0.9, eps=1e-8):
    v = np.zeros_like(w)
    for g in grads:
        v = beta2 * v + (1 - beta2) * g**2
        w = w - alpha * g / (np.sqrt(v) + eps)
    return w, v


@pytest.mark.parametrize("epsilon", [1e-8, 0.5], ids=["default-eps", "large-eps"])
def test_adamupdate_matches_mathworks_formula_over_steps(epsilon):
    w0 = np.random.default_rng(9).standard_normal((3, 2))
    grads = gradients(6, (3, 2))
    params = {"W": dlf.dlarray(w0, "CU"), "b": torch.tensor(w0[:, 0])}
    avg, avg_sq = [], []
    for t, g in enumerate(grads, 1):
        grad = {"W": dlf.dlarray(g, "CU"), "b": torch.tensor(g[:, 0])}
        params, avg, avg_sq = dlf.adamupdate(params, grad, avg, avg_sq, t, 0.05, 0.8, 0.95, epsilon)
    w, m, v = numpy_adam(w0, grads, 0.05, 0.8, 0.95, epsilon)
    assert dlf.dims(params["W"]) == "CU" and isinstance(params["b"], torch.Tensor)
    np.testing.assert_allclose(dlf.extractdata(params["W"]).numpy(), w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(params["b"].numpy(), w[:, 0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dlf.extractdata(avg["W"]).numpy(), m, rtol=1e-12)
    np.testing.assert_allclose(dlf.extractdata(avg_sq["W"]).numpy(), v, rtol=1e-12)


def test_adamupdate_differs_from_torch_adam_where_epsilon_is_large():
    w0 = np.random.default_rng(1).standard_normal(4)
    grads = gradients(5, 4)
    w = torch.tensor(w0)
    m = v = None
    for t, g in enumerate(grads, 1):
        w, m, v = dlf.adamupdate(w, torch.tensor(g), m, v, t, 0.1, 0.9, 0.999, 0.5)
    parameter = torch.nn.Parameter(torch.tensor(w0))
    optimizer = torch.optim.Adam([parameter], lr=0.1, betas=(0.9, 0.999), eps=0.5)
    for g in grads:
        parameter.grad = torch.tensor(g)
        optimizer.step()
    np.testing.assert_allclose(w.numpy(), numpy_adam(w0, grads, 0.1, eps=0.5)[0], rtol=1e-12)
    assert not np.allclose(w.numpy(), parameter.detach().numpy(), rtol=1e-3)  # ε sits elsewhere in torch


def test_adamupdate_defaults_are_matlabs():
    w0, g = np.array([1.0, -2.0]), np.array([0.3, 0.4])
    w, _, _ = dlf.adamupdate(torch.tensor(w0), torch.tensor(g), [], [], 1)
    np.testing.assert_allclose(w.numpy(), numpy_adam(w0, [g], 0.001)[0], rtol=1e-12)


def test_sgdmupdate_velocity_carries_a_changing_learning_rate():
    w0 = np.random.default_rng(2).standard_normal((2, 3))
    grads = gradients(6, (2, 3), seed=20)
    rates = [0.1, 0.1, 0.05, 0.05, 0.01, 0.2]  # a piecewise schedule, then a jump
    w, vel = torch.tensor(w0), []
    for g, alpha in zip(grads, rates, strict=True):
        w, vel = dlf.sgdmupdate(w, torch.tensor(g), vel, alpha, 0.8)
    expected, velocity = numpy_sgdm(w0, grads, rates, 0.8)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(vel.numpy(), velocity, rtol=1e-12)
    # torch's SGD with the same schedule scales the whole velocity by the current rate
    parameter = torch.nn.Parameter(torch.tensor(w0))
    optimizer = torch.optim.SGD([parameter], lr=rates[0], momentum=0.8)
    for g, alpha in zip(grads, rates, strict=True):
        optimizer.param_groups[0]["lr"] = alpha
        parameter.grad = torch.tensor(g)
        optimizer.step()
    assert not np.allclose(parameter.detach().numpy(), expected, rtol=1e-3)


def test_sgdmupdate_defaults_are_matlabs():
    w, vel = dlf.sgdmupdate(
        torch.tensor([1.0], dtype=torch.float64), torch.tensor([2.0], dtype=torch.float64), None
    )
    w, vel = dlf.sgdmupdate(w, torch.tensor([2.0], dtype=torch.float64), vel)
    expected, _velocity = numpy_sgdm(np.array([1.0]), [np.array([2.0])] * 2, [0.01, 0.01], 0.9)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("epsilon", [1e-8, 1.0])
def test_rmspropupdate_matches_mathworks_formula_over_steps(epsilon):
    w0 = np.random.default_rng(3).standard_normal(5)
    grads = gradients(6, 5, seed=40)
    w, v = dlf.dlarray(w0, "C"), []
    for g in grads:
        w, v = dlf.rmspropupdate(w, dlf.dlarray(g, "C"), v, 0.01, 0.7, epsilon)
    expected, velocity = numpy_rmsprop(w0, grads, 0.01, 0.7, epsilon)
    np.testing.assert_allclose(dlf.extractdata(w).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(dlf.extractdata(v).numpy(), velocity, rtol=1e-12)


def network():
    torch.manual_seed(0)
    net = dlf.dlnetwork(
        [
            dlf.featureInputLayer(3),
            dlf.fullyConnectedLayer(2, Name="fc1"),
            dlf.fullyConnectedLayer(2, Name="fc2"),
        ]
    )
    return net.double()


def network_gradients(net, seed):
    rows = [(layer, name, torch.tensor(np.random.default_rng(seed + i).standard_normal(tuple(value.shape))))
            for i, (layer, name, value) in enumerate(net.Learnables)]  # fmt: skip
    return dlf.training._parameters.network_table([(r[0], r[1]) for r in rows], [r[2] for r in rows])


def test_a_network_is_updated_in_place_with_its_learn_rate_factors_and_no_l2():
    net = network()
    dlf.setLearnRateFactor(net, "fc1", "Weights", 0)  # frozen
    dlf.setLearnRateFactor(net, "fc2", "Weights", 2.5)
    dlf.setL2Factor(net, "fc2", "Weights", 10)  # MATLAB's solver functions apply no L2
    start = {(layer, name): value.detach().numpy().copy() for layer, name, value in net.Learnables}
    avg = avg_sq = None
    steps = [network_gradients(net, 10 * t) for t in range(3)]
    for t, grads in enumerate(steps, 1):
        same, avg, avg_sq = dlf.adamupdate(net, grads, avg, avg_sq, t, 0.01)
        assert same is net
    factors = {("fc1", "Weights"): 0.0, ("fc2", "Weights"): 2.5}
    for row, (layer, name, value) in enumerate(net.Learnables):
        grads = [dict(((lay, par), v) for lay, par, v in step)[(layer, name)].numpy() for step in steps]
        expected, m, _ = numpy_adam(start[(layer, name)], grads, 0.01 * factors.get((layer, name), 1.0))
        np.testing.assert_allclose(value.detach().numpy(), expected, rtol=1e-12, err_msg=f"{layer}/{name}")
        assert avg[row][:2] == (layer, name)
        np.testing.assert_allclose(avg[row][2].numpy(), m, rtol=1e-12)
    np.testing.assert_array_equal(net.Learnables[0][2].detach().numpy(), start[("fc1", "Weights")])


def test_network_sgdm_and_rmsprop_use_the_factors_too():
    for update, reference in (
        (lambda n, g, s: dlf.sgdmupdate(n, g, s, 0.1), lambda w, g, f: numpy_sgdm(w, [g], [0.1 * f])[0]),
        (lambda n, g, s: dlf.rmspropupdate(n, g, s, 0.1), lambda w, g, f: numpy_rmsprop(w, [g], 0.1 * f)[0]),
    ):
        net = network()
        dlf.setLearnRateFactor(net, "fc2", "Bias", 0.5)
        start = [value.detach().numpy().copy() for _, _, value in net.Learnables]
        grads = network_gradients(net, 3)
        net, _ = update(net, grads, [])
        for (layer, name, value), w0, (_, _, g) in zip(net.Learnables, start, grads, strict=True):
            factor = 0.5 if (layer, name) == ("fc2", "Bias") else 1.0
            np.testing.assert_allclose(value.detach().numpy(), reference(w0, g.numpy(), factor), rtol=1e-12)


BAD = [
    (lambda w, g: dlf.adamupdate(w, g, [], [], 0), r"adamupdate iteration must be a positive integer; got 0"),
    (
        lambda w, g: dlf.adamupdate(w, g, [], [], 1.5),
        r"adamupdate iteration must be a positive integer; got 1.5",
    ),
    (
        lambda w, g: dlf.adamupdate(w, g, [], [], 1, -1),
        r"adamupdate learnRate must be a positive number; got -1",
    ),
    (
        lambda w, g: dlf.adamupdate(w, g, [], [], 1, 0.1, 1.0),
        r"adamupdate gradDecay must be a number in \[0, 1\); got 1.0",
    ),
    (
        lambda w, g: dlf.sgdmupdate(w, g, [], 0.1, 1.5),
        r"sgdmupdate momentum must be a number in \[0, 1\]; got 1.5",
    ),
    (
        lambda w, g: dlf.rmspropupdate(w, g, [], 0.1, 0.9, 0),
        r"rmspropupdate epsilon must be a positive number; got 0",
    ),
    (
        lambda w, g: dlf.adamupdate(w, {"W": g}, [], [], 1),
        r"adamupdate: grad is not arranged as the parameters are",
    ),
    (
        lambda w, g: dlf.sgdmupdate(w, torch.ones(3), []),
        r"sgdmupdate: the gradient of the value has size 3; the parameter has size 2",
    ),
    (
        lambda w, g: dlf.sgdmupdate(w, g, torch.ones(3)),
        r"sgdmupdate: vel of the value has size 3; the parameter has size 2",
    ),
    (
        lambda w, g: dlf.sgdmupdate("w", g, []),
        r'sgdmupdate: the parameters must be a dlarray or tensor, or a tuple, list, dict or Learnables table of them; got "w" \(a string\)',
    ),
    (
        lambda w, g: dlf.adamupdate(network(), g, [], [], 1),
        r"adamupdate: for a network, grad must be a table like net.Learnables",
    ),
]


@pytest.mark.parametrize(("call", "message"), BAD, ids=range(len(BAD)))
def test_bad_input_is_refused_with_the_function_the_value_and_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call(torch.ones(2), torch.ones(2))


def test_gradients_missing_a_network_parameter_are_refused():
    net = network()
    grads = network_gradients(net, 0)
    partial = dlf.training._parameters.network_table(
        [row[:2] for row in grads][:-1], [row[2] for row in grads][:-1]
    )
    with pytest.raises(
        DLFormatError, match=r"adamupdate: grad does not match the network's learnables: it lacks fc2/Bias"
    ):
        dlf.adamupdate(net, partial, [], [], 1)


# MATLAB's LSTMLayer/BiLSTMLayer classes take a learn-rate or L2 factor as a scalar or one value per
# gate block and expand it to one value per row (repelem(factor, NumHiddenUnits)); the references
# below scale each gate's rows by its own factor, in NumPy.
GATE_RATES = {"InputWeights": [1.0, 2.0, 0.0, 0.5], "Bias": [0.0, 1.0, 3.0, 1.0]}


def recurrent_network(hidden=2, **factors):
    torch.manual_seed(1)
    lstm = dlf.lstmLayer(hidden, Name="lstm", **factors)
    return dlf.dlnetwork([dlf.sequenceInputLayer(3), lstm, dlf.fullyConnectedLayer(2)]).double()


def per_row(gates, hidden):
    return np.repeat(np.asarray(gates, dtype=np.float64), hidden)[:, None]


@pytest.mark.parametrize(
    ("update", "reference"),
    [
        pytest.param(
            lambda n, g: dlf.sgdmupdate(n, g, [], 0.1)[0],
            lambda w, g, f: numpy_sgdm(w, [g], [0.1 * f])[0],
            id="sgdm",
        ),
        pytest.param(
            lambda n, g: dlf.adamupdate(n, g, [], [], 1, 0.1)[0],
            lambda w, g, f: numpy_adam(w, [g], 0.1 * f)[0],
            id="adam",
        ),
        pytest.param(
            lambda n, g: dlf.rmspropupdate(n, g, [], 0.1)[0],
            lambda w, g, f: numpy_rmsprop(w, [g], 0.1 * f)[0],
            id="rmsprop",
        ),
    ],
)
def test_a_per_gate_learn_rate_vector_moves_each_gates_rows_by_its_own_factor(update, reference):
    hidden = 2
    net = recurrent_network(
        hidden, InputWeightsLearnRateFactor=GATE_RATES["InputWeights"], BiasLearnRateFactor=GATE_RATES["Bias"]
    )
    start = {(layer, name): value.detach().numpy().copy() for layer, name, value in net.Learnables}
    grads = network_gradients(net, 5)
    update(net, grads)
    for (layer, name, value), (_, _, g) in zip(net.Learnables, grads, strict=True):
        factor = per_row(GATE_RATES[name], hidden) if layer == "lstm" and name in GATE_RATES else 1.0
        expected = reference(start[(layer, name)], g.numpy(), factor)
        np.testing.assert_allclose(value.detach().numpy(), expected, rtol=1e-12, err_msg=f"{layer}/{name}")
    frozen = slice(2 * hidden, 3 * hidden)  # the cell-candidate rows of InputWeights: factor 0
    np.testing.assert_array_equal(
        net.Layers[1].InputWeights.detach().numpy()[frozen], start[("lstm", "InputWeights")][frozen]
    )


# trainnet's all-parameters-at-once forms of the three steps run the per-parameter steps'
# operations in the same order: the same float32 values bit for bit, over several steps, with
# learn-rate factors 0, 1 and 2 (the NumPy tests above pin the per-parameter steps to the formulas)
STEP_FORMS = [
    pytest.param(
        lambda rate, t: _solvers.sgdm_step(rate, 0.9),
        lambda w, g, s, scales, t: _solvers.sgdm_steps(w, g, s, scales, 0.9),
        1,
        id="sgdm",
    ),
    pytest.param(
        lambda rate, t: _solvers.adam_step(rate, 0.9, 0.999, 1e-3, t),
        lambda w, g, s, scales, t: _solvers.adam_steps(w, g, s, scales, 0.9, 0.999, 1e-3, t),
        2,
        id="adam",
    ),
    pytest.param(
        lambda rate, t: _solvers.rmsprop_step(rate, 0.9, 1e-3),
        lambda w, g, s, scales, t: _solvers.rmsprop_steps(w, g, s, scales, 0.9, 1e-3),
        1,
        id="rmsprop",
    ),
]


@pytest.mark.parametrize(("single", "together", "kinds"), STEP_FORMS)
def test_the_all_parameter_steps_equal_the_per_parameter_steps_bit_for_bit(single, together, kinds):
    generator = torch.Generator().manual_seed(3)
    shapes, factors, rate = [(4, 3), (4, 1), (5,)], [1.0, 0.0, 2.0], 0.05
    start = [torch.randn(shape, generator=generator) for shape in shapes]
    one = [w.clone() for w in start]
    many = [w.clone() for w in start]
    one_states = [[torch.zeros_like(w) for _ in range(kinds)] for w in start]
    many_states = [[torch.zeros_like(w) for w in start] for _ in range(kinds)]
    for t in range(1, 4):
        grads = [torch.randn(shape, generator=generator) for shape in shapes]
        _solvers.stepped(single(rate, t), one, grads, one_states, factors)
        with torch.no_grad():
            together(many, grads, many_states, [rate * f for f in factors], t)
    for index, (a, b) in enumerate(zip(one, many, strict=True)):
        assert torch.equal(a, b), index
        for kind in range(kinds):
            assert torch.equal(one_states[index][kind], many_states[kind][index]), (index, kind)
    assert torch.equal(many[1], start[1])  # factor 0: not moved


@pytest.mark.parametrize(
    ("factors", "grad_dtype", "expected"),
    [
        ([1.0, 0.5], torch.float32, True),
        ([1.0, torch.ones(4, 1)], torch.float32, False),  # per-gate rows: one parameter at a time
        ([1.0, 0.5], torch.float64, False),  # gradients of another dtype: converted per parameter
        # float16 and bfloat16 parameters: _foreach_mul_ would round the decay factors to their dtype
        ([1.0, 0.5], torch.float16, False),
        ([1.0, 0.5], torch.bfloat16, False),
    ],
)
def test_the_all_parameter_form_applies_only_to_number_factors_and_matching_gradients(
    factors, grad_dtype, expected
):
    dtype = grad_dtype if grad_dtype in (torch.float16, torch.bfloat16) else torch.float32
    parameters = [torch.zeros(4, 3, dtype=dtype), torch.zeros(4, 1, dtype=dtype)]
    grads = [torch.zeros(4, 3, dtype=grad_dtype), torch.zeros(4, 1, dtype=grad_dtype)]
    assert _solvers.together(parameters, grads, factors) is expected
