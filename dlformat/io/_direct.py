"""Read a top-level numeric array straight into its final memory (see :class:`DirectRead`).

SciPy inflates a compressed variable into one buffer and then builds the array from it, so
loading holds twice the data. Here the values are inflated chunk by chunk into the array
itself; uncompressed values are read into it directly. The scan has checked every size against
the file but has not inflated these values: the array grows as inflated data arrives (a stream
that yields less than it declares never gets the memory it declares), and the stream must end
where the values (and their padding) end, with nothing after it.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass

import numpy as np

from .._errors import DLFormatError

CHUNK = 1 << 16  # below glibc's mmap threshold: each chunk reuses warm heap memory, no fresh pages
FIRST_BYTES = 1 << 24  # a compressed array's first allocation; it doubles as data arrives
MIN_BYTES = 1 << 20
"""Smaller arrays go through SciPy like everything else: the saving only matters for large ones.
The scan leaves the values of larger ones uninflated, for this reader to check."""


@dataclass(frozen=True)
class DirectRead:
    """Where a top-level real numeric array's values lie, stored in its own class.

    For such an array SciPy's result is exactly these bytes, reshaped; reading them straight
    into the array (inflating a compressed variable chunk by chunk) avoids holding the file's
    bytes and the array at once. ``offset`` is the values' file offset, or for a compressed
    variable the offset of its compressed data, in which the values start ``skip`` bytes
    into the inflated stream. The scan leaves such values unread: the reader checks them.
    """

    dtype: str  # NumPy dtype in the file's byte order, e.g. "<f4"
    dims: tuple[int, ...]
    nbytes: int
    offset: int
    compressed: int | None = None  # compressed bytes, or None for uncompressed values
    skip: int = 0


def read(file: io.BufferedIOBase, plan: DirectRead, name: str) -> np.ndarray:
    """The array ``plan`` describes, native byte order, MATLAB's shape (column-major)."""
    if plan.compressed is None:
        values = np.empty(plan.nbytes // np.dtype(plan.dtype).itemsize, dtype=plan.dtype)
        # NumPy's stubs declare ndarray's buffer protocol (__buffer__) for Python 3.12+ only
        target = memoryview(values).cast("B")  # type: ignore[arg-type,unused-ignore]
        file.seek(plan.offset)
        filled = file.readinto(target)
        target.release()
    else:
        values, filled = _inflate(file, plan, name)
    if filled != plan.nbytes:
        raise DLFormatError(
            f"variable {name!r} is cut short: {filled} of its {plan.nbytes} value bytes present"
        )
    if not values.dtype.isnative:
        values = values.byteswap(inplace=True).view(values.dtype.newbyteorder("="))
    return values.reshape(plan.dims, order="F")


def _inflate(file: io.BufferedIOBase, plan: DirectRead, name: str) -> tuple[np.ndarray, int]:
    """Inflate the values into an array that grows (doubling) as they arrive."""
    itemsize = np.dtype(plan.dtype).itemsize
    capacity = min(plan.nbytes, FIRST_BYTES)
    values = np.empty(capacity // itemsize, dtype=plan.dtype)
    target = memoryview(values).cast("B")  # type: ignore[arg-type,unused-ignore]
    inflater = zlib.decompressobj()
    compressed_left = plan.compressed or 0
    skip, filled, pending = plan.skip, 0, b""
    file.seek(plan.offset)

    def more() -> bytes:
        nonlocal compressed_left
        data = file.read(min(CHUNK, compressed_left))
        compressed_left -= len(data)
        return data

    def corrupt(error: zlib.error) -> DLFormatError:
        return DLFormatError(f"variable {name!r}: its compressed data is corrupt ({error})")

    while filled < plan.nbytes and not inflater.eof:
        if filled == capacity:
            target.release()
            capacity = min(plan.nbytes, capacity * 2)
            values.resize(capacity // itemsize, refcheck=False)
            target = memoryview(values).cast("B")  # type: ignore[arg-type,unused-ignore]
        if not pending:
            pending = more()
            if not pending:
                break
        try:
            out = inflater.decompress(pending, min(CHUNK, skip + capacity - filled))
        except zlib.error as error:
            raise corrupt(error) from None
        pending = inflater.unconsumed_tail
        if skip:
            dropped = min(skip, len(out))
            out, skip = out[dropped:], skip - dropped
        target[filled : filled + len(out)] = out
        filled += len(out)
    target.release()
    # inflate what follows the values (alignment padding) to the end, so that zlib checks the stream
    extra = 0
    while filled == plan.nbytes and not inflater.eof:
        if not pending:
            pending = more()
            if not pending:
                raise DLFormatError(f"variable {name!r}: its compressed data ends before the end marker")
        try:
            padding = inflater.decompress(pending, 8)
        except zlib.error as error:
            raise corrupt(error) from None
        pending = inflater.unconsumed_tail
        extra += len(padding)
        if extra > 7:
            raise DLFormatError(f"variable {name!r}: its compressed data holds more than its declared values")
    if inflater.eof and (inflater.unused_data or pending or compressed_left):
        raise DLFormatError(
            f"variable {name!r}: its compressed element goes on after the end of its zlib stream "
            "(a second stream or trailing bytes)"
        )
    return values, filled
