"""The wheel carries the package, its type marker and the format table."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    pytest.importorskip("setuptools")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ],
        check=True,
        capture_output=True,
        cwd=out,
    )
    (path,) = out.glob("dlformat-*.whl")
    return zipfile.ZipFile(path)


def test_wheel_ships_the_format_table_as_in_the_repository(wheel):
    shipped = json.loads(wheel.read("dlformat/compat_fixtures/format_table.json"))
    assert shipped == json.loads((ROOT / "compat_fixtures" / "format_table.json").read_text())
    assert "dlformat/compat_fixtures/README.md" in wheel.namelist()


def test_wheel_is_typed_and_has_the_console_script(wheel):
    names = wheel.namelist()
    assert "dlformat/py.typed" in names
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert "dlformat = dlformat.cli:main" in wheel.read(entry_points).decode()
