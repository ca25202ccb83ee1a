"""additionLayer: sums of inputs of one format."""

from __future__ import annotations

import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def test_sums_every_input_and_broadcasts_singletons():
    xs = [torch.randn(3, 2, 4, dtype=torch.float64) for _ in range(2)] + [
        torch.randn(3, 1, 4, dtype=torch.float64)
    ]
    Y = dlf.additionLayer(3)(*(dlf.dlarray(x, "CBT") for x in xs))
    assert dlf.dims(Y) == "CBT"
    torch.testing.assert_close(dlf.stripdims(Y), xs[0] + xs[1] + xs[2], rtol=0, atol=0)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            [("CBT", (3, 2, 4)), ("CB", (3, 2))],
            r"AdditionLayer 'add' needs inputs of one format; got in1 \"CBT\", in2 \"CB\"",
        ),
        (
            [("CBT", (3, 2, 4)), ("CBT", (3, 2, 5))],
            r'the "CBT" inputs have sizes that neither match nor are 1: in1 3×2×4, in2 3×2×5',
        ),
    ],
)
def test_mismatched_inputs_are_named(inputs, message):
    layer = dlf.additionLayer(2, Name="add")
    with pytest.raises(DLFormatError, match=message):
        layer(*(dlf.dlarray(torch.randn(shape), fmt) for fmt, shape in inputs))


def test_needs_two_or_more_inputs():
    with pytest.raises(DLFormatError, match=r"NumInputs must be an integer >= 2; got 1"):
        dlf.additionLayer(1)
    with pytest.raises(DLFormatError, match=r"takes 2 inputs; got 1"):
        dlf.additionLayer(2)(dlf.dlarray(torch.randn(2, 2), "CB"))
