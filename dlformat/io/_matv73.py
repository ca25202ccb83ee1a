"""MAT-file version 7.3 (HDF5) through h5py, in MATLAB's own layout.

MATLAB stores arrays transposed (HDF5 is row-major), names each variable's class in a
``MATLAB_class`` attribute, keeps cell contents and struct-array elements in a ``#refs#``
group reached by object references, stores empty arrays as their dimensions with
``MATLAB_empty``, and puts a 128-byte MAT header in a 512-byte user block.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from .._errors import DLFormatError
from ._scan import MAX_DEFLATE_RATIO, MAX_DEPTH, MAX_OBJECT_DIMS, reference_dims, sparse_entry
from ._values import (
    CLASS_OF_DTYPE,
    NUMERIC_CLASSES,
    Entry,
    StructArray,
    check_wanted,
    linear_index,
    object_error,
)

# dlformat is installed from its repository, not from a package registry: name the extra and
# the README's command, never `pip install dlformat[...]`
INSTALL = 'the dlformat[hdf5] extra; install it with pip install -e ".[hdf5]" from the dlformat repository'
_PLAIN_CLASSES = set(NUMERIC_CLASSES) | {"logical", "char", "cell", "struct"}
_MAX_ATTRIBUTE_FIELDS = 512


def _h5py(reading: Path | None = None) -> Any:
    try:
        import h5py
    except ImportError:
        where = f"cannot read {reading}: " if reading is not None else ""
        raise DLFormatError(
            f"{where}MAT-file version 7.3 is HDF5, which needs the optional package h5py, {INSTALL}"
        ) from None
    return h5py


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        return b"".join(value.ravel().tolist()).decode("latin-1")
    return str(value)


class _Reader:
    """Walks a file with h5py's low-level identifiers: a few microseconds a call, where the
    high-level objects cost hundreds (files with thousands of struct fields are common)."""

    def __init__(self, file: Any, budget: int) -> None:
        self.h5py = _h5py()
        self.file = file
        self.budget = budget  # bytes the file can expand to; every read is charged against it

    def attribute_names(self, oid: Any) -> set[str]:
        names: set[str] = set()
        self.h5py.h5a.iterate(oid, lambda name: names.add(name.decode("latin-1")))
        return names

    def attribute(self, oid: Any, name: str) -> np.ndarray:
        attr = self.h5py.h5a.open(oid, name.encode())
        value = np.empty(attr.shape, dtype=attr.dtype)
        attr.read(value)
        return value

    def open(self, parent: Any, name: str, path: str) -> Any:
        try:
            return self.h5py.h5o.open(parent, name.encode())
        except (KeyError, ValueError, RuntimeError) as error:
            raise DLFormatError(f"{path!r} is missing from the file ({error})") from None

    def classified(self, oid: Any, path: str, depth: int) -> tuple[set[str], str]:
        """An object's attribute names and MATLAB class, once its depth is checked."""
        if depth > MAX_DEPTH:
            raise DLFormatError(
                f"variable {path!r} nests more than {MAX_DEPTH} levels deep (or refers to itself)"
            )
        attributes = self.attribute_names(oid)
        if "MATLAB_class" not in attributes:
            raise DLFormatError(f"{path!r} has no MATLAB_class attribute; the file is not a MATLAB v7.3 file")
        return attributes, _text(self.attribute(oid, "MATLAB_class"))

    def node(self, oid: Any, path: str, depth: int) -> Any:
        attributes, matlab_class = self.classified(oid, path, depth)
        if matlab_class not in _PLAIN_CLASSES or "MATLAB_object_decode" in attributes:
            raise object_error(path, matlab_class)
        kind = self.h5py.h5i.get_type(oid)
        if kind == self.h5py.h5i.GROUP:
            if matlab_class == "struct":
                return self.struct(oid, attributes, path, depth)
            if "MATLAB_sparse" in attributes:
                return self.sparse(oid, matlab_class, path)
            raise DLFormatError(
                f"{path!r} is an HDF5 group of class {matlab_class!r}, which MATLAB does not write"
            )
        if kind != self.h5py.h5i.DATASET:
            raise DLFormatError(f"{path!r} is neither an HDF5 dataset nor a group")
        if "MATLAB_empty" in attributes and int(self.attribute(oid, "MATLAB_empty").ravel()[0]):
            return self.empty(oid, matlab_class, path)
        if matlab_class == "cell":
            return self.cell(oid, path, depth)
        if matlab_class == "struct":
            raise DLFormatError(f"{path!r} is a struct stored as a dataset, which MATLAB does not write")
        return self.array(oid, matlab_class, path)

    def read(self, dataset: Any, path: str) -> np.ndarray:
        shape = dataset.get_space().shape or ()
        dtype = dataset.dtype
        nbytes = int(np.prod(shape, dtype=np.float64)) * dtype.itemsize
        stored = int(dataset.get_storage_size())
        if nbytes > max(stored, 1) * MAX_DEFLATE_RATIO + 4096 or nbytes > self.budget:
            raise DLFormatError(
                f"variable {path!r} declares {nbytes} bytes, more than the file can hold "
                f"({stored} bytes stored); the file is corrupt"
            )
        self.budget -= nbytes
        data = np.empty(shape, dtype=dtype)
        if data.size:
            dataset.read(self.h5py.h5s.ALL, self.h5py.h5s.ALL, data)
        # HDF5 holds the transpose of MATLAB's column-major array
        return data.T if data.ndim >= 2 else data.reshape(-1, 1) if data.ndim == 1 else data.reshape(1, 1)

    def array(self, dataset: Any, matlab_class: str, path: str) -> Any:
        data = self.read(dataset, path)
        if data.dtype.names and set(data.dtype.names) >= {"real", "imag"}:
            complex_type = np.complex64 if matlab_class == "single" else np.complex128
            combined = np.empty(data.shape, dtype=complex_type)
            combined.real, combined.imag = data["real"], data["imag"]
            return combined
        if data.dtype.kind not in "biuf":
            raise DLFormatError(f"variable {path!r} of class {matlab_class!r} holds {data.dtype} data")
        if matlab_class == "char":
            return _chars(data)
        if matlab_class == "logical":
            return data.astype(bool)
        return data.astype(NUMERIC_CLASSES[matlab_class], copy=False)

    def empty(self, dataset: Any, matlab_class: str, path: str) -> Any:
        dims = tuple(int(d) for d in self.read(dataset, path).ravel()[:32])
        if matlab_class == "struct" and len(dims) >= 2 and 0 not in dims and np.prod(dims) <= 1 << 20:
            # MATLAB writes a struct without fields as an "empty" of its dimensions
            return {} if dims == (1, 1) else [{} for _ in range(int(np.prod(dims)))]
        if len(dims) < 2 or 0 not in dims:
            raise DLFormatError(f"variable {path!r} is marked empty but has dimensions {list(dims)}")
        if matlab_class == "char":
            return ""
        if matlab_class in ("cell", "struct"):
            return np.empty(dims, dtype=object)
        return np.zeros(dims, dtype=bool if matlab_class == "logical" else NUMERIC_CLASSES[matlab_class])

    def cell(self, dataset: Any, path: str, depth: int) -> np.ndarray:
        references = self.read(dataset, path)
        cells = np.empty(references.shape, dtype=object)
        for index in np.ndindex(references.shape):
            cells[index] = self.dereference(
                references[index], f"{path}{{{linear_index(index, cells.shape)}}}", depth
            )
        return cells

    def target(self, reference: Any, path: str) -> Any:
        """The object a cell's or struct array's reference points to, checked."""
        if not isinstance(reference, self.h5py.Reference) or not reference:
            raise DLFormatError(f"{path!r} should hold an object reference; the file is corrupt")
        try:
            target = self.h5py.h5r.dereference(reference, self.file.id)
        except (KeyError, ValueError, RuntimeError, TypeError) as error:
            raise DLFormatError(f"{path!r} refers to a missing object ({error})") from None
        if target is None:
            raise DLFormatError(f"{path!r} refers to a missing object")
        return target

    def dereference(self, reference: Any, path: str, depth: int) -> Any:
        return self.node(self.target(reference, path), path, depth + 1)

    def field_names(self, group: Any, attributes: set[str], path: str) -> list[str]:
        if "MATLAB_fields" not in attributes:
            return [name.decode("latin-1") for name in group]
        names = self.h5py.Group(group).attrs["MATLAB_fields"]
        if isinstance(names, self.h5py.Reference):  # MATLAB moves long field lists out of the attribute
            try:
                dataset = self.h5py.h5r.dereference(names, self.file.id)
            except (KeyError, ValueError, RuntimeError, TypeError) as error:
                raise DLFormatError(f"struct {path!r} refers to missing field names ({error})") from None
            if dataset is None or self.h5py.h5i.get_type(dataset) != self.h5py.h5i.DATASET:
                raise DLFormatError(f"struct {path!r} has field names that are not a dataset")
            names = self.read(dataset, path)
        return [_text(name) for name in np.asarray(names, dtype=object).ravel()]

    def struct_members(
        self, group: Any, attributes: set[str], path: str
    ) -> tuple[list[str], list[Any], bool]:
        """A struct's field names, their HDF5 objects, and whether it is a struct array (its fields
        then hold references to each element's values, and carry no MATLAB class)."""
        fields = self.field_names(group, attributes, path)
        children = [self.open(group, field, f"{path}.{field}") for field in fields]
        is_array = bool(children) and all(
            self.h5py.h5i.get_type(child) == self.h5py.h5i.DATASET
            and "MATLAB_class" not in self.attribute_names(child)
            for child in children
        )
        return fields, children, is_array

    def struct(self, group: Any, attributes: set[str], path: str, depth: int) -> Any:
        fields, children, is_array = self.struct_members(group, attributes, path)
        if not is_array:
            return {
                field: self.node(child, f"{path}.{field}", depth + 1)
                for field, child in zip(fields, children, strict=True)
            }
        columns = [self.read(child, f"{path}.{field}") for field, child in zip(fields, children, strict=True)]
        shape = columns[0].shape
        if any(column.shape != shape for column in columns):
            raise DLFormatError(f"struct array {path!r} has fields of different sizes")
        flat = [column.flatten(order="F") for column in columns]
        return [
            {
                field: self.dereference(flat[k][i], f"{path}({i + 1}).{field}", depth)
                for k, field in enumerate(fields)
            }
            for i in range(int(np.prod(shape)))
        ]

    def sparse(self, group: Any, matlab_class: str, path: str) -> scipy.sparse.csc_matrix:
        rows = int(self.attribute(group, "MATLAB_sparse").ravel()[0])
        if b"jc" not in group:
            raise DLFormatError(f"sparse variable {path!r} has no column starts (jc)")
        jc = self.read(self.open(group, "jc", path), path).ravel().astype(np.int64)
        columns = len(jc) - 1
        if b"data" in group and b"ir" in group:
            data = self.array(self.open(group, "data", path), matlab_class, path).ravel()
            ir = self.read(self.open(group, "ir", path), path).ravel().astype(np.int64)
        else:
            data = np.zeros(0, dtype=bool if matlab_class == "logical" else np.float64)
            ir = np.zeros(0, dtype=np.int64)
        if (
            rows < 0
            or columns < 0
            or len(ir) != len(data)
            or (len(jc) and (jc[0] != 0 or jc[-1] != len(data)))
        ):
            raise DLFormatError(f"sparse variable {path!r} has inconsistent indices")
        if (len(ir) and (ir.min() < 0 or ir.max() >= rows)) or np.any(np.diff(jc) < 0):
            raise DLFormatError(f"sparse variable {path!r} has indices out of range")
        return scipy.sparse.csc_matrix((data, ir, jc), shape=(rows, max(columns, 0)))


def _chars(codes: np.ndarray) -> Any:
    rows = ["".join(map(chr, row)) for row in codes.astype(np.uint32).tolist()]
    if codes.shape[0] == 1:
        return rows[0]
    return np.array(rows) if rows else ""


def _open_file(path: Path) -> Any:
    try:
        return _h5py(path).File(path, "r")
    except OSError as error:
        raise DLFormatError(f"cannot read {path} as a MAT-file version 7.3 (HDF5): {error}") from None


def read(path: Path, variable_names: list[str] | None, size: int) -> dict[str, Any]:
    with _open_file(path) as file:
        names = [name for name in file.keys() if not name.startswith("#")]
        wanted = names if variable_names is None else variable_names
        check_wanted(path, wanted, names)
        reader = _Reader(file, size * MAX_DEFLATE_RATIO + (1 << 20))
        return {name: reader.node(reader.open(file.id, name, name), name, 0) for name in wanted}


def listing(path: Path, size: int) -> list[Entry]:
    """Every leaf of every variable, as :func:`dlformat.io.whos` lists them, from HDF5 metadata.

    Shapes, types and attributes come from the file's metadata; the only data read is
    structure: a cell's or struct array's object references, an empty array's dimensions,
    long field-name lists and the opening words of an MCOS object's reference. No value of a
    numeric, logical or char array is read.
    """
    with _open_file(path) as file:
        lister = _Lister(file, size * MAX_DEFLATE_RATIO + (1 << 20))
        for name in file.keys():
            if not name.startswith("#"):
                lister.walk(lister.open(file.id, name, name), name, 0)
        return lister.entries


class _Lister(_Reader):
    """The walk of :class:`_Reader`, recording each leaf's header instead of reading its values."""

    def __init__(self, file: Any, budget: int) -> None:
        super().__init__(file, budget)
        self.entries: list[Entry] = []

    def walk(self, oid: Any, path: str, depth: int) -> None:
        attributes, matlab_class = self.classified(oid, path, depth)
        kind = self.h5py.h5i.get_type(oid)
        if matlab_class not in _PLAIN_CLASSES or "MATLAB_object_decode" in attributes:
            dims = self.object_dims(oid) if kind == self.h5py.h5i.DATASET else None
            if matlab_class == "function_handle":
                dims = (1, 1)  # MATLAB has no arrays of function handles
            self.entries.append(Entry(path, f"{matlab_class} (object)", dims, "", 0))
            return
        if kind == self.h5py.h5i.GROUP:
            if matlab_class == "struct":
                self.walk_struct(oid, attributes, path, depth)
            elif "MATLAB_sparse" in attributes:
                self.sparse_entry(oid, matlab_class, path)
            else:
                raise DLFormatError(
                    f"{path!r} is an HDF5 group of class {matlab_class!r}, which MATLAB does not write"
                )
            return
        if kind != self.h5py.h5i.DATASET:
            raise DLFormatError(f"{path!r} is neither an HDF5 dataset nor a group")
        if "MATLAB_empty" in attributes and int(self.attribute(oid, "MATLAB_empty").ravel()[0]):
            dims = tuple(int(d) for d in self.read(oid, path).ravel()[:32])
            if matlab_class == "struct" and len(dims) >= 2 and 0 not in dims and 1 < _count(dims) <= 1 << 20:
                # structs without fields, written as an "empty" of their dimensions
                for element in range(_count(dims)):
                    self.entries.append(Entry(f"{path}({element + 1})", "struct", (1, 1), "", 0))
            elif matlab_class in ("cell", "struct"):
                self.entries.append(Entry(path, matlab_class, dims, "", 0))
            else:
                self.entries.append(_array_entry(path, matlab_class, dims, None))
            return
        if matlab_class == "struct":
            raise DLFormatError(f"{path!r} is a struct stored as a dataset, which MATLAB does not write")
        dims = _matlab_dims(oid.get_space().shape or ())
        if matlab_class == "cell":
            references = self.read(oid, path).ravel(order="F")  # MATLAB's order: column-major
            for number, reference in enumerate(references, start=1):
                self.walk(self.target(reference, f"{path}{{{number}}}"), f"{path}{{{number}}}", depth + 1)
            if not references.size:
                self.entries.append(Entry(path, "cell", dims, "", 0))
            return
        self.entries.append(_array_entry(path, matlab_class, dims, oid.dtype))

    def walk_struct(self, group: Any, attributes: set[str], path: str, depth: int) -> None:
        fields, children, is_array = self.struct_members(group, attributes, path)
        if not fields:
            self.entries.append(Entry(path, "struct", (1, 1), "", 0))
        if not is_array:
            for field, child in zip(fields, children, strict=True):
                self.walk(child, f"{path}.{field}", depth + 1)
            return
        columns = [self.read(child, f"{path}.{field}") for field, child in zip(fields, children, strict=True)]
        if any(column.shape != columns[0].shape for column in columns):
            raise DLFormatError(f"struct array {path!r} has fields of different sizes")
        flat = [column.flatten(order="F") for column in columns]
        for element in range(len(flat[0])):
            for field, references in zip(fields, flat, strict=True):
                child = f"{path}({element + 1}).{field}"
                self.walk(self.target(references[element], child), child, depth + 1)

    def sparse_entry(self, group: Any, matlab_class: str, path: str) -> None:
        rows = int(self.attribute(group, "MATLAB_sparse").ravel()[0])
        if b"jc" not in group:
            raise DLFormatError(f"sparse variable {path!r} has no column starts (jc)")
        columns = _count(self.open(group, "jc", path).get_space().shape or (1,)) - 1
        nonzeros, complex_ = 0, False
        if b"data" in group and b"ir" in group:
            data = self.open(group, "data", path)
            nonzeros = _count(data.get_space().shape or (1,))
            complex_ = bool(data.dtype.names and set(data.dtype.names) >= {"real", "imag"})
        if rows < 0 or columns < 0:
            raise DLFormatError(f"sparse variable {path!r} has inconsistent indices")
        self.entries.append(
            sparse_entry(path, matlab_class == "logical", complex_, (rows, columns), nonzeros)
        )

    def object_dims(self, dataset: Any) -> tuple[int, ...] | None:
        """An MCOS object's size from its reference's opening words (see ``_scan.reference_dims``)."""
        shape: tuple[int, ...] = tuple(dataset.get_space().shape or ())
        if len(shape) != 2 or min(shape) != 1 or dataset.dtype != np.uint32:
            return None
        along = int(shape[1] > shape[0])

        def words(count: int) -> list[int]:
            selection: list[int | slice] = [0, 0]
            selection[along] = slice(0, min(count, shape[along]))
            values = self.h5py.Dataset(dataset)[tuple(selection)]
            return [int(word) for word in np.asarray(values).ravel()]

        opening = words(2)
        if len(opening) < 2 or not 2 <= opening[1] <= MAX_OBJECT_DIMS:
            return None
        return reference_dims(words(2 + opening[1]))


def _count(dims: tuple[int, ...]) -> int:
    return int(np.prod(dims, dtype=np.int64))


def _matlab_dims(shape: tuple[int, ...]) -> tuple[int, ...]:
    """MATLAB's size of a dataset: HDF5 holds the transpose (see ``_Reader.read``)."""
    if len(shape) >= 2:
        return tuple(int(size) for size in reversed(shape))
    return (int(shape[0]), 1) if shape else (1, 1)


def _array_entry(path: str, matlab_class: str, dims: tuple[int, ...], stored: np.dtype | None) -> Entry:
    """A numeric, logical or char array as dlformat loads it (its class's dtype, not the storage's)."""
    count = _count(dims)
    if matlab_class == "char":
        return Entry(path, "char", dims, "str", count)
    if matlab_class == "logical":
        return Entry(path, "logical", dims, "bool", count)
    dtype = np.dtype(NUMERIC_CLASSES[matlab_class])
    complex_ = stored is not None and bool(stored.names) and set(stored.names or ()) >= {"real", "imag"}
    if complex_:
        dtype = np.dtype(np.complex64 if matlab_class == "single" else np.complex128)
    suffix = " complex" if complex_ else ""
    return Entry(path, matlab_class + suffix, dims, str(dtype), count * dtype.itemsize)


# -- writing -------------------------------------------------------------------------------------
def header() -> bytes:
    text = (
        "MATLAB 7.3 MAT-file, Platform: dlformat, Created on: "
        + time.strftime("%a %b %d %H:%M:%S %Y")
        + " HDF5 schema 1.00 ."
    )
    return text.encode("ascii").ljust(116, b" ") + b" " * 8 + b"\x00\x02" + b"IM"


class _Writer:
    def __init__(self, file: Any) -> None:
        self.h5py = _h5py()
        self.file = file
        self.count = 0

    def refs(self) -> Any:
        return self.file.require_group("#refs#")

    def reference(self, value: Any) -> Any:
        name = _ref_name(self.count)
        self.count += 1
        self.write(self.refs(), name, value)
        return self.refs()[name].ref

    def write(self, parent: Any, name: str, value: Any) -> None:
        if isinstance(value, dict):
            group = parent.create_group(name)
            self.classify(group, "struct")
            self.fields(group, list(value))
            for field, item in value.items():
                self.write(group, field, item)
        elif isinstance(value, StructArray):
            group = parent.create_group(name)
            self.classify(group, "struct")
            self.fields(group, list(value.fields))
            for field in value.fields:
                references = [self.reference(item[field]) for item in value.items]
                group.create_dataset(
                    field, data=np.array(references, dtype=self.h5py.ref_dtype).reshape(-1, 1)
                )
        elif isinstance(value, str):
            if not value:
                self.empty(parent, name, "char", (0, 0))
            else:
                self.dataset(
                    parent, name, np.array([[ord(c) for c in value]], dtype=np.uint16), "char", decode=2
                )
        elif scipy.sparse.issparse(value):
            self.sparse(parent, name, value)
        elif value.dtype == object:
            if not value.size:
                self.empty(parent, name, "cell", value.shape)
                return
            cell_references = np.empty(value.shape, dtype=self.h5py.ref_dtype)
            for index in np.ndindex(value.shape):
                cell_references[index] = self.reference(value[index])
            self.dataset(parent, name, cell_references, "cell")
        elif value.dtype.kind == "U":
            width = max((len(row) for row in value.ravel()), default=0)
            codes = np.array([[ord(c) for c in row.ljust(width)] for row in value.ravel()], dtype=np.uint16)
            self.dataset(parent, name, codes.reshape(len(value.ravel()), width), "char", decode=2)
        else:
            self.numeric(parent, name, value)

    def fields(self, group: Any, fields: list[str]) -> None:
        names = _field_names(self.h5py, fields)
        if len(fields) <= _MAX_ATTRIBUTE_FIELDS:
            group.attrs.create("MATLAB_fields", names)
        else:  # an HDF5 attribute holds at most 64 KiB; MATLAB moves long lists into #refs#
            name = _ref_name(self.count)
            self.count += 1
            group.attrs["MATLAB_fields"] = self.refs().create_dataset(name, data=names).ref

    def classify(self, obj: Any, matlab_class: str, decode: int | None = None) -> None:
        obj.attrs.create("MATLAB_class", np.bytes_(matlab_class))
        if decode is not None:
            obj.attrs.create("MATLAB_int_decode", np.int32(decode))

    def dataset(
        self, parent: Any, name: str, data: np.ndarray, matlab_class: str, decode: int | None = None
    ) -> None:
        dataset = parent.create_dataset(name, data=np.ascontiguousarray(data.T))
        self.classify(dataset, matlab_class, decode)

    def empty(self, parent: Any, name: str, matlab_class: str, shape: tuple[int, ...]) -> None:
        dataset = parent.create_dataset(name, data=np.array(shape, dtype=np.uint64))
        self.classify(dataset, matlab_class)
        dataset.attrs.create("MATLAB_empty", np.uint8(1))

    def numeric(self, parent: Any, name: str, value: np.ndarray) -> None:
        matlab_class = CLASS_OF_DTYPE[value.dtype]
        if not value.size:
            self.empty(parent, name, matlab_class, value.shape)
        elif value.dtype == bool:
            self.dataset(parent, name, value.astype(np.uint8), "logical", decode=1)
        elif value.dtype.kind == "c":
            self.dataset(parent, name, _compound(value), matlab_class)
        else:
            self.dataset(parent, name, value, matlab_class)

    def sparse(self, parent: Any, name: str, matrix: scipy.sparse.csc_matrix) -> None:
        matrix = scipy.sparse.csc_matrix(matrix)
        matrix.sort_indices()
        group = parent.create_group(name)
        logical = matrix.dtype == bool
        self.classify(group, "logical" if logical else "double", decode=1 if logical else None)
        group.attrs.create("MATLAB_sparse", np.uint64(matrix.shape[0]))
        group.create_dataset("jc", data=matrix.indptr.astype(np.uint64))
        if matrix.nnz:
            group.create_dataset("ir", data=matrix.indices.astype(np.uint64))
            data = matrix.data.astype(np.uint8) if logical else matrix.data
            if data.dtype.kind == "c":
                data = _compound(data)
            group.create_dataset("data", data=data)


def _compound(values: np.ndarray) -> np.ndarray:
    """Complex values as MATLAB stores them in HDF5: a (real, imag) compound of the same precision."""
    part = np.float32 if values.dtype == np.complex64 else np.float64
    compound = np.empty(values.shape, dtype=[("real", part), ("imag", part)])
    compound["real"], compound["imag"] = values.real, values.imag
    return compound


def _ref_name(count: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = ""
    count += 1
    while count:
        count, digit = divmod(count - 1, 26)
        name = letters[digit] + name
    return name


def _field_names(h5py: Any, fields: list[str]) -> np.ndarray:
    names = np.empty(len(fields), dtype=h5py.vlen_dtype(np.dtype("S1")))
    for index, field in enumerate(fields):
        names[index] = np.array(list(field), dtype="S1")
    return names


def write(path: Path, variables: dict[str, Any]) -> None:
    h5py = _h5py()
    with h5py.File(path, "w", userblock_size=512, libver="earliest") as file:
        writer = _Writer(file)
        for name, value in variables.items():
            writer.write(file, name, value)
    with open(path, "r+b") as raw:
        raw.write(header())
