"""MAT-file version 7.3 (HDF5) through h5py, in MATLAB's own layout.

MATLAB stores arrays transposed (HDF5 is row-major), names each variable's class in a
``MATLAB_class`` attribute, keeps cell contents and struct-array elements in a ``#refs#``
group reached by object references, stores empty arrays as their dimensions with
``MATLAB_empty``, and puts a 128-byte MAT header in a 512-byte user block.

Reading follows nothing outside the file and nothing MATLAB does not write: HDF5 links other
than hard links (soft and external links), external storage, virtual datasets and filters
other than HDF5's built-in ones are refused, naming the variable, before any data is read.
An object reached twice (MATLAB never writes that; a hostile file may, to make a walk take
2^depth steps) is read once and listed once; an object that contains itself is refused.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from .._errors import DLFormatError
from ._scan import (
    MAX_DEFLATE_RATIO,
    MAX_DEPTH,
    MAX_OBJECT_DIMS,
    check_reference,
    reference_dims,
    sparse_entry,
)
from ._values import (
    CLASS_OF_DTYPE,
    NUMERIC_CLASSES,
    Entry,
    ObjectError,
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
# HDF5's own filters; any other filter number would make HDF5 look for a plugin library
_BUILTIN_FILTERS = {1: "deflate", 2: "shuffle", 3: "fletcher32", 4: "szip", 5: "nbit", 6: "scaleoffset"}
_CLASS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]{0,1023}\Z")
_MAX_ATTRIBUTE_BYTES = 1 << 20  # MATLAB's attributes are a few bytes; field lists at most 64 KiB
# Python memory per item, charged against the file's budget like the data read: a reference
# (its raw address and h5py's object), a struct element (a dict), a listed entry
_REFERENCE_BYTES = 72
_ELEMENT_BYTES = 128
_ENTRY_BYTES = 512
_READING = object()  # in `seen`: the object is being read, so reaching it again is a cycle


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


def _describe(value: np.ndarray) -> str:
    """An attribute's value for an error message: its type and (the start of) its contents."""
    items = value.ravel()[:4].tolist()
    shown = repr(items[0]) if value.size == 1 else repr(items) + (" ..." if value.size > 4 else "")
    return f"{value.dtype} {shown[:80]}"


class _Reader:
    """Walks a file with h5py's low-level identifiers: a few microseconds a call, where the
    high-level objects cost hundreds (files with thousands of struct fields are common)."""

    def __init__(self, file: Any, budget: int) -> None:
        self.h5py = _h5py()
        self.file = file
        self.budget = budget  # bytes the file can expand to; every read is charged against it
        # object address -> its value (or _READING while it is read), so that an object that
        # several references reach is read once; and the path it was first reached by
        self.seen: dict[int, Any] = {}
        self.first: dict[int, str] = {}

    def charge(self, nbytes: int, path: str, what: str) -> None:
        if nbytes > self.budget:
            raise DLFormatError(
                f"variable {path!r} declares {what}, more than the file can hold; the file is corrupt"
            )
        self.budget -= nbytes

    def attribute_names(self, oid: Any) -> set[str]:
        names: set[str] = set()
        self.h5py.h5a.iterate(oid, lambda name: names.add(name.decode("latin-1")))
        return names

    def attribute(self, oid: Any, name: str, path: str) -> np.ndarray:
        attr = self.h5py.h5a.open(oid, name.encode())
        dtype = attr.dtype
        count = _count(attr.shape or ())
        text = dtype.kind == "O" and self.h5py.check_string_dtype(dtype) is not None and count <= 16
        if (dtype.kind == "O" and not text) or count * dtype.itemsize > _MAX_ATTRIBUTE_BYTES:
            raise DLFormatError(
                f"variable {path!r} has a broken {name} attribute (of type {dtype}, {count} values)"
            )
        value = np.empty(attr.shape, dtype=dtype)
        if value.size:
            attr.read(value)
        return value

    def flag(self, oid: Any, name: str, path: str) -> int:
        """A whole-number attribute (``MATLAB_empty``, ``MATLAB_sparse``): one value, checked."""
        value = self.attribute(oid, name, path)
        if value.size != 1 or value.dtype.kind not in "biuf" or not np.isfinite(value.ravel()[0]):
            raise DLFormatError(f"variable {path!r} has a broken {name} attribute ({_describe(value)})")
        number = value.ravel()[0]
        if number != int(number):
            raise DLFormatError(f"variable {path!r} has a broken {name} attribute ({_describe(value)})")
        return int(number)

    def has(self, group: Any, name: bytes) -> bool:
        """Whether a group holds a link by that name (without following it, unlike ``in``)."""
        return bool(group.links.exists(name))

    def open(self, parent: Any, name: str, path: str) -> Any:
        """A member of a group by name: a hard link only (MATLAB writes no other kind)."""
        if not name or name in (".", "..") or "/" in name:
            raise DLFormatError(f"{path!r} has the name {name!r}, which names no member of an HDF5 group")
        key = name.encode()
        try:
            kind = parent.links.get_info(key).type
        except (KeyError, ValueError, RuntimeError) as error:
            raise DLFormatError(f"{path!r} is missing from the file ({error})") from None
        if kind != self.h5py.h5l.TYPE_HARD:
            raise DLFormatError(f"variable {path!r} is {self.link(parent, key, kind)}")
        try:
            return self.h5py.h5o.open(parent, key)
        except (KeyError, ValueError, RuntimeError) as error:
            raise DLFormatError(f"{path!r} is missing from the file ({error})") from None

    def link(self, parent: Any, key: bytes, kind: int) -> str:
        try:
            target = parent.links.get_val(key)
        except (KeyError, ValueError, RuntimeError, TypeError):
            target = "?"
        if isinstance(target, tuple):  # an external link: (file, object)
            target = ":".join(_text(part) for part in target)
        what = {self.h5py.h5l.TYPE_SOFT: "a soft link", self.h5py.h5l.TYPE_EXTERNAL: "an external link"}
        return (
            f"{what.get(kind, f'a user-defined link (type {kind})')} to {_text(target)[:200]!r}; "
            "MATLAB writes no HDF5 links, and dlformat follows none"
        )

    def check_storage(self, dataset: Any, path: str) -> None:
        """Refuse data kept outside the file or behind filters HDF5 would load a plugin for."""
        plist = dataset.get_create_plist()
        if plist.get_layout() == self.h5py.h5d.VIRTUAL:
            raise DLFormatError(
                f"variable {path!r} is an HDF5 virtual dataset (its data lies in other files), "
                "which MATLAB never writes; dlformat reads nothing outside the file"
            )
        if plist.get_external_count():
            name = _text(plist.get_external(0)[0])
            raise DLFormatError(
                f"variable {path!r} keeps its data in the external file {name[:200]!r} (HDF5 external "
                "storage), which MATLAB never writes; dlformat reads nothing outside the file"
            )
        for index in range(plist.get_nfilters()):
            code = int(plist.get_filter(index)[0])
            if code not in _BUILTIN_FILTERS:
                raise DLFormatError(
                    f"variable {path!r} is stored through HDF5 filter {code}, which is not one of "
                    f"HDF5's own ({', '.join(_BUILTIN_FILTERS.values())})"
                )

    def check_chunks(self, dataset: Any, path: str) -> None:
        """HDF5 inflates a whole chunk to read any of it, and a chunk can be far larger than its
        dataset (when the maximum shape is): a chunk is bounded as the data is."""
        plist = dataset.get_create_plist()
        if plist.get_layout() != self.h5py.h5d.CHUNKED:
            return
        chunk = _count(plist.get_chunk()) * dataset.dtype.itemsize
        stored = int(dataset.get_storage_size())
        if chunk > max(stored, 1) * MAX_DEFLATE_RATIO + 4096 or chunk > self.budget:
            raise DLFormatError(
                f"variable {path!r} is stored in chunks of {chunk} bytes, more than the file can "
                f"hold ({stored} bytes stored); the file is corrupt"
            )

    def kind(self, oid: Any, path: str) -> Any:
        kind = self.h5py.h5i.get_type(oid)
        if kind == self.h5py.h5i.DATASET:
            self.check_storage(oid, path)
        elif kind != self.h5py.h5i.GROUP:
            raise DLFormatError(f"{path!r} is neither an HDF5 dataset nor a group")
        return kind

    def address(self, oid: Any) -> int:
        return int(self.h5py.h5o.get_info(oid).addr)

    def enter(self, address: int, path: str, depth: int) -> bool:
        """Start on an object: False if it was reached before (its result is in ``seen``)."""
        if address in self.seen:
            if self.seen[address] is _READING:
                raise DLFormatError(
                    f"variable {path!r} refers back to {self.first[address]!r}, which contains it "
                    "(a reference cycle, which MATLAB never writes)"
                )
            return False
        if depth > MAX_DEPTH:
            raise DLFormatError(f"variable {path!r} nests more than {MAX_DEPTH} levels deep")
        self.seen[address] = _READING
        self.first[address] = path
        return True

    def classified(self, oid: Any, path: str) -> tuple[set[str], str]:
        """An object's attribute names and MATLAB class, checked."""
        attributes = self.attribute_names(oid)
        if "MATLAB_class" not in attributes:
            raise DLFormatError(f"{path!r} has no MATLAB_class attribute; the file is not a MATLAB v7.3 file")
        value = self.attribute(oid, "MATLAB_class", path)
        name = ""
        # MATLAB writes one string (an array of strings, joined, would name a class it never wrote)
        if value.dtype.kind == "S" and value.size == 1:
            name = _text(value.ravel()[0])
        elif value.dtype.kind == "O" and value.size == 1:  # a variable-length string
            name = _text(value.ravel()[0])
        if not _CLASS_NAME.match(name):
            raise DLFormatError(
                f"variable {path!r} has a broken MATLAB_class attribute ({_describe(value)}): it "
                "should name a MATLAB class; the file is corrupt"
            )
        return attributes, name

    def empty_flag(self, oid: Any, attributes: set[str], path: str) -> bool:
        return "MATLAB_empty" in attributes and bool(self.flag(oid, "MATLAB_empty", path))

    def node(self, oid: Any, path: str, depth: int, address: int | None = None) -> Any:
        address = self.address(oid) if address is None else address
        if not self.enter(address, path, depth):
            return self.seen[address]
        value = self.value(oid, path, depth)
        self.seen[address] = value
        return value

    def value(self, oid: Any, path: str, depth: int) -> Any:
        attributes, matlab_class = self.classified(oid, path)
        if matlab_class not in _PLAIN_CLASSES or "MATLAB_object_decode" in attributes:
            raise object_error(path, matlab_class)
        kind = self.kind(oid, path)
        if kind == self.h5py.h5i.GROUP:
            if matlab_class == "struct":
                return self.struct(oid, attributes, path, depth)
            if "MATLAB_sparse" in attributes:
                return self.sparse(oid, matlab_class, path)
            raise DLFormatError(
                f"{path!r} is an HDF5 group of class {matlab_class!r}, which MATLAB does not write"
            )
        if self.empty_flag(oid, attributes, path):
            return self.empty(oid, matlab_class, path)
        if matlab_class == "cell":
            return self.cell(oid, path, depth)
        if matlab_class == "struct":
            raise DLFormatError(f"{path!r} is a struct stored as a dataset, which MATLAB does not write")
        return self.array(oid, matlab_class, path)

    def read(self, dataset: Any, path: str) -> np.ndarray:
        self.check_storage(dataset, path)
        shape = dataset.get_space().shape or ()
        dtype = dataset.dtype
        if dtype.kind == "O":  # variable-length data, strings or references: none is MATLAB data
            raise DLFormatError(
                f"variable {path!r} holds HDF5 data of type {dtype}, which MATLAB does not write"
            )
        nbytes = _count(shape) * dtype.itemsize
        stored = int(dataset.get_storage_size())
        if nbytes > max(stored, 1) * MAX_DEFLATE_RATIO + 4096 or nbytes > self.budget:
            raise DLFormatError(
                f"variable {path!r} declares {nbytes} bytes, more than the file can hold "
                f"({stored} bytes stored); the file is corrupt"
            )
        self.check_chunks(dataset, path)
        self.budget -= nbytes
        data = np.empty(shape, dtype=dtype)
        if data.size:
            dataset.read(self.h5py.h5s.ALL, self.h5py.h5s.ALL, data)
        # HDF5 holds the transpose of MATLAB's column-major array
        return data.T if data.ndim >= 2 else data.reshape(-1, 1) if data.ndim == 1 else data.reshape(1, 1)

    def references(self, dataset: Any, path: str) -> tuple[np.ndarray, np.ndarray]:
        """A cell's or struct field's object references in MATLAB's shape, twice: as the raw
        addresses of their targets (to find an object reached before without opening it) and as
        h5py references (to open the others)."""
        self.check_storage(dataset, path)
        if not dataset.get_type().equal(self.h5py.h5t.STD_REF_OBJ):
            raise DLFormatError(
                f"variable {path!r} should hold object references but holds {dataset.dtype} data; "
                "the file is corrupt"
            )
        shape = dataset.get_space().shape or ()
        count = _count(shape)
        stored = int(dataset.get_storage_size())
        if count * 8 > max(stored, 1) * MAX_DEFLATE_RATIO + 4096:
            raise DLFormatError(
                f"variable {path!r} declares {count} references, more than the file can hold "
                f"({stored} bytes stored); the file is corrupt"
            )
        self.check_chunks(dataset, path)
        self.charge(count * _REFERENCE_BYTES, path, f"{count} references")
        addresses = np.zeros(shape, dtype=np.uint64)
        references = np.empty(shape, dtype=dataset.dtype)
        if count:
            dataset.read(self.h5py.h5s.ALL, self.h5py.h5s.ALL, addresses, mtype=self.h5py.h5t.STD_REF_OBJ)
            dataset.read(self.h5py.h5s.ALL, self.h5py.h5s.ALL, references)

        def matlab(data: np.ndarray) -> np.ndarray:
            return data.T if data.ndim >= 2 else data.reshape(-1, 1) if data.ndim == 1 else data.reshape(1, 1)

        return matlab(addresses), matlab(references)

    def array(self, dataset: Any, matlab_class: str, path: str) -> Any:
        data = self.read(dataset, path)
        if data.dtype.names and set(data.dtype.names) >= {"real", "imag"}:
            if any(data.dtype[part].kind not in "biuf" for part in ("real", "imag")):
                raise DLFormatError(f"variable {path!r} of class {matlab_class!r} holds {data.dtype} data")
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

    def empty_dims(self, dataset: Any, path: str) -> tuple[int, ...]:
        data = self.read(dataset, path).ravel()[:32]
        if data.dtype.kind not in "iu" or (data.size and data.min() < 0):
            raise DLFormatError(f"variable {path!r} is marked empty but holds {data.dtype} dimensions")
        return tuple(int(d) for d in data)

    def empty(self, dataset: Any, matlab_class: str, path: str) -> Any:
        dims = self.empty_dims(dataset, path)
        if matlab_class == "struct" and len(dims) >= 2 and 0 not in dims and _fieldless(dims):
            # MATLAB writes a struct without fields as an "empty" of its dimensions
            count = _count(dims)
            self.charge(count * _ELEMENT_BYTES, path, f"{count} struct elements")
            return {} if dims == (1, 1) else [{} for _ in range(count)]
        if len(dims) < 2 or 0 not in dims:
            raise DLFormatError(f"variable {path!r} is marked empty but has dimensions {list(dims)}")
        if matlab_class == "char":
            return ""
        if matlab_class in ("cell", "struct"):
            return np.empty(dims, dtype=object)
        return np.zeros(dims, dtype=bool if matlab_class == "logical" else NUMERIC_CLASSES[matlab_class])

    def cell(self, dataset: Any, path: str, depth: int) -> np.ndarray:
        addresses, references = self.references(dataset, path)
        cells = np.empty(references.shape, dtype=object)
        for index in np.ndindex(references.shape):
            cells[index] = self.dereference(
                int(addresses[index]),
                references[index],
                f"{path}{{{linear_index(index, cells.shape)}}}",
                depth,
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

    def dereference(self, address: int, reference: Any, path: str, depth: int) -> Any:
        if address in self.seen:  # reached before: no need to open it again
            self.enter(address, path, depth + 1)  # raises for a cycle
            return self.seen[address]
        return self.node(self.target(reference, path), path, depth + 1, address)

    def field_names(self, group: Any, attributes: set[str], path: str) -> list[str]:
        if "MATLAB_fields" not in attributes:
            return [name.decode("latin-1") for name in group]
        shape = self.h5py.h5a.open(group, b"MATLAB_fields").shape or ()
        if _count(shape) > 1 << 16:
            raise DLFormatError(
                f"struct {path!r} has a broken MATLAB_fields attribute ({_count(shape)} names)"
            )
        names = self.h5py.Group(group).attrs["MATLAB_fields"]
        if isinstance(names, self.h5py.Reference):  # MATLAB moves long field lists out of the attribute
            try:
                dataset = self.h5py.h5r.dereference(names, self.file.id)
            except (KeyError, ValueError, RuntimeError, TypeError) as error:
                raise DLFormatError(f"struct {path!r} refers to missing field names ({error})") from None
            if dataset is None or self.h5py.h5i.get_type(dataset) != self.h5py.h5i.DATASET:
                raise DLFormatError(f"struct {path!r} has field names that are not a dataset")
            self.check_storage(dataset, path)
            count = _count(dataset.get_space().shape or ())
            self.charge(count * _ELEMENT_BYTES, path, f"{count} field names")
            names = self.h5py.Dataset(dataset)[()]
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

    def struct_columns(self, fields: list[str], children: list[Any], path: str) -> tuple[list, list, int]:
        """A struct array's fields: each field's targets (addresses and references) in MATLAB's
        column-major element order, and the number of elements."""
        columns = [
            self.references(child, f"{path}.{field}") for field, child in zip(fields, children, strict=True)
        ]
        shape = columns[0][0].shape
        if any(addresses.shape != shape for addresses, _ in columns):
            raise DLFormatError(f"struct array {path!r} has fields of different sizes")
        count = _count(shape)
        self.charge(count * _ELEMENT_BYTES, path, f"{count} struct elements")
        addresses = [column[0].flatten(order="F") for column in columns]
        references = [column[1].flatten(order="F") for column in columns]
        return addresses, references, count

    def struct(self, group: Any, attributes: set[str], path: str, depth: int) -> Any:
        fields, children, is_array = self.struct_members(group, attributes, path)
        if not is_array:
            return {
                field: self.node(child, f"{path}.{field}", depth + 1)
                for field, child in zip(fields, children, strict=True)
            }
        addresses, references, count = self.struct_columns(fields, children, path)
        return [
            {
                field: self.dereference(
                    int(addresses[k][i]), references[k][i], f"{path}({i + 1}).{field}", depth
                )
                for k, field in enumerate(fields)
            }
            for i in range(count)
        ]

    def indices(self, group: Any, name: str, path: str) -> np.ndarray:
        values = self.read(self.open(group, name, f"{path}.{name}"), path).ravel()
        if values.dtype.kind not in "iu":
            raise DLFormatError(f"sparse variable {path!r} has {values.dtype} indices ({name})")
        if values.dtype == np.uint64 and values.size and values.max() > np.iinfo(np.int64).max:
            raise DLFormatError(f"sparse variable {path!r} has indices out of range")
        return values.astype(np.int64)

    def sparse(self, group: Any, matlab_class: str, path: str) -> scipy.sparse.csc_matrix:
        rows = self.flag(group, "MATLAB_sparse", path)
        if not self.has(group, b"jc"):
            raise DLFormatError(f"sparse variable {path!r} has no column starts (jc)")
        jc = self.indices(group, "jc", path)
        columns = len(jc) - 1
        if self.has(group, b"data") and self.has(group, b"ir"):
            data = self.array(self.open(group, "data", f"{path}.data"), matlab_class, path).ravel()
            ir = self.indices(group, "ir", path)
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
        if not isinstance(data, np.ndarray) or data.dtype.kind not in "bfc":
            raise DLFormatError(f"sparse variable {path!r} of class {matlab_class!r} holds no numbers")
        return scipy.sparse.csc_matrix((data, ir, jc), shape=(rows, max(columns, 0)))


def _fieldless(dims: tuple[int, ...]) -> bool:
    return _count(dims) <= 1 << 20


def _chars(codes: np.ndarray) -> Any:
    """Char data as text: MATLAB's chars are UTF-16 code units, so a surrogate pair is one
    character (an emoji) and a lone surrogate, or a code that is no UTF-16 unit, is U+FFFD."""
    units = codes.astype(np.float64) if codes.dtype.kind == "f" else codes.astype(np.int64)
    valid = (units >= 0) & (units <= 0xFFFF) & (units == np.floor(units))
    units = np.where(valid, units, 0xFFFD).astype("<u2")
    rows = [row.tobytes().decode("utf-16-le", "replace") for row in units]
    if codes.shape[0] == 1:
        return rows[0]
    return np.array(rows) if rows else ""


def _open_file(path: Path) -> Any:
    try:
        return _h5py(path).File(path, "r")
    except OSError as error:
        raise DLFormatError(f"cannot read {path} as a MAT-file version 7.3 (HDF5): {error}") from None


def read(
    path: Path, variable_names: list[str] | None, size: int, objects: list[ObjectError] | None = None
) -> dict[str, Any]:
    """The variables named (all when None); with an ``objects`` list, the refusals of those
    holding MATLAB objects go there instead of being raised."""
    with _open_file(path) as file:
        names = [name for name in file.keys() if not name.startswith("#")]
        wanted = names if variable_names is None else variable_names
        check_wanted(path, wanted, names)
        reader = _Reader(file, size * MAX_DEFLATE_RATIO + (1 << 20))
        loaded = {}
        for name in wanted:
            try:
                loaded[name] = reader.node(reader.open(file.id, name, name), name, 0)
            except ObjectError as error:
                if objects is None:
                    raise
                error.variable = name
                objects.append(error)
        return loaded


def listing(path: Path, size: int) -> list[Entry]:
    """Every leaf of every variable, as :func:`dlformat.io.whos` lists them, from HDF5 metadata.

    Shapes, types and attributes come from the file's metadata; the only data read is
    structure: a cell's or struct array's object references, an empty array's dimensions,
    long field-name lists and the opening words of an MCOS object's reference. No value of a
    numeric, logical or char array is read. An object that several references reach (which
    MATLAB never writes) is walked once: the later references are one entry each, of class
    ``"<class> (same as <path>)"``.
    """
    with _open_file(path) as file:
        lister = _Lister(file, size * MAX_DEFLATE_RATIO + (1 << 20))
        for name in file.keys():
            if not name.startswith("#"):
                lister.walk(lister.open(file.id, name, name), name, 0)
        return lister.entries


def check_objects(path: Path, size: int) -> None:
    """Check a whole version 7.3 file before mat-io reads it (to decode MATLAB objects).

    mat-io reads every dataset it meets whole, follows every reference, and reads the
    ``#refs#`` and ``#subsystem#`` groups where MATLAB keeps objects' state. Every object
    reachable from the root, by links or references, is checked as this module's reader checks
    what it reads: hard links only, no external or virtual storage or plugin filters, declared
    bytes within what the stored bytes can inflate to (all of them together within the file's
    budget), attributes of bounded size, bounded depth, and MCOS references that list exactly
    the objects they declare. mat-io does not remember what it has read, so an object holding
    references may be reached by one reference only (a chain of shared ones would make its walk
    exponential); MATLAB shares only plain data (its canonical empty array).
    """
    with _open_file(path) as file:
        checker = _Checker(file, size * MAX_DEFLATE_RATIO + (1 << 20))
        checker.visit(checker.h5py.h5o.open(file.id, b"/"), "/", 0)


class _Checker(_Reader):
    def __init__(self, file: Any, budget: int) -> None:
        super().__init__(file, budget)
        self.referenced: dict[int, str] = {}  # address -> the first reference to it

    def visit(self, oid: Any, path: str, depth: int, referenced: bool = False) -> None:
        """Check an object (``seen``: address -> whether it holds links or references) and what
        it leads to, once however it is reached."""
        address = self.address(oid)
        if referenced:
            if address in self.referenced and self.seen.get(address):
                raise DLFormatError(
                    f"{path!r} is a second reference to {self.first[address]!r} (first reached as "
                    f"{self.referenced[address]!r}), which holds references (MATLAB never shares those)"
                )
            self.referenced.setdefault(address, path)
        if address in self.seen:
            return
        if depth > MAX_DEPTH:
            raise DLFormatError(f"{path!r} nests more than {MAX_DEPTH} levels deep")
        self.first[address] = path
        self.seen[address] = None  # plain data, reachable again
        attributes = self.attribute_names(oid)
        is_group = self.kind(oid, path) == self.h5py.h5i.GROUP
        for name in attributes:  # each bounded in size
            if name != "MATLAB_fields":
                self.attribute(oid, name, path)
            elif is_group:
                self.field_names(oid, attributes, path)
            elif _count(self.h5py.h5a.open(oid, b"MATLAB_fields").shape or ()) > 1 << 16:
                raise DLFormatError(f"{path!r} has a broken MATLAB_fields attribute")
        if is_group:
            self.seen[address] = True
            for key in list(oid):
                name = key.decode("latin-1")
                self.visit(
                    self.open(oid, name, f"{path.rstrip('/')}/{name}"),
                    f"{path.rstrip('/')}/{name}",
                    depth + 1,
                )
            return
        if oid.get_type().equal(self.h5py.h5t.STD_REF_OBJ):
            self.seen[address] = True
            _, references = self.references(oid, path)
            for index, reference in enumerate(references.ravel()):
                if reference:
                    self.visit(self.target(reference, path), f"{path}[{index}]", depth + 1, True)
            return
        if oid.dtype.kind == "O":
            raise DLFormatError(f"{path!r} holds HDF5 data of type {oid.dtype}, which MATLAB does not write")
        data = self.read(oid, path)
        if data.dtype == np.uint32 and data.size >= 3:
            check_reference(
                f"variable {path!r}", data.ravel(order="F")[: 2 + MAX_OBJECT_DIMS].tolist(), data.size
            )


class _Lister(_Reader):
    """The walk of :class:`_Reader`, recording each leaf's header instead of reading its values.

    ``seen`` holds, for each object walked, the class and size that a later reference to it
    is listed with."""

    def __init__(self, file: Any, budget: int) -> None:
        super().__init__(file, budget)
        self.entries: list[Entry] = []

    def add(self, entry: Entry) -> None:
        self.charge(_ENTRY_BYTES, entry.path, "more entries")
        self.entries.append(entry)

    def walk(self, oid: Any, path: str, depth: int, address: int | None = None) -> None:
        address = self.address(oid) if address is None else address
        if not self.enter(address, path, depth):
            self.again(address, path)
            return
        self.seen[address] = self.leaves(oid, path, depth)

    def again(self, address: int, path: str) -> None:
        matlab_class, dims = self.seen[address]
        self.add(Entry(path, f"{matlab_class} (same as {self.first[address]})", dims, "", 0))

    def follow(self, address: int, reference: Any, path: str, depth: int) -> None:
        if address in self.seen:
            self.enter(address, path, depth + 1)  # raises for a cycle
            self.again(address, path)
            return
        self.walk(self.target(reference, path), path, depth + 1, address)

    def leaves(self, oid: Any, path: str, depth: int) -> tuple[str, tuple[int, ...] | None]:
        """List an object's leaves; return its class and size, for later references to it."""
        attributes, matlab_class = self.classified(oid, path)
        kind = self.kind(oid, path)
        if matlab_class not in _PLAIN_CLASSES or "MATLAB_object_decode" in attributes:
            dims = self.object_dims(oid, path) if kind == self.h5py.h5i.DATASET else None
            if matlab_class == "function_handle":
                dims = (1, 1)  # MATLAB has no arrays of function handles
            self.add(Entry(path, f"{matlab_class} (object)", dims, "", 0))
            return f"{matlab_class} (object)", dims
        if kind == self.h5py.h5i.GROUP:
            if matlab_class == "struct":
                return self.walk_struct(oid, attributes, path, depth)
            if "MATLAB_sparse" in attributes:
                return self.sparse_entry(oid, matlab_class, path)
            raise DLFormatError(
                f"{path!r} is an HDF5 group of class {matlab_class!r}, which MATLAB does not write"
            )
        if self.empty_flag(oid, attributes, path):
            dims = self.empty_dims(oid, path)
            if matlab_class == "struct" and len(dims) >= 2 and 0 not in dims and 1 < _count(dims):
                # structs without fields, written as an "empty" of their dimensions
                if not _fieldless(dims):
                    raise DLFormatError(f"variable {path!r} is marked empty but has dimensions {list(dims)}")
                for element in range(_count(dims)):
                    self.add(Entry(f"{path}({element + 1})", "struct", (1, 1), "", 0))
                return "struct", dims
            if matlab_class in ("cell", "struct"):
                self.add(Entry(path, matlab_class, dims, "", 0))
                return matlab_class, dims
            entry = _array_entry(path, matlab_class, dims, None)
            self.add(entry)
            return entry.matlab_class, dims
        if matlab_class == "struct":
            raise DLFormatError(f"{path!r} is a struct stored as a dataset, which MATLAB does not write")
        dims = _matlab_dims(oid.get_space().shape or ())
        if matlab_class == "cell":
            addresses, references = self.references(oid, path)
            flat_addresses = addresses.ravel(order="F")  # MATLAB's order: column-major
            for number, (address, reference) in enumerate(
                zip(flat_addresses, references.ravel(order="F"), strict=True), start=1
            ):
                self.follow(int(address), reference, f"{path}{{{number}}}", depth)
            if not flat_addresses.size:
                self.add(Entry(path, "cell", dims, "", 0))
            return "cell", dims
        entry = _array_entry(path, matlab_class, dims, oid.dtype)
        self.add(entry)
        return entry.matlab_class, dims

    def walk_struct(
        self, group: Any, attributes: set[str], path: str, depth: int
    ) -> tuple[str, tuple[int, ...]]:
        fields, children, is_array = self.struct_members(group, attributes, path)
        if not fields:
            self.add(Entry(path, "struct", (1, 1), "", 0))
        if not is_array:
            for field, child in zip(fields, children, strict=True):
                self.walk(child, f"{path}.{field}", depth + 1)
            return "struct", (1, 1)
        addresses, references, count = self.struct_columns(fields, children, path)
        for element in range(count):
            for field, targets, column in zip(fields, addresses, references, strict=True):
                self.follow(int(targets[element]), column[element], f"{path}({element + 1}).{field}", depth)
        return "struct", (1, count)

    def sparse_entry(self, group: Any, matlab_class: str, path: str) -> tuple[str, tuple[int, ...]]:
        rows = self.flag(group, "MATLAB_sparse", path)
        if not self.has(group, b"jc"):
            raise DLFormatError(f"sparse variable {path!r} has no column starts (jc)")
        columns = _count(self.open(group, "jc", f"{path}.jc").get_space().shape or (1,)) - 1
        nonzeros, complex_ = 0, False
        if self.has(group, b"data") and self.has(group, b"ir"):
            data = self.open(group, "data", f"{path}.data")
            nonzeros = _count(data.get_space().shape or (1,))
            complex_ = bool(data.dtype.names and set(data.dtype.names) >= {"real", "imag"})
        if rows < 0 or columns < 0:
            raise DLFormatError(f"sparse variable {path!r} has inconsistent indices")
        entry = sparse_entry(path, matlab_class == "logical", complex_, (rows, columns), nonzeros)
        self.add(entry)
        return entry.matlab_class, (rows, columns)

    def object_dims(self, dataset: Any, path: str) -> tuple[int, ...] | None:
        """An MCOS object's size from its reference's opening words (see ``_scan.reference_dims``)."""
        shape: tuple[int, ...] = tuple(dataset.get_space().shape or ())
        if len(shape) != 2 or min(shape) != 1 or dataset.dtype != np.uint32:
            return None
        self.check_chunks(dataset, path)
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
    """Elements of an array of these dimensions, exactly (HDF5 allows 2^64 - 1 in each)."""
    return math.prod(int(size) for size in dims)


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
                self.dataset(parent, name, _utf16(value).reshape(1, -1), "char", decode=2)
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
            rows = [_utf16(row) for row in value.ravel().tolist()]
            width = max((len(row) for row in rows), default=0)
            codes = np.full((len(rows), width), ord(" "), dtype=np.uint16)  # rows padded as ljust does
            for number, row in enumerate(rows):
                codes[number, : len(row)] = row
            self.dataset(parent, name, codes, "char", decode=2)
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


def _utf16(text: str) -> np.ndarray:
    """Text as MATLAB's char holds it: UTF-16 code units, a character beyond U+FFFF as a
    surrogate pair (``normalize`` has refused lone surrogates)."""
    return np.frombuffer(text.encode("utf-16-le"), dtype="<u2").astype(np.uint16)


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
    # no HDF5 file lock: savemat holds its own on the temporary file (see _atomic)
    with h5py.File(path, "w", userblock_size=512, libver="earliest", locking=False) as file:
        writer = _Writer(file)
        for name, value in variables.items():
            writer.write(file, name, value)
    with open(path, "r+b") as raw:
        raw.write(header())
