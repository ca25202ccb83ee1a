"""A structural walk of MAT-file versions 4 to 7 that never allocates what a header claims.

Before SciPy reads a file, every element is checked against what the file can hold: an
uncompressed element must fit in the bytes left, a compressed one cannot expand beyond
deflate's maximum ratio, a cell or struct cannot have more elements than its bytes can
encode, and nesting is bounded. A file that passes has allocations bounded by its size.
The walk also names every top-level variable with its MATLAB class, which SciPy cannot do
for MATLAB objects (it reports them under the key ``'None'``), and, when asked, lists every
leaf of every variable from its headers alone (``dlformat inspect``, :func:`dlformat.io.whos`).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from .._errors import DLFormatError
from ._values import NUMERIC_CLASSES, Entry

# deflate cannot expand by more than about 1032:1; a little headroom for stream overhead
MAX_DEFLATE_RATIO = 1100
MAX_DEPTH = 100
_CHUNK = 1 << 20

MI_INT8, MI_UINT8, MI_INT16, MI_UINT16, MI_INT32, MI_UINT32 = 1, 2, 3, 4, 5, 6
MI_SINGLE, MI_DOUBLE, MI_INT64, MI_UINT64, MI_MATRIX, MI_COMPRESSED = 7, 9, 12, 13, 14, 15
MI_UTF8, MI_UTF16, MI_UTF32 = 16, 17, 18
_NUMERIC_TYPES = {
    MI_INT8: 1, MI_UINT8: 1, MI_INT16: 2, MI_UINT16: 2, MI_INT32: 4, MI_UINT32: 4,
    MI_SINGLE: 4, MI_DOUBLE: 8, MI_INT64: 8, MI_UINT64: 8, MI_UTF8: 1, MI_UTF16: 2, MI_UTF32: 4,
}  # fmt: skip

CLASS_NAMES = {
    1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse", 6: "double", 7: "single",
    8: "int8", 9: "uint8", 10: "int16", 11: "uint16", 12: "int32", 13: "uint32", 14: "int64",
    15: "uint64", 16: "function_handle", 17: "opaque",
}  # fmt: skip
OBJECT_CLASSES = {3, 16, 17}


# MATLAB class number -> (the data type that stores it without conversion, NumPy type code)
NATIVE_STORAGE = {
    6: (MI_DOUBLE, "f8"), 7: (MI_SINGLE, "f4"), 8: (MI_INT8, "i1"), 9: (MI_UINT8, "u1"),
    10: (MI_INT16, "i2"), 11: (MI_UINT16, "u2"), 12: (MI_INT32, "i4"), 13: (MI_UINT32, "u4"),
    14: (MI_INT64, "i8"), 15: (MI_UINT64, "u8"),
}  # fmt: skip


@dataclass(frozen=True)
class DirectRead:
    """Where a top-level real numeric array's values lie, stored in its own class.

    For such an array SciPy's result is exactly these bytes, reshaped; reading them straight
    into the array (inflating a compressed variable chunk by chunk) avoids holding the file's
    bytes and the array at once. ``offset`` is the values' file offset, or for a compressed
    variable the offset of its compressed data, in which the values start ``skip`` bytes
    into the inflated stream.
    """

    dtype: str  # NumPy dtype in the file's byte order, e.g. "<f4"
    dims: tuple[int, ...]
    nbytes: int
    offset: int
    compressed: int | None = None  # compressed bytes, or None for uncompressed values
    skip: int = 0


@dataclass(frozen=True)
class Variable:
    """A top-level variable as its header declares it."""

    name: str
    matlab_class: str  # "double", "cell", ..., or the class of an object ("string", "inline", ...)
    dims: tuple[int, ...]
    is_object: bool  # a MATLAB object, function handle or opaque class: no plain data
    direct: DirectRead | None = None  # set for real numeric arrays stored in their own class


def file_version(head: bytes) -> int:
    """4 for version 4, 5 for versions 6/7, 73 for 7.3 (HDF5), from a file's first 128 bytes."""
    if len(head) < 4:
        raise DLFormatError("not a MAT-file: it is shorter than any MAT-file header")
    if 0 in head[:4]:
        return 4
    if len(head) < 128:
        raise DLFormatError("not a MAT-file: the 128-byte header is cut short")
    version = head[124:126]
    if head[126:128] == b"IM":
        version = version[::-1]
    elif head[126:128] != b"MI":
        raise DLFormatError("not a MAT-file: its header lacks the MATLAB endian marker")
    if version == b"\x01\x00":
        return 5
    if version == b"\x02\x00":
        return 73
    raise DLFormatError(f"not a MAT-file of a known version (header version bytes {version.hex()})")


class _Source:
    """Sequential reads with a byte budget, over a file or a zlib stream."""

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining

    def _take(self, n: int) -> bytes:
        raise NotImplementedError

    def read(self, n: int, what: str) -> bytes:
        if n > self.remaining:
            raise DLFormatError(f"{what} declares {n} bytes but only {self.remaining} remain")
        data = self._take(n)
        if len(data) != n:
            raise DLFormatError(f"{what} is cut short: {len(data)} of {n} bytes present")
        self.remaining -= n
        return data

    def skip(self, n: int, what: str) -> None:
        while n:
            step = min(n, _CHUNK)
            self.read(step, what)
            n -= step


class _FileSource(_Source):
    def __init__(self, file: BinaryIO, remaining: int) -> None:
        super().__init__(remaining)
        self.file = file

    def _take(self, n: int) -> bytes:
        return self.file.read(n)

    def skip(self, n: int, what: str) -> None:
        if n > self.remaining:
            raise DLFormatError(f"{what} declares {n} bytes but only {self.remaining} remain")
        self.file.seek(n, 1)
        self.remaining -= n


class _ZlibSource(_Source):
    def __init__(self, file: BinaryIO, compressed: int) -> None:
        super().__init__(compressed * MAX_DEFLATE_RATIO + 64)
        self.file = file
        self.compressed_left = compressed
        self.inflater = zlib.decompressobj()
        self.pending = b""

    def _take(self, n: int) -> bytes:
        out = []
        got = 0
        while got < n:
            if not self.pending:
                if self.inflater.unconsumed_tail:
                    self.pending = self.inflater.unconsumed_tail
                elif self.compressed_left:
                    self.pending = self.file.read(min(_CHUNK, self.compressed_left))
                    self.compressed_left -= len(self.pending)
                    if not self.pending:
                        break
                else:
                    break
            try:
                chunk = self.inflater.decompress(self.pending, n - got)
            except zlib.error as error:
                raise DLFormatError(f"a compressed variable is corrupt ({error})") from None
            self.pending = self.inflater.unconsumed_tail
            if not chunk and not self.pending:
                if self.inflater.eof or not self.compressed_left:
                    break
            out.append(chunk)
            got += len(chunk)
        return b"".join(out)

    def finish(self) -> None:
        """Skip what is left of the compressed element in the file."""
        self.file.seek(self.compressed_left, 1)


class _Walker:
    def __init__(self, byte_order: str, listing: bool = False) -> None:
        self.order = byte_order
        self.position: Callable[[], int] = lambda: 0  # where the next byte of the current stream lies
        self.values_at: tuple[int, int] | None = None  # (stream position, data type) of top-level values
        # the leaves of the variable being walked, when listing (None: not listing)
        self.leaves: list[Entry] | None = [] if listing else None

    def tag(self, source: _Source, what: str) -> tuple[int, int, bytes | None]:
        """(type, nbytes, data if the small element format holds it)."""
        raw = source.read(8, what)
        first, second = struct.unpack(self.order + "II", raw)
        if first >> 16:
            nbytes, kind = first >> 16, first & 0xFFFF
            if nbytes > 4:
                raise DLFormatError(f"{what} has a small-format tag claiming {nbytes} bytes (at most 4)")
            return kind, nbytes, raw[4 : 4 + nbytes]
        return first, second, None

    def element(self, source: _Source, what: str, expect: set[int] | None = None) -> tuple[int, bytes]:
        kind, nbytes, small = self.tag(source, what)
        if expect is not None and kind not in expect:
            raise DLFormatError(f"{what} has data type {kind}, expected one of {sorted(expect)}")
        if small is not None:
            return kind, small
        data = source.read(nbytes, what)
        source.skip(-nbytes % 8, what)
        return kind, data

    def skip_element(self, source: _Source, what: str, final: bool = False) -> tuple[int, int]:
        kind, nbytes, small = self.tag(source, what)
        if small is None:
            if kind not in _NUMERIC_TYPES:
                raise DLFormatError(f"{what} has an unknown data type {kind}")
            padded = nbytes + (-nbytes % 8)
            if (
                final
                and isinstance(source, _Bounded)
                and source.trailing_data_unread
                and padded >= source.remaining
            ):
                if nbytes > source.remaining:
                    raise DLFormatError(f"{what} declares {nbytes} bytes but only {source.remaining} remain")
                source.remaining = 0  # the reader inflates these bytes once, itself
            else:
                source.skip(padded, what)
        return kind, nbytes

    def matrix(self, source: _Source, what: str, depth: int, path: str | None = None) -> Variable:
        """Walk one miMATRIX element (its tag already read) within ``source``.

        When listing, the leaves below ``path`` (a top-level variable: its own name) are
        recorded; ``path`` None below a top level means "not recorded" (an object's insides).
        """
        if depth > MAX_DEPTH:
            raise DLFormatError(f"{what} nests more than {MAX_DEPTH} levels deep")
        _, flags = self.element(source, f"{what} (array flags)", {MI_UINT32})
        if len(flags) < 8:
            raise DLFormatError(f"{what} has short array flags")
        word = struct.unpack(self.order + "I", flags[:4])[0]
        mclass, complex_, logical = word & 0xFF, bool(word & 0x0800), bool(word & 0x0200)
        if mclass not in CLASS_NAMES:
            raise DLFormatError(f"{what} has an unknown MATLAB class number {mclass}")
        if mclass == 17:
            return self.opaque(source, what, depth, path)
        _, dims_raw = self.element(source, f"{what} (dimensions)", {MI_INT32})
        dims = struct.unpack(f"{self.order}{len(dims_raw) // 4}i", dims_raw[: len(dims_raw) // 4 * 4])
        if len(dims) < 2 or any(d < 0 for d in dims):
            raise DLFormatError(f"{what} has invalid dimensions {list(dims)}")
        count = 1
        for d in dims:
            count *= d
        _, name_raw = self.element(source, f"{what} (name)", {MI_INT8, MI_UINT8})
        name = name_raw.decode("latin-1")
        if depth == 0 and self.leaves is not None:
            path = name
        label = f"{what} {name!r}" if name else what
        class_name = "logical" if logical else CLASS_NAMES[mclass]
        if mclass in (1, 2, 3):
            if mclass == 3:
                _, class_raw = self.element(source, f"{label} (class name)", {MI_INT8, MI_UINT8})
                class_name = class_raw.decode("latin-1")
                self.leaf(path, f"{class_name} (object)", tuple(dims))
            field_names = [""]
            if mclass in (2, 3):
                _, length_raw = self.element(source, f"{label} (field name length)", {MI_INT32})
                length = struct.unpack(self.order + "i", length_raw[:4])[0] if len(length_raw) >= 4 else 0
                _, names = self.element(source, f"{label} (field names)", {MI_INT8, MI_UINT8})
                if length <= 0 or len(names) % length:
                    if names:
                        raise DLFormatError(
                            f"{label} has field names that do not divide into length {length}"
                        )
                    field_names = []
                else:
                    field_names = [
                        names[start : start + length].split(b"\x00")[0].decode("latin-1")
                        for start in range(0, len(names), length)
                    ]
            fields = len(field_names)
            children = count * fields
            # every child is a miMATRIX of at least 8 (tag) + 16 (flags) + 16 (dims) + 8 (name) bytes
            if children * 48 > source.remaining:
                raise DLFormatError(
                    f"{label} declares {children} elements, more than its {source.remaining} bytes can hold"
                )
            if mclass != 3 and not children:
                # an empty cell or struct array, or structs without fields: listed as themselves
                if mclass == 2 and count > 1:
                    for element in range(count):
                        self.leaf(_element(path, element), "struct", (1, 1))
                else:
                    self.leaf(path, CLASS_NAMES[mclass], tuple(dims))
            for index in range(children):
                child = f"{label} element {index + 1}"
                kind, nbytes, _ = self.tag(source, child)
                if kind != MI_MATRIX:
                    raise DLFormatError(f"{child} is not a matrix (data type {kind})")
                inner = _Bounded(source, nbytes)
                if nbytes:
                    self.matrix(inner, child, depth + 1, _child(path, mclass, count, field_names, index))
                inner.close(child)
        elif mclass == 16:
            self.leaf(path, "function_handle (object)", tuple(dims))
            kind, nbytes, _ = self.tag(source, f"{label} (workspace)")
            source.skip(nbytes + (-nbytes % 8), f"{label} (workspace)")
        elif mclass == 5:
            parts = ("row indices", "column starts", "values") + (("imaginary values",) if complex_ else ())
            stored = {part: self.skip_element(source, f"{label} ({part})") for part in parts}
            kind, nbytes = stored["values"]
            nonzeros = nbytes // _NUMERIC_TYPES.get(kind, 1)
            self.leaf_sparse(path, logical, complex_, tuple(dims), nonzeros)
        else:
            parts = ("values", "imaginary values") if complex_ else ("values",)
            for part in parts:
                start = self.position()
                kind, nbytes = self.skip_element(source, f"{label} ({part})", final=part == parts[-1])
                if (
                    depth == 0
                    and not complex_
                    and not logical
                    and NATIVE_STORAGE.get(mclass, (0,))[0] == kind
                    and nbytes > 4  # larger values never sit in the tag's small format
                ):
                    self.values_at = (start + 8, kind)
                size = _NUMERIC_TYPES.get(kind, 1)
                if nbytes != count * size and not (mclass == 4 and kind in (MI_UTF8, MI_UTF16)):
                    raise DLFormatError(
                        f"{label} declares {count} elements ({'×'.join(map(str, dims))}) but holds "
                        f"{nbytes} bytes of {size}-byte values"
                    )
            self.leaf_array(path, class_name, complex_, tuple(dims))
        return Variable(name, class_name, tuple(dims), mclass in OBJECT_CLASSES)

    def opaque(self, source: _Source, what: str, depth: int, path: str | None) -> Variable:
        _, name_raw = self.element(source, f"{what} (name)", {MI_INT8, MI_UINT8})
        _, kind_raw = self.element(source, f"{what} (object type)", {MI_INT8, MI_UINT8})
        _, class_raw = self.element(source, f"{what} (class name)", {MI_INT8, MI_UINT8})
        name = name_raw.decode("latin-1")
        class_name = class_raw.decode("latin-1") or kind_raw.decode("latin-1")
        kind, nbytes, _ = self.tag(source, f"{what} (object data)")
        inner = _Bounded(source, nbytes)
        dims = None
        if self.leaves is not None and kind == MI_MATRIX and kind_raw == b"MCOS":
            dims = self.object_dims(inner, f"{what} (object data)")
        inner.close(f"{what} (object data)")
        source.skip(-nbytes % 8, f"{what} (object data)")
        if depth == 0 and self.leaves is not None:
            path = name
        self.leaf(path, f"{class_name} (object)", dims)
        return Variable(name, class_name, dims or (1, 1), True)

    def object_dims(self, source: _Source, what: str) -> tuple[int, ...] | None:
        """The size of an MCOS object array, from the few words that open its reference.

        MATLAB saves an MCOS value as a uint32 column: 0xDD000000, the number of dimensions,
        the dimensions, one object id per element, the class id. The dimensions are those of
        the array of objects. A class that keeps its own size inside one object (a ``string``
        array, a ``table``, a ``categorical``) is a single object, 1×1 here whatever its
        size; that size is known only to the object's saved state, so it is ``None``
        (unknown) whenever the reference holds one object.
        """
        try:
            _, flags = self.element(source, f"{what} (array flags)", {MI_UINT32})
            self.element(source, f"{what} (dimensions)", {MI_INT32})
            self.element(source, f"{what} (name)", {MI_INT8, MI_UINT8})
            kind, nbytes, small = self.tag(source, f"{what} (values)")
        except DLFormatError:
            return None  # not the layout described above: the size stays unknown
        if len(flags) < 4 or struct.unpack(self.order + "I", flags[:4])[0] & 0xFF != 13 or kind != MI_UINT32:
            return None
        words = small if small is not None else source.read(min(nbytes, 4 * (2 + MAX_OBJECT_DIMS)), what)
        values = struct.unpack(f"{self.order}{len(words) // 4}I", words[: len(words) // 4 * 4])
        return reference_dims(values)

    def leaf(self, path: str | None, matlab_class: str, dims: tuple[int, ...] | None) -> None:
        """Record a leaf without plain data: an object, or an empty cell or struct."""
        if self.leaves is not None and path is not None:
            self.leaves.append(Entry(path, matlab_class, dims, "", 0))

    def leaf_array(self, path: str | None, class_name: str, complex_: bool, dims: tuple[int, ...]) -> None:
        """Record a numeric, logical or char array as dlformat loads it (its class, not its storage)."""
        if self.leaves is None or path is None:
            return
        count = _count(dims)
        if class_name == "char":
            self.leaves.append(Entry(path, "char", dims, "str", count))
            return
        dtype = np.dtype(bool) if class_name == "logical" else np.dtype(NUMERIC_CLASSES[class_name])
        if complex_:
            dtype = np.result_type(dtype, np.complex64)
        suffix = " complex" if complex_ else ""
        self.leaves.append(Entry(path, class_name + suffix, dims, str(dtype), count * dtype.itemsize))

    def leaf_sparse(
        self, path: str | None, logical: bool, complex_: bool, dims: tuple[int, ...], nonzeros: int
    ) -> None:
        if self.leaves is not None and path is not None:
            self.leaves.append(sparse_entry(path, logical, complex_, dims, nonzeros))


def _count(dims: tuple[int, ...]) -> int:
    count = 1
    for size in dims:
        count *= size
    return count


def _element(path: str | None, index: int) -> str | None:
    return None if path is None else f"{path}({index + 1})"


def _child(path: str | None, mclass: int, count: int, fields: list[str], index: int) -> str | None:
    """The path of child ``index`` of a cell (mclass 1) or struct array, as MATLAB indexes it."""
    if path is None or mclass == 3:
        return None  # an old-style object's fields are its own business
    if mclass == 1:
        return f"{path}{{{index + 1}}}"
    element, field = divmod(index, len(fields))
    return f"{path}.{fields[field]}" if count == 1 else f"{path}({element + 1}).{fields[field]}"


MAX_OBJECT_DIMS = 32
_REFERENCE_MARK = 0xDD000000


def reference_dims(words: tuple[int, ...] | list[int]) -> tuple[int, ...] | None:
    """The object-array size that an MCOS reference's opening words give, or None (see object_dims)."""
    if len(words) < 4 or words[0] != _REFERENCE_MARK or not 2 <= words[1] <= MAX_OBJECT_DIMS:
        return None
    dims = tuple(int(size) for size in words[2 : 2 + words[1]])
    if len(dims) != words[1] or _count(dims) == 1:
        return None
    return dims


def sparse_entry(path: str, logical: bool, complex_: bool, dims: tuple[int, ...], nonzeros: int) -> Entry:
    """A sparse matrix as dlformat loads it: ``csc_matrix`` with 32-bit indices (SciPy's choice
    whenever they fit), so values, row indices and column starts make its bytes."""
    dtype = np.dtype(bool if logical else np.complex128 if complex_ else np.float64)
    columns = dims[1] if len(dims) > 1 else 1
    nbytes = nonzeros * (dtype.itemsize + 4) + (columns + 1) * 4
    return Entry(path, ("logical" if logical else "double") + " sparse", dims, str(dtype), nbytes)


class _Bounded(_Source):
    """A window of ``nbytes`` on another source; the rest is skipped on close.

    ``trailing_data_unread`` allows the final values of the window to be left unread: a
    top-level compressed variable need not be inflated twice when nothing follows its
    values (their size was already checked against the variable's dimensions).
    """

    def __init__(self, parent: _Source, nbytes: int, trailing_data_unread: bool = False) -> None:
        if nbytes > parent.remaining:
            raise DLFormatError(f"an element declares {nbytes} bytes but only {parent.remaining} remain")
        super().__init__(nbytes)
        self.parent = parent
        self.trailing_data_unread = trailing_data_unread

    def _take(self, n: int) -> bytes:
        return self.parent.read(n, "an element")

    def close(self, what: str) -> None:
        self.parent.skip(self.remaining, what)
        self.remaining = 0


def scan(file: BinaryIO, size: int, listing: list[Entry] | None = None) -> tuple[int, list[Variable]]:
    """Check a MAT-file's structure; return its version (4, 5 or 73) and top-level variables.

    With a ``listing`` list, every leaf of every variable is appended to it, as
    :func:`dlformat.io.whos` lists them, from the headers alone: no values are read, and a
    compressed variable is inflated only as far as its structure needs.
    Version 7.3 files are only identified here (h5py reads them).
    """
    file.seek(0)
    head = file.read(128)
    version = file_version(head)
    if version == 73:
        return 73, []
    if version == 4:
        return 4, _scan_v4(file, size, listing)
    order = "<" if head[126:128] == b"IM" else ">"
    walker = _Walker(order, listing is not None)
    variables: list[Variable] = []
    file.seek(128)
    source = _FileSource(file, size - 128)
    subsystem = struct.unpack(order + "Q", head[116:124])[0]
    while source.remaining >= 8:
        offset = size - source.remaining
        what = f"variable {len(variables) + 1}"
        kind, nbytes, small = walker.tag(source, what)
        walker.values_at = None
        if listing is not None:
            walker.leaves = []
        if kind == MI_COMPRESSED:
            if nbytes > source.remaining:
                raise DLFormatError(
                    f"{what} declares {nbytes} compressed bytes but only {source.remaining} remain"
                )
            inner_source = _ZlibSource(file, nbytes)
            data_offset, inflatable = file.tell(), inner_source.remaining
            walker.position = _inflated_position(inner_source, inflatable)
            inner_kind, inner_bytes, _ = walker.tag(inner_source, what)
            if inner_kind != MI_MATRIX:
                raise DLFormatError(f"{what} is not a matrix (data type {inner_kind})")
            if inner_bytes > nbytes * MAX_DEFLATE_RATIO:
                raise DLFormatError(
                    f"{what} declares {inner_bytes} bytes, more than {nbytes} compressed bytes can expand to"
                )
            bounded = _Bounded(inner_source, inner_bytes, trailing_data_unread=True)
            variable = walker.matrix(bounded, what, 0)
            inner_source.finish()
            source.remaining -= nbytes
            if walker.values_at is not None:
                variable = _with_direct(variable, walker, data_offset, nbytes)
        elif kind == MI_MATRIX and small is None:
            bounded = _Bounded(source, nbytes)
            walker.position = file.tell
            variable = walker.matrix(bounded, what, 0)
            if walker.values_at is not None:
                variable = _with_direct(variable, walker, walker.values_at[0], None)
            bounded.close(what)
            source.skip(-nbytes % 8, what)
        else:
            raise DLFormatError(f"{what} has data type {kind}; a variable must be a matrix")
        if offset != subsystem:  # the subsystem block holds object metadata, not a variable
            variables.append(variable)
            if listing is not None and walker.leaves is not None:
                listing.extend(walker.leaves)
    if source.remaining:
        raise DLFormatError(f"the file ends with {source.remaining} stray bytes after its last variable")
    return 5, variables


def _inflated_position(source: _ZlibSource, total: int) -> Callable[[], int]:
    """How far into its inflated stream ``source`` has read."""
    return lambda: total - source.remaining


def _with_direct(variable: Variable, walker: _Walker, offset: int, compressed: int | None) -> Variable:
    """``variable`` with the plan for reading its values straight into an array."""
    values_at, kind = walker.values_at  # type: ignore[misc]
    code = next(code for mi, code in NATIVE_STORAGE.values() if mi == kind)
    count = 1
    for size in variable.dims:
        count *= size
    plan = DirectRead(
        dtype=walker.order + code,
        dims=variable.dims,
        nbytes=count * _NUMERIC_TYPES[kind],
        offset=offset,
        compressed=compressed,
        skip=values_at if compressed is not None else 0,
    )
    return Variable(variable.name, variable.matlab_class, variable.dims, variable.is_object, plan)


_V4_SIZES = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}


def _scan_v4(file: BinaryIO, size: int, listing: list[Entry] | None = None) -> list[Variable]:
    file.seek(0)
    variables: list[Variable] = []
    position = 0
    while position < size:
        what = f"variable {len(variables) + 1}"
        header = file.read(20)
        if len(header) < 20:
            raise DLFormatError(f"{what} has a cut-short version 4 header")
        for order in "<>":
            mopt, rows, cols, imagf, namlen = struct.unpack(order + "5i", header)
            if 0 <= mopt < 5000:
                break
        else:
            raise DLFormatError(f"{what} has an invalid version 4 type code")
        precision, kind = (mopt // 10) % 10, mopt % 10
        if mopt // 1000 > 4 or (mopt // 100) % 10 != 0 or precision not in _V4_SIZES or kind > 2:
            raise DLFormatError(f"{what} has an unknown version 4 type code {mopt}")
        if rows < 0 or cols < 0 or namlen < 1 or imagf not in (0, 1):
            raise DLFormatError(
                f"{what} has an invalid version 4 header ({rows}×{cols}, name length {namlen})"
            )
        data = rows * cols * _V4_SIZES[precision] * (2 if imagf else 1)
        position += 20
        if namlen + data > size - position:
            raise DLFormatError(f"{what} declares {namlen + data} bytes but only {size - position} remain")
        name = file.read(namlen).rstrip(b"\x00").decode("latin-1")
        start = file.tell()
        matlab_class = "char" if kind == 1 else "sparse" if kind == 2 else "double"
        if listing is not None:
            listing.append(_v4_entry(file, name, kind, order, precision, rows, cols, bool(imagf)))
        file.seek(start + data)
        position += namlen + data
        variables.append(Variable(name, matlab_class, (rows, cols), False))
    return variables


_V4_CODES = {0: "f8", 1: "f4", 2: "i4", 3: "i2", 4: "u2", 5: "u1"}


def _v4_entry(
    file: BinaryIO, name: str, kind: int, order: str, precision: int, rows: int, cols: int, complex_: bool
) -> Entry:
    """A version 4 matrix as dlformat loads it: double (or char) of its stored size.

    A sparse matrix is stored as its nonzeros, one per row, and a last row holding its size;
    those two numbers are the only values read.
    """
    if kind == 1:
        return Entry(name, "char", (rows, cols), "str", rows * cols)
    if kind == 0:
        dtype = np.dtype(np.complex128 if complex_ else np.float64)
        suffix = " complex" if complex_ else ""
        return Entry(name, "double" + suffix, (rows, cols), str(dtype), rows * cols * dtype.itemsize)
    if rows < 1 or cols < 3:
        raise DLFormatError(f"sparse variable {name!r} is stored as {rows}×{cols}; it needs at least 1×3")
    code = np.dtype(order + _V4_CODES[precision])
    start = file.tell()
    sizes = []
    for column in (0, 1):  # the last row's first two columns: the number of rows and of columns
        file.seek(start + (column * rows + rows - 1) * code.itemsize)
        sizes.append(np.frombuffer(file.read(code.itemsize), dtype=code)[0])
    if not all(np.isfinite(size) and size >= 0 and size == int(size) for size in sizes):
        raise DLFormatError(f"sparse variable {name!r} has an invalid size {sizes}")
    return sparse_entry(name, False, cols > 3, (int(sizes[0]), int(sizes[1])), rows - 1)
