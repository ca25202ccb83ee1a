"""Hostile and broken files: crafted allocation bombs, and fuzzed copies of the corpus.

Every case must end in a result or a DLFormatError, within 2 s of CPU time, under 1 GB of extra
address space, without crashing the process that reads it. CPU time (not wall-clock time) is what
the loader costs whatever else the machine runs; a 10 s wall-clock alarm catches hangs.
"""

from __future__ import annotations

import os
import random
import resource
import signal
import struct
import time
import tracemalloc
import zlib
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import h5py
import numpy as np
import pytest

from dlformat import DLFormatError
from dlformat.io import loadmat

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


def _limit_memory() -> None:
    with open("/proc/self/statm") as statm:
        current = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = current + 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class _OverTime(BaseException):
    """Raised by the timers; a BaseException so that no loader code can swallow it."""


def _over_cpu_time(signum, frame):
    raise _OverTime("used over 2 s of CPU time")


def _over_wall_time(signum, frame):
    raise _OverTime("hung for over 10 s")


def run_case(case: tuple[int, str, bytes, str]) -> tuple[int, str, str]:
    """Load one mutated file; return (seed, source, outcome) where outcome is "" when fine."""
    seed, source, data, folder = case
    path = Path(folder) / f"case{seed}.mat"
    path.write_bytes(data)
    signal.signal(signal.SIGPROF, _over_cpu_time)
    signal.signal(signal.SIGALRM, _over_wall_time)
    signal.setitimer(signal.ITIMER_PROF, 2.0)
    signal.alarm(10)
    start = time.process_time()
    try:
        loadmat(path)
        outcome = ""
    except DLFormatError:
        outcome = ""
    except _OverTime as error:
        outcome = str(error)
    except BaseException as error:  # anything else is a finding
        outcome = f"{type(error).__name__}: {error}"[:300]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.alarm(0)
        path.unlink(missing_ok=True)
    if not outcome and time.process_time() - start > 2:
        outcome = "used over 2 s of CPU time"
    return seed, source, outcome


def fuzz(corpus: Path, folder: Path, count: int, base_seed: int) -> list[tuple[int, str, str]]:
    files = sorted(path for path in corpus.glob("*.mat") if path.stat().st_size < 4 * 2**20)
    originals = {path.name: path.read_bytes() for path in files}
    for path in files:
        plain = uncompressed(originals[path.name])
        if plain is not None and plain != originals[path.name]:
            originals[f"{path.name} (uncompressed)"] = plain
    names = sorted(originals)
    cases = []
    for seed in range(base_seed, base_seed + count):
        rng = random.Random(seed)
        name = rng.choice(names)
        cases.append((seed, name, mutate(originals[name], rng), str(folder)))
    with ProcessPoolExecutor(
        max_workers=2, mp_context=get_context("fork"), initializer=_limit_memory
    ) as pool:
        results = list(pool.map(run_case, cases, chunksize=10))
    return [result for result in results if result[2]]


def test_fuzzed_corpus_files_end_in_a_result_or_a_clear_error(corpus, tmp_path):
    assert fuzz(corpus, tmp_path, 300, base_seed=0) == []


@pytest.mark.slow
def test_fuzzed_corpus_files_long_run(corpus, tmp_path):
    assert fuzz(corpus, tmp_path, 5000, base_seed=10_000) == []
