"""compat.julia: PositionalEmbeddings.jl's AbsolutePE and RoPE, against that package's code."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.compat import julia


def julia_frequencies(dim: int, length: int, base: float) -> np.ndarray:
    """compute_frequencies: θ = 1 ./ (base .^ ((0:2:dim-1) ./ dim)); θ * positions' (0-based)."""
    theta = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    return theta[:, None] * np.arange(length)[None, :]


def test_absolute_pe_adds_the_interleaved_table_to_seq_features_batch_data():
    layer = julia.AbsolutePE(6, 12, base=1000)
    x = np.random.default_rng(0).standard_normal((9, 6, 2))  # (seq_len, channels, batch)
    Y = layer(dlf.dlarray(torch.from_numpy(x), "TCB"))
    frequencies = julia_frequencies(6, 12, 1000)
    embeddings = np.zeros((6, 12))
    embeddings[0::2] = np.sin(frequencies)  # Julia's 1:2:end
    embeddings[1::2] = np.cos(frequencies)  # Julia's 2:2:end
    expected = x + embeddings[:, :9].T[:, :, None]
    np.testing.assert_allclose(dlf.stripdims(Y, "TCB").numpy(), expected, atol=1e-6)


def test_rope_rotates_half_split_pairs_and_scales():
    layer = julia.RoPE(8, 16, base=10000, scale=0.5)
    x = np.random.default_rng(1).standard_normal((8, 5, 6))  # (head_size, seq_len, nheads*batch)
    Y = layer(dlf.dlarray(torch.from_numpy(x), "CTB"))
    frequencies = np.vstack([julia_frequencies(8, 5, 10000)] * 2)  # vcat(freqs, freqs)
    cos, sin = np.cos(frequencies)[:, :, None], np.sin(frequencies)[:, :, None]
    negated_half = np.concatenate([-x[4:], x[:4]])  # neg_half
    expected = x * 0.5 * cos + negated_half * 0.5 * sin
    np.testing.assert_allclose(dlf.stripdims(Y, "CTB").numpy(), expected, atol=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: julia.AbsolutePE(5, 10),
            r"embedding_size must be even, as PositionalEmbeddings.jl needs; got 5",
        ),
        (
            lambda: julia.AbsolutePE(4, 3)(dlf.dlarray(torch.randn(5, 4, 2), "TCB")),
            r'5 positions along "T" reach position 5, beyond MaxPosition 3',
        ),
        (
            lambda: julia.AbsolutePE(4, 10)(dlf.dlarray(torch.randn(5, 6, 2), "TCB")),
            r"channel dimension 6 must match embedding_size 4",
        ),
        (
            lambda: julia.AbsolutePE(4, 10)(dlf.dlarray(torch.randn(5, 4), "SC")),
            r'needs a dlarray with "C" and "T" dimensions; got format "SC"',
        ),
        (lambda: julia.RoPE(6, 4)(dlf.dlarray(torch.randn(6, 5, 2), "CTB")), r"beyond max_position 4"),
        (lambda: julia.RoPE(5, 4), r"head_size must be even"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


def test_absolute_pe_keeps_no_state_and_follows_the_input_dtype():
    layer = julia.AbsolutePE(4, 8)
    assert list(layer.state_dict()) == []
    Y = layer(dlf.dlarray(torch.randn(3, 4, 2, dtype=torch.bfloat16), "TCB"))
    assert Y.dtype == torch.bfloat16
