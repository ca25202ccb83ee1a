"""dlode45 against analytic solutions (exp(-kt), expm(At)), scipy's RK45 at the same tolerances,
analytic gradients (direct mode), the output layout and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from scipy.integrate import solve_ivp

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError

A = np.array([[-0.5, 1.0], [-1.0, -0.2]])
TIMES = [0.0, 0.5, 1.3, 2.0]


def decay(t, y, k):
    return -k * y


def linear(t, y, theta):
    return dlf.dlarray(theta @ dlf.stripdims(y), dlf.dims(y))


def data(values):
    return torch.tensor(values, dtype=torch.float64)


@pytest.mark.parametrize(("rtol", "atol", "agree"), [(1e-3, 1e-6, 5e-3), (1e-9, 1e-12, 1e-8)])
def test_exponential_decay_matches_the_solution_and_scipy(rtol, atol, agree):
    y0 = np.array([[1.0, 2.0, -0.5]])  # 1 channel, 3 observations
    Y = dlf.dlode45(
        decay, TIMES, dlf.dlarray(data(y0), "CB"), 0.7, RelativeTolerance=rtol, AbsoluteTolerance=atol
    )
    got = dlf.extractdata(Y).numpy()
    exact = y0[..., None] * np.exp(-0.7 * np.array(TIMES[1:]))
    reference = solve_ivp(
        lambda t, y: -0.7 * y, TIMES[::3], y0.ravel(), "RK45", TIMES[1:], rtol=rtol, atol=atol
    )
    np.testing.assert_allclose(got, exact, rtol=agree)
    np.testing.assert_allclose(got.reshape(3, -1), reference.y, rtol=agree)


def test_a_linear_system_matches_the_matrix_exponential():
    y0 = np.array([[1.0, 0.0], [0.5, -2.0]])  # 2 channels x 2 observations
    Y = dlf.dlode45(
        linear, TIMES, dlf.dlarray(data(y0), "CB"), data(A), RelativeTolerance=1e-10, AbsoluteTolerance=1e-12
    )
    expected = np.stack([scipy.linalg.expm(A * t) @ y0 for t in TIMES[1:]], -1)
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (2, 2, 3)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("mode", ["direct", "adjoint"])
def test_gradients_match_the_analytic_derivatives(mode):
    t = np.array(TIMES[1:])

    def loss(k, y0):
        Y = dlf.dlode45(
            decay, TIMES, y0, k, RelativeTolerance=1e-10, AbsoluteTolerance=1e-12, GradientMode=mode
        )
        total = dlf.stripdims(Y).sum()
        return dlf.dlgradient(dlf.dlarray(total), k, y0)

    k, y0 = dlf.dlarray(data(0.7)), dlf.dlarray(data([[2.0]]), "CB")
    dk, dy0 = dlf.dlfeval(loss, k, y0)
    # d/dk sum_t y0 exp(-k t) = -y0 sum t exp(-k t); d/dy0 = sum exp(-k t)
    assert float(dlf.extractdata(dk)) == pytest.approx(-2.0 * np.sum(t * np.exp(-0.7 * t)), rel=1e-7)
    assert float(dlf.extractdata(dy0)) == pytest.approx(np.sum(np.exp(-0.7 * t)), rel=1e-7)


@pytest.mark.parametrize("mode", ["direct", "adjoint"])
def test_a_slope_of_time_alone_has_the_identity_as_its_derivative(mode):
    # y' = cos t: y(t) = y0 + sin t, so d(sum over the output times of y)/dy0 = the number of times
    y0 = np.array([[0.5], [-1.0]])

    def odefun(t, y, theta):
        return dlf.dlarray(torch.full((2, 1), np.cos(t), dtype=torch.float64), "CB")

    def loss(Y0):
        Y = dlf.dlode45(odefun, TIMES, Y0, None, GradientMode=mode, RelativeTolerance=1e-9,
                        AbsoluteTolerance=1e-12)  # fmt: skip
        return Y, dlf.dlgradient(dlf.dlarray(dlf.stripdims(Y).sum()), Y0)

    Y, gradient = dlf.dlfeval(loss, dlf.dlarray(data(y0), "CB"))
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), y0[..., None] + np.sin(TIMES[1:]), rtol=1e-7)
    np.testing.assert_allclose(
        dlf.extractdata(gradient).numpy(), np.full((2, 1), len(TIMES) - 1.0), rtol=1e-12
    )


def test_adjoint_gradients_of_a_linear_system_match_the_matrix_exponential():
    # L = sum_k w_k · y(t_k), y(t) = expm(A t) y0: dL/dy0 = sum_k expm(A t_k)ᵀ w_k, and dL/dA by
    # the derivative of the matrix exponential (the block-matrix identity, Van Loan)
    y0, weights = np.array([[1.0], [-0.5]]), np.array([[0.3, -1.0, 2.0], [1.5, 0.2, -0.7]])

    def loss(theta, Y0):
        Y = dlf.dlode45(
            linear, TIMES, Y0, theta, GradientMode="adjoint", RelativeTolerance=1e-10, AbsoluteTolerance=1e-12
        )
        total = (dlf.stripdims(Y)[:, 0, :] * torch.tensor(weights)).sum()
        return dlf.dlgradient(dlf.dlarray(total), theta, Y0)

    dA, dy0 = dlf.dlfeval(loss, dlf.dlarray(data(A)), dlf.dlarray(data(y0), "CB"))
    expected_y0 = sum(scipy.linalg.expm(A * t).T @ weights[:, [k]] for k, t in enumerate(TIMES[1:]))
    expected_A = np.zeros((2, 2))
    for k, t in enumerate(TIMES[1:]):
        block = scipy.linalg.expm(np.block([[A.T, weights[:, [k]] @ y0.T], [np.zeros((2, 2)), A.T]]) * t)
        expected_A += block[:2, 2:]  # ∫₀ᵗ expm(Aᵀ(t−s)) w y0ᵀ expm(Aᵀs) ds
    np.testing.assert_allclose(dlf.extractdata(dy0).numpy(), expected_y0, rtol=1e-7)
    np.testing.assert_allclose(dlf.extractdata(dA).numpy(), expected_A, rtol=1e-7)


def test_adjoint_and_direct_agree_on_a_neural_ode_with_a_dict_of_learnables():
    def odefun(t, y, theta):
        return dlf.tanh(dlf.functional.fullyconnect(y, theta["W"], theta["b"])) - 0.1 * y

    torch.manual_seed(0)
    theta = {
        "W": dlf.dlarray(torch.randn(3, 3, dtype=torch.float64)),
        "b": dlf.dlarray(torch.randn(3, 1, dtype=torch.float64)),
    }
    Y0 = dlf.dlarray(torch.randn(3, 4, dtype=torch.float64), "CB")

    def gradients(theta, Y0, mode):
        Y = dlf.dlode45(
            odefun, TIMES, Y0, theta, GradientMode=mode, RelativeTolerance=1e-9, AbsoluteTolerance=1e-11
        )
        total = dlf.sum(dlf.stripdims(Y) ** 2, "all")
        return dlf.dlgradient(total, theta, Y0)

    direct = dlf.dlfeval(gradients, theta, Y0, "direct")
    adjoint = dlf.dlfeval(gradients, theta, Y0, "adjoint")
    for got, expected in [
        (adjoint[0]["W"], direct[0]["W"]),
        (adjoint[0]["b"], direct[0]["b"]),
        (adjoint[1], direct[1]),
    ]:
        np.testing.assert_allclose(
            dlf.extractdata(got).numpy(), dlf.extractdata(expected).numpy(), rtol=1e-6, atol=1e-9
        )
    assert dlf.dims(adjoint[1]) == "CB"


@pytest.mark.parametrize("data_format", ["CB", "BC"])
def test_unformatted_data_in_either_order_matches_the_matrix_exponential(data_format):
    # odefun mixes the channels with a channel-aware function: it must see the channels as "C"
    y0 = np.array([[1.0, 0.0, 2.0], [0.5, -2.0, 1.0]])  # 2 channels x 3 observations
    given = y0 if data_format == "CB" else y0.T

    def odefun(t, y, theta):
        return F.fullyconnect(y, theta, torch.zeros(2, dtype=torch.float64))

    Y = dlf.dlode45(
        odefun,
        TIMES,
        dlf.dlarray(data(given)),
        data(A),
        DataFormat=data_format,
        RelativeTolerance=1e-10,
        AbsoluteTolerance=1e-12,
    )
    expected = np.stack([scipy.linalg.expm(A * t) @ y0 for t in TIMES[1:]], -1)  # C x B x T
    if data_format == "BC":
        expected = expected.transpose(1, 0, 2)  # the caller's order, time last
    assert dlf.dims(Y) == "" and tuple(Y.shape) == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    ("y0", "fmt", "options", "out_fmt", "out_shape"),
    [
        (np.ones((2, 3)), "CB", {}, "CBT", (2, 3, 3)),
        (np.ones((4, 5, 2, 3)), "SSCB", {}, "SSCBT", (4, 5, 2, 3, 3)),
        (np.ones((2, 3)), None, {"DataFormat": "CB"}, "", (2, 3, 3)),
        (np.ones((3, 2)), None, {"DataFormat": "BC"}, "", (3, 2, 3)),
    ],
)
def test_the_time_dimension_is_appended(y0, fmt, options, out_fmt, out_shape):
    seen = []

    def odefun(t, y, k):
        seen.append(dlf.dims(y))
        return -k * y

    Y0 = dlf.dlarray(data(y0), fmt) if fmt else dlf.dlarray(data(y0))
    Y = dlf.dlode45(odefun, TIMES, Y0, 1.0, **options)
    assert dlf.dims(Y) == out_fmt and tuple(Y.shape) == out_shape
    assert set(seen) == {dlf.dims(dlf.dlarray(data(y0), fmt or options["DataFormat"]))}  # Y0's labels
    np.testing.assert_allclose(dlf.extractdata(Y).numpy()[..., -1], np.exp(-2.0) * y0, rtol=5e-3)


def test_two_times_and_decreasing_times():
    Y0 = dlf.dlarray(data([[1.0]]), "CB")
    Y = dlf.dlode45(decay, [0.0, 1.0], Y0, 1.0, RelativeTolerance=1e-9)
    assert tuple(Y.shape) == (1, 1, 1) and float(dlf.extractdata(Y)) == pytest.approx(np.exp(-1.0), rel=1e-8)
    back = dlf.dlode45(decay, [1.0, 0.0], Y0, 1.0, RelativeTolerance=1e-9)
    assert float(dlf.extractdata(back)) == pytest.approx(np.exp(1.0), rel=1e-8)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda y: dlf.dlode45(decay, TIMES, y, 1.0, GradientMode="fast"), "GradientMode"),
        (lambda y: dlf.dlode45(decay, TIMES, y, 1.0, DataFormat="CB"), "only for unformatted"),
        (lambda y: dlf.dlode45(decay, TIMES, dlf.stripdims(y), 1.0), "give its dimension labels"),
        (lambda y: dlf.dlode45(decay, TIMES, dlf.stripdims(y), 1.0, DataFormat="CBT"), "one label"),
        (lambda y: dlf.dlode45(decay, TIMES, dlf.stripdims(y), 1.0, DataFormat="CT"), "time"),
        (lambda y: dlf.dlode45(decay, [0.0], y, 1.0), "at least two"),
        (lambda y: dlf.dlode45(decay, [0.0, 1.0, 0.5], y, 1.0), "strictly increasing"),
        (lambda y: dlf.dlode45(decay, "now", y, 1.0), "tspan"),
        (lambda y: dlf.dlode45(decay, TIMES, y, 1.0, RelativeTolerance=0), "RelativeTolerance"),
        (lambda y: dlf.dlode45(decay, TIMES, y, 1.0, AbsoluteTolerance=-1), "AbsoluteTolerance"),
        (lambda y: dlf.dlode45(lambda t, y, k: dlf.stripdims(y)[:1], TIMES, y, 1.0), "must return an array"),
        (lambda y: dlf.dlode45("f", TIMES, y, 1.0), "ODE function"),
        (
            lambda y: dlf.dlode45(lambda t, y, k: y * float("nan"), TIMES, y, 1.0),
            "unable to meet the tolerances",
        ),
        (lambda y: dlf.dlode45(lambda t, y, k: y**2, TIMES, y, 1.0), "unable to meet the tolerances"),
    ],
)
def test_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call(dlf.dlarray(data([[1.0, 2.0], [3.0, 4.0]]), "CB"))
