"""positionEmbeddingLayer (docs/position_embedding.md), property by property, against NumPy references."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError, PositionEmbeddingLayer, positionEmbeddingLayer


def reference_embedding(weights: np.ndarray, in_fmt: str, in_shape, out_fmt: str, position: str, offset: int):
    """Float64 reference built index by index: Y[..c..p..] = W[c, offset + p]."""
    sizes = dict(zip(_names(in_fmt), in_shape, strict=True))
    sizes["C0"] = weights.shape[0]
    out_names = _names(out_fmt)
    out_shape = [sizes[name] for name in out_names]
    result = np.empty(out_shape)
    c_axis, p_axis = out_names.index("C0"), out_names.index(f"{position}0")
    for index in itertools.product(*(range(n) for n in out_shape)):
        result[index] = weights[index[c_axis], offset + index[p_axis]]
    return result


def _names(fmt):
    return [f"{label}{fmt[:i].count(label)}" for i, label in enumerate(fmt)]


# -- construction and properties --------------------------------------------------------------
def test_defaults_follow_matlab():
    layer = positionEmbeddingLayer(64, 128)
    assert layer.OutputSize == 64 and layer.MaxPosition == 128
    assert layer.PositionDimension == "auto"
    assert layer.WeightsInitializer == "narrow-normal"
    assert layer.WeightLearnRateFactor == 1 and layer.WeightL2Factor == 1
    assert layer.PositionOffset == 0 and layer.Name == ""
    assert (layer.NumInputs, layer.InputNames, layer.NumOutputs, layer.OutputNames) == (
        1,
        ("in",),
        1,
        ("out",),
    )
    assert isinstance(layer.Weights, torch.nn.Parameter)
    assert tuple(layer.Weights.shape) == (64, 128) and layer.Weights.dtype == torch.float32
    assert list(layer.state_dict()) == ["Weights"]


@pytest.mark.parametrize(
    "value", [5, np.int64(5), np.uint8(5), torch.tensor(5), 5.0, np.float32(5.0), torch.tensor(5.0)], ids=repr
)
def test_sizes_accept_every_integer_kind(value):
    layer = positionEmbeddingLayer(value, value)
    assert layer.OutputSize == 5 and type(layer.OutputSize) is int
    assert layer.MaxPosition == 5 and type(layer.MaxPosition) is int


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0, "0 \\(int\\)"),
        (-3, "-3 \\(int\\)"),
        (2.5, "2.5 \\(float\\)"),
        ("64", '"64" \\(a string\\)'),
        (True, "True \\(a logical\\)"),
        (None, "None \\(NoneType\\)"),
        (math.nan, "nan \\(float\\)"),
        (math.inf, "inf \\(float\\)"),
        (torch.tensor([3, 4]), "a Tensor of shape \\(2,\\)"),
        (3 + 0j, "\\(3\\+0j\\) \\(complex\\)"),
    ],
)
@pytest.mark.parametrize("name", ["OutputSize", "MaxPosition"])
def test_bad_sizes_name_the_value_and_what_is_allowed(name, value, shown):
    args = {"OutputSize": 4, "MaxPosition": 4, name: value}
    with pytest.raises(DLFormatError, match=f"^{name} must be a positive integer; got {shown}"):
        positionEmbeddingLayer(args["OutputSize"], args["MaxPosition"])


@pytest.mark.parametrize("value", ["auto", "temporal", "spatial", "AUTO", "Temporal"])
def test_position_dimension_is_case_insensitive(value):
    assert positionEmbeddingLayer(2, 3, PositionDimension=value).PositionDimension == value.lower()


def test_bad_position_dimension():
    with pytest.raises(
        DLFormatError, match=r'PositionDimension must be one of "auto", "temporal", "spatial"; got "time"'
    ):
        positionEmbeddingLayer(2, 3, PositionDimension="time")


@pytest.mark.parametrize("name", ["OutputSize", "MaxPosition", "PositionDimension"])
def test_read_only_properties_cannot_be_set(name):
    layer = positionEmbeddingLayer(2, 3)
    before = getattr(layer, name)
    with pytest.raises(
        DLFormatError, match=f"You cannot set the read-only property '{name}' of PositionEmbeddingLayer"
    ):
        setattr(layer, name, 4)
    assert getattr(layer, name) == before


def test_settable_properties_validate_and_change_nothing_on_error():
    layer = positionEmbeddingLayer(2, 3)
    layer.PositionOffset = np.int32(2)
    layer.Name = "pe"
    layer.WeightsInitializer = "Glorot"
    layer.WeightLearnRateFactor = 0.5
    assert (layer.PositionOffset, layer.Name, layer.WeightsInitializer, layer.WeightLearnRateFactor) == (
        2,
        "pe",
        "glorot",
        0.5,
    )
    for name, value, message in [
        ("PositionOffset", -1, r"PositionOffset must be an integer >= 0; got -1"),
        ("PositionOffset", 1.5, r"PositionOffset must be an integer >= 0; got 1.5"),
        ("Name", 3, r"Name must be a string; got 3 \(int\)"),
        (
            "WeightsInitializer",
            "xavier",
            r'WeightsInitializer must be one of "narrow-normal", "glorot", "he", "zeros", "ones", or a function handle \(a callable\); got "xavier" \(a string\)',
        ),
        ("WeightLearnRateFactor", -0.1, r"WeightLearnRateFactor must be a finite scalar >= 0; got -0.1"),
        ("WeightL2Factor", math.nan, r"WeightL2Factor must be a finite scalar >= 0; got nan"),
        ("WeightL2Factor", math.inf, r"WeightL2Factor must be a finite scalar >= 0; got inf"),
        ("WeightL2Factor", "1", r'WeightL2Factor must be a finite scalar >= 0; got "1"'),
    ]:
        before = getattr(layer, name)
        with pytest.raises(DLFormatError, match=message):
            setattr(layer, name, value)
        assert getattr(layer, name) == before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"WeightLearnRateFactor": -1}, r"WeightLearnRateFactor must be a finite scalar >= 0; got -1"),
        ({"WeightL2Factor": math.inf}, r"WeightL2Factor must be a finite scalar >= 0; got inf"),
        ({"PositionOffset": -2}, r"PositionOffset must be an integer >= 0; got -2"),
        ({"WeightsInitializer": "uniform"}, r'WeightsInitializer must be one of "narrow-normal"'),
        ({"dtype": torch.int32}, r"dtype must be a floating torch dtype"),
    ],
)
def test_bad_name_value_options(kwargs, message):
    with pytest.raises(DLFormatError, match=message):
        positionEmbeddingLayer(4, 8, **kwargs)


def test_name_value_options_match_case_insensitively_like_matlab():
    layer = positionEmbeddingLayer(4, 8, name="pe", positiondimension="Spatial", WEIGHTL2FACTOR=2)
    assert (layer.Name, layer.PositionDimension, layer.WeightL2Factor) == ("pe", "spatial", 2.0)
    assert positionEmbeddingLayer(OutputSize=3, MaxPosition=5).OutputSize == 3


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (
            (4, 8),
            {"Bias": 1},
            r"positionEmbeddingLayer has no option 'Bias'; the options are: PositionDimension, PositionOffset",
        ),
        ((4, 8), {"name": "a", "Name": "b"}, r"positionEmbeddingLayer got option 'Name' twice"),
        ((4,), {}, r"positionEmbeddingLayer: missing a required argument: 'MaxPosition'"),
        ((4, 8, "auto"), {}, r"positionEmbeddingLayer: too many positional arguments"),
    ],
)
def test_bad_constructor_calls(args, kwargs, message):
    with pytest.raises(DLFormatError, match=message):
        positionEmbeddingLayer(*args, **kwargs)


# -- weights ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, ">f8"])
def test_weights_given_as_numpy_are_copied_with_their_dtype(dtype):
    values = np.arange(12.0).reshape(3, 4).astype(dtype)
    layer = positionEmbeddingLayer(3, 4, Weights=values)
    assert layer.Weights.dtype == torch.from_numpy(values.astype(np.dtype(dtype).newbyteorder("="))).dtype
    np.testing.assert_array_equal(layer.Weights.detach().numpy(), values)
    values[0, 0] = 99
    assert layer.Weights[0, 0].item() == 0


def test_weights_given_with_a_dtype_argument_are_cast():
    layer = positionEmbeddingLayer(3, 4, Weights=np.ones((3, 4)), dtype=torch.float32)
    assert layer.Weights.dtype == torch.float32


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.ones((4, 3)), r"PositionEmbeddingLayer Weights must have shape 3×4; got 4×3"),
        (torch.ones(3, 4, 1), r"must have shape 3×4; got 3×4×1"),
        (
            np.ones((3, 4), dtype=np.int32),
            r"must be a floating-point array \(float32 or float64\); got a NumPy array of dtype int32",
        ),
        (
            torch.ones(3, 4, dtype=torch.int64),
            r"must be a floating-point tensor \(float32 or float64\); got dtype torch.int64",
        ),
        ([[1.0] * 4] * 3, r"must be a NumPy array or torch tensor; got \[\["),
    ],
)
def test_bad_weights_are_refused_and_change_nothing(value, message):
    with pytest.raises(DLFormatError, match=message):
        positionEmbeddingLayer(3, 4, Weights=value)
    layer = positionEmbeddingLayer(3, 4)
    before = layer.Weights
    snapshot = before.detach().clone()
    with pytest.raises(DLFormatError, match=message):
        layer.Weights = value
    assert layer.Weights is before and torch.equal(layer.Weights, snapshot)


def test_assigning_weights_stores_a_checked_copy_as_a_new_parameter():
    layer = positionEmbeddingLayer(3, 4)
    values = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    layer.Weights = values
    assert isinstance(layer.Weights, torch.nn.Parameter) and layer.Weights.requires_grad
    assert layer.Weights.dtype == torch.float64  # MATLAB keeps the assigned class (double)
    assert torch.equal(layer.Weights.detach(), values) and layer.Weights.data_ptr() != values.data_ptr()
    assert list(layer.state_dict()) == ["Weights"]


# -- initializers -----------------------------------------------------------------------------------
def test_narrow_normal_draws_from_n_0_0_01():
    weights = positionEmbeddingLayer(200, 500, generator=torch.Generator().manual_seed(0)).Weights.double()
    assert abs(weights.mean().item()) < 3 * 0.01 / math.sqrt(weights.numel())
    assert weights.std().item() == pytest.approx(0.01, rel=0.01)


def test_glorot_draws_uniformly_within_sqrt_6_over_fan_sum():
    out_size, max_position = 300, 500
    bound = math.sqrt(6 / (max_position + out_size))
    weights = positionEmbeddingLayer(out_size, max_position, WeightsInitializer="glorot").Weights.double()
    assert weights.abs().max().item() <= bound
    assert weights.abs().max().item() > 0.99 * bound
    assert weights.var().item() == pytest.approx(2 / (max_position + out_size), rel=0.02)


def test_he_draws_from_n_0_2_over_max_position():
    weights = positionEmbeddingLayer(300, 400, WeightsInitializer="he").Weights.double()
    assert weights.var().item() == pytest.approx(2 / 400, rel=0.02)


@pytest.mark.parametrize(("name", "value"), [("zeros", 0.0), ("ones", 1.0)])
def test_constant_initializers(name, value):
    assert torch.equal(
        positionEmbeddingLayer(3, 4, WeightsInitializer=name).Weights, torch.full((3, 4), value)
    )


def test_narrownormal_is_an_alias():
    assert (
        positionEmbeddingLayer(2, 3, WeightsInitializer="narrownormal").WeightsInitializer == "narrow-normal"
    )


def test_draws_honour_manual_seed_and_generator():
    torch.manual_seed(11)
    a = positionEmbeddingLayer(5, 7, WeightsInitializer="glorot").Weights
    torch.manual_seed(11)
    b = positionEmbeddingLayer(5, 7, WeightsInitializer="glorot").Weights
    assert torch.equal(a, b)
    c = positionEmbeddingLayer(5, 7, generator=torch.Generator().manual_seed(3)).Weights
    torch.manual_seed(99)
    d = positionEmbeddingLayer(5, 7, generator=torch.Generator().manual_seed(3)).Weights
    assert torch.equal(c, d) and not torch.equal(a, c)


def test_callable_initializer_gets_matlabs_size_vector():
    seen = []

    def init(sz):
        seen.append(sz)
        return np.arange(sz[0] * sz[1], dtype=np.float64).reshape(sz)

    layer = positionEmbeddingLayer(3, 4, WeightsInitializer=init)
    assert seen == [(3, 4)]
    assert layer.WeightsInitializer is init
    assert layer.Weights.dtype == torch.float32
    np.testing.assert_array_equal(layer.Weights.detach().numpy(), np.arange(12.0).reshape(3, 4))
    assert "@init" in repr(layer)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (
            lambda sz: np.ones((sz[1], sz[0])),
            r"the weights initializer <lambda> must return an array of size 3×4 \(it is called with sz = \(3, 4\)\); got 4×3",
        ),
        (lambda sz: torch.ones(3), r"must return an array of size 3×4 .*got 3"),
        (lambda sz: "weights", r"must return a real numeric array of size 3×4; got \"weights\""),
        (lambda sz: None, r"must return a real numeric array of size 3×4; got None"),
        (
            lambda sz: torch.ones(3, 4, dtype=torch.complex64),
            r"must return real numbers; got dtype torch.complex64",
        ),
    ],
)
def test_callable_initializer_returning_the_wrong_thing(function, message):
    with pytest.raises(DLFormatError, match=message):
        positionEmbeddingLayer(3, 4, WeightsInitializer=function)
    layer = positionEmbeddingLayer(3, 4)
    before = layer.Weights.detach().clone()
    layer.WeightsInitializer = function
    with pytest.raises(DLFormatError, match=message):
        layer.reset_parameters()
    assert torch.equal(layer.Weights, before)


# -- forward --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fmt", "shape", "mode", "out_fmt", "position"),
    [
        ("CBT", (3, 2, 5), "auto", "CBT", "T"),
        ("BT", (2, 5), "auto", "CBT", "T"),
        ("SCB", (5, 3, 2), "auto", "SCB", "S"),
        ("SB", (5, 2), "auto", "SCB", "S"),
        ("SU", (5, 2), "auto", "SCU", "S"),
        ("TU", (5, 2), "auto", "CTU", "T"),
        ("SSBT", (2, 3, 2, 5), "auto", "SSCBT", "T"),
        ("SCBT", (4, 3, 2, 5), "spatial", "SCBT", "S"),
        ("SCBTU", (4, 3, 2, 5, 2), "auto", "SCBTU", "T"),
        ("SSSUUBT", (2, 2, 2, 3, 2, 2, 5), "temporal", "SSSCBTUU", "T"),
        ("TCB", (5, 3, 2), "auto", "CBT", "T"),
    ],
)
@pytest.mark.parametrize("offset", [0, 3])
def test_every_output_vector_is_the_weights_column_of_its_position(
    fmt, shape, mode, out_fmt, position, offset
):
    layer = positionEmbeddingLayer(
        4, 9, PositionDimension=mode, PositionOffset=offset, WeightsInitializer="glorot"
    )
    X = dlf.dlarray(torch.randn(shape), fmt)
    Y = layer(X)
    assert dlf.dims(Y) == out_fmt
    expected = reference_embedding(
        layer.Weights.detach().double().numpy(), dlf.dims(X), tuple(X.shape), out_fmt, position, offset
    )
    assert tuple(Y.shape) == expected.shape
    np.testing.assert_array_equal(dlf.stripdims(Y).detach().double().numpy(), expected)


def test_the_input_values_are_never_read():
    layer = positionEmbeddingLayer(4, 9)
    X = dlf.dlarray(torch.empty(3, 2, 5, device="meta"), "CBT")
    Y = layer(X)
    assert tuple(Y.shape) == (4, 2, 5) and Y.device.type == "cpu"
    nan_input = dlf.dlarray(torch.full((3, 2, 5), math.nan), "CBT")
    assert not torch.isnan(dlf.stripdims(layer(nan_input))).any()


def test_output_is_a_broadcast_view_of_the_weights():
    layer = positionEmbeddingLayer(4, 9, PositionOffset=2)
    Y = layer(dlf.dlarray(torch.randn(3, 256, 5), "CBT"))
    data = dlf.stripdims(Y)
    assert data.stride(1) == 0  # the batch costs nothing
    assert data.untyped_storage().data_ptr() == layer.Weights.untyped_storage().data_ptr()
    assert data.data_ptr() == layer.Weights[:, 2].data_ptr()


@pytest.mark.parametrize("offset", [0, 2])
def test_weight_gradient_sums_over_every_other_dimension(offset):
    layer = positionEmbeddingLayer(3, 8, PositionOffset=offset, dtype=torch.float64)
    X = dlf.dlarray(torch.randn(2, 4, 3, 5), "SBCT")  # canonical S C B T = 2×3×4×5
    upstream = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    (dlf.stripdims(layer(X)) * upstream).sum().backward()
    expected = np.zeros((3, 8))
    expected[:, offset : offset + 5] = upstream.numpy().sum(axis=(0, 2))
    np.testing.assert_allclose(layer.Weights.grad.numpy(), expected, rtol=1e-12)


def test_position_offset_shifts_the_columns_for_cached_decoding():
    layer = positionEmbeddingLayer(4, 10)
    full = dlf.stripdims(layer(dlf.dlarray(torch.zeros(1, 1, 6), "CBT")))
    layer.PositionOffset = 5
    step = dlf.stripdims(layer(dlf.dlarray(torch.zeros(1, 1, 1), "CBT")))
    assert torch.equal(step[:, :, 0], full[:, :, 5])


@pytest.mark.parametrize(
    ("length", "offset", "message"),
    [
        (129, 0, r"the input's 129 positions along \"T\" reach position 129, beyond MaxPosition 128"),
        (
            40,
            100,
            r"PositionOffset 100 plus the input's 40 positions along \"T\" reach position 140, beyond MaxPosition 128",
        ),
        (1, 128, r"PositionOffset 128 plus the input's 1 positions along \"T\" reach position 129"),
    ],
)
def test_positions_beyond_max_position_are_an_error(length, offset, message):
    layer = positionEmbeddingLayer(4, 128, Name="posemb", PositionOffset=offset)
    with pytest.raises(DLFormatError, match=r"^PositionEmbeddingLayer 'posemb': " + message):
        layer(dlf.dlarray(torch.randn(4, 1, length), "CBT"))


def test_sequences_up_to_max_position_are_fine():
    layer = positionEmbeddingLayer(4, 128, PositionOffset=28)
    assert tuple(layer(dlf.dlarray(torch.randn(4, 1, 100), "CBT")).shape) == (4, 1, 100)


@pytest.mark.parametrize(
    ("mode", "fmt", "shape", "message"),
    [
        (
            "temporal",
            "SCB",
            (3, 2, 2),
            r'PositionDimension "temporal" needs a "T" dimension; the input format "SCB" has none',
        ),
        (
            "spatial",
            "SSCB",
            (3, 3, 2, 2),
            r'PositionDimension "spatial" needs exactly one "S" dimension; the input format "SSCB" has 2',
        ),
        (
            "spatial",
            "CBT",
            (2, 2, 3),
            r'PositionDimension "spatial" needs exactly one "S" dimension; the input format "CBT" has 0',
        ),
        (
            "auto",
            "SSCB",
            (3, 3, 2, 2),
            r'PositionDimension "auto" embeds the "T" dimension, or else a single "S" dimension; the input format "SSCB" has no "T" and 2 "S" dimensions',
        ),
        (
            "auto",
            "CB",
            (2, 2),
            r'PositionDimension "auto" embeds .* the input format "CB" has no "T" and 0 "S" dimensions',
        ),
    ],
)
def test_missing_position_dimensions_are_errors(mode, fmt, shape, message):
    with pytest.raises(DLFormatError, match="^PositionEmbeddingLayer 'pe': " + message):
        positionEmbeddingLayer(2, 8, PositionDimension=mode, Name="pe")(dlf.dlarray(torch.randn(shape), fmt))


@pytest.mark.parametrize(
    ("value", "got"),
    [(dlf.dlarray(torch.randn(2, 3)), "an unformatted dlarray"), (torch.randn(2, 3), "a Tensor")],
)
def test_unformatted_input_is_an_error(value, got):
    layer = positionEmbeddingLayer(2, 8, Name="pe")
    with pytest.raises(
        DLFormatError,
        match=rf"PositionEmbeddingLayer 'pe' needs a formatted dlarray input, such as dlarray\(x, \"CBT\"\); got {got}",
    ):
        layer(value)


def test_functional_form_matches_the_layer_and_checks_its_arguments():
    from dlformat.functional import position_embedding

    layer = positionEmbeddingLayer(3, 6, PositionOffset=1)
    X = dlf.dlarray(torch.randn(3, 2, 4), "CBT")
    assert torch.equal(
        dlf.stripdims(position_embedding(X, layer.Weights, "Auto", 1)), dlf.stripdims(layer(X))
    )
    with pytest.raises(DLFormatError, match=r"weights must be a 2-D tensor"):
        position_embedding(X, torch.ones(3))
    with pytest.raises(DLFormatError, match=r"offset must be an integer >= 0; got -1"):
        position_embedding(X, layer.Weights, offset=-1)
    with pytest.raises(
        DLFormatError,
        match=r"^position_embedding: PositionOffset 3 plus the input's 4 positions along \"T\" reach position 7, beyond MaxPosition 6",
    ):
        position_embedding(X, layer.Weights, offset=3)


def test_repr_shows_matlabs_property_display():
    layer = positionEmbeddingLayer(64, 128, Name="posemb", WeightsInitializer="glorot")
    lines = repr(layer).splitlines()
    assert lines[0] == "PositionEmbeddingLayer with properties:"
    assert "                     Name: 'posemb'" in lines
    assert "               OutputSize: 64" in lines
    assert "                  Weights: [64×128 float32]" in lines
    assert "       WeightsInitializer: 'glorot'" in lines
    assert "    WeightLearnRateFactor: 1" in lines


def test_class_and_function_build_the_same_layer():
    a = PositionEmbeddingLayer(3, 5, Name="x", PositionDimension="temporal")
    b = positionEmbeddingLayer(3, 5, Name="x", PositionDimension="temporal")
    assert a.get_config() == b.get_config() and type(a) is type(b)


@pytest.mark.parametrize("offset", [0, 3])
def test_non_contiguous_weights_are_read_through_their_strides(offset):
    table = torch.randn(9, 4, dtype=torch.float64)  # weights given as a transposed view
    X = dlf.dlarray(torch.randn(2, 6, 5), "SBT")
    Y = dlf.functional.position_embedding(X, table.t(), offset=offset)
    expected = reference_embedding(table.t().numpy(), "SBT", (2, 6, 5), "SCBT", "T", offset)
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), expected)


@pytest.mark.parametrize(
    ("shape", "fmt"), [((6, 10, 4), "BTC"), ((4, 6, 10), "CBT"), ((10, 4, 6), "TCB"), ((6, 4, 3, 10), "BCUT")]
)
def test_adding_the_embedding_keeps_the_inputs_memory_order(shape, fmt):
    """Batch-first memory stays batch-first through X + layer(X): no hidden transposed copy."""
    layer = positionEmbeddingLayer(4, 16)
    X = dlf.dlarray(torch.randn(shape), fmt)
    Y = X + layer(X)
    assert Y._data.stride() == X._data.stride()
    torch.testing.assert_close(dlf.stripdims(Y), dlf.stripdims(X) + dlf.stripdims(layer(X)), rtol=0, atol=0)


@pytest.mark.parametrize("fmt", ["CBT", "BTC"])
def test_in_place_addition_writes_into_the_input(fmt):
    layer = positionEmbeddingLayer(4, 16, WeightsInitializer="glorot")
    X = dlf.dlarray(torch.randn(3, 7, 4) if fmt == "BTC" else torch.randn(4, 3, 7), fmt)
    expected = dlf.stripdims(X).clone() + layer.Weights.detach()[:, None, :7]
    storage = X._data.data_ptr()
    with torch.no_grad():
        X += layer(X)
    assert X._data.data_ptr() == storage and dlf.dims(X) == "CBT"
    torch.testing.assert_close(dlf.stripdims(X), expected, rtol=0, atol=0)


@pytest.mark.parametrize(
    "make",
    [lambda: positionEmbeddingLayer(4, 16), lambda: dlf.sinusoidalPositionEncodingLayer(4)],
    ids=["learned", "sinusoidal"],
)
@pytest.mark.parametrize(("shape", "fmt", "fastest"), [((6, 10, 4), "BTC", "C"), ((4, 6, 10), "CBT", "T")])
@pytest.mark.parametrize("offset", [0, 3])
def test_the_embedding_is_laid_out_like_the_input(make, shape, fmt, fastest, offset):
    """The view is read with unit stride along the input's fastest dimension, so the addition streams."""
    layer = make()
    layer.PositionOffset = offset
    X = dlf.dlarray(torch.randn(shape), fmt)
    view = layer(X)._data
    assert view.stride("CBT".index(fastest)) == 1 and view.stride(1) == 0
    expected = layer(dlf.dlarray(torch.randn(4, 6, 10), "CBT"))._data  # the other memory order
    torch.testing.assert_close(view, expected, rtol=0, atol=0)
