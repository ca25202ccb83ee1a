"""Hostile and broken files: crafted allocation bombs, generated hostile files and fuzzed corpus files.

The generated and fuzzed files run in worker processes under the limits of isolation.py: each must
end in a result or a DLFormatError, without a signal, within 2 s + 100 µs per file byte of CPU time,
with its resident peak and its address space within 64 MiB + 20,000 × its size. The generator
builds version 4–7 files family by family (lying dimensions, nested objects, zlib tricks, class
codes, small-format elements, sparse matrices, depth, many variables, elements stored in no bytes,
version 4 oddities, header fields, truncation, char data); corpus families mutate the real files, those
holding MATLAB objects apart.
"""

from __future__ import annotations

import random
import struct
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from dlformat import DLFormatError
from dlformat.io import loadmat

from .isolation import Result, findings, run_cases, summary

# -- crafted version 5 files -------------------------------------------------------------------
HEADER = b"MATLAB 5.0 MAT-file, crafted by dlformat's tests".ljust(116, b" ") + b"\0" * 8 + b"\x00\x01IM"


def element(kind: int, payload: bytes, declared: int | None = None) -> bytes:
    size = len(payload) if declared is None else declared
    return struct.pack("<II", kind, size) + payload + b"\0" * (-len(payload) % 8)


def matrix(
    mclass: int, dims: tuple[int, ...], name: bytes, *parts: bytes, declared: int | None = None
) -> bytes:
    body = (
        element(6, struct.pack("<II", mclass, 0))
        + element(5, struct.pack(f"<{len(dims)}i", *dims))
        + element(1, name)
        + b"".join(parts)
    )
    return element(14, body, declared)


def double(name: bytes, values: list[float]) -> bytes:
    return matrix(6, (1, len(values)), name, element(9, struct.pack(f"<{len(values)}d", *values)))


def write(tmp_path: Path, *variables: bytes) -> Path:
    path = tmp_path / "crafted.mat"
    path.write_bytes(HEADER + b"".join(variables))
    return path


def refused_without_allocating(path: Path, message: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(DLFormatError, match=message):
            loadmat(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"peak {peak} bytes"


def test_a_well_formed_crafted_file_loads(tmp_path):
    path = write(tmp_path, double(b"x", [1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(loadmat(path)["x"], np.array([[1.0, 2.0, 3.0]]))


def test_an_element_declaring_more_than_the_file_holds(tmp_path):
    path = write(tmp_path, matrix(6, (1, 1), b"x", element(9, b"\0" * 8), declared=2**31 - 8))
    refused_without_allocating(path, r"declares 2147483640 bytes but only \d+ remain")


def test_a_numeric_array_whose_dimensions_exceed_its_data(tmp_path):
    path = write(tmp_path, matrix(6, (100_000, 100_000), b"x", element(9, b"\0" * 8)))
    refused_without_allocating(path, r"declares 10000000000 elements \(100000×100000\) but holds 8 bytes")


def test_a_cell_declaring_a_billion_elements(tmp_path):
    path = write(tmp_path, matrix(1, (1_000_000_000, 1), b"c"))
    refused_without_allocating(path, r"declares 1000000000 elements, more than its 0 bytes can hold")


def test_a_compressed_variable_claiming_to_expand_beyond_deflates_limit(tmp_path):
    inner = struct.pack("<II", 14, 2**31) + b"\0" * 64
    compressed = zlib.compress(inner)
    path = write(tmp_path, element(15, compressed))
    refused_without_allocating(
        path, r"declares 2147483648 bytes, more than \d+ compressed bytes can expand to"
    )


def test_deep_nesting_is_bounded(tmp_path):
    variable = double(b"", [1.0])
    for _ in range(150):
        variable = matrix(1, (1, 1), b"", variable)
    path = write(tmp_path, variable)
    refused_without_allocating(path, r"nests more than 100 levels deep")


def test_a_version_4_header_declaring_huge_data(tmp_path):
    path = tmp_path / "v4.mat"
    path.write_bytes(struct.pack("<5i", 0, 100_000, 100_000, 0, 2) + b"x\0" + b"\0" * 16)
    refused_without_allocating(path, r"variable 1 declares 80000000002 bytes but only 18 remain")


def test_a_v73_dataset_declaring_more_than_is_stored(tmp_path):
    path = tmp_path / "bomb.mat"
    with h5py.File(path, "w", userblock_size=512) as file:
        dataset = file.create_dataset("x", shape=(200_000, 100_000), dtype="f8", chunks=(1000, 1000))
        dataset.attrs["MATLAB_class"] = np.bytes_("double")
    with open(path, "r+b") as raw:
        raw.write(b"MATLAB 7.3 MAT-file".ljust(124, b" ") + b"\x00\x02IM")
    refused_without_allocating(path, r"variable 'x' declares 160000000000 bytes, more than the file can hold")


def test_a_v73_cell_that_contains_itself(tmp_path):
    path = tmp_path / "cycle.mat"
    with h5py.File(path, "w", userblock_size=512) as file:
        refs = file.create_group("#refs#")
        inner = refs.create_dataset("a", shape=(1, 1), dtype=h5py.ref_dtype)
        inner.attrs["MATLAB_class"] = np.bytes_("cell")
        inner[0, 0] = inner.ref
        outer = file.create_dataset("c", data=np.array([[inner.ref]], dtype=h5py.ref_dtype))
        outer.attrs["MATLAB_class"] = np.bytes_("cell")
    with open(path, "r+b") as raw:
        raw.write(b"MATLAB 7.3 MAT-file".ljust(124, b" ") + b"\x00\x02IM")
    refused_without_allocating(
        path, r"variable 'c\{1\}\{1\}' refers back to 'c\{1\}', which contains it \(a reference cycle"
    )


# -- fuzzing ------------------------------------------------------------------------------------
def uncompressed(data: bytes) -> bytes | None:
    """A version 5 file with every compressed variable stored plainly, so mutations reach its structure."""
    if len(data) < 128 or data[126:128] != b"IM" or data[124:126] != b"\x00\x01":
        return None
    out, position = [data[:128]], 128
    while position + 8 <= len(data):
        kind, size = struct.unpack("<II", data[position : position + 8])
        payload = data[position + 8 : position + 8 + size]
        if kind == 15:
            try:
                inner = zlib.decompress(payload)
            except zlib.error:
                return None
            out.append(inner + b"\0" * (-len(inner) % 8))
            position += 8 + size
        else:
            out.append(data[position : position + 8 + size + (-size % 8)])
            position += 8 + size + (-size % 8)
    return b"".join(out)


def mutate(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    start = 128 if len(data) > 136 and rng.random() < 0.8 else 0  # mostly spare the header
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["flip", "truncate", "duplicate", "zero", "huge"])
        if len(data) <= start:
            break
        at = rng.randrange(start, len(data))
        if kind == "flip":
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(start, len(data))] ^= 1 << rng.randrange(8)
        elif kind == "truncate":
            del data[at:]
        elif kind == "duplicate":
            end = min(len(data), at + rng.randint(1, 256))
            data[at:at] = data[at:end]
        elif kind == "zero":
            data[at : at + rng.randint(1, 64)] = b"\0" * len(data[at : at + 64])
        else:
            word = rng.choice([0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 2**20])
            position = at - at % 4
            data[position : position + 4] = struct.pack("<I", word)[: len(data) - position]
    return bytes(data)


def corpus_files(corpus: Path, versions: tuple[int, ...] = (4, 5, 73)) -> dict[str, bytes]:
    """The corpus files of the given versions (under 4 MiB), and uncompressed copies of compressed ones."""
    originals = {}
    for path in sorted(corpus.glob("*.mat")):
        data = path.read_bytes()
        if len(data) >= 4 * 2**20 or len(data) < 4:
            continue
        version = 4 if 0 in data[:4] else 73 if data[124:126] in (b"\x00\x02", b"\x02\x00") else 5
        if version not in versions:
            continue
        originals[path.name] = data
        plain = uncompressed(data)
        if plain is not None and plain != data:
            originals[f"{path.name} (uncompressed)"] = plain
    return originals


def fuzz(corpus: Path, folder: Path, count: int, base_seed: int) -> list[tuple[str, str]]:
    """Mutated copies of every corpus file, each run in isolation (see isolation.py); the findings."""
    originals = corpus_files(corpus)
    names = sorted(originals)
    cases = []
    for seed in range(base_seed, base_seed + count):
        rng = random.Random(seed)
        name = rng.choice(names)
        cases.append((f"seed {seed}: {name}", mutate(originals[name], rng)))
    results = run_cases(cases, folder)
    print(summary(results))
    return findings(results)


# -- structure-aware generation of version 4 to 7 files ----------------------------------------
# Each family builds files of one kind of hostility from a seeded generator; every family mixes
# well-formed files in, so that the readers' success path runs under the same limits.
class Build:
    """Version 5 building blocks in one byte order."""

    def __init__(self, rng: random.Random, order: str = "<") -> None:
        self.rng = rng
        self.order = order

    def header(self, subsystem: int = 0, version: int = 0x0100) -> bytes:
        marker = b"IM" if self.order == "<" else b"MI"
        text = b"MATLAB 5.0 MAT-file, fuzzed by dlformat's tests".ljust(116, b" ")
        return text + struct.pack(self.order + "QH", subsystem, version) + marker

    def el(self, kind: int, payload: bytes, declared: int | None = None) -> bytes:
        size = len(payload) if declared is None else declared
        return struct.pack(self.order + "II", kind, size) + payload + b"\0" * (-len(payload) % 8)

    def small(self, kind: int, payload: bytes) -> bytes:
        assert len(payload) <= 4
        if self.order == "<":
            word = struct.pack("<HH", kind, len(payload))
        else:
            word = struct.pack(">HH", len(payload), kind)
        return word + payload.ljust(4, b"\0")

    def flags(self, mclass: int, complex_: bool = False, logical: bool = False, nzmax: int = 0) -> bytes:
        word = mclass | (0x0800 if complex_ else 0) | (0x0200 if logical else 0)
        return self.el(6, struct.pack(self.order + "II", word, nzmax))

    def dims(self, dims: tuple[int, ...]) -> bytes:
        return self.el(5, struct.pack(f"{self.order}{len(dims)}i", *dims))

    def name(self, name: bytes) -> bytes:
        return self.small(1, name) if 0 < len(name) <= 4 and self.rng.random() < 0.5 else self.el(1, name)

    def matrix(self, mclass: int, dims: tuple[int, ...], name: bytes, *parts: bytes, **flag: Any) -> bytes:
        body = self.flags(mclass, **flag) + self.dims(dims) + self.name(name) + b"".join(parts)
        return self.el(14, body)

    def numeric(self, name: bytes, values: np.ndarray, mclass: int = 6, kind: int = 9) -> bytes:
        dtype = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 9: "f8", 12: "i8", 13: "u8"}[
            kind
        ]
        data = np.asarray(values).astype(self.order + dtype).tobytes(order="F")
        shape = values.shape if values.ndim >= 2 else (1, values.size)
        return self.matrix(mclass, shape, name, self.el(kind, data))

    def double(self, name: bytes, count: int = 3) -> bytes:
        return self.numeric(name, np.arange(count, dtype=float).reshape(1, -1))

    def cell(self, name: bytes, items: list[bytes], dims: tuple[int, ...] | None = None) -> bytes:
        return self.matrix(1, dims or (1, len(items)), name, *items)

    def struct(self, name: bytes, fields: list[bytes], items: list[bytes], count: int = 1) -> bytes:
        length = max((len(field) for field in fields), default=0) + 1
        names = b"".join(field.ljust(length, b"\0") for field in fields)
        return self.matrix(
            2, (1, count), name, self.el(5, struct.pack(self.order + "i", length)), self.el(1, names), *items
        )

    def char(self, name: bytes, units: list[int], kind: int = 4) -> bytes:
        code = {4: "u2", 16: "u1", 17: "u2", 18: "u4", 2: "u1", 1: "i1"}[kind]
        data = np.array(units, dtype=np.int64).astype(self.order + code).tobytes()
        return self.matrix(4, (1, len(units)), name, self.el(kind, data))

    def nested_cells(self, inner: bytes, depth: int) -> bytes:
        """``inner`` in ``depth`` levels of unnamed 1×1 cells, built in one join (sizes from the inside out)."""
        body = self.flags(1) + self.dims((1, 1)) + self.el(1, b"")
        prefixes, size = [], len(inner)
        for _ in range(depth):
            size += len(body)
            prefixes.append(struct.pack(self.order + "II", 14, size) + body)
            size += 8
        return b"".join(reversed(prefixes)) + inner

    def compressed(self, variable: bytes, level: int = 6) -> bytes:
        data = zlib.compress(variable, level)
        return struct.pack(self.order + "II", 15, len(data)) + data

    def maybe_compressed(self, variable: bytes) -> bytes:
        return self.compressed(variable) if self.rng.random() < 0.5 else variable


def _leaf(b: Build, name: bytes = b"") -> bytes:
    """A random small plain value."""
    rng = b.rng
    kind = rng.randrange(5)
    if kind == 0:
        return b.double(name, rng.randrange(0, 5))
    if kind == 1:
        return b.char(name, [rng.randrange(32, 127) for _ in range(rng.randrange(0, 6))])
    if kind == 2:
        return b.cell(name, [b.double(b"") for _ in range(rng.randrange(0, 3))])
    if kind == 3:
        return b.struct(name, [b"a", b"bb"], [b.double(b""), b.char(b"", [65])])
    values = np.arange(rng.randrange(1, 7), dtype=np.int8).reshape(1, -1)
    return b.numeric(name, values, mclass=8, kind=1)


def _wrap(b: Build, inner: bytes, depth: int) -> bytes:
    """``inner`` inside ``depth`` levels of cells and structs."""
    for _ in range(depth):
        if b.rng.random() < 0.5:
            inner = b.cell(b"", [inner])
        else:
            inner = b.struct(b"", [b"f"], [inner])
    return inner


def _named(b: Build, inner: bytes, name: bytes = b"x") -> bytes:
    """A top-level variable named ``name`` holding ``inner`` (a cell of one element)."""
    return b.cell(name, [inner])


def family_lying_dims(rng: random.Random) -> bytes:
    b = Build(rng, rng.choice("<>"))
    dims = tuple(
        rng.choice([0, 1, 2, 3, 7, 2**15, 2**31 - 1, -1, -(2**31)])
        for _ in range(rng.choice([1, 2, 2, 3, 33]))
    )
    kind = rng.choice([1, 2, 3, 4, 5, 6, 7, 9, 12, 13])
    count = rng.choice([0, 1, 3, 8, 64])
    data = bytes(rng.getrandbits(8) for _ in range(count))
    mclass = rng.choice([6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 4])
    variable = b.matrix(mclass, dims, b"x", b.el(kind, data), complex_=rng.random() < 0.2)
    return b.header() + b.maybe_compressed(
        _wrap(b, variable, rng.randrange(3)) if rng.random() < 0.3 else variable
    )


def family_nested_objects(rng: random.Random) -> bytes:
    b = Build(rng)
    depth = rng.choice([1, 2, 3, 50, 2000, 20000])
    inside = b.nested_cells(_leaf(b), depth)
    hostile = rng.choice(
        [
            inside,
            b.matrix(6, (2**15, 2**15), b"", struct.pack("<II", 9, 2**31)),
            b.matrix(2, (1, 2**31 - 1), b"", b.el(5, struct.pack("<i", 1)), b.el(1, b"")),
        ]
    )
    which = rng.choice(["function", "opaque", "object"])
    if which == "function":
        obj = b.matrix(16, (1, 1), b"", hostile)
    elif which == "opaque":
        body = b.flags(17) + b.el(1, b"") + b.el(1, b"MCOS") + b.el(1, b"string") + hostile
        obj = b.el(14, body)
    else:
        obj = b.matrix(
            3, (1, 1), b"", b.el(1, b"inline"), b.el(5, struct.pack("<i", 2)), b.el(1, b"a\0"), hostile
        )
    variable = _wrap(b, obj, rng.randrange(1, 4))
    variable = b.cell(b"c", [variable]) if rng.random() < 0.5 else b.struct(b"s", [b"f"], [variable])
    return b.header() + b.double(b"before") + b.compressed(variable) + b.double(b"after")


def family_zlib(rng: random.Random) -> bytes:
    b = Build(rng)
    variable = rng.choice(
        [b.double(b"x", rng.randrange(1, 200)), _named(b, _leaf(b)), b.numeric(b"x", np.zeros((64, 64)))]
    )
    trick = rng.randrange(10)
    if trick == 0:  # two streams
        cut = rng.randrange(1, len(variable))
        data = zlib.compress(variable[:cut]) + zlib.compress(variable[cut:])
    elif trick == 1:  # truncated
        whole = zlib.compress(variable)
        data = whole[: rng.randrange(1, len(whole))]
    elif trick == 2:  # trailing bytes or a run of zeros after the stream
        data = zlib.compress(variable) + bytes(rng.choice([1, 7, 8, 100, 100_000]))
    elif trick == 3:  # a second stream after a complete one
        data = zlib.compress(variable) + zlib.compress(b.double(b"y"))
    elif trick == 4:  # the inner element declares more than the stream holds, padded with zeros
        inner = struct.pack("<II", 14, len(variable) - 8 + 200_000_000) + variable[8:]
        data = zlib.compress(inner) + bytes(rng.choice([0, 1000, 190_000]))
    elif trick == 5:  # a corrupt byte
        whole = bytearray(zlib.compress(variable))
        whole[rng.randrange(len(whole))] ^= 1 << rng.randrange(8)
        data = bytes(whole)
    elif trick == 6:  # raw deflate, or gzip framing
        wbits = rng.choice([-15, 31])
        packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
        data = packer.compress(variable) + packer.flush()
    elif trick == 7:  # values that inflate beyond their stream's declared end
        data = zlib.compress(variable + bytes(rng.choice([8, 64, 4096])))
    elif trick == 8:  # an empty stream, or nothing at all
        data = rng.choice([zlib.compress(b""), b""])
    else:  # zeros at deflate's ratio limit, honestly declared, stored as double or as uint8 (8× on load)
        count, kind = rng.choice([10_000, 1_000_000]), rng.choice([9, 2])
        part = b.el(kind, bytes(count * (8 if kind == 9 else 1)))
        complex_ = rng.random() < 0.5
        data = zlib.compress(b.matrix(6, (1, count), b"x", part, *[part] * complex_, complex_=complex_), 9)
    element = struct.pack("<II", 15, len(data)) + data
    return b.header() + element + (b.double(b"z") if rng.random() < 0.5 else b"")


def family_class_codes(rng: random.Random) -> bytes:
    b = Build(rng, rng.choice("<>"))
    mclass = rng.randrange(0, 40)
    parts = [b.el(rng.choice([1, 2, 4, 5, 9, 14, 16, 17, 18]), bytes(rng.choice([0, 1, 2, 8, 24])))]
    if rng.random() < 0.5:
        parts.append(b.el(rng.choice([5, 9, 14]), bytes(rng.choice([0, 8, 16]))))
    variable = b.matrix(
        mclass,
        (1, rng.choice([0, 1, 2, 3])),
        b"x",
        *parts,
        complex_=rng.random() < 0.3,
        logical=rng.random() < 0.3,
    )
    return b.header() + b.maybe_compressed(variable if rng.random() < 0.6 else _named(b, variable[:]))


def family_small_elements(rng: random.Random) -> bytes:
    """One element of an otherwise valid variable replaced by a small-format one of any type."""
    b = Build(rng, rng.choice("<>"))
    kind, length = rng.randrange(0, 24), rng.choice([0, 1, 2, 3, 4, 4, 5])
    payload = bytes(rng.getrandbits(8) for _ in range(min(length, 4)))
    word = struct.pack(b.order + "I", (length << 16) | kind)
    small = word + payload.ljust(4, b"\0")
    where = rng.randrange(7)
    if where == 0:  # the values of a numeric array, of any size
        variable = b.matrix(rng.choice([6, 9, 12]), (rng.randrange(1, 3), 1), b"x", small)
    elif where == 1:  # the dimensions
        variable = b.el(14, b.flags(6) + small + b.name(b"x") + b.el(9, bytes(8)))
    elif where == 2:  # the name
        variable = b.el(14, b.flags(6) + b.dims((1, 1)) + small + b.el(9, bytes(8)))
    elif where == 3:  # the flags
        variable = b.el(14, small + b.dims((1, 1)) + b.name(b"x") + b.el(9, bytes(8)))
    elif where == 4:  # char data
        variable = b.matrix(4, (1, rng.randrange(1, 3)), b"x", small)
    elif where == 5:  # a sparse matrix's parts
        parts = [b.el(5, struct.pack("<i", 0)), b.el(5, struct.pack("<2i", 0, 1)), b.el(9, bytes(8))]
        parts[rng.randrange(3)] = small
        variable = b.matrix(5, (1, 1), b"x", *parts, nzmax=1)
    else:  # a struct's field name length or names
        parts = [b.el(5, struct.pack(b.order + "i", 2)), b.el(1, b"a\0"), b.double(b"")]
        parts[rng.randrange(2)] = small
        variable = b.matrix(2, (1, 1), b"x", *parts)
    variable = _named(b, variable) if rng.random() < 0.3 else variable
    return b.header() + b.maybe_compressed(variable)


def family_sparse(rng: random.Random) -> bytes:
    b = Build(rng, rng.choice("<>"))
    rows, cols = rng.choice([0, 1, 3, 5, 2**31 - 1]), rng.choice([0, 1, 3, 4])
    nnz = rng.randrange(0, 6)
    rowind = [rng.choice([0, 1, 2, rows - 1, rows, -1, -5, 2**31 - 1]) for _ in range(nnz)]
    starts = sorted(rng.randrange(0, nnz + 1) for _ in range(cols + 1)) if cols else [0]
    trick = rng.randrange(6)
    if trick == 0 and len(starts) > 2:
        starts[1], starts[2] = starts[2] + 1, starts[1]  # decreasing
    elif trick == 1:
        starts[-1] = rng.choice([nnz + 1, nnz + 100, -1, 2**31 - 1])
    elif trick == 2:
        starts = starts[: rng.randrange(len(starts) + 1)]
    elif trick == 3:
        starts[0] = rng.choice([1, -1])
    values = np.arange(1, nnz + 1, dtype=float)
    index_kind = rng.choice([5, 5, 5, 6, 12, 9])
    code = {5: "i4", 6: "u4", 12: "i8", 9: "f8"}[index_kind]
    parts = [
        b.el(index_kind, np.array(rowind, dtype=np.int64).astype(b.order + code).tobytes()),
        b.el(index_kind, np.array(starts, dtype=np.int64).astype(b.order + code).tobytes()),
        b.el(9, values.astype(b.order + "f8").tobytes()),
    ]
    complex_ = rng.random() < 0.2
    if complex_:
        parts.append(b.el(9, values.astype(b.order + "f8").tobytes()))
    dims = (rows, cols) if rng.random() < 0.9 else rng.choice([(rows,), (rows, cols, 2)])
    variable = b.matrix(5, dims, b"s", *parts, complex_=complex_, logical=rng.random() < 0.2, nzmax=nnz)
    return b.header() + b.maybe_compressed(_named(b, variable) if rng.random() < 0.3 else variable)


def family_depth(rng: random.Random) -> bytes:
    b = Build(rng)
    depth = rng.choice([1, 50, 98, 99, 100, 101, 150])
    variable = _wrap(b, _leaf(b), depth)
    variable = b.cell(b"x", [variable]) if rng.random() < 0.5 else b.struct(b"x", [b"f"], [variable])
    return b.header() + b.maybe_compressed(variable)


def family_many_variables(rng: random.Random) -> bytes:
    b = Build(rng)
    count = rng.choice([10, 1000, 5000])
    names = [b"v%d" % index for index in range(count)]
    if rng.random() < 0.3:
        names[rng.randrange(count)] = names[rng.randrange(count)]  # a duplicate
    if rng.random() < 0.2:
        names[rng.randrange(count)] = b""  # an empty name
    body = b"".join(b.maybe_compressed(b.double(name, 1)) for name in names)
    return b.header(subsystem=rng.choice([0, 128, 0x2020202020202020])) + body


def family_tiny_elements(rng: random.Random) -> bytes:
    b = Build(rng)
    trick = rng.randrange(4)
    if trick == 0:  # many empty cells
        count = rng.choice([1000, 30_000])
        variable = b.matrix(1, (1, count), b"c", b.matrix(1, (0, 0), b"") * count)
    elif trick == 1:  # a struct array without fields: elements in no bytes
        count = rng.choice([10, 70_000, 10**7, 2**31 - 1])
        variable = b.matrix(2, (1, count), b"s", b.el(5, struct.pack("<i", 1)), b.el(1, b""))
    elif trick == 2:  # char data stored in no bytes
        count = rng.choice([5, 70_000, 10**8])
        variable = b.matrix(4, (1, count), b"t", b.el(rng.choice([16, 4]), b""))
    else:  # many empty doubles in a struct array
        count = rng.choice([100, 10_000])
        empty = b.matrix(6, (0, 0), b"", b.el(9, b""))
        variable = b.struct(b"s", [b"a", b"b"], [empty] * (2 * count), count=count)
    return b.header() + b.maybe_compressed(variable)


def family_version4(rng: random.Random) -> bytes:
    out = []
    order = rng.choice("<>")
    for _ in range(rng.randrange(1, 4)):
        if rng.random() < 0.15:
            order = "<" if order == ">" else ">"  # another byte order part-way through
        machine = rng.choice([0, 0, 1, 2, 5]) * 1000
        precision = rng.choice([0, 0, 1, 2, 3, 4, 5, 6])
        kind = rng.choice([0, 0, 1, 2, 2, 3])
        rows, cols = rng.choice([0, 1, 2, 3, 100_000]), rng.choice([0, 1, 3, 4, 5])
        imagf = rng.choice([0, 0, 1, 2])
        name = rng.choice([b"x\0", b"\0", b"ab\0", b"\0x\0", b""])
        namlen = len(name) if rng.random() < 0.9 else rng.choice([0, -1, 2**31 - 1])
        size = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}.get(precision, 8)
        count = rows * cols * (2 if imagf == 1 else 1)
        if kind == 2 and rows and cols >= 2:
            values = np.zeros((rows, cols))
            values[:-1, 0] = [rng.choice([1, 2, 3, 0, -1, 1e12]) for _ in range(rows - 1)]
            values[:-1, 1] = [rng.choice([1, 2, 3, 0, -1, 1.5]) for _ in range(rows - 1)]
            values[-1, 0] = rng.choice([3, 10, 2**31 - 1, -1, float("nan")])
            values[-1, 1] = rng.choice([3, 10, 4e8, 2**40, float("inf"), 1.5])
            data = values.astype(order + "f8").tobytes(order="F")[: count * size]
        else:
            data = bytes(rng.getrandbits(8) for _ in range(min(count * size, 64)))
        if rng.random() < 0.2:
            data = data[: rng.randrange(len(data) + 1)]
        mopt = machine + precision * 10 + kind
        out.append(struct.pack(order + "5i", mopt, rows, cols, imagf, namlen) + name + data)
    return b"".join(out)


def family_header(rng: random.Random) -> bytes:
    b = Build(rng, rng.choice("<>"))
    variables = [b.maybe_compressed(_leaf(b, b"v%d" % index)) for index in range(rng.randrange(1, 4))]
    offsets, position = [], 128
    for variable in variables:
        offsets.append(position)
        position += len(variable)
    subsystem = rng.choice([0, 0x2020202020202020, rng.choice(offsets), 1, 2**63, position])
    version = rng.choice([0x0100, 0x0100, 0x0200, 0x0001, 0xFFFF])
    head = bytearray(b.header(subsystem, version))
    trick = rng.randrange(5)
    if trick == 0:
        head[126:128] = rng.choice([b"MI", b"IM", b"XX", b"\0\0"])
    elif trick == 1:
        head[0:4] = rng.choice([b"\0MAT", b"MA\0T", bytes(4)])  # looks like version 4
    elif trick == 2:
        head[:116] = bytes(rng.getrandbits(8) for _ in range(116))
    return bytes(head) + b"".join(variables)[: rng.choice([None, None, None, 4, 100])]


def family_truncated(rng: random.Random) -> bytes:
    """A well-formed file of a few variables, cut anywhere (or not at all)."""
    b = Build(rng, rng.choice("<>"))
    data = b.header() + b"".join(b.maybe_compressed(_leaf(b, b"v%d" % index)) for index in range(3))
    return data[: rng.choice([len(data), rng.randrange(len(data))])]


def family_char(rng: random.Random) -> bytes:
    b = Build(rng, rng.choice("<>"))
    units = [
        rng.choice([0x41, 0xD800, 0xDBFF, 0xDC00, 0xD83D, 0xDE00, 0x3BB, 0, 0xFFFF])
        for _ in range(rng.randrange(0, 6))
    ]
    kind = rng.choice([4, 4, 16, 17, 18, 2, 1])
    if kind == 16:
        data = "".join(chr(unit) for unit in units).encode("utf-8", "surrogatepass")
        variable = b.matrix(4, (1, len(units)), b"t", b.el(16, data))
    else:
        variable = b.char(b"t", units, kind)
    variable = _named(b, variable, b"c") if rng.random() < 0.3 else variable
    if rng.random() < 0.3:
        rows = b.matrix(
            4,
            (2, len(units)),
            b"m",
            b.el(4, np.array(units * 2, dtype=np.int64).astype(b.order + "u2").tobytes()),
        )
        variable += rows
    return b.header() + b.maybe_compressed(variable)


def _corpus_family(objects: bool) -> Any:
    """Mutated corpus files: those holding MATLAB objects (``objects``), or the others."""

    def family(rng: random.Random, originals: dict[str, bytes]) -> bytes:
        names = sorted(name for name in originals if any(word in name for word in _OBJECT_FILES) == objects)
        return mutate(originals[rng.choice(names or sorted(originals))], rng)

    return family


_OBJECT_FILES = ("object", "func", "user_defined", "matlabstring")


FAMILIES = {
    "lying dims": family_lying_dims,
    "nested objects": family_nested_objects,
    "zlib tricks": family_zlib,
    "class codes": family_class_codes,
    "small-format elements": family_small_elements,
    "sparse": family_sparse,
    "depth": family_depth,
    "many variables": family_many_variables,
    "tiny elements": family_tiny_elements,
    "version 4": family_version4,
    "header fields": family_header,
    "truncation": family_truncated,
    "char data": family_char,
}
CORPUS_FAMILIES = {
    "mutated corpus files": _corpus_family(objects=False),
    "hidden objects": _corpus_family(objects=True),
}


def generated_cases(corpus: Path | None, count: int, base_seed: int) -> list[tuple[str, bytes]]:
    """``count`` cases, the families in turn, each from its own seed."""
    originals = corpus_files(corpus, (4, 5)) if corpus is not None else {}
    families = list(FAMILIES) + (list(CORPUS_FAMILIES) if originals else [])
    cases = []
    for seed in range(base_seed, base_seed + count):
        family = families[seed % len(families)]
        rng = random.Random(seed)
        if family in FAMILIES:
            data = FAMILIES[family](rng)
        else:
            data = CORPUS_FAMILIES[family](rng, originals)
        cases.append((f"{family}, seed {seed}", data))
    return cases


def check_generated(corpus: Path, folder: Path, count: int, base_seed: int) -> list[Result]:
    results = run_cases(generated_cases(corpus, count, base_seed), folder)
    print(summary(results))
    assert findings(results) == []
    return results


def test_generated_version_4_to_7_files_end_in_a_result_or_a_clear_error(corpus, tmp_path):
    check_generated(corpus, tmp_path, 300, base_seed=0)


def test_fuzzed_corpus_files_end_in_a_result_or_a_clear_error(corpus, tmp_path):
    assert fuzz(corpus, tmp_path, 100, base_seed=0) == []


@pytest.mark.slow
def test_generated_files_long_run(corpus, tmp_path):
    check_generated(corpus, tmp_path, 5000, base_seed=100_000)


@pytest.mark.slow
def test_fuzzed_corpus_files_long_run(corpus, tmp_path):
    assert fuzz(corpus, tmp_path, 5000, base_seed=10_000) == []
