"""Per-layer format fixtures: ``compat_fixtures/layers/<matlabName>.json``, read, checked and run.

Each file holds the rows of one layer's "Layer Input and Output Formats" tables on its
MathWorks page, the constructor arguments that make a layer able to run them, and the page it
came from (the schema is in ``compat_fixtures/README.md``). :func:`check_layer` builds the
layer from ``construct``, feeds each row's input a dlarray of the row's sizes and format(s),
and compares the output format(s) with the row's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import torch

from . import _format
from ._dlarray import dlarray
from ._errors import DLFormatError

TABLES = ("supported", "dlnetwork")
FILE_KEYS = ("layer", "source", "construct", "rows")
ROW_KEYS = ("input", "output", "sizes", "table")
OPTIONAL_ROW_KEYS = ("position",)  # positionEmbeddingLayer: the label embedded under "auto"
LAYERS_FOLDER = "layers"


@dataclass(frozen=True)
class FormatRow:
    """One row: input format(s), output format(s), source table, example sizes (one list per input)."""

    input: tuple[str, ...]
    output: tuple[str, ...]
    table: str
    sizes: tuple[tuple[int, ...], ...]
    position: str = ""

    @staticmethod
    def shown(formats: tuple[str, ...]) -> str:
        return ",".join(formats)


@dataclass(frozen=True)
class LayerFixture:
    """One layer's file: its MATLAB constructor name, source, constructor arguments and rows."""

    layer: str
    source: str
    args: tuple[Any, ...]
    options: dict[str, Any]
    rows: tuple[FormatRow, ...]
    path: Path


@dataclass(frozen=True)
class RowResult:
    row: FormatRow
    got: str  # the output format(s), or "-" when the layer raised or does not exist
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
        if (folder / LAYERS_FOLDER).is_dir():
            return folder
    raise DLFormatError(
        f"cannot find dlformat's compat_fixtures folder (looked in {places[0]} and {places[1]}); "
        "reinstall dlformat from its repository (pip install -e .), or pass a fixture file to dlformat check"
    )


def fixture_files(folder: Path | None = None) -> dict[str, Path]:
    """Every layer's fixture file, by MATLAB constructor name (the file's stem), sorted."""
    folder = fixtures_folder() / LAYERS_FOLDER if folder is None else folder
    return {path.stem: path for path in sorted(folder.glob("*.json"), key=lambda p: p.stem.lower())}


def load_fixture(path: str | Path) -> LayerFixture:
    """Read and validate one layer's file; :class:`DLFormatError` says what is wrong and where."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DLFormatError(f"cannot read fixture file {path}: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DLFormatError(f"fixture file {path} is not valid JSON: {error}") from None
    where = f"fixture file {path}"
    if not isinstance(document, dict) or sorted(document) != sorted(FILE_KEYS):
        raise DLFormatError(f"{where} must be a JSON object with exactly the keys {', '.join(FILE_KEYS)}")
    for key in ("layer", "source"):
        if not isinstance(document[key], str) or not document[key]:
            raise DLFormatError(f'{where}: "{key}" must be a non-empty string')
    construct = document["construct"]
    if (
        not isinstance(construct, dict)
        or not set(construct) <= {"args", "options"}
        or not isinstance(construct.get("args", []), list)
        or not isinstance(construct.get("options", {}), dict)
    ):
        raise DLFormatError(
            f'{where}: "construct" must be an object with a list "args" and an object "options"'
        )
    rows = document["rows"]
    if not isinstance(rows, list) or not rows:
        raise DLFormatError(f'{where}: "rows" must be a non-empty list')
    return LayerFixture(
        document["layer"],
        document["source"],
        tuple(construct.get("args", [])),
        dict(construct.get("options", {})),
        tuple(_row(f"{where}, row {number}", entry) for number, entry in enumerate(rows, start=1)),
        path,
    )


def _row(where: str, entry: object) -> FormatRow:
    if (
        not isinstance(entry, dict)
        or not set(ROW_KEYS) <= set(entry)
        or not set(entry) <= {*ROW_KEYS, *OPTIONAL_ROW_KEYS}
    ):
        raise DLFormatError(
            f"{where}: each row must be an object with the keys {', '.join(ROW_KEYS)} "
            f"(and optionally {', '.join(OPTIONAL_ROW_KEYS)})"
        )
    try:
        inputs, outputs = _formats(entry["input"]), _formats(entry["output"])
    except DLFormatError as error:
        raise DLFormatError(f"{where}: {error}") from None
    if entry["table"] not in TABLES:
        raise DLFormatError(f'{where}: "table" must be one of {", ".join(TABLES)}; got {entry["table"]!r}')
    sizes = entry["sizes"]
    many = isinstance(entry["input"], list)
    size_lists = sizes if many and isinstance(sizes, list) else [sizes]
    if len(size_lists) != len(inputs) or not all(
        _sizes_fit(size_list, fmt) for size_list, fmt in zip(size_lists, inputs, strict=True)
    ):
        expected = "a list of size lists, one per input," if many else "one positive integer per label"
        raise DLFormatError(
            f'{where}: "sizes" must be {expected} of "{FormatRow.shown(inputs)}"; got {sizes!r}'
        )
    position = entry.get("position", "")
    if position and position not in ("S", "T"):
        raise DLFormatError(f'{where}: "position" must be "S" or "T"; got {position!r}')
    return FormatRow(
        inputs, outputs, entry["table"], tuple(tuple(size_list) for size_list in size_lists), position
    )


def _formats(value: object) -> tuple[str, ...]:
    """A format, or a non-empty list of them (several ports), checked."""
    if isinstance(value, list):
        if not value:
            raise DLFormatError("a list of formats must not be empty")
        return tuple(_format.check_format(fmt) for fmt in value)
    return (_format.check_format(value),)


def _sizes_fit(sizes: object, fmt: str) -> bool:
    return (
        isinstance(sizes, list)
        and len(sizes) == len(fmt)
        and all(isinstance(size, int) and not isinstance(size, bool) and size >= 1 for size in sizes)
    )


def build_layer(fixture: LayerFixture) -> Any:
    """The layer ``construct`` describes, made by dlformat's MATLAB-named constructor.

    A name dlformat does not export (yet) is a :class:`DLFormatError` that says so.
    """
    import dlformat

    from .layers import Layer

    constructor = getattr(dlformat, fixture.layer, None) if fixture.layer[:1].islower() else None
    if not callable(constructor):
        raise DLFormatError(f"dlformat has no layer constructor {fixture.layer!r} (not ported yet)")
    try:
        layer = constructor(*fixture.args, **fixture.options)
    except DLFormatError as error:
        raise DLFormatError(
            f"{fixture.layer} cannot be built from the fixture's construct: {error}"
        ) from None
    if not isinstance(layer, Layer):
        raise DLFormatError(f"dlformat.{fixture.layer} is not a layer constructor")
    return layer


def run_row(layer: Any, row: FormatRow) -> RowResult:
    """Run one row: ones in the row's sizes and format(s) (a valid index for embedding layers),
    in inference mode; compare the output format(s) with the row's."""
    inputs = [dlarray(torch.ones(size), fmt) for size, fmt in zip(row.sizes, row.input, strict=True)]
    try:
        with torch.no_grad():
            result = layer(*inputs, training=False)
    except DLFormatError as error:
        return RowResult(row, "-", f"error: {error}")
    outputs = result if isinstance(result, tuple) else (result,)
    got = tuple(getattr(Y, "_fmt", "?") for Y in outputs)
    if got != row.output:
        return RowResult(
            row,
            FormatRow.shown(got),
            f"output format {FormatRow.shown(got)}, expected {FormatRow.shown(row.output)}",
        )
    return RowResult(row, FormatRow.shown(got), "")


def check_layer(fixture: LayerFixture) -> list[RowResult]:
    """Every row of one layer's file, each through a fresh layer (lazy sizes follow each row).

    A layer dlformat does not export fails every row with that reason; nothing raises.
    """
    results = []
    for row in fixture.rows:
        try:
            layer = build_layer(fixture)
        except DLFormatError as error:
            results.append(RowResult(row, "-", str(error)))
            continue
        results.append(run_row(layer, row))
    return results
