"""MAT-file versions 4, 6 and 7 through SciPy, converted to dlformat's value form."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.io
import scipy.sparse
from scipy.io.matlab import MatlabFunction, MatlabObject, MatlabOpaque, mat_struct

from .._errors import DLFormatError
from ._values import StructArray, linear_index, object_error

_OPTIONS = {"mat_dtype": True, "squeeze_me": False, "struct_as_record": False, "chars_as_strings": True}


def read(path: Path, names: Sequence[str]) -> dict[str, Any]:
    """Read ``names`` (already checked to be plain data) with SciPy and convert them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = scipy.io.loadmat(str(path), variable_names=list(names), **_OPTIONS)
    raw = None
    if any(issubclass(w.category, np.exceptions.ComplexWarning) for w in caught):
        # mat_dtype=True drops imaginary parts; the raw read keeps them
        raw = scipy.io.loadmat(str(path), variable_names=list(names), **(_OPTIONS | {"mat_dtype": False}))
    return {
        name: _convert(loaded[name], name, None if raw is None else raw[name])
        for name in names
        if name in loaded
    }


def _convert(value: Any, path: str, raw: Any) -> Any:
    if isinstance(value, (MatlabObject, MatlabFunction, MatlabOpaque)):
        class_name = getattr(value, "classname", None) or type(value).__name__.removeprefix("Matlab").lower()
        raise object_error(path, "function_handle" if isinstance(value, MatlabFunction) else class_name)
    if scipy.sparse.issparse(value):
        matrix = scipy.sparse.csc_matrix(value)
        return matrix.astype(bool) if matrix.dtype == np.uint8 else matrix
    if not isinstance(value, np.ndarray):
        raise DLFormatError(f"variable {path!r} holds a {type(value).__name__}, which dlformat cannot read")
    if value.dtype == object:
        if value.size and all(isinstance(item, mat_struct) for item in value.flat):
            if value.shape == (1, 1):
                return _struct(value[0, 0], path, None if raw is None else raw[0, 0])
            return [
                _struct(item, f"{path}({i})", raw_item)
                for i, (item, raw_item) in enumerate(_column_major(value, raw), start=1)
            ]
        cells = np.empty(value.shape, dtype=object)
        for index in np.ndindex(value.shape):
            cell_path = f"{path}{{{linear_index(index, value.shape)}}}"
            cells[index] = _convert(value[index], cell_path, None if raw is None else raw[index])
        return cells
    if value.dtype.kind == "U":
        if value.ndim == 1 and value.shape[0] <= 1:
            return str(value[0]) if value.size else ""
        return value
    if raw is not None and np.iscomplexobj(raw):
        return raw.astype(np.complex64 if value.dtype == np.float32 else np.complex128)
    if not value.dtype.isnative:
        value = value.astype(value.dtype.newbyteorder("="))
    return value


def _column_major(value: np.ndarray, raw: Any) -> list[tuple[Any, Any]]:
    flat = value.flatten(order="F")
    raw_flat = raw.flatten(order="F") if isinstance(raw, np.ndarray) else [None] * len(flat)
    return list(zip(flat, raw_flat, strict=True))


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
