"""MATLAB .mat files in and out: versions 4, 6 and 7 through SciPy, 7.3 through h5py.

Values come back in MATLAB's shapes (never squeezed), native byte order, with MATLAB's
classes: integer-valued doubles stay float64 however MATLAB stored them. See
``docs/matlab_io.md`` for the Python form of each MATLAB type.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .._errors import DLFormatError, cut, reason
from . import _atomic, _matv5, _matv73, _mcos, _scan, _values
from ._learnables import load_learnables, save_learnables
from ._network import load_network

__all__ = ["load_learnables", "load_network", "loadmat", "save_learnables", "savemat", "whos"]

VERSIONS = ("7", "7.3")


def _open(path: str | os.PathLike[str]) -> tuple[Path, _scan.Scan, int]:
    """The file scanned (:func:`._scan.scan`), with its size."""
    path = Path(path)
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            scanned = _scan.scan(file, size)
    except OSError as error:
        raise DLFormatError(f"cannot read {path}: {error.strerror or error}") from None
    except DLFormatError as error:
        raise DLFormatError(f"cannot read {path}: {reason(error)}") from None
    return path, scanned, size


def loadmat(path: str | os.PathLike[str], variable_names: Iterable[str] | None = None) -> dict[str, Any]:
    """Load variables from a MAT-file of any version (4, 6, 7 or 7.3).

    Args:
        path: the file.
        variable_names: the variables to load (default: all). A name the file lacks is
            an error that lists what it holds.

    Returns:
        ``{name: value}`` in dlformat's form: numeric arrays in MATLAB's shape and class
        (integer-valued doubles stay float64), ``bool`` for logical, ``str`` for char
        rows, ``dict`` for a 1×1 struct, a list of dicts for a struct array, an object
        array for a cell, ``scipy.sparse.csc_matrix`` for sparse. With the
        ``dlformat[matlab]`` extra (mat-io), MATLAB objects too: ``string``,
        ``categorical``, ``table``, ``datetime``, ``containers.Map``, function handles,
        classdef objects, and saved networks as plain descriptions (docs/matlab_io.md,
        "MATLAB objects").

    Raises:
        DLFormatError: for a missing, broken or hostile file, and, without mat-io, for
            MATLAB objects, naming the variable, its class and the install command. A file
            is checked against its own size before anything it declares is allocated,
            objects and their subsystem block included.
    """
    wanted = None if variable_names is None else list(variable_names)
    if wanted is not None:
        for name in wanted:
            if not isinstance(name, str):
                raise DLFormatError(f"variable_names must be strings; got {cut(name)!r}")
    return _read(*_open(path), wanted)


def _read(path: Path, scanned: _scan.Scan, size: int, wanted: list[str] | None) -> dict[str, Any]:
    """:func:`loadmat` of a file already scanned (:func:`_open`)."""
    version, variables = scanned.version, scanned.variables
    objects: list[_values.ObjectError] = []
    with _reader_errors(path, "HDF5 file" if version == 73 else "file"):
        if version == 73:
            loaded = _matv73.read(path, wanted, size, objects)
        else:
            loaded = _matv5.read(path, _matv5.select(path, variables, wanted, objects), version)
        if not objects:
            return loaded
        decoded = _objects(path, scanned, objects, size)
        # the file's order (or the caller's), objects in their places
        order = [error.variable for error in objects] + list(loaded)
        if wanted is not None:
            order = list(dict.fromkeys(wanted))
        elif version != 73:
            order = [variable.name for variable in variables]
        return {name: decoded[name] if name in decoded else loaded[name] for name in order}


def _objects(path: Path, scanned: _scan.Scan, found: list[_values.ObjectError], size: int) -> dict[str, Any]:
    """Variables holding MATLAB objects (``found``: the reader's refusal of each), through mat-io,
    after those variables' objects and the subsystem block pass the structural checks; in
    dlformat's forms (networks as :class:`~dlformat.io._mcos.SavedNetwork` descriptions)."""
    try:
        _mcos.matio(path)
    except DLFormatError:
        raise DLFormatError(f"{found[0]}; or decode MATLAB objects with mat-io, {_mcos.INSTALL}") from None
    names = [error.variable for error in found]
    subsystem = None
    if scanned.version == 73:
        _matv73.check_objects(path, size)
    else:  # the subsystem is inflated once, here, and mat-io decodes those bytes
        holding = [variable for variable in scanned.variables if variable.name in names]
        with open(path, "rb") as file:
            subsystem = _scan.check_objects(file, size, scanned, holding)
    values = _mcos.read(path, scanned.version, names, subsystem)
    return {name: _mcos.plain(values[name], name) for name in names}


@contextlib.contextmanager
def _reader_errors(path: Path, kind: str) -> Iterator[None]:
    """A reader's failures as one-line errors: out of memory, or whatever SciPy and h5py raise for
    a broken file (they raise many types); dlformat's own errors pass unchanged."""
    try:
        yield
    except DLFormatError:
        raise
    except MemoryError:
        raise DLFormatError(
            f"cannot read {path}: it needs more memory than this process can allocate"
        ) from None
    except Exception as error:
        raise DLFormatError(
            f"cannot read {path}: the {kind} is malformed ({type(error).__name__}: {reason(error)})"
        ) from None


def savemat(path: str | os.PathLike[str], mapping: dict[str, Any], version: str = "7") -> None:
    """Write variables to a MAT-file that MATLAB loads.

    Args:
        path: the file (replaced atomically: a failed write leaves no partial file; a symbolic
            link is written through, and the file keeps its permissions, as ``open`` would).
        mapping: ``{name: value}`` in dlformat's form; also torch tensors (float16 and
            bfloat16 become single), numbers (1×1 double) and 1-D arrays (1×N rows).
        version: ``"7"`` (compressed, MATLAB's default; SciPy) or ``"7.3"`` (HDF5, for
            variables over 2 GB; needs h5py).

    Raises:
        DLFormatError: for a value with no MATLAB form or a name MATLAB cannot hold, naming
            its path, before anything is written.
    """
    version = str(version).removeprefix("-v").removeprefix("v")
    if version not in VERSIONS:
        raise DLFormatError(f'version must be "7" or "7.3"; got {version!r}')
    variables = _values.normalize(mapping, version)
    writer = _matv5.write if version == "7" else _matv73.write
    _atomic.replace(path, lambda temporary: writer(temporary, variables))


def whos(path: str | os.PathLike[str]) -> list[_values.Entry]:
    """What a MAT-file holds, as MATLAB's ``whos('-file', path)`` tells, one entry per leaf.

    Each entry has ``path`` (struct fields and 1-based cell indices spelled out:
    ``s.layers.posemb.Weights``, ``c{2}``), ``matlab_class``, ``shape``, ``dtype`` and
    ``nbytes`` (of the value as :func:`loadmat` returns it). Only headers are read, never the
    values: listing a file costs the same whatever the size of its arrays. MATLAB objects are
    listed by name and class without their contents; an object's ``shape`` is ``None`` where
    only its saved state knows it (a ``string`` array, a ``table``). ``dlformat inspect``
    prints this table.
    """
    path = Path(path)
    listing: list[_values.Entry] = []
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            version = _scan.scan(file, size, listing).version
    except OSError as error:
        raise DLFormatError(f"cannot read {path}: {error.strerror or error}") from None
    except DLFormatError as error:
        raise DLFormatError(f"cannot read {path}: {reason(error)}") from None
    if version != 73:
        return listing
    with _reader_errors(path, "HDF5 file"):
        return _matv73.listing(path, size)
