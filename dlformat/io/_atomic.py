"""Replacing a file whole, as ``savemat`` does: a temporary file beside the target, renamed over it.

The result is what ``open(path, "w")`` would leave, but never half written: a symbolic link is
written through (its target is replaced, the link stays), an existing file keeps its
permission bits, and a new file gets ``0o666`` less the umask. The temporary file is named
``.NAME.PID-RANDOM.tmp`` and locked (``flock``) while it is written, so that a later write to the
same target can tell one left by a killed writer (unlocked, its process gone) and remove it.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from .._errors import DLFormatError

try:
    import fcntl
except ImportError:  # Windows: no locks, so stale temporary files are left alone
    fcntl = None  # type: ignore[assignment]

_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
_STEM = 180  # characters of the target's name kept in the temporary's (names hold 255 at most)


def replace(path: str | os.PathLike[str], write: Callable[[Path], None]) -> None:
    """Call ``write(temporary)``, then rename the temporary file over ``path``."""
    shown = os.fspath(path)
    if "\0" in str(shown):
        raise DLFormatError(f"cannot write {shown!r}: a path cannot hold a NUL character")
    target = Path(os.path.realpath(shown))  # through symbolic links, as open() goes
    if target.is_symlink():  # realpath stops inside a loop of links, where open() fails
        raise DLFormatError(f"cannot write {shown}: {os.strerror(errno.ELOOP)}")
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None  # a new file: 0o666 less the umask, which os.open applies
    except OSError as error:
        raise DLFormatError(f"cannot write {shown}: {error.strerror or error}") from None
    remove_stale(target)
    try:
        handle, temporary = _create(target)
    except OSError as error:
        raise DLFormatError(f"cannot write {shown}: {error.strerror or error}") from None
    try:
        if mode is not None:
            os.fchmod(handle, mode)
        write(temporary)
        os.replace(temporary, target)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise DLFormatError(f"cannot write {shown}: {error.strerror or error}") from None
        raise
    finally:
        os.close(handle)  # releases the lock


def _create(target: Path) -> tuple[int, Path]:
    while True:
        name = f".{target.name[:_STEM]}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
        temporary = target.parent / name
        try:
            handle = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | _FLAGS, 0o666)
        except FileExistsError:
            continue
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        return handle, temporary


def remove_stale(target: Path) -> None:
    """Remove the temporary files of earlier writes to ``target`` whose writer was killed."""
    if fcntl is None:
        return
    pattern = re.compile(rf"\.{re.escape(target.name[:_STEM])}\.(\d+)-[0-9a-f]{{8}}\.tmp\Z")
    try:
        names = [entry.name for entry in os.scandir(target.parent) if pattern.match(entry.name)]
    except OSError:
        return
    for name in names:
        match = pattern.match(name)
        if match is None or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
            continue  # a writer that still runs (this process's other threads included)
        try:
            handle = os.open(target.parent / name, os.O_RDONLY | os.O_NONBLOCK | _FLAGS)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                continue
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a live writer elsewhere?
            os.unlink(target.parent / name)
        except OSError:
            continue
        finally:
            os.close(handle)


def _alive(pid: int) -> bool:
    if not 0 < pid < 2**31:  # 0 would signal this process's group; no process has such a pid
        return False
    try:
        os.kill(pid, 0)  # signal 0: nothing is sent, only whether the process exists is checked
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
