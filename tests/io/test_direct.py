"""Large numeric variables read straight into their arrays: the same result as SciPy's, bounded memory."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io

from dlformat import DLFormatError
from dlformat.io import _direct, _open, loadmat

from .test_hostile import fuzz
from .test_loadmat import same

CLASSES = ["float64", "float32", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@pytest.fixture
def always_direct(monkeypatch):
    monkeypatch.setattr(_direct, "MIN_BYTES", 0)


def direct_variables(path) -> list[str]:
    return [v.name for v in _open(path)[1].variables if v.direct is not None]


@pytest.mark.parametrize("dtype", CLASSES)
@pytest.mark.parametrize("compressed", [True, False], ids=["v7", "v6"])
@pytest.mark.parametrize("shape", [(7, 5), (3, 4, 6), (1, 40), (2, 3, 1, 5)])
def test_every_numeric_class_reads_as_scipy_reads_it(tmp_path, always_direct, dtype, compressed, shape):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype) if dtype.startswith(("int", "uint")) else None
    values = (
        rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        if info
        else rng.standard_normal(shape).astype(dtype)
    )
    path = tmp_path / "x.mat"
    scipy.io.savemat(path, {"x": values, "y": np.arange(6.0).reshape(2, 3)}, do_compression=compressed)
    assert direct_variables(path) == ["x", "y"]
    got = loadmat(path)
    expected = scipy.io.loadmat(path, mat_dtype=True)
    for name in ("x", "y"):
        assert got[name].dtype == expected[name].dtype and got[name].shape == expected[name].shape
        np.testing.assert_array_equal(got[name], expected[name])
        assert got[name].flags.f_contiguous and got[name].dtype.isnative


def test_every_corpus_file_loads_the_same_either_way(corpus, monkeypatch):
    """Each plain numeric variable of every v6/v7 corpus file (big-endian ones included) loads identically."""
    checked = 0
    for path in sorted(corpus.glob("*.mat")):
        try:
            scanned = _open(path)[1]
            version, variables = scanned.version, scanned.variables
            if version != 5 or not any(v.direct for v in variables):
                continue
            monkeypatch.setattr(_direct, "MIN_BYTES", 1 << 62)
            through_scipy = loadmat(path)
        except DLFormatError:
            continue  # broken and object-holding files are tested elsewhere
        monkeypatch.setattr(_direct, "MIN_BYTES", 0)
        assert same(loadmat(path), through_scipy, path.name) is None
        checked += sum(v.direct is not None for v in variables)
    assert checked >= 10  # every integer class, both float classes, both byte orders
    assert loadmat(corpus / "big_endian.mat")["floats"].dtype == np.dtype("=f4")


def test_the_corpus_file_with_corrupt_zlib_data_is_still_refused(corpus, always_direct):
    assert direct_variables(corpus / "corrupted_zlib_data.mat") == ["datagrid"]
    with pytest.raises(
        DLFormatError, match=r"variable 'datagrid': its compressed data (is corrupt|holds more)"
    ):
        loadmat(corpus / "corrupted_zlib_data.mat")


def test_what_takes_the_direct_path():
    """Real numeric arrays stored in their own class; not logical, complex, converted or nested data."""
    path = "/tmp/dlformat-direct-kinds.mat"
    scipy.io.savemat(
        path,
        {
            "plain": np.ones((3, 4)),
            "logical": np.ones((3, 4), dtype=bool),
            "complex": np.ones((3, 4)) * 1j,
            "char": "text",
            "cell": np.array([[np.ones(3)]], dtype=object),
            "struct": {"a": np.ones(3)},
        },
    )
    assert direct_variables(path) == ["plain"]


@pytest.mark.parametrize("where", [0.25, 0.5, 0.999])
def test_corrupt_compressed_values_are_refused_naming_the_variable(tmp_path, always_direct, where):
    path = tmp_path / "x.mat"
    scipy.io.savemat(
        path, {"weights": np.random.default_rng(0).standard_normal((400, 300))}, do_compression=True
    )
    data = bytearray(path.read_bytes())
    data[int(len(data) * where)] ^= 0x5A
    path.write_bytes(bytes(data))
    with pytest.raises(
        DLFormatError, match=r"variable 'weights': its compressed data is corrupt|cannot read"
    ):
        loadmat(path)


def test_fuzzed_files_through_the_direct_path(corpus, tmp_path, always_direct):
    assert fuzz(corpus, tmp_path, 150, base_seed=50_000) == []
