"""``dlconv`` and ``dltranspconv`` against float64 NumPy references written from MATLAB's definitions.

References work on MATLAB's layouts directly: data ``spatial... × C × B`` (the canonical order of
``"SSCB"``), weights ``filterSize × numChannelsPerGroup × numFiltersPerGroup × numGroups`` for
convolution and ``filterSize × numFiltersPerGroup × numChannelsPerGroup × numGroups`` for
transposed convolution (MathWorks, ``dlconv``, ``dltranspconv``). Convolution is the dot product
of each (dilated, strided) window with each filter; transposed convolution scatters
``weights · x`` into the output; padding follows MATLAB's rules (``"same"``: ``ceil(n/stride)``
outputs, the odd element at the bottom/right; transposed ``"same"`` crops the odd element from the
top/left).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError

NUMPY_MODES = {
    "symmetric-include-edge": "symmetric",
    "symmetric-exclude-edge": "reflect",
    "replicate": "edge",
}


def same_padding(size, reach, stride):
    """MATLAB's "same": ceil(size/stride) outputs; an odd total puts the extra element after."""
    total = max((-(-size // stride) - 1) * stride + reach - size, 0)
    return total // 2, total - total // 2


def pad(x, pairs, value):
    """Pad the leading (spatial) axes of ``x``; the trailing C and B are left alone."""
    widths = [*pairs, *[(0, 0)] * (x.ndim - len(pairs))]
    if isinstance(value, str):
        return np.pad(x, widths, mode=NUMPY_MODES[value])
    return np.pad(x, widths, mode="constant", constant_values=value)


def conv_reference(x, w, b, stride, dilation, padding, value=0.0):
    """MATLAB's dlconv on ``x`` (spatial... × C × B) with weights (k... × Cpg × Fpg [× G])."""
    d = x.ndim - 2
    if w.ndim == d + 2:
        w = w[..., None]
    k, (per_group, filters, groups) = w.shape[:d], w.shape[d:]
    reach = [(size - 1) * rate + 1 for size, rate in zip(k, dilation, strict=True)]
    if padding == "same":
        padding = [same_padding(n, r, s) for n, r, s in zip(x.shape[:d], reach, stride, strict=True)]
    xp = pad(x, padding, value)
    out = [(xp.shape[i] - reach[i]) // stride[i] + 1 for i in range(d)]
    y = np.zeros((*out, groups * filters, x.shape[-1]))
    for position in np.ndindex(*out):
        window = xp[
            tuple(
                slice(position[i] * stride[i], position[i] * stride[i] + reach[i], dilation[i])
                for i in range(d)
            )
        ]
        for g in range(groups):
            channels = window[..., g * per_group : (g + 1) * per_group, :]  # k... × Cpg × B
            y[(*position, slice(g * filters, (g + 1) * filters))] = np.tensordot(
                w[..., g], channels, axes=(list(range(d + 1)), list(range(d + 1)))
            )
    return y + np.reshape(b, -1, order="F")[:, None] if np.size(b) > 1 else y + np.reshape(b, ())


def transposed_reference(x, w, b, stride, dilation, cropping):
    """MATLAB's dltranspconv on ``x`` (spatial... × C × B) with weights (k... × Fpg × Cpg [× G])."""
    d = x.ndim - 2
    if w.ndim == d + 2:
        w = w[..., None]
    k, (filters, per_group, groups) = w.shape[:d], w.shape[d:]
    reach = [(size - 1) * rate + 1 for size, rate in zip(k, dilation, strict=True)]
    full = [(n - 1) * s + r for n, s, r in zip(x.shape[:d], stride, reach, strict=True)]
    y = np.zeros((*full, groups * filters, x.shape[-1]))
    for position in np.ndindex(*x.shape[:d]):
        for tap in np.ndindex(*k):
            target = tuple(position[i] * stride[i] + tap[i] * dilation[i] for i in range(d))
            for g in range(groups):
                inputs = x[(*position, slice(g * per_group, (g + 1) * per_group))]  # Cpg × B
                y[(*target, slice(g * filters, (g + 1) * filters))] += (
                    w[(*tap, slice(None), slice(None), g)] @ inputs
                )
    if cropping == "same":
        totals = [r - s for r, s in zip(reach, stride, strict=True)]
        cropping = [(t - t // 2, t // 2) for t in totals]  # the odd element cropped at the top/left
    y = y[tuple(slice(pre, n - post) for (pre, post), n in zip(cropping, full, strict=True))]
    return y + np.reshape(b, -1, order="F")[:, None] if np.size(b) > 1 else y + np.reshape(b, ())


def rng(seed):
    return np.random.default_rng(seed)


def run(function, x, fmt, w, b, **options):
    Y = function(
        dlf.dlarray(torch.from_numpy(x), fmt), torch.from_numpy(w), torch.from_numpy(np.asarray(b)), **options
    )
    return Y, dlf.extractdata(Y).numpy()


# -- dlconv: exact values ------------------------------------------------------------------------
CONVOLUTIONS = [
    # input (spatial... × C × B), weights (k... × Cpg × F [× G]), options, reference padding
    pytest.param((6, 5, 3, 2), (3, 3, 3, 4), {}, [(0, 0)] * 2, id="2-D valid"),
    pytest.param((6, 5, 3, 2), (3, 3, 3, 4), {"Padding": "same"}, "same", id="2-D odd filter same"),
    pytest.param(
        (6, 5, 3, 2), (4, 2, 3, 4), {"Padding": "same"}, "same", id="2-D even filter same (asymmetric)"
    ),
    pytest.param(
        (7, 6, 2, 2),
        (2, 3, 2, 3),
        {"Padding": "same", "Stride": 2},
        "same",
        id="same with stride: ceil(n/stride)",
    ),
    pytest.param(
        (9, 8, 2, 1),
        (3, 2, 2, 3),
        {"Padding": "same", "Stride": [2, 3], "DilationFactor": [2, 3]},
        "same",
        id="same with stride and dilation",
    ),
    pytest.param((6, 5, 2, 2), (3, 3, 2, 2), {"Stride": [2, 1]}, [(0, 0)] * 2, id="stride per dimension"),
    pytest.param((8, 7, 2, 2), (3, 2, 2, 2), {"DilationFactor": 2}, [(0, 0)] * 2, id="dilation"),
    pytest.param((5, 4, 2, 2), (3, 3, 2, 2), {"Padding": 1}, [(1, 1)] * 2, id="scalar padding"),
    pytest.param(
        (5, 4, 2, 2), (3, 3, 2, 2), {"Padding": [2, 1]}, [(2, 2), (1, 1)], id="padding per dimension"
    ),
    pytest.param(
        (5, 4, 2, 2), (3, 3, 2, 2), {"Padding": [1, 0, 2, 3]}, [(1, 0), (2, 3)], id="[t b l r] padding"
    ),
    pytest.param(
        (5, 4, 2, 2),
        (3, 3, 2, 2),
        {"Padding": np.array([[1, 2], [0, 3]])},
        [(1, 0), (2, 3)],
        id="[t l; b r] matrix padding",
    ),
    pytest.param((9, 3, 2), (4, 3, 5), {"Padding": "same"}, "same", id="1-D even filter same"),
    pytest.param((9, 3, 2), (3, 3, 5), {"Padding": "causal", "DilationFactor": 2}, [(4, 0)], id="1-D causal"),
    pytest.param((9, 3, 2), (3, 3, 5), {"Padding": [2, 1]}, [(2, 1)], id="1-D [l r] padding"),
    pytest.param(
        (5, 4, 4, 2, 1), (2, 3, 2, 2, 3), {"Padding": "same", "Stride": 2}, "same", id="3-D same stride"
    ),
    pytest.param((6, 5, 4, 2), (3, 3, 2, 3, 2), {"Padding": "same"}, "same", id="grouped: 2 groups"),
    pytest.param(
        (6, 5, 3, 2), (3, 3, 1, 2, 3), {"Padding": 1}, [(1, 1)] * 2, id="channel-wise: multiplier 2"
    ),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "options", "padding"), CONVOLUTIONS)
def test_dlconv_matches_the_reference(x_shape, w_shape, options, padding):
    x, w = rng(1).standard_normal(x_shape), rng(2).standard_normal(w_shape)
    d = len(x_shape) - 2
    filters = w_shape[d + 1] * (w_shape[d + 2] if len(w_shape) > d + 2 else 1)
    b = rng(3).standard_normal(filters)
    stride = np.broadcast_to(options.get("Stride", 1), (d,)).tolist()
    dilation = np.broadcast_to(options.get("DilationFactor", 1), (d,)).tolist()
    expected = conv_reference(x, w, b, stride, dilation, padding)
    fmt = "S" * d + "CB"
    Y, got = run(F.dlconv, x, fmt, w, b, **options)
    assert dlf.dims(Y) == fmt and Y.dtype == torch.float64 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_same_padding_puts_the_odd_element_at_the_bottom_and_right():
    """Written out by hand: a 2-tap filter [1 10] over [1 2 3] with "same" pads one zero after the
    data (MathWorks, convolution2dLayer "Padding": "adds extra padding to the bottom")."""
    X = dlf.dlarray(torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64).reshape(3, 1, 1), "SCB")
    W = torch.tensor([1.0, 10.0], dtype=torch.float64).reshape(2, 1, 1)
    Y = F.dlconv(X, W, 0, Padding="same")
    assert dlf.extractdata(Y).reshape(-1).tolist() == [21.0, 32.0, 3.0]
    Y2 = F.dlconv(dlf.dlarray(torch.ones(4, 4, 1, 1), "SSCB"), torch.ones(2, 2, 1, 1), 0, Padding="same")
    assert dlf.extractdata(Y2)[:, :, 0, 0].tolist() == [
        [4, 4, 4, 2],
        [4, 4, 4, 2],
        [4, 4, 4, 2],
        [2, 2, 2, 1],
    ]


@pytest.mark.parametrize("mode", ["symmetric-include-edge", "symmetric-exclude-edge", "replicate", 1.5, -2])
@pytest.mark.parametrize(("padding", "pairs"), [("same", "same"), ([2, 1, 0, 3], [(2, 1), (0, 3)])])
def test_padding_values(mode, padding, pairs):
    x, w = rng(4).standard_normal((5, 4, 2, 2)), rng(5).standard_normal((4, 3, 2, 3))
    expected = conv_reference(x, w, 0.5, [1, 1], [1, 1], pairs, mode)
    _, got = run(F.dlconv, x, "SSCB", w, 0.5, Padding=padding, PaddingValue=mode)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_padding_wider_than_the_data_keeps_mirroring():
    """MATLAB's padarray mirrors again past the far edge; NumPy's pad does the same."""
    x, w = rng(6).standard_normal((3, 2, 1)), rng(7).standard_normal((2, 2, 1))
    for mode in ("symmetric-include-edge", "symmetric-exclude-edge", "replicate"):
        expected = conv_reference(x, w, 0.0, [1], [1], [(5, 4)], mode)
        _, got = run(F.dlconv, x, "SCB", w, 0.0, Padding=[5, 4], PaddingValue=mode)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_one_dimensional_convolution_over_time():
    """MathWorks' example WeightsFormat="TCU": the filters slide over T of "CBT" data."""
    x = rng(8).standard_normal((3, 2, 10))  # C × B × T
    w = rng(9).standard_normal((4, 3, 5))  # filterSize × C × F, format "TCU"
    Y = F.dlconv(
        dlf.dlarray(torch.from_numpy(x), "CBT"), torch.from_numpy(w), 0, WeightsFormat="TCU", Padding="causal"
    )
    expected = conv_reference(np.moveaxis(x, 2, 0), w, 0.0, [1], [1], [(3, 0)])  # T × C × B
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (5, 2, 10)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), np.moveaxis(expected, 0, 2), rtol=0, atol=1e-12)
    formatted = F.dlconv(dlf.dlarray(torch.from_numpy(x), "CBT"), dlf.dlarray(torch.from_numpy(w), "TCU"), 0)
    np.testing.assert_allclose(
        dlf.extractdata(formatted).numpy(),
        np.moveaxis(conv_reference(np.moveaxis(x, 2, 0), w, 0.0, [1], [1], [(0, 0)]), 0, 2),
        atol=1e-12,
    )


@pytest.mark.parametrize(
    ("fmt", "shape"),
    [
        ("SSCBT", (5, 4, 2, 2, 3)),  # T kept: the filters slide over S only
        ("SSC", (5, 4, 2)),  # no B
        ("SSCBU", (5, 4, 2, 2, 2)),
        ("BSCS", (2, 5, 2, 4)),  # any order; canonical "SSCB"
    ],
)
def test_every_other_dimension_is_kept(fmt, shape):
    x = rng(10).standard_normal(shape)
    w, b = rng(11).standard_normal((2, 3, 2, 3)), rng(12).standard_normal(3)
    X = dlf.dlarray(torch.from_numpy(x), fmt)
    Y = F.dlconv(X, torch.from_numpy(w), torch.from_numpy(b), Padding="same")
    data = dlf.extractdata(X).numpy()
    canonical = dlf.dims(X)
    extra = data.shape[canonical.index("C") + 1 :]
    flat = data.reshape(*data.shape[:2], 2, -1)  # S × S × C × (everything kept)
    expected = conv_reference(flat, w, b, [1, 1], [1, 1], "same").reshape(5, 4, 3, *extra)
    assert dlf.dims(Y) == canonical
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["tensor", "numpy", "dlarray"])
def test_unformatted_input_with_data_format(kind):
    x = rng(13).standard_normal((2, 5, 4, 3))  # "BSSC"
    w, b = rng(14).standard_normal((3, 3, 3, 2)), np.zeros(2)
    X = {"tensor": torch.from_numpy(x), "numpy": x, "dlarray": dlf.dlarray(torch.from_numpy(x))}[kind]
    Y = F.dlconv(X, w, b, DataFormat="BSSC", Padding=1)
    expected = conv_reference(np.moveaxis(x, 0, -1), w, b, [1, 1], [1, 1], [(1, 1)] * 2)  # "SSCB"
    assert dlf.dims(Y) == "" and tuple(Y.shape) == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


def test_formatted_weights_and_bias_forms():
    x, w = rng(15).standard_normal((5, 4, 4, 2)), rng(16).standard_normal((3, 3, 2, 3, 2))
    b = rng(17).standard_normal((3, 2))  # numFiltersPerGroup × numGroups: column-major, group 1 first
    expected = conv_reference(x, w, b, [1, 1], [1, 1], [(0, 0)] * 2)
    Y = F.dlconv(
        dlf.dlarray(torch.from_numpy(x), "SSCB"),
        dlf.dlarray(torch.from_numpy(w), "SSCUU"),
        torch.from_numpy(b),
    )
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)
    single = rng(25).standard_normal((3, 3, 4))  # one filter: MATLAB's size drops the trailing 1
    Y = F.dlconv(dlf.dlarray(torch.from_numpy(x), "SSCB"), torch.from_numpy(single), 1.5)
    assert tuple(Y.shape) == (3, 2, 1, 2)
    expected = conv_reference(x, single[..., None], 1.5, [1, 1], [1, 1], [(0, 0)] * 2)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "padding",
    [
        [1, 0, 2, 3],
        (1, 0, 2, 3),
        np.array([[1, 0, 2, 3]]),  # a MATLAB row vector
        torch.tensor([1, 0, 2, 3]),
        [[1, 2], [0, 3]],  # [t l; b r]
        torch.tensor([[1, 2], [0, 3]]),
        np.array([1.0, 0.0, 2.0, 3.0]),  # integral doubles, as MATLAB writes numbers
    ],
    ids=["list", "tuple", "numpy row", "tensor", "nested list", "tensor matrix", "doubles"],
)
def test_padding_takes_numbers_as_matlab_users_write_them(padding):
    x, w = rng(26).standard_normal((5, 4, 2, 1)), rng(27).standard_normal((3, 3, 2, 2))
    expected = conv_reference(x, w, 0.0, [1, 1], [1, 1], [(1, 0), (2, 3)])
    _, got = run(F.dlconv, x, "SSCB", w, 0.0, Padding=padding)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_name_value_pairs_and_any_case():
    x, w = rng(18).standard_normal((6, 5, 2, 1)), rng(19).standard_normal((2, 2, 2, 3))
    expected = conv_reference(x, w, 0.0, [2, 2], [1, 1], "same")
    X = dlf.dlarray(torch.from_numpy(x), "SSCB")
    Y = F.dlconv(X, torch.from_numpy(w), 0, "padding", "SAME", "Stride", 2)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)
    Y = F.dlconv(X, torch.from_numpy(w), 0, padding="same", stride=2)
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("x_dtype", "w_dtype", "expected"),
    [
        (torch.float64, torch.float64, torch.float64),
        (torch.float64, torch.float32, torch.float32),  # MATLAB: single wins over double
        (torch.float32, torch.float64, torch.float32),
        (torch.bool, torch.float64, torch.float64),  # logical takes the weights' type
    ],
)
@pytest.mark.parametrize("function", [F.dlconv, F.dltranspconv])
def test_precision_rule(function, x_dtype, w_dtype, expected):
    X = dlf.dlarray(torch.ones(4, 4, 2, 1, dtype=x_dtype), "SSCB")
    Y = function(X, torch.ones(2, 2, 2, 2, dtype=w_dtype), 0.5)
    assert Y.dtype == expected
    assert torch.all(dlf.extractdata(Y)[1:3, 1:3] == 8.5)  # 2×2 taps × 2 channels, + 0.5


# -- dltranspconv: exact values ------------------------------------------------------------------
TRANSPOSED = [
    # input, weights (k... × F × Cpg [× G]), options, reference cropping
    pytest.param((4, 3, 3, 2), (3, 3, 2, 3), {}, [(0, 0)] * 2, id="2-D stride 1"),
    pytest.param((4, 3, 3, 2), (3, 2, 2, 3), {"Stride": 2}, [(0, 0)] * 2, id="stride 2"),
    pytest.param((4, 3, 3, 2), (4, 4, 2, 3), {"Stride": 2, "Cropping": "same"}, "same", id="same: n*stride"),
    pytest.param(
        (4, 3, 3, 2), (4, 3, 2, 3), {"Stride": [1, 2], "Cropping": "same"}, "same", id="same odd: top/left"
    ),
    pytest.param(
        (4, 3, 3, 1), (3, 3, 2, 3), {"Cropping": [1, 0, 2, 1]}, [(1, 0), (2, 1)], id="[t b l r] cropping"
    ),
    pytest.param(
        (4, 3, 3, 1),
        (3, 3, 2, 3),
        {"Cropping": np.array([[1, 2], [0, 1]])},
        [(1, 0), (2, 1)],
        id="matrix cropping",
    ),
    pytest.param(
        (4, 3, 3, 1), (3, 3, 2, 3), {"Cropping": 1, "Stride": 3}, [(1, 1)] * 2, id="scalar cropping"
    ),
    pytest.param(
        (4, 3, 2, 1), (2, 3, 2, 2), {"DilationFactor": 2, "Stride": 2}, [(0, 0)] * 2, id="dilation and stride"
    ),
    pytest.param((5, 4, 2), (3, 3, 4), {"Stride": 2, "Cropping": [2, 0]}, [(2, 0)], id="1-D"),
    pytest.param((3, 3, 2, 4, 1), (2, 2, 2, 3, 4), {"Stride": 2, "Cropping": "same"}, "same", id="3-D"),
    pytest.param((4, 3, 4, 2), (3, 3, 3, 2, 2), {"Stride": 2}, [(0, 0)] * 2, id="grouped: 2 groups"),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "options", "cropping"), TRANSPOSED)
def test_dltranspconv_matches_the_reference(x_shape, w_shape, options, cropping):
    x, w = rng(20).standard_normal(x_shape), rng(21).standard_normal(w_shape)
    d = len(x_shape) - 2
    filters = w_shape[d] * (w_shape[d + 2] if len(w_shape) > d + 2 else 1)
    b = rng(22).standard_normal(filters)
    stride = np.broadcast_to(options.get("Stride", 1), (d,)).tolist()
    dilation = np.broadcast_to(options.get("DilationFactor", 1), (d,)).tolist()
    expected = transposed_reference(x, w, b, stride, dilation, cropping)
    fmt = "S" * d + "CB"
    Y, got = run(F.dltranspconv, x, fmt, w, b, **options)
    assert dlf.dims(Y) == fmt and got.shape == expected.shape
    if cropping == "same":
        assert got.shape[:d] == tuple(n * s for n, s in zip(x_shape[:d], stride, strict=True))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_transposed_convolution_is_the_adjoint_of_convolution():
    """The same weights array serves both (convolution: filterSize × C × F; transposed: filterSize ×
    numFilters × numChannels with numFilters = C): <dlconv(x), y> = <x, dltranspconv(y)>."""
    x = torch.randn(7, 9, 3, 2, dtype=torch.float64)  # sizes a whole number of strides apart
    w = torch.randn(3, 4, 3, 5, dtype=torch.float64)
    options = {"Stride": [2, 3], "DilationFactor": [1, 2]}
    Y = F.dlconv(dlf.dlarray(x, "SSCB"), w, 0, Padding=[1, 1, 2, 2], **options)
    y = torch.randn(*Y.shape, dtype=torch.float64)
    Z = F.dltranspconv(dlf.dlarray(y, "SSCB"), w, 0, Cropping=[1, 1, 2, 2], **options)
    assert tuple(Z.shape) == tuple(x.shape)
    assert torch.allclose((dlf.extractdata(Y) * y).sum(), (x * dlf.extractdata(Z)).sum(), rtol=1e-12)


def test_transposed_convolution_over_time_and_unformatted():
    x = rng(23).standard_normal((2, 3, 6))  # "BCT"
    w = rng(24).standard_normal((3, 4, 3))  # "TCU": filterSize × numFilters × numChannels
    Y = F.dltranspconv(x, w, 0, WeightsFormat="TCU", DataFormat="BCT", Stride=2)
    expected = transposed_reference(np.transpose(x, (2, 1, 0)), w, 0.0, [2], [1], [(0, 0)])  # T × C × B
    assert dlf.dims(Y) == "" and tuple(Y.shape) == (4, 2, 13)  # in the order of "CBT"
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), np.transpose(expected, (1, 2, 0)), atol=1e-12)


# -- gradients -----------------------------------------------------------------------------------
def test_gradients_of_dlconv():
    x = torch.randn(3, 3, 2, 1, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, 2, 1, 2, 2, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)

    def conv(x, w, b):
        Y = F.dlconv(
            dlf.dlarray(x, "SSCB"), w, b, Padding=[1, 0, 2, 1], Stride=[2, 1], PaddingValue="replicate"
        )
        return dlf.stripdims(Y)

    assert torch.autograd.gradcheck(conv, (x, w, b))


def test_gradients_of_dltranspconv():
    x = torch.randn(2, 2, 2, 1, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 2, 1, 1, 2, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, dtype=torch.float64, requires_grad=True)

    def transposed(x, w, b):
        Y = F.dltranspconv(dlf.dlarray(x, "SSCB"), w, b, Stride=2, Cropping="same")
        return dlf.stripdims(Y)

    assert torch.autograd.gradcheck(transposed, (x, w, b))


# -- errors --------------------------------------------------------------------------------------
X4 = dlf.dlarray(torch.ones(5, 5, 3, 2), "SSCB")
W4 = torch.ones(3, 3, 3, 4)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: F.dlconv(X4, torch.ones(3, 3, 2, 4), 0),
            r"dlconv: the input has 3 channels; the weights take 2 \(2 per group × 1 group\(s\)",
        ),
        (
            lambda: F.dlconv(X4, W4, torch.zeros(3)),
            r"dlconv bias must be a scalar or have 4 elements .* got 3",
        ),
        (
            lambda: F.dlconv(X4, W4, 0, Padding="full"),
            r'dlconv: Padding must be one of "same", or nonnegative',
        ),
        (
            lambda: F.dlconv(X4, W4, 0, Padding="causal"),
            r'dlconv: Padding must be one of "same".* got "causal"',
        ),
        (
            lambda: F.dlconv(X4, W4, 0, Padding=[1, 2, 3]),
            r"dlconv: Padding for 2 slid dimension\(s\) must be one of",
        ),
        (lambda: F.dlconv(X4, W4, 0, Padding=-1), "dlconv: Padding must be nonnegative; got -1"),
        (
            lambda: F.dlconv(X4, W4, 0, Padding=[[1, 2], [3]]),
            "dlconv: Padding must be a number or a vector of numbers",
        ),
        (
            lambda: F.dlconv(X4, W4, 0, Padding=True),
            r"dlconv: Padding must be a number .* got True \(a logical\)",
        ),
        (lambda: F.dlconv(X4, W4, 0, Padding=np.ones((2, 3))), r"dlconv: Padding .* got .* of size 2×3"),
        (
            lambda: F.dlconv(X4, W4, 0, Stride=0),
            r"dlconv: Stride must be a positive integer or a vector of 2",
        ),
        (lambda: F.dlconv(X4, W4, 0, Stride=[1, 2, 3]), "got \\[1, 2, 3\\]"),
        (
            lambda: F.dlconv(X4, W4, 0, DilationFactor=1.5),
            "dlconv: DilationFactor must hold integers; got 1.5",
        ),
        (
            lambda: F.dlconv(X4, W4, 0, PaddingValue="mean"),
            r'dlconv: PaddingValue must be one of "symmetric-include-edge", "symmetric-exclude-edge", "replicate", or a number',
        ),
        (
            lambda: F.dlconv(X4, torch.ones(9, 3, 3, 4), 0),
            "dlconv: the window spans 9 elements and the padded input only 5",
        ),
        (
            lambda: F.dlconv(dlf.dlarray(torch.ones(4, 2, 5), "CBT"), torch.ones(3, 4, 2), 0),
            'dlconv: the input has no "S" dimension, so the weights need a format: give WeightsFormat',
        ),
        (
            lambda: F.dlconv(X4, torch.ones(3, 3, 4), 0, WeightsFormat="SCU"),
            r'dlconv: the weights of format "SCU" make\(s\) the operation slide over 1 "S" dimension\(s\), and the '
            r'input of format "SSCB" has 2',
        ),
        (
            lambda: F.dlconv(X4, dlf.dlarray(W4, "SSCU"), 0, WeightsFormat="SSCU"),
            'dlconv: WeightsFormat is only for unformatted weights; the weights already have format "SSCU"',
        ),
        (
            lambda: F.dlconv(X4, torch.ones(3, 3, 3), 0, WeightsFormat="SSB"),
            "dlconv weights must have filter dimensions",
        ),
        (
            lambda: F.dlconv(X4, torch.ones(3, 3, 3, 4, 1, 2), 0),
            r"dlconv weights for 2 spatial dimension\(s\) have at most 5 dimensions",
        ),
        (
            lambda: F.dlconv(dlf.dlarray(torch.ones(3, 2), "CB"), torch.ones(3, 2), 0, WeightsFormat="SC"),
            r'dlconv: the weights of format "SC" make\(s\) the operation slide over 1 "S" dimension\(s\), and the '
            r'input of format "CB" has 0',
        ),
        (
            lambda: F.dlconv(dlf.dlarray(torch.ones(3, 3, 2), "SSB"), W4, 0),
            'dlconv needs data with a "C" dimension',
        ),
        (
            lambda: F.dlconv(torch.ones(5, 5, 3, 2), W4, 0),
            'dlconv needs a formatted dlarray, or DataFormat="..."',
        ),
        (lambda: F.dlconv(X4, W4, 0, "Paddin", 1), "dlconv has no option 'Paddin'; the options are: Stride"),
        (
            lambda: F.dltranspconv(X4, torch.ones(3, 3, 4, 2), 0),
            "dltranspconv: the input has 3 channels; the weights take 2",
        ),
        (
            lambda: F.dltranspconv(X4, torch.ones(1, 1, 4, 3), 0, Stride=2, Cropping="same"),
            r'dltranspconv: Cropping "same" needs a filter reach \(1\) at least as large as the stride \(2\)',
        ),
        (
            lambda: F.dltranspconv(X4, W4.permute(0, 1, 3, 2), 0, Cropping=4),
            "dltranspconv: Cropping .* leaves nothing",
        ),
        (
            lambda: F.dltranspconv(X4, W4.permute(0, 1, 3, 2), 0, Cropping="causal"),
            r'dltranspconv: Cropping must be one of "same"',
        ),
    ],
)
def test_errors_name_the_function_the_value_and_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
