"""``inputLayer`` against MathWorks' page: the data passes unchanged, in the layer's format (sizes in
the format's own order, NaN for a variable batch or time size). Its ``load_network`` mapping is
tested in tests/io/test_network_item8_layers.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

NAN = float("nan")


@pytest.mark.parametrize(
    ("sizes", "fmt", "data_shape", "canonical", "out_shape"),
    [
        ([3, NAN, 5], "CBT", (3, 2, 5), "CBT", (3, 2, 5)),
        ([NAN, 5, 3], "BTC", (2, 5, 3), "CBT", (3, 2, 5)),  # batch-first data, the format's order
        ([10, 20], "CT", (10, 20), "CT", (10, 20)),  # MATLAB Answers 2068686: inputLayer(size(X),"CT")
        ([64, 3, NAN], "SCB", (64, 3, 4), "SCB", (64, 3, 4)),
        ([4, 5, 2, NAN], "SSCB", (4, 5, 2, 1), "SSCB", (4, 5, 2, 1)),
        ([6, 4], "UC", (6, 4), "CU", (4, 6)),
    ],
)
def test_plain_data_is_labelled_in_the_formats_order_and_passes_unchanged(
    sizes, fmt, data_shape, canonical, out_shape
):
    x = np.random.default_rng(0).standard_normal(data_shape)
    Y = dlf.inputLayer(sizes, fmt)(torch.tensor(x))
    assert dlf.dims(Y) == canonical and tuple(Y.shape) == out_shape
    # the reference: MATLAB's dlarray(x, fmt) sorts the labels S, C, B, T, U (a stable sort)
    order = sorted(range(len(fmt)), key=lambda i: "SCBTU".index(fmt[i]))
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), np.transpose(x, order))
    assert Y.dtype == torch.float64


def test_formatted_data_passes_as_it_is():
    X = dlf.dlarray(torch.randn(2, 5, 3), "BTC")  # stored "CBT"
    Y = dlf.inputLayer([3, NAN, NAN], "CBT")(X)
    assert Y is X


def test_an_empty_format_passes_unformatted_data():
    layer = dlf.inputLayer([3, 4])
    assert layer.InputFormat == ""
    Y = layer(torch.ones(3, 4))
    assert isinstance(Y, dlf.DLArray) and dlf.dims(Y) == "" and tuple(Y.shape) == (3, 4)
    with pytest.raises(DLFormatError, match=r'takes unformatted data \(InputFormat ""\); got a "CB"'):
        layer(dlf.dlarray(torch.ones(3, 4), "CB"))


def test_integer_data_becomes_the_default_float():
    Y = dlf.inputLayer([2, 3], "CB")(torch.tensor([[1, 2, 3], [4, 5, 6]]))
    assert Y.dtype == torch.get_default_dtype()
    assert dlf.extractdata(Y).tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


@pytest.mark.parametrize(
    ("sizes", "fmt", "data", "message"),
    [
        ([3, 4], "CB", torch.ones(3, 5), r"needs data of size 3×4 \(\"CB\"\) \(NaN: any size\); got 3×5"),
        ([3, NAN], "CB", torch.ones(4, 2), r"needs data of size 3×NaN .*got 4×2"),
        ([3, NAN, 5], "CBT", torch.ones(3, 2, 6), r"size 3×NaN×5 .*got 3×2×6"),
        ([3, 4], "CB", dlf.dlarray(torch.ones(3, 4), "CT"), r'needs data of format "CB"; got "CT"'),
    ],
)
def test_data_that_does_not_fit_is_a_clear_error(sizes, fmt, data, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.inputLayer(sizes, fmt)(data)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([3, 4, 5], "CB"), r"InputSize has 3 sizes and InputFormat \"CB\" 2 labels"),
        (
            ([NAN, 4], "CB"),
            r'NaN only for a batch \(B\) or time \(T\) dimension; the "C" dimension \(size 1\)',
        ),
        (([3, NAN], ""), r"NaN only .*an unformatted input \(size 2\)"),
        (([3, 0], "CB"), r"InputSize must be a positive integer; got 0"),
        (([3, 4], "CBB"), r'"B" dimensions'),
        (([3, 4], "CX"), r'invalid dimension label "X"'),
        (("34", "CB"), r"InputSize must be a row vector"),
        (([], "CB"), r"at least one size"),
    ],
)
def test_bad_properties_are_refused_at_construction(args, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.inputLayer(*args)


def test_properties_defaults_and_display():
    layer = dlf.inputLayer([28, 28, 1, NAN], "SSCB", Name="images")
    assert layer.NumInputs == 0 and layer.InputNames == ()
    assert (layer.NumOutputs, layer.OutputNames) == (1, ("out",))
    assert math.isnan(layer.InputSize[-1]) and layer.InputSize[:3] == (28, 28, 1)
    assert "InputSize: [28 28 1 NaN]" in repr(layer) and "InputFormat: 'SSCB'" in repr(layer)
    with pytest.raises(DLFormatError, match="read-only property 'InputFormat'"):
        layer.InputFormat = "CB"
    rebuilt = dlf.InputLayer.from_config(layer.get_config())
    assert repr(rebuilt) == repr(layer)


def test_a_network_names_it_input_and_initializes_from_its_sizes():
    net = dlf.dlnetwork([dlf.inputLayer([5, NAN], "CB"), dlf.fullyConnectedLayer(3)])
    assert net.Layers[0].Name == "input" and net.InputNames == ("input",)
    assert net.Initialized and tuple(net.Layers[1].Weights.shape) == (3, 5)
    Y = net.predict(torch.randn(5, 7))
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (3, 7)
    example = net.Layers[0].example_input()
    assert dlf.dims(example) == "CB" and tuple(example.shape) == (5, 1)
