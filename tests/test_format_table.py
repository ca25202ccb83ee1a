"""compat_fixtures/format_table.json: its rows, its validation, and every row through the layer."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat._format_table import check_row, load_format_table, packaged_table

REPO_TABLE = Path(__file__).parents[1] / "compat_fixtures" / "format_table.json"
ROWS = load_format_table(REPO_TABLE)

# docs/formats.md's table of MATLAB's supported formats, typed in here independently of the JSON file
DOCUMENTED_ROWS = {
    "SCB": ("S", "SCB"), "CBT": ("T", "CBT"), "SCBT": ("T", "SCBT"), "SSCBT": ("T", "SSCBT"),
    "SSSCBT": ("T", "SSSCBT"), "SC": ("S", "SC"), "SB": ("S", "SCB"), "SU": ("S", "SCU"),
    "CT": ("T", "CT"), "SCT": ("T", "SCT"), "SSCT": ("T", "SSCT"), "SSSCT": ("T", "SSSCT"),
    "BT": ("T", "CBT"), "SBT": ("T", "SCBT"), "SSBT": ("T", "SSCBT"), "SSSBT": ("T", "SSSCBT"),
    "ST": ("T", "SCT"), "SST": ("T", "SSCT"), "SSST": ("T", "SSSCT"), "TU": ("T", "CTU"),
}  # fmt: skip


def test_the_table_holds_specs_twenty_rows():
    assert {row.input: (row.position, row.output) for row in ROWS} == DOCUMENTED_ROWS
    assert len(ROWS) == 20
    assert [row.table for row in ROWS].count("supported") == 8
    assert [row.table for row in ROWS].count("dlnetwork") == 12


def test_the_packaged_table_is_the_repositorys():
    assert load_format_table(packaged_table()) == ROWS
    assert load_format_table() == ROWS


def _names(fmt):
    return [f"{label}{fmt[:i].count(label)}" for i, label in enumerate(fmt)]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.input)
def test_each_row_against_a_numpy_reference(row):
    layer = dlf.positionEmbeddingLayer(
        5, 12, PositionOffset=2, WeightsInitializer="glorot", dtype=torch.float64
    )
    X = dlf.dlarray(torch.randn(row.sizes), row.input)
    Y = layer(X)
    assert dlf.dims(Y) == row.output
    # the reference: label the input sizes, give C the OutputSize, and fill index by index
    sizes = dict(zip(_names(row.input), row.sizes, strict=True)) | {"C0": 5}
    names = _names(row.output)
    expected = np.empty([sizes[name] for name in names])
    c_axis, p_axis = names.index("C0"), names.index(f"{row.position}0")
    weights = layer.Weights.detach().numpy()
    for index in itertools.product(*(range(n) for n in expected.shape)):
        expected[index] = weights[index[c_axis], 2 + index[p_axis]]
    np.testing.assert_array_equal(dlf.stripdims(Y).detach().numpy(), expected)


@pytest.mark.parametrize("seed", range(5))
def test_check_row_passes_every_row_with_random_sizes(seed):
    rng = np.random.default_rng(seed)
    assert all(check_row(row, rng).ok for row in ROWS)


def test_check_row_reports_a_wrong_expectation():
    wrong = ROWS[0].__class__("SB", "S", "SB", "supported", (4, 2))
    result = check_row(wrong, np.random.default_rng(0))
    assert not result.ok and result.got == "SCB"
    assert result.problem == "output format SCB, expected SB"
    failing = ROWS[0].__class__("SSCB", "S", "SSCB", "supported", (4, 3, 2, 2))
    assert check_row(failing, np.random.default_rng(0)).problem.startswith(
        'error: PositionEmbeddingLayer: PositionDimension "auto"'
    )


def write(tmp_path, document):
    path = tmp_path / "table.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


ROW = {"input": "CBT", "position": "T", "output": "CBT", "table": "supported", "sizes": [2, 3, 4]}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", r"is not valid JSON"),
        ({"rows": []}, r'must be a JSON object with a non-empty "rows" list'),
        ([ROW], r'must be a JSON object with a non-empty "rows" list'),
        (
            {"rows": [ROW | {"extra": 1}]},
            r"row 1: each row must be an object with exactly the keys input, position, output, table, sizes",
        ),
        (
            {"rows": [ROW, {k: v for k, v in ROW.items() if k != "sizes"}]},
            r"row 2: each row must be an object",
        ),
        (
            {"rows": [ROW | {"input": "CXT"}]},
            r'row 1: invalid dimension label "X" at position 1 of format "CXT"',
        ),
        ({"rows": [ROW | {"output": 3}]}, r"row 1: a format must be a string"),
        ({"rows": [ROW | {"position": "C"}]}, r'row 1: "position" must be "S" or "T"; got \'C\''),
        ({"rows": [ROW | {"table": "other"}]}, r'row 1: "table" must be one of supported, dlnetwork'),
        (
            {"rows": [ROW | {"sizes": [2, 3]}]},
            r'row 1: "sizes" must list one positive integer per label of "CBT"; got \[2, 3\]',
        ),
        ({"rows": [ROW | {"sizes": [2, 0, 4]}]}, r'"sizes" must list one positive integer'),
        ({"rows": [ROW | {"sizes": [2, True, 4]}]}, r'"sizes" must list one positive integer'),
    ],
)
def test_malformed_tables_are_refused_with_the_row_named(tmp_path, document, message):
    with pytest.raises(DLFormatError, match=message):
        load_format_table(write(tmp_path, document))


def test_a_missing_table_is_refused(tmp_path):
    with pytest.raises(DLFormatError, match=r"cannot read format table .*missing.json: No such file"):
        load_format_table(tmp_path / "missing.json")
