"""compat.neoml.PositionalEmbedding against NeoML's formulas (CPositionalEmbeddingLayer)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.compat import neoml


def neoml_transformers(sequence_length: int, hidden_size: int) -> np.ndarray:
    """NeoML's fillPositionalEmbedding loop: even channels sin, odd cos, positions from 0."""
    table = np.empty((sequence_length, hidden_size))
    for pos in range(sequence_length):
        for i in range(hidden_size):
            if i % 2 == 0:
                table[pos, i] = math.sin(pos / 10000.0 ** (i / hidden_size))
            else:
                table[pos, i] = math.cos(pos / 10000.0 ** ((i - 1) / hidden_size))
    return table


@pytest.mark.parametrize("channels", [4, 7])
def test_transformers_adds_neomls_table(channels):
    X = dlf.dlarray(torch.randn(channels, 3, 6, dtype=torch.float64), "CBT")
    Y = neoml.PositionalEmbedding("transformers", 10)(X)
    expected = dlf.stripdims(X, "BTC").numpy() + neoml_transformers(6, channels)[None]
    np.testing.assert_allclose(dlf.stripdims(Y, "BTC").numpy(), expected, atol=1e-12)


def test_learnable_addition_adds_one_vector_per_position_spanning_every_dimension_but_b_and_t():
    layer = neoml.PositionalEmbedding("learnable-addition", 8, generator=torch.Generator().manual_seed(0))
    X = dlf.dlarray(torch.randn(2, 3, 4, 5, dtype=torch.float64), "SCBT")  # vector: 2(S) × 3(C)
    Y = layer(X)
    assert tuple(layer.addends.shape) == (2, 3, 8)
    addends = layer.addends.detach().numpy()
    assert np.abs(addends).max() <= 0.02 and np.abs(addends).max() > 0.015
    x = dlf.stripdims(X).numpy()
    expected = x + addends[:, :, None, :5]  # the same vector for every object of the batch
    np.testing.assert_allclose(dlf.stripdims(Y).detach().numpy(), expected, rtol=0, atol=0)


def test_learnable_mult_addition_starts_as_identity_plus_addends():
    layer = neoml.PositionalEmbedding("learnable-mult-addition", 6)
    X = dlf.dlarray(torch.randn(3, 2, 4, dtype=torch.float64), "CBT")
    layer(X)
    assert torch.equal(layer.multipliers, torch.ones(3, 6, dtype=torch.float64))
    with torch.no_grad():
        layer.multipliers.copy_(torch.arange(18.0).reshape(3, 6))
    Y = layer(X)
    a, b = layer.multipliers.detach().numpy()[:, None, :4], layer.addends.detach().numpy()[:, None, :4]
    np.testing.assert_allclose(
        dlf.stripdims(Y).detach().numpy(), a * dlf.stripdims(X).numpy() + b, atol=1e-12
    )


def test_learnable_parameters_get_gradients_summed_over_the_batch():
    layer = neoml.PositionalEmbedding("learnable-mult-addition", 5)
    x = torch.randn(3, 4, 5)
    dlf.stripdims(layer(dlf.dlarray(x, "CBT"))).sum().backward()
    torch.testing.assert_close(layer.addends.grad, torch.full((3, 5), 4.0))
    torch.testing.assert_close(layer.multipliers.grad, x.sum(dim=1))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: neoml.PositionalEmbedding("rotary", 8),
            r'type must be one of "learnable-addition", "learnable-mult-addition", "transformers"; got "rotary"',
        ),
        (
            lambda: neoml.PositionalEmbedding("transformers", 0),
            r"max_positions must be a positive integer; got 0",
        ),
        (
            lambda: neoml.PositionalEmbedding("transformers", 4)(dlf.dlarray(torch.randn(2, 3, 5), "CBT")),
            r'5 positions along "T" exceed max_positions 4',
        ),
        (
            lambda: neoml.PositionalEmbedding("transformers", 9)(
                dlf.dlarray(torch.randn(2, 2, 3, 5), "SCBT")
            ),
            r'"transformers" embeds channels only \(NeoML requires height = width = depth = 1\)',
        ),
        (
            lambda: neoml.PositionalEmbedding("learnable-addition", 9)(dlf.dlarray(torch.randn(2, 3), "CB")),
            r'needs a dlarray with a "T" dimension; got format "CB"',
        ),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


def test_parameters_are_sized_by_the_first_input():
    layer = neoml.PositionalEmbedding("learnable-addition", 9)
    layer(dlf.dlarray(torch.randn(3, 2, 4), "CBT"))
    with pytest.raises(
        DLFormatError,
        match=r'sized for vectors of format "C" and sizes \(3,\) by its first input; got "C" with sizes \(5,\)',
    ):
        layer(dlf.dlarray(torch.randn(5, 2, 4), "CBT"))
    assert tuple(layer(dlf.dlarray(torch.randn(3, 7, 9), "CBT")).shape) == (3, 7, 9)  # any batch, any length


@pytest.mark.parametrize("kind", ["learnable-addition", "learnable-mult-addition", "transformers"])
@pytest.mark.parametrize("cast", [lambda layer: layer.type(torch.float64), lambda layer: layer.double()])
def test_casting_the_layer_to_float64_works(kind, cast):
    # the type is kept as embedding_type: an attribute named `type` hid nn.Module.type
    layer = neoml.PositionalEmbedding(kind, 6)
    assert layer.embedding_type == kind
    layer(dlf.dlarray(torch.randn(3, 2, 4), "CBT"))
    assert cast(layer) is layer
    assert all(parameter.dtype == torch.float64 for parameter in layer.parameters())
    Y = layer(dlf.dlarray(torch.randn(3, 2, 4, dtype=torch.float64), "CBT"))
    assert Y.dtype == torch.float64
    assert repr(layer) == f"PositionalEmbedding(type={kind!r}, max_positions=6)"
