"""padsequences against a NumPy transcription of MathWorks' padsequences page."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def reference(sequences, dim, length="longest", direction="right", value=0.0):
    """MATLAB's padsequences written with NumPy: pad or cut each sequence at its end ("right")
    or start ("left") along ``dim`` (0-based), then concatenate along a new last dimension."""
    lengths = [s.shape[dim] for s in sequences]
    target = {"longest": max(lengths), "shortest": min(lengths)}.get(length, length)
    padded, masks = [], []
    for s in sequences:
        kept = min(s.shape[dim], target)
        index = [slice(None)] * s.ndim
        index[dim] = slice(s.shape[dim] - kept, None) if direction == "left" else slice(0, kept)
        part = s[tuple(index)]
        widths = [(0, 0)] * s.ndim
        widths[dim] = (target - kept, 0) if direction == "left" else (0, target - kept)
        padded.append(np.pad(part, widths, constant_values=value))
        masks.append(np.pad(np.ones(part.shape, bool), widths, constant_values=False))
    return np.stack(padded, axis=-1), np.stack(masks, axis=-1)


RNG = np.random.default_rng(7)
SEQUENCES = [RNG.standard_normal((3, n)) for n in (5, 2, 7)]


@pytest.mark.parametrize("length", ["longest", "shortest", 4, 9])
@pytest.mark.parametrize("direction", ["right", "left"])
def test_pads_and_truncates_as_matlab_documents(length, direction):
    expected, expected_mask = reference(SEQUENCES, 1, length, direction, -1.5)
    got, mask = dlf.padsequences(
        [torch.from_numpy(s) for s in SEQUENCES],
        2,
        Length=length,
        Direction=direction,
        PaddingValue=-1.5,
        ReturnMask=True,
    )
    assert got.dtype == torch.float64 and mask.dtype == torch.bool
    np.testing.assert_array_equal(got.numpy(), expected)
    np.testing.assert_array_equal(mask.numpy(), expected_mask)


def test_padding_the_first_dimension_and_numpy_in_numpy_out():
    sequences = [s.T for s in SEQUENCES]  # T×C, as MATLAB's padsequences(X, 1) examples
    got = dlf.padsequences(sequences, 1)
    assert isinstance(got, np.ndarray) and got.shape == (7, 3, 3)
    np.testing.assert_array_equal(got, reference(sequences, 0)[0])


def test_vectors_are_columns_and_matlab_name_value_pairs_work():
    got = dlf.padsequences([torch.tensor([1.0, 2.0]), torch.tensor([3.0])], 1, "PaddingValue", 9)
    assert got.tolist() == [[[1.0, 3.0]], [[2.0, 9.0]]]  # 2×1×2: columns, stacked along dim 3


def test_uniform_output_false_gives_a_list():
    padded, masks = dlf.padsequences(
        [torch.ones(2, 3), torch.ones(2, 1)], 2, UniformOutput=False, ReturnMask=True
    )
    assert [tuple(p.shape) for p in padded] == [(2, 3), (2, 3)]
    assert masks[1].tolist() == [[True, False, False], [True, False, False]]


def test_a_fractional_padding_value_gives_integer_sequences_a_floating_result():
    got = dlf.padsequences([torch.tensor([[1, 2]]), torch.tensor([[3]])], 2, PaddingValue=0.5)
    assert got.dtype == torch.get_default_dtype() and got[0, 1, 1] == 0.5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dlf.padsequences(torch.ones(3, 4), 2), "X must be a non-empty list of sequences"),
        (lambda: dlf.padsequences([], 2), "X must be a non-empty list"),
        (lambda: dlf.padsequences([torch.ones(3, 4)], 0), "paddingDim"),
        (lambda: dlf.padsequences([torch.ones(3, 4), torch.ones(2, 4)], 2), r"equal sizes .* 3×4, 2×4"),
        (lambda: dlf.padsequences([torch.ones(3, 4)], 2, Direction="up"), "Direction"),
        (lambda: dlf.padsequences([torch.ones(3, 4)], 2, Length="all"), "Length"),
        (lambda: dlf.padsequences([torch.ones(3, 4)], 2, Length=0), "Length"),
        (
            lambda: dlf.padsequences([torch.ones(3, 4), "abc"], 2),
            "sequence 2 must be a numeric or logical array",
        ),
        (lambda: dlf.padsequences([torch.ones(3, 4)], 2, Foo=1), "padsequences has no option 'Foo'"),
    ],
)
def test_errors_name_the_value_and_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
