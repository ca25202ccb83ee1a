"""A structural walk of MAT-file versions 4 to 7 that never allocates what a header claims.

Before SciPy reads a file, every element is checked against what the file can hold and against
what SciPy's reader will do with it:

- an uncompressed element must fit in the bytes left; a compressed variable is one zlib stream
  that must inflate to exactly the bytes its inner element declares, ending where the
  element ends (no second stream, no trailing bytes), and it cannot declare more than deflate's
  maximum ratio of its compressed size;
- every data element's type must be one its context allows (numeric types for numeric values,
  integers for sparse indices, text types for char, ``miINT8``/``miUTF8`` for names), in the
  small format as in the full one: SciPy looks types up in a table without checking them;
- every array's declared size matches its contents exactly: a cell or struct cannot declare
  more elements than its bytes can encode, numeric values match the dimensions, and a
  nested element's contents fill exactly the bytes it declares (SciPy reads nested elements
  back to back, trusting their contents, not their sizes);
- elements that take no bytes (the elements of a struct array with no fields, char data
  stored as zero bytes) are counted against a budget that grows with the file's size;
- nesting is bounded, and MATLAB objects (classdef and old-style objects, function handles,
  opaque classes) are refused wherever they sit, without reading their contents, except in
  the variables mat-io is to decode (:func:`check_objects`): there every object's data is
  walked as any other element, each MCOS reference must declare exactly as many objects as it
  lists, and the subsystem block (where MATLAB keeps the objects' state, a MAT-file stream of its own
  inside a uint8 variable) is walked by the same rules.

The walk also names every top-level variable with its MATLAB class, which SciPy cannot do for
MATLAB objects, records where each variable starts (the reader goes straight there), and, when
asked, lists every leaf of every variable from its headers alone (``dlformat inspect``,
:func:`dlformat.io.whos`). Its cost is linear in the number of elements: headers are parsed
from a buffer, a few microseconds each.
"""

from __future__ import annotations

import functools
import struct
import zlib
from dataclasses import dataclass, replace
from typing import Any, BinaryIO, TypeAlias, cast

import numpy as np

from .._errors import DLFormatError
from . import _direct
from ._values import NUMERIC_CLASSES, Entry

# deflate cannot expand by more than about 1032:1; a little headroom for stream overhead
MAX_DEFLATE_RATIO = 1100
MAX_DEPTH = 100
MAX_DIMS = 32  # SciPy's limit (NumPy's, when it was written)
FREE_ELEMENTS = 1 << 16
FREE_ELEMENTS_PER_BYTE = 4
"""Elements stored in no bytes (struct-array elements without fields, characters of empty char
data) cost memory when loaded but nothing in the file: a file may declare ``FREE_ELEMENTS`` of
them plus ``FREE_ELEMENTS_PER_BYTE`` per byte of its size."""
V4_SPARSE_COLUMNS = 1 << 20
V4_SPARSE_COLUMNS_PER_BYTE = 256
"""A version 4 sparse matrix stores its size as two numbers, so nothing in the file bounds its
column count, which a compressed-column matrix allocates: at most this many, plus so many per
byte of the file."""
_READ_AHEAD = 1 << 16
_HEADER_READ_AHEAD = 1 << 9

MI_INT8, MI_UINT8, MI_INT16, MI_UINT16, MI_INT32, MI_UINT32 = 1, 2, 3, 4, 5, 6
MI_SINGLE, MI_DOUBLE, MI_INT64, MI_UINT64, MI_MATRIX, MI_COMPRESSED = 7, 9, 12, 13, 14, 15
MI_UTF8, MI_UTF16, MI_UTF32 = 16, 17, 18
_NUMERIC_TYPES = {
    MI_INT8: 1, MI_UINT8: 1, MI_INT16: 2, MI_UINT16: 2, MI_INT32: 4, MI_UINT32: 4,
    MI_SINGLE: 4, MI_DOUBLE: 8, MI_INT64: 8, MI_UINT64: 8, MI_UTF8: 1, MI_UTF16: 2, MI_UTF32: 4,
}  # fmt: skip
# what each kind of data element may be stored as (SciPy's reader trusts the type it finds)
_NUMBERS = frozenset({MI_INT8, MI_UINT8, MI_INT16, MI_UINT16, MI_INT32, MI_UINT32, MI_SINGLE, MI_DOUBLE,
                      MI_INT64, MI_UINT64})  # fmt: skip
_INTEGERS = frozenset({MI_INT8, MI_UINT8, MI_INT16, MI_UINT16, MI_INT32, MI_UINT32, MI_INT64, MI_UINT64})
_TEXT = frozenset({MI_INT8, MI_UINT8, MI_UINT16, MI_UTF8, MI_UTF16, MI_UTF32})
_NAME = frozenset({MI_INT8, MI_UTF8})  # variable, field and class names (SciPy: read_int8_string)
_FLAGS = frozenset({MI_UINT32})
_OBJECT_DATA = _NUMBERS | _TEXT | {MI_MATRIX}  # what a saved object's state may be stored as
_DIMS = frozenset({MI_INT32})

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
class Variable:
    """A top-level variable as its header declares it."""

    name: str
    matlab_class: str  # "double", "cell", ..., or the class of an object ("string", "inline", ...)
    dims: tuple[int, ...]
    is_object: bool  # a MATLAB object, function handle or opaque class: no plain data
    direct: _direct.DirectRead | None = None  # real numeric arrays stored in their own class
    offset: int = 0  # where its element starts in the file
    hidden_object: tuple[str, str] | None = None  # (path, class) of an object somewhere inside it
    number: int = 0  # 1-based position in the file


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


Where: TypeAlias = "str | tuple[Where, int]"


class _CutShortError(Exception):
    """A stream ended before the bytes its elements declare (turned into a DLFormatError)."""


class _Stream:
    """One top-level variable's bytes, read through a buffer.

    ``base`` is the stream position of ``buf[0]``; ``at`` indexes the next byte in ``buf``. The
    walker checks every read against the sizes declared around it before asking for bytes.
    """

    def __init__(self, base: int) -> None:
        self.buf = b""
        self.at = 0
        self.base = base
        self.read_ahead = _READ_AHEAD  # the most bytes fetched (inflated) beyond what is asked

    def _next(self, limit: int) -> bytes:
        """Up to ``limit`` further bytes, at least one unless the stream has ended."""
        raise NotImplementedError

    def ensure(self, n: int) -> None:
        """Make ``buf[at:at + n]`` hold the next ``n`` bytes."""
        have = len(self.buf) - self.at
        if have >= n:
            return
        parts = [self.buf[self.at :]]
        self.base += self.at
        self.at = 0
        while have < n:
            chunk = self._next(max(n - have, self.read_ahead))
            if not chunk:
                raise _CutShortError
            parts.append(chunk)
            have += len(chunk)
        self.buf = b"".join(parts)

    def skip(self, n: int) -> None:
        have = len(self.buf) - self.at
        if n <= have:
            self.at += n
            return
        self.base += len(self.buf)
        self.buf, self.at = b"", 0
        self._drop(n - have)

    def _drop(self, n: int) -> None:
        while n:
            chunk = self._next(min(n, _READ_AHEAD * 16))
            if not chunk:
                raise _CutShortError
            n -= len(chunk)
            self.base += len(chunk)


class _FileStream(_Stream):
    """An uncompressed variable: positions are file offsets; skipped bytes are never read."""

    def __init__(self, file: BinaryIO, offset: int, end: int) -> None:
        super().__init__(offset)
        self.file = file
        self.next_offset = offset
        self.end = end

    def _next(self, limit: int) -> bytes:
        self.file.seek(self.next_offset)
        data = self.file.read(min(limit, self.end - self.next_offset))
        self.next_offset += len(data)
        return data

    def _drop(self, n: int) -> None:
        if self.next_offset + n > self.end:
            raise _CutShortError
        self.next_offset += n
        self.base += n


class _ZlibStream(_Stream):
    """A compressed variable: positions count inflated bytes. The element must hold one zlib
    stream and nothing after it."""

    def __init__(self, file: BinaryIO, offset: int, compressed: int, what: str) -> None:
        super().__init__(0)
        self.file = file
        self.next_offset = offset
        self.left = compressed
        self.what = what
        self.inflater = zlib.decompressobj()
        self.pending = b""

    def _next(self, limit: int) -> bytes:
        while True:
            if self.inflater.eof:
                return b""
            if not self.pending:
                if not self.left:
                    return b""  # the zlib stream is cut short: the caller says so
                self.file.seek(self.next_offset)
                self.pending = self.file.read(min(self.left, _READ_AHEAD))
                if not self.pending:
                    return b""
                self.next_offset += len(self.pending)
                self.left -= len(self.pending)
            try:
                out = self.inflater.decompress(self.pending, limit)
            except zlib.error as error:
                raise DLFormatError(f"{self.what}: its compressed data is corrupt ({error})") from None
            self.pending = self.inflater.unconsumed_tail
            if self.inflater.eof and (self.inflater.unused_data or self.pending or self.left):
                raise DLFormatError(
                    f"{self.what}: its compressed element goes on after the end of its zlib stream "
                    "(a second stream or trailing bytes)"
                )
            if out:
                return out

    def finish(self, end: int) -> None:
        """Check that the stream ends exactly at inflated position ``end`` (the walk is there)."""
        if self.base + self.at != end or self.at != len(self.buf) or self._next(1):
            raise DLFormatError(
                f"{self.what}: its compressed data inflates to more than the {end} bytes its element declares"
            )
        if not self.inflater.eof:
            raise DLFormatError(f"{self.what}: its compressed data ends before the end of its zlib stream")


class _HiddenObjectError(Exception):
    """A MATLAB object below the top level of a variable being checked for loading."""

    def __init__(self, class_name: str) -> None:
        super().__init__(class_name)
        self.class_name = class_name
        self.steps: list[tuple[int, int, list[str], int]] = []  # (mclass, count, fields, index), inner first

    def path(self, name: str) -> str:
        path = name
        for mclass, count, fields, index in reversed(self.steps):
            path = _child(path, mclass, count, fields, index) or path
        return path


class _Walker:
    def __init__(self, byte_order: str, listing: bool, free_elements: int, objects: bool = False) -> None:
        self.order = byte_order
        self.objects = objects  # walk objects' data (mat-io decodes it) instead of refusing them
        # inside an object's data or the subsystem block, where mat-io takes uint32 columns that
        # open with the MCOS mark for object references (never in plain variables)
        self.in_objects = False
        self.pair = struct.Struct(byte_order + "II")
        self.header = struct.Struct(byte_order + "6I")  # flags tag, flags, dimensions tag
        self.two = struct.Struct(byte_order + "2i")
        self.word = struct.Struct(byte_order + "I")
        self.listing = listing
        self.free_elements = free_elements
        self.stream: _Stream = _Stream(0)
        # leave the last values of the variable being walked unread: -1 for every top-level array
        # (listing), 1 for arrays the direct reader reads itself (loading a compressed variable), 0 never
        self.lazy = 0
        self.tail_unread = False
        self.values_at: tuple[int, int] | None = None  # (stream position, data type) of top-level values
        self.top: tuple[str, str, tuple[int, ...]] = ("", "", ())  # name, class, dims of the variable
        # the leaves of the variable being walked, when listing (None: not listing)
        self.leaves: list[Entry] | None = [] if listing else None

    def tag(self, end: int, what: Where, part: str, allowed: frozenset[int]) -> tuple[int, int, int]:
        """A data element's checked tag: (type, byte count, padded bytes after the tag; -1 for the
        4-byte small format, whose data sits in the tag). The stream stays at the tag."""
        s = self.stream
        position = s.base + s.at
        if end - position < 8:
            raise DLFormatError(
                f"{_where(what)} ({part}) needs an 8-byte tag but only {end - position} bytes remain"
            )
        s.ensure(8)
        first, nbytes = self.pair.unpack_from(s.buf, s.at)
        if first >> 16:
            kind, nbytes = first & 0xFFFF, first >> 16
            if nbytes > 4:
                raise DLFormatError(
                    f"{_where(what)} ({part}) has a small-format tag claiming {nbytes} bytes (at most 4)"
                )
            if kind not in allowed:
                raise _wrong_type(what, part, kind, allowed)
            return kind, nbytes, -1
        if first not in allowed:
            raise _wrong_type(what, part, first, allowed)
        padded = nbytes + (-nbytes % 8)
        if padded > end - position - 8:
            raise DLFormatError(
                f"{_where(what)} ({part}) declares {nbytes} bytes but only {end - position - 8} remain"
            )
        return first, nbytes, padded

    def read(self, end: int, what: Where, part: str, allowed: frozenset[int]) -> tuple[int, bytes]:
        """A data element's type and bytes (small format or full), its padding skipped."""
        s = self.stream
        kind, nbytes, padded = self.tag(end, what, part, allowed)
        if padded < 0:
            data = s.buf[s.at + 4 : s.at + 4 + nbytes]
            s.at += 8
            return kind, data
        s.ensure(8 + padded)
        data = s.buf[s.at + 8 : s.at + 8 + nbytes]
        s.at += 8 + padded
        return kind, data

    def values(
        self, end: int, what: Where, part: str, allowed: frozenset[int], lazy_kind: int = 0
    ) -> tuple[int, int]:
        """Skip a data element of values; return its type and byte count.

        Values that end the variable are left unread (``tail_unread``) when ``lazy_kind`` is -1
        (listing: their size has been checked against the dimensions), or when it is their data
        type and they are large enough for the direct reader, which inflates and checks them."""
        s = self.stream
        position = s.base + s.at
        first, nbytes, padded = self.tag(end, what, part, allowed)
        if padded < 0:
            s.at += 8
            return first, nbytes
        if (
            lazy_kind
            and (lazy_kind < 0 or (first == lazy_kind and nbytes >= _direct.MIN_BYTES))
            and position + 8 + padded == end
        ):
            self.tail_unread = True
            s.at += 8
            return first, nbytes
        s.skip(8 + padded)
        return first, nbytes

    def variable(self, end: int, what: str) -> Variable:
        """Walk a top-level miMATRIX element's contents (see :meth:`matrix`)."""
        return cast(Variable, self.matrix(end, what, 0))

    def matrix(self, end: int, what: Where, depth: int, path: str | None = None) -> Variable | None:
        """Walk one miMATRIX element's contents (its tag already read), which end at ``end``;
        return the variable at the top level (``depth`` 0).

        When listing, the leaves below ``path`` (a top-level variable: its own name) are
        recorded; ``path`` None below a top level means "not recorded" (an object's insides).
        When loading, an object below the top level raises ``_HiddenObjectError``.
        """
        if depth > MAX_DEPTH:
            raise DLFormatError(f"{_where(what)} nests more than {MAX_DEPTH} levels deep")
        s = self.stream
        dims: tuple[int, ...] | None = None
        if end - s.base - s.at >= 40:  # the common layout, parsed at once: flags, then two dimensions
            s.ensure(40)
            a, b, word, _, c, d = self.header.unpack_from(s.buf, s.at)
            if a == MI_UINT32 and b == 8 and c == MI_INT32 and d == 8 and word & 0xFF != 17:
                dims = self.two.unpack_from(s.buf, s.at + 24)
                s.at += 32
        if dims is None:
            _, flags = self.read(end, what, "array flags", _FLAGS)
            if len(flags) != 8:
                raise DLFormatError(f"{_where(what)} has {len(flags)} bytes of array flags; they must be 8")
            word = self.word.unpack_from(flags)[0]
        mclass, complex_, logical = word & 0xFF, bool(word & 0x0800), bool(word & 0x0200)
        if mclass not in CLASS_NAMES:
            raise DLFormatError(f"{_where(what)} has an unknown MATLAB class number {mclass}")
        if mclass == 17:
            return self.opaque(end, _where(what), depth, path)
        if dims is None:
            _, dims_raw = self.read(end, what, "dimensions", _DIMS)
            if len(dims_raw) % 4 or not 2 <= len(dims_raw) // 4 <= MAX_DIMS:
                raise DLFormatError(
                    f"{_where(what)} has {len(dims_raw)} bytes of dimensions (2 to {MAX_DIMS} int32)"
                )
            dims = struct.unpack(f"{self.order}{len(dims_raw) // 4}i", dims_raw)
        if min(dims) < 0:
            raise DLFormatError(f"{_where(what)} has invalid dimensions {list(dims)}")
        count = 1
        for d in dims:
            count *= d
        first, second = self.pair.unpack_from(s.buf, s.at) if len(s.buf) - s.at >= 8 else (0, 1)
        if first >> 16 and first & 0xFFFF in _NAME and first >> 16 <= 4 and end - s.base - s.at >= 8:
            name_raw = s.buf[s.at + 4 : s.at + 4 + (first >> 16)]  # a short name, in the small format
            s.at += 8
        elif first in _NAME and not second and end - s.base - s.at >= 8:
            name_raw = b""  # no name (a cell's or a struct's element)
            s.at += 8
        else:
            name_raw = self.read(end, what, "name", _NAME)[1]
        name = name_raw.decode("latin-1") if name_raw else ""
        if depth == 0:
            self.top = (name, CLASS_NAMES[mclass], dims)
            if self.leaves is not None:
                path = name
        class_name = (
            "logical" if logical and (mclass in NATIVE_STORAGE or mclass == 5) else CLASS_NAMES[mclass]
        )
        if mclass in OBJECT_CLASSES and not self.listing and not self.objects:
            if mclass == 3:
                class_name = self.read(end, what, "class name", _NAME)[1].decode("latin-1")
            if depth:
                raise _HiddenObjectError(class_name)
            return Variable(name, class_name, dims, True)
        if mclass in (1, 2, 3):
            if count or mclass != 1:
                class_name = (
                    self.containers(end, _where(what, name), depth, path, mclass, dims, count) or class_name
                )
            elif self.leaves is not None:
                self.leaf(path, "cell", dims)
        elif mclass == 16:
            self.leaf(path, "function_handle (object)", dims)
            if self.objects and end == s.base + s.at:
                # no workspace: mat-io makes an empty cell of the declared size instead
                self.charge(count, _where(what, name), "elements of a function handle without contents")
            elif self.objects:
                self.nested(end, _where(what, name), "workspace", depth)
            else:
                self.values(end, _where(what, name), "workspace", frozenset({MI_MATRIX}))
        elif mclass == 5:
            label = _where(what, name)
            if len(dims) != 2:
                raise DLFormatError(f"{label} is a sparse matrix of {len(dims)} dimensions; it must have 2")
            self.values(end, label, "row indices", _INTEGERS)
            self.values(end, label, "column starts", _INTEGERS)
            kind, nbytes = self.values(end, label, "values", _NUMBERS)
            if complex_:
                self.values(end, label, "imaginary values", _NUMBERS)
            self.leaf_sparse(path, logical, complex_, dims, nbytes // _NUMERIC_TYPES[kind])
        else:
            self.array(end, _where(what, name), depth, mclass, complex_, logical, dims, count)
            if self.leaves is not None:
                self.leaf_array(path, class_name, complex_, dims)
        if depth:
            return None
        return Variable(name, class_name, dims, mclass in OBJECT_CLASSES)

    def array(
        self,
        end: int,
        label: str,
        depth: int,
        mclass: int,
        complex_: bool,
        logical: bool,
        dims: tuple[int, ...],
        count: int,
    ) -> None:
        """A numeric, logical or char array's values: their types and sizes."""
        char = mclass == 4
        native = NATIVE_STORAGE.get(mclass, (0,))[0]
        direct = depth == 0 and not complex_ and not logical and not char
        parts = ("values", "imaginary values") if complex_ else ("values",)
        if self.in_objects and mclass == 13 and not complex_:
            self.peek_reference(label, *self.tag(end, label, "values", _NUMBERS), dims)
        for part in parts:
            start = self.stream.base + self.stream.at
            lazy_kind = 0
            if depth == 0 and part == parts[-1]:
                lazy_kind = -1 if self.lazy < 0 else native if self.lazy and direct else 0
            kind, nbytes = self.values(end, label, part, _TEXT if char else _NUMBERS, lazy_kind)
            size = _NUMERIC_TYPES[kind]
            if char and kind in (MI_UTF8, MI_UTF16, MI_UTF32) and nbytes:
                pass  # encoded text: SciPy checks that it decodes to at least ``count`` characters
            elif char and not nbytes:
                self.charge(count, f"{label} (values)", "characters stored in no bytes")
            elif nbytes != count * size:
                raise DLFormatError(
                    f"{label} declares {count} elements ({'×'.join(map(str, dims))}) but holds "
                    f"{nbytes} bytes of {size}-byte values"
                )
            if direct and native == kind and nbytes > 4:  # larger values never sit in a tag
                self.values_at = (start + 8, kind)

    def containers(
        self,
        end: int,
        label: str,
        depth: int,
        path: str | None,
        mclass: int,
        dims: tuple[int, ...],
        count: int,
    ) -> str | None:
        """A cell, struct or (when listing) old-style object: its field names and elements.
        Returns an old-style object's class name."""
        class_name = None
        if mclass == 3:
            class_name = self.read(end, label, "class name", _NAME)[1].decode("latin-1")
            self.leaf(path, f"{class_name} (object)", dims)
            path = None  # an old-style object's fields are its own business
        field_names = [""]
        if mclass in (2, 3):
            _, length_raw = self.read(end, label, "field name length", frozenset({MI_INT32, MI_UINT32}))
            if len(length_raw) != 4:
                raise DLFormatError(f"{label} has {len(length_raw)} bytes of field name length; it must be 4")
            length = self.word.unpack(length_raw)[0]
            _, names = self.read(end, label, "field names", _NAME)
            if not 0 < length < 1 << 31 or len(names) % length:
                raise DLFormatError(
                    f"{label} has {len(names)} bytes of field names, which do not divide into length {length}"
                )
            field_names = [
                names[start : start + length].split(b"\x00")[0].decode("latin-1")
                for start in range(0, len(names), length)
            ]
        fields = len(field_names)
        children = count * fields
        s = self.stream
        # every child is a miMATRIX of at least 8 (tag) + 16 (flags) + 16 (dims) + 8 (name) bytes
        if children * 48 > end - s.base - s.at:
            raise DLFormatError(
                f"{label} declares {children} elements, more than its {end - s.base - s.at} bytes can hold"
            )
        if not children:
            if not fields:
                self.charge(count, label, "struct elements without fields")
            # an empty cell or struct array, or structs without fields: listed as themselves
            if mclass == 2 and count > 1:
                for element in range(count):
                    self.leaf(_element(path, element), "struct", (1, 1))
            elif mclass != 3:
                self.leaf(path, CLASS_NAMES[mclass], dims)
        pair = self.pair
        for index in range(children):
            position = s.base + s.at
            if end - position < 8:
                raise DLFormatError(f"{label} element {index + 1} needs an 8-byte tag but is cut short")
            s.ensure(8)
            kind, nbytes = pair.unpack_from(s.buf, s.at)
            if kind != MI_MATRIX:
                raise DLFormatError(f"{label} element {index + 1} is not a matrix (data type {kind})")
            child_end = position + 8 + nbytes
            if child_end > end:
                raise DLFormatError(
                    f"{label} element {index + 1} declares {nbytes} bytes "
                    f"but only {end - position - 8} remain"
                )
            s.at += 8
            if not nbytes:
                continue  # an empty matrix
            try:
                self.matrix(
                    child_end,
                    (label, index),
                    depth + 1,
                    None if path is None else _child(path, mclass, count, field_names, index),
                )
            except _HiddenObjectError as found:
                found.steps.append((mclass, count, field_names, index))
                raise
            if s.base + s.at != child_end:
                raise DLFormatError(
                    f"{label} element {index + 1} declares {nbytes} bytes but its contents take "
                    f"{s.base + s.at - position - 8}"
                )
        return class_name

    def charge(self, count: int, label: str, what: str) -> None:
        self.free_elements -= count
        if self.free_elements < 0:
            raise DLFormatError(
                f"{label} declares {count} {what}, more than a file of this size may declare "
                f"({FREE_ELEMENTS} + {FREE_ELEMENTS_PER_BYTE} per byte in all)"
            )

    def opaque(self, end: int, what: str, depth: int, path: str | None) -> Variable:
        _, name_raw = self.read(end, what, "name", _NAME)
        _, kind_raw = self.read(end, what, "object type", _NAME)
        _, class_raw = self.read(end, what, "class name", _NAME)
        name = name_raw.decode("latin-1")
        class_name = class_raw.decode("latin-1") or kind_raw.decode("latin-1")
        if depth == 0:
            self.top = (name, class_name, (1, 1))
        if self.objects:
            kind, _, padded = self.tag(end, what, "object data", _OBJECT_DATA)
            if kind == MI_MATRIX and padded >= 0:
                inside, self.in_objects = self.in_objects, True
                self.nested(end, what, "object data", depth)
                self.in_objects = inside
            else:
                self.values(end, what, "object data", _OBJECT_DATA)
            return Variable(name, class_name, (1, 1), True)
        if not self.listing:
            if depth:
                raise _HiddenObjectError(class_name)
            return Variable(name, class_name, (1, 1), True)
        s = self.stream
        kind, nbytes, padded = self.tag(end, what, "object data", _OBJECT_DATA)
        start = s.base + s.at + 8
        s.at += 8
        dims = None
        if kind == MI_MATRIX and kind_raw == b"MCOS" and padded >= 0:
            dims = self.object_dims(start + nbytes, f"{what} (object data)")
        data_end = start + max(padded, 0)
        s.skip(data_end - s.base - s.at)
        if depth == 0:
            path = name
        self.leaf(path, f"{class_name} (object)", dims)
        return Variable(name, class_name, dims or (1, 1), True)

    def nested(self, end: int, what: str, part: str, depth: int) -> None:
        """An element holding one miMATRIX (an object's data, a function handle's workspace),
        walked as a child that must fill it exactly."""
        s = self.stream
        _, nbytes, padded = self.tag(end, what, part, frozenset({MI_MATRIX}))
        start = s.base + s.at + 8
        s.at += 8
        if nbytes:
            self.matrix(start + nbytes, f"{what} ({part})", depth + 1)
        if s.base + s.at != start + nbytes:
            raise DLFormatError(
                f"{what} ({part}) declares {nbytes} bytes but its contents take {s.base + s.at - start}"
            )
        s.skip(padded - nbytes)

    def peek_reference(self, label: str, kind: int, nbytes: int, padded: int, dims: tuple[int, ...]) -> None:
        """A uint32 column that opens with the MCOS mark is an object reference to mat-io, which
        makes an array of as many objects as its dimensions declare: they must be the ids it lists
        (the values are those at the stream position, not yet skipped)."""
        count = _count(dims)
        size = _NUMERIC_TYPES[kind]
        n = min(count, 2 + MAX_OBJECT_DIMS, nbytes // size)
        if len(dims) != 2 or dims[1] != 1 or count < 3 or padded < 0 or n < 3:
            return
        s = self.stream
        s.ensure(8 + n * size)
        stored = np.dtype(self.order + _STORED_CODES[kind])
        with np.errstate(invalid="ignore"):  # as mat-io casts them (NaN and negatives wrap)
            words = np.frombuffer(s.buf, dtype=stored, count=n, offset=s.at + 8).astype(np.uint32).tolist()
        check_reference(label, words, count)

    def object_dims(self, end: int, what: str) -> tuple[int, ...] | None:
        """The size of an MCOS object array, from the few words that open its reference.

        MATLAB saves an MCOS value as a uint32 column: 0xDD000000, the number of dimensions,
        the dimensions, one object id per element, the class id. The dimensions are those of
        the array of objects. A class that keeps its own size inside one object (a ``string``
        array, a ``table``, a ``categorical``) is a single object, 1×1 here whatever its
        size; that size is known only to the object's saved state, so it is ``None``
        (unknown) whenever the reference holds one object.
        """
        s = self.stream
        try:
            _, flags = self.read(end, what, "array flags", _FLAGS)
            self.read(end, what, "dimensions", _DIMS)
            self.read(end, what, "name", _NAME)
            position = s.base + s.at
            if end - position < 8:
                return None
            s.ensure(8)
            first, nbytes = self.pair.unpack_from(s.buf, s.at)
        except (DLFormatError, _CutShortError):
            return None  # not the layout described above: the size stays unknown
        if len(flags) < 4 or self.word.unpack_from(flags)[0] & 0xFF != 13:
            return None
        if first >> 16:
            if first & 0xFFFF != MI_UINT32:
                return None
            words = s.buf[s.at + 4 : s.at + 4 + min(first >> 16, 4)]
        else:
            if first != MI_UINT32:
                return None
            n = min(nbytes, 4 * (2 + MAX_OBJECT_DIMS), end - position - 8)
            s.ensure(8 + n)
            words = s.buf[s.at + 8 : s.at + 8 + n]
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
        label, dtype, itemsize = _loaded_as(class_name, complex_)
        self.leaves.append(Entry(path, label, dims, dtype, _count(dims) * itemsize))

    def leaf_sparse(
        self, path: str | None, logical: bool, complex_: bool, dims: tuple[int, ...], nonzeros: int
    ) -> None:
        if self.leaves is not None and path is not None:
            self.leaves.append(sparse_entry(path, logical, complex_, dims, nonzeros))


@functools.cache
def _loaded_as(class_name: str, complex_: bool) -> tuple[str, str, int]:
    """How an array of a class loads: its listed class, dtype name and item size (char: 1, "str")."""
    if class_name == "char":
        return "char", "str", 1
    dtype = np.dtype(bool) if class_name == "logical" else np.dtype(NUMERIC_CLASSES[class_name])
    if complex_:
        dtype = np.result_type(dtype, np.complex64)
    return class_name + (" complex" if complex_ else ""), str(dtype), dtype.itemsize


def _wrong_type(what: Where, part: str, kind: int, allowed: frozenset[int]) -> DLFormatError:
    return DLFormatError(f"{_where(what)} ({part}) has data type {kind}, expected one of {sorted(allowed)}")


def _where(what: Where, name: str = "") -> str:
    """An element's description for messages: ``what`` is a label, or (the parent's description,
    the element's index), kept unformatted until a message needs it."""
    if isinstance(what, tuple):
        parent, index = what
        what = f"{_where(parent)} element {index + 1}"
    return f"{what} {name!r}" if name else what


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
_STORED_CODES = dict(NATIVE_STORAGE.values())  # numeric data type -> NumPy type code


def check_reference(label: str, words: list[int], count: int) -> None:
    """Refuse a uint32 column of ``count`` values opening with ``words`` that mat-io would take
    for an MCOS object reference (the mark, the number of dimensions, the dimensions, the object
    ids, the class id) unless it lists exactly the objects its dimensions declare: mat-io makes
    an array of the declared size before it fills it."""
    if len(words) < 3 or words[0] != _REFERENCE_MARK:
        return
    ndims = words[1]
    if not 2 <= ndims <= MAX_OBJECT_DIMS or 2 + ndims > len(words):
        raise DLFormatError(
            f"{label} is an object reference with {ndims} dimensions (2 to {MAX_OBJECT_DIMS})"
        )
    objects = _count(tuple(words[2 : 2 + ndims]))
    if count != 3 + ndims + objects:
        raise DLFormatError(
            f"{label} is an object reference declaring {objects} objects "
            f"({'×'.join(map(str, words[2 : 2 + ndims]))}) but listing {count - 3 - ndims}"
        )


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


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: the file's version (4, 5 or 73), its top-level variables, and
    the element that holds its subsystem block (version 5 files with MATLAB objects), its
    values not yet inflated."""

    version: int
    variables: list[Variable]
    subsystem: Variable | None = None


def scan(file: BinaryIO, size: int, listing: list[Entry] | None = None) -> Scan:
    """Check a MAT-file's structure; return its version, top-level variables and subsystem element.

    With a ``listing`` list, every leaf of every variable is appended to it, as
    :func:`dlformat.io.whos` lists them, from the headers alone: no values are read, and a
    compressed variable is inflated only as far as its structure needs. Without one, the
    walk checks everything SciPy will read: compressed variables are inflated to their end,
    except the values of arrays that the direct reader reads (and checks) itself.
    Version 7.3 files are only identified here (h5py reads them). MATLAB objects are refused
    wherever they sit (:func:`check_objects` walks those that mat-io is to decode).
    """
    file.seek(0)
    head = file.read(128)
    version = file_version(head)
    if version == 73:
        return Scan(73, [])
    if version == 4:
        return Scan(4, _scan_v4(file, size, listing))
    walker = _Walker(_byte_order(head), listing is not None, _free_elements(size))
    variables: list[Variable] = []
    subsystem_at = _subsystem_offset(head)
    subsystem = None
    position = 128
    while size - position >= 8:
        what = f"variable {len(variables) + 1}"
        if listing is not None:
            walker.leaves = []
        # the subsystem's stream is left uninflated: check_objects inflates and walks it (once)
        # before mat-io decodes it, and no other reader reads it
        variable, following = _top_element(walker, file, size, position, what, position == subsystem_at)
        if position != subsystem_at:  # the subsystem block holds object metadata, not a variable
            variables.append(replace(variable, offset=position, number=len(variables) + 1))
            if listing is not None and walker.leaves is not None:
                listing.extend(walker.leaves)
        else:
            subsystem = replace(variable, offset=position)
        position = following
    if position < size:
        raise DLFormatError(f"the file ends with {size - position} stray bytes after its last variable")
    return Scan(5, variables, subsystem)


def check_objects(file: BinaryIO, size: int, scanned: Scan, variables: list[Variable]) -> bytes | None:
    """Walk ``variables`` (top-level variables :func:`scan` found, holding MATLAB objects) with
    their objects' data, and the subsystem block, by the rules of the module's docstring; return
    the subsystem block's inflated stream (mat-io reads it from these bytes, not from the file),
    or None for a file without one.

    :func:`scan` has already walked every other element; the plain variables are not walked
    again: the rules differ only for objects."""
    file.seek(0)
    head = file.read(128)
    walker = _Walker(_byte_order(head), False, _free_elements(size), objects=True)
    for variable in variables:
        _top_element(walker, file, size, variable.offset, f"variable {variable.number}")
    if scanned.subsystem is None:
        return None
    return _subsystem(walker, file, scanned.subsystem)


def _byte_order(head: bytes) -> str:
    return "<" if head[126:128] == b"IM" else ">"


def _subsystem_offset(head: bytes) -> int:
    return int(struct.unpack(_byte_order(head) + "Q", head[116:124])[0])


def _free_elements(size: int) -> int:
    return FREE_ELEMENTS + FREE_ELEMENTS_PER_BYTE * size


def _top_element(
    walker: _Walker, file: BinaryIO, size: int, position: int, what: str, lazy: bool = False
) -> tuple[Variable, int]:
    """Walk the top-level element at ``position``; return its variable and where the next starts.
    ``lazy``: leave its last values unread whatever their size (their size is checked)."""
    file.seek(position)
    first, nbytes = walker.pair.unpack(file.read(8))
    if nbytes > size - position - 8:
        raise DLFormatError(f"{what} declares {nbytes} bytes but only {size - position - 8} remain")
    walker.values_at = None
    walker.tail_unread = False
    walker.top = ("", "", ())
    walker.lazy = -1 if walker.listing or lazy else 1 if first == MI_COMPRESSED else 0
    try:
        if first == MI_COMPRESSED:
            # a lazy element is read for its headers only: inflate little beyond them
            read_ahead = _HEADER_READ_AHEAD if lazy else _READ_AHEAD
            return _compressed(walker, file, position, nbytes, what, read_ahead), position + 8 + nbytes
        if first == MI_MATRIX:
            variable = _uncompressed(walker, file, position, nbytes, what)
            return variable, position + 8 + nbytes + (-nbytes % 8)
        raise DLFormatError(f"{what} has data type {first}; a variable must be a matrix")
    except _HiddenObjectError as found:
        name, class_name, dims = walker.top
        variable = Variable(name, class_name, dims, False, hidden_object=(found.path(name), found.class_name))
        return variable, position + 8 + nbytes + (0 if first == MI_COMPRESSED else -nbytes % 8)
    except _CutShortError:
        raise DLFormatError(f"{what} is cut short: its data ends before the bytes it declares") from None


def _compressed(
    walker: _Walker, file: BinaryIO, position: int, nbytes: int, what: str, read_ahead: int = _READ_AHEAD
) -> Variable:
    stream = _ZlibStream(file, position + 8, nbytes, what)
    stream.read_ahead = read_ahead
    walker.stream = stream
    stream.ensure(8)
    inner_kind, inner_bytes = walker.pair.unpack_from(stream.buf, 0)
    stream.at = 8
    if inner_kind != MI_MATRIX:
        raise DLFormatError(f"{what} is not a matrix (data type {inner_kind})")
    if inner_bytes > nbytes * MAX_DEFLATE_RATIO:
        raise DLFormatError(
            f"{what} declares {inner_bytes} bytes, more than {nbytes} compressed bytes can expand to"
        )
    variable = walker.variable(inner_bytes + 8, what)
    if (walker.objects or not variable.is_object) and not walker.tail_unread and not walker.listing:
        stream.finish(inner_bytes + 8)
    if walker.values_at is not None:
        return _with_direct(variable, walker, position + 8, nbytes)
    return variable


def _uncompressed(walker: _Walker, file: BinaryIO, position: int, nbytes: int, what: str) -> Variable:
    end = position + 8 + nbytes
    walker.stream = _FileStream(file, position + 8, end)
    variable = walker.variable(end, what)
    stream = walker.stream
    if (
        (walker.objects or not variable.is_object)
        and not walker.tail_unread
        and stream.base + stream.at != end
    ):
        raise DLFormatError(
            f"{what} declares {nbytes} bytes but its contents take {stream.base + stream.at - position - 8}"
        )
    if walker.values_at is not None:
        return _with_direct(variable, walker, walker.values_at[0], None)
    return variable


class _BytesStream(_Stream):
    """Bytes already in memory (the subsystem block's stream)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(0)
        self.buf = data

    def _next(self, limit: int) -> bytes:
        return b""


def _subsystem(walker: _Walker, file: BinaryIO, variable: Variable) -> bytes:
    """Walk the subsystem block's own stream: MATLAB stores it as a uint8 variable whose bytes
    are an 8-byte header (version, byte order, padding) and a miMATRIX (a struct whose ``MCOS``
    field holds the FileWrapper__ object: its metadata, then every object's saved properties),
    which mat-io reads with the same reader as the variables."""
    what = "the subsystem block"
    if variable.matlab_class != "uint8" or variable.direct is None:
        raise DLFormatError(f"{what} is a {variable.matlab_class} array, not MATLAB's uint8 stream")
    data = _direct.read(cast(Any, file), variable.direct, "subsystem").tobytes()
    if len(data) < 16:
        raise DLFormatError(f"{what} holds {len(data)} bytes, too few for its header and one element")
    marker = data[2:4]
    if marker not in (b"IM", b"MI"):
        raise DLFormatError(f"{what} lacks the MATLAB endian marker")
    order = "<" if marker == b"IM" else ">"
    inner = _Walker(order, False, walker.free_elements, objects=True)
    inner.in_objects = True
    inner.stream = stream = _BytesStream(data)
    stream.at = 8
    kind, nbytes = inner.pair.unpack_from(data, 8)
    if kind != MI_MATRIX or nbytes > len(data) - 16:
        raise DLFormatError(f"{what} does not open with a matrix of the bytes it holds")
    stream.at = 16
    try:
        inner.matrix(16 + nbytes, what, 1)
    except _CutShortError:
        raise DLFormatError(f"{what} is cut short: its data ends before the bytes it declares") from None
    if stream.at != 16 + nbytes:
        raise DLFormatError(f"{what} declares {nbytes} bytes but its contents take {stream.at - 16}")
    walker.free_elements = inner.free_elements
    return data


def _with_direct(variable: Variable, walker: _Walker, offset: int, compressed: int | None) -> Variable:
    """``variable`` with the plan for reading its values straight into an array."""
    values_at, kind = walker.values_at  # type: ignore[misc]
    code = next(code for mi, code in NATIVE_STORAGE.values() if mi == kind)
    plan = _direct.DirectRead(
        dtype=walker.order + code,
        dims=variable.dims,
        nbytes=_count(variable.dims) * _NUMERIC_TYPES[kind],
        offset=offset,
        compressed=compressed,
        skip=values_at if compressed is not None else 0,
    )
    return replace(variable, direct=plan)


_V4_SIZES = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}
_V4_CODES = {0: "f8", 1: "f4", 2: "i4", 3: "i2", 4: "u2", 5: "u1"}


def _scan_v4(file: BinaryIO, size: int, listing: list[Entry] | None = None) -> list[Variable]:
    """Version 4: a run of 20-byte headers, names and values, all in the first variable's byte
    order (SciPy reads the whole file in the order it guesses from the first header)."""
    file.seek(0)
    variables: list[Variable] = []
    position = 0
    orders = "<>"
    while position < size:
        what = f"variable {len(variables) + 1}"
        header = file.read(20)
        if len(header) < 20:
            raise DLFormatError(f"{what} has a cut-short version 4 header")
        for order in orders:
            mopt, rows, cols, imagf, namlen = struct.unpack(order + "5i", header)
            if 0 <= mopt < 5000:
                break
        else:
            raise DLFormatError(f"{what} has an invalid version 4 type code (or another byte order)")
        orders = order
        precision, kind = (mopt // 10) % 10, mopt % 10
        if mopt // 1000 > 4 or (mopt // 100) % 10 != 0 or precision not in _V4_SIZES or kind > 2:
            raise DLFormatError(f"{what} has an unknown version 4 type code {mopt}")
        if rows < 0 or cols < 0 or namlen < 1 or imagf not in (0, 1):
            raise DLFormatError(
                f"{what} has an invalid version 4 header ({rows}×{cols}, name length {namlen})"
            )
        # SciPy reads a sparse matrix's imaginary parts from a fourth column, never from imagf
        data = rows * cols * _V4_SIZES[precision] * (2 if imagf and kind != 2 else 1)
        start = position
        position += 20
        if namlen + data > size - position:
            raise DLFormatError(f"{what} declares {namlen + data} bytes but only {size - position} remain")
        name = file.read(namlen).strip(b"\x00").decode("latin-1")
        values = file.tell()
        matlab_class = "char" if kind == 1 else "sparse" if kind == 2 else "double"
        shape = (rows, cols)
        if kind == 2:
            shape = _v4_sparse_shape(file, name, order, precision, rows, cols, size)
        if listing is not None:
            listing.append(_v4_entry(name, kind, rows, cols, bool(imagf), shape))
        file.seek(values + data)
        position += namlen + data
        variables.append(Variable(name, matlab_class, shape, False, None, start, None, len(variables) + 1))
    return variables


def _v4_sparse_shape(
    file: BinaryIO, name: str, order: str, precision: int, rows: int, cols: int, size: int
) -> tuple[int, int]:
    """A version 4 sparse matrix's size: stored as its nonzeros, one per row (row index, column
    index, value, and for complex a fourth column), and a last row holding its size."""
    if rows < 1 or cols not in (3, 4):
        raise DLFormatError(f"sparse variable {name!r} is stored as {rows}×{cols}; it needs N×3 or N×4")
    code = np.dtype(order + _V4_CODES[precision])
    start = file.tell()
    sizes = []
    for column in (0, 1):  # the last row's first two columns: the number of rows and of columns
        file.seek(start + (column * rows + rows - 1) * code.itemsize)
        sizes.append(np.frombuffer(file.read(code.itemsize), dtype=code)[0])
    if not all(np.isfinite(value) and 0 <= value < 2**31 and value == int(value) for value in sizes):
        raise DLFormatError(f"sparse variable {name!r} has an invalid size {[float(v) for v in sizes]}")
    shape = (int(sizes[0]), int(sizes[1]))
    most = V4_SPARSE_COLUMNS + V4_SPARSE_COLUMNS_PER_BYTE * size
    if shape[1] > most:
        raise DLFormatError(
            f"sparse variable {name!r} declares {shape[0]}×{shape[1]}; a version 4 file of {size} bytes "
            f"may declare at most {most} columns "
            f"({V4_SPARSE_COLUMNS} + {V4_SPARSE_COLUMNS_PER_BYTE} per byte)"
        )
    return shape


def _v4_entry(name: str, kind: int, rows: int, cols: int, complex_: bool, shape: tuple[int, int]) -> Entry:
    """A version 4 matrix as dlformat loads it: double (or char) of its stored size."""
    if kind == 1:
        return Entry(name, "char", (rows, cols), "str", rows * cols)
    if kind == 0:
        dtype = np.dtype(np.complex128 if complex_ else np.float64)
        suffix = " complex" if complex_ else ""
        return Entry(name, "double" + suffix, (rows, cols), str(dtype), rows * cols * dtype.itemsize)
    return sparse_entry(name, False, cols > 3, shape, rows - 1)
