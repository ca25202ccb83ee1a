"""DLArray: the format rules of docs/formats.md, accessors, conversions, label-aligned arithmetic, pytree."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest
import torch
import torch.utils._pytree as pytree

import dlformat as dlf
from dlformat import DLFormatError

from .conftest import DEVICES

RANK = {label: rank for rank, label in enumerate("SCBTU")}


def canonical_reference(x: np.ndarray, fmt: str) -> tuple[np.ndarray, str]:
    """NumPy reference for rules 2 and 3: pad with singletons, then a stable sort by label."""
    x = x.reshape(x.shape + (1,) * (len(fmt) - x.ndim))
    order = np.argsort([RANK[label] for label in fmt], kind="stable")
    return np.transpose(x, order), "".join(fmt[i] for i in order)


# -- docs/formats.md rule 3: the required examples ----------------------------------------------------
def test_spec_example_tcb():
    X = dlf.dlarray(torch.randn(3, 4, 5), "TCB")
    assert dlf.dims(X) == "CBT"
    assert tuple(X.shape) == (4, 5, 3)


def test_spec_example_tssu():
    X = dlf.dlarray(torch.randn(5, 4, 3, 2), "TSSU")
    assert dlf.dims(X) == "SSTU"
    assert tuple(X.shape) == (4, 3, 5, 2)
    assert dlf.finddim(X, "T") == (3,)  # MATLAB's finddim page: dimT = 3, dimS = [1 2], dimB empty
    assert dlf.finddim(X, "S") == (1, 2)
    assert dlf.finddim(X, "B") == ()


def test_spec_example_ts():
    assert dlf.dims(dlf.dlarray(torch.randn(3, 4), "TS")) == "ST"


@pytest.mark.parametrize(
    ("shape", "fmt"),
    [((3, 4, 5), "TCB"), ((5, 4, 3, 2), "TSSU"), ((3, 4), "TS"), ((2, 3, 4, 5, 6), "UBSCS"), ((4, 3), "CBT")],
)
def test_data_is_permuted_like_a_stable_argsort(shape, fmt):
    x = np.random.default_rng(0).standard_normal(shape)
    expected, expected_fmt = canonical_reference(x, fmt)
    X = dlf.dlarray(torch.from_numpy(x), fmt)
    assert dlf.dims(X) == expected_fmt
    np.testing.assert_array_equal(dlf.stripdims(X).numpy(), expected)


# -- rules 2, 4, 5, 6 -------------------------------------------------------------------------
def test_extra_labels_add_trailing_singletons():
    X = dlf.dlarray(torch.randn(3, 4), "CBT")
    assert dlf.dims(X) == "CBT" and tuple(X.shape) == (3, 4, 1)


def test_fewer_labels_than_dimensions_is_an_error():
    with pytest.raises(DLFormatError, match=r'format "CB" has 2 label\(s\) but the data has 3 dimensions'):
        dlf.dlarray(torch.randn(2, 3, 4), "CB")


@pytest.mark.parametrize(
    ("shape", "fmt", "expected_fmt", "expected_shape"),
    [
        ((3, 4, 1), "CBU", "CB", (3, 4)),
        ((3, 4, 1, 1), "CBUU", "CB", (3, 4)),
        ((3, 1, 1), "CUU", "CU", (3, 1)),
        ((3, 1), "UU", "UU", (3, 1)),
        ((3, 1, 5), "SUU", "SUU", (3, 1, 5)),
        ((3, 4, 1), "CBT", "CBT", (3, 4, 1)),
        ((3, 4), "CBU", "CB", (3, 4)),  # a label beyond the data is a singleton U, dropped too
    ],
)
def test_trailing_singleton_u_dimensions_are_dropped(shape, fmt, expected_fmt, expected_shape):
    X = dlf.dlarray(torch.randn(shape), fmt)
    assert dlf.dims(X) == expected_fmt
    assert tuple(X.shape) == expected_shape


@pytest.mark.parametrize("fmt", [None, ""])
def test_no_format_gives_an_unformatted_array(fmt):
    X = dlf.dlarray(torch.randn(3, 4), fmt)
    assert dlf.dims(X) == ""
    assert tuple(X.shape) == (3, 4)
    assert dlf.finddim(X, "C") == ()


def test_relabelling_uses_the_data_as_stored():
    X = dlf.dlarray(torch.randn(3, 4, 5), "TCB")  # stored as C×B×T = 4×5×3
    Y = dlf.dlarray(X, "SSU")
    assert dlf.dims(Y) == "SSU" and tuple(Y.shape) == (4, 5, 3)
    assert dlf.stripdims(Y) is dlf.stripdims(X)
    with pytest.raises(DLFormatError, match=r'format "TS" has 2 label\(s\) but the data has 3 dimensions'):
        dlf.dlarray(X, "TS")


def test_relabelling_permutes_and_pads():
    X = dlf.dlarray(torch.randn(4, 5, 3), "CBT")
    Y = dlf.dlarray(X, "TCB")  # stored dims become T=4, C=5, B=3
    assert dlf.dims(Y) == "CBT" and tuple(Y.shape) == (5, 3, 4)
    torch.testing.assert_close(dlf.stripdims(Y), dlf.stripdims(X).permute(1, 2, 0))


def test_dlarray_of_a_dlarray_without_format_is_the_same_object():
    X = dlf.dlarray(torch.randn(2, 3), "CB")
    assert dlf.dlarray(X) is X


# -- data sources ------------------------------------------------------------------------------
def test_torch_data_is_kept_not_copied():
    x = torch.randn(4, 5)
    X = dlf.dlarray(x, "CB")
    assert dlf.stripdims(X) is x


@pytest.mark.parametrize("order", ["C", "F"])
def test_numpy_data_is_shared_in_either_memory_order(order):
    x = np.asarray(np.random.default_rng(1).standard_normal((3, 4, 5)), order=order)
    X = dlf.dlarray(x, "CBT")
    assert np.shares_memory(x, dlf.stripdims(X).numpy())
    x[0, 0, 0] = 42.0
    assert dlf.stripdims(X)[0, 0, 0].item() == 42.0


@pytest.mark.parametrize("dtype", [">f4", ">f8", "<f4", ">i4"])
def test_numpy_data_of_either_byte_order_comes_back_native(dtype):
    x = np.arange(12).reshape(3, 4).astype(dtype)
    X = dlf.dlarray(x, "CB")
    data = dlf.stripdims(X).numpy()
    assert data.dtype.isnative
    np.testing.assert_array_equal(data, x)


def test_negatively_strided_and_read_only_numpy_data_is_copied_correctly():
    x = np.arange(12.0).reshape(3, 4)[::-1, ::-2]
    np.testing.assert_array_equal(dlf.stripdims(dlf.dlarray(x, "CB")).numpy(), x)
    frozen = np.arange(6.0).reshape(2, 3)
    frozen.setflags(write=False)
    Y = dlf.dlarray(frozen, "CB")
    assert not np.shares_memory(frozen, dlf.stripdims(Y).numpy())
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), frozen)


def test_nested_lists_become_floating_tensors():
    X = dlf.dlarray([[1, 2, 3], [4, 5, 6]], "CB")
    assert X.dtype == torch.get_default_dtype()
    assert dlf.stripdims(X).tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("CBT", r"dlarray data must be a torch.Tensor, a NumPy array, a number or nested lists"),
        ([[1, 2], [3]], r"dlarray data must be"),
        (
            np.array([object(), object()]),
            r"dlarray data must be numeric or logical; got a NumPy array of dtype object",
        ),
    ],
)
def test_unusable_data_is_refused(data, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.dlarray(data, "CB")


@pytest.mark.parametrize(
    ("fmt", "message"), [("CX", r'invalid dimension label "X"'), ("CC", r'2 "C" dimensions')]
)
def test_bad_formats_are_refused(fmt, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.dlarray(torch.randn(2, 3), fmt)


# -- accessors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("label", ["X", "SC", "", 1, None])
def test_finddim_refuses_anything_but_one_label(label):
    with pytest.raises(DLFormatError, match=r"a dimension label must be one of S \(spatial\)"):
        dlf.finddim(dlf.dlarray(torch.randn(2, 3), "CB"), label)


@pytest.mark.parametrize(
    "function", [dlf.dims, dlf.stripdims, dlf.extractdata, lambda x: dlf.finddim(x, "C")]
)
def test_accessors_need_a_dlarray(function):
    with pytest.raises(DLFormatError, match=r"needs a dlarray; got Tensor"):
        function(torch.randn(2, 3))


@pytest.mark.parametrize(
    ("fmt", "target"),
    [("CBT", "BTC"), ("CBT", "TBC"), ("SSCB", "BCSS"), ("CBT", "SCBTU"), ("SCB", "BSSC"), ("CT", "TUCB")],
)
def test_stripdims_permutes_into_the_target_order(fmt, target):
    x = np.random.default_rng(2).standard_normal(tuple(range(2, 2 + len(fmt))))
    X = dlf.dlarray(x, fmt)
    # reference: label every stored dim, pad the target's extra labels, move dims by label occurrence
    stored = dlf.stripdims(X).numpy()
    names = [f"{label}{fmt[:i].count(label)}" for i, label in enumerate(dlf.dims(X))]
    wanted = [f"{label}{target[:i].count(label)}" for i, label in enumerate(target)]
    padded = stored.reshape(stored.shape + (1,) * (len(wanted) - len(names)))
    names += [name for name in wanted if name not in names]
    expected = np.transpose(padded, [names.index(name) for name in wanted])
    np.testing.assert_array_equal(dlf.stripdims(X, target).numpy(), expected)


def test_stripdims_needs_every_label_of_the_array():
    X = dlf.dlarray(torch.randn(2, 3, 4), "CBT")
    with pytest.raises(DLFormatError, match=r'format "BC" does not hold every dimension of a "CBT" array'):
        dlf.stripdims(X, "BC")


def test_stripdims_with_a_format_needs_a_formatted_array():
    with pytest.raises(DLFormatError, match=r"needs a formatted dlarray; X is unformatted"):
        dlf.stripdims(dlf.dlarray(torch.randn(2, 3)), "CB")


def test_stripdims_keeps_autograd_and_extractdata_detaches():
    x = torch.randn(3, 4, requires_grad=True)
    X = dlf.dlarray(x, "CB")
    assert dlf.stripdims(X).requires_grad
    data = dlf.extractdata(X)
    assert not data.requires_grad
    assert data.data_ptr() == x.data_ptr()


# -- arithmetic ------------------------------------------------------------------------------------
def reference_elementwise(op, a, fa, b, fb, out_fmt, out_shape):
    """Loop over every output index and pick each operand's element by label (size-1 broadcasts)."""
    result = np.empty(out_shape)
    out_names = [f"{label}{out_fmt[:i].count(label)}" for i, label in enumerate(out_fmt)]

    def pick(x, fmt, index):
        names = [f"{label}{fmt[:i].count(label)}" for i, label in enumerate(fmt)]
        return x[tuple(0 if x.shape[k] == 1 else index[out_names.index(n)] for k, n in enumerate(names))]

    for index in itertools.product(*(range(n) for n in out_shape)):
        result[index] = op(pick(a, fa, index), pick(b, fb, index))
    return result


@pytest.mark.parametrize(
    ("fa", "sa", "fb", "sb", "out", "out_shape"),
    [
        ("CBT", (3, 4, 5), "CBT", (3, 4, 5), "CBT", (3, 4, 5)),
        ("CBT", (3, 4, 5), "CT", (3, 5), "CBT", (3, 4, 5)),
        ("CT", (3, 5), "CBT", (3, 4, 5), "CBT", (3, 4, 5)),
        ("SSC", (2, 3, 4), "CB", (4, 5), "SSCB", (2, 3, 4, 5)),
        ("CBT", (3, 1, 5), "CBT", (1, 4, 5), "CBT", (3, 4, 5)),
        ("B", (4,), "T", (5,), "BT", (4, 5)),
        ("SSU", (2, 3, 4), "SSCU", (2, 3, 5, 4), "SSCU", (2, 3, 5, 4)),
    ],
)
@pytest.mark.parametrize(
    "op", [operator.add, operator.sub, operator.mul, operator.truediv], ids=lambda op: op.__name__
)
def test_arithmetic_aligns_by_label(fa, sa, fb, sb, out, out_shape, op):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(sa), rng.uniform(1, 2, sb)
    result = op(dlf.dlarray(a, fa), dlf.dlarray(b, fb))
    assert dlf.dims(result) == out
    assert tuple(result.shape) == out_shape
    expected = reference_elementwise(op, a, fa, b, fb, out, out_shape)
    np.testing.assert_allclose(dlf.stripdims(result).numpy(), expected, rtol=1e-15, atol=0)


def test_operands_in_different_input_orders_line_up_by_label():
    x = torch.randn(4, 3, 5)  # B, C, T
    X = dlf.dlarray(x, "BCT")
    Y = dlf.dlarray(x.permute(2, 1, 0), "TCB")  # same data, other order
    torch.testing.assert_close(dlf.stripdims(X - Y), torch.zeros(3, 4, 5))


def test_different_counts_of_spatial_dimensions_are_an_error():
    with pytest.raises(DLFormatError, match=r'formats "SSCB" and "SCB": they have 2 and 1 "S" dimensions'):
        dlf.dlarray(torch.randn(2, 2, 3, 4), "SSCB") + dlf.dlarray(torch.randn(2, 3, 4), "SCB")


def test_size_conflicts_name_the_label_and_both_sizes():
    with pytest.raises(DLFormatError, match=r'dimension 1 \("B"\) has size 8 in one and 9 in the other'):
        dlf.dlarray(torch.randn(4, 8, 5), "CBT") + dlf.dlarray(torch.randn(4, 9, 5), "CBT")


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        (2.0, lambda x: x + 2.0),
        (torch.arange(5.0), lambda x: x + torch.arange(5.0)),
        (np.arange(5.0), lambda x: x + torch.arange(5.0)),  # MATLAB: single wins over double
        (torch.ones(3, 1, 1), lambda x: x + 1),
    ],
    ids=["scalar", "tensor", "numpy", "broadcast-tensor"],
)
def test_plain_operands_broadcast_against_the_canonical_shape(other, expected):
    x = torch.randn(4, 5, 3)
    X = dlf.dlarray(x, "BTC")  # canonical C×B×T = 3×4×5
    for result in (X + other, other + X):
        assert dlf.dims(result) == "CBT"
        torch.testing.assert_close(dlf.stripdims(result), expected(x.permute(2, 0, 1)))


def test_reflected_operators_keep_operand_order():
    X = dlf.dlarray(torch.tensor([[2.0, 4.0]]), "CB")
    assert dlf.stripdims(1 - X).tolist() == [[-1.0, -3.0]]
    assert dlf.stripdims(8 / X).tolist() == [[4.0, 2.0]]
    assert dlf.stripdims(torch.tensor([10.0, 20.0]) - X).tolist() == [[8.0, 16.0]]
    assert dlf.stripdims(-X).tolist() == [[-2.0, -4.0]]


@pytest.mark.parametrize(
    ("other", "message"),
    [
        (torch.randn(2, 3, 4, 5), r"a 4-D tensor of shape \(2, 3, 4, 5\) cannot broadcast against a \"CBT\""),
        (
            torch.randn(7),
            r"a tensor of shape \(7,\) does not broadcast against the canonical shape \(3, 4, 5\)",
        ),
    ],
)
def test_plain_operands_that_do_not_fit_are_refused(other, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.dlarray(torch.randn(3, 4, 5), "CBT") + other


def test_unformatted_arrays_combine_as_plain_tensors():
    U = dlf.dlarray(torch.ones(3, 4))
    assert dlf.dims(U + U) == ""
    assert dlf.dims(dlf.dlarray(torch.ones(3, 4), "CB") + U) == "CB"


def test_autograd_flows_through_arithmetic():
    x = torch.randn(3, 4, requires_grad=True)
    X = dlf.dlarray(x, "BC")  # a permuted view of the leaf x
    Y = X * 3 + dlf.dlarray(torch.ones(4), "C")
    dlf.stripdims(Y).sum().backward()
    torch.testing.assert_close(x.grad, torch.full((3, 4), 3.0))


def test_grad_of_a_leaf_dlarray_is_a_dlarray_of_its_format():
    X = dlf.dlarray(torch.randn(3, 4), "BC").requires_grad_()
    dlf.stripdims(X * 2).sum().backward()
    assert dlf.dims(X.grad) == "CB" and tuple(X.grad.shape) == (4, 3)
    torch.testing.assert_close(dlf.stripdims(X.grad), torch.full((4, 3), 2.0))


# -- tensor methods -------------------------------------------------------------------------------
def test_conversions_keep_the_format():
    X = dlf.dlarray(torch.randn(2, 3, 4), "TCB")
    for converted, dtype in [
        (X.double(), torch.float64),
        (X.float(), torch.float32),
        (X.half(), torch.float16),
        (X.bfloat16(), torch.bfloat16),
        (X.to(torch.float64), torch.float64),
    ]:
        assert dlf.dims(converted) == "CBT" and converted.dtype == dtype
    assert X.cpu().device.type == "cpu"
    assert X.ndim == 3 and X.device == torch.device("cpu")
    assert not X.requires_grad
    assert X.requires_grad_() is X and X.requires_grad
    assert not X.detach().requires_grad
    assert X.clone().shape == X.shape


@pytest.mark.parametrize("device", DEVICES)
def test_device_moves_keep_the_format(device):
    X = dlf.dlarray(torch.randn(2, 3), "CB").to(device)
    assert X.device.type == device and dlf.dims(X) == "CB"


def test_repr_is_matlab_style():
    X = dlf.dlarray(torch.randn(5, 4, 3, 2), "TSSU")
    assert repr(X).startswith("4(S) × 3(S) × 5(T) × 2(U) dlarray")
    assert repr(X) == "4(S) × 3(S) × 5(T) × 2(U) dlarray (float32, cpu)"
    assert repr(dlf.dlarray(torch.randn(3, 4))).startswith("3 × 4 dlarray")
    assert "requires_grad" in repr(X.requires_grad_())


def test_pytree_sees_through_dlarray():
    X = dlf.dlarray(torch.randn(2, 3, 4), "TCB")
    leaves, spec = pytree.tree_flatten({"x": X})
    assert len(leaves) == 1 and leaves[0] is dlf.stripdims(X)
    rebuilt = pytree.tree_unflatten([leaves[0] * 2], spec)["x"]
    assert isinstance(rebuilt, dlf.DLArray) and dlf.dims(rebuilt) == "CBT"
    doubled = pytree.tree_map(lambda t: t * 2, X)
    torch.testing.assert_close(dlf.stripdims(doubled), dlf.stripdims(X) * 2)
    paths = pytree.tree_flatten_with_path(X)[0]
    assert paths[0][0] == (pytree.GetAttrKey("data"),)


# -- in-place arithmetic ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("in_place", "reference"),
    [
        (operator.iadd, np.add),
        (operator.isub, np.subtract),
        (operator.imul, np.multiply),
        (operator.itruediv, np.divide),
    ],
    ids=["+=", "-=", "*=", "/="],
)
@pytest.mark.parametrize(
    ("other_fmt", "other_shape"),
    [("CBT", (3, 4, 5)), ("TC", (5, 3)), ("B", (4,)), ("CBT", (3, 1, 5))],
    ids=["same-format", "subset-reordered", "one-label", "singleton"],
)
def test_in_place_operators_write_into_the_target_aligned_by_label(
    in_place, reference, other_fmt, other_shape
):
    target = torch.randn(3, 4, 5, dtype=torch.float64)
    other = torch.rand(other_shape, dtype=torch.float64) + 0.5
    X = dlf.dlarray(target.clone(), "CBT")
    storage = X._data.data_ptr()
    Y = dlf.dlarray(other, other_fmt)
    aligned = {"CBT": lambda o: o, "TC": lambda o: o.T[:, None, :], "B": lambda o: o[None, :, None]}
    expected = reference(target.numpy(), aligned[other_fmt](other.numpy()))
    result = in_place(X, Y)
    assert result is X and X._data.data_ptr() == storage and dlf.dims(X) == "CBT"
    np.testing.assert_allclose(X._data.numpy(), expected, rtol=1e-15)


@pytest.mark.parametrize("other", [2.0, torch.arange(5.0, dtype=torch.float64), np.arange(5.0)])
def test_in_place_with_plain_operands_broadcasts_against_the_canonical_shape(other):
    X = dlf.dlarray(torch.zeros(3, 4, 5, dtype=torch.float64), "CBT")
    X += other
    np.testing.assert_array_equal(X._data.numpy(), np.zeros((3, 4, 5)) + np.asarray(other))


@pytest.mark.parametrize(
    ("target", "other", "message"),
    [
        (
            ("CT", (3, 5)),
            ("CBT", (3, 4, 5)),
            r'cannot update a "CT" dlarray in place with a "CBT" one: the result would have format "CBT"',
        ),
        (
            ("CBT", (3, 1, 5)),
            ("CBT", (3, 4, 5)),
            r"shape \(3, 1, 5\) in place with one of shape \(3, 4, 5\): the result would be larger",
        ),
        (("CBT", (3, 4, 5)), ("CBT", (3, 6, 5)), r'dimension 1 \("B"\) has size 4 in one and 6 in the other'),
        (
            ("", (3, 4)),
            ("CB", (3, 4)),
            r'an in-place operation on an unformatted dlarray cannot take a "CB" dlarray',
        ),
        (("SSC", (2, 2, 3)), ("SC", (2, 3)), r'they have 2 and 1 "S" dimensions'),
    ],
)
def test_in_place_operations_that_cannot_write_the_result_change_nothing(target, other, message):
    data = torch.randn(target[1])
    X = dlf.dlarray(data.clone(), target[0] or None)
    with pytest.raises(DLFormatError, match=message):
        X += dlf.dlarray(torch.randn(other[1]), other[0])
    assert torch.equal(X._data, data)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (torch.float64, torch.float32, torch.float32),
        (torch.float32, torch.float64, torch.float32),
        (torch.float64, torch.float64, torch.float64),
        (torch.float64, torch.bfloat16, torch.bfloat16),
        (torch.float16, torch.float32, torch.float32),  # narrower types combine as torch promotes them
        (torch.float64, torch.int64, torch.float64),
    ],
)
def test_single_wins_over_double_in_arithmetic(left, right, expected):
    # MATLAB: "Combining single values with double values yields a single matrix"
    X = dlf.dlarray(torch.ones(3, 2, dtype=left), "CB")
    for other in (dlf.dlarray(torch.ones(3, 2, dtype=right), "CB"), torch.ones(3, 2, dtype=right)):
        assert (X + other).dtype == expected and (other * X).dtype == expected
