"""MAT-file versions 4, 6 and 7 through SciPy's readers, converted to dlformat's value form.

Each variable is read on its own, from the offset the scan found: the work is linear in the
number of variables, a variable the caller did not ask for is never touched, and an error
names the variable it comes from.
"""

from __future__ import annotations

import codecs
import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO, TypeAlias

import numpy as np
import scipy.io
import scipy.sparse
from scipy.io.matlab import MatlabFunction, MatlabObject, MatlabOpaque, mat_struct
from scipy.io.matlab._mio4 import MatFile4Reader
from scipy.io.matlab._mio5 import MatFile5Reader

from .._errors import DLFormatError
from . import _direct
from ._scan import Variable
from ._values import NUMERIC_CLASSES, ObjectError, StructArray, check_wanted, object_error

_OPTIONS = {"squeeze_me": False, "chars_as_strings": True}

# MATLAB's char is UTF-16: SciPy decodes char data stored as uint16 with the codec it is given,
# one character per code unit (its default keeps each unit's low byte only). These codecs give
# each unit as its code point, lone surrogates included; _text then joins surrogate pairs and
# turns lone surrogates into U+FFFD.
_UNITS = {"dlformat_utf16le_units": "<u2", "dlformat_utf16be_units": ">u2"}


def _units_codec(name: str) -> codecs.CodecInfo | None:
    dtype = _UNITS.get(name)
    if dtype is None:
        return None
    encoding = "utf-16-le" if dtype[0] == "<" else "utf-16-be"

    def decode(data: Any, errors: str = "strict") -> tuple[str, int]:
        data = bytes(data)
        units = np.frombuffer(data[: len(data) // 2 * 2], dtype=dtype)
        return units.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass"), len(data)

    def encode(text: str, errors: str = "strict") -> tuple[bytes, int]:
        return text.encode(encoding, "surrogatepass"), len(text)

    return codecs.CodecInfo(encode, decode, name=name)


codecs.register(_units_codec)


def select(
    path: Path,
    variables: Sequence[Variable],
    wanted: list[str] | None,
    objects: list[ObjectError] | None = None,
) -> list[Variable]:
    """The variables ``wanted`` names (all when None), each checked to be one plain variable;
    with an ``objects`` list, the refusals of those holding MATLAB objects go there instead."""
    by_name: dict[str, list[Variable]] = {}
    for variable in variables:
        by_name.setdefault(variable.name, []).append(variable)
    wanted = list(by_name) if wanted is None else list(dict.fromkeys(wanted))
    check_wanted(path, wanted, list(by_name))
    chosen = []
    for name in wanted:
        found = by_name[name]
        if not name:
            raise DLFormatError(
                f"cannot read {path}: variable {found[0].number} has an empty name, which MATLAB "
                "cannot load; ask for the other variables by name"
            )
        if len(found) > 1:
            raise DLFormatError(
                f"cannot read {path}: it holds {len(found)} variables named {name!r} (variables "
                f"{', '.join(str(variable.number) for variable in found)}); dlformat will not choose one"
            )
        variable = found[0]
        if variable.is_object or variable.hidden_object is not None:
            path_, class_name = variable.hidden_object or (name, variable.matlab_class)
            error = object_error(path_, class_name, name)
            if objects is None:
                raise error
            objects.append(error)
            continue
        chosen.append(variable)
    return chosen


def read(path: Path, variables: Sequence[Variable], version: int) -> dict[str, Any]:
    """Read ``variables`` (from :func:`select`) and convert them."""
    loaded = {}
    with open(path, "rb") as file:
        readers = _Readers(file, version)
        for variable in variables:
            try:
                if variable.direct is not None and variable.direct.nbytes >= _direct.MIN_BYTES:
                    loaded[variable.name] = _direct.read(file, variable.direct, variable.name)
                else:
                    loaded[variable.name] = readers.read(variable)
            except DLFormatError:
                raise
            except MemoryError:
                raise DLFormatError(
                    f"cannot read {path}: variable {variable.name!r} declares {_declared(variable)}, "
                    "more memory than this process can allocate"
                ) from None
            except Exception as error:  # SciPy raises many types for broken files
                raise DLFormatError(
                    f"cannot read {path}: variable {variable.name!r} is malformed "
                    f"({type(error).__name__}: {error})"
                ) from None
    return loaded


def _declared(variable: Variable) -> str:
    dims = "×".join(map(str, variable.dims))
    dtype = NUMERIC_CLASSES.get(variable.matlab_class)
    if dtype is None:
        return f"a {dims} {variable.matlab_class}"
    nbytes = math.prod(variable.dims) * np.dtype(dtype).itemsize
    return f"a {dims} {variable.matlab_class} array ({nbytes} bytes)"


class _Readers:
    """SciPy's readers on one open file: one converting to MATLAB's classes (``mat_dtype``),
    and, made when first needed, one keeping stored types, whose complex values keep their
    imaginary parts (``mat_dtype`` drops them)."""

    def __init__(self, file: BinaryIO, version: int) -> None:
        self.file = file
        self.version = version
        self.classes = self._reader(mat_dtype=True)
        self.stored: Any = None

    def _reader(self, mat_dtype: bool) -> Any:
        if self.version == 4:
            reader = MatFile4Reader(self.file, mat_dtype=mat_dtype, **_OPTIONS)
        else:
            reader = MatFile5Reader(self.file, mat_dtype=mat_dtype, struct_as_record=False, **_OPTIONS)
            reader.uint16_codec = (
                "dlformat_utf16le_units" if reader.byte_order == "<" else "dlformat_utf16be_units"
            )
        reader.initialize_read()
        return reader

    def _one(self, reader: Any, offset: int) -> Any:
        self.file.seek(offset)
        header, _ = reader.read_var_header()
        return reader.read_var_array(header, process=True)

    def read(self, variable: Variable) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = self._one(self.classes, variable.offset)
        raw = None
        if any(issubclass(w.category, np.exceptions.ComplexWarning) for w in caught):
            if self.stored is None:
                self.stored = self._reader(mat_dtype=False)
            raw = self._one(self.stored, variable.offset)
        return _convert(value, variable.name, raw)


CellPath: TypeAlias = "str | tuple[CellPath, int]"
"""A value's path for messages: a path, or (a cell's path, an element's index), spelled only when
a message needs it (a cell may hold millions of elements)."""


def _spelled(path: CellPath) -> str:
    if isinstance(path, tuple):
        return f"{_spelled(path[0])}{{{path[1] + 1}}}"
    return path


def _convert(value: Any, path: CellPath, raw: Any) -> Any:
    if not isinstance(value, np.ndarray):
        if isinstance(value, (MatlabObject, MatlabFunction, MatlabOpaque)):
            class_name = (
                getattr(value, "classname", None) or type(value).__name__.removeprefix("Matlab").lower()
            )
            raise object_error(
                _spelled(path), "function_handle" if isinstance(value, MatlabFunction) else class_name
            )
        if scipy.sparse.issparse(value):
            return sparse(value, _spelled(path))
        raise DLFormatError(
            f"variable {_spelled(path)!r} holds a {type(value).__name__}, which dlformat cannot read"
        )
    if value.dtype == object:
        if not value.size:
            return np.empty(value.shape, dtype=object)
        flat = value.ravel(order="F")
        raw_flat = raw.ravel(order="F") if isinstance(raw, np.ndarray) else None
        if all(isinstance(item, mat_struct) for item in flat):
            if value.shape == (1, 1):
                return _struct(flat[0], _spelled(path), None if raw_flat is None else raw_flat[0])
            return [
                _struct(item, f"{_spelled(path)}({i})", None if raw_flat is None else raw_flat[i - 1])
                for i, item in enumerate(flat, start=1)
            ]
        cells = np.empty(flat.size, dtype=object)
        for i, item in enumerate(flat):
            cells[i] = _convert(item, (path, i), None if raw_flat is None else raw_flat[i])
        return np.ascontiguousarray(cells.reshape(value.shape, order="F"))
    if value.dtype.kind == "U":
        if value.ndim == 1 and value.shape[0] <= 1:
            return _text(str(value[0])) if value.size else ""
        if all(text.isascii() for text in value.ravel().tolist()):
            return value
        return np.array([_text(text) for text in value.ravel().tolist()]).reshape(value.shape)
    if raw is not None and np.iscomplexobj(raw):
        return raw.astype(np.complex64 if value.dtype == np.float32 else np.complex128, copy=False)
    if not value.dtype.isnative:
        value = value.byteswap(inplace=True).view(value.dtype.newbyteorder("="))
    return value


def _text(text: str) -> str:
    """MATLAB's UTF-16 code units as a Python string: surrogate pairs joined, lone surrogates
    (which no Unicode text may hold) replaced by U+FFFD, as the version 7.3 reader does."""
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def sparse(value: Any, path: str) -> scipy.sparse.csc_matrix:
    """A sparse matrix, its compressed-column indices checked first: SciPy builds it from the
    file's indices as they are, and indexing with them would read and write out of bounds."""
    if value.format == "csc":  # version 5; version 4's coordinates are checked by SciPy
        rows = value.shape[0]
        starts, indices = value.indptr, value.indices
        problem = None
        if starts.size and (starts[0] != 0 or starts[-1] != indices.size):
            problem = f"its column starts run from {starts[0]} to {starts[-1]}, not from 0 to {indices.size}"
        elif starts.size > 1 and bool((np.diff(starts) < 0).any()):
            problem = "its column starts decrease"
        elif indices.size and (int(indices.min()) < 0 or int(indices.max()) >= rows):
            wrong = int(indices.min()) if int(indices.min()) < 0 else int(indices.max())
            problem = f"it has row index {wrong}, outside its {rows} rows"
        if problem is not None:
            raise DLFormatError(f"sparse variable {path!r} is malformed: {problem}")
    matrix = scipy.sparse.csc_matrix(value)
    return matrix.astype(bool) if matrix.dtype == np.uint8 else matrix


def _struct(item: mat_struct, path: str, raw: Any) -> dict[str, Any]:
    return {
        field: _convert(getattr(item, field), f"{path}.{field}", None if raw is None else getattr(raw, field))
        for field in item._fieldnames
    }


def write(path: Path, variables: dict[str, Any]) -> None:
    """Write normalized variables as a compressed version 7 MAT-file (MATLAB's default)."""
    scipy.io.savemat(
        str(path),
        {name: _to_scipy(value) for name, value in variables.items()},
        format="5",
        do_compression=True,
        long_field_names=True,
        oned_as="row",
    )


def _to_scipy(value: Any) -> Any:
    if isinstance(value, dict):
        if not value:
            return {}  # SciPy writes an empty dict as a 1×1 struct with no fields
        record = np.empty((1, 1), dtype=[(field, object) for field in value])
        for field, item in value.items():
            record[0, 0][field] = _to_scipy(item)
        return record
    if isinstance(value, StructArray):
        records = np.empty((1, len(value.items)), dtype=[(field, object) for field in value.fields])
        for index, item in enumerate(value.items):
            for field in value.fields:
                records[0, index][field] = _to_scipy(item[field])
        return records
    if isinstance(value, np.ndarray) and value.dtype == object:
        cells = np.empty(value.shape, dtype=object)
        for index in np.ndindex(value.shape):
            cells[index] = _to_scipy(value[index])
        return cells
    if isinstance(value, str) and not value:
        return np.empty((0, 0), dtype="U1")
    return value
