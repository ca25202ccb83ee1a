"""loadmat against real MATLAB-written files (values from the corpus's PROVENANCE.md)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import scipy.sparse

from dlformat import DLFormatError
from dlformat.io import loadmat


def spec_matrix() -> np.ndarray:
    """MATLAB: a = zeros(3,5); a(:,1) = [1:3]'; a(1,:) = 1:5;"""
    a = np.zeros((3, 5))
    a[:, 0] = [1, 2, 3]
    a[0, :] = [1, 2, 3, 4, 5]
    return a


def assert_exactly(value, expected):
    assert isinstance(value, np.ndarray)
    assert value.dtype == expected.dtype and value.shape == expected.shape
    assert value.dtype.isnative
    np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize("name", ["testmatrix_7.4_GLNX86.mat", "testmatrix_4.2c_SOL2.mat"])
def test_integer_valued_doubles_load_as_float64(corpus, name):
    assert_exactly(loadmat(corpus / name)["testmatrix"], spec_matrix())


def test_3d_matrix_keeps_matlabs_column_major_layout(corpus):
    x = loadmat(corpus / "test3dmatrix_7.4_GLNX86.mat")["test3dmatrix"]
    i, j, k = np.indices((2, 3, 4))
    assert_exactly(x, (1 + i + 2 * j + 6 * k).astype(np.float64))


def test_int16_stored_minus_one_is_a_1x1_double(corpus):
    assert_exactly(loadmat(corpus / "testminus_7.4_GLNX86.mat")["testminus"], np.array([[-1.0]]))


def test_big_endian_version_4_comes_back_native(corpus):
    x = loadmat(corpus / "testdouble_4.2c_SOL2.mat")["testdouble"]
    assert_exactly(x, np.arange(9).reshape(1, 9) * (math.pi / 4))


def test_logical_loads_as_bool(corpus):
    assert_exactly(loadmat(corpus / "testbool_8_WIN64.mat")["testbools"], np.array([[True], [False]]))


def test_version_73_equals_version_4(corpus):
    v73 = loadmat(corpus / "testhdf5_7.4_GLNX86.mat")["testdouble"]
    assert_exactly(v73, loadmat(corpus / "testdouble_4.2c_SOL2.mat")["testdouble"])
    assert v73.shape == (1, 9)


def test_byte_orders_agree(corpus):
    big, little = loadmat(corpus / "big_endian.mat"), loadmat(corpus / "little_endian.mat")
    assert_exactly(big["floats"], np.array([[2.0, 3.0], [3.0, 4.0]], dtype=np.float32))
    assert_exactly(little["floats"], big["floats"])
    assert big["strings"].shape == (2, 1) and big["strings"].tolist() == [["hello"], ["world"]]


def test_struct_with_char_double_and_complex_fields(corpus):
    s = loadmat(corpus / "teststruct_7.4_GLNX86.mat")["teststruct"]
    assert list(s) == ["stringfield", "doublefield", "complexfield"]
    assert s["stringfield"] == "Rats live on no evil star."
    numbers = np.array([[math.sqrt(2), math.e, math.pi]])
    # MATLAB's exp(1) is one ulp above Python's math.e
    for field, expected in [("doublefield", numbers), ("complexfield", (1 + 1j) * numbers)]:
        assert s[field].dtype == expected.dtype and s[field].shape == (1, 3)
        np.testing.assert_allclose(s[field], expected, rtol=2.3e-16, atol=0)


def test_nested_struct(corpus):
    s = loadmat(corpus / "teststructnest_7.4_GLNX86.mat")["teststructnest"]
    assert_exactly(s["one"], np.array([[1.0]]))
    assert s["two"] == {"three": "number 3"}


def test_struct_array_is_a_list_of_dicts(corpus):
    items = loadmat(corpus / "teststructarr_7.4_GLNX86.mat")["teststructarr"]
    assert isinstance(items, list) and len(items) == 2
    assert_exactly(items[0]["one"], np.array([[1.0]]))
    assert_exactly(items[0]["two"], np.array([[2.0]]))
    assert items[1] == {"one": "number 1", "two": "number 2"}


def test_cells_are_object_arrays_in_matlabs_shape(corpus):
    cell = loadmat(corpus / "testcell_7.4_GLNX86.mat")["testcell"]
    assert cell.dtype == object and cell.shape == (1, 4)
    assert cell[0, 0] == "This cell contains this string and 3 arrays of increasing length"
    assert_exactly(cell[0, 1], np.array([[1.0]]))
    assert_exactly(cell[0, 2], np.array([[1.0, 2.0]]))
    assert_exactly(cell[0, 3], np.array([[1.0, 2.0, 3.0]]))


def test_nested_and_empty_cells(corpus):
    nest = loadmat(corpus / "testcellnest_7.4_GLNX86.mat")["testcellnest"]
    assert_exactly(nest[0, 0], np.array([[1.0]]))
    inner = nest[0, 1]
    assert inner.shape == (1, 3) and inner[0, 0].item() == 2 and inner[0, 1].item() == 3
    assert [x.item() for x in inner[0, 2].ravel()] == [4.0, 5.0]
    empty = loadmat(corpus / "testemptycell_7.4_GLNX86.mat")["testemptycell"]
    assert empty.shape == (1, 5)
    assert [x.shape for x in empty.ravel()] == [(1, 1), (1, 1), (0, 0), (0, 0), (1, 1)]


def test_char_and_complex_and_sparse(corpus):
    assert (
        loadmat(corpus / "teststring_7.4_GLNX86.mat")["teststring"]
        == '"Do nine men interpret?" "Nine men," I nod.'
    )
    theta = np.arange(9).reshape(1, 9) * (math.pi / 4)
    complex_ = loadmat(corpus / "testcomplex_7.4_GLNX86.mat")["testcomplex"]
    assert complex_.dtype == np.complex128
    np.testing.assert_allclose(complex_, np.cos(theta) + 1j * np.sin(theta), rtol=0, atol=1e-15)
    sparse = loadmat(corpus / "testsparse_7.4_GLNX86.mat")["testsparse"]
    assert isinstance(sparse, scipy.sparse.csc_matrix) and sparse.dtype == np.float64
    np.testing.assert_array_equal(sparse.toarray(), spec_matrix())


def test_empty_struct_is_a_dict_without_fields(corpus):
    assert loadmat(corpus / "test_empty_struct.mat") == {"a": {}}


OBJECT_FILES = [
    ("testobject_7.4_GLNX86.mat", "testobject", "inline"),
    ("testfunc_7.4_GLNX86.mat", "testfunc", "function_handle"),
    ("testmatlabstring_7_WIN64.mat", "matstring1", "string"),
    ("matio_test_string_v7.mat", "string_scalar", "string"),
    ("matio_test_tables_v73.mat", "cat_3D", "categorical"),
    ("matio_test_user_defined_v7.mat", "obj_no_vals", "TestClasses.BasicClass"),
    ("matio_test_user_defined_v73.mat", "obj_array", "TestClasses.BasicClass"),
]
INSTALL_HINT = 'or decode MATLAB objects with mat-io, the dlformat[matlab] extra; install it with pip install -e ".[matlab]" from the dlformat repository'


@pytest.mark.parametrize(("name", "variable", "class_name"), OBJECT_FILES)
def test_matlab_objects_without_mat_io_are_named_with_their_class(
    corpus, without_matio, name, variable, class_name
):
    message = (
        f"variable '{variable}' is a MATLAB object of class '{class_name}', which dlformat cannot read; "
        "save plain numeric arrays, structs and cells instead (for a dlnetwork, save net.Learnables with "
        f"exportLearnables.m); {INSTALL_HINT}"
    )
    with pytest.raises(DLFormatError, match=re.escape(message)):
        loadmat(corpus / name)


@pytest.mark.parametrize(("name", "variable", "class_name"), OBJECT_FILES)
def test_matlab_objects_decode_with_mat_io(corpus, name, variable, class_name):
    pytest.importorskip("matio")
    value = loadmat(corpus / name)[variable]
    got = getattr(value, "classname", None) or type(value).__name__
    if isinstance(value, np.ndarray) and value.dtype == object:  # an object array
        got = value.ravel()[0].classname
    expected = {"function_handle": "FunctionHandle", "string": "ndarray", "categorical": "Categorical"}
    assert got == expected.get(class_name, class_name)


def test_plain_variables_beside_objects_still_load_by_name(corpus, tmp_path, without_matio):
    import io

    import scipy.io

    plain = io.BytesIO()
    scipy.io.savemat(plain, {"w": np.arange(6.0).reshape(2, 3)})
    # a MATLAB file with two string objects, and a plain variable appended after them
    mixed = tmp_path / "mixed.mat"
    mixed.write_bytes((corpus / "testmatlabstring_7_WIN64.mat").read_bytes() + plain.getvalue()[128:])
    loaded = loadmat(mixed, variable_names=["w"])
    assert list(loaded) == ["w"]
    assert_exactly(loaded["w"], np.arange(6.0).reshape(2, 3))
    with pytest.raises(DLFormatError, match=r"variable 'matstring1' is a MATLAB object of class 'string'"):
        loadmat(mixed)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("corrupted_zlib_checksum.mat", r"variable 1: its compressed data is corrupt .*incorrect data check"),
        ("corrupted_zlib_data.mat", r"variable 3: its compressed data inflates to more than the 26840 bytes"),
        ("malformed1.mat", r"declares 658840 bytes but only 2072 remain"),
        ("bad_miuint32.mat", r"\(dimensions\) has data type 6"),
    ],
)
def test_broken_files_are_refused_with_a_reason(corpus, name, reason):
    with pytest.raises(DLFormatError, match=r"^cannot read .*" + reason):
        loadmat(corpus / name)


def same(x, y, path):
    """Identical value, type, shape and dtype, recursively; returns a difference or None."""
    if type(x) is not type(y):
        return f"{path}: {type(x).__name__} vs {type(y).__name__}"
    if isinstance(x, dict):
        if list(x) != list(y):
            return f"{path}: fields differ"
        return next((d for k in x if (d := same(x[k], y[k], f"{path}.{k}"))), None)
    if isinstance(x, list):
        if len(x) != len(y):
            return f"{path}: lengths differ"
        return next(
            (d for i, (p, q) in enumerate(zip(x, y, strict=True)) if (d := same(p, q, f"{path}({i + 1})"))),
            None,
        )
    if scipy.sparse.issparse(x):
        if x.shape != y.shape or x.dtype != y.dtype or (x != y).nnz:
            return f"{path}: sparse differs"
        return None
    if isinstance(x, np.ndarray):
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"{path}: {x.shape} {x.dtype} vs {y.shape} {y.dtype}"
        if x.dtype == object:
            return next((d for i in np.ndindex(x.shape) if (d := same(x[i], y[i], f"{path}{i}"))), None)
        return None if np.array_equal(x, y) else f"{path}: values differ"
    return None if x == y else f"{path}: {x!r} vs {y!r}"


def test_v7_and_v73_of_the_same_data_load_identically(corpus):
    v7 = loadmat(corpus / "matio_test_basic_v7.mat")
    v73 = loadmat(corpus / "matio_test_basic_v73.mat")
    assert len(v7) == 52 and list(sorted(v7)) == list(sorted(v73))
    differences = [d for name in v7 if (d := same(v7[name], v73[name], name))]
    assert differences == []
    # spot checks of the MATLAB values behind the parity
    assert_exactly(v7["double_array"], np.array([[1.1, 2.2, 3.3], [4.4, 5.5, 6.6]]))
    assert_exactly(v7["single_array"], np.array([[1.1, 2.2, 3.3], [4.4, 5.5, 6.6]], dtype=np.float32))
    assert v7["complex_scalar"].dtype == np.complex128 and v7["complex_scalar"].imag.any()
    assert v7["char_array"].shape == (3,) and v7["char_scalar"] == "Hello"
    assert len(v7["struct_large"]) == 526 and len(v7["struct_even_larger"]) == 4093
    assert v7["struct_no_fields"] == {} and v7["char_empty"] == ""


def test_unknown_variable_names_list_what_the_file_holds(corpus):
    with pytest.raises(DLFormatError, match=r"has no variable\(s\) \['nope'\]; it holds: testmatrix"):
        loadmat(corpus / "testmatrix_7.4_GLNX86.mat", variable_names=["nope"])
    with pytest.raises(DLFormatError, match=r"has no variable\(s\) \['nope'\]; it holds: .*int8_scalar"):
        loadmat(corpus / "matio_test_basic_v73.mat", variable_names=["nope"])


def test_variable_names_select(corpus):
    assert list(loadmat(corpus / "matio_test_basic_v73.mat", ["int8_scalar", "char_scalar"])) == [
        "int8_scalar",
        "char_scalar",
    ]
    assert list(loadmat(corpus / "matio_test_basic_v7.mat", ["char_scalar"])) == ["char_scalar"]


def test_missing_and_non_mat_files(tmp_path):
    with pytest.raises(DLFormatError, match=r"cannot read .*nothing.mat: No such file or directory"):
        loadmat(tmp_path / "nothing.mat")
    (tmp_path / "text.mat").write_text("this is not a MAT-file at all, just some words" * 4)
    with pytest.raises(DLFormatError, match=r"not a MAT-file"):
        loadmat(tmp_path / "text.mat")
    (tmp_path / "empty.mat").write_bytes(b"")
    with pytest.raises(DLFormatError, match=r"not a MAT-file: it is shorter than any MAT-file header"):
        loadmat(tmp_path / "empty.mat")
