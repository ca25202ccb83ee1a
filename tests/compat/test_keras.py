"""compat.keras.PositionalEmbedding: the Keras example layer's call, mask and config."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.compat import keras


@pytest.mark.parametrize(("fmt", "shape"), [("BT", (3, 7)), ("CBT", (1, 3, 7))])
def test_call_adds_token_and_position_embeddings(fmt, shape):
    layer = keras.PositionalEmbedding(
        sequence_length=10, input_dim=20, output_dim=6, generator=torch.Generator().manual_seed(0)
    )
    ids = torch.randint(0, 20, shape)
    Y = layer(dlf.dlarray(ids.float(), fmt))
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (6, 3, 7)
    tokens = layer.token_embeddings.weight.detach().numpy()
    positions = layer.position_embeddings.weight.detach().numpy()
    flat = ids.reshape(3, 7).numpy()
    expected = tokens[flat] + positions[np.arange(7)][None]  # (B, T, output_dim)
    np.testing.assert_allclose(dlf.stripdims(Y, "BTC").detach().numpy(), expected, rtol=0, atol=0)


def test_initial_weights_are_keras_uniform():
    layer = keras.PositionalEmbedding(50, 100, 32)
    for table in (layer.token_embeddings.weight, layer.position_embeddings.weight):
        assert table.abs().max() <= 0.05 and table.abs().max() > 0.045


def test_compute_mask_is_true_where_the_id_is_not_zero():
    layer = keras.PositionalEmbedding(10, 20, 4)
    ids = torch.tensor([[5, 0, 3], [0, 0, 1]])
    mask = layer.compute_mask(dlf.dlarray(ids, "BT"))
    assert dlf.dims(mask) == "BT" and torch.equal(dlf.stripdims(mask), ids != 0)


def test_config_round_trip():
    layer = keras.PositionalEmbedding(10, 20, 4)
    assert layer.get_config() == {"sequence_length": 10, "input_dim": 20, "output_dim": 4}
    assert keras.PositionalEmbedding.from_config(layer.get_config()).get_config() == layer.get_config()


@pytest.mark.parametrize(
    ("ids", "fmt", "message"),
    [
        (torch.tensor([[1.5, 2.0]]), "BT", r"token ids must be whole numbers"),
        (torch.tensor([[1, 20]]), "BT", r"token ids must lie in 0 .. 19; got 1 .. 20"),
        (torch.tensor([[-1, 2]]), "BT", r"token ids must lie in 0 .. 19; got -1 .. 2"),
        (torch.zeros(1, 11, dtype=torch.long), "BT", r"11 positions exceed sequence_length 10"),
        (
            torch.zeros(2, 3, 4, dtype=torch.long),
            "CBT",
            r'takes token ids as a "BT" dlarray, or "CBT" with C of size 1; got format "CBT" of shape \(2, 3, 4\)',
        ),
    ],
)
def test_bad_token_ids(ids, fmt, message):
    with pytest.raises(DLFormatError, match=message):
        keras.PositionalEmbedding(10, 20, 4)(dlf.dlarray(ids, fmt))
