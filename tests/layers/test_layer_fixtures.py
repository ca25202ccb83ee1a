"""compat_fixtures/layers/*.json: every row of each layer's format table runs through the layer and
gives the row's output format (what `dlformat check` will read; see compat_fixtures/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import dlformat as dlf

FOLDER = Path(__file__).parents[2] / "compat_fixtures" / "layers"
ROWS = [
    pytest.param(fixture, row, id=f"{path.stem}-{index}")
    for path in sorted(FOLDER.glob("*.json"))
    for fixture in [json.loads(path.read_text())]
    for index, row in enumerate(fixture["rows"])
]


@pytest.mark.parametrize(("fixture", "row"), ROWS)
def test_each_row_gives_its_output_format(fixture, row):
    assert set(fixture) == {"layer", "source", "construct", "rows"}
    assert set(row) == {"input", "output", "sizes", "table"} and row["table"] in ("supported", "dlnetwork")
    assert (
        fixture["source"].startswith("MathWorks documentation, ")
        and "https://www.mathworks.com/help/" in fixture["source"]
    )
    if not hasattr(dlf, fixture["layer"]):
        pytest.skip(f"{fixture['layer']} is not ported on this branch")
    layer = getattr(dlf, fixture["layer"])(*fixture["construct"]["args"], **fixture["construct"]["options"])
    formats = row["input"] if isinstance(row["input"], list) else [row["input"]]
    sizes = row["sizes"] if isinstance(row["input"], list) else [row["sizes"]]
    inputs = [dlf.dlarray(torch.rand(size), fmt) for fmt, size in zip(formats, sizes, strict=True)]
    Y = layer(*inputs, training=False)
    assert dlf.dims(Y) == row["output"]
