"""sinusoidalPositionEncodingLayer: MATLAB's options, formats and the Vaswani formula."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError, sinusoidalPositionEncodingLayer

from ..test_functional import vaswani


def names(fmt):
    return [f"{label}{fmt[:i].count(label)}" for i, label in enumerate(fmt)]


@pytest.mark.parametrize(
    ("fmt", "shape", "positions", "out_fmt", "label"),
    [
        ("CBT", (6, 2, 5), "auto", "CBT", "T"),
        ("BT", (2, 5), "auto", "CBT", "T"),
        ("SCB", (5, 6, 2), "auto", "SCB", "S"),
        ("SU", (5, 2), "auto", "SCU", "S"),
        ("SSCBT", (2, 3, 6, 2, 5), "temporal-indices", "SSCBT", "T"),
        ("SCBT", (4, 6, 2, 5), "spatial-indices", "SCBT", "S"),
    ],
)
@pytest.mark.parametrize("offset", [0, 4])
def test_index_positions_against_vaswani(fmt, shape, positions, out_fmt, label, offset):
    layer = sinusoidalPositionEncodingLayer(6, Positions=positions, PositionOffset=offset)
    X = dlf.dlarray(torch.randn(shape, dtype=torch.float64), fmt)
    Y = layer(X)
    assert dlf.dims(Y) == out_fmt and Y.dtype == torch.float64
    sizes = dict(zip(names(dlf.dims(X)), X.shape, strict=True)) | {"C0": 6}
    out_names = names(out_fmt)
    expected = np.empty([sizes[n] for n in out_names])
    table = vaswani(np.arange(offset, offset + sizes[f"{label}0"], dtype=np.float64), 6)
    for index in itertools.product(*(range(n) for n in expected.shape)):
        expected[index] = table[index[out_names.index(f"{label}0")], index[out_names.index("C0")]]
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), expected, atol=1e-12)


@pytest.mark.parametrize(
    ("fmt", "shape"), [("CB", (1, 4)), ("B", (4,)), ("SSCB", (2, 3, 1, 2)), ("UU", (3, 2))]
)
def test_data_values_encode_each_element(fmt, shape):
    X = dlf.dlarray(torch.rand(shape, dtype=torch.float64) * 50, fmt)
    Y = sinusoidalPositionEncodingLayer(8)(X)
    rest = dlf.dims(X).replace("C", "")
    assert dlf.dims(Y) == "".join(sorted(rest + "C", key="SCBTU".index))  # C in canonical place
    values = dlf.stripdims(X, rest + "C")[..., 0] if "C" in fmt else dlf.stripdims(X, rest)
    np.testing.assert_allclose(dlf.stripdims(Y, rest + "C").numpy(), vaswani(values.numpy(), 8), atol=1e-12)


def test_data_values_are_positions_themselves_and_ignore_the_offset():
    layer = sinusoidalPositionEncodingLayer(4, Positions="data-values", PositionOffset=10)
    Y = layer(dlf.dlarray(torch.tensor([[0.0, 3.0]], dtype=torch.float64), "CB"))
    np.testing.assert_allclose(dlf.stripdims(Y).numpy().T, vaswani(np.array([0.0, 3.0]), 4), atol=1e-12)


def test_data_values_need_a_single_channel():
    with pytest.raises(
        DLFormatError,
        match=r'Positions "data-values" reads one position per element, so the input\'s "C" must have size 1 .* it has size 3',
    ):
        sinusoidalPositionEncodingLayer(4, Positions="data-values")(dlf.dlarray(torch.randn(3, 2), "CB"))


def test_gradients_flow_into_data_values():
    values = torch.tensor([[0.5, 2.0]], dtype=torch.float64, requires_grad=True)
    Y = sinusoidalPositionEncodingLayer(2)(dlf.dlarray(values, "CB"))
    dlf.stripdims(Y)[0].sum().backward()  # d/dp sin(p) = cos(p)
    torch.testing.assert_close(values.grad, torch.cos(values.detach()))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_low_precision_is_computed_in_float32_then_cast(dtype):
    Y = sinusoidalPositionEncodingLayer(16)(dlf.dlarray(torch.zeros(16, 1, 300, dtype=dtype), "CBT"))
    assert Y.dtype == dtype
    exact = torch.from_numpy(vaswani(np.arange(300.0), 16).T)
    error = (dlf.stripdims(Y)[:, 0, :].double() - exact).abs().max().item()
    # one rounding of the output dtype, or the float32 rounding of angles up to 300 rad
    assert error <= max(torch.finfo(dtype).eps, 300 * torch.finfo(torch.float32).eps)
    if dtype != torch.float32:  # what computing in the low precision itself would give
        naive = (
            torch.arange(300, dtype=dtype)[None, :]
            * (10000.0 ** (-torch.arange(8) * 2 / 16)).to(dtype)[:, None]
        )
        assert (naive.sin().double() - exact[0::2]).abs().max().item() > 10 * torch.finfo(dtype).eps


def test_tables_are_cached_per_length_dim_device_and_dtype():
    layer = sinusoidalPositionEncodingLayer(8)
    first = dlf.stripdims(layer(dlf.dlarray(torch.zeros(8, 2, 10), "CBT")))
    again = dlf.stripdims(layer(dlf.dlarray(torch.zeros(8, 5, 10), "CBT")))
    assert first.untyped_storage().data_ptr() == again.untyped_storage().data_ptr()
    other = dlf.stripdims(layer(dlf.dlarray(torch.zeros(8, 2, 10, dtype=torch.float64), "CBT")))
    assert other.untyped_storage().data_ptr() != first.untyped_storage().data_ptr()
    assert first.stride(1) == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"OutputSize": 7}, r"OutputSize must be an even positive integer; got 7"),
        ({"OutputSize": 0}, r"OutputSize must be a positive integer; got 0"),
        (
            {"OutputSize": 4, "Positions": "indices"},
            r'Positions must be one of "auto", "temporal-indices", "spatial-indices", "data-values"; got "indices"',
        ),
        ({"OutputSize": 4, "PositionOffset": -1}, r"PositionOffset must be an integer >= 0; got -1"),
    ],
)
def test_bad_options(kwargs, message):
    with pytest.raises(DLFormatError, match=message):
        sinusoidalPositionEncodingLayer(**kwargs)


@pytest.mark.parametrize(
    ("positions", "fmt", "shape", "message"),
    [
        ("temporal-indices", "SCB", (3, 4, 2), r'PositionDimension "temporal" needs a "T" dimension'),
        (
            "spatial-indices",
            "SSCB",
            (3, 3, 4, 2),
            r'PositionDimension "spatial" needs exactly one "S" dimension; the input format "SSCB" has 2',
        ),
    ],
)
def test_missing_position_dimensions(positions, fmt, shape, message):
    with pytest.raises(DLFormatError, match="^SinusoidalPositionEncodingLayer 'enc': " + message):
        sinusoidalPositionEncodingLayer(4, Positions=positions, Name="enc")(
            dlf.dlarray(torch.randn(shape), fmt)
        )


def test_unformatted_input():
    for positions in ("auto", "data-values", "temporal-indices"):
        with pytest.raises(DLFormatError, match=r"needs a formatted dlarray input"):
            sinusoidalPositionEncodingLayer(4, Positions=positions)(dlf.dlarray(torch.randn(2, 3)))


def test_properties_display_and_config():
    layer = sinusoidalPositionEncodingLayer(64, Positions="Temporal-Indices", Name="pe")
    assert (layer.OutputSize, layer.Positions, layer.PositionOffset, layer.Name) == (
        64,
        "temporal-indices",
        0,
        "pe",
    )
    assert (layer.NumInputs, layer.NumOutputs) == (1, 1)
    assert repr(layer).startswith("SinusoidalPositionEncodingLayer with properties:")
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()
    assert list(layer.state_dict()) == []
    with pytest.raises(DLFormatError, match=r"You cannot set the read-only property 'OutputSize'"):
        layer.OutputSize = 8


def test_the_layer_keeps_one_table_per_device_dtype_and_layout_grown_and_sliced():
    layer = dlf.sinusoidalPositionEncodingLayer(8)
    X = dlf.dlarray(torch.randn(8, 2, 10), "CBT")
    layer(X)
    layer(X, PositionOffset=5)  # within the table: sliced, not rebuilt
    (table,) = layer._tables.values()
    assert table.shape == (8, 64)  # the smallest table covers 64 positions
    layer(X, PositionOffset=100)  # beyond: grown (doubled, or to what is asked)
    (grown,) = layer._tables.values()
    assert grown.shape == (8, 128)
    layer(dlf.dlarray(torch.randn(8, 2, 10, dtype=torch.float64), "CBT"))
    assert len(layer._tables) == 2


def test_a_far_offset_costs_a_window_not_a_table():
    layer = dlf.sinusoidalPositionEncodingLayer(256)
    X = dlf.dlarray(torch.randn(256, 1, 3, dtype=torch.float64), "CBT")
    Y = layer(X, PositionOffset=10**7)
    assert not layer._tables  # nothing cached for a window beyond the table's reach
    k = np.arange(128)
    angles = (10**7 + np.arange(3))[:, None] / 10000.0 ** (2 * k / 256)
    expected = np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(3, 256).T
    # angles near 1e7 radians carry ~1e-9 of double rounding, whichever way the product is formed
    np.testing.assert_allclose(dlf.extractdata(Y)[:, 0, :].numpy(), expected, rtol=0, atol=1e-8)
