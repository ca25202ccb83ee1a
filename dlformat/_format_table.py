"""The supported-format table: load it from JSON, validate it, run every row through the layer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from . import _format
from ._dlarray import dlarray, stripdims
from ._errors import DLFormatError
from .layers.position_embedding import PositionEmbeddingLayer

TABLES = ("supported", "dlnetwork")
_ROW_KEYS = ("input", "position", "output", "table", "sizes")


@dataclass(frozen=True)
class FormatRow:
    """One row: input format, position label under "auto", output format, source table, example sizes."""

    input: str
    position: str
    output: str
    table: str
    sizes: tuple[int, ...]


@dataclass(frozen=True)
class RowResult:
    row: FormatRow
    got: str  # the output format, or "-" when the layer raised
    problem: str  # "" when the row passed

    @property
    def ok(self) -> bool:
        return not self.problem


def fixtures_folder() -> Path:
    """The folder of MATLAB compatibility fixtures: ``compat_fixtures/``.

    It lives at the repository root, and the wheel ships it inside the package as
    ``dlformat/compat_fixtures/``. So an installed dlformat finds it in its package, and a
    source checkout (``python -m dlformat`` run from the repository, nothing installed)
    beside its package. It is never imported as a module: in a source checkout there is no
    ``dlformat.compat_fixtures`` package to import.
    """
    package = Path(str(resources.files("dlformat")))
    places = (package / "compat_fixtures", package.parent / "compat_fixtures")
    for folder in places:
        if (folder / "format_table.json").is_file():
            return folder
    raise DLFormatError(
        f"cannot find dlformat's compat_fixtures folder (looked in {places[0]} and {places[1]}); "
        "reinstall dlformat from its repository (pip install -e .), or pass a format table file "
        "to dlformat check"
    )


def packaged_table() -> Path:
    """The format table that ships with dlformat (``compat_fixtures/format_table.json``)."""
    return fixtures_folder() / "format_table.json"


def load_format_table(path: str | Path | None = None) -> list[FormatRow]:
    """Read and validate a format table; :class:`DLFormatError` says what is wrong and where."""
    path = packaged_table() if path is None else Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DLFormatError(f"cannot read format table {path}: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DLFormatError(f"format table {path} is not valid JSON: {error}") from None
    rows = document.get("rows") if isinstance(document, dict) else None
    if not isinstance(rows, list) or not rows:
        raise DLFormatError(f'format table {path} must be a JSON object with a non-empty "rows" list')
    return [_row(path, number, entry) for number, entry in enumerate(rows, start=1)]


def _row(path: Path, number: int, entry: object) -> FormatRow:
    where = f"format table {path}, row {number}"
    if not isinstance(entry, dict) or sorted(entry) != sorted(_ROW_KEYS):
        raise DLFormatError(
            f"{where}: each row must be an object with exactly the keys {', '.join(_ROW_KEYS)}"
        )
    try:
        source, output = _format.check_format(entry["input"]), _format.check_format(entry["output"])
    except DLFormatError as error:
        raise DLFormatError(f"{where}: {error}") from None
    if entry["position"] not in ("S", "T"):
        raise DLFormatError(f'{where}: "position" must be "S" or "T"; got {entry["position"]!r}')
    if entry["table"] not in TABLES:
        raise DLFormatError(f'{where}: "table" must be one of {", ".join(TABLES)}; got {entry["table"]!r}')
    sizes = entry["sizes"]
    if (
        not isinstance(sizes, list)
        or len(sizes) != len(source)
        or not all(isinstance(size, int) and not isinstance(size, bool) and size >= 1 for size in sizes)
    ):
        raise DLFormatError(
            f'{where}: "sizes" must list one positive integer per label of "{source}"; got {sizes!r}'
        )
    return FormatRow(source, entry["position"], output, entry["table"], tuple(sizes))


def check_row(row: FormatRow, rng: np.random.Generator) -> RowResult:
    """Run a row through a fresh layer with random sizes, offset and weights.

    Checks the output format, the shape (input sizes with ``C`` of size OutputSize) and
    that every vector along ``C`` at index ``i`` of the row's position dimension equals
    ``Weights[:, PositionOffset + i]``.
    """
    sizes = [int(size) for size in rng.integers(2, 8, size=len(row.input))]
    output_size = int(rng.integers(2, 10))
    length = sizes[row.input.index(row.position)] if row.input.count(row.position) == 1 else 0
    offset = int(rng.integers(0, 4))
    layer = PositionEmbeddingLayer(
        output_size,
        offset + length + int(rng.integers(0, 4)) or 1,
        PositionOffset=offset,
        WeightsInitializer="glorot",
        generator=torch.Generator().manual_seed(int(rng.integers(2**31))),
    )
    try:
        Y = layer(dlarray(torch.zeros(sizes), row.input))
    except DLFormatError as error:
        return RowResult(row, "-", f"error: {error}")
    got = Y._fmt
    if got != row.output:
        return RowResult(row, got, f"output format {got}, expected {row.output}")
    expected_shape = _expected_shape(row, sizes, output_size)
    if tuple(Y.shape) != expected_shape:
        return RowResult(row, got, f"shape {tuple(Y.shape)}, expected {expected_shape}")
    values = stripdims(Y).detach().numpy()
    weights = layer.Weights.detach().numpy()[:, offset : offset + length]
    moved = np.moveaxis(values, (got.index("C"), got.index(row.position)), (0, 1))
    expected = weights.reshape(weights.shape + (1,) * (moved.ndim - 2))
    if not np.array_equal(moved, np.broadcast_to(expected, moved.shape)):
        return RowResult(row, got, f"values differ from Weights along {row.position}")
    return RowResult(row, got, "")


def _expected_shape(row: FormatRow, sizes: list[int], output_size: int) -> tuple[int, ...]:
    """Input sizes permuted into canonical order, with C of size OutputSize."""
    labelled = sorted(zip(row.input, sizes, strict=True), key=lambda pair: _format.LABELS.index(pair[0]))
    if "C" not in row.input:
        labelled.append(("C", output_size))
        labelled.sort(key=lambda pair: _format.LABELS.index(pair[0]))
    return tuple(output_size if label == "C" else size for label, size in labelled)
