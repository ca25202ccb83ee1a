"""resize2dLayer and resize3dLayer against NumPy references written from the coordinate mapping
(output element i of size m reads input coordinate (i + 0.5)·n/m − 0.5, "half-pixel", or i·n/m,
"asymmetric"), MATLAB's round (halves away from zero) or floor, interpolation between the
neighbouring elements, edge elements beyond the border."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(0)


def source(n, m, geometry):
    i = np.arange(m, dtype=np.float64)
    return (i + 0.5) * n / m - 0.5 if geometry == "half-pixel" else i * n / m


def matlab_round(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def nearest_reference(x, sizes, geometry, rounding):
    for axis, m in enumerate(sizes):
        n = x.shape[axis]
        picked = (
            np.floor(source(n, m, geometry)) if rounding == "floor" else matlab_round(source(n, m, geometry))
        )
        x = np.take(x, np.clip(picked.astype(int), 0, n - 1), axis=axis)
    return x


def linear_reference(x, sizes, geometry):
    """Every output element from its 2^d corners, weights multiplied (no separable shortcut)."""
    d = len(sizes)
    coordinates = [np.clip(source(x.shape[a], sizes[a], geometry), 0, x.shape[a] - 1) for a in range(d)]
    out = np.zeros((*sizes, *x.shape[d:]))
    for index in itertools.product(*(range(m) for m in sizes)):
        value = 0.0
        for corner in itertools.product((0, 1), repeat=d):
            weight, position = 1.0, []
            for a, (i, c) in enumerate(zip(index, corner, strict=True)):
                low = int(np.floor(coordinates[a][i]))
                fraction = coordinates[a][i] - low
                position.append(min(low + c, x.shape[a] - 1))
                weight *= fraction if c else 1 - fraction
            value = value + weight * x[tuple(position)]
        out[index] = value
    return out


CASES_2D = [((4, 5), (8, 10)), ((4, 5), (3, 7)), ((6, 6), (2, 3)), ((3, 4), (3, 4))]


@pytest.mark.parametrize(("have", "want"), CASES_2D)
@pytest.mark.parametrize("geometry", ["half-pixel", "asymmetric"])
@pytest.mark.parametrize("rounding", ["round", "floor"])
def test_nearest_2d(have, want, geometry, rounding):
    x = RNG.standard_normal((*have, 3, 2))
    layer = dlf.resize2dLayer(OutputSize=want, GeometricTransformMode=geometry, NearestRoundingMode=rounding)
    Y = layer(dlf.dlarray(torch.from_numpy(x), "SSCB"))
    assert dlf.dims(Y) == "SSCB" and tuple(Y.shape) == (*want, 3, 2)
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), nearest_reference(x, want, geometry, rounding))


@pytest.mark.parametrize(("have", "want"), CASES_2D)
@pytest.mark.parametrize("geometry", ["half-pixel", "asymmetric"])
def test_bilinear_2d(have, want, geometry):
    x = RNG.standard_normal((*have, 2, 3, 2))  # "SSCBT"
    layer = dlf.resize2dLayer(OutputSize=want, Method="bilinear", GeometricTransformMode=geometry)
    Y = layer(dlf.dlarray(torch.from_numpy(x), "SSCBT"))
    np.testing.assert_allclose(
        dlf.extractdata(Y).numpy(), linear_reference(x, want, geometry), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("method", ["nearest", "trilinear"])
@pytest.mark.parametrize("geometry", ["half-pixel", "asymmetric"])
def test_3d(method, geometry):
    x = RNG.standard_normal((3, 4, 2, 2, 1))
    want = (5, 2, 4)
    layer = dlf.resize3dLayer(OutputSize=want, Method=method, GeometricTransformMode=geometry)
    Y = dlf.extractdata(layer(dlf.dlarray(torch.from_numpy(x), "SSSCB"))).numpy()
    expected = (
        nearest_reference(x, want, geometry, "round")
        if method == "nearest"
        else linear_reference(x, want, geometry)
    )
    np.testing.assert_allclose(Y, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("options", "torch_mode"),
    [
        ({"Method": "bilinear"}, {"mode": "bilinear", "align_corners": False}),
        ({"GeometricTransformMode": "asymmetric", "NearestRoundingMode": "floor"}, {"mode": "nearest"}),
        ({}, {"mode": "nearest-exact"}),
    ],
)
def test_the_combinations_torch_also_computes_agree_with_it(options, torch_mode):
    x = torch.randn(2, 3, 5, 7, dtype=torch.float64)  # N C H W
    Y = dlf.resize2dLayer(OutputSize=[9, 4], **options)(dlf.dlarray(x, "BCSS"))
    expected = F.interpolate(x, size=(9, 4), **torch_mode)
    torch.testing.assert_close(dlf.extractdata(Y), expected.permute(2, 3, 1, 0), rtol=1e-12, atol=1e-12)


def test_scale_and_reference_input():
    x = RNG.standard_normal((3, 4, 2, 1))
    X = dlf.dlarray(torch.from_numpy(x), "SSCB")
    by_scale = dlf.resize2dLayer(Scale=[2, 0.5])
    assert by_scale.Scale == (2.0, 0.5) and tuple(by_scale(X).shape) == (6, 2, 2, 1)
    np.testing.assert_array_equal(
        dlf.extractdata(by_scale(X)).numpy(), nearest_reference(x, (6, 2), "half-pixel", "round")
    )
    referenced = dlf.resize2dLayer(EnableReferenceInput=True, Method="bilinear")
    assert referenced.InputNames == ("in", "ref") and referenced.NumInputs == 2
    Y = referenced(X, dlf.dlarray(torch.zeros(5, 7, 9), "SSC"))
    np.testing.assert_allclose(
        dlf.extractdata(Y).numpy(), linear_reference(x, (5, 7), "half-pixel"), rtol=1e-12
    )
    layer = dlf.resize3dLayer(Scale=2)
    assert (layer.Scale, layer.default_name, layer.Method) == ((2.0, 2.0, 2.0), "resize", "nearest")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: dlf.resize2dLayer(),
            "needs exactly one of Scale, OutputSize or EnableReferenceInput=true; got 0",
        ),
        (lambda: dlf.resize2dLayer(Scale=2, OutputSize=[3, 3]), "needs exactly one of .* got 2"),
        (lambda: dlf.resize2dLayer(Scale=[1, 2, 3]), "Scale must have 1 or 2 elements; got 3"),
        (lambda: dlf.resize2dLayer(OutputSize=[float("nan"), 4]), "OutputSize with NaN .* is not supported"),
        (
            lambda: dlf.resize2dLayer(Scale=2, NearestRoundingMode="onnx-10"),
            'NearestRoundingMode "onnx-10" is not supported',
        ),
        (
            lambda: dlf.resize2dLayer(Scale=2, Method="trilinear"),
            'Method must be one of "nearest", "bilinear"',
        ),
        (
            lambda: dlf.resize3dLayer(Scale=2, Method="bilinear"),
            'Method must be one of "nearest", "trilinear"',
        ),
        (
            lambda: dlf.resize2dLayer(Scale=1.5)(dlf.dlarray(torch.ones(3, 4, 1, 1), "SSCB")),
            r"Scale \[1.5, 1.5\] times the input's spatial size 3×4 is not a whole size",
        ),
        (
            lambda: dlf.resize2dLayer(Scale=2)(dlf.dlarray(torch.ones(3, 4, 2, 1, 1), "SSSCB")),
            r'resizes data with 2 "S" dimensions; got format "SSSCB"',
        ),
        (
            lambda: dlf.resize2dLayer(EnableReferenceInput=True)(dlf.dlarray(torch.ones(3, 4, 1, 1), "SSCB")),
            "has EnableReferenceInput=true: give it inputs in and ref",
        ),
    ],
)
def test_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
