"""dljacobian, dldivergence and dllaplacian against analytic derivatives, per point along the
other dimensions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

X0 = np.array([[0.5, -1.0, 2.0, 1.5], [2.0, 0.25, -0.5, 3.0]])  # 2 components x 4 points


def field(x):
    # u = [x1*x2; sin(x1); x2^3] at every point (column)
    x1, x2 = x[0:1, :], x[1:2, :]
    return dlf.cat(1, x1 * x2, dlf.sin(x1), x2**3)


def analytic_jacobian(x):
    x1, x2 = x
    zeros = np.zeros_like(x1)
    # [i, n, j] = du_i(n)/dx_j(n)
    rows = [np.stack([x2, x1], -1), np.stack([np.cos(x1), zeros], -1), np.stack([zeros, 3 * x2**2], -1)]
    return np.stack(rows, 0)


def evaluate(function, x=X0):
    return dlf.dlfeval(function, dlf.dlarray(torch.tensor(x)))


def test_the_jacobian_of_a_vector_field_per_point():
    jac = evaluate(lambda x: dlf.dljacobian(field(x), x, 1))
    assert dlf.dims(jac) == "" and tuple(jac.shape) == (3, 4, 2)
    np.testing.assert_allclose(dlf.extractdata(jac).detach().numpy(), analytic_jacobian(X0), rtol=1e-15)


def test_points_along_the_first_dimension():
    # operation dimension 2: rows are points, columns components
    jac = evaluate(lambda x: dlf.dljacobian(dlf.transpose(field(dlf.transpose(x))), x, 2), X0.T)
    expected = analytic_jacobian(X0).transpose(1, 0, 2)  # [n, i, j]
    np.testing.assert_allclose(dlf.extractdata(jac).detach().numpy(), expected, rtol=1e-15)


def test_a_scalar_field_gives_u_sized_derivatives_and_second_derivatives():
    # MathWorks' physics-informed pattern: Ux = dljacobian(U, X, 1), Uxx = dljacobian(Ux, X, 1)
    x = np.array([[0.1, 0.7, -1.2, 2.0]])

    def derivatives(X):
        U = dlf.sin(X) * X**2
        Ux = dlf.dljacobian(U, X, 1)
        return Ux, dlf.dljacobian(Ux, X, 1)

    Ux, Uxx = evaluate(derivatives, x)
    assert tuple(Ux.shape) == tuple(Uxx.shape) == (1, 4)
    np.testing.assert_allclose(
        dlf.extractdata(Ux).detach().numpy(), np.cos(x) * x**2 + 2 * x * np.sin(x), rtol=1e-14
    )
    second = -np.sin(x) * x**2 + 4 * x * np.cos(x) + 2 * np.sin(x)
    np.testing.assert_allclose(dlf.extractdata(Uxx).detach().numpy(), second, rtol=1e-14)


def test_the_divergence_and_a_loss_built_from_it_differentiates():
    # u = w * [x1^2; x1*x2]: div = w*(2*x1 + x1) = 3*w*x1; loss = sum(div) -> dloss/dw = 3*sum(x1)
    w0 = torch.tensor(2.0, dtype=torch.float64)

    def model_loss(x, w):
        u = w * dlf.cat(1, x[0:1, :] ** 2, x[0:1, :] * x[1:2, :])
        div = dlf.dldivergence(u, x, 1)
        loss = dlf.sum(div, "all")
        return div, dlf.dlgradient(loss, w)

    div, grad = dlf.dlfeval(model_loss, dlf.dlarray(torch.tensor(X0)), dlf.dlarray(w0))
    assert tuple(div.shape) == (1, 4)
    np.testing.assert_allclose(dlf.extractdata(div).detach().numpy(), 3 * 2.0 * X0[0:1], rtol=1e-15)
    assert dlf.extractdata(grad).item() == pytest.approx(3 * X0[0].sum(), rel=1e-15)


def test_a_component_u_does_not_depend_on_gives_zeros():
    jac = evaluate(lambda x: dlf.dljacobian(x[0:1, :] * 2, x, 1))
    expected = np.stack([np.full(4, 2.0), np.zeros(4)], -1)[None]  # [1, 4, 2]
    np.testing.assert_array_equal(dlf.extractdata(jac).detach().numpy(), expected)


def test_the_laplacian_of_a_scalar_field_per_point():
    # u = sum_j x_j^3 (one component): lap = sum_j 6 x_j, u's size 1x4 (MathWorks' example layout)
    lap = evaluate(lambda x: dlf.dllaplacian(dlf.sum(x**3, 1), x, 1))
    assert dlf.dims(lap) == "" and tuple(lap.shape) == (1, 4)
    np.testing.assert_allclose(
        dlf.extractdata(lap).detach().numpy(), 6 * X0.sum(0, keepdims=True), rtol=1e-15
    )


def test_the_laplacian_of_each_component_and_along_the_second_dimension():
    # u = [x1^2 x2; sin(x1) + x2^3]: lap = [2 x2; -sin(x1) + 6 x2]
    def u_of(x):
        x1, x2 = x[0:1, :], x[1:2, :]
        return dlf.cat(1, x1**2 * x2, dlf.sin(x1) + x2**3)

    x1, x2 = X0
    expected = np.stack([2 * x2, -np.sin(x1) + 6 * x2])
    lap = evaluate(lambda x: dlf.dllaplacian(u_of(x), x, 1))
    np.testing.assert_allclose(dlf.extractdata(lap).detach().numpy(), expected, rtol=1e-14)
    transposed = evaluate(lambda x: dlf.dllaplacian(dlf.transpose(u_of(dlf.transpose(x))), x, 2), X0.T)
    np.testing.assert_allclose(dlf.extractdata(transposed).detach().numpy(), expected.T, rtol=1e-14)


def test_the_laplacian_of_a_linear_field_and_higher_derivatives():
    lap = evaluate(lambda x: dlf.dllaplacian(x * 3, x, 1))
    np.testing.assert_array_equal(dlf.extractdata(lap).detach().numpy(), np.zeros_like(X0))

    # lap(sum_j x_j^3) = 6 sum_j x_j per point: its sum over points has gradient 6 everywhere
    def gradient_of_laplacian(x, higher=True):
        lap = dlf.dllaplacian(dlf.sum(x**3, 1), x, 1, EnableHigherDerivatives=higher)
        return dlf.dlgradient(dlf.sum(lap, "all"), x)

    np.testing.assert_array_equal(
        dlf.extractdata(evaluate(gradient_of_laplacian)).numpy(), np.full_like(X0, 6.0)
    )
    with pytest.raises(DLFormatError, match="not traced"):
        evaluate(lambda x: gradient_of_laplacian(x, higher=False))


def call(function, x=None):
    x = dlf.dlarray(torch.tensor(X0)) if x is None else x
    return dlf.dlfeval(function, x)


@pytest.mark.parametrize(
    ("function", "match"),
    [
        (
            lambda x: dlf.dljacobian(dlf.dlarray(x, "CB"), x, 1),
            'u must be an unformatted dlarray; got format "CB"',
        ),
        (lambda x: dlf.dljacobian(x * 2, x, 0), "dljacobian dim must be a positive integer; got 0"),
        (lambda x: dlf.dljacobian(x * 2, x, 3), "dljacobian dim must be at most 2"),
        (
            lambda x: dlf.dljacobian(x[:, 0:2], x, 1),
            "must have the same sizes in every dimension but the operation dimension 1",
        ),
        (
            lambda x: dlf.dljacobian(x * 2, dlf.dlarray(torch.ones(2, 4, dtype=torch.float64)), 1),
            "x is not traced",
        ),
        (
            lambda x: dlf.dldivergence(x[0:1, :], x, 1),
            "same size along the operation dimension 1; got 1 and 2",
        ),
        (lambda x: dlf.dljacobian(3, x, 1), "dljacobian: u must be a dlarray"),
        (
            lambda x: dlf.dllaplacian(dlf.dlarray(x, "CB"), x, 1),
            'dllaplacian: u must be an unformatted dlarray; got format "CB"',
        ),
        (lambda x: dlf.dllaplacian(x[:, 0:2], x, 1), "must have the same sizes"),
    ],
)
def test_bad_input_is_refused(function, match):
    with pytest.raises(DLFormatError, match=match):
        call(function)


def test_outside_dlfeval_is_refused():
    x = dlf.dlarray(torch.tensor(X0, requires_grad=True))
    with pytest.raises(
        DLFormatError, match="dljacobian must be called inside a function evaluated by dlfeval"
    ):
        dlf.dljacobian(x * 2, x, 1)
