"""wordEmbeddingLayer: 1-based indices, out-of-vocabulary handling, formats."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


@pytest.mark.parametrize(("fmt", "shape"), [("CBT", (1, 2, 3)), ("BT", (2, 3)), ("TCB", (3, 1, 2))])
def test_index_k_gives_column_k_of_the_weights(fmt, shape):
    layer = dlf.wordEmbeddingLayer(4, 10, WeightsInitializer="glorot")
    indices = torch.randint(1, 11, shape)
    Y = layer(dlf.dlarray(indices.double(), fmt))
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (4, 2, 3)
    flat = dlf.stripdims(dlf.dlarray(indices, fmt)).reshape(2, 3).numpy()
    W = layer.Weights.detach().numpy()
    expected = np.stack([W[:, flat[b, t] - 1] for b in range(2) for t in range(3)], axis=1).reshape(4, 2, 3)
    np.testing.assert_array_equal(dlf.stripdims(Y).detach().numpy(), expected)


@pytest.mark.parametrize("bad", [0.0, 11.0, -3.0, 2.5, math.nan])
def test_out_of_vocabulary_maps_to_the_last_vector(bad):
    layer = dlf.wordEmbeddingLayer(3, 10)
    Y = layer(dlf.dlarray(torch.tensor([[2.0, bad]]), "BT"))
    data = dlf.stripdims(Y)
    assert torch.equal(data[:, 0, 1], layer.Weights[:, 9]) and torch.equal(data[:, 0, 0], layer.Weights[:, 1])


def test_out_of_vocabulary_error_mode_names_the_index():
    layer = dlf.wordEmbeddingLayer(3, 10, OOVMode="error", Name="emb")
    with pytest.raises(
        DLFormatError,
        match=r"WordEmbeddingLayer 'emb' with OOVMode \"error\" got word index 11, outside the vocabulary 1 \.\. 10",
    ):
        layer(dlf.dlarray(torch.tensor([[3.0, 11.0]]), "BT"))


def test_integer_indices_and_gradients():
    layer = dlf.wordEmbeddingLayer(3, 5)
    Y = layer(dlf.dlarray(torch.tensor([[1, 1, 4]]), "BT"))
    dlf.stripdims(Y).sum().backward()
    np.testing.assert_array_equal(
        layer.Weights.grad.numpy(), np.array([[2, 0, 0, 1, 0]] * 3, dtype=np.float32)
    )


def test_channels_must_hold_one_index():
    with pytest.raises(
        DLFormatError, match=r'reads one word index per element, so the input\'s "C" must have size 1'
    ):
        dlf.wordEmbeddingLayer(3, 5)(dlf.dlarray(torch.ones(2, 2, 3), "CBT"))
