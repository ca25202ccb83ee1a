"""``maxpool`` and ``avgpool`` against float64 NumPy references of MATLAB's definitions.

The references loop over the pooling regions of the padded input (``spatial... × C × B``):
max pooling takes each region's maximum of the input elements it covers (padding never wins);
average pooling divides the region's sum by its full size when ``PaddingValue`` is 0 (the padded
zeros count) and by the number of input elements it covers when it is ``"mean"`` (MathWorks,
``avgpool`` and ``averagePooling2dLayer``, "PaddingValue"). ``"same"`` padding gives
``ceil(n/stride)`` outputs with the odd element at the bottom/right.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError


def same_padding(size, window, stride):
    total = max((-(-size // stride) - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def pool_reference(x, kind, size, stride, padding, padding_value=0):
    """Pool the leading (spatial) axes of ``x`` (spatial... × C × B)."""
    d = len(size)
    if padding == "same":
        padding = [same_padding(n, k, s) for n, k, s in zip(x.shape[:d], size, stride, strict=True)]
    widths = [*padding, *[(0, 0)] * (x.ndim - d)]
    inside = np.pad(np.ones(x.shape), widths)  # 1 where the padded array holds input
    padded = np.pad(x, widths)
    out = [(padded.shape[i] - size[i]) // stride[i] + 1 for i in range(d)]
    y = np.zeros((*out, *x.shape[d:]))
    for position in np.ndindex(*out):
        region = tuple(slice(position[i] * stride[i], position[i] * stride[i] + size[i]) for i in range(d))
        values, mask = padded[region], inside[region].astype(bool)
        axes = tuple(range(d))
        if kind == "max":
            y[position] = np.where(mask, values, -np.inf).max(axis=axes)
        elif padding_value == "mean":
            y[position] = values.sum(axis=axes) / mask.sum(axis=axes)
        else:
            y[position] = values.sum(axis=axes) / np.prod(size)
    return y


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


CASES = [
    # input (spatial... × C × B), poolsize, options, reference padding
    pytest.param((6, 5, 2, 2), [2, 2], {"Stride": 2}, [(0, 0)] * 2, id="2x2 stride 2"),
    pytest.param((6, 5, 2, 2), [3, 2], {}, [(0, 0)] * 2, id="stride 1 (MATLAB's default)"),
    pytest.param((7, 5, 2, 2), [3, 3], {"Stride": 2, "Padding": "same"}, "same", id="same odd window"),
    pytest.param((6, 5, 2, 1), [2, 2], {"Padding": "same"}, "same", id="same even window: bottom/right"),
    pytest.param((7, 6, 1, 2), [3, 2], {"Stride": [2, 3], "Padding": "same"}, "same", id="same with strides"),
    pytest.param((5, 4, 2, 1), [3, 3], {"Padding": 1}, [(1, 1)] * 2, id="symmetric padding"),
    pytest.param((5, 4, 2, 1), [3, 3], {"Padding": [2, 0, 1, 2]}, [(2, 0), (1, 2)], id="[t b l r] padding"),
    pytest.param(
        (5, 4, 2, 1), [3, 3], {"Padding": np.array([[0, 2], [1, 1]])}, [(0, 1), (2, 1)], id="matrix padding"
    ),
    pytest.param((9, 3, 2), [3], {"Stride": 2, "Padding": "same"}, "same", id="1-D"),
    pytest.param((4, 5, 3, 2, 1), [2, 2, 3], {"Stride": 2, "Padding": "same"}, "same", id="3-D"),
]


@pytest.mark.parametrize(("shape", "size", "options", "padding"), CASES)
@pytest.mark.parametrize(("kind", "padding_value"), [("max", None), ("average", 0), ("average", "mean")])
def test_pooling_matches_the_reference(shape, size, options, padding, kind, padding_value):
    x = data(shape)
    stride = np.broadcast_to(options.get("Stride", 1), (len(size),)).tolist()
    expected = pool_reference(x, kind, size, stride, padding, padding_value)
    fmt = "S" * len(size) + "CB"
    X = dlf.dlarray(torch.from_numpy(x), fmt)
    if kind == "max":
        Y = F.maxpool(X, size, **options)
    else:
        Y = F.avgpool(X, size, PaddingValue=padding_value, **options)
    assert dlf.dims(Y) == fmt and Y.dtype == torch.float64 and tuple(Y.shape) == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


def test_padding_value_rule_written_out():
    """A 2×2 average over ones with "same" padding on a 3×3 input: MATLAB pads one row and column
    after the data; with PaddingValue 0 the corner region holds one input element of four."""
    X = dlf.dlarray(torch.ones(3, 3, 1, 1, dtype=torch.float64), "SSCB")
    counted = dlf.extractdata(F.avgpool(X, 2, Padding="same"))[:, :, 0, 0]
    assert counted.tolist() == [[1, 1, 0.5], [1, 1, 0.5], [0.5, 0.5, 0.25]]
    excluded = dlf.extractdata(F.avgpool(X, 2, Padding="same", PaddingValue="mean"))[:, :, 0, 0]
    assert excluded.tolist() == [[1.0] * 3] * 3
    negative = dlf.dlarray(-torch.ones(3, 3, 1, 1), "SSCB")
    assert torch.all(dlf.extractdata(F.maxpool(negative, 2, Padding="same")) == -1)  # padding never wins


@pytest.mark.parametrize(
    ("fmt", "shape", "pool_format", "pooled"),
    [
        ("SSCBT", (6, 5, 2, 2, 3), None, (0, 1)),  # T kept
        ("SSC", (6, 5, 2), None, (0, 1)),
        ("SSB", (6, 5, 2), None, (0, 1)),  # no C: pooling needs none
        ("CBT", (2, 3, 8), "T", (2,)),  # 1-D pooling over time
        ("SCBT", (5, 2, 3, 8), "ST", (0, 3)),  # over S and T
        ("SCBT", (5, 2, 3, 8), "T", (3,)),  # over T only: S kept
    ],
)
def test_formats_and_pool_format(fmt, shape, pool_format, pooled):
    x = data(shape, 1)
    kept = [axis for axis in range(len(shape)) if axis not in pooled]
    moved = np.transpose(x, [*pooled, *kept]).reshape(*[shape[a] for a in pooled], -1, 1)
    size = [2] * len(pooled)
    for kind, function in (("max", F.maxpool), ("average", F.avgpool)):
        expected = pool_reference(moved, kind, size, [2] * len(pooled), "same")
        expected = expected.reshape(*expected.shape[: len(pooled)], *[shape[a] for a in kept])
        expected = np.transpose(expected, np.argsort([*pooled, *kept]))
        Y = function(
            dlf.dlarray(torch.from_numpy(x), fmt), 2, Stride=2, Padding="same", PoolFormat=pool_format
        )
        assert dlf.dims(Y) == fmt
        np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=1e-12)


def test_global_pooling():
    x = data((4, 5, 3, 2), 2)
    X = dlf.dlarray(torch.from_numpy(x), "SSCB")
    Ymax, Yavg = F.maxpool(X, "global"), F.avgpool(X, "GLOBAL")
    assert dlf.dims(Ymax) == "SSCB" and tuple(Ymax.shape) == (1, 1, 3, 2)
    np.testing.assert_allclose(dlf.extractdata(Ymax).numpy(), x.max(axis=(0, 1), keepdims=True), atol=0)
    np.testing.assert_allclose(dlf.extractdata(Yavg).numpy(), x.mean(axis=(0, 1), keepdims=True), atol=1e-12)
    Xt = dlf.dlarray(torch.from_numpy(data((3, 2, 7), 3)), "CBT")
    assert tuple(F.avgpool(Xt, "global", PoolFormat="T").shape) == (3, 2, 1)


@pytest.mark.parametrize("kind", ["tensor", "numpy"])
def test_unformatted_input_and_name_value_pairs(kind):
    x = data((2, 3, 6, 5), 4)  # "BCSS"
    X = torch.from_numpy(x) if kind == "tensor" else x
    Y = F.maxpool(X, [2, 3], "DataFormat", "BCSS", "stride", 2, "PADDING", "same")
    expected = pool_reference(np.transpose(x, (2, 3, 1, 0)), "max", [2, 3], [2, 2], "same")  # "SSCB"
    assert dlf.dims(Y) == "" and tuple(Y.shape) == expected.shape
    np.testing.assert_allclose(dlf.extractdata(Y).numpy(), expected, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.bool])
def test_dtypes(dtype):
    X = dlf.dlarray(torch.ones(4, 4, 1, 1, dtype=dtype), "SSCB")
    expected = torch.get_default_dtype() if dtype == torch.bool else dtype
    assert F.maxpool(X, 2).dtype == expected and F.avgpool(X, 2, Padding=1).dtype == expected


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_avgpool_3d_in_half_precision_on_cpu(dtype):
    # torch's CPU kernel has no half precision: computed in float32, returned in the input's dtype
    X = dlf.dlarray(torch.arange(8.0).reshape(2, 2, 2, 1, 1).to(dtype), "SSSCB")
    Y = F.avgpool(X, 2, Padding=[1, 0, 0, 0, 0, 0], PaddingValue="mean")
    assert Y.dtype == dtype and dlf.extractdata(Y).flatten().tolist() == [1.5, 3.5]


def test_gradients_of_avgpool():
    x = torch.randn(4, 3, 2, 1, dtype=torch.float64, requires_grad=True)

    def pool(x):
        Y = F.avgpool(dlf.dlarray(x, "SSCB"), [2, 3], Padding=[1, 0, 2, 1], PaddingValue="mean", Stride=2)
        return dlf.stripdims(Y)

    assert torch.autograd.gradcheck(pool, (x,))


X4 = dlf.dlarray(torch.ones(5, 5, 2, 1), "SSCB")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: F.maxpool(X4, 0), r"maxpool: poolsize must be a positive integer or a vector of 2"),
        (
            lambda: F.maxpool(X4, "all"),
            r'maxpool: poolsize must be one of "global", or positive integers; got "all"',
        ),
        (lambda: F.maxpool(X4, [2, 2, 2]), r"maxpool: poolsize must be .* got \[2, 2, 2\]"),
        (lambda: F.avgpool(X4, 2, Stride=[1, 0]), r"avgpool: Stride must be a positive integer"),
        (
            lambda: F.avgpool(X4, 2, Padding="causal"),
            r'avgpool: Padding must be one of "same", or nonnegative',
        ),
        (
            lambda: F.maxpool(X4, 2, Padding=2),
            r"maxpool: the padding \(2 before, 2 after\) must be smaller than the pooling region \(2\)",
        ),
        (lambda: F.avgpool(X4, 2, PaddingValue=1), r'avgpool: PaddingValue must be 0 or "mean"; got 1'),
        (lambda: F.avgpool(X4, 2, PaddingValue="max"), r'avgpool: PaddingValue must be one of "mean", or 0'),
        (lambda: F.maxpool(X4, 6), r"maxpool: the window spans 6 elements and the padded input only 5"),
        (lambda: F.maxpool(X4, "global", Stride=2), r'maxpool: "global" pooling .* has no Stride or Padding'),
        (
            lambda: F.maxpool(dlf.dlarray(torch.ones(3, 2, 4), "CBT"), 2),
            r'maxpool slides over "S" dimensions, or over "T" when asked to; the input of format "CBT" has no "S"',
        ),
        (
            lambda: F.maxpool(X4, 2, PoolFormat="SC"),
            r'maxpool: PoolFormat labels the pooled dimensions with "S" and "T"',
        ),
        (
            lambda: F.maxpool(X4, 2, PoolFormat="S"),
            r'maxpool: PoolFormat "S" make\(s\) the operation slide over 1 "S" dimension\(s\), and the input',
        ),
        (
            lambda: F.avgpool(X4, 2, PoolFormat="T"),
            r'avgpool: PoolFormat "T" make\(s\) the operation slide over "T"',
        ),
        (lambda: F.avgpool(torch.ones(4, 4), 2), r'avgpool needs a formatted dlarray, or DataFormat="..."'),
        (
            lambda: F.avgpool(X4, 2, "Strides", 2),
            r"avgpool has no option 'Strides'; the options are: Stride, Padding",
        ),
        (
            lambda: F.maxpool(dlf.dlarray(torch.ones(2, 2, 2, 2, 2, 1), "SSSSCB"), 2),
            r"maxpool slides over at most 3 dimensions",
        ),
    ],
)
def test_errors_name_the_function_the_value_and_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
