"""dlfeval, dlgradient and dlupdate: MATLAB's custom-training-loop calls, their containers and errors."""

from __future__ import annotations

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def test_gradients_of_learnables_match_torch_autograd():
    torch.manual_seed(1)
    net = dlf.dlnetwork([dlf.featureInputLayer(4), dlf.fullyConnectedLayer(3), dlf.softmaxLayer()])
    X = dlf.dlarray(torch.randn(4, 5), "CB")
    T = dlf.dlarray(torch.eye(3)[:, [0, 1, 2, 1, 0]], "CB")

    def model_loss(net, X, T):
        loss = dlf.crossentropy(dlf.forward(net, X), T)
        return loss, dlf.dlgradient(loss, net.Learnables)

    _loss, grads = dlf.dlfeval(model_loss, net, X, T)
    expected = torch.autograd.grad(
        dlf.stripdims(dlf.crossentropy(dlf.forward(net, X), T)), [row[2] for row in net.Learnables]
    )
    for (_, _, gradient), reference in zip(grads, expected, strict=True):
        torch.testing.assert_close(gradient, reference)
        assert not gradient.requires_grad


def test_dlfeval_traces_dlarray_arguments_and_returns_what_the_function_returns():
    x = dlf.dlarray(torch.tensor([1.0, 2.0, 3.0]), "CB")

    def f(x, scale):
        y = dlf.dlarray(dlf.stripdims(x * x).sum() * scale)
        return y, dlf.dlgradient(y, x)

    _y, gradient = dlf.dlfeval(f, x, 2.0)
    assert dlf.dims(gradient) == "CB" and dlf.extractdata(gradient).tolist() == [[4.0], [8.0], [12.0]]
    assert not x.requires_grad  # the caller's array is not changed
    assert dlf.dlfeval(lambda: 5) == 5


def test_gradients_come_back_in_the_containers_of_the_variables():
    params = {
        "W": dlf.dlarray(torch.randn(2, 3), "CU"),
        "b": [torch.zeros(2, requires_grad=True)],
        "unused": dlf.dlarray(torch.ones(1)),
    }

    def f(params, x):
        y = torch.tanh(dlf.stripdims(params["W"]) @ x + params["b"][0]).sum()
        return dlf.dlgradient(y, params, RetainData=True), dlf.dlgradient(y, params["W"], (params["b"][0],))

    x = torch.randn(3)
    grads, (gW, (gb,)) = dlf.dlfeval(f, params, x)
    assert set(grads) == {"W", "b", "unused"} and isinstance(grads["b"], list)
    assert dlf.dims(grads["W"]) == "CU" and torch.equal(dlf.extractdata(grads["unused"]), torch.zeros(1))
    torch.testing.assert_close(dlf.extractdata(gW), dlf.extractdata(grads["W"]))
    torch.testing.assert_close(gb, grads["b"][0])


def test_retain_data_and_higher_derivatives():
    def once(x):
        y = dlf.dlarray((dlf.stripdims(x) ** 3).sum())
        first = dlf.dlgradient(y, x, RetainData=True)
        again = dlf.dlgradient(y, x)
        return first, again

    x = dlf.dlarray(torch.tensor([2.0]), "C")
    first, again = dlf.dlfeval(once, x)
    assert dlf.extractdata(first).item() == dlf.extractdata(again).item() == 12.0

    def twice(x):
        y = dlf.dlarray((dlf.stripdims(x) ** 3).sum())
        (g,) = (dlf.dlgradient(y, x, EnableHigherDerivatives=True),)
        return dlf.dlgradient(dlf.dlarray(dlf.stripdims(g).sum()), x)

    assert dlf.extractdata(dlf.dlfeval(twice, x)).item() == 12.0  # d²(x³)/dx² = 6x

    def without_retain(x):
        y = dlf.dlarray((dlf.stripdims(x) ** 3).sum())
        dlf.dlgradient(y, x)
        return dlf.dlgradient(y, x)

    with pytest.raises(
        DLFormatError,
        match=r"dlgradient: the trace was already used by an earlier dlgradient call; pass RetainData=True",
    ):
        dlf.dlfeval(without_retain, x)


def test_dlupdate_on_containers_tables_and_networks():
    params = {"W": dlf.dlarray(torch.ones(2, 2), "CU"), "b": torch.zeros(2)}
    grads = {"W": dlf.dlarray(torch.full((2, 2), 0.5), "CU"), "b": torch.ones(2)}
    regularized = dlf.dlupdate(lambda g, w: g + 0.01 * w, grads, params)  # MathWorks' L2 example
    assert dlf.dims(regularized["W"]) == "CU"
    torch.testing.assert_close(dlf.extractdata(regularized["W"]), torch.full((2, 2), 0.51))
    assert torch.equal(dlf.extractdata(grads["W"]), torch.full((2, 2), 0.5))  # inputs unchanged

    net = dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(2)])
    table = net.Learnables
    doubled = dlf.dlupdate(lambda w: 2 * w, table)
    assert [row[:2] for row in doubled] == [row[:2] for row in table]
    weights = net.Learnables[0][2].detach().clone()
    same, norms = dlf.dlupdate(lambda w: (w * 0.5, w.norm()), net)
    assert same is net
    torch.testing.assert_close(net.Learnables[0][2].detach(), weights * 0.5)
    assert [row[:2] for row in norms] == [("fc", "Weights"), ("fc", "Bias")]
    same = dlf.dlupdate(lambda w, g: w - g, net, dlf.dlupdate(torch.ones_like, net.Learnables))
    torch.testing.assert_close(net.Learnables[0][2].detach(), weights * 0.5 - 1)


BAD = [
    (
        lambda: dlf.dlgradient(dlf.dlarray(torch.ones(1, requires_grad=True)), dlf.dlarray(torch.ones(1))),
        r"dlgradient must be called inside a function evaluated by dlfeval",
    ),
    (
        lambda: dlf.dlfeval(lambda x: dlf.dlgradient(x * 2, x), dlf.dlarray(torch.ones(3), "C")),
        r"dlgradient: the value to differentiate must be a scalar \(one element\), as a loss is; got 3\(C\) \(3 elements\)",
    ),
    (
        lambda: dlf.dlfeval(
            lambda x: dlf.dlgradient(dlf.dlarray(torch.ones(1)), x), dlf.dlarray(torch.ones(1), "C")
        ),
        r"dlgradient: the value to differentiate is not traced",
    ),
    (
        lambda: dlf.dlfeval(
            lambda x: dlf.dlgradient(x * 1, dlf.dlarray(torch.ones(1))), dlf.dlarray(torch.ones(1), "C")
        ),
        r"dlgradient: argument 2 the value is not traced; pass it to dlfeval as an argument",
    ),
    (
        lambda: dlf.dlfeval(lambda x: dlf.dlgradient(x * 1), dlf.dlarray(torch.ones(1), "C")),
        r"dlgradient needs at least one variable to differentiate with respect to",
    ),
    (
        lambda: dlf.dlfeval(
            lambda x: dlf.dlgradient(x * 1, x, RetainData="yes"), dlf.dlarray(torch.ones(1), "C")
        ),
        r'dlgradient RetainData must be true or false \(a logical\); got "yes"',
    ),
    (
        lambda: dlf.dlfeval(lambda x: dlf.dlgradient(x * 1, {"a": "b"}), dlf.dlarray(torch.ones(1), "C")),
        r"""dlgradient: argument 2\['a'\] must be a dlarray or tensor""",
    ),
    (lambda: dlf.dlfeval("modelLoss", 1), r"dlfeval needs a function to evaluate .* got str"),
    (
        lambda: dlf.dlupdate(lambda w: w, {"a": torch.ones(1)}, [torch.ones(1)]),
        r"dlupdate: argument 3 is not arranged as the parameters are",
    ),
    (
        lambda: dlf.dlupdate(
            lambda w: torch.ones(3), dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(2)])
        ),
        r"dlupdate: the new value of fc/Weights must be an array of the parameter's size 2×2; got 3",
    ),
]


@pytest.mark.parametrize(("call", "message"), BAD, ids=range(len(BAD)))
def test_bad_input_is_refused_naming_the_function(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
