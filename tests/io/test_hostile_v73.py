"""Hostile version 7.3 (HDF5) files: crafted regressions, and a fuzzer of six families.

The families (issue 11): class-attribute lies, huge dimensions, reference cycles and fan-out,
external storage and links, compound and other HDF5 types, corrupted bytes. Each fuzz case is
read (``loadmat``, then ``whos``) in its own forked process, under an address-space limit
(what the process holds, its memory bound and 256 MiB for libraries), a CPU-time limit of 2 s +
2 µs a byte and a 20 s wall-clock limit, and must end in a result or a DLFormatError: no
signal, no hang, no other exception (a MemoryError, even wrapped in a DLFormatError, is a
finding), at most 64 MiB + 20,000 × the file's size of resident memory above what the process
held before, and no result at all for a file that reaches outside itself. 120 cases run in the
default suite, 2,000 more under ``slow``.
"""

from __future__ import annotations

import os
import random
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import h5py
import numpy as np
import pytest

from dlformat import DLFormatError
from dlformat.io import loadmat, savemat, whos

MAT_HEADER = b"MATLAB 7.3 MAT-file, crafted by dlformat's tests".ljust(116, b" ") + b" " * 8 + b"\x00\x02IM"


def crafted(path: Path, build, libver: str = "earliest") -> Path:
    """A version 7.3 file: ``build(file)`` fills an HDF5 file, which gets MATLAB's header."""
    with h5py.File(path, "w", userblock_size=512, libver=libver) as file:
        build(file)
    with open(path, "r+b") as raw:
        raw.write(MAT_HEADER)
    return path


def classed(obj, matlab_class: str = "double"):
    obj.attrs["MATLAB_class"] = np.bytes_(matlab_class)
    return obj


def double(parent, name: str, value=1.0):
    return classed(parent.create_dataset(name, data=np.full((1, 1), value)))


def cell(parent, name: str, references):
    data = np.array(references, dtype=h5py.ref_dtype).reshape(1, -1)
    return classed(parent.create_dataset(name, data=data), "cell")


def fan_out(file, depth: int, width: int = 2) -> None:
    """``c``: a chain of ``depth`` cells, each holding ``width`` references to the next."""
    refs = file.create_group("#refs#")
    target = double(refs, "leaf").ref
    for level in range(depth):
        target = cell(refs, f"n{level}", [target] * width).ref
    cell(file, "c", [target])


# -- defect 8: an object reached by many references is read and listed once ---------------------
@pytest.mark.parametrize("read", [loadmat, whos], ids=["loadmat", "whos"])
def test_a_chain_of_cells_holding_two_references_each_takes_linear_time(tmp_path, read):
    path = crafted(tmp_path / "fan.mat", lambda file: fan_out(file, 40))
    assert path.stat().st_size < 20_000
    start = time.process_time()
    result = read(path)
    assert time.process_time() - start < 0.5
    if read is loadmat:  # 2^40 paths, one object each level: shared, as in the file
        level = result["c"][0, 0]
        assert level[0, 0] is level[1, 0]
    else:
        assert len(result) == 41
        assert (
            result[1].path
            == "c{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{1}{2}"
        )
        assert result[-1].path == "c{1}{2}" and result[-1].matlab_class == "cell (same as c{1}{1})"


def test_a_shared_object_is_listed_once_with_where_it_was_first_seen(tmp_path):
    def build(file):
        refs = file.create_group("#refs#")
        leaf = double(refs, "leaf", 2.0).ref
        inner = cell(refs, "inner", [leaf, leaf]).ref
        cell(file, "c", [inner, inner, leaf])

    path = crafted(tmp_path / "shared.mat", build)
    assert [(e.path, e.matlab_class, e.shape) for e in whos(path)] == [
        ("c{1}{1}", "double", (1, 1)),
        ("c{1}{2}", "double (same as c{1}{1})", (1, 1)),
        ("c{2}", "cell (same as c{1})", (2, 1)),
        ("c{3}", "double (same as c{1}{1})", (1, 1)),
    ]
    loaded = loadmat(path)["c"].ravel()
    assert loaded[1] is loaded[0] and loaded[2] is loaded[0][0, 0]
    assert loaded[2].tolist() == [[2.0]]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda file: (cell(file, "x", [file.ref]), classed(file, "struct")),
            r"variable 'x\{1\}.x' refers back to 'x', which contains it \(a reference cycle",
        ),
        (
            lambda file: classed(file.create_group("s"), "struct").__setitem__("t", file["s"]),
            r"variable 's.t' refers back to 's', which contains it \(a reference cycle",
        ),
    ],
    ids=["a cell that refers to the root group", "a struct that holds itself by a hard link"],
)
def test_objects_that_hold_themselves_are_refused(tmp_path, build, message):
    path = crafted(tmp_path / "cycle.mat", build)
    for read in (loadmat, whos):
        with pytest.raises(DLFormatError, match=message):
            read(path)


def test_a_chunk_larger_than_the_file_can_hold_is_refused(tmp_path):
    def build(file):
        classed(file.create_dataset("x", shape=(1,), maxshape=(None,), chunks=(2**28,), dtype="u1"), "uint8")

    path = crafted(tmp_path / "chunk.mat", build)
    with pytest.raises(DLFormatError, match=r"variable 'x' is stored in chunks of 268435456 bytes"):
        loadmat(path)
    assert [entry.shape for entry in whos(path)] == [(1, 1)]  # whos reads no value


# -- defects 9 and 12: nothing outside the file is read ------------------------------------------
def _other_file(folder: Path) -> Path:
    return crafted(folder / "other.mat", lambda file: double(file, "y", 7.0))


def _external_storage(file, target: str, size: int = 16, name: str = "x"):
    return classed(
        file.create_dataset(name, shape=(1, size), dtype="u1", external=[(target, 0, size)]), "uint8"
    )


def _virtual(file, folder: Path) -> None:
    layout = h5py.VirtualLayout(shape=(1, 1), dtype="f8")
    layout[0, 0] = h5py.VirtualSource(str(_other_file(folder)), "y", shape=(1, 1))
    classed(file.create_virtual_dataset("x", layout))


def _in_a_cell(file, folder: Path) -> None:
    target = _external_storage(file.create_group("#refs#"), "/etc/passwd", name="a")
    cell(file, "x", [target.ref])


def _as_a_field(file, folder: Path) -> None:
    group = classed(file.create_group("x"), "struct")
    group["w"] = h5py.ExternalLink(str(_other_file(folder)), "/y")


OUTSIDE = {
    "external storage: /etc/passwd": (
        lambda file, folder: _external_storage(file, "/etc/passwd", os.path.getsize("/etc/passwd")),
        r"variable 'x' keeps its data in the external file '/etc/passwd' \(HDF5 external storage\)",
    ),
    "external storage: a relative name": (
        lambda file, folder: _external_storage(file, "passwd"),
        r"variable 'x' keeps its data in the external file 'passwd'",
    ),
    "external storage: in a cell": (_in_a_cell, r"variable 'x\{1\}' keeps its data in the external file"),
    "external link": (
        lambda file, folder: file.__setitem__("x", h5py.ExternalLink(str(_other_file(folder)), "/y")),
        r"variable 'x' is an external link to '.*other\.mat:/y'; MATLAB writes no HDF5 links",
    ),
    "external link: a struct field": (_as_a_field, r"variable 'x\.w' is an external link"),
    "soft link": (
        lambda file, folder: (double(file, "y"), file.__setitem__("x", h5py.SoftLink("/y"))),
        r"variable 'x' is a soft link to '/y'",
    ),
    "soft link: dangling": (
        lambda file, folder: file.__setitem__("x", h5py.SoftLink("/nowhere/x")),
        r"variable 'x' is a soft link to '/nowhere/x'",
    ),
    "virtual dataset": (
        _virtual,
        r"variable 'x' is an HDF5 virtual dataset \(its data lies in other files\)",
    ),
}


@pytest.mark.parametrize("read", [loadmat, whos], ids=["loadmat", "whos"])
@pytest.mark.parametrize("case", list(OUTSIDE))
def test_hdf5_features_that_reach_outside_the_file_are_refused(tmp_path, case, read):
    build, message = OUTSIDE[case]
    path = crafted(tmp_path / "x.mat", lambda file: build(file, tmp_path), libver="latest")
    with pytest.raises(DLFormatError, match=message):
        read(path)


def test_the_2104_byte_file_that_returned_etc_passwd(tmp_path):
    size = os.path.getsize("/etc/passwd")
    path = crafted(tmp_path / "passwd.mat", lambda file: _external_storage(file, "/etc/passwd", size))
    assert path.stat().st_size < 2200  # the file was 2,104 bytes
    with pytest.raises(
        DLFormatError, match=r"variable 'x' keeps its data in the external file '/etc/passwd'"
    ):
        loadmat(path)


@pytest.mark.parametrize("read", ["loadmat", "whos"])
def test_external_storage_in_a_fifo_is_refused_without_blocking(tmp_path, read):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    path = crafted(tmp_path / "fifo.mat", lambda file: _external_storage(file, str(fifo)))
    result = isolated(Case(0, "fifo", path.read_bytes(), read), tmp_path, wall=10)
    assert result.outcome == "DLFormatError", result
    assert "keeps its data in the external file" in result.detail


# -- defect 16: char data is UTF-16 -------------------------------------------------------------
@pytest.mark.parametrize(
    ("codes", "text"),
    [
        ([0xD800, ord("A")], "\ufffdA"),  # a lone high surrogate
        ([ord("A"), 0xDC00], "A\ufffd"),  # a lone low surrogate
        ([0xDE00, 0xD83D], "\ufffd\ufffd"),  # a pair in the wrong order
        ([0xD83D, 0xDE00], "😀"),  # a pair: one character, as MATLAB stores an emoji
        ([ord("é"), 0x4E2D], "é中"),
    ],
)
def test_char_data_is_read_as_utf16_with_lone_surrogates_replaced(tmp_path, codes, text):
    def build(file):
        data = np.array([codes], dtype=np.uint16).T
        classed(file.create_dataset("t", data=data), "char").attrs["MATLAB_int_decode"] = np.int32(2)

    path = crafted(tmp_path / "t.mat", build)
    assert loadmat(path)["t"] == text
    assert whos(path)[0].shape == (1, len(codes))


def test_inspect_prints_a_learnables_file_whose_names_hold_lone_surrogates(tmp_path):
    def build(file):
        refs = file.create_group("#refs#")
        names = {"Layer": [0xD800, ord("a")], "Parameter": [ord(c) for c in "Weights"]}
        for column, codes in names.items():
            text = classed(refs.create_dataset(column, data=np.array([codes], np.uint16).T), "char")
            text.attrs["MATLAB_int_decode"] = np.int32(2)
            cell(file, column, [text.ref])
        cell(file, "Value", [double(refs, "v").ref])

    path = crafted(tmp_path / "l.mat", build)
    result = subprocess.run(
        [sys.executable, "-m", "dlformat", "inspect", str(path)],
        capture_output=True,
        env=os.environ | {"PYTHONIOENCODING": "utf-8"},
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    rows = [line.split()[:4] for line in result.stdout.decode().splitlines()]
    assert ["\ufffda", "Weights", "1×1", "float64"] in rows


# -- defect 25: broken attributes are called broken ---------------------------------------------
def _attribute(name, value, matlab_class="double"):
    def build(file):
        dataset = classed(file.create_dataset("x", data=np.ones((1, 1))), matlab_class)
        if value is None:
            del dataset.attrs[name]
        else:
            dataset.attrs[name] = value

    return build


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            _attribute("MATLAB_class", np.int64(6)),
            r"variable 'x' has a broken MATLAB_class attribute \(int64 6\)",
        ),
        (_attribute("MATLAB_class", 2.5), r"broken MATLAB_class attribute \(float64 2.5\)"),
        (_attribute("MATLAB_class", np.bytes_("")), r"broken MATLAB_class attribute"),
        (_attribute("MATLAB_class", np.bytes_(b"\xff\xfe")), r"broken MATLAB_class attribute"),
        (_attribute("MATLAB_class", np.bytes_("dou ble")), r"broken MATLAB_class attribute"),
        (
            _attribute("MATLAB_class", np.array([1, 2, 3, 4, 5])),
            r"broken MATLAB_class attribute \(int64 \[1, 2, 3, 4\] ...\)",
        ),
        (_attribute("MATLAB_class", None), r"'x' has no MATLAB_class attribute"),
        # strings that join into a class name: once listed as a "double (object)" or
        # "doublesingle (object)", and read with a raw NumPy error
        (_attribute("MATLAB_class", np.array([b"dou", b"ble"])), r"broken MATLAB_class attribute \(\|S3"),
        (_attribute("MATLAB_class", np.array([b"double", b"single"])), r"broken MATLAB_class attribute"),
        (_attribute("MATLAB_empty", np.bytes_("yes")), r"variable 'x' has a broken MATLAB_empty attribute"),
        (_attribute("MATLAB_empty", np.zeros(0)), r"variable 'x' has a broken MATLAB_empty attribute"),
        (_attribute("MATLAB_empty", np.nan), r"variable 'x' has a broken MATLAB_empty attribute"),
    ],
    ids=[
        "a number",
        "a float",
        "empty",
        "not text",
        "a space",
        "an array",
        "missing",
        "strings joined",
        "two class names",
        "text",
        "no value",
        "NaN",
    ],
)
def test_broken_attributes_are_reported_as_broken(tmp_path, build, message):
    path = crafted(tmp_path / "x.mat", build)
    for read in (loadmat, whos):
        with pytest.raises(DLFormatError, match=message):
            read(path)


def test_a_class_attribute_stored_as_a_variable_length_string_is_read(tmp_path):
    path = crafted(tmp_path / "x.mat", _attribute("MATLAB_class", "single"))  # h5py: variable-length
    assert loadmat(path)["x"].dtype == np.float32


# -- the fuzzer ---------------------------------------------------------------------------------
MEMORY_BOUND = 64 * 2**20  # + MEMORY_PER_BYTE × the file's size
MEMORY_PER_BYTE = 20_000
CPU_SECONDS = 2.0  # + CPU_PER_BYTE × the file's size, for loadmat and whos together
CPU_PER_BYTE = 2e-6  # MATLAB's files take about 0.3 µs a byte each (a forked process, twice that)


OUTSIDE_FAMILY = "external storage and links"  # every case of it reaches, or tries to, outside


@dataclass(frozen=True)
class Case:
    seed: int
    family: str
    data: bytes
    read: str = "both"  # "loadmat", "whos" or both


@dataclass(frozen=True)
class Result:
    case: Case
    outcome: str  # "ok", "DLFormatError", or the finding
    detail: str = ""
    seconds: float = 0.0  # CPU time
    peak: int = 0  # resident bytes above the process's own before reading

    @property
    def finding(self) -> bool:
        if self.case.family == OUTSIDE_FAMILY and self.outcome == "ok":
            return True  # every case of that family reaches outside the file, or tries to
        return self.outcome not in ("ok", "DLFormatError")


def _status(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(field)


class _OverTime(BaseException):
    """Raised by the CPU timer; a BaseException so that no reader code can swallow it."""


def _over_time(signum, frame):
    raise _OverTime("used more CPU time than its size allows")


def _memory_error_inside(error: BaseException) -> bool:
    while error is not None:
        if isinstance(error, MemoryError):
            return True
        error = error.__cause__ or error.__context__
    return False


def _child(case: Case, path: str, connection) -> None:
    bound = MEMORY_BOUND + MEMORY_PER_BYTE * len(case.data)
    # address space: what the process holds, the bound, and room for libraries' own mappings
    limit = _status("VmSize") + bound + 256 * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak (VmHWM) starts again from here
    baseline = _status("VmRSS")
    signal.signal(signal.SIGPROF, _over_time)
    signal.setitimer(signal.ITIMER_PROF, CPU_SECONDS + CPU_PER_BYTE * len(case.data))
    start = time.process_time()
    results = []
    try:
        if case.read in ("loadmat", "both"):
            results.append(loadmat(path))
        if case.read in ("whos", "both"):
            results.append(whos(path))
        outcome, detail = "ok", ""
    except DLFormatError as error:
        outcome, detail = "DLFormatError", str(error)
        if _memory_error_inside(error):
            outcome = "MemoryError (as a DLFormatError)"
    except _OverTime as error:
        outcome, detail = "over time", str(error)
    except BaseException as error:  # anything else is a finding
        outcome, detail = type(error).__name__, str(error)
    signal.setitimer(signal.ITIMER_PROF, 0)
    seconds = time.process_time() - start
    peak = _status("VmHWM") - baseline
    connection.send((outcome, detail[:500], seconds, peak))
    connection.close()


def run_all(cases: list[Case], folder: Path, workers: int = 2, wall: float = 20.0) -> list[Result]:
    """Every case in its own process, ``workers`` at a time (forked from this thread alone)."""
    pending, running, results = list(reversed(cases)), [], []
    while pending or running:
        while pending and len(running) < workers:
            case = pending.pop()
            running.append((case, _launch(case, folder), time.monotonic()))
        time.sleep(0.002)
        still = []
        for case, launched, started in running:
            process = launched[0]
            if process.is_alive() and not launched[1].poll() and time.monotonic() - started < wall:
                still.append((case, launched, started))
            else:
                results.append(_finish(case, launched, wall))
        running = still
    return sorted(results, key=lambda result: result.case.seed)


def _launch(case: Case, folder: Path):
    path = folder / f"case{case.seed}.mat"
    path.write_bytes(case.data)
    context = get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(case, str(path), sender))
    process.start()
    sender.close()
    return process, receiver, path


def _finish(case: Case, launched, wall: float) -> Result:
    process, receiver, path = launched
    try:
        if receiver.poll():
            try:
                outcome, detail, seconds, peak = receiver.recv()
            except EOFError:
                process.join(wall)
                return Result(case, f"killed by signal {-(process.exitcode or 0)}")
            bound = MEMORY_BOUND + MEMORY_PER_BYTE * len(case.data)
            if outcome in ("ok", "DLFormatError") and peak > bound:
                return Result(case, "over memory", f"peak {peak} bytes, bound {bound}", seconds, peak)
            return Result(case, outcome, detail, seconds, peak)
        return Result(case, "hang", f"no answer within {wall} s")
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        receiver.close()
        path.unlink(missing_ok=True)


def isolated(case: Case, folder: Path, wall: float = 20.0) -> Result:
    """Read one case in a forked process; what it did, or how it died."""
    return run_all([case], folder, workers=1, wall=wall)[0]


# -- the six families ---------------------------------------------------------------------------
def _base_values(rng: random.Random) -> dict:
    cells = np.empty((2, 2), dtype=object)
    cells[0, 0], cells[1, 0], cells[0, 1] = "text", np.ones((2, 3, 4), np.int16), {"inner": np.eye(2)}
    cells[1, 1] = np.empty((0, 3), dtype=object)
    everything = {
        "d": np.arange(6.0).reshape(2, 3), "f": np.ones((1, 5), np.float32), "u": np.ones((3, 1), np.uint64),
        "z": np.array([[1 + 2j, 3]], np.complex64), "b": np.array([[True, False]]), "t": "hello😀", "e": "",
        "rows": np.array(["ab", "cd", "ef"]), "sp": scipy_sparse(), "c": cells,
        "s": {"a": np.zeros((2, 2)), "n": {"deep": np.ones((1, 1))}, "none": {}},
        "arr": [{"x": np.ones((1, 2)), "y": "q"}, {"x": np.ones((3, 1)), "y": ""}],
        "empty": np.zeros((0, 4)), "big": np.arange(3000.0).reshape(50, 60),
    }  # fmt: skip
    names = rng.sample(sorted(everything), rng.randint(1, len(everything)))
    return {name: everything[name] for name in names}


def scipy_sparse():
    import scipy.sparse

    return scipy.sparse.csc_matrix(np.array([[0, 1.5, 0], [2, 0, 0], [0, 0, 3]]))


def _corpus_files() -> list[Path]:
    folder = os.environ.get("DLFORMAT_MATLAB_CORPUS")
    if not folder:
        return []
    return sorted(p for p in Path(folder).glob("*.mat") if p.read_bytes()[512:520] == b"\x89HDF\r\n\x1a\n")


def _base(rng: random.Random, path: Path) -> Path:
    corpus = _corpus_files()
    if corpus and rng.random() < 0.3:
        path.write_bytes(rng.choice(corpus).read_bytes())
    else:
        savemat(path, _base_values(rng), version="7.3")
    return path


def _objects(file) -> list:
    found = []
    file.visititems(
        lambda name, obj: found.append(obj) if isinstance(obj, (h5py.Dataset, h5py.Group)) else None
    )
    return [*found, file]


CLASS_LIES = [
    *(np.bytes_(name) for name in ("double", "single", "int8", "uint64", "char", "logical", "cell", "struct")),
    *(np.bytes_(name) for name in ("function_handle", "string", "table", "sparse", "x" * 3000, "")),
    np.int64(6), 2.5, np.array([b"dou", b"ble"]), np.bytes_(b"\xff\xfe"), "double", np.arange(5), np.zeros(0),
]  # fmt: skip
FLAG_LIES = [
    np.uint8(1),
    np.uint8(0),
    np.bytes_("yes"),
    np.array([1, 2]),
    np.nan,
    2**62,
    -1,
    np.zeros(0),
    1.5,
]


def family_class_lies(rng: random.Random, path: Path) -> None:
    _base(rng, path)
    with h5py.File(path, "r+") as file:
        objects = _objects(file)
        for _ in range(rng.randint(1, 3)):
            obj = rng.choice(objects)
            what = rng.choice(
                ["class", "class", "class", "delete", "empty", "sparse", "decode", "fields", "object"]
            )
            attrs = obj.attrs
            if what == "class":
                attrs["MATLAB_class"] = rng.choice(CLASS_LIES)
            elif what == "delete" and "MATLAB_class" in attrs:
                del attrs["MATLAB_class"]
            elif what == "empty":
                attrs["MATLAB_empty"] = rng.choice(FLAG_LIES)
            elif what == "sparse":
                attrs["MATLAB_sparse"] = rng.choice(FLAG_LIES)
            elif what == "decode":
                attrs["MATLAB_int_decode"] = rng.choice(FLAG_LIES)
            elif what == "object":
                attrs["MATLAB_object_decode"] = rng.choice(FLAG_LIES)
            else:
                names = rng.choice([[], ["nope"], ["a/b"], [".."], ["x"] * 3, ["é"], [""]])
                data = np.empty(len(names), dtype=h5py.vlen_dtype(np.dtype("S1")))
                for index, name in enumerate(names):
                    data[index] = np.frombuffer(name.encode(), dtype="S1")
                attrs["MATLAB_fields"] = rng.choice([data, obj.ref if rng.random() < 0.5 else data])


def family_huge_dims(rng: random.Random, path: Path) -> None:
    def build(file):
        kind = rng.choice(
            ["chunked", "empty", "sparse", "null", "scalar refs", "struct array", "fields", "cell", "chunk"]
        )
        huge = rng.choice([2**20, 2**31, 2**40, 2**62])
        if kind == "chunked":
            matlab_class = rng.choice(["double", "char", "logical", "int8", "struct"])
            classed(
                file.create_dataset("x", shape=(huge, rng.choice([1, 3, huge])), dtype="f8", chunks=(1, 1)),
                matlab_class,
            )
        elif kind == "empty":
            dims = rng.choice(
                [[huge, 0], [0, huge, huge], [huge, huge], [2**20, 1], [10**6, 2], [2**64 - 1, 0], [3]]
            )
            dataset = classed(
                file.create_dataset("x", data=np.array(dims, dtype=np.uint64)),
                rng.choice(["struct", "cell", "double", "char", "logical"]),
            )
            dataset.attrs["MATLAB_empty"] = np.uint8(1)
        elif kind == "sparse":
            group = classed(file.create_group("x"), rng.choice(["double", "logical"]))
            group.attrs["MATLAB_sparse"] = np.uint64(rng.choice([huge, 3]))
            columns = rng.choice([2, huge])
            group.create_dataset("jc", shape=(columns + 1,), dtype="u8", chunks=(1,))
            if rng.random() < 0.5:
                group.create_dataset("ir", shape=(rng.choice([1, 2, huge]),), dtype="u8", chunks=(1,))
                group.create_dataset("data", shape=(rng.choice([1, 2, huge]),), dtype="f8", chunks=(1,))
        elif kind == "chunk":  # a chunk far larger than the dataset, which HDF5 inflates whole
            dataset = file.create_dataset(
                "x", shape=(1,), maxshape=(None,), chunks=(min(huge, 2**28),), dtype="u1"
            )
            if rng.random() < 0.5:
                dataset[0] = 1
            classed(dataset, "uint8")
        elif kind == "null":
            classed(file.create_dataset("x", data=h5py.Empty("f8")), rng.choice(["double", "cell", "char"]))
        elif kind == "scalar refs":
            target = double(file.create_group("#refs#"), "a")
            classed(file.create_dataset("x", data=target.ref, dtype=h5py.ref_dtype), "cell")
        elif kind == "struct array":
            group = classed(file.create_group("x"), "struct")
            for field in ("a", "b"):
                group.create_dataset(field, shape=(huge, 1), dtype=h5py.ref_dtype, chunks=(1, 1))
        elif kind == "fields":
            group = classed(file.create_group("x"), "struct")
            count = rng.choice([600, 5000])
            names = np.empty(count, dtype=h5py.vlen_dtype(np.dtype("S1")))
            for index in range(count):
                names[index] = np.frombuffer(f"f{index}".encode(), dtype="S1")
            refs = file.create_group("#refs#")
            group.attrs["MATLAB_fields"] = refs.create_dataset("names", data=names).ref
        else:
            classed(file.create_dataset("x", shape=(huge, 2), dtype=h5py.ref_dtype, chunks=(1, 1)), "cell")

    crafted(path, build)


def family_references(rng: random.Random, path: Path) -> None:
    def build(file):
        kind = rng.choice(
            [
                "fan-out",
                "fan-out",
                "self",
                "pair",
                "struct",
                "struct array",
                "root",
                "group",
                "null",
                "region",
                "wide",
                "deep",
                "fields",
            ]
        )
        refs = file.create_group("#refs#")
        if kind == "fan-out":
            del file["#refs#"]
            fan_out(file, rng.randint(1, 90), rng.randint(1, 6))
        elif kind == "self":
            a = classed(refs.create_dataset("a", shape=(1, rng.randint(1, 4)), dtype=h5py.ref_dtype), "cell")
            a[0, :] = a.ref
            cell(file, "x", [a.ref])
        elif kind == "pair":
            a = classed(refs.create_dataset("a", shape=(1, 2), dtype=h5py.ref_dtype), "cell")
            b = cell(refs, "b", [a.ref, a.ref])
            a[0, :] = b.ref
            cell(file, "x", [a.ref, b.ref])
        elif kind == "struct":
            group = classed(refs.create_group("s"), "struct")
            cell(group, "f", [group.ref])
            cell(file, "x", [group.ref])
        elif kind == "struct array":
            group = classed(file.create_group("x"), "struct")
            group.create_dataset("f", data=np.array([[group.ref, group.ref]], dtype=h5py.ref_dtype))
        elif kind == "root":
            classed(file, "struct")
            cell(file, "x", [file.ref])
        elif kind == "group":
            cell(file, "x", [refs.ref, file.ref])
        elif kind == "null":
            classed(file.create_dataset("x", shape=(1, 3), dtype=h5py.ref_dtype), "cell")
        elif kind == "region":
            target = double(refs, "a")
            data = np.array([target.regionref[0:1, 0:1]], dtype=h5py.regionref_dtype)
            classed(file.create_dataset("x", data=data), "cell")
        elif kind == "wide":
            target = double(refs, "a").ref
            count = rng.choice([1000, 100_000, 1_000_000])
            data = np.empty((count, 1), dtype=h5py.ref_dtype)
            data[:] = target
            classed(
                file.create_dataset("x", data=data, compression="gzip", chunks=(min(count, 100_000), 1)),
                "cell",
            )
        elif kind == "deep":
            target = double(refs, "leaf").ref
            for level in range(rng.randint(90, 130)):
                target = cell(refs, f"n{level}", [target]).ref
            cell(file, "x", [target])
        else:
            group = classed(file.create_group("x"), "struct")
            group.attrs["MATLAB_fields"] = rng.choice([group.ref, refs.ref, double(refs, "a").ref])

    crafted(path, build, libver=rng.choice(["earliest", "latest"]))


def family_outside(rng: random.Random, path: Path) -> None:
    folder = path.parent
    fifo = folder / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    other = folder / "other.mat"
    if not other.exists():
        crafted(other, lambda file: double(file, "y", 7.0))

    def build(file):
        kind = rng.choice(["storage", "storage", "external link", "soft link", "virtual"])
        where = rng.choice(["top", "cell", "field", "sparse", "empty", "struct array"])
        refs = file.create_group("#refs#")
        if where == "top":
            parent, name = file, "x"
        elif where == "field":
            parent, name = classed(file.create_group("x"), "struct"), "w"
        else:
            parent, name = refs, "a"
        if kind == "storage":
            target = rng.choice(["/etc/passwd", "/dev/zero", "/dev/urandom", str(fifo), "missing", "../x"])
            dataset = parent.create_dataset(name, shape=(1, 8), dtype="u1", external=[(target, 0, 8)])
            classed(dataset, rng.choice(["uint8", "char", "cell", "double"]))
            if where == "empty":
                dataset.attrs["MATLAB_empty"] = np.uint8(1)
        elif kind == "external link":
            target = rng.choice(
                [(str(other), "/y"), ("/etc/passwd", "/x"), (str(path), "/x"), (str(fifo), "/")]
            )
            parent[name] = h5py.ExternalLink(*target)
        elif kind == "soft link":
            double(refs, "b")
            parent[name] = h5py.SoftLink(
                rng.choice(["/#refs#/b", "/", "/nowhere", f"{parent.name}/{name}", "/x"])
            )
        else:
            layout = h5py.VirtualLayout(shape=(1, 1), dtype="f8")
            layout[0, 0] = h5py.VirtualSource(rng.choice([str(other), str(path)]), "y", shape=(1, 1))
            classed(parent.create_virtual_dataset(name, layout))
        if parent is not refs:
            return
        link = refs.get("a", getlink=True)
        if not isinstance(link, h5py.HardLink):  # a link: met as a struct field
            classed(file.create_group("x"), "struct")["w"] = link
        elif where == "sparse":
            group = classed(file.create_group("x"), "double")
            group.attrs["MATLAB_sparse"] = np.uint64(1)
            group.create_dataset("jc", data=np.array([0, 1], dtype=np.uint64))
            group.create_dataset("ir", data=np.array([0], dtype=np.uint64))
            group["data"] = refs["a"]
        elif where == "struct array":
            group = classed(file.create_group("x"), "struct")
            group.create_dataset("f", data=np.array([[refs["a"].ref]], dtype=h5py.ref_dtype))
        elif where == "empty":
            file["x"] = refs["a"]  # a second hard link
        else:
            cell(file, "x", [refs["a"].ref])

    crafted(path, build, libver="latest")


COMPOUND_TYPES = [
    np.dtype([("real", "f8"), ("imag", "f8")]), np.dtype([("real", "f4"), ("imag", "f8")]),
    np.dtype([("real", "i1"), ("imag", "u8")]), np.dtype([("real", "S4"), ("imag", "f8")]),
    np.dtype([("real", [("a", "f8")]), ("imag", "f8")]), np.dtype([("real", "f8")]),
    np.dtype([("real", "f8"), ("imag", "f8"), ("more", "f8")]), np.dtype([("r", "f8"), ("i", "f8")]),
    np.dtype(("f8", (100, 100))), np.dtype("S10"), np.dtype("V8"), np.dtype("f2"), np.dtype("c16"),
    h5py.vlen_dtype(np.dtype("f8")), h5py.string_dtype(), h5py.enum_dtype({"a": 0, "b": 1}, basetype="i1"),
    h5py.ref_dtype, np.dtype(bool), np.dtype([("real", h5py.vlen_dtype(np.dtype("f8"))), ("imag", "f8")]),
]  # fmt: skip


def family_compound(rng: random.Random, path: Path) -> None:
    def build(file):
        dtype = rng.choice(COMPOUND_TYPES)
        shape = rng.choice([(1, 1), (2, 3), (1000, 1), (3,)])
        matlab_class = rng.choice(["double", "single", "char", "logical", "cell", "int8", "uint16"])
        where = rng.choice(["top", "cell", "sparse data"])
        parent = file if where == "top" else file.create_group("#refs#")
        name = "x" if where == "top" else "a"
        dataset = parent.create_dataset(name, shape=shape, dtype=dtype)
        if not dtype.hasobject and dtype.itemsize * int(np.prod(shape)) < 2**20:
            dataset[...] = np.zeros(shape, dtype=dtype)
        classed(dataset, matlab_class)
        if where == "cell":
            cell(file, "x", [dataset.ref])
        elif where == "sparse data":
            group = classed(file.create_group("x"), "double")
            group.attrs["MATLAB_sparse"] = np.uint64(shape[0])
            count = int(np.prod(shape))
            group.create_dataset("jc", data=np.array([0, count], dtype=np.uint64))
            group.create_dataset("ir", data=np.zeros(count, dtype=np.uint64))
            group["data"] = dataset

    crafted(path, build, libver=rng.choice(["earliest", "latest"]))


def family_corrupted(rng: random.Random, path: Path) -> None:
    data = bytearray(_base(rng, path).read_bytes())
    start = 512 if rng.random() < 0.9 else 0
    for _ in range(rng.randint(1, 4)):
        if len(data) <= start + 1:
            break
        at = rng.randrange(start, len(data))
        kind = rng.choice(["flip", "flip", "truncate", "zero", "huge", "duplicate"])
        if kind == "flip":
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(start, len(data))] ^= 1 << rng.randrange(8)
        elif kind == "truncate":
            del data[at:]
        elif kind == "zero":
            data[at : at + rng.randint(1, 64)] = bytes(len(data[at : at + 64]))
        elif kind == "huge":
            word = rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 2**20])
            position = at - at % 4
            data[position : position + 4] = word.to_bytes(4, "little")[: len(data) - position]
        else:
            end = min(len(data), at + rng.randint(1, 256))
            data[at:at] = data[at:end]
    path.write_bytes(bytes(data))


FAMILIES = {
    "class-attribute lies": family_class_lies,
    "huge dims": family_huge_dims,
    "reference cycles and fan-out": family_references,
    OUTSIDE_FAMILY: family_outside,
    "compound types": family_compound,
    "corrupted bytes": family_corrupted,
}


def generate(seeds: range, folder: Path) -> list[Case]:
    names = list(FAMILIES)
    cases = []
    for seed in seeds:
        family = names[seed % len(names)]
        path = folder / f"make{seed}.mat"
        for attempt in range(10):  # h5py refuses to write a few of the combinations drawn
            try:
                FAMILIES[family](random.Random(seed * 100 + attempt), path)
                break
            except (ValueError, TypeError, KeyError, OSError):
                path.unlink(missing_ok=True)
        cases.append(Case(seed, family, path.read_bytes()))
        path.unlink()
    return cases


def fuzz(seeds: range, folder: Path) -> list[Result]:
    return run_all(generate(seeds, folder), folder)


def summary(results: list[Result]) -> str:
    """The figures: outcomes, the worst CPU time and the worst memory, against their bounds."""

    def bound(result: Result) -> float:
        return MEMORY_BOUND + MEMORY_PER_BYTE * len(result.case.data)

    outcomes: dict[str, int] = {}
    for result in results:
        outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1
    slowest = max(results, key=lambda result: result.seconds)
    fullest = max(results, key=lambda result: result.peak / bound(result))
    ratio = max(results, key=lambda result: result.peak / len(result.case.data))
    return (
        f"{len(results)} cases {outcomes}; worst CPU time {slowest.seconds:.2f} s (seed {slowest.case.seed}, "
        f"{slowest.case.family}, {len(slowest.case.data)} bytes); most memory {fullest.peak / 2**20:.1f} MiB "
        f"= {fullest.peak / bound(fullest):.0%} of its bound (seed {fullest.case.seed}, {fullest.case.family}, "
        f"{len(fullest.case.data)} bytes); largest ratio {ratio.peak / len(ratio.case.data):.0f}× its "
        f"{len(ratio.case.data)} bytes (seed {ratio.case.seed})"
    )


def test_fuzzed_v73_files_end_in_a_result_or_a_clear_error(tmp_path):
    results = fuzz(range(0, 120), tmp_path)
    print(summary(results))
    assert [r for r in results if r.finding] == []


@pytest.mark.slow
def test_fuzzed_v73_files_long_run(tmp_path):
    results = fuzz(range(100_000, 102_000), tmp_path)
    print(summary(results))
    assert [r for r in results if r.finding] == []
