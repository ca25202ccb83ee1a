"""MATLAB-like text displays: one table renderer for ``print(net)``, ``analyzeNetwork`` and the CLI."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import torch

from . import _validate

__all__ = ["Table", "cell", "learnables_summary", "text_table"]

# The characters a cell array's contents may take on its display line. MATLAB shows an array held
# in a property on one line, in the width the display leaves it, and falls back to its size and
# class ("{1×1000000 cell}") when its contents do not fit (MathWorks' "Custom Compact Display
# Interface" page; the struct page shows a fitting cell as {'A'  'B'  'C'}); the width depends
# on MATLAB's window, so dlformat fixes one (docs/networks.md, "Display").
CELL_WIDTH = 80


def text_table(
    columns: Sequence[str], rows: Iterable[Sequence[str]], rule: str = "-", gap: int = 2
) -> list[str]:
    """Left-aligned text columns with a rule under the header (``rule=""`` for none)."""
    cells = [tuple(columns), *(tuple(row) for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = [
        (" " * gap).join(f"{c:<{w}}" for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    if rule:
        lines.insert(1, (" " * gap).join(rule * width for width in widths))
    return lines


def show(value: Any) -> str:
    """A table cell: tensors by size and type, as MATLAB shows arrays inside tables."""
    if isinstance(value, torch.Tensor):
        return f"{_validate.matlab_size(tuple(value.shape))} {str(value.dtype).removeprefix('torch.')}"
    return str(value)


def cell(items: Sequence[Any]) -> str:
    """MATLAB's one-line display of a row cell array held in a property: ``{'in1'  'in2'}`` when
    its character vectors fit in :data:`CELL_WIDTH` characters, else its size and class,
    ``{1×1000000 cell}`` (reading no more items than fit, so a huge cell costs nothing); ``{}``
    when empty. Anything but text is shown by size and class, as MATLAB shows ``{X, T}``."""
    if not items:
        return "{}"
    shown: list[str] = []
    width = 2  # the braces
    for item in items:
        if not isinstance(item, str):
            break
        shown.append(f"'{item}'")
        width += len(shown[-1]) + (2 if len(shown) > 1 else 0)
        if width > CELL_WIDTH:
            break
    else:
        return "{" + "  ".join(shown) + "}"
    return f"{{1×{len(items)} cell}}"


def learnables_summary(layer: Any) -> tuple[str, int]:
    """``("Weights 64×128, Bias 64×1", count)`` for a layer's existing learnables."""
    values = [(name, getattr(layer, name)) for name in layer.learnables if getattr(layer, name) is not None]
    shown = [f"{name} {_validate.matlab_size(tuple(value.shape))}" for name, value in values]
    if len(shown) > 3:  # selfAttentionLayer's eight arrays would swamp a table
        shown = [*shown[:2], f"… ({len(shown)} arrays)"]
    return ", ".join(shown), sum(value.numel() for _, value in values)


def finite_note(layer: Any) -> str:
    """``"non-finite: Weights"`` when a learnable holds NaN or Inf (MATLAB accepts them; we flag them)."""
    bad = [
        name
        for name in layer.learnables
        if getattr(layer, name) is not None and not bool(torch.isfinite(getattr(layer, name)).all())
    ]
    return f"non-finite: {', '.join(bad)}" if bad else ""


class Table:
    """A small read-only table, like MATLAB's: ``table.Source`` is a column, ``table[0]`` a row."""

    def __init__(self, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        self.columns = tuple(columns)
        self.rows = [tuple(row) for row in rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        return self.rows[index]

    def __getattr__(self, column: str) -> tuple[Any, ...]:
        if column.startswith("_") or column not in self.__dict__.get("columns", ()):
            raise AttributeError(column)
        position = self.columns.index(column)
        return tuple(row[position] for row in self.rows)

    def __repr__(self) -> str:
        lines = text_table(self.columns, ([show(value) for value in row] for row in self.rows), "_", 4)
        return f"{len(self.rows)}×{len(self.columns)} table\n\n" + "\n".join("    " + line for line in lines)
