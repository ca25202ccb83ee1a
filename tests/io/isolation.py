"""Run hostile files through the readers, each in a child process under limits, and report findings.

Each case is a file's bytes. A worker process (forked from the test process, so dlformat is already
imported) writes the file and calls ``loadmat`` and ``whos`` on it under:

- an address-space limit (``RLIMIT_AS``): the worker's current size plus the memory bound
  ``64 MiB + 20,000 × the file size``, so that reserving address space beyond what the file's data
  can need fails at once (and a ``DLFormatError`` saying the process ran out of memory is a finding);
- a CPU-time limit, ``2 s + 100 µs × the file size``, from a profiling timer and, as a backstop for
  code that never returns to Python, ``RLIMIT_CPU``; a wall-clock limit in the parent catches hangs;
- a peak-memory check: the resident peak (``VmHWM``, reset before each case through
  ``/proc/self/clear_refs``) may grow by at most the memory bound.

A case passes when both calls end in a result or a ``DLFormatError``, the text they return is valid
Unicode, and the sparse matrices they return can be made dense (when small enough). A worker runs several cases in a row (forking one process per case would cost more
than most cases); when a case kills its worker (a signal, the CPU backstop) or hangs it, the parent
records that case and starts a new worker for the rest, so one crash hides nothing else.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from dlformat import DLFormatError
from dlformat.io import loadmat, whos

MEMORY_BASE = 64 * 2**20
MEMORY_PER_BYTE = 20_000
CPU_BASE = 2.0
CPU_PER_BYTE = 100e-6
WALL_SLACK = 10.0
OUT_OF_MEMORY = "more memory than this process can allocate"


def memory_bound(size: int) -> int:
    return MEMORY_BASE + MEMORY_PER_BYTE * size


def cpu_limit(size: int) -> float:
    return CPU_BASE + CPU_PER_BYTE * size


@dataclass(frozen=True)
class Case:
    """A file to read; ``check`` (run in the worker) receives what ``loadmat`` returned or raised,
    and the file's path."""

    label: str
    data: bytes
    check: Callable[[Any, Path], None] | None = None  # called with the result (or error) and the file
    cpu: float | None = None  # a CPU-time limit of its own (default: cpu_limit of the size)
    memory: int | None = None  # a memory bound of its own (default: memory_bound of the size)


@dataclass(frozen=True)
class Result:
    label: str
    size: int
    outcome: str  # "" when the case passed, else what went wrong
    cpu: float  # seconds of CPU time the case took
    peak: int  # growth of the resident peak, bytes

    @property
    def memory_ratio(self) -> float:
        """The peak as a fraction of the memory bound."""
        return self.peak / memory_bound(self.size)


class _OverTime(BaseException):
    """Raised by the CPU timer; a BaseException so that no reader code can swallow it."""


def _over_time(signum: int, frame: Any) -> None:
    raise _OverTime


def _status(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def _use(value: Any, seen: set[int] | None = None) -> None:
    """Use a loaded value as a caller would: encode its text (a lone surrogate raises), densify its
    sparse matrices (indices out of range would read and write out of bounds), walk decoded MATLAB
    objects (dataclasses; handle objects may refer to each other in a cycle, walked once)."""
    seen = set() if seen is None else seen
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, dict):
        for item in value.values():
            _use(item, seen)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _use(item, seen)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "OUT":
        for item in value.ravel().tolist():
            _use(item, seen)
    elif scipy.sparse.issparse(value) and max(value.shape) <= 1000:
        value.toarray()
    elif dataclasses.is_dataclass(value) and id(value) not in seen:
        seen.add(id(value))
        for item in vars(value).values():
            _use(item, seen)


def _run_one(path: Path, case: Case) -> tuple[str, float, int]:
    """(outcome, CPU seconds, peak growth) of loading and listing one file, in this worker."""
    size = len(case.data)
    bound = case.memory or memory_bound(size)
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # reset VmHWM to the current resident size
    resident = _status("VmRSS")
    limit = _status("VmSize") + bound
    soft_as, hard_as = resource.getrlimit(resource.RLIMIT_AS)
    soft_cpu, hard_cpu = resource.getrlimit(resource.RLIMIT_CPU)
    start = time.process_time()
    allowed = case.cpu or cpu_limit(size)
    outcome = ""
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard_as))
        resource.setrlimit(resource.RLIMIT_CPU, (int(start + allowed) + 3, hard_cpu))
        signal.setitimer(signal.ITIMER_PROF, allowed)
        for call in (loadmat, whos):
            try:
                result = call(path)
            except DLFormatError as error:
                if OUT_OF_MEMORY in str(error):
                    outcome = f"{call.__name__}: out of memory within the bound: {error}"
                    break
                result = error
            else:
                _use(result if call is loadmat else [entry.path for entry in result])
            if call is loadmat and case.check is not None:
                try:
                    case.check(result, path)
                except AssertionError as failed:
                    outcome = f"check failed: {failed}"[:300]
                    break
    except _OverTime:
        outcome = f"over {allowed:.2f} s of CPU time"
    except BaseException as error:  # anything else is a finding
        outcome = f"{type(error).__name__}: {error}"[:300]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        resource.setrlimit(resource.RLIMIT_AS, (soft_as, hard_as))
        resource.setrlimit(resource.RLIMIT_CPU, (soft_cpu, hard_cpu))
    cpu = time.process_time() - start
    peak = _status("VmHWM") - resident
    if not outcome and cpu > allowed:
        outcome = f"over {allowed:.2f} s of CPU time ({cpu:.2f} s)"
    if not outcome and peak > bound:
        outcome = f"resident peak grew by {peak} bytes, over the bound of {bound}"
    return outcome, cpu, peak


def _worker(connection: Connection, cases: list[tuple[int, Case]], folder: str) -> None:
    signal.signal(signal.SIGPROF, _over_time)
    for index, case in cases:
        path = Path(folder) / f"case{os.getpid()}-{index}.mat"
        path.write_bytes(case.data)
        connection.send(("start", index))
        outcome, cpu, peak = _run_one(path, case)
        path.unlink(missing_ok=True)
        connection.send(("done", index, outcome, cpu, peak))
    connection.close()


@dataclass
class _Slot:
    process: Any
    connection: Connection
    todo: deque[tuple[int, Case]]
    current: int | None = None
    since: float = 0.0


def run_cases(
    cases: Sequence[tuple[str, bytes] | Case], folder: Path, workers: int = 2, batch: int = 10
) -> list[Result]:
    """Run every case, a :class:`Case` or (label, file bytes); return one :class:`Result` per case, in order."""
    context = get_context("fork")
    cases = [case if isinstance(case, Case) else Case(*case) for case in cases]
    chunks = deque(
        deque((index, cases[index]) for index in range(start, min(start + batch, len(cases))))
        for start in range(0, len(cases), batch)
    )
    results: dict[int, Result] = {}
    slots: list[_Slot] = []

    def record(index: int, outcome: str, cpu: float, peak: int) -> None:
        results[index] = Result(cases[index].label, len(cases[index].data), outcome, cpu, peak)

    def start(todo: deque[tuple[int, Case]]) -> None:
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_worker, args=(sender, list(todo), str(folder)), daemon=True)
        process.start()
        sender.close()
        slots.append(_Slot(process, receiver, todo))

    def stop(slot: _Slot, outcome: str) -> None:
        """The worker died or hung in its current case: record it, run the rest in a new worker."""
        slot.process.kill()
        slot.process.join()
        slots.remove(slot)
        if slot.current is not None:
            record(slot.current, outcome, time.monotonic() - slot.since, 0)
        rest = deque(item for item in slot.todo if item[0] not in results)
        if rest:
            chunks.appendleft(rest)

    while chunks or slots:
        while chunks and len(slots) < workers:
            start(chunks.popleft())
        ready = wait([slot.connection for slot in slots] + [slot.process.sentinel for slot in slots], 0.2)
        for slot in list(slots):
            if slot.connection in ready:
                try:
                    message = slot.connection.recv()
                except EOFError:
                    slot.process.join()
                    code = slot.process.exitcode
                    if slot.current is None and all(item[0] in results for item in slot.todo):
                        slots.remove(slot)
                    else:
                        cause = f"killed by signal {-code}" if code and code < 0 else f"worker exited {code}"
                        stop(slot, cause)
                    continue
                if message[0] == "start":
                    slot.current, slot.since = message[1], time.monotonic()
                else:
                    record(*message[1:])
                    slot.current = None
            elif slot.current is not None:
                case = cases[slot.current]
                wall = (case.cpu or cpu_limit(len(case.data))) + WALL_SLACK
                if time.monotonic() - slot.since > wall:
                    stop(slot, f"hung: over {wall:.0f} s of wall-clock time")
    return [results[index] for index in range(len(cases))]


def findings(results: list[Result]) -> list[tuple[str, str]]:
    return [(result.label, result.outcome) for result in results if result.outcome]


def summary(results: list[Result]) -> str:
    """The figures docs/matlab_io.md quotes: cases, worst CPU time, worst memory."""
    slowest = max(results, key=lambda result: result.cpu)
    heaviest = max(results, key=lambda result: result.memory_ratio)
    return (
        f"{len(results)} cases, {len(findings(results))} findings; slowest {slowest.cpu:.3f} s CPU "
        f"({slowest.label}, {slowest.size} bytes); highest memory {heaviest.peak / 2**20:.1f} MiB = "
        f"{heaviest.memory_ratio:.3f} of the bound ({heaviest.label}, {heaviest.size} bytes)"
    )
