"""Learn-rate and L2 factors (docs/position_embedding.md, "Learn-rate and L2 factors"): param_groups and MATLAB's set/get functions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

import dlformat as dlf
from dlformat import DLFormatError


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.posemb = dlf.positionEmbeddingLayer(3, 6, Name="posemb", dtype=torch.float64)
        self.other = dlf.positionEmbeddingLayer(3, 6, Name="other", dtype=torch.float64)
        self.head = nn.Linear(3, 2, dtype=torch.float64)

    def forward(self, X):
        Y = self.posemb(X) + self.other(X) * 0.5
        return self.head(dlf.stripdims(Y, "BTC"))


def test_param_groups_scale_lr_and_l2_by_each_parameters_factors():
    net = Net()
    dlf.setLearnRateFactor(net, "posemb", "Weights", 2)
    dlf.setL2Factor(net, "posemb", "Weights", 0.5)
    groups = dlf.param_groups(net, lr=0.1, l2=0.01)
    by_factors = {(g["learn_rate_factor"], g["l2_factor"]): g for g in groups}
    assert set(by_factors) == {(2.0, 0.5), (1.0, 1.0)}
    scaled = by_factors[(2.0, 0.5)]
    assert scaled["params"] == [net.posemb.Weights]
    assert scaled["lr"] == pytest.approx(0.2) and scaled["weight_decay"] == pytest.approx(0.005)
    plain = by_factors[(1.0, 1.0)]
    assert plain["params"] == [net.other.Weights, net.head.weight, net.head.bias]
    assert plain["lr"] == pytest.approx(0.1) and plain["weight_decay"] == pytest.approx(0.01)


def test_zero_learn_rate_factor_and_frozen_parameters_are_left_out():
    net = Net()
    dlf.setLearnRateFactor(net, "other", "Weights", 0)
    net.head.bias.requires_grad_(False)
    params = [p for group in dlf.param_groups(net, lr=0.1) for p in group["params"]]
    assert params == [net.posemb.Weights, net.head.weight]


def test_three_sgd_steps_match_the_hand_computed_update():
    """W <- W - lr*f*(g + l2*f2*W), checked against float64 NumPy for every weight."""
    torch.manual_seed(0)
    net = Net()
    factors = {"posemb": (2.0, 0.5), "other": (0.0, 3.0)}
    for name, (f, f2) in factors.items():
        dlf.setLearnRateFactor(net, name, "Weights", f)
        dlf.setL2Factor(net, name, "Weights", f2)
    lr, l2 = 0.05, 0.1
    optimizer = torch.optim.SGD(dlf.param_groups(net, lr=lr, l2=l2))
    X = dlf.dlarray(torch.randn(3, 2, 4, dtype=torch.float64), "CBT")
    target = torch.randn(2, 4, 2, dtype=torch.float64)
    weights = {name: p.detach().numpy().copy() for name, p in net.named_parameters()}
    expected_factors = {"posemb.Weights": (2.0, 0.5), "other.Weights": (0.0, 3.0)}
    for _ in range(3):
        optimizer.zero_grad()
        loss = ((net(X) - target) ** 2).sum()
        loss.backward()
        for name, p in net.named_parameters():
            f, f2 = expected_factors.get(name, (1.0, 1.0))
            g = p.grad.numpy()
            weights[name] = weights[name] - lr * f * (g + l2 * f2 * weights[name])
        optimizer.step()
        for name, p in net.named_parameters():
            np.testing.assert_allclose(p.detach().numpy(), weights[name], rtol=1e-12, atol=1e-15)
    assert not np.array_equal(weights["posemb.Weights"], weights["other.Weights"])
    # factor 0 froze "other" entirely, L2 included
    torch.manual_seed(0)
    assert torch.equal(net.other.Weights, Net().other.Weights)


def test_a_shared_parameter_appears_once_and_needs_one_set_of_factors():
    a = dlf.positionEmbeddingLayer(2, 3, Name="a")
    b = dlf.positionEmbeddingLayer(2, 3, Name="b")
    b._parameters["Weights"] = a.Weights  # tie them, as weight sharing does
    net = nn.ModuleList([a, b])
    assert [p for g in dlf.param_groups(net, 0.1) for p in g["params"]] == [a.Weights]
    b.WeightLearnRateFactor = 3
    with pytest.raises(
        DLFormatError,
        match=r"parameter 'Weights' of module '1' is shared with another layer that gives it factors \(1.0, 1.0\)",
    ):
        dlf.param_groups(net, 0.1)


@pytest.mark.parametrize(
    ("lr", "l2", "message"),
    [
        (-0.1, 0.0, r"lr must be a finite scalar >= 0; got -0.1"),
        (0.1, math.nan, r"l2 must be a finite scalar >= 0; got nan"),
    ],
)
def test_param_groups_check_their_rates(lr, l2, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.param_groups(Net(), lr, l2)


def test_layer_forms_mirror_the_properties():
    layer = dlf.positionEmbeddingLayer(2, 3)
    assert dlf.setLearnRateFactor(layer, "Weights", 0.25) is layer
    assert dlf.setL2Factor(layer, "Weights", np.float32(4)) is layer
    assert layer.WeightLearnRateFactor == 0.25 and layer.WeightL2Factor == 4.0
    assert dlf.getLearnRateFactor(layer, "Weights") == 0.25
    assert dlf.getL2Factor(layer, "Weights") == 4.0
    layer.WeightL2Factor = 0
    assert dlf.getL2Factor(layer, "Weights") == 0.0


def test_network_forms_find_the_layer_by_name():
    net = Net()
    assert dlf.setL2Factor(net, "other", "Weights", 2) is net
    assert net.other.WeightL2Factor == 2.0 and net.posemb.WeightL2Factor == 1.0
    assert dlf.getL2Factor(net, "other", "Weights") == 2.0
    assert dlf.getLearnRateFactor(net, "posemb", "Weights") == 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda net: dlf.setLearnRateFactor(net, "nope", "Weights", 1),
            r"no layer named 'nope'; the named dlformat layers are: other, posemb",
        ),
        (
            lambda net: dlf.setLearnRateFactor(net.posemb, "Bias", 1),
            r"PositionEmbeddingLayer 'posemb' has no learnable parameter 'Bias'; its learnables are: Weights",
        ),
        (
            lambda net: dlf.setLearnRateFactor(net.posemb, "Weights", -1),
            r"the LearnRateFactor of Weights must be a finite scalar >= 0; got -1",
        ),
        (
            lambda net: dlf.setL2Factor(net, "posemb", "Weights", math.inf),
            r"the L2Factor of Weights must be a finite scalar >= 0; got inf",
        ),
        (
            lambda net: dlf.getLearnRateFactor(net.posemb),
            r"getLearnRateFactor takes \(layer, parameterName\) or \(net, layerName, parameterName\); got 1 argument",
        ),
        (
            lambda net: dlf.setL2Factor(net.posemb, "Weights"),
            r"setL2Factor takes \(layer, parameterName, value\) or \(net, layerName, parameterName, value\); got 2",
        ),
        (lambda net: dlf.getL2Factor("posemb", "Weights"), r"got 2 argument\(s\), the first a str"),
    ],
)
def test_bad_factor_calls_say_what_is_wrong_and_change_nothing(call, message):
    net = Net()
    with pytest.raises(DLFormatError, match=message):
        call(net)
    assert all(
        layer.WeightLearnRateFactor == 1.0 and layer.WeightL2Factor == 1.0
        for layer in (net.posemb, net.other)
    )


def test_duplicate_layer_names_are_reported():
    net = nn.ModuleList(
        [dlf.positionEmbeddingLayer(2, 3, Name="pe"), dlf.positionEmbeddingLayer(2, 3, Name="pe")]
    )
    with pytest.raises(DLFormatError, match=r"2 layers are named 'pe'; layer names must be unique"):
        dlf.getL2Factor(net, "pe", "Weights")
