"""The combination layers: additionLayer and multiplicationLayer (element-wise), concatenationLayer
and depthConcatenationLayer (joined along one dimension), against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(0)


def formatted(x, fmt):
    return dlf.dlarray(torch.from_numpy(x), fmt)


@pytest.mark.parametrize(
    ("make", "reference"),
    [(dlf.additionLayer, lambda a, b, c: a + b + c), (dlf.multiplicationLayer, lambda a, b, c: a * b * c)],
    ids=["addition", "multiplication"],
)
def test_elementwise_layers_combine_every_input_and_broadcast_singletons(make, reference):
    xs = [RNG.standard_normal((3, 2, 4)), RNG.standard_normal((3, 2, 4)), RNG.standard_normal((3, 1, 4))]
    Y = make(3)(*(formatted(x, "CBT") for x in xs))
    assert dlf.dims(Y) == "CBT" and Y.dtype == torch.float64
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), reference(*xs), rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    ("fmt", "shape", "dim"),
    [
        ("SSCB", (4, 5, 3, 2), 1),  # first S
        ("SSCB", (4, 5, 3, 2), 2),  # second S
        ("SSCB", (4, 5, 3, 2), 3),  # C
        ("SSCB", (4, 5, 3, 2), 4),  # B
        ("CBT", (3, 2, 5), 1),  # C
        ("CBT", (3, 2, 5), 3),  # T
        ("SCBT", (4, 3, 2, 5), 2),  # C
        ("BTC", (3, 2, 5), 1),  # labelled "BTC", held and counted in MATLAB's order "CBT": C
    ],
)
def test_concatenation_counts_dim_in_the_formats_order(fmt, shape, dim):
    canonical = "".join(sorted(fmt, key="SCBTU".index))
    axis = dim - 1
    xs = []  # in the canonical order; the inputs differ in size along dim only
    for size in (2, 1, 3):
        sizes = list(shape)
        sizes[axis] = size
        xs.append(RNG.standard_normal(sizes))
    order = sorted(range(len(fmt)), key=lambda index: "SCBTU".index(fmt[index]))  # canonical axis -> given
    given = [np.transpose(x, [order.index(index) for index in range(len(fmt))]) for x in xs]
    Y = dlf.concatenationLayer(dim, 3)(*(formatted(x, fmt) for x in given))
    assert dlf.dims(Y) == canonical
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), np.concatenate(xs, axis=axis))


@pytest.mark.parametrize(("fmt", "shape"), [("SSCB", (4, 5, 3, 2)), ("CBT", (3, 2, 5)), ("SCB", (6, 3, 2))])
def test_depth_concatenation_joins_channels(fmt, shape):
    channel = fmt.index("C")
    xs = [RNG.standard_normal((*shape[:channel], size, *shape[channel + 1 :])) for size in (3, 1, 2)]
    Y = dlf.depthConcatenationLayer(3)(*(formatted(x, fmt) for x in xs))
    assert dlf.dims(Y) == fmt and Y.shape[channel] == 6
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), np.concatenate(xs, axis=channel))


def test_matlab_properties_and_names():
    concat = dlf.concatenationLayer(3, 2, Name="concat")
    assert (concat.Dim, concat.NumInputs, concat.InputNames) == (3, 2, ("in1", "in2"))
    assert dlf.concatenationLayer(4, 3, "Name", "c").InputNames == ("in1", "in2", "in3")
    prefixes = [
        layer.default_name
        for layer in (
            dlf.additionLayer(2),
            dlf.multiplicationLayer(2),
            concat,
            dlf.depthConcatenationLayer(2),
        )
    ]
    assert prefixes == ["addition", "multiplication", "concat", "depthcat"]


@pytest.mark.parametrize(
    ("layer", "inputs", "message"),
    [
        (
            dlf.additionLayer(2, Name="add"),
            [("CBT", (3, 2, 4)), ("CB", (3, 2))],
            r"AdditionLayer 'add' needs inputs of one format; got in1 \"CBT\", in2 \"CB\"",
        ),
        (
            dlf.multiplicationLayer(2),
            [("CBT", (3, 2, 4)), ("CBT", (3, 2, 5))],
            r'the "CBT" inputs have sizes that neither match nor are 1: in1 3×2×4, in2 3×2×5',
        ),
        (
            dlf.concatenationLayer(3, 2),
            [("SSCB", (4, 5, 3, 2)), ("SSCB", (4, 6, 3, 2))],
            r'the "SSCB" inputs must have the same size in every dimension but dimension 3 \("C"\); '
            r"got in1 4×5×3×2, in2 4×6×3×2",
        ),
        (
            dlf.concatenationLayer(5, 2),
            [("SSCB", (4, 5, 3, 2)), ("SSCB", (4, 5, 3, 2))],
            r'ConcatenationLayer has Dim 5; the "SSCB" inputs have 4 dimensions',
        ),
        (
            dlf.depthConcatenationLayer(2),
            [("SSB", (4, 5, 2)), ("SSB", (4, 5, 2))],
            r'DepthConcatenationLayer needs inputs with a "C" dimension; got format "SSB"',
        ),
        (dlf.additionLayer(2), [("CB", (2, 2))], r"takes 2 inputs; got 1"),
    ],
)
def test_mismatched_inputs_are_named(layer, inputs, message):
    with pytest.raises(DLFormatError, match=message):
        layer(*(dlf.dlarray(torch.randn(shape), fmt) for fmt, shape in inputs))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: dlf.additionLayer(1), r"NumInputs must be an integer >= 2; got 1"),
        (lambda: dlf.multiplicationLayer(0), r"NumInputs must be a positive integer"),
        (lambda: dlf.concatenationLayer(0, 2), r"Dim must be a positive integer"),
        (lambda: dlf.concatenationLayer(3), r"concatenationLayer: missing a required argument: 'NumInputs'"),
    ],
)
def test_constructor_errors(make, message):
    with pytest.raises(DLFormatError, match=message):
        make()
