"""dlformat.functional's sinusoidal building blocks against NumPy references of their sources' formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dlformat import DLFormatError
from dlformat.functional import rotary, sinusoid, timing_signal_1d


def vaswani(
    positions: np.ndarray, dim: int, base: float = 10000.0, layout: str = "interleaved"
) -> np.ndarray:
    """Vaswani et al.: PE(p, 2k) = sin(p / base^(2k/d)), PE(p, 2k+1) = cos(p / base^(2k/d))."""
    out = np.empty((*positions.shape, dim))
    for i in range(dim):
        if layout == "interleaved":
            k, wave = i // 2, np.sin if i % 2 == 0 else np.cos
        else:
            k, wave = (i, np.sin) if i < dim // 2 else (i - dim // 2, np.cos)
        out[..., i] = wave(positions / base ** (2 * k / dim))
    return out


def tensor2tensor(length: int, channels: int, low=1.0, high=1.0e4, start=0) -> np.ndarray:
    """tensor2tensor's get_timing_signal_1d, written from its published formula."""
    count = channels // 2
    increment = math.log(high / low) / max(count - 1, 1)
    inverse = low * np.exp(np.arange(count) * -increment)
    scaled = (np.arange(length) + start)[:, None] * inverse[None, :]
    signal = np.concatenate([np.sin(scaled), np.cos(scaled), np.zeros((length, channels % 2))], axis=1)
    return signal.reshape(1, length, channels)


@pytest.mark.parametrize("dim", [1, 2, 5, 8, 64, 127])
@pytest.mark.parametrize("base", [10000, 500.0])
def test_interleaved_sinusoid(dim, base):
    positions = np.arange(50, dtype=np.float64)
    got = sinusoid(torch.from_numpy(positions), dim, base=base)
    assert got.dtype == torch.float64 and got.shape == (50, dim)
    np.testing.assert_allclose(got.numpy(), vaswani(positions, dim, base), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dim", [2, 6, 64])
def test_halves_sinusoid(dim):
    got = sinusoid(40, dim, layout="halves")
    assert got.dtype == torch.float32 and got.shape == (40, dim)
    np.testing.assert_allclose(got.numpy(), vaswani(np.arange(40.0), dim, layout="halves"), atol=2e-6)


def test_sinusoid_takes_any_position_shape_and_fractional_positions():
    positions = torch.tensor([[0.5, 3.25], [7.0, 100.0]], dtype=torch.float64)
    np.testing.assert_allclose(sinusoid(positions, 6).numpy(), vaswani(positions.numpy(), 6), atol=1e-12)


def test_sinusoid_shift_is_a_fixed_block_rotation():
    """PE(t + k) = M_k · PE(t) for every t, with M_k block-diagonal 2×2 rotations (interleaved)."""
    dim, k = 16, 7
    frequencies = 10000.0 ** (-2 * np.arange(dim // 2) / dim)
    shift = np.zeros((dim, dim))
    for pair, frequency in enumerate(frequencies):
        c, s = math.cos(k * frequency), math.sin(k * frequency)
        shift[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2] = [[c, s], [-s, c]]
    table = sinusoid(torch.arange(60, dtype=torch.float64), dim).numpy()
    np.testing.assert_allclose(table[k:], table[:-k] @ shift.T, atol=1e-12)


@pytest.mark.parametrize(
    ("length", "channels", "low", "high", "start"),
    [(30, 8, 1.0, 1e4, 0), (12, 7, 1.0, 1e4, 5), (5, 2, 2.0, 50.0, 1), (4, 1, 1.0, 1e4, 0)],
)
def test_timing_signal_1d_is_tensor2tensors(length, channels, low, high, start):
    got = timing_signal_1d(length, channels, low, high, start)
    assert got.shape == (1, length, channels) and got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), tensor2tensor(length, channels, low, high, start), atol=2e-6)


def test_timing_signal_differs_from_vaswani_in_frequencies_not_just_order():
    t2t = timing_signal_1d(20, 8)[0].double().numpy()
    halves = vaswani(np.arange(20.0), 8, layout="halves")
    assert np.abs(t2t - halves).max() > 0.1  # same layout, different timescales
    np.testing.assert_allclose(t2t[:, 0], halves[:, 0], atol=1e-6)  # only the first timescale agrees


def rotate_reference(
    x: np.ndarray, positions: np.ndarray, base: float, scale: float, pairing: str
) -> np.ndarray:
    """Block-diagonal rotation matrices applied to each feature vector (RoFormer's definition)."""
    d = x.shape[-1]
    out = np.empty_like(x)
    for index in np.ndindex(x.shape[:-1]):
        p = np.broadcast_to(positions, x.shape[:-1])[index]
        rotation = np.zeros((d, d))
        for k in range(d // 2):
            angle = p * base ** (-2 * k / d)
            i, j = (2 * k, 2 * k + 1) if pairing == "interleaved" else (k, k + d // 2)
            rotation[i, i], rotation[i, j] = math.cos(angle), -math.sin(angle)
            rotation[j, i], rotation[j, j] = math.sin(angle), math.cos(angle)
        out[index] = scale * rotation @ x[index]
    return out


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
@pytest.mark.parametrize(("d", "base", "scale"), [(2, 10000, 1.0), (8, 10000, 1.0), (6, 100.0, 0.5)])
def test_rotary_against_rotation_matrices(pairing, d, base, scale):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, d))
    positions = np.arange(5)[None, :] + np.array([[0], [2], [9]])
    got = rotary(torch.from_numpy(x), torch.from_numpy(positions), base=base, scale=scale, pairing=pairing)
    np.testing.assert_allclose(got.numpy(), rotate_reference(x, positions, base, scale, pairing), atol=1e-12)


def test_rotary_dot_products_depend_only_on_the_distance():
    rng = np.random.default_rng(1)
    q, k = (torch.from_numpy(rng.standard_normal(16)) for _ in range(2))

    def score(m, n):
        return float(rotary(q[None], torch.tensor([m])) @ rotary(k[None], torch.tensor([n]))[0])

    for m, n in [(5, 2), (40, 37), (103, 100)]:
        assert score(m, n) == pytest.approx(score(3, 0), abs=1e-10)
    assert score(5, 2) != pytest.approx(score(5, 1), abs=1e-3)


def test_interleaved_equals_half_after_the_matching_permutation():
    d = 12
    permutation = list(range(0, d, 2)) + list(range(1, d, 2))  # interleaved pair (2k, 2k+1) -> (k, k + d/2)
    x = torch.randn(4, 7, d, dtype=torch.float64)
    positions = torch.arange(7)
    interleaved = rotary(x, positions, pairing="interleaved")
    half = rotary(x[..., permutation], positions, pairing="half")
    torch.testing.assert_close(interleaved[..., permutation], half, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_input_is_computed_in_float32(dtype):
    x = torch.randn(2, 64, 32)
    positions = torch.arange(64) * 37  # large angles, where half precision angles would be wrong
    got = rotary(x.to(dtype), positions)
    assert got.dtype == dtype
    expected = rotary(x.to(dtype).float(), positions).to(dtype)
    assert torch.equal(got, expected)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sinusoid(5, 0), r"dim must be a positive integer; got 0"),
        (lambda: sinusoid(5, 7, layout="halves"), r'layout "halves" needs an even dim; got 7'),
        (
            lambda: sinusoid(5, 4, layout="blocks"),
            r'layout must be one of "interleaved", "halves"; got "blocks"',
        ),
        (lambda: sinusoid(5, 4, base=1), r"base must be a finite number > 1; got 1"),
        (lambda: sinusoid("abc", 4), r"positions must be a count, a tensor or a sequence of numbers"),
        (
            lambda: timing_signal_1d(5, 4, 10.0, 1.0),
            r"need 0 < min_timescale <= max_timescale; got 10.0 and 1.0",
        ),
        (lambda: timing_signal_1d(-1, 4), r"length must be an integer >= 0; got -1"),
        (
            lambda: rotary(torch.randn(3, 5), torch.arange(3)),
            r"rotary needs a tensor whose last dimension is even",
        ),
        (
            lambda: rotary(torch.randn(3, 4), torch.arange(3)[:, None], pairing="pairs"),
            r'pairing must be one of "half", "interleaved"',
        ),
        (
            lambda: rotary(torch.randn(3, 4), torch.arange(3)[:, None], scale=-1),
            r"scale must be a finite scalar >= 0; got -1",
        ),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
