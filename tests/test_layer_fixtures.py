"""compat_fixtures/layers/*.json: the schema, every row of every layer's file, and positionEmbeddingLayer's values."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat._layer_fixtures import (
    FormatRow,
    build_layer,
    check_layer,
    fixture_files,
    fixtures_folder,
    load_fixture,
    run_row,
)

FOLDER = Path(__file__).parents[1] / "compat_fixtures" / "layers"
FIXTURES = {name: load_fixture(path) for name, path in fixture_files(FOLDER).items()}
# every row of every file, so layers added later are covered without touching this test
ROWS = [
    (name, number, row) for name, fixture in FIXTURES.items() for number, row in enumerate(fixture.rows, 1)
]


def test_every_file_is_named_after_its_layer_and_cites_a_mathworks_page():
    assert FIXTURES
    for name, fixture in FIXTURES.items():
        assert fixture.layer == name
        assert "mathworks.com/help/" in fixture.source


def test_the_packaged_folder_is_the_repositorys():
    assert fixtures_folder() / "layers" == FOLDER


@pytest.mark.parametrize(
    ("layer", "number", "row"), ROWS, ids=[f"{n}-{i}-{FormatRow.shown(r.input)}" for n, i, r in ROWS]
)
def test_each_row_gives_the_documented_output_format(layer, number, row):
    result = run_row(build_layer(FIXTURES[layer]), row)
    assert result.ok, f"{layer} row {number}: {result.problem}"
    assert result.got == FormatRow.shown(row.output)


# docs/formats.md's table of positionEmbeddingLayer's formats, typed in here independently of the JSON file
DOCUMENTED_ROWS = {
    "SCB": ("S", "SCB"), "CBT": ("T", "CBT"), "SCBT": ("T", "SCBT"), "SSCBT": ("T", "SSCBT"),
    "SSSCBT": ("T", "SSSCBT"), "SC": ("S", "SC"), "SB": ("S", "SCB"), "SU": ("S", "SCU"),
    "CT": ("T", "CT"), "SCT": ("T", "SCT"), "SSCT": ("T", "SSCT"), "SSSCT": ("T", "SSSCT"),
    "BT": ("T", "CBT"), "SBT": ("T", "SCBT"), "SSBT": ("T", "SSCBT"), "SSSBT": ("T", "SSSCBT"),
    "ST": ("T", "SCT"), "SST": ("T", "SSCT"), "SSST": ("T", "SSSCT"), "TU": ("T", "CTU"),
}  # fmt: skip
POSITION_ROWS = FIXTURES["positionEmbeddingLayer"].rows


def test_position_embedding_holds_the_pages_twenty_rows():
    assert {row.input[0]: (row.position, row.output[0]) for row in POSITION_ROWS} == DOCUMENTED_ROWS
    assert [row.table for row in POSITION_ROWS].count("supported") == 8
    assert [row.table for row in POSITION_ROWS].count("dlnetwork") == 12


def _names(fmt):
    return [f"{label}{fmt[:i].count(label)}" for i, label in enumerate(fmt)]


@pytest.mark.parametrize("row", POSITION_ROWS, ids=lambda row: row.input[0])
def test_position_embedding_values_against_a_numpy_reference(row):
    layer = dlf.positionEmbeddingLayer(
        5, 12, PositionOffset=2, WeightsInitializer="glorot", dtype=torch.float64
    )
    (fmt,), (sizes,), (out,) = row.input, row.sizes, row.output
    Y = layer(dlf.dlarray(torch.randn(sizes), fmt))
    assert dlf.dims(Y) == out
    # the reference: label the input sizes, give C the OutputSize, and fill index by index
    named = dict(zip(_names(fmt), sizes, strict=True)) | {"C0": 5}
    names = _names(out)
    expected = np.empty([named[name] for name in names])
    c_axis, p_axis = names.index("C0"), names.index(f"{row.position}0")
    weights = layer.Weights.detach().numpy()
    for index in itertools.product(*(range(n) for n in expected.shape)):
        expected[index] = weights[index[c_axis], 2 + index[p_axis]]
    np.testing.assert_array_equal(dlf.stripdims(Y).detach().numpy(), expected)


def write(tmp_path, document, name="someLayer.json"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


ROW = {"input": "CBT", "output": "CBT", "sizes": [2, 3, 4], "table": "supported"}
FILE = {"layer": "reluLayer", "source": "page", "construct": {"args": [], "options": {}}, "rows": [ROW]}


def test_a_multi_input_row_takes_a_list_of_formats_and_sizes(tmp_path):
    row = {"input": ["SCB", "SCB"], "output": "SCB", "sizes": [[4, 3, 2], [4, 3, 1]], "table": "supported"}
    fixture = load_fixture(
        write(tmp_path, FILE | {"layer": "additionLayer", "construct": {"args": [2]}, "rows": [row]})
    )
    assert fixture.rows[0].input == ("SCB", "SCB") and fixture.rows[0].sizes == ((4, 3, 2), (4, 3, 1))
    assert [result.ok for result in check_layer(fixture)] == [True]


def test_a_wrong_expectation_is_reported_not_raised(tmp_path):
    fixture = load_fixture(
        write(tmp_path, FILE | {"layer": "fullyConnectedLayer", "construct": {"args": [4]}})
    )
    (result,) = check_layer(fixture)
    assert result.ok
    wrong = load_fixture(
        write(
            tmp_path,
            FILE
            | {
                "layer": "fullyConnectedLayer",
                "construct": {"args": [4]},
                "rows": [ROW | {"input": "SSCB", "output": "SSCB", "sizes": [2, 3, 4, 5]}],
            },
        )
    )
    (result,) = check_layer(wrong)
    assert (result.got, result.problem) == ("CB", "output format CB, expected SSCB")


def test_a_layer_dlformat_lacks_fails_every_row_clearly(tmp_path):
    fixture = load_fixture(write(tmp_path, FILE | {"layer": "convolution9dLayer", "rows": [ROW, ROW]}))
    results = check_layer(fixture)
    assert [r.problem for r in results] == [
        "dlformat has no layer constructor 'convolution9dLayer' (not ported yet)"
    ] * 2
    with pytest.raises(DLFormatError, match="no layer constructor 'DLNetwork'"):
        build_layer(load_fixture(write(tmp_path, FILE | {"layer": "DLNetwork"})))


def test_a_layer_error_is_a_failed_row(tmp_path):
    fixture = load_fixture(
        write(
            tmp_path,
            FILE
            | {"layer": "softmaxLayer", "rows": [ROW | {"input": "BT", "output": "BT", "sizes": [2, 3]}]},
        )
    )
    (result,) = check_layer(fixture)
    assert result.got == "-" and result.problem.startswith("error: SoftmaxLayer")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", r"is not valid JSON"),
        ([ROW], r"must be a JSON object with exactly the keys layer, source, construct, rows"),
        (FILE | {"extra": 1}, r"exactly the keys layer, source, construct, rows"),
        (FILE | {"layer": ""}, r'"layer" must be a non-empty string'),
        (FILE | {"construct": {"args": 3}}, r'"construct" must be an object with a list "args"'),
        (FILE | {"construct": {"Name": "x"}}, r'"construct" must be an object with a list "args"'),
        (FILE | {"rows": []}, r'"rows" must be a non-empty list'),
        (
            FILE | {"rows": [ROW | {"extra": 1}]},
            r"row 1: each row must be an object with the keys input, output, sizes, table \(and optionally position\)",
        ),
        (
            FILE | {"rows": [ROW, {k: v for k, v in ROW.items() if k != "sizes"}]},
            r"row 2: each row must be an object",
        ),
        (
            FILE | {"rows": [ROW | {"input": "CXT"}]},
            r'row 1: invalid dimension label "X" at position 1 of format "CXT"',
        ),
        (FILE | {"rows": [ROW | {"output": 3}]}, r"row 1: a format must be a string"),
        (FILE | {"rows": [ROW | {"input": []}]}, r"row 1: a list of formats must not be empty"),
        (FILE | {"rows": [ROW | {"position": "C"}]}, r'row 1: "position" must be "S" or "T"; got \'C\''),
        (FILE | {"rows": [ROW | {"table": "other"}]}, r'row 1: "table" must be one of supported, dlnetwork'),
        (
            FILE | {"rows": [ROW | {"sizes": [2, 3]}]},
            r'row 1: "sizes" must be one positive integer per label of "CBT"; got \[2, 3\]',
        ),
        (FILE | {"rows": [ROW | {"sizes": [2, 0, 4]}]}, r'"sizes" must be one positive integer'),
        (FILE | {"rows": [ROW | {"sizes": [2, True, 4]}]}, r'"sizes" must be one positive integer'),
        (
            FILE | {"rows": [ROW | {"input": ["CB", "CB"], "sizes": [2, 3]}]},
            r'"sizes" must be a list of size lists, one per input, of "CB,CB"',
        ),
        (
            FILE | {"rows": [ROW | {"input": ["CB", "CB"], "sizes": [[2, 3]]}]},
            r'"sizes" must be a list of size lists',
        ),
    ],
)
def test_malformed_files_are_refused_with_the_place_named(tmp_path, document, message):
    with pytest.raises(DLFormatError, match=message):
        load_fixture(write(tmp_path, document))


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(DLFormatError, match=r"cannot read fixture file .*missing.json: No such file"):
        load_fixture(tmp_path / "missing.json")


# an unsupported input format: the error names the layer, the format it got, and what it accepts
@pytest.mark.parametrize(
    ("layer", "fmt", "sizes", "message"),
    [
        (
            lambda: dlf.fullyConnectedLayer(3),
            "CU",
            (2, 3),
            r'FullyConnectedLayer cannot take format "CU".*formats such as "CB", "SCB"',
        ),
        (
            lambda: dlf.fullyConnectedLayer(3),
            "SB",
            (2, 3),
            r'FullyConnectedLayer needs a dlarray with a "C" dimension; got format "SB"; it takes formats such as "CB"',
        ),
        (
            lambda: dlf.softmaxLayer(),
            "BT",
            (2, 3),
            r'SoftmaxLayer needs .*"C".*got format "BT"; it takes formats such as "CB"',
        ),
        (
            lambda: dlf.layerNormalizationLayer(),
            "SB",
            (2, 3),
            r'LayerNormalizationLayer needs .*"C".*got format "SB"; it takes formats such as "CB"',
        ),
        (
            lambda: dlf.selfAttentionLayer(2, 4),
            "SSCB",
            (2, 3, 4, 2),
            r'SelfAttentionLayer: .*it takes formats such as "CBT", "CT", "SCB".*got "SSCB"',
        ),
        (
            lambda: dlf.positionEmbeddingLayer(4, 10),
            "SSCB",
            (2, 2, 4, 2),
            r'PositionEmbeddingLayer: .*"T" dimension, or else a single "S".*format "SSCB"',
        ),
        (
            lambda: dlf.sequenceInputLayer(3),
            "CB",
            (3, 2),
            r'SequenceInputLayer needs data of format "CBT"; got "CB"',
        ),
        (
            lambda: dlf.featureInputLayer(3),
            "CBT",
            (3, 2, 4),
            r'FeatureInputLayer needs data of format "CB"; got "CBT"',
        ),
    ],
)
def test_an_unsupported_format_names_the_layer_the_format_and_the_accepted_ones(layer, fmt, sizes, message):
    with pytest.raises(DLFormatError, match=message):
        layer()(dlf.dlarray(torch.ones(sizes), fmt))
