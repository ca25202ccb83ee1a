"""Read a top-level numeric array straight into its final memory (see ``_scan.DirectRead``).

SciPy inflates a compressed variable into one buffer and then builds the array from it, so
loading holds twice the data. Here the values are inflated chunk by chunk into the array
itself; uncompressed values are read into it directly. The scan has already checked every
size against the file, so nothing here trusts a header.
"""

from __future__ import annotations

import io
import zlib

import numpy as np

from .._errors import DLFormatError
from ._scan import DirectRead

CHUNK = 1 << 16  # below glibc's mmap threshold: each chunk reuses warm heap memory, no fresh pages
MIN_BYTES = 1 << 20
"""Smaller arrays go through SciPy like everything else: the saving only matters for large ones."""


def read(file: io.BufferedIOBase, plan: DirectRead, name: str) -> np.ndarray:
    """The array ``plan`` describes, native byte order, MATLAB's shape (column-major)."""
    values = np.empty(plan.nbytes // np.dtype(plan.dtype).itemsize, dtype=plan.dtype)
    # NumPy's stubs declare ndarray's buffer protocol (__buffer__) for Python 3.12+ only
    target = memoryview(values).cast("B")  # type: ignore[arg-type,unused-ignore]
    file.seek(plan.offset)
    if plan.compressed is None:
        filled = file.readinto(target)
    else:
        filled = _inflate_into(file, plan, target, name)
    if filled != plan.nbytes:
        raise DLFormatError(
            f"variable {name!r} is cut short: {filled} of its {plan.nbytes} value bytes present"
        )
    if not values.dtype.isnative:
        values = values.byteswap(inplace=True).view(values.dtype.newbyteorder("="))
    return values.reshape(plan.dims, order="F")


def _inflate_into(file: io.BufferedIOBase, plan: DirectRead, target: memoryview, name: str) -> int:
    inflater = zlib.decompressobj()
    compressed_left = plan.compressed or 0
    skip, filled, pending = plan.skip, 0, b""
    while filled < plan.nbytes:
        if not pending:
            pending = file.read(min(CHUNK, compressed_left))
            compressed_left -= len(pending)
            if not pending:
                break
        try:
            out = inflater.decompress(pending, min(CHUNK, skip + plan.nbytes - filled))
        except zlib.error as error:
            raise DLFormatError(f"variable {name!r}: its compressed data is corrupt ({error})") from None
        pending = inflater.unconsumed_tail
        if skip:
            dropped = min(skip, len(out))
            out, skip = out[dropped:], skip - dropped
        target[filled : filled + len(out)] = out
        filled += len(out)
        if inflater.eof and filled < plan.nbytes:
            break
    # inflate what follows the values (alignment padding) to the end, so that zlib checks the stream
    extra = 0
    while filled == plan.nbytes and not inflater.eof:
        if not pending:
            pending = file.read(min(CHUNK, compressed_left))
            compressed_left -= len(pending)
            if not pending:
                raise DLFormatError(f"variable {name!r}: its compressed data ends before the end marker")
        try:
            padding = inflater.decompress(pending, 8)
        except zlib.error as error:
            raise DLFormatError(f"variable {name!r}: its compressed data is corrupt ({error})") from None
        pending = inflater.unconsumed_tail
        extra += len(padding)
        if extra > 7 or (not padding and not pending and not compressed_left and not inflater.eof):
            raise DLFormatError(f"variable {name!r}: its compressed data holds more than its declared values")
    return filled
