"""dlformat's Python form of MATLAB values, shared by the readers, the writers and ``inspect``.

| MATLAB | Python |
|---|---|
| numeric array | ``np.ndarray``, MATLAB's shape (at least 2-D), native byte order |
| logical | ``np.ndarray`` of ``bool`` |
| char row (or empty char) | ``str`` |
| char matrix (several rows) | ``np.ndarray`` of ``str``, one entry per row |
| 1×1 struct | ``dict`` (field order kept) |
| any other struct array | ``list`` of ``dict`` in MATLAB's column-major order (shape not kept) |
| empty struct array | an empty cell (field names not kept) |
| cell array | ``np.ndarray`` of ``object``, MATLAB's shape |
| sparse | ``scipy.sparse.csc_matrix`` |
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse

from .._categorical import Categorical
from .._errors import DLFormatError

MAX_NAME_LENGTH = 63
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
NUMERIC_CLASSES = {
    "double": np.float64, "single": np.float32, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
    "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
}  # fmt: skip
CLASS_OF_DTYPE = {np.dtype(dtype): name for name, dtype in NUMERIC_CLASSES.items()}
CLASS_OF_DTYPE[np.dtype(np.bool_)] = "logical"
CLASS_OF_DTYPE[np.dtype(np.complex128)] = "double"
CLASS_OF_DTYPE[np.dtype(np.complex64)] = "single"
SAVE_INSTEAD = "save plain numeric arrays, structs and cells instead"


@dataclass(frozen=True)
class StructArray:
    """A struct array ready to write: field names and one dict per element (1×N)."""

    fields: tuple[str, ...]
    items: tuple[dict[str, Any], ...]


def check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or len(name) > MAX_NAME_LENGTH:
        raise DLFormatError(
            f"{what} {name!r} is not a valid MATLAB name: it must start with a letter, hold only "
            f"letters, digits and underscores, and have at most {MAX_NAME_LENGTH} characters "
            "(for arbitrary names such as layer names, use cells, as learnables files do)"
        )
    return name


def normalize(mapping: object, version: str = "7") -> dict[str, Any]:
    """Validate a mapping of variables for writing; return it in the writers' form.

    Numbers become 1×1 double (``bool`` 1×1 logical), 1-D arrays 1×N rows, torch tensors
    NumPy arrays, float16 and bfloat16 single (MATLAB has neither). Anything without a
    MATLAB equivalent is a :class:`DLFormatError` naming its path: so are a value that contains
    itself or nests deeper than a reader follows, text that is not valid UTF-16 (a lone
    surrogate), and, for version 7, a dimension or an array over 2^31 - 1.
    """
    if not isinstance(mapping, Mapping):
        raise DLFormatError(
            f"savemat needs a mapping of variable names to values; got {type(mapping).__name__}"
        )
    _check_nesting(mapping)
    variables = {check_name(name, "variable name"): _value(value, name) for name, value in mapping.items()}
    if version == "7":
        for name, value in variables.items():
            _check_version_7(value, name)
    return variables


MAX_NESTING = 100  # the levels of cells and structs that the readers follow (_scan.MAX_DEPTH)
MAX_VALUES = 10_000_000  # values a mapping may expand to, counting every repeat of a shared one


def _members(value: Any) -> list[tuple[str, Any]] | None:
    """The values a container holds as ``(path suffix, value)``, or None for a leaf; a list of
    dicts (a struct array) is one level, as in MATLAB."""
    if isinstance(value, Mapping):
        return [(f".{key}", item) for key, item in value.items()]
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        return [
            (f"({index}).{key}", member)
            for index, item in enumerate(value, start=1)
            for key, member in item.items()
        ]
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [
            (f"{{{number}}}", item) for number, item in enumerate(value.ravel(order="F").tolist(), start=1)
        ]
    return None


def _check_nesting(mapping: Mapping) -> None:
    """Refuse a value that contains itself, nests deeper than MAX_NESTING or shares containers so
    often that writing it would not end, before anything recurses into it."""
    levels: dict[int, tuple[int, int]] = {}  # id of a container checked -> (its levels, its values)
    inside: set[int] = set()

    def check(value: Any, path: str, depth: int) -> tuple[int, int]:
        members = _members(value)
        if members is None:
            return 0, 1
        key = id(value)
        if key in inside:
            raise DLFormatError(f"{path} contains itself (a reference cycle), which no MATLAB value can")
        if key not in levels:
            if depth > MAX_NESTING:
                raise DLFormatError(
                    f"{path} nests cells and structs more than {MAX_NESTING} levels deep, more than "
                    "dlformat (and most readers) follow"
                )
            inside.add(key)
            found = [check(member, path + suffix, depth + 1) for suffix, member in members]
            inside.discard(key)
            levels[key] = 1 + max((level for level, _ in found), default=0), 1 + sum(n for _, n in found)
        level, count = levels[key]
        if depth + level - 1 > MAX_NESTING:
            raise DLFormatError(
                f"{path} nests cells and structs more than {MAX_NESTING} levels deep, more than "
                "dlformat (and most readers) follow"
            )
        if count > MAX_VALUES:
            raise DLFormatError(
                f"{path} holds more than {MAX_VALUES} values counting each repeat of the containers "
                "it shares (MATLAB writes every repeat out in full)"
            )
        return level, count

    total = 0
    for name, value in mapping.items():
        total += check(value, str(name), 1)[1]
        if total > MAX_VALUES:
            raise DLFormatError(f"the variables hold more than {MAX_VALUES} values (up to {name})")


_V7_LIMIT = 2**31 - 1


def _check_version_7(value: Any, path: str) -> None:
    """Version 7 stores dimensions and byte counts as 32-bit numbers: refuse what overflows them."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_version_7(item, f"{path}.{key}")
        return
    if isinstance(value, StructArray):
        for index, item in enumerate(value.items, start=1):
            for key, member in item.items():
                _check_version_7(member, f"{path}({index}).{key}")
        return
    shape = (len(value),) if isinstance(value, str) else value.shape
    nbytes = (
        0
        if isinstance(value, str) or value.dtype == object
        else value.data.nbytes
        if scipy.sparse.issparse(value)
        else value.nbytes
    )
    if max(shape, default=0) > _V7_LIMIT or nbytes > _V7_LIMIT:
        what = "a dimension" if max(shape, default=0) > _V7_LIMIT else f"{nbytes} bytes"
        raise DLFormatError(
            f"{path} has {what} over 2^31 - 1 ({'×'.join(map(str, shape))}), more than version 7 "
            'holds; save it with version="7.3"'
        )
    if not isinstance(value, str) and not scipy.sparse.issparse(value) and value.dtype == object:
        for index in np.ndindex(value.shape):
            _check_version_7(value[index], f"{path}{{{linear_index(index, value.shape)}}}")


def _text(text: str, path: str) -> str:
    """Text MATLAB's UTF-16 char holds: a lone surrogate is no character and is refused."""
    try:
        text.encode("utf-16-le")
    except UnicodeEncodeError as error:
        raise DLFormatError(
            f"{path} holds a lone UTF-16 surrogate (U+{ord(text[error.start]):04X} at index "
            f"{error.start}), which is not a character: MATLAB keeps text as UTF-16, where it cannot "
            "be written as text (dlformat reads one as U+FFFD)"
        ) from None
    return text


def _value(value: Any, path: str) -> Any:
    if isinstance(value, str):
        return _text(value, path)
    if isinstance(value, (bool, np.bool_)):
        return np.array([[bool(value)]])
    if isinstance(value, (int, float, complex, np.number)):
        number = np.asarray(value)
        if number.dtype.kind in "iu" and isinstance(value, int):
            number = number.astype(np.float64)
        return _array(number, path)
    if isinstance(value, Mapping):
        return {
            check_name(key, f"field name at {path}"): _value(item, f"{path}.{key}")
            for key, item in value.items()
        }
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        fields = tuple(value[0])
        for index, item in enumerate(value, start=1):
            if tuple(item) != fields:
                raise DLFormatError(
                    f"{path}({index}) has fields {list(item)}, but {path}(1) has {list(fields)}; every "
                    "element of a struct array needs the same fields in the same order"
                )
        return StructArray(
            tuple(check_name(field, f"field name at {path}") for field in fields),
            tuple(
                {field: _value(item[field], f"{path}({index}).{field}") for field in fields}
                for index, item in enumerate(value, start=1)
            ),
        )
    if scipy.sparse.issparse(value):
        matrix = scipy.sparse.csc_matrix(value)
        if matrix.dtype.kind not in "bfc":
            matrix = matrix.astype(np.float64)
        return matrix
    if isinstance(value, Categorical):  # a MATLAB object: dlformat writes no objects
        raise DLFormatError(
            f"{path} is a categorical array, a MATLAB object, which dlformat's savemat cannot write (it "
            "writes no MATLAB objects); save its parts instead: categories(C) (a cell of names) and "
            "double(C) (category numbers from 1, NaN undefined), and rebuild it in MATLAB with "
            "categorical(numbers, 1:numel(names), names)"
        )
    if type(value).__module__.startswith("torch"):
        value = _from_torch(value, path)
    if isinstance(value, np.ndarray):
        return _array(value, path)
    raise DLFormatError(
        f"{path} is a {type(value).__name__}, which has no MATLAB form; {SAVE_INSTEAD} "
        "(NumPy arrays, torch tensors, numbers, str, dicts, lists of dicts and object arrays as cells)"
    )


def _from_torch(value: Any, path: str) -> np.ndarray:
    import torch

    if not isinstance(value, torch.Tensor):
        raise DLFormatError(f"{path} is a {type(value).__name__}, which has no MATLAB form; {SAVE_INSTEAD}")
    tensor = value.detach()
    if tensor.is_meta or tensor.layout != torch.strided or tensor.is_quantized:
        what = (
            "on the meta device"
            if tensor.is_meta
            else f"{tensor.layout}"
            if not tensor.is_quantized
            else "quantized"
        )
        raise DLFormatError(
            f"{path} is a torch tensor {what}, which holds no plain values to save; {SAVE_INSTEAD}"
        )
    tensor = tensor.cpu().resolve_conj().resolve_neg()
    if tensor.dtype in (torch.float16, torch.bfloat16):
        tensor = tensor.float()
    try:
        return tensor.numpy()
    except (TypeError, RuntimeError):
        raise DLFormatError(
            f"{path} has dtype {tensor.dtype}, which has no MATLAB class; use float64, float32, an "
            "integer type, bool, complex64 or complex128 (convert with .to(...))"
        ) from None


def _array(array: np.ndarray, path: str) -> Any:
    if array.dtype == object:
        cells = np.empty(array.shape if array.ndim >= 2 else (1, array.size), dtype=object)
        flat = array.reshape(cells.shape)
        for index in np.ndindex(cells.shape):
            cells[index] = _value(flat[index], f"{path}{{{linear_index(index, cells.shape)}}}")
        return cells
    if array.dtype.kind == "U":
        for row, text in enumerate(array.ravel().tolist(), start=1):
            _text(text, path if array.size == 1 else f"{path} (row {row})")
        return array if array.ndim else str(array)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype == np.float16:
        array = array.astype(np.float32)
    if array.dtype not in CLASS_OF_DTYPE:
        raise DLFormatError(
            f"{path} has dtype {array.dtype}, which has no MATLAB class; use float64, float32, an "
            "integer type, bool, complex64 or complex128"
        )
    if array.ndim < 2:
        array = array.reshape(1, -1) if array.ndim == 1 else array.reshape(1, 1)
    return array


def linear_index(index: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """MATLAB's 1-based linear (column-major) index."""
    return int(np.ravel_multi_index(index, shape, order="F")) + 1


def position_of(index: str, path: str) -> int:
    """The 0-based position a MATLAB index written in a path names (``"2"`` in ``c{2}`` is 1).

    MATLAB's indices start at 1; 0 and negative numbers are refused here, where Python would
    quietly count them from the end.
    """
    number = int(index)
    if number < 1:
        raise DLFormatError(
            f"{path} has index {number}; MATLAB indices start at 1, so an index must be an integer >= 1"
        )
    return number - 1


def check_wanted(path: object, wanted: list[str], names: list[str]) -> None:
    """Refuse variable names the file lacks, listing what it holds."""
    held = set(names)
    missing = [name for name in wanted if name not in held]
    if missing:
        raise DLFormatError(f"{path} has no variable(s) {missing}; it holds: {', '.join(names) or 'nothing'}")


class ObjectError(DLFormatError):
    """A MATLAB object where dlformat's own readers found one, in the top-level variable
    ``variable`` (``loadmat`` hands such variables to mat-io when it is installed)."""

    def __init__(self, message: str, variable: str) -> None:
        super().__init__(message)
        self.variable = variable


def object_error(path: str, class_name: str, variable: str | None = None) -> ObjectError:
    return ObjectError(
        f"variable {path!r} is a MATLAB object of class {class_name!r}, which dlformat cannot read; "
        f"{SAVE_INSTEAD} (for a dlnetwork, save net.Learnables with exportLearnables.m)",
        variable or re.split(r"[.({]", path, maxsplit=1)[0],
    )


@dataclass(frozen=True)
class Entry:
    """One leaf of a MAT-file variable, for listings: path, MATLAB class, size, dtype and bytes.

    ``shape`` is ``None`` where the file's headers cannot tell the size (a MATLAB object that
    keeps its size inside itself, such as a ``string`` array or a ``table``). ``dtype`` and
    ``nbytes`` describe the value as :func:`dlformat.io.loadmat` returns it (``""`` and 0 for
    objects and empty cells or structs; characters for char).
    """

    path: str
    matlab_class: str
    shape: tuple[int, ...] | None
    dtype: str
    nbytes: int
