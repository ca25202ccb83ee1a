"""crop2dLayer: the window's place (MATLAB's [x y], 1-based column and row, or the centre) against
NumPy slicing, formats, and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(0)


def run(layer, x, fmt, ref_shape, ref_fmt="SSCB"):
    Y = layer(dlf.dlarray(torch.from_numpy(x), fmt), dlf.dlarray(torch.zeros(ref_shape), ref_fmt))
    return Y, dlf.extractdata(Y).numpy()


@pytest.mark.parametrize(
    ("location", "ref", "rows", "columns"),
    [
        ([1, 1], (3, 4), slice(0, 3), slice(0, 4)),
        ([2, 3], (2, 4), slice(2, 4), slice(1, 5)),  # x = column 2, y = row 3
        ([3, 5], (3, 4), slice(4, 7), slice(2, 6)),  # the window touches the last row and column
    ],
)
def test_custom_location_is_matlabs_column_and_row_from_one(location, ref, rows, columns):
    x = RNG.standard_normal((7, 6, 3, 2))
    layer = dlf.crop2dLayer(location)
    assert (layer.Mode, layer.Location) == ("custom", tuple(location))
    Y, values = run(layer, x, "SSCB", (*ref, 5, 1))
    assert dlf.dims(Y) == "SSCB" and values.shape == (*ref, 3, 2)
    np.testing.assert_array_equal(values, x[rows, columns])


@pytest.mark.parametrize(
    ("have", "want", "start"),
    [((6, 8), (2, 4), (2, 2)), ((7, 5), (3, 3), (2, 1)), ((5, 7), (2, 4), (1, 1)), ((4, 4), (4, 4), (0, 0))],
)
def test_centercrop_takes_the_middle(have, want, start):
    x = RNG.standard_normal((*have, 2, 3))
    _, values = run(dlf.crop2dLayer("centercrop"), x, "SSCB", (*want, 1, 1))
    np.testing.assert_array_equal(values, x[start[0] : start[0] + want[0], start[1] : start[1] + want[1]])


@pytest.mark.parametrize(
    ("fmt", "shape"), [("SSC", (6, 5, 2)), ("SSCBT", (6, 5, 2, 3, 4)), ("SSCT", (6, 5, 2, 4))]
)
def test_formats_of_the_pages_tables_are_kept(fmt, shape):
    x = RNG.standard_normal(shape)
    Y, values = run(dlf.crop2dLayer([2, 2]), x, fmt, (3, 3), "SS")
    assert dlf.dims(Y) == fmt
    np.testing.assert_array_equal(values, x[1:4, 1:4])


def test_properties_ports_and_config():
    layer = dlf.crop2dLayer("centercrop", Name="crop1")
    assert (layer.Mode, layer.Location, layer.InputNames, layer.NumInputs) == (
        "centercrop",
        "auto",
        ("in", "ref"),
        2,
    )
    assert layer.default_name == "crop"
    custom = dlf.crop2dLayer([4, 2])
    assert dlf.Crop2DLayer.from_config(custom.get_config()).Location == (4, 2)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: dlf.crop2dLayer("middle"),
            r'Mode must be one of "centercrop", "custom", or a location \[x y\]',
        ),
        (lambda: dlf.crop2dLayer([0, 2]), "Mode must be a positive integer; got 0"),
        (lambda: dlf.crop2dLayer("custom"), r'Mode "custom" goes with a Location \[x y\]'),
        (lambda: dlf.crop2dLayer([1, 2, 3]), r"Mode must be \"auto\" or a 2-element row vector \[x y\]"),
        (
            lambda: run(dlf.crop2dLayer([3, 3]), np.ones((5, 5, 1, 1)), "SSCB", (4, 2, 1, 1)),
            r"a 4×2 window at Location \[3 3\] does not fit in the input's 5×5",
        ),
        (
            lambda: run(dlf.crop2dLayer("centercrop"), np.ones((5, 5, 1, 1)), "SSCB", (6, 2, 1, 1)),
            r"the reference's height and width 6×2 exceed the input's 5×5",
        ),
        (
            lambda: run(dlf.crop2dLayer("centercrop"), np.ones((6, 5, 1, 1)), "SSCB", (3, 3, 1, 1)),
            r"centering a 3×3 window in 6×5 is ambiguous .* give Location \[x y\]",
        ),
        (
            lambda: run(dlf.crop2dLayer("centercrop"), np.ones((6, 5, 4)), "SCB", (3, 1, 1)),
            r'crops 2-D images: input in needs two "S" dimensions; got format "SCB"',
        ),
        (
            lambda: run(dlf.crop2dLayer([1, 1]), np.ones((6, 5, 4, 2, 1)), "SSSCB", (3, 3)),
            r'input in needs two "S" dimensions; got format "SSSCB"',
        ),
    ],
)
def test_errors_name_the_problem(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
