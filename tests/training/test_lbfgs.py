"""lbfgsupdate and lbfgsState against a float64 NumPy transcription of the L-BFGS iteration.

The reference (written from the documented algorithm, not from the code under test): the
direction -B⁻¹g by the two-loop recursion over the last HistorySize pairs (s, y) with
B₀⁻¹ = λI, λ₀ = InitialInverseHessianFactor and λ = sᵀy/yᵀy after each stored pair; a line
search from step 1 with c₁ = 1e-4, c₂ = 0.9 (halving for "backtracking"; bracketing with
bisection, doubling while unbounded, for the Wolfe searches); a pair stored when sᵀy > 0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat._display import Table

C1, C2 = 1e-4, 0.9


def quadratic(w):
    A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
    b = np.array([1.0, -2.0, 0.5])
    return 0.5 * w @ A @ w - b @ w, A @ w - b


def rosenbrock(w):
    x, y = w
    value = (1 - x) ** 2 + 100 * (y - x**2) ** 2
    return value, np.array([-2 * (1 - x) - 400 * x * (y - x**2), 200 * (y - x**2)])


def numpy_lbfgs(fun, w, iterations, method="weak-wolfe", history=10, factor=1.0, limit=20):
    """The iterates w₁..w_k, and each iteration's line-search status."""
    f, g = fun(w)
    steps, diffs, iterates, statuses = [], [], [], []
    for _ in range(iterations):
        q, alphas = g.copy(), []
        for s, y in reversed(list(zip(steps, diffs, strict=True))):
            rho = 1 / (y @ s)
            alpha = rho * (s @ q)
            q = q - alpha * y
            alphas.append((rho, alpha))
        r = factor * q
        for (s, y), (rho, alpha) in zip(zip(steps, diffs, strict=True), reversed(alphas), strict=True):
            r = r + s * (alpha - rho * (y @ r))
        d = -r
        slope = g @ d
        low, high, eta, found = 0.0, math.inf, 1.0, None
        for _ in range(limit):
            f_new, g_new = fun(w + eta * d)
            armijo = f_new <= f + C1 * eta * slope
            if method == "backtracking":
                if armijo:
                    found = (eta, f_new, g_new)
                    break
                eta /= 2
                continue
            new_slope = g_new @ d
            if not armijo or (method == "strong-wolfe" and new_slope > C2 * abs(slope)):
                high = eta
            elif new_slope < C2 * slope:
                low = eta
            else:
                found = (eta, f_new, g_new)
                break
            eta = (low + high) / 2 if high < math.inf else 2 * low
        if found is None:
            statuses.append("failed")
            iterates.append(w.copy())
            continue
        eta, f_new, g_new = found
        s, y = eta * d, g_new - g
        if s @ y > 0:
            steps, diffs = [*steps, s][-history:], [*diffs, y][-history:]
            factor = (s @ y) / (y @ y)
        w, f, g = w + s, f_new, g_new
        iterates.append(w.copy())
        statuses.append("completed")
    return iterates, statuses


def torch_loss(fun):
    """The loss function lbfgsupdate takes: the NumPy objective on a float64 dlarray."""

    def loss(w):
        value, gradient = fun(dlf.extractdata(w).detach().numpy())
        return dlf.dlarray(torch.tensor(value)), dlf.dlarray(torch.tensor(gradient), dlf.dims(w))

    return loss


def run(fun, w0, iterations, **options):
    w, state, iterates, statuses = dlf.dlarray(torch.tensor(w0), "C"), None, [], []
    history = {k: options.pop(k) for k in ("HistorySize", "InitialInverseHessianFactor") if k in options}
    state = dlf.lbfgsState(**history) if history else None
    for _ in range(iterations):
        w, state = dlf.lbfgsupdate(w, torch_loss(fun), state, **options)
        iterates.append(dlf.extractdata(w).numpy().copy())
        statuses.append(state.LineSearchStatus)
    return iterates, statuses, state


@pytest.mark.parametrize("method", ["weak-wolfe", "strong-wolfe", "backtracking"])
@pytest.mark.parametrize(
    ("fun", "w0", "iterations"),
    [(quadratic, np.array([2.0, -1.0, 0.5]), 6), (rosenbrock, np.array([-1.2, 1.0]), 12)],
)
def test_the_iterates_match_the_reference(method, fun, w0, iterations):
    got, statuses, state = run(fun, w0, iterations, LineSearchMethod=method)
    expected, expected_statuses = numpy_lbfgs(fun, w0, iterations, method)
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-12, atol=1e-14)
    assert statuses == expected_statuses
    assert state.Iteration == iterations and state.LineSearchMethod == method


@pytest.mark.parametrize(("history", "factor"), [(2, 1.0), (10, 0.05)])
def test_history_size_and_initial_factor(history, factor):
    w0 = np.array([-1.2, 1.0])
    got, _, state = run(rosenbrock, w0, 8, HistorySize=history, InitialInverseHessianFactor=factor)
    expected, _ = numpy_lbfgs(rosenbrock, w0, 8, history=history, factor=factor)
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-12, atol=1e-14)
    assert len(state.StepHistory) == len(state.GradientsDifferenceHistory) == len(state.HistoryIndices)
    assert len(state.StepHistory) <= history and state.HistoryIndices == sorted(state.HistoryIndices)


@pytest.mark.parametrize(
    ("fun", "w0", "minimum"),
    [
        (quadratic, np.array([2.0, -1.0, 0.5]), None),
        (rosenbrock, np.array([-1.2, 1.0]), np.array([1.0, 1.0])),
    ],
)
def test_it_converges(fun, w0, minimum):
    if minimum is None:  # the quadratic's minimum solves A w = b
        minimum = np.linalg.solve(
            np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]]), [1.0, -2.0, 0.5]
        )
    got, _, state = run(fun, w0, 60)
    np.testing.assert_allclose(got[-1], minimum, atol=1e-6)
    assert state.GradientsNorm < 1e-5


def test_the_state_after_one_step():
    w0 = np.array([2.0, -1.0, 0.5])
    (w1,), _, state = run(quadratic, w0, 1)
    f1, g1 = quadratic(w1)
    _, g0 = quadratic(w0)
    assert state.Iteration == 1 and state.HistoryIndices == [1] and state.LineSearchStatus == "completed"
    assert float(dlf.extractdata(state.Loss)) == pytest.approx(f1, rel=1e-14)
    np.testing.assert_allclose(dlf.extractdata(state.Gradients).numpy(), g1, rtol=1e-13)
    s, y = w1 - w0, g1 - g0
    np.testing.assert_allclose(dlf.extractdata(state.StepHistory[0]).numpy(), s, rtol=1e-13)
    np.testing.assert_allclose(dlf.extractdata(state.GradientsDifferenceHistory[0]).numpy(), y, rtol=1e-13)
    assert state.InverseHessianFactor == pytest.approx((s @ y) / (y @ y), rel=1e-13)
    assert state.StepNorm == pytest.approx(np.linalg.norm(s), rel=1e-13)
    assert state.GradientsNorm == pytest.approx(np.linalg.norm(g1), rel=1e-13)
    assert dlf.dims(state.StepHistory[0]) == "C"


def test_a_network_and_its_learnables_table():
    torch.manual_seed(0)
    net = dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)])
    net.to(torch.float64)
    X = dlf.dlarray(torch.tensor([[0.0, 1.0, 2.0, -1.0], [1.0, -1.0, 0.5, 2.0]], dtype=torch.float64), "CB")
    T = dlf.dlarray(torch.tensor([[1.0, -2.0, 0.0, 3.0]], dtype=torch.float64), "CB")

    def model_loss(network):
        loss = dlf.mse(dlf.forward(network, X), T)
        return loss, dlf.dlgradient(loss, network.Learnables)

    def lbfgs_loss(network):
        return dlf.dlfeval(model_loss, network)

    start = torch.cat([value.detach().reshape(-1).clone() for _, _, value in net.Learnables])
    first = float(dlf.extractdata(lbfgs_loss(net)[0]))
    state = None
    for _ in range(5):
        updated, state = dlf.lbfgsupdate(net, lbfgs_loss, state)
        assert updated is net  # updated in place, as the other solver functions do
    assert float(dlf.extractdata(state.Loss)) < first / 10
    layers = [row[:2] for row in state.Gradients.rows]
    assert layers == [row[:2] for row in net.Learnables.rows] and state.Gradients.columns == (
        "Layer",
        "Parameter",
        "Value",
    )
    assert not torch.equal(start, torch.cat([value.detach().reshape(-1) for _, _, value in net.Learnables]))


@pytest.mark.parametrize(
    ("layers", "refused"),
    [
        ([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1, WeightLearnRateFactor=0)], "fc/Weights"),
        (  # a per-gate vector (applied as one value per row)
            [dlf.sequenceInputLayer(2), dlf.lstmLayer(3, InputWeightsLearnRateFactor=[1, 2, 1, 1])],
            "lstm/InputWeights",
        ),
    ],
)
def test_learn_rate_factors_other_than_one_are_refused(layers, refused):
    net = dlf.dlnetwork(layers)
    with pytest.raises(DLFormatError, match=rf"learn-rate factors other than 1 \({refused}\)"):
        dlf.lbfgsupdate(net, lambda n: (0.0, n.Learnables), None)


def test_per_gate_factors_of_one_are_accepted():
    net = dlf.dlnetwork(
        [dlf.sequenceInputLayer(2), dlf.lstmLayer(3, InputWeightsLearnRateFactor=[1, 1, 1, 1])]
    )
    gradients = dlf.dlupdate(lambda v: torch.zeros_like(v), net.Learnables)
    _, state = dlf.lbfgsupdate(net, lambda n: (1.0, gradients), None)
    assert state.LineSearchStatus == "failed" and state.GradientsNorm == 0  # no descent from a zero gradient


def test_a_dict_of_parameters_and_extra_outputs():
    params = {"a": torch.tensor([0.0], dtype=torch.float64), "b": torch.tensor([4.0], dtype=torch.float64)}

    def loss(p):
        value = (p["a"] - 1) ** 2 + (p["b"] + 2) ** 2
        return value.sum(), {"a": 2 * (p["a"] - 1), "b": 2 * (p["b"] + 2)}, "extra"

    updated, state = dlf.lbfgsupdate(params, loss, [], NumLossFunctionOutputs=3)
    assert set(updated) == {"a", "b"} and params["a"].item() == 0.0  # a new container
    assert updated["a"].item() == pytest.approx(1.0) and updated["b"].item() == pytest.approx(-2.0)
    assert state.AdditionalLossFunctionOutputs == ("extra",)


def test_a_failed_line_search_keeps_the_parameters():
    # the gradient points the wrong way: no step along -g decreases the loss
    def loss(w):
        return dlf.dlarray((w**2).sum()), -2 * w

    w0 = torch.tensor([1.0, 2.0], dtype=torch.float64)
    w, state = dlf.lbfgsupdate(w0, loss, None, MaxNumLineSearchIterations=3)
    assert torch.equal(w, w0) and state.LineSearchStatus == "failed" and state.StepNorm == 0
    assert state.MaxNumLineSearchIterations == 3 and state.StepHistory == []


@pytest.mark.parametrize(
    ("trial", "error", "message"),
    [
        (RuntimeError("stopped in the loss"), RuntimeError, "stopped in the loss"),
        ("wrong size", DLFormatError, "has size 3"),
    ],
)
def test_an_error_in_the_line_search_leaves_the_network_as_it_was(trial, error, message):
    # the line search writes trial points into the network: an error there must not leave one behind
    torch.manual_seed(0)
    net = dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)])
    start = [value.detach().clone() for _, _, value in net.Learnables]
    calls = []

    def loss(network):
        calls.append(1)
        values = [value.detach() for _, _, value in network.Learnables]
        gradients = dlf.dlupdate(lambda v: 2 * v.detach(), network.Learnables)
        if len(calls) > 1:  # the first trial point of the line search
            if isinstance(trial, Exception):
                raise trial
            gradients = Table(
                gradients.columns, [(*gradients.rows[0][:2], torch.ones(3)), *gradients.rows[1:]]
            )
        return 1.0 + float(sum((v**2).sum() for v in values)), gradients

    with pytest.raises(error, match=message):
        dlf.lbfgsupdate(net, loss, None)
    assert len(calls) == 2
    for before, (_, _, value) in zip(start, net.Learnables, strict=True):
        assert torch.equal(before, value.detach())


def test_the_state_display_and_read_only_properties():
    state = dlf.lbfgsState("HistorySize", 4, InitialInverseHessianFactor=0.5)
    shown = repr(state)
    for name in ("HistorySize: 4", "InitialInverseHessianFactor: 0.5", 'LineSearchStatus: ""', "Loss: []"):
        assert name in shown
    with pytest.raises(DLFormatError, match="HistorySize is read-only"):
        state.HistorySize = 3
    with pytest.raises(DLFormatError, match="no property 'Foo'"):
        state.Foo = 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dlf.lbfgsState(HistorySize=0), "HistorySize"),
        (lambda: dlf.lbfgsState(InitialInverseHessianFactor=-1), "InitialInverseHessianFactor"),
        (lambda: dlf.lbfgsState(Size=3), "'Size' is not an option"),
        (
            lambda: dlf.lbfgsupdate(torch.ones(2), torch_loss(quadratic), None, LineSearchMethod="exact"),
            "LineSearchMethod",
        ),
        (
            lambda: dlf.lbfgsupdate(torch.ones(2), torch_loss(quadratic), None, MaxNumLineSearchIterations=0),
            "MaxNumLineSearchIterations",
        ),
        (lambda: dlf.lbfgsupdate(torch.ones(2), torch_loss(quadratic), "state"), "solverState must be"),
        (lambda: dlf.lbfgsupdate(torch.ones(2), "loss", None), "loss function"),
        (lambda: dlf.lbfgsupdate(torch.ones(2), lambda w: w.sum(), None), "must return 2 outputs"),
        (lambda: dlf.lbfgsupdate(torch.ones(2), lambda w: (w, w), None), "scalar loss"),
        (lambda: dlf.lbfgsupdate(torch.ones(2), lambda w: (w.sum(), torch.ones(3)), None), "has size 3"),
        (lambda: dlf.lbfgsupdate([torch.ones(2)], lambda w: (w[0].sum(), torch.ones(2)), None), "arranged"),
    ],
)
def test_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


def test_a_learnables_table_of_dlarrays_matches_the_reference():
    # least squares for y = W x + b, parameters in a Learnables-style table, loss through dlfeval
    rng = np.random.default_rng(0)
    X, T = rng.standard_normal((2, 10)), rng.standard_normal((1, 10))

    def reference(w):  # w = [W1 W2 b]
        residual = w[:2] @ X + w[2] - T[0]
        return np.mean(residual**2), 2 / 10 * np.concatenate([X @ residual, [residual.sum()]])

    def model_loss(params):
        W, b = params.rows[0][2], params.rows[1][2]
        Y = dlf.stripdims(W) @ torch.tensor(X) + dlf.stripdims(b)
        loss = dlf.dlarray(((Y - torch.tensor(T)) ** 2).mean())
        return loss, dlf.dlgradient(loss, params)

    w0 = np.array([0.5, -1.0, 0.2])
    params = Table(
        ("Layer", "Parameter", "Value"),
        [
            ("fc", "Weights", dlf.dlarray(torch.tensor(w0[None, :2]))),
            ("fc", "Bias", dlf.dlarray(torch.tensor(w0[2:]))),
        ],
    )
    state, got = None, []
    for _ in range(4):
        params, state = dlf.lbfgsupdate(
            params, lambda p: dlf.dlfeval(model_loss, p), state, "LineSearchMethod", "strong-wolfe"
        )
        assert params.columns == ("Layer", "Parameter", "Value") and [row[:2] for row in params.rows] == [
            ("fc", "Weights"),
            ("fc", "Bias"),
        ]
        got.append(np.concatenate([dlf.extractdata(row[2]).numpy().ravel() for row in params.rows]))
    expected, _ = numpy_lbfgs(reference, w0, 4, "strong-wolfe")
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-12, atol=1e-14)
    assert isinstance(state.StepHistory[0], Table) and isinstance(state.Gradients, Table)
