"""The wheel carries the package, its type marker and the per-layer format fixtures."""

from __future__ import annotations

import json
import os
import shutil
import site
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


def test_wheel_ships_every_layer_fixture_as_in_the_repository(wheel):
    files = sorted((ROOT / "compat_fixtures" / "layers").glob("*.json"))
    assert files
    for path in files:
        shipped = json.loads(wheel.read(f"dlformat/compat_fixtures/layers/{path.name}"))
        assert shipped == json.loads(path.read_text())
    assert "dlformat/compat_fixtures/README.md" in wheel.namelist()


def test_wheel_is_typed_and_has_the_console_script(wheel):
    names = wheel.namelist()
    assert "dlformat/py.typed" in names
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert "dlformat = dlformat.cli:main" in wheel.read(entry_points).decode()


def test_check_runs_from_a_source_checkout_that_was_never_installed(tmp_path):
    tree = tmp_path / "checkout"
    for folder in ("dlformat", "compat_fixtures"):
        shutil.copytree(ROOT / folder, tree / folder, ignore=shutil.ignore_patterns("__pycache__"))
    # -S skips site-packages' .pth files, so no installed or editable dlformat can answer an
    # import; the dependencies come from site-packages on PYTHONPATH, dlformat from the copy alone
    dependencies = [*site.getsitepackages(), site.getusersitepackages()]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), *dependencies])}

    def run(*arguments):
        return subprocess.run(
            [sys.executable, "-S", *arguments], capture_output=True, text=True, cwd=tmp_path, env=env
        )

    where = run(
        "-c",
        "import dlformat, importlib.util as u; print(dlformat.__file__); "
        "print(u.find_spec('dlformat.compat_fixtures'))",
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.split() == [str(tree / "dlformat" / "__init__.py"), "None"]
    check = run("-m", "dlformat", "check", "positionEmbeddingLayer")
    assert check.returncode == 0, check.stderr
    assert check.stdout.splitlines()[-1] == "positionEmbeddingLayer: all 20 rows ok"


# the modules whose types are checked on every test run; `mypy` alone checks the whole package


def test_mypy_finds_no_error_in_the_package(tmp_path):
    pytest.importorskip("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path), "dlformat"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")


def test_the_wheel_ships_every_subpackage(wheel):
    names = set(wheel.namelist())
    for package in sorted(path.parent for path in (ROOT / "dlformat").rglob("__init__.py")):
        relative = package.relative_to(ROOT).as_posix()
        assert f"{relative}/__init__.py" in names, f"{relative} is missing from the wheel"
