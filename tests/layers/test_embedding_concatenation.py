"""embeddingConcatenationLayer against NumPy: the learnable vector put before the first element."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


@pytest.mark.parametrize(
    ("fmt", "sizes", "axis"),
    [("CBT", (3, 2, 5), 2), ("CT", (3, 4), 1), ("SCB", (6, 3, 2), 0), ("SC", (6, 3), 0)],
)
def test_prepends_the_weights_along_t_or_the_single_s(fmt, sizes, axis):
    weights = np.array([[0.5], [-1.0], [2.0]])
    layer = dlf.embeddingConcatenationLayer(Weights=torch.as_tensor(weights), dtype=torch.float64)
    x = np.random.default_rng(0).standard_normal(sizes)
    Y = layer(dlf.dlarray(torch.as_tensor(x), fmt))
    shape = [1] * len(sizes)
    shape[fmt.index("C")] = 3
    block = list(sizes)
    block[axis] = 1
    expected = np.concatenate([np.broadcast_to(weights.reshape(shape), block), x], axis=axis)
    assert dlf.dims(Y) == fmt
    np.testing.assert_array_equal(dlf.stripdims(Y).detach().numpy(), expected)


def test_defaults_and_the_narrow_normal_initializer():
    layer = dlf.embeddingConcatenationLayer()
    assert (layer.WeightsInitializer, layer.InputSize, layer.Name) == ("narrow-normal", "auto", "")
    assert (layer.WeightLearnRateFactor, layer.WeightL2Factor) == (1.0, 1.0)
    assert layer.Weights is None
    torch.manual_seed(0)
    layer(dlf.dlarray(torch.randn(2000, 1, 3), "CBT"))
    assert tuple(layer.Weights.shape) == (2000, 1)
    assert abs(float(layer.Weights.detach().std()) - 0.01) < 0.001


def test_glorot_counts_the_channels_as_inputs_and_outputs():
    layer = dlf.embeddingConcatenationLayer(WeightsInitializer="glorot", InputSize=600)
    bound = np.sqrt(6 / (600 + 600))
    assert float(layer.Weights.detach().abs().max()) <= bound
    assert float(layer.Weights.detach().abs().max()) > 0.9 * bound


def test_gradients_reach_the_weights():
    layer = dlf.embeddingConcatenationLayer(InputSize=3)
    dlf.stripdims(layer(dlf.dlarray(torch.randn(3, 2, 4), "CBT")))[:, :, 0].sum().backward()
    torch.testing.assert_close(layer.Weights.grad, torch.full((3, 1), 2.0))


@pytest.mark.parametrize(
    ("make", "data", "message"),
    [
        (lambda: dlf.embeddingConcatenationLayer(), ("SSCB", (4, 5, 3, 2)), r'single "S".*got "SSCB"'),
        (lambda: dlf.embeddingConcatenationLayer(), ("SCBT", (4, 3, 2, 5)), r'got "SCBT"'),
        (lambda: dlf.embeddingConcatenationLayer(), ("CB", (3, 2)), r'got "CB"'),
        (
            lambda: dlf.embeddingConcatenationLayer(InputSize=4),
            ("CBT", (3, 2, 5)),
            r"InputSize 4.*3 channels",
        ),
    ],
)
def test_bad_inputs(make, data, message):
    fmt, sizes = data
    with pytest.raises(DLFormatError, match=message):
        make()(dlf.dlarray(torch.randn(sizes), fmt))


def test_bad_options():
    with pytest.raises(DLFormatError, match="WeightsInitializer"):
        dlf.embeddingConcatenationLayer(WeightsInitializer="uniform")
    with pytest.raises(DLFormatError, match="Weights"):
        dlf.embeddingConcatenationLayer(Weights=torch.ones(3, 1), InputSize=4)
