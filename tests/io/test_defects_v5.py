"""The version 4–7 defects of issue 11, one row each, with the issue's reproducers.

Every file runs in its own worker process under the fuzzer's limits (tests/io/isolation.py): a
crash, a hang, an escaping exception or memory over the bound fails the row without taking pytest
down, and each row's own check then says what the result must be.
"""

from __future__ import annotations

import random
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.io

from dlformat import DLFormatError
from dlformat.io import loadmat, savemat, whos

from .isolation import Case, findings, run_cases
from .test_hostile import Build, uncompressed

# the building blocks for MAT-file version 5 elements (little-endian)
hdr = b"MATLAB 5.0 MAT-file".ljust(116, b" ") + bytes(8) + b"\x00\x01IM"


def el(t: int, p: bytes) -> bytes:
    return struct.pack("<II", t, len(p)) + p + bytes(-len(p) % 8)


def head(mclass: int, dims: tuple[int, ...], name: bytes, flags2: int = 0) -> bytes:
    return (
        el(6, struct.pack("<II", mclass, flags2)) + el(5, struct.pack(f"<{len(dims)}i", *dims)) + el(1, name)
    )


def compressed(variable: bytes) -> bytes:
    data = zlib.compress(variable, 9)
    return struct.pack("<II", 15, len(data)) + data


def double(name: bytes, value: float) -> bytes:
    return el(14, head(6, (1, 1), name) + el(9, struct.pack("<d", value)))


def refused(pattern: str) -> Any:
    """A check: loadmat raised a DLFormatError matching ``pattern``."""

    def check(result: Any, path: Path) -> None:
        assert isinstance(result, DLFormatError), f"loaded {result!r:.200}"
        assert re.search(pattern, str(result)), str(result)

    return check


def loads(expected: dict[str, Any]) -> Any:
    """A check: loadmat returned exactly ``expected`` (arrays compared by value, shape and dtype)."""

    def check(result: Any, path: Path) -> None:
        assert not isinstance(result, DLFormatError), str(result)
        assert list(result) == list(expected)
        for name, value in expected.items():
            got = result[name]
            if hasattr(got, "toarray"):
                got = got.toarray()
            if isinstance(value, np.ndarray):
                assert got.shape == value.shape and got.dtype == value.dtype, (got.shape, got.dtype)
                np.testing.assert_array_equal(got, value)
            else:
                assert got == value, (got, value)

    return check


# -- 1: a small-format data element of a non-numeric type ---------------------------------------
small_matrix = hdr + el(14, head(9, (2, 1), b"x") + struct.pack("<I", (2 << 16) | 14) + b"\x01\x00\x00\x00")

# -- 2: objects nested in cells and structs -----------------------------------------------------

deep = Build(random.Random(0)).nested_cells(double(b"", 1.0), 20_000)
in_handle = hdr + compressed(el(14, head(1, (1, 1), b"c") + el(14, head(16, (1, 1), b"") + deep)))
two_gib = el(14, head(6, (2**15, 2**15), b"") + struct.pack("<II", 9, 2**31))
handle_of_two_gib = hdr + compressed(el(14, head(1, (1, 1), b"c") + el(14, head(16, (1, 1), b"") + two_gib)))
no_fields = el(14, head(2, (1, 2**31 - 1), b"") + el(5, struct.pack("<i", 1)) + el(1, b""))
handle_of_no_fields = hdr + compressed(
    el(14, head(1, (1, 1), b"c") + el(14, head(16, (1, 1), b"") + no_fields))
)
opaque = el(14, el(6, struct.pack("<II", 17, 0)) + el(1, b"") + el(1, b"MCOS") + el(1, b"string") + two_gib)
opaque_in_struct = hdr + el(
    14,
    head(2, (1, 1), b"s")
    + el(5, struct.pack("<i", 2))
    + el(1, b"f\0")
    + el(14, head(1, (1, 2), b"") + double(b"", 1) + opaque),
)


# -- 3: sparse indices ----------------------------------------------------------------------------
def sparse(rows: list[int], starts: list[int], values: list[float], dims: tuple[int, int] = (3, 3)) -> bytes:
    return hdr + el(
        14,
        head(5, dims, b"s", len(values))
        + el(5, struct.pack(f"<{len(rows)}i", *rows))
        + el(5, struct.pack(f"<{len(starts)}i", *starts))
        + el(9, struct.pack(f"<{len(values)}d", *values)),
    )


# -- 4: two zlib streams in one compressed variable ---------------------------------------------
var = el(14, head(6, (1, 1), b"x") + el(9, struct.pack("<d", 1.0)))
z = zlib.compress(var[:20]) + zlib.compress(var[20:])
two_streams = hdr + struct.pack("<II", 15, len(z)) + z
z = zlib.compress(var)
stream_then_more = hdr + struct.pack("<II", 15, len(z) + 16) + z + zlib.compress(b"")[:16].ljust(16, b"\0")


# -- 14: compressed arrays declaring more than their stream yields ------------------------------
def declaring(values: bytes, count: int, padding: int = 0, complex_: bool = False) -> bytes:
    """A compressed variable declaring ``count`` doubles (real and imaginary parts when
    ``complex_``) whose zlib stream holds only ``values``, then ``padding`` zero bytes."""
    parts = 2 if complex_ else 1
    header = el(6, struct.pack("<II", 6 | (0x0800 if complex_ else 0), 0)) + el(
        5, struct.pack("<2i", count, 1)
    )
    header += el(1, b"x")
    declared = len(header) + parts * (8 + 8 * count)
    stream = zlib.compress(
        struct.pack("<II", 14, declared) + header + struct.pack("<II", 9, 8 * count) + values
    )
    stream += bytes(padding)
    return hdr + struct.pack("<II", 15, len(stream)) + stream


header_and_zeros = declaring(b"", 25_000_000, padding=190_000)  # the 190 KB file
noise = np.random.default_rng(0).bytes(200_000)
short_stream = declaring(noise, 25_000_000)  # 200 MB declared, 200 KB present
short_complex_stream = declaring(noise, 12_500_000, complex_=True)  # read by SciPy, not directly


# -- 16: lone UTF-16 surrogates -----------------------------------------------------------------
def char(units: list[int], name: bytes = b"c") -> bytes:
    return el(14, head(4, (1, len(units)), name) + el(4, struct.pack(f"<{len(units)}H", *units)))


# -- 17: empty and repeated names ---------------------------------------------------------------
def also_loads(names: list[str], expected: dict[str, Any], pattern: str) -> Any:
    """A check: loading everything is refused (``pattern``); loading ``names`` gives ``expected``."""

    def check(result: Any, path: Path) -> None:
        refused(pattern)(result, path)
        loads(expected)(loadmat(path, variable_names=names), path)

    return check


def many_variables(count: int) -> bytes:
    return hdr + b"".join(double(b"v%d" % index, index) for index in range(count))


def loads_many(count: int) -> Any:
    def check(result: Any, path: Path) -> None:
        assert not isinstance(result, DLFormatError), str(result)
        assert list(result) == [f"v{index}" for index in range(count)]
        assert all(result[f"v{index}"][0, 0] == index for index in range(count))
        names = [f"v{index}" for index in range(count - 1, 0, -1)]
        assert list(loadmat(path, variable_names=names)) == names

    return check


def empty_cells(count: int) -> Any:
    def check(result: Any, path: Path) -> None:
        assert not isinstance(result, DLFormatError), str(result)
        assert result["c"].shape == (1, count) and result["c"][0, -1].shape == (0, 0)

    return check


def version4(mopt: int, rows: int, cols: int, name: bytes, values: list[float]) -> bytes:
    return (
        struct.pack("<5i", mopt, rows, cols, 0, len(name)) + name + struct.pack(f"<{len(values)}d", *values)
    )


ROWS = [
    ("1: small-format miMATRIX values", small_matrix, refused(r"'x' \(values\) has data type 14")),
    # refused as an object without mat-io; with it, by the scan of the object's contents
    ("2: 20,000 cells nested in a function handle", in_handle, refused(r"'c\{1\}' is a MATLAB object of class 'function_handle'|nests more than 100 levels deep")),
    ("2: 2 GiB declared in a nested function handle", handle_of_two_gib, refused(r"'c\{1\}' is a MATLAB object of class 'function_handle'|declares 2147483648 bytes but only 0 remain")),
    ("2: a 0-field struct of 2^31-1 elements in a function handle", handle_of_no_fields, refused(r"'c\{1\}' is a MATLAB object|2147483647 struct elements without fields")),
    ("2: an opaque object in a struct's cell", opaque_in_struct, refused(r"'s.f\{2\}' is a MATLAB object of class 'string'|declares 2147483648 bytes but only 0 remain")),
    ("3: row index 2^31-1", sparse([2**31 - 1], [0, 1, 1, 1], [5.0]), refused(r"row index 2147483647, outside its 3 rows")),
    ("3: row index -5", sparse([-5], [0, 1, 1, 1], [5.0]), refused(r"row index -5, outside its 3 rows")),
    ("3: decreasing column starts", sparse([0, 1], [0, 2, 1, 2], [5.0, 6.0]), refused(r"its column starts decrease")),
    ("3: column starts ending short of the nonzeros", sparse([0, 1], [0, 1, 1, 1], [5.0, 6.0]), loads({"s": np.array([[5.0, 0, 0], [0, 0, 0], [0, 0, 0]])})),
    ("3: a well-formed sparse matrix", sparse([0, 2, 1], [0, 2, 2, 3], [1.0, 2.0, 3.0]), loads({"s": np.array([[1.0, 0, 0], [0, 0, 3], [2, 0, 0]])})),
    ("4: two zlib streams", two_streams, refused(r"goes on after the end of its zlib stream")),
    ("4: bytes after the zlib stream", stream_then_more, refused(r"goes on after the end of its zlib stream")),
    ("5: a struct array of 10^7 elements without fields", hdr + el(14, head(2, (1, 10**7), b"s") + el(5, struct.pack("<i", 1)) + el(1, b"")), refused(r"declares 10000000 struct elements without fields")),
    ("5: a small struct array without fields", hdr + el(14, head(2, (1, 3), b"s") + el(5, struct.pack("<i", 1)) + el(1, b"")), loads({"s": [{}, {}, {}]})),
    ("13: a version 4 sparse matrix of 4e8 columns", version4(2, 2, 3, b"s\0", [1, 3, 1, 4e8, 5, 0]), refused(r"'s' declares 3×400000000; a version 4 file of 70 bytes may declare at most")),
    ("13: a version 4 sparse matrix", version4(2, 3, 3, b"s\0", [1, 2, 2, 1, 3, 4, 7, 8, 0]), loads({"s": np.array([[7.0, 0, 0, 0], [0, 0, 8, 0]])})),
    ("16: a lone high surrogate", hdr + char([0xD800, 0x41]), loads({"c": "\ufffdA"})),
    ("16: a lone low surrogate in a cell", hdr + el(14, head(1, (1, 1), b"k") + char([0x41, 0xDC00], b"")), loads({"k": np.array([["A\ufffd"]], dtype=object)})),
    ("16: a surrogate pair, and a non-Latin character", hdr + char([0x61, 0xD83D, 0xDE00, 0x3BB]), loads({"c": "a\U0001f600\u03bb"})),
    ("17: a variable with an empty name", hdr + double(b"", 1.0) + double(b"y", 2.0), also_loads(["y"], {"y": np.array([[2.0]])}, r"variable 1 has an empty name")),
    ("17: two variables of one name", hdr + double(b"x", 1.0) + double(b"y", 3.0) + double(b"x", 2.0), also_loads(["y"], {"y": np.array([[3.0]])}, r"it holds 2 variables named 'x' \(variables 1, 3\)")),
]  # fmt: skip

# rows with limits of their own: CPU time for the work that used to grow faster than the file, memory
# for the arrays that used to be allocated at their declared size
LIMITED_ROWS = [
    Case("14: the issue's 190 KB header plus zeros", header_and_zeros, refused(r"goes on after the end of its zlib stream"), memory=64 * 2**20),
    Case("6: 1M empty cells (163 KB)", hdr + compressed(el(14, head(1, (1, 10**6), b"c") + el(14, head(1, (0, 0), b"")) * 10**6)), empty_cells(10**6), cpu=15),
    Case("7: 50,000 variables", many_variables(50_000), loads_many(50_000), cpu=15),
    Case("14: 200 MB declared, 200 KB present (direct)", short_stream, refused(r"'x' is cut short: 200000 of its 200000000 value bytes"), memory=64 * 2**20),
    Case("14: 100 MB complex declared, 200 KB present (SciPy)", short_complex_stream, refused(r"is cut short"), memory=64 * 2**20),
]  # fmt: skip


def test_each_defect_ends_as_its_row_says(tmp_path):
    cases = [Case(label, data, check) for label, data, check in ROWS] + LIMITED_ROWS
    assert findings(run_cases(cases, tmp_path)) == []


def test_a_changed_byte_of_a_corpus_file(corpus, tmp_path):
    """Issue 11: one byte of testbool_8_WIN64.mat, stored uncompressed, made its values miMATRIX."""
    data = bytearray(uncompressed((corpus / "testbool_8_WIN64.mat").read_bytes()))
    assert data[192] == 2  # the type of the values' small-format element: miUINT8
    data[192] = 14
    case = Case("1: testbool_8_WIN64.mat, byte 192", bytes(data), refused(r"\(values\) has data type 14"))
    assert findings(run_cases([case], tmp_path)) == []


def cell(value: np.ndarray) -> np.ndarray:
    cells = np.empty((1, 1), dtype=object)
    cells[0, 0] = value
    return cells


def _limited_load(path: Path, extra: int, queue: Any) -> None:
    import resource

    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + extra, resource.RLIM_INFINITY))
    try:
        loadmat(path)
        queue.put("loaded")
    except BaseException as error:
        queue.put(f"{type(error).__name__}: {error}")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.zeros((10_000, 5_000)), r"variable 'x' declares a 10000×5000 double array \(400000000 bytes\)"),
        (cell(np.zeros((10_000, 5_000))), r"variable 'x' declares a 1×1 cell"),
    ],
    ids=["direct", "scipy"],
)
def test_out_of_memory_is_one_line_naming_the_variable(tmp_path, value, message):
    """Issue 11, defect 15: a file needing more memory than the process may have is a DLFormatError."""
    from multiprocessing import get_context

    path = tmp_path / "big.mat"
    scipy.io.savemat(path, {"x": value}, do_compression=True)
    context = get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_limited_load, args=(path, 200 * 2**20, queue))
    child.start()
    outcome = queue.get(timeout=60)
    child.join()
    assert re.match(
        r"DLFormatError: cannot read .*" + message + r", more memory than this process can allocate$", outcome
    ), outcome


def test_whos_lists_lone_surrogates_and_savemat_refuses_them(tmp_path):
    """Issue 11, defect 16: one rule for both versions; read as U+FFFD, refused on write."""
    path = tmp_path / "c.mat"
    path.write_bytes(hdr + char([0xD800, 0x41]))
    assert [(entry.path, entry.shape) for entry in whos(path)] == [("c", (1, 2))]
    for mapping, where in [
        ({"c": "\ud800A"}, "c"),
        ({"s": {"t": np.array(["ok", "\udfffx"], dtype=object)}}, r"s.t\{2\}"),
        ({"a": np.array(["ab", "\ud83d"])}, r"a \(row 2\)"),
    ]:
        with pytest.raises(DLFormatError, match=rf"^{where} holds a lone UTF-16 surrogate \(U\+D"):
            savemat(tmp_path / "out.mat", mapping)
    assert not (tmp_path / "out.mat").exists()
    savemat(tmp_path / "emoji.mat", {"e": "a\U0001f600"})
    assert loadmat(tmp_path / "emoji.mat") == {"e": "a\U0001f600"}
