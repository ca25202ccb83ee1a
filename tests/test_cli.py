"""The dlformat command line: check, --version, python -m dlformat."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import dlformat
from dlformat.cli import main

from .test_format_table import SPEC_ROWS


def test_check_prints_one_ok_line_per_row_and_a_summary(capsys):
    assert main(["check", "--seed", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["input", "position", "expected", "got", "result"]
    rows = lines[1:-1]
    assert [line.split()[0] for line in rows] == list(SPEC_ROWS)
    for line in rows:
        fmt, position, expected, got, result = line.split()
        assert (position, expected) == SPEC_ROWS[fmt] and got == expected and result == "ok"
    assert lines[-1] == "all 20 rows ok (seed 5)"


def test_check_exits_1_on_a_mismatch(tmp_path, capsys):
    table = tmp_path / "wrong.json"
    rows = [
        {"input": "CBT", "position": "T", "output": "CBT", "table": "supported", "sizes": [2, 3, 4]},
        {"input": "BT", "position": "T", "output": "BT", "table": "dlnetwork", "sizes": [2, 3]},
    ]
    table.write_text(json.dumps({"rows": rows}))
    assert main(["check", str(table), "--seed", "1"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[-1] == "ok"
    assert out[2].startswith("BT ") and out[2].endswith("output format CBT, expected BT")
    assert out[-1] == "1 of 2 rows failed (seed 1)"


@pytest.mark.parametrize("content", [None, "{broken"])
def test_check_exits_1_on_an_unreadable_table_without_a_traceback(tmp_path, capsys, content):
    table = tmp_path / "table.json"
    if content is not None:
        table.write_text(content)
    assert main(["check", str(table)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("dlformat check: ") and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_console_script_and_module_entry_points():
    version = subprocess.run(["dlformat", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"dlformat {dlformat.__version__}"
    check = subprocess.run([sys.executable, "-m", "dlformat", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert check.stdout.splitlines()[-1].startswith("all 20 rows ok (seed ")


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "COMMAND" in capsys.readouterr().err
