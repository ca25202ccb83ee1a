"""RotaryEmbedding on dlarrays: C is the head size, T the positions, the rest broadcast."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError, RotaryEmbedding

from ..test_functional import rotate_reference


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
@pytest.mark.parametrize(
    ("fmt", "shape"), [("CTB", (8, 5, 6)), ("CBT", (8, 3, 5)), ("SCBT", (2, 8, 3, 5)), ("TC", (5, 8))]
)
@pytest.mark.parametrize("offset", [0, 3])
def test_rotation_against_the_reference(pairing, fmt, shape, offset):
    layer = RotaryEmbedding(8, 16, base=500.0, scale=0.5, pairing=pairing, position_offset=offset)
    X = dlf.dlarray(torch.randn(shape, dtype=torch.float64), fmt)
    Y = layer(X)
    assert dlf.dims(Y) == dlf.dims(X) and Y.shape == X.shape and Y.dtype == X.dtype
    order = dlf.dims(X).replace("C", "") + "C"
    data = dlf.stripdims(X, order).numpy()
    positions = np.arange(offset, offset + X.shape[dlf.dims(X).index("T")]).reshape(
        [-1 if label == "T" else 1 for label in order[:-1]]
    )
    expected = rotate_reference(data, positions, 500.0, 0.5, pairing)
    np.testing.assert_allclose(dlf.stripdims(Y, order).numpy(), expected, atol=1e-12)


def test_queries_and_keys_score_by_distance_with_heads_and_batch_sharing_a_dimension():
    layer = RotaryEmbedding(16, 64)
    q = torch.randn(16, 1, 8, dtype=torch.float64).expand(16, 20, 8)  # same vector at every position
    k = torch.randn(16, 1, 8, dtype=torch.float64).expand(16, 20, 8)
    Q, K = (dlf.stripdims(layer(dlf.dlarray(t, "CTB")), "BTC") for t in (q, k))
    scores = torch.einsum("bmc,bnc->bmn", Q, K)
    for shift in (0, 1, 5):
        diagonal = torch.diagonal(scores, offset=shift, dim1=1, dim2=2)
        torch.testing.assert_close(diagonal, diagonal[:, :1].expand_as(diagonal))


def test_position_offset_continues_a_sequence():
    layer = RotaryEmbedding(4, 20)
    X = dlf.dlarray(torch.randn(4, 1, 10), "CBT")
    full = dlf.stripdims(layer(X))
    layer.position_offset = 6
    step = dlf.stripdims(layer(dlf.dlarray(dlf.stripdims(X)[:, :, 6:7], "CBT")))
    torch.testing.assert_close(step[:, :, 0], full[:, :, 6])


def test_gradients_and_low_precision():
    x = torch.randn(8, 2, 5, requires_grad=True)
    dlf.stripdims(RotaryEmbedding(8, 5)(dlf.dlarray(x, "CBT"))).square().sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach())  # a rotation keeps the norm: d|Rx|²/dx = 2x
    Y = RotaryEmbedding(8, 5)(dlf.dlarray(torch.randn(8, 2, 5, dtype=torch.bfloat16), "CBT"))
    assert Y.dtype == torch.bfloat16


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: RotaryEmbedding(7, 10), r"head_size must be even \(features rotate in pairs\); got 7"),
        (lambda: RotaryEmbedding(8, 0), r"max_position must be a positive integer; got 0"),
        (lambda: RotaryEmbedding(8, 10, pairing="pairs"), r'pairing must be one of "half", "interleaved"'),
        (
            lambda: RotaryEmbedding(8, 4)(dlf.dlarray(torch.randn(8, 1, 5), "CBT")),
            r'position_offset 0 plus 5 positions along "T" reach position 5, beyond max_position 4',
        ),
        (
            lambda: RotaryEmbedding(8, 10)(dlf.dlarray(torch.randn(6, 1, 5), "CBT")),
            r'"C" has size 6; head_size is 8',
        ),
        (
            lambda: RotaryEmbedding(8, 10)(dlf.dlarray(torch.randn(8, 5), "CB")),
            r'needs a dlarray with "C" and "T" dimensions; got format "CB"',
        ),
        (lambda: RotaryEmbedding(8, 10)(torch.randn(8, 5)), r"got a Tensor"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


def test_config_round_trip_and_repr():
    layer = RotaryEmbedding(8, 32, base=500, scale=2.0, pairing="interleaved", position_offset=1)
    assert RotaryEmbedding.from_config(layer.get_config()).get_config() == layer.get_config()
    assert (
        repr(layer)
        == "RotaryEmbedding(head_size=8, max_position=32, base=500.0, scale=2.0, pairing='interleaved', position_offset=1)"
    )
    assert list(layer.state_dict()) == []
