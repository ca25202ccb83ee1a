"""whos: every leaf from the headers alone, the same sizes and types loadmat gives, objects' true sizes."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse

from dlformat import DLFormatError
from dlformat.io import _direct, _matv5, _matv73, loadmat, savemat, whos
from dlformat.io._values import CLASS_OF_DTYPE, Entry, linear_index

# the corpus files whose every variable loads (objects and broken files are listed apart)
PLAIN_FILES = [
    "big_endian.mat", "little_endian.mat", "matio_test_basic_v7.mat", "matio_test_basic_v73.mat",
    "test3dmatrix_7.4_GLNX86.mat", "test_empty_struct.mat", "testbool_8_WIN64.mat",
    "testcell_7.4_GLNX86.mat", "testcellnest_7.4_GLNX86.mat", "testcomplex_7.4_GLNX86.mat",
    "testdouble_4.2c_SOL2.mat", "testemptycell_7.4_GLNX86.mat", "testhdf5_7.4_GLNX86.mat",
    "testmatrix_4.2c_SOL2.mat", "testmatrix_7.4_GLNX86.mat", "testminus_7.4_GLNX86.mat",
    "testsparse_7.4_GLNX86.mat", "teststring_7.4_GLNX86.mat", "teststruct_7.4_GLNX86.mat",
    "teststructarr_7.4_GLNX86.mat", "teststructnest_7.4_GLNX86.mat",
]  # fmt: skip


def loaded_entries(path: str, value) -> list[Entry]:
    """The listing of a value loadmat returned, worked out from the value itself (the reference)."""
    if isinstance(value, dict):
        return [Entry(path, "struct", (1, 1), "", 0)] * (not value) + [
            entry for key, item in value.items() for entry in loaded_entries(f"{path}.{key}", item)
        ]
    if isinstance(value, list):
        return [
            entry for i, item in enumerate(value, start=1) for entry in loaded_entries(f"{path}({i})", item)
        ]
    if isinstance(value, str):
        return [Entry(path, "char", (1, len(value)) if value else (0, 0), "str", len(value))]
    if scipy.sparse.issparse(value):
        nbytes = value.data.nbytes + value.indices.nbytes + value.indptr.nbytes
        kind = "logical" if value.dtype == bool else "double"
        return [Entry(path, f"{kind} sparse", value.shape, str(value.dtype), nbytes)]
    if value.dtype == object:
        if not value.size:  # an empty struct array loads as an empty cell; whos says "struct"
            return [Entry(path, "cell", value.shape, "", 0)]
        indices = sorted(np.ndindex(value.shape), key=lambda index: linear_index(index, value.shape))
        return [
            entry
            for index in indices  # MATLAB's order: column-major
            for entry in loaded_entries(f"{path}{{{linear_index(index, value.shape)}}}", value[index])
        ]
    if value.dtype.kind == "U":
        width = value.dtype.itemsize // 4
        return [Entry(path, "char", (value.size, width), "str", value.size * width)]
    complex_ = " complex" if value.dtype.kind == "c" else ""
    return [Entry(path, CLASS_OF_DTYPE[value.dtype] + complex_, value.shape, str(value.dtype), value.nbytes)]


def assert_whos_matches_loadmat(path):
    listed = whos(path)
    expected = [entry for name, value in loadmat(path).items() for entry in loaded_entries(name, value)]
    # the one place the two differ on purpose: an empty struct array is a struct to whos
    listed = [
        Entry(e.path, "cell", e.shape, "", 0) if e.matlab_class == "struct" and 0 in e.shape else e
        for e in listed
    ]
    assert listed == expected


@pytest.mark.parametrize("name", PLAIN_FILES)
def test_whos_of_matlab_files_gives_what_loadmat_loads(corpus, name):
    assert_whos_matches_loadmat(corpus / name)


@pytest.mark.parametrize("name", ["learnables_v6.mat", "learnables_v7.mat", "weights_v4.mat"])
def test_whos_of_octave_files_gives_what_loadmat_loads(name):
    assert_whos_matches_loadmat(Path(__file__).parents[1] / "fixtures" / "octave" / name)


def test_whos_of_a_version_4_file_gives_what_loadmat_loads(tmp_path):
    sparse = scipy.sparse.csc_matrix(np.array([[0, 2.5, 0], [1, 0, 0], [0, 0, 0], [0, 0, 4]]))
    variables = {"d": np.arange(6.0).reshape(2, 3), "z": np.array([[1 + 1j, 2]]), "t": "text", "sp": sparse}
    scipy.io.savemat(tmp_path / "v4.mat", variables, format="4")
    assert_whos_matches_loadmat(tmp_path / "v4.mat")
    assert Entry("sp", "double sparse", (4, 3), "float64", 3 * 12 + 4 * 4) in whos(tmp_path / "v4.mat")


def every_form() -> dict:
    cells = np.empty((2, 2), dtype=object)
    cells[0, 0], cells[1, 0], cells[0, 1] = "text", np.ones((2, 3, 4), np.int16), {"inner": np.eye(2)}
    cells[1, 1] = np.empty((0, 3), dtype=object)
    return {
        "d": np.arange(6.0).reshape(2, 3), "f": np.ones((1, 5), np.float32), "u": np.ones((3, 1), np.uint64),
        "z": np.array([[1 + 2j, 3]], np.complex64), "b": np.array([[True, False]]), "t": "hello", "e": "",
        "rows": np.array(["ab", "cd", "ef"]), "sp": scipy.sparse.random(5, 7, density=0.3, random_state=0),
        "spb": scipy.sparse.csc_matrix(np.eye(3, dtype=bool)), "c": cells,
        "s": {"a": np.zeros((2, 2)), "n": {"deep": np.ones((1, 1))}, "none": {}},
        "arr": [{"x": np.ones((1, 2)), "y": "q"}, {"x": np.ones((3, 1)), "y": ""}],
        "empty": np.zeros((0, 4)),
    }  # fmt: skip


@pytest.mark.parametrize("version", ["7", "7.3"])
def test_whos_of_every_value_form_gives_what_loadmat_loads(tmp_path, version):
    savemat(tmp_path / "all.mat", every_form(), version=version)
    assert_whos_matches_loadmat(tmp_path / "all.mat")


def boom(*args, **kwargs):
    raise AssertionError("a value was read")


@pytest.mark.parametrize("version", ["7", "7.3"])
def test_whos_reads_no_values(tmp_path, monkeypatch, version):
    savemat(tmp_path / "all.mat", every_form() | {"w": np.ones((400, 700))}, version=version)
    expected = whos(tmp_path / "all.mat")
    for module, function in [(scipy.io, "loadmat"), (_matv5, "read"), (_direct, "read")]:
        monkeypatch.setattr(module, function, boom)
    monkeypatch.setattr(_matv73._Reader, "array", boom)
    monkeypatch.setattr(_matv73._Reader, "node", boom)
    assert whos(tmp_path / "all.mat") == expected
    assert Entry("w", "double", (400, 700), "float64", 400 * 700 * 8) in expected
    with pytest.raises(DLFormatError, match="a value was read"):  # the patches hold
        loadmat(tmp_path / "all.mat", ["w"])


@pytest.mark.parametrize("version", ["7", "7.3"])
def test_whos_of_a_100_mb_variable_holds_no_more_than_a_few_mb(tmp_path, version):
    big = np.zeros((1250, 10000))  # 100 MB of float64, compressed to almost nothing in version 7
    savemat(tmp_path / "big.mat", {"w": big, "s": {"big": big}}, version=version)
    del big
    tracemalloc.start()
    try:
        listed = whos(tmp_path / "big.mat")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sorted((e.path, e.shape, e.nbytes) for e in listed) == [
        ("s.big", (1250, 10000), 100_000_000),
        ("w", (1250, 10000), 100_000_000),
    ]
    assert peak < 8_000_000


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # string arrays, tables and categoricals keep their size inside one object: unknown
        ("testmatlabstring_7_WIN64.mat", {"matstring1": None, "matstring2": None}),
        ("matio_test_string_v7.mat", {"string_scalar": None, "string_array": None, "string_empty": None}),
        # an array of 2×2 classdef objects is 2×2; a single object's size stays unknown
        ("matio_test_user_defined_v7.mat", {"obj_array": (2, 2), "obj_no_vals": None, "obj_handle_1": None}),
        ("matio_test_user_defined_v73.mat", {"obj_array": (2, 2), "obj_no_vals": None, "obj_handle_1": None}),
        ("matio_test_tables_v73.mat", {"table_numeric": None, "cat_array": None, "timetable_empty": None}),
        # old-style objects and function handles have their size in their headers
        ("testobject_7.4_GLNX86.mat", {"testobject": (1, 1)}),
        ("testfunc_7.4_GLNX86.mat", {"testfunc": (1, 1)}),
    ],
)
def test_whos_gives_objects_their_true_size_or_none(corpus, name, expected):
    listed = {entry.path: entry for entry in whos(corpus / name)}
    assert {path: listed[path].shape for path in expected} == expected
    assert all(entry.matlab_class.endswith(" (object)") and entry.nbytes == 0 for entry in listed.values())


def test_no_object_gets_the_size_of_its_reference_array(corpus):
    listed = whos(corpus / "matio_test_tables_v73.mat")
    # the 6×1 uint32 arrays that MATLAB stores as each object's reference are never a size
    assert all(entry.shape != (6, 1) for entry in listed)
    assert len(listed) == 32


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("bad_miuint32.mat", r"variable 1 \(dimensions\) has data type 6, expected one of \[5\]"),
        ("corrupted_zlib_checksum.mat", r"variable 1: its compressed data is corrupt"),
        ("malformed1.mat", r"variable 1 declares 658840 bytes but only 2072 remain"),
    ],
)
def test_whos_of_a_broken_file_says_what_is_wrong(corpus, name, reason):
    with pytest.raises(DLFormatError, match=rf"^cannot read .*{name}: {reason}"):
        whos(corpus / name)
